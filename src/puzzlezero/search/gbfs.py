"""Greedy best-first search (DeepCubeA's training monitor), batched over instances.

Each step, every unsolved instance moves to the child of its current state with the lowest
heuristic value, among the children it has not visited yet (its own trajectory, which includes the
current state: impossible moves return the parent, so they are never taken). All current states are
expanded in one ``puzzle.expand`` call and the heuristic is called once per step on the children
never generated before by that instance; values of children seen earlier are reused from the node
table. An instance stops when its current state is a goal (``"solved"``), after ``max_steps`` moves
(``"step limit"``), when every child was visited already (``"exhausted"``), or at its ``deadline``
or ``time_limit`` seconds after its start, the earlier (``"time limit"``, checked before each step).
Unlike DeepCubeA's monitor it never revisits a state, so it cannot cycle.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from puzzlezero.budget import SearchSettings, state_bytes
from puzzlezero.puzzles.base import GoalTest, Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, SearchStats, as_batch, check_positive, evaluate

__all__ = ["gbfs", "memory_estimate"]

#: bytes a child takes in a step beyond three copies of its state (see :data:`.bwas.CHILD_BYTES`)
CHILD_BYTES = 96


def memory_estimate(puzzle: Puzzle, options: SearchSettings, instances: int = 1) -> int:
    """Peak bytes of a greedy search on ``instances`` states: the node table of every child of
    every step (``max_steps``, within the node cap as the solver sets it), the moves and trail of
    each step and one step's children. Calibrated with tracemalloc on puzzle48 with a NumPy
    heuristic: 64 instances of 3,000 steps: estimated 103.5 MB, measured 103.4 MB (the node table's
    arrays are allocated whole at the start; tests/solver/test_budget.py checks 16 of 1,000 steps)."""
    from puzzlezero.search.table import table_bytes

    b, a, s = max(1, int(instances)), puzzle.num_actions, state_bytes(puzzle)
    steps = options.max_steps
    if options.max_nodes is not None:
        steps = min(steps, max(0, (options.max_nodes - 1) // a))
    nodes = b * (1 + a * steps)
    return table_bytes(s, nodes, min(nodes, 1 << 22)) + b * (steps + 1) * 10 + b * a * (3 * s + CHILD_BYTES)


def gbfs(
    puzzle: Puzzle,
    starts: np.ndarray,
    heuristic: Callable[[np.ndarray], np.ndarray],
    *,
    max_steps: int = 1000,
    time_limit: float | None = None,
    stats: SearchStats | None = None,
    is_goal: str | GoalTest | None = None,
    deadline: float | None = None,
) -> list[SearchResult]:
    """Greedy search from every state of ``starts[B, *state_shape]``; one result per start.

    ``is_goal``: the goal searched for, a goal name of the puzzle or a ``states[B] -> bool[B]``
    function (``None``: the puzzle's own ``is_goal``). ``time_limit``: seconds for the whole call;
    ``deadline``: when it must stop, a reading of :func:`.clock.now`, for a caller whose own time
    limit it shares (each ``None``: none; both: the earlier).

    ``nodes_generated`` is ``1 + num_actions * expansions`` (one expansion per move, plus the last
    one of an instance that got stuck); ``iterations`` is the number of moves made.
    """
    from puzzlezero.search.table import NEW, NodeTable  # numba: only when a search runs

    starts = as_batch(puzzle, starts)
    goal_test = puzzle.goal_test(is_goal)
    check_positive("max_steps", max_steps, integer=True, allow_zero=True)
    check_positive("time_limit", time_limit)
    st = stats if stats is not None else SearchStats()
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    b, A = starts.shape[0], puzzle.num_actions
    table = NodeTable(puzzle.state_shape, puzzle.dtype, capacity=min(b * (1 + A * max_steps), 1 << 22))
    inst = np.arange(b)
    _, cur = table.add(
        NodeTable.mix_instance(puzzle.hash64(starts), inst),
        table.as_rows(starts),
        inst,
        np.full(b, -1),
        np.zeros(b),
        np.zeros(b),
    )
    table.closed_g[cur] = 0.0  # visited
    moves = np.zeros((max_steps, b), np.int16)
    trail = np.zeros((max_steps + 1, b), np.int64)  # node index after each move
    trail[0] = cur
    steps = np.zeros(b, np.int64)
    expansions = np.zeros(b, np.int64)
    seconds = np.zeros(b)
    status: list[str | None] = [None] * b
    active = inst.copy()
    st.nodes_generated += b

    for step in range(max_steps + 1):
        if active.size == 0:
            break
        now = clock.now()
        if now >= stop:
            _finish(status, seconds, active, "time limit", now - t0)
            break
        with st.timer("goal_test"):
            states = table.states(cur[active])
            done = goal_test(states)
        _finish(status, seconds, active[done], "solved", clock.now() - t0)
        if step == max_steps:
            _finish(status, seconds, active[~done], "step limit", clock.now() - t0)
            break
        active, states = active[~done], states[~done]
        if active.size == 0:
            break
        n = active.size
        st.iterations += 1
        with st.timer("expand"):
            children = puzzle.expand(states).reshape(n * A, *puzzle.state_shape)
        st.nodes_generated += n * A
        st.nodes_expanded += n
        expansions[active] += 1
        c_inst = np.repeat(active, A)
        with st.timer("dedup"):
            code, idx = table.add(
                NodeTable.mix_instance(puzzle.hash64(children), c_inst),
                table.as_rows(children),
                c_inst,
                np.repeat(cur[active], A),
                np.tile(np.arange(A), n),
                np.full(n * A, step + 1),
            )
        fresh = code == NEW
        if fresh.any():
            table.h[idx[fresh]] = evaluate(heuristic, children[fresh], st)
        idx = idx.reshape(n, A)
        values = table.h[idx].astype(np.float64)
        values[np.isfinite(table.closed_g[idx])] = np.inf  # visited: never go back
        best = np.argmin(values, axis=1)
        stuck = np.isinf(values[np.arange(n), best])
        _finish(status, seconds, active[stuck], "exhausted", clock.now() - t0)
        active, best, idx = active[~stuck], best[~stuck], idx[~stuck]
        chosen = idx[np.arange(active.size), best]
        table.closed_g[chosen] = step + 1
        moves[step, active] = best
        trail[step + 1, active] = chosen
        steps[active] += 1
        cur[active] = chosen

    st.total += clock.now() - t0
    results = []
    for i in range(b):
        solved = status[i] == "solved"
        acts = tuple(int(a) for a in moves[: steps[i], i]) if solved else ()
        path = table.states(trail[: steps[i] + 1, i]) if solved else None
        results.append(
            SearchResult(
                solved=solved,
                actions=acts,
                nodes_generated=int(1 + A * expansions[i]),
                iterations=int(steps[i]),
                seconds=float(seconds[i]),
                status=status[i],  # type: ignore[arg-type]
                path_states=path,
                cost=puzzle.path_cost(acts) if solved else None,
            )
        )
    return results


def _finish(status: list[str | None], seconds: np.ndarray, which: np.ndarray, why: str, now: float) -> None:
    for i in which:
        status[int(i)] = why
        seconds[int(i)] = now
