"""The searches by name (:data:`SEARCHES`): each entry names its implementation lazily and
adapts the resolved options to its signature (the ``_run_*`` functions). A new search is one more
:class:`SearchSpec` in the table.

Time: the solver turns the time limit into one deadline (:mod:`puzzlezero.search.clock`) and
hands it to the adapter (:func:`run_search`), which gives it to the search: as ``deadline=``
where the search takes that keyword (every search of this package), else as the seconds left,
``time_limit=`` (a plugin's search that knows only a time limit)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from puzzlezero.puzzles.base import SOLVED, Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from puzzlezero.solver.heuristics import HEURISTICS
from puzzlezero.solver.names import Heuristic, Results

if TYPE_CHECKING:
    from puzzlezero.search.anytime import SolutionHook
    from puzzlezero.solver.options import SolveOptions


class _GoalKw(TypedDict, total=False):
    """The goal keyword of a search call (:func:`_goal_kw`)."""

    is_goal: str


def _goal_kw(o: SolveOptions) -> _GoalKw:
    """The goal keyword of a search call: none for the puzzle's own goal (every search's default)."""
    return {} if o.goal == SOLVED else {"is_goal": o.goal}


def _deadline(o: SolveOptions, deadline: float | None) -> float:
    """An adapter's deadline: the one given, else ``o.time_limit`` from now (a caller that gives
    none, as a warm-up call of five arguments)."""
    return clock.deadline_after(o.time_limit) if deadline is None else deadline


def run_search(
    spec: SearchSpec,
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float,
    on_solution: SolutionHook | None = None,
) -> Results:
    """``spec.run`` on ``states``, to end by ``deadline`` (a reading of
    :func:`puzzlezero.search.clock.now`): given as ``deadline=`` where the adapter takes it (every
    adapter of this module), else (a plugin's adapter of five arguments) in the options, whose
    ``time_limit`` is then the seconds left until it. ``on_solution``: given to an adapter that
    takes it (the anytime schedules': :data:`~puzzlezero.search.anytime.SolutionHook`, each row's
    cheaper solutions as the stages end); the others' solutions come with their results."""
    if on_solution is not None and _takes(spec.run, "on_solution"):
        return spec.run(fn, puzzle, states, h, o, deadline=deadline, on_solution=on_solution)
    if clock.takes_deadline(spec.run):
        return spec.run(fn, puzzle, states, h, o, deadline=deadline)
    left = clock.time_limit_until(deadline)  # None: no deadline, the options' own limit stands
    return spec.run(fn, puzzle, states, h, o if left is None else replace(o, time_limit=left))


def _takes(fn: Callable, name: str) -> bool:
    """Does ``fn`` take the keyword ``name``?"""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _imaged(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float,
    *,
    grouped: bool = False,
    **settings: Any,
) -> Results:
    """One call of the search ``fn`` with ``settings``, the options' node cap and goal and the
    ``deadline``, or with the ``images`` option on the states and their first N images together,
    each state's shortest solution kept (:func:`~puzzlezero.search.images.with_images`).
    ``grouped``: ``fn`` takes the ``groups`` of the instances (which rows are guises of one state)."""

    def run(rows: np.ndarray, groups: np.ndarray | None = None) -> Results:
        group_kw = {"groups": groups} if grouped and groups is not None else {}
        return fn(
            puzzle,
            rows,
            h,
            max_nodes=o.max_nodes,
            **clock.limit_keywords(fn, deadline),
            **settings,
            **group_kw,
            **_goal_kw(o),
        )

    n_images = o.option("images")
    if not n_images:
        return run(states)
    from puzzlezero.search.images import with_images

    return with_images(run, puzzle, states, puzzle.image_names[:n_images])


def _run_bwas(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> Results:
    deadline = _deadline(o, deadline)
    n_images = o.option("images")
    if o.stages and n_images:
        from puzzlezero.search.images import anytime_images

        images = puzzle.image_names[:n_images]
        threads, context = search_threads(o)
        return anytime_images(
            fn,
            puzzle,
            states,
            h,
            o.stages,
            images=images,
            deadline=deadline,
            max_nodes=o.max_nodes,
            threads=threads,
            thread_context=context,
            on_solution=on_solution,
        )
    if o.stages:
        from puzzlezero.search.anytime import anytime

        return anytime(
            fn,
            puzzle,
            states,
            h,
            o.stages,
            deadline=deadline,
            max_nodes=o.max_nodes,
            on_solution=on_solution,
            **_goal_kw(o),
        )
    return _imaged(fn, puzzle, states, h, o, deadline, weight=o.weight, batch_size=o.batch)


def search_threads(o: SolveOptions) -> tuple[int, Callable[[], Any]]:
    """How many searches may run side by side, and the context they run in: for a network
    (:attr:`HeuristicSpec.threaded`), one per intra-op thread its runtime has, each with one thread
    (the cube's images: 1.3-1.4x the nodes a second of one search on two threads, docs/results.md);
    otherwise one."""
    spec = HEURISTICS.get(o.heuristic or "")
    if spec is None or not spec.threaded:
        return 1, nullcontext
    from puzzlezero.nn.runtime import call_threads, default_threads

    return default_threads(), partial(call_threads, 1)


def reads_beam_width(search: str) -> bool:
    """Does the search of this :data:`SEARCHES` name read ``beam_width`` (beam, qbeam, pbeam)?"""
    return SEARCHES[search].run is _run_beam


def _run_gbfs(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
) -> Results:
    assert o.max_nodes is not None  # gbfs has node_cap: resolve_options fills in the puzzle's cap
    steps = min(o.max_steps, max(0, (o.max_nodes - 1) // puzzle.num_actions))
    limit = clock.limit_keywords(fn, _deadline(o, deadline))
    return fn(puzzle, states, h, max_steps=steps, **limit, **_goal_kw(o))


def _run_beam(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> Results:
    deadline = _deadline(o, deadline)
    if isinstance(o.beam_width, int):
        return _imaged(fn, puzzle, states, h, o, deadline, beam_width=o.beam_width, max_steps=o.max_steps)
    from puzzlezero.search.anytime import anytime_beam

    def widths(
        puzzle: Puzzle,
        rows: np.ndarray,
        h: Heuristic | None,
        *,
        groups: np.ndarray | None = None,
        deadline: float | None = None,
        **limits: Any,
    ) -> Results:
        hook = on_solution if groups is None else None  # images: their results come mapped back
        return anytime_beam(
            fn,
            puzzle,
            rows,
            h,  # type: ignore[arg-type]
            o.beam_width,  # type: ignore[arg-type]
            groups=groups,
            deadline=deadline,
            on_solution=hook,
            **limits,
        )

    return _imaged(widths, puzzle, states, h, o, deadline, grouped=True, max_steps=o.max_steps)


def _run_layered(
    fn: Callable, puzzle: Puzzle, states: np.ndarray, h: Any, o: SolveOptions, deadline: float | None = None
) -> Results:
    """BWAS goal by goal (``h``: goal name -> heuristic, built by :func:`stage_heuristics`), each
    stage with the options' weight, batch and node cap, the one deadline shared by the stages."""
    return fn(
        puzzle,
        states,
        h,
        goals=tuple(h),
        weight=o.weight,
        batch_size=o.batch,
        max_nodes=o.max_nodes,
        **clock.limit_keywords(fn, _deadline(o, deadline)),
    )


def _run_mcts(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
) -> Results:
    return fn(
        puzzle,
        states,
        h,
        c=o.option("mcts_c"),
        leaves=o.option("mcts_leaves"),
        virtual_loss=o.option("mcts_virtual_loss"),
        max_value=o.option("mcts_max_value"),
        max_nodes=o.max_nodes,
        **clock.limit_keywords(fn, _deadline(o, deadline)),
    )


def _run_each(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
) -> Results:
    """``fn(puzzle, state, max_nodes=..., deadline=...)`` on each state in turn, all to the one
    deadline; a ``fn`` without a ``deadline`` keyword gets ``time_limit=``, the seconds left when
    its state's turn comes."""
    deadline = _deadline(o, deadline)
    return [fn(puzzle, s, max_nodes=o.max_nodes, **clock.limit_keywords(fn, deadline)) for s in states]


def widest(beam_width: int | tuple[int, ...]) -> int:
    return beam_width if isinstance(beam_width, int) else max(beam_width)


@dataclass(frozen=True)
class SearchSpec:
    """A search by name: ``entry`` is ``"module:function"`` (or the function), ``run`` adapts the
    options to its signature, called as ``run(fn, puzzle, states, h, options, deadline=...)``
    where it takes a ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`), else as
    ``run(fn, puzzle, states, h, options)`` with the seconds left as ``options.time_limit``
    (:func:`run_search`); ``together`` is how many instances :func:`solve_many` searches in one
    call by default (1 keeps per-instance times exact). ``node_cap``: whether the puzzle's default
    ``max_nodes`` applies (it bounds the memory of searches that store their nodes; IDA* runs in
    constant memory, so only its time limit bounds it by default)."""

    entry: str | Callable
    run: Callable[..., list[SearchResult]]
    needs_heuristic: bool
    together: int = 1
    description: str = ""
    node_cap: bool = True
    #: what the search calls: ``"value"`` (``states[B] -> float32[B]``) or ``"q"`` (``states[B] ->
    #: float32[B, A]``, Q*); a heuristic of the other kind is adapted (see :func:`get_heuristic`)
    heuristic_kind: str = "value"
    #: weighted best-first (BWAS, Q*): takes ``weight`` and ``batch``, and anytime ``stages`` of them
    weighted: bool = False
    #: searches for any goal of the puzzle (``goal``, the ``is_goal`` keyword); the others solve
    #: to the puzzle's own goal only
    goals: bool = False
    #: layer-by-layer: gets one heuristic per goal (a dict, :func:`stage_heuristics`) and solves
    #: to every goal of the puzzle in turn
    per_goal: bool = False
    #: the :data:`OPTIONS` this search reads
    options: tuple[str, ...] = ()
    #: takes options (macro-actions, ``macros``): searches that score states with a value
    #: heuristic; those whose networks score each move (Q*, MCTS) do not
    macros: bool = False
    #: the search's own settings where a puzzle's defaults (sized for its usual search) do not fit
    #: it: ``weight``, ``batch``, ``max_nodes``, ``time_limit``; a named setting overrides them
    defaults: tuple[tuple[str, Any], ...] = ()
    #: its peak memory before it runs, ``"module:function"`` (or the function) called as
    #: ``f(puzzle, options, instances) -> bytes`` (:mod:`puzzlezero.budget`); ``None``: a node
    #: table of ``max_nodes`` a state where the node cap applies, else :data:`FIXED_SEARCH_BYTES`
    memory: str | Callable | None = None
    #: the option to lower when that estimate is above the memory budget
    memory_lower: str = "--max-nodes"


SEARCHES: dict[str, SearchSpec] = {
    "bwas": SearchSpec(
        "puzzlezero.search:bwas",
        _run_bwas,
        True,
        1,
        "batch weighted A* (DeepCubeA)",
        weighted=True,
        memory="puzzlezero.search.bwas:memory_estimate",
        goals=True,
        macros=True,
        options=("images",),
    ),
    "gbfs": SearchSpec(
        "puzzlezero.search:gbfs",
        _run_gbfs,
        True,
        64,
        "greedy best-first",
        goals=True,
        macros=True,
        memory="puzzlezero.search.gbfs:memory_estimate",
    ),
    "qstar": SearchSpec(
        "puzzlezero.search.qstar:qstar",
        _run_bwas,
        True,
        1,
        "Q* search: BWAS with one Q-network call per expansion",
        heuristic_kind="q",
        memory="puzzlezero.search.bwas:memory_estimate",
        weighted=True,
        goals=True,
        options=("images",),
    ),
    "optimal": SearchSpec(
        "puzzlezero.classic.optimal:solve_optimal",
        _run_each,
        False,
        1,
        "optimal solver (IDA*, GF(2))",
        node_cap=False,
    ),
    "kociemba": SearchSpec(
        "puzzlezero.classic.optimal.kociemba_bridge:solve_kociemba",
        _run_each,
        False,
        1,
        "Kociemba two-phase (cube3)",
        node_cap=False,
    ),
    "beam": SearchSpec(
        "puzzlezero.search:beam",
        _run_beam,
        True,
        1,
        "batched beam search (CayleyPy)",
        goals=True,
        memory="puzzlezero.search.beam:memory_estimate",
        memory_lower="--beam-width",
        macros=True,
        options=("images",),
    ),
    "qbeam": SearchSpec(
        "puzzlezero.search:qbeam",
        _run_beam,
        True,
        1,
        "beam search ranking children by one Q-network call per beam state",
        heuristic_kind="q",
        memory="puzzlezero.search.beam:memory_estimate",
        memory_lower="--beam-width",
        goals=True,
        options=("images",),
    ),
    "pbeam": SearchSpec(
        "puzzlezero.search:pbeam",
        _run_beam,
        True,
        1,
        "beam search keeping the most probable paths of a policy, one network call per beam state "
        "(EfficientCube; a model trained with objective=efficientcube)",
        heuristic_kind="policy",
        goals=True,
        memory="puzzlezero.search.beam:memory_estimate",
        memory_lower="--beam-width",
    ),
    "layered": SearchSpec(
        "puzzlezero.search.layered:layered",
        _run_layered,
        True,
        1,
        "layer by layer (Dong, Hao and Nakayama): BWAS to each goal in turn (cube3: layer1, layer2, solved), one "
        "heuristic per goal (--model layer1=DIR,layer2=DIR,solved=DIR, or one multi-head model)",
        per_goal=True,
        macros=True,
        memory="puzzlezero.search.bwas:memory_estimate",
        # the paper's (lambda, B) = (0.2, 100); 5M nodes a stage and 120 s a solve (its 600,000 nodes
        # left some DeepCubeA test cubes unsolved in the last stage)
        defaults=(("weight", 0.2), ("batch", 100), ("max_nodes", 5_000_000), ("time_limit", 120.0)),
    ),
    "mcts": SearchSpec(
        "puzzlezero.search.mcts:mcts",
        _run_mcts,
        True,
        1,
        "Monte Carlo tree search (PUCT, virtual loss): the policy as prior, the value at leaves",
        heuristic_kind="policy_value",
        memory="puzzlezero.search.mcts:memory_estimate",
        options=("mcts_c", "mcts_leaves", "mcts_virtual_loss", "mcts_max_value", "policy_temperature"),
    ),
    "group": SearchSpec(
        "puzzlezero.classic.group:solve_group",
        _run_each,
        False,
        1,
        "Schreier-Sims stabilizer chain (permutation puzzles: cubes): any state, long solutions, no model",
        node_cap=False,
    ),
    "reduction": SearchSpec(
        "puzzlezero.classic.reduction:solve_reduction",
        _run_each,
        False,
        1,
        "sliding puzzles: rows and columns home a pair of tiles at a time, each pair by breadth-first "
        "search; any board, 1.6-1.8 times the optimal length, no model",
        node_cap=False,
        memory="puzzlezero.classic.reduction:memory_estimate",
    ),
}
