"""The Python side of IDA*: thresholds, node and time limits, the :class:`SearchResult`.

The depth-first search of one IDA* iteration runs in a numba kernel with an explicit stack, so it
can stop after a budget of generated nodes and resume exactly where it was (numba code cannot read
the clock; between two budgets the driver reads :func:`puzzlezero.search.clock.now`). The kernels
share one protocol:

* ``ctx int64[4]``: ``[depth, bound, next bound (smallest f above bound seen), nodes generated]``;
* ``run(budget) -> int``: resume the iteration for at most ``budget`` more nodes; returns
  :data:`FOUND` (``path[:depth]`` solves), :data:`DONE` (iteration finished without a solution)
  or :data:`PAUSED` (budget spent);
* ``nxt int64[depth + 2]``: the next move to try at each depth; ``nxt[d] == -1`` means the node at
  depth ``d`` is not expanded yet, so ``nxt[0] = -1`` restarts an iteration at the root.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, Status, check_positive

__all__ = ["FOUND", "DONE", "PAUSED", "NO_BOUND", "new_context", "drive", "result"]

FOUND, DONE, PAUSED = 1, 0, -1
NO_BOUND = 1 << 40
_CHUNK = 1 << 21  # nodes per kernel call: a few tens of milliseconds


def new_context(h0: int) -> np.ndarray:
    """A fresh ``ctx`` for a root with heuristic ``h0``."""
    return np.array([0, h0, NO_BOUND, 0], dtype=np.int64)


def drive(
    run: Callable[[int], int],
    ctx: np.ndarray,
    path: np.ndarray,
    nxt: np.ndarray,
    actions: Sequence[int],
    *,
    time_limit: float | None,
    max_nodes: int | None,
    max_depth: int,
    deadline: float | None = None,
) -> SearchResult:
    """Run IDA* iterations until a solution, a limit, or no bound is left; ``actions[m]`` is the
    puzzle action of the kernel's move ``m``. The search stops at ``deadline`` (a reading of
    :func:`puzzlezero.search.clock.now`) or ``time_limit`` seconds after it starts, whichever
    comes first (checked after each budget of nodes)."""
    status, moves, nodes, iterations, seconds = _iterate(
        run,
        ctx,
        path,
        nxt,
        time_limit=time_limit,
        max_nodes=max_nodes,
        max_depth=max_depth,
        deadline=deadline,
    )
    return result(status, tuple(actions[m] for m in moves), nodes, iterations, seconds)


def _iterate(
    run: Callable[[int], int],
    ctx: np.ndarray,
    path: np.ndarray,
    nxt: np.ndarray,
    *,
    time_limit: float | None,
    max_nodes: int | None,
    max_depth: int,
    deadline: float | None,
) -> tuple[Status, tuple[int, ...], int, int, float]:
    """``(status, kernel moves, nodes generated, iterations, seconds)`` of :func:`drive`."""
    check_positive("time_limit", time_limit)
    check_positive("max_nodes", max_nodes, integer=True)
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    iterations = 0
    while True:
        iterations += 1
        nxt[0] = -1  # the root, not expanded yet
        ctx[0], ctx[2] = 0, NO_BOUND
        while True:
            budget = _CHUNK if max_nodes is None else min(_CHUNK, max_nodes - int(ctx[3]))
            if budget <= 0:
                return "node limit", (), int(ctx[3]), iterations, clock.now() - t0
            code = run(budget)
            if code == FOUND:
                moves = tuple(int(m) for m in path[: ctx[0]])
                return "solved", moves, int(ctx[3]), iterations, clock.now() - t0
            if clock.passed(stop):
                return "time limit", (), int(ctx[3]), iterations, clock.now() - t0
            if code == DONE:
                break
        if ctx[2] >= NO_BOUND or ctx[2] >= max_depth:
            return "exhausted", (), int(ctx[3]), iterations, clock.now() - t0
        ctx[1] = ctx[2]


def result(
    status: Status, actions: tuple[int, ...], nodes: int, iterations: int, seconds: float
) -> SearchResult:
    """A :class:`SearchResult`; ``nodes`` counts the root too (the searches' convention)."""
    solved = status == "solved"
    return SearchResult(
        solved=solved,
        actions=actions if solved else (),
        nodes_generated=nodes + 1,
        iterations=iterations,
        seconds=seconds,
        status=status,
    )
