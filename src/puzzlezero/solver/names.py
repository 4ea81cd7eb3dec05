"""What the solver's tables are made of: ``"module:function"`` entries imported on first use,
look-ups that list the valid names, and the types of heuristics and search results."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError, UnknownNameError
from puzzlezero.search.result import SearchResult

Heuristic = Callable[[np.ndarray], np.ndarray]
Results = list[SearchResult]


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


def lookup(table: dict[str, Any], name: str, kind: str) -> Any:
    try:
        return table[name]
    except KeyError:
        raise UnknownNameError(f"unknown {kind} {name!r}; choose one of {', '.join(table)}") from None


def check_new_name(table: dict[str, Any], name: str, kind: str, replace: bool) -> None:
    """A name about to be registered in ``table`` (a search's, a heuristic's): letters, digits,
    ``-`` and ``_`` (so never ``module:function``), and not taken unless ``replace``; else a
    :class:`PuzzleError` naming the ``kind``."""
    if not name or ":" in name or not name.replace("-", "").replace("_", "").isalnum():
        raise PuzzleError(f"a {kind}'s name is letters, digits, - and _, got {name!r}")
    if name in table and not replace:
        raise PuzzleError(f"a {kind} named {name!r} is already registered (replace=True to take its place)")
