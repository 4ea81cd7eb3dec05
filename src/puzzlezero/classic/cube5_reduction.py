"""Reduction of the 5x5x5 cube to a 3x3x3: the centres in three phases, the edges' wings then
their middles paired, then a 3x3x3 solve.

The 5x5x5's way by hand and by the classical programs, as the 4x4x4's
(:mod:`puzzlezero.classic.cube_reduction`): its centres first, then each edge's three pieces (two
wings and the middle edge, the "midge") side by side, and what is left turns like a 3x3x3 whose
centres are the middle centres, whose edges are the midges and whose face turns are the outer
layers' turns.

**Centres.** A face's nine centre stickers are three pieces' kinds: four x-centres (the corners of
the block), four plus-centres (its edges) and the middle centre; the moves take each kind to its
own kind only. The phases are the 4x4x4's (the subgroup method of Thistlethwaite's 3x3x3
algorithm, on the centres): one axis's two colours onto that axis's faces with every move; a second
axis's onto theirs with the moves that keep the first axis's faces (quarter turns about it, half
turns about the others); each colour onto its face with the outer layers' quarter turns and the
other slices' half turns. A phase's whole state is too big to tabulate (``C(24, 8)`` arrangements
of each kind in the first phase: 735,471 squared), so each kind's own arrangements are grown
breadth first from the phase's goal (x-centres, with the wing parity in the second phase; plus
and middle centres, together after the first phase, where the middle slices bind them; in the
third, also each axis's two faces' nine centres together, where the kinds' moves interfere most),
and a beam over the phase's moves ranks the states by cost plus the largest of those distances
(plus half the rest: the largest alone leaves the beam wandering where one kind is done and
another not), from every way the phase before ended at its fewest moves. The first phase's tables
of the second and third axes are the first axis's, read on the cube turned as a whole.

**The wing parity.** A wing piece shows its two colours in one order wherever it goes, so the 24
wings are told apart and their permutation has a parity, which only an inner slice's quarter turn
changes; a reduced cube has it even (else one edge's wings are swapped, the "parity" of 5x5x5
solvers). The second phase's x-centre table holds it, so the centres end with it even and nothing
after changes it.

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("cube_5-5-5")
>>> start = p.scramble(np.random.default_rng(0), 1, 60)[0]
>>> g = CubeGeometry5.of(p)
>>> ways = centre_solutions(p, start)
>>> bool(centres_home(g, p.apply_moves(start, ways[0])[None])[0] == 0)
True
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from puzzlezero.classic.cube5_geometry import CubeGeometry5, wing_parity
from puzzlezero.classic.cube5_geometry import centres_off as centres_home
from puzzlezero.classic.cube5_midges import pair_midges
from puzzlezero.classic.cube5_wings import pair_wings
from puzzlezero.classic.cube_reduction import (
    Macro,
    Pairing,
    PhaseTable,
    Reduction,
    _pack,
    _perms,
    phase_table,
    shortest_reduction,
)
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock

__all__ = [
    "CubeGeometry5",
    "build_reduction_tables",
    "centre_solutions",
    "centres_home",
    "memory_estimate",
]

#: the version of the tables' files
TABLE_VERSION = 1
#: the centres' beam's width in each phase; a phase that ends with no way through is run again
#: this many times wider
CENTRE_BEAM = 3000
WIDER = 4
#: the most steps of a centre phase's beam
CENTRE_STEPS = 40
#: the ways a phase ended at its fewest moves that the next one starts from
CENTRE_SEEDS = 4
#: how much of the kinds' distances beyond the largest a centre beam adds to its ranking
INTERFERENCE = 0.5

#: the kinds of centre positions (x-centres, plus-centres, middle centres, in this order in
#: :attr:`CubeGeometry5.centres`), and the centres of one axis's two faces
_KINDS = {"x": slice(0, 24), "plus": slice(24, 48), "middle": slice(48, 54), "plus+middle": slice(24, 54)}
_AXES = ("axis0", "axis1", "axis2")
#: the kinds each phase's tables cover
_PHASE_KINDS = {1: ("x", "plus", "middle"), 2: ("x", "plus+middle"), 3: ("x", "plus+middle", *_AXES)}


# --------------------------------------------------------------------------------------------
# the centres: three phases, a beam over each ranked by its kinds' tables


def _macro_pool(puzzle: Puzzle, geo: CubeGeometry5) -> list[Macro]:
    """Every single move, and every move turned twice (once for a move and its inverse)."""
    inverse = np.asarray(puzzle.inverse_action)
    pool = [Macro((a,), geo.centre_perms[a], int(geo.wing_odd[a])) for a in range(30)]
    pool += [Macro((a, a), geo.centre_perms[a][geo.centre_perms[a]], 0) for a in range(30) if inverse[a] > a]
    return pool


def _keeps(m: Macro, cells: np.ndarray) -> bool:
    return bool(np.array_equal(cells[m.centre_perm], cells))


@lru_cache(maxsize=16)
def _phase_macros(puzzle: Puzzle, phase: int, first: int) -> tuple[Macro, ...]:
    """Phase 1: every move; phase 2: the moves that keep the ``first`` axis's faces' centres on
    them; phase 3: those that keep every axis's."""
    geo = CubeGeometry5.of(puzzle)
    pool = _macro_pool(puzzle, geo)
    cell_axis = geo.face_axis[geo.centre_face]
    if phase == 1:
        return tuple(m for m in pool if m.cost == 1)
    if phase == 2:
        return tuple(m for m in pool if _keeps(m, cell_axis == first))
    return tuple(m for m in pool if all(_keeps(m, cell_axis == k) for k in range(3)))


def _label_classes(geo: CubeGeometry5, phase: int, first: int, second: int) -> np.ndarray:
    """``uint8[labels]``: each colour's class in the phase: phase 1, on the first axis or not;
    phase 2, on the first, the second or the third; phase 3, the lower or the higher face of its
    axis."""
    label_face = np.zeros(geo.num_labels, np.int64)
    label_face[geo.face_label] = np.arange(6)
    label_axis = geo.face_axis[label_face]
    if phase == 1:
        return (label_axis == first).astype(np.uint8)
    if phase == 2:
        return np.where(label_axis == first, 1, np.where(label_axis == second, 2, 0)).astype(np.uint8)
    low = np.array([int(np.flatnonzero(geo.face_axis == geo.face_axis[f])[0] == f) for f in label_face])
    return low.astype(np.uint8)


@lru_cache(maxsize=64)
def _table(puzzle: Puzzle, kind: str, phase: int, first: int = 0, second: int = 1) -> PhaseTable:
    """One kind's table of a phase (the axes it names), from ``cache_dir("cube-reduction")``, else
    grown breadth first and saved (:func:`~puzzlezero.classic.cube_reduction.phase_table`)."""
    geo = CubeGeometry5.of(puzzle)
    cells = _cells(geo, kind)
    index = np.full(54, -1)
    index[cells] = np.arange(len(cells))
    macros = tuple(
        Macro(m.actions, index[m.centre_perm[cells]], m.odd) for m in _phase_macros(puzzle, phase, first)
    )
    classes = _label_classes(geo, phase, first, second)
    name = {1: f"phase1-axis{first}", 2: f"phase2-axes{first}{second}", 3: "phase3"}[phase]
    goal_classes = classes[geo.face_label[geo.centre_face[cells]]]
    return phase_table(
        puzzle,
        f"{name}-{kind.replace('+', '-')}",
        classes,
        goal_classes,
        macros,
        parity=phase == 2 and kind == "x",
    )


def _cells(geo: CubeGeometry5, kind: str) -> np.ndarray:
    """The centre positions (indices into :attr:`CubeGeometry5.centres`) of a kind, or of an
    axis's two faces (``"axis0"``: the x, plus and middle centres there)."""
    if kind in _AXES:
        return np.flatnonzero(geo.face_axis[geo.centre_face] == _AXES.index(kind))
    return np.arange(54)[_KINDS[kind]]


@dataclass(frozen=True)
class _Turned:
    """The first phase's table of axis 0 read for another axis: the state turned as a whole (the
    five slices about the third axis) so that that axis's faces stand where axis 0's do. A move
    turned so is a move, so the distances are the same, and two tables of 735,471 need no build."""

    #: axis 0's table of the kind
    table: PhaseTable
    #: ``int[k]``: the kind's cells after the turn (``turned = labels[:, perm]``)
    perm: np.ndarray
    #: ``uint8[labels]``: the classes of the other axis's phase
    classes: np.ndarray

    def __len__(self) -> int:
        return len(self.table)

    def keys(self, centre_labels: np.ndarray, parity: np.ndarray | None = None) -> np.ndarray:
        return _pack(self.classes[centre_labels[:, self.perm]], None)

    def depth_of(self, keys: np.ndarray) -> np.ndarray:
        return self.table.depth_of(keys)


def _turn_to_axis0(geo: CubeGeometry5, puzzle: Puzzle, axis: int) -> np.ndarray:
    """``int[54]``: the centre positions after the whole cube turns (its five slices about the
    third axis, one way or the other) so that ``axis``'s faces come where axis 0's are."""
    third = 3 - axis
    forward = geo.sense > 0
    on_0 = geo.face_axis[geo.centre_face] == 0
    on_axis = geo.face_axis[geo.centre_face] == axis
    for way in (forward, ~forward):
        perm = np.arange(54)
        for m in np.flatnonzero((geo.move_axis == third) & way):
            perm = perm[geo.centre_perms[m]]
        if on_axis[perm[on_0]].all():
            return perm
    raise PuzzleError(f"{puzzle.name}'s slices do not turn the whole cube")  # pragma: no cover


def _phase1_table(puzzle: Puzzle, kind: str, axis: int) -> tuple[np.ndarray, PhaseTable | _Turned]:
    """The first phase's table of a kind for ``axis``: axis 0's, turned for the others."""
    geo = CubeGeometry5.of(puzzle)
    cells = _cells(geo, kind)
    base = _table(puzzle, kind, 1, 0, 0)
    if axis == 0:
        return cells, base
    index = np.full(54, -1)
    index[cells] = np.arange(len(cells))
    perm = index[_turn_to_axis0(geo, puzzle, axis)[cells]]
    return cells, _Turned(base, perm, _label_classes(geo, 1, axis, 0))


def _tables(
    puzzle: Puzzle, phase: int, first: int, second: int
) -> list[tuple[np.ndarray, PhaseTable | _Turned]]:
    geo = CubeGeometry5.of(puzzle)
    if phase == 1:
        return [_phase1_table(puzzle, k, first) for k in _PHASE_KINDS[1]]
    if phase == 2:
        return [(_cells(geo, k), _table(puzzle, k, 2, first, second)) for k in _PHASE_KINDS[2]]
    return [(_cells(geo, k), _table(puzzle, k, 3)) for k in _PHASE_KINDS[3]]


def build_reduction_tables(puzzle: Puzzle) -> list[int]:
    """Every table of the centres' phases (each kind's, the six orders of the axes), built or
    loaded: their sizes."""
    sizes = []
    for a in range(3):
        sizes += [len(t) for _, t in _tables(puzzle, 1, a, 0)]
    for a, b in itertools.permutations(range(3), 2):
        sizes += [len(t) for _, t in _tables(puzzle, 2, a, b)]
    sizes += [len(t) for _, t in _tables(puzzle, 3, 0, 0)]
    return sizes


@dataclass(frozen=True)
class _Way:
    """A state of the centres' phases: the centre stickers, the wing parity, the moves so far."""

    labels: np.ndarray
    parity: int
    actions: tuple[int, ...]


def _phase(
    puzzle: Puzzle,
    phase: int,
    first: int,
    second: int,
    starts: Sequence[_Way],
    *,
    width: int,
    deadline: float | None,
) -> list[_Way]:
    """The ways the phase's beam found from ``starts`` to its goal, fewest moves first, at most
    :data:`CENTRE_SEEDS` of them and only those of the fewest moves found."""
    geo = CubeGeometry5.of(puzzle)
    macros = _phase_macros(puzzle, phase, first)
    tables = _tables(puzzle, phase, first, second)
    perms = np.stack([m.centre_perm for m in macros])
    costs = np.array([m.cost for m in macros])
    odds = np.array([m.odd for m in macros], np.uint8)
    classes = _label_classes(geo, phase, first, second)

    def rank(lab: np.ndarray, par: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the largest distance, the ranking's estimate) of each state."""
        ds = []
        for cells, table in tables:
            d = table.depth_of(table.keys(lab[:, cells], par))
            ds.append(np.where(d < 0, 1000, d))
        most = np.max(ds, axis=0)
        return most, most + INTERFERENCE * (np.sum(ds, axis=0) - most)

    lab = np.stack([w.labels for w in starts])
    par = np.array([w.parity for w in starts], np.uint8)
    g = np.array([len(w.actions) for w in starts], np.float64)
    paths = [w.actions for w in starts]
    most, est = rank(lab, par)
    found: list[_Way] = [starts[int(i)] for i in np.flatnonzero(most == 0)]
    best = min((len(w.actions) for w in found), default=None)
    for _ in range(CENTRE_STEPS):
        if best is not None and (g + est).min() >= best:
            break
        if deadline is not None and clock.now() > deadline:
            raise TimeoutError("the time limit passed while the centres were solved")
        n, m = len(lab), len(macros)
        kids = np.take(lab, perms, axis=1).reshape(n * m, 54)
        kid_par = (par[:, None] ^ odds[None, :]).reshape(-1)
        kid_g = (g[:, None] + costs[None, :]).reshape(-1)
        parent, move = np.repeat(np.arange(n), m), np.tile(np.arange(m), n)
        # one child for each arrangement of the phase's classes (the cheapest)
        rows = np.ascontiguousarray(np.concatenate([classes[kids], kid_par[:, None]], axis=1))
        key = rows.view(np.dtype((np.void, rows.shape[1])))[:, 0]
        order = np.lexsort((kid_g, key))
        first_of = order[np.r_[True, key[order][1:] != key[order][:-1]]]
        kids, kid_par, kid_g = kids[first_of], kid_par[first_of], kid_g[first_of]
        parent, move = parent[first_of], move[first_of]
        kid_most, kid_est = rank(kids, kid_par)
        for i in np.flatnonzero(kid_most == 0):
            cost = int(kid_g[i])
            if best is None or cost <= best:
                found.append(_Way(kids[i], int(kid_par[i]), (*paths[parent[i]], *macros[move[i]].actions)))
                best = cost
        keep = np.lexsort((kid_most, kid_g + kid_est))[:width]
        lab, par, g, est = kids[keep], kid_par[keep], kid_g[keep], kid_est[keep]
        paths = [(*paths[parent[i]], *macros[move[i]].actions) for i in keep]
    ways = sorted((w for w in found if len(w.actions) == best), key=lambda w: len(w.actions))
    out: list[_Way] = []
    seen: set[tuple[bytes, int]] = set()
    for w in ways:
        if (w.labels.tobytes(), w.parity) not in seen:
            seen.add((w.labels.tobytes(), w.parity))
            out.append(w)
    return out[:CENTRE_SEEDS]


def centre_solutions(
    puzzle: Puzzle, state: np.ndarray, count: int = 1, *, deadline: float | None = None
) -> list[list[int]]:
    """Up to ``count`` ways to bring every centre home with an even wing parity, fewest moves first:
    for each of the six orders of the axes (the first phase once for each first axis), the three
    phases' beams (:func:`_phase`), each from the ways the one before ended at its fewest moves; a
    phase's beam that finds no way is run again :data:`WIDER` times wider. A
    :class:`TimeoutError` if ``deadline`` passes first."""
    geo = CubeGeometry5.of(puzzle)
    start = np.asarray(state).reshape(-1)
    if not np.array_equal(np.sort(start[geo.centres]), np.sort(geo.face_label[geo.centre_face])):
        raise InvalidStateError("this 5x5x5 state's centres are not nine of each colour")
    seed = [_Way(start[geo.centres], wing_parity(geo, start), ())]
    found: list[tuple[int, ...]] = []

    def beam(phase: int, a: int, b: int, starts: list[_Way]) -> list[_Way]:
        got = _phase(puzzle, phase, a, b, starts, width=CENTRE_BEAM, deadline=deadline)
        return got or _phase(puzzle, phase, a, b, starts, width=WIDER * CENTRE_BEAM, deadline=deadline)

    first = {a: beam(1, a, 0, seed) for a in range(3)}  # the same for both orders after it
    for a, b, _c in itertools.permutations(range(3)):
        ways = first[a]
        for phase in (2, 3):
            ways = beam(phase, a, b, ways) if ways else []
        found += [w.actions for w in ways]
    if not found:
        raise InvalidStateError("the centres' beams found no way to bring this 5x5x5's centres home")
    out: list[list[int]] = []
    ends: set[bytes] = set()
    for actions in sorted(found, key=len):
        end = puzzle.apply_moves(start, list(actions)).tobytes()
        if end not in ends:
            ends.add(end)
            out.append(list(actions))
    return out[:count]


def memory_estimate(puzzle: Puzzle, options: object = None, instances: int = 1) -> int:
    """Peak bytes of a reduction (one state at a time): a centre beam's children (its widest:
    :data:`WIDER` times :data:`CENTRE_BEAM` states by 30 moves, 54 centre stickers, their classes
    and keys) and the tables (each kind's of each phase: at most 1.4 million arrangements, 9 bytes
    each, about 30 of them)."""
    beam = WIDER * CENTRE_BEAM * 30 * (54 * 8 * 3)
    tables = 30 * 1_400_000 * 9
    return beam + tables


# --------------------------------------------------------------------------------------------
# the whole reduction, and the 3x3x3 it leaves


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
    """The centres (:func:`centre_solutions`: up to ``starts`` ways of the fewest moves found), then
    from each in turn the wings (:func:`~puzzlezero.classic.cube5_wings.pair_wings`) and the midges
    (:func:`~puzzlezero.classic.cube5_midges.pair_midges`): the shortest of these reductions, each
    shorter one passed to ``on_reduction`` as it is found. A start after the first begins only
    if, as long as the longest so far, it would end by ``more_until`` (by default ``deadline``).
    ``width``, if given, is every pairing beam's. An :class:`InvalidStateError` if no start's
    edges pair, a :class:`TimeoutError` if ``deadline`` passes before any do. (The 4x4x4's
    :func:`puzzlezero.classic.cube_reduction.reduce_cube` takes the same arguments.)"""
    start = np.asarray(state).reshape(-1)

    def pair(s: np.ndarray) -> Pairing | None:
        wings = pair_wings(puzzle, s, width=width, deadline=deadline)
        if wings is None:
            return None
        s = puzzle.apply_moves(s, wings)
        midges = (
            pair_midges(puzzle, s, deadline=deadline)
            if width is None
            else pair_midges(puzzle, s, width=width, deadline=deadline)
        )
        return None if midges is None else ((*wings, *midges), (), puzzle.apply_moves(s, midges))

    return shortest_reduction(
        puzzle,
        start,
        centre_solutions(puzzle, start, starts, deadline=deadline),
        pair,
        deadline=deadline,
        more_until=deadline if more_until is None else more_until,
        on_reduction=on_reduction,
        refusal="the pairing beams found no way to pair this 5x5x5's edges",
    )


def edges_paired(geo: CubeGeometry5, states: np.ndarray) -> np.ndarray:
    """``bool[k, 12]``: does each edge's midge show the colours of its two wings, which show the
    same two (the three side by side, one edge)?"""
    s = np.asarray(states).reshape(len(states), -1)
    x1, x2, xm, y1, y2, ym = (geo.edges[:, i] for i in range(6))
    return (s[:, x1] == s[:, x2]) & (s[:, x1] == s[:, xm]) & (s[:, y1] == s[:, y2]) & (s[:, y1] == s[:, ym])


def _turns_like(geo: CubeGeometry5, state: np.ndarray) -> bool:
    """Edges paired and each face's nine centres one colour (a middle slice's turns take them to
    another face): a state that turns like a 3x3x3."""
    one = np.asarray(state).reshape(1, -1)
    centres = one[0, geo.centres]
    same_face = centres[:, None] == centres[None, :]
    on_face = geo.centre_face[:, None] == geo.centre_face[None, :]
    return bool(edges_paired(geo, one).all() and same_face[on_face].all())


#: the 3x3x3's rows and columns on the 5x5x5's faces: its corners, midges and middle centres
_ROWS = (0, 2, 4)


@lru_cache(maxsize=2)
def _view_positions(puzzle: Puzzle) -> np.ndarray:
    return np.array([25 * f + 5 * r + c for f in range(6) for r in _ROWS for c in _ROWS])


def to_3x3x3(puzzle: Puzzle, state: np.ndarray) -> np.ndarray:
    """The 3x3x3 a reduced 5x5x5 turns like: its corners, midges and middle centres, in the
    3x3x3's sticker order."""
    return np.asarray(state).reshape(-1)[_view_positions(puzzle)]


@lru_cache(maxsize=2)
def moves_of_3x3x3(puzzle: Puzzle, cube3: Puzzle) -> tuple[tuple[int, ...], ...]:
    """Each move of the 3x3x3 (``cube3``, the competition's) as the 5x5x5's moves that turn a
    reduced 5x5x5 the same way: an outer layer for an outer layer, the three inner slices for the
    middle one; checked on reduced states (the goal after random outer turns)."""
    geo = CubeGeometry5.of(puzzle)
    perms3 = _perms(cube3)
    goal = np.asarray(puzzle.goal()).reshape(-1)
    candidates: list[tuple[int, ...]] = [(int(a),) for a in np.flatnonzero(geo.move_kind == 0)]
    inner = [a for a in range(30) if geo.move_kind[a] != 0]
    candidates += [
        (a, b, c)
        for a, b, c in itertools.combinations(inner, 3)
        if geo.move_axis[a] == geo.move_axis[b] == geo.move_axis[c]
        and geo.sense[a] == geo.sense[b] == geo.sense[c]
        and sorted(geo.move_kind[[a, b, c]].tolist()) == [1, 1, 2]
    ]
    rng = np.random.default_rng(0)
    tests = [goal]
    for _ in range(3):
        turns = rng.choice(np.flatnonzero(geo.move_kind == 0), 12)
        tests.append(puzzle.apply_moves(goal, [int(a) for a in turns]))
    out = []
    for j in range(len(perms3)):
        for c in candidates:
            ends = [puzzle.apply_moves(s, list(c)) for s in tests]
            if all(
                _turns_like(geo, e) and np.array_equal(to_3x3x3(puzzle, e), to_3x3x3(puzzle, s)[perms3[j]])
                for s, e in zip(tests, ends, strict=True)
            ):
                out.append(c)
                break
        else:
            raise PuzzleError(f"{cube3.name}'s move {j} has no counterpart on {puzzle.name}")
    return tuple(out)
