"""Optimal sliding-tile solutions: IDA* over additive pattern databases, in numba.

The search keeps the board, the tile positions and every lookup's current value; a move slides one
tile, so only that tile's lookup in each group is recomputed (Korf & Felner's incremental
evaluation) and the group sums are updated by the difference. The children of a node are
evaluated together when it is expanded, so that their random table reads overlap in memory. The blank never moves straight back.
Kernel move ``j`` moves the blank up, down, left, right (``j ^ 1`` undoes it); the puzzle's own
action ids are found by probing the puzzle, so no naming convention is assumed.
"""

from __future__ import annotations

from functools import cache

import numba as nb
import numpy as np

from puzzlezero.errors import InvalidStateError
from puzzlezero.optimal.ida import DONE, FOUND, PAUSED, drive, new_context, result
from puzzlezero.optimal.perm import rank
from puzzlezero.optimal.sliding_pdb import SlidingPDB, load_sliding_pdb, neighbours
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search.result import SearchResult

__all__ = ["solve_sliding", "blank_actions", "board_size"]

_MAX_DEPTH = 1000


@nb.njit(cache=True)
def _expand(board, pos, lk_val, sums, d, path, kid_val, kid_h, nbr,
            table, lk_off, lk_k, lk_tiles, lk_cells, tile_lk, q, idx):  # fmt: skip
    """Evaluate the children of the node at depth ``d``: ``kid_h[d, j]`` is the heuristic after
    blank move ``j`` (``-1``: off the board, or straight back) and ``kid_val[d, j, g]`` the new
    value of the moved tile's lookup in group ``g``. All ranks are computed first, then all table
    reads are issued together so that their memory latencies overlap."""
    n = board.shape[0]
    b = pos[0]
    n_groups = tile_lk.shape[0]
    for j in range(4):
        c = nbr[b, j]
        if c < 0 or (d > 0 and j == path[d - 1] ^ 1):
            kid_h[d, j] = -1
            continue
        kid_h[d, j] = 0
        t = board[c]
        pos[t] = b  # the tile slides into the blank (only ``pos`` matters for the ranks)
        for g in range(n_groups):
            lk = tile_lk[g, t]
            k = lk_k[lk]
            for i in range(k):
                q[i] = lk_cells[lk, pos[lk_tiles[lk, i]]]
            idx[j, g] = lk_off[lk] + rank(q, k, n)
        pos[t] = c
    for j in range(4):
        if kid_h[d, j] < 0:
            continue
        t = board[nbr[b, j]]
        best = 0
        for g in range(n_groups):
            v = np.int64(table[idx[j, g]])
            kid_val[d, j, g] = v
            best = max(best, sums[g] + v - lk_val[tile_lk[g, t]])
        kid_h[d, j] = best


@nb.njit(cache=True, inline="always")
def _slide(board, pos, lk_val, sums, saved, new_val, d, c, tile_lk):  # fmt: skip
    """Slide the tile at cell ``c`` into the blank; its lookups take ``new_val[g]`` (the old values
    go to ``saved[d]``; ``new_val = saved[d]`` undoes a slide when ``c`` is the old blank cell)."""
    b = pos[0]
    t = board[c]
    board[b] = t
    pos[t] = b
    board[c] = 0
    pos[0] = c
    for g in range(tile_lk.shape[0]):
        lk = tile_lk[g, t]
        old = lk_val[lk]
        sums[g] += new_val[g] - old
        lk_val[lk] = new_val[g]
        saved[d, g] = old


@nb.njit(cache=True)
def _run(board, pos, lk_val, sums, saved, kid_val, kid_h, path, nxt, ctx, budget, nbr,
         table, lk_off, lk_k, lk_tiles, lk_cells, tile_lk):  # fmt: skip
    """Resume one IDA* iteration for at most ``budget`` generated nodes (see :mod:`.ida`);
    ``nxt[d] == -1`` means the node at depth ``d`` has not been expanded yet."""
    n = board.shape[0]
    q = np.empty(n, dtype=np.int64)
    idx = np.empty((4, tile_lk.shape[0]), dtype=np.int64)
    back = np.empty(tile_lk.shape[0], dtype=np.int64)
    d, bound, next_bound, nodes = ctx[0], ctx[1], ctx[2], 0
    code = PAUSED
    while nodes < budget:
        j = nxt[d]
        if j < 0:
            _expand(board, pos, lk_val, sums, d, path, kid_val, kid_h, nbr,
                    table, lk_off, lk_k, lk_tiles, lk_cells, tile_lk, q, idx)  # fmt: skip
            j = 0
        if j == 4:  # all moves tried: back up
            if d == 0:
                code = DONE
                break
            d -= 1
            back[:] = saved[d]
            _slide(board, pos, lk_val, sums, saved, back, d, nbr[pos[0], path[d] ^ 1], tile_lk)
            continue
        nxt[d] = j + 1
        h = kid_h[d, j]
        if h < 0:
            continue
        nodes += 1
        f = d + 1 + h
        if f > bound:
            next_bound = min(next_bound, f)
            continue
        _slide(board, pos, lk_val, sums, saved, kid_val[d, j], d, nbr[pos[0], j], tile_lk)
        path[d] = j
        d += 1
        nxt[d] = -1
        if h == 0:  # every tile is in some pattern, so h == 0 only at the goal
            code = FOUND
            break
    ctx[0], ctx[2], ctx[3] = d, next_bound, ctx[3] + nodes
    return code


def board_size(puzzle: Puzzle) -> int:
    """Side length of a sliding puzzle (``state_shape`` is ``(n,)`` or ``(size, size)``)."""
    n = int(np.prod(puzzle.state_shape))
    size = int(round(n**0.5))
    if size * size != n:
        raise InvalidStateError(
            f"{puzzle.name} is not a square sliding puzzle: state shape {puzzle.state_shape}"
        )
    return size


@cache
def blank_actions(puzzle: Puzzle) -> tuple[int, int, int, int]:
    """The puzzle's action ids that move the blank up, down, left, right (found by probing a
    board with the blank in cell ``(1, 1)``, where all four moves are possible)."""
    size = board_size(puzzle)
    n = size * size
    probe = np.arange(1, n + 1) % n  # goal layout
    probe[[size + 1, n - 1]] = probe[[n - 1, size + 1]]
    probe = probe.reshape(puzzle.state_shape).astype(puzzle.dtype)
    children = puzzle.expand(probe[None])[0].reshape(puzzle.num_actions, n)
    blank_at = np.argmax(children == 0, axis=1)
    nbr = neighbours(size)[size + 1]
    out = []
    for cell in nbr:
        found = np.flatnonzero(blank_at == cell)
        if found.size != 1:
            raise InvalidStateError(f"{puzzle.name}: cannot tell which action moves the blank to cell {cell}")
        out.append(int(found[0]))
    return tuple(out)  # type: ignore[return-value]


def _solvable(tiles: np.ndarray, size: int) -> bool:
    """Standard parity test for the blank-bottom-right goal."""
    perm = tiles[tiles != 0]
    inversions = int((perm[:, None] > perm[None, :])[np.triu_indices(perm.size, 1)].sum())
    blank_row_from_bottom = size - int(np.flatnonzero(tiles == 0)[0]) // size
    if size % 2:
        return inversions % 2 == 0
    return (inversions + blank_row_from_bottom) % 2 == 1


def solve_sliding(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    pdb: SlidingPDB | None = None,
) -> SearchResult:
    """Optimal solution of one sliding-puzzle state by IDA* over ``pdb`` (default: the partition of
    :func:`~.sliding_pdb.default_partition` with its reflection; built on first use)."""
    size = board_size(puzzle)
    n = size * size
    tiles = np.asarray(state).reshape(-1).astype(np.int64)
    if tiles.size != n or not (np.sort(tiles) == np.arange(n)).all():
        raise InvalidStateError(f"a {n - 1}-puzzle state holds each of 0..{n - 1} once; got {tiles.tolist()}")
    if not _solvable(tiles, size):
        raise InvalidStateError("this tile arrangement cannot be solved (wrong permutation parity)")
    if (tiles == (np.arange(1, n + 1) % n)).all():
        return result("solved", (), 0, 0, 0.0)
    pdb = pdb if pdb is not None else load_sliding_pdb(size)
    if pdb.size != size:
        raise InvalidStateError(f"pattern database is for the {pdb.size}x{pdb.size} board, not {size}x{size}")
    board = tiles.copy()
    pos = np.empty(n, dtype=np.int64)
    pos[board] = np.arange(n)
    lk_val = pdb.lookup_values(board)
    sums = lk_val.reshape(pdb.n_groups, -1).sum(axis=1)
    ctx = new_context(int(sums.max()))
    path = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    nxt = np.zeros(_MAX_DEPTH + 2, dtype=np.int64)
    saved = np.zeros((_MAX_DEPTH + 1, pdb.n_groups), dtype=np.int64)
    kid_val = np.zeros((_MAX_DEPTH + 1, 4, pdb.n_groups), dtype=np.int64)
    kid_h = np.zeros((_MAX_DEPTH + 1, 4), dtype=np.int64)
    nbr = neighbours(size)

    def run(budget: int) -> int:
        return int(_run(board, pos, lk_val, sums, saved, kid_val, kid_h, path, nxt, ctx, budget, nbr,
                        pdb.table, pdb.lk_off, pdb.lk_k, pdb.lk_tiles, pdb.lk_cells, pdb.tile_lookup))  # fmt: skip

    def restart() -> None:
        nxt[0] = -1

    status, moves, nodes, iterations, seconds = drive(
        run, restart, ctx, path, time_limit=time_limit, max_nodes=max_nodes, max_depth=_MAX_DEPTH
    )
    table = blank_actions(puzzle)
    return result(status, tuple(table[m] for m in moves), nodes, iterations, seconds)
