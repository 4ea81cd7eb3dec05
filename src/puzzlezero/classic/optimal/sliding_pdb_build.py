"""Numba kernels of the sliding-puzzle pattern databases: the breadth-first build and batched
lookups. Kept apart from :mod:`.sliding_pdb` so that loading a database and solving with the
compiled kernel never imports numba (a one-shot solve then starts in a fraction of a second).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np

from puzzlezero.classic.optimal._bits import atomic_add, atomic_or, popcount, prefetch, trailing_zeros
from puzzlezero.classic.optimal.perm import num_ranks, rank
from puzzlezero.classic.optimal.tables import huge_zeros, level_progress

__all__ = ["build_pattern", "default_threads", "lookup", "batch_values"]


# --------------------------------------------------------------------------- building (BFS)
#: bits 56-63 of a placement's first word hold its value (the level it was first reached at)
_VALUE_SHIFT = 56
#: placements per block: a level only scans the blocks that received frontier regions
_BLOCK_BITS = 10
#: blocks a thread takes from the shared counter at a time
_CHUNK = 16
#: a placement's children are recorded this many placements after their memory was prefetched
_AHEAD = 1
#: tables of this many placements or more get a kernel compiled for their shape
_SPECIALIZE_FROM = 1 << 24
#: a placement at most this many ranks after the last one is reached by odometer steps, not unranked
_ODOMETER_REACH = 24


@nb.njit(cache=True, inline="always")
def _at(i):  # noqa: ANN001, ANN202
    """Index ``i`` (never negative) as unsigned, so that numba skips its negative-index
    wraparound on the hot paths (about 6% of the build)."""
    return np.uint64(i)


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


@nb.njit(cache=True, inline="always")
def _unrank(r, k, n, full, weight, q, digit, below, cell_weight, cell_below):  # fmt: skip
    """:func:`.perm.unrank` that also keeps each piece's digit and ``below[i]`` (the cells of
    pieces ``0 .. i-1``), and per occupied cell the weight and ``below`` of its piece (other
    cells keep stale values); returns the bitmask of all ``k`` cells."""
    for i in range(k - 1, -1, -1):
        base = n - i
        digit[i] = r % base
        r //= base
    used = np.int64(0)
    for i in range(k):
        below[i] = used
        free = full & ~used
        for _ in range(digit[i]):  # drop the digit[i] lowest free cells
            free &= free - 1
        c = trailing_zeros(free)
        q[i] = c
        cell_weight[c] = weight[i]
        cell_below[c] = used
        used |= np.int64(1) << c
    return used


@nb.njit(cache=True, inline="always")
def _advance(steps, k, full, weight, q, digit, below, cell_weight, cell_below):  # fmt: skip
    """Step the placement of :func:`_unrank` ``steps`` ranks on (an odometer: the last piece
    moves to its next free cell; when it has none, the piece before it moves and the later ones
    restart from their lowest free cells); returns the new bitmask of all cells."""
    last = k - 1
    while True:
        up = full & ~below[last] & ~((np.int64(2) << q[last]) - 1)  # the last piece's next cells
        room = popcount(up)
        if steps <= room:  # the last piece alone moves on: to its steps-th next free cell
            for _ in range(steps - 1):
                up &= up - 1
            c = trailing_zeros(up)
            q[last] = c
            digit[last] += steps
            cell_weight[c] = weight[last]
            cell_below[c] = below[last]
            return below[last] | (np.int64(1) << c)
        steps -= room + 1  # past the last piece's cells, and one step more: a carry
        i = last - 1
        while True:
            up = full & ~below[i] & ~((np.int64(2) << q[i]) - 1)
            if up != 0:
                break
            i -= 1
        c = trailing_zeros(up)
        q[i] = c
        digit[i] += 1
        cell_weight[c] = weight[i]
        cell_below[c] = below[i]
        used = below[i] | (np.int64(1) << c)
        for i2 in range(i + 1, k):
            below[i2] = used
            c = trailing_zeros(full & ~used)
            q[i2] = c
            digit[i2] = 0
            cell_weight[c] = weight[i2]
            cell_below[c] = used
            used |= np.int64(1) << c
        if steps == 0:
            return used


@nb.njit(cache=True, inline="always")
def _slides(word, lane, pos0, vertical, r, occ, size, cell_weight, cell_below, kid_rank, kid_move, m):  # fmt: skip
    """Append to ``kid_*[m:]`` the children for the slides in ``word``: bit ``c`` a piece on cell
    ``c`` sliding left (up if ``vertical``), bit ``lane + c`` one sliding right (down); with
    ``pos0`` every bit is a slide right (down). Returns the new count (see :func:`_children`)."""
    span = (np.int64(1) << (size - 1)) - 1  # the cells a vertical slide jumps, shifted to bit 0
    while word != 0:
        x = trailing_zeros(word)
        word &= word - 1
        high = np.int64(x >= lane)
        c = x - lane * high
        step = 2 * (pos0 | high) - 1
        if vertical:
            b = c + step * size
            low = min(b, c) + 1
            between = span << low
            earlier = cell_below[_at(c)]
            later = occ & ~earlier & between
            delta = (size - popcount(earlier & between)) * cell_weight[_at(c)]
            for y in range(low, low + size - 1):
                delta += cell_weight[_at(y)] * ((later >> y) & 1)
        else:
            b = c + step
            delta = cell_weight[_at(c)]
        kid_rank[_at(m)] = r + step * delta
        kid_move[_at(m)] = c | (b << 8)
        m += 1
    return m


@nb.njit(cache=True, inline="always")
def _children(r, cur, occ, n, size, not_first, not_last, cell_weight, cell_below, kid_rank, kid_move):  # fmt: skip
    """The children of placement ``r`` (cells ``occ``) whose moved tile enters the frontier
    region ``cur``: ranks into ``kid_rank``, moves into ``kid_move`` (the cell the tile left, the
    blank's in the child, plus 256 times the cell it entered); returns their number.

    A child's rank is ``r`` plus a difference (:func:`.perm.rank`: digit ``i`` counts the cells
    below piece ``i`` not taken by earlier pieces, in radix ``n - i``, of weight ``w_i``). A
    horizontal slide changes only the moved piece's digit, by one: ``+-w_i``. A vertical slide
    over the ``size - 1`` cells between changes it by ``size`` less the earlier pieces on them,
    and the digit of each later piece on them by one: ``+-((size - E) w_i + sum of their w)``.
    The slides of both ways share one bit word (two on boards of more than 31 cells)."""
    left, right = occ & (cur << 1) & not_first, occ & (cur >> 1) & not_last
    up, down = occ & (cur << size), occ & (cur >> size)
    if 2 * n < 64:
        m = _slides(left | (right << n), n, 0, False, r, occ, size, cell_weight, cell_below,
                    kid_rank, kid_move, 0)  # fmt: skip
        return _slides(up | (down << n), n, 0, True, r, occ, size, cell_weight, cell_below,
                       kid_rank, kid_move, m)  # fmt: skip
    m = _slides(left, 64, 0, False, r, occ, size, cell_weight, cell_below, kid_rank, kid_move, 0)
    m = _slides(right, 64, 1, False, r, occ, size, cell_weight, cell_below, kid_rank, kid_move, m)
    m = _slides(up, 64, 0, True, r, occ, size, cell_weight, cell_below, kid_rank, kid_move, m)
    return _slides(down, 64, 1, True, r, occ, size, cell_weight, cell_below, kid_rank, kid_move, m)


@nb.njit(cache=True, inline="always")
def _record(words, flags, wpp, n, level, size, full, not_first, not_last, occ, kid_rank, kid_move, m):  # fmt: skip
    """Record the blank regions of the children ``kid_*[:m]`` not reached before (see
    :func:`_expand_level` for the layout); returns ``(new placements, new regions)``."""
    nmask = (np.int64(1) << n) - 1
    shift_b = n if wpp == 1 else 0
    odd = level & 1
    w_off, w_shift = (wpp - 1, shift_b) if odd == 0 else (0, 0)
    o_off, o_shift = (0, 0) if odd == 0 else (wpp - 1, shift_b)
    new_placements = 0
    new_regions = 0
    for t in range(m):
        r2 = kid_rank[_at(t)]
        c = kid_move[_at(t)] & 255
        if ((words[_at(r2 * wpp)] | (words[_at(r2 * wpp + wpp - 1)] >> shift_b)) >> c) & 1:
            continue  # this region was reached before
        b = kid_move[_at(t)] >> 8  # the cell the tile moved to
        region = _flood(c, full & ~(occ ^ (np.int64(1) << c) ^ (np.int64(1) << b)), size, not_first, not_last)
        value = np.int64(0)
        if wpp == 1 and (words[_at(r2)] | (words[_at(r2)] >> shift_b)) & nmask == 0:
            # first reached, it seems: the value goes with the region (any other thread that
            # reaches it at this level writes the same value)
            value = np.int64(level + 1) << _VALUE_SHIFT
        old = atomic_or(words, r2 * wpp + w_off, (region << w_shift) | value)
        rest = old if wpp == 1 else words[r2 * wpp + o_off]
        was = ((old >> w_shift) | (rest >> o_shift)) & nmask
        if was & region:
            continue  # another thread recorded it first
        new_regions += 1
        if flags[_at(1 - odd), _at(r2 >> _BLOCK_BITS)] == 0:
            flags[_at(1 - odd), _at(r2 >> _BLOCK_BITS)] = 1
        if was == 0:
            if wpp == 2:
                atomic_or(words, r2 * wpp, np.int64(level + 1) << _VALUE_SHIFT)
            new_placements += 1
    return new_placements, new_regions


@nb.njit(cache=True, nogil=True, inline="always")
def _expand_level(words, flags, next_block, level, k, n, wpp, size, weight, full, not_first, not_last):  # fmt: skip
    """One thread's share of a breadth-first level: expand every (placement, blank region) first
    reached at ``level`` in the blocks this thread takes, ``_CHUNK`` at a time, from the shared
    counter ``next_block[0]``.

    ``words`` holds ``wpp`` int64 words per placement: two bit planes ``A`` (word 0, bits
    ``0..n-1``) and ``B`` (the last word, from bit ``n`` when ``wpp == 1``, else from bit 0) give
    each cell a code: 0 not reached, 1 (``A`` only) or 2 (``B`` only) reached at an even or an odd
    level and not expanded yet, 3 expanded. A reached region's cells all carry its code. An even
    level expands the code-1 regions and writes only plane ``B`` (its regions become 3, new
    regions 2), an odd level the reverse, so every update is an atomic OR and threads never lose
    each other's updates. Bits 56-63 of word 0 take the placement's value when it is first
    reached. ``flags[p, block]`` marks the blocks of ``2**_BLOCK_BITS`` placements holding
    regions of code ``p + 1``.

    For each pattern tile next to a cell of a frontier region, the tile slides into that cell
    (cost 1, :func:`_children`); the child's blank region is flooded and recorded
    (:func:`_record`) while the next placement's children are being computed, so that their
    memory reads overlap. Returns ``(placements reached for the first time, regions reached
    for the first time)`` by this thread.
    """
    total = words.shape[0] // wpp
    n_blocks = flags.shape[1]
    nmask = (np.int64(1) << n) - 1
    shift_b = n if wpp == 1 else 0
    odd = level & 1
    # the plane this level writes (B on even levels, A on odd ones) and the other one
    w_off, w_shift = (wpp - 1, shift_b) if odd == 0 else (0, 0)
    o_off, o_shift = (0, 0) if odd == 0 else (wpp - 1, shift_b)
    q = np.empty(k, dtype=np.int64)
    digit = np.empty(k, dtype=np.int64)
    below = np.empty(k, dtype=np.int64)
    cell_weight = np.zeros(n, dtype=np.int64)
    cell_below = np.zeros(n, dtype=np.int64)
    # children of the last _AHEAD + 1 placements, in a ring: those of the newest are being
    # computed (and their words prefetched) while those of the oldest are recorded
    kid_rank = np.empty((_AHEAD + 1, 4 * k), dtype=np.int64)
    kid_move = np.empty((_AHEAD + 1, 4 * k), dtype=np.int64)
    kid_occ = np.zeros(_AHEAD + 1, dtype=np.int64)
    kid_count = np.zeros(_AHEAD + 1, dtype=np.int64)
    todo_rank = np.empty(1 << _BLOCK_BITS, dtype=np.int64)
    todo_cur = np.empty(1 << _BLOCK_BITS, dtype=np.int64)
    new_placements = 0
    new_regions = 0
    while True:
        first = atomic_add(next_block, 0, _CHUNK)
        if first >= n_blocks:
            break
        for blk in range(first, min(first + _CHUNK, n_blocks)):
            if flags[odd, blk] == 0:
                continue
            flags[odd, blk] = 0
            at = np.int64(-1 - _ODOMETER_REACH)  # the rank the odometer stands at
            occ = np.int64(0)
            found = 0  # the block's placements with frontier regions, gathered without branches
            for r in range(blk << _BLOCK_BITS, min((blk + 1) << _BLOCK_BITS, total)):
                own = (words[_at(r * wpp + w_off)] >> w_shift) & nmask
                cur = ((words[_at(r * wpp + o_off)] >> o_shift) & nmask) & ~own
                todo_rank[_at(found)] = r
                todo_cur[_at(found)] = cur
                found += cur != 0
            slot = 0
            for t in range(found + _AHEAD):
                if t < found:
                    r = todo_rank[_at(t)]
                    cur = todo_cur[_at(t)]
                    atomic_or(words, r * wpp + w_off, cur << w_shift)  # expanded now
                    if r - at > _ODOMETER_REACH:
                        occ = _unrank(
                            np.int64(r), k, n, full, weight, q, digit, below, cell_weight, cell_below
                        )
                    else:
                        occ = _advance(r - at, k, full, weight, q, digit, below, cell_weight, cell_below)
                    at = r
                    m = _children(r, cur, occ, n, size, not_first, not_last, cell_weight, cell_below,
                                  kid_rank[slot], kid_move[slot])  # fmt: skip
                    kid_occ[slot] = occ
                    kid_count[slot] = m
                    for j in range(m):
                        prefetch(words, kid_rank[_at(slot), _at(j)] * wpp)
                slot = slot + 1 if slot < _AHEAD else 0  # the oldest
                placements, regions = _record(words, flags, wpp, n, level, size, full, not_first, not_last,
                                              kid_occ[slot], kid_rank[slot], kid_move[slot], kid_count[slot])  # fmt: skip
                kid_count[slot] = 0
                new_placements += placements
                new_regions += regions
    return new_placements, new_regions


@nb.njit(cache=True, nogil=True)
def _values(words, n, wpp, out, part, parts):  # fmt: skip
    """``out[r]`` for the ``part``-th of ``parts`` slices of the placements: the value of
    placement ``r`` (255 if it was never reached)."""
    nmask = (np.int64(1) << n) - 1
    shift_b = n if wpp == 1 else 0
    size = (out.shape[0] + parts - 1) // parts
    for r in range(part * size, min((part + 1) * size, out.shape[0])):
        a = words[r * wpp]
        if (a | (words[r * wpp + wpp - 1] >> shift_b)) & nmask == 0:
            out[r] = 255
        else:
            out[r] = (a >> _VALUE_SHIFT) & 255


@nb.njit(cache=True, nogil=True)
def _expand_any(words, flags, next_block, level, k, n, wpp, size, weight, full, not_first, not_last):  # fmt: skip
    """:func:`_expand_level` for any board and pattern (one compiled kernel for small tables)."""
    return _expand_level(words, flags, next_block, level, k, n, wpp, size, weight, full, not_first, not_last)


@functools.cache
def _expand_for(size: int):  # noqa: ANN202
    """:func:`_expand_level` compiled for one board size, with the board's constants built in
    (``expand(words, flags, next_block, level, k, weight)``): about 15% faster than the kernel
    for any shape (:func:`_expand_any`), and also than one that fixes the pattern length too.
    Each size is compiled once (about 10 s), then cached on disk."""
    n = size * size
    wpp = 1 if 2 * n <= _VALUE_SHIFT else 2
    full = (1 << n) - 1
    first_col = sum(1 << (r * size) for r in range(size))
    not_first, not_last = full & ~first_col, full & ~(first_col << (size - 1))

    @nb.njit(cache=True, nogil=True)
    def expand(words, flags, next_block, level, k, weight):  # noqa: ANN001, ANN202
        return _expand_level(words, flags, next_block, level, k, n, wpp, size, weight,
                             np.int64(full), np.int64(not_first), np.int64(not_last))  # fmt: skip

    return expand


def _level_kernel(size: int, k: int, total: int) -> Callable[..., tuple[int, int]]:
    """``expand(words, flags, next_block, level)``: one thread's share of a level
    (:func:`_expand_level`), with a kernel compiled for the board size for tables of
    ``_SPECIALIZE_FROM`` placements or more."""
    n = size * size
    weight = np.array([num_ranks(n - i - 1, k - i - 1) for i in range(k)], dtype=np.int64)
    if total >= _SPECIALIZE_FROM:
        sized = _expand_for(size)
        return lambda words, flags, next_block, level: sized(words, flags, next_block, level, k, weight)
    wpp = 1 if 2 * n <= _VALUE_SHIFT else 2
    full = (1 << n) - 1
    first_col = sum(1 << (r * size) for r in range(size))
    masks = np.int64(full), np.int64(full & ~first_col), np.int64(full & ~(first_col << (size - 1)))
    return lambda words, flags, next_block, level: _expand_any(
        words, flags, next_block, level, k, n, wpp, size, weight, *masks
    )


def default_threads() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def build_pattern(size: int, tiles: tuple[int, ...], threads: int | None = None) -> np.ndarray:
    """The additive database of ``tiles`` on the ``size x size`` board: ``uint8[n!/(n-k)!]``,
    indexed by the rank of the tiles' cells (in the order given). A pattern of all ``n - 1`` tiles
    is the whole puzzle: its unsolvable half keeps the value 255.

    A breadth-first search over (placement, blank region) on ``threads`` threads (default: every
    core this process may use; the same table for any number) that update a shared table
    atomically (:func:`_expand_level`): one int64 word a placement (two on boards of more than
    28 cells), in memory backed by huge pages. A progress bar shows the levels on a terminal."""
    n, k = size * size, len(tiles)
    if n > _VALUE_SHIFT:
        raise ValueError(f"boards of more than {_VALUE_SHIFT} cells are not supported, got {n}")
    threads = default_threads() if threads is None else threads
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    total = num_ranks(n, k)
    wpp = 1 if 2 * n <= _VALUE_SHIFT else 2
    words = huge_zeros(total * wpp, np.int64)
    flags = np.zeros((2, (total >> _BLOCK_BITS) + 1), dtype=np.uint8)
    full = (1 << n) - 1
    first_col = sum(1 << (r * size) for r in range(size))
    last_col = first_col << (size - 1)
    nf, nl = np.int64(full & ~first_col), np.int64(full & ~last_col)
    q = np.array([t - 1 for t in tiles], dtype=np.int64)  # home cells
    r0 = int(rank(q, k, n))
    free = full & ~sum(1 << int(c) for c in q)
    words[r0 * wpp] = int(_flood(np.int64(n - 1), np.int64(free), size, nf, nl))  # code 1, value 0
    flags[0, r0 >> _BLOCK_BITS] = 1
    next_block = np.zeros(1, dtype=np.int64)
    dist = np.empty(total, dtype=np.uint8)
    expand = _level_kernel(size, k, total)
    with ThreadPoolExecutor(threads) as pool:

        def on_all_threads(kernel, *args):  # noqa: ANN001, ANN002, ANN202
            if threads == 1:
                return [kernel(*args)]
            return [job.result() for job in [pool.submit(kernel, *args) for _ in range(threads)]]

        level = 0
        with level_progress(f"{n - 1}-puzzle pattern {list(tiles)}", total) as update:
            update(0, 1)
            while True:
                next_block[0] = 0
                counts = on_all_threads(expand, words, flags, next_block, level)
                update(level + 1, sum(c[0] for c in counts))
                if sum(c[1] for c in counts) == 0:
                    break
                level += 1
        for job in [pool.submit(_values, words, n, wpp, dist, part, threads) for part in range(threads)]:
            job.result()
    del words
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
