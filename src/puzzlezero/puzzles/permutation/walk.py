"""The numba kernel of :meth:`.PermutationPuzzle.random_walks`, apart so that parsing and showing
permutation puzzles does not import numba.

A non-backtracking walk step picks uniformly among the moves that change the state and do not undo
the step before. NumPy finds those moves by making all ``A`` children of every state (``A * N``
labels a step); the kernel compares, for each move, only the positions it moves, and stops at the
first that differs, so a step costs about ``A`` comparisons and one move's support copied.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["random_walks", "supports"]


def supports(perms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(support int64[A, S], size int64[A])``: the positions each move changes (``perm[i] != i``),
    padded with ``-1`` to the largest support ``S``."""
    moved = perms != np.arange(perms.shape[1])[None, :]
    size = moved.sum(axis=1).astype(np.int64)
    support = np.full((perms.shape[0], max(int(size.max(initial=0)), 1)), -1, dtype=np.int64)
    for a in range(perms.shape[0]):
        where = np.flatnonzero(moved[a])
        support[a, : where.size] = where
    return support, size


@numba.njit(cache=True, nogil=True)
def random_walks(
    states: np.ndarray,
    depths: np.ndarray,
    words: np.ndarray,
    perms: np.ndarray,
    support: np.ndarray,
    size: np.ndarray,
    inverse: np.ndarray,
    last: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """In place: walk ``states[i]`` ``depths[i]`` non-backtracking steps, ``child = parent[perm]``;
    ``words[i, t]`` (uint32) picks step ``t`` among the moves that change the state and are not
    ``inverse[last move]``. Where only the undoing move changes the state, it is taken; where no move
    does, the walk stays (a step that changes nothing). ``last[i]``: the walk's last move (``-1``
    after none)."""
    num_actions = perms.shape[0]
    legal = np.empty(num_actions, dtype=np.int64)
    buf = np.empty(support.shape[1], dtype=states.dtype)
    for i in range(states.shape[0]):
        s = states[i]
        prev = -1
        for t in range(depths[i]):
            undo = inverse[prev] if prev >= 0 else -1
            k = 0
            undo_moves = False
            for a in range(num_actions):
                changes = False
                for j in range(size[a]):
                    p = support[a, j]
                    if s[perms[a, p]] != s[p]:
                        changes = True
                        break
                if not changes:
                    continue
                if a == undo:
                    undo_moves = True
                    continue
                legal[k] = a
                k += 1
            if k == 0:
                if not undo_moves:
                    continue
                legal[0] = undo
                k = 1
            a = legal[(words[i, t] >> 8) % k]
            for j in range(size[a]):
                buf[j] = s[perms[a, support[a, j]]]
            for j in range(size[a]):
                s[support[a, j]] = buf[j]
            prev = a
        last[i] = prev
