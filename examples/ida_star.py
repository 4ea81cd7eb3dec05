"""IDA* (Korf, "Depth-first iterative-deepening: an optimal admissible tree search", 1985) as a
search of one's own: one file, one ``register_search`` call.

    puzzlezero --plugin examples/ida_star.py solve cube2 "R U F' D" --search ida
    puzzlezero --plugin examples/ida_star.py solve puzzle15 "..." --search ida --heuristic pdb

Depth-first search bounded by ``f = g + w * h``, the bound raised to the least ``f`` that went over
it, until a goal is met: with an admissible heuristic and ``w = 1`` the first solution is optimal.
Memory is the path alone, so no node cap applies by default; the time limit bounds it, and
``--max-nodes`` may. A walkthrough is in ``docs/adding-a-search.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from puzzlezero.solver import OptionSpec, SearchSpec, register_option, register_search


class _Stop(Exception):
    """The node cap or the deadline was reached (its status)."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


def ida_star(
    puzzle: Any,
    start: np.ndarray,
    heuristic: Callable[[np.ndarray], np.ndarray],
    *,
    weight: float = 1.0,
    max_nodes: int | None = None,
    deadline: float = math.inf,
) -> SearchResult:
    """Solve ``start`` by iterative deepening on ``g + weight * h``; children are made and scored
    all at once per node (``puzzle.expand``, one heuristic call), tried cheapest first, and a move
    that undoes the previous one is skipped."""
    began = clock.now()
    costs = puzzle.action_costs
    inverse = puzzle.inverse_action
    path: list[int] = []
    nodes = 1
    iterations = 0

    def result(solved: bool, status: str) -> SearchResult:
        return SearchResult(
            solved, tuple(path) if solved else (), nodes, iterations, clock.now() - began, status
        )

    def dfs(state: np.ndarray, g: float, bound: float) -> float:
        """The least ``f`` above ``bound`` below ``state``, or ``-1`` once a goal is met."""
        nonlocal nodes
        if puzzle.is_goal(state[None])[0]:
            return -1.0
        if max_nodes is not None and nodes >= max_nodes:
            raise _Stop("node limit")
        if clock.passed(deadline):
            raise _Stop("time limit")
        children = puzzle.expand(state[None])[0]
        nodes += len(children)
        f = g + costs + weight * np.asarray(heuristic(children), dtype=np.float64)
        if path:
            f[inverse[path[-1]]] = math.inf  # never undo the last move
        least = math.inf
        for a in np.argsort(f, kind="stable"):
            if f[a] > bound:
                least = min(least, float(f[a]))
                break  # sorted: the rest are above the bound too
            path.append(int(a))
            found = dfs(children[a], g + float(costs[a]), bound)
            if found < 0:
                return found
            path.pop()
            least = min(least, found)
        return least

    bound = weight * float(np.asarray(heuristic(start[None]), dtype=np.float64)[0])
    try:
        while True:
            iterations += 1
            found = dfs(start, 0.0, bound)
            if found < 0:
                return result(True, "solved")
            if math.isinf(found):
                return result(False, "exhausted")
            bound = found
    except _Stop as stop:
        return result(False, stop.status)


def run_ida(
    fn: Callable[..., SearchResult],
    puzzle: Any,
    states: np.ndarray,
    h: Callable[[np.ndarray], np.ndarray],
    o: Any,
    deadline: float | None = None,
    on_solution: Any = None,
) -> list[SearchResult]:
    """The adapter: each state in turn, all to the one deadline, with the ``ida_weight`` knob and
    the node cap of the resolved options (``o``)."""
    deadline = clock.deadline_after(o.time_limit) if deadline is None else deadline
    weight = o.option("ida_weight")
    return [fn(puzzle, s, h, weight=weight, max_nodes=o.max_nodes, deadline=deadline) for s in states]


register_option(
    "ida_weight",
    OptionSpec(
        1.0,
        float,
        "IDA*: weight w of the heuristic in f = g + w * h (1: optimal with an admissible h)",
        low=1.0,
    ),
)
register_search(
    "ida",
    SearchSpec(
        entry=ida_star,
        run=run_ida,
        needs_heuristic=True,
        description="IDA* (Korf 1985): depth-first iterative deepening on g + w * h, memory the path alone",
        node_cap=False,
        options=("ida_weight",),
    ),
)
