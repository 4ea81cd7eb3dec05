"""Puzzles of one's own, registered from outside the package: plugins.

A plugin is a Python file, or an importable module, that calls :func:`puzzlezero.register` when it
is imported (``docs/adding-a-puzzle.md`` walks through ``examples/pancake.py``). It is loaded only
when someone names it, and reaches the worker processes of training and of the web server:

* ``puzzlezero --plugin examples/pancake.py COMMAND ...``: a file or a module name, repeatable;
* from Python, :func:`load_plugin` (or importing one's module);
* an installed package's entry point in the group :data:`ENTRY_POINT_GROUP`
  (``puzzlezero.puzzles``), naming a module (imported) or a function (called with no arguments)::

      [project.entry-points."puzzlezero.puzzles"]
      pancake = "mypuzzles.pancake"

No environment variable chooses code: ``puzzlezero serve --plugin FILE`` runs the plugins its
operator named and the installed packages' entry points, nothing else. The registry loads the entry
points the first time a name is looked up (:func:`load_configured`).

How a plugin reaches spawned processes: :func:`load_plugin` writes what this process loaded to
:data:`ENV_VAR` (``PUZZLEZERO_PLUGINS``), stamped with this process's pid and signed (HMAC-SHA256)
with this process's ``multiprocessing`` authentication key, and a registered puzzle is pickled as its
name (``Puzzle.__reduce_ex__``). That key is random, never in the environment, and handed by
``multiprocessing`` to the processes it starts through their start-up pipe (spawn and forkserver;
a forked child has it in its memory). A process reads the variable only when the stamp is its
parent's pid and the signature checks with its own key, i.e. only when puzzlezero itself started it
with ``multiprocessing`` (label workers, web solver workers), and then loads the same plugins, before
it unpickles its arguments, and gets the same registrations. Anything else in the variable (a value
written by hand, ``PUZZLEZERO_PLUGINS=file.py`` as older versions read everywhere, or one stamped
with a pid anyone can know) is not read; a warning says to use ``--plugin``. A process started any
other way is given the plugins explicitly: ``--plugin`` on its command line (``torchrun``'s ranks),
or as an argument (Ray workers, :mod:`puzzlezero.ray_solve`).

Loading is idempotent (a file by its resolved path, a module by its name). A plugin named on the
command line that cannot be loaded raises :class:`PluginError` with the file and line; a broken
entry point of some installed package only warns, so that it cannot break every other puzzle.

Example:
    >>> from puzzlezero.plugins import load_plugin          # doctest: +SKIP
    >>> load_plugin("examples/pancake.py")                  # doctest: +SKIP
    <module 'puzzlezero_plugin_pancake' from '.../examples/pancake.py'>
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import importlib.metadata
import importlib.util
import multiprocessing
import os
import re
import sys
import traceback
import warnings
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from puzzlezero.errors import PluginError

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENV_VAR",
    "env_plugins",
    "load_configured",
    "load_plugin",
    "load_plugins",
    "loaded_plugins",
]

#: environment variable that carries the loaded plugins to the processes puzzlezero spawns: the
#: loading process's pid, the signature of what follows, then files or modules, separated by
#: ``os.pathsep``; read only by a ``multiprocessing`` child of that pid (:func:`env_plugins`)
ENV_VAR = "PUZZLEZERO_PLUGINS"
#: entry-point group of installed packages that register puzzles
ENTRY_POINT_GROUP = "puzzlezero.puzzles"

_LOADED: dict[str, ModuleType] = {}  # resolved file path or module name -> module (or loading)
_ENTRY_POINTS_DONE = False
_WARNED = False


_SIGNATURE = re.compile(r"[0-9a-f]{64}")


def _carried() -> tuple[int | None, str | None, list[str]]:
    """``$PUZZLEZERO_PLUGINS`` read as a carrier: ``(pid of the process that wrote it, signature,
    plugins)``; ``None`` for a pid or signature that is not there (a value written by hand)."""
    parts = [part.strip() for part in os.environ.get(ENV_VAR, "").split(os.pathsep) if part.strip()]
    pid = int(parts.pop(0)) if parts and parts[0].isdigit() else None
    signature = parts.pop(0) if pid is not None and parts and _SIGNATURE.fullmatch(parts[0]) else None
    return pid, signature, parts


def _signature(pid: int, refs: list[str]) -> str:
    """The signature of a carrier: HMAC-SHA256 of the pid and plugins under this process's
    ``multiprocessing`` authentication key, which the processes ``multiprocessing`` starts share
    and no other process knows."""
    key = bytes(multiprocessing.current_process().authkey)
    message = os.pathsep.join([str(pid), *refs]).encode("utf-8", "surrogateescape")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _genuine(pid: int | None, signature: str | None, refs: list[str]) -> bool:
    return pid is not None and signature is not None and hmac.compare_digest(signature, _signature(pid, refs))


def _parent_pids() -> set[int]:
    parent = multiprocessing.parent_process()
    return {os.getppid()} | ({parent.pid} if parent is not None and parent.pid is not None else set())


def env_plugins() -> list[str]:
    """The plugins this process inherited from the puzzlezero process that started it with
    ``multiprocessing`` (the carrier :data:`ENV_VAR`, stamped with its parent's pid and signed with
    the key they share), in order; ``[]`` in any other process."""
    pid, signature, refs = _carried()
    return refs if pid in _parent_pids() and _genuine(pid, signature, refs) else []


def loaded_plugins() -> list[str]:
    """The plugins loaded in this process (named or inherited), as :func:`load_plugin` takes them:
    files by their absolute paths, modules by name; entry points not included."""
    return list(_LOADED)


def _is_file_ref(ref: str) -> bool:
    return ref.endswith(".py") or "/" in ref or os.sep in ref or Path(ref).is_file()


def load_plugin(ref: str | os.PathLike[str]) -> ModuleType:
    """Import one plugin, ``ref`` being a ``.py`` file or a module name, and return the module.

    A file is imported as a module named ``puzzlezero_plugin_<stem>``; either kind is imported once
    per process. The plugin is added to the signed carrier ``$PUZZLEZERO_PLUGINS`` (a file by its
    absolute path) so that the processes this one starts with ``multiprocessing`` load it too. Raises :class:`PluginError` when the file or module does not
    exist or fails while it runs (the message gives the line in the plugin).
    """
    text = os.fspath(ref)
    if _is_file_ref(text):
        path = Path(text).expanduser().resolve()
        key = str(path)
        if key not in _LOADED:
            if not path.is_file():
                raise PluginError(f"plugin {text}: no such file")
            _LOADED[key] = _import_file(path, text)
    else:
        key = text
        if key not in _LOADED:
            _LOADED[key] = _import_module(text)
    _remember(key)
    return _LOADED[key]


def load_plugins(refs: Iterable[str | os.PathLike[str]]) -> list[ModuleType]:
    """:func:`load_plugin` for each of ``refs``, in order."""
    return [load_plugin(ref) for ref in refs]


def load_configured() -> None:
    """Load the entry points (once per process) and the plugins inherited from the puzzlezero
    process that spawned this one (:func:`env_plugins`) not yet loaded. The registry calls this
    before it answers a look-up; cheap after the first call. A ``$PUZZLEZERO_PLUGINS`` that is not
    such a carrier is not read (a warning, once, says to use ``--plugin``)."""
    global _ENTRY_POINTS_DONE, _WARNED
    if not _ENTRY_POINTS_DONE:
        _ENTRY_POINTS_DONE = True
        _load_entry_points()
    inherited = env_plugins()
    for ref in inherited:
        key = str(Path(ref).expanduser().resolve()) if _is_file_ref(ref) else ref
        if key not in _LOADED:
            load_plugin(ref)
    pid, signature, refs = _carried()
    own = pid == os.getpid() and _genuine(pid, signature, refs)
    if refs and not inherited and not own and not _WARNED:
        _WARNED = True
        warnings.warn(
            f"puzzlezero: ${ENV_VAR} is not read (no environment variable chooses the code puzzlezero "
            f"runs); load {refs[0]} with --plugin before the command, or puzzlezero.plugins.load_plugin",
            stacklevel=3,
        )


def _remember(key: str) -> None:
    """Add a loaded plugin to the carrier ``$PUZZLEZERO_PLUGINS``, under this process's pid and
    signed (the processes it spawns inherit the environment and the key, and read it). It goes on
    from this process's own carrier, else from the one it inherited; anything else the variable
    held is dropped, never signed."""
    pid, signature, listed = _carried()
    if pid != os.getpid() or not _genuine(pid, signature, listed):
        listed = [k for k in env_plugins() if k in _LOADED]
    if key not in listed:
        listed.append(key)
    pid = os.getpid()
    os.environ[ENV_VAR] = os.pathsep.join([str(pid), _signature(pid, listed), *listed])


def _module_name(path: Path) -> str:
    base = "puzzlezero_plugin_" + re.sub(r"\W", "_", path.stem)
    name, n = base, 1
    while name in sys.modules:  # another file with the same stem
        n += 1
        name = f"{base}_{n}"
    return name


def _import_file(path: Path, shown: str) -> ModuleType:
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"plugin {shown}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickle look the module up while it runs
    _LOADED[str(path)] = module  # a plugin that looks up a puzzle while loading does not load itself again
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        _LOADED.pop(str(path), None)
        raise PluginError(f"plugin {shown} failed{_where(exc, str(path))}: {_describe(exc)}") from exc
    return module


def _import_module(name: str) -> ModuleType:
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
        raise PluginError(f"plugin {name!r}: neither a .py file nor a module name")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise PluginError(
                f"plugin {name}: no module named {exc.name} (give the path of a .py file, or install "
                "the package that holds it)"
            ) from None
        raise PluginError(f"plugin {name} failed: {_describe(exc)}") from exc
    except Exception as exc:
        module_file = getattr(sys.modules.get(name), "__file__", None)
        where = _where(exc, module_file) if module_file else ""
        raise PluginError(f"plugin {name} failed{where}: {_describe(exc)}") from exc


def _where(exc: BaseException, filename: str) -> str:
    """`` at line N`` of the innermost frame in ``filename`` (or a syntax error's line), else ``""``."""
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return f" at line {exc.lineno}"
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    return f" at line {lines[-1]}" if lines else ""


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg}"
    from puzzlezero.errors import PuzzleError

    return str(exc) if isinstance(exc, PuzzleError) else f"{type(exc).__name__}: {exc}"


def _load_entry_points() -> None:
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            if not isinstance(obj, ModuleType) and callable(obj):
                obj()
        except Exception as exc:  # an installed package's bug must not break the other puzzles
            warnings.warn(
                f"puzzlezero: the {ENTRY_POINT_GROUP} entry point {ep.name} = {ep.value} failed to load "
                f"({_describe(exc)}); its puzzles are not registered",
                stacklevel=3,
            )
