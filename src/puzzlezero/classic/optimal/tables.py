"""Pattern-database files: load from the cache, or build once, save and report.

Every table lives in ``cache_dir("pdb")`` as an NPZ written by :func:`puzzlezero.storage.save_npz`
with a meta dict (``kind``, ``version``, parameters). :func:`load_or_build` loads it with
:func:`puzzlezero.storage.load_npz`, which raises :class:`~puzzlezero.errors.ModelFileError` for a
missing, corrupt, or other-version/other-parameter file; such a file is rebuilt (and the reason
printed), never used. Builds print a progress bar and a one-line size/time report on stderr; they
run under a lock file beside the table (one build at a time, a second process waits and loads), and
never in a process that forbade them (:func:`puzzlezero.storage.forbid_table_builds`: web workers),
where a missing table raises :class:`~puzzlezero.errors.MissingTableError` naming the
``puzzlezero pdb build`` command.

Big tables can be memory-mapped instead of read (``mmap=True``): a process then starts in
milliseconds instead of copying and checksumming hundreds of megabytes. Only a file that passed the
full :func:`load_npz` check (CRC included) once is mapped: that check leaves a stamp beside it
(``<name>.verified``: size, modification time, version), and a file whose size or time differs
from its stamp goes through the full check again.
"""

from __future__ import annotations

import json
import mmap as _mmap
import struct
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import ModelFileError
from puzzlezero.storage import atomic_write_text, build_once, cache_dir, load_npz, save_npz

__all__ = ["PDB_VERSION", "table_path", "load_or_build", "level_progress", "concat_huge", "huge_zeros"]

#: bump when the layout or the meaning of any table changes: old files are then rebuilt
PDB_VERSION = 1


def table_path(name: str) -> Path:
    """Path of the table file ``name`` (no extension) in ``cache_dir("pdb")``."""
    return cache_dir("pdb") / f"{name}.npz"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_or_build(
    name: str,
    meta: dict[str, Any],
    build: Callable[[], dict[str, np.ndarray]],
    *,
    mmap: bool = False,
    command: str | None = None,
    peak_bytes: int | None = None,
) -> dict[str, np.ndarray]:
    """Arrays of the table ``name``: loaded if a valid file with exactly this ``meta`` exists,
    else ``build()`` is called, its arrays saved with ``meta`` (plus ``version``) and returned.
    With ``mmap``, a file already verified is memory-mapped (read-only arrays).

    The build runs under the table's lock (:func:`puzzlezero.storage.build_once`): a second process
    that misses the same table waits and then loads the first one's file. Where builds are
    forbidden (web workers) a missing table raises :class:`~puzzlezero.errors.MissingTableError`
    naming ``command`` (the ``puzzlezero pdb build ...`` line that builds it); a build whose
    estimated ``peak_bytes`` are above the memory budget is not started
    (:class:`~puzzlezero.errors.MemoryBudgetError`).

    ``meta`` values must be JSON types (lists, not tuples) so that they compare equal after a
    round trip through the file.
    """
    full_meta = {"version": PDB_VERSION, **meta}
    path = table_path(name)

    def load() -> dict[str, np.ndarray]:
        if mmap:
            try:
                return _map_verified(path, full_meta)
            except (ModelFileError, OSError, ValueError, KeyError, struct.error, zipfile.BadZipFile):
                pass  # not verified yet (or changed): take the full check below
        arrays = load_npz(path, full_meta)
        if mmap:
            _stamp(path)
        return arrays

    def build_and_save() -> dict[str, np.ndarray]:
        _log(f"building pattern database {name} (once; it is cached in {path.parent})")
        t0 = time.perf_counter()
        arrays = build()
        seconds = time.perf_counter() - t0
        save_npz(path, {**full_meta, "build_seconds": round(seconds, 2)}, **arrays)
        if mmap:
            _stamp(path)
        nbytes = sum(a.nbytes for a in arrays.values())
        _log(f"built {name}: {nbytes / 1e6:,.1f} MB in {seconds:,.1f} s -> {path}")
        return arrays

    what = f"pattern database {name}"
    return build_once(
        path, load, build_and_save, what=what, command=command or _python_command(name), peak_bytes=peak_bytes
    )


def _python_command(name: str) -> str:
    return f"the Python call that asked for {name}, run once in a process that may build tables"


def _stamp_of(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "version": PDB_VERSION}


def _stamp(path: Path) -> None:
    """Record that ``path`` passed the full check, as it is now."""
    atomic_write_text(path.with_suffix(".verified"), json.dumps(_stamp_of(path)))


def _map_verified(path: Path, expect_meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """Memory-map every array of an uncompressed NPZ whose stamp matches it; raises if anything
    is off (no stamp, another size or time, other meta, a compressed or odd member)."""
    if json.loads(path.with_suffix(".verified").read_text()) != _stamp_of(path):
        raise ModelFileError(f"{path}: changed since it was verified")
    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
        with zf.open("__meta__.npy") as m:
            meta = json.loads(bytes(np.lib.format.read_array(m)).decode())
        if any(meta.get(k) != v for k, v in expect_meta.items()):
            raise ModelFileError(f"{path}: other parameters or version")
        for info in zf.infolist():
            if info.filename == "__meta__.npy":
                continue
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
                raise ModelFileError(f"{path}: member {info.filename} cannot be mapped")
            f.seek(info.header_offset)
            head = f.read(30)
            if head[:4] != b"PK\x03\x04":
                raise ModelFileError(f"{path}: bad local header")
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            f.seek(info.header_offset + 30 + name_len + extra_len)
            major, _ = np.lib.format.read_magic(f)
            read_header = (
                np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            )
            shape, fortran, dtype = read_header(f)
            if fortran or dtype.hasobject:
                raise ModelFileError(f"{path}: member {info.filename} is not a plain C array")
            mm = np.memmap(path, dtype=dtype, mode="r", offset=f.tell(), shape=shape)
            out[info.filename[:-4]] = mm.view(np.ndarray)
    return out


@contextmanager
def level_progress(desc: str, total: int) -> Iterator[Callable[[int, int], None]]:
    """A tqdm bar over the states of a breadth-first search; yields ``update(level, new_states)``."""
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=" states", unit_scale=True, file=sys.stderr,
              leave=False, mininterval=1.0, disable=None) as bar:  # fmt: skip

        def update(level: int, new: int) -> None:
            bar.set_postfix(depth=level, refresh=False)
            bar.update(new)

        yield update


def huge_zeros(count: int, dtype: np.dtype | type = np.uint8) -> np.ndarray:
    """A zeroed 1-D array of ``count`` items in anonymous memory backed by transparent huge pages
    where the kernel allows it (``madvise``): random reads and writes in hundreds of megabytes
    then miss the TLB far less often. The memory is returned when the array is freed."""
    dtype = np.dtype(dtype)
    buf = _mmap.mmap(-1, max(1, count * dtype.itemsize), flags=_mmap.MAP_PRIVATE | _mmap.MAP_ANONYMOUS)
    if hasattr(_mmap, "MADV_HUGEPAGE"):
        try:
            buf.madvise(_mmap.MADV_HUGEPAGE)
        except OSError:
            pass
    return np.frombuffer(buf, dtype=dtype, count=count)


def concat_huge(arrays: list[np.ndarray]) -> np.ndarray:
    """Concatenate 1-D ``uint8`` tables into memory backed by huge pages (:func:`huge_zeros`)."""
    out = huge_zeros(max(1, sum(a.size for a in arrays)))
    pos = 0
    for a in arrays:
        out[pos : pos + a.size] = a
        pos += a.size
    return out
