"""Optimal Rubik's cube solutions (quarter-turn metric): Korf's IDA* over pattern databases, numba.

The search state is the 20 piece values of :mod:`.cube_model`; a move is 20 table lookups. Move
sequences are kept canonical, which removes every redundant ordering without losing an optimal
solution: no move right after its inverse; a face turns at most twice in a row and twice only as
``X X`` (never ``X' X'``); of two opposite faces (which commute) the one with the smaller index in
``U R F D L B`` comes first. The heuristic is the pattern-database maximum with the parity
correction (as :meth:`.cube_pdb.CubePDB.values`), evaluated for all children of a node at once,
pattern by pattern, so that the random table reads overlap; a child whose value already proves
``g + h > bound`` is not looked up further.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numba as nb
import numpy as np

from puzzlezero.classic.optimal.cube_model import (
    CORNER_MOVE,
    EDGE_MOVE,
    MOVE_NAMES,
    SOLVED,
    facelets_to_pieces,
)
from puzzlezero.classic.optimal.cube_pdb import KORF, CubePattern, corner_parity, load_cube_pdb, pattern_index
from puzzlezero.classic.optimal.ida import DONE, FOUND, PAUSED, drive, new_context, result
from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search.result import SearchResult
from puzzlezero.search.windows import Between

__all__ = ["solve_cube", "cube_actions", "cube_between", "cube_pieces"]

_MAX_DEPTH = 40  # the quarter-turn diameter is 26


@nb.njit(cache=True, inline="always")
def _allowed(mv, path, d):  # fmt: skip
    if d == 0:
        return True
    prev = path[d - 1]
    face, pface = mv >> 1, prev >> 1
    if face == pface:
        # only X X, and not a third time
        return mv == prev and (mv & 1) == 0 and (d < 2 or path[d - 2] >> 1 != face)
    return not (face == (pface + 3) % 6 and face < pface)


@nb.njit(cache=True)
def _expand(states, kids, kid_h, d, path, bound_left, parity, cmove, emove,
            table, off, pieces, k, npos, no, m, omul, q, o):  # fmt: skip
    """Children of ``states[d]`` into ``kids[d]`` and their heuristics into ``kid_h[d]`` (``-1``:
    move not canonical here). Pattern by pattern over all children, so the table reads of one
    pattern are independent and overlap in memory; a child stops being evaluated once its value
    exceeds ``bound_left`` (it is pruned anyway)."""
    parent = states[d]
    for mv in range(12):
        if not _allowed(mv, path, d):
            kid_h[d, mv] = -1
            continue
        kid = kids[d, mv]
        for i in range(8):
            kid[i] = cmove[parent[i], mv]
        for i in range(8, 20):
            kid[i] = emove[parent[i], mv]
        kid_h[d, mv] = parity  # the distance has the parity of the corner permutation
    idx = np.empty(12, dtype=np.int64)
    for p in range(off.shape[0]):
        for mv in range(12):  # first all indices (arithmetic), ...
            h = kid_h[d, mv]
            idx[mv] = (
                -1
                if h < 0 or h > bound_left
                else off[p] + pattern_index(kids[d, mv], pieces[p], k[p], npos[p], no[p], m[p], omul[p], q, o)
            )
        for mv in range(12):  # ... then all reads, independent of each other
            if idx[mv] >= 0:
                val = np.int64(table[idx[mv]])
                if (val ^ parity) & 1:
                    val += 1
                if val > kid_h[d, mv]:
                    kid_h[d, mv] = val


@nb.njit(cache=True)
def _run(states, kids, kid_h, path, nxt, ctx, budget, parity0, cmove, emove, solved,
         table, off, pieces, k, npos, no, m, omul):  # fmt: skip
    """Resume one IDA* iteration for at most ``budget`` generated nodes (see :mod:`.ida`).
    ``nxt[d] == -1`` means the node at depth ``d`` still has to be expanded."""
    q = np.empty(12, dtype=np.int64)
    o = np.empty(12, dtype=np.int64)
    d, bound, next_bound, nodes = ctx[0], ctx[1], ctx[2], 0
    code = PAUSED
    while nodes < budget:
        mv = nxt[d]
        if mv < 0:
            _expand(states, kids, kid_h, d, path, bound - d - 1, (parity0 + d + 1) & 1, cmove, emove,
                    table, off, pieces, k, npos, no, m, omul, q, o)  # fmt: skip
            mv = 0
        if mv == 12:
            if d == 0:
                code = DONE
                break
            d -= 1
            continue
        nxt[d] = mv + 1
        h = kid_h[d, mv]
        if h < 0:
            continue
        nodes += 1
        g = d + 1
        if g + h > bound:
            next_bound = min(next_bound, g + h)
            continue
        path[d] = mv
        states[d + 1] = kids[d, mv]
        d += 1
        nxt[d] = -1
        if h == 0:
            goal = True
            for i in range(20):
                if states[d, i] != solved[i]:
                    goal = False
                    break
            if goal:
                code = FOUND
                break
    ctx[0], ctx[2], ctx[3] = d, next_bound, ctx[3] + nodes
    return code


@cache
def cube_actions(puzzle: Puzzle) -> tuple[int, ...]:
    """The puzzle's action id for each kernel move (kernel order ``U U' R R' F F' D D' L L' B B'``),
    matched by name."""
    try:
        return tuple(puzzle.action_names.index(name) for name in MOVE_NAMES)
    except ValueError:
        raise InvalidStateError(
            f"{puzzle.name} does not name its moves {' '.join(MOVE_NAMES)}: {puzzle.action_names}"
        ) from None


def cube_pieces(puzzle: Puzzle, states: np.ndarray) -> np.ndarray:
    """Piece values ``int64[B, 20]`` of cube3 sticker states ``uint8[B, 54]`` (colour codes in
    Kociemba facelet order, the :class:`~puzzlezero.puzzles.cube.Cube3` layout); raises
    :class:`InvalidStateError` for an illegal cube."""
    s = np.asarray(states).reshape(-1, 54)
    if s.size and (s.max() > 5 or s.min() < 0):
        raise InvalidStateError("cube3 stickers are colour codes 0..5 (U R F D L B)")
    return facelets_to_pieces(s)


def solve_cube(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    patterns: tuple[CubePattern, ...] = KORF,
    shorter_than: int | None = None,
) -> SearchResult:
    """Optimal quarter-turn solution of one cube3 state by IDA* over the pattern databases of
    ``patterns`` (default Korf's: corners + two 6-edge sets; built on first use, minutes).
    Random cubes (about 20 moves) take hours; at ``deadline`` (a reading of
    :func:`puzzlezero.search.clock.now`) or ``time_limit`` seconds after IDA* starts, whichever
    comes first, the status is "time limit". ``shorter_than``: look only for solutions of fewer
    moves (status "exhausted" when there is none)."""
    v = cube_pieces(puzzle, state)[0]
    if (v == SOLVED).all():
        return result("solved", (), 0, 0, 0.0)
    pdb = load_cube_pdb(tuple(patterns))
    parity0 = int(corner_parity(v))
    h0 = int(pdb.values(v[None])[0])
    max_depth = _MAX_DEPTH if shorter_than is None else min(_MAX_DEPTH, int(shorter_than))
    if h0 >= max_depth:
        return result("exhausted", (), 0, 0, 0.0)
    ctx = new_context(h0)
    path = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    nxt = np.zeros(_MAX_DEPTH + 2, dtype=np.int64)
    states = np.zeros((_MAX_DEPTH + 2, 20), dtype=np.int64)
    kids = np.zeros((_MAX_DEPTH + 2, 12, 20), dtype=np.int64)
    kid_h = np.zeros((_MAX_DEPTH + 2, 12), dtype=np.int64)
    states[0] = v

    def run(budget: int) -> int:
        return int(_run(states, kids, kid_h, path, nxt, ctx, budget, parity0, CORNER_MOVE, EDGE_MOVE, SOLVED,
                        *pdb.args))  # fmt: skip

    return drive(
        run,
        ctx,
        path,
        nxt,
        cube_actions(puzzle),
        time_limit=time_limit,
        max_nodes=max_nodes,
        max_depth=max_depth,
        deadline=deadline,
    )


def cube_between(puzzle: Puzzle, patterns: tuple[CubePattern, ...] = KORF) -> Between:
    """The window solver of cube3 (:data:`puzzlezero.search.windows.Between`): a shortest way
    from ``a`` to ``b`` (fewer than ``bound`` quarter turns) is a shortest solution of the cube
    that the window's ``moves`` solve, the goal with those moves undone in reverse order, since
    a cube's stickers name one element of its group (the ``a``/``b`` boards themselves are not
    read). The databases of ``patterns`` (Korf's) are built on first use (about two minutes, then
    cached)."""
    undo = np.asarray(puzzle.inverse_action)

    def between(
        a: np.ndarray, b: np.ndarray, moves: Sequence[int], *, bound: int, max_nodes: int
    ) -> tuple[tuple[int, ...] | None, int]:
        x = puzzle.apply_moves(puzzle.goal(), [int(undo[m]) for m in reversed(list(moves))])
        r = solve_cube(puzzle, x, max_nodes=max_nodes, patterns=patterns, shorter_than=bound)
        return (r.actions if r.solved and len(r.actions) < bound else None), int(r.nodes_generated)

    return between
