"""The Rubik's cube as cubies: 8 corners and 12 edges, each with a position and an orientation.

Conventions are Kociemba's (the ``kociemba`` package and the benchmarks' facelet strings):
corners ``URF UFL ULB UBR DFR DLF DBL DRB`` (ids 0-7), edges ``UR UF UL UB DR DF DL DB FR FL BL BR``
(ids 0-11); facelets ``U1..U9 R1..R9 F1..F9 D1..D9 L1..L9 B1..B9`` with colour codes
``U R F D L B`` = 0..5. Moves are the 12 quarter turns, index ``2 * face + (0 clockwise, 1
counter-clockwise)`` with faces in the order ``U R F D L B``; ``m ^ 1`` undoes ``m`` and face ``f``
is opposite ``(f + 3) % 6``.

Inside the solvers a cube is ``int64[20]`` *piece values*: entry ``p`` (corners 0-7, then edges
8-19) is ``position * 3 + twist`` for a corner and ``position * 2 + flip`` for an edge, so one
``[24, 12]`` table per piece kind moves any piece (:data:`CORNER_MOVE`, :data:`EDGE_MOVE`).
"""

from __future__ import annotations

import numpy as np

from puzzlezero.errors import InvalidStateError

__all__ = [
    "FACES", "MOVE_NAMES", "CORNER_MOVE", "EDGE_MOVE", "SOLVED",
    "facelets_to_pieces", "pieces_to_facelets", "apply_moves", "parse_facelets", "format_facelets",
]  # fmt: skip

FACES = "URFDLB"
MOVE_NAMES = tuple(f + s for f in FACES for s in ("", "'"))

# facelet index of each sticker of each corner / edge position (Kociemba's cornerFacelet, edgeFacelet)
CORNER_FACELETS = np.array(
    [
        [8, 9, 20],
        [6, 18, 38],
        [0, 36, 47],
        [2, 45, 11],
        [29, 26, 15],
        [27, 44, 24],
        [33, 53, 42],
        [35, 17, 51],
    ]
)
EDGE_FACELETS = np.array(
    [
        [5, 10],
        [7, 19],
        [3, 37],
        [1, 46],
        [32, 16],
        [28, 25],
        [30, 43],
        [34, 52],
        [23, 12],
        [21, 41],
        [50, 39],
        [48, 14],
    ]  # fmt: skip
)
CORNER_COLOURS = CORNER_FACELETS // 9
EDGE_COLOURS = EDGE_FACELETS // 9

# the six clockwise face turns in Kociemba's "replaced by" form: position i receives the piece of
# position perm[i], twisted/flipped by ori[i]
_U, _R, _F, _D, _L, _B = range(6)
_CP = {
    _U: [3, 0, 1, 2, 4, 5, 6, 7], _R: [4, 1, 2, 0, 7, 5, 6, 3], _F: [1, 5, 2, 3, 0, 4, 6, 7],
    _D: [0, 1, 2, 3, 5, 6, 7, 4], _L: [0, 2, 6, 3, 4, 1, 5, 7], _B: [0, 1, 3, 7, 4, 5, 2, 6],
}  # fmt: skip
_CO = {
    _U: [0] * 8, _R: [2, 0, 0, 1, 1, 0, 0, 2], _F: [1, 2, 0, 0, 2, 1, 0, 0],
    _D: [0] * 8, _L: [0, 1, 2, 0, 0, 2, 1, 0], _B: [0, 0, 1, 2, 0, 0, 2, 1],
}  # fmt: skip
_EP = {
    _U: [3, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11], _R: [8, 1, 2, 3, 11, 5, 6, 7, 4, 9, 10, 0],
    _F: [0, 9, 2, 3, 4, 8, 6, 7, 1, 5, 10, 11], _D: [0, 1, 2, 3, 5, 6, 7, 4, 8, 9, 10, 11],
    _L: [0, 1, 10, 3, 4, 5, 9, 7, 8, 2, 6, 11], _B: [0, 1, 2, 11, 4, 5, 6, 10, 8, 9, 3, 7],
}  # fmt: skip
_EO = {
    _U: [0] * 12, _R: [0] * 12, _F: [0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0],
    _D: [0] * 12, _L: [0] * 12, _B: [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1],
}  # fmt: skip


def _piece_table(perm: dict[int, list[int]], ori: dict[int, list[int]], npos: int, no: int) -> np.ndarray:
    """``int64[npos * no, 12]``: new value of a piece with value ``pos * no + o`` under each move."""
    table = np.empty((npos * no, 12), dtype=np.int64)
    for face in range(6):
        p = np.array(perm[face])
        o = np.array(ori[face])
        cur = np.arange(npos * no)  # value after k clockwise turns, per starting value
        for k in range(1, 4):
            pos, tw = divmod(cur, no)
            dest = np.argsort(p)[pos]  # the position that receives the piece now at pos
            cur = dest * no + (tw + o[dest]) % no
            if k == 1:
                table[:, 2 * face] = cur
            if k == 3:
                table[:, 2 * face + 1] = cur
    return table


#: ``int64[24, 12]``: corner value (position * 3 + twist) after each move
CORNER_MOVE = _piece_table(_CP, _CO, 8, 3)
#: ``int64[24, 12]``: edge value (position * 2 + flip) after each move
EDGE_MOVE = _piece_table(_EP, _EO, 12, 2)
#: ``int64[20]``: the solved cube's piece values
SOLVED = np.concatenate([np.arange(8) * 3, np.arange(12) * 2]).astype(np.int64)


def apply_moves(pieces: np.ndarray, moves: np.ndarray | list[int]) -> np.ndarray:
    """Apply a move sequence to piece values ``int64[B, 20]`` (or ``[20]``); returns a copy."""
    out = np.array(pieces, dtype=np.int64, copy=True)
    for m in moves:
        out[..., :8] = CORNER_MOVE[out[..., :8], m]
        out[..., 8:] = EDGE_MOVE[out[..., 8:], m]
    return out


def parse_facelets(text: str) -> np.ndarray:
    """A 54-letter facelet string (letters ``URFDLB``) -> colour codes ``uint8[54]``."""
    text = text.strip()
    if len(text) != 54 or set(text) - set(FACES):
        raise InvalidStateError(f"a facelet string has 54 letters from {FACES}; got {text!r}")
    return _LETTER_CODE[np.frombuffer(text.encode(), dtype=np.uint8)]


_LETTER_CODE = np.zeros(256, dtype=np.uint8)
_LETTER_CODE[np.frombuffer(FACES.encode(), dtype=np.uint8)] = np.arange(6)


def format_facelets(codes: np.ndarray) -> str:
    """Colour codes ``[54]`` -> the 54-letter facelet string."""
    return "".join(FACES[int(c)] for c in codes)


# lookup from sticker colours to pieces: corners by (colour after the U/D sticker, the next one),
# edges by (colour 0, colour 1) -> id * 2 + flip
_CORNER_BY_COLOURS = np.full(36, -1, dtype=np.int64)
_CORNER_BY_COLOURS[CORNER_COLOURS[:, 1] * 6 + CORNER_COLOURS[:, 2]] = np.arange(8)
_EDGE_BY_COLOURS = np.full(36, -1, dtype=np.int64)
_EDGE_BY_COLOURS[EDGE_COLOURS[:, 0] * 6 + EDGE_COLOURS[:, 1]] = np.arange(12) * 2
_EDGE_BY_COLOURS[EDGE_COLOURS[:, 1] * 6 + EDGE_COLOURS[:, 0]] = np.arange(12) * 2 + 1


def facelets_to_pieces(codes: np.ndarray, *, centres_fixed: bool = True) -> np.ndarray:
    """Colour codes ``[B, 54]`` -> piece values ``int64[B, 20]``, checking that each is a legal cube.

    Raises :class:`InvalidStateError` naming the first problem (centres, an impossible sticker
    combination, a missing piece, twist, flip or permutation parity) and the batch row.
    ``centres_fixed=False``: the centres may have moved (a cube whose middle slices turn), so
    neither they nor the corners' and edges' permutation parities (which the centres' then
    decide) are checked.
    """
    f = np.asarray(codes, dtype=np.int64).reshape(-1, 54)
    b = f.shape[0]
    rows = np.arange(b)

    def fail(what: str, bad: np.ndarray | np.bool_) -> None:
        if bad.any():
            raise InvalidStateError(f"not a legal cube (state {int(np.argmax(bad))} of {b}): {what}")

    if centres_fixed:
        fail("the centres are not U R F D L B in place", (f[:, 4::9] != np.arange(6)).any(axis=1))
    corner_st = f[:, CORNER_FACELETS]  # [B, 8, 3]
    is_ud = (corner_st == 0) | (corner_st == 3)
    fail("a corner without exactly one U or D sticker", is_ud.sum(axis=2) != 1)
    twist = is_ud.argmax(axis=2)  # [B, 8]
    c1 = np.take_along_axis(corner_st, ((twist + 1) % 3)[..., None], axis=2)[..., 0]
    c2 = np.take_along_axis(corner_st, ((twist + 2) % 3)[..., None], axis=2)[..., 0]
    corner = _CORNER_BY_COLOURS[c1 * 6 + c2]
    fail("a corner with an impossible colour combination", (corner < 0).any(axis=1))
    edge_st = f[:, EDGE_FACELETS]
    edge = _EDGE_BY_COLOURS[edge_st[..., 0] * 6 + edge_st[..., 1]]
    fail("an edge with an impossible colour combination", (edge < 0).any(axis=1))
    pieces = np.full((b, 20), -1, dtype=np.int64)
    pos8, pos12 = np.arange(8), np.arange(12)
    pieces[rows[:, None], corner] = pos8 * 3 + twist
    # orientation of an edge piece: flip of the stickers relative to the position's reference
    pieces[rows[:, None], 8 + edge // 2] = pos12 * 2 + edge % 2
    fail("a corner appears twice (another is missing)", (pieces[:, :8] < 0).any(axis=1))
    fail("an edge appears twice (another is missing)", (pieces[:, 8:] < 0).any(axis=1))
    fail("the corners are twisted (twist sum not 0 mod 3)", twist.sum(axis=1) % 3 != 0)
    fail("an edge is flipped (flip sum odd)", (edge % 2).sum(axis=1) % 2 != 0)
    if centres_fixed:
        fail("two pieces are swapped (corner and edge permutation parities differ)",
             _parity(corner) != _parity(edge // 2))  # fmt: skip
    return pieces


def _parity(perm: np.ndarray) -> np.ndarray:
    """Inversion parity of each row of ``perm[B, k]``."""
    k = perm.shape[1]
    i, j = np.triu_indices(k, 1)
    return (perm[:, i] > perm[:, j]).sum(axis=1) % 2


def pieces_to_facelets(pieces: np.ndarray) -> np.ndarray:
    """Piece values ``[B, 20]`` -> colour codes ``uint8[B, 54]`` (inverse of :func:`facelets_to_pieces`)."""
    p = np.asarray(pieces, dtype=np.int64).reshape(-1, 20)
    b = p.shape[0]
    out = np.zeros((b, 54), dtype=np.uint8)
    out[:, 4::9] = np.arange(6)
    for piece in range(8):
        pos, tw = divmod(p[:, piece], 3)
        for s in range(3):  # sticker s of the piece lands on facelet (s + twist) % 3 of its position
            out[np.arange(b), CORNER_FACELETS[pos, (s + tw) % 3]] = CORNER_COLOURS[piece, s]
    for piece in range(12):
        pos, fl = divmod(p[:, 8 + piece], 2)
        for s in range(2):
            out[np.arange(b), EDGE_FACELETS[pos, (s + fl) % 2]] = EDGE_COLOURS[piece, s]
    return out
