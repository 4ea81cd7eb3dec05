"""The driver: :func:`solve_many` runs a search on resolved options, the fallback search on what it
left unsolved, shortens the solutions and verifies them; :func:`solve` is one state of it.

Time: each search call's time limit becomes one deadline where the call begins
(:mod:`puzzlezero.search.clock`); the search ends a reserve before it where a fallback follows,
and a share of the limit before it where a shortcut or window pass follows; the fallback and
those passes end by it. No level subtracts what another spent.

Progress: ``on_solution`` gets each state's first solution as soon as a search stage has it and
every strictly cheaper one after it (:class:`~puzzlezero.solver.result.Improvement`), each
verified by replay first, in the thread that called :func:`solve_many`."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np

from puzzlezero.errors import MemoryBudgetError, TableTimeoutError, UnknownNameError
from puzzlezero.puzzles.base import SOLVED, Puzzle
from puzzlezero.registry import make
from puzzlezero.search import clock
from puzzlezero.search.anytime import SolutionHook
from puzzlezero.search.result import SearchResult, check_positive
from puzzlezero.search.shortcut import shortcut as find_shortcuts
from puzzlezero.search.windows import resolve_windows
from puzzlezero.solver.heuristics import get_heuristic, stage_heuristics
from puzzlezero.solver.members import member_options
from puzzlezero.solver.memory import call_instances, check_memory
from puzzlezero.solver.names import Heuristic, Results, resolve_entry
from puzzlezero.solver.options import BREADTH_FIRST_SECONDS, SolveOptions, SolveSettings
from puzzlezero.solver.resolve import options_for
from puzzlezero.solver.result import Improvement, SolveResult, verified, verify
from puzzlezero.solver.searches import SEARCHES, SearchSpec, run_search, search_threads
from puzzlezero.solver.states import States, read_states
from puzzlezero.solver.tables import table_needs, window_needs

if TYPE_CHECKING:
    from puzzlezero.search.ensemble import Member

#: seconds of the time limit kept for the fallback search (at most a tenth of the limit): the
#: group solver answers any cube in about 0.25 s once its table is cached, reduction a 48-puzzle
#: board in about 0.7 s
FALLBACK_RESERVE = 2.0

#: share of the time limit kept for the shortcut pass where one follows the search (it gets more
#: when the search ends early): a globe's beam can take the whole limit, and on ``globe_6-4``'s
#: answers of about 58 moves the pass of 16 million states a round takes 12-19 s (docs/results.md)
SHORTCUT_SHARE = 0.25

#: the bound on nodes of one window of the window re-solving pass (``o.windows``): about 15 s of
#: the sliding puzzles' IDA* (14 million nodes a second on one core of an AMD EPYC); on the
#: 48-puzzle's answers a bound of 50 million took 4.1 moves off, 200 million 0.8 more
WINDOW_NODES = 200_000_000


def solve(
    puzzle: str | Puzzle,
    state: str | np.ndarray | Sequence[int],
    opts: SolveOptions | None = None,
    *,
    on_solution: Callable[[Improvement], None] | None = None,
    **given: Unpack[SolveSettings],
) -> SolveResult:
    """Solve one state (text, read by ``puzzle.parse``, or an array) and verify the solution:
    :func:`solve_many` of that one state, with the same options.

    The settings (:class:`SolveSettings`) are given by keyword, each ``None`` or left out for the
    puzzle's default: ``search``, a :data:`SEARCHES` name; ``heuristic``, a :data:`HEURISTICS` name
    or ``"module:factory"``; ``model``, a shipped model name or a model folder (default: the
    puzzle's name); ``beam_width``, the beam search's ``W``; ``anytime``, run the puzzle's schedule
    and keep the shortest solution, or ``stages`` of one's own; ``fallback``, a search that always
    answers for states left unsolved (see :func:`resolve_options`); ``options``, settings of the
    search or heuristic by :data:`OPTIONS` name (``{"mcts_c": 1.0}``, ``{"wcd_depth": 2}``);
    ``goal``, a goal name of the puzzle to solve to (``"layer1"``...; default its own).
    ``search="layered"`` solves to every goal in turn (``model``: see :func:`stage_models`).
    ``macros``: macro-actions, move sequences (action ids) the search may take as one
    action (:func:`puzzlezero.puzzles.macros.read_macros` reads a file of them); the solution is
    given in the puzzle's own moves. ``shortcut``: the bound on states a round of the shortcut pass
    run on the solution (:mod:`puzzlezero.search.shortcut`; 0: none; ``None``: the puzzle's
    ``Defaults.shortcut``); its time counts in the result's ``seconds``. Or ``opts``: options
    resolved already (:func:`resolve_options`), used as they are. ``on_solution``: called with
    the first solution and each strictly cheaper one while the solve runs (see :func:`solve_many`).
    """
    return solve_many(puzzle, [state], opts, on_solution=on_solution, **given)[0]


def solve_many(
    puzzle: str | Puzzle,
    states: States | Iterable[Any] | np.ndarray,
    opts: SolveOptions | None = None,
    *,
    together: int | None = None,
    on_results: Callable[[list[SolveResult]], None] | None = None,
    on_solution: Callable[[Improvement], None] | None = None,
    **given: Unpack[SolveSettings],
) -> list[SolveResult]:
    """Solve many states, ``together`` of them per search call (default: the search's own, 1 for
    BWAS), with ``opts`` (resolved by the caller: :func:`resolve_options`) or else the settings
    ``given`` (:class:`SolveSettings`, as for :func:`solve`), resolved here, once. ``states``:
    :class:`States` read by the caller (:func:`read_states`), taken as they are, or texts and
    arrays, read here. Instances of one
    call share expansions and heuristic calls, and ``time_limit`` applies to the call: it becomes
    the call's deadline, by which its search, fallback and shortcut pass end together; each
    result's ``seconds`` is then the call's wall time divided by the number of instances
    (amortised), and exactly its own time when ``together == 1``. What a first search of the
    process pays once is not counted, so that a first solve on a fresh machine searches as long as
    any other: a ``tables_first`` search's tables, and the heuristics or ensemble members built
    and warmed up (numba kernels compiled, networks loaded, a search member's tables built, such
    as cube3's two-phase table, about 30 s in all on a fresh 2-core machine). ``on_results`` is
    called after each call (progress bars).

    ``on_solution`` is called, in this thread, with an :class:`Improvement` for a state's first
    solution as soon as any stage of the search has one (an anytime schedule's first stage, a
    search without one as it returns, the fallback search), then for each strictly cheaper one
    (the schedule's later stages, the fallback, the pass that shortens the solution), each one
    verified by replaying it on the state first; the last one a state gets is the solution of
    its result. An anytime schedule reports a stage's solutions as that stage ends. What
    ``on_solution`` raises propagates out of this call (the searches still running are ended);
    the states not yet solved are not."""
    p = make(puzzle) if isinstance(puzzle, str) else puzzle
    opts = options_for(p, opts, given)
    check_positive("together", together, integer=True)
    spec: SearchSpec = SEARCHES[opts.search]
    arr = read_states(p, states).array
    if not arr.shape[0]:
        return []
    check_memory(p, opts, call_instances(opts, arr.shape[0], together))
    fn = resolve_entry(spec.entry, f"search {opts.search!r}")
    sp = p
    if opts.macros:
        from puzzlezero.puzzles.macros import MacroPuzzle

        sp = MacroPuzzle(p, opts.macros)
    guides: list[tuple[Any, list[tuple[str, Heuristic | None]]]] = []

    def guided() -> tuple[Any, list[tuple[str, Heuristic | None]]]:
        """The heuristic (or the ensemble's members), built and warmed up when a search first
        needs one: not at all when the breadth-first pass answers every state."""
        if guides:
            return guides[0]
        h: Any = None
        members: list[tuple[str, Heuristic | None]] = []
        if spec.needs_heuristic and opts.heuristic and spec.per_goal:
            h = stage_heuristics(p, opts.heuristic, opts.model, spec.heuristic_kind)
        elif spec.needs_heuristic and opts.heuristic and opts.models:
            for m in opts.models:  # a model with the solve's heuristic, heuristic:NAME's own, or none
                mo = member_options(opts, m)
                if mo.heuristic is None:  # search:NAME, a search that needs no heuristic
                    members.append((m, None))
                    continue
                members.append(
                    (m, get_heuristic(p, mo.heuristic, mo.model, spec.heuristic_kind, mo.goal, mo.options))
                )
        elif spec.needs_heuristic and opts.heuristic:
            h = get_heuristic(p, opts.heuristic, opts.model, spec.heuristic_kind, opts.goal, opts.options)
        if h is not None:
            _warm_up(spec, fn, sp, arr[:1], h, opts)
        for m, hm in members:
            mo = member_options(opts, m)
            _warm_up(*_member_search(spec, fn, mo), sp, arr[:1], hm, mo)
        guides.append((h, members))
        return h, members

    k = together or spec.together
    out: list[SolveResult] = []
    prepared = False  # a tables_first search's tables, once a state needs them
    for lo in range(0, arr.shape[0], k):
        chunk = arr[lo : lo + k]
        t0 = clock.now()
        deadline = clock.deadline_after(opts.time_limit, start=t0)
        report = None if on_solution is None else _Reporter(p, chunk, opts.goal, lo, t0, on_solution)
        near = _breadth_first(p, chunk, opts, deadline, report)
        rescued: list[str | None] = [None] * len(near)
        won: list[str | None] = [None] * len(near)
        waited = 0.0
        if all(r.solved for r in near):  # every state a few moves from the goal: answered, optimally
            found = near
        elif not spec.tables_first and not _tables_in_time(table_needs(p, opts, windows=False), deadline):
            spent = clock.now() - t0
            found = [q if q.solved else SearchResult(False, (), 0, 0, spent, "time limit") for q in near]
        else:
            # one-time costs, off the clock, once a state is left that the pass did not answer: a
            # tables_first search's tables (nothing answers without them), and the heuristics
            # or members built and warmed up (kernels compiled, networks loaded, a member's tables)
            begun = clock.now()
            if spec.tables_first and not prepared:
                _tables_before_clock(p, opts.search)
                prepared = True
            h, members = guided()
            waited = clock.now() - begun
            t0, deadline = t0 + waited, deadline + waited
            if report is not None:
                report.t0 += waited
            ends = deadline - (SHORTCUT_SHARE * opts.time_limit if opts.shortcut or opts.windows else 0.0)
            found, rescued, won = _run_with_fallback(
                spec, fn, p, chunk, h, opts, sp, deadline=ends, report=report, members=members
            )
            found = [q if q.solved else r for q, r in zip(near, found, strict=True)]
        found, searched = _shortened(p, chunk, found, opts, deadline, report, [q.solved for q in near])
        wall = clock.now() - t0
        results = verified(
            p,
            chunk,
            found,
            searched,
            opts.search,
            wall if chunk.shape[0] > 1 else None,
            rescued,
            opts.goal,
            models=won,
            prepared=waited,
        )
        out.extend(results)
        if on_results is not None:
            on_results(results)
    return out


def _tables_in_time(needs: list[tuple[Puzzle, str]], deadline: float) -> bool:
    """Whether the pattern databases among ``needs`` (:func:`puzzlezero.solver.tables.table_needs`:
    the optimal solver's, the ``pdb`` heuristic's, cube3's window solver's) are there or built by
    ``deadline``, in a process stopped then (:func:`puzzlezero.classic.optimal.pdb_within`); one
    that is not says so on stderr, naming the command that builds it without a limit. The search
    that needs them then answers ``"time limit"``; the window pass is left out. A build whose
    estimated peak is above the memory budget is not started:
    :class:`~puzzlezero.errors.MemoryBudgetError`, naming the estimate and the budget."""
    from puzzlezero.classic.optimal import pdb_within

    for q, kind in needs:
        if kind != "pdb":  # the group solver bounds its own; the two-phase tables take about 10 s
            continue
        try:
            pdb_within(q, None if math.isinf(deadline) else deadline)
        except TableTimeoutError as exc:
            print(exc, file=sys.stderr, flush=True)
            return False
        except UnknownNameError:  # no pattern database for this puzzle: its search reads none
            continue
    return True


def _window_tables(p: Puzzle, deadline: float) -> bool:
    """Whether the window pass's tables are there or built by ``deadline`` (:func:`_tables_in_time`);
    one whose build would pass the memory budget leaves the pass out too, saying so on stderr:
    the answer found is kept either way."""
    try:
        return _tables_in_time(window_needs(p), deadline)
    except MemoryBudgetError as exc:
        print(f"{exc}; the window pass is left out", file=sys.stderr, flush=True)
        return False


def _tables_before_clock(p: Puzzle, search: str) -> None:
    """Build (or load) the tables of a ``SearchSpec.tables_first`` search and of its inner solves,
    once a state is left that the breadth-first pass did not answer; the call's clock does not
    count them (a short scramble is answered without waiting for them)."""
    from puzzlezero.classic import build_tables
    from puzzlezero.solver.tables import search_table_needs

    for q, kind in search_table_needs(p, search):
        build_tables(q, kind)


def _breadth_first(
    p: Puzzle, states: np.ndarray, o: SolveOptions, deadline: float, report: _Reporter | None
) -> Results:
    """The breadth-first pass before the search (``o.breadth_first``, 0: none): a bidirectional
    breadth-first search from each state, bounded by ``o.breadth_first`` states and a twentieth of
    the time limit (at most :data:`BREADTH_FIRST_SECONDS`), which answers a state a few moves from
    the goal with a shortest solution (its first answer, reported as ``"breadth-first"``) and
    leaves the others to the search. Unsolved results (nothing run) where it is off."""
    if not o.breadth_first or o.goal != SOLVED:
        return [SearchResult(False, (), 0, 0, 0.0, "node limit") for _ in states]
    from puzzlezero.classic.optimal.bidirectional_bfs import solve_bfs

    stop = min(deadline, clock.deadline_after(min(BREADTH_FIRST_SECONDS, 0.05 * o.time_limit)))
    out = [solve_bfs(p, s, max_nodes=o.breadth_first, deadline=stop) for s in states]
    if report is not None:
        report.offer_all(out, "breadth-first")
    return out


class _Reporter:
    """What one search call of :func:`solve_many` passes to ``on_solution``: a state's solution
    where it is cheaper than any reported before and replays to the goal, as an
    :class:`Improvement` (``offset``: the chunk's first index among the states; ``t0``: when the
    call began)."""

    def __init__(
        self,
        p: Puzzle,
        states: np.ndarray,
        goal: str,
        offset: int,
        t0: float,
        on_solution: Callable[[Improvement], None],
    ) -> None:
        self.p, self.states, self.goal, self.offset, self.t0 = p, states, goal, offset, t0
        self.on_solution = on_solution
        self.best = np.full(states.shape[0], np.inf)

    def offer(self, row: int, actions: Sequence[int], nodes: int, stage: str) -> None:
        cost = float(self.p.path_cost(actions))
        if not cost < self.best[row]:
            return
        if not verify(self.p, self.states[row : row + 1], [actions], self.goal)[0]:
            return
        self.best[row] = cost
        self.on_solution(
            Improvement(
                index=self.offset + row,
                solution=tuple(self.p.format_moves(actions)),
                length=len(actions),
                cost=cost,
                seconds=clock.now() - self.t0,
                nodes_generated=int(nodes),
                stage=stage,
            )
        )

    def offer_all(self, found: Results, stage: str, rows: Sequence[int] | None = None) -> None:
        """Offer each solved result of ``found`` (of ``rows``, default every row in order)."""
        for row, r in zip(range(len(found)) if rows is None else rows, found, strict=True):
            if r.solved:
                self.offer(row, r.actions, r.nodes_generated, stage)

    def stage_hook(self, sp: Puzzle, label: str = "") -> SolutionHook:
        """The search's :data:`~puzzlezero.search.anytime.SolutionHook`: its stages' solutions
        (found on ``sp``, a puzzle with options where given) in the puzzle's own moves, each
        reported as ``"stage K"`` after ``label`` (an ensemble's member: ``"puzzle48 "``)."""
        to_moves = getattr(sp, "primitive", None)

        def hook(row: int, r: SearchResult, stage: int) -> None:
            actions = r.actions if to_moves is None else tuple(to_moves(r.actions))
            self.offer(row, actions, r.nodes_generated, f"{label}stage {stage + 1}")

        return hook


_WARM: set[tuple[Any, ...]] = set()


def _warm_up(
    spec: SearchSpec, fn: Callable, p: Puzzle, start: np.ndarray, h: Heuristic | None, o: SolveOptions
) -> None:
    """Once per process and setting, run one expansion untimed, so that one-time costs (numba
    kernels loaded from their cache, tables or networks loaded lazily by the heuristic) are not
    charged to the first instance."""
    key = (p, o.search, o.heuristic, o.model, o.goal, o.options)
    if key not in _WARM:
        # two expansions: MCTS's second one runs its selection kernel
        small = replace(o, max_nodes=1 + 2 * p.num_actions, max_steps=1)
        run_search(spec, fn, p, start, h, small, clock.deadline_after(o.time_limit))
        _WARM.add(key)


def _primitive(sp: Puzzle, results: Results) -> Results:
    """Results found on a :class:`~puzzlezero.puzzles.macros.MacroPuzzle` in the wrapped puzzle's
    moves (stages too); other results as they are."""
    to_moves = getattr(sp, "primitive", None)
    if to_moves is None:
        return results
    return [
        replace(
            r,
            actions=tuple(to_moves(r.actions)),
            stages=tuple(replace(st, actions=tuple(to_moves(st.actions))) for st in r.stages),
            path_states=None,
        )
        for r in results
    ]


def _run_with_fallback(
    spec: SearchSpec,
    fn: Callable,
    p: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    sp: Puzzle | None = None,
    *,
    deadline: float | None = None,
    report: _Reporter | None = None,
    members: Sequence[tuple[str, Heuristic | None]] = (),
) -> tuple[Results, list[str | None], list[str | None]]:
    """Run the search (on ``sp``, the puzzle with options, where given; its results come back in
    ``p``'s moves) until ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`; default:
    ``o.time_limit`` from now), guided by ``h``, or by each of an ensemble's ``members`` (model,
    heuristic) side by side (:func:`_ensemble`); with ``o.fallback`` the search ends a reserve
    before it (:data:`FALLBACK_RESERVE`, at most a tenth of the time limit), and the fallback
    search solves what it left unsolved in the time left until the deadline: its result then
    carries both searches' nodes and seconds. Returns the results and, for each, the fallback's
    name where the fallback found it and the ensemble member whose solution it is.
    ``report``: where the solutions go as they are found."""
    sp = p if sp is None else sp
    deadline = clock.deadline_after(o.time_limit) if deadline is None else deadline
    reserve = 0.0 if o.fallback is None else min(FALLBACK_RESERVE, 0.1 * o.time_limit)
    if members:
        found, won = _ensemble(spec, fn, sp, states, members, o, deadline - reserve, report)
    else:
        hook = None if report is None else report.stage_hook(sp)
        found, won = run_search(spec, fn, sp, states, h, o, deadline - reserve, hook), [None] * len(states)
    found = _primitive(sp, found)
    if report is not None:
        report.offer_all(found, "search")
    rescued: list[str | None] = [None] * len(found)
    if o.fallback is None:
        return found, rescued, won
    todo = [i for i, r in enumerate(found) if not r.solved]
    if todo:
        fb = SEARCHES[o.fallback]
        fb_fn = resolve_entry(fb.entry, f"fallback search {o.fallback!r}")
        rescue = run_search(fb, fb_fn, p, states[todo], None, replace(o, max_nodes=None), deadline)
        for i, r in zip(todo, rescue, strict=True):
            if r.solved:
                first = found[i]
                seconds = first.seconds + r.seconds
                found[i] = replace(
                    r,
                    nodes_generated=first.nodes_generated + r.nodes_generated,
                    iterations=first.iterations + r.iterations,
                    seconds=seconds,
                    improvements=((seconds, len(r.actions)),),
                )
                rescued[i] = o.fallback
                won[i] = None
                if report is not None:
                    report.offer(i, found[i].actions, found[i].nodes_generated, "fallback")
    return found, rescued, won


def _ensemble(
    spec: SearchSpec,
    fn: Callable,
    sp: Puzzle,
    states: np.ndarray,
    members: Sequence[tuple[str, Heuristic | None]],
    o: SolveOptions,
    deadline: float,
    report: _Reporter | None,
) -> tuple[Results, list[str | None]]:
    """The search guided by each member's heuristic (:mod:`puzzlezero.search.ensemble`), side by
    side as the network runtime has threads, each with one; where there are more members than
    threads they run in turns, each turn to its share of the time left (the last to
    ``deadline``). Each member searches with its own options
    (:func:`~puzzlezero.solver.members.member_options`: a network-free member's wider beam). Each
    state's cheapest solution, and the member (model or ``heuristic:NAME``) that found it."""
    from puzzlezero.search.ensemble import ensemble

    threads, context = search_threads(o)
    workers = max(1, min(threads, len(members)))
    turns = -(-len(members) // workers)
    start = clock.now()

    def member(i: int, model: str, h: Heuristic | None) -> Member:
        ends = deadline if turns == 1 else start + (deadline - start) * (i // workers + 1) / turns
        mo = member_options(o, model)
        return partial(run_search, *_member_search(spec, fn, mo), sp, states, h, mo, ends)

    hooks = [] if report is None else [report.stage_hook(sp, f"{Path(m).name} ") for m, _ in members]
    found, winners = ensemble(
        [member(i, m, h) for i, (m, h) in enumerate(members)],
        puzzle=sp,
        threads=workers,
        thread_context=context,
        on_solution=None if report is None else lambda i, row, r, stage: hooks[i](row, r, stage),
    )
    return found, [None if w is None else members[w][0] for w in winners]


def _member_search(spec: SearchSpec, fn: Callable, mo: SolveOptions) -> tuple[SearchSpec, Callable]:
    """The search a member runs and its function: the solve's, or a ``search:NAME`` member's own."""
    own = SEARCHES[mo.search]
    return (spec, fn) if own is spec else (own, resolve_entry(own.entry, f"search {mo.search!r}"))


def _shortened(
    p: Puzzle,
    states: np.ndarray,
    found: Results,
    o: SolveOptions,
    deadline: float | None = None,
    report: _Reporter | None = None,
    optimal: Sequence[bool] = (),
) -> tuple[Results, list[int | None]]:
    """Each solved path as the puzzle's algebra shortens it (``p.reduce_moves``), then the shortcut
    pass (``o.shortcut``, :mod:`puzzlezero.search.shortcut`, its rounds started before ``deadline``,
    the solve's, default ``o.time_limit`` from now; its seconds added to the result's) and the
    window re-solving pass (``o.windows``, :mod:`puzzlezero.search.windows`, likewise), with the
    search's own length where they did (else ``None``); layered results, whose stages must each
    end on their goal, as they are. ``report``: where a shortened solution goes. ``optimal``: rows
    whose solutions are shortest already (the breadth-first pass's), left as they are."""
    deadline = clock.deadline_after(o.time_limit) if deadline is None else deadline
    windows, between = o.windows, None
    out: list[SearchResult] = []
    searched: list[int | None] = []
    for row, (start, r) in enumerate(zip(states, found, strict=True)):
        if not r.solved or r.stages or (row < len(optimal) and optimal[row]):
            out.append(r)
            searched.append(None)
            continue
        short: Sequence[int] = p.reduce_moves(r.actions)
        seconds = r.seconds
        if o.shortcut and len(short) > 1:
            cut = find_shortcuts(p, start, short, max_states=o.shortcut, deadline=deadline)
            short, seconds = cut.actions, seconds + cut.seconds
        if windows and len(short) > 1 and between is None:  # the first path to re-solve: its tables
            from puzzlezero.classic.optimal import window_solver

            windows = windows if _window_tables(p, deadline) else 0
            between = window_solver(p)
        if windows and len(short) > 1 and between is not None:
            ways = resolve_windows(
                p, start, short, between, length=windows, max_nodes=WINDOW_NODES, deadline=deadline
            )
            short, seconds = ways.actions, seconds + ways.seconds
        if len(short) < len(r.actions):
            improvements = r.improvements + ((seconds, len(short)),) if r.improvements else ()
            out.append(
                replace(r, actions=tuple(short), path_states=None, seconds=seconds, improvements=improvements)
            )
            searched.append(len(r.actions))
            if report is not None:
                report.offer(row, short, r.nodes_generated, "shortcut")
        else:
            out.append(replace(r, seconds=seconds))
            searched.append(None)
    return out, searched
