"""Rubik's cubes as sticker arrays: :class:`Cube3` (3x3x3) and :class:`Cube2` (2x2x2).

**State.** ``uint8[6 * n * n]`` sticker colours in Kociemba facelet order ``U1..U9 R1..R9 F1..F9
D1..D9 L1..L9 B1..B9`` (cube2: four stickers per face, same face order), each face read row by row
as seen looking at it (U with B at the top, D with F at the top, the side faces with U at the top).
Colour ``c`` in ``0..5`` is the colour of face ``"URFDLB"[c]``'s centre, so the facelet string is
``"URFDLB"[state]`` and solved is ``UUUUUUUUURRRRRRRRR...BBBBBBBBB``.

**Moves.** Twelve quarter turns (quarter-turn metric), action ``a`` is named
``U U' D D' L L' R R' F F' B B'``\\ ``[a]``; ``X`` turns face X clockwise as seen looking at it,
``X'`` counter-clockwise, so ``inverse_action[a] = a ^ 1``. Each move is a precomputed sticker
permutation ``perm`` (``child = parent[perm]``); ``expand`` is one ``np.take``.

The move and rotation tables are derived from 3-D sticker coordinates rather than typed in, and the
piece tables (which stickers form the corner at UFR, ...) follow Kociemba's definitions; both are
checked against the published DeepCubeA test set in the tests.

>>> import numpy as np
>>> from puzzlezero import make
>>> cube = make("cube3")
>>> s = cube.parse("R U R' U'")
>>> cube.format(cube.apply_moves(s, cube.parse_moves("U R U' R'")))[:9]
'UUUUUUUUU'

:class:`Cube3HTM` (``cube3htm``) is the same cube in the **half-turn metric**: 18 moves, action
``3k, 3k + 1, 3k + 2`` = ``X, X', X2`` for face ``X`` = ``"UDLRFB"[k]``, every move costing 1 by
default; ``half_turn_cost`` gives half turns another cost (a robot whose half turns take 1.5 times
as long), which every search and training objective then minimises.

>>> htm = make("cube3htm")
>>> htm.format_moves(htm.parse_moves("R U2' F'"))
['R', 'U2', "F'"]

Why one file: the cubes' rules (sticker tables, moves, notation hooks, symmetries) are shared by
every cube class and read together.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidMoveError, InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Goal, Puzzle
from puzzlezero.puzzles.cube.geometry import FACES, FRAMES, StickerCube, perm_of, sticker_points
from puzzlezero.puzzles.cube.notation import (
    ACTION_NAMES,
    FACE_ORDER,
    HTM_ACTION_NAMES,
    MOVE_MARKS,
    compact_moves,
    read_htm_moves,
    read_moves,
)

__all__ = [
    "CORNER_NAMES",
    "EDGE_NAMES",
    "FACES",
    "Cube2",
    "Cube3",
    "Cube3HTM",
    "corner_cubies",
    "corner_stickers",
    "edge_cubies",
    "permutation_parity",
]

_FACE_SET = frozenset(FACES)


def _clockwise(axis: np.ndarray) -> np.ndarray:
    """3x3 integer matrix of the quarter turn about ``axis`` that looks clockwise from outside."""
    cross = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.outer(axis, axis) - cross  # Rodrigues' formula at -90 degrees


def _move_perms(n: int) -> np.ndarray:
    """``intp[12, 6n²]``: the sticker permutation of each action (``ACTION_NAMES`` order)."""
    pts = sticker_points(n)
    perms = []
    for face in FACE_ORDER:
        axis = np.array(FRAMES[face][0])
        turn = pts @ axis > 0
        for rot in (_clockwise(axis), _clockwise(axis).T):  # clockwise, then counter-clockwise
            moved = np.where(turn[:, None], pts @ rot.T, pts)
            perms.append(perm_of(pts, moved))
    return np.stack(perms)


def _rotation_perms(n: int) -> np.ndarray:
    """``intp[24, 6n²]``: the 24 whole-cube rotations as sticker permutations (identity first)."""
    gens = [_clockwise(np.array(FRAMES[f][0])) for f in "UR"]
    mats = [np.eye(3, dtype=np.int64)]
    for m in mats:  # closure; the list grows while we walk it
        for g in gens:
            if not any((g @ m == x).all() for x in mats):
                mats.append(g @ m)
    pts = sticker_points(n)
    return np.stack([perm_of(pts, pts @ m.T) for m in mats])


# ---- pieces (Kociemba's cubie definitions; stickers listed clockwise, U/D sticker first) ---------
_CORNERS = {  # slot name (speedcubing style) -> its facelets
    "UFR": "U9 R1 F3", "UFL": "U7 F1 L3", "UBL": "U1 L1 B3", "UBR": "U3 B1 R3",
    "DFR": "D3 F9 R7", "DFL": "D1 L9 F7", "DBL": "D7 B9 L7", "DBR": "D9 R9 B7",
}  # fmt: skip
_EDGES = {
    "UR": "U6 R2", "UF": "U8 F2", "UL": "U4 L2", "UB": "U2 B2", "DR": "D6 R8", "DF": "D2 F8",
    "DL": "D4 L8", "DB": "D8 B8", "FR": "F6 R4", "FL": "F4 L6", "BL": "B6 L4", "BR": "B4 R6",
}  # fmt: skip
CORNER_NAMES = tuple(_CORNERS)
EDGE_NAMES = tuple(_EDGES)
_CORNER_FOR_2 = {1: 0, 3: 1, 7: 2, 9: 3}  # 3x3 corner sticker number -> 2x2 sticker offset


def _facelet_table(table: dict[str, str], n: int) -> np.ndarray:
    """``intp[pieces, stickers]`` facelet indices of each slot on an ``n``-cube."""

    def index(name: str) -> int:
        k = int(name[1:])
        return FACES.index(name[0]) * n * n + (k - 1 if n == 3 else _CORNER_FOR_2[k])

    return np.array([[index(f) for f in spec.split()] for spec in table.values()], dtype=np.intp)


def _piece_lookup(table: dict[str, str], n: int) -> np.ndarray:
    """``int64[6**k]``: colours of a piece read in slot order (U/D sticker first for corners)
    encoded base 6 -> the piece id; ``-1`` where no piece has these colours in that order."""
    fac = _facelet_table(table, n)
    lut = np.full(6 ** fac.shape[1], -1, dtype=np.int64)
    solved = np.arange(6 * n * n) // (n * n)
    for piece, stickers in enumerate(fac):
        lut[int(np.polyval(solved[stickers], 6))] = piece
    return lut


def corner_cubies(states: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Corner permutation and twist of sticker states ``[B, 6n²]``.

    Returns ``(piece int64[B, 8], twist int64[B, 8])``: the corner in each slot (Kociemba order
    ``UFR UFL UBL UBR DFR DFL DBL DBR``) and how far its U/D sticker is turned clockwise from the
    slot's U/D facelet. ``piece`` is ``-1`` where the stickers of a slot form no corner.
    """
    fac, lut = _CORNER_TABLES[n]
    cols = states[:, fac].astype(np.int64)  # [B, 8, 3]
    ud = cols % 3 == 0  # U = 0, D = 3
    twist = np.argmax(ud, axis=2)
    turned = np.take_along_axis(cols, (twist[..., None] + np.arange(3)) % 3, axis=2)
    piece = lut[turned @ np.array([36, 6, 1])]
    piece[ud.sum(axis=2) != 1] = -1
    return piece, twist


def corner_stickers(piece: np.ndarray, twist: np.ndarray) -> np.ndarray:
    """The 2x2x2 sticker states ``uint8[B, 24]`` of corner cubies ``(piece, twist) int[B, 8]``:
    the inverse of :func:`corner_cubies` (Kociemba's convention: colour ``k`` of the piece lands
    on sticker ``(k + twist) % 3`` of its slot)."""
    fac = _CORNER_TABLES[2][0]
    colours = fac[piece] // 4  # [B, 8, 3] the piece's colours, U/D first, clockwise
    out = np.empty((piece.shape[0], 24), dtype=np.uint8)
    rows = np.arange(piece.shape[0])[:, None]
    for k in range(3):
        out[rows, fac[np.arange(8), (k + twist) % 3]] = colours[:, :, k]
    return out


def edge_cubies(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edge permutation and flip of cube3 states ``[B, 54]``: ``(piece int64[B, 12], flip
    int64[B, 12])`` in slot order ``UR UF UL UB DR DF DL DB FR FL BL BR``; ``-1`` = no such edge."""
    cols = states[:, _EDGE_FACELETS].astype(np.int64)  # [B, 12, 2]
    straight = _EDGE_LUT[cols[..., 0] * 6 + cols[..., 1]]
    flipped = _EDGE_LUT[cols[..., 1] * 6 + cols[..., 0]]
    return np.where(straight >= 0, straight, flipped), (straight < 0).astype(np.int64)


_CORNER_TABLES = {n: (_facelet_table(_CORNERS, n), _piece_lookup(_CORNERS, n)) for n in (2, 3)}
_EDGE_FACELETS = _facelet_table(_EDGES, 3)
_EDGE_LUT = _piece_lookup(_EDGES, 3)
#: the left-right mirror ``x -> -x`` in :mod:`.symmetry`'s numbering (the images' ``mirror``)
_MIRROR = 24
#: the group solver's layer-by-layer order of pieces (:attr:`_Cube.group_base`); the 2x2x2 keeps DBL
_BASE_CORNERS = ("DFR", "DFL", "DBL", "DBR", "UFR", "UFL", "UBL", "UBR")
_BASE_EDGES = ("DF", "DR", "DB", "DL", "FR", "FL", "BL", "BR", "UF", "UR", "UB", "UL")

# ---- validation messages -------------------------------------------------------------------------


def permutation_parity(perm: np.ndarray) -> int:
    """0 for an even permutation, 1 for odd."""
    seen, swaps = np.zeros(len(perm), bool), 0
    for i in range(len(perm)):
        j, length = i, 0
        while not seen[j]:
            seen[j], j, length = True, perm[j], length + 1
        swaps += max(length - 1, 0)
    return swaps % 2


def _check_pieces(kind: str, names: tuple[str, ...], cols: np.ndarray, piece: np.ndarray) -> None:
    """Name the first impossible piece, then any piece that appears twice / is missing."""
    for slot, (c, p) in enumerate(zip(cols, piece, strict=True)):
        if p >= 0:
            continue
        letters = [FACES[x] for x in c]
        axis = c % 3
        for i in range(len(c)):
            for j in range(i + 1, len(c)):
                if axis[i] == axis[j]:
                    why = (
                        f"two {letters[i]} stickers"
                        if c[i] == c[j]
                        else f"colours {letters[i]} and {letters[j]} (opposite faces)"
                    )
                    raise InvalidStateError(f"{kind} at {names[slot]} has {why}: no such {kind}")
        raise InvalidStateError(  # three colours of distinct axes in the wrong cyclic order
            f"{kind} at {names[slot]} has colours {', '.join(letters)} in mirror-image order: "
            f"no such {kind} (two of its stickers are swapped)"
        )
    counts = np.bincount(piece, minlength=len(names))
    if (counts != 1).any():
        twice = int(np.argmax(counts > 1))
        where = " and ".join(names[s] for s in np.flatnonzero(piece == twice))
        missing = ", ".join(names[m] for m in np.flatnonzero(counts == 0))
        raise InvalidStateError(
            f"{kind} {names[twice]} appears {counts[twice]} times (at {where}) and no legal cube "
            f"has this; missing: {kind} {missing}"
        )


def _check_orientation(kind: str, names: Sequence[str], ori: np.ndarray, modulus: int) -> None:
    total = int(ori.sum()) % modulus
    if total:
        culprit = names[int(np.argmax(ori != 0))]
        verb, done = ("twist", "twisted") if kind == "corner" else ("flip", "flipped")
        raise InvalidStateError(
            f"{kind} at {culprit} is {done}: no legal cube has this (the {kind} orientations add "
            f"up to {total} mod {modulus}, not 0; {verb} any one {kind} to fix it)"
        )


def _validate_colours(colours: np.ndarray, n: int) -> None:
    """Check a well-formed colour vector ``int64[6n²]`` (values 0..5) for legality."""
    per_face = n * n
    counts = np.bincount(colours, minlength=6)
    if (counts != per_face).any():
        bad = ", ".join(f"{FACES[c]} appears {counts[c]} times" for c in range(6) if counts[c] != per_face)
        raise InvalidStateError(f"each colour must appear {per_face} times: {bad}")
    if n == 3 and (colours[4::9] != np.arange(6)).any():
        got = "".join(FACES[c] for c in colours[4::9])
        raise InvalidStateError(
            f"centres must be U R F D L B in that order (U5 R5 F5 D5 L5 B5; each letter names the face "
            f"whose centre has that colour), got {' '.join(got)}"
        )
    cp, co = corner_cubies(colours[None], n)
    fac = _CORNER_TABLES[n][0]
    _check_pieces("corner", CORNER_NAMES, colours[fac], cp[0])
    if n == 3:
        ep, eo = edge_cubies(colours[None])
        _check_pieces("edge", EDGE_NAMES, colours[_EDGE_FACELETS], ep[0])
    _check_orientation("corner", CORNER_NAMES, co[0], 3)
    if n == 3:
        _check_orientation("edge", EDGE_NAMES, eo[0], 2)
        pc, pe = permutation_parity(cp[0]), permutation_parity(ep[0])
        if pc != pe:
            parity = ("even", "odd")
            raise InvalidStateError(
                f"two pieces are swapped: corner and edge permutation parities differ (corners "
                f"{parity[pc]}, edges {parity[pe]}), and no legal cube has this"
            )


# ---- the puzzles ---------------------------------------------------------------------------------


class _Cube(Puzzle, StickerCube):
    """Shared rules of the ``n``-cubes; see the module docstring for the conventions."""

    n: int = 3
    action_names: tuple[str, ...] = ACTION_NAMES
    num_values = 6
    json_key = "facelets"

    @property
    def state_shape(self) -> tuple[int, ...]:
        return (6 * self.n * self.n,)

    @cached_property
    def inverse_action(self) -> np.ndarray:
        return np.arange(12, dtype=np.int64) ^ 1

    @cached_property
    def perms(self) -> np.ndarray:
        """``intp[12, S]`` sticker permutation of each action: ``child = parent[perms[a]]``."""
        perms = _move_perms(self.n)
        perms.flags.writeable = False
        return perms

    @cached_property
    def _flat_perms(self) -> np.ndarray:
        return np.ascontiguousarray(self.perms.ravel())

    @cached_property
    def _perms32(self) -> np.ndarray:
        return self.perms.astype(np.int32)

    def goal(self) -> np.ndarray:
        return (np.arange(6 * self.n * self.n) // (self.n * self.n)).astype(np.uint8)

    def _subgoals(self) -> tuple[Goal, ...]:
        """3x3x3 (quarter and half-turn metric alike): the U layer (Dong et al.'s "top layer"), then
        the U and middle (E) layers, as sets of stickers that must show their own face's colour."""
        if self.n != 3:
            return ()
        return tuple(
            Goal(name, text, positions=stickers, values=self.goal()[stickers])
            for name, text, stickers in _layer_goals()
        )

    # ---- the cube as a permutation group (the group solver, puzzlezero.classic.group) ------------
    def move_permutations(self) -> np.ndarray:
        """``intp[A, S]``: every move is this fixed sticker permutation, ``child = parent[perm]``."""
        return self.perms

    @cached_property
    def group_base(self) -> tuple[int, ...]:
        """Stickers the group solver puts back first, one per piece, layer by layer: the D edges
        (cross), the D corners, the middle edges, the U edges, the U corners."""
        corners = _CORNER_TABLES[self.n][0]
        slots = [corners[CORNER_NAMES.index(c), 0] for c in _BASE_CORNERS]
        edges = [_EDGE_FACELETS[EDGE_NAMES.index(e), 0] for e in _BASE_EDGES]
        return tuple(int(x) for x in (*edges[:4], *slots[:4], *edges[4:8], *edges[8:], *slots[4:]))

    def state_permutation(self, state: np.ndarray) -> np.ndarray:
        """``intp[S]``: the sticker permutation ``p`` with ``state == self.goal()[p]`` (position
        ``i`` holds the goal's sticker ``p[i]``), read from the pieces. Raises
        :class:`InvalidStateError` for a state that is not a legal cube."""
        colours = self._checked(state)
        self.validate(colours)
        return self._sticker_permutation(colours)

    def _sticker_permutation(self, colours: np.ndarray) -> np.ndarray:
        p = np.arange(colours.size, dtype=np.intp)  # the centres stay
        fac = _CORNER_TABLES[self.n][0]
        piece, twist = corner_cubies(colours[None], self.n)
        for k in range(3):  # colour k of the piece is on sticker (k + twist) % 3 of its slot
            p[fac[np.arange(8), (k + twist[0]) % 3]] = fac[piece[0], k]
        if self.n == 3:
            piece, flip = edge_cubies(colours[None])
            for k in range(2):
                p[_EDGE_FACELETS[np.arange(12), k]] = _EDGE_FACELETS[piece[0], (k + flip[0]) % 2]
        return p

    def expand(self, states: np.ndarray) -> np.ndarray:
        """All 12 children: ``uint8[B, S]`` -> ``uint8[B, 12, S]`` (one gather)."""
        return np.take(states, self._flat_perms, axis=1).reshape(states.shape[0], self.num_actions, -1)

    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """``uint8[B, S]``, ``int[B]`` -> ``uint8[B, S]``."""
        b, size = states.shape
        perms = self._perms32 if b * size < 2**31 else self.perms  # int32 indices gather faster
        idx = perms[np.asarray(actions, dtype=np.intp)]  # [B, S] -> flat indices into states
        idx += (np.arange(b, dtype=idx.dtype) * size)[:, None]
        return np.take(np.ascontiguousarray(states).ravel(), idx)

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        """Every turn moves stickers: ``bool[B, A]`` all true."""
        return np.ones((states.shape[0], self.num_actions), dtype=bool)

    # ---- text -----------------------------------------------------------------------------------
    def parse_moves(self, text: str | Sequence[str]) -> list[int]:
        """Read moves in standard notation: ``"R U R' U'"``, ``"R2"`` (= ``R R``), ``"R2'"`` (=
        ``R' R'``), commas, extra or no whitespace (``"RUR'U'"``). Raises :class:`InvalidMoveError`
        naming the unreadable token; lower case (``r``, a wide turn in cubers' notation, which a
        face-turn cube has not) is refused as such."""
        return read_moves(text)

    def format_compact(self, actions: Sequence[int]) -> list[str]:
        """The moves in half-turn notation: ``[R, R, U']`` -> ``["R2", "U'"]`` (see
        :func:`compact_moves`); :meth:`parse_moves` reads ``R2`` back as ``R R``."""
        return compact_moves(self.format_moves(actions))

    def half_turn_length(self, actions: Sequence[int]) -> int | None:
        """Length in the half-turn metric (a half turn counts 1): ``len(format_compact(actions))``."""
        return len(self.format_compact(actions))

    #: the inverse (the cube scrambled by a solution, which the reversed scramble solves), the
    #: left-right mirror image (``R`` becomes ``L'``), and the mirror image of the inverse
    image_names = ("inverse", "mirror", "inverse-mirror")
    solution_images = ("inverse", "inverse-mirror")

    def image(self, name: str, state: np.ndarray, solution: Sequence[int]) -> np.ndarray:
        """The cube as group element ``g`` (``state = goal * g``, ``solution`` spells ``g⁻¹``):
        ``inverse`` is ``goal * g⁻¹``, the goal turned by ``solution``; ``mirror`` is the state's
        image under the left-right mirror (:mod:`.symmetry`, symmetry 24). Each is exactly as
        far from solved as the state, and the network sees it afresh."""
        if name not in self.image_names:
            raise PuzzleError(self._no_image(name))
        state = np.asarray(state)
        if name.startswith("inverse"):
            state = self.apply_moves(self.goal(), [int(a) for a in solution])
        if name.endswith("mirror"):
            state = self._symmetries.apply(state[None], _MIRROR)[0]
        return state

    def from_image(self, name: str, actions: Sequence[int]) -> list[int]:
        """Undo :meth:`image`: mirror the moves back (``L'`` to ``R``), then for the inverse play
        them reversed and inverted."""
        if name not in self.image_names:
            raise PuzzleError(self._no_image(name))
        out = np.asarray(actions, dtype=np.int64)
        if name.endswith("mirror"):
            sym = self._symmetries
            out = sym.moves[sym.inverse[_MIRROR], out]
        if name.startswith("inverse"):
            out = self.inverse_action[out[::-1]]
        return [int(a) for a in out]

    @property
    def _symmetries(self) -> Any:
        from puzzlezero.puzzles.cube.symmetry import cube_symmetries

        return cube_symmetries(self)

    def parse(self, text: str) -> np.ndarray:
        """A state from a scramble applied to the solved cube (``"R U R' U'"``, see
        :meth:`parse_moves`) or from a facelet string of ``6n²`` letters (whitespace ignored).

        Text is read as a scramble when it has move marks (``'``, ``2``, commas) or every word is
        one letter; otherwise it is a facelet string. Returns ``uint8[S]``; raises
        :class:`InvalidStateError` naming the problem (length, letters, colour counts, centres,
        impossible or repeated pieces, twisted corner, flipped edge, swapped pieces).
        """
        if not isinstance(text, str):
            raise InvalidStateError(f"expected text, got {type(text).__name__}")
        size = 6 * self.n * self.n
        words = text.split()
        if not words:
            raise InvalidStateError(
                f"empty input: give a scramble such as \"R U R' U'\" or a {size}-letter facelet string"
            )
        if max(map(len, words)) > 1 and not MOVE_MARKS.search(text):
            return self._parse_facelets("".join(words))
        try:
            moves = self.parse_moves(text)
        except InvalidMoveError as exc:
            raise InvalidStateError(
                f"cannot read the text as a scramble ({exc}) nor as a {size}-letter facelet string"
            ) from None
        return self.apply_moves(self.goal(), moves)

    def _parse_facelets(self, letters: str) -> np.ndarray:
        size, upper = 6 * self.n * self.n, [ch.upper() for ch in letters]
        bad = [(i, ch) for i, ch in enumerate(letters) if upper[i] not in _FACE_SET]
        if len(letters) != size:
            hint = " (write a scramble with spaces between moves: R U F)" if not bad else ""
            raise InvalidStateError(
                f"a {self.name} facelet string has {size} letters "
                f"({self._order_help()}), got {len(letters)}{hint}"
            )
        if bad:
            shown = ", ".join(f"{ch!r} at position {i + 1} ({self._facelet_name(i)})" for i, ch in bad[:6])
            more = f" and {len(bad) - 6} more" if len(bad) > 6 else ""
            raise InvalidStateError(f"letters outside URFDLB: {shown}{more}")
        state = _LETTER_TO_COLOUR[np.frombuffer("".join(upper).encode("ascii"), dtype=np.uint8)]
        _validate_colours(state.astype(np.int64), self.n)
        return state

    def _order_help(self) -> str:
        last = self.n * self.n
        return " ".join(f"{f}1..{f}{last}" for f in FACES)

    def _facelet_name(self, i: int) -> str:
        return f"{FACES[i // (self.n * self.n)]}{i % (self.n * self.n) + 1}"

    def validate(self, state: np.ndarray) -> None:
        """Raise :class:`InvalidStateError` unless ``state`` (``uint8[S]``) is a legal cube."""
        _validate_colours(self._checked(state), self.n)

    def _checked(self, state: np.ndarray) -> np.ndarray:
        """``state`` as ``int64[S]`` after checking its shape and values (0..5)."""
        arr = np.asarray(state)
        size = 6 * self.n * self.n
        if arr.shape != (size,):
            raise InvalidStateError(f"a {self.name} state has {size} stickers, got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.integer):
            raise InvalidStateError(f"sticker values must be integers 0..5, got dtype {arr.dtype}")
        bad = np.flatnonzero((arr < 0) | (arr > 5))
        if bad.size:
            shown = ", ".join(f"{arr[i]} at {self._facelet_name(i)}" for i in bad[:6])
            raise InvalidStateError(f"sticker values must be 0..5 (U R F D L B), got {shown}")
        return arr.astype(np.int64)

    def format(self, state: np.ndarray) -> str:
        """The facelet string, e.g. ``UUUUUUUUURRRRRRRRR...`` (``parse`` reads it back)."""
        return "".join(FACES[c] for c in self._checked(state).tolist())

    def to_json(self, state: np.ndarray) -> dict[str, Any]:
        return {"facelets": self.format(state)}

    def render_text(self, state: np.ndarray, color: bool = False) -> str:
        """The unfolded net (U on top, L F R B across, D below) in letters; ``color=True`` adds
        ANSI background colours."""
        from puzzlezero.puzzles.cube.viewer import net_text

        return net_text(self.format(state), self.n, color=color)

    def to_svg(self, state: np.ndarray, size: int = 300) -> str:
        """The unfolded net as a standalone ``<svg>`` (standard colours: U white, R red, F green,
        D yellow, L orange, B blue); ``size`` is the width in pixels."""
        from puzzlezero.puzzles.cube.viewer import to_svg

        return to_svg(self.format(state), self.n, size=size)


@lru_cache(maxsize=1)
def _layer_goals() -> tuple[tuple[str, str, np.ndarray], ...]:
    """cube3's layer goals: the stickers of the U layer's pieces (height ``y > 0``: the U face and
    the top row of R, F, L, B), then of the U and middle layers (``y >= 0``: the top two rows)."""
    height = sticker_points(3)[:, 1]
    layer1, layer2 = np.flatnonzero(height > 0), np.flatnonzero(height >= 0)
    layer1.flags.writeable = layer2.flags.writeable = False  # cached: shared by every Goal
    return (
        (
            "layer1",
            "the U (top) layer solved: the U centre, 4 U edges and 4 U corners, every sticker on "
            "its own face (the U face and the top row of R, F, L, B)",
            layer1,
        ),
        (
            "layer2",
            "the first two layers solved: layer1 plus the 4 middle-layer edges (FR FL BL BR), "
            "every sticker of the top two rows of R, F, L, B on its own face",
            layer2,
        ),
    )


_LETTER_TO_COLOUR = np.zeros(256, dtype=np.uint8)
_LETTER_TO_COLOUR[np.frombuffer(FACES.encode(), dtype=np.uint8)] = np.arange(6)


class Cube3(_Cube):
    """The 3x3x3 Rubik's cube: ``uint8[54]`` stickers, 12 quarter turns, goal = solved colours
    (the centres never move). ``default_scramble_depth`` is the paper's K = 30."""

    name = "cube3"
    n = 3
    default_scramble_depth = 30


class Cube2(_Cube):
    """The 2x2x2 cube: ``uint8[24]`` stickers (four per face, same order), 12 quarter turns.

    There are no centres, so a state is solved when every face shows one colour: all 24 whole-cube
    orientations of the solved cube count as goals (``goal()`` is the standard one). The legal
    states are the 8! * 3^7 = 88,179,840 arrangements whose corner twists add up to 0 mod 3 (any
    permutation parity is possible); :meth:`canonical` maps them onto the 3,674,160 classes up to
    rotation. ``default_scramble_depth`` = 16: the quarter-turn diameter is 14, and like the paper's
    K = 30 for the 3x3x3 (diameter 26) the scrambles go a little beyond it.
    """

    name = "cube2"
    n = 2
    default_scramble_depth = 16

    @cached_property
    def rotations(self) -> np.ndarray:
        """``intp[24, 24]``: the whole-cube rotations as sticker permutations (identity first)."""
        return _rotation_perms(2)

    @cached_property
    def _rotation_for_sticker(self) -> np.ndarray:
        # the rotation that carries sticker s onto D7's 2x2 place (the D sticker of slot DBL)
        target = _CORNER_TABLES[2][0][CORNER_NAMES.index("DBL"), 0]
        out = np.empty(24, dtype=np.intp)
        out[self.rotations[:, target]] = np.arange(24)
        return out

    #: the group solver's moves: ``U R F`` and their inverses, which keep corner DBL in place (a
    #: group of order 3,674,160, the cube up to rotation)
    group_actions = (0, 1, 6, 7, 8, 9)

    @cached_property
    def group_base(self) -> tuple[int, ...]:
        """The corners but DBL (which ``U R F`` never move), D layer first."""
        corners = _CORNER_TABLES[2][0]
        return tuple(int(corners[CORNER_NAMES.index(c), 0]) for c in _BASE_CORNERS if c != "DBL")

    def state_permutation(self, state: np.ndarray) -> np.ndarray:
        """``intp[24]``: ``p`` with ``state == g[p]`` for the solved cube ``g`` in the orientation
        that has the corner at DBL in place (``p`` fixes DBL's stickers, so ``U R F`` reach it)."""
        colours = self._checked(state)
        self.validate(colours)
        goals = self.goal()[self.rotations]  # [24, 24]: the solved cube in every orientation
        dbl = _CORNER_TABLES[2][0][CORNER_NAMES.index("DBL")]
        g = goals[int(np.argmax((goals[:, dbl] == colours[dbl]).all(axis=1)))]
        recolour = np.empty(6, dtype=np.int64)
        recolour[g] = self.goal()  # g's colour on each face -> the standard colour of that face
        return self._sticker_permutation(recolour[colours])

    def is_goal(self, states: np.ndarray) -> np.ndarray:
        """``bool[B]``: every face uniform (in any whole-cube orientation)."""
        faces = states.reshape(states.shape[0], 6, 4)
        return np.all(faces == faces[:, :, :1], axis=(1, 2))

    def canonical(self, states: np.ndarray) -> np.ndarray:
        """Rotate each legal state ``uint8[B, 24]`` so that the corner with colours D, B, L sits at
        DBL with its D sticker down; returns ``uint8[B, 24]``, one representative per rotation class.
        (States that are not legal cubes get an arbitrary rotation: :meth:`validate` them first.)"""
        fac = _CORNER_TABLES[2][0]
        cols = states[:, fac]  # [B, 8, 3]
        colour_set = (np.left_shift(1, cols.astype(np.int64))).sum(axis=2)
        dbl = colour_set == (1 << 3) | (1 << 5) | (1 << 4)
        where = (dbl[..., None] & (cols == 3)).reshape(states.shape[0], 24)
        sticker = fac.reshape(-1)[np.argmax(where, axis=1)]
        return np.take_along_axis(states, self.rotations[self._rotation_for_sticker[sticker]], axis=1)


class Cube3HTM(_Cube):
    """The 3x3x3 cube in the half-turn metric: the states of :class:`Cube3` (``uint8[54]``), 18
    moves ``X, X', X2`` (:data:`HTM_ACTION_NAMES`), action ``3k + j``; ``inverse_action`` swaps
    ``X`` and ``X'`` and keeps ``X2``. Solutions are written as they are searched (``R U2 F'``) and
    read back with ``X2`` as one move (``X2'`` too).

    Quarter turns cost 1 and half turns ``half_turn_cost`` (default 1: the half-turn metric, in
    which cubers count; God's number is 20). Another cost gives a costed cube, e.g. a robot whose
    half turns take 1.5 times as long: register it with the argument (``register("cube3robot",
    "puzzlezero.puzzles.cube:Cube3HTM", half_turn_cost=1.5)``). A half turn costing more than two
    quarter turns is then solved as two quarter turns where that is cheaper.

    ``default_scramble_depth`` = 24: a little beyond the half-turn diameter 20, as the paper's
    K = 30 is for the quarter-turn diameter 26.
    """

    name = "cube3htm"
    n = 3
    action_names = HTM_ACTION_NAMES
    default_scramble_depth = 24

    def __init__(self, half_turn_cost: float = 1.0) -> None:
        cost = float(half_turn_cost)
        if not (np.isfinite(cost) and cost > 0):
            raise PuzzleError(f"half_turn_cost must be a positive number, got {half_turn_cost!r}")
        self.half_turn_cost = cost

    def _action_costs(self) -> np.ndarray:
        return np.tile([1.0, 1.0, self.half_turn_cost], 6)

    @cached_property
    def quarter_turns(self) -> np.ndarray:
        """``int64[18]``: quarter turns in each move (1, 1, 2 per face), for quarter-turn bounds."""
        return np.tile(np.array([1, 1, 2], dtype=np.int64), 6)

    @cached_property
    def inverse_action(self) -> np.ndarray:
        return (np.arange(18, dtype=np.int64).reshape(6, 3)[:, [1, 0, 2]]).ravel()

    @cached_property
    def perms(self) -> np.ndarray:
        """``intp[18, 54]``: ``child = parent[perms[a]]``; a half turn is a quarter turn twice."""
        quarter = _move_perms(3)
        perms = np.stack(
            [
                p
                for k in range(6)
                for p in (quarter[2 * k], quarter[2 * k + 1], quarter[2 * k][quarter[2 * k]])
            ]
        )
        perms.flags.writeable = False
        return perms

    def parse_moves(self, text: str | Sequence[str]) -> list[int]:
        """Read moves in standard notation, ``X2`` (and ``X2'``, ``X'2``) as one half turn; like
        :meth:`Cube3.parse_moves` otherwise (commas, ``"RU2R'"``; no lower-case wide turns)."""
        return read_htm_moves(text)

    def format_compact(self, actions: Sequence[int]) -> list[str]:
        """The move names themselves: each move already is one turn of the half-turn metric (two
        equal moves are never joined: with a costly half turn, ``R R`` may be the cheaper way)."""
        return self.format_moves(actions)

    def half_turn_length(self, actions: Sequence[int]) -> None:
        """``None``: the length of a solution already counts half turns as one move."""
        return None
