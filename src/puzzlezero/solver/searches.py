"""The searches by name (:data:`SEARCHES`): each is declared once, by :func:`register_search`
with a :class:`SearchSpec` that names its implementation lazily, the adapter that calls it with
the resolved options (the ``_run_*`` functions), the settings and knobs it reads, and its
defaults. The built-in searches are registered below exactly as a plugin registers its own
(``docs/adding-a-search.md``); the CLI's flags, the web's names and ``puzzlezero defaults`` are
read from these declarations.

Time: the solver turns the time limit into one deadline (:mod:`puzzlezero.search.clock`) and
hands it to the adapter (:func:`run_search`) as ``deadline=``, with ``on_solution=`` for the
anytime ones. An adapter of the older form, ``run(fn, puzzle, states, h, options)`` with the
seconds left as ``options.time_limit``, is wrapped once, when it is registered."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np

from puzzlezero.defaults import REDUCTION_SECONDS
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import SOLVED, Puzzle
from puzzlezero.search import clock
from puzzlezero.solver.heuristics import HEURISTICS
from puzzlezero.solver.heuristics import Kind as HeuristicKind
from puzzlezero.solver.names import Heuristic, Results, check_new_name
from puzzlezero.solver.search_options import OPTIONS

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
    :func:`puzzlezero.search.clock.now`). ``on_solution``: the anytime adapters call it with each
    row's cheaper solutions as their stages end
    (:data:`~puzzlezero.search.anytime.SolutionHook`); the others' solutions come with their
    results. ``fn`` is called with a ``deadline`` keyword (:func:`~puzzlezero.search.clock.with_deadline`:
    one that takes only a ``time_limit`` gets the seconds left)."""
    fn = clock.with_deadline(fn)
    return spec.run(fn, puzzle, states, h, o, deadline=deadline, on_solution=on_solution)


def _imaged(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float,
    **settings: Any,
) -> Results:
    """One call of the search ``fn`` with ``settings``, the options' node cap and goal and the
    ``deadline``, or with the ``images`` option on the states and their first N images together,
    each state's shortest solution kept (:func:`~puzzlezero.search.images.with_images`)."""

    def run(rows: np.ndarray, groups: np.ndarray | None = None) -> Results:
        return fn(
            puzzle,
            rows,
            h,
            max_nodes=o.max_nodes,
            deadline=deadline,
            **settings,
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


def _run_gbfs(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> Results:
    assert o.max_nodes is not None  # gbfs has node_cap: resolve_options fills in the puzzle's cap
    steps = min(o.max_steps, max(0, (o.max_nodes - 1) // puzzle.num_actions))
    return fn(puzzle, states, h, max_steps=steps, deadline=_deadline(o, deadline), **_goal_kw(o))


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
    if o.option("goal_ball"):
        from puzzlezero.search.goal_ball import cached_goal_ball

        fn = partial(fn, ball=cached_goal_ball(puzzle, o.option("goal_ball"), deadline=deadline))
    if isinstance(o.beam_width, int):
        return _imaged(fn, puzzle, states, h, o, deadline, beam_width=o.beam_width, max_steps=o.max_steps)
    from puzzlezero.search.anytime import anytime_beam

    beams = partial(anytime_beam, max_steps=o.max_steps)
    limits: dict[str, Any] = {"deadline": deadline, "max_nodes": o.max_nodes, "on_solution": on_solution}
    n_images = o.option("images")
    if n_images:  # as every schedule's: the first beam on the states alone, the images from the second
        from puzzlezero.search.images import anytime_images

        images = puzzle.image_names[:n_images]
        return anytime_images(fn, puzzle, states, h, o.beam_width, images=images, schedule=beams, **limits)  # type: ignore[arg-type]
    return beams(fn, puzzle, states, h, o.beam_width, **limits, **_goal_kw(o))  # type: ignore[arg-type]


def _run_layered(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Any,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
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
        deadline=_deadline(o, deadline),
    )


def _run_mcts(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
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
        deadline=_deadline(o, deadline),
    )


def _run_each(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> Results:
    """``fn(puzzle, state, max_nodes=..., deadline=...)`` on each state in turn, all to the one
    deadline; a ``fn`` without a ``deadline`` keyword gets ``time_limit=``, the seconds left when
    its state's turn comes."""
    deadline = _deadline(o, deadline)
    return [fn(puzzle, s, max_nodes=o.max_nodes, deadline=deadline) for s in states]


def _run_anytime_each(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> Results:
    """``fn(puzzle, state, max_nodes=..., deadline=..., on_solution=...)`` on each state in turn, all
    to the one deadline (:func:`_run_composed`): a search without a heuristic that improves its
    answer with time; ``on_solution(result)`` passes each shorter answer on with its state's row
    (one stage)."""

    def one(
        puzzle: Puzzle, s: np.ndarray, h: Any, o: SolveOptions, *, deadline: float, on_solution: Any
    ) -> Any:
        hook = None if on_solution is None else (lambda r: on_solution(r, 0))
        return fn(puzzle, s, max_nodes=o.max_nodes, deadline=deadline, on_solution=hook)

    return _run_composed(one, puzzle, states, h, o, deadline, on_solution)


def _run_composed(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> Results:
    """``fn(puzzle, state, h, o, deadline=..., on_solution=...)`` on each state in turn, all to the
    one deadline: a search made of other searches, which reads the options itself;
    ``on_solution(result, stage)`` passes each answer on with its state's row."""
    deadline = _deadline(o, deadline)
    out = []
    for row, s in enumerate(states):
        hook = None
        if on_solution is not None:

            def hook(r: Any, stage: int, row: int = row) -> None:
                on_solution(row, r, stage)

        out.append(fn(puzzle, s, h, o, deadline=deadline, on_solution=hook))
    return out


def _run_rollout(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
) -> Results:
    """``fn(puzzle, state, beam_width=..., patience=..., max_nodes=..., deadline=...)`` on each
    state in turn, all to the one deadline; each shorter answer goes to ``on_solution`` as it is
    found (stage 0: a rollout's schedule is its own)."""
    from puzzlezero.search.result import SearchResult

    deadline = _deadline(o, deadline)
    out = []
    for row, s in enumerate(states):

        def improved(actions: tuple[int, ...], row: int = row) -> None:
            if on_solution is not None:
                result = SearchResult(True, actions, 0, 0, 0.0, "solved", cost=puzzle.path_cost(actions))
                on_solution(row, result, 0)

        out.append(
            fn(
                puzzle,
                s,
                beam_width=o.beam_width,
                patience=o.option("rollout_patience"),
                max_nodes=o.max_nodes,
                deadline=deadline,
                on_improvement=improved,
            )
        )
    return out


#: the search settings of :class:`~puzzlezero.solver.SolveOptions` a search may read
#: (:attr:`SearchSpec.settings`); the time limit, node cap and goal reach every search
SETTINGS: tuple[str, ...] = ("weight", "batch", "stages", "beam_width", "max_steps")


class Adapter(Protocol):
    """How the solver calls a search: ``run(fn, puzzle, states, h, options, deadline=...,
    on_solution=...)`` -> one result per state. ``fn`` is the search's resolved entry, ``h`` its
    heuristic (or, for a per-goal search, a dict of them), ``deadline`` a reading of
    :func:`puzzlezero.search.clock.now` (``None``: ``options.time_limit`` from now), and
    ``on_solution`` the anytime hook (adapters that are not anytime ignore it)."""

    def __call__(
        self,
        fn: Callable,
        puzzle: Puzzle,
        states: np.ndarray,
        h: Any,
        o: SolveOptions,
        deadline: float | None = None,
        on_solution: SolutionHook | None = None,
    ) -> Results: ...


@dataclass(frozen=True, kw_only=True)
class SearchSpec:
    """A search, declared once (:func:`register_search`).

    ``entry`` is ``"module:function"`` (or the function); ``run`` is its :class:`Adapter`;
    ``needs_heuristic``: it is guided by a heuristic of kind ``heuristic_kind`` (a heuristic of
    another kind is adapted once, by :func:`~puzzlezero.solver.get_heuristic`). ``together`` is
    how many instances :func:`solve_many` searches in one call by default (1 keeps per-instance
    times exact). ``node_cap``: whether the puzzle's default ``max_nodes`` applies (it bounds the
    memory of searches that store their nodes; IDA* runs in constant memory, so only its time
    limit bounds it by default)."""

    entry: str | Callable
    run: Adapter
    needs_heuristic: bool
    description: str = ""
    together: int = 1
    node_cap: bool = True
    heuristic_kind: HeuristicKind = "value"
    #: the :data:`SETTINGS` it reads (``weight``, ``batch`` and ``stages``: weighted best-first
    #: such as BWAS and Q*; ``beam_width`` and ``max_steps``: the beams); a bench report records
    #: only these
    settings: tuple[str, ...] = ()
    #: it keeps improving its answer within the time limit (an anytime schedule of ``stages`` or of
    #: beam widths) and reports each cheaper solution through ``on_solution``
    anytime: bool = False
    #: searches for any goal of the puzzle (``goal``, the ``is_goal`` keyword); the others solve
    #: to the puzzle's own goal only
    goals: bool = False
    #: layer-by-layer: gets one heuristic per goal (a dict, :func:`stage_heuristics`) and solves
    #: to every goal of the puzzle in turn
    per_goal: bool = False
    #: the knobs of :data:`OPTIONS` this search reads
    options: tuple[str, ...] = ()
    #: takes macro-actions (``macros``): searches that score states with a value heuristic; those
    #: whose networks score each move (Q*, MCTS) do not
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
    #: the kind of table it reads (``puzzlezero pdb build --kind KIND``), which a server prepares
    #: before its workers start when a served puzzle's default solve runs this search, and a bench
    #: before its first case (:mod:`puzzlezero.solver.tables`); ``None``: none. A solve that
    #: finds one missing builds it inside its time limit (the pattern databases in a process
    #: stopped at the deadline, :func:`puzzlezero.solver.run.solve_many`; the group table likewise)
    tables: str | None = None
    #: it answers nothing without its tables (the 4x4x4's reduction): a solve builds (or loads)
    #: them, and those of its ``inner`` solves, off its clock once a state is left that the
    #: breadth-first pass did not answer (a short scramble waits for none), where the searches that
    #: have another answer meanwhile (the network beside the two-phase search) build theirs inside
    #: the time limit
    tables_first: bool = False
    #: the solves it runs inside, ``"module:function"`` (or the function) called as
    #: ``f(puzzle) -> [(puzzle, options)]`` (the 4x4x4 reduction's solve of the 3x3x3 it leaves):
    #: their tables are prepared with its own (:func:`puzzlezero.solver.tables.table_needs`)
    inner: str | Callable | None = None

    @property
    def weighted(self) -> bool:
        """Weighted best-first with an anytime schedule of ``stages`` (BWAS, Q*)."""
        return "stages" in self.settings

    def reads(self, setting: str) -> bool:
        """Does it read this :data:`SETTINGS` entry (``"beam_width"``: the beams)?"""
        return setting in self.settings


#: the searches by name, each declared once by :func:`register_search`
SEARCHES: dict[str, SearchSpec] = {}


def _time_limit_adapter(run: Callable[..., Results]) -> Adapter:
    """An adapter of the older form, ``run(fn, puzzle, states, h, options)``, as an
    :class:`Adapter`: the deadline given as the seconds left, ``options.time_limit``."""

    def adapted(
        fn: Callable,
        puzzle: Puzzle,
        states: np.ndarray,
        h: Any,
        o: SolveOptions,
        deadline: float | None = None,
        on_solution: SolutionHook | None = None,
    ) -> Results:
        left = None if deadline is None else clock.time_limit_until(deadline)  # None: no deadline
        return run(fn, puzzle, states, h, o if left is None else replace(o, time_limit=left))

    adapted.__wrapped__ = run  # type: ignore[attr-defined]
    return adapted


def declare_search(spec: SearchSpec) -> SearchSpec:
    """``spec`` checked as a declaration (its settings among :data:`SETTINGS`, its knobs among
    :data:`OPTIONS`, a positive ``together``), with an adapter of the older form wrapped once
    (:func:`_time_limit_adapter`); a bad one is a :class:`PuzzleError` naming the field."""
    unknown = [name for name in spec.settings if name not in SETTINGS]
    if unknown:
        raise PuzzleError(f"a search's settings are among {', '.join(SETTINGS)}; got {', '.join(unknown)}")
    unknown = [name for name in spec.options if name not in OPTIONS]
    if unknown:
        raise PuzzleError(
            f"a search reads knobs declared in puzzlezero.solver.OPTIONS (register_option); "
            f"unknown: {', '.join(unknown)}"
        )
    if spec.together < 1:
        raise PuzzleError(f"a search's together must be at least 1, got {spec.together}")
    if not callable(spec.run):
        raise PuzzleError(f"a search's run must be an adapter function, got {spec.run!r}")
    if not clock.takes_deadline(spec.run):
        spec = replace(spec, run=_time_limit_adapter(spec.run))
    return spec


def register_search(name: str, spec: SearchSpec, *, replace: bool = False) -> SearchSpec:
    """Declare the search ``name``: after this, ``solve(..., search=name)``, ``--search name`` and
    ``puzzlezero defaults`` know it (:func:`declare_search` checks it). A name already registered
    is an error unless ``replace`` (a plugin that means to take a built-in's place). Returns the
    spec as registered."""
    check_new_name(SEARCHES, name, "search", replace)
    SEARCHES[name] = declared = declare_search(spec)
    return declared


def _register_builtins() -> None:
    # the images knob: more guises of a state searched; BWAS and Q* anytime in the stages after the first
    images = ("images",)
    bwas_memory = "puzzlezero.search.bwas:memory_estimate"
    beam_memory = "puzzlezero.search.beam:memory_estimate"
    weighted = ("weight", "batch", "stages")
    beams = ("beam_width", "max_steps")
    register_search(
        "bwas",
        SearchSpec(
            entry="puzzlezero.search:bwas",
            run=_run_bwas,
            needs_heuristic=True,
            description="batch weighted A* (DeepCubeA)",
            settings=weighted,
            anytime=True,
            memory=bwas_memory,
            goals=True,
            macros=True,
            options=images,
        ),
    )
    register_search(
        "gbfs",
        SearchSpec(
            entry="puzzlezero.search:gbfs",
            run=_run_gbfs,
            needs_heuristic=True,
            together=64,
            description="greedy best-first",
            settings=("max_steps",),
            goals=True,
            macros=True,
            memory="puzzlezero.search.gbfs:memory_estimate",
        ),
    )
    register_search(
        "qstar",
        SearchSpec(
            entry="puzzlezero.search.qstar:qstar",
            run=_run_bwas,
            needs_heuristic=True,
            description="Q* search: BWAS with one Q-network call per expansion",
            heuristic_kind="q",
            settings=weighted,
            anytime=True,
            memory=bwas_memory,
            goals=True,
            options=images,
        ),
    )
    register_search(
        "optimal",
        SearchSpec(
            entry="puzzlezero.classic.optimal:solve_optimal",
            run=_run_each,
            needs_heuristic=False,
            description="optimal solver (IDA*, GF(2))",
            node_cap=False,
            tables="pdb",
        ),
    )
    register_search(
        "kociemba",
        SearchSpec(
            entry="puzzlezero.classic.optimal.kociemba_bridge:solve_kociemba",
            run=_run_each,
            needs_heuristic=False,
            description="Kociemba two-phase (cube3)",
            node_cap=False,
        ),
    )
    beam_kinds: tuple[tuple[str, str, HeuristicKind, str, dict[str, Any]], ...] = (
        ("beam", "puzzlezero.search:beam", "value", "batched beam search (CayleyPy)", {"macros": True}),
        (
            "qbeam",
            "puzzlezero.search:qbeam",
            "q",
            "beam search ranking children by one Q-network call per beam state",
            {},
        ),
        (
            "pbeam",
            "puzzlezero.search:pbeam",
            "policy",
            "beam search keeping the most probable paths of a policy, one network call per beam state "
            "(EfficientCube; a model trained with objective=efficientcube)",
            {},
        ),
    )
    for name, entry, kind, description, extra in beam_kinds:
        register_search(
            name,
            SearchSpec(
                entry=entry,
                run=_run_beam,
                needs_heuristic=True,
                description=description,
                heuristic_kind=kind,
                settings=beams,
                anytime=True,
                goals=True,
                memory=beam_memory,
                memory_lower="--beam-width",
                options=("goal_ball",) if kind == "policy" else (*images, "goal_ball"),
                **extra,
            ),
        )
    register_search(
        "layered",
        SearchSpec(
            entry="puzzlezero.search.layered:layered",
            run=_run_layered,
            needs_heuristic=True,
            description="layer by layer (Dong, Hao and Nakayama): BWAS to each goal in turn (cube3: layer1, "
            "layer2, solved), one heuristic per goal (--model layer1=DIR,layer2=DIR,solved=DIR, or one "
            "multi-head model)",
            settings=("weight", "batch"),
            per_goal=True,
            macros=True,
            memory=bwas_memory,
            # the paper's (lambda, B) = (0.2, 100); 5M nodes a stage and 120 s a solve (its 600,000
            # nodes left some DeepCubeA test cubes unsolved in the last stage)
            defaults=(("weight", 0.2), ("batch", 100), ("max_nodes", 5_000_000), ("time_limit", 120.0)),
        ),
    )
    register_search(
        "mcts",
        SearchSpec(
            entry="puzzlezero.search.mcts:mcts",
            run=_run_mcts,
            needs_heuristic=True,
            description="Monte Carlo tree search (PUCT, virtual loss): the policy as prior, the value at leaves",
            heuristic_kind="policy_value",
            memory="puzzlezero.search.mcts:memory_estimate",
            options=("mcts_c", "mcts_leaves", "mcts_virtual_loss", "mcts_max_value", "policy_temperature"),
        ),
    )
    register_search(
        "group",
        SearchSpec(
            entry="puzzlezero.classic.group:solve_group",
            run=_run_each,
            needs_heuristic=False,
            description="Schreier-Sims stabilizer chain (permutation puzzles: cubes): any state, long solutions, "
            "no model",
            node_cap=False,
            tables="group",
        ),
    )
    register_search(
        "cube-commutators",
        SearchSpec(
            entry="puzzlezero.classic.cube_commutators:solve_commutators",
            run=_run_each,
            needs_heuristic=False,
            description="any NxNxN cube with the competition's moves, any goal, orbit by orbit: the "
            "2x2x2 or 3x3x3 inside by its group solver, then each orbit of wings and centres by 3-cycles "
            "(commutators and their conjugates); long answers in seconds, no table of the cube's own, no model",
            node_cap=False,
            memory="puzzlezero.classic.cube_commutators:memory_estimate",
            memory_lower="the cube's size, which alone sets it,",
        ),
    )
    register_search(
        "rollout",
        SearchSpec(
            entry="puzzlezero.classic.group:solve_rollout",
            run=_run_rollout,
            needs_heuristic=False,
            description="the group solver's answer made shorter by a rollout (Bertsekas, Tsitsiklis and Wu): a "
            "beam over the moves, each child scored by the length of its sift, the best moves-so-far + sift "
            "kept; permutation puzzles made from a definition, no model",
            settings=("beam_width",),
            anytime=True,
            node_cap=False,
            options=("rollout_patience",),
            memory="puzzlezero.classic.group:rollout_memory",
            memory_lower="--beam-width",
            tables="group",
        ),
    )
    register_search(
        "cube-reduction",
        SearchSpec(
            entry="puzzlezero.solver.reduced:solve_reduced",
            run=_run_anytime_each,
            needs_heuristic=False,
            description="the 4x4x4 or the 5x5x5 brought to a 3x3x3 (centres by breadth-first tables, edges "
            "paired by beams, the parity fixed), then solved by the 3x3x3's own solve (cube3's network); a first answer "
            "as soon as the first reduction (a quick two-phase 3x3x3), shorter ones with time; no model of "
            "its own",
            anytime=True,
            node_cap=False,
            # its first answer (centres, edges paired, a quick 3x3x3 solve) takes the 5x5x5 about
            # 20 s on 2 cores: the server's quick 20 s would leave it to the group solver's
            # answers of about 500 moves; the server cuts this to its cap (60 s)
            defaults=(("time_limit", REDUCTION_SECONDS),),
            memory="puzzlezero.solver.reduced:memory_estimate",
            tables="reduction",
            tables_first=True,
            inner="puzzlezero.solver.reduced:inner_solves",
        ),
    )
    register_search(
        "cube3-route",
        SearchSpec(
            entry="puzzlezero.solver.cube3_route:solve_two_routes",
            run=_run_composed,
            needs_heuristic=True,
            description="the competition's 3x3x3: a beam over the slice moves (cube3's network), then "
            "cube3's own solve of the cube read in its centres' frame, its face turns made the fewest "
            "slice turns; beside both, the two-phase search in the slice metric (two-phase-slice); the "
            "shortest answer kept",
            settings=beams,
            anytime=True,
            options=("goal_ball",),
            memory="puzzlezero.solver.cube3_route:memory_estimate",
            memory_lower="--beam-width",
            tables="two-phase",
        ),
    )
    register_search(
        "two-phase",
        SearchSpec(
            entry="puzzlezero.classic.two_phase:solve_two_phase",
            run=_run_anytime_each,
            needs_heuristic=False,
            description="Kociemba's two-phase algorithm in the quarter-turn metric (cube3): phase 1 into "
            "<U, D, R2, L2, F2, B2> by IDA* on an exact table, phase 2 within it, every phase-1 length "
            "tried in six guises of the cube, shorter answers with time; no model",
            anytime=True,
            node_cap=False,
            memory="puzzlezero.classic.two_phase:memory_estimate",
            tables="two-phase",
        ),
    )
    register_search(
        "two-phase-slice",
        SearchSpec(
            entry="puzzlezero.classic.two_phase_slice:solve_two_phase_slice",
            run=_run_anytime_each,
            needs_heuristic=False,
            description="Kociemba's two-phase algorithm in the slice quarter-turn metric of the competition's "
            "3x3x3 (cube_3-3-3): the cube as cube3 reads it in its centres' frame, middle slices as face "
            "pairs that turn the frame, six guises, "
            "shorter answers with time; no model",
            anytime=True,
            node_cap=False,
            memory="puzzlezero.classic.two_phase_slice:memory_estimate",
            tables="two-phase",
        ),
    )
    register_search(
        "reduction",
        SearchSpec(
            entry="puzzlezero.classic.reduction:solve_reduction",
            run=_run_each,
            needs_heuristic=False,
            description="sliding puzzles: rows and columns home a pair of tiles at a time, each pair by "
            "breadth-first search; any board, 1.6-1.8 times the optimal length, no model",
            node_cap=False,
            memory="puzzlezero.classic.reduction:memory_estimate",
        ),
    )


_register_builtins()


def searches_reading(setting: str) -> Iterable[str]:
    """The names of the searches that read this :data:`SETTINGS` entry (for error messages)."""
    return (name for name, spec in SEARCHES.items() if spec.reads(setting))
