"""Kociemba's two-phase algorithm in the quarter-turn metric (numba), an anytime cube3 solver.

H. Kociemba's algorithm (Cube Explorer; "Close to God's algorithm", Cubism For Fun 28, 1992)
splits a solve at the subgroup ``G1 = <U, D, R2, L2, F2, B2>``:

1. **Phase 1** brings the cube into G1 (every corner twist and edge flip 0, the four E-slice edges
   in the E slice) by IDA* over three coordinates: the corners' twist (3^7), the edges' flip
   (2^11) and the slice edges' places (12 choose 4). Its heuristic is exact: a breadth-first table
   of the phase-1 distance of every (flip-slice class, twist), the flip-slice pairs cut to 64,430
   classes by the 16 symmetries that keep the U-D axis (141 MB, cached like the pattern databases).
2. **Phase 2** solves within G1 with its ten moves, here ``U U' D D'`` (one quarter turn each)
   and ``R2 L2 F2 B2`` (two each), by IDA* over the corners' permutation (8!), the U/D edges'
   permutation (8!) and the slice edges' permutation (4!); its heuristic the larger of two tables
   of quarter-turn distances (corners x slice, edges x slice).

The search does not stop at the first solution: phase 1 enumerates every solution of length
``L1 = h, h + 1, ...``, and each is completed by the shortest phase 2 that improves on the best
total so far, until phase 1 alone is as long as the best answer or the time is up. Answers so
come sooner and shorter with time, and end optimal if the search is let finish (it seldom is).
Every quarter-turn answer of a cube has the parity of its corner permutation, so each improvement
is two moves shorter and a phase 2 is searched only at bounds of its own parity.

As in Cube Explorer, the cube is searched in six guises at once, the three that put each axis
upright and their inverses, phase-1 depth by depth in turn: a good phase 1 of one guise is often
not of another. Each answer is mapped back, its runs of turns about one axis merged, and replayed.

Phase 1's table takes about ten seconds to build, once; the others (about 10 MB) are built in a
fraction of a second in each process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cache
from typing import Any

import numba as nb
import numpy as np

from puzzlezero.classic.optimal.cube_ida import cube_actions, cube_pieces
from puzzlezero.classic.optimal.cube_model import (
    CORNER_MOVE,
    EDGE_MOVE,
    SOLVED,
    facelets_to_pieces,
)
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, Status, check_positive

__all__ = [
    "TwoPhaseTables", "two_phase_tables", "solve_two_phase", "merge_axis_runs", "invert_pieces", "memory_estimate",
    "prepare_tables", "Metric", "Guise", "Answers", "search_guises", "build_tables", "quarter_turn_metric",
]  # fmt: skip

N_TWIST, N_FLIP, N_SLICE = 2187, 2048, 495
N_PERM8, N_PERM4 = 40320, 24
#: the slice coordinate of the solved cube (the E-slice edges FR FL BL BR in their places)
SLICE_HOME = 494
_MAX_DEPTH = 64
_CHUNK = 1 << 20  # phase-1 nodes per kernel call, between two readings of the clock
FOUND, DONE, PAUSED = 1, 0, -1


# --- coordinates over position-centric arrays (cp[i]: the piece at position i) ----------------------


@nb.njit(cache=True)
def _perm_rank(p):  # fmt: skip
    """Lehmer rank of a permutation of ``0..n-1`` (the identity is 0)."""
    n = p.shape[0]
    r = 0
    for i in range(n):
        smaller = 0
        for j in range(i + 1, n):
            if p[j] < p[i]:
                smaller += 1
        r = r * (n - i) + smaller
    return r


@nb.njit(cache=True)
def _perm_unrank(r, n):  # fmt: skip
    digits = np.empty(n, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        base = n - i
        digits[i] = r % base
        r //= base
    free = np.ones(n, dtype=np.bool_)
    p = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = digits[i]
        for v in range(n):
            if free[v]:
                if k == 0:
                    p[i] = v
                    free[v] = False
                    break
                k -= 1
    return p


@nb.njit(cache=True)
def _binom(n, k):  # fmt: skip
    if k < 0 or k > n:
        return 0
    r = 1
    for i in range(k):
        r = r * (n - i) // (i + 1)
    return r


@nb.njit(cache=True)
def _slice_rank(ep):  # fmt: skip
    """Combination rank of the places of the slice edges (pieces 8-11) among the 12 places."""
    r, k = 0, 0
    for pos in range(12):
        if ep[pos] >= 8:
            k += 1
            r += _binom(pos, k)
    return r


@nb.njit(cache=True)
def _slice_unrank(r):  # fmt: skip
    """Some edge arrangement with the slice edges at the places of rank ``r``."""
    ep = np.empty(12, dtype=np.int64)
    k = 4
    nxt_slice, nxt_other = 8, 0
    for pos in range(11, -1, -1):
        if k > 0 and _binom(pos, k) <= r:
            r -= _binom(pos, k)
            k -= 1
            ep[pos] = nxt_slice
            nxt_slice += 1
        else:
            ep[pos] = nxt_other
            nxt_other += 1
    return ep


@nb.njit(cache=True)
def _position_moves(cmove, emove):  # fmt: skip
    """Position-centric form of the moves of the piece tables ``cmove``, ``emove`` (value ->
    value, a column a move): ``cdest[m, i]``, ``ctw[m, i]``: where the corner at position ``i``
    goes and the twist it gains; ``edest``, ``efl`` likewise for edges."""
    nm = cmove.shape[1]
    cdest = np.empty((nm, 8), dtype=np.int64)
    ctw = np.empty((nm, 8), dtype=np.int64)
    edest = np.empty((nm, 12), dtype=np.int64)
    efl = np.empty((nm, 12), dtype=np.int64)
    for m in range(nm):
        for i in range(8):
            v = cmove[i * 3, m]
            cdest[m, i] = v // 3
            ctw[m, i] = v % 3
        for i in range(12):
            v = emove[i * 2, m]
            edest[m, i] = v // 2
            efl[m, i] = v % 2
    return cdest, ctw, edest, efl


@nb.njit(cache=True)
def _phase1_moves(cdest, ctw, edest, efl):  # fmt: skip
    nm = cdest.shape[0]
    tw_move = np.empty((N_TWIST, nm), dtype=np.int32)
    fl_move = np.empty((N_FLIP, nm), dtype=np.int32)
    sl_move = np.empty((N_SLICE, nm), dtype=np.int32)
    co = np.empty(8, dtype=np.int64)
    nco = np.empty(8, dtype=np.int64)
    for c in range(N_TWIST):
        r, s = c, 0
        for i in range(6, -1, -1):
            co[i] = r % 3
            s += co[i]
            r //= 3
        co[7] = (3 - s % 3) % 3
        for m in range(nm):
            for i in range(8):
                nco[cdest[m, i]] = (co[i] + ctw[m, i]) % 3
            v = 0
            for i in range(7):
                v = v * 3 + nco[i]
            tw_move[c, m] = v
    eo = np.empty(12, dtype=np.int64)
    neo = np.empty(12, dtype=np.int64)
    for c in range(N_FLIP):
        r, s = c, 0
        for i in range(10, -1, -1):
            eo[i] = r % 2
            s += eo[i]
            r //= 2
        eo[11] = s % 2
        for m in range(nm):
            for i in range(12):
                neo[edest[m, i]] = (eo[i] + efl[m, i]) % 2
            v = 0
            for i in range(11):
                v = v * 2 + neo[i]
            fl_move[c, m] = v
    nep = np.empty(12, dtype=np.int64)
    for c in range(N_SLICE):
        ep = _slice_unrank(c)
        for m in range(nm):
            for i in range(12):
                nep[edest[m, i]] = ep[i]
            sl_move[c, m] = _slice_rank(nep)
    return tw_move, fl_move, sl_move


@nb.njit(cache=True)
def _turned(full, turns, dest, n):  # fmt: skip
    """``full[:n]`` (the piece at each place) after the quarter turns ``turns`` (``-1``: none)."""
    tmp = np.empty(n, dtype=np.int64)
    for m in turns:
        if m < 0:
            continue
        for i in range(n):
            tmp[dest[m, i]] = full[i]
        full[:n] = tmp


@nb.njit(cache=True)
def _phase2_moves(cdest, edest, turns):  # fmt: skip
    """Moves of the three phase-2 permutations under the phase-2 moves ``turns`` (``int64[n, 2]``:
    each one or two of the moves of ``cdest``, ``edest``; ``-1``: none)."""
    n2 = turns.shape[0]
    cp_move = np.empty((N_PERM8, n2), dtype=np.int32)
    ep_move = np.empty((N_PERM8, n2), dtype=np.int32)
    sp_move = np.empty((N_PERM4, n2), dtype=np.int32)
    full = np.empty(12, dtype=np.int64)
    for c in range(N_PERM8):
        p = _perm_unrank(c, 8)
        for k in range(n2):
            full[:8] = p
            _turned(full, turns[k], cdest, 8)
            cp_move[c, k] = _perm_rank(full[:8].copy())
        for k in range(n2):  # the U/D edges stay in places 0-7 under phase-2 moves
            full[:8] = p
            full[8:] = np.arange(8, 12)
            _turned(full, turns[k], edest, 12)
            ep_move[c, k] = _perm_rank(full[:8].copy())
    for c in range(N_PERM4):
        p = _perm_unrank(c, 4)
        for k in range(n2):
            full[:8] = np.arange(8)
            full[8:] = 8 + p
            _turned(full, turns[k], edest, 12)
            sp_move[c, k] = _perm_rank(full[8:] - 8)
    return cp_move, ep_move, sp_move


@nb.njit(cache=True)
def _bfs_pair(a_move, b_move, na, nb_, goal, costs):  # fmt: skip
    """Distances ``int8[na * nb_]`` from ``goal`` over the pair coordinate ``a * nb_ + b``, each move
    costing ``costs[m]`` (1 or 2): layer by layer, a layer final before it is expanded."""
    n = na * nb_
    dist = np.full(n, -1, dtype=np.int8)
    dist[goal] = 0
    nmoves = a_move.shape[1]
    d, done, left = 0, 0, 1
    while left > 0:
        left = 0
        for x in range(n):
            if dist[x] != d:
                continue
            done += 1
            a, b = x // nb_, x % nb_
            for m in range(nmoves):
                y = np.int64(a_move[a, m]) * nb_ + b_move[b, m]
                nd = d + costs[m]
                if dist[y] < 0 or dist[y] > nd:
                    dist[y] = nd
        for x in range(n):
            if dist[x] > d:
                left += 1
        d += 1
    return dist


@nb.njit(cache=True)
def _conjugates(move_a, move_b, nb_, maps, home):  # fmt: skip
    """``int32[na * nb_, S]``: the pair coordinate ``a * nb_ + b`` of each symmetry's image of a cube
    (``maps[j, m]``: the move that symmetry ``j`` makes of move ``m``), found by a breadth-first walk
    from ``home`` (every symmetry's own image): the image of ``x`` turned by ``m`` is the image of
    ``x`` turned by ``maps[j, m]``. ``nb_ == 1`` with ``move_b`` ignored: a single coordinate.
    Returns the table and whether every second way to a coordinate agreed (the images are a
    function of the coordinate)."""
    na = move_a.shape[0]
    n = na * nb_
    ns = maps.shape[0]
    conj = np.full((n, ns), -1, dtype=np.int32)
    conj[home, :] = home
    queue = np.empty(n, dtype=np.int64)
    queue[0] = home
    head, tail = 0, 1
    consistent = True
    while head < tail:
        x = queue[head]
        head += 1
        a, b = x // nb_, x % nb_
        for m in range(12):
            y = np.int64(move_a[a, m]) * nb_ + (move_b[b, m] if nb_ > 1 else 0)
            fresh = conj[y, 0] < 0
            for j in range(ns):
                cx = conj[x, j]
                ca, cb = cx // nb_, cx % nb_
                mj = maps[j, m]
                cy = np.int64(move_a[ca, mj]) * nb_ + (move_b[cb, mj] if nb_ > 1 else 0)
                if fresh:
                    conj[y, j] = cy
                elif conj[y, j] != cy:
                    consistent = False
            if fresh:
                queue[tail] = y
                tail += 1
    return conj, consistent


@nb.njit(cache=True)
def _phase1_table(reps, fs_class, fs_sym, stab, tw_move, fl_move, sl_move, twist_conj):  # fmt: skip
    """Exact phase-1 distances ``int8[classes * 2187]`` over (flip-slice class, twist seen from the
    class's representative), breadth first: forward while the frontier is small, then backward
    (each unreached entry looks for a neighbour in the last layer). An entry set also sets the
    entries its class's own symmetries make of it (``stab``: a bit per symmetry)."""
    nc = reps.shape[0]
    n = nc * N_TWIST
    ns = twist_conj.shape[1]
    dist = np.full(n, -1, dtype=np.int8)
    home = fs_class[SLICE_HOME * N_FLIP]
    dist[home * N_TWIST] = 0
    filled, d = 1, 0
    while filled < n:
        backward = filled > n // 8
        for idx in range(n):
            if backward:
                if dist[idx] >= 0:
                    continue
            elif dist[idx] != d:
                continue
            c, t = idx // N_TWIST, idx % N_TWIST
            fs = reps[c]
            fl, sl = fs % N_FLIP, fs // N_FLIP
            for m in range(tw_move.shape[1]):
                fs2 = np.int64(sl_move[sl, m]) * N_FLIP + fl_move[fl, m]
                c2 = fs_class[fs2]
                t2 = twist_conj[tw_move[t, m], fs_sym[fs2]]
                kid = np.int64(c2) * N_TWIST + t2
                if backward:
                    if dist[kid] == d:
                        target_c, target_t = c, t
                    else:
                        continue
                else:
                    if dist[kid] >= 0:
                        continue
                    target_c, target_t = c2, t2
                bits = stab[target_c]
                for j in range(ns):
                    if (bits >> j) & 1:
                        e = np.int64(target_c) * N_TWIST + twist_conj[target_t, j]
                        if dist[e] < 0:
                            dist[e] = d + 1
                            filled += 1
                if backward:
                    break
        d += 1
    return dist


def _ud_symmetries() -> tuple[np.ndarray, np.ndarray]:
    """The 16 symmetries of the cube that keep the U-D axis (indices of
    :func:`~puzzlezero.puzzles.cube.symmetry.cube_symmetries`, the identity first) and
    ``int64[16, 12]``: the kernel move each makes of each kernel move."""
    from puzzlezero.puzzles.cube.rules import Cube3
    from puzzlezero.puzzles.cube.symmetry import cube_symmetries

    cube = Cube3()
    sym = cube_symmetries(cube)
    ids = cube_actions(cube)
    kernel = {a: m for m, a in enumerate(ids)}
    syms, maps = [], []
    for k in range(48):
        mapped = [kernel[int(a)] for a in sym.map_actions(list(ids), k)]
        if mapped[0] >> 1 in (0, 3):  # U turns to U or D
            syms.append(k)
            maps.append(mapped)
    return np.array(syms, dtype=np.int64), np.array(maps, dtype=np.int64)


@dataclass(frozen=True)
class Metric:
    """The moves a two-phase search turns and what each costs (one), as kernel moves
    ``2 * layer + (0, 1)``: a move and its inverse, the layers numbered axis by axis.

    ``cmove``, ``emove``: the corners' and edges' piece tables (``int64[24, M]``, value -> value,
    a column a move: :data:`~puzzlezero.classic.optimal.cube_model.CORNER_MOVE`'s layout);
    ``axis``, ``layer``: each move's axis and its layer's place along it (moves of one axis commute
    and are searched in the order of their layers); ``ce_move``: the centres' arrangements
    (``int64[C, M]``, arrangement 0 home; one arrangement where the centres stay) and
    ``ce_parity`` each one's permutation parity, which with the corners' fixes every answer's
    parity."""

    name: str
    cmove: np.ndarray
    emove: np.ndarray
    axis: np.ndarray
    layer: np.ndarray
    ce_move: np.ndarray
    ce_parity: np.ndarray


@cache
def quarter_turn_metric() -> Metric:
    """Cube3's twelve quarter turns, kernel order ``U U' R R' F F' D D' L L' B B'``, centres fixed."""
    faces = np.arange(12) >> 1
    return Metric(
        name="quarter-turn",
        cmove=CORNER_MOVE,
        emove=EDGE_MOVE,
        axis=faces % 3,
        layer=np.where(faces < 3, 0, 2),
        ce_move=np.zeros((1, 12), dtype=np.int64),
        ce_parity=np.zeros(1, dtype=np.int64),
    )


@dataclass(frozen=True)
class TwoPhaseTables:
    """The move and pruning tables of both phases in one metric (:func:`two_phase_tables`).

    Phase 1's pruning table ``p1`` is exact: the phase-1 distance of every (flip-slice class,
    twist) pair, the 1,013,760 flip-slice pairs cut to 64,430 classes by the 16 symmetries that keep
    the U-D axis (``fs_class``, ``fs_sym``: a pair's class and a symmetry that takes it to the
    class's representative; ``twist_conj``: each twist seen through each symmetry); where the
    centres move, ``ce_h1`` is each arrangement's distance to those that phase 2 keeps. Phase 2's
    moves (``p2_turns``: one or two kernel moves each, ``p2_cost`` moves) are those that keep G1;
    its tables count the corners' (``p2_cs``) or U/D edges' (``p2_es``) permutation with the slice
    edges' permutation and the centres (``sc``: ``slice * len(centres kept) + centres``)."""

    tw_move: np.ndarray
    fl_move: np.ndarray
    sl_move: np.ndarray
    fs_class: np.ndarray
    fs_sym: np.ndarray
    twist_conj: np.ndarray
    p1: np.ndarray
    ce_move: np.ndarray
    ce_h1: np.ndarray
    m_axis: np.ndarray
    m_layer: np.ndarray
    m_last: np.ndarray
    m_follow: np.ndarray
    cp_move: np.ndarray
    ep_move: np.ndarray
    sc_move: np.ndarray
    p2_cs: np.ndarray
    p2_es: np.ndarray
    p2_axis: np.ndarray
    p2_layer: np.ndarray
    p2_rep: np.ndarray
    p2_cost: np.ndarray
    p2_turns: np.ndarray
    cmove: np.ndarray
    emove: np.ndarray
    ce_parity: np.ndarray
    ce_p2: np.ndarray

    @property
    def args(self) -> tuple[np.ndarray, ...]:
        """The arrays the kernels take, in their order."""
        return tuple(getattr(self, f.name) for f in fields(self))

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.args)

    @property
    def phase2_moves(self) -> list[tuple[int, ...]]:
        """Phase 2's moves as kernel moves (one, or the same twice)."""
        return [tuple(int(t) for t in row if t >= 0) for row in self.p2_turns]


def prepare_tables(puzzle: Puzzle) -> str:
    """Build (or load) the tables ahead of a solve (``puzzlezero pdb build cube3 --kind two-phase``);
    a line for people."""
    t0 = clock.now()
    tables = two_phase_tables()
    return (
        f"{puzzle.name}: two-phase tables, {tables.nbytes / 1e6:,.1f} MB, ready in {clock.now() - t0:,.1f} s"
    )


#: the table file's name in the tables' cache, and what it must say of itself
TABLE_NAME = "cube3-two-phase"
TABLE_META = {"kind": "cube3-two-phase", "metric": "quarter-turn", "phase1": "flip-slice classes x twist"}


def _symmetry_classes(tw_move: np.ndarray, fl_move: np.ndarray, sl_move: np.ndarray) -> dict[str, np.ndarray]:
    """The flip-slice classes under the 16 symmetries that keep the U-D axis (walked over cube3's
    quarter turns: the move tables' columns in kernel order)."""
    _, maps = _ud_symmetries()
    twist_conj, ok_t = _conjugates(tw_move, tw_move, 1, maps, 0)
    fs_conj, ok_fs = _conjugates(sl_move, fl_move, N_FLIP, maps, SLICE_HOME * N_FLIP)
    if not (ok_t and ok_fs and (fs_conj >= 0).all()):  # pragma: no cover - the coordinates' own algebra
        raise PuzzleError("two-phase tables: a symmetry's image is not a function of the coordinates")
    rep = fs_conj.min(axis=1)
    reps, fs_class = np.unique(rep, return_inverse=True)
    fs_sym = np.argmax(fs_conj == rep[:, None], axis=1)
    stab = np.zeros(len(reps), dtype=np.int64)
    for j in range(fs_conj.shape[1]):
        stab |= (fs_conj[reps, j] == reps).astype(np.int64) << j
    return {
        "reps": reps.astype(np.int64),
        "stab": stab,
        "fs_class": fs_class.astype(np.int32),
        "fs_sym": fs_sym.astype(np.int8),
        "twist_conj": twist_conj.astype(np.int16),
    }


@cache
def _quarter_turn_moves() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Phase 1's move tables under cube3's twelve quarter turns (kernel order)."""
    return _phase1_moves(*_position_moves(CORNER_MOVE, EDGE_MOVE))  # type: ignore[no-any-return]


def _build_phase1(tw_move: np.ndarray, fl_move: np.ndarray, sl_move: np.ndarray) -> dict[str, np.ndarray]:
    """The exact phase-1 table over the moves of the move tables' columns; the flip-slice classes
    are the same in every metric whose moves the symmetries keep (found over cube3's quarter turns)."""
    c = _symmetry_classes(*_quarter_turn_moves())
    p1 = _phase1_table(
        c["reps"], c["fs_class"], c["fs_sym"], c["stab"], tw_move, fl_move, sl_move, c["twist_conj"]
    )
    return {"fs_class": c["fs_class"], "fs_sym": c["fs_sym"], "twist_conj": c["twist_conj"], "p1": p1}


def _followers(axis: np.ndarray, layer: np.ndarray) -> np.ndarray:
    """``int64[M + 1]``: for each move (after the first entry, for none) the bit mask of the moves
    that may follow it in a canonical sequence. Moves of one axis commute, so they come in the
    order of their layers; a layer is turned twice only as a half turn (two clockwise quarter
    turns), and the kernel keeps it from a third."""
    nm = len(axis)
    out = np.zeros(nm + 1, dtype=np.int64)
    out[0] = (1 << nm) - 1
    for prev in range(nm):
        for m in range(nm):
            if axis[m] != axis[prev] or layer[m] > layer[prev] or (m == prev and m % 2 == 0):
                out[prev + 1] |= 1 << m
    return out


def _keeps_g1(tw_move: np.ndarray, fl_move: np.ndarray, sl_move: np.ndarray, turns: tuple[int, ...]) -> bool:
    tw, fl, sl = 0, 0, SLICE_HOME
    for t in turns:
        tw, fl, sl = tw_move[tw, t], fl_move[fl, t], sl_move[sl, t]
    return bool(tw == 0 and fl == 0 and sl == SLICE_HOME)


def _centre_tables(ce_move: np.ndarray, turns: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray, int]:
    """The centres' arrangements that phase 2's ``turns`` reach from home (``ce_p2``: each
    arrangement's index among them, ``-1`` for the others), each arrangement's distance to them in
    moves (``ce_h1``), and how many they are."""
    nce = ce_move.shape[0]
    ce_p2 = np.full(nce, -1, dtype=np.int64)
    ce_p2[0], kept = 0, [0]
    for c in kept:
        for turn in turns:
            x = c
            for t in turn:
                x = int(ce_move[x, t])
            if ce_p2[x] < 0:
                ce_p2[x] = len(kept)
                kept.append(x)
    ce_h1 = np.full(nce, -1, dtype=np.int64)
    ce_h1[kept] = 0
    frontier, d = list(kept), 0
    while frontier:
        d += 1
        nxt = []
        for c in frontier:
            for x in ce_move[c]:
                if ce_h1[x] < 0:
                    ce_h1[x] = d
                    nxt.append(int(x))
        frontier = nxt
    if (ce_h1 < 0).any():  # pragma: no cover - the arrangements are those the moves reach
        raise PuzzleError("two-phase tables: a centre arrangement the moves do not reach")
    return ce_p2, ce_h1, len(kept)


def build_tables(metric: Metric, table_name: str, table_meta: dict[str, str], command: str) -> TwoPhaseTables:
    """The tables of ``metric``: the move tables and phase 2's built here (seconds), phase 1's
    exact table built once and then read from the tables' cache under ``table_name`` (memory-mapped)."""
    from puzzlezero.classic.optimal.tables import load_or_build

    cdest, ctw, edest, efl = _position_moves(metric.cmove, metric.emove)
    tw_move, fl_move, sl_move = _phase1_moves(cdest, ctw, edest, efl)
    nm = tw_move.shape[1]
    # phase 2's moves: each quarter turn that keeps G1, else its half turn where that does
    quarters: list[tuple[int, ...]] = []
    halves: list[tuple[int, ...]] = []
    for m in range(0, nm, 2):
        if _keeps_g1(tw_move, fl_move, sl_move, (m,)):
            quarters += [(m,), (m + 1,)]
        elif _keeps_g1(tw_move, fl_move, sl_move, (m, m)):
            halves.append((m, m))
    turns = quarters + halves
    p2_turns = np.array([[t[0], t[1] if len(t) > 1 else -1] for t in turns], dtype=np.int64)
    first = p2_turns[:, 0]
    cp_move, ep_move, sp_move = _phase2_moves(cdest, edest, p2_turns)
    ce_p2, ce_h1, nkept = _centre_tables(metric.ce_move, turns)
    kept = np.flatnonzero(ce_p2 >= 0)[np.argsort(ce_p2[ce_p2 >= 0])]
    ce2_move = np.empty((nkept, len(turns)), dtype=np.int64)
    for k, turn in enumerate(turns):
        x = kept.copy()
        for t in turn:
            x = metric.ce_move[x, t]
        ce2_move[:, k] = ce_p2[x]
    sc_move = (sp_move[:, None, :].astype(np.int64) * nkept + ce2_move[None, :, :]).reshape(
        N_PERM4 * nkept, -1
    )
    p2_cost = np.array([len(t) for t in turns], dtype=np.int64)
    m_last = np.array([not any(m in t for t in quarters) for m in range(nm)], dtype=np.int64)
    phase1 = load_or_build(
        table_name, table_meta, lambda: _build_phase1(tw_move, fl_move, sl_move), mmap=True, command=command
    )
    expect = {"fs_class": (N_FLIP * N_SLICE,), "fs_sym": (N_FLIP * N_SLICE,), "twist_conj": (N_TWIST, 16)}
    for key, shape in expect.items():
        if phase1[key].shape != shape:
            raise PuzzleError(f"two-phase table {key} has shape {phase1[key].shape}, expected {shape}")
    if phase1["p1"].shape[0] % N_TWIST or phase1["fs_class"].max() >= phase1["p1"].shape[0] // N_TWIST:
        raise PuzzleError("two-phase table p1 does not match its flip-slice classes")
    return TwoPhaseTables(
        tw_move=tw_move,
        fl_move=fl_move,
        sl_move=sl_move,
        fs_class=phase1["fs_class"],
        fs_sym=phase1["fs_sym"],
        twist_conj=phase1["twist_conj"],
        p1=phase1["p1"],
        ce_move=np.ascontiguousarray(metric.ce_move, dtype=np.int64),
        ce_h1=ce_h1,
        m_axis=np.asarray(metric.axis, dtype=np.int64),
        m_layer=np.asarray(metric.layer, dtype=np.int64),
        m_last=m_last,
        m_follow=_followers(np.asarray(metric.axis), np.asarray(metric.layer)),
        cp_move=cp_move,
        ep_move=ep_move,
        sc_move=np.ascontiguousarray(sc_move, dtype=np.int32),
        p2_cs=_bfs_pair(cp_move, sc_move, N_PERM8, N_PERM4 * nkept, 0, p2_cost),
        p2_es=_bfs_pair(ep_move, sc_move, N_PERM8, N_PERM4 * nkept, 0, p2_cost),
        p2_axis=np.asarray(metric.axis, dtype=np.int64)[first],
        p2_layer=np.asarray(metric.layer, dtype=np.int64)[first],
        p2_rep=np.array([len(t) == 1 and t[0] % 2 == 0 for t in turns], dtype=np.int64),
        p2_cost=p2_cost,
        p2_turns=p2_turns,
        cmove=np.ascontiguousarray(metric.cmove, dtype=np.int64),
        emove=np.ascontiguousarray(metric.emove, dtype=np.int64),
        ce_parity=np.asarray(metric.ce_parity, dtype=np.int64),
        ce_p2=ce_p2,
    )


@cache
def two_phase_tables() -> TwoPhaseTables:
    """Cube3's tables in the quarter-turn metric: the move tables and phase 2's built here (a
    second), phase 1's exact table (141 MB, 64,430 x 2,187 entries, about ten seconds) built once
    and then read from the tables' cache (memory-mapped); ``puzzlezero pdb build cube3 --kind
    two-phase`` builds it ahead."""
    return build_tables(
        quarter_turn_metric(), TABLE_NAME, TABLE_META, command="puzzlezero pdb build cube3 --kind two-phase"
    )


# --- the search ---------------------------------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def _p1_index(tw, fl, sl, fs_class, fs_sym, twist_conj):  # fmt: skip
    """Where (twist, flip, slice) stands in phase 1's table: its flip-slice class, and its twist
    seen through the symmetry that takes its flip-slice pair to the class's representative."""
    fs = sl * N_FLIP + fl
    return np.int64(fs_class[fs]) * N_TWIST + twist_conj[tw, fs_sym[fs]]


@nb.njit(cache=True, inline="always")
def _h1(tw, fl, sl, ce, fs_class, fs_sym, twist_conj, p1, ce_h1):  # fmt: skip
    """Phase 1's heuristic of (twist, flip, slice, centres): the exact distance of the pieces'
    coordinates, or the centres' where that is more."""
    return max(np.int64(p1[_p1_index(tw, fl, sl, fs_class, fs_sym, twist_conj)]), np.int64(ce_h1[ce]))


@nb.njit(cache=True, nogil=True)
def _phase2(c0, e0, s0, parity, last, max_cost, moves, counter, m_axis, m_layer, cp_move, ep_move, sc_move,
            p2_cs, p2_es, p2_axis, p2_layer, p2_rep, p2_cost):  # fmt: skip
    """The cheapest phase 2 from ``(c0, e0, s0)`` costing at most ``max_cost``, its moves written to
    ``moves``; returns its cost (``-1``: none). ``parity``: the one every phase 2's cost has.
    ``last``: phase 1's last kernel move (its layer is not turned first; ``-1``: none).
    ``counter[0]`` counts the nodes generated."""
    nsc = sc_move.shape[0]
    n2 = p2_cost.shape[0]
    h0 = max(np.int64(p2_cs[c0 * nsc + s0]), np.int64(p2_es[e0 * nsc + s0]))
    bound = h0 if (h0 & 1) == parity else h0 + 1
    cs = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    es = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    ss = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    gs = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    nxt = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    path = np.empty(_MAX_DEPTH + 1, dtype=np.int64)
    if c0 == 0 and e0 == 0 and s0 == 0:
        return 0
    while bound <= max_cost:
        cs[0], es[0], ss[0], gs[0] = c0, e0, s0, 0
        nxt[0] = 0
        d = 0
        while d >= 0:
            mv = nxt[d]
            if mv == n2:
                d -= 1
                continue
            nxt[d] = mv + 1
            ax, ly = p2_axis[mv], p2_layer[mv]
            if d == 0:
                if last >= 0 and ax == m_axis[last] and ly == m_layer[last]:
                    continue
            else:
                prev = path[d - 1]
                if ax == p2_axis[prev]:
                    if ly == p2_layer[prev]:
                        # only a quarter turn twice (a half turn), and not a third time
                        if not (
                            mv == prev
                            and p2_rep[mv] == 1
                            and (d < 2 or p2_layer[path[d - 2]] != ly or p2_axis[path[d - 2]] != ax)
                        ):
                            continue
                    elif ly < p2_layer[prev]:
                        continue
            g = gs[d] + p2_cost[mv]
            c = cp_move[cs[d], mv]
            e = ep_move[es[d], mv]
            s = sc_move[ss[d], mv]
            counter[0] += 1
            h = max(np.int64(p2_cs[c * nsc + s]), np.int64(p2_es[e * nsc + s]))
            if g + h > bound:
                continue
            path[d] = mv
            d += 1
            cs[d], es[d], ss[d], gs[d] = c, e, s, g
            nxt[d] = 0
            if c == 0 and e == 0 and s == 0:
                for i in range(d):
                    moves[i] = path[i]
                return g
        bound += 2
    return -1


@nb.njit(cache=True, nogil=True)
def _complete(v0, ce0, path, g, best, best_moves, counter, tw_move, fl_move, sl_move, fs_class, fs_sym, twist_conj,
              p1, ce_move, ce_h1, m_axis, m_layer, m_last, m_follow, cp_move, ep_move, sc_move, p2_cs, p2_es,
              p2_axis, p2_layer, p2_rep, p2_cost, p2_turns, cmove, emove, ce_parity, ce_p2):  # fmt: skip
    """Phase 2 after the phase-1 solution ``path[:g]`` of the cube ``v0`` (centres ``ce0``): where
    a total shorter than ``best`` exists, the shortest is written to ``best_moves`` (kernel moves)
    and its length returned; else ``-1``."""
    v = v0.copy()
    ce = ce0
    for k in range(g):
        m = path[k]
        for i in range(8):
            v[i] = cmove[v[i], m]
        for i in range(8, 20):
            v[i] = emove[v[i], m]
        ce = ce_move[ce, m]
    cp = np.empty(8, dtype=np.int64)
    ep = np.empty(12, dtype=np.int64)
    for p in range(8):
        cp[v[p] // 3] = p
    for p in range(12):
        ep[v[8 + p] // 2] = p
    parity = ce_parity[ce]
    for i in range(8):
        for j in range(i + 1, 8):
            if cp[j] < cp[i]:
                parity ^= 1
    p2 = np.empty(_MAX_DEPTH, dtype=np.int64)
    nkept = sc_move.shape[0] // N_PERM4
    sc = _perm_rank(ep[8:] - 8) * nkept + ce_p2[ce]
    last = path[g - 1] if g > 0 else -1
    cost = _phase2(_perm_rank(cp), _perm_rank(ep[:8].copy()), sc, parity, last, best - 2 - g, p2, counter,
                   m_axis, m_layer, cp_move, ep_move, sc_move, p2_cs, p2_es, p2_axis, p2_layer, p2_rep,
                   p2_cost)  # fmt: skip
    if cost < 0:
        return -1
    n = 0
    for k in range(g):
        best_moves[n] = path[k]
        n += 1
    k = 0
    while cost > 0:
        pm = p2[k]
        for t in range(2):
            if p2_turns[pm, t] >= 0:
                best_moves[n] = p2_turns[pm, t]
                n += 1
        cost -= p2_cost[pm]
        k += 1
    return n


@nb.njit(cache=True, nogil=True)
def _run(ctx, v0, ce0, tws, fls, sls, ces, kids, path, nxt, budget, best_moves, tw_move, fl_move, sl_move,
         fs_class, fs_sym, twist_conj, p1, ce_move, ce_h1, m_axis, m_layer, m_last, m_follow, cp_move, ep_move,
         sc_move, p2_cs, p2_es, p2_axis, p2_layer, p2_rep, p2_cost, p2_turns, cmove, emove, ce_parity, ce_p2):  # fmt: skip
    """Resume phase 1 at depth ``ctx[1]`` for about ``budget`` nodes. ``ctx``: ``[depth, L1, nodes,
    best total, best length in best_moves]``. Returns :data:`FOUND` (a shorter total is in
    ``best_moves[:ctx[4]]``, kernel moves), :data:`DONE` or :data:`PAUSED`.

    A node's children are made all at once when it is entered (``kids[d, m]``: twist, flip,
    slice, centres and heuristic, ``-1`` for a move that is not canonical there): first their
    table indices, then the reads of the large table, independent of each other so that their
    cache misses overlap."""
    d, bound, best = ctx[0], ctx[1], ctx[3]
    nm = tw_move.shape[1]
    centres = ce_move.shape[0] > 1  # else the centres stay (cube3): no reads for them
    counter = np.zeros(1, dtype=np.int64)
    idx = np.empty(nm, dtype=np.int64)
    code = PAUSED
    while counter[0] < budget:
        mv = nxt[d]
        if mv == 0:
            tw0, fl0, sl0 = tws[d], fls[d], sls[d]
            # the canonical moves here: the last move's mask of followers (_followers)
            allowed = m_follow[0]
            if d > 0:
                prev = path[d - 1]
                allowed = m_follow[prev + 1]
                if d > 1 and (path[d - 2] >> 1) == (prev >> 1):
                    allowed &= ~(np.int64(1) << prev)  # a layer turned a third time
            for m in range(nm):
                if not (allowed >> m) & 1:
                    idx[m] = -1
                    continue
                tw = tw_move[tw0, m]
                fl = fl_move[fl0, m]
                sl = sl_move[sl0, m]
                kids[d, m, 0], kids[d, m, 1], kids[d, m, 2] = tw, fl, sl
                idx[m] = _p1_index(tw, fl, sl, fs_class, fs_sym, twist_conj)
            if centres:
                for m in range(nm):
                    if idx[m] >= 0:
                        ce = ce_move[ces[d], m]
                        kids[d, m, 3] = ce
                        kids[d, m, 4] = max(np.int64(p1[idx[m]]), np.int64(ce_h1[ce]))
                    else:
                        kids[d, m, 4] = -1
            else:
                for m in range(nm):
                    kids[d, m, 3] = 0
                    kids[d, m, 4] = -1 if idx[m] < 0 else p1[idx[m]]
        if mv == nm:
            if d == 0:
                code = DONE
                break
            d -= 1
            continue
        nxt[d] = mv + 1
        h = kids[d, mv, 4]
        if h < 0:
            continue
        counter[0] += 1
        g = d + 1
        if g + h > bound:
            continue
        path[d] = mv
        tw, fl, sl, ce = kids[d, mv, 0], kids[d, mv, 1], kids[d, mv, 2], kids[d, mv, 3]
        d += 1
        tws[d], fls[d], sls[d], ces[d] = tw, fl, sl, ce
        nxt[d] = 0
        if g < bound:
            continue
        # a phase-1 solution of length L1 (h == 0): it must end with a move that leaves G1
        nxt[d] = nm  # a leaf
        if m_last[mv] == 0 or g > best - 2:
            continue
        n = _complete(v0, ce0, path, g, best, best_moves, counter, tw_move, fl_move, sl_move, fs_class, fs_sym,
                      twist_conj, p1, ce_move, ce_h1, m_axis, m_layer, m_last, m_follow, cp_move, ep_move, sc_move,
                      p2_cs, p2_es, p2_axis, p2_layer, p2_rep, p2_cost, p2_turns, cmove, emove, ce_parity, ce_p2)  # fmt: skip
        if n < 0:
            continue
        best = n
        ctx[4] = n
        code = FOUND
        break
    ctx[0], ctx[2], ctx[3] = d, ctx[2] + counter[0], best
    return code


# --- the driver ---------------------------------------------------------------------------------------


def invert_pieces(v: np.ndarray) -> np.ndarray:
    """The inverse cube of piece values ``int64[20]`` (the cube that the reversed, inverted moves make)."""
    v = np.asarray(v, dtype=np.int64)
    out = np.empty(20, dtype=np.int64)
    pos, tw = np.divmod(v[:8], 3)
    out[pos] = np.arange(8) * 3 + (-tw) % 3
    pos, fl = np.divmod(v[8:], 2)
    out[8 + pos] = np.arange(12) * 2 + fl
    return out


def merge_axis_runs(moves: list[int], axis: np.ndarray | None = None) -> list[int]:
    """Kernel moves with each run of moves about one axis merged (they commute): net quarter
    turns per layer, in the order of the layers, ``X`` / ``X X`` / ``X'`` for 1 / 2 / 3, none for
    0. ``axis``: each kernel move's axis (cube3's quarter turns where not given).

    >>> merge_axis_runs([0, 6, 1, 2, 2, 2])  # U D U' R R R -> D R'
    [6, 3]
    """
    axes = quarter_turn_metric().axis if axis is None else axis
    out: list[int] = []
    i = 0
    while i < len(moves):
        a = axes[moves[i]]
        net: dict[int, int] = {}
        while i < len(moves) and axes[moves[i]] == a:
            net[moves[i] >> 1] = net.get(moves[i] >> 1, 0) + (1 if moves[i] & 1 == 0 else -1)
            i += 1
        for layer in sorted(net):
            turns = net[layer] % 4
            out.extend({1: [2 * layer], 2: [2 * layer, 2 * layer], 3: [2 * layer + 1]}.get(turns, []))
    return out if out == moves else merge_axis_runs(out, axes)


class Guise:
    """One cube searched: piece values ``int64[20]`` and centres ``ce`` (an arrangement of the
    tables' metric), tagged by the caller (the symmetry it was seen through, whether inverted)."""

    def __init__(self, pieces: np.ndarray, ce: int, tag: Any, inverted: bool, tables: TwoPhaseTables) -> None:
        self.v0 = np.asarray(pieces, dtype=np.int64)
        self.ce0 = int(ce)
        self.tag, self.inverted = tag, inverted
        t = tables
        self.ctx = np.zeros(5, dtype=np.int64)
        self.tws = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
        self.fls = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
        self.sls = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
        self.ces = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
        self.kids = np.zeros((_MAX_DEPTH + 1, t.tw_move.shape[1], 5), dtype=np.int64)
        self.path = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
        self.nxt = np.zeros(_MAX_DEPTH + 2, dtype=np.int64)
        self.best_moves = np.zeros(4 * _MAX_DEPTH, dtype=np.int64)
        cp, co = np.empty(8, dtype=np.int64), np.empty(8, dtype=np.int64)
        ep, eo = np.empty(12, dtype=np.int64), np.empty(12, dtype=np.int64)
        cp[self.v0[:8] // 3], co[self.v0[:8] // 3] = np.arange(8), self.v0[:8] % 3
        ep[self.v0[8:] // 2], eo[self.v0[8:] // 2] = np.arange(12), self.v0[8:] % 2
        self.tws[0] = int(np.dot(co[:7], 3 ** np.arange(6, -1, -1)))
        self.fls[0] = int(np.dot(eo[:11], 2 ** np.arange(10, -1, -1)))
        self.sls[0] = int(_slice_rank(ep))
        self.ces[0] = self.ce0
        self.h0 = int(_h1(self.tws[0], self.fls[0], self.sls[0], self.ce0, t.fs_class, t.fs_sym, t.twist_conj, t.p1,
                          t.ce_h1))  # fmt: skip

    def start_depth(self, depth: int) -> None:
        self.ctx[0], self.ctx[1] = 0, depth
        self.nxt[0] = 0

    def run(self, budget: int, best: int, tables: TwoPhaseTables) -> int:
        self.ctx[3] = best
        if self.ctx[1] == 0:  # the cube is in G1: phase 2 alone
            counter = np.zeros(1, dtype=np.int64)
            n = _complete(self.v0, self.ce0, self.path, 0, best, self.best_moves, counter, *tables.args)  # type: ignore[call-arg]  # numba Dispatcher stub
            self.ctx[2] += counter[0]
            if n >= 0:
                self.ctx[3] = self.ctx[4] = n
                self.ctx[1] = -1  # done at this depth
                return FOUND
            return DONE
        if self.ctx[1] < 0:
            return DONE
        return int(_run(self.ctx, self.v0, self.ce0, self.tws, self.fls, self.sls, self.ces, self.kids, self.path,  # type: ignore[call-arg]  # numba Dispatcher stub
                        self.nxt, budget, self.best_moves, *tables.args))  # fmt: skip

    def answer(self) -> list[int]:
        """The found answer as kernel moves of this guise's own cube, inverse undone."""
        moves = [int(m) for m in self.best_moves[: self.ctx[4]]]
        return [m ^ 1 for m in reversed(moves)] if self.inverted else moves


class Answers:
    """A two-phase search's answers to one state ``start`` of ``puzzle``: each guise's answer made
    the puzzle's moves by ``to_actions(guise)``, replayed, and kept where shorter (passed on to
    ``on_solution`` as it comes); :meth:`take` is :func:`search_guises`'s ``take``."""

    def __init__(
        self,
        puzzle: Puzzle,
        start: np.ndarray,
        t0: float,
        to_actions: Callable[[Guise], list[int]],
        on_solution: Callable[[SearchResult], None] | None,
    ) -> None:
        self.puzzle, self.start, self.t0 = puzzle, start, t0
        self.to_actions, self.on_solution = to_actions, on_solution
        self.best: tuple[int, ...] | None = None
        self.found: list[SearchResult] = []

    def take(self, g: Guise, nodes: int) -> int:
        actions = self.to_actions(g)
        end = self.puzzle.apply_moves(self.start, actions)
        if not bool(self.puzzle.is_goal(np.asarray(end)[None])[0]):  # pragma: no cover - a kernel fault
            raise PuzzleError("the two-phase answer does not solve the cube")
        if self.best is None or len(actions) < len(self.best):
            self.best = tuple(actions)
            r = SearchResult(True, self.best, nodes + 1, len(self.found) + 1, clock.now() - self.t0, "solved",
                             cost=float(len(self.best)))  # fmt: skip
            self.found.append(r)
            if self.on_solution is not None:
                self.on_solution(r)
        return len(self.best)

    def result(self, status: Status, nodes: int) -> SearchResult:
        """The search's result: its shortest answer ("solved"; optimal where ``status`` says the
        search was exhausted), else ``status``, the limit that stopped it."""
        seconds = clock.now() - self.t0
        if self.best is None:
            return SearchResult(False, (), nodes + 1, 0, seconds, status)
        return SearchResult(
            True,
            self.best,
            nodes + 1,
            len(self.found),
            seconds,
            "solved",
            cost=float(len(self.best)),
            improvements=tuple((r.seconds, len(r.actions)) for r in self.found),
        )


def search_guises(
    ladder: list[Guise],
    tables: TwoPhaseTables,
    take: Callable[[Guise, int], int],
    stop: float,
    max_nodes: int | None,
) -> tuple[Status, int]:
    """Every phase-1 length in turn, each guise of ``ladder`` searched at it, until phase 1 alone
    is as long as the best answer, ``stop`` (a reading of the clock) passes or ``max_nodes`` are
    generated. ``take(guise, nodes)`` is called with each guise that found a shorter answer (and
    the nodes so far) and returns the best length so far. Returns the status ("exhausted" where the search finished: the best
    answer is optimal) and the nodes generated."""
    best, nodes = _MAX_DEPTH, 0
    depth = min(g.h0 for g in ladder)
    status: Status = "exhausted"
    while depth < best:
        for g in ladder:
            if depth < g.h0:
                continue
            g.start_depth(depth)
            while True:
                budget = _CHUNK if max_nodes is None else min(_CHUNK, max_nodes - nodes)
                if budget <= 0:
                    status = "node limit"
                    break
                before = int(g.ctx[2])
                code = g.run(budget, best, tables)
                nodes += int(g.ctx[2]) - before
                if code == FOUND:
                    best = min(best, int(g.ctx[3]), take(g, nodes))
                if clock.passed(stop):
                    status = "time limit"
                    break
                if code == DONE:
                    break
            if status != "exhausted":
                break
        if status != "exhausted":
            break
        depth += 1
    return status, nodes


@cache
def _axis_symmetries(puzzle: Puzzle) -> tuple[int, int, int]:
    """The identity and the two rotations about the URF-DBL diagonal (each axis upright once)."""
    from puzzlezero.puzzles.cube.symmetry import cube_symmetries

    sym = cube_symmetries(puzzle)
    ids = cube_actions(puzzle)
    u, r, f = ids[0], ids[2], ids[4]
    for k in range(1, 24):
        mapped = [int(x) for x in sym.map_actions([u, r, f], k)]
        if mapped == [r, f, u]:
            return 0, k, int(sym.compose[k, k])
    raise PuzzleError(f"{puzzle.name}: no rotation turns U to R, R to F and F to U")  # pragma: no cover


#: the tables' bytes (phase 1's exact table 141 MB, memory-mapped) and the search's own, rounded up
TABLE_BYTES = 160 << 20


def memory_estimate(puzzle: Puzzle, o: object, instances: int = 1) -> int:
    """Peak bytes of a two-phase solve: its tables (the search itself runs in constant memory)."""
    return TABLE_BYTES


def solve_two_phase(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    guises: int = 6,
    on_solution: Callable[[SearchResult], None] | None = None,
) -> SearchResult:
    """The shortest quarter-turn answer the two-phase search finds for one cube3 state by
    ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`) or ``time_limit`` seconds,
    whichever comes first, or within ``max_nodes`` generated nodes; status "solved" (and
    ``iterations`` counting the answers found) when it ends with an answer (optimal where the
    search finished before its limits), else the limit that stopped it. ``guises``: how many of the six guises to search
    (1: the state as it is). ``on_solution(result)``: each shorter answer as it comes.

    The puzzle must be cube3 (quarter turns ``U U' R R' ...``); another is refused by name."""
    check_positive("time_limit", time_limit)
    check_positive("max_nodes", max_nodes, integer=True)
    if len(puzzle.action_names) != 12:
        raise PuzzleError(
            f"the two-phase search solves cube3 (12 quarter turns); {puzzle.name} has {len(puzzle.action_names)} moves"
        )
    if not 1 <= guises <= 6:
        raise PuzzleError(f"guises is 1 to 6 (the three axes upright, each inverted or not); got {guises}")
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    ids = cube_actions(puzzle)
    start = np.asarray(state).reshape(-1)
    v = cube_pieces(puzzle, start)[0]
    if (v == SOLVED).all():
        return SearchResult(True, (), 1, 0, clock.now() - t0, "solved", cost=0.0)
    tables = two_phase_tables()
    from puzzlezero.puzzles.cube.symmetry import cube_symmetries

    sym = cube_symmetries(puzzle)
    ladder: list[Guise] = []
    for k in _axis_symmetries(puzzle):
        image = facelets_to_pieces(sym.apply(start[None], k))[0]
        for inverted in (False, True):
            if len(ladder) < guises:
                ladder.append(Guise(invert_pieces(image) if inverted else image, 0, k, inverted, tables))

    def to_actions(g: Guise) -> list[int]:
        moves = merge_axis_runs(g.answer())
        return [int(a) for a in sym.map_actions([ids[m] for m in moves], int(sym.inverse[g.tag]))]

    answers = Answers(puzzle, start, t0, to_actions, on_solution)
    status, nodes = search_guises(ladder, tables, answers.take, stop, max_nodes)
    return answers.result(status, nodes)  # "exhausted" before the time limit: the answer is optimal
