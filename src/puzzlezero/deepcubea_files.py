"""DeepCubeA's published test sets, read as data and written as this project's case files.

DeepCubeA (Agostinelli et al., "Solving the Rubik's cube with deep reinforcement learning and
search", Nature Machine Intelligence 2019) publishes its test states in its repository,
github.com/forestagostinelli/DeepCubeA, as Python pickles ``data/<puzzle>/test/data_0.pkl``
(``cube3``, ``puzzle15``, ``puzzle24``, ``puzzle35``, ``puzzle48``, ``lightsout7``, ``sokoban``).
Each is a dict: ``states``, a list of objects of the authors' classes, and, for some sets,
``solutions`` (plus ``times`` and ``num_nodes_generated`` of the solver that found them).

**Nothing from the file is run.** A pickle names the functions that rebuild its objects, and a
plain ``pickle.load`` calls them: :class:`DeepCubeAUnpickler` allows only what NumPy arrays of
numbers and DeepCubeA's four state classes need, the state classes replaced by plain-data stand-ins
(:class:`DeepCubeAState`: the class's name and its attributes; no module of DeepCubeA's is imported).
Every other global (``os.system``, ``builtins.eval``, ...) is refused by name
(:class:`UnsafePickleError`) before anything is called. Files above :data:`MAX_FILE_BYTES` and arrays
above :data:`MAX_ARRAY_ELEMENTS` elements are refused too.

The state classes (``environments/*.py`` of the repository) and how each becomes this project's
state (the encodings of :mod:`puzzlezero.puzzles.cube`, ``npuzzle``, ``lightsout`` and ``sokoban``):

``environments.cube3.Cube3State``, attribute ``colors``: ``cube3``
    54 sticker numbers, solved = ``0..53``. Sticker ``9f + 3i + j`` is row ``i``, column ``j`` of
    face ``f`` in DeepCubeA's face order ``U D L R B F``; its colour is its number ``// 9``. The
    rows and columns lie on the cube as :data:`CUBE3_FRAMES` says; :data:`CUBE3_FACELETS` is the
    resulting DeepCubeA sticker at each of this project's facelets (``U1..U9 R1..R9 F1..F9 D1..D9
    L1..L9 B1..B9``). Moves are ``(face, 1)`` = the standard clockwise quarter turn ``X`` and
    ``(face, -1)`` = ``X'`` (also written ``"X1"``/``"X-1"``, or action ``0..11`` in DeepCubeA's
    order ``U-1 U1 D-1 D1 L-1 L1 R-1 R1 B-1 B1 F-1 F1``).
``environments.n_puzzle.NPuzzleState``, attribute ``tiles``: ``puzzle15`` .. ``puzzle48``
    the tiles row-major, ``0`` the blank, goal ``1 .. n*n-1, 0``: this project's layout as it is.
    Moves ``U D L R`` (or ``0..3``) name the way the moved tile travels, as here.
``environments.lights_out.LOState``, attribute ``tiles``: ``lightsout7``
    49 lights row-major, 1 = on; press ``i`` toggles cell ``i`` and its neighbours ``i +- 7`` and,
    within its row, ``i +- 1``: this project's layout and presses as they are.
``environments.sokoban.SokobanState``, attributes ``agent`` (row, column), ``walls``, ``boxes``,
``goals`` (10x10 booleans): ``sokoban``
    the cells' wall, box, target and agent flags. Moves ``0..3`` are up, down, left, right.

Optimal lengths: the cube's and the 15- and 24-puzzles' sets come with optimal solutions; each is
replayed on the converted state and must reach the goal (:class:`SolutionReplayError`, naming the
state, otherwise), and its length is the case's ``optimal_length``. Lights Out's set has no solutions,
but its optimum is exact anyway: the 7x7 toggle matrix has full rank over GF(2), so each state has
one set of distinct presses that solves it, and its size is the optimum. The 35- and 48-puzzle and
Sokoban sets have no optimal lengths. A file of DeepCubeA's own search results (a dict that also has
``paths``, ``results/<puzzle>/results.pkl``) gives each case a ``best_known`` length instead, which
``puzzlezero bench`` compares with.

A pickle that would run a command is refused, by the name of what it asks for, and nothing runs:

>>> import os, pickle
>>> class Payload:
...     def __reduce__(self):
...         return os.system, ("echo pwned",)
>>> read_deepcubea_bytes(pickle.dumps({"states": [Payload()]}), "data_0.pkl")
Traceback (most recent call last):
...
puzzlezero.deepcubea_files.UnsafePickleError: data_0.pkl: refused: the pickle asks for ...system, which is neither part of a NumPy array nor a DeepCubeA state class; nothing from the file was run

Why one file: everything a published pickle can do to this process is decided here, the
unpickler and each puzzle's converter, so that it can be read, and checked, end to end.
"""

from __future__ import annotations

import importlib
import io
import math
import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError, UnknownNameError
from puzzlezero.puzzles.base import Puzzle

__all__ = [
    "CUBE3_FACELETS",
    "CUBE3_FRAMES",
    "CUBE3_MOVES",
    "MAX_ARRAY_ELEMENTS",
    "MAX_FILE_BYTES",
    "MAX_STATES",
    "STATE_CLASSES",
    "DeepCubeAFileError",
    "DeepCubeASet",
    "DeepCubeAState",
    "DeepCubeAUnpickler",
    "SolutionReplayError",
    "UnsafePickleError",
    "deepcubea_cases",
    "load_pickle",
    "read_deepcubea",
    "read_deepcubea_bytes",
    "repository_file",
]

#: the largest file read (a published set is far smaller)
MAX_FILE_BYTES = 256 * 2**20
#: the most elements one array of the file may have (a state has at most a few hundred)
MAX_ARRAY_ELEMENTS = 10_000_000
#: the most states a file may hold (the published sets have 500 to 1,000)
MAX_STATES = 1_000_000
#: the most moves one solution may have
MAX_SOLUTION_MOVES = 100_000
#: NumPy dtype kinds an array or scalar of the file may have: booleans, integers, floats, text
_ARRAY_KINDS = frozenset("biufUS")

#: DeepCubeA's state classes ("module.Class") -> the attribute every one of them must have
STATE_CLASSES: dict[str, tuple[str, ...]] = {
    "environments.cube3.Cube3State": ("colors",),
    "environments.n_puzzle.NPuzzleState": ("tiles",),
    "environments.lights_out.LOState": ("tiles",),
    "environments.sokoban.SokobanState": ("agent", "walls", "boxes", "goals"),
}
#: the puzzles whose published sets' solutions are optimal
_OPTIMAL_SETS = frozenset({"cube3", "puzzle15", "puzzle24"})


class DeepCubeAFileError(PuzzleError):
    """A DeepCubeA data file that cannot be imported: too big, not a complete pickle, not a dict
    with ``states``, a state class or attribute this importer does not read, a state that is no
    legal position; the message starts with the file and names the state where it is one."""


class UnsafePickleError(DeepCubeAFileError):
    """A pickle that asks for a global other than NumPy's array parts and DeepCubeA's state classes
    (``os.system``, ``builtins.eval``, ...). Nothing was called; :attr:`global_name` is the
    ``module.name`` asked for."""

    def __init__(self, message: str, global_name: str) -> None:
        super().__init__(message)
        self.global_name = global_name

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (str(self), self.global_name)


class SolutionReplayError(DeepCubeAFileError):
    """A solution of the file that does not take its state to the goal, or a move of it that cannot
    be read; :attr:`index` is the state's index in the file."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index

    def __reduce__(self) -> tuple[type, tuple[str, int]]:
        return type(self), (str(self), self.index)


# ---- the restricted unpickler -------------------------------------------------------------------


class _FrozenClass(type):
    """The stand-in classes' type: a pickle cannot change a class it was given (pickle's BUILD on
    a class sets its attributes)."""

    def __setattr__(cls, name: str, value: Any) -> None:
        raise pickle.UnpicklingError(f"{cls.__name__}: a pickle cannot change a class")

    def __delattr__(cls, name: str) -> None:
        raise pickle.UnpicklingError(f"{cls.__name__}: a pickle cannot change a class")


class DeepCubeAState(metaclass=_FrozenClass):
    """One of DeepCubeA's state objects as plain data: :attr:`class_name` (``"environments.cube3.
    Cube3State"``) and :attr:`fields`, the attributes the pickle gave it. A subclass stands in for
    each class of :data:`STATE_CLASSES`; building one runs nothing but storing its attributes."""

    __slots__ = ("fields",)
    class_name: ClassVar[str] = ""
    fields: dict[str, Any]

    def __new__(cls, *args: Any, **kwargs: Any) -> DeepCubeAState:
        if args or kwargs:
            raise pickle.UnpicklingError(f"{cls.class_name} is built without arguments")
        inst = super().__new__(cls)
        inst.fields = {}
        return inst

    def __init__(self) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        # a class with __slots__ pickles its state as (None or __dict__, {slot: value})
        parts = state if isinstance(state, tuple) and len(state) == 2 else (state,)
        for part in parts:
            if part is None:
                continue
            if not isinstance(part, dict) or not all(isinstance(k, str) for k in part):
                raise pickle.UnpicklingError(f"{self.class_name}: its attributes are not a dict of names")
            self.fields.update(part)

    def __repr__(self) -> str:
        return f"<{self.class_name} {sorted(self.fields)}>"


_STAND_INS: dict[str, type[DeepCubeAState]] = {
    name: type(name.rpartition(".")[2], (DeepCubeAState,), {"__slots__": (), "class_name": name})
    for name in STATE_CLASSES
}


class _BoundedArray(np.ndarray):
    """The array type the unpickler rebuilds arrays as: its ``__setstate__`` checks the shape and
    dtype before NumPy reads the data (the result is read as a plain array)."""

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise pickle.UnpicklingError("an array with an unknown state layout")
        shape, dtype = state[-4], state[-3]
        _check_array(shape, dtype)
        super().__setstate__(state)


class _ArrayType:
    """What ``numpy.ndarray`` is read as: a token :func:`_reconstruct` accepts, never called."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "numpy.ndarray"


class _Global:
    """What an allowed function is read as: callable, and unchangeable by the pickle (no ``__dict__``,
    no attribute to set; a plain function's ``__defaults__`` could be set by pickle's BUILD)."""

    __slots__ = ("_function", "_name")
    _function: Callable[..., Any]
    _name: str

    def __init__(self, name: str, function: Callable[..., Any]) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_function", function)

    def __setattr__(self, name: str, value: Any) -> None:
        raise pickle.UnpicklingError(f"{self._name}: a pickle cannot change it")

    def __call__(self, *args: Any) -> Any:
        return self._function(*args)

    def __repr__(self) -> str:
        return self._name


_ARRAY_TYPE = _ArrayType()


def _check_array(shape: Any, dtype: Any) -> None:
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise pickle.UnpicklingError(f"an array shape must be whole numbers, got {shape!r:.60}")
    if not isinstance(dtype, np.dtype) or dtype.kind not in _ARRAY_KINDS or dtype.fields is not None:
        raise pickle.UnpicklingError(f"an array of {dtype!r:.60}: only arrays of numbers or text are read")
    size = math.prod(shape)
    if size > MAX_ARRAY_ELEMENTS:
        raise _TooBig(
            f"an array of {size:,} elements (shape {shape}); at most {MAX_ARRAY_ELEMENTS:,} are read"
        )


class _TooBig(pickle.UnpicklingError):
    """An array above :data:`MAX_ARRAY_ELEMENTS` (reported as such, not as an unreadable file)."""


def _numpy_core(name: str) -> Callable[..., Any]:
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
        except (ImportError, AttributeError):
            continue
    raise ImportError(f"numpy has no multiarray.{name}")  # pragma: no cover (every numpy has both)


def _reconstruct(subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
    if subtype is not _ARRAY_TYPE:
        raise pickle.UnpicklingError(
            f"multiarray._reconstruct of {subtype!r:.60}: only numpy.ndarray is read"
        )
    if not isinstance(shape, tuple) or math.prod(shape) != 0:
        raise pickle.UnpicklingError("multiarray._reconstruct with a shape other than an empty one")
    if not isinstance(dtype, bytes | str) or len(dtype) > 4:
        raise pickle.UnpicklingError(f"multiarray._reconstruct with dtype {dtype!r:.60}")
    return _numpy_core("_reconstruct")(_BoundedArray, shape, dtype)  # type: ignore[no-any-return]


def _scalar(dtype: Any, data: Any = None) -> Any:
    if not isinstance(dtype, np.dtype) or dtype.kind not in _ARRAY_KINDS or dtype.fields is not None:
        raise pickle.UnpicklingError(f"a NumPy scalar of {dtype!r:.60}: only numbers or text are read")
    if isinstance(data, str):  # a Python 2 pickle's bytes, read as latin1 text
        data = data.encode("latin1")
    if not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise pickle.UnpicklingError("a NumPy scalar whose data does not fit its dtype")
    return _numpy_core("scalar")(dtype, data)


def _dtype(spec: Any, align: Any = False, copy: Any = True) -> np.dtype:
    if not isinstance(spec, str) or len(spec) > 8:
        raise pickle.UnpicklingError(f"numpy.dtype({spec!r:.60}): only simple dtypes are read")
    try:
        return np.dtype(spec, align=bool(align), copy=bool(copy))
    except TypeError as exc:
        raise pickle.UnpicklingError(f"numpy.dtype({spec!r}): {exc}") from None


def _frombuffer(buffer: Any, dtype: Any, shape: Any, order: Any) -> np.ndarray:
    _check_array(shape, dtype)
    if order not in ("C", "F") or not isinstance(buffer, bytes | bytearray | pickle.PickleBuffer):
        raise pickle.UnpicklingError("numeric._frombuffer with arguments an array never has")
    flat = np.frombuffer(memoryview(buffer), dtype=dtype)
    if flat.size != math.prod(shape):
        raise pickle.UnpicklingError(f"an array of shape {shape} with {flat.size} elements of data")
    return flat.reshape(shape, order=order).copy()


def _latin1(text: Any, encoding: Any = "latin1") -> bytes:
    # protocols 0-2 write bytes as _codecs.encode(text, "latin1")
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode with arguments other than (text, 'latin1')")
    return text.encode("latin1")


_NUMPY_GLOBALS: dict[tuple[str, str], Any] = {
    ("numpy", "ndarray"): _ARRAY_TYPE,
    ("numpy", "dtype"): _Global("numpy.dtype", _dtype),
    ("_codecs", "encode"): _Global("_codecs.encode", _latin1),
}
for _core in ("numpy.core", "numpy._core"):  # NumPy 1 writes numpy.core, NumPy 2 numpy._core
    _NUMPY_GLOBALS[(f"{_core}.multiarray", "_reconstruct")] = _Global("multiarray._reconstruct", _reconstruct)
    _NUMPY_GLOBALS[(f"{_core}.multiarray", "scalar")] = _Global("multiarray.scalar", _scalar)
    _NUMPY_GLOBALS[(f"{_core}.numeric", "_frombuffer")] = _Global("numeric._frombuffer", _frombuffer)


class DeepCubeAUnpickler(pickle.Unpickler):
    """An unpickler that builds only plain containers, NumPy arrays and scalars of numbers or text,
    and :class:`DeepCubeAState` stand-ins for DeepCubeA's state classes (:data:`STATE_CLASSES`).
    Any other global is refused with :class:`UnsafePickleError` naming it, before it is looked up:
    nothing is imported and nothing of the file runs. ``source`` names the file in messages."""

    def __init__(self, file: Any, source: str) -> None:
        super().__init__(file, encoding="latin1")  # latin1: NumPy's arrays from Python 2 pickles
        self.source = source

    def find_class(self, module: str, name: str) -> Any:
        key = f"{module}.{name}"
        if (module, name) in _NUMPY_GLOBALS:
            return _NUMPY_GLOBALS[(module, name)]
        if key in _STAND_INS:
            return _STAND_INS[key]
        if module == "environments" or module.startswith("environments."):
            known = ", ".join(STATE_CLASSES)
            raise DeepCubeAFileError(
                f"{self.source}: {key} is not a DeepCubeA state class this importer reads ({known}); "
                "nothing from the file was run"
            )
        raise UnsafePickleError(
            f"{self.source}: refused: the pickle asks for {key}, which is neither part of a NumPy array "
            "nor a DeepCubeA state class; nothing from the file was run",
            key,
        )


def load_pickle(data: bytes, source: str) -> Any:
    """What a pickle holds, read with :class:`DeepCubeAUnpickler` (``source`` names it in errors):
    :class:`DeepCubeAFileError` for a file that is not a complete pickle, :class:`UnsafePickleError`
    for a global it may not use."""
    if len(data) > MAX_FILE_BYTES:
        raise DeepCubeAFileError(f"{source}: {len(data):,} bytes; at most {MAX_FILE_BYTES:,} are read")
    try:
        return DeepCubeAUnpickler(io.BytesIO(data), source).load()
    except DeepCubeAFileError:
        raise
    except _TooBig as exc:
        raise DeepCubeAFileError(f"{source}: refused: {exc}") from None
    except EOFError:
        raise DeepCubeAFileError(f"{source}: not a complete pickle (the file ends early)") from None
    except MemoryError:
        raise DeepCubeAFileError(f"{source}: refused: the pickle needs more memory than there is") from None
    except RecursionError:
        raise DeepCubeAFileError(f"{source}: refused: the pickle nests too deeply") from None
    except Exception as exc:  # the unpickler's errors: UnpicklingError, ValueError, TypeError, ...
        why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        if isinstance(exc, pickle.UnpicklingError) and "truncated" in why:
            raise DeepCubeAFileError(f"{source}: not a complete pickle (the file ends early)") from None
        raise DeepCubeAFileError(f"{source}: not a readable pickle ({why})") from None


# ---- the state conversions ----------------------------------------------------------------------

#: DeepCubeA's face order (face ``f`` holds stickers ``9f .. 9f + 8``)
DEEPCUBEA_FACES = "UDLRBF"
#: per DeepCubeA face: outward normal, then the directions of its row index ``i`` and column index
#: ``j`` (x right, y up, z front): sticker ``(f, i, j)`` is at ``3 n + 2 (i - 1) a + 2 (j - 1) b``
CUBE3_FRAMES: dict[str, tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]] = {
    "U": ((0, 1, 0), (1, 0, 0), (0, 0, -1)),
    "D": ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
    "L": ((-1, 0, 0), (0, 0, 1), (0, 1, 0)),
    "R": ((1, 0, 0), (0, 0, -1), (0, 1, 0)),
    "B": ((0, 0, -1), (-1, 0, 0), (0, 1, 0)),
    "F": ((0, 0, 1), (1, 0, 0), (0, 1, 0)),
}


def _cube3_facelets() -> np.ndarray:
    from puzzlezero.puzzles.cube.geometry import sticker_points

    own = {tuple(p): k for k, p in enumerate(sticker_points(3).tolist())}
    at = np.empty(54, dtype=np.intp)
    for f, face in enumerate(DEEPCUBEA_FACES):
        nrm, a, b = (np.array(v) for v in CUBE3_FRAMES[face])
        for i in range(3):
            for j in range(3):
                point = 3 * nrm + 2 * (i - 1) * a + 2 * (j - 1) * b
                at[own[tuple(point.tolist())]] = 9 * f + 3 * i + j
    at.setflags(write=False)
    return at


#: ``CUBE3_FACELETS[k]``: DeepCubeA's sticker index at this project's facelet ``k``
CUBE3_FACELETS = _cube3_facelets()
#: DeepCubeA face number -> this project's colour (the index of the face in ``URFDLB``)
_CUBE3_COLOURS = np.array(["URFDLB".index(face) for face in DEEPCUBEA_FACES], dtype=np.uint8)
#: DeepCubeA's cube actions in its order: ``(face, direction)``
CUBE3_MOVES = tuple((face, sign) for face in DEEPCUBEA_FACES for sign in (-1, 1))


@dataclass(frozen=True)
class DeepCubeASet:
    """A DeepCubeA data file converted.

    Attributes:
        puzzle: this project's puzzle of the states.
        class_name: DeepCubeA's state class (``"environments.cube3.Cube3State"``).
        states: ``[N, S]``, in the file's order (case ``id`` = index).
        solutions: the file's solutions as this project's actions, each replayed to the goal
            (``None`` where the file has none).
        optimal: the optimal length of each state, where known (else ``None``), and
            ``optimal_solutions`` an optimal solution of each.
        optimal_note: where the optimal lengths come from, for the case file.
        best_known: the file's solutions where they are not known to be optimal (DeepCubeA's own
            search results, ``results.pkl``, or a set whose solutions were not published as
            optimal), for ``best_known`` lengths; else ``None``.
        results: the file is DeepCubeA's search output (it has ``paths``), not a test set.
    """

    puzzle: Puzzle
    class_name: str
    states: np.ndarray
    solutions: list[list[int]] | None
    optimal: list[int] | None
    optimal_solutions: list[list[int]] | None
    optimal_note: str | None
    best_known: list[list[int]] | None
    results: bool


def read_deepcubea(path: str | os.PathLike[str], puzzle: str | None = None) -> DeepCubeASet:
    """Read a DeepCubeA data file (``data/<puzzle>/test/data_0.pkl``) safely and convert it; with
    ``puzzle`` given, the file must hold that puzzle's states."""
    path = Path(path)
    shown = str(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise DeepCubeAFileError(f"{shown}: not a file")
        if size > MAX_FILE_BYTES:
            raise DeepCubeAFileError(f"{shown}: {size:,} bytes; at most {MAX_FILE_BYTES:,} are read")
        data = path.read_bytes()
    except FileNotFoundError:
        raise DeepCubeAFileError(f"{shown}: no such file") from None
    except OSError as exc:
        raise DeepCubeAFileError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    return read_deepcubea_bytes(data, shown, puzzle)


def read_deepcubea_bytes(data: bytes, source: str, puzzle: str | None = None) -> DeepCubeASet:
    """:func:`read_deepcubea` of a file's bytes; ``source`` names it in messages."""
    content = load_pickle(data, source)
    if not isinstance(content, dict):
        raise DeepCubeAFileError(
            f"{source}: holds a {_kind(content)}, not DeepCubeA's dict of 'states' (and 'solutions')"
        )
    if "states" not in content:
        keys = ", ".join(repr(k) for k in list(content)[:8]) or "none"
        raise DeepCubeAFileError(f"{source}: no 'states' in the file (its keys: {keys})")
    raw_states = content["states"]
    if not isinstance(raw_states, list | tuple):
        raise DeepCubeAFileError(f"{source}: 'states' is a {_kind(raw_states)}, not a list of states")
    if not raw_states:
        raise DeepCubeAFileError(f"{source}: 'states' is empty")
    if len(raw_states) > MAX_STATES:
        raise DeepCubeAFileError(f"{source}: {len(raw_states):,} states; at most {MAX_STATES:,} are read")
    for i, s in enumerate(raw_states):
        if not isinstance(s, DeepCubeAState):
            raise DeepCubeAFileError(
                f"{source}: state {i} is a {_kind(s)}, not one of DeepCubeA's state objects "
                f"({', '.join(STATE_CLASSES)})"
            )
    first = raw_states[0]
    for i, s in enumerate(raw_states):
        if type(s) is not type(first):
            raise DeepCubeAFileError(f"{source}: state {i} is a {s.class_name}, state 0 a {first.class_name}")
        missing = [a for a in STATE_CLASSES[s.class_name] if a not in s.fields]
        if missing:
            raise DeepCubeAFileError(f"{source}: state {i} ({s.class_name}) has no {', '.join(missing)}")
    converter = _CONVERTERS[first.class_name]
    p = _puzzle_of(first, source, puzzle)
    states = np.stack(
        [converter.state(p, s.fields, f"{source}: state {i}") for i, s in enumerate(raw_states)]
    )
    results = "paths" in content  # DeepCubeA's search output (results.pkl), not a test set
    solutions = None
    if content.get("solutions") is not None:
        solutions = _solutions(p, converter, content["solutions"], states, source)
    published_optimal = solutions is not None and not results and p.name in _OPTIMAL_SETS
    optimal: list[int] | None = None
    optimal_solutions: list[list[int]] | None = None
    note = None
    if p.name.startswith("lightsout"):
        optimal_solutions = _min_presses(p, states)
        optimal = [len(s) for s in optimal_solutions]
        note = (
            "the size of the one set of distinct presses that solves the state (computed over GF(2): "
            "the toggle matrix has full rank, so it is the optimum)"
        )
    elif published_optimal:
        optimal_solutions = solutions
        optimal = [len(s) for s in optimal_solutions or ()]
        note = "the length of the optimal solution published with the set, replayed to the goal"
    best_known = None if published_optimal else solutions
    return DeepCubeASet(
        p, first.class_name, states, solutions, optimal, optimal_solutions, note, best_known, results
    )


def _kind(value: Any) -> str:
    if isinstance(value, DeepCubeAState):
        return value.class_name
    if isinstance(value, np.ndarray):
        return f"NumPy array of shape {value.shape}"
    return type(value).__name__


def _puzzle_of(first: DeepCubeAState, source: str, named: str | None) -> Puzzle:
    """The puzzle the file's states are of (from the first state's class and size), which must be
    ``named`` where given."""
    from puzzlezero.registry import make

    kind = first.class_name
    if kind.endswith("Cube3State"):
        name = "cube3"
    elif kind.endswith("SokobanState"):
        name = "sokoban"
    else:
        size = _array(first.fields["tiles"], f"{source}: state 0: tiles").size
        side = math.isqrt(size)
        if side < 2 or side * side != size:
            raise DeepCubeAFileError(f"{source}: state 0 has {size} tiles, not a square board")
        name = f"puzzle{size - 1}" if kind.endswith("NPuzzleState") else f"lightsout{side}"
    if named is not None and named != name:
        raise DeepCubeAFileError(f"{source} holds {name} states ({kind}), not {named}")
    try:
        return make(name)
    except UnknownNameError:
        raise DeepCubeAFileError(
            f"{source}: its states are of {name} ({kind}), which is not a puzzle here"
        ) from None


def _array(value: Any, where: str) -> np.ndarray:
    """``value`` as a NumPy array of numbers (a list of numbers too)."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        arr = np.asarray([])
    if arr.dtype.kind not in "biu" and not (arr.dtype.kind == "f" and np.all(np.mod(arr, 1) == 0)):
        raise DeepCubeAFileError(f"{where} is not an array of whole numbers ({_kind(value)})")
    return arr


def _whole(value: Any, where: str, n: int) -> np.ndarray:
    """``value`` as ``int64[n]`` (any shape of ``n`` elements, read row-major)."""
    arr = _array(value, where)
    if arr.size != n:
        raise DeepCubeAFileError(f"{where} has {arr.size} values (shape {arr.shape}); expected {n}")
    return arr.reshape(-1).astype(np.int64)


def _checked(p: Puzzle, state: np.ndarray, where: str) -> np.ndarray:
    try:
        p.validate(state)
    except InvalidStateError as exc:
        raise DeepCubeAFileError(f"{where}: {exc}") from None
    return state


class _Converter:
    """How one state class becomes a puzzle's state and how its solutions' moves read."""

    def state(self, p: Puzzle, fields: dict[str, Any], where: str) -> np.ndarray:
        raise NotImplementedError

    def move(self, p: Puzzle, move: Any) -> int | None:
        """The action of one move of a solution, ``None`` where it cannot be read."""
        raise NotImplementedError


def _index(move: Any, count: int) -> int | None:
    if isinstance(move, bool | np.bool_) or not isinstance(move, int | np.integer):
        return None
    return int(move) if 0 <= int(move) < count else None


def _text(move: Any) -> str | None:
    if isinstance(move, bytes | np.bytes_):
        move = move.decode("latin1")
    return str(move) if isinstance(move, str) else None


class _Cube3(_Converter):
    def state(self, p: Puzzle, fields: dict[str, Any], where: str) -> np.ndarray:
        colors = _whole(fields["colors"], f"{where}: colors", 54)
        if not np.array_equal(np.sort(colors), np.arange(54)):
            raise DeepCubeAFileError(
                f"{where}: colors must be DeepCubeA's 54 sticker numbers 0..53, each once"
            )
        return _checked(p, _CUBE3_COLOURS[colors[CUBE3_FACELETS] // 9], where)

    def move(self, p: Puzzle, move: Any) -> int | None:
        face: Any
        if isinstance(move, tuple | list) and len(move) == 2:
            face, sign = _text(move[0]), move[1]
        elif (text := _text(move)) is not None and len(text) >= 2:
            face, sign = text[0], text[1:]
            sign = int(sign) if sign in ("1", "-1") else None
        elif (i := _index(move, 12)) is not None:
            face, sign = CUBE3_MOVES[i]
        else:
            return None
        if face is None or face not in DEEPCUBEA_FACES or isinstance(sign, bool) or sign not in (1, -1):
            return None
        from puzzlezero.puzzles.cube.notation import ACTION_NAMES

        return ACTION_NAMES.index(face if sign == 1 else f"{face}'")


class _Tiles(_Converter):
    """The sliding puzzles: tiles as they are, moves ``U D L R`` (or ``0..3``) as they are."""

    def state(self, p: Puzzle, fields: dict[str, Any], where: str) -> np.ndarray:
        n = int(p.state_shape[0])
        tiles = _whole(fields["tiles"], f"{where}: tiles", n)
        if tiles.min() < 0 or tiles.max() >= n:
            raise DeepCubeAFileError(f"{where}: tiles must be 0..{n - 1} (0 = blank), got {int(tiles.max())}")
        return _checked(p, tiles.astype(np.uint8), where)

    def move(self, p: Puzzle, move: Any) -> int | None:
        names = tuple(p.action_names)
        text = _text(move)
        if text is not None:
            return names.index(text.upper()) if text.upper() in names else None
        return _index(move, len(names))


class _Lights(_Converter):
    def state(self, p: Puzzle, fields: dict[str, Any], where: str) -> np.ndarray:
        lights = _whole(fields["tiles"], f"{where}: tiles", int(p.state_shape[0]))
        if not np.isin(lights, (0, 1)).all():
            raise DeepCubeAFileError(f"{where}: tiles must be 0 (off) or 1 (on), got {int(lights.max())}")
        return _checked(p, lights.astype(np.uint8), where)

    def move(self, p: Puzzle, move: Any) -> int | None:
        return _index(move, p.num_actions)


class _Sokoban(_Converter):
    def state(self, p: Puzzle, fields: dict[str, Any], where: str) -> np.ndarray:
        from puzzlezero.puzzles.sokoban.cells import AGENT, BOX, TARGET, WALL

        h, w = int(getattr(p, "height", 10)), int(getattr(p, "width", 10))
        planes = {}
        for name in ("walls", "boxes", "goals"):
            plane = _whole(fields[name], f"{where}: {name}", h * w)
            if not np.isin(plane, (0, 1)).all():
                raise DeepCubeAFileError(f"{where}: {name} must be {h}x{w} booleans")
            planes[name] = plane.astype(bool)
        agent = _whole(fields["agent"], f"{where}: agent", 2)
        r, c = (int(v) for v in agent)
        if not (0 <= r < h and 0 <= c < w):
            raise DeepCubeAFileError(f"{where}: agent at row {r} col {c} is off the {h}x{w} board")
        cells = np.zeros(h * w, dtype=np.uint8)
        cells[planes["walls"]] |= WALL
        cells[planes["goals"]] |= TARGET
        cells[planes["boxes"]] |= BOX
        cells[r * w + c] |= AGENT
        return _checked(p, cells, where)

    def move(self, p: Puzzle, move: Any) -> int | None:
        return _index(move, 4)  # DeepCubeA's 0..3 = up, down, left, right = U D L R here


_CONVERTERS: dict[str, _Converter] = {
    "environments.cube3.Cube3State": _Cube3(),
    "environments.n_puzzle.NPuzzleState": _Tiles(),
    "environments.lights_out.LOState": _Lights(),
    "environments.sokoban.SokobanState": _Sokoban(),
}


def _solutions(
    p: Puzzle, converter: _Converter, raw: Any, states: np.ndarray, source: str
) -> list[list[int]]:
    """The file's solutions as actions, each replayed on its state: a :class:`SolutionReplayError`
    naming the state for a move that cannot be read or a solution that does not reach the goal."""
    if not isinstance(raw, list | tuple) or len(raw) != len(states):
        what = f"{len(raw)} solutions" if isinstance(raw, list | tuple) else f"a {_kind(raw)}"
        raise DeepCubeAFileError(f"{source}: 'solutions' is {what} for {len(states)} states")
    out = []
    for i, moves in enumerate(raw):
        if isinstance(moves, np.ndarray):
            moves = moves.tolist()
        if not isinstance(moves, list | tuple) or len(moves) > MAX_SOLUTION_MOVES:
            raise SolutionReplayError(f"{source}: state {i}: its solution is not a list of moves", i)
        actions = []
        for k, move in enumerate(moves):
            a = converter.move(p, move)
            if a is None:
                raise SolutionReplayError(
                    f"{source}: state {i}: move {k + 1} of its solution, {move!r:.40}, is not a {p.name} move",
                    i,
                )
            actions.append(a)
        end = p.apply_moves(states[i], actions)
        if not bool(p.is_goal(end[None])[0]):
            raise SolutionReplayError(
                f"{source}: state {i}: its solution ({len(actions)} moves) does not reach the goal", i
            )
        out.append(actions)
    return out


def _min_presses(p: Puzzle, states: np.ndarray) -> list[list[int]]:
    from puzzlezero.classic.optimal.lightsout import min_presses

    return [np.flatnonzero(row).tolist() for row in min_presses(p, states)]


# ---- the case file ------------------------------------------------------------------------------


def repository_file(puzzle: str, results: bool = False) -> str:
    """The file of DeepCubeA's repository that holds ``puzzle``'s test set (or, with ``results``,
    DeepCubeA's own solutions of it)."""
    return f"results/{puzzle}/results.pkl" if results else f"data/{puzzle}/test/data_0.pkl"


def deepcubea_cases(found: DeepCubeASet, file_name: str | None = None) -> dict[str, Any]:
    """The case file of a converted set: ``{"puzzle", "source", "optimal_length"?, "cases": [{"id":
    index in the file, <the state's JSON>, "optimal_length"?, "optimal_solution"?, "best_known"?,
    "best_known_solution"?}]}``, which ``puzzlezero bench PUZZLE --cases FILE`` reads.
    ``file_name`` is the imported file's name, for the ``source`` line."""
    p = found.puzzle
    repo = repository_file(p.name, found.results)
    what = "DeepCubeA's own search results" if found.results else "DeepCubeA's test set"
    source = (
        f"{what}: {repo} of github.com/forestagostinelli/DeepCubeA "
        "(Agostinelli et al., Nature Machine Intelligence 2019)"
    )
    if file_name and Path(file_name).name != Path(repo).name:
        source += f", imported from {Path(file_name).name}"
    data: dict[str, Any] = {"puzzle": p.name, "source": source}
    if found.optimal_note:
        data["optimal_lengths"] = found.optimal_note
    else:
        data["optimal_lengths"] = "not known: the set publishes no optimal solutions"
    if found.best_known is not None:
        whose = "DeepCubeA's own solution" if found.results else "the solution in the file"
        data["best_known_lengths"] = f"the length of {whose}, replayed to the goal (not known to be optimal)"
    cases = []
    for i, state in enumerate(found.states):
        case: dict[str, Any] = {"id": i, **p.to_json(state)}
        if found.optimal is not None and found.optimal_solutions is not None:
            case["optimal_length"] = found.optimal[i]
            case["optimal_solution"] = _moves_text(p, found.optimal_solutions[i])
        if found.best_known is not None:
            case["best_known"] = len(found.best_known[i])
            case["best_known_solution"] = _moves_text(p, found.best_known[i])
        cases.append(case)
    data["cases"] = cases
    return data


def _moves_text(p: Puzzle, actions: Sequence[int]) -> str:
    return " ".join(p.format_moves(actions))
