"""cubing.js KPuzzle definitions (JSON), read as sticker-like permutations.

A KPuzzle has orbits of pieces, each with ``numPieces`` slots and ``numOrientations`` orientations::

    {"name": "3x3x3",
     "orbits": [{"orbitName": "CORNERS", "numPieces": 8, "numOrientations": 3}, ...],
     "defaultPattern": {"CORNERS": {"pieces": [0, 1, ...], "orientation": [0, 0, ...]}, ...},
     "moves": {"U": {"CORNERS": {"permutation": [1, 2, 3, 0, ...], "orientationDelta": [0, ...]}, ...}}}

Older files key ``orbits`` by name (``{"CORNERS": {"numPieces": 8, "numOrientations": 3}}``), call
the default pattern ``startStateData`` and a transformation's orientations ``orientation`` (or
``orientation_delta``); all are read. An orbit a move leaves out is left unchanged.

Semantics, as cubing.js applies a transformation ``T`` to a pattern ``S``: for each slot ``i``,
``S'.pieces[i] = S.pieces[T.permutation[i]]`` and ``S'.orientation[i] = (S.orientation[T.permutation[i]]
+ T.orientationDelta[i]) mod numOrientations`` (``permutation[i]`` names the slot whose piece
moves into slot ``i``).

Flattening: each slot of an orbit with ``o`` orientations becomes ``o`` positions, one per facet
``k`` of the slot (position ``offset + i*o + k``, orbits in order). A piece in slot ``i`` with
orientation ``r`` shows its facet ``f`` at facet ``(f + r) mod o`` of the slot, so a move is the
plain permutation ``child[(i, k)] = parent[(permutation[i], (k - orientationDelta[i]) mod o)]``, and
the ``o`` positions of a slot are listed as one of the definition's ``pieces``. The goal labels
position ``(i, k)`` of the default pattern ``{orbit}:{piece}:{facet}`` (``{orbit}:{piece}`` where
an orbit has one orientation); a piece number that the default pattern repeats gives identical
labels (identical pieces), and an ``orientationMod`` ``m`` makes facets equal mod ``m``.

Only ``moves`` become moves (``derivedMoves``, written as alg text, are not read); KPuzzle lists no
inverses, so the definition's checker adds them (``R'``).

:func:`write` goes the other way with one orbit ``POSITIONS`` of one orientation, which holds any
definition: the moves exactly, the goal up to the names of its labels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from puzzlezero.errors import DefinitionError
from puzzlezero.puzzles.permutation.definition import FORMAT, MAX_POSITIONS

__all__ = ["ORBIT", "read", "write"]

#: the single orbit :func:`write` uses
ORBIT = "POSITIONS"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PREFIX = re.compile(r"[^\s;:]{1,20}")


@dataclass(frozen=True)
class _Orbit:
    name: str
    pieces: int
    orientations: int
    offset: int


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ints(value: Any, n: int, what: str, where: str) -> list[int]:
    if not isinstance(value, list) or len(value) != n or not all(_whole(v) for v in value):
        raise DefinitionError(f"{where}: {what} must be a list of {n} whole numbers")
    return [int(v) for v in value]


def _orbits(data: Mapping[str, Any], where: str) -> list[_Orbit]:
    raw = data.get("orbits")
    entries: list[tuple[Any, Any]]
    if isinstance(raw, list):
        entries = [(o.get("orbitName") if isinstance(o, Mapping) else None, o) for o in raw]
    elif isinstance(raw, Mapping):
        entries = list(raw.items())
    else:
        raise DefinitionError(
            f"{where}: 'orbits' must be a list of orbits (or an object keyed by orbit name)"
        )
    if not entries:
        raise DefinitionError(f"{where}: 'orbits' is empty")
    out: list[_Orbit] = []
    offset = 0
    for k, (name, spec) in enumerate(entries):
        if not isinstance(name, str) or not name or not isinstance(spec, Mapping):
            raise DefinitionError(
                f"{where}: orbit {k} needs an 'orbitName', 'numPieces' and 'numOrientations'"
            )
        if any(o.name == name for o in out):
            raise DefinitionError(f"{where}: the orbit {name!r} is defined twice")
        raw_pieces: Any = spec.get("numPieces")
        raw_orientations: Any = spec.get("numOrientations", 1)
        pieces = int(raw_pieces) if _whole(raw_pieces) else 0
        orientations = int(raw_orientations) if _whole(raw_orientations) else 0
        if pieces < 1 or orientations < 1:
            raise DefinitionError(
                f"{where}: orbit {name!r}: numPieces and numOrientations must be whole numbers from 1"
            )
        if offset + pieces * orientations > MAX_POSITIONS:
            raise DefinitionError(f"{where}: more than {MAX_POSITIONS} positions (orbit {name!r})")
        out.append(_Orbit(name, pieces, orientations, offset))
        offset += pieces * orientations
    return out


def _prefixes(orbits: list[_Orbit]) -> dict[str, str]:
    """The label prefix of each orbit: its name, or ``o{index}`` for all orbits if some name cannot
    be part of a label (spaces, ``;``, ``:``, or too long)."""
    if all(_PREFIX.fullmatch(o.name) for o in orbits):
        return {o.name: o.name for o in orbits}
    return {o.name: f"o{k}" for k, o in enumerate(orbits)}


def _goal(data: Mapping[str, Any], orbits: list[_Orbit], where: str) -> list[str]:
    pattern = data.get("defaultPattern", data.get("startStateData", data.get("startPieces")))
    if not isinstance(pattern, Mapping):
        raise DefinitionError(
            f"{where}: no 'defaultPattern' (or 'startStateData'): the solved pattern is needed"
        )
    for key in pattern:
        if not any(o.name == key for o in orbits):
            raise DefinitionError(f"{where}: defaultPattern names the orbit {key!r}, which 'orbits' lacks")
    prefix = _prefixes(orbits)
    labels: list[str] = []
    for orb in orbits:
        w = f"{where}: defaultPattern[{orb.name!r}]"
        spec = pattern.get(orb.name)
        if not isinstance(spec, Mapping):
            raise DefinitionError(f"{w} is missing")
        pieces = _ints(spec.get("pieces", spec.get("permutation")), orb.pieces, "'pieces'", w)
        if any(not 0 <= p < orb.pieces for p in pieces):
            raise DefinitionError(f"{w}: piece numbers must be from 0 to {orb.pieces - 1}")
        ori = spec.get("orientation")
        oris = [0] * orb.pieces if ori is None else _ints(ori, orb.pieces, "'orientation'", w)
        mods_raw = spec.get("orientationMod")
        mods = [0] * orb.pieces if mods_raw is None else _ints(mods_raw, orb.pieces, "'orientationMod'", w)
        for i in range(orb.pieces):
            m = mods[i] or orb.orientations
            if m < 1 or orb.orientations % m:
                raise DefinitionError(
                    f"{w}: orientationMod {mods[i]} at slot {i} must be 0 or a divisor of {orb.orientations}"
                )
            for k in range(orb.orientations):
                if orb.orientations == 1:
                    labels.append(f"{prefix[orb.name]}:{pieces[i]}")
                else:
                    labels.append(f"{prefix[orb.name]}:{pieces[i]}:{(k - oris[i]) % m}")
    return labels


def _move(name: str, spec: Any, orbits: list[_Orbit], where: str) -> list[int]:
    w = f"{where}: move {name!r}"
    if not isinstance(spec, Mapping):
        raise DefinitionError(f"{w} must be an object of orbit name -> transformation")
    for key in spec:
        if not any(o.name == key for o in orbits):
            raise DefinitionError(f"{w} names the orbit {key!r}, which 'orbits' lacks")
    perm: list[int] = []
    for orb in orbits:
        o = orb.orientations
        t = spec.get(orb.name)
        if t is None:
            perm.extend(range(orb.offset, orb.offset + orb.pieces * o))
            continue
        wo = f"{w}, orbit {orb.name!r}"
        if not isinstance(t, Mapping):
            raise DefinitionError(f"{wo} must have 'permutation' and 'orientationDelta'")
        p = _ints(t.get("permutation"), orb.pieces, "'permutation'", wo)
        if sorted(p) != list(range(orb.pieces)):
            raise DefinitionError(f"{wo}: 'permutation' must list each slot 0..{orb.pieces - 1} once")
        raw = t.get("orientationDelta", t.get("orientation_delta", t.get("orientation")))
        delta = [0] * orb.pieces if raw is None else _ints(raw, orb.pieces, "'orientationDelta'", wo)
        for i in range(orb.pieces):
            for k in range(o):
                perm.append(orb.offset + p[i] * o + (k - delta[i]) % o)
    return perm


def _name(data: Mapping[str, Any]) -> str:
    raw = data.get("name")
    if isinstance(raw, str) and _NAME.fullmatch(raw):
        return raw
    if isinstance(raw, str):
        cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", raw).strip("_.-")[:64]
        if cleaned and _NAME.fullmatch(cleaned):
            return cleaned
    return "kpuzzle"


def read(data: Mapping[str, Any], *, name: str | None = None, source: str | None = None) -> dict[str, Any]:
    """A KPuzzle definition (parsed JSON) as a native definition, flattened as the module describes.

    ``name`` defaults to the KPuzzle's own (made a valid name); ``source`` names the file in error
    messages."""
    where = source or "KPuzzle"
    if not isinstance(data, Mapping):
        raise DefinitionError(f"{where}: a KPuzzle definition is a JSON object")
    orbits = _orbits(data, where)
    goal = _goal(data, orbits, where)
    raw_moves = data.get("moves")
    if not isinstance(raw_moves, Mapping) or not raw_moves:
        raise DefinitionError(f"{where}: 'moves' must be a non-empty object of move name -> transformation")
    moves = {str(m): _move(str(m), spec, orbits, where) for m, spec in raw_moves.items()}
    out: dict[str, Any] = {
        "format": FORMAT,
        "name": name or _name(data),
        "positions": len(goal),
        "moves": moves,
        "goal": goal,
    }
    pieces = [
        list(range(orb.offset + i * orb.orientations, orb.offset + (i + 1) * orb.orientations))
        for orb in orbits
        if orb.orientations > 1
        for i in range(orb.pieces)
    ]
    if pieces:
        out["pieces"] = pieces
    return out


def write(defn: Mapping[str, Any]) -> dict[str, Any]:
    """A native definition as a KPuzzle with one orbit :data:`ORBIT` of one orientation: slot ``i``
    is position ``i``, each move's ``permutation`` is its array form, and the default pattern gives
    positions with equal goal labels the same piece number (the first such position's)."""
    moves = defn.get("moves")
    n = defn.get("positions")
    name = str(defn.get("name", "puzzle"))
    if not isinstance(moves, Mapping) or not moves or not _whole(n):
        raise DefinitionError(f"{name}: a definition needs 'positions' and 'moves' to be written")
    goal = defn.get("goal")
    labels = goal.split(";") if isinstance(goal, str) else [str(v) for v in goal or []]
    if len(labels) != n:
        raise DefinitionError(f"{name}: the goal has {len(labels)} labels for {n} positions")
    first: dict[str, int] = {}
    pieces = [first.setdefault(lab, j) for j, lab in enumerate(labels)]
    zeros = [0] * n
    out_moves: dict[str, Any] = {}
    for m, perm in moves.items():
        if len(perm) != n:
            raise DefinitionError(f"{name}: move {m!r} has {len(perm)} positions, not {n}")
        out_moves[str(m)] = {ORBIT: {"permutation": [int(v) for v in perm], "orientationDelta": list(zeros)}}
    return {
        "name": name,
        "orbits": [{"orbitName": ORBIT, "numPieces": n, "numOrientations": 1}],
        "defaultPattern": {ORBIT: {"pieces": pieces, "orientation": list(zeros)}},
        "moves": out_moves,
    }
