"""Anytime solving by restarts: a schedule of ever stronger searches within one time budget.

With an inadmissible learned heuristic the first solution of weighted A* is rarely the shortest,
and a bigger batch ``N`` or a larger path-cost weight ``lambda`` finds shorter ones at a higher
price. Restarting weighted A* (Richter, Thayer and Ruml, "The Joy of Forgetting: Faster Anytime
Search via Restarting", ICAPS 2010) runs a schedule of settings, each a fresh search, and keeps the
best solution so far:

1. Run stage ``k`` (``weight_k``, ``batch_k``) on every instance, until the schedule's deadline
   (every stage is given the one deadline of the whole call: :mod:`.clock`).
2. An instance that has a solution of cost ``C`` searches the next stages with ``max_cost`` just
   below ``C`` (:func:`cost_bound`): children whose path cost exceeds it are dropped, so only
   strictly cheaper solutions are looked for and no time is spent below the incumbent's depth.
3. Stop when the schedule is done or the deadline has come; each instance returns its cheapest solution
   (with equal action costs: its shortest), with the time and length of every improvement
   (``SearchResult.improvements``; with unequal costs a cheaper solution may be longer).

The first stage is the cheap one: it answers quickly (a legal state always gets a solution when
the budget allows one at all), and every later stage only improves on it. The node cap applies
to each stage (it bounds memory, which a stage frees when it ends); ``nodes_generated`` adds the
stages up. The stages are BWAS or Q* (any function with :func:`~.bwas.bwas`'s keywords; one
without a ``deadline`` keyword is given the seconds left as its ``time_limit``).

Beam search restarts the same way with wider beams (:func:`anytime_beam`, stages of widths ``W``):
a beam's cost grows with ``W`` and so, on average, does the quality of its solution, but a beam
that runs out of time or nodes finds nothing at all. A schedule of a narrow beam, then a wide
one, answers under a short limit and loses only the narrow beam's time under a long one.

**Widths fitted to the time left.** How long a beam of width ``W`` takes depends on the machine (a
CPU without int8 dot products runs a network at about a fifth of the speed of one with them), and a
beam that runs out of time finds nothing. So each later beam of a schedule is narrowed, before it
starts, to what the time left buys at the rate the earlier beams measured: a beam's time grows as
its width times its steps (measured: 114-139 microseconds a width-step on ``globe_2-6`` at widths
of 1,000 to 10,000, the narrowest the dearest), and it is planned to step :data:`FIT_STEPS` of its
bound, the incumbent's length less one: a beam that finds nothing shorter runs to its bound, but
then loses nothing when its time runs out (:func:`fitted_width`). A beam narrowed to less than
:data:`FIT_MIN_GAIN` times the widest that ran is not run (a beam hardly wider than one that ran,
bounded below its answer, rarely finds a shorter one): the schedule ends and leaves its time to what
follows it (the solver's shortcut pass). A narrowed beam, once it has run, is fitted again at its full
width: its answer, shorter than the one before, bounds the steps of the next beam, so the time left
may buy a wider one (on the 48-puzzle a first answer of 782 moves plans for far more steps than the
wider beam's answer, about 310, takes). A search that takes ``pace`` (:func:`~.beam.beam`) is
asked to pace each beam as it runs, too, up to the schedule's width: a bounded beam sets its width,
step by step, to what reaches its bound before the deadline at the rate it measures itself, so that a
plan a little short of the steps costs width at the end, not the answer, and one made from the
narrow beam's dearer rate does not leave time unused. Where the machine is fast enough, nothing
changes.

>>> stages = [(0.2, 100), (0.5, 1000), (0.6, 3000)]                              # doctest: +SKIP
>>> (r,) = anytime(bwas, cube, start, h, stages, time_limit=30.0)               # doctest: +SKIP
>>> r.length, r.improvements                                                     # doctest: +SKIP
(22, ((0.4, 30), (3.1, 24), (17.8, 22)))

Progress: ``on_solution`` (a :data:`SolutionHook`) is called with each start's solution that is
cheaper than any before it, ``on_solution(row, result, stage)``: the start's row, the
:class:`SearchResult` (its ``nodes_generated`` the start's nodes of every stage so far) and the
stage's index in the schedule (0: the first). A stage whose search takes ``on_solved`` (BWAS, Q*)
passes each solution on the moment it is found, while the stage's other starts search on; other
searches' solutions come as the stage ends. A caller shows the first answer as soon as the cheap
first stage has it, and each better one as it comes, instead of all when the time limit is up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import GoalTest, Puzzle
from puzzlezero.search import clock
from puzzlezero.search.beam import PACE_STEPS
from puzzlezero.search.result import SearchResult, as_batch, check_positive

__all__ = [
    "GroupLedger",
    "SolutionHook",
    "Stages",
    "anytime",
    "anytime_beam",
    "check_stages",
    "check_widths",
    "cost_bound",
    "fitted_width",
]

#: the share of the time left that a narrowed beam plans to take (:func:`fitted_width`): the rate
#: a narrow beam measures overstates a wider one's a little (by a tenth on ``globe_2-6``; the same
#: on the 48-puzzle), and the share keeps a margin beside it
FIT_MARGIN = 0.95
#: the share of its bound a later beam is planned to step: a beam that finds nothing shorter loses
#: nothing when its time runs out, so it is planned for one that finds a shorter answer (the share a
#: paced beam plans for too, :data:`~.beam.PACE_STEPS`)
FIT_STEPS = PACE_STEPS
#: a beam narrowed to less than this many times the widest beam that ran is not run
FIT_MIN_GAIN = 1.5

#: ``on_solution(row, result, stage)``: start ``row`` has a cheaper solution, ``result``, found by
#: stage ``stage`` (0: the schedule's first); called in the searching thread
SolutionHook = Callable[[int, SearchResult, int], None]


class Stages(tuple[tuple[float, int], ...]):
    """A schedule of ``(weight, batch)`` stages that :func:`check_stages` has checked: what takes
    one (the solver's options, :func:`anytime`) uses it as it is, without checking it again."""

    __slots__ = ()


def check_stages(stages: Sequence[tuple[float, int]]) -> Stages:
    """``stages`` as :class:`Stages`, a tuple of ``(weight, batch)``; an empty schedule, a negative
    weight or a batch that is not a positive integer raise :class:`PuzzleError`. A schedule checked
    already is returned as it is."""
    if isinstance(stages, Stages):
        return stages
    if not stages:
        raise PuzzleError("an anytime search needs at least one (weight, batch) stage")
    for weight, batch in stages:
        check_positive("weight", weight, allow_zero=True)
        check_positive("batch", batch, integer=True)
    return Stages((float(weight), int(batch)) for weight, batch in stages)


def cost_bound(puzzle: Puzzle, cost: float | np.ndarray) -> float | np.ndarray:
    """The ``max_cost`` that leaves only solutions strictly cheaper than ``cost``: one move less
    where every action costs the same (``cost - uniform_cost``), else ``cost`` less a thousandth
    of the cheapest action (so a solution cheaper by less than that is not looked for; path costs
    are summed in float32 by the searches, and this margin keeps equal-cost paths out). ``cost``
    may be an array (``inf`` stays ``inf``: no bound)."""
    if puzzle.uniform_cost is not None:
        return cost - puzzle.uniform_cost
    return cost - 1e-3 * float(puzzle.action_costs.min())


class GroupLedger:
    """What the searches of one problem's guises share while they run (a group: a state and its
    images, :mod:`.images`), in one batched search or in several side by side in threads.

    * ``cost[g]``: the cheapest solution found of group ``g`` (``inf``: none yet). Every member's
      search keeps only children cheaper than it (:func:`cost_bound`), from the next iteration on.
    * ``found[g]``, ``until[g]``: when the group's latest solution was found (a reading of
      :func:`.clock.now`), ``t`` seconds into the stage that found it, and ``t`` seconds after that. A search given ``group_stop`` (every stage
      of a schedule but the last) ends its members of the group at ``until[g]`` if the solution came
      while it ran: restarting weighted A* moves on to its next, stronger stage once a stage has
      given its solution, instead of letting the group's other members search for a cheaper one
      to their node caps with a setting too greedy to find it (on the cube: most of the 30 s).

    Reads and writes are of single floats under the GIL; a write that a concurrent one overtakes
    costs at most a bound one iteration late.
    """

    def __init__(self, n_groups: int) -> None:
        self.cost = np.full(n_groups, np.inf)
        self.found = np.full(n_groups, -np.inf)
        self.until = np.full(n_groups, np.inf)
        #: the searches sharing the ledger are to end (:meth:`abandon`)
        self.abandoned = False

    def solved(self, group: int, cost: float, started: float, now: float) -> None:
        """A member of ``group`` was solved at ``cost``, at time ``now`` by a search begun at ``started``."""
        self.cost[group] = min(self.cost[group], cost)
        self.found[group] = now
        self.until[group] = now + (now - started)

    def abandon(self) -> None:
        """End every search that shares this ledger: at its next iteration (:attr:`abandoned`,
        status ``"time limit"``), and no later stage starts, each group's bound being below any
        cost (a caller that raises while searches run side by side in threads stops them so)."""
        self.abandoned = True
        self.cost[:] = -np.inf

    def bounds(self, puzzle: Puzzle, groups: np.ndarray) -> np.ndarray:
        """``float32[B]``: the ``max_cost`` each member of ``groups`` has now (``inf``: none)."""
        return np.asarray(cost_bound(puzzle, self.cost[groups]), dtype=np.float32)

    def ended(self, groups: np.ndarray, started: float, now: float) -> np.ndarray:
        """``bool[B]``: members whose group found a solution since ``started`` and whose time is up."""
        return (self.found[groups] >= started) & (now >= self.until[groups])


def anytime(
    search: Callable[..., list[SearchResult]],
    puzzle: Puzzle,
    starts: np.ndarray,
    heuristic: Callable[[np.ndarray], np.ndarray],
    stages: Sequence[tuple[float, int]],
    *,
    time_limit: float | None = None,
    max_nodes: int | None = 10_000_000,
    is_goal: str | GoalTest | None = None,
    groups: np.ndarray | None = None,
    incumbent: np.ndarray | None = None,
    ledger: GroupLedger | None = None,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> list[SearchResult]:
    """Solve every state of ``starts`` with the ``(weight, batch_size)`` stages of ``search`` in
    turn within ``time_limit`` seconds for the whole call and before ``deadline`` (a reading of
    :func:`.clock.now`, for a caller whose own time limit this schedule shares; each ``None``:
    none; both: the earlier), every stage given that one deadline; no stage starts once it has
    come. One :class:`SearchResult` per state: the cheapest solution found (``status``
    ``"solved"``), else the last stage's status. ``is_goal``: the goal every stage searches for
    (see :func:`~.bwas.bwas`).

    ``groups`` (``int[B]``): starts that are the same problem in other guises (a state and its
    images, :mod:`.images`) share their bound: each stage looks only for solutions cheaper than the
    cheapest any of the group has, a member's solution lowers the others' bound at once, and a
    stage but the last ends for the group once the others have searched as long again as the
    solution took (:class:`GroupLedger`, the searches' ``groups``). ``incumbent`` (``float[B]``,
    ``inf`` for none): the cost of a solution already known for each start, which the first stage
    must beat. ``ledger``: the group ledger, shared with anytime searches of other members running
    side by side (:mod:`.images`); by default one of this call's own where groups are given.
    ``on_solution``: called with each start's cheaper solution as it is found (see the module
    docstring); what it raises propagates, and the schedule ends there."""
    stages = check_stages(stages)
    settings = [{"weight": weight, "batch_size": batch} for weight, batch in stages]
    return _restarts(
        search,
        puzzle,
        starts,
        heuristic,
        settings,
        time_limit=time_limit,
        deadline=deadline,
        max_nodes=max_nodes,
        is_goal=is_goal,
        groups=groups,
        incumbent=incumbent,
        ledger=ledger,
        grouped_search=True,
        on_solution=on_solution,
    )


def anytime_beam(
    search: Callable[..., list[SearchResult]],
    puzzle: Puzzle,
    starts: np.ndarray,
    heuristic: Callable[[np.ndarray], np.ndarray],
    widths: Sequence[int],
    *,
    time_limit: float | None = None,
    max_steps: int = 1000,
    max_nodes: int | None = 10_000_000,
    is_goal: str | GoalTest | None = None,
    groups: np.ndarray | None = None,
    incumbent: np.ndarray | None = None,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> list[SearchResult]:
    """Beam search (``search``: :func:`~.beam.beam`, ``qbeam`` or ``pbeam``) restarted with each
    of ``widths`` in turn within ``time_limit`` seconds for the whole call and before
    ``deadline`` (as :func:`anytime`'s, every beam given that one deadline), as :func:`anytime`
    restarts weighted A*: a narrow beam answers within a fraction of the time a wide one takes, and
    each wider beam looks only for solutions cheaper than the best so far (its ``max_cost``: it
    drops every child at or beyond that cost, so it stops one step short of the incumbent's length
    where moves cost the same). A wide beam that runs out of time or nodes leaves the narrow one's
    answer instead of none. ``groups``: starts that are guises of one problem (:mod:`.images`),
    bounded by the cheapest solution of any of them; ``incumbent``: as :func:`anytime`'s, the cost
    of a solution already known for each start, which the first beam must beat. Each beam after
    the first is narrowed to what the time left buys at the rate the beams before it measured, and
    is not run where that is too little (:func:`fitted_width`). One :class:`SearchResult` per state, as :func:`anytime` returns
    them; ``on_solution`` as :func:`anytime`'s, called as each beam ends."""
    widths = check_widths(widths)
    settings = [{"beam_width": width, "max_steps": max_steps} for width in widths]
    return _restarts(
        search,
        puzzle,
        starts,
        heuristic,
        settings,
        time_limit=time_limit,
        deadline=deadline,
        max_nodes=max_nodes,
        is_goal=is_goal,
        groups=groups,
        incumbent=incumbent,
        on_solution=on_solution,
        fit="beam_width",
    )


def fitted_width(width: int, rate: float, steps: float, seconds_left: float, widest: int) -> int | None:
    """The width a beam of ``width`` is given with ``seconds_left``: ``width`` where a beam that
    wide, taking ``rate * width * steps`` seconds (``rate``: seconds a width-step, measured by the
    beams that ran; ``steps``: the steps planned for all its instances together), ends in time;
    else the width that takes :data:`FIT_MARGIN` of the time left, rounded down to two significant
    digits; ``None`` (do not run it) where that is less than :data:`FIT_MIN_GAIN` times ``widest``,
    the widest beam that ran.

    >>> fitted_width(30_000, rate=1.3e-4, steps=25, seconds_left=41.0, widest=1000)
    11000
    >>> fitted_width(30_000, rate=2.6e-5, steps=25, seconds_left=41.0, widest=1000) # a faster CPU
    30000
    >>> fitted_width(30_000, rate=1.3e-4, steps=25, seconds_left=5.0, widest=1000) is None
    True
    """
    if rate <= 0 or steps <= 0 or rate * width * steps <= seconds_left:
        return width
    affordable = FIT_MARGIN * seconds_left / (rate * steps)
    digits = 10 ** max(int(np.floor(np.log10(max(affordable, 1.0)))) - 1, 0)
    narrowed = int(affordable // digits * digits)
    return narrowed if narrowed >= FIT_MIN_GAIN * widest and narrowed > 0 else None


def check_widths(widths: int | Sequence[int]) -> tuple[int, ...]:
    """``widths`` (one beam width or a schedule of them) as a tuple of positive integers; an empty
    schedule or a width that is not a positive integer raise :class:`PuzzleError`."""
    widths = (widths,) if isinstance(widths, int | np.integer) else tuple(widths)
    if not widths:
        raise PuzzleError("an anytime beam search needs at least one width")
    for width in widths:
        check_positive("beam_width", width, integer=True)
    return tuple(int(width) for width in widths)


def _solved_row(
    tell: Callable[[int, SearchResult, int], None], todo: np.ndarray, stage: int, j: int, r: SearchResult
) -> None:
    """A stage's ``on_solved``: its ``j``-th start (``todo[j]`` of the schedule) solved, ``r``."""
    tell(int(todo[j]), r, stage)


def _steps_ahead(puzzle: Puzzle, bound: np.ndarray, last: np.ndarray, max_steps: int | None) -> float:
    """The steps a stage of starts with ``bound`` (``max_cost``; ``inf``: none) is planned to take,
    all together: :data:`FIT_STEPS` of the ``bound / cheapest move`` steps a bound allows, an
    unbounded start as many as it took in the last stage, each at most ``max_steps``."""
    cheapest = float(puzzle.action_costs.min())  # positive: every move costs something
    ahead = np.where(np.isinf(bound), last, FIT_STEPS * np.floor(bound / cheapest + 1e-6))
    if max_steps is not None:
        ahead = np.minimum(ahead, max_steps)
    return float(ahead.sum())


def _restarts(
    search: Callable[..., list[SearchResult]],
    puzzle: Puzzle,
    starts: np.ndarray,
    heuristic: Callable[[np.ndarray], np.ndarray],
    settings: Sequence[dict[str, Any]],
    *,
    time_limit: float | None,
    deadline: float | None,
    max_nodes: int | None,
    is_goal: str | GoalTest | None,
    groups: np.ndarray | None,
    incumbent: np.ndarray | None = None,
    ledger: GroupLedger | None = None,
    grouped_search: bool = False,
    on_solution: SolutionHook | None = None,
    fit: str | None = None,
) -> list[SearchResult]:
    """The restarts of :func:`anytime` and :func:`anytime_beam`: ``search`` called with each stage's
    ``settings`` in turn, every start bounded by its group's cheapest solution, each keeping its
    cheapest, each stage given the call's one deadline. ``grouped_search``: ``search`` takes a
    :class:`GroupLedger` (BWAS, Q*), one of this call's own where groups are given and no ledger
    is, and gets the ledger's keywords. ``on_solution``: each start's cheaper solution, as it is
    found where ``search`` takes ``on_solved``, else as its stage ends (:data:`SolutionHook`). ``fit``:
    the setting each stage after the first narrows to the time left (``"beam_width"``:
    :func:`fitted_width`)."""
    starts = as_batch(puzzle, starts)
    check_positive("time_limit", time_limit)
    b = starts.shape[0]
    groups = np.arange(b) if groups is None else np.asarray(groups, dtype=np.int64)
    known = np.full(b, np.inf) if incumbent is None else np.asarray(incumbent, dtype=np.float64)
    if groups.shape != (b,) or known.shape != (b,):
        raise PuzzleError(f"groups and incumbent need one entry per start ({b})")
    if ledger is None and grouped_search and np.unique(groups).size < b:
        ledger = GroupLedger(int(groups.max()) + 1)
    if ledger is not None:
        np.minimum.at(ledger.cost, groups, known)
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    best: list[SearchResult | None] = [None] * b
    last: list[SearchResult | None] = [None] * b
    nodes = np.zeros(b, np.int64)
    iterations = np.zeros(b, np.int64)
    found: list[list[tuple[float, int]]] = [[] for _ in range(b)]
    told = np.full(b, np.inf)  # the cost of each start's solution last passed to on_solution

    def tell(i: int, r: SearchResult, k: int) -> None:
        assert on_solution is not None
        cost = puzzle.path_cost(r.actions)
        if cost < told[i]:
            told[i] = cost
            on_solution(i, replace(r, nodes_generated=int(nodes[i]) + r.nodes_generated), k)

    live = on_solution is not None and clock.takes_keyword(search, "on_solved")
    # a fitted beam is paced too: as it runs, as wide as reaches its bound by the deadline, at most
    # the schedule's width
    paced = fit if fit is not None and clock.takes_keyword(search, "pace") else None
    search = clock.with_deadline(search)
    spent = 0.0  # seconds and width-steps of the stages that ran (``fit``)
    width_steps = 0.0
    widest = 0
    steps = np.zeros(b)  # each start's steps in the last stage it took part in
    k = 0
    while k < len(settings):
        stage, again = settings[k], False
        if clock.passed(stop):
            break
        cost = np.array([np.inf if r is None else puzzle.path_cost(r.actions) for r in best])
        cost = np.minimum(cost, known)
        least = np.full(int(groups.max()) + 1, np.inf)
        np.minimum.at(least, groups, cost)
        if ledger is not None:
            least = np.minimum(least, ledger.cost[: least.size])
        bound = np.array([np.inf if np.isinf(c) else cost_bound(puzzle, c) for c in least[groups]])
        todo = np.flatnonzero(bound >= 0)  # a start that is a goal has nothing left to improve
        if todo.size == 0:
            break
        if fit is not None and width_steps > 0:
            ahead = _steps_ahead(puzzle, bound[todo], steps[todo], stage.get("max_steps"))
            width = fitted_width(stage[fit], spent / width_steps, ahead, clock.seconds_left(stop), widest)
            if width is None:
                break
            again = width < stage[fit]  # narrowed: once it has run, tried again at its full width
            stage = {**stage, fit: width}
        stage_start = clock.now() - t0
        results = search(
            puzzle,
            starts[todo],
            heuristic,
            **stage,
            max_nodes=max_nodes,
            deadline=stop,
            max_cost=np.where(np.isinf(bound[todo]), np.finfo(np.float32).max, bound[todo]),
            **({} if is_goal is None else {"is_goal": is_goal}),
            **(
                {}
                if ledger is None
                else {"groups": groups[todo], "ledger": ledger, "group_stop": k < len(settings) - 1}
            ),
            **({"on_solved": partial(_solved_row, tell, todo, k)} if live else {}),
            **({} if paced is None else {"pace": settings[k][paced]}),
        )
        if fit is not None:
            spent += clock.now() - t0 - stage_start
            width_steps += stage[fit] * sum(r.iterations for r in results)
            widest = max(widest, stage[fit])
        for i, r in zip(todo, results, strict=True):
            steps[i] = r.iterations
            nodes[i] += r.nodes_generated
            iterations[i] += r.iterations
            last[i] = r
            held = best[i]
            if r.solved and (held is None or puzzle.path_cost(r.actions) < puzzle.path_cost(held.actions)):
                best[i] = r
                found[i].append((round(stage_start + r.seconds, 6), len(r.actions)))
                if on_solution is not None:
                    tell(int(i), replace(r, nodes_generated=0), k)
        k += not again
    total = clock.now() - t0
    out = []
    for j in range(b):
        res = best[j] if best[j] is not None else last[j]
        if res is None:  # the time was up before the first stage began
            res = SearchResult(False, (), 1, 0, total, "time limit")
        out.append(
            SearchResult(
                solved=res.solved,
                actions=res.actions,
                nodes_generated=int(nodes[j]),
                iterations=int(iterations[j]),
                seconds=total,
                status=res.status,
                path_states=res.path_states,
                improvements=tuple(found[j]),
                cost=puzzle.path_cost(res.actions) if res.solved else None,
            )
        )
    return out
