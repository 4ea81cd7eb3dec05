"""The numba IDA* kernel for sliding puzzles: the fallback when the C kernel (``_csliding.c``, same
algorithm, same protocol) was not compiled. See :mod:`.sliding_ida`."""

from __future__ import annotations

import numba as nb
import numpy as np

from puzzlezero.classic.optimal.ida import DONE, FOUND, PAUSED
from puzzlezero.classic.optimal.perm import rank

__all__ = ["run"]


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
def run(board, pos, lk_val, sums, saved, kid_val, kid_h, path, nxt, ctx, budget, nbr,
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
