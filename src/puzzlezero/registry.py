"""One registry of puzzles, by short stable names, with lazy entry points (Gymnasium style).

>>> from puzzlezero import make, names
>>> "cube3" in names()
True
>>> make("puzzle15").state_shape
(16,)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from puzzlezero.errors import UnknownNameError
from puzzlezero.puzzles.base import Puzzle

__all__ = ["register", "make", "names", "PuzzleSpec"]


@dataclass(frozen=True)
class PuzzleSpec:
    """A registered puzzle: ``entry_point`` is ``"module:Class"``, ``kwargs`` its arguments."""

    name: str
    entry_point: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""


_REGISTRY: dict[str, PuzzleSpec] = {}


def register(name: str, entry_point: str, description: str = "", **kwargs: Any) -> None:
    """Register a puzzle class under ``name`` (idempotent for the same spec)."""
    spec = PuzzleSpec(name, entry_point, kwargs, description)
    if name in _REGISTRY and _REGISTRY[name] != spec:
        raise ValueError(f"puzzle {name!r} is already registered with another spec")
    _REGISTRY[name] = spec


def names() -> list[str]:
    """All registered puzzle names, in registration order."""
    return list(_REGISTRY)


def spec(name: str) -> PuzzleSpec:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError(
            f"unknown puzzle {name!r}; registered puzzles: {', '.join(_REGISTRY)}"
        ) from None


@cache
def make(name: str) -> Puzzle:
    """The puzzle registered as ``name`` (instances are cached: puzzles are immutable)."""
    s = spec(name)
    module, _, cls = s.entry_point.partition(":")
    obj = getattr(importlib.import_module(module), cls)(**s.kwargs)
    obj.name = name
    return obj


register("cube3", "puzzlezero.puzzles.cube:Cube3", "3x3x3 Rubik's cube, quarter-turn metric")
register("cube2", "puzzlezero.puzzles.cube:Cube2", "2x2x2 cube, quarter-turn metric")
register("puzzle8", "puzzlezero.puzzles.npuzzle:NPuzzle", "8-puzzle (3x3), for tests and tables", size=3)
register("puzzle15", "puzzlezero.puzzles.npuzzle:NPuzzle", "15-puzzle (4x4)", size=4)
register("puzzle24", "puzzlezero.puzzles.npuzzle:NPuzzle", "24-puzzle (5x5)", size=5)
register("puzzle35", "puzzlezero.puzzles.npuzzle:NPuzzle", "35-puzzle (6x6)", size=6)
register("puzzle48", "puzzlezero.puzzles.npuzzle:NPuzzle", "48-puzzle (7x7)", size=7)
register("lightsout7", "puzzlezero.puzzles.lightsout:LightsOut", "7x7 Lights Out", size=7)
register("sokoban", "puzzlezero.puzzles.sokoban:Sokoban", "Sokoban, 10x10 with 4 boxes (Boxoban)", height=10, width=10, num_boxes=4)
