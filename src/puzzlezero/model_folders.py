"""Where model folders are found by name, without importing any network library.

A model folder holds ``config.json`` (how to rebuild the network), its weights and ``card.json``
(how it was trained and how well it does). A bare name is looked up in order:

1. ``puzzlezero/models/``: the default model of every registered puzzle, in the core package;
2. the model folders of installed companion distributions, each of which names a package holding
   model folders under the entry point group :data:`ENTRY_POINT_GROUP` (the research models,
   ``pip install puzzlezero-research-models``: ``cube3-adi``, ``cube3-selfplay``,
   ``cube3-layered``).

Anything else (a path) is a folder given by the user and is taken as it is.

>>> "cube3" in shipped_models()
True
>>> resolve_model_dir("cube3").name
'cube3'
"""

from __future__ import annotations

import os
from importlib import metadata, resources
from pathlib import Path

from puzzlezero.errors import ModelFileError

__all__ = [
    "COMPANION",
    "ENTRY_POINT_GROUP",
    "find_model_dir",
    "is_bare_name",
    "model_roots",
    "resolve_model_dir",
    "shipped_models",
]

#: the entry point group under which a distribution names a package of model folders
ENTRY_POINT_GROUP = "puzzlezero.models"
#: the companion distribution of this repository, and the models it holds
COMPANION = ("puzzlezero-research-models", ("cube3-adi", "cube3-layered", "cube3-selfplay"))
_CONFIG = "config.json"
_STAGES = "stages.json"


def model_roots() -> list[Path]:
    """The folders bare model names are looked up in: the core package's ``models/``, then each
    installed companion's package (entry points of :data:`ENTRY_POINT_GROUP`, by name)."""
    roots = [Path(str(resources.files("puzzlezero") / "models"))]
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            root = Path(str(resources.files(ep.value)))
        except (ModuleNotFoundError, TypeError, ValueError):
            continue  # a broken or half-removed install: its models are simply not found
        if root.is_dir() and root not in roots:
            roots.append(root)
    return roots


def _is_model(folder: Path) -> bool:
    return (folder / _CONFIG).is_file() or (folder / _STAGES).is_file()


def shipped_models() -> list[str]:
    """Names of the installed model folders (the core package's and every companion's)."""
    names: set[str] = set()
    for root in model_roots():
        if root.is_dir():
            names.update(p.name for p in root.iterdir() if p.is_dir() and _is_model(p))
    return sorted(names)


def is_bare_name(text: str) -> bool:
    """Whether ``text`` names an installed model rather than a path (no separator, no leading dot)."""
    return os.sep not in text and "/" not in text and not text.startswith(".")


def find_model_dir(name: str) -> Path | None:
    """The installed model folder called ``name`` (:func:`model_roots`, first found), else ``None``."""
    if not is_bare_name(name):
        return None
    for root in model_roots():
        if (root / name).is_dir() and _is_model(root / name):
            return root / name
    return None


def resolve_model_dir(name_or_path: str | os.PathLike[str]) -> Path:
    """A model folder: an existing path as given, else a bare name among the installed models
    (:func:`model_roots`, first found). Raises :class:`ModelFileError` naming what is installed,
    and the companion distribution when the name is one of its models."""
    path = Path(name_or_path)
    if path.is_dir():
        return path
    text = os.fspath(name_or_path)
    if not is_bare_name(text):
        raise ModelFileError(f"{path}: no such model folder")
    found = find_model_dir(text)
    if found is not None:
        return found
    companion, held = COMPANION
    if text in held:
        raise ModelFileError(
            f"the model {text!r} is one of the research models, which are not installed: "
            f"pip install {companion}"
        )
    names = ", ".join(shipped_models()) or "none yet"
    raise ModelFileError(f"no model folder {text!r}: not a directory and not an installed model ({names})")
