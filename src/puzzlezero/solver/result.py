"""What a solve returns: :class:`SolveResult`, made only from solutions verified by replaying them
on the start state (:func:`verify`), and what it reports while it runs: :class:`Improvement`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzlezero.puzzles.base import SOLVED, Puzzle
from puzzlezero.search.result import SearchResult
from puzzlezero.solver.names import Results


@dataclass(frozen=True)
class SolveResult:
    """A verified outcome. ``solution`` holds move names in the benchmarks' notation;
    ``seconds`` is this instance's share of the search time (see :func:`solve_many`)."""

    puzzle: str
    solved: bool
    actions: tuple[int, ...]
    solution: tuple[str, ...]
    nodes_generated: int
    seconds: float
    status: str
    search: str = "bwas"
    #: length in the half-turn metric: the search's own where it reports one (``kociemba``), else
    #: ``puzzle.half_turn_length(actions)`` (cubes; ``None`` for puzzles without half turns)
    half_turn_length: int | None = None
    #: anytime solving: ``(seconds, length)`` of each shorter solution found, the first one first
    improvements: tuple[tuple[float, int], ...] = ()
    #: the solution's cost, the sum of its moves' costs (``Puzzle.path_cost``; the length where
    #: every move costs 1), ``None`` when not solved
    cost: float | None = None
    #: the fallback search that solved the state after ``search`` left it unsolved (cubes:
    #: ``"group"``, see ``Defaults.fallback``), else ``None``
    fallback: str | None = None
    #: the goal solved to (``"solved"``: the puzzle's own)
    goal: str = "solved"
    #: layered solving: ``{"goal", "solution", "length", "nodes_generated", "seconds", "status"}``
    #: of each stage, in order (each stage's end state checked against its goal by replay)
    stages: tuple[dict[str, Any], ...] = ()
    #: the length of the search's own path where a pass after the search shortened it: the
    #: puzzle's algebra (``Puzzle.reduce_moves``: Lights Out drops presses made twice) or the
    #: shortcut and window passes (:mod:`puzzlezero.search.shortcut`,
    #: :mod:`puzzlezero.search.windows`); else ``None``
    search_length: int | None = None
    #: an ensemble (``--models``): the member model whose solution this is, else ``None``
    model: str | None = None
    #: the seconds this search call waited, before its clock began, for what a process pays once
    #: (the heuristics or members built and warmed up, a search's tables; see
    #: :func:`~puzzlezero.solver.solve_many`): not in ``seconds``; 0.0 where nothing was waited for
    prepared_seconds: float = 0.0

    @property
    def length(self) -> int | None:
        return len(self.actions) if self.solved else None

    @property
    def first_solution_seconds(self) -> float | None:
        """When the first solution was found (anytime solving), else ``None``."""
        return self.improvements[0][0] if self.improvements else None

    def to_json(self) -> dict[str, Any]:
        """``{"puzzle", "solved", "solution", "length", "cost", "nodes_generated", "seconds",
        "status", "search"}`` (plus ``half_turn_length`` for solved cubes, and for anytime solving
        ``first_solution_seconds`` and ``improvements``: ``[{"seconds", "length"}, ...]``, and
        ``fallback`` when the fallback search found the solution, ``goal`` when it is not the
        puzzle's own, and for layered solving ``stages``: ``[{"goal", "solution", "length",
        "nodes_generated", "seconds", "status"}, ...]``, whose solutions concatenate to
        ``solution``, and ``search_length`` where a pass after the search shortened its path);
        ``solution`` is the list of move names (``None`` when not solved), ``model``, an
        ensemble's member model whose solution it is, and ``prepared_seconds`` where the call
        waited for one-time preparation before its clock began)."""
        anytime = (
            {
                "first_solution_seconds": self.first_solution_seconds,
                "improvements": [{"seconds": t, "length": n} for t, n in self.improvements],
            }
            if self.improvements
            else {}
        )
        return (
            anytime
            | {
                "puzzle": self.puzzle,
                "solved": self.solved,
                "solution": list(self.solution) if self.solved else None,
                "length": self.length,
                "cost": self.cost,
                "nodes_generated": self.nodes_generated,
                "seconds": round(self.seconds, 6),
                "status": self.status,
                "search": self.search,
            }
            | ({"half_turn_length": self.half_turn_length} if self.half_turn_length is not None else {})
            | ({"fallback": self.fallback} if self.fallback else {})
            | ({"goal": self.goal} if self.goal != SOLVED else {})
            | ({"stages": [dict(st) for st in self.stages]} if self.stages else {})
            | ({"search_length": self.search_length} if self.search_length is not None else {})
            | ({"model": self.model} if self.model is not None else {})
            | ({"prepared_seconds": waited} if (waited := round(self.prepared_seconds, 3)) else {})
        )


@dataclass(frozen=True)
class Improvement:
    """A solution a solve has found before it returns, reported to ``on_solution``
    (:func:`~puzzlezero.solver.solve_many`): the first one, then each strictly cheaper one. Every
    one has been verified by replaying it on its start state (solutions that fail the replay are
    not reported). The last one reported for a state is its final answer's solution.

    Example:
        >>> seen = []                                                       # doctest: +SKIP
        >>> r = solve("cube3", "R U R' U'", on_solution=seen.append)        # doctest: +SKIP
        >>> seen[-1].solution == r.solution, seen[0].stage                  # doctest: +SKIP
        (True, 'stage 1')
    """

    #: the state's place among the states solved (0 for :func:`~puzzlezero.solver.solve`)
    index: int
    #: the moves as the final result names them (:attr:`SolveResult.solution`)
    solution: tuple[str, ...]
    #: the number of moves
    length: int
    #: the sum of the moves' costs (``Puzzle.path_cost``; the length where every move costs 1)
    cost: float
    #: seconds since the search call that solves the state began, on
    #: :func:`puzzlezero.search.clock.now`, when the solution was reported
    seconds: float
    #: nodes generated so far by the search that found it (with an anytime schedule: the state's
    #: nodes of every stage up to this one)
    nodes_generated: int
    #: what found it: ``"stage K"`` (the K-th stage of an anytime schedule, from 1; in an
    #: ensemble ``"MODEL stage K"``, the member's folder name first), ``"search"`` (a search
    #: without a schedule), ``"fallback"`` or ``"shortcut"`` (the pass after the search: the
    #: puzzle's algebra or the shortcut pass)
    stage: str

    def to_json(self) -> dict[str, Any]:
        """``{"index", "solution", "length", "cost", "seconds", "nodes_generated", "stage"}``."""
        return {
            "index": self.index,
            "solution": list(self.solution),
            "length": self.length,
            "cost": self.cost,
            "seconds": round(self.seconds, 6),
            "nodes_generated": self.nodes_generated,
            "stage": self.stage,
        }


def verify(
    puzzle: Puzzle, states: np.ndarray, solutions: Sequence[Sequence[int]], goal: str = SOLVED
) -> np.ndarray:
    """``bool[B]``: does replaying ``solutions[i]`` on ``states[i]`` reach ``goal`` (a goal name,
    default the puzzle's own)? Batched replay."""
    b = states.shape[0]
    lengths = np.array([len(s) for s in solutions], dtype=np.int64)
    moves = np.zeros((b, int(lengths.max(initial=0))), dtype=np.int64)
    ok = np.ones(b, dtype=bool)
    for i, sol in enumerate(solutions):
        arr = np.asarray(sol, dtype=np.int64)
        ok[i] = bool(np.all((arr >= 0) & (arr < puzzle.num_actions)))
        moves[i, : arr.size] = np.where(ok[i], arr, 0)
    cur = states.copy()
    for t in range(moves.shape[1]):
        rows = np.flatnonzero(lengths > t)
        cur[rows] = puzzle.apply(cur[rows], moves[rows, t])
    return ok & puzzle.goal_test(goal)(cur)


def verified(
    p: Puzzle,
    states: np.ndarray,
    found: Results,
    searched: Sequence[int | None],
    search: str,
    wall: float | None,
    rescued: Sequence[str | None] | None = None,
    goal: str = SOLVED,
    *,
    models: Sequence[str | None] | None = None,
    prepared: float = 0.0,
) -> list[SolveResult]:
    """The results of a search call, each solution verified by replay on its start state (a
    solution that fails it is ``"invalid solution"``, not solved); ``rescued``: the fallback
    search that found each, ``models``: the ensemble member whose solution each is, ``prepared``:
    the seconds the call waited for one-time preparation (:attr:`SolveResult.prepared_seconds`)."""
    good = verify(p, states, [r.actions if r.solved else () for r in found], goal)
    for i, r in enumerate(found):
        if r.stages and r.solved:  # layered: every stage must end on its own goal
            good[i] &= _stages_ok(p, states[i], r)
    out = []
    for i, (r, ok) in enumerate(zip(found, good, strict=True)):
        res = SolveResult(
            puzzle=p.name,
            solved=bool(r.solved and ok),
            actions=tuple(r.actions) if r.solved and ok else (),
            solution=tuple(p.format_moves(r.actions)) if r.solved and ok else (),
            nodes_generated=int(r.nodes_generated),
            seconds=float(r.seconds) if wall is None else wall / states.shape[0],
            status=r.status if (ok or not r.solved) else "invalid solution",
            search=search,
            half_turn_length=_half_turn_length(p, r) if r.solved and ok else None,
            improvements=tuple(r.improvements) if r.solved and ok else (),
            cost=p.path_cost(r.actions) if r.solved and ok else None,
            fallback=rescued[i] if rescued and ok else None,
            goal=goal,
            stages=tuple(_stage_json(p, st) for st in r.stages),
            search_length=searched[i] if r.solved and ok else None,
            model=models[i] if models and r.solved and ok else None,
            prepared_seconds=prepared,
        )
        out.append(res)
    return out


def _stages_ok(p: Puzzle, start: np.ndarray, r: SearchResult) -> bool:
    """Replay a layered solution stage by stage: each stage's end state meets its goal, and the
    stages' moves concatenate to the solution."""
    state, moves = start, []
    for st in r.stages:
        acts = [int(a) for a in st.actions]
        if any(not 0 <= a < p.num_actions for a in acts):
            return False
        state = p.apply_moves(state, acts)
        if not bool(p.goal_test(st.goal)(state[None])[0]):
            return False
        moves.extend(acts)
    return moves == [int(a) for a in r.actions]


def _stage_json(p: Puzzle, st: Any) -> dict[str, Any]:
    solved = st.status == "solved"
    return {
        "goal": st.goal,
        "solution": p.format_moves(st.actions) if solved else None,
        "length": len(st.actions) if solved else None,
        "nodes_generated": int(st.nodes_generated),
        "seconds": round(float(st.seconds), 6),
        "status": st.status,
    }


def _half_turn_length(p: Puzzle, r: SearchResult) -> int | None:
    """The search's own half-turn length (kociemba) or else the puzzle's count of its moves."""
    own = getattr(r, "half_turn_length", None)
    return int(own) if own is not None else p.half_turn_length(r.actions)
