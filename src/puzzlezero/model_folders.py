"""Where model folders are found by name, without importing any network library.

A model folder holds ``config.json`` (how to rebuild the network), its weights and ``card.json``
(how it was trained and how well it does). A bare name is looked up in order:

1. ``puzzlezero/models/``: the default model of every registered puzzle, in the core package;
2. the model folders of installed companion distributions, each of which names a package holding
   model folders under the entry point group :data:`ENTRY_POINT_GROUP` (the research models,
   ``pip install puzzlezero-research-models``: ``cube3-adi``, ``cube3-selfplay``,
   ``cube3-layered``).

A bare name (no path separator, not starting with ``.``) always means an installed model, never a
folder of the working directory: a folder ``./cube3`` does not replace the shipped ``cube3``. A
folder of one's own is given as a path (``./cube3``, ``runs/x/model``, ``/abs/path``, or a
:class:`~pathlib.Path` object) and is taken as it is.

An *ensemble folder* holds several networks of one puzzle for a search to run side by side
(:mod:`puzzlezero.search.ensemble`): ``ensemble.json``, ``{"members": ["a", "b"]}``, names
sub-folders of it, each a model folder (:func:`ensemble_members`). The names are data: each is a
plain folder name inside the ensemble folder, checked before anything is read.

>>> "cube3" in shipped_models()
True
>>> resolve_model_dir("cube3").name
'cube3'
"""

from __future__ import annotations

import json
import os
import re
from importlib import metadata, resources
from pathlib import Path

from puzzlezero.errors import ModelFileError

__all__ = [
    "COMPANION",
    "ENSEMBLE_FILE",
    "ENTRY_POINT_GROUP",
    "ensemble_members",
    "find_model_dir",
    "is_bare_name",
    "model_roots",
    "resolve_model_dir",
    "shipped_models",
]

#: the entry point group under which a distribution names a package of model folders
ENTRY_POINT_GROUP = "puzzlezero.models"
#: the companion distribution of this repository, and the models it holds
COMPANION = ("puzzlezero-research-models", ("cube3-adi", "cube3-layered", "cube3-selfplay", "cube_4-4-4"))
_CONFIG = "config.json"
_STAGES = "stages.json"
#: the file that makes a folder an ensemble of the model folders it names
ENSEMBLE_FILE = "ensemble.json"
_MEMBER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_MAX_ENSEMBLE_BYTES = 1 << 20  # a list of folder names: far less


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
    return any((folder / f).is_file() for f in (_CONFIG, _STAGES, ENSEMBLE_FILE))


def ensemble_members(name_or_path: str | os.PathLike[str]) -> tuple[Path, ...] | None:
    """The member folders of an ensemble folder (:data:`ENSEMBLE_FILE` in it), in the order it names
    them; ``None`` for a folder that is not one. Raises :class:`ModelFileError` for a file that is
    not ``{"members": [two or more folder names]}``, a name that is not a plain folder name, a
    member named twice, or a member that is not a model folder."""
    folder = resolve_model_dir(name_or_path)
    path = folder / ENSEMBLE_FILE
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as f:
            raw = f.read(_MAX_ENSEMBLE_BYTES + 1)
        if len(raw) > _MAX_ENSEMBLE_BYTES:
            raise ModelFileError(f"{path}: more than {_MAX_ENSEMBLE_BYTES:,} bytes; not read")
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{path}: not a readable JSON file ({exc})") from None
    members = data.get("members") if isinstance(data, dict) else None
    if not isinstance(members, list) or len(members) < 2 or not all(isinstance(m, str) for m in members):
        raise ModelFileError(f'{path}: expected {{"members": [two or more folder names]}}')
    out = []
    for name in members:
        if not _MEMBER_NAME.fullmatch(name) or name in (".", ".."):
            raise ModelFileError(
                f"{path}: member {name!r} is not a plain folder name inside the ensemble folder"
            )
        member = folder / name
        if not (member / _CONFIG).is_file():
            raise ModelFileError(f"{path}: member {name!r} is not a model folder (no {_CONFIG} in {member})")
        out.append(member)
    if len(set(members)) != len(members):
        raise ModelFileError(f"{path}: a member is named twice")
    return tuple(out)


def shipped_models() -> list[str]:
    """Names of the installed model folders (the core package's and every companion's)."""
    names: set[str] = set()
    for root in model_roots():
        if root.is_dir():
            names.update(p.name for p in root.iterdir() if p.is_dir() and _is_model(p))
    return sorted(names)


def is_bare_name(text: str) -> bool:
    """Whether ``text`` names an installed model rather than a path: no separator, no leading dot,
    not absolute (``cube3`` is a name; ``./cube3``, ``runs/x`` and ``/abs/x`` are paths)."""
    seps = {os.sep, "/"} | ({os.altsep} if os.altsep else set())
    return (
        bool(text)
        and not any(sep in text for sep in seps)
        and not text.startswith(".")
        and not os.path.isabs(text)
        and not os.path.splitdrive(text)[0]
    )


def find_model_dir(name: str) -> Path | None:
    """The installed model folder called ``name`` (:func:`model_roots`, first found), else ``None``."""
    if not is_bare_name(name):
        return None
    for root in model_roots():
        if (root / name).is_dir() and _is_model(root / name):
            return root / name
    return None


def resolve_model_dir(name_or_path: str | os.PathLike[str]) -> Path:
    """A model folder: for a bare name (:func:`is_bare_name`, a ``str``), the installed model of that
    name (:func:`model_roots`, first found), whatever the working directory holds; for a path (a
    ``str`` that is not a bare name, or a :class:`~os.PathLike`), that folder. Raises
    :class:`ModelFileError` naming what is installed (and the companion distribution when the name
    is one of its models), or the path that is not a folder."""
    if not isinstance(name_or_path, str) or not is_bare_name(name_or_path):
        path = Path(name_or_path)
        if path.is_dir():
            return path
        raise ModelFileError(f"{path}: no such model folder")
    text = name_or_path
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
    local = (
        f"; a bare name means an installed model: to use the folder {text} here, write it as a path: ./{text}"
        if Path(text).is_dir()
        else ""
    )
    raise ModelFileError(f"no model folder {text!r}: not an installed model ({names}){local}")
