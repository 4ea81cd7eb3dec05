"""Layer-by-layer search (Dong, Hao and Nakayama, "Solving the Rubik's Cube with Deep
Reinforcement Learning Using Multi-Headed Models"): one search per goal, each starting where the
previous one ended.

The goals are names of the puzzle's goal table (``puzzle.goal_predicates()``: cube3 ``layer1``,
``layer2``, ``solved``), met in that order by default. Stage ``k`` runs ``search`` (BWAS by
default) from the end state of stage ``k - 1`` with ``is_goal`` = goal ``k`` and that goal's
heuristic: a cost-to-go to *that* goal (a single-head network trained with ``goal=layer1``, one
head of a multi-head network, or any function). An instance drops out at the first stage that
fails (node or time limit); its result then has the status of that stage and no solution. Every
stage's end state is checked against its goal before the next stage starts.

``time_limit`` is for the whole call: it becomes one deadline, which every stage's search is
given (:mod:`.clock`); ``max_nodes`` and the other keywords are passed to every stage's search
(Dong et al.: 600,000 nodes per layer search).

Example:
    >>> import numpy as np
    >>> from puzzlezero import make
    >>> from puzzlezero.search.layered import layered
    >>> cube = make("cube3")
    >>> h = {name: goal.misplaced for name, goal in cube.goal_predicates().items() if name != "solved"}
    >>> h["solved"] = lambda s: np.count_nonzero(s != cube.goal(), axis=1).astype(np.float32)
    >>> (r,) = layered(cube, cube.parse("R U F")[None], h, weight=1.0, batch_size=10)
    >>> [st.goal for st in r.stages], r.solved
    (['layer1', 'layer2', 'solved'], True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, StageResult, as_batch, check_positive

__all__ = ["layered", "stage_goals"]

Heuristic = Callable[[np.ndarray], np.ndarray]


def stage_goals(puzzle: Puzzle, goals: Sequence[str] | None = None) -> tuple[str, ...]:
    """The goals of a layered solve, checked: ``goals`` or else every goal of the puzzle in its
    table's order (sub-goals, then ``"solved"``). An unknown name raises ``UnknownNameError``."""
    names = tuple(puzzle.goal_predicates()) if goals is None else tuple(goals)
    if not names:
        raise PuzzleError("a layered search needs at least one goal")
    for name in names:
        puzzle.goal_named(name)
    return names


def layered(
    puzzle: Puzzle,
    starts: np.ndarray,
    heuristics: Mapping[str, Heuristic] | Heuristic,
    *,
    goals: Sequence[str] | None = None,
    search: Callable[..., list[SearchResult]] | None = None,
    time_limit: float | None = None,
    deadline: float | None = None,
    **search_kwargs: Any,
) -> list[SearchResult]:
    """Solve every state of ``starts[B, *state_shape]`` goal by goal.

    Args:
        puzzle: the puzzle.
        starts: start states; the instances of a stage share its search call.
        heuristics: goal name -> heuristic ``states[M] -> float32[M]`` (the cost-to-go to that
            goal), or one heuristic for every stage.
        goals: the goals in order (default: :func:`stage_goals`, cube3 ``layer1, layer2, solved``).
        search: the search of each stage, called as ``search(puzzle, states, h, is_goal=goal,
            deadline=..., **search_kwargs)`` with the call's one deadline (a search without a
            ``deadline`` keyword: ``time_limit=``, the seconds left until it; default
            :func:`~puzzlezero.search.bwas`).
        time_limit: seconds for the whole call (``None``: none).
        deadline: when the call must stop, a reading of :func:`.clock.now` (``None``: none), for a
            caller whose own time limit it shares; with ``time_limit`` too, the earlier one. A
            stage not started by then ends ``"time limit"``.
        search_kwargs: passed to every stage (``weight``, ``batch_size``, ``max_nodes``, ...).

    Returns:
        One :class:`SearchResult` per start state: ``actions`` the concatenated stage solutions,
        ``nodes_generated`` and ``iterations`` summed over the stages, ``seconds`` from the start of
        the call until the instance's last stage ended, ``stages`` one :class:`StageResult` per
        stage run (a failed instance stops at its failing stage, whose status it reports).
    """
    starts = as_batch(puzzle, starts)
    names = stage_goals(puzzle, goals)
    check_positive("time_limit", time_limit)
    if search is None:
        from puzzlezero.search.bwas import bwas

        search = bwas
    search = clock.with_deadline(search)
    per_goal = _per_goal(names, heuristics)
    b = starts.shape[0]
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    current = starts.copy()
    actions: list[list[int]] = [[] for _ in range(b)]
    stages: list[list[StageResult]] = [[] for _ in range(b)]
    nodes = np.zeros(b, np.int64)
    iterations = np.zeros(b, np.int64)
    seconds = np.zeros(b)
    status: list[str] = ["solved"] * b
    todo = np.arange(b)
    for name in names:
        if todo.size == 0:
            break
        goal = puzzle.goal_test(name)
        if clock.passed(stop):
            for i in todo:
                status[i] = "time limit"
                stages[i].append(StageResult(name, (), 0, 0.0, "time limit"))
            todo = todo[:0]
            break
        s0 = clock.now()
        results = search(
            puzzle,
            current[todo],
            per_goal[name],
            is_goal=name,
            deadline=stop,
            **search_kwargs,
        )
        stage_seconds = clock.now() - s0
        if len(results) != todo.size:
            raise PuzzleError(f"the stage search returned {len(results)} results for {todo.size} states")
        keep = []
        for i, r in zip(todo, results, strict=True):
            nodes[i] += r.nodes_generated
            iterations[i] += r.iterations
            seconds[i] = clock.now() - t0
            stage_acts = tuple(int(a) for a in r.actions) if r.solved else ()
            stages[i].append(StageResult(name, stage_acts, int(r.nodes_generated), stage_seconds, r.status))
            if not r.solved:
                status[i] = r.status
                continue
            end = puzzle.apply_moves(current[i], stage_acts)
            if not bool(goal(end[None])[0]):
                raise PuzzleError(
                    f"stage {name!r}: the search reported a solution whose end state does not meet the goal"
                )
            current[i] = end
            actions[i].extend(stage_acts)
            keep.append(i)
        todo = np.array(keep, dtype=np.int64)
    out = []
    for j in range(b):
        solved = status[j] == "solved"
        acts = tuple(actions[j]) if solved else ()
        out.append(
            SearchResult(
                solved=solved,
                actions=acts,
                nodes_generated=int(nodes[j]),
                iterations=int(iterations[j]),
                seconds=float(seconds[j]),
                status=status[j],  # type: ignore[arg-type]
                cost=puzzle.path_cost(acts) if solved else None,
                stages=tuple(stages[j]),
            )
        )
    return out


def _per_goal(names: Sequence[str], heuristics: Mapping[str, Heuristic] | Heuristic) -> dict[str, Heuristic]:
    if callable(heuristics) and not isinstance(heuristics, Mapping):
        return {name: heuristics for name in names}
    missing = [name for name in names if name not in heuristics]
    if missing:
        raise PuzzleError(f"no heuristic for the goal(s) {', '.join(missing)} of the layered search")
    return {name: heuristics[name] for name in names}
