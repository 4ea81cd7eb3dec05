"""One registry of puzzles, by short stable names, with lazy entry points (Gymnasium style).

A puzzle is registered as ``"module:Class"`` (imported on first use) or as the class itself, with
the keyword arguments of its constructor; :func:`make` builds it once and caches it. Puzzles of
one's own register from outside the package, in a plugin (:mod:`puzzlezero.plugins`,
``docs/adding-a-puzzle.md``, loaded by ``--plugin`` or ``load_plugin``): the registry loads the
``puzzlezero.puzzles`` entry points, and in a process puzzlezero spawned the plugins of its parent,
before it answers a look-up.

>>> from puzzlezero import make, names
>>> "cube3" in names()
True
>>> make("puzzle15").state_shape
(16,)
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from puzzlezero.defaults import REDUCTION_SECONDS, ROLLOUT_SHORTCUT, ROLLOUT_WIDTHS, Defaults, check_defaults
from puzzlezero.errors import UnknownNameError
from puzzlezero.puzzles import base
from puzzlezero.puzzles.base import Puzzle

__all__ = [
    "DEFAULTS",
    "PuzzleSpec",
    "is_registered",
    "looks_like_definition",
    "make",
    "names",
    "register",
    "register_definition",
    "spec",
]


@dataclass(frozen=True)
class PuzzleSpec:
    """A registered puzzle: ``entry_point`` is ``"module:Class"`` or the class (any callable
    returning a :class:`Puzzle`), ``kwargs`` its arguments, ``defaults`` its search settings
    (:class:`~puzzlezero.defaults.Defaults`; ``None``: the fallback ones)."""

    name: str
    entry_point: str | Callable[..., Puzzle]
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    defaults: Defaults | None = None


_REGISTRY: dict[str, PuzzleSpec] = {}
_INSTANCES: dict[str, Puzzle] = {}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def register(
    name: str,
    entry_point: str | Callable[..., Puzzle],
    description: str = "",
    *,
    defaults: Defaults | Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Register a puzzle under ``name`` (idempotent for the same spec).

    Args:
        name: short stable name (letters, digits, ``_.-``; at most 64 characters), e.g. ``"pancake8"``.
        entry_point: ``"module:Class"`` (imported by :func:`make`) or the class itself.
        description: one line for ``puzzlezero list --json`` and the web page.
        defaults: search settings for this puzzle: a :class:`~puzzlezero.defaults.Defaults`, or
            some of its fields (``weight``, ``batch``, ``max_nodes``, ``time_limit``, ``max_steps``,
            ``beam_width`` or a list of widths, ``search``, ``stages``), the ones not given keeping
            the fallback values (:data:`~puzzlezero.defaults.FALLBACK_DEFAULTS`).
        **kwargs: arguments of the constructor (``size=4``).

    Raises ``ValueError`` for a bad name, unknown ``defaults`` fields, or a name registered already
    with another spec.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"puzzle name {name!r}: use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    if not isinstance(entry_point, str) and not callable(entry_point):
        raise ValueError(f"puzzle {name!r}: entry_point is 'module:Class' or a class, not {entry_point!r}")
    if isinstance(defaults, Defaults):
        settings: Defaults | None = defaults
    else:
        settings = check_defaults(name, defaults) if defaults else None
    spec_ = PuzzleSpec(name, entry_point, kwargs, description, settings)
    if name in _REGISTRY and _REGISTRY[name] != spec_:
        raise ValueError(
            f"puzzle {name!r} is already registered with another spec ({_REGISTRY[name].entry_point!r}); "
            "choose another name"
        )
    _REGISTRY[name] = spec_


def _load_plugins() -> None:
    from puzzlezero.plugins import load_configured

    load_configured()


def names() -> list[str]:
    """All registered puzzle names, in registration order (plugins after the built-in puzzles)."""
    _load_plugins()
    return list(_REGISTRY)


#: the file endings of puzzle definitions (a name ending so, or holding a path separator, is a file)
DEFINITION_SUFFIXES = (".json", ".g", ".gap")


def looks_like_definition(name: str) -> bool:
    """Whether ``name`` (given where a puzzle name goes) names a definition file rather than a
    registered puzzle: it ends in ``.json``, ``.g`` or ``.gap``, or holds a path separator."""
    return isinstance(name, str) and (
        name.lower().endswith(DEFINITION_SUFFIXES) or os.sep in name or "/" in name
    )


def register_definition(definition: Any, *, from_file: bool = True) -> str:
    """Register a permutation puzzle given as data (a checked
    :class:`~puzzlezero.puzzles.permutation.Definition`) under its own name, and return the name.
    Idempotent for the same definition; a name taken by another puzzle raises
    :class:`~puzzlezero.errors.DefinitionError`."""
    from puzzlezero.errors import DefinitionError
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle

    name = definition.name
    old = _REGISTRY.get(name)
    if old is not None:
        known = old.kwargs.get("definition")
        if known is None:  # a puzzle registered with the package (a generated family): its own
            known = getattr(make(name), "definition", None)
        if known == definition:
            return name
        raise DefinitionError(
            f"the definition {name!r} has other moves or another goal than the puzzle {name!r} registered "
            "already; give the file another name (its 'name' field)"
        )
    register(name, PermutationPuzzle, definition.description, definition=definition, from_file=from_file)
    return name


def _definition_file(path: str) -> str:
    """Read, check and register the definition file ``path``; its puzzle's name."""
    from puzzlezero.puzzles.permutation.files import load_definition

    if not os.path.isfile(path):
        raise UnknownNameError(
            f"no puzzle or definition file {path!r}: a definition file (.json, .g, .gap) must exist; "
            f"registered puzzles: {', '.join(_REGISTRY)}"
        )
    from puzzlezero.errors import DefinitionError

    defn = load_definition(path)  # a DefinitionError names the file
    try:
        return register_definition(defn)
    except DefinitionError as exc:  # its name is another puzzle's
        raise DefinitionError(f"{path}: {exc}") from None


def spec(name: str) -> PuzzleSpec:
    """The :class:`PuzzleSpec` of ``name``, which may also be a definition file's path (the file is
    read as data, checked and registered under its puzzle's name); an unknown name raises
    :class:`UnknownNameError` listing the registered ones."""
    _load_plugins()
    if name not in _REGISTRY and looks_like_definition(name):
        alias = name.replace("/", "-")  # a Santa 2023 type as the competition writes it: cube_4/4/4
        name = alias if alias in _REGISTRY and not os.path.exists(name) else _definition_file(name)
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownNameError(
            f"unknown puzzle {name!r}; registered puzzles: {', '.join(_REGISTRY)} (a puzzle of your "
            "own: load its file with --plugin FILE, docs/adding-a-puzzle.md)"
        ) from None


def make(name: str) -> Puzzle:
    """The puzzle registered as ``name`` (instances are cached: puzzles are immutable)."""
    s = spec(name)
    name = s.name  # a definition file's path: its puzzle's name
    if name not in _INSTANCES:
        if isinstance(s.entry_point, str):
            module, _, cls = s.entry_point.partition(":")
            factory = getattr(importlib.import_module(module), cls)
        else:
            factory = s.entry_point
        obj = factory(**s.kwargs)
        if not isinstance(obj, Puzzle):
            raise TypeError(f"puzzle {name!r}: {s.entry_point!r} made a {type(obj).__name__}, not a Puzzle")
        obj.name = name
        _INSTANCES[name] = obj
    return _INSTANCES[name]


def is_registered(puzzle: Puzzle) -> bool:
    """Whether ``puzzle`` is the instance :func:`make` returns for its name (such a puzzle is
    pickled as its name, so that other processes rebuild it from the registry)."""
    return _INSTANCES.get(puzzle.name) is puzzle


def _by_name(puzzle: Puzzle) -> tuple[Any, ...] | None:
    """How ``puzzle`` pickles: as its name where it is the registry's instance (see
    :meth:`Puzzle.__reduce_ex__`), so that a spawned process rebuilds it from the registry."""
    return (make, (puzzle.name,)) if is_registered(puzzle) else None


base.REBUILD_BY_NAME = _by_name


def rebuild_definition(data: dict[str, Any]) -> Puzzle:
    """The registry's instance of the puzzle a native definition describes, registered first where
    this process does not know it (how a puzzle defined by a file reaches a worker process: it
    pickles as its definition, which is data, see :data:`.base.REBUILD_FROM_DEFINITION`)."""
    from puzzlezero.puzzles.permutation.definition import Definition

    defn = Definition.from_dict(data, where=str(data.get("name", "definition")))
    return make(register_definition(defn))


base.REBUILD_FROM_DEFINITION = rebuild_definition


# The shipped puzzles with their search settings, a line of reason for each that has one.
# Weights are the DeepCubeA paper's; its batch sizes N are cut to what a CPU network evaluates in
# about a second. The measurements behind them: docs/measurements.md and docs/training.md.
_CUBE_STAGES = ((0.1, 1000), (0.3, 1000), (0.4, 3000), (0.5, 10_000))
register(
    "cube3",
    "puzzlezero.puzzles.cube:Cube3",
    "3x3x3 Rubik's cube, quarter-turn metric",
    defaults=Defaults(
        weight=0.3,  # one BWAS or Q* setting (--weight/--batch): lambda 0.3, N 1000
        batch=1000,
        max_nodes=10_000_000,
        time_limit=30.0,  # the schedule's first answer comes in seconds, its best within 30 s
        max_steps=100,
        beam_width=1000,  # --search beam: W 1000 solved every cube tried, wider beams took minutes
        search="qstar",  # the model has a Q head: one network call per expansion, not twelve
        stages=_CUBE_STAGES,  # lambda 0.1 first (it alone solves the hardest cubes), then stronger
        fallback="group",  # answers any cube in about 0.25 s
        options=(("images", 3),),  # later stages also search the inverse, mirror and inverse-mirror
        models=("cube3", "search:two-phase"),  # Kociemba's two-phase beside the network, the shorter kept
    ),
)
register(
    "cube2",
    "puzzlezero.puzzles.cube:Cube2",
    "2x2x2 cube, quarter-turn metric",
    defaults=Defaults(
        weight=0.9,  # a small cube: lean on the network
        batch=300,
        max_nodes=4_000_000,
        time_limit=60.0,
        max_steps=50,
        beam_width=1000,
        fallback="group",
    ),
)
register(
    "cube3htm",
    "puzzlezero.puzzles.cube:Cube3HTM",
    "3x3x3 cube, half-turn metric",
    defaults=Defaults(
        weight=0.3,
        batch=1000,
        max_nodes=10_000_000,
        time_limit=30.0,
        max_steps=100,
        beam_width=1000,
        search="qstar",  # its model has a Q head too: cube3's schedule
        stages=_CUBE_STAGES,  # no images: 18 moves make their peak memory 2.7x for half a move
        fallback="group",
    ),
)
register(
    "puzzle8",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "8-puzzle (3x3), for tests and tables",
    defaults=Defaults(
        weight=0.8,  # the paper's weight for tiles
        batch=100,  # short boards: a small batch
        max_nodes=1_000_000,
        time_limit=60.0,
        max_steps=200,
        beam_width=100,
        fallback="reduction",  # answers any board in well under a second
    ),
    size=3,
)
register(
    "puzzle15",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "15-puzzle (4x4)",
    defaults=Defaults(
        weight=0.8,  # the paper's weight for tiles
        batch=1000,
        max_nodes=3_000_000,
        time_limit=300.0,
        max_steps=500,
        beam_width=1000,
        fallback="reduction",
    ),
    size=4,
)
register(
    "puzzle24",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "24-puzzle (5x5)",
    defaults=Defaults(
        weight=0.8,
        batch=2000,
        max_nodes=4_000_000,
        time_limit=300.0,
        max_steps=1000,
        beam_width=2000,
        fallback="reduction",
        options=(("images", 1),),  # the board and its transpose in one call: more optimal solutions
    ),
    size=5,
)
register(
    "puzzle35",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "35-puzzle (6x6)",
    defaults=Defaults(
        weight=0.6,  # --search bwas: lambda 0.6, N 6000
        batch=6000,
        max_nodes=32_000_000,  # lets the W 20,000 beam take its steps
        # two minutes: the W 20,000 beam ends within it on a CPU with AVX-512 VNNI (at most 111 s);
        # where the network is slower (AVX2 only) the beam is narrowed to fit (docs/results.md)
        time_limit=120.0,
        max_steps=2000,
        beam_width=(500, 20_000),  # a beam of 500 answers within 5 s, then 20,000 (about 80 s)
        search="beam",  # shorter solutions than BWAS
        fallback="reduction",
        options=(("images", 1),),  # the board and its transpose, the shorter kept
    ),
    size=6,
)
register(
    "puzzle48",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "48-puzzle (7x7)",
    defaults=Defaults(
        weight=0.6,  # --search bwas: lambda 0.6, N 2000
        batch=2000,
        max_nodes=36_000_000,  # lets the W 15,000 beam take its steps
        # the beam until a quarter before it, then the shortcut and window passes: a median of
        # 91 s with AVX-512 VNNI, 105 s with AVX2 only (ids 0-19), the network half as fast (docs/results.md)
        time_limit=150.0,
        max_steps=3000,
        beam_width=(500, 15_000),  # a beam of 500 answers within 10 s, then 15,000 (about 90 s)
        search="beam",  # BWAS left boards unsolved
        fallback="reduction",
        shortcut=6_000_000,  # the beam's paths take detours that balls around them cut
        windows=60,  # and stretches of 60 moves that IDA* walks shorter
    ),
    size=7,
)
register(
    "lightsout7",
    "puzzlezero.puzzles.lightsout:LightsOut",
    "7x7 Lights Out",
    defaults=Defaults(
        weight=0.2,  # the paper's weight for Lights Out
        batch=100,
        max_nodes=3_000_000,  # about 60 presses at W 1000 (a board needs at most 49)
        time_limit=120.0,
        max_steps=100,
        beam_width=1000,  # solved every benchmark board, nearly all optimally, in about a second
        search="pbeam",  # the shipped model is a policy
        options=(("mcts_max_value", True),),  # MCTS: the least cost seen solved more than the mean
    ),
    size=7,
)
register(
    "sokoban",
    "puzzlezero.puzzles.sokoban:Sokoban",
    "Sokoban, 10x10 with 4 boxes (Boxoban)",
    defaults=Defaults(
        weight=0.8,  # one BWAS setting (--weight/--batch): the paper's weight for Sokoban
        batch=100,  # one network call per 400 children: faster than N 10, the same levels solved
        max_nodes=5_000_000,  # a stage's cap: the hardest benchmark levels took up to 2.2M
        time_limit=120.0,
        max_steps=500,
        beam_width=100,
        # lambda 0.3 first (it answers the long levels that 0.8 alone leaves at 60 s), then 0.8
        # bounded by that answer: every Boxoban level solved, more of them optimally
        stages=((0.3, 100), (0.8, 100)),
    ),
    height=10,
    width=10,
    num_boxes=4,
)

# Permutation puzzles generated by puzzlezero.puzzles.permutation.families: the Santa 2023
# competition's cubes, wreaths and globes, each with the competition's moves (every slice quarter
# turn of a cube is one move; no centre is fixed), sticker order and standard goal. The scramble
# depth of training states is about the depth at which random walks stop moving further away.
_PERMUTATION_FAMILIES = (
    # (competition type, description, training scramble depth)
    ("cube_2/2/2", "2x2x2 cube, every layer quarter turn a move (Santa 2023)", 20),
    ("cube_3/3/3", "3x3x3 cube, every slice quarter turn a move (Santa 2023)", 26),
    ("cube_4/4/4", "4x4x4 cube, every slice quarter turn a move (Santa 2023)", 45),
    ("cube_5/5/5", "5x5x5 cube, every slice quarter turn a move (Santa 2023)", 65),
    ("cube_6/6/6", "6x6x6 cube, every slice quarter turn a move (Santa 2023)", 85),
    ("cube_7/7/7", "7x7x7 cube, every slice quarter turn a move (Santa 2023)", 105),
    ("wreath_6/6", "two rings of 6 sharing 2 positions (Santa 2023 wreath)", 20),
    ("wreath_7/7", "two rings of 7 sharing 2 positions (Santa 2023 wreath)", 25),
    ("wreath_12/12", "two rings of 12 sharing 2 positions (Santa 2023 wreath)", 50),
    ("wreath_21/21", "two rings of 21 sharing 2 positions (Santa 2023 wreath)", 90),
    ("wreath_33/33", "two rings of 33 sharing 2 positions (Santa 2023 wreath)", 140),
    ("globe_1/8", "globe of 2 rings of 16, 8 flips (Santa 2023)", 60),
    ("globe_1/16", "globe of 2 rings of 32, 16 flips (Santa 2023)", 120),
    ("globe_2/6", "globe of 3 rings of 12, 6 flips (Santa 2023)", 40),
    ("globe_3/4", "globe of 4 rings of 8, 4 flips (Santa 2023)", 45),
    ("globe_6/4", "globe of 7 rings of 8, 4 flips (Santa 2023)", 70),
    ("globe_6/8", "globe of 7 rings of 16, 8 flips (Santa 2023)", 120),
    ("globe_6/10", "globe of 7 rings of 20, 10 flips (Santa 2023)", 150),
    ("globe_3/33", "globe of 4 rings of 66, 33 flips (Santa 2023)", 300),
    ("globe_8/25", "globe of 9 rings of 50, 25 flips (Santa 2023)", 300),
)
#: the families with a shipped model: their search settings (BWAS with the network); the others
#: answer with the group solver, which needs no model, its answer made shorter by rollouts over it
#: (``"rollout"``, :data:`~puzzlezero.defaults.ROLLOUT_WIDTHS`): a beam of 1,000, then of 10,000
#: (the 4x4x4: about 5 s, then the time limit), then the shortcut pass
_PERMUTATION_SEARCH: dict[
    str, tuple[float, int]
] = {  # (weight, batch): every benchmark state solved optimally
    "cube_2-2-2": (0.9, 300),
    "wreath_6-6": (0.6, 100),
    "wreath_7-7": (0.6, 100),
    "wreath_12-12": (0.8, 300),  # lambda 0.6 and N 100: 97% optimal
}
#: the globes with a shipped model: a beam of 1,000 answers at once, then a wider one (the
#: network's labels are random-walk lengths, which rank states well enough for a wide beam); the
#: shortcut pass then takes the beam's detours out (a round of at most 16 million states, about
#: 2 GB, reaches 4 moves around every state of a 60-move answer)
_PERMUTATION_BEAMS: dict[str, tuple[int, ...]] = {
    "globe_3-4": (1000, 30_000),
    "globe_1-8": (1000, 10_000),  # 20 moves and answers of about 50: a beam of 30,000 passes 60 s
    # the wider over the state and its upside-down image (_PERMUTATION_OPTIONS: images join a
    # schedule from its second beam); both over the two: 54.6 moves on 20 states against 55.5 for
    # a beam of 5,000 alone; 5,000 with the image ran out of time on one state
    "globe_6-4": (1000, 3000),
    # 30,000: 20-28 s a state (a beam of 10,000: 10-14 s, one answer longer); with the goal's
    # ball 45,000 fits as well (fitted to the time left where it does not)
    "globe_2-6": (1000, 45_000),
}
_GLOBE_SHORTCUT = 16_000_000
#: the search options of the competition's puzzles (puzzlezero.solver.OPTIONS): the globes whose
#: beams also search their first N images (puzzlezero.puzzles.permutation.symmetry), and the
#: beams that end at a ball around the goal (puzzlezero.search.goal_ball; 2 million states: every
#: state within 5 moves of the 3x3x3's goal, 774,132, grown in about 2 s)
_PERMUTATION_OPTIONS: dict[str, tuple[tuple[str, int], ...]] = {
    # the ball: every state within 5 moves, 1,115,511, about 5 s; ids 0-29, 59.8 -> 57.4 moves, 11
    # shorter and 1 longer (measured on a CPU without AVX-512, whose narrow beam takes 19 s of the 60)
    "globe_6-4": (("images", 1), ("goal_ball", 2_000_000)),
    "cube_3-3-3": (("goal_ball", 2_000_000),),  # ids 0-39: 23.75 -> 23.4 moves, median 44.3 -> 34.8 s
    "globe_2-6": (("goal_ball", 2_000_000),),  # within 5 moves: 443,588 states
}
#: the families guided by another puzzle's network (a heuristic of :mod:`puzzlezero.solver` that
#: reads their states as that puzzle's), with their search and its beams: the 3x3x3 by cube3's
#: network, a beam (20,000: about 35 s a state alone, fitted here to the time the beam is given)
#: and then cube3's own solve of its reading (puzzlezero.solver.cube3_route); no shortcut pass,
#: whose time (a quarter of the limit) the beam uses better: ids 0-19, 22.9 -> 22.6 moves
_PERMUTATION_VIEWS: dict[str, tuple[str, str, tuple[int, ...]]] = {
    "cube_3-3-3": ("cube3-view", "cube3-route", (1000, 20_000)),
}
#: the families solved by reduction to the 3x3x3 (puzzlezero.classic.cube_reduction and
#: cube5_reduction, then cube3's solve) in REDUCTION_SECONDS, with the group solver as the fallback
_PERMUTATION_REDUCED = ("cube_4-4-4", "cube_5-5-5")
#: the families solved orbit by orbit with commutators (puzzlezero.classic.cube_commutators), the
#: group solver their fallback: on 10 states 100-200 turns deep, 658.5 and 925.9 moves in 1-2 s,
#: where the rollout took 60 s for 726.7 and 1,085.3 (ids 0-2; the commutators 643.3 and 929.3)
_PERMUTATION_COMMUTATORS = ("cube_6-6-6", "cube_7-7-7")
for _type, _description, _depth in _PERMUTATION_FAMILIES:
    _name = _type.replace("/", "-")
    _own = _PERMUTATION_SEARCH.get(_name)
    _view = _PERMUTATION_VIEWS.get(_name)
    _beam = _view[2] if _view else _PERMUTATION_BEAMS.get(_name)
    _reduced = _name in _PERMUTATION_REDUCED
    _commutators = _name in _PERMUTATION_COMMUTATORS
    if _view:
        _search = _view[1]
    elif _beam:
        _search = "beam"
    else:
        _search = (
            "bwas"
            if _own
            else "cube-reduction"
            if _reduced
            else "cube-commutators"
            if _commutators
            else "rollout"
        )
    register(
        _name,
        "puzzlezero.puzzles.permutation:family_puzzle",
        _description,
        defaults=Defaults(
            weight=_own[0] if _own else 0.6,
            batch=_own[1] if _own else 1000,
            # the 3x3x3's: the two-phase search beside its routes generates about 15 million a second
            max_nodes=2_000_000_000 if _view else 200_000_000 if _beam else 4_000_000,
            time_limit=REDUCTION_SECONDS if _reduced else 60.0,
            max_steps=1000,
            beam_width=_beam or (1000 if _own else ROLLOUT_WIDTHS),
            # no shipped model: the group solver answers every state, rollouts shorten its answer
            search=_search,
            # the group solver where a search may leave a state (its table ships for these)
            fallback="group" if _own or _beam or _reduced or _commutators else None,
            shortcut=0
            if _view or _commutators
            else _GLOBE_SHORTCUT
            if _beam
            else 0
            if _own
            else ROLLOUT_SHORTCUT,
            heuristic=_view[0] if _view else "learned",
            options=_PERMUTATION_OPTIONS.get(_name, ()),
        ),
        puzzle_type=_type,
        scramble_depth=_depth,
    )

#: the shipped puzzles' search settings by name (those registered above)
DEFAULTS: dict[str, Defaults] = {name: s.defaults for name, s in _REGISTRY.items() if s.defaults is not None}
