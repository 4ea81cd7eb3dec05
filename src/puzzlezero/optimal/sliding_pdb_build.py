"""Numba kernels of the sliding-puzzle pattern databases: the breadth-first build and batched
lookups. Kept apart from :mod:`.sliding_pdb` so that loading a database and solving with the
compiled kernel never imports numba (a one-shot solve then starts in a fraction of a second).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from puzzlezero.optimal.perm import num_ranks, rank, unrank
from puzzlezero.optimal.sliding_pdb import neighbours
from puzzlezero.optimal.tables import level_progress

__all__ = ["build_pattern", "lookup", "batch_values"]


# --------------------------------------------------------------------------- building (BFS)
@nb.njit(cache=True, inline="always")
def _flood(
    start: np.int64, free: np.int64, size: int, not_first_col: np.int64, not_last_col: np.int64
) -> np.int64:
    """Bitmask of the free cells connected to cell ``start`` (which must be free)."""
    region = np.int64(1) << start
    while True:
        grow = region | ((region << 1) & not_first_col) | ((region >> 1) & not_last_col)
        grow |= (region << size) | (region >> size)
        grow &= free
        if grow == region:
            return region
        region = grow


@nb.njit(cache=True)
def _bfs_level(cur, nxt, seen, dist, level, k, size, nbr, full, not_first, not_last):  # fmt: skip
    """Expand every (placement, blank region) first reached at ``level`` (bitmasks in ``cur``).

    For each pattern tile next to a cell of the blank's region, slide it into that cell (cost 1);
    the child's blank region is flooded and recorded in ``seen``/``nxt``. Returns
    ``(placements reached for the first time, regions reached for the first time)``.
    """
    n = size * size
    q = np.empty(k, dtype=np.int64)
    new_placements = 0
    new_regions = 0
    for r in range(cur.shape[0]):
        m = np.int64(cur[r])
        if m == 0:
            continue
        unrank(np.int64(r), k, n, q)
        occ = np.int64(0)
        for i in range(k):
            occ |= np.int64(1) << q[i]
        for i in range(k):
            c = q[i]
            for j in range(4):
                b = nbr[c, j]
                if b < 0 or not (m >> b) & 1:
                    continue
                q[i] = b
                r2 = rank(q, k, n)
                q[i] = c
                if (np.int64(seen[r2]) >> c) & 1:
                    continue
                free = full & ~(occ ^ (np.int64(1) << c) ^ (np.int64(1) << b))
                region = _flood(c, free, size, not_first, not_last)
                seen[r2] |= region
                nxt[r2] |= region
                new_regions += 1
                if dist[r2] == 255:
                    dist[r2] = level + 1
                    new_placements += 1
    return new_placements, new_regions


def build_pattern(size: int, tiles: tuple[int, ...]) -> np.ndarray:
    """The additive database of ``tiles`` on the ``size x size`` board: ``uint8[n!/(n-k)!]``,
    indexed by the rank of the tiles' cells (in the order given). A pattern of all ``n - 1`` tiles
    is the whole puzzle: its unsolvable half keeps the value 255."""
    n, k = size * size, len(tiles)
    total = num_ranks(n, k)
    mask_dtype = np.uint16 if n <= 16 else np.uint32 if n <= 32 else np.uint64
    dist = np.full(total, 255, dtype=np.uint8)
    seen = np.zeros(total, dtype=mask_dtype)
    cur = np.zeros(total, dtype=mask_dtype)
    nxt = np.zeros(total, dtype=mask_dtype)
    full = (1 << n) - 1
    first_col = sum(1 << (r * size) for r in range(size))
    last_col = first_col << (size - 1)
    full64, nf, nl = np.int64(full), np.int64(full & ~first_col), np.int64(full & ~last_col)
    q = np.array([t - 1 for t in tiles], dtype=np.int64)  # home cells
    r0 = rank(q, k, n)
    free = full & ~sum(1 << int(c) for c in q)
    region = int(_flood(np.int64(n - 1), np.int64(free), size, nf, nl))
    seen[r0] = cur[r0] = region
    dist[r0] = 0
    nbr = neighbours(size)
    level = 0
    with level_progress(f"{n - 1}-puzzle pattern {list(tiles)}", total) as update:
        update(0, 1)
        while True:
            new_placements, new_regions = _bfs_level(
                cur, nxt, seen, dist, level, k, size, nbr, full64, nf, nl
            )
            update(level + 1, new_placements)
            if new_regions == 0:
                break
            cur, nxt = nxt, cur
            nxt[:] = 0
            level += 1
    if k < n - 1 and (dist == 255).any():  # with every tile in the pattern, odd placements are unreachable
        raise AssertionError("pattern database has unreached entries")  # impossible: the space is connected
    return dist


# --------------------------------------------------------------------------- the heuristic
@nb.njit(cache=True, inline="always")
def lookup(table, off, k, tiles, cells, pos, q, n):  # fmt: skip
    """Value of one lookup: ``table[off + rank(cells[pos[tiles[:k]]])]``."""
    for i in range(k):
        q[i] = cells[pos[tiles[i]]]
    return np.int64(table[off + rank(q, k, n)])


@nb.njit(cache=True)
def batch_values(states, table, lk_off, lk_k, lk_tiles, lk_cells, n_groups, out):  # fmt: skip
    n = states.shape[1]
    per = lk_off.shape[0] // n_groups
    pos = np.empty(n, dtype=np.int64)
    q = np.empty(n, dtype=np.int64)
    for b in range(states.shape[0]):
        for c in range(n):
            pos[states[b, c]] = c
        best = 0
        for g in range(n_groups):
            s = 0
            for j in range(g * per, (g + 1) * per):
                s += lookup(table, lk_off[j], lk_k[j], lk_tiles[j], lk_cells[j], pos, q, n)
            best = max(best, s)
        out[b] = best
