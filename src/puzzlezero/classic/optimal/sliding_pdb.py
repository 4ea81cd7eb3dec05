"""Additive disjoint pattern databases for the sliding-tile puzzles (Korf & Felner 2002).

The tiles are split into disjoint patterns. The database of a pattern ``P`` of ``k`` tiles holds,
for every placement of those tiles (``n!/(n-k)!`` entries, ranked by :mod:`.perm`), the fewest
moves **of pattern tiles** that bring them home, the other tiles being indistinguishable and their
moves free. Because every move moves exactly one tile, the sums over a partition are admissible.
The search runs in the abstract space (pattern placement, blank cell) breadth first; moves of
non-pattern tiles cost nothing, so the blank's whole connected region of free cells is reached at
once (a bitmask flood fill) and each region is expanded once. The entry is the minimum over the
blank position.

A second, free heuristic comes from reflecting the board about its main diagonal, which maps the
goal (blank in the bottom-right corner) to itself: the same tables are looked up on the reflected
state and the larger of the two sums is used. A pattern that is the reflection of an earlier one
shares that one's table.

Lookups are described uniformly as ``(table offset, tiles in table order, cell map)``: the value is
``table[offset + rank(cellmap[pos[tiles]])]``; see :class:`SlidingPDB`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from puzzlezero.classic.optimal.tables import concat_huge, load_or_build
from puzzlezero.errors import PuzzleError

__all__ = [
    "SlidingPDB",
    "build_bytes",
    "default_partition",
    "build_pattern",
    "load_sliding_pdb",
    "partition_name",
    "reflection",
]

Partition = tuple[tuple[int, ...], ...]

_DEFAULT_PARTITIONS: dict[int, Partition] = {
    # 8-puzzle: a small pair for tests and tables
    3: ((1, 2, 3, 4), (5, 6, 7, 8)),
    # 15-puzzle: Korf & Felner's 7-8 split (the 8 tiles of the top two rows, then the rest)
    4: ((1, 2, 3, 4, 5, 6, 7, 8), (9, 10, 11, 12, 13, 14, 15)),
    # 24-puzzle: 6-6-6-6, symmetric about the main diagonal (patterns 2 and 3 are mirror images)
    5: ((1, 2, 3, 6, 7, 11), (4, 5, 8, 9, 10, 14), (12, 16, 17, 18, 21, 22), (13, 15, 19, 20, 23, 24)),
}


def default_partition(size: int) -> Partition:
    """The default partition of the tiles ``1 .. size*size-1``: the table above for sizes 3-5,
    else row-major groups of 5 (the DeepCubeA choice for the 35- and 48-puzzles)."""
    if size in _DEFAULT_PARTITIONS:
        return _DEFAULT_PARTITIONS[size]
    tiles = list(range(1, size * size))
    return tuple(tuple(tiles[i : i + 5]) for i in range(0, len(tiles), 5))


def reflection(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cell_map, tile_map)`` of the reflection about the main diagonal, both ``int64[n]``:
    cell ``(r, c)`` goes to ``(c, r)``; tile ``t`` (home cell ``t-1``, blank home ``n-1``) goes to
    the tile whose home is the reflected cell. Both are involutions fixing the goal."""
    n = size * size
    cells = np.arange(n)
    cell_map = (cells % size) * size + cells // size
    home = np.where(cells == 0, n - 1, cells - 1)  # home cell of tile t
    tile_of_home = np.empty(n, dtype=np.int64)
    tile_of_home[home] = cells
    return cell_map, tile_of_home[cell_map[home]]


def _check_partition(size: int, partition: Partition) -> None:
    n = size * size
    flat = sorted(t for group in partition for t in group)
    if flat != list(range(1, n)):
        raise PuzzleError(
            f"a partition of the {n - 1}-puzzle must use each tile 1..{n - 1} exactly once; got {partition}"
        )
    if max(len(g) for g in partition) > 9 or n > 63:
        raise PuzzleError(
            f"patterns of more than 9 tiles or boards of more than 63 cells are not supported: {partition}"
        )


def neighbours(size: int) -> np.ndarray:
    """``int64[n, 4]``: the cell above, below, left, right of each cell (``-1`` off the board).
    Index ``j`` is also the direction the blank moves; ``j ^ 1`` is its opposite."""
    n = size * size
    out = np.full((n, 4), -1, dtype=np.int64)
    for c in range(n):
        r, col = divmod(c, size)
        if r > 0:
            out[c, 0] = c - size
        if r < size - 1:
            out[c, 1] = c + size
        if col > 0:
            out[c, 2] = c - 1
        if col < size - 1:
            out[c, 3] = c + 1
    return out


def build_pattern(size: int, tiles: tuple[int, ...], threads: int | None = None) -> np.ndarray:
    """The additive database of ``tiles`` on the ``size x size`` board, built on ``threads``
    threads (default: every core; see :func:`.sliding_pdb_build.build_pattern`, which holds the
    numba kernels)."""
    from puzzlezero.classic.optimal.sliding_pdb_build import build_pattern as build

    return build(size, tiles, threads)


@dataclass(frozen=True, eq=False)
class SlidingPDB:
    """An additive heuristic: the maximum over ``groups`` (the partition, and its reflection when
    ``reflect``) of the sum of the group's lookups.

    Lookup ``l`` (``groups * len(partition)`` of them, group-major) reads
    ``table[lk_off[l] + rank(lk_cells[l][pos[lk_tiles[l, :lk_k[l]]]])]`` where ``pos[t]`` is the
    cell of tile ``t``; ``tile_lookup[g, t]`` is the lookup of group ``g`` that holds tile ``t``
    (``-1`` for the blank), so a move of tile ``t`` changes exactly one lookup per group.
    """

    size: int
    partition: Partition
    table: np.ndarray
    lk_off: np.ndarray
    lk_k: np.ndarray
    lk_tiles: np.ndarray
    lk_cells: np.ndarray
    tile_lookup: np.ndarray

    @property
    def n_groups(self) -> int:
        return int(self.tile_lookup.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes)

    def lookup_values(self, tiles: np.ndarray) -> np.ndarray:
        """``int64[L]``: every lookup's value on one board ``tiles[n]`` (the IDA* root)."""
        n = self.size * self.size
        pos = np.empty(n, dtype=np.int64)
        pos[np.asarray(tiles, dtype=np.int64)] = np.arange(n)
        out = np.empty(self.lk_off.size, dtype=np.int64)
        for i in range(out.size):  # a few lookups: plain Python (no numba start-up for one solve)
            q = self.lk_cells[i][pos[self.lk_tiles[i, : self.lk_k[i]]]].tolist()
            r = 0
            for j, c in enumerate(q):  # the rank of :mod:`.perm`
                r = r * (n - j) + c - sum(1 for e in q[:j] if e < c)
            out[i] = self.table[int(self.lk_off[i]) + r]
        return out

    def values(self, states: np.ndarray) -> np.ndarray:
        """Heuristic ``int64[B]`` of tile states ``[B, n]`` (row-major, 0 = blank)."""
        n = self.size * self.size
        s = np.ascontiguousarray(np.asarray(states).reshape(-1, n), dtype=np.int64)
        if not (np.sort(s, axis=1) == np.arange(n)).all():
            raise PuzzleError(f"states of the {n - 1}-puzzle must be permutations of 0..{n - 1}")
        from puzzlezero.classic.optimal.sliding_pdb_build import batch_values

        out = np.empty(s.shape[0], dtype=np.int64)
        batch_values(s, self.table, self.lk_off, self.lk_k, self.lk_tiles, self.lk_cells, self.n_groups, out)
        return out

    def __call__(self, states: np.ndarray) -> np.ndarray:
        """``float32[B]``: the heuristic as the searches want it."""
        return self.values(states).astype(np.float32)


def partition_name(size: int, partition: Partition) -> str:
    """File name (no extension) of a partition's tables, e.g. ``puzzle15_8-7_7d193881``."""
    import hashlib

    digest = hashlib.sha1(repr(partition).encode()).hexdigest()[:8]
    return f"puzzle{size * size - 1}_{'-'.join(str(len(g)) for g in partition)}_{digest}"


def _owners(size: int, partition: Partition) -> list[tuple[int, bool]]:
    """``owner[j] = (i, mirrored)``: pattern ``j`` is served by the table of pattern ``i``,
    through the reflection where ``mirrored`` (the first pattern of each mirror pair owns it)."""
    _, tile_map = reflection(size)
    owner: list[tuple[int, bool]] = []
    for j, group in enumerate(partition):
        mirror = {int(tile_map[t]) for t in group}
        earlier = [i for i in range(j) if set(partition[i]) == mirror and not owner[i][1]]
        owner.append((earlier[0], True) if earlier else (j, False))
    return owner


def build_bytes(size: int, partition: Partition | None = None) -> int:
    """Peak bytes of building the databases of ``partition`` (default :func:`default_partition`):
    the patterns are built one after the other, each in one int64 word a placement (two on boards
    of more than 28 cells) and a byte for its table (:func:`build_pattern`), beside the tables
    built before it; then the tables are joined into one. The 15-puzzle's 7-8 split: 4.3 GiB, its
    8-tile pattern's 518.9 million words (the whole build measured 4.8 GB at its peak on a 2-core
    CPU, the interpreter and libraries included); the 24-puzzle's 6-6-6-6: 1.3 GiB."""
    partition = default_partition(size) if partition is None else tuple(tuple(g) for g in partition)
    n = size * size
    word = 8 if 2 * n <= 56 else 16  # the build's word layout (:mod:`.sliding_pdb_build`)
    peak = held = 0
    for j, (_, mirrored) in enumerate(_owners(size, partition)):
        if not mirrored:
            entries = math.perm(n, len(partition[j]))
            peak = max(peak, held + (word + 1) * entries)
            held += entries
    return max(peak, 2 * held)


@cache
def load_sliding_pdb(size: int, partition: Partition | None = None, reflect: bool = True) -> SlidingPDB:
    """The additive databases of ``partition`` (default :func:`default_partition`) on the
    ``size x size`` board, built and cached on first use, with the reflected lookups if
    ``reflect``. A pattern whose mirror image is an earlier pattern gets no table of its own."""
    partition = default_partition(size) if partition is None else tuple(tuple(g) for g in partition)
    _check_partition(size, partition)
    n = size * size
    cell_map, tile_map = reflection(size)
    ident = np.arange(n)
    owner = _owners(size, partition)
    own = [j for j, (i, mirrored) in enumerate(owner) if not mirrored]

    def build() -> dict[str, np.ndarray]:
        tables = [build_pattern(size, partition[j]) for j in own]
        return {"table": np.concatenate(tables), "sizes": np.array([t.size for t in tables], dtype=np.int64)}

    meta = {"kind": "sliding-additive-pdb", "size": size, "partition": [list(g) for g in partition]}
    command = f"puzzlezero pdb build puzzle{n - 1}" if partition == default_partition(size) else None
    arrays = load_or_build(
        partition_name(size, partition), meta, build, mmap=True, command=command,
        peak_bytes=build_bytes(size, partition),
    )  # fmt: skip
    sizes = [math.perm(n, len(partition[j])) for j in own]
    if arrays["sizes"].tolist() != sizes or arrays["table"].dtype != np.uint8:
        raise PuzzleError(
            f"pattern database for {partition} has table sizes {arrays['sizes'].tolist()}, expected {sizes}"
        )
    offsets = dict(zip(own, np.cumsum([0] + sizes[:-1]).tolist(), strict=True))

    lookups: list[tuple[int, np.ndarray, np.ndarray]] = []  # (offset, tiles in table order, cell map)
    for mirrored_group in [False, True] if reflect else [False]:
        for i, mirrored in owner:
            tiles = np.array(partition[i])
            # this pattern on the (possibly reflected) board, through the table of pattern i
            if mirrored != mirrored_group:
                lookups.append((offsets[i], tile_map[tiles], cell_map))
            else:
                lookups.append((offsets[i], tiles, ident))
    kmax = max(len(g) for g in partition)
    n_lk = len(lookups)
    lk_tiles = np.zeros((n_lk, kmax), dtype=np.int64)
    tile_lookup = np.full((2 if reflect else 1, n), -1, dtype=np.int64)
    for i, (_, tiles, _) in enumerate(lookups):
        lk_tiles[i, : len(tiles)] = tiles
        tile_lookup[i // len(partition), tiles] = i
    # boards of 25+ cells mean long searches: copy the mapped table into huge pages (fewer TLB
    # misses); the 15-puzzle's stays mapped, so that a process starts at once
    table = concat_huge([arrays["table"]]) if size >= 5 else arrays["table"]
    return SlidingPDB(
        size, partition, table, np.array([lk[0] for lk in lookups], dtype=np.int64),
        np.array([len(lk[1]) for lk in lookups], dtype=np.int64), lk_tiles,
        np.stack([lk[2] for lk in lookups]).astype(np.int64), tile_lookup,
    )  # fmt: skip
