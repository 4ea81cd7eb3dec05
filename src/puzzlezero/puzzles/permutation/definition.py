"""A permutation puzzle as data: positions, named moves as permutations, a goal of labels.

The native format (``puzzlezero-permutation/1``) is a JSON object::

    {
      "format": "puzzlezero-permutation/1",
      "name": "wreath_6-6",
      "description": "two rings of 6 sharing 2 positions",
      "positions": 10,
      "moves": {"l": [1, 2, 3, 4, 5, 0, 6, 7, 8, 9], "r": [...]},
      "costs": {"l": 1, "r": 1},
      "goal": "C;A;A;A;A;C;B;B;B;B",
      "wildcards": 0,
      "pieces": [[0], [1], ...],
      "scramble_depth": 30,
      "drawing": {"kind": "wreath", "left": 6, "right": 6}
    }

* ``positions`` ``N``: how many places a state has; a state is ``N`` labels.
* ``moves``: name -> permutation in array form, ``child = parent[perm]`` (NumPy indexing: position
  ``i`` of the child holds what position ``perm[i]`` of the parent held), in the order the actions
  are numbered (a model's outputs follow it). A move whose inverse is not among the moves gets one,
  named ``m'`` and appended after the given moves; a move that is its own inverse (an involution)
  stays one move. Names are 1-32 characters without spaces, ``.`` or ``;`` and not starting with
  ``-`` (``-m`` means the inverse of ``m`` in move text).
* ``costs`` (optional): name -> a positive cost, 1 for the moves not named; an added inverse costs
  what its move costs.
* ``goal``: ``N`` labels (a list, or one string joined by ``;``): the solved state. Labels may
  repeat (identical pieces: the six colours of a cube's stickers).
* ``wildcards`` (optional, default 0): a state is solved when at most this many positions differ
  from the goal.
* ``pieces`` (optional): groups of positions that move together (a corner's three stickers); every
  move must carry each piece onto a piece.
* ``scramble_depth`` (optional, default 30): the deepest backward scramble of training states.
* ``drawing`` (optional): how a viewer lays the positions out: ``{"kind": "cube", "size": n}``,
  ``{"kind": "globe", "rows": r, "columns": c}``, ``{"kind": "wreath", "left": a, "right": b}``
  or ``{"kind": "grid", "columns": c}``.

Nothing in a definition is code: it is read as JSON, checked field by field, and every error names
the file and the field (:class:`~puzzlezero.errors.DefinitionError`). Other formats (CayleyPy's
generator files, GAP cycle notation, cubing.js KPuzzle JSON) are read by the modules beside this one
into the same fields (:func:`puzzlezero.puzzles.permutation.files.read_definition` tells them apart).

>>> d = Definition.from_dict({"format": FORMAT, "name": "three", "positions": 3,
...                           "moves": {"t": [1, 2, 0]}, "goal": "A;B;C"})
>>> d.move_names, d.perms.tolist()
(('t', "t'"), [[1, 2, 0], [2, 0, 1]])
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import DefinitionError

__all__ = [
    "DEFINITION_FILE",
    "DRAWING_KINDS",
    "check_model_definition",
    "FORMAT",
    "MAX_COST",
    "MAX_MOVES",
    "MAX_POSITIONS",
    "NAME_PATTERN",
    "Definition",
    "refuse_repeated_keys",
]

#: the native format's name and version
FORMAT = "puzzlezero-permutation/1"
#: the file a model folder of a permutation puzzle holds its puzzle's definition in
DEFINITION_FILE = "definition.json"
#: bounds on a definition's size, checked before any array is made
MAX_POSITIONS = 100_000
MAX_MOVES = 4096
#: the largest cost of one move
MAX_COST = 1e6
#: the viewer layouts a definition may ask for, with their integer fields
DRAWING_KINDS: dict[str, tuple[str, ...]] = {
    "cube": ("size",),
    "globe": ("rows", "columns"),
    "wreath": ("left", "right"),
    "grid": ("columns",),
}
#: what a puzzle's name may be (the registry's rule)
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_MOVE = re.compile(r"[^\s.;-][^\s.;]{0,31}")
_LABEL = re.compile(r"[^\s;]{1,32}")
_FIELDS = (
    "format",
    "name",
    "description",
    "positions",
    "moves",
    "costs",
    "goal",
    "wildcards",
    "pieces",
    "scramble_depth",
    "drawing",
)


def _int(value: Any, what: str, lo: int, hi: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not lo <= int(value) <= hi:
        raise DefinitionError(f"{where}: {what} must be a whole number from {lo} to {hi}, got {value!r}")
    return int(value)


def _permutation(name: str, values: Any, n: int, where: str) -> np.ndarray:
    if not isinstance(values, list | tuple | np.ndarray) or len(values) != n:
        size = len(values) if isinstance(values, list | tuple | np.ndarray) else type(values).__name__
        raise DefinitionError(f"{where}: move {name!r} must list {n} positions, got {size}")
    try:
        perm = np.asarray(values)
        ok = perm.ndim == 1 and perm.dtype.kind in "iu"
    except (TypeError, ValueError):
        ok = False
    if not ok or any(isinstance(v, bool) for v in values):
        raise DefinitionError(
            f"{where}: move {name!r} must be a list of whole numbers (positions 0..{n - 1})"
        )
    perm = perm.astype(np.int64)
    outside = perm[(perm < 0) | (perm >= n)]
    if outside.size:
        raise DefinitionError(f"{where}: move {name!r} names position {int(outside[0])}, outside 0..{n - 1}")
    counts = np.bincount(perm, minlength=n)
    if (counts != 1).any():
        twice = int(np.flatnonzero(counts > 1)[0])
        never = int(np.flatnonzero(counts == 0)[0])
        raise DefinitionError(
            f"{where}: move {name!r} is not a permutation: position {twice} appears "
            f"{int(counts[twice])} times and position {never} never"
        )
    if (perm == np.arange(n)).all():
        raise DefinitionError(f"{where}: move {name!r} moves nothing (it is the identity)")
    return perm


def _labels(value: Any, n: int, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        labels = tuple(value.split(";"))
    elif isinstance(value, list | tuple):
        labels = tuple(str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value)
    else:
        raise DefinitionError(f"{where}: goal must be {n} labels (a list, or a string joined by ';')")
    if len(labels) != n:
        raise DefinitionError(f"{where}: goal has {len(labels)} labels for {n} positions")
    for i, lab in enumerate(labels):
        if not isinstance(lab, str) or not _LABEL.fullmatch(lab):
            raise DefinitionError(
                f"{where}: goal label {lab!r} at position {i}: use 1-32 characters without spaces or ';'"
            )
    return labels


def _invert(perm: np.ndarray) -> np.ndarray:
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size, dtype=perm.dtype)
    return inv


def _inverse_name(name: str, taken: set[str]) -> str:
    base = name[:-1] if name.endswith("'") else f"{name}'"
    if base and base not in taken:
        return base
    k = 2
    while f"{name}-inv{k}" in taken:
        k += 1
    return f"{name}-inv{k}"


@dataclass(frozen=True, eq=False)
class Definition:
    """A validated permutation puzzle: every field of the native format, the inverses added.

    ``perms`` is ``int64[A, N]`` (read-only), ``inverse[a]`` the action undoing ``a``; equality and
    hashing go by :attr:`digest` (the moves, their costs, the goal and the wildcards)."""

    name: str
    positions: int
    move_names: tuple[str, ...]
    perms: np.ndarray = field(repr=False)
    inverse: tuple[int, ...] = field(repr=False)
    costs: tuple[float, ...] = field(repr=False)
    goal: tuple[str, ...] = field(repr=False)
    wildcards: int = 0
    pieces: tuple[tuple[int, ...], ...] = field(default=(), repr=False)
    scramble_depth: int = 30
    drawing: Mapping[str, Any] | None = field(default=None, repr=False)
    description: str = ""
    #: how many of :attr:`move_names` the source gave (the rest are inverses added)
    given_moves: int = 0

    # ---- reading -------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Any, where: str = "definition") -> Definition:
        """Check a native definition (a parsed JSON object) field by field; ``where`` names the
        source in every error (a file name)."""
        if not isinstance(data, Mapping):
            raise DefinitionError(f"{where}: a definition is a JSON object, got {type(data).__name__}")
        unknown = [k for k in data if k not in _FIELDS]
        if unknown:
            raise DefinitionError(f"{where}: unknown field {unknown[0]!r}; fields are {', '.join(_FIELDS)}")
        if data.get("format") != FORMAT:
            raise DefinitionError(f"{where}: 'format' must be {FORMAT!r}, got {data.get('format')!r}")
        name = data.get("name")
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise DefinitionError(
                f"{where}: 'name' {name!r}: use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"
            )
        description = data.get("description", "")
        if not isinstance(description, str) or len(description) > 500:
            raise DefinitionError(f"{where}: 'description' must be text of at most 500 characters")
        n = _int(data.get("positions"), "'positions'", 1, MAX_POSITIONS, where)
        moves = data.get("moves")
        if not isinstance(moves, Mapping) or not moves:
            raise DefinitionError(
                f"{where}: 'moves' must be an object of move name -> permutation, not empty"
            )
        if len(moves) > MAX_MOVES:
            raise DefinitionError(f"{where}: {len(moves)} moves; at most {MAX_MOVES}")
        names: list[str] = []
        perms: list[np.ndarray] = []
        for mname, values in moves.items():
            if not isinstance(mname, str) or not _MOVE.fullmatch(mname):
                raise DefinitionError(
                    f"{where}: move name {mname!r}: use 1-32 characters without spaces, '.' or ';', "
                    "not starting with '-'"
                )
            names.append(mname)
            perms.append(_permutation(mname, values, n, where))
        seen: dict[bytes, str] = {}
        for mname, perm in zip(names, perms, strict=True):
            other = seen.setdefault(perm.tobytes(), mname)
            if other != mname:
                raise DefinitionError(f"{where}: moves {other!r} and {mname!r} are the same permutation")
        raw_costs = data.get("costs", {})
        if not isinstance(raw_costs, Mapping):
            raise DefinitionError(f"{where}: 'costs' must be an object of move name -> cost")
        for mname, c in raw_costs.items():
            if mname not in moves:
                raise DefinitionError(f"{where}: 'costs' names {mname!r}, which is not a move")
            if (
                isinstance(c, bool)
                or not isinstance(c, int | float)
                or not math.isfinite(c)
                or not 0 < c <= MAX_COST
            ):
                raise DefinitionError(
                    f"{where}: the cost of {mname!r} must be a positive number of at most {MAX_COST:g}, got {c!r}"
                )
        costs = [float(raw_costs.get(m, 1.0)) for m in names]
        # m' means the inverse of m in move text: a given move of that name must be it
        by_name = dict(zip(names, perms, strict=True))
        for mname, perm in by_name.items():
            base = by_name.get(mname[:-1]) if mname.endswith("'") else None
            if base is not None and not (base[perm] == np.arange(n)).all():
                raise DefinitionError(
                    f"{where}: move {mname!r} is not the inverse of {mname[:-1]!r}; in move text m' means "
                    "the inverse of m: give it another name"
                )
        # inverses: paired where given, added where not
        given = len(names)
        index = {p.tobytes(): i for i, p in enumerate(perms)}
        inverse = [-1] * given
        taken = set(names)
        for i in range(given):
            if inverse[i] >= 0:
                continue
            inv = _invert(perms[i])
            j = index.get(inv.tobytes())
            if j is None:
                j = len(names)
                new = _inverse_name(names[i], taken)
                taken.add(new)
                names.append(new)
                perms.append(inv)
                costs.append(costs[i])
                index[inv.tobytes()] = j
                inverse.append(i)
            inverse[i] = j
            if j < given:
                inverse[j] = i
        if len(names) > MAX_MOVES:
            raise DefinitionError(f"{where}: {len(names)} moves with their inverses; at most {MAX_MOVES}")
        goal = _labels(data.get("goal"), n, where)
        wildcards = _int(data.get("wildcards", 0), "'wildcards'", 0, n - 1, where) if n > 1 else 0
        depth = _int(data.get("scramble_depth", 30), "'scramble_depth'", 1, 100_000, where)
        table = np.stack(perms).astype(np.int64)
        table.flags.writeable = False
        pieces = cls._pieces(data.get("pieces"), table, names, n, where)
        drawing = cls._drawing(data.get("drawing"), n, where)
        return cls(
            name=name,
            positions=n,
            move_names=tuple(names),
            perms=table,
            inverse=tuple(inverse),
            costs=tuple(costs),
            goal=goal,
            wildcards=wildcards,
            pieces=pieces,
            scramble_depth=depth,
            drawing=drawing,
            description=description,
            given_moves=given,
        )

    @staticmethod
    def _pieces(
        value: Any, perms: np.ndarray, names: Sequence[str], n: int, where: str
    ) -> tuple[tuple[int, ...], ...]:
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            raise DefinitionError(f"{where}: 'pieces' must be a list of lists of positions")
        owner = np.full(n, -1, dtype=np.int64)
        pieces: list[tuple[int, ...]] = []
        for k, piece in enumerate(value):
            if not isinstance(piece, list | tuple) or not piece:
                raise DefinitionError(f"{where}: piece {k} must be a non-empty list of positions")
            pos = tuple(_int(p, f"piece {k}'s position", 0, n - 1, where) for p in piece)
            for p in pos:
                if owner[p] >= 0:
                    raise DefinitionError(f"{where}: position {p} is in pieces {int(owner[p])} and {k}")
                owner[p] = k
            pieces.append(pos)
        # every move carries each piece onto a piece of its size: the positions of a piece land on
        # positions of one owner (checked for all moves and positions at once)
        img = np.empty_like(perms)
        img[np.arange(perms.shape[0])[:, None], perms] = np.arange(n)
        first = np.full(n, -1, dtype=np.int64)
        sizes = np.array([len(p) for p in pieces], dtype=np.int64)
        for pos in pieces:
            first[list(pos)] = pos[0]
        covered = np.flatnonzero(owner >= 0)
        dest = owner[img[:, covered]]  # [A, covered]: the owner each position's piece lands on
        lead = owner[img[:, first[covered]]]
        bad = (dest < 0) | (dest != lead) | (sizes[np.maximum(dest, 0)] != sizes[owner[covered]])
        if bad.any():
            a, j = (int(v[0]) for v in np.nonzero(bad))
            k = int(owner[covered[j]])
            raise DefinitionError(
                f"{where}: move {names[a]!r} breaks piece {k} (positions {list(pieces[k])}): its "
                "positions do not land on one piece"
            )
        return tuple(pieces)

    @staticmethod
    def _drawing(value: Any, n: int, where: str) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping) or value.get("kind") not in DRAWING_KINDS:
            raise DefinitionError(
                f"{where}: 'drawing' must be an object whose kind is one of {', '.join(DRAWING_KINDS)}"
            )
        kind = str(value["kind"])
        fields = DRAWING_KINDS[kind]
        extra = [k for k in value if k not in ("kind", *fields)]
        if extra:
            raise DefinitionError(
                f"{where}: a {kind} drawing has fields {', '.join(fields)}, not {extra[0]!r}"
            )
        out: dict[str, Any] = {"kind": kind}
        for f in fields:
            out[f] = _int(value.get(f), f"the drawing's {f!r}", 1, 1000, where)
        holds = {
            "cube": lambda d: 6 * d["size"] ** 2,
            "globe": lambda d: (d["rows"] + 1) * 2 * d["columns"],
            "wreath": lambda d: d["left"] + d["right"] - 2,
            "grid": lambda d: n,
        }[kind](out)
        if holds != n:
            raise DefinitionError(f"{where}: a {kind} drawing of {out} has {holds} positions, not {n}")
        return out

    # ---- writing -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The native JSON object, every move written out (inverses included), which
        :meth:`from_dict` reads back to an equal definition."""
        out: dict[str, Any] = {"format": FORMAT, "name": self.name}
        if self.description:
            out["description"] = self.description
        out["positions"] = self.positions
        out["moves"] = {m: self.perms[a].tolist() for a, m in enumerate(self.move_names)}
        if any(c != 1.0 for c in self.costs):
            out["costs"] = {m: c for m, c in zip(self.move_names, self.costs, strict=True)}
        out["goal"] = ";".join(self.goal)
        if self.wildcards:
            out["wildcards"] = self.wildcards
        if self.pieces:
            out["pieces"] = [list(p) for p in self.pieces]
        if self.scramble_depth != 30:
            out["scramble_depth"] = self.scramble_depth
        if self.drawing is not None:
            out["drawing"] = dict(self.drawing)
        return out

    def with_goal(self, goal: Sequence[str] | str, wildcards: int = 0, name: str | None = None) -> Definition:
        """The same moves with another goal (the competition's goals are label patterns over one
        puzzle's positions)."""
        data = self.to_dict()
        data.update(goal=goal if isinstance(goal, str) else list(goal), wildcards=wildcards)
        if name is not None:
            data["name"] = name
        return Definition.from_dict(data, where=name or self.name)

    @property
    def digest(self) -> str:
        """sha256 of the moves (names and permutations, in order), their costs, the goal and the
        wildcards: what a model trained on the puzzle depends on."""
        payload = json.dumps(
            [self.positions, self.move_names, self.costs, self.goal, self.wildcards], separators=(",", ":")
        ).encode()
        h = hashlib.sha256(payload)
        h.update(np.ascontiguousarray(self.perms, dtype="<i8").tobytes())
        return h.hexdigest()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Definition) and other.name == self.name and other.digest == self.digest

    def __hash__(self) -> int:
        return hash((self.name, self.digest))


# ---- files -------------------------------------------------------------------------------------
def refuse_repeated_keys(
    say: str = "the key {key!r} appears twice in one object",
) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """A ``json.loads`` object hook that refuses a key given twice in one object (where JSON
    readers keep the last silently), with ``say`` (``{key}`` the key) as the message."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                raise DefinitionError(say.format(key=k))
            out[k] = v
        return out

    return hook


def check_model_definition(folder: str | os.PathLike[str], definition: Definition) -> None:
    """Refuse a model folder whose ``definition.json`` (the puzzle it was trained on) has other
    moves or another goal than ``definition``: its values would be of another puzzle. A folder
    without the file (a model of a built-in puzzle) is accepted."""
    path = Path(folder) / DEFINITION_FILE
    if not path.is_file():
        return
    from puzzlezero.errors import ModelFileError

    try:
        trained = Definition.from_dict(json.loads(path.read_text(encoding="utf-8")), where=str(path))
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"{path}: cannot read the model's puzzle definition: {exc}") from None
    if trained.digest != definition.digest:
        raise ModelFileError(
            f"the model in {folder} was trained on another definition of {trained.name!r} (other moves, "
            f"costs, goal or wildcards than {definition.name!r}'s): its values do not apply"
        )
