"""The cubes' move notation: action names, reading a move sequence in standard notation (quarter
turns, or the half-turn metric), and writing quarter turns with half turns joined (``R R`` -> ``R2``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from puzzlezero.errors import InvalidMoveError

__all__ = [
    "ACTION_NAMES",
    "FACE_ORDER",
    "HTM_ACTION_NAMES",
    "MOVE_MARKS",
    "compact_moves",
    "read_htm_moves",
    "read_moves",
]

#: action names, index = action id; a move and its inverse are neighbours (``a ^ 1``)
ACTION_NAMES = ("U", "U'", "D", "D'", "L", "L'", "R", "R'", "F", "F'", "B", "B'")
#: the faces in action order: face ``k`` turns in actions ``2k`` and ``2k + 1``
FACE_ORDER = "UDLRFB"
#: half-turn metric (``cube3htm``): ``X, X', X2`` for each face of ``UDLRFB``, action ``3k + j``
HTM_ACTION_NAMES = tuple(f"{face}{mark}" for face in FACE_ORDER for mark in ("", "'", "2"))


# ---- reading moves -----------------------------------------------------------------------------------
_MOVE_TOKEN = re.compile(r"(?:[URFDLB](?:2'|'2|2|')?)+")
_ONE_MOVE = re.compile(r"([URFDLB])(2'|'2|2|')?")
_WIDE_TOKEN = re.compile(r"(?:[URFDLBurfdlb](?:2'|'2|2|')?)+")  # lower case: cubers' wide turns
_SEPARATORS = re.compile(r"[\s,]+")
#: characters that only a move sequence has (a state in letters has none of them)
MOVE_MARKS = re.compile("[2',\u2019\u2032]")
_MOVE_HELP = (
    "moves are U D L R F B (clockwise quarter turn of that face, seen looking at it), "
    "X' = counter-clockwise, X2 = two quarter turns, e.g. \"R U R' U'\""
)
_HTM_HELP = (
    "moves are U D L R F B (clockwise quarter turn of that face, seen looking at it), "
    "X' = counter-clockwise, X2 = half turn (one move), e.g. \"R U2 R' U'\""
)


def _read_turns(text: str | Sequence[str], help_text: str = _MOVE_HELP) -> list[tuple[int, str]]:
    """``(face index in "UDLRFB", suffix)`` of each move of a sequence in standard notation; the
    suffix is ``""``, ``"'"`` or a half-turn mark (``"2"``, ``"2'"``, ``"'2"``)."""
    if isinstance(text, str):
        tokens = _SEPARATORS.split(text.replace("\u2019", "'").replace("\u2032", "'"))
    else:
        tokens = [str(t).strip() for t in text]
    out: list[tuple[int, str]] = []
    for tok in tokens:
        if not tok:
            continue
        if not _MOVE_TOKEN.fullmatch(tok):
            if _WIDE_TOKEN.fullmatch(tok):
                wide = next(ch for ch in tok if ch.islower())
                raise InvalidMoveError(
                    f"{wide!r} is a wide turn in cubers' notation (two layers at once); puzzlezero's cubes "
                    f"take face turns U R F D L B (with ' and 2): write {wide.upper()!r} for the face turn"
                )
            raise InvalidMoveError(f"unknown move {tok!r}: {help_text}")
        for m in _ONE_MOVE.finditer(tok):
            out.append((FACE_ORDER.index(m.group(1)), m.group(2) or ""))
    return out


def read_moves(text: str | Sequence[str]) -> list[int]:
    """Quarter-turn action ids of a move sequence in standard notation (see
    :meth:`_Cube.parse_moves`): ``X2`` is two quarter turns (``X2'`` two counter-clockwise ones)."""
    out: list[int] = []
    for face, suffix in _read_turns(text):
        out.extend([2 * face + ("'" in suffix)] * (2 if "2" in suffix else 1))
    return out


def read_htm_moves(text: str | Sequence[str]) -> list[int]:
    """Half-turn-metric action ids (:data:`HTM_ACTION_NAMES`) of a move sequence in standard
    notation: ``X2`` is one move, and so are ``X2'`` and ``X'2`` (a half turn either way)."""
    return [
        3 * face + (2 if "2" in suffix else int(suffix == "'"))
        for face, suffix in _read_turns(text, _HTM_HELP)
    ]


def compact_moves(names: Sequence[str]) -> list[str]:
    """Quarter-turn names in half-turn notation: each pair of equal consecutive quarter turns
    becomes one half turn (``R R`` and ``R' R'`` -> ``R2``, ``R R R`` -> ``R2 R``); nothing else
    changes, so :func:`read_moves` of the result reaches the same state.

    >>> compact_moves(["R", "R", "U'", "U'", "U'", "F"])
    ['R2', 'U2', "U'", 'F']
    """
    out: list[str] = []
    i = 0
    while i < len(names):
        if i + 1 < len(names) and names[i + 1] == names[i]:
            out.append(names[i][0] + "2")
            i += 2
        else:
            out.append(names[i])
            i += 1
    return out
