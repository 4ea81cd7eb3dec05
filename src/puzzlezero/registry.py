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

from puzzlezero.errors import UnknownNameError
from puzzlezero.puzzles.base import Puzzle

__all__ = ["register", "make", "names", "spec", "is_registered", "PuzzleSpec"]


@dataclass(frozen=True)
class PuzzleSpec:
    """A registered puzzle: ``entry_point`` is ``"module:Class"`` or the class (any callable
    returning a :class:`Puzzle`), ``kwargs`` its arguments, ``defaults`` the solver settings that
    replace the fallback ones for it (fields of :class:`puzzlezero.solver.Defaults`)."""

    name: str
    entry_point: str | Callable[..., Puzzle]
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    defaults: dict[str, Any] = field(default_factory=dict)


_REGISTRY: dict[str, PuzzleSpec] = {}
_INSTANCES: dict[str, Puzzle] = {}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def register(
    name: str,
    entry_point: str | Callable[..., Puzzle],
    description: str = "",
    *,
    defaults: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Register a puzzle under ``name`` (idempotent for the same spec).

    Args:
        name: short stable name (letters, digits, ``_.-``; at most 64 characters), e.g. ``"pancake8"``.
        entry_point: ``"module:Class"`` (imported by :func:`make`) or the class itself.
        description: one line for ``puzzlezero list --json`` and the web page.
        defaults: solver settings for this puzzle, fields of :class:`puzzlezero.solver.Defaults`
            (``weight``, ``batch``, ``max_nodes``, ``time_limit``, ``max_steps``, ``beam_width``
            or a list of widths, ``search``, ``stages``); the ones not given keep the solver's
            fallback values.
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
    if defaults:
        from puzzlezero.solver import check_defaults  # the solver owns the fields

        check_defaults(name, defaults)
    spec_ = PuzzleSpec(name, entry_point, kwargs, description, dict(defaults or {}))
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


register("cube3", "puzzlezero.puzzles.cube:Cube3", "3x3x3 Rubik's cube, quarter-turn metric")
register("cube2", "puzzlezero.puzzles.cube:Cube2", "2x2x2 cube, quarter-turn metric")
register("cube3htm", "puzzlezero.puzzles.cube:Cube3HTM", "3x3x3 cube, half-turn metric")
register("puzzle8", "puzzlezero.puzzles.npuzzle:NPuzzle", "8-puzzle (3x3), for tests and tables", size=3)
register("puzzle15", "puzzlezero.puzzles.npuzzle:NPuzzle", "15-puzzle (4x4)", size=4)
register("puzzle24", "puzzlezero.puzzles.npuzzle:NPuzzle", "24-puzzle (5x5)", size=5)
register("puzzle35", "puzzlezero.puzzles.npuzzle:NPuzzle", "35-puzzle (6x6)", size=6)
register("puzzle48", "puzzlezero.puzzles.npuzzle:NPuzzle", "48-puzzle (7x7)", size=7)
register("lightsout7", "puzzlezero.puzzles.lightsout:LightsOut", "7x7 Lights Out", size=7)
register(
    "sokoban",
    "puzzlezero.puzzles.sokoban:Sokoban",
    "Sokoban, 10x10 with 4 boxes (Boxoban)",
    height=10,
    width=10,
    num_boxes=4,
)
