"""Reduction of the 4x4x4 cube to a 3x3x3: the centres by tables, the edges paired by a beam, then a 3x3x3 solve.

How big cubes are solved by hand and by the strongest classical programs: first the centres (each
face's four centre stickers one colour), then the edges paired (the two wing pieces of each edge
side by side), and what is left turns like a 3x3x3 whose centres are the 4x4x4's and whose edges
are the pairs. The 3x3x3 is then solved by the 3x3x3's own solver, its moves turned into the
4x4x4's (a 3x3x3 face turn is the 4x4x4's outer layer; a middle slice, its two inner slices).

**Centres, three phases, each optimal** (the subgroup method of Thistlethwaite's 3x3x3 algorithm,
here on the centres alone). Phase 1 brings the centre stickers of one axis's two colours onto that
axis's two faces, with every move (``C(24, 8)`` = 735,471 arrangements); phase 2 those of a second
axis onto theirs with the moves that keep the first axis's faces as they are (quarter turns about
that axis, half turns about the others: 12,870 arrangements, times the wing parity below); phase 3
each colour onto its own face, with the outer layers' quarter turns and the inner slices' half
turns (``70^3`` = 343,000 arrangements). Each phase's space is grown once, breadth first from its
goal with each move's cost (a half turn is two of the competition's moves; cached on disk), and a
state's phase is solved by walking down the table. For each of the six orders of the axes, every
shortest solution of phase 1 (and of phase 1 one move longer) is weighed by its phase 2, every
shortest solution of phase 2 from the best of those by its phase 3 (:func:`solve_centres`); the
shortest in all is kept.

**The wing parity.** Each wing piece shows its two colours in one order wherever it goes (a wing
cannot be flipped in place), so the 24 wings are told apart and their permutation has a parity;
an inner slice's quarter turn changes it, nothing else does. A reduced cube with an odd wing
permutation has one edge pair flipped, which no 3x3x3 can have (the "OLL parity" of 4x4x4
solvers); phase 2 makes the parity even while it moves the centres, at no cost most of the time,
and nothing after it changes it.

**Edges, a beam.** The centres solved, the edges are paired by a beam search over moves that bring
every centre back (:func:`pair_moves`: the outer turns, and ``s X s'`` for an inner slice's turn
``s`` and a few outer turns ``X``), ranked by cost plus the unpaired edges (:func:`pair_edges`), the
last two edges also by longer such moves (:func:`finish_moves`). A reduced cube whose edge pairs
are an odd permutation of the corners' parity cannot be a 3x3x3 either (the "PLL parity"): the
pairing weighs it, and it is fixed by the one sequence that swaps two edge pairs and nothing else
(``r2 U2 r2 Uw2 r2 u2`` in cubers' notation, found among the cube's slices by
:func:`pll_parity_fix` and checked by its effect).

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("cube_4-4-4")
>>> start = p.scramble(np.random.default_rng(0), 1, 60)[0]
>>> r = reduce_cube(p, start)
>>> bool(is_reduced(CubeGeometry.of(p), p.apply_moves(start, r.actions)))
True
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from threading import Lock
from typing import TypeVar

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.rules import permutation_parity
from puzzlezero.puzzles.permutation.rules import PermutationPuzzle
from puzzlezero.search import clock
from puzzlezero.storage import build_once, cache_dir, load_npz, save_npz

__all__ = [
    "CubeGeometry",
    "Reduction",
    "is_reduced",
    "memory_estimate",
    "pair_edges",
    "pll_parity_fix",
    "reduce_cube",
    "beam_moves",
    "build_reduction_tables",
    "solve_centres",
    "centre_solutions",
    "to_3x3x3",
]

#: the version of the tables' files
TABLE_VERSION = 1
#: the beam's width while it pairs the edges
PAIR_BEAM = 1000
#: the pairing beam's settings, tried in turn until one pairs every edge:
#: (moves' ``X`` up to this many outer turns, width, pair weight, finishing width, patience): the first, with
#: the four-turn moves, pairs in fewer moves; the others pair the states where it stalls
PAIR_TRIES = ((4, 600, 4.0, 4, 6), (3, 1000, 4.0, 4, 12), (3, 1000, 5.0, 16, 12), (3, 1000, 3.0, 64, 12))
#: the cheapest ways to pair every edge whose parity the pairing beam weighs at its last step
_CANDIDATES = 64
#: steps the pairing beam goes on after a pairing that leaves the PLL parity, for one without it
PARITY_STEPS = 3
#: steps in a row without fewer unpaired edges after which the pairing beam gives up
PAIR_PATIENCE = 12
#: the most steps the pairing beam takes
PAIR_MAX_STEPS = 200


# --------------------------------------------------------------------------------------------
# the cube's pieces, read from its moves


@dataclass(frozen=True)
class CubeGeometry:
    """The 4x4x4's pieces and moves as they appear in its definition: stickers face by face
    (``16 * face + 4 * row + column``), every slice quarter turn a move."""

    #: the puzzle's name
    name: str
    #: ``int[24]``: the centre stickers' positions, face by face
    centres: np.ndarray
    #: ``int[24]``: each centre position's face
    centre_face: np.ndarray
    #: ``int[6]``: each face's axis (0, 1, 2)
    face_axis: np.ndarray
    #: ``int[6]``: each face's centre label in the goal
    face_label: np.ndarray
    #: ``int[24, 2]``: each wing piece's two stickers (the one of the first wing orbit first)
    wings: np.ndarray
    #: ``int[12, 4]``: each edge's two wings' stickers as (x1, x2, y1, y2): x on one face, y on the other
    slots: np.ndarray
    #: ``int[8, 3]``: each corner's stickers
    corners: np.ndarray
    #: ``uint8[24]`` per move: its effect on the wing parity (an inner slice's quarter turn: 1)
    wing_odd: np.ndarray
    #: ``int[24]`` per move: its axis
    move_axis: np.ndarray
    #: ``bool[24]`` per move: does it turn an outer layer?
    outer: np.ndarray
    #: ``int[24, 24]``: each move as a permutation of the centre positions (``child = parent[perm]``)
    centre_perms: np.ndarray
    #: the goal's wing readings (``label(x) * L + label(y)``) -> wing number
    wing_ids: dict[int, int] = field(repr=False)
    #: the number of labels
    num_labels: int = 6

    @staticmethod
    def of(puzzle: Puzzle) -> CubeGeometry:
        """The geometry of a 4x4x4 in the competition's layout, or a :class:`PuzzleError` naming
        what does not fit (another size, another layout, a goal whose colours repeat otherwise)."""
        return _geometry(puzzle)


def _geometry(puzzle: Puzzle) -> CubeGeometry:
    return memo(_GEOMETRIES, puzzle, _build_geometry)


def memo(store: dict[tuple, G], puzzle: Puzzle, build: Callable[[Puzzle], G]) -> G:
    """``build(puzzle)`` once for each puzzle's moves and goal (a cube's geometry), kept in
    ``store``."""
    key = (puzzle.name, _perms(puzzle).tobytes(), np.asarray(puzzle.goal()).tobytes())
    with _LOCK:
        got = store.get(key)
    if got is None:
        got = build(puzzle)
        with _LOCK:
            store[key] = got
    return got


G = TypeVar("G")
_LOCK = Lock()
_GEOMETRIES: dict[tuple, CubeGeometry] = {}


def _perms(puzzle: Puzzle) -> np.ndarray:
    perms = getattr(puzzle, "perms", None)
    if perms is None:
        raise PuzzleError(f"the cube reduction needs a permutation puzzle; {puzzle.name} is not one")
    return np.asarray(perms)


def _build_geometry(puzzle: Puzzle) -> CubeGeometry:
    perms = _perms(puzzle)
    goal = np.asarray(puzzle.goal()).reshape(-1)
    what = f"the cube reduction solves the 4x4x4 (96 stickers, 24 slice quarter turns); {puzzle.name}"
    if not isinstance(puzzle, PermutationPuzzle):
        raise PuzzleError(f"{what} is not a permutation puzzle made from a definition")
    if perms.shape != (24, 96) or goal.shape != (96,):
        raise PuzzleError(f"{what} has {perms.shape[1]} positions and {perms.shape[0]} moves")
    ident = np.arange(96)
    moved = perms != ident  # [move, position]
    # pieces: the stickers moved by the same moves
    pieces: dict[bytes, list[int]] = {}
    for i in range(96):
        pieces.setdefault(moved[:, i].tobytes(), []).append(i)
    by_size: dict[int, list[list[int]]] = {}
    for stickers in pieces.values():
        by_size.setdefault(len(stickers), []).append(stickers)
    if sorted((k, len(v)) for k, v in by_size.items()) != [(1, 24), (2, 24), (3, 8)]:
        raise PuzzleError(f"{what}'s pieces are not a 4x4x4's 24 centres, 24 wings and 8 corners")
    face = ident // 16
    centres = np.array(sorted(s[0] for s in by_size[1]))
    centre_face = face[centres]
    if np.any(np.bincount(centre_face, minlength=6) != 4):
        raise PuzzleError(f"{what}'s centres are not four on each face")
    face_label = np.array([goal[centres[centre_face == f]][0] for f in range(6)])
    for f in range(6):
        if np.any(goal[face == f] != face_label[f]):
            raise PuzzleError(
                f"{what}'s goal is not one colour on each face (the reduction needs the six colours)"
            )
    if len(set(face_label.tolist())) != 6:
        raise PuzzleError(f"{what}'s goal repeats a face's colour")
    # the sticker orbits: a wing's two stickers lie in two different orbits
    orbit = np.full(96, -1)
    for k, members in enumerate(puzzle.orbits):
        orbit[members] = k
    wing_stickers = [s for s in by_size[2]]
    first_orbit = orbit[wing_stickers[0][0]]
    wings = np.array([s if orbit[s[0]] == first_orbit else s[::-1] for s in wing_stickers])
    if np.any(orbit[wings[:, 0]] == orbit[wings[:, 1]]) or len(set(orbit[wings[:, 0]].tolist())) != 1:
        raise PuzzleError(f"{what}'s wings can be flipped in place: not a 4x4x4")
    order = np.lexsort((wings[:, 1], wings[:, 0]))
    wings = wings[order]
    labels = int(goal.max()) + 1
    readings = goal[wings[:, 0]] * labels + goal[wings[:, 1]]
    if len(set(readings.tolist())) != 24:
        raise PuzzleError(f"{what}'s wings are not told apart by their colours")
    wing_ids = {int(r): i for i, r in enumerate(readings)}
    # edges: the two wings between the same two faces
    by_faces: dict[tuple[int, int], list[int]] = {}
    for w, (a, b) in enumerate(wings):
        fa, fb = int(face[a]), int(face[b])
        by_faces.setdefault((min(fa, fb), max(fa, fb)), []).append(w)
    slots = []
    for (fx, _fy), ws in sorted(by_faces.items()):
        if len(ws) != 2:
            raise PuzzleError(f"{what}'s edges are not two wings each")
        x = [int(a) if face[a] == fx else int(b) for a, b in (wings[w] for w in ws)]
        y = [int(b) if face[a] == fx else int(a) for a, b in (wings[w] for w in ws)]
        slots.append((x[0], x[1], y[0], y[1]))
    corners = np.array(sorted(by_size[3]))
    # moves: the centre positions' permutation, the axis, outer or inner
    index = np.full(96, -1)
    index[centres] = np.arange(24)
    centre_perms = index[perms[:, centres]]
    if np.any(centre_perms < 0):
        raise PuzzleError(f"{what}'s moves take centres to other pieces")
    outer = moved[:, corners.reshape(-1)].any(axis=1)
    # an outer move turns one face's centres among themselves; an inner one, four faces'
    turned_faces = [set(centre_face[centre_perms[a] != np.arange(24)].tolist()) for a in range(24)]
    face_axis = np.full(6, -1)
    move_axis = np.full(24, -1)
    axes: list[frozenset[int]] = []
    for a in range(24):
        if not outer[a]:
            faces_not = frozenset(range(6)) - frozenset(turned_faces[a])
            if len(faces_not) != 2:
                raise PuzzleError(f"{what}'s inner slices do not turn four faces' centres")
            if faces_not not in axes:
                axes.append(faces_not)
            move_axis[a] = axes.index(faces_not)
    if len(axes) != 3:
        raise PuzzleError(f"{what}'s slices are not about three axes")
    for k, pair in enumerate(axes):
        for f in pair:
            face_axis[f] = k
    for a in range(24):
        if outer[a]:
            if len(turned_faces[a]) != 1:
                raise PuzzleError(f"{what}'s outer moves do not turn one face")
            (f,) = turned_faces[a]
            move_axis[a] = face_axis[f]
    wing_odd = np.array(
        [permutation_parity(_wing_perm(wings, perms[a], wing_ids, goal, labels)) for a in range(24)],
        dtype=np.uint8,
    )
    return CubeGeometry(
        name=puzzle.name,
        centres=centres,
        centre_face=centre_face,
        face_axis=face_axis,
        face_label=face_label,
        wings=wings,
        slots=np.array(slots),
        corners=corners,
        wing_odd=wing_odd,
        move_axis=move_axis,
        outer=outer,
        centre_perms=centre_perms,
        wing_ids=wing_ids,
        num_labels=labels,
    )


def _wing_perm(
    wings: np.ndarray, perm: np.ndarray, wing_ids: dict[int, int], goal: np.ndarray, labels: int
) -> np.ndarray:
    state = goal[perm]
    return wing_permutation(state, wings, wing_ids, labels)


def wing_permutation(
    state: np.ndarray, wings: np.ndarray, wing_ids: dict[int, int], labels: int
) -> np.ndarray:
    """Which wing stands at each wing position (``int[24]``), read from the colours."""
    readings = state[wings[:, 0]].astype(np.int64) * labels + state[wings[:, 1]]
    try:
        return np.array([wing_ids[int(r)] for r in readings])
    except KeyError as e:
        raise InvalidStateError("this 4x4x4 state shows a wing whose colours no wing has") from e


# --------------------------------------------------------------------------------------------
# the centres: three phases, each a table grown breadth first from its goal


@dataclass(frozen=True)
class Macro:
    """A phase's move: one move, or a move turned twice (a half turn, two of the competition's moves)."""

    actions: tuple[int, ...]
    #: ``int[24]``: its permutation of the centre positions
    centre_perm: np.ndarray
    #: its effect on the wing parity
    odd: int

    @property
    def cost(self) -> int:
        return len(self.actions)


@dataclass(frozen=True)
class PhaseTable:
    """Every arrangement of a phase's classes of centre stickers (and the wing parity, where it
    counts) that the phase's moves reach from its goal, with its distance."""

    #: ``uint64[M]``, sorted: the arrangements' keys (:meth:`keys`)
    keys_sorted: np.ndarray
    #: ``uint8[M]``: their distances from the phase's goal
    depths: np.ndarray
    #: the phase's moves
    macros: tuple[Macro, ...]
    #: ``int[labels]``: each label's class
    classes: np.ndarray
    #: does the key hold the wing parity?
    parity: bool

    def __len__(self) -> int:
        return len(self.keys_sorted)

    def keys(self, centre_labels: np.ndarray, parity: np.ndarray | None = None) -> np.ndarray:
        """The keys of ``centre_labels`` (``[k, 24]`` labels of the centre positions)."""
        return _pack(self.classes[centre_labels], parity if self.parity else None)

    def depth_of(self, keys: np.ndarray) -> np.ndarray:
        """Each key's distance, -1 where the phase's moves cannot reach its goal from it."""
        at = np.minimum(np.searchsorted(self.keys_sorted, keys), len(self.keys_sorted) - 1)
        return np.where(self.keys_sorted[at] == keys, self.depths[at].astype(np.int64), -1)


def _pack(classes: np.ndarray, parity: np.ndarray | None) -> np.ndarray:
    """``uint64``: the classes (each < 4, at most 30 of them along the last axis) two bits each,
    the first lowest, and the parity, where given, at bit 60: four classes to a byte, eight bytes
    read as one little-endian word (a word for each class, shifted and summed, takes 16 times as
    long)."""
    n = classes.shape[-1]
    rows = classes.reshape(-1, n)
    padded = np.zeros((len(rows), 32), np.uint8)
    padded[:, :n] = rows
    quads = padded.reshape(-1, 8, 4)
    octets = quads[:, :, 0] | (quads[:, :, 1] << 2) | (quads[:, :, 2] << 4) | (quads[:, :, 3] << 6)
    keys = np.ascontiguousarray(octets).view("<u8").reshape(classes.shape[:-1]).astype(np.uint64)
    if parity is not None:
        keys |= parity.astype(np.uint64) << np.uint64(60)
    return keys


def _grow(goal_classes: np.ndarray, macros: Sequence[Macro], parity: bool) -> tuple[np.ndarray, np.ndarray]:
    """Breadth first from the goal, each macro costing its length: the sorted keys and depths."""
    perms = [(m.cost, m.centre_perm, m.odd) for m in macros]
    longest = max(c for c, _, _ in perms)
    layers: dict[int, tuple[np.ndarray, np.ndarray]] = {
        0: (goal_classes[None].astype(np.uint8), np.zeros(1, np.uint8))
    }
    seen = _pack(goal_classes[None], np.zeros(1, np.uint8) if parity else None)
    all_keys, all_depths = [seen], [np.zeros(1, np.uint8)]
    d = 0
    while any(d - k in layers for k in range(longest)):
        d += 1
        kids, kid_par = [], []
        for cost, perm, odd in perms:
            src = layers.get(d - cost)
            if src is None:
                continue
            kids.append(src[0][:, perm])
            kid_par.append(src[1] ^ np.uint8(odd) if parity else src[1])
        layers.pop(d - longest, None)
        if not kids:
            continue
        states, par = np.concatenate(kids), np.concatenate(kid_par)
        keys = _pack(states, par if parity else None)
        keys, first = np.unique(keys, return_index=True)
        at = np.minimum(np.searchsorted(seen, keys), len(seen) - 1)
        new = seen[at] != keys
        if not new.any():
            continue
        keys, first = keys[new], first[new]
        layers[d] = (states[first], par[first])
        seen = np.union1d(seen, keys)
        all_keys.append(keys)
        all_depths.append(np.full(len(keys), d, np.uint8))
    keys = np.concatenate(all_keys)
    depths = np.concatenate(all_depths)
    order = np.argsort(keys)
    return keys[order], depths[order]


def _macro_pool(puzzle: Puzzle, geo: CubeGeometry) -> list[Macro]:
    """Every single move, and every move turned twice (once for a move and its inverse)."""
    perms = _perms(puzzle)
    inverse = np.asarray(puzzle.inverse_action)
    pool = [Macro((a,), geo.centre_perms[a], int(geo.wing_odd[a])) for a in range(24)]
    for a in range(24):
        if inverse[a] < a:
            continue
        cp = geo.centre_perms[a][geo.centre_perms[a]]
        if np.array_equal(perms[a][perms[a]], np.arange(96)):
            continue
        pool.append(Macro((a, a), cp, 0))
    return pool


def _keeps(m: Macro, cells: np.ndarray) -> bool:
    """Does the macro keep the set of centre positions ``cells`` (bool[24]) as a set?"""
    return bool(np.array_equal(cells[m.centre_perm], cells))


def _label_face(geo: CubeGeometry) -> np.ndarray:
    out = np.zeros(geo.num_labels, np.int64)
    out[geo.face_label] = np.arange(6)
    return out


@lru_cache(maxsize=8)
def _phase1(puzzle: Puzzle, axis: int) -> PhaseTable:
    geo = _geometry(puzzle)
    label_axis = geo.face_axis[_label_face(geo)]
    classes = (label_axis == axis).astype(np.uint8)
    macros = tuple(m for m in _macro_pool(puzzle, geo) if m.cost == 1)
    return _cached(puzzle, f"phase1-axis{axis}", classes, macros, parity=False)


@lru_cache(maxsize=8)
def _phase2(puzzle: Puzzle, first: int, second: int) -> PhaseTable:
    geo = _geometry(puzzle)
    label_axis = geo.face_axis[_label_face(geo)]
    classes = np.where(label_axis == first, 1, np.where(label_axis == second, 2, 0)).astype(np.uint8)
    on_first = geo.face_axis[geo.centre_face] == first
    macros = tuple(m for m in _macro_pool(puzzle, geo) if _keeps(m, on_first))
    return _cached(puzzle, f"phase2-axes{first}{second}", classes, macros, parity=True)


@lru_cache(maxsize=2)
def _phase3(puzzle: Puzzle) -> PhaseTable:
    geo = _geometry(puzzle)
    label_face = _label_face(geo)
    axis_faces = [np.flatnonzero(geo.face_axis == k) for k in range(3)]
    low = np.array(
        [
            int(label_face[lab] == axis_faces[geo.face_axis[label_face[lab]]][0])
            for lab in range(geo.num_labels)
        ]
    )
    classes = low.astype(np.uint8)
    cell_axis = geo.face_axis[geo.centre_face]
    macros = tuple(m for m in _macro_pool(puzzle, geo) if all(_keeps(m, cell_axis == k) for k in range(3)))
    return _cached(puzzle, "phase3", classes, macros, parity=False)


def _cached(
    puzzle: Puzzle, phase: str, classes: np.ndarray, macros: tuple[Macro, ...], *, parity: bool
) -> PhaseTable:
    """A phase's table (:func:`phase_table`, the goal's centre stickers' classes read from the
    4x4x4's geometry)."""
    geo = _geometry(puzzle)
    return phase_table(
        puzzle, phase, classes, classes[geo.face_label[geo.centre_face]], macros, parity=parity
    )


def phase_table(
    puzzle: Puzzle,
    phase: str,
    classes: np.ndarray,
    goal_classes: np.ndarray,
    macros: tuple[Macro, ...],
    *,
    parity: bool,
) -> PhaseTable:
    """A phase's table from ``cache_dir("cube-reduction")``, else grown from ``goal_classes`` (the
    goal's centre positions' classes) and saved (atomically, under its lock; where builds are
    forbidden, :class:`MissingTableError` names the command that builds it). The cube's moves and
    goal, the phase and the version key the file."""
    digest = hashlib.sha256(np.ascontiguousarray(_perms(puzzle), dtype=np.int64).tobytes())
    digest.update(np.asarray(puzzle.goal(), dtype=np.int64).tobytes())
    digest.update(f"{phase} {TABLE_VERSION}".encode())
    key = digest.hexdigest()[:16]
    path = cache_dir("cube-reduction") / f"{puzzle.name}-{phase}-{key}.npz"
    meta = {"kind": "cube reduction table", "version": TABLE_VERSION, "key": key}

    def load() -> PhaseTable:
        arrays = load_npz(path, meta)
        return PhaseTable(arrays["keys"], arrays["depths"], macros, classes, parity)

    def build() -> PhaseTable:
        keys, depths = _grow(goal_classes, macros, parity=parity)
        save_npz(path, meta, keys=keys, depths=depths)
        return PhaseTable(keys, depths, macros, classes, parity)

    return build_once(
        path,
        load,
        build,
        what=f"the reduction table {phase} of {puzzle.name}",
        command=f"puzzlezero pdb build {puzzle.name} --kind reduction",
    )


def build_reduction_tables(puzzle: Puzzle) -> list[int]:
    """Every table of the centres' phases (the six orders of the axes), built or loaded: their sizes."""
    sizes = [len(_phase1(puzzle, a)) for a in range(3)]
    sizes += [len(_phase2(puzzle, a, b)) for a, b in itertools.permutations(range(3), 2)]
    sizes.append(len(_phase3(puzzle)))
    return sizes


def _descents(table: PhaseTable, centre_labels: np.ndarray, parity: int, limit: int) -> list[tuple[int, ...]]:
    """Up to ``limit`` of the phase's shortest solutions from these centres (every way down the
    table, depth first, in the macros' order)."""
    perms = np.stack([m.centre_perm for m in table.macros])
    costs = np.array([m.cost for m in table.macros])
    odds = np.array([m.odd for m in table.macros], np.uint8)
    out: list[tuple[int, ...]] = []

    def down(labels: np.ndarray, par: int, d: int, path: tuple[int, ...]) -> None:
        if d == 0:
            out.append(path)
            return
        kids = labels[perms]
        kid_par = np.uint8(par) ^ odds
        depth = table.depth_of(table.keys(kids, kid_par))
        for k in np.flatnonzero(depth == d - costs):
            if len(out) >= limit:
                return
            down(kids[k], int(kid_par[k]), d - int(costs[k]), (*path, *table.macros[k].actions))

    d = int(table.depth_of(table.keys(centre_labels[None], np.array([np.uint8(parity)])))[0])
    if d >= 0:
        down(centre_labels, parity, d, ())
    return out


#: phase 1's solutions longer than the shortest by up to this many moves are weighed too
SLACK = 1
#: the most end states of a phase's shortest solutions kept (:func:`_ends`)
MAX_ENDS = 2000


def _ends(
    table: PhaseTable,
    labels: np.ndarray,
    parity: np.ndarray,
    paths: list[tuple[int, ...]],
    limit: int = MAX_ENDS,
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, ...]]]:
    """The states where the phase's shortest solutions from each of these end (one path to each,
    at most ``limit``): the phase's table walked down by every move that keeps to a shortest
    solution, the arrangements one cost level at a time."""
    perms = np.stack([m.centre_perm for m in table.macros])
    costs = np.array([m.cost for m in table.macros])
    odds = np.array([m.odd for m in table.macros], np.uint8)
    depth = table.depth_of(table.keys(labels, parity))
    buckets: dict[int, tuple[np.ndarray, np.ndarray, list[tuple[int, ...]]]] = {}
    for d in np.unique(depth):
        at = np.flatnonzero(depth == d)
        buckets[int(d)] = (labels[at], parity[at], [paths[i] for i in at])
    top = int(depth.max())
    for d in range(top, 0, -1):
        if d not in buckets:
            continue
        lab, par, pths = buckets.pop(d)
        kids = np.take(lab, perms, axis=1)  # [n, M, 24], C-contiguous
        kid_par = par[:, None] ^ odds[None, :]
        kid_depth = table.depth_of(table.keys(kids.reshape(-1, 24), kid_par.reshape(-1))).reshape(
            len(lab), -1
        )
        for cost in np.unique(costs):
            rows, cols = np.nonzero((kid_depth == d - cost) & (costs[None, :] == cost))
            if len(rows) == 0:
                continue
            new_lab = kids[rows, cols]
            new_par = kid_par[rows, cols]
            new_paths = [(*pths[r], *table.macros[c].actions) for r, c in zip(rows, cols, strict=True)]
            target = d - int(cost)
            if target in buckets:
                old_lab, old_par, old_paths = buckets[target]
                new_lab = np.concatenate([old_lab, new_lab])
                new_par = np.concatenate([old_par, new_par])
                new_paths = old_paths + new_paths
            whole = np.concatenate([new_lab, new_par[:, None]], axis=1)
            _, first = np.unique(whole, axis=0, return_index=True)
            first = np.sort(first)[:limit]
            buckets[target] = (new_lab[first], new_par[first], [new_paths[i] for i in first])
    return buckets[0]


def solve_centres(puzzle: Puzzle, state: np.ndarray) -> list[int]:
    """The shortest of :func:`centre_solutions`: the centres home with an even wing parity."""
    return centre_solutions(puzzle, state)[0]


def centre_solutions(puzzle: Puzzle, state: np.ndarray, count: int = 1) -> list[list[int]]:
    """Up to ``count`` ways to bring the centres home (each face its colour) with an even wing
    parity, all of the fewest moves found: for each of the six orders of the axes, the shortest
    solutions of phase 1 (and those :data:`SLACK` longer), of them those whose phase 2 is shortest,
    the shortest solutions of that phase from each, and of their ends those whose phase 3 is
    shortest, each with a shortest phase 3. Ways of equal length leave the edges differently, so
    the pairing may start from several."""
    geo = _geometry(puzzle)
    start = np.asarray(state).reshape(-1)
    parity = permutation_parity(wing_permutation(start, geo.wings, geo.wing_ids, geo.num_labels))
    found: list[tuple[int, int, PhaseTable, np.ndarray, int, tuple[int, ...]]] = []
    for a, b, _c in itertools.permutations(range(3)):
        labels, par = start[geo.centres][None], np.array([parity], np.uint8)
        paths: list[tuple[int, ...]] = [()]
        t1, t2, t3 = _phase1(puzzle, a), _phase2(puzzle, a, b), _phase3(puzzle)
        if t1.depth_of(t1.keys(labels))[0] < 0:
            raise InvalidStateError("this 4x4x4 state's centres cannot be brought to their axis")
        # phase 1 up to SLACK moves longer as well: from every state those moves reach
        frontier_lab, frontier_par = labels, par
        frontier_paths: list[tuple[int, ...]] = paths
        for _ in range(SLACK):
            n = len(frontier_lab)
            frontier_lab = np.take(frontier_lab, geo.centre_perms, axis=1).reshape(n * 24, 24)
            frontier_par = (frontier_par[:, None] ^ geo.wing_odd[None, :]).reshape(-1)
            frontier_paths = [(*p, a) for p in frontier_paths for a in range(24)]
            labels = np.concatenate([labels, frontier_lab])
            par = np.concatenate([par, frontier_par])
            paths = paths + frontier_paths
        labels, par, paths = _ends(t1, labels, par, paths)
        cost = np.array([len(p) for p in paths]) + t2.depth_of(t2.keys(labels, par))
        keep = np.flatnonzero(cost == cost.min())
        labels, par, paths = _ends(t2, labels[keep], par[keep], [paths[i] for i in keep])
        d3 = np.array([len(p) for p in paths]) + t3.depth_of(t3.keys(labels))
        for k in np.argsort(d3, kind="stable")[: max(count, 1)]:
            found.append((int(d3[k]), len(found), t3, labels[k], int(par[k]), paths[k]))
    fewest = min(f[0] for f in found)
    # the first way down of each, then the second of each, ...: phase 1 and 2's choices differ more
    # than phase 3's
    ways = [
        [(*path, *moves) for moves in _descents(t3, lab, par_k, 8 * count)]
        for _, _, t3, lab, par_k, path in sorted((f for f in found if f[0] == fewest), key=lambda f: f[:2])
    ]
    out: list[list[int]] = []
    ends: set[bytes] = set()
    for actions in itertools.chain.from_iterable(itertools.zip_longest(*ways)):
        if actions is None:
            continue
        end = puzzle.apply_moves(start, list(actions)).tobytes()
        if end not in ends:
            ends.add(end)
            out.append(list(actions))
        if len(out) >= count:
            break
    if not out:  # pragma: no cover - phase 2's ends are in phase 3's table by construction
        raise InvalidStateError("this 4x4x4 state's centres cannot be brought to their faces")
    return out


# --------------------------------------------------------------------------------------------
# the edges: a beam that pairs them and brings the centres back


def paired(geo: CubeGeometry, states: np.ndarray) -> np.ndarray:
    """``bool[k, 12]``: is each edge's pair of wings one edge's, side by side?"""
    s = states.reshape(len(states), -1)
    x1, x2, y1, y2 = (geo.slots[:, i] for i in range(4))
    return (s[:, x1] == s[:, x2]) & (s[:, y1] == s[:, y2])


def centres_home(geo: CubeGeometry, states: np.ndarray) -> np.ndarray:
    """``int[k]``: how many centre stickers are not on their face."""
    s = states.reshape(len(states), -1)
    return (s[:, geo.centres] != geo.face_label[geo.centre_face]).sum(axis=1)


@dataclass(frozen=True)
class PairMoves:
    """The pairing beam's moves: the outer layers' quarter turns, and every ``s X s'`` that brings
    the centres back (``s`` an inner slice's quarter turn, or an outer layer's with an inner slice
    of its axis; ``X`` one to three outer turns), one of each effect."""

    #: each move's actions
    actions: tuple[tuple[int, ...], ...]
    #: ``int[M, 96]``: each move's permutation of the stickers
    perms: np.ndarray
    #: ``int[M]``: each move's cost
    costs: np.ndarray


@lru_cache(maxsize=2)
def pair_moves(puzzle: Puzzle, reach: int = 3) -> PairMoves:
    """The :class:`PairMoves` of this cube (``X`` of at most ``reach`` outer turns)."""
    geo = _geometry(puzzle)
    perms = _perms(puzzle)
    inverse = np.asarray(puzzle.inverse_action)
    outer = [int(a) for a in np.flatnonzero(geo.outer)]
    inner = [int(a) for a in np.flatnonzero(~geo.outer)]
    slices: list[tuple[int, ...]] = [(a,) for a in inner]
    for a in outer:
        for b in inner:
            if geo.move_axis[a] == geo.move_axis[b]:
                slices.append((a, b))
    xs: list[tuple[int, ...]] = [()]
    frontier: list[tuple[int, ...]] = [()]
    for _ in range(reach):
        frontier = [(*x, a) for x in frontier for a in outer if not x or a != inverse[x[-1]]]
        xs.extend(frontier)
    goal_home = geo.face_label[geo.centre_face]
    ident = np.arange(96)

    def effect(seq: Sequence[int]) -> np.ndarray:
        perm = ident
        for a in seq:
            perm = perm[perms[a]]
        return perm

    chosen: dict[bytes, tuple[int, ...]] = {}
    for a in outer:
        chosen.setdefault(perms[a].tobytes(), (a,))
    outer_effects = {effect(x).tobytes() for x in xs}
    for s in slices:
        undo = tuple(int(inverse[a]) for a in reversed(s))
        for x in xs[1:]:
            seq = (*s, *x, *undo)
            perm = effect(seq)
            if not np.array_equal(goal_home[_index_centres(geo, perm)], goal_home):
                continue
            key = perm.tobytes()
            if key in outer_effects:
                continue
            if key not in chosen or len(seq) < len(chosen[key]):
                chosen[key] = seq
    actions = tuple(chosen.values())
    return PairMoves(actions, np.stack([effect(a) for a in actions]), np.array([len(a) for a in actions]))


@lru_cache(maxsize=2)
def finish_moves(puzzle: Puzzle, reach: int = 5) -> PairMoves:
    """The last edges' moves: ``s X s'`` for an inner slice's quarter turn ``s`` and every ``X`` of
    four to ``reach`` outer turns that turns each face ``s`` disturbs back to where it was (so the
    centres come back), one of each effect. The last two edges need such longer ``X`` (cubers'
    ``Uw' R U R' F R' F' R Uw`` is one)."""
    geo = _geometry(puzzle)
    perms = _perms(puzzle)
    inverse = np.asarray(puzzle.inverse_action)
    outer = np.flatnonzero(geo.outer)
    inner = np.flatnonzero(~geo.outer)
    face_of = np.full(24, -1)
    turn = np.zeros(24, np.int64)
    for a in outer:
        face_of[a] = int(geo.centre_face[geo.centre_perms[a] != np.arange(24)][0])
        turn[a] = 1 if a < inverse[a] else -1  # a move and its inverse: +1 and -1
    chosen: dict[bytes, tuple[int, ...]] = {}
    for length in range(4, reach + 1):
        seqs = np.array(list(itertools.product(outer, repeat=length)))
        ok = np.ones(len(seqs), bool)
        for i in range(length - 1):
            ok &= seqs[:, i + 1] != inverse[seqs[:, i]]
        seqs = seqs[ok]
        rot = np.zeros((len(seqs), 6), np.int64)
        for i in range(length):
            np.add.at(rot, (np.arange(len(seqs)), face_of[seqs[:, i]]), turn[seqs[:, i]])
        rot %= 4
        for sl in inner:
            side = [f for f in range(6) if geo.face_axis[f] != geo.move_axis[sl]]
            keep = seqs[(rot[:, side] == 0).all(axis=1)]
            effect = perms[keep[:, 0]]
            for i in range(1, length):
                effect = np.take_along_axis(effect, perms[keep[:, i]], axis=1)
            effect = perms[sl][effect][:, perms[inverse[sl]]]
            for row, x in zip(effect, keep, strict=True):
                chosen.setdefault(row.tobytes(), (int(sl), *(int(a) for a in x), int(inverse[sl])))
    actions = tuple(chosen.values())
    return PairMoves(
        actions,
        np.frombuffer(b"".join(chosen), dtype=perms.dtype).reshape(len(actions), 96),
        np.array([len(a) for a in actions]),
    )


@lru_cache(maxsize=2)
def beam_moves(puzzle: Puzzle) -> PairMoves:
    """:func:`pair_moves` and the :func:`finish_moves` whose ``X`` is four outer turns (5,602 moves
    on the 4x4x4): the first pairing beam's."""
    base, four = pair_moves(puzzle), finish_moves(puzzle, reach=4)
    return PairMoves(
        base.actions + four.actions,
        np.concatenate([base.perms, four.perms]),
        np.concatenate([base.costs, four.costs]),
    )


def _index_centres(geo: CubeGeometry, perm: np.ndarray) -> np.ndarray:
    index = np.full(96, -1)
    index[geo.centres] = np.arange(24)
    return index[perm[geo.centres]]


def pair_edges(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    width: int = PAIR_BEAM,
    max_steps: int = PAIR_MAX_STEPS,
    pair_weight: float = 4.0,
    finish_width: int = 4,
    reach: int = 3,
    patience: int = PAIR_PATIENCE,
    deadline: float | None = None,
) -> list[int] | None:
    """Moves that pair every edge, from a state whose centres are home and whose wing parity is
    even (:func:`solve_centres`), keeping both: a beam of ``width`` over :func:`pair_moves` of
    ``reach`` (:func:`beam_moves` for a ``reach`` of 4), each
    path ranked by its cost plus ``pair_weight`` times its unpaired edges; at the first step that
    pairs every edge, the cheapest of its ways, one that leaves the PLL parity counted with its fix
    (:func:`pll_parity_fix`). ``None`` if ``max_steps`` or the deadline pass first, or ``patience``
    steps bring no edge more."""
    geo = _geometry(puzzle)
    moves = pair_moves(puzzle) if reach <= 3 else beam_moves(puzzle)
    finish = finish_moves(puzzle)
    start = np.asarray(state).reshape(1, -1)
    if paired(geo, start).all():
        return []
    m = len(moves.actions)
    beam = start
    g = np.zeros(1, np.int64)
    paths: list[tuple[int, ...]] = [()]
    fewest, since = 12, 0
    answer: tuple[int, list[int]] | None = None  # (cost with the parity's fix, moves)
    extra = 0
    for _ in range(max_steps):
        if deadline is not None and clock.now() > deadline:
            return None if answer is None else answer[1]
        n = len(beam)
        # np.take lays the children out C-contiguous: [:, perms] would stride them, and the
        # reshape would copy them again
        kids = np.take(beam, moves.perms, axis=1).reshape(n * m, -1)
        kid_g = (g[:, None] + moves.costs[None, :]).reshape(-1)
        parent = np.repeat(np.arange(n), m)
        move = np.tile(np.arange(m), n)
        hashes = puzzle.hash64(kids)
        order = np.lexsort((kid_g, hashes))
        hashes = hashes[order]
        first = order[np.r_[True, hashes[1:] != hashes[:-1]]]
        kids, kid_g, parent, move = kids[first], kid_g[first], parent[first], move[first]
        unpaired = 12 - paired(geo, kids).sum(axis=1)

        # (cost, state, the beam child, the finishing move or -1) of each way found to pair every
        # edge: the cheapest few
        found: list[tuple[int, np.ndarray, int, int]] = []
        if unpaired.min() <= 2:
            # the last edges: the beam's best few states by the longer moves as well
            best = np.argsort(kid_g + pair_weight * unpaired, kind="stable")[:finish_width]
            fin = np.take(kids[best], finish.perms, axis=1).reshape(len(best) * len(finish.actions), -1)
            fin_g = (kid_g[best][:, None] + finish.costs[None, :]).reshape(-1)
            ok = np.flatnonzero(paired(geo, fin).all(axis=1))
            for k in ok[np.argsort(fin_g[ok], kind="stable")][:_CANDIDATES]:
                found.append(
                    (int(fin_g[k]), fin[k], int(best[k // len(finish.actions)]), int(k % len(finish.actions)))
                )
        done = np.flatnonzero(unpaired == 0)
        for k in done[np.argsort(kid_g[done], kind="stable")][:_CANDIDATES]:
            found.append((int(kid_g[k]), kids[k], int(k), -1))
        if found:
            # a pairing that leaves the PLL parity costs the fix as well
            fix = len(pll_parity_fix(puzzle))
            total, _, k, f = min(
                ((c[0] + fix * pll_parity(puzzle, c[1]), *c[1:]) for c in found), key=lambda c: c[0]
            )
            if answer is None or total < answer[0]:
                path = [a for i in (*paths[int(parent[k])], int(move[k])) for a in moves.actions[i]]
                answer = (total, path if f < 0 else [*path, *finish.actions[f]])
        if answer is not None:
            # with the parity to fix, a few steps more may pair every edge without it for less
            extra += 1
            if (
                extra > PARITY_STEPS
                or answer[0] <= int(kid_g.min()) + moves.costs.min()
                or answer[0] == len(answer[1])
            ):
                return answer[1]
        fewest, since = (int(unpaired.min()), 0) if unpaired.min() < fewest else (fewest, since + 1)
        if since >= patience:
            return None if answer is None else answer[1]
        score = kid_g + pair_weight * unpaired
        keep = np.argsort(score, kind="stable")[:width]
        beam, g = kids[keep], kid_g[keep]
        paths = [(*paths[int(parent[k])], int(move[k])) for k in keep]
    return None if answer is None else answer[1]


# --------------------------------------------------------------------------------------------
# the reduced cube: its parity, and the 3x3x3 it turns like


def _corner_ids(geo: CubeGeometry, states: np.ndarray) -> np.ndarray:
    s = states.reshape(len(states), -1)
    cols = np.sort(s[:, geo.corners], axis=2).astype(np.int64)
    return (cols[..., 0] * geo.num_labels + cols[..., 1]) * geo.num_labels + cols[..., 2]


def _edge_ids(geo: CubeGeometry, states: np.ndarray) -> np.ndarray:
    s = states.reshape(len(states), -1)
    a, b = s[:, geo.slots[:, 0]].astype(np.int64), s[:, geo.slots[:, 2]].astype(np.int64)
    return np.minimum(a, b) * geo.num_labels + np.maximum(a, b)


def _perm_parity(ids: np.ndarray, goal_ids: np.ndarray) -> int:
    where = {int(v): i for i, v in enumerate(goal_ids)}
    return permutation_parity(np.array([where[int(v)] for v in ids]))


def pll_parity(puzzle: Puzzle, state: np.ndarray) -> bool:
    """Does this reduced cube's permutation of edge pairs differ in parity from its corners'
    (a state no 3x3x3 has)?"""
    geo = _geometry(puzzle)
    s = np.asarray(state).reshape(1, -1)
    goal = np.asarray(puzzle.goal()).reshape(1, -1)
    corners = _perm_parity(_corner_ids(geo, s)[0], _corner_ids(geo, goal)[0])
    edges = _perm_parity(_edge_ids(geo, s)[0], _edge_ids(geo, goal)[0])
    return corners != edges


@lru_cache(maxsize=2)
def pll_parity_fix(puzzle: Puzzle) -> tuple[int, ...]:
    """The moves that swap two edge pairs and change nothing else a reduced cube shows: cubers'
    ``r2 U2 r2 Uw2 r2 u2`` (an inner slice ``r``, an outer layer ``U`` about another axis, ``u``
    its inner neighbour, ``Uw`` the two), each half turn two moves: 14 moves. Found among the
    cube's slices by its effect on the goal: the shortest of the form."""
    geo = _geometry(puzzle)
    perms = _perms(puzzle)
    goal = np.asarray(puzzle.goal()).reshape(-1)
    inverse = np.asarray(puzzle.inverse_action)
    outer = [int(a) for a in np.flatnonzero(geo.outer) if a < inverse[a]]
    inner = [int(a) for a in np.flatnonzero(~geo.outer) if a < inverse[a]]
    found: list[tuple[int, ...]] = []
    for r in inner:
        for u in outer:
            if geo.move_axis[u] == geo.move_axis[r]:
                continue
            for w in inner:
                if geo.move_axis[w] != geo.move_axis[u]:
                    continue
                for wide1, wide2 in itertools.product(((u, u, w, w), (w, w)), repeat=2):
                    seq = (r, r, u, u, r, r, *wide1, r, r, *wide2)
                    s = goal
                    for a in seq:
                        s = s[perms[a]]
                    one = s[None]
                    if (
                        centres_home(geo, one)[0] == 0
                        and paired(geo, one).all()
                        and np.array_equal(s[geo.corners], goal[geo.corners])
                        and pll_parity(puzzle, s)
                    ):
                        found.append(seq)
    if found:
        return min(found, key=len)
    raise PuzzleError(f"{puzzle.name} has no two-edge swap of the form r2 U2 r2 Uw2 r2 u2")


def is_reduced(geo: CubeGeometry, state: np.ndarray) -> bool:
    """Centres home, edges paired: a state that turns like a 3x3x3 (parity aside)."""
    one = np.asarray(state).reshape(1, -1)
    return bool(centres_home(geo, one)[0] == 0 and paired(geo, one).all())


def _turns_like(geo: CubeGeometry, state: np.ndarray) -> bool:
    """Edges paired and each face's centres one colour (a middle slice moves them to another face)."""
    one = np.asarray(state).reshape(1, -1)
    centres = one[0, geo.centres].reshape(6, 4)
    return bool(paired(geo, one).all() and np.all(centres == centres[:, :1]))


@dataclass(frozen=True)
class Reduction:
    """A 4x4x4 state brought to a 3x3x3's: the moves, and the state they reach."""

    actions: tuple[int, ...]
    state: np.ndarray
    #: moves of each part: centres, edges, the parity fix
    parts: tuple[int, int, int]


def reduce_cube(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    width: int | None = None,
    deadline: float | None = None,
    starts: int = 1,
    more_until: float | None = None,
    on_reduction: Callable[[Reduction], None] | None = None,
) -> Reduction:
    """The centres (:func:`centre_solutions`: up to ``starts`` ways of the fewest moves), then from
    each in turn the edges (:func:`pair_edges` with the settings of :data:`PAIR_TRIES` until one
    pairs them; ``width`` for every beam if given) and the PLL parity (:func:`pll_parity_fix`): the
    shortest of these reductions, each shorter one passed to ``on_reduction`` as it is found. A
    start after the first begins only if, as long as the longest so far, it would end by
    ``more_until`` (by default ``deadline``), and the first beam of each start ends by
    ``more_until`` as well (the next pairs where it stopped without a pairing). An
    :class:`InvalidStateError` if no start's edges pair (every beam gave up), a
    :class:`TimeoutError` if ``deadline`` passes before any do."""
    start = np.asarray(state).reshape(-1)
    until = deadline if more_until is None else more_until

    def pair(s: np.ndarray) -> Pairing | None:
        edges = None
        for i, (reach, beam_width, weight, finish_width, patience) in enumerate(PAIR_TRIES):
            edges = pair_edges(
                puzzle,
                s,
                width=beam_width if width is None else width,
                pair_weight=weight,
                finish_width=finish_width,
                reach=reach,
                patience=patience,
                # the first beam, the slow one where it stalls, ends by more_until: the others then
                # pair in the time left
                deadline=until if i == 0 else deadline,
            )
            if edges is not None or (deadline is not None and clock.now() > deadline):
                break
        if edges is None:
            return None
        s = puzzle.apply_moves(s, edges)
        fix = pll_parity_fix(puzzle) if pll_parity(puzzle, s) else ()
        return tuple(edges), fix, puzzle.apply_moves(s, fix)

    return shortest_reduction(
        puzzle,
        start,
        centre_solutions(puzzle, start, starts),
        pair,
        deadline=deadline,
        more_until=until,
        on_reduction=on_reduction,
        refusal="the pairing beam found no way to pair this 4x4x4's edges",
    )


#: what a reduction's edge pairing gives (:func:`shortest_reduction`): the edges' moves, the parity
#: fix after them, the state they reach
Pairing = tuple[tuple[int, ...], tuple[int, ...], np.ndarray]


def shortest_reduction(
    puzzle: Puzzle,
    start: np.ndarray,
    centre_ways: Iterable[Sequence[int]],
    pair: Callable[[np.ndarray], Pairing | None],
    *,
    deadline: float | None,
    more_until: float | None,
    on_reduction: Callable[[Reduction], None] | None,
    refusal: str,
) -> Reduction:
    """The shortest reduction of ``start`` over its ``centre_ways`` (the 4x4x4's and the 5x5x5's
    :func:`reduce_cube`): after each way's centres, ``pair`` gives the edges' moves, the parity
    fix after them and the state they reach (``None``: the edges did not pair), each shorter
    reduction passed to
    ``on_reduction`` as it is found. A way after the first begins only if, as long as the longest
    so far, it would end by ``more_until``. An :class:`InvalidStateError` (``refusal``) if no way's
    edges pair, a :class:`TimeoutError` if ``deadline`` passes before any do."""
    best: Reduction | None = None
    longest = 0.0
    for centres in centre_ways:
        began = clock.now()
        if best is not None and more_until is not None and began + longest > more_until:
            break
        s = puzzle.apply_moves(start, centres)
        paired = pair(s)
        longest = max(longest, clock.now() - began)
        if paired is not None:
            edges, fix, s = paired
            if best is None or len(centres) + len(edges) + len(fix) < len(best.actions):
                best = Reduction((*centres, *edges, *fix), s, (len(centres), len(edges), len(fix)))
                if on_reduction is not None:
                    on_reduction(best)
        if deadline is not None and clock.now() > deadline:
            break
    if best is None:
        if deadline is not None and clock.now() > deadline:
            raise TimeoutError("the time limit passed while the edges were paired")
        raise InvalidStateError(refusal)
    return best


#: the 3x3x3's rows and columns on the 4x4x4's faces
_ROWS = (0, 1, 3)


@lru_cache(maxsize=2)
def _view_positions(puzzle: Puzzle) -> np.ndarray:
    return np.array([16 * f + 4 * r + c for f in range(6) for r in _ROWS for c in _ROWS])


def to_3x3x3(puzzle: Puzzle, state: np.ndarray) -> np.ndarray:
    """The 3x3x3 a reduced 4x4x4 turns like: its corners, one wing of each edge pair, one centre
    sticker of each face, in the 3x3x3's sticker order (``16 * face + 4 * row + column`` with rows
    and columns 0, 1, 3)."""
    return np.asarray(state).reshape(-1)[_view_positions(puzzle)]


@lru_cache(maxsize=2)
def moves_of_3x3x3(puzzle: Puzzle, cube3: Puzzle) -> tuple[tuple[int, ...], ...]:
    """Each move of the 3x3x3 (``cube3``, the competition's) as the 4x4x4's moves that turn a
    reduced 4x4x4 the same way: an outer layer for an outer layer, both inner slices for the middle
    one; checked on reduced states."""
    geo = _geometry(puzzle)
    perms4 = _perms(puzzle)
    perms3 = _perms(cube3)
    goal4 = np.asarray(puzzle.goal()).reshape(-1)
    inner = np.flatnonzero(~geo.outer)
    candidates: list[tuple[int, ...]] = [(int(a),) for a in np.flatnonzero(geo.outer)]
    candidates += [
        (int(a), int(b)) for a in inner for b in inner if a < b and geo.move_axis[a] == geo.move_axis[b]
    ]
    rng = np.random.default_rng(0)
    tests = [goal4]
    for _ in range(3):
        s = goal4
        for a in rng.choice([c[0] for c in candidates if len(c) == 1], 12):
            s = s[perms4[a]]
        tests.append(s)
    out = []
    for j in range(len(perms3)):
        for c in candidates:
            ok = True
            for s in tests:
                t = s
                for a in c:
                    t = t[perms4[a]]
                if not (
                    _turns_like(geo, t)
                    and np.array_equal(to_3x3x3(puzzle, t), to_3x3x3(puzzle, s)[perms3[j]])
                ):
                    ok = False
                    break
            if ok:
                out.append(c)
                break
        else:
            raise PuzzleError(f"{cube3.name}'s move {j} has no counterpart on {puzzle.name}")
    return tuple(out)


def memory_estimate(puzzle: Puzzle, options: object = None, instances: int = 1) -> int:
    """Peak bytes of a reduction (one state at a time): the pairing beam's children
    (the widest of :data:`PAIR_TRIES`: its width times 5,602 moves, or 1,548, 96 bytes and their hashes each, twice while
    they are sorted), the finishing moves' (28,702 moves of 96 stickers at 8 bytes), and the
    tables (three of 735,471 arrangements and one of 343,000, 9 bytes each, 96-byte states while
    one grows)."""
    widest = max(w * (1548 if reach <= 3 else 5602) for reach, w, *_ in PAIR_TRIES)
    pairing = 2 * widest * (96 + 8 + 8 * 4)
    finish = 28_702 * 96 * 8 * 2
    tables = 4 * 735_471 * 9 + 735_471 * 24 * 2
    return pairing + finish + tables
