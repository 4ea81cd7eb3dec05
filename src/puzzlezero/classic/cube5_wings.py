"""The 5x5x5's wings paired: the edges' first step of the reduction, after the centres.

The centres are home (each face's 3x3 centre block its colour) and the wing permutation is even;
the wings (the two pieces at either end of each edge, beside its midge) are to be brought
together, each edge's two showing the same colour on each of its faces, the centres home again
after. The midges do not count here: the next step (:mod:`puzzlezero.classic.cube5_midges`)
brings each between its wings with middle-slice conjugates, which never move a wing.

**The wing parity.** A wing piece shows its two colours in one order wherever it goes (it cannot be
flipped in place), so the 24 wings are told apart and their permutation has a parity: an inner
slice's quarter turn (slice 1 or 3) changes it, nothing else does, and no conjugate ``s X s'``
does. With an even parity every edge pairs by the moves below; with an odd one the last edge would
be left with its two wings swapped, so :func:`pair_wings` asks for an even one.

**A beam** over moves that bring every centre home (:func:`pair_moves`), the way the 4x4x4's edges
are paired (``pair_edges`` of :mod:`puzzlezero.classic.cube_reduction`): the outer layers' quarter
turns, and ``s X s'`` where ``s`` is an inner slice's quarter turn or a wide turn (an outer layer
with the inner slice beside it) and ``X`` one to ``reach`` outer turns, kept where its effect on
the goal leaves every centre sticker (x-, plus- and middle centres) on its face, one of each
effect on the wings, the shortest. Each path is ranked by its cost plus a weight times its
unpaired edges. The last two edges need conjugates of four or five turns (like cubers'
``Uw' R U R' F R' F' R Uw``): the first beam's moves hold them (``X`` up to five turns, 23,967
moves); a beam of shorter ``X`` tries its best few states with them (:func:`finish_moves`) once
two edges are left. The first step with a pairing ends the beam after :data:`MORE_STEPS` more
steps (while a path in it could still end cheaper), with the cheapest pairing found.
:data:`PAIR_TRIES` lists the settings tried in turn (the first pairs every test state: about 23
moves, a second or two).

**The beam's states** are the wings alone: ``uint8[24]``, the wing standing at each wing position
(:class:`WingGeometry`), each move a permutation of the 24 positions. An edge is paired when the
wing at its second position is the *mirror* of the one at its first (the wing with the same two
colours the other way round, which side by side shows each face one colour). A child's paired
edges are read from its parent's ``24 x 24`` table of mirror pairs before any child is built
(:attr:`PairMoves.pair_index`); only the best few children are built and deduplicated.

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("cube_5-5-5")
>>> s = scramble(p, np.random.default_rng(0), 40)
>>> moves = pair_wings(p, s)
>>> bool(wings_paired(WingGeometry.of(p), p.apply_moves(s, moves)))
True
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from puzzlezero.classic.cube5_geometry import (
    CubeGeometry5,
    centres_home,
    cube_geometry,
    macro_actions,
    wing_ids,
    wing_parity,
    wings_paired,
)
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.rules import permutation_parity
from puzzlezero.search import clock

__all__ = [
    "PAIR_TRIES",
    "PairMoves",
    "WingGeometry",
    "beam_pair_wings",
    "centres_home",
    "finish_moves",
    "pair_moves",
    "pair_wings",
    "scramble",
    "unpaired",
    "wing_ids",
    "wing_parity",
    "wings_paired",
]

#: the beam's width
PAIR_BEAM = 300
#: each unpaired edge counts as this many moves in the beam's ranking
PAIR_WEIGHT = 2.5
#: the outer turns in the beam's conjugates' ``X`` (at most)
PAIR_REACH = 5
#: the outer turns in the finishing conjugates' ``X`` (at most; from four)
FINISH_REACH = 5
#: the beam's best states tried with the finishing moves
FINISH_WIDTH = 8
#: the finishing moves are tried once this few edges are unpaired
FINISH_AT = 2
#: steps in a row without fewer unpaired edges after which the beam gives up
PAIR_PATIENCE = 10
#: the most steps the beam takes
PAIR_MAX_STEPS = 60
#: steps the beam goes on after its first pairing, while a path in it could end cheaper
MORE_STEPS = 3
#: children ranked, of each step's, before the duplicates among them are dropped (times the width)
OVERSAMPLE = 3
#: the settings tried in turn until one pairs every edge: (reach, width, weight, finish width,
#: patience)
PAIR_TRIES: tuple[tuple[int, int, float, int, int], ...] = (
    (PAIR_REACH, PAIR_BEAM, PAIR_WEIGHT, FINISH_WIDTH, PAIR_PATIENCE),
    (4, 800, 3.0, 32, 14),
    (3, 1000, 4.0, 64, 20),
)


# --------------------------------------------------------------------------------------------
# the wings' tables, from the cube's geometry


@dataclass(frozen=True)
class WingGeometry(CubeGeometry5):
    """The 5x5x5's geometry (:class:`~puzzlezero.classic.cube5_geometry.CubeGeometry5`) with the
    wings' tables.

    A wing *position* is a place for a wing (``wings[k]``: its sticker in the first of the wings'
    two sticker orbits, then the other); a wing's *number* is the position it stands at in the
    goal. A state's wings are ``uint8[24]``: the number of the wing at each position."""

    #: ``int[12, 2]``: each edge's two wing positions (the edge is paired when the wing at the
    #: second is the mirror of the one at the first)
    wing_edges: np.ndarray
    #: ``int[24]``: each wing's mirror, the wing with its two colours the other way round
    mirror: np.ndarray
    #: ``int[30, 24]``: each move as a permutation of the wing positions (``child = parent[perm]``)
    move_wings: np.ndarray
    #: ``uint8[30]``: the parity of each move's permutation of the midges
    midge_odd: np.ndarray
    #: ``int[24]``: each wing position's edge (the row of :attr:`wing_edges` holding it)
    edge_of: np.ndarray
    #: ``int[12]``: each midge's colours in the goal (``L * lower + higher``)
    midge_ids: np.ndarray

    @staticmethod
    def of(puzzle: Puzzle) -> WingGeometry:
        """The geometry of a 5x5x5 in the competition's layout (a :class:`PuzzleError` naming what
        does not fit)."""
        return _geometry(puzzle)


@lru_cache(maxsize=2)
def _geometry(puzzle: Puzzle) -> WingGeometry:
    cube = cube_geometry(puzzle, "the wing pairing")
    what = f"the wing pairing solves the 5x5x5 (150 stickers, 30 slice quarter turns); {puzzle.name}"
    goal, wings, labels = cube.goal, cube.wings, cube.num_labels
    mirror = cube.reading[goal[wings[:, 1]] * labels + goal[wings[:, 0]]]
    if np.any(mirror < 0) or np.any(mirror[mirror] != np.arange(24)):
        raise PuzzleError(f"{what}'s wings have no mirror wings")
    # edges: the two wing positions between the same two faces; paired when the second holds the
    # first's mirror
    face = wings // 25
    by_faces: dict[tuple[int, int], list[int]] = {}
    for k, (fa, fb) in enumerate(np.sort(face, axis=1).tolist()):
        by_faces.setdefault((fa, fb), []).append(k)
    wing_edges = np.array([ws for _, ws in sorted(by_faces.items())])
    if wing_edges.shape != (12, 2) or np.any(mirror[wing_edges[:, 0]] != wing_edges[:, 1]):
        raise PuzzleError(f"{what}'s edges are not two mirror wings each")
    where = np.full(150, -1)
    where[wings[:, 0]] = np.arange(24)
    move_wings = where[cube.perms[:, wings[:, 0]]]
    if np.any(move_wings < 0):
        raise PuzzleError(f"{what}'s moves take wings elsewhere")
    midges = cube.midges
    midge_at = np.full(150, -1)
    midge_at[midges[:, 0]] = midge_at[midges[:, 1]] = np.arange(12)
    midge_odd = np.array([permutation_parity(midge_at[perm[midges[:, 0]]]) for perm in cube.perms], np.uint8)
    edge_of = np.zeros(24, np.int64)
    edge_of[wing_edges.reshape(-1)] = np.repeat(np.arange(12), 2)
    ga, gb = goal[midges[:, 0]], goal[midges[:, 1]]
    return WingGeometry(
        **cube.facts(),
        wing_edges=wing_edges,
        mirror=mirror,
        move_wings=move_wings,
        midge_odd=midge_odd,
        edge_of=edge_of,
        midge_ids=np.minimum(ga, gb) * labels + np.maximum(ga, gb),
    )


# --------------------------------------------------------------------------------------------
# the state's checks


def unpaired(geo: WingGeometry, ids: np.ndarray) -> np.ndarray:
    """``int[k]``: the unpaired edges of each of ``ids`` (``[k, 24]`` wings at the positions)."""
    ids = np.asarray(ids).reshape(-1, 24)
    return (ids[:, geo.wing_edges[:, 1]] != geo.mirror[ids[:, geo.wing_edges[:, 0]]]).sum(axis=1)


def midge_parity(geo: WingGeometry, state: np.ndarray) -> int:
    """The parity of the midges' permutation (each told by its two colours, either way round)."""
    s = np.asarray(state).reshape(-1).astype(np.int64)
    a, b = s[geo.midges[:, 0]], s[geo.midges[:, 1]]
    ids = np.minimum(a, b) * geo.num_labels + np.maximum(a, b)
    home = {int(v): i for i, v in enumerate(geo.midge_ids)}
    return permutation_parity(np.array([home[int(v)] for v in ids]))


def _pair_parity(geo: WingGeometry, ids: np.ndarray) -> int:
    """The parity of the wing pairs' permutation of the edges, from paired wings ``ids``."""
    return permutation_parity(geo.edge_of[ids[geo.wing_edges[:, 0]]])


def pairs_match_midges(geo: WingGeometry, state: np.ndarray) -> bool:
    """With the wings paired: do the wing pairs stand in a permutation of the midges' parity? The
    midges' step (conjugates of middle slices and outer turns, which move midges and pairs alike)
    can then bring each midge to its pair; otherwise no such moves can (the 4x4x4's "PLL parity",
    here between the pairs and the midges), so the beam pairs the wings only so."""
    return _pair_parity(geo, wing_ids(geo, np.asarray(state).reshape(-1))) == midge_parity(geo, state)


# --------------------------------------------------------------------------------------------
# the beam's moves


@dataclass(frozen=True)
class PairMoves:
    """Moves that keep every centre home, one of each effect on the wings, with their
    permutations of the 24 wing positions."""

    #: each move's actions (the puzzle's moves)
    actions: tuple[tuple[int, ...], ...]
    #: ``int[M, 24]``: each move's permutation of the wing positions (``child = parent[perm]``)
    perms: np.ndarray
    #: ``int[M]``: each move's cost
    costs: np.ndarray
    #: ``int[12, M]``: each child edge's two wing positions in the parent, by edge, as an index
    #: into the parent's ``24 x 24`` mirror table (``24 * first + second``)
    pair_index: np.ndarray
    #: ``uint8[M]``: the parity of each move's permutation of the midges
    midge_odd: np.ndarray

    @staticmethod
    def of(geo: WingGeometry, actions: Sequence[tuple[int, ...]], perms: np.ndarray) -> PairMoves:
        perms = np.asarray(perms, np.int64).reshape(len(actions), 24)
        return PairMoves(
            tuple(actions),
            perms,
            np.array([len(a) for a in actions], np.int64),
            np.ascontiguousarray((perms[:, geo.wing_edges[:, 0]] * 24 + perms[:, geo.wing_edges[:, 1]]).T),
            np.array([int(geo.midge_odd[list(a)].sum()) % 2 for a in actions], np.uint8),
        )

    def __len__(self) -> int:
        return len(self.actions)

    def __add__(self, other: PairMoves) -> PairMoves:
        return PairMoves(
            self.actions + other.actions,
            np.concatenate([self.perms, other.perms]),
            np.concatenate([self.costs, other.costs]),
            np.concatenate([self.pair_index, other.pair_index], axis=1),
            np.concatenate([self.midge_odd, other.midge_odd]),
        )


def _outer_sequences(geo: WingGeometry, inverse: np.ndarray, length: int) -> np.ndarray:
    """``int[S, length]``: every sequence of ``length`` outer quarter turns without a turn next to
    its inverse, nor two turns of opposite faces out of order (they commute)."""
    outer = np.flatnonzero(geo.outer)
    if length == 0:
        return np.zeros((1, 0), np.int64)
    seqs = np.array(list(itertools.product(outer, repeat=length)), np.int64)
    ok = np.ones(len(seqs), bool)
    for i in range(length - 1):
        a, b = seqs[:, i], seqs[:, i + 1]
        ok &= b != inverse[a]
        # opposite faces commute: only slice 0 before slice 4
        ok &= ~((geo.move_axis[a] == geo.move_axis[b]) & (geo.slice_of[a] > geo.slice_of[b]))
    return seqs[ok]


def _compose(perms: np.ndarray, seqs: np.ndarray) -> np.ndarray:
    """``int[S, n]``: each sequence's permutation (``perms`` ``int[30, n]`` per move)."""
    n = perms.shape[1]
    out = np.broadcast_to(np.arange(n), (len(seqs), n)).copy()
    for i in range(seqs.shape[1]):
        out = np.take_along_axis(out, perms[seqs[:, i]], axis=1)
    return out


def _conjugators(geo: WingGeometry, wide: bool) -> list[tuple[int, ...]]:
    """The ``s`` of ``s X s'``: each inner slice's quarter turn (slices 1 and 3), and with ``wide``
    each outer layer's with the inner slice beside it, turned the same way."""
    inner = [a for a in range(30) if geo.slice_of[a] in (1, 3)]
    out: list[tuple[int, ...]] = [(a,) for a in inner]
    if wide:
        for a in np.flatnonzero(geo.outer):
            for b in inner:
                if (
                    geo.move_axis[a] == geo.move_axis[b]
                    and geo.sense[a] == geo.sense[b]
                    and abs(int(geo.slice_of[a]) - int(geo.slice_of[b])) == 1
                ):
                    out.append((int(a), b))
    return out


def _conjugates(
    puzzle: Puzzle, lengths: Sequence[int], wide: bool
) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every ``s X s'`` (:func:`_conjugators`, ``X`` outer turns of one of ``lengths``) whose effect
    on the goal leaves every centre sticker on its face: actions and wing permutations."""
    geo = _geometry(puzzle)
    inverse = np.asarray(puzzle.inverse_action)
    actions: list[tuple[int, ...]] = []
    found: list[np.ndarray] = []
    for length in lengths:
        seqs = _outer_sequences(geo, inverse, length)
        rot = np.zeros((len(seqs), 6), np.int64)
        for i in range(length):
            np.add.at(rot, (np.arange(len(seqs)), geo.turned_face[seqs[:, i]]), geo.sense[seqs[:, i]])
        rot %= 4
        for s in _conjugators(geo, wide):
            # the faces whose centres s's inner slice moves away must turn back to where they were
            # for s' to bring them home (checked by the effect below)
            side = np.flatnonzero(geo.side_faces[s[-1]])
            xs = seqs[(rot[:, side] == 0).all(axis=1)]
            if len(xs) == 0:
                continue
            undo = [int(inverse[a]) for a in reversed(s)]
            full = np.concatenate([np.tile(s, (len(xs), 1)), xs, np.tile(undo, (len(xs), 1))], axis=1).astype(
                np.int64
            )
            centre = _compose(geo.centre_perms, full)
            keep = (geo.centre_labels[centre] == geo.centre_labels).all(axis=1)
            full = full[keep]
            actions.extend(tuple(int(a) for a in row) for row in full)
            found.append(_compose(geo.move_wings, full))
    perms = np.concatenate(found) if found else np.zeros((0, 24), np.int64)
    return actions, perms


def _distinct(
    actions: list[tuple[int, ...]], perms: np.ndarray, taken: np.ndarray
) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """The shortest of each effect (first of the shortest), none of whose effect is in ``taken``
    (``int[T, 24]``)."""
    if not actions:
        return [], perms
    costs = np.array([len(a) for a in actions])
    order = np.argsort(costs, kind="stable")
    perms = perms[order]
    _, first = np.unique(perms, axis=0, return_index=True)
    first = np.sort(first)
    if len(taken):
        seen = {p.tobytes() for p in np.asarray(taken, np.int64)}
        first = np.array([i for i in first if perms[i].astype(np.int64).tobytes() not in seen], np.int64)
    return [actions[order[i]] for i in first], perms[first]


@lru_cache(maxsize=4)
def pair_moves(puzzle: Puzzle, reach: int = PAIR_REACH) -> PairMoves:
    """The beam's moves: the outer quarter turns, and every ``s X s'`` (``s`` an inner slice's
    quarter turn or a wide turn, ``X`` one to ``reach`` outer turns) that leaves every centre
    home, one of each effect on the wings (the shortest), none with the effect of ``X`` alone of
    at most three turns (the beam reaches those by outer turns)."""
    geo = _geometry(puzzle)
    inverse = np.asarray(puzzle.inverse_action)
    outer = [int(a) for a in np.flatnonzero(geo.outer)]
    xs = [_outer_sequences(geo, inverse, k) for k in range(min(reach, 3) + 1)]
    outer_effects = np.concatenate([_compose(geo.move_wings, x) for x in xs])
    actions, perms = _conjugates(puzzle, range(1, reach + 1), wide=True)
    actions, perms = _distinct(actions, perms, outer_effects)
    return PairMoves.of(geo, [(a,) for a in outer] + actions, np.concatenate([geo.move_wings[outer], perms]))


@lru_cache(maxsize=4)
def finish_moves(puzzle: Puzzle, reach: int = FINISH_REACH) -> PairMoves:
    """The last edges' moves: ``s X s'`` for an inner slice's quarter turn ``s`` and ``X`` of four
    to ``reach`` outer turns that leaves every centre home, one of each effect on the wings."""
    geo = _geometry(puzzle)
    actions, perms = _conjugates(puzzle, range(4, reach + 1), wide=False)
    actions, perms = _distinct(actions, perms, np.zeros((0, 24), np.int64))
    return PairMoves.of(geo, actions, perms)


# --------------------------------------------------------------------------------------------
# the beam


def _mirror_table(geo: WingGeometry, ids: np.ndarray) -> np.ndarray:
    """``int8[k, 576]``: ``24 * a + b`` is 1 where the wing at ``b`` is the mirror of the wing at
    ``a`` (positions ``a`` and ``b``, side by side, would be a paired edge)."""
    return (ids[:, None, :] == geo.mirror[ids][:, :, None]).reshape(len(ids), 576).view(np.int8)


def _children_paired(geo: WingGeometry, ids: np.ndarray, moves: PairMoves, chunk: int = 64) -> np.ndarray:
    """``int8[k, M]``: the paired edges of each state's child by each move."""
    out = np.zeros((len(ids), len(moves)), np.int8)
    for lo in range(0, len(ids), chunk):
        table = _mirror_table(geo, ids[lo : lo + chunk])
        part = out[lo : lo + chunk]
        for index in moves.pair_index:
            part += table[:, index]
    return out


def _smallest(values: np.ndarray, k: int) -> np.ndarray:
    """The indices of the ``k`` smallest of ``values``, smallest first."""
    if k < len(values):
        part = np.argpartition(values, k - 1)[:k]
        return part[np.argsort(values[part], kind="stable")]
    return np.argsort(values, kind="stable")


def _keys(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two ``uint64`` that tell the rows of ``ids`` (``uint8[k, 24]``, numbers below 32) apart."""
    shifts = (np.arange(12, dtype=np.uint64) * np.uint64(5))[None, :]
    lo = (ids[:, :12].astype(np.uint64) << shifts).sum(axis=1, dtype=np.uint64)
    hi = (ids[:, 12:].astype(np.uint64) << shifts).sum(axis=1, dtype=np.uint64)
    return lo, hi


def beam_pair_wings(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    reach: int = PAIR_REACH,
    width: int = PAIR_BEAM,
    weight: float = PAIR_WEIGHT,
    finish_width: int = FINISH_WIDTH,
    finish_at: int = FINISH_AT,
    patience: int = PAIR_PATIENCE,
    max_steps: int = PAIR_MAX_STEPS,
    more_steps: int = MORE_STEPS,
    deadline: float | None = None,
) -> list[int] | None:
    """One beam (the module's docstring): moves that pair every wing and keep the centres home,
    from a state with its centres home, the wing pairs standing in a permutation of the midges'
    parity (:func:`pairs_match_midges`), or ``None`` where ``max_steps`` steps, ``patience`` steps
    in a row without fewer unpaired edges, or the deadline pass first."""
    geo = _geometry(puzzle)
    moves = pair_moves(puzzle, reach)
    # the beam's own moves hold the finishing ones where its X is as long
    finish = finish_moves(puzzle) if reach < FINISH_REACH else None
    beam = wing_ids(geo, np.asarray(state).reshape(1, -1))
    midge_par = np.array([midge_parity(geo, np.asarray(state).reshape(-1))], np.uint8)
    if unpaired(geo, beam)[0] == 0 and _pair_parity(geo, beam[0]) == midge_par[0]:
        return []
    g = np.zeros(1, np.int64)
    paths: list[tuple[int, ...]] = [()]
    finishes = None if finish is None else finish.actions  # the negative indices of a path
    m = len(moves)
    fewest, since = 12, 0
    answer: tuple[int, tuple[int, ...]] | None = None  # (cost, path) of the cheapest pairing found
    extra = 0
    for _ in range(max_steps):
        if deadline is not None and clock.now() > deadline:
            return None if answer is None else macro_actions(answer[1], moves.actions, finishes)
        left = 12 - _children_paired(geo, beam, moves)  # int8[n, M]
        cost = (g[:, None] + moves.costs[None, :]).astype(np.int32)
        found: list[tuple[int, tuple[int, ...]]] = []  # (cost, the beam's macros then the finish's)
        kid_par = (midge_par[:, None] ^ moves.midge_odd[None, :]).reshape(-1)
        done = np.flatnonzero(left.reshape(-1) == 0)
        done = done[[_pair_parity(geo, beam[k // m][moves.perms[k % m]]) == kid_par[k] for k in done]]
        if len(done):
            k = int(done[np.argmin(cost.reshape(-1)[done])])
            found.append((int(cost.reshape(-1)[k]), (*paths[k // m], k % m)))
        score = (cost + np.float32(weight) * left).reshape(-1)
        if finish is not None and left.min() <= finish_at:
            # the last edges: the best few children by the longer moves as well
            best = _smallest(score, finish_width)
            kids = np.take_along_axis(beam[best // m], moves.perms[best % m], axis=1).astype(np.uint8)
            fin_left = 12 - _children_paired(geo, kids, finish).astype(np.int64)
            fin_cost = cost.reshape(-1)[best][:, None] + finish.costs[None, :]
            rows, cols = np.nonzero(fin_left == 0)
            fin_par = kid_par[best][rows] ^ finish.midge_odd[cols]
            ok = [
                _pair_parity(geo, kids[r][finish.perms[c]]) == fp
                for r, c, fp in zip(rows, cols, fin_par, strict=True)
            ]
            rows, cols = rows[ok], cols[ok]
            if len(rows):
                j = int(np.argmin(fin_cost[rows, cols]))
                r, c = int(rows[j]), int(cols[j])
                k = int(best[r])
                found.append((int(fin_cost[r, c]), (*paths[k // m], k % m, -1 - c)))
        if found:
            got = min(found, key=lambda f: f[0])
            answer = got if answer is None or got[0] < answer[0] else answer
        if answer is not None:
            # a few steps more while a path in the beam could still end cheaper
            extra += 1
            if extra > more_steps or answer[0] <= int(cost.min()) + int(moves.costs.min()):
                return macro_actions(answer[1], moves.actions, finishes)
        fewest, since = (int(left.min()), 0) if left.min() < fewest else (fewest, since + 1)
        if since >= patience and answer is None:
            return None
        # the best children, built; the duplicates (the same wings) dropped, the cheapest kept
        pick = _smallest(score, OVERSAMPLE * width)
        kids = np.take_along_axis(beam[pick // m], moves.perms[pick % m], axis=1).astype(np.uint8)
        lo, hi = _keys(kids)
        order = np.lexsort((score[pick], hi, lo))
        new = np.r_[True, (lo[order][1:] != lo[order][:-1]) | (hi[order][1:] != hi[order][:-1])]
        keep = order[new]
        keep = keep[np.argsort(score[pick][keep], kind="stable")][:width]
        chosen = pick[keep]
        beam, g, midge_par = kids[keep], cost.reshape(-1)[chosen], kid_par[chosen]
        paths = [(*paths[int(k) // m], int(k) % m) for k in chosen]
    return None if answer is None else macro_actions(answer[1], moves.actions, finishes)


def pair_wings(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    width: int | None = None,
    deadline: float | None = None,
    max_steps: int = PAIR_MAX_STEPS,
    tries: Sequence[tuple[int, int, float, int, int]] = PAIR_TRIES,
) -> list[int] | None:
    """Moves after which every edge's two wings are paired and every centre home, from a state
    with every centre home and an even wing parity: :func:`beam_pair_wings` with each of
    ``tries`` (``(reach, width, weight, finish width, patience)``; ``width``, if given, for every
    beam) until one pairs them. ``None`` where none does within ``max_steps`` steps or by the
    deadline. An :class:`InvalidStateError` for a state whose centres are not home or whose wing
    parity is odd (no such moves pair its last edge)."""
    geo = _geometry(puzzle)
    start = np.asarray(state).reshape(-1)
    if not centres_home(geo, start):
        raise InvalidStateError("the wing pairing needs every centre of this 5x5x5 home")
    if wing_parity(geo, start):
        raise InvalidStateError("this 5x5x5's wing permutation is odd: its last edge cannot pair")
    for reach, beam_width, weight, finish_width, patience in tries:
        found = beam_pair_wings(
            puzzle,
            start,
            reach=reach,
            width=beam_width if width is None else width,
            weight=weight,
            finish_width=finish_width,
            patience=patience,
            max_steps=max_steps,
            deadline=deadline,
        )
        if found is not None:
            return found
        if deadline is not None and clock.now() > deadline:
            return None
    return None


def scramble(puzzle: Puzzle, rng: np.random.Generator, count: int, reach: int = 3) -> np.ndarray:
    """A test state: the goal after ``count`` random moves, each an outer quarter turn or one of
    :func:`pair_moves` of ``reach`` (the centres home, the wing parity even)."""
    moves = pair_moves(puzzle, reach)
    seq = [a for i in rng.integers(len(moves), size=count) for a in moves.actions[int(i)]]
    return puzzle.apply_moves(np.asarray(puzzle.goal()), seq)
