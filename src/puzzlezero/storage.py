"""Files: the cache directory, atomic writes, checked NPZ tables, cache tables built once, and locks.

Nothing is ever half-written: every write goes to a temporary file in the same directory, is
flushed and fsynced, renamed over the target (``os.replace`` is atomic on POSIX), and the directory
is fsynced so that the rename itself survives a power cut. A model folder is written the same way
as a whole (:func:`atomic_folder`). Temporary names are recognisable
(``.<name>.pz-<host>-<pid>-<random>.tmp``): those a killed process left behind are removed the next
time this process writes into that folder, and at the start of training and of table building
(:func:`clean_stale_temps`).

A write that fails because the disk is full or a file-size limit was reached raises
:class:`~puzzlezero.errors.StorageFullError` naming the file; the file it would have replaced is
left as it was. (``SIGXFSZ``, which the kernel sends for a write past ``RLIMIT_FSIZE``, is ignored
by writing processes, so that the write fails with ``EFBIG`` instead of killing the process.)

Cache tables (pattern databases, group tables) are built at most once at a time:
:func:`build_once` takes a lock file beside the table, so a second process that misses the same
table waits for the first and then loads its file. A process that must never build one (a web
worker) calls :func:`forbid_table_builds`; a missing table then raises
:class:`~puzzlezero.errors.MissingTableError` naming the ``puzzlezero pdb build`` command. A
solve with a time limit builds a missing table in a process of its own, stopped at its deadline
(:func:`build_in_process`); while it checks what is missing it defers builds in its own thread
(:func:`table_builds_deferred`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from puzzlezero.errors import (
    FileBusyError,
    MemoryBudgetError,
    MissingTableError,
    ModelFileError,
    PuzzleError,
    StorageFullError,
    TableTimeoutError,
)

__all__ = [
    "cache_dir",
    "atomic_write",
    "atomic_write_text",
    "atomic_write_json",
    "atomic_folder",
    "save_npz",
    "load_npz",
    "clean_stale_temps",
    "ignore_sigxfsz",
    "naming_full_disk",
    "forbid_table_builds",
    "table_builds_forbidden",
    "table_builds_deferred",
    "build_once",
    "build_in_process",
    "RETRY_MORE",
    "lock_folder",
    "STALE_SECONDS",
]

T = TypeVar("T")

#: a temporary file counts as left behind when its writer (a process of this machine) is gone, or
#: after this many seconds without a change (a writer on another machine sharing the folder)
STALE_SECONDS = 3600.0

#: errors of a write that found no room: disk full, file-size limit (RLIMIT_FSIZE), quota
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})

_TEMP_RE = re.compile(
    r"^\.(?P<name>.+)\.pz-(?P<host>[0-9a-f]{6})-(?P<pid>\d+)-[0-9a-f]+\.(?P<kind>tmp|tmpdir|old)$"
)


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


# ---- temporary names and what killed processes leave behind -------------------------------------
def _host_id() -> str:
    return hashlib.sha1(socket.gethostname().encode()).hexdigest()[:6]


def _temp_name(name: str, kind: str) -> str:
    """``.<name>.pz-<host>-<pid>-<random>.<kind>``: who wrote it, recognisable by :data:`_TEMP_RE`."""
    return f".{name}.pz-{_host_id()}-{os.getpid()}-{secrets.token_hex(4)}.{kind}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _is_stale(entry: Path, match: re.Match[str], now: float) -> bool:
    """Left behind: its writer (on this machine) is gone, or it has not changed for an hour."""
    pid = int(match["pid"])
    if match["host"] == _host_id() and pid != os.getpid() and not _pid_alive(pid):
        return True
    try:
        return now - entry.lstat().st_mtime > STALE_SECONDS
    except FileNotFoundError:
        return False


def clean_stale_temps(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files and folders that a killed writer left in ``folder`` (its process
    is gone, or, from another machine, untouched for :data:`STALE_SECONDS`). A model folder that was
    set aside for its replacement and whose replacement never arrived is put back. Returns what was
    removed or restored."""
    folder = Path(folder)
    done: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return done
    now = time.time()
    for entry in entries:
        match = _TEMP_RE.match(entry.name)
        if match is None or not _is_stale(entry, match, now):
            continue
        try:
            target = folder / match["name"]
            if match["kind"] == "old" and not target.exists():
                os.replace(entry, target)  # killed between the two renames: the old folder returns
            elif entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except FileNotFoundError:
            continue  # another process cleaned it first
        except OSError:
            continue  # not ours to remove (permissions): leave it
        done.append(entry)
    return done


_PREPARED: set[str] = set()
_PREPARED_LOCK = threading.Lock()


def _before_writing(folder: Path) -> None:
    """Ignore SIGXFSZ; once per folder and process, clean what killed writers left there."""
    ignore_sigxfsz()
    key = os.fspath(folder)
    with _PREPARED_LOCK:
        if key in _PREPARED:
            return
        _PREPARED.add(key)
    clean_stale_temps(folder)


def ignore_sigxfsz() -> None:
    """Ignore ``SIGXFSZ`` in this process (from its main thread; elsewhere a no-op): a write past
    ``RLIMIT_FSIZE`` then fails with ``EFBIG`` (:class:`StorageFullError`) instead of killing it."""
    if not hasattr(signal, "SIGXFSZ") or threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGXFSZ) == signal.SIG_DFL:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    except (ValueError, OSError):  # pragma: no cover - not the main interpreter
        pass


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where directories cannot be fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _full_error(path: Path, exc: OSError, existed: bool, kept: str = "") -> StorageFullError:
    kept = kept or (f"the previous {path.name} is intact" if existed else "nothing was written")
    return StorageFullError(
        f"{path}: cannot write it: {exc.strerror or os.strerror(exc.errno or 0)} (the disk is full "
        f"or a file-size limit was reached); {kept}"
    )


# ---- atomic writes --------------------------------------------------------------------------------
def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], Any]) -> Path:
    """Call ``write(f)`` on a temporary binary file beside ``path``, then atomically move it to
    ``path`` and fsync the folder. A full disk or file-size limit raises :class:`StorageFullError`
    naming ``path`` (the previous file stays as it was); any failure removes the temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _before_writing(path.parent)
    existed = path.exists()
    tmp = path.parent / _temp_name(path.name, "tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as usual
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
            raise _full_error(path, exc, existed) from None
        raise
    _fsync_dir(path.parent)
    return path


@contextmanager
def naming_full_disk(path: str | os.PathLike[str], kept: str) -> Iterator[None]:
    """Turn a full disk or file-size limit inside the block into :class:`StorageFullError` naming
    ``path`` and saying what is ``kept`` (for writes that are not atomic, such as log appends)."""
    ignore_sigxfsz()
    try:
        yield
    except OSError as exc:
        if exc.errno in _FULL_ERRNOS:
            raise _full_error(Path(path), exc, True, kept) from None
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def _write_synced(path: Path, data: bytes | memoryview) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def atomic_folder(
    folder: str | os.PathLike[str], files: dict[str, bytes | memoryview], *, keep_others: bool = True
) -> Path:
    """Write ``files`` (name -> bytes) as the folder ``folder``, whole: into a temporary sibling
    folder, which then takes the folder's place by rename. An existing folder is first renamed
    aside and removed after; a process killed between the two renames leaves it aside, and the
    next write into the parent folder puts it back (:func:`clean_stale_temps`). So ``folder`` is at
    any moment the old one or the new one, never a mix. With ``keep_others`` the existing folder's
    other entries (sub-folders of a layered model, an ONNX export) are carried over, hard-linked.
    A full disk raises :class:`StorageFullError` naming the folder and leaves it as it was."""
    folder = Path(folder)
    if folder.is_symlink():
        folder = folder.resolve()
    parent = folder.parent
    parent.mkdir(parents=True, exist_ok=True)
    _before_writing(parent)
    existed = folder.is_dir()
    if folder.exists() and not existed:
        raise ModelFileError(f"{folder}: exists and is not a folder")
    tmp = parent / _temp_name(folder.name, "tmpdir")
    aside = parent / _temp_name(folder.name, "old")
    try:
        tmp.mkdir()
        if existed and keep_others:
            for entry in folder.iterdir():
                if entry.name in files or _TEMP_RE.match(entry.name):
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.copytree(entry, tmp / entry.name, symlinks=True, copy_function=_link_or_copy)
                else:
                    _link_or_copy(entry, tmp / entry.name)
        for name, data in files.items():
            _write_synced(tmp / name, data)
        _fsync_dir(tmp)
        if existed:
            os.rename(folder, aside)
        os.rename(tmp, folder)
    except BaseException as exc:
        if existed and aside.exists() and not folder.exists():
            os.rename(aside, folder)
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
            raise _full_error(folder, exc, existed) from None
        raise
    _fsync_dir(parent)
    if existed:
        shutil.rmtree(aside, ignore_errors=True)
    return folder


def _link_or_copy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


# ---- NPZ tables -----------------------------------------------------------------------------------
def save_npz(path: str | os.PathLike[str], meta: dict[str, Any], **arrays: np.ndarray) -> Path:
    """Save arrays plus a JSON ``meta`` dict (kind, version, parameters) atomically, streamed into
    the temporary file (no copy of the arrays is made)."""
    header = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    # numpy's stubs match ``**arrays`` against the ``allow_pickle: bool`` keyword too
    return atomic_write(path, lambda f: np.savez(f, __meta__=header, **arrays))  # type: ignore[arg-type]


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


# ---- tables built once ----------------------------------------------------------------------------
_BUILDS_FORBIDDEN = False


def forbid_table_builds(forbid: bool = True) -> None:
    """From now on (process-wide), a table that :func:`build_once` would build raises
    :class:`MissingTableError` naming the command that builds it. Web workers call this: a request
    never starts a build of minutes and gigabytes."""
    global _BUILDS_FORBIDDEN
    _BUILDS_FORBIDDEN = bool(forbid)


def table_builds_forbidden() -> bool:
    """Whether :func:`forbid_table_builds` is in force in this process."""
    return _BUILDS_FORBIDDEN


_DEFERRED = threading.local()


@contextmanager
def table_builds_deferred() -> Iterator[None]:
    """Within, in this thread only, a table that :func:`build_once` would build raises
    :class:`MissingTableError` instead (a table that is there loads as always): what a solve with a
    time limit does to learn which tables are missing, before it builds them in a process it can
    stop (:func:`build_in_process`). Other threads build as before."""
    before = getattr(_DEFERRED, "on", False)
    _DEFERRED.on = True
    try:
        yield
    finally:
        _DEFERRED.on = before


#: the seconds a build in a process had when it was stopped, by its key: a later build of the same
#: table in this process with less than ``RETRY_MORE`` times as long is not started (a bench's
#: cases, one by one, each with the same time limit, would each spend it on the same build)
_STOPPED: dict[str, float] = {}
RETRY_MORE = 1.25
#: address space a build's process may take beyond the memory budget: the interpreter, numpy,
#: numba and their threads' stacks (a process that built the 8-puzzle's databases and cube2's group
#: table measured 560 MiB)
ADDRESS_HEADROOM = 1 << 30
#: the exit code of a build's process whose memory ran out at its limit
_MEMORY_EXIT = 3


def build_in_process(
    target: Callable[..., Any],
    args: tuple[Any, ...],
    *,
    seconds: float,
    key: str,
    what: str,
    command: str,
    peak_bytes: int | None = None,
) -> None:
    """Run ``target(*args)``, a build that saves its table (a top-level function: it is pickled),
    in a process of its own (spawned: the caller may hold threads) for at most ``seconds``; the
    table comes back as the file the build saves. A build still running then is stopped (nothing
    is saved: writes are atomic) and :class:`TableTimeoutError` raised: ``what`` was not built
    within the time limit, ``command`` builds it without one. A build of the same ``key`` stopped
    before is not started again with less than :data:`RETRY_MORE` times the seconds it had (the
    same error at once). A process that fails raises :class:`PuzzleError` with its exit code; an
    interrupted caller stops it. A daemonic process, which may start none, runs ``target``
    itself, unbounded in seconds.

    ``peak_bytes``, the build's estimated peak, is checked against the memory budget
    (:func:`puzzlezero.budget.check_build`) before any process starts; the new process keeps this
    one's budget, so that the builds in it check theirs against the same, and may take no more
    address space than the budget and :data:`ADDRESS_HEADROOM` (a build without an estimate, such
    as a group table's, is bounded so): one that runs out there raises
    :class:`~puzzlezero.errors.MemoryBudgetError`, nothing saved."""
    import multiprocessing

    from puzzlezero.budget import check_build, format_size, memory_budget

    budget = memory_budget()
    if peak_bytes is not None:
        check_build(peak_bytes, what)
    if multiprocessing.current_process().daemon:  # may start no process: built here, unbounded
        target(*args)
        return
    tried = _STOPPED.get(key)
    if tried is not None and seconds < RETRY_MORE * tried:
        raise TableTimeoutError(
            f"{what} was not built in {tried:,.0f} s before, and this solve has not much more time; "
            f"build it once, without a limit, with: {command}"
        )
    if seconds <= 0:
        raise TableTimeoutError(
            f"{what} is not built and the time limit left no time to build it; build it once with: {command}"
        )
    proc = multiprocessing.get_context("spawn").Process(
        target=_build_alone, args=(target, args, budget, _address_limit(budget)), daemon=True
    )
    proc.start()
    try:
        proc.join(seconds)
    except BaseException:  # interrupted: the build goes with the caller
        proc.kill()
        proc.join()
        raise
    if proc.is_alive():
        proc.kill()
        proc.join()
        _STOPPED[key] = max(tried or 0.0, seconds)
        raise TableTimeoutError(
            f"{what} was not built within the time limit ({seconds:,.0f} s); build it once, "
            f"without a limit, with: {command}",
            seconds=seconds,
        )
    if proc.exitcode == _MEMORY_EXIT:
        raise MemoryBudgetError(
            f"building {what} ran out of memory at the memory budget of {format_size(budget)} (its "
            f"process was stopped, nothing saved); raise --memory-budget (or $PUZZLEZERO_MEMORY_BUDGET) "
            f"where the machine has more free"
        )
    if proc.exitcode != 0:
        raise PuzzleError(f"building {what} failed (its process exited with code {proc.exitcode})")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _address_limit(budget: int) -> int | None:
    """The address space a build's process may take under the memory ``budget``: the budget and
    :data:`ADDRESS_HEADROOM`; ``None`` where the budget is off."""
    from puzzlezero.budget import UNLIMITED

    return None if budget >= UNLIMITED else budget + ADDRESS_HEADROOM


def _build_alone(target: Callable[..., Any], args: tuple[Any, ...], budget: int, limit: int | None) -> None:
    """A bounded build's process: ``target(*args)`` under the starting process's memory
    ``budget``, in at most ``limit`` bytes of address space (``RLIMIT_AS``, where not ``None``; an
    allocation past it fails, and the process exits with :data:`_MEMORY_EXIT`), its progress bars
    behind a thread lock (the default, a semaphore shared between processes, would be left behind
    when it is stopped)."""
    import resource

    from tqdm import tqdm

    from puzzlezero.budget import set_memory_budget

    set_memory_budget(budget)
    if limit is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    tqdm.set_lock(threading.RLock())
    try:
        target(*args)
    except MemoryError:
        sys.exit(_MEMORY_EXIT)
    except OSError as exc:  # an anonymous map refused (a table's words)
        if exc.errno != errno.ENOMEM:
            raise
        sys.exit(_MEMORY_EXIT)


def build_once(
    path: str | os.PathLike[str],
    load: Callable[[], T],
    build: Callable[[], T],
    *,
    what: str,
    command: str,
    peak_bytes: int | None = None,
) -> T:
    """The table at ``path``: ``load()`` it (which raises :class:`ModelFileError` for a file that
    is missing, corrupt or of other parameters), else ``build()`` it (which also saves it) under the
    lock file ``<path>.lock``. A process that finds the lock taken waits for the build to end and
    then loads that file instead of building again. A build whose estimated ``peak_bytes`` are
    above the memory budget is not started: :class:`~puzzlezero.errors.MemoryBudgetError`
    (:func:`puzzlezero.budget.check_build`).

    Where builds are forbidden (:func:`forbid_table_builds`) or deferred
    (:func:`table_builds_deferred`), a table that cannot be loaded raises
    :class:`MissingTableError`: ``"<what> is not built; build it with: <command>"``.
    """
    path = Path(path)
    ignore_sigxfsz()
    try:
        return load()
    except ModelFileError as exc:
        reason = exc
    if _BUILDS_FORBIDDEN or getattr(_DEFERRED, "on", False):
        state = "not built" if not path.exists() else f"not usable ({reason})"
        raise MissingTableError(f"{what} is {state}; build it with: {command}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with _table_lock(path, what):
        try:
            return load()  # another process built it while this one waited
        except ModelFileError as exc:
            if path.exists():
                _log(f"{what} {path.name} is not usable, rebuilding it: {exc}")
        if peak_bytes is not None:
            from puzzlezero.budget import check_build

            check_build(peak_bytes, what)
        clean_stale_temps(path.parent)
        return build()


@contextmanager
def _table_lock(path: Path, what: str) -> Iterator[None]:
    from filelock import FileLock, Timeout

    lock = FileLock(f"{path}.lock")
    try:
        lock.acquire(blocking=False)
    except Timeout:
        _log(f"waiting for another process that builds {what} ({path})")
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


# ---- folders one process at a time ----------------------------------------------------------------
def _mark_holder(fd: int) -> None:
    """Write the holder's pid into the lock file (read back by the process that finds it taken)."""
    data = f"{os.getpid()}\n".encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def lock_folder(folder: str | os.PathLike[str], what: str = "training run") -> Any:
    """Take the lock of ``folder`` (the file ``folder/.lock``, created with the folder) without
    waiting; returns the lock, held while it is referenced (``.release()`` it when done; the
    process's exit releases it too).
    Raises :class:`FileBusyError` naming the folder and the pid of the process that holds it.
    Within one process the lock is re-entrant: a second take counts and needs a second release."""
    from filelock import FileLock, Timeout

    ignore_sigxfsz()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lock_file = folder / ".lock"
    lock = FileLock(lock_file, is_singleton=True, thread_local=False, on_acquired=_mark_holder)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        try:
            holder = f"pid {int(lock_file.read_text().strip())}"
        except (OSError, ValueError):
            holder = "another process"
        raise FileBusyError(
            f"{folder} is in use: {holder} holds its lock ({lock_file}), a {what} is going on there; "
            f"wait for it to end, stop it, or choose another folder"
        ) from None
    return lock
