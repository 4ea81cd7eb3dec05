"""Minimum-press solutions of Lights Out (any board) by linear algebra over GF(2).

Presses commute and pressing twice does nothing, so a solution is a 0/1 vector ``x`` with
``T x = s (mod 2)``, ``T[i, a] = 1`` when press ``a`` toggles light ``i``. ``T`` is read off the
puzzle itself (the children of the all-off board). Gauss-Jordan elimination of ``[T | I]`` gives a
particular solution, the consistency checks (a state outside the column space has no solution) and
a basis of the null space; when ``T`` is singular (5x5: nullity 2, 4x4: nullity 4) every solution
is the particular one plus a null-space combination, and the one with fewest presses is the
optimum. All steps are whole-array XORs / integer matrix products over a batch of states.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult

__all__ = ["GF2System", "gf2_system", "min_presses", "solve_lightsout", "toggle_matrix"]

_MAX_NULLITY = 20


def toggle_matrix(puzzle: Puzzle) -> np.ndarray:
    """``uint8[n, n]``: column ``a`` is the light pattern of press ``a`` on the all-off board."""
    goal = np.asarray(puzzle.goal())
    if goal.any():
        raise PuzzleError(f"{puzzle.name}: the GF(2) solver needs the goal to be all lights off")
    children = puzzle.expand(goal[None])[0].reshape(puzzle.num_actions, -1)
    return (children.T & 1).astype(np.uint8)


@dataclass(frozen=True)
class GF2System:
    """The solved linear system of one board (all ``uint8`` 0/1 matrices, ``n`` lights, ``A`` presses).

    Attributes:
        particular: ``[A, n]``: ``x0 = particular @ s mod 2`` solves ``T x = s`` when one exists.
        check: ``[n - rank, n]``: ``s`` is solvable iff ``check @ s = 0 mod 2``.
        null: ``[nullity, A]``: a basis of the presses that change nothing.
        combos: ``[2**nullity, A]``: every element of the null space.
    """

    particular: np.ndarray
    check: np.ndarray
    null: np.ndarray
    combos: np.ndarray

    @property
    def nullity(self) -> int:
        return int(self.null.shape[0])


def _solve_system(t: np.ndarray) -> GF2System:
    n, a = t.shape
    aug = np.concatenate([t, np.eye(n, dtype=np.uint8)], axis=1)  # [T | E], E records the row operations
    pivots: list[int] = []
    row = 0
    for col in range(a):
        hits = np.flatnonzero(aug[row:, col]) + row
        if hits.size == 0:
            continue
        p = hits[0]
        aug[[row, p]] = aug[[p, row]]
        others = np.flatnonzero(aug[:, col])
        others = others[others != row]
        aug[others] ^= aug[row]
        pivots.append(col)
        row += 1
        if row == n:
            break
    r = len(pivots)
    reduced, transform = aug[:, :a], aug[:, a:]
    particular = np.zeros((a, n), dtype=np.uint8)
    particular[pivots] = transform[:r]
    free = [c for c in range(a) if c not in set(pivots)]
    if len(free) > _MAX_NULLITY:
        raise PuzzleError(f"the toggle matrix has nullity {len(free)}; at most {_MAX_NULLITY} is supported")
    null = np.zeros((len(free), a), dtype=np.uint8)
    for i, f in enumerate(free):
        null[i, f] = 1
        null[i, pivots] = reduced[:r, f]
    bits = (np.arange(2 ** len(free))[:, None] >> np.arange(len(free))) & 1
    combos = ((bits @ null) & 1).astype(np.uint8)
    return GF2System(particular, transform[r:].copy(), null, combos)


@cache
def gf2_system(puzzle: Puzzle) -> GF2System:
    """The eliminated system of ``puzzle``'s board (computed once per puzzle)."""
    return _solve_system(toggle_matrix(puzzle))


def min_presses(puzzle: Puzzle, states: np.ndarray) -> np.ndarray:
    """Minimum solutions ``uint8[B, A]`` (1 = press that cell once) of light states ``[B, n]``.

    Raises :class:`InvalidStateError` for a state that no set of presses switches off (possible
    only on boards whose toggle matrix is singular) or that is not 0/1.
    """
    system = gf2_system(puzzle)
    s = np.asarray(states).reshape(len(states), -1).astype(np.int64)
    if s.size and (s.min() < 0 or s.max() > 1):
        raise InvalidStateError("Lights Out states hold only 0 (off) and 1 (on)")
    bad = ((s @ system.check.T.astype(np.int64)) & 1).any(axis=1)
    if bad.any():
        raise InvalidStateError(
            f"state {int(np.argmax(bad))} cannot be switched off: it is outside the span of the presses"
        )
    x0 = ((s @ system.particular.T.astype(np.int64)) & 1).astype(np.uint8)
    if system.nullity == 0:
        return x0
    out = np.empty_like(x0)
    chunk = max(1, (1 << 24) // system.combos.size)  # bound the [chunk, 2**k, A] candidates
    for lo in range(0, len(x0), chunk):
        cand = x0[lo : lo + chunk, None, :] ^ system.combos[None]  # [b, 2**k, A]
        best = cand.sum(axis=2, dtype=np.int64).argmin(axis=1)
        out[lo : lo + chunk] = cand[np.arange(len(cand)), best]
    return out


def solve_lightsout(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
) -> SearchResult:
    """The minimum set of presses switching ``state`` off, as sorted press actions (no search:
    ``nodes_generated`` is 1, ``iterations`` 0; the limits and ``deadline`` are accepted for
    a uniform signature)."""
    t0 = clock.now()
    presses = min_presses(puzzle, np.asarray(state)[None])[0]
    actions = tuple(int(a) for a in np.flatnonzero(presses))
    return SearchResult(solved=True, actions=actions, nodes_generated=1, iterations=0,
                        seconds=clock.now() - t0, status="solved")  # fmt: skip
