"""The driver: :func:`solve_many` runs a search on resolved options, the fallback search on what it
left unsolved, shortens the solutions and verifies them; :func:`solve` is one state of it.

Time: each search call's time limit becomes one deadline where the call begins
(:mod:`puzzlezero.search.clock`); the search ends a reserve before it where a fallback follows,
the fallback and the shortcut pass end by it. No level subtracts what another spent."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, Unpack

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, check_positive
from puzzlezero.search.shortcut import shortcut as find_shortcuts
from puzzlezero.solver.heuristics import get_heuristic, stage_heuristics
from puzzlezero.solver.memory import check_memory
from puzzlezero.solver.names import Heuristic, Results, resolve_entry
from puzzlezero.solver.options import SolveOptions, SolveSettings
from puzzlezero.solver.resolve import options_for
from puzzlezero.solver.result import SolveResult, verified
from puzzlezero.solver.searches import SEARCHES, SearchSpec, run_search
from puzzlezero.solver.states import read_state

#: seconds of the time limit kept for the fallback search (at most a tenth of the limit): the
#: group solver answers any cube in about 0.25 s once its table is cached, reduction a 48-puzzle
#: board in about 0.7 s
FALLBACK_RESERVE = 2.0


def solve(
    puzzle: str | Puzzle,
    state: str | np.ndarray | Sequence[int],
    opts: SolveOptions | None = None,
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
    ``macros``: options (macro-actions), move sequences (action ids) the search may take as one
    action (:func:`puzzlezero.puzzles.macros.read_macros` reads a file of them); the solution is
    given in the puzzle's own moves. ``shortcut``: the bound on states a round of the shortcut pass
    run on the solution (:mod:`puzzlezero.search.shortcut`; 0: none; ``None``: the puzzle's
    ``Defaults.shortcut``); its time counts in the result's ``seconds``. Or ``opts``: options
    resolved already (:func:`resolve_options`), used as they are.
    """
    return solve_many(puzzle, [state], opts, **given)[0]


def solve_many(
    puzzle: str | Puzzle,
    states: Iterable[Any] | np.ndarray,
    opts: SolveOptions | None = None,
    *,
    together: int | None = None,
    on_results: Callable[[list[SolveResult]], None] | None = None,
    **given: Unpack[SolveSettings],
) -> list[SolveResult]:
    """Solve many states, ``together`` of them per search call (default: the search's own, 1 for
    BWAS), with ``opts`` (resolved by the caller: :func:`resolve_options`) or else the settings
    ``given`` (:class:`SolveSettings`, as for :func:`solve`), resolved here, once. Instances of one
    call share expansions and heuristic calls, and ``time_limit`` applies to the call: it becomes
    the call's deadline, by which its search, fallback and shortcut pass end together; each
    result's ``seconds`` is then the call's wall time divided by the number of instances
    (amortised), and exactly its own time when ``together == 1``. ``on_results`` is called after
    each call (progress bars)."""
    p = make(puzzle) if isinstance(puzzle, str) else puzzle
    opts = options_for(p, opts, given)
    check_positive("together", together, integer=True)
    spec: SearchSpec = SEARCHES[opts.search]
    checked = [read_state(p, s) for s in states]
    if not checked:
        return []
    arr = np.stack(checked)
    check_memory(p, opts, min(together or spec.together, arr.shape[0]))
    fn = resolve_entry(spec.entry, f"search {opts.search!r}")
    h: Any = None
    if spec.needs_heuristic and opts.heuristic and spec.per_goal:
        h = stage_heuristics(p, opts.heuristic, opts.model, spec.heuristic_kind)
    elif spec.needs_heuristic and opts.heuristic:
        h = get_heuristic(p, opts.heuristic, opts.model, spec.heuristic_kind, opts.goal, opts.options)
    sp = p
    if opts.macros:
        from puzzlezero.puzzles.macros import MacroPuzzle

        sp = MacroPuzzle(p, opts.macros)
    if h is not None:
        _warm_up(spec, fn, sp, arr[:1], h, opts)
    k = together or spec.together
    out: list[SolveResult] = []
    for lo in range(0, arr.shape[0], k):
        chunk = arr[lo : lo + k]
        t0 = clock.now()
        deadline = clock.deadline_after(opts.time_limit, start=t0)
        found, rescued = _run_with_fallback(spec, fn, p, chunk, h, opts, sp, deadline=deadline)
        found, searched = _shortened(p, chunk, found, opts, deadline)
        wall = clock.now() - t0
        results = verified(
            p, chunk, found, searched, opts.search, wall if chunk.shape[0] > 1 else None, rescued, opts.goal
        )
        out.extend(results)
        if on_results is not None:
            on_results(results)
    return out


_WARM: set[tuple[Any, ...]] = set()


def _warm_up(
    spec: SearchSpec, fn: Callable, p: Puzzle, start: np.ndarray, h: Heuristic, o: SolveOptions
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
) -> tuple[Results, list[str | None]]:
    """Run the search (on ``sp``, the puzzle with options, where given; its results come back in
    ``p``'s moves) until ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`; default:
    ``o.time_limit`` from now); with ``o.fallback`` the search ends a reserve before it
    (:data:`FALLBACK_RESERVE`, at most a tenth of the time limit), and the fallback search solves
    what it left unsolved in the time left until the deadline: its result then carries both
    searches' nodes and seconds. Returns the results and, for each, the fallback's name where the
    fallback found it."""
    sp = p if sp is None else sp
    deadline = clock.deadline_after(o.time_limit) if deadline is None else deadline
    if o.fallback is None:
        return _primitive(sp, run_search(spec, fn, sp, states, h, o, deadline)), [None] * states.shape[0]
    reserve = min(FALLBACK_RESERVE, 0.1 * o.time_limit)
    found = _primitive(sp, run_search(spec, fn, sp, states, h, o, deadline - reserve))
    rescued: list[str | None] = [None] * len(found)
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
    return found, rescued


def _shortened(
    p: Puzzle, states: np.ndarray, found: Results, o: SolveOptions, deadline: float | None = None
) -> tuple[Results, list[int | None]]:
    """Each solved path as the puzzle's algebra shortens it (``p.reduce_moves``), then the shortcut
    pass (``o.shortcut``, :mod:`puzzlezero.search.shortcut`, its rounds started before ``deadline``,
    the solve's, default ``o.time_limit`` from now; its seconds added to the result's), with the
    search's own length where they did (else ``None``); layered results, whose stages must each
    end on their goal, as they are."""
    deadline = clock.deadline_after(o.time_limit) if deadline is None else deadline
    out: list[SearchResult] = []
    searched: list[int | None] = []
    for start, r in zip(states, found, strict=True):
        if not r.solved or r.stages:
            out.append(r)
            searched.append(None)
            continue
        short: Sequence[int] = p.reduce_moves(r.actions)
        seconds = r.seconds
        if o.shortcut and len(short) > 1:
            cut = find_shortcuts(p, start, short, max_states=o.shortcut, deadline=deadline)
            short, seconds = cut.actions, seconds + cut.seconds
        if len(short) < len(r.actions):
            improvements = r.improvements + ((seconds, len(short)),) if r.improvements else ()
            out.append(
                replace(r, actions=tuple(short), path_states=None, seconds=seconds, improvements=improvements)
            )
            searched.append(len(r.actions))
        else:
            out.append(replace(r, seconds=seconds))
            searched.append(None)
    return out, searched
