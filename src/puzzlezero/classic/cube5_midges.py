"""The 5x5x5's midges paired with their wings: the last step of the edges' reduction.

The centres are home (each face's 3x3 centre block its colour) and every edge's two wings paired;
what is left is to bring each edge's midge (its middle piece) between the wings of its own edge,
the right way round. With the centres home the midges, the corners and the middle centres turn
like one 3x3x3, the wing pairs, the corners and the x-centres like another: the midges'
permutation relative to the wing pairs is even, and so is the number of midges flipped relative
to their pair. The moves that change that relation and nothing the reduction has done are the
conjugates ``m X m'`` of a middle slice's quarter turn ``m`` and a few outer turns ``X`` that bring
the centres ``m`` moved back (each face ``m`` turns a half turn or none in all): on the wings
and corners they act as ``X``, on the midges as ``m X m'``.

**A beam** (:func:`pair_midges`, the 4x4x4's edge pairing's way, ``pair_edges`` of
:mod:`puzzlezero.classic.cube_reduction`) over the outer quarter turns and those conjugates
(:func:`midge_moves`: ``X`` of two to five outer turns, and ``m2 X m2`` with ``X`` of one to
three, one move of each effect, 45,222 moves), each path ranked by its cost plus a weight times
its unmatched edges. The first step with a child whose edges all match ends it (a step or two
more while a cheaper one may come), with the cheapest. Two midges flipped in place take one
conjugate of five outer turns (``d2 f4 r0 d0' f4' r0' d2'``): with ``X`` of up to four turns
only, the beam's best states are tried with the conjugates of five as well once few edges are
left (:func:`finish_moves`).

A state that differs from another by outer turns alone has the same relation of midges to wing
pairs and scores the same plus its turns; at most a few of each relation are kept
(:func:`_relations`), else they crowd out the rest where no one move matches more edges (many
midges flipped in place). Where the beam stalls all the same, it starts again with a heavier
weight and fewer of each relation.

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("cube_5-5-5")
>>> geo = MidgeGeometry.of(p)
>>> s = p.apply_moves(np.asarray(p.goal()), list(midge_moves(p).actions[100]))
>>> bool(centres_home(geo, s) and wings_paired(geo, s) and not midges_matched(geo, s))
True
>>> moves = pair_midges(p, s)
>>> bool(midges_matched(geo, p.apply_moves(s, moves)))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from puzzlezero.classic.cube5_geometry import (
    CubeGeometry5,
    as_rows,
    centres_home,
    cube_geometry,
    macro_actions,
    wings_paired,
)
from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock

__all__ = [
    "MidgeGeometry",
    "MidgeMoves",
    "centres_home",
    "finish_moves",
    "midge_moves",
    "midges_matched",
    "pair_midges",
    "unmatched",
    "wings_paired",
]

#: the beam's width
MIDGE_BEAM = 600
#: each unmatched edge counts as this many moves in the beam's ranking
MIDGE_WEIGHT = 2.0
#: the outer turns in the beam's conjugates' ``X`` (at most)
MIDGE_REACH = 5
#: the outer turns in the beam's half-turn conjugates' ``X`` (``m2 X m2``; 0: none)
HALF_REACH = 3
#: the outer turns in the finishing conjugates' ``X``
FINISH_REACH = 5
#: the beam's best states tried with the finishing moves
FINISH_WIDTH = 0
#: the finishing moves are tried once this few edges are unmatched
FINISH_AT = 3
#: children ranked, of each step's, before the duplicates among them are dropped (times the width)
OVERSAMPLE = 3
#: steps the beam goes on after its first match, while a path in it could end cheaper
MORE_STEPS = 2
#: the beam's scores are whole numbers: this many per move (the weight is rounded to its fractions)
SCALE = 4
#: and this many times that, for the ties to be broken by the matched edges
TIES = 13
#: the most states of one relation of midges to wing pairs (:func:`_relations`) in the beam
#: (0: no limit): states that differ by outer turns alone crowd out others
PER_RELATION = 16
#: steps in a row without a child matching more edges after which a beam gives up
PATIENCE = 6
#: where a beam gives up, the beam again with each of these in turn: (its weight plus this, at
#: most this many states of each relation): a heavier weight and fewer states that differ by outer
#: turns alone move the beam off a plateau (such as many midges flipped in place)
RETRIES = ((1.0, 2), (2.0, 1))
#: the most steps the beam takes
MIDGE_MAX_STEPS = 60


# --------------------------------------------------------------------------------------------
# the edges' tables, from the cube's geometry


@dataclass(frozen=True)
class MidgeGeometry(CubeGeometry5):
    """The 5x5x5's geometry (:class:`~puzzlezero.classic.cube5_geometry.CubeGeometry5`) with the
    midges' tables.

    ``track`` lists the 48 stickers the beam follows: each edge's midge sticker on its first face
    and on its second (``2 * edge + side``), then each edge's first wing sticker on its first face
    and on its second (``24 + 2 * edge + side``); ``rep`` maps every midge and wing sticker to the
    tracked one that shows its colour in a state whose wings are paired."""

    #: ``int[12, 2]``: each edge's midge stickers (first face, second face), the edges in the order
    #: of their faces
    edge_midges: np.ndarray
    #: ``int[12, 2, 2]``: each edge's wing stickers, ``[edge, side, wing]``
    edge_wings: np.ndarray
    #: ``int[48]``: the tracked stickers
    track: np.ndarray
    #: ``int[150]``: each midge or wing sticker's tracked index, -1 for the others
    rep: np.ndarray

    @staticmethod
    def of(puzzle: Puzzle) -> MidgeGeometry:
        """The geometry of a 5x5x5 in the competition's layout (a :class:`PuzzleError` if the
        puzzle's pieces are not a 5x5x5's)."""
        return _geometry(puzzle)


@lru_cache(maxsize=2)
def _geometry(puzzle: Puzzle) -> MidgeGeometry:
    cube = cube_geometry(puzzle, "the midge pairing")
    # the edges (x1, x2, xm, y1, y2, ym: x the lower face), in the order of their faces; each side's
    # wings in the order of their stickers on the first face
    edges = cube.edges[np.lexsort((cube.edges[:, 3] // 25, cube.edges[:, 0] // 25))]
    swap = (edges[:, 0] > edges[:, 1])[:, None]
    edge_wings = np.stack(
        [np.where(swap, edges[:, 1::-1], edges[:, :2]), np.where(swap, edges[:, 4:2:-1], edges[:, 3:5])],
        axis=1,
    )
    edge_midges = edges[:, [2, 5]]
    track = np.concatenate([edge_midges.reshape(-1), edge_wings[:, :, 0].reshape(-1)])
    rep = np.full(150, -1)
    rep[edge_midges.reshape(-1)] = np.arange(24)
    for w in range(2):
        rep[edge_wings[:, :, w].reshape(-1)] = 24 + np.arange(24)
    return MidgeGeometry(**cube.facts(), edge_midges=edge_midges, edge_wings=edge_wings, track=track, rep=rep)


# --------------------------------------------------------------------------------------------
# the state's checks


def unmatched(geo: MidgeGeometry, states: np.ndarray) -> np.ndarray:
    """``int[k]``: the edges whose midge does not show its wings' colour on both faces."""
    s = as_rows(states)
    return (s[:, geo.edge_midges] != s[:, geo.edge_wings[..., 0]]).any(axis=2).sum(axis=1)


def midges_matched(geo: MidgeGeometry, states: np.ndarray) -> np.ndarray | bool:
    """Does every midge show its wings' colours on both faces?"""
    out = unmatched(geo, states) == 0
    return bool(out[0]) if np.ndim(states) == 1 else out


# --------------------------------------------------------------------------------------------
# the beam's moves


@dataclass(frozen=True)
class MidgeMoves:
    """Moves that keep the centres home and the wings paired, one of each effect on the midges
    and wings, with their permutations of the 48 tracked stickers."""

    #: each move's actions (the puzzle's moves)
    actions: tuple[tuple[int, ...], ...]
    #: ``int[M, 48]``: each move's permutation of the tracked stickers (``child = parent[perm]``)
    perms: np.ndarray
    #: ``int[M]``: each move's cost
    costs: np.ndarray
    #: ``int[12, M]``: for each edge of each move's child, where its midge and wing pair come from
    #: in the parent: ``(12 * midge + wing) * 2 + flip`` (:func:`_matches`)
    edge_index: np.ndarray

    @staticmethod
    def of(actions: Sequence[tuple[int, ...]], perms: np.ndarray) -> MidgeMoves:
        """The moves of these actions and permutations of the tracked stickers."""
        perms = np.asarray(perms, np.int64).reshape(len(actions), 48)
        midge, wing = perms[:, 0:24:2], perms[:, 24::2] - 24  # the stickers on each edge's first face
        flip = (midge % 2) ^ (wing % 2)
        return MidgeMoves(
            tuple(actions),
            perms,
            np.array([len(a) for a in actions], np.int64),
            np.ascontiguousarray(((12 * (midge // 2) + wing // 2) * 2 + flip).T),
        )

    def __len__(self) -> int:
        return len(self.actions)


@lru_cache(maxsize=8)
def _outer_sequences(puzzle: Puzzle, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Every sequence of ``length`` outer quarter turns without a turn next to its inverse
    (``int[S, length]``) and its permutation of the stickers (``uint8[S, 150]``, ``child =
    parent[perm]``), each grown from the sequences one turn shorter."""
    geo = _geometry(puzzle)
    if length == 0:
        return np.zeros((1, 0), np.int64), np.arange(150, dtype=np.uint8)[None]
    inverse = np.asarray(puzzle.inverse_action)
    outer = np.flatnonzero(geo.outer)
    seqs, effects = _outer_sequences(puzzle, length - 1)
    parent = np.repeat(np.arange(len(seqs)), len(outer))
    last = np.tile(outer, len(seqs))
    if length > 1:
        ok = last != inverse[seqs[parent, -1]]
        parent, last = parent[ok], last[ok]
    grown = np.concatenate([seqs[parent], last[:, None]], axis=1)
    return grown, np.take_along_axis(effects[parent], geo.perms[last], axis=1)


def _conjugates(puzzle: Puzzle, length: int, *, half: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every ``m X m'`` (``m`` a middle slice's quarter turn, or its half turn ``m m X m m`` if
    ``half``; ``X`` of ``length`` outer turns) that keeps the centres home, checked by its effect
    on the goal: ``int[K, length + 2]`` (``+ 4`` if ``half``) actions and ``int[K, 48]`` their
    permutations of the tracked stickers. A face ``m`` turns must turn a half turn or none in
    ``X``, for ``m'`` to bring the band of centres ``m`` moved back to it."""
    geo = _geometry(puzzle)
    perms, goal = geo.perms, geo.goal
    inverse = np.asarray(puzzle.inverse_action)
    seqs, effects = _outer_sequences(puzzle, length)
    rot = np.zeros((len(seqs), 6), np.int64)
    for i in range(length):
        np.add.at(rot, (np.arange(len(seqs)), geo.turned_face[seqs[:, i]]), geo.sense[seqs[:, i]])
    actions, reduced = [], []
    for m in np.flatnonzero(geo.middle):
        even = (rot[:, geo.side_faces[m]] % 2 == 0).all(axis=1)
        keep = seqs[even]
        if len(keep) == 0:
            continue
        effect = effects[even].astype(np.intp)
        if half:
            twice = perms[m][perms[m]]
            effect = twice[effect[:, twice]]
            before, after = [m, m], [m, m]
        else:
            effect = perms[m][effect[:, perms[inverse[m]]]]
            before, after = [m], [inverse[m]]
        home = (goal[effect[:, geo.centres]] == geo.centre_labels).all(axis=1)
        k = int(home.sum())
        actions.append(np.concatenate([np.tile(before, (k, 1)), keep[home], np.tile(after, (k, 1))], axis=1))
        reduced.append(geo.rep[effect[home][:, geo.track]])
    width = length + (4 if half else 2)
    if not actions:
        return np.zeros((0, width), np.int64), np.zeros((0, 48), np.int64)
    return np.concatenate(actions).astype(np.int64), np.concatenate(reduced).astype(np.int64)


def _keys(puzzle: Puzzle, reduced: np.ndarray) -> np.ndarray:
    """``uint64[K]``: a hash of each permutation of the tracked stickers."""
    return np.asarray(puzzle.hash64(np.ascontiguousarray(reduced, dtype=np.uint8)))


def _distinct(
    puzzle: Puzzle, groups: Sequence[tuple[np.ndarray, np.ndarray]], exclude: np.ndarray
) -> MidgeMoves:
    """The first move of each effect of ``groups`` (``(actions, tracked permutations)``, the
    cheapest first), none whose effect's key is in ``exclude``."""
    keys = np.concatenate([_keys(puzzle, red) for _, red in groups])
    reduced = np.concatenate([red for _, red in groups])
    group = np.repeat(np.arange(len(groups)), [len(red) for _, red in groups])
    at = np.concatenate([np.arange(len(red)) for _, red in groups])
    _, first = np.unique(keys, return_index=True)
    first = np.sort(first)
    first = first[~np.isin(keys[first], exclude)]
    actions = [tuple(groups[group[i]][0][at[i]].tolist()) for i in first]
    return MidgeMoves.of(actions, reduced[first])


@lru_cache(maxsize=4)
def _outer_keys(puzzle: Puzzle, reach: int) -> np.ndarray:
    """The keys of the effects of every sequence of one to ``reach`` outer turns."""
    geo = _geometry(puzzle)
    return np.concatenate(
        [_keys(puzzle, geo.rep[_outer_sequences(puzzle, n)[1][:, geo.track]]) for n in range(1, reach + 1)]
    )


@lru_cache(maxsize=8)
def midge_moves(puzzle: Puzzle, reach: int = MIDGE_REACH, half_reach: int = HALF_REACH) -> MidgeMoves:
    """The beam's moves: the 12 outer quarter turns, every ``m X m'`` with ``X`` of two to
    ``reach`` outer turns that keeps the centres home, and every ``m2 X m2`` with ``X`` of one to
    ``half_reach`` (:func:`_conjugates`): one of each effect on the tracked stickers, the cheapest,
    none with an effect that outer turns alone have (up to ``reach`` of them)."""
    geo = _geometry(puzzle)
    outer = np.flatnonzero(geo.outer)
    groups = [(outer[:, None], geo.rep[geo.perms[outer][:, geo.track]])]
    quarter = {n: _conjugates(puzzle, n) for n in range(2, reach + 1)}
    halves = {n: _conjugates(puzzle, n, half=True) for n in range(1, half_reach + 1)}
    for cost in range(1, max(reach + 2, half_reach + 4) + 1):
        if cost - 2 in quarter:
            groups.append(quarter[cost - 2])
        if cost - 4 in halves:
            groups.append(halves[cost - 4])
    outer_keys = _outer_keys(puzzle, reach)
    singles = _keys(puzzle, groups[0][1])
    return _distinct(puzzle, groups, outer_keys[~np.isin(outer_keys, singles)])


@lru_cache(maxsize=4)
def finish_moves(puzzle: Puzzle, reach: int = FINISH_REACH) -> MidgeMoves:
    """The last edges' moves: every ``m X m'`` with ``X`` of exactly ``reach`` outer turns that
    keeps the centres home, one of each effect, none that :func:`midge_moves` of ``reach - 1`` has
    (nor outer turns alone)."""
    have = np.concatenate(
        [_keys(puzzle, midge_moves(puzzle, reach - 1).perms), _outer_keys(puzzle, reach - 1)]
    )
    return _distinct(puzzle, [_conjugates(puzzle, reach)], have)


# --------------------------------------------------------------------------------------------
# the beam


def _matches(beam: np.ndarray) -> np.ndarray:
    """``uint8[288, n]``: for each of ``n`` states, does the midge now at edge ``i`` match the wing
    pair now at edge ``j`` (row ``(12 * i + j) * 2 + flip``), turned over (``flip`` 1) or not?"""
    n = len(beam)
    mid = beam[:, :24].reshape(n, 12, 1, 2)
    wing = beam[:, 24:].reshape(n, 1, 12, 2)
    straight = (mid == wing).all(axis=3)
    turned = (mid == wing[..., ::-1]).all(axis=3)
    both = np.stack([straight, turned], axis=3).reshape(n, 288)
    return np.ascontiguousarray(both.T).view(np.uint8)


def _matched_edges(beam: np.ndarray, moves: MidgeMoves) -> np.ndarray:
    """``uint8[M, n]``: the matched edges of each state's child by each move, read from the
    states' :func:`_matches` (no child built)."""
    table = _matches(beam)
    out = table[moves.edge_index[0]]
    for e in range(1, 12):
        out += table[moves.edge_index[e]]
    return out


class _KidCosts:
    """The costs of a step's children (child ``k``: move ``k // n`` from parent ``k % n``), read
    where asked rather than built for all."""

    def __init__(self, costs: np.ndarray, g: np.ndarray) -> None:
        self.costs, self.g = costs, g

    def __getitem__(self, k: np.ndarray | int) -> np.ndarray:
        k = np.asarray(k)
        return self.costs[k // len(self.g)] + self.g[k % len(self.g)]

    def min(self) -> int:
        return int(self.costs.min() + self.g.min())


def _best(score: np.ndarray, count: int) -> np.ndarray:
    """The indices of the ``count`` lowest of ``score`` (small whole numbers), lowest first, ties in
    index order: a threshold from the scores' histogram, then those under it and enough at it."""
    if len(score) <= count:
        return np.argsort(score, kind="stable")
    low = int(score.min())
    shifted = score - score.dtype.type(low)
    cut = int(np.searchsorted(np.cumsum(np.bincount(shifted)), count))
    under = np.flatnonzero(shifted < cut)
    at = np.flatnonzero(shifted == cut)[: count - len(under)]
    pick = np.concatenate([under, at])
    return pick[np.argsort(score[pick], kind="stable")]


def _relations(puzzle: Puzzle, states: np.ndarray) -> np.ndarray:
    """``uint64[k]``: a key of each state's midges relative to its wing pairs (which midge stands
    with which pair, which way round), what outer turns do not change: each edge's wing and midge
    colours (the pair's colours in order), sorted over the edges, hashed."""
    n = len(states)
    mid = states[:, :24].reshape(n, 12, 2).astype(np.int64)
    wing = states[:, 24:].reshape(n, 12, 2).astype(np.int64)
    swap = wing[..., 0] > wing[..., 1]
    wing = np.where(swap[..., None], wing[..., ::-1], wing)
    mid = np.where(swap[..., None], mid[..., ::-1], mid)
    codes = ((wing[..., 0] * 8 + wing[..., 1]) * 8 + mid[..., 0]) * 8 + mid[..., 1]
    return np.asarray(puzzle.hash64(np.sort(codes, axis=1).astype(np.uint16)))


def _rank_within(keys: np.ndarray) -> np.ndarray:
    """``int[k]``: how many earlier entries have each entry's key."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(keys)), 0))
    rank = np.empty(len(keys), np.int64)
    rank[order] = np.arange(len(keys)) - group_start
    return rank


def _path(parents: list[np.ndarray], steps: list[np.ndarray], k: int) -> list[int]:
    """The macro indices that lead to the ``k``-th state of the last beam."""
    out: list[int] = []
    for parent, step in zip(reversed(parents), reversed(steps), strict=True):
        out.append(int(step[k]))
        k = int(parent[k])
    return out[::-1]


def pair_midges(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    width: int = MIDGE_BEAM,
    weight: float = MIDGE_WEIGHT,
    reach: int = MIDGE_REACH,
    half_reach: int = HALF_REACH,
    finish_width: int = FINISH_WIDTH,
    finish_at: int = FINISH_AT,
    more_steps: int = MORE_STEPS,
    per_relation: int = PER_RELATION,
    patience: int = PATIENCE,
    retries: Sequence[tuple[float, int]] = RETRIES,
    deadline: float | None = None,
    max_steps: int = MIDGE_MAX_STEPS,
) -> list[int] | None:
    """Moves that match every midge with its wings, from a state whose centres are home and whose
    wings are paired, keeping both.

    A beam of ``width`` over :func:`midge_moves` (``X`` of up to ``reach`` outer turns, half-turn
    conjugates up to ``half_reach``), each path ranked by its cost plus ``weight`` times its
    unmatched edges (:func:`_beam`); where it stalls (``patience`` steps with no child matching
    more edges than before, or ``max_steps`` steps), the beam again with each of ``retries`` in
    turn: ``(extra weight, per_relation)`` (a weight under the moves' cost per edge leaves the beam
    to children that turn the outer layers alone). ``None`` if every beam stalls or the ``deadline``
    (a :func:`clock.now` reading) passes first; an :class:`InvalidStateError` if the centres are not
    home or the wings not paired."""
    geo = _geometry(puzzle)
    start = np.asarray(state).reshape(-1)
    if not centres_home(geo, start) or not wings_paired(geo, start):
        raise InvalidStateError("the midges are paired from a state whose centres are home and wings paired")
    if midges_matched(geo, start):
        return []
    moves = midge_moves(puzzle, reach, half_reach)
    finish = finish_moves(puzzle, reach + 1) if finish_width > 0 else None
    for w, per in ((weight, per_relation), *((weight + extra, p) for extra, p in retries)):
        found = _beam(
            puzzle,
            start[geo.track],
            moves,
            finish,
            width=width,
            weight=w,
            finish_width=finish_width,
            finish_at=finish_at,
            more_steps=more_steps,
            per_relation=per,
            patience=patience,
            deadline=deadline,
            max_steps=max_steps,
        )
        if found is not None:
            return found
        if deadline is not None and clock.now() > deadline:
            break
    return None


def _beam(
    puzzle: Puzzle,
    start: np.ndarray,
    moves: MidgeMoves,
    finish: MidgeMoves | None,
    *,
    width: int,
    weight: float,
    finish_width: int,
    finish_at: int,
    more_steps: int,
    per_relation: int,
    patience: int,
    deadline: float | None,
    max_steps: int,
) -> list[int] | None:
    """The pairing beam from ``start`` (its 48 tracked stickers).

    Each step, every child of every state in the beam is scored by its cost plus ``weight`` times
    its unmatched edges (read from the parent, :func:`_matched_edges`); the best
    ``OVERSAMPLE * width`` are built, duplicates dropped (``puzzle.hash64`` of the tracked
    stickers; the cheapest of equal states is kept), at most ``per_relation`` of each relation of
    midges to wing pairs kept (:func:`_relations`; 0: any number), and the best ``width`` of those
    make the next beam. Once a step's children have ``finish_at`` or fewer unmatched edges, its best
    ``finish_width`` are tried with ``finish``'s moves as well. The first step where some child
    matches every edge gives an answer, the cheapest; up to ``more_steps`` steps more look for a
    cheaper one while the beam's cheapest child could still be. ``None`` if ``max_steps`` steps,
    ``patience`` steps without a child matching more edges than before, or the ``deadline`` pass
    first (with an answer found, that answer)."""
    beam = start[None]
    g = np.zeros(1, np.int64)
    # scores in whole numbers: TIES * (SCALE * cost - round(SCALE * weight) * matched edges), less
    # the matched edges again (of equal scores, the more matched first)
    per_edge = np.int32(round(SCALE * weight) * TIES + 1)
    costs = moves.costs.astype(np.int32) * np.int32(SCALE * TIES)
    parents: list[np.ndarray] = []
    steps: list[np.ndarray] = []
    answer: tuple[int, list[int]] | None = None  # the cheapest (cost, macro path) found
    extra = 0
    most, since = -1, 0  # the most edges a child has matched, and the steps since it grew
    for _ in range(max_steps):
        if deadline is not None and clock.now() > deadline:
            break
        n = len(beam)
        # children by move, then parent: child k is move k // n from parent k % n
        matched = _matched_edges(beam, moves)  # [M, n]
        score = costs[:, None] + (g * SCALE * TIES).astype(np.int32)[None, :]
        score -= per_edge * matched
        score = score.reshape(-1)
        kid_g = _KidCosts(moves.costs, g)
        found: list[tuple[int, list[int]]] = []
        done = np.flatnonzero(matched.reshape(-1) == 12)
        if len(done):
            k = int(done[np.argmin(kid_g[done])])
            found.append((int(kid_g[k]), [*_path(parents, steps, k % n), k // n]))
        if finish is not None and 12 - int(matched.max()) <= finish_at:
            best = _best(score, finish_width)
            kids = beam[best % n][np.arange(len(best))[:, None], moves.perms[best // n]]
            fin = np.flatnonzero(_matched_edges(kids, finish).reshape(-1) == 12)  # move * len(best) + kid
            if len(fin):
                cost = kid_g[best[fin % len(best)]] + finish.costs[fin // len(best)]
                i = int(np.argmin(cost))
                b = int(best[fin[i] % len(best)])
                found.append(
                    (int(cost[i]), [*_path(parents, steps, b % n), b // n, -1 - int(fin[i] // len(best))])
                )
        for cost_found, path in found:
            if answer is None or cost_found < answer[0]:
                answer = (cost_found, path)
        if answer is not None:
            # a few steps more, while a path in the beam could still end cheaper
            extra += 1
            if extra > more_steps or answer[0] <= kid_g.min() + int(moves.costs.min()):
                break
        most, since = (int(matched.max()), 0) if matched.max() > most else (most, since + 1)
        if since >= patience:
            break
        # the best children, duplicates dropped (the cheaper of equal states ranks first)
        pick = _best(score, OVERSAMPLE * width)
        parent, move = pick % n, pick // n
        kids = beam[parent[:, None], moves.perms[move]]
        _, first = np.unique(puzzle.hash64(kids), return_index=True)
        keep = np.sort(first)
        if per_relation:
            keep = keep[_rank_within(_relations(puzzle, kids[keep])) < per_relation]
        keep = keep[:width]
        beam, g = kids[keep], kid_g[pick[keep]]
        parents.append(parent[keep])
        steps.append(move[keep])
    return (
        None
        if answer is None
        else macro_actions(answer[1], moves.actions, None if finish is None else finish.actions)
    )
