"""Optimal sliding-tile solutions: IDA* over additive pattern databases, in compiled code.

The search keeps the board, the tile positions and every lookup's current value; a move slides one
tile, so only that tile's lookup in each group is recomputed (Korf & Felner's incremental
evaluation) and the group sums are updated by the difference. The children of a node are
evaluated together when it is expanded, so that their random table reads overlap in memory. The
blank never moves straight back. The kernel is compiled C (``_csliding.c``, built at install when a
compiler is present) or else numba (:mod:`._sliding_nb`); both follow :mod:`.ida`'s protocol.
Kernel move ``j`` moves the blank up, down, left, right (``j ^ 1`` undoes it); the puzzle's own
action ids are found by probing the puzzle, so no naming convention is assumed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache

import numpy as np

from puzzlezero.classic.optimal.ida import drive, new_context, result
from puzzlezero.classic.optimal.sliding_pdb import SlidingPDB, load_sliding_pdb, neighbours
from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search.result import SearchResult

__all__ = ["solve_sliding", "blank_actions", "board_size"]

_MAX_DEPTH = 1000

#: set to ``1`` to use the numba kernel even when the compiled one exists (tests compare the two)
NO_C_KERNEL_ENV = "PUZZLEZERO_NO_C_KERNEL"


def kernel_name() -> str:
    """``"c"`` when the compiled kernel is used, else ``"numba"``."""
    return "c" if _c_kernel() is not None else "numba"


@cache
def _c_kernel() -> Callable[..., int] | None:
    if os.environ.get(NO_C_KERNEL_ENV, "") not in ("", "0"):
        return None
    try:
        from puzzlezero.classic.optimal import _csliding  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _csliding.run  # type: ignore[no-any-return]


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
    deadline: float | None = None,
    pdb: SlidingPDB | None = None,
) -> SearchResult:
    """Optimal solution of one sliding-puzzle state by IDA* over ``pdb`` (default: the partition of
    :func:`~.sliding_pdb.default_partition` with its reflection; built on first use). The search
    stops with status "time limit" at ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`)
    or ``time_limit`` seconds after IDA* starts (the database loaded), whichever comes first."""
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

    arrays = (board, pos, lk_val, sums, saved, kid_val, kid_h, path, nxt, ctx)
    tables = (nbr, pdb.table, pdb.lk_off, pdb.lk_k, pdb.lk_tiles, pdb.lk_cells, pdb.tile_lookup)
    c_run = _c_kernel()
    if c_run is not None:
        if not all(
            a.dtype == np.int64 and a.flags.c_contiguous for a in arrays + tables if a is not pdb.table
        ):
            raise AssertionError("the sliding kernel takes C-contiguous int64 arrays")  # by construction
        table = np.ascontiguousarray(pdb.table, dtype=np.uint8)
        sizes = (n, pdb.n_groups, pdb.lk_tiles.shape[1])

        def run(budget: int) -> int:
            return int(c_run(*arrays, budget, nbr, table, *tables[2:], *sizes))

    else:
        from puzzlezero.classic.optimal._sliding_nb import run as nb_run

        def run(budget: int) -> int:
            return int(nb_run(*arrays, budget, *tables))

    return drive(
        run,
        ctx,
        path,
        nxt,
        blank_actions(puzzle),
        time_limit=time_limit,
        max_nodes=max_nodes,
        max_depth=_MAX_DEPTH,
        deadline=deadline,
    )
