"""The one high-level entry point: ``solve(puzzle, state) -> SolveResult``.

Searches and heuristics are looked up by name in :data:`SEARCHES` and :data:`HEURISTICS`, whose
entries name their implementation lazily as ``"module:function"`` (nothing heavy, torch included,
is imported until a name is used). Per-puzzle search settings come from :data:`DEFAULTS` (a plugin's
puzzle brings its own, :func:`defaults_for`). Every
reported solution has been verified by replaying it on the start state.

Example:
    >>> from puzzlezero.solver import solve                       # doctest: +SKIP
    >>> r = solve("cube3", "R U R' U'")                           # doctest: +SKIP
    >>> r.to_json()["solution"], r.length                         # doctest: +SKIP
    ("U R U' R'", 4)
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import Any, TypedDict

import numpy as np

from puzzlezero.errors import InvalidStateError, ModelFileError, PuzzleError, UnknownNameError
from puzzlezero.puzzles.base import SOLVED, Goal, Puzzle
from puzzlezero.registry import make, spec
from puzzlezero.search.result import SearchResult, check_positive
from puzzlezero.search.shortcut import can_shortcut
from puzzlezero.search.shortcut import shortcut as find_shortcuts

__all__ = [
    "DEFAULTS",
    "HEURISTICS",
    "SEARCHES",
    "Defaults",
    "FALLBACK_DEFAULTS",
    "HeuristicSpec",
    "OPTIONS",
    "OptionSpec",
    "SearchSpec",
    "SolveOptions",
    "SolveResult",
    "check_defaults",
    "check_memory",
    "defaults_for",
    "get_heuristic",
    "memory_estimate",
    "read_state",
    "reads_beam_width",
    "resolve_options",
    "solve",
    "solve_many",
    "verify",
]

Heuristic = Callable[[np.ndarray], np.ndarray]
Results = list[SearchResult]


# ---- settings --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Defaults:
    """Search settings of one puzzle (paper's weights; batch sizes scaled down for a CPU)."""

    weight: float  #: lambda in f = lambda * g + h
    batch: int  #: N, nodes expanded per iteration
    max_nodes: int  #: cap on nodes generated per instance
    time_limit: float  #: seconds per search call
    max_steps: int  #: greedy and beam search: cap on moves
    #: beam search: states kept per instance and step; several (``(500, 5000)``): an anytime
    #: schedule of widths, each beam looking only for shorter solutions (:func:`~.anytime.anytime_beam`)
    beam_width: int | tuple[int, ...] = 1000
    search: str = "bwas"  #: the search ``solve`` runs when none is named
    #: anytime schedule of ``search``: ``(weight, batch)`` stages run in turn within the time limit,
    #: the shortest solution kept (:mod:`puzzlezero.search.anytime`); empty: one search
    stages: tuple[tuple[float, int], ...] = ()
    #: a search that needs no heuristic and always answers (cubes: ``"group"``, sliding puzzles:
    #: ``"reduction"``), run on the states the puzzle's own search left unsolved, in the last
    #: :data:`FALLBACK_RESERVE` seconds
    fallback: str | None = None
    #: this puzzle's defaults of :data:`OPTIONS` (``(name, value)`` pairs; the table's elsewhere)
    options: tuple[tuple[str, Any], ...] = ()
    #: shortcuts (:mod:`puzzlezero.search.shortcut`): each solved path's detours replaced by
    #: shorter ways found by meeting in the middle, the balls around the path bounded by this many
    #: states a round; 0: off
    shortcut: int = 0

    @property
    def anytime(self) -> bool:
        """Does the puzzle's own search run an anytime schedule: ``stages``, or beam widths?"""
        return bool(self.stages) or (not isinstance(self.beam_width, int) and reads_beam_width(self.search))


#: Per-puzzle defaults. Weights as in the paper (cube 0.6, tiles 0.8 / 48-puzzle 0.6, Lights Out
#: 0.2, Sokoban 0.8). The paper's N (cube 10,000, tiles 20,000 on four GPUs; Lights Out 1,000) is
#: cut to about what a CPU network evaluates in a second (N * num_actions children per iteration);
#: Sokoban's N = 1 is raised to 10 so that a network call covers several nodes. Tune with
#: ``puzzlezero bench``. cube3 solves with Q* (its model has a Q head: one network call per expanded
#: node instead of twelve) and an anytime schedule within 30 s, chosen on the shared benchmark cubes
#: (ids 0-5, idle 2-core AMD EPYC, docs/results.md): greedy-leaning lambda 0.1 first (a solution in
#: 1.5-4 s, and the hard superflip-class cubes solve only this way), then 0.3/1000, 0.4/3000 (about
#: 40 s) and 0.5/10000 for longer budgets: +5.0 moves over optimal at 30 s on ids 0-5 (+7.2 on ids
#: 0-9 in the bench after a fix to the stages' cost bound), where BWAS schedules on the value head
#: gave +6.3 to +8.7 and single BWAS settings of lambda >= 0.5 did not finish in 60 s on this CPU.
#: The same model re-benched (session 12, idle 2-core Xeon): +3.6 on ids 0-9 at a median 28 s;
#: after 3 GPU minutes of Q-learning (session 14, 136M samples in all): +2.6 on ids 0-9, +3.6 on 10-19;
#: after 8.3 more (session 16, 304M samples): +2.40 on ids 0-19, +2.20 on 20-39 (idle 2-core Xeon).
#: With that model (ids 0-9, one core busy) 0.1/1000, 0.3/1000, 0.5/3000 gave +3.0 and 0.1/1000,
#: 0.4/1000, 0.5/3000 +2.8, against the default's +2.6 in the same conditions.
#: Session 13 tried other schedules on ids 0-5 (one core busy with training): a 0.45/3000 and a
#: 0.5/3000 stage in place of 0.5/10000, +3.7 (the same lengths); 0.5/3000 and 0.6/3000 after
#: 0.3/1000, +4.3; 0.4 and 0.5 side by side as two instances of one search, +4.7 (each at half speed).
#: Session 17: the stages after the first also search the cube's three images (inverse, mirror,
#: inverse-mirror; ``images``, :mod:`puzzlezero.search.images`), which the network misjudges each
#: in its own way: +2.1 instead of +3.2 on ids 40-59 side by side, +2.0 instead of +2.2 on ids 20-39
#: (idle 2-core Xeon); with the inverse alone +2.1 on ids 0-19, and with all three but each image
#: bounded by its own solutions only, +2.3 (docs/results.md).
#: Session 18's model (669M samples): +1.70, +1.50 and +1.80 on ids 0-19, 20-39 and 40-59 with this
#: schedule; 0.5/3000 and 0.6/10000 as its last two stages gave +2.80 on ids 0-19 (idle 2-core Xeon).
#: Session 19: the later stages as two searches side by side, a stage ending for the group once
#: the others have searched as long again as its first solution (:class:`~.search.anytime.GroupLedger`):
#: +1.50, +1.30 and +1.70 on the same ids (+1.50 on 60 cubes against +1.67), peak 4.4 GiB.
#: Session 23's model (962M samples): +1.50, +1.50 and +1.40 (+1.47 on 60 cubes), peak 4.4 GiB;
#: on ids 60-99 +2.10 (session 32, AMD EPYC), so +1.72 on 100 cubes.
#: Without a schedule (``--weight``/``--batch``) lambda 0.3, N 1000. Beam widths (``beam_width``)
#: were sized on ids 0-9 with the previous cube3 model: W 1000 solved all 10 (+8.4 moves over
#: optimal, median 53 s on a busy 2-core CPU), W 3000 9 of 10 within 120 s (+5.1 moves on those 9,
#: median 102 s); W 10,000 took 263-309 s a cube (ids 0-2, +2.7 moves).
DEFAULTS: dict[str, Defaults] = {
    "cube3": Defaults(
        0.3,
        1000,
        10_000_000,
        30.0,
        100,
        1000,
        search="qstar",
        stages=((0.1, 1000), (0.3, 1000), (0.4, 3000), (0.5, 10_000)),
        fallback="group",
        options=(("images", 3),),
    ),
    "cube2": Defaults(0.9, 300, 4_000_000, 60.0, 50, 1000, fallback="group"),
    # the half-turn cube's shipped model has a Q head too: cube3's schedule, 21.3 half turns on
    # average at a median 28 s on the 20 shared benchmark cubes (idle 2-core CPU, session 6)
    # images=3 measured on ids 0-19 (session 18): 20.8 half turns against 21.3, but a peak of
    # 4.8 GiB against 1.8 (18 children an expansion), so it is left to ``--images 3``
    "cube3htm": Defaults(
        0.3,
        1000,
        10_000_000,
        30.0,
        100,
        1000,
        search="qstar",
        stages=((0.1, 1000), (0.3, 1000), (0.4, 3000), (0.5, 10_000)),
        fallback="group",
    ),
    "puzzle8": Defaults(0.8, 100, 1_000_000, 60.0, 200, 100, fallback="reduction"),
    "puzzle15": Defaults(0.8, 1000, 3_000_000, 300.0, 500, 1000, fallback="reduction"),
    # session 22, the model of 50.9M samples, ids 0-79: BWAS 0.8/2000 over the board and its
    # transpose in one call, the shorter kept, +0.575 moves over optimal and 73.75% optimal
    # against +0.80 and 63.75% on the board alone, at twice the nodes; on ids 0-39 N 4000 on
    # the board alone, the same nodes, gave +0.55 and 75% where the two guises gave +0.35 and 82.5%
    "puzzle24": Defaults(
        0.8, 2000, 4_000_000, 300.0, 1000, 2000, fallback="reduction", options=(("images", 1),)
    ),
    # the shipped model (85M samples: CPU, 6 min of an H100, CPU), benchmark ids 0-9, idle 2-core
    # Xeon: λ 0.5 N 2000 about 133 moves at a median of 12 s; λ 0.6 N 6000 131.0 at 25-30 s (at
    # most 3.7M nodes); λ 0.6 N 10000 130.2 at 49 s; λ 0.7 changed little (docs/training.md).
    # Session 20, the model of 112M samples, ids 0-59: beam search W 5000 over the board and its
    # transpose in one call, the shorter kept, 131.18 moves against BWAS 0.6/6000's 131.92, at a
    # median of 33 s against 20-23 s; on ids 0-9 one guise at W 10000 gave 129.2 at 34 s against
    # the two guises' 128.2 at 31 s. ``--search bwas`` keeps λ 0.6, N 6000 and the board alone.
    # Session 21: a beam of 500 first (:func:`~.search.anytime.anytime_beam`), so that a short time
    # limit gets an answer (one torch thread, 20 s and 2M nodes, as on the web page: W 5000 alone
    # answered none of ids 0-2, W 500 then 5000 all three in 7-9 s); on ids 0-9 the same 128.2
    # moves, a median of 37.8 s against 31.4 s, the first answer at a median of 3.8 s
    "puzzle35": Defaults(
        0.6,
        6000,
        8_000_000,
        300.0,
        2000,
        (500, 5000),
        search="beam",
        fallback="reduction",
        options=(("images", 1),),
    ),
    # session 25's model (45.4M samples, CPU): ids 0-9 with λ 0.6 N 2000, 4M nodes: 7 solved, 317.1
    # moves on those, median 50 s with a training run on the cores; 8M nodes solved none of the
    # other three, λ 0.4 one more (379 moves), beam W 1000 two of ids 0-2 (614, 329).
    # Session 26, that model continued with frozen batch norm (3.7M samples more), ids 0-9 with a
    # training run on the cores: BWAS λ 0.6 N 2000 6 solved (305 moves on those); beam W 1000 all
    # 10, 354.0 moves, median 17 s; W 5000 all 10, 297.0 moves, median 68 s (6.9M nodes at most);
    # W 5000 over the board and its transpose (ids 0-4) 304.0 against 299.2 at twice the time. So
    # the beam, W 500 first for an answer within a short limit (the web page's 20 s), on the board
    # alone; 12M nodes let the W 5000 beam take 565 steps (``--search bwas``: λ 0.6, N 2000, 12M).
    # Session 27's model (70.2M samples), ids 0-19, idle: 282.1 moves at a median of 65 s.
    # Session 29: the beam's paths take detours that balls around them find (shortcuts, search/
    # shortcut.py); on those 20 paths 2M states a round (radius 8) gave 281.5 moves, 6M (radius
    # 9) 280.9 at a median of 2.9 s a path, 16M (radius 10) 280.5 at 13 s; so 6M, which took ids
    # 20-49 from 299.8 to 298.4 (the bench's peak 1.2 GiB)
    "puzzle48": Defaults(
        0.6,
        2000,
        12_000_000,
        300.0,
        3000,
        (500, 5000),
        search="beam",
        fallback="reduction",
        shortcut=6_000_000,
    ),
    # the shipped policy (EfficientCube's recipe with the press-set target, 263M samples on one
    # H200) searched by its policy beam: W 1000 solved all 250 shared benchmark boards, 99.6% of
    # them optimally, at a median 1.07-1.19 s (idle 2-core Xeon; W 100 solved all 250 at 0.13 s,
    # 96.0% optimal as searched, 100% after Puzzle.reduce_moves). A step of W 1000 makes 49,000
    # children, so 3M nodes allow about 60 presses (a board needs at most 49). MCTS: the least
    # backed-up cost, which solved 7 of 8 random 12-press boards within 20 s where the mean solved
    # 3 (docs/mcts_wcd.md, with the earlier value model)
    "lightsout7": Defaults(
        0.2, 100, 3_000_000, 120.0, 100, 1000, search="pbeam", options=(("mcts_max_value", True),)
    ),
    # the shipped LHBL model at 12 minutes of its training, 60 benchmark levels: N 100 solved the
    # same levels as N 10 (58) with shorter solutions at 0.39x the mean time (119k nodes/s against
    # 41k: one network call per 400 children instead of 40). The final model solved 498 of the 500
    # benchmark levels within 1M nodes; the other two took 1.08M and 2.18M nodes (6 s and 12 s,
    # 0.5 GB): 5M nodes, still bounded by the 120 s
    "sokoban": Defaults(0.8, 100, 5_000_000, 120.0, 500, 100),
}
#: the settings of a puzzle not in :data:`DEFAULTS`, under the ``defaults`` it was registered with
FALLBACK_DEFAULTS = Defaults(0.6, 1000, 1_000_000, 300.0, 1000)


def check_defaults(name: str, fields: Mapping[str, Any]) -> Defaults:
    """The fallback settings with ``fields`` in place (``register(..., defaults=fields)``);
    ``ValueError`` names an unknown field or a value of the wrong kind."""
    known = {f.name: f.type for f in dataclasses.fields(Defaults)}
    unknown = sorted(set(fields) - set(known))
    if unknown:
        raise ValueError(f"puzzle {name!r}: unknown defaults {unknown}; the fields are {', '.join(known)}")
    out = dict(fields)
    widths = out.get("beam_width")
    if isinstance(widths, list | tuple):  # an anytime schedule of beams
        if not widths or any(isinstance(w, bool) or not isinstance(w, int) for w in widths):
            raise ValueError(
                f"puzzle {name!r}: defaults beam_width must be int or a list of int, got {widths!r}"
            )
        out["beam_width"] = tuple(widths)
    for key in ("weight", "time_limit", "batch", "max_nodes", "max_steps", "beam_width"):
        kind = float if key in ("weight", "time_limit") else int
        value = out.get(key, 0)
        if isinstance(value, tuple):  # beam widths, checked above
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or kind(value) != value:
            raise ValueError(f"puzzle {name!r}: defaults {key} must be {kind.__name__}, got {value!r}")
        if key in out:
            out[key] = kind(value)
    if "stages" in out:
        out["stages"] = tuple((float(w), int(n)) for w, n in out["stages"])
    if "options" in out:
        out["options"] = tuple(sorted(dict(out["options"]).items()))
    return replace(FALLBACK_DEFAULTS, **out)


def defaults_for(puzzle: Puzzle | str) -> Defaults:
    """The search settings of a puzzle: its :data:`DEFAULTS` entry, else the fallback with the
    ``defaults`` given when it was registered (``register(name, Class, defaults={...})``)."""
    name = puzzle if isinstance(puzzle, str) else puzzle.name
    if name in DEFAULTS:
        return DEFAULTS[name]
    try:
        own = spec(name).defaults
    except UnknownNameError:  # a puzzle built directly, under a name nobody registered
        return FALLBACK_DEFAULTS
    return check_defaults(name, own) if own else FALLBACK_DEFAULTS


@dataclass(frozen=True)
class SolveOptions:
    """Fully resolved options of a solve call (names checked, defaults filled in)."""

    search: str
    heuristic: str | None
    model: str | None
    weight: float
    batch: int
    max_nodes: int | None
    time_limit: float
    max_steps: int
    #: one width, or the widths of an anytime schedule of beams (:attr:`Defaults.beam_width`)
    beam_width: int | tuple[int, ...] = 1000
    #: anytime: the ``(weight, batch)`` stages, run instead of ``weight``/``batch``; empty: off
    stages: tuple[tuple[float, int], ...] = ()
    #: the search run on states left unsolved (``Defaults.fallback``); ``None``: none
    fallback: str | None = None
    #: the goal searched for (a name of ``puzzle.goal_predicates()``); ``"solved"``: the puzzle's own
    goal: str = "solved"
    #: the :data:`OPTIONS` of the search and heuristic in use, ``(name, value)`` sorted by name,
    #: every one they take (defaults filled in)
    options: tuple[tuple[str, Any], ...] = ()
    #: seed 001's options (macro-actions): move sequences the search may take as one action
    #: (:mod:`puzzlezero.puzzles.macros`); empty: the puzzle's moves only
    macros: tuple[tuple[int, ...], ...] = ()
    #: the shortcut pass's bound on states a round (:attr:`Defaults.shortcut`); 0: off
    shortcut: int = 0

    def option(self, name: str) -> Any:
        """The value of option ``name`` (:data:`OPTIONS`), its default where not in :attr:`options`."""
        return dict(self.options).get(name, OPTIONS[name].default)


#: seconds of the time limit kept for the fallback search (at most a tenth of the limit): the
#: group solver answers any cube in about 0.25 s once its table is cached, reduction a 48-puzzle
#: board in about 0.7 s
FALLBACK_RESERVE = 2.0


# ---- tables of searches and heuristics ---------------------------------------------------------
class _GoalKw(TypedDict, total=False):
    """The goal keyword of a search call (:func:`_goal_kw`)."""

    is_goal: str


def _goal_kw(o: SolveOptions) -> _GoalKw:
    """The goal keyword of a search call: none for the puzzle's own goal (every search's default)."""
    return {} if o.goal == SOLVED else {"is_goal": o.goal}


def _imaged(
    fn: Callable,
    puzzle: Puzzle,
    states: np.ndarray,
    h: Heuristic | None,
    o: SolveOptions,
    *,
    grouped: bool = False,
    **settings: Any,
) -> Results:
    """One call of the search ``fn`` with ``settings`` and the options' limits and goal, or with the
    ``images`` option on the states and their first N images together, each state's shortest
    solution kept (:func:`~puzzlezero.search.images.with_images`). ``grouped``: ``fn`` takes the
    ``groups`` of the instances (which rows are guises of one state)."""

    def run(rows: np.ndarray, groups: np.ndarray | None = None) -> Results:
        group_kw = {"groups": groups} if grouped and groups is not None else {}
        return fn(
            puzzle,
            rows,
            h,
            max_nodes=o.max_nodes,
            time_limit=o.time_limit,
            **settings,
            **group_kw,
            **_goal_kw(o),
        )

    n_images = o.option("images")
    if not n_images:
        return run(states)
    from puzzlezero.search.images import with_images

    return with_images(run, puzzle, states, puzzle.image_names[:n_images])


def _run_bwas(fn: Callable, puzzle: Puzzle, states: np.ndarray, h: Heuristic, o: SolveOptions) -> Results:
    n_images = o.option("images")
    if o.stages and n_images:
        from puzzlezero.search.images import anytime_images

        images = puzzle.image_names[:n_images]
        threads, context = _search_threads(o)
        return anytime_images(
            fn,
            puzzle,
            states,
            h,
            o.stages,
            images=images,
            time_limit=o.time_limit,
            max_nodes=o.max_nodes,
            threads=threads,
            thread_context=context,
        )
    if o.stages:
        from puzzlezero.search.anytime import anytime

        return anytime(
            fn, puzzle, states, h, o.stages, time_limit=o.time_limit, max_nodes=o.max_nodes, **_goal_kw(o)
        )
    return _imaged(fn, puzzle, states, h, o, weight=o.weight, batch_size=o.batch)


def _search_threads(o: SolveOptions) -> tuple[int, Callable[[], Any]]:
    """How many searches may run side by side, and the context they run in: for a torch network
    (:attr:`HeuristicSpec.torch`), one per intra-op thread torch has, each with one thread (the
    cube's images: 1.3-1.4x the nodes a second of one search on two threads, docs/results.md);
    otherwise one."""
    spec = HEURISTICS.get(o.heuristic or "")
    if spec is None or not spec.torch:
        return 1, nullcontext
    from puzzlezero.nn import intra_op_threads, torch_threads

    return intra_op_threads(), partial(torch_threads, 1)


def reads_beam_width(search: str) -> bool:
    """Does the search of this :data:`SEARCHES` name read ``beam_width`` (beam, qbeam, pbeam)?"""
    return SEARCHES[search].run is _run_beam


def _run_gbfs(
    fn: Callable, puzzle: Puzzle, states: np.ndarray, h: Heuristic | None, o: SolveOptions
) -> Results:
    assert o.max_nodes is not None  # gbfs has node_cap: resolve_options fills in the puzzle's cap
    steps = min(o.max_steps, max(0, (o.max_nodes - 1) // puzzle.num_actions))
    return fn(puzzle, states, h, max_steps=steps, time_limit=o.time_limit, **_goal_kw(o))


def _run_beam(
    fn: Callable, puzzle: Puzzle, states: np.ndarray, h: Heuristic | None, o: SolveOptions
) -> Results:
    if isinstance(o.beam_width, int):
        return _imaged(fn, puzzle, states, h, o, beam_width=o.beam_width, max_steps=o.max_steps)
    from puzzlezero.search.anytime import anytime_beam

    def widths(
        puzzle: Puzzle,
        rows: np.ndarray,
        h: Heuristic | None,
        *,
        groups: np.ndarray | None = None,
        **limits: Any,
    ) -> Results:
        return anytime_beam(fn, puzzle, rows, h, o.beam_width, groups=groups, **limits)  # type: ignore[arg-type]

    return _imaged(widths, puzzle, states, h, o, grouped=True, max_steps=o.max_steps)


def _run_layered(fn: Callable, puzzle: Puzzle, states: np.ndarray, h: Any, o: SolveOptions) -> Results:
    """BWAS goal by goal (``h``: goal name -> heuristic, built by :func:`stage_heuristics`), each
    stage with the options' weight, batch and node cap, the time limit shared by the stages."""
    return fn(
        puzzle,
        states,
        h,
        goals=tuple(h),
        weight=o.weight,
        batch_size=o.batch,
        max_nodes=o.max_nodes,
        time_limit=o.time_limit,
    )


def _run_mcts(
    fn: Callable, puzzle: Puzzle, states: np.ndarray, h: Heuristic | None, o: SolveOptions
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
        time_limit=o.time_limit,
    )


def _run_each(
    fn: Callable, puzzle: Puzzle, states: np.ndarray, h: Heuristic | None, o: SolveOptions
) -> Results:
    return [fn(puzzle, s, time_limit=o.time_limit, max_nodes=o.max_nodes) for s in states]


@dataclass(frozen=True)
class SearchSpec:
    """A search by name: ``entry`` is ``"module:function"`` (or the function), ``run`` adapts the
    options to its signature; ``together`` is how many instances :func:`solve_many` searches in one
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


@dataclass(frozen=True)
class HeuristicSpec:
    """A heuristic by name: ``entry`` builds it, called as ``entry(puzzle, model)`` when
    ``uses_model`` else ``entry(puzzle)``, and returns ``states[B] -> float32[B]`` (``kind="value"``)
    or a Q function ``states[B] -> float32[B, A]`` (``kind="q"``) or a policy-value function
    ``states[B] -> (float32[B], float32[B, A])`` (``kind="policy_value"``, MCTS). The
    :data:`OPTIONS` named in ``options`` are passed to ``entry`` as keyword arguments. ``uses_goal``:
    it is called with ``goal=NAME`` too and estimates the cost to that goal (the others estimate the
    cost to the puzzle's own goal, whatever goal is searched for). ``torch``: it runs a network
    on torch's intra-op threads, so searches run side by side in threads (a state's images) give
    each thread one of them."""

    entry: str | Callable
    uses_model: bool = False
    description: str = ""
    kind: str = "value"
    uses_goal: bool = False
    options: tuple[str, ...] = ()
    torch: bool = False


@dataclass(frozen=True)
class OptionSpec:
    """An option of some searches or heuristics: ``solve(..., options={name: value})``, on the
    command line ``--name-with-dashes``. ``kind`` is ``float``, ``int`` or ``bool``; numbers must lie
    in ``[low, high]`` (``low`` excluded where ``above_low``)."""

    default: Any
    kind: type
    help: str
    low: float | None = None
    high: float | None = None
    above_low: bool = False

    def check(self, name: str, value: Any) -> Any:
        """``value`` as this option's kind; :class:`PuzzleError` names the option and the range."""
        flag = "--" + name.replace("_", "-")
        if self.kind is bool:
            if not isinstance(value, bool | np.bool_):
                raise PuzzleError(f"{flag} must be true or false, got {value!r}")
            return bool(value)
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise PuzzleError(f"{flag} must be a number, got {value!r}")
        if self.kind is int and int(value) != value:
            raise PuzzleError(f"{flag} must be an integer, got {value!r}")
        value = self.kind(value)
        low_bad = self.low is not None and (value < self.low or (self.above_low and value == self.low))
        if not np.isfinite(value) or low_bad or (self.high is not None and value > self.high):
            lo = "" if self.low is None else f"{'>' if self.above_low else '>='} {self.low:g}"
            hi = "" if self.high is None else f"<= {self.high:g}"
            raise PuzzleError(f"{flag} must be {' and '.join(x for x in (lo, hi) if x)}, got {value!r}")
        return value


def _option_table() -> dict[str, OptionSpec]:
    # NumPy only: the defaults live with the algorithms
    from puzzlezero.search.mcts import LEAVES, MAX_VALUE, VIRTUAL_LOSS, C
    from puzzlezero.search.wcd import DEPTH, MAX_DEPTH, MU

    return {
        "mcts_c": OptionSpec(C, float, "MCTS: PUCT exploration constant c, in moves", low=0.0),
        "mcts_leaves": OptionSpec(
            LEAVES, int, "MCTS: paths selected (leaves evaluated together) per iteration", low=1
        ),
        "mcts_virtual_loss": OptionSpec(
            VIRTUAL_LOSS, float, "MCTS: moves added to an edge per path in flight through it", low=0.0
        ),
        "mcts_max_value": OptionSpec(
            MAX_VALUE,
            bool,
            "MCTS: back up the least cost seen through an edge (max action value), not the mean",
        ),
        "policy_temperature": OptionSpec(
            1.0,
            float,
            "temperature T of the policy (MCTS prior, WCD weights): softmax(logits / T), "
            "softmax(-Q / T) or softmax(-(cost + h(child)) / T), in moves",
            low=0.0,
            above_low=True,
        ),
        "images": OptionSpec(
            0,
            int,
            "search the state's first N images too, the same problem in other guises (cubes: "
            "inverse, mirror, inverse-mirror; sliding puzzles: transpose), and keep the shortest "
            "solution: in an anytime schedule's stages after the first (BWAS, Q*), or as more "
            "instances of one search (beam search, one BWAS or Q* setting; images made from the "
            "state alone); 0: the state alone",
            low=0,
        ),
        "wcd_depth": OptionSpec(DEPTH, int, "WCD: convolution levels K", low=0, high=MAX_DEPTH),
        "wcd_mu": OptionSpec(MU, float, "WCD: weight mu of a state's own value", low=0.0, high=1.0),
    }


#: options of searches and heuristics by name (see :class:`OptionSpec`); each search or heuristic
#: lists the ones it reads (``SearchSpec.options``, ``HeuristicSpec.options``)
OPTIONS: dict[str, OptionSpec] = _option_table()


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
        "puzzlezero.optimal:solve_optimal",
        _run_each,
        False,
        1,
        "optimal solver (IDA*, GF(2))",
        node_cap=False,
    ),
    "kociemba": SearchSpec(
        "puzzlezero.optimal.kociemba_bridge:solve_kociemba",
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
        "layer by layer (seed 001): BWAS to each goal in turn (cube3: layer1, layer2, solved), one "
        "heuristic per goal (--model layer1=DIR,layer2=DIR,solved=DIR, or one multi-head model)",
        per_goal=True,
        macros=True,
        memory="puzzlezero.search.bwas:memory_estimate",
        # the seed's (lambda, B) = (0.2, 100); its 600,000 nodes per layer search left 6 of the first
        # 100 DeepCubeA test cubes unsolved with the shipped models, all in the last stage (the most
        # took 2.49M nodes, 44 s): 5M per stage and 120 s for the solve
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
        "puzzlezero.search.group:solve_group",
        _run_each,
        False,
        1,
        "Schreier-Sims stabilizer chain (permutation puzzles: cubes): any state, long solutions, no model",
        node_cap=False,
    ),
    "reduction": SearchSpec(
        "puzzlezero.search.reduction:solve_reduction",
        _run_each,
        False,
        1,
        "sliding puzzles: rows and columns home a pair of tiles at a time, each pair by breadth-first "
        "search; any board, 1.6-1.8 times the optimal length, no model",
        node_cap=False,
        memory="puzzlezero.search.reduction:memory_estimate",
    ),
}


def _load_net(puzzle: Puzzle, model: str | None) -> Any:
    from puzzlezero import nn  # torch: only when a learned heuristic is asked for

    try:
        net = nn.load_model(model or puzzle.name)
    except ModelFileError as exc:
        if model is not None:
            raise
        raise ModelFileError(
            f"{exc}. The learned heuristic needs a model: name a model or model folder (`model`, "
            f"--model on the command line), train one with `puzzlezero train {puzzle.name}`, or use "
            f"the pdb heuristic or the optimal search"
        ) from None
    return net


def learned_heuristic(
    puzzle: Puzzle, model: str | None, *, int8: bool = True, goal: str | None = None
) -> Heuristic:
    """The network heuristic: ``nn.make_heuristic(puzzle, nn.load_model(model or puzzle.name))``,
    with int8 linear layers by default (about 3x faster on a CPU, errors of a few hundredths;
    ``"learned-fp32"`` keeps float32); ``goal``: the cost-to-go to that goal (the model must have
    been trained for it: one head, or one of a multi-head network's)."""
    from puzzlezero import nn

    return nn.make_heuristic(puzzle, _value_net(puzzle, model), int8=int8, goal=goal)


def _value_net(puzzle: Puzzle, model: str | None) -> Any:
    """:func:`_load_net`, refusing a network whose card says its last training taught the policy
    only (``policy_only``: ``objective=efficientcube``, the value head never learned), with what to
    search it with."""
    net = _load_net(puzzle, model)
    if net.card.get("policy_only"):  # written by the trainer
        objective = (net.card.get("train_config") or {}).get("objective", "?")
        raise ModelFileError(
            f"this model was trained with objective={objective}: it has a policy but no value, "
            "so search it with its policy beam (--search pbeam)"
        )
    return net


def learned_q_function(puzzle: Puzzle, model: str | None, *, goal: str | None = None) -> Heuristic:
    """The network's Q head as a Q function (int8 inference): ``nn.make_q_function``; ``goal``
    must be the one the network was trained for (a Q head learns the cost to one goal)."""
    from puzzlezero import nn
    from puzzlezero.nn.heuristic import goal_column

    net = _value_net(puzzle, model)
    goal_column(puzzle, net, goal)  # another goal: ModelFileError naming the network's
    return nn.make_q_function(puzzle, net, int8=True)


def learned_policy_value(puzzle: Puzzle, model: str | None, *, policy_temperature: float = 1.0) -> Any:
    """The network as a policy-value function for MCTS (int8 inference): its value head and a
    policy from its policy head, else its Q head, else its value head on the children
    (``nn.make_policy_value``). A policy-only model is refused: MCTS backs up its values."""
    from puzzlezero import nn

    return nn.make_policy_value(puzzle, _value_net(puzzle, model), int8=True, temperature=policy_temperature)


def learned_policy(puzzle: Puzzle, model: str | None, *, policy_temperature: float = 1.0) -> Heuristic:
    """The network's move probabilities (int8 inference), as :func:`learned_policy_value` reads
    them, from any model, policy-only ones included: ``states[B] -> float32[B, A]``."""
    from puzzlezero import nn
    from puzzlezero.search.policy import policy_of

    net = _load_net(puzzle, model)
    return policy_of(nn.make_policy_value(puzzle, net, int8=True, temperature=policy_temperature))


def learned_wcd(
    puzzle: Puzzle,
    model: str | None,
    *,
    wcd_depth: int = 1,
    wcd_mu: float = 0.5,
    policy_temperature: float = 1.0,
) -> Heuristic:
    """The network's weighted convolutional distance (:func:`puzzlezero.search.wcd.wcd`, int8
    inference): ``d0`` its value head, the policy its policy or Q head (else from the children's
    values)."""
    from puzzlezero import nn
    from puzzlezero.search.wcd import wcd

    net = _value_net(puzzle, model)
    value = nn.make_heuristic(puzzle, net, int8=True)
    policy = nn.make_policy(puzzle, net, int8=True, temperature=policy_temperature)
    return wcd(puzzle, value, depth=wcd_depth, mu=wcd_mu, policy=policy, temperature=policy_temperature)


def learned_heuristic_fp32(puzzle: Puzzle, model: str | None, *, goal: str | None = None) -> Heuristic:
    """The network heuristic evaluated in float32 (slower, bit-faithful to the trained weights)."""
    return learned_heuristic(puzzle, model, int8=False, goal=goal)


def misplaced_heuristic(puzzle: Puzzle, *, goal: str = SOLVED) -> Heuristic:
    """How many of the goal's cells (stickers, tiles) are not yet right: ``Goal.misplaced`` of a
    goal made of positions, else (``"solved"``) of the whole state against ``puzzle.goal()``.
    Cheap, 0 at the goal (at ``goal()`` itself where a puzzle has several solved states), not
    admissible (one move fixes several cells): for tests, demos and sub-goals without a trained
    model."""
    target = puzzle.goal_named(goal)
    if target.positions is None:
        if target.name != SOLVED:
            raise PuzzleError(f"the misplaced heuristic needs a goal made of cells; {goal!r} is a test")
        whole = puzzle.goal().reshape(-1)
        target = Goal(SOLVED, "every cell", positions=np.arange(whole.size), values=whole)
    return target.misplaced


HEURISTICS: dict[str, HeuristicSpec] = {
    "learned": HeuristicSpec(
        learned_heuristic,
        uses_model=True,
        description="DeepCubeA cost-to-go network (int8 inference)",
        uses_goal=True,
        torch=True,
    ),
    "learned-fp32": HeuristicSpec(
        learned_heuristic_fp32,
        uses_model=True,
        description="DeepCubeA cost-to-go network (float32)",
        uses_goal=True,
        torch=True,
    ),
    "learned-q": HeuristicSpec(
        learned_q_function,
        uses_model=True,
        kind="q",
        description="the network's Q head (for Q*)",
        uses_goal=True,
        torch=True,
    ),
    "learned-onnx": HeuristicSpec(
        "puzzlezero.onnx:onnx_heuristic",
        uses_model=True,
        description="the network on onnxruntime (float32; the onnx extra): --model FILE.onnx, or a "
        "model folder's model.onnx, else its export cached on first use",
    ),
    "learned-onnx-q": HeuristicSpec(
        "puzzlezero.onnx:onnx_q_function",
        uses_model=True,
        kind="q",
        description="the network's Q head on onnxruntime (for Q*)",
    ),
    "learned-pv": HeuristicSpec(
        learned_policy_value,
        uses_model=True,
        kind="policy_value",
        description="the network's value head with a policy (policy head, else softmax(-Q / T)) (for MCTS)",
        options=("policy_temperature",),
    ),
    "learned-policy": HeuristicSpec(
        learned_policy,
        uses_model=True,
        kind="policy",
        description="the network's move probabilities: its policy head (else softmax(-Q / T), else "
        "of its values of the children) (for pbeam)",
        options=("policy_temperature",),
    ),
    "wcd": HeuristicSpec(
        learned_wcd,
        uses_model=True,
        description="weighted convolutional distance of the network (Yao and Lee 2024): --wcd-depth, "
        "--wcd-mu; the policy from its Q head",
        options=("wcd_depth", "wcd_mu", "policy_temperature"),
    ),
    "pdb": HeuristicSpec("puzzlezero.optimal:pdb_heuristic", description="pattern databases (admissible)"),
    "misplaced": HeuristicSpec(
        misplaced_heuristic,
        description="cells (stickers, tiles) of the goal not yet right: cheap, inadmissible, any goal",
        uses_goal=True,
    ),
}
#: names that stand for one network read as each kind of search needs it: Q* reads the Q head
BY_KIND: dict[str, dict[str, str]] = {
    "learned": {
        "value": "learned",
        "q": "learned-q",
        "policy_value": "learned-pv",
        "policy": "learned-policy",
    },
    "learned-onnx": {"value": "learned-onnx", "q": "learned-onnx-q"},
}
#: the heuristic a search of each kind gets for ``"learned"`` (the default)
LEARNED_BY_KIND = BY_KIND["learned"]


def resolve_entry(entry: str | Callable, what: str) -> Callable:
    """Import ``"module:attr"`` (or return a callable); a missing part raises :class:`PuzzleError`."""
    if callable(entry):
        return entry
    module, _, attr = entry.partition(":")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):  # the module itself (or a parent) is missing
            raise PuzzleError(f"{what} is not available: module {module} is not installed") from None
        raise
    except AttributeError:
        raise PuzzleError(f"{what} is not available: {module} has no {attr}") from None
    return obj


def _lookup(table: dict[str, Any], name: str, kind: str) -> Any:
    try:
        return table[name]
    except KeyError:
        raise UnknownNameError(f"unknown {kind} {name!r}; choose one of {', '.join(table)}") from None


# ---- results -----------------------------------------------------------------------------------
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
    #: shortcut pass (:mod:`puzzlezero.search.shortcut`); else ``None``
    search_length: int | None = None

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
        ``solution`` is the list of move names (``None`` when not solved)."""
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
        )


# ---- inputs ------------------------------------------------------------------------------------
def read_state(puzzle: Puzzle, state: str | np.ndarray | Sequence[int]) -> np.ndarray:
    """A checked state ``[*state_shape]``: text goes through ``puzzle.parse``, arrays through
    ``puzzle.validate``. Raises :class:`InvalidStateError` with the puzzle's reason."""
    if isinstance(state, str):
        return np.asarray(puzzle.parse(state), dtype=puzzle.dtype)
    try:
        raw = np.asarray(state)
        if (
            raw.dtype.kind not in "biu"
            or raw.size
            and (raw.min() < 0 or raw.max() > np.iinfo(puzzle.dtype).max)
        ):
            raise ValueError
    except (ValueError, TypeError):
        raise InvalidStateError(
            f"a {puzzle.name} state must be small non-negative integers, got {state!r}"
        ) from None
    if raw.shape != tuple(puzzle.state_shape):
        raise InvalidStateError(
            f"a {puzzle.name} state has shape {tuple(puzzle.state_shape)}, got {raw.shape}"
        )
    arr = raw.astype(puzzle.dtype)
    puzzle.validate(arr)
    return arr


def resolve_options(
    puzzle: Puzzle,
    *,
    search: str | None = None,
    heuristic: str | None = "learned",
    model: str | None = None,
    weight: float | None = None,
    batch: int | None = None,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    max_steps: int | None = None,
    beam_width: int | Sequence[int] | None = None,
    anytime: bool | None = None,
    stages: Sequence[tuple[float, int]] | None = None,
    fallback: bool | None = None,
    goal: str | None = None,
    options: Mapping[str, Any] | None = None,
    macros: Sequence[Sequence[int]] | None = None,
    shortcut: int | None = None,
) -> SolveOptions:
    """Check names and numbers and fill in the puzzle's :func:`defaults_for`. ``search=None`` is the
    puzzle's own (``Defaults.search``). ``anytime`` (``None``: on where the puzzle has a schedule)
    runs the puzzle's ``Defaults.stages`` for its own search, unless ``weight`` or ``batch`` names
    one setting; ``stages`` gives a schedule of one's own (for BWAS or Q*). ``fallback`` (``None``:
    on under the puzzle's own settings, where it has a ``Defaults.fallback``) runs that search on
    the states left unsolved, in the last seconds of the time limit. ``options``: values of
    :data:`OPTIONS` taken by the search or the heuristic (another is an error). ``goal`` (default
    ``"solved"``): a name of ``puzzle.goal_predicates()`` to search for instead of the puzzle's own
    goal (searches that take a goal: ``bwas``, ``qstar``, ``gbfs``, ``beam``, ``qbeam``).
    ``heuristic=None`` is the default heuristic, ``"learned"``. ``shortcut`` (``None``: the puzzle's
    own, under its own settings as for ``fallback``; 0: off) bounds the shortcut pass's rounds."""
    if heuristic is None:
        heuristic = "learned"
    d = defaults_for(puzzle)
    search = d.search if search is None else search
    spec = _lookup(SEARCHES, search, "search")
    if spec.defaults and search != d.search:
        d = replace(d, **dict(spec.defaults))
    goal = SOLVED if goal is None else goal
    puzzle.goal_named(goal)  # an unknown goal: UnknownNameError listing the puzzle's
    if goal != SOLVED and not spec.goals:
        takes = ", ".join(name for name, sp in SEARCHES.items() if sp.goals)
        raise PuzzleError(
            f"search {search} solves to the puzzle's own goal only; searches for {goal!r}: {takes}"
        )
    if (
        spec.needs_heuristic
        and heuristic is not None
        and heuristic not in HEURISTICS
        and ":" not in heuristic
    ):
        _lookup(HEURISTICS, heuristic, "heuristic")
    check_positive("weight", weight, allow_zero=True)
    check_positive("batch", batch, integer=True)
    check_positive("max_nodes", max_nodes, integer=True)
    check_positive("time_limit", time_limit)
    check_positive("max_steps", max_steps, integer=True)
    beam_width = None if beam_width is None else _widths(beam_width)
    if heuristic in BY_KIND:
        heuristic = BY_KIND[heuristic].get(spec.heuristic_kind, heuristic)
    chosen = _check_options(
        search, spec, heuristic if spec.needs_heuristic else None, options or {}, dict(d.options)
    )
    if stages is not None:
        if anytime is False or weight is not None or batch is not None or not spec.weighted:
            weighted = ", ".join(name for name, sp in SEARCHES.items() if sp.weighted)
            raise PuzzleError(f"stages are an anytime schedule of {weighted}, without --weight/--batch")
        from puzzlezero.search.anytime import check_stages

        stages = check_stages(stages)
    elif anytime is not False and weight is None and batch is None and search == d.search:
        stages = d.stages
    else:
        stages = ()
    if anytime and not stages:
        raise PuzzleError(
            f"no anytime schedule for {search} on {puzzle.name}: anytime solving runs the puzzle's "
            f"own search ({d.search}) without --weight/--batch"
            + ("" if d.stages else f", and {puzzle.name} has no schedule")
        )
    if fallback and (d.fallback is None or d.fallback == search):
        raise PuzzleError(
            f"no fallback search for {search} on {puzzle.name}"
            + (f" (its fallback is {d.fallback} itself)" if d.fallback else "")
        )
    # by default only under the puzzle's own settings: a named setting is measured as it is
    own = search == d.search and weight is None and batch is None and stages == d.stages and goal == SOLVED
    if fallback and goal != SOLVED:
        raise PuzzleError(f"the fallback search solves to the puzzle's own goal, not {goal!r}")
    use_fallback = fallback or (fallback is None and own)
    chosen = _check_images(
        puzzle,
        search,
        chosen,
        given=options or {},
        stages=stages,
        goal=goal,
        macros=bool(macros),
        own=search == d.search,
    )
    check_positive("shortcut", shortcut, integer=True, allow_zero=True)
    if shortcut is None:
        shortcut = d.shortcut if own else 0
    elif shortcut and not can_shortcut(puzzle):
        raise PuzzleError(
            f"shortcuts need moves that all have an inverse and cost the same; {puzzle.name}'s do not"
        )
    cap = (d.max_nodes if spec.node_cap else None) if max_nodes is None else max_nodes
    if max_nodes is None and cap is not None and reads_beam_width(search) and beam_width is not None:
        # a wider beam than the default's keeps the default's number of steps: the default node
        # cap grows with the width (the time limit still bounds it); a cap given is kept as given
        cap = max(cap, -(-cap * _widest(beam_width) // _widest(d.beam_width)))
        scaled = cap > d.max_nodes
    else:
        scaled = False
    opts = SolveOptions(
        search=search,
        heuristic=heuristic if spec.needs_heuristic else None,
        model=model,
        weight=d.weight if weight is None else float(weight),
        batch=d.batch if batch is None else batch,
        max_nodes=cap,
        time_limit=d.time_limit if time_limit is None else float(time_limit),
        max_steps=d.max_steps if max_steps is None else max_steps,
        beam_width=d.beam_width if beam_width is None else beam_width,
        stages=stages,  # type: ignore[arg-type]
        fallback=d.fallback if use_fallback else None,
        goal=goal,
        options=chosen,
        macros=_check_macros(puzzle, search, spec, macros),
        shortcut=shortcut,
    )
    if scaled and cap is not None:  # the scaled cap, within the memory budget (not below the puzzle's)
        from puzzlezero.budget import memory_budget
        from puzzlezero.search.beam import max_nodes_within

        room = memory_budget() - _network_bytes(spec, opts)
        cap = max(d.max_nodes, min(cap, max_nodes_within(puzzle, opts, room)))
        opts = replace(opts, max_nodes=cap)
    if max_nodes is None and opts.max_nodes is not None and spec.node_cap:
        opts = replace(opts, max_nodes=_cap_within_budget(puzzle, opts))
    return opts


#: the smallest node cap a default is lowered to for the memory budget (below it the search is
#: refused by :func:`check_memory` instead, naming what to lower)
MIN_BUDGET_NODES = 100_000


def _cap_within_budget(puzzle: Puzzle, o: SolveOptions) -> int:
    """A node cap that came from the puzzle's defaults, lowered where needed so that the search's
    memory estimate fits :func:`puzzlezero.budget.memory_budget` (a cap the caller gave is kept as
    given and refused by :func:`check_memory` when it does not fit). The estimates are worst cases
    (every node kept), so on a small machine a default solve runs with a smaller cap rather than
    being refused; the search then says ``node limit`` when it reaches it."""
    from puzzlezero.budget import memory_budget

    cap = o.max_nodes
    assert cap is not None
    room = memory_budget()
    if memory_estimate(puzzle, o.search, o) <= room:
        return cap
    lo, hi = 0, cap  # the largest cap whose estimate fits, by bisection (estimates grow with it)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if memory_estimate(puzzle, o.search, replace(o, max_nodes=mid)) <= room:
            lo = mid
        else:
            hi = mid - 1
    return lo if lo >= MIN_BUDGET_NODES else cap


def _widths(beam_width: int | Sequence[int]) -> int | tuple[int, ...]:
    """A beam width, or the widths of an anytime schedule of beams (two or more), checked."""
    from puzzlezero.search.anytime import check_widths

    widths = check_widths(beam_width)
    return widths[0] if len(widths) == 1 else widths


def _widest(beam_width: int | tuple[int, ...]) -> int:
    return beam_width if isinstance(beam_width, int) else max(beam_width)


def _check_images(
    puzzle: Puzzle,
    search: str,
    chosen: tuple[tuple[str, Any], ...],
    *,
    given: Mapping[str, Any],
    stages: Sequence[tuple[float, int]],
    goal: str,
    macros: bool = False,
    own: bool = True,
) -> tuple[tuple[str, Any], ...]:
    """The ``images`` option checked against the puzzle and the schedule. Images join an anytime
    schedule's later stages (their inverse is made from the first stage's solution), or without a
    schedule the one search as more instances where none of them needs a solution (the sliding
    puzzles' transpose, not the cube's inverse), and solve to the puzzle's own goal in its own
    moves: a puzzle's default is dropped where that does not hold, a value given is an error. A
    puzzle's default is for its own search (``own``), as measured (puzzle35: the beam search)."""
    n = dict(chosen).get("images", 0)
    if not n:
        return chosen
    why = None
    need_solution = [name for name in puzzle.image_names[:n] if name in puzzle.solution_images]
    if not own and "images" not in given:
        why = "the puzzle's own search"  # (never raised: only a default is dropped here)
    elif len(stages) == 1 or (not stages and need_solution):
        why = "an anytime schedule of two or more stages (the images join the stages after the first)" + (
            f"; the {need_solution[0]} image is made from its solution" if need_solution else ""
        )
    elif goal != SOLVED:
        why = f"the puzzle's own goal, not {goal!r}"
    elif macros:
        why = "the puzzle's own moves (no --macros: an image of a macro is not one of them)"
    elif n > len(puzzle.image_names):
        have = ", ".join(puzzle.image_names) or "none"
        why = f"at most {len(puzzle.image_names)} on {puzzle.name} (its images: {have})"
    if why is None:
        return chosen
    if "images" in given:
        raise PuzzleError(f"--images {n} with {search} needs {why}")
    return tuple((k, 0 if k == "images" else v) for k, v in chosen)


def _check_macros(
    puzzle: Puzzle, search: str, spec: SearchSpec, macros: Sequence[Sequence[int]] | None
) -> tuple[tuple[int, ...], ...]:
    """The options (macro-actions) as action-id tuples, checked; ``()`` for none."""
    if not macros:
        return ()
    if not spec.macros:
        takes = ", ".join(name for name, sp in SEARCHES.items() if sp.macros)
        raise PuzzleError(f"search {search} does not take options (macro-actions); searches that do: {takes}")
    from puzzlezero.puzzles.macros import MacroPuzzle

    return MacroPuzzle(puzzle, macros).macros  # checks lengths, move ids and repeats


def _check_options(
    search: str,
    spec: SearchSpec,
    heuristic: str | None,
    given: Mapping[str, Any],
    puzzle_defaults: Mapping[str, Any],
) -> tuple[tuple[str, Any], ...]:
    """Every option the search and heuristic take, checked, with defaults filled in (the puzzle's
    ``Defaults.options``, else the :data:`OPTIONS` table's)."""
    h_spec = HEURISTICS.get(heuristic) if heuristic else None
    takes = set(spec.options) | set(h_spec.options if h_spec else ())
    for name in given:
        if name not in OPTIONS:
            raise UnknownNameError(f"unknown option {name!r}; choose one of {', '.join(OPTIONS)}")
        if name not in takes:
            users = [f"search {n}" for n, sp in SEARCHES.items() if name in sp.options] + [
                f"heuristic {n}" for n, hs in HEURISTICS.items() if name in hs.options
            ]
            raise PuzzleError(
                f"--{name.replace('_', '-')} is an option of {' and '.join(users)}, not of search "
                f"{search}" + (f" with heuristic {heuristic}" if heuristic else "")
            )
    values = {n: OPTIONS[n].default for n in takes}
    values.update({n: v for n, v in puzzle_defaults.items() if n in takes})
    values.update(given)
    return tuple(sorted((n, OPTIONS[n].check(n, v)) for n, v in values.items()))


@lru_cache(maxsize=8)
def get_heuristic(
    puzzle: Puzzle,
    name: str,
    model: str | None = None,
    kind: str = "value",
    goal: str = SOLVED,
    options: tuple[tuple[str, Any], ...] = (),
) -> Heuristic:
    """The heuristic ``name`` for ``puzzle`` (a :data:`HEURISTICS` name or ``"module:factory"``),
    built once per process (a network is loaded once), as a search of ``kind`` calls it: a value
    heuristic asked for as a Q function becomes ``Q(s, a) = cost + h(A(s, a))``
    (:func:`~puzzlezero.search.qstar.q_from_value`); a Q function asked for as a value heuristic
    becomes ``min_a Q(s, a)``, 0 at goals; either asked for as a policy-value function (MCTS)
    gets a policy ``softmax(-Q / T)`` or ``softmax(-(cost + h(child)) / T)``
    (:mod:`puzzlezero.search.policy`). ``options``: :data:`OPTIONS` values, ``(name, value)``
    pairs; the factory gets those its :class:`HeuristicSpec` names. ``goal``: the goal searched
    for; heuristics that know goals (``uses_goal``: the learned ones, ``misplaced``) estimate the
    cost to it."""
    if name in HEURISTICS or ":" not in name:
        spec = _lookup(HEURISTICS, name, "heuristic")
    else:
        spec = HeuristicSpec(name)  # "module:factory", called as factory(puzzle)
    factory = resolve_entry(spec.entry, f"heuristic {name!r}")
    given = dict(options)
    kw = {n: given.get(n, OPTIONS[n].default) for n in spec.options}
    if spec.uses_goal and goal != SOLVED:
        kw["goal"] = goal
    fn = factory(puzzle, model, **kw) if spec.uses_model else factory(puzzle, **kw)
    if spec.kind == kind:
        return fn
    goal_test = puzzle.goal_test(goal)
    if spec.kind == "policy":
        raise PuzzleError(
            f"heuristic {name!r} gives move probabilities, which only a search over a policy (pbeam) "
            "can use; this search needs cost-to-go estimates"
        )
    if spec.kind == "policy_value":  # read as a value heuristic (then, if asked, as a Q function)
        pv = fn

        def fn(states: np.ndarray) -> np.ndarray:
            return np.asarray(pv(states)[0], dtype=np.float32)

        if kind == "value":
            return fn
    if kind in ("policy_value", "policy"):
        from puzzlezero.search import policy

        if spec.kind != "policy_value":
            temperature = given.get("policy_temperature", OPTIONS["policy_temperature"].default)
            if spec.kind == "q":
                pv = policy.policy_value_from_q(puzzle, fn, temperature)
            else:
                pv = policy.policy_value_from_heuristic(puzzle, fn, temperature)
        return pv if kind == "policy_value" else policy.policy_of(pv)
    if kind == "q":
        from puzzlezero.search.qstar import q_from_value

        return q_from_value(puzzle, fn, goal_test)

    def value_from_q(states: np.ndarray) -> np.ndarray:
        values = np.maximum(np.asarray(fn(states), dtype=np.float32).min(axis=1), 0.0)
        values[goal_test(states)] = 0.0
        return values

    return value_from_q


#: the folder of a puzzle's layered models when ``--model`` is not given: a shipped model (or
#: model folder) of this name, a multi-head model or one sub-folder per goal
LAYERED_MODEL = "{puzzle}-layered"
#: in a layered model folder: which model serves each goal (``{"layer1": "layer1", "solved": "cube3"}``)
STAGES_FILE = "stages.json"


def stage_models(puzzle: Puzzle, model: str | None, goals: Sequence[str]) -> dict[str, str]:
    """The model of each goal of a layered solve, from ``model``:

    * ``"layer1=DIR,layer2=DIR,solved=DIR"``: one model (folder or shipped name) per goal;
    * a model folder (or shipped name) with a ``config.json``: that model for every goal (a
      multi-head model with a head per goal);
    * a folder of sub-folders named after the goals (``DIR/layer1``, ``DIR/layer2``,
      ``DIR/solved``): each goal's own; or a folder with a ``stages.json`` naming each goal's model
      (a sub-folder, or any model name or folder: the shipped ``cube3-layered`` serves ``solved``
      with the shipped ``cube3``);
    * ``None``: the shipped ``<puzzle>-layered`` model, in either of the two forms above.

    A goal without a model raises :class:`ModelFileError` naming the ways to give one."""
    from pathlib import Path

    from puzzlezero.nn.io import CONFIG, resolve_model_dir

    if model is not None and "=" in model:
        out: dict[str, str] = {}
        for part in model.split(","):
            name, sep, where = part.partition("=")
            name, where = name.strip(), where.strip()
            if not sep or not name or not where:
                raise PuzzleError(f"--model: {part!r} is not GOAL=MODEL (e.g. layer1=runs/layer1-model)")
            puzzle.goal_named(name)
            out[name] = where
        missing = [g for g in goals if g not in out]
        if missing:
            raise ModelFileError(
                f"--model names no model for {', '.join(missing)}; a layered solve of {puzzle.name} "
                f"needs one for each of {', '.join(goals)} (or one multi-head model)"
            )
        return {g: out[g] for g in goals}
    name = model if model is not None else LAYERED_MODEL.format(puzzle=puzzle.name)
    try:
        folder = resolve_model_dir(name)
    except ModelFileError as exc:
        raise ModelFileError(
            f"{exc}. A layered solve of {puzzle.name} needs a cost-to-go to each of "
            f"{', '.join(goals)}: --model {','.join(g + '=DIR' for g in goals)} (train each with "
            f"`puzzlezero train {puzzle.name} --set goal=NAME`), a multi-head model (--set "
            f"goals={','.join(goals)} --set objective=multigoal), a folder of one sub-folder per "
            f"goal, or --heuristic misplaced to try it without models"
        ) from None
    if (folder / CONFIG).is_file():
        return {g: str(folder) for g in goals}
    if (folder / STAGES_FILE).is_file():
        return _stages_file(folder / STAGES_FILE, goals)
    per_goal = {g: Path(folder) / g for g in goals}
    missing = [g for g, sub in per_goal.items() if not (sub / CONFIG).is_file()]
    if missing:
        raise ModelFileError(
            f"{folder}: neither a model folder nor one sub-folder per goal (no model in "
            f"{', '.join(str(per_goal[g]) for g in missing)})"
        )
    return {g: str(sub) for g, sub in per_goal.items()}


def _stages_file(path: Any, goals: Sequence[str]) -> dict[str, str]:
    """A layered model folder's ``stages.json``: ``{goal: model}``, each model a sub-folder of that
    folder or any model name or folder (so that a shipped solved model serves without a copy)."""
    import json

    from puzzlezero.nn.io import resolve_model_dir

    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad UTF-8, JSON or numbers
        raise ModelFileError(f"{path}: not readable as JSON ({exc})") from None
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise ModelFileError(f'{path}: expected {{"GOAL": "MODEL", ...}}')
    missing = [g for g in goals if g not in table]
    if missing:
        raise ModelFileError(f"{path}: no model for {', '.join(missing)}")
    out = {}
    for g in goals:
        local = path.parent / table[g]
        out[g] = str(local) if local.is_dir() else str(resolve_model_dir(table[g]))
    return out


def stage_heuristics(
    puzzle: Puzzle, name: str, model: str | None, kind: str = "value"
) -> dict[str, Heuristic]:
    """One heuristic per goal of a layered solve, in solving order (``puzzle.goal_predicates()``):
    heuristic ``name`` with each goal's model (:func:`stage_models`) where it uses models."""
    goals = tuple(puzzle.goal_predicates())
    spec = HEURISTICS.get(name)
    if spec is not None and spec.uses_model:
        models: dict[str, str | None] = dict(stage_models(puzzle, model, goals))
    else:
        models = dict.fromkeys(goals, model)
    return {g: get_heuristic(puzzle, name, models[g], kind, g) for g in goals}


# ---- solving -----------------------------------------------------------------------------------
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


def solve(
    puzzle: str | Puzzle,
    state: str | np.ndarray | Sequence[int],
    *,
    model: str | None = None,
    search: str | None = None,
    heuristic: str = "learned",
    weight: float | None = None,
    batch: int | None = None,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    beam_width: int | Sequence[int] | None = None,
    anytime: bool | None = None,
    stages: Sequence[tuple[float, int]] | None = None,
    fallback: bool | None = None,
    goal: str | None = None,
    options: Mapping[str, Any] | None = None,
    macros: Sequence[Sequence[int]] | None = None,
    shortcut: int | None = None,
) -> SolveResult:
    """Solve one state (text, read by ``puzzle.parse``, or an array) and verify the solution.

    ``search``: a :data:`SEARCHES` name; ``heuristic``: a :data:`HEURISTICS` name or
    ``"module:factory"``; ``model``: a shipped model name or a model folder (default: the puzzle's
    name); ``beam_width``: the beam search's ``W``; ``anytime``: run the puzzle's schedule and
    keep the shortest solution, or ``stages`` of one's own; ``fallback``: a search that always
    answers for states left unsolved (see :func:`resolve_options`); ``options``: settings of the
    search or heuristic by :data:`OPTIONS` name (``{"mcts_c": 1.0}``, ``{"wcd_depth": 2}``).
    ``goal``: a goal name of the puzzle to solve to (``"layer1"``...; default its own). ``None``
    settings take the puzzle's :data:`DEFAULTS` (its own search included). ``search="layered"``
    solves to every goal in turn (``model``: see :func:`stage_models`). ``macros``: seed 001's
    options, move sequences (action ids) the search may take as one action
    (:func:`puzzlezero.puzzles.macros.read_macros` reads a file of them); the solution is given in
    the puzzle's own moves. ``shortcut``: the bound on states a round of the shortcut pass run on
    the solution (:mod:`puzzlezero.search.shortcut`; 0: none; ``None``: the puzzle's
    ``Defaults.shortcut``); its time counts in the result's ``seconds``.
    """
    return solve_many(
        puzzle,
        [state],
        model=model,
        search=search,
        heuristic=heuristic,
        weight=weight,
        batch=batch,
        max_nodes=max_nodes,
        time_limit=time_limit,
        beam_width=beam_width,
        anytime=anytime,
        stages=stages,
        fallback=fallback,
        goal=goal,
        options=options,
        macros=macros,
        shortcut=shortcut,
    )[0]


def solve_many(
    puzzle: str | Puzzle,
    states: Iterable[Any] | np.ndarray,
    *,
    model: str | None = None,
    search: str | None = None,
    heuristic: str = "learned",
    weight: float | None = None,
    batch: int | None = None,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    max_steps: int | None = None,
    beam_width: int | Sequence[int] | None = None,
    anytime: bool | None = None,
    stages: Sequence[tuple[float, int]] | None = None,
    fallback: bool | None = None,
    goal: str | None = None,
    options: Mapping[str, Any] | None = None,
    macros: Sequence[Sequence[int]] | None = None,
    shortcut: int | None = None,
    together: int | None = None,
    on_results: Callable[[list[SolveResult]], None] | None = None,
) -> list[SolveResult]:
    """Solve many states, ``together`` of them per search call (default: the search's own, 1 for
    BWAS). Instances of one call share expansions and heuristic calls, and ``time_limit`` applies
    to the call; each result's ``seconds`` is then the call's wall time divided by the number of
    instances (amortised), and exactly its own time when ``together == 1``. ``on_results`` is
    called after each call (progress bars)."""
    p = make(puzzle) if isinstance(puzzle, str) else puzzle
    opts = resolve_options(
        p,
        search=search,
        heuristic=heuristic,
        model=model,
        weight=weight,
        batch=batch,
        max_nodes=max_nodes,
        time_limit=time_limit,
        max_steps=max_steps,
        beam_width=beam_width,
        anytime=anytime,
        stages=stages,
        fallback=fallback,
        goal=goal,
        options=options,
        macros=macros,
        shortcut=shortcut,
    )
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
        t0 = time.perf_counter()
        found, rescued = _run_with_fallback(spec, fn, p, chunk, h, opts, sp)
        found, searched = _shortened(p, chunk, found, opts)
        wall = time.perf_counter() - t0
        results = _verified(
            p, chunk, found, searched, opts.search, wall if chunk.shape[0] > 1 else None, rescued, opts.goal
        )
        out.extend(results)
        if on_results is not None:
            on_results(results)
    return out


#: the estimate of a search that has none and no node cap (group, optimal, kociemba: their tables
#: are built ahead, ``puzzlezero pdb build``, and loaded as they are; the cube's group table takes
#: tens of KiB)
FIXED_SEARCH_BYTES = 256 << 20


def memory_estimate(p: Puzzle, search: str, o: SolveOptions, instances: int = 1) -> int:
    """Peak bytes of one call of ``search`` with options ``o`` on ``instances`` states: its
    :attr:`SearchSpec.memory` estimate, plus a network's batch where the heuristic is a network
    (:func:`puzzlezero.budget.check` compares it with the budget)."""
    from puzzlezero import budget

    spec = SEARCHES[search]
    if spec.memory is not None:
        out = int(resolve_entry(spec.memory, f"memory estimate of search {search!r}")(p, o, instances))
    elif spec.node_cap and o.max_nodes is not None:
        from puzzlezero.search.table import table_bytes

        out = table_bytes(budget.state_bytes(p), max(1, instances) * o.max_nodes)
    else:
        out = FIXED_SEARCH_BYTES
    return out + _network_bytes(spec, o)


def _network_bytes(spec: SearchSpec, o: SolveOptions) -> int:
    """What the search's heuristic adds at its peak: a network's batch, where it is a network."""
    from puzzlezero.budget import NETWORK_BATCH_BYTES

    h_spec = HEURISTICS.get(o.heuristic or "")
    uses_network = spec.needs_heuristic and o.heuristic and (h_spec is None or h_spec.uses_model)
    return NETWORK_BATCH_BYTES if uses_network else 0


def check_memory(p: Puzzle, o: SolveOptions, instances: int = 1) -> None:
    """Refuse, before anything is allocated, a solve whose search (on ``instances`` states a
    call), fallback search or shortcut pass would need more memory than the budget
    (:func:`puzzlezero.budget.memory_budget`): :class:`~puzzlezero.errors.MemoryBudgetError`
    names the estimate, the budget and the option to lower. They run one after the other, so
    each is checked on its own."""
    from puzzlezero import budget

    spec = SEARCHES[o.search]
    if reads_beam_width(o.search):
        what = f"{o.search} search of width {_widest(o.beam_width):,}"
    elif o.max_nodes is not None and spec.node_cap:
        what = f"{o.search} search of {o.max_nodes:,} nodes"
    else:
        what = f"{o.search} search"
    n = budget.guises(p, o)
    more = [f"{n} guises a state"] if n > 1 else []
    more += [f"{instances} states a call"] if instances > 1 else []
    what += f" on {p.name}" + (f" ({', '.join(more)})" if more else "")
    sp = p
    if o.macros:  # the search's actions: the moves and the macros
        from puzzlezero.puzzles.macros import MacroPuzzle

        sp = MacroPuzzle(p, o.macros)
    budget.check(memory_estimate(sp, o.search, o, instances), what, spec.memory_lower)
    if o.fallback is not None:
        fb = replace(o, search=o.fallback, heuristic=None, max_nodes=None, options=())
        budget.check(
            memory_estimate(p, o.fallback, fb), f"fallback search {o.fallback} on {p.name}", "--no-fallback"
        )
    if o.shortcut:
        from puzzlezero.search.shortcut import memory_estimate as shortcut_bytes

        budget.check(
            shortcut_bytes(p, o.shortcut), f"shortcut pass of {o.shortcut:,} states on {p.name}", "--shortcut"
        )


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
        spec.run(fn, p, start, h, replace(o, max_nodes=1 + 2 * p.num_actions, max_steps=1))
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
) -> tuple[Results, list[str | None]]:
    """Run the search (on ``sp``, the puzzle with options, where given; its results come back in
    ``p``'s moves); with ``o.fallback`` it gets the time limit less a reserve
    (:data:`FALLBACK_RESERVE`, at most a tenth), and the fallback search solves in the reserve what
    it left unsolved: its result then carries both searches' nodes and seconds. Returns the
    results and, for each, the fallback's name where the fallback found it."""
    sp = p if sp is None else sp
    if o.fallback is None:
        return _primitive(sp, spec.run(fn, sp, states, h, o)), [None] * states.shape[0]
    reserve = min(FALLBACK_RESERVE, 0.1 * o.time_limit)
    found = _primitive(sp, spec.run(fn, sp, states, h, replace(o, time_limit=o.time_limit - reserve)))
    rescued: list[str | None] = [None] * len(found)
    todo = [i for i, r in enumerate(found) if not r.solved]
    if todo:
        fb = SEARCHES[o.fallback]
        fb_fn = resolve_entry(fb.entry, f"fallback search {o.fallback!r}")
        rescue = fb.run(fb_fn, p, states[todo], None, replace(o, time_limit=reserve, max_nodes=None))
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


def _verified(
    p: Puzzle,
    states: np.ndarray,
    found: Results,
    searched: Sequence[int | None],
    search: str,
    wall: float | None,
    rescued: Sequence[str | None] | None = None,
    goal: str = SOLVED,
) -> list[SolveResult]:
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


def _shortened(
    p: Puzzle, states: np.ndarray, found: Results, o: SolveOptions
) -> tuple[Results, list[int | None]]:
    """Each solved path as the puzzle's algebra shortens it (``p.reduce_moves``), then the shortcut
    pass (``o.shortcut``, :mod:`puzzlezero.search.shortcut`, its rounds started within what is left
    of the time limit, its seconds added to the result's), with the search's own length where they
    did (else ``None``); layered results, whose stages must each end on their goal, as they are."""
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
            cut = find_shortcuts(
                p, start, short, max_states=o.shortcut, time_limit=max(0.0, o.time_limit - r.seconds)
            )
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


def _half_turn_length(p: Puzzle, r: SearchResult) -> int | None:
    """The search's own half-turn length (kociemba) or else the puzzle's count of its moves."""
    own = getattr(r, "half_turn_length", None)
    return int(own) if own is not None else p.half_turn_length(r.actions)
