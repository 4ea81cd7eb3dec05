"""A shortest way between two boards of a sliding puzzle: IDA* on Manhattan distance plus linear
conflicts measured to the second board, numba.

The goal of this search is any board, not the puzzle's goal: each tile's home is the cell it holds
on the target board (the blank has none), so Manhattan distance and linear conflicts (Hansson,
Mayer and Yung 1992; :mod:`puzzlezero.puzzles.npuzzle.linear_conflict`) stay admissible for it.
Both are kept up to date move by move: a move shifts one tile by one cell (its Manhattan term
changes by 1) and changes the tiles of at most two lines, whose conflicts are counted again (a
horizontal move changes two columns, a vertical one two rows).

IDA* (Korf 1985) raises its threshold by 2 (every path between two boards has the same parity)
and looks only for a way *shorter* than a given ``bound``: this is the window solver of
:mod:`puzzlezero.search.windows`, which asks whether a stretch of a solution can be walked in
fewer moves. The search is bounded in nodes; past the bound it answers ``None``, as when no
shorter way exists.

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("puzzle8")
>>> a = p.goal()
>>> b = p.apply_moves(a, p.parse_moves("D R U L D R U L D R U L D D"))  # a loop of 12, then 2
>>> way, nodes = sliding_between(p)(a, b, bound=14, max_nodes=100_000)
>>> p.format_moves(way)
['D', 'D']
>>> sliding_between(p)(a, b, bound=2, max_nodes=100_000)[0] is None   # none shorter than 2
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numba as nb
import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.npuzzle.linear_conflict import must_leave
from puzzlezero.puzzles.npuzzle.rules import BLANK_STEP, NPuzzle
from puzzlezero.search.windows import Between

__all__ = ["sliding_between"]

_MAX_DEPTH = 256


@nb.njit(cache=True, inline="always")
def _line_conflicts(board, n, line, is_row, home_r, home_c, keys, best):  # fmt: skip  # pragma: no cover
    """Twice the tiles of one row (``is_row``) or column that must leave it and come back."""
    k = 0
    for i in range(n):
        cell = line * n + i if is_row else i * n + line
        v = board[cell]
        if v == 0:
            continue
        if is_row:
            if home_r[v] == line:
                keys[k] = home_c[v]
                k += 1
        elif home_c[v] == line:
            keys[k] = home_r[v]
            k += 1
    return 2 * must_leave(keys, k, best)


@nb.njit(cache=True, inline="always")
def _unwind(board, blanks, depth):  # fmt: skip  # pragma: no cover
    """Undo the moves of depths ``depth .. 1``: the board as IDA* was given it."""
    for d in range(depth, 0, -1):
        board[blanks[d]], board[blanks[d - 1]] = board[blanks[d - 1]], 0


@nb.njit(cache=True)
def _ida(board, n, home_r, home_c, step_r, step_c, inverse, bound, max_nodes, path):  # fmt: skip  # pragma: no cover
    """IDA* from ``board`` (changed in place, restored on return) to the board whose tile ``v``
    is at row ``home_r[v]``, column ``home_c[v]``; moves ``a`` shift the blank by ``step_r[a],
    step_c[a]``. Returns ``(length, nodes)``: the length of a shortest way (its moves in
    ``path[:length]``) if it is below ``bound``, else ``-1`` (none below ``bound``) or ``-2``
    (``max_nodes`` reached first)."""
    keys = np.empty(n, dtype=np.int64)
    best = np.empty(n, dtype=np.int64)
    rows = np.empty(n, dtype=np.int64)
    cols = np.empty(n, dtype=np.int64)
    blank = 0
    md = 0
    for cell in range(n * n):
        v = board[cell]
        if v == 0:
            blank = cell
        else:
            md += abs(cell // n - home_r[v]) + abs(cell % n - home_c[v])
    lc = 0
    for i in range(n):
        rows[i] = _line_conflicts(board, n, i, True, home_r, home_c, keys, best)
        cols[i] = _line_conflicts(board, n, i, False, home_r, home_c, keys, best)
        lc += rows[i] + cols[i]
    h0 = md + lc
    na = step_r.shape[0]
    nodes = 0
    threshold = h0
    # per depth: the next move to try, the blank before the move, and the h before it
    nxt = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    blanks = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    md_at = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    lc_at = np.zeros(_MAX_DEPTH + 1, dtype=np.int64)
    saved = np.zeros((_MAX_DEPTH + 1, 2), dtype=np.int64)
    while threshold < bound:
        if h0 == 0:
            return 0, nodes
        depth = 0
        nxt[0] = 0
        blanks[0] = blank
        md_at[0] = md
        lc_at[0] = lc
        next_threshold = 1 << 30
        while depth >= 0:
            if nxt[depth] >= na:  # every move of this node tried: undo the move that made it
                if depth == 0:
                    break
                a = path[depth - 1]
                b = blanks[depth]
                prev = blanks[depth - 1]
                board[b], board[prev] = board[prev], 0
                if step_r[a] == 0:
                    cols[prev % n] = saved[depth, 0]
                    cols[b % n] = saved[depth, 1]
                else:
                    rows[prev // n] = saved[depth, 0]
                    rows[b // n] = saved[depth, 1]
                depth -= 1
                continue
            a = nxt[depth]
            nxt[depth] += 1
            if depth > 0 and a == inverse[path[depth - 1]]:
                continue
            b = blanks[depth]
            r = b // n + step_r[a]
            c = b % n + step_c[a]
            if r < 0 or r >= n or c < 0 or c >= n or depth >= _MAX_DEPTH:
                continue
            to = r * n + c
            v = board[to]
            nodes += 1
            md2 = md_at[depth] - abs(r - home_r[v]) - abs(c - home_c[v])
            md2 += abs(b // n - home_r[v]) + abs(b % n - home_c[v])
            board[b], board[to] = v, 0
            lc2 = lc_at[depth]
            if step_r[a] == 0:  # horizontal: the tile changes column
                o1, o2 = cols[b % n], cols[to % n]
                cols[b % n] = _line_conflicts(board, n, b % n, False, home_r, home_c, keys, best)
                cols[to % n] = _line_conflicts(board, n, to % n, False, home_r, home_c, keys, best)
                lc2 += cols[b % n] + cols[to % n] - o1 - o2
            else:
                o1, o2 = rows[b // n], rows[to // n]
                rows[b // n] = _line_conflicts(board, n, b // n, True, home_r, home_c, keys, best)
                rows[to // n] = _line_conflicts(board, n, to // n, True, home_r, home_c, keys, best)
                lc2 += rows[b // n] + rows[to // n] - o1 - o2
            f = depth + 1 + md2 + lc2
            if md2 + lc2 == 0:
                path[depth] = a
                board[to], board[b] = v, 0  # leave the board as it was given
                _unwind(board, blanks, depth)
                return depth + 1, nodes
            if f > threshold or nodes >= max_nodes:
                board[to], board[b] = v, 0
                if step_r[a] == 0:
                    cols[b % n], cols[to % n] = o1, o2
                else:
                    rows[b // n], rows[to // n] = o1, o2
                if f > threshold and f < next_threshold:
                    next_threshold = f
                if nodes >= max_nodes:
                    _unwind(board, blanks, depth)
                    return -2, nodes
                continue
            path[depth] = a
            saved[depth + 1, 0] = o1
            saved[depth + 1, 1] = o2
            depth += 1
            nxt[depth] = 0
            blanks[depth] = to
            md_at[depth] = md2
            lc_at[depth] = lc2
        threshold = next_threshold
    return -1, nodes


def sliding_between(puzzle: Puzzle) -> Between:
    """The window solver of a sliding puzzle (:data:`puzzlezero.search.windows.Between`):
    ``between(a, b, moves, *, bound, max_nodes)`` answers a shortest way from board ``a`` to board
    ``b`` as the puzzle's actions if one has fewer than ``bound`` moves, else ``None`` (also when
    ``max_nodes`` nodes did not settle it), with the nodes generated; ``moves`` is not read."""
    if not isinstance(puzzle, NPuzzle):
        raise PuzzleError(f"{puzzle.name}: the sliding puzzles' window solver takes a sliding puzzle")
    n = int(puzzle.size)
    step_r, step_c = (np.array(column, dtype=np.int64) for column in zip(*BLANK_STEP, strict=True))
    inverse = np.asarray(puzzle.inverse_action, dtype=np.int64)
    cells = n * n

    def between(
        a: np.ndarray, b: np.ndarray, moves: Sequence[int] = (), *, bound: int, max_nodes: int
    ) -> tuple[tuple[int, ...] | None, int]:
        start = np.ascontiguousarray(a, dtype=np.uint8).reshape(cells).copy()
        target = np.asarray(b, dtype=np.int64).reshape(cells)
        home = np.zeros(cells, dtype=np.int64)
        home[target] = np.arange(cells)
        path = np.zeros(_MAX_DEPTH, dtype=np.int64)
        length, nodes = _ida(
            start, n, home // n, home % n, step_r, step_c, inverse, int(bound), int(max_nodes), path
        )
        return (None if length < 0 else tuple(int(x) for x in path[:length])), int(nodes)

    return between
