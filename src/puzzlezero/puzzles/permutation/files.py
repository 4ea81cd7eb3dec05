"""Definition files of every supported format, told apart by their content and read as data.

A file of this project's format (a JSON object with ``format``), a CayleyPy generator file
(``actions`` and ``names``), cubing.js KPuzzle JSON (``orbits`` and ``moves``) or GAP generators in
cycle notation (text with ``:=``) becomes the fields of the native format
(:mod:`.definition`), which :func:`load_definition` then checks. Files are read up to
:data:`MAX_FILE_BYTES`; a key given twice, deep nesting and text that is not UTF-8 are refused by
name, never run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from puzzlezero.errors import DefinitionError
from puzzlezero.puzzles.permutation import cayleypy, gap, kpuzzle
from puzzlezero.puzzles.permutation.definition import NAME_PATTERN, Definition, refuse_repeated_keys

__all__ = ["MAX_FILE_BYTES", "definition_format", "load_definition", "read_definition"]

#: the largest definition file read (a 33x33x33 cube's moves are about 9 MB of JSON)
MAX_FILE_BYTES = 64 * 1024 * 1024


def definition_format(data: Any, text: str | None = None) -> str:
    """Which format a file's content is in: ``"native"``, ``"cayleypy"`` (``actions`` and
    ``names``), ``"kpuzzle"`` (``orbits`` and ``moves``) or ``"gap"`` (cycle notation text)."""
    if isinstance(data, Mapping):
        if "format" in data:
            return "native"
        if "actions" in data and "names" in data:
            return "cayleypy"
        if "orbits" in data and "moves" in data:
            return "kpuzzle"
    if data is None and text is not None and ":=" in text:
        return "gap"
    raise DefinitionError(
        "not a puzzle definition: expected this project's JSON (with 'format'), a CayleyPy generator file "
        "('actions' and 'names'), cubing.js KPuzzle JSON ('orbits' and 'moves') or GAP generators in cycle notation"
    )


def read_definition(path: str | os.PathLike[str], name: str | None = None) -> dict[str, Any]:
    """A definition file of any supported format, as a native JSON object (not yet checked:
    :func:`load_definition` checks it). ``name`` overrides the puzzle's name (default: the file's
    own, else the file name without its extension)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise DefinitionError(f"{p}: {size} bytes; a definition file may have at most {MAX_FILE_BYTES}")
        raw = p.read_bytes()
    except OSError as exc:
        raise DefinitionError(f"{p}: cannot read the definition: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DefinitionError(f"{p}: not UTF-8 text") from None
    stem = p.name.split(".")[0]
    default_name = stem if NAME_PATTERN.fullmatch(stem) else "puzzle"
    data: Any = None
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text, object_pairs_hook=refuse_repeated_keys())
        except json.JSONDecodeError as exc:
            raise DefinitionError(f"{p}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise DefinitionError(f"{p}: its JSON nests too deeply to be a definition") from None
        except DefinitionError as exc:
            raise DefinitionError(f"{p}: {exc}") from None
    try:
        kind = definition_format(data, text)
    except DefinitionError as exc:
        raise DefinitionError(f"{p}: {exc}") from None
    if kind == "native":
        out = dict(data)
        if name is not None:
            out["name"] = name
        return out
    if kind == "cayleypy":
        return cayleypy.read(data, name=name or default_name, source=p.name)
    if kind == "kpuzzle":
        own = data.get("name")
        return kpuzzle.read(
            data,
            name=name or (own if isinstance(own, str) and NAME_PATTERN.fullmatch(own) else default_name),
            source=p.name,
        )
    try:
        return gap.read(text, name=name or default_name, source=p.name)
    except RecursionError:
        raise DefinitionError(f"{p}: its expressions nest too deeply to be GAP generators") from None


def load_definition(path: str | os.PathLike[str], name: str | None = None) -> Definition:
    """Read and check a definition file of any supported format (:func:`read_definition`)."""
    return Definition.from_dict(read_definition(path, name), where=Path(path).name)
