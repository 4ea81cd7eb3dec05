"""Manhattan distance plus linear conflicts (Hansson, Mayer and Yung 1992): an admissible heuristic
of the sliding puzzles that needs no network, compiled with numba and batched over states.

Two tiles of one row are in *linear conflict* when both have their home in that row and stand in
the reverse order of their homes: one of them must leave the row and come back, two moves the
Manhattan distance does not count. In each row the tiles at home in it that can stay are the
longest subsequence whose home columns already increase; every other one must leave, so the row
adds ``2 * (tiles at home in the row - that longest subsequence)``; so does each column, with
rows and columns swapped. A row's extra moves are vertical and a column's horizontal, so the
sums add to the Manhattan distance and stay a lower bound of the moves left (0 at the goal).

>>> from puzzlezero import make
>>> p = make("puzzle8")
>>> h = linear_conflict_heuristic(p)
>>> h(p.goals(1)).tolist()
[0.0]
>>> board = p.parse("2 1 3 4 0 6 7 8 5")   # Manhattan 4; tiles 1 and 2 swapped in their row
>>> h(board[None]).tolist()
[6.0]
"""

from __future__ import annotations

from collections.abc import Callable

import numba as nb
import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle

__all__ = ["linear_conflict", "linear_conflict_heuristic", "must_leave"]


@nb.njit(cache=True, inline="always")
def must_leave(keys: np.ndarray, k: int, best: np.ndarray) -> int:  # pragma: no cover - compiled
    """How many of ``keys[:k]`` (distinct home columns or rows, in board order) must leave the
    line: ``k`` minus the longest increasing subsequence (``best``: scratch of at least ``k``)."""
    longest = 0
    for i in range(k):
        run = 1
        for j in range(i):
            if keys[j] < keys[i] and best[j] + 1 > run:
                run = best[j] + 1
        best[i] = run
        if run > longest:
            longest = run
    return k - longest


@nb.njit(cache=True, nogil=True)
def linear_conflict(states: np.ndarray, n: int, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i]``: Manhattan distance plus linear conflicts of ``states[i]`` (``uint8[n*n]``, row
    major, tile ``v`` at home in cell ``v - 1``, ``0`` the blank)."""
    keys = np.empty(n, dtype=np.int64)
    best = np.empty(n, dtype=np.int64)
    for i in range(states.shape[0]):
        s = states[i]
        total = 0
        for r in range(n):  # Manhattan distance, and the conflicts of row r
            k = 0
            for c in range(n):
                v = int(s[r * n + c])
                if v == 0:
                    continue
                hr, hc = (v - 1) // n, (v - 1) % n
                total += abs(hr - r) + abs(hc - c)
                if hr == r:
                    keys[k] = hc
                    k += 1
            total += 2 * must_leave(keys, k, best)
        for c in range(n):  # the conflicts of column c
            k = 0
            for r in range(n):
                v = int(s[r * n + c])
                if v != 0 and (v - 1) % n == c:
                    keys[k] = (v - 1) // n
                    k += 1
            total += 2 * must_leave(keys, k, best)
        out[i] = total


def linear_conflict_heuristic(puzzle: Puzzle) -> Callable[[np.ndarray], np.ndarray]:
    """The heuristic ``states[B, n*n] -> float32[B]`` of a sliding puzzle (an
    :class:`~puzzlezero.puzzles.npuzzle.NPuzzle`; another puzzle is refused by name): Manhattan
    distance plus linear conflicts, admissible, 0 at the goal. With moves that cost other than 1
    the count is scaled by the cheapest move, so it stays a lower bound of the cost."""
    from puzzlezero.puzzles.npuzzle.rules import NPuzzle

    if not isinstance(puzzle, NPuzzle):
        raise PuzzleError(
            f"the manhattan heuristic (Manhattan distance plus linear conflicts) is for the sliding "
            f"puzzles (puzzle8 ... puzzle48); {puzzle.name!r} is not one"
        )
    n = puzzle.size
    per_move = float(puzzle.action_costs.min())

    def h(states: np.ndarray) -> np.ndarray:
        arr = np.ascontiguousarray(states, dtype=np.uint8).reshape(-1, n * n)
        out = np.empty(arr.shape[0], dtype=np.float32)
        linear_conflict(arr, n, out)
        if per_move != 1.0:
            out *= np.float32(per_move)
        return out

    return h
