"""Generated permutation puzzles: NxNxN cubes, globes and wreaths (the Santa 2023 competition's).

Every function here returns a native definition (:mod:`.definition`) as a plain JSON-able dict,
built from the puzzle's geometry: sticker coordinates turned by quarter rotations for the cubes,
ring shifts and half-turn flips for the globes and wreaths. Moves, their names and their order
are the competition's (and CayleyPy's), so a competition row's moves apply to these definitions
unchanged: ``f0`` is ``f0``, the competition's ``-f0`` is ``f0'``. Every move is an array-form
permutation, ``child = parent[perm]``.

Cubes (``cube_n-n-n``)
    ``6 n^2`` stickers, face after face in the order U, F, R, B, L, D, each face row by row as it
    appears in the usual net (U above F with its back edge on top, L F R B in a row seen from
    outside, D below F with its front edge on top)::

            U
        L   F   R   B
            D

    With ``x`` to the right, ``y`` up and ``z`` towards the viewer, sticker ``(row, column)`` of a
    face sits at ``n * normal + c(column) * across + c(row) * down`` where ``c(k) = 2k - (n - 1)``;
    the faces' (normal, across, down) are U (+y, +x, +z), F (+z, +x, -y), R (+x, -z, -y),
    B (-z, -x, -y), L (-x, +z, -y) and D (-y, +x, -z).

    The competition's moves turn one slice a quarter turn: ``f0 .. f{n-1}`` the slices parallel to
    F counted from F (``f{n-1}`` is the B face), clockwise as seen from F; ``r0 .. r{n-1}`` the
    slices parallel to R counted from R, clockwise as seen from R; ``d0 .. d{n-1}`` the slices
    parallel to D counted from D, clockwise as seen from D; then their inverses ``f0' ..``, ``r0'
    ..``, ``d0' ..`` in the same order (``3n`` moves and ``3n`` inverses).

    :func:`cubers_cube` has the same stickers with cubers' outer block turns instead: ``U F R B L
    D`` turn one face layer clockwise as seen from that face, ``Uw .. Dw`` the two outer layers,
    ``3Uw ..`` three, up to half the cube; their inverses ``U' ..`` follow in the same order. On
    the 3x3x3 these are the twelve quarter turns of the usual face-turn puzzle.

    ``pieces`` lists the cubies: corners (3 stickers), edges and, from 4x4x4, wing edges (2),
    centres (1).

Globes (``globe_a-b``, the competition's ``globe_a/b``)
    A sphere cut by ``a`` lines of latitude into ``a + 1`` rings and by ``b`` great circles
    through the poles into ``2b`` sectors: ``(a + 1) * 2b`` positions, ring after ring from the
    north, each ring's ``2b`` positions in order of longitude. ``r0 .. ra`` turn one ring by one
    sector (``child[i] = parent[i + 1]`` along the ring); ``f0 .. f{2b-1}`` turn the hemisphere of
    ``b`` sectors starting at sector ``j`` half a turn, so ring ``i`` and ring ``a - i`` swap those
    sectors in reverse order (an equatorial ring, when ``a`` is even, is not moved by a flip). The
    order is ``r0 .. ra, f0 .. f{2b-1}, r0' .. ra'``: a flip is its own inverse and is listed once.

Wreaths (``wreath_a-b``, the competition's ``wreath_a/b``)
    Two rings of ``a`` and ``b`` positions crossing at two positions: ``a + b - 2`` positions. The
    left ring is positions ``0 .. a-1`` in order; it crosses the right ring at its positions 0 and
    ``s = ceil(a / 4)``. The right ring runs from position 0 through the positions ``a, a + 1,
    ...`` not on the left ring, with the second crossing ``s`` at its place ``b - ceil(b / 4) - 1``.
    ``l`` and ``r`` shift one ring by one place (``child[i] = parent[next(i)]`` along the ring),
    then ``l'`` and ``r'``.

Goals
    ``"standard"`` is the competition's usual solved state: a cube's faces ``A`` (U), ``B`` (F),
    ``C`` (R), ``D`` (B), ``E`` (L), ``F`` (D); a wreath's left ring ``A``, the right ring's own
    positions ``B`` and the two crossings ``C``; a globe's longitude sectors grouped into bands of
    ``w`` sectors (``w`` is the competition's for its globes, else 2), each band with one colour
    in the northern rings, one on the equator when there is one, one in the southern rings
    (colours ``A B C ... Z a b ... z`` band by band, north first). ``"distinct"`` gives every
    position its own label ``N0 N1 ...`` (the competition's puzzles whose every piece is
    different). ``"alternating"`` (cubes only) alternates each face's stickers, in their row by
    row order, between the face's colour and the next face's (``A B A B ..`` on U, ``B C B C ..``
    on F, ..., ``F A F A ..`` on D): a checkerboard on odd cubes, stripes on even ones. Other goals
    than the standard one add their kind to the name (``cube_3-3-3-distinct``).

:data:`FAMILIES` maps every competition puzzle type to its generator and arguments;
:func:`family_definition` builds the definition of a type by name.

>>> d = cube(2)
>>> d["name"], d["positions"], list(d["moves"])[:3], d["goal"][:5]
('cube_2-2-2', 24, ['f0', 'f1', 'r0'], ['A', 'A', 'A', 'A', 'B'])
>>> d["moves"]["f0"][:6]
[0, 1, 19, 17, 6, 4]
>>> [family_definition(t)["positions"] for t in ("wreath_6/6", "globe_1/8")]
[10, 32]
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

import numpy as np

from puzzlezero.errors import DefinitionError

__all__ = [
    "CUBE_GOALS",
    "CubeGeometry",
    "FAMILIES",
    "FORMAT",
    "GLOBE_BAND_WIDTHS",
    "GOALS",
    "cube",
    "cube_sticker_points",
    "cubers_cube",
    "family_definition",
    "globe",
    "wreath",
]

#: the native format's name and version (as :data:`.definition.FORMAT`)
FORMAT = "puzzlezero-permutation/1"
#: the goal kinds of cubes, and of globes and wreaths
CUBE_GOALS = ("standard", "distinct", "alternating")
GOALS = ("standard", "distinct")
#: the sizes generated: cubes, and the rings and sectors of globes and wreaths
MAX_CUBE = 33
MAX_RING = 1000
#: how many longitude sectors share a colour in the competition's standard globe goals
GLOBE_BAND_WIDTHS: dict[tuple[int, int], int] = {
    (1, 8): 2,
    (1, 16): 4,
    (2, 6): 3,
    (3, 4): 2,
    (6, 4): 2,
    (6, 8): 2,
    (6, 10): 4,
    (3, 33): 6,
    (8, 25): 5,
}
_DEFAULT_BAND_WIDTH = 2
_COLOURS = string.ascii_uppercase + string.ascii_lowercase

Definition = dict[str, Any]

# ---- cubes ---------------------------------------------------------------------------------------
#: the faces in sticker order, each with (outward normal, direction of columns, direction of rows)
_FACES: tuple[tuple[str, tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]], ...] = (
    ("U", (0, 1, 0), (1, 0, 0), (0, 0, 1)),
    ("F", (0, 0, 1), (1, 0, 0), (0, -1, 0)),
    ("R", (1, 0, 0), (0, 0, -1), (0, -1, 0)),
    ("B", (0, 0, -1), (-1, 0, 0), (0, -1, 0)),
    ("L", (-1, 0, 0), (0, 0, 1), (0, -1, 0)),
    ("D", (0, -1, 0), (1, 0, 0), (0, 0, -1)),
)
_NORMALS = {name: np.array(normal, dtype=np.int64) for name, normal, _, _ in _FACES}


def _check_size(value: int, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not lo <= int(value) <= hi:
        raise DefinitionError(f"{what} must be a whole number from {lo} to {hi}, got {value!r}")
    return int(value)


def _check_goal(goal: str, kinds: tuple[str, ...], what: str) -> str:
    if goal not in kinds:
        raise DefinitionError(f"unknown goal {goal!r} for {what}; goals are {', '.join(kinds)}")
    return goal


def _named(base: str, goal: str) -> str:
    return base if goal == "standard" else f"{base}-{goal}"


def _colour(k: int) -> str:
    return _COLOURS[k] if k < len(_COLOURS) else f"K{k}"


def cube_sticker_points(n: int) -> np.ndarray:
    """``int64[6 n^2, 3]``: every sticker's centre, in sticker order (coordinates ``-n .. n``)."""
    c = 2 * np.arange(n, dtype=np.int64) - (n - 1)
    rows, cols = np.meshgrid(c, c, indexing="ij")
    out = []
    for _, normal, across, down in _FACES:
        pos = n * np.array(normal) + cols[..., None] * np.array(across) + rows[..., None] * np.array(down)
        out.append(pos.reshape(-1, 3))
    return np.concatenate(out).astype(np.int64)


def _quarter_turn(normal: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``points`` turned a quarter turn clockwise as seen from outside along ``normal`` (a unit
    axis): ``v -> (n . v) n - n x v``."""
    along = (points @ normal)[:, None] * normal[None, :]
    return along - np.cross(normal[None, :], points)


class CubeGeometry:
    """A cube's sticker centres with the lookup from a centre back to its sticker."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.points = cube_sticker_points(n)
        self.side = 2 * n + 1
        self.lookup = np.full(self.side**3, -1, dtype=np.int64)
        self.lookup[self._keys(self.points)] = np.arange(len(self.points))

    def _keys(self, points: np.ndarray) -> np.ndarray:
        shifted = points + self.n
        return (shifted[:, 0] * self.side + shifted[:, 1]) * self.side + shifted[:, 2]

    def stickers_at(self, points: np.ndarray) -> np.ndarray:
        """The stickers whose centres are ``points`` (``int64[P, 3]``, each a sticker's centre)."""
        return self.lookup[self._keys(points)]

    def depth(self, face: str) -> np.ndarray:
        """Each sticker's slice counted from ``face`` (0 = the face's own layer, ``n - 1`` the
        opposite face's)."""
        along = self.points @ _NORMALS[face]
        along = np.clip(along, -(self.n - 1), self.n - 1)
        return ((self.n - 1 - along) // 2).astype(np.int64)

    def turn(self, face: str, layers: np.ndarray) -> list[int]:
        """The permutation turning the stickers whose ``depth(face)`` is in ``layers`` a quarter
        turn clockwise as seen from ``face``: the sticker at ``p`` goes to ``q``, ``child[q] =
        parent[p]``."""
        moving = np.flatnonzero(np.isin(self.depth(face), layers))
        dest = self.stickers_at(_quarter_turn(_NORMALS[face], self.points[moving]))
        perm = np.arange(len(self.points), dtype=np.int64)
        perm[dest] = moving
        return [int(v) for v in perm]

    def pieces(self) -> list[list[int]]:
        """The cubies: stickers grouped by the cubie they are on, in order of their first sticker."""
        cubie = np.clip(self.points, -(self.n - 1), self.n - 1)
        groups: dict[tuple[int, int, int], list[int]] = {}
        for i, key in enumerate(map(tuple, cubie.tolist())):
            groups.setdefault(key, []).append(i)
        return sorted(groups.values())


def _invert(perm: list[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _with_inverses(moves: dict[str, list[int]]) -> dict[str, list[int]]:
    """The moves, then their inverses ``m'`` in the same order."""
    out = dict(moves)
    for name, perm in moves.items():
        out[f"{name}'"] = _invert(perm)
    return out


def _cube_goal(n: int, goal: str) -> list[str]:
    k = np.arange(n * n)
    labels: list[str] = []
    for f in range(6):
        if goal == "standard":
            labels += [_COLOURS[f]] * (n * n)
        elif goal == "alternating":
            labels += [_COLOURS[(f + int(j) % 2) % 6] for j in k]
        else:
            labels += [f"N{f * n * n + int(j)}" for j in k]
    return labels


def _cube_definition(
    n: int, goal: str, moves: dict[str, list[int]], base: str, description: str
) -> Definition:
    geometry = CubeGeometry(n)
    return {
        "format": FORMAT,
        "name": _named(base, goal),
        "description": description,
        "positions": 6 * n * n,
        "moves": moves,
        "goal": _cube_goal(n, goal),
        "wildcards": 0,
        "pieces": geometry.pieces(),
        "drawing": {"kind": "cube", "size": n},
    }


def cube(n: int, goal: str = "standard") -> Definition:
    """The NxNxN cube with the competition's moves: every slice quarter turn one move (``f0`` ..,
    ``r0`` .., ``d0`` .., then their inverses), ``n`` from 2 to 33."""
    n = _check_size(n, "the cube's size", 2, MAX_CUBE)
    _check_goal(goal, CUBE_GOALS, "cubes")
    geometry = CubeGeometry(n)
    moves: dict[str, list[int]] = {}
    for family, face in (("f", "F"), ("r", "R"), ("d", "D")):
        for i in range(n):
            moves[f"{family}{i}"] = geometry.turn(face, np.array([i]))
    return _cube_definition(
        n,
        goal,
        _with_inverses(moves),
        f"cube_{n}-{n}-{n}",
        f"{n}x{n}x{n} cube, every slice quarter turn one move (the Santa 2023 competition's metric)",
    )


def _block_name(face: str, width: int) -> str:
    if width == 1:
        return face
    return f"{face}w" if width == 2 else f"{width}{face}w"


def cubers_cube(n: int, goal: str = "standard") -> Definition:
    """The NxNxN cube with cubers' outer block quarter turns (``U F R B L D``, ``Uw`` .., ``3Uw``
    .. up to half the cube, then their inverses), on the same stickers as :func:`cube`."""
    n = _check_size(n, "the cube's size", 2, MAX_CUBE)
    _check_goal(goal, CUBE_GOALS, "cubes")
    geometry = CubeGeometry(n)
    moves: dict[str, list[int]] = {}
    for width in range(1, n // 2 + 1):
        for face in ("U", "F", "R", "B", "L", "D"):
            moves[_block_name(face, width)] = geometry.turn(face, np.arange(width))
    return _cube_definition(
        n,
        goal,
        _with_inverses(moves),
        f"cube_{n}-{n}-{n}-outer",
        f"{n}x{n}x{n} cube, every outer block quarter turn one move (U, Uw, 3Uw, ...: cubers' notation)",
    )


# ---- globes --------------------------------------------------------------------------------------
def _globe_goal(rows: int, columns: int, goal: str, band_width: int) -> list[str]:
    rings, sectors = rows + 1, 2 * columns
    if goal == "distinct":
        return [f"N{i}" for i in range(rings * sectors)]
    kinds = 3 if rings % 2 else 2  # north, (equator,) south
    labels = []
    for ring in range(rings):
        if ring < rings // 2:
            kind = 0
        elif rings % 2 and ring == rings // 2:
            kind = 1
        else:
            kind = kinds - 1
        labels += [_colour((s // band_width) * kinds + kind) for s in range(sectors)]
    return labels


def globe(rows: int, columns: int, goal: str = "standard", band_width: int | None = None) -> Definition:
    """The globe the competition calls ``globe_{rows}/{columns}``: ``rows`` cuts of latitude
    (``rows + 1`` rings), ``columns`` great circles through the poles (``2 columns`` sectors).
    ``band_width`` (sectors per colour band of the standard goal) defaults to the competition's
    for its globes, else 2; it must divide ``2 columns``."""
    rows = _check_size(rows, "a globe's rows (cuts of latitude)", 1, MAX_RING)
    columns = _check_size(columns, "a globe's columns (great circles)", 2, MAX_RING // 2)
    _check_goal(goal, GOALS, "globes")
    width = GLOBE_BAND_WIDTHS.get((rows, columns), _DEFAULT_BAND_WIDTH) if band_width is None else band_width
    width = _check_size(width, "a globe's band width", 1, 2 * columns)
    if (2 * columns) % width:
        raise DefinitionError(f"a globe's band width must divide its {2 * columns} sectors, got {width}")
    rings, sectors = rows + 1, 2 * columns
    grid = np.arange(rings * sectors, dtype=np.int64).reshape(rings, sectors)
    moves: dict[str, list[int]] = {}
    for ring in range(rings):
        perm = grid.copy()
        perm[ring] = np.roll(grid[ring], -1)
        moves[f"r{ring}"] = [int(v) for v in perm.reshape(-1)]
    for start in range(sectors):
        span = (start + np.arange(columns)) % sectors
        perm = grid.copy()
        for ring in range(rings // 2):
            other = rows - ring
            perm[ring, span] = grid[other, span[::-1]]
            perm[other, span] = grid[ring, span[::-1]]
        moves[f"f{start}"] = [int(v) for v in perm.reshape(-1)]
    for ring in range(rings):
        moves[f"r{ring}'"] = _invert(moves[f"r{ring}"])
    return {
        "format": FORMAT,
        "name": _named(f"globe_{rows}-{columns}", goal),
        "description": (
            f"globe of {rings} rings and {sectors} sectors: a ring turns one sector, a hemisphere "
            "of half the sectors flips (the Santa 2023 competition's moves)"
        ),
        "positions": rings * sectors,
        "moves": moves,
        "goal": _globe_goal(rows, columns, goal, width),
        "wildcards": 0,
        "drawing": {"kind": "globe", "rows": rows, "columns": columns},
    }


# ---- wreaths -------------------------------------------------------------------------------------
def _wreath_rings(left: int, right: int) -> tuple[list[int], list[int]]:
    """Both rings' positions in their order of travel."""
    crossing = -(-left // 4)
    at = right - (-(-right // 4)) - 1
    own = list(range(left, left + right - 2))
    return list(range(left)), [0, *own[: at - 1], crossing, *own[at - 1 :]]


def _ring_shift(ring: list[int], n: int) -> list[int]:
    perm = list(range(n))
    for k, p in enumerate(ring):
        perm[p] = ring[(k + 1) % len(ring)]
    return perm


def wreath(left: int, right: int, goal: str = "standard") -> Definition:
    """The wreath the competition calls ``wreath_{left}/{right}``: two rings of ``left`` and
    ``right`` positions crossing at two of them."""
    left = _check_size(left, "a wreath's left ring", 3, MAX_RING)
    right = _check_size(right, "a wreath's right ring", 3, MAX_RING)
    _check_goal(goal, GOALS, "wreaths")
    n = left + right - 2
    ring_l, ring_r = _wreath_rings(left, right)
    moves = _with_inverses({"l": _ring_shift(ring_l, n), "r": _ring_shift(ring_r, n)})
    if goal == "distinct":
        labels = [f"N{i}" for i in range(n)]
    else:
        labels = ["A"] * left + ["B"] * (right - 2)
        for p in set(ring_l) & set(ring_r):
            labels[p] = "C"
    return {
        "format": FORMAT,
        "name": _named(f"wreath_{left}-{right}", goal),
        "description": (
            f"wreath of two rings of {left} and {right} positions crossing at two, each ring turning "
            "one place (the Santa 2023 competition's moves)"
        ),
        "positions": n,
        "moves": moves,
        "goal": labels,
        "wildcards": 0,
        "drawing": {"kind": "wreath", "left": left, "right": right},
    }


# ---- the competition's types ---------------------------------------------------------------------
#: every puzzle type of the competition -> (generator, its size arguments); the generators take
#: ``goal=`` too (``globe_33/3`` is in the competition's list of types, without puzzles)
FAMILIES: dict[str, tuple[Callable[..., Definition], tuple[int, ...]]] = {
    **{f"cube_{n}/{n}/{n}": (cube, (n,)) for n in (2, 3, 4, 5, 6, 7, 8, 9, 10, 19, 33)},
    **{f"wreath_{a}/{a}": (wreath, (a, a)) for a in (6, 7, 12, 21, 33, 100)},
    **{
        f"globe_{a}/{b}": (globe, (a, b))
        for a, b in ((1, 8), (1, 16), (2, 6), (3, 4), (6, 4), (6, 8), (6, 10), (3, 33), (33, 3), (8, 25))
    },
}


def family_definition(puzzle_type: str, goal: str = "standard") -> Definition:
    """The generated definition of a competition puzzle type (``"cube_4/4/4"``, ``"wreath_6/6"``,
    ``"globe_1/8"``) with one of its goals."""
    try:
        make, args = FAMILIES[puzzle_type]
    except (KeyError, TypeError):
        raise DefinitionError(
            f"unknown puzzle type {puzzle_type!r}; the known types are {', '.join(FAMILIES)}"
        ) from None
    return make(*args, goal=goal)
