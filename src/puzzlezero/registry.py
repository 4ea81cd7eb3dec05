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
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from puzzlezero.defaults import Defaults, check_defaults
from puzzlezero.errors import UnknownNameError
from puzzlezero.puzzles import base
from puzzlezero.puzzles.base import Puzzle

__all__ = ["DEFAULTS", "register", "make", "names", "spec", "is_registered", "PuzzleSpec"]


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


def spec(name: str) -> PuzzleSpec:
    """The :class:`PuzzleSpec` of ``name``; an unknown name raises :class:`UnknownNameError`
    listing the registered ones."""
    _load_plugins()
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


# The shipped puzzles, each with its search settings and one line of why (weights as in the
# DeepCubeA paper; its batch sizes N cut to what a CPU evaluates in about a second; the figures
# behind each choice: docs/results.md and docs/training.md).
register(
    "cube3",
    "puzzlezero.puzzles.cube:Cube3",
    "3x3x3 Rubik's cube, quarter-turn metric",
    # Q* on the model's Q head (one network call per expansion, not twelve); an anytime schedule
    # from lambda 0.1 (a first answer in seconds, hard cubes included) to 0.5/10000, the later
    # stages over the cube's three images too (each misjudged differently); the group solver for the rest
    defaults=Defaults(
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
)
register(
    "cube2",
    "puzzlezero.puzzles.cube:Cube2",
    "2x2x2 cube, quarter-turn metric",
    # a small cube: BWAS leaning on the network (lambda 0.9), the group solver for the rest
    defaults=Defaults(0.9, 300, 4_000_000, 60.0, 50, 1000, fallback="group"),
)
register(
    "cube3htm",
    "puzzlezero.puzzles.cube:Cube3HTM",
    "3x3x3 cube, half-turn metric",
    # cube3's schedule (its model has a Q head too); no images by default: 18 children an
    # expansion make their peak memory 2.7 times higher for half a move (--images 3)
    defaults=Defaults(
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
)
register(
    "puzzle8",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "8-puzzle (3x3), for tests and tables",
    # the paper's tile weight 0.8 with a small batch: boards are short
    defaults=Defaults(0.8, 100, 1_000_000, 60.0, 200, 100, fallback="reduction"),
    size=3,
)
register(
    "puzzle15",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "15-puzzle (4x4)",
    # the paper's tile weight 0.8, N 1000 for a CPU; reduction answers what is left
    defaults=Defaults(0.8, 1000, 3_000_000, 300.0, 500, 1000, fallback="reduction"),
    size=4,
)
register(
    "puzzle24",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "24-puzzle (5x5)",
    # BWAS 0.8/2000 over the board and its transpose in one call, the shorter kept (more optimal
    # solutions than the board alone at the same nodes)
    defaults=Defaults(
        0.8, 2000, 4_000_000, 300.0, 1000, 2000, fallback="reduction", options=(("images", 1),)
    ),
    size=5,
)
register(
    "puzzle35",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "35-puzzle (6x6)",
    # beam search over the board and its transpose (shorter than BWAS 0.6/6000, which --search bwas
    # keeps), a beam of 500 first so that a short time limit still gets an answer, then 5000
    defaults=Defaults(
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
    size=6,
)
register(
    "puzzle48",
    "puzzlezero.puzzles.npuzzle:NPuzzle",
    "48-puzzle (7x7)",
    # beam search (BWAS left boards unsolved), 500 then 5000 wide, on the board alone; 12M nodes
    # let the wide beam take its steps; shortcuts of 6M states a round cut its detours
    defaults=Defaults(
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
    size=7,
)
register(
    "lightsout7",
    "puzzlezero.puzzles.lightsout:LightsOut",
    "7x7 Lights Out",
    # the policy beam of the shipped policy model (every benchmark board solved, nearly all
    # optimally, in about a second); 3M nodes allow about 60 presses at W 1000; MCTS backs up the
    # least cost seen (it solved more boards than the mean)
    defaults=Defaults(
        0.2, 100, 3_000_000, 120.0, 100, 1000, search="pbeam", options=(("mcts_max_value", True),)
    ),
    size=7,
)
register(
    "sokoban",
    "puzzlezero.puzzles.sokoban:Sokoban",
    "Sokoban, 10x10 with 4 boxes (Boxoban)",
    # N 100 (one network call per 400 children; the same levels as N 10, faster); 5M nodes cover
    # the hardest benchmark levels, the 120 s bound the rest
    defaults=Defaults(0.8, 100, 5_000_000, 120.0, 500, 100),
    height=10,
    width=10,
    num_boxes=4,
)

#: the shipped puzzles' search settings by name (those registered above)
DEFAULTS: dict[str, Defaults] = {name: s.defaults for name, s in _REGISTRY.items() if s.defaults is not None}
