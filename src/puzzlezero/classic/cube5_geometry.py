"""The 5x5x5's pieces and moves, read from its move permutations: the one geometry that its
reduction's steps (:mod:`~puzzlezero.classic.cube5_reduction`'s centres,
:mod:`~puzzlezero.classic.cube5_wings`' and :mod:`~puzzlezero.classic.cube5_midges`' pairing
beams) all read, with the checks on a state they share.

Stickers are numbered face by face (``25 * face + 5 * row + column``), every slice quarter turn is a
move. The moves tell the pieces apart: the stickers that the same moves move are one piece (the
corners' three, an edge's two, a centre's one), an outer layer's turn moves the corners, a middle
slice's the middle centres, an inner slice's neither. The moves' names (``f0`` .. ``d4'``: an axis's
letter, the slice along it, a prime for the inverse) give each move its slice and sense.

>>> from puzzlezero import make
>>> g = CubeGeometry5.of(make("cube_5-5-5"))
>>> np.bincount(g.move_kind).tolist(), g.wings.shape, g.midges.shape, g.corners.shape
([12, 12, 6], (24, 2), (12, 2), (8, 3))
>>> bool(centres_home(g, make("cube_5-5-5").goal()) and wings_paired(g, make("cube_5-5-5").goal()))
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from puzzlezero.classic.cube_reduction import memo
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.rules import permutation_parity
from puzzlezero.puzzles.permutation.rules import PermutationPuzzle

__all__ = [
    "CubeGeometry5",
    "as_rows",
    "centres_home",
    "centres_off",
    "cube_geometry",
    "macro_actions",
    "wing_ids",
    "wing_parity",
    "wings_paired",
]

#: a move's name: its axis's letters, its slice, a prime for the inverse
_NAME = re.compile(r"^([A-Za-z]+)(\d+)('?)$")


@dataclass(frozen=True)
class CubeGeometry5:
    """The 5x5x5's pieces and moves as they appear in its definition: stickers face by face
    (``25 * face + 5 * row + column``), every slice quarter turn a move."""

    #: the puzzle's name
    name: str
    #: ``int[30, 150]``: each move's permutation of the stickers (``child = parent[perm]``)
    perms: np.ndarray
    #: ``int[150]``: the goal's labels
    goal: np.ndarray
    #: ``int[54]``: the centre stickers' positions, the 24 x-centres, the 24 plus-centres, the 6
    #: middle centres
    centres: np.ndarray
    #: ``int[54]``: each centre position's face
    centre_face: np.ndarray
    #: ``int[54]``: each centre position's label in the goal
    centre_labels: np.ndarray
    #: ``int[6]``: each face's axis (0, 1, 2)
    face_axis: np.ndarray
    #: ``int[6]``: each face's colour in the goal
    face_label: np.ndarray
    #: ``int[30, 54]``: each move as a permutation of the centre positions
    centre_perms: np.ndarray
    #: ``int[30]``: each move's slice kind: 0 an outer layer, 1 an inner slice, 2 the middle slice
    move_kind: np.ndarray
    #: ``int[30]``: each move's axis
    move_axis: np.ndarray
    #: ``int[30]``: each move's slice along its axis, from its name (0 and 4 outer, 2 the middle)
    slice_of: np.ndarray
    #: ``int[30]``: +1 for a move named without a prime, -1 for its inverse
    sense: np.ndarray
    #: ``int[30]``: the face whose centres an outer move turns in place, -1 for the others
    turned_face: np.ndarray
    #: ``bool[30, 6]``: the faces whose centres the move takes to another face
    side_faces: np.ndarray
    #: ``int[24, 2]``: each wing piece's two stickers (the one of the first wing orbit first), in
    #: order: a wing's *number* is its row here, the position it stands at in the goal
    wings: np.ndarray
    #: ``int[12, 2]``: each midge's two stickers
    midges: np.ndarray
    #: ``int[12, 6]``: each edge's stickers as (x1, x2, xm, y1, y2, ym): its two wings' and its
    #: midge's on one face, then on the other (the edges in the order of :attr:`midges`)
    edges: np.ndarray
    #: ``int[8, 3]``: each corner's stickers
    corners: np.ndarray
    #: ``uint8[30]``: each move's effect on the wing parity
    wing_odd: np.ndarray
    #: ``int[L * L]``: a wing's number from its colours (``L * first + second``), -1 for none
    reading: np.ndarray
    #: the number of labels (``L``)
    num_labels: int

    @staticmethod
    def of(puzzle: Puzzle) -> CubeGeometry5:
        """The geometry of a 5x5x5 in the competition's layout, read once for each puzzle's moves and
        goal, or a :class:`PuzzleError` naming what does not fit."""
        return memo(_GEOMETRIES, puzzle, lambda p: _build_geometry(p, "the 5x5x5 reduction"))

    @property
    def outer(self) -> np.ndarray:
        """``bool[30]``: does the move turn an outer layer (move corners)?"""
        return self.move_kind == 0

    @property
    def middle(self) -> np.ndarray:
        """``bool[30]``: does the move turn a middle slice (move the middle centres)?"""
        return self.move_kind == 2

    def facts(self) -> dict[str, Any]:
        """The fields by name, for a geometry that adds its own tables to them
        (``WingGeometry(**cube.facts(), ...)``)."""
        return {f.name: getattr(self, f.name) for f in fields(CubeGeometry5)}


_GEOMETRIES: dict[tuple, CubeGeometry5] = {}


def cube_geometry(puzzle: Puzzle, user: str) -> CubeGeometry5:
    """:meth:`CubeGeometry5.of` for ``user`` (the step that reads it), whom its
    :class:`PuzzleError` names for a puzzle that is not a 5x5x5."""
    if getattr(puzzle, "perms", None) is None:
        raise PuzzleError(f"{user} needs a permutation puzzle; {puzzle.name} is not one")
    return memo(_GEOMETRIES, puzzle, lambda p: _build_geometry(p, user))


def _build_geometry(puzzle: Puzzle, user: str) -> CubeGeometry5:
    what = f"{user} solves the 5x5x5 (150 stickers, 30 slice quarter turns); {puzzle.name}"
    if not isinstance(puzzle, PermutationPuzzle):
        raise PuzzleError(f"{what} is not a permutation puzzle made from a definition")
    perms = np.asarray(puzzle.perms, np.int64)
    labels_in_goal = np.asarray(puzzle.goal()).reshape(-1)
    goal = labels_in_goal.astype(np.int64)
    if perms.shape != (30, 150) or goal.shape != (150,):
        raise PuzzleError(f"{what} has {perms.shape[1]} positions and {perms.shape[0]} moves")
    ident = np.arange(150)
    face, row, col = ident // 25, ident % 25 // 5, ident % 5
    moved = perms != ident
    for f in range(6):
        if len(set(goal[face == f].tolist())) != 1:
            raise PuzzleError(
                f"{what}'s goal is not one colour on each face (the reduction needs the six colours)"
            )
    face_label = labels_in_goal[::25].copy()
    if len(set(face_label.tolist())) != 6:
        raise PuzzleError(f"{what}'s goal repeats a face's colour")
    # the centres, kind by kind; the moves' kinds: an outer layer moves the corners, a middle slice
    # the middle centres
    inside = (row >= 1) & (row <= 3) & (col >= 1) & (col <= 3)
    x = ident[inside & (row != 2) & (col != 2)]
    plus = ident[inside & ((row == 2) ^ (col == 2))]
    middle = ident[(row == 2) & (col == 2)]
    corner_cells = ident[np.isin(row, (0, 4)) & np.isin(col, (0, 4))]
    outer = moved[:, corner_cells].any(axis=1)
    middle_moves = moved[:, middle].any(axis=1)
    move_kind = np.where(outer, 0, np.where(middle_moves, 2, 1))
    if np.bincount(move_kind, minlength=3).tolist() != [12, 12, 6] or (outer & middle_moves).any():
        raise PuzzleError(
            f"{what}'s moves are not 12 outer layers', 12 inner slices' and 6 middle slices' turns"
        )
    centres = np.concatenate([x, plus, middle])
    centre_face = face[centres]
    index = np.full(150, -1)
    index[centres] = np.arange(54)
    centre_perms = index[perms[:, centres]]
    if np.any(centre_perms < 0) or np.any(moved[move_kind == 2][:, x]):
        raise PuzzleError(f"{what}'s moves take centres to other pieces")
    # the axes: the two faces whose centres a middle slice leaves
    axes: list[frozenset[int]] = []
    for m in np.flatnonzero(move_kind == 2):
        pair = frozenset(range(6)) - frozenset(centre_face[centre_perms[m] != np.arange(54)].tolist())
        if len(pair) != 2:
            raise PuzzleError(f"{what}'s middle slices do not turn four faces' centres")
        if pair not in axes:
            axes.append(pair)
    if len(axes) != 3:
        raise PuzzleError(f"{what}'s slices are not about three axes")
    face_axis = np.full(6, -1)
    for k, pair in enumerate(axes):
        face_axis[list(pair)] = k
    # each move's axis; the face an outer move turns in place, the faces a move takes centres from
    move_axis = np.full(30, -1)
    turned_face = np.full(30, -1)
    side_faces = np.zeros((30, 6), bool)
    went = centre_face[centre_perms] != centre_face  # [move, centre]: from another face
    for a in range(30):
        side_faces[a, np.unique(centre_face[went[a]])] = True
        turned: set[int] = set(centre_face[centre_perms[a] != np.arange(54)].tolist())
        if move_kind[a] == 0:
            if went[a].any() or len(turned) != 1:
                raise PuzzleError(f"{what}'s outer moves do not turn one face")
            turned_face[a] = turned.pop()
            move_axis[a] = face_axis[turned_face[a]]
        else:
            move_axis[a] = next(k for k, pair in enumerate(axes) if not turned & pair)
    # each move's slice and sense, from its name
    names = puzzle.format_moves(list(range(30)))
    parsed = [_NAME.match(n) for n in names]
    if any(m is None for m in parsed):
        raise PuzzleError(f"{what}'s moves are not named by axis and slice ({names})")
    letters = [m.group(1) for m in parsed if m is not None]
    slice_of = np.array([int(m.group(2)) for m in parsed if m is not None])
    sense = np.array([-1 if m.group(3) else 1 for m in parsed if m is not None])
    if (
        len(set(letters)) != 3
        or len(set(zip(letters, move_axis.tolist(), strict=True))) != 3
        or not np.all(np.isin(slice_of, range(5)))
        or not np.array_equal(move_kind, np.array([0, 1, 2, 1, 0])[slice_of])
    ):
        raise PuzzleError(f"{what}'s moves are not three axes' slices 0..4, 0 and 4 outer")
    # the edge pieces: stickers moved by the same moves
    pieces: dict[bytes, list[int]] = {}
    for i in ident[~inside]:
        pieces.setdefault(moved[:, i].tobytes(), []).append(int(i))
    corners = np.array(sorted(s for s in pieces.values() if len(s) == 3))
    pairs = [s for s in pieces.values() if len(s) == 2]
    midges = np.array(sorted(s for s in pairs if moved[middle_moves][:, s].any()))
    wing_stickers = [s for s in pairs if not moved[middle_moves][:, s].any()]
    if len(corners) != 8 or len(midges) != 12 or len(wing_stickers) != 24:
        raise PuzzleError(f"{what}'s pieces are not a 5x5x5's 8 corners, 12 midges and 24 wings")
    # the wings: the first sticker of each in one orbit, the second in the other
    orbit = np.full(150, -1)
    for k, members in enumerate(puzzle.orbits):
        orbit[members] = k
    first = orbit[wing_stickers[0][0]]
    wings = np.array(sorted(s if orbit[s[0]] == first else s[::-1] for s in wing_stickers))
    if np.any(orbit[wings[:, 0]] != first) or np.any(orbit[wings[:, 1]] == first):
        raise PuzzleError(f"{what}'s wings can be flipped in place: not a 5x5x5")
    labels = int(goal.max()) + 1
    codes = goal[wings[:, 0]] * labels + goal[wings[:, 1]]
    if len(set(codes.tolist())) != 24:
        raise PuzzleError(f"{what}'s wings are not told apart by their colours")
    reading = np.full(labels * labels, -1, np.int64)
    reading[codes] = np.arange(24)
    # each edge: the midge and the two wings between the same two faces
    edges = []
    for m in midges:
        fx, fy = int(face[m[0]]), int(face[m[1]])
        ws = [w for w in wings if {int(face[w[0]]), int(face[w[1]])} == {fx, fy}]
        if len(ws) != 2:
            raise PuzzleError(f"{what}'s edges are not two wings and a midge each")
        on_x = [int(w[0]) if face[w[0]] == fx else int(w[1]) for w in ws]
        on_y = [int(w[1]) if face[w[0]] == fx else int(w[0]) for w in ws]
        edges.append((*on_x, int(m[0]), *on_y, int(m[1])))
    moved_wings = reading[goal[perms[:, wings[:, 0]]] * labels + goal[perms[:, wings[:, 1]]]]
    if np.any(moved_wings < 0):
        raise PuzzleError(f"{what}'s moves take wings elsewhere")
    wing_odd = np.array([permutation_parity(w) for w in moved_wings], np.uint8)
    return CubeGeometry5(
        name=puzzle.name,
        perms=perms,
        goal=goal,
        centres=centres,
        centre_face=centre_face,
        centre_labels=goal[centres],
        face_axis=face_axis,
        face_label=face_label,
        centre_perms=centre_perms,
        move_kind=move_kind,
        move_axis=move_axis,
        slice_of=slice_of,
        sense=sense,
        turned_face=turned_face,
        side_faces=side_faces,
        wings=wings,
        midges=midges,
        edges=np.array(edges),
        corners=corners,
        wing_odd=wing_odd,
        reading=reading,
        num_labels=labels,
    )


# --------------------------------------------------------------------------------------------
# a state's checks: one state (``[150]``) or ``k`` of them (``[k, 150]``)


def macro_actions(
    path: Iterable[int], macros: Sequence[Sequence[int]], finish: Sequence[Sequence[int]] | None
) -> list[int]:
    """The puzzle's moves of a pairing beam's path of macros: ``i`` is ``macros[i]``, a negative
    ``-1 - i`` the finishing macro ``finish[i]``."""
    out: list[int] = []
    for i in path:
        if i >= 0:
            out.extend(macros[i])
        elif finish is not None:
            out.extend(finish[-1 - i])
        else:
            raise ValueError("a path with a finishing macro, and no finishing macros")
    return out


def as_rows(states: np.ndarray) -> np.ndarray:
    """``[k, 150]``: the states as rows (one state as one row)."""
    s = np.asarray(states)
    return s.reshape(1, -1) if s.ndim == 1 else s.reshape(len(s), -1)


def centres_off(geo: CubeGeometry5, states: np.ndarray) -> np.ndarray:
    """``int[k]``: how many centre stickers are not on their face."""
    s = as_rows(states)
    return (s[:, geo.centres] != geo.centre_labels).sum(axis=1)


def centres_home(geo: CubeGeometry5, states: np.ndarray) -> np.ndarray | bool:
    """Is every centre sticker (x-, plus- and middle centres) its face's colour? A ``bool`` for one
    state, ``bool[k]`` for ``k``."""
    out = centres_off(geo, states) == 0
    return bool(out[0]) if np.ndim(states) == 1 else out


def wings_paired(geo: CubeGeometry5, states: np.ndarray) -> np.ndarray | bool:
    """Do the two wings of every edge show the same colours on each of its faces? A ``bool`` for
    one state, ``bool[k]`` for ``k``."""
    s = as_rows(states)
    x1, x2, _, y1, y2, _ = geo.edges.T
    out = ((s[:, x1] == s[:, x2]) & (s[:, y1] == s[:, y2])).all(axis=1)
    return bool(out[0]) if np.ndim(states) == 1 else out


def wing_ids(geo: CubeGeometry5, states: np.ndarray) -> np.ndarray:
    """``uint8[k, 24]`` (``uint8[24]`` for one state): the wing at each wing position, read from its
    colours (an :class:`InvalidStateError` for colours no wing has)."""
    s = as_rows(states).astype(np.int64)
    ids = geo.reading[s[:, geo.wings[:, 0]] * geo.num_labels + s[:, geo.wings[:, 1]]]
    if np.any(ids < 0):
        raise InvalidStateError("this 5x5x5 state shows a wing whose colours no wing has")
    ids = ids.astype(np.uint8)
    return ids[0] if np.ndim(states) == 1 else ids


def wing_parity(geo: CubeGeometry5, state: np.ndarray) -> int:
    """The parity of the wings' permutation: 0 where even, 1 where odd."""
    return permutation_parity(wing_ids(geo, np.asarray(state).reshape(-1)).astype(np.int64))
