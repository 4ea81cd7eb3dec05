"""Files: the cache directory, atomic writes, and checked NPZ tables.

Nothing is ever half-written: every write goes to a temporary file in the same directory, is
flushed and fsynced, then renamed over the target (``os.replace`` is atomic on POSIX).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from puzzlezero.errors import ModelFileError

__all__ = ["cache_dir", "atomic_write", "atomic_write_text", "save_npz", "load_npz"]


def cache_dir(sub: str = "") -> Path:
    """The cache directory (``$PUZZLEZERO_CACHE``, else ``$XDG_CACHE_HOME/puzzlezero``, else
    ``~/.cache/puzzlezero``), created on demand, with an optional sub-folder."""
    base = os.environ.get("PUZZLEZERO_CACHE")
    if base:
        root = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "puzzlezero"
    path = root / sub if sub else root
    path.mkdir(parents=True, exist_ok=True)
    return path


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], Any]) -> Path:
    """Call ``write(f)`` on a temporary binary file, then atomically move it to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600 files; give them the usual mode
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def save_npz(path: str | os.PathLike[str], meta: dict[str, Any], **arrays: np.ndarray) -> Path:
    """Save arrays plus a JSON ``meta`` dict (kind, version, parameters) atomically."""
    buf = io.BytesIO()
    # numpy's stubs match ``**arrays`` against the ``allow_pickle: bool`` keyword too
    np.savez(buf, __meta__=np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8), **arrays)  # type: ignore[arg-type]
    return atomic_write(path, lambda f: f.write(buf.getvalue()))


def load_npz(path: str | os.PathLike[str], expect_meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """Load a file written by :func:`save_npz`, checking that its meta contains ``expect_meta``.

    Raises :class:`ModelFileError` naming the file if it is missing, unreadable, or its meta
    differs (another version, other parameters): callers then rebuild it.
    """
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"{path}: no such file")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["__meta__"]).decode())
            arrays = {k: data[k] for k in data.files if k != "__meta__"}
    except Exception as exc:  # zipfile.BadZipFile, KeyError, ValueError, OSError, ...
        raise ModelFileError(f"{path}: unreadable or corrupt ({type(exc).__name__}: {exc})") from exc
    for key, want in expect_meta.items():
        if meta.get(key) != want:
            raise ModelFileError(f"{path}: {key} is {meta.get(key)!r}, expected {want!r}")
    return arrays
