"""Optimal 2x2x2 solutions by descent in the exact distance table.

:func:`puzzlezero.puzzles.cube.table.distance` knows the optimal cost of every position, so an
optimal solution takes, at each step, a move to a child one closer to solved: ``d`` steps of 12
table lookups, no search.
"""

from __future__ import annotations

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult

__all__ = ["solve_cube2", "cube2_distance"]


def cube2_distance(states: np.ndarray) -> np.ndarray:
    """Exact optimal costs ``float32[B]`` of cube2 states ``uint8[B, 24]`` (a perfect heuristic)."""
    from puzzlezero.puzzles.cube.table import distance

    return distance(np.asarray(states)).astype(np.float32)


def solve_cube2(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
) -> SearchResult:
    """An optimal quarter-turn solution of one cube2 state (the limits and ``deadline`` are
    accepted for a uniform signature; the descent takes at most 14 steps of 12 lookups)."""
    from puzzlezero.puzzles.cube.table import distance

    t0 = clock.now()
    s = np.asarray(state, dtype=puzzle.dtype)[None]
    d = int(distance(s)[0])
    actions: list[int] = []
    nodes = 1
    while d > 0:
        children = puzzle.expand(s)[0]
        nodes += len(children)
        a = int(np.flatnonzero(distance(children) == d - 1)[0])
        actions.append(a)
        s, d = children[a : a + 1], d - 1
    return SearchResult(solved=True, actions=tuple(actions), nodes_generated=nodes, iterations=len(actions),
                        seconds=clock.now() - t0, status="solved")  # fmt: skip
