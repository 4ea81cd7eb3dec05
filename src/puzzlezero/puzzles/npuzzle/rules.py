"""Sliding-tile puzzles (8, 15, 24, 35, 48-puzzle) as batched NumPy functions.

A state is ``uint8[n*n]``: the tiles in row-major order (index ``row*n + col``, row 0 at the top),
``0`` is the blank. The goal is ``1, 2, ..., n*n-1`` followed by the blank in the bottom-right corner.

Moves follow the benchmarks' (and DeepCubeA's) convention: the letter names the direction the moved
**tile** travels, the blank moves the opposite way.

====== ============================================ ==================
action meaning                                      blank at (i, j) ->
====== ============================================ ==================
``U``  the tile below the blank slides up           (i+1, j)
``D``  the tile above the blank slides down         (i-1, j)
``L``  the tile right of the blank slides left      (i, j+1)
``R``  the tile left of the blank slides right      (i, j-1)
====== ============================================ ==================

A move that would take the blank off the board returns the parent unchanged. Every move is done by
gathers from precomputed tables: no Python loop per state.

Example:
    >>> import numpy as np
    >>> from puzzlezero import make
    >>> p = make("puzzle8")
    >>> s = p.apply(p.goals(1), np.array([p.action_names.index("D")]))  # tile 6 slides down
    >>> s[0].tolist()
    [1, 2, 3, 4, 5, 0, 7, 8, 6]
    >>> int(p.manhattan(s)[0])
    1
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles import walks
from puzzlezero.puzzles.base import Goal, Puzzle

__all__ = ["BLANK_STEP", "NPuzzle"]

#: blank displacement (drow, dcol) for U D L R: the blank swaps with the tile that moves
BLANK_STEP = ((1, 0), (-1, 0), (0, 1), (0, -1))
_SEPARATORS = re.compile(r"[\s,;\[\]()]+")
#: scramble depths K by board width: the paper's 500 for 15/24, 1000 for the larger boards
_DEFAULT_DEPTH = {2: 20, 3: 100, 4: 500, 5: 500}


class NPuzzle(Puzzle):
    """The ``(size*size - 1)``-puzzle. See the module docstring for state layout and moves.

    Args:
        size: board width ``n`` (3 for the 8-puzzle, 4 for the 15-puzzle, ... 7 for the 48-puzzle).
    """

    action_names = ("U", "D", "L", "R")
    json_key = "tiles"

    def __init__(self, size: int = 4) -> None:
        if not isinstance(size, int | np.integer) or not 2 <= int(size) <= 15:
            raise ValueError(f"size must be an integer from 2 to 15, got {size!r}")
        n = self.size = int(size)
        nn = self.num_cells = n * n
        self.name = f"puzzle{nn - 1}"
        self.num_values = nn  # one-hot of every tile at every position (n^4 inputs), as in the paper
        self.default_scramble_depth = _DEFAULT_DEPTH.get(n, 1000)

        pos = np.arange(nn)
        row, col = pos // n, pos % n
        swap = np.empty((nn, 4), dtype=np.int64)
        for a, (dr, dc) in enumerate(BLANK_STEP):
            r2, c2 = row + dr, col + dc
            inside = (r2 >= 0) & (r2 < n) & (c2 >= 0) & (c2 < n)
            swap[:, a] = np.where(inside, r2 * n + c2, pos)
        #: ``swap[p, a]``: the cell whose tile moves into the blank at ``p`` under action ``a`` (``p``
        #: itself where there is none): the moves as a table, for the reduction solver too
        self.swap = swap
        self._goal = np.append(np.arange(1, nn, dtype=np.uint8), np.uint8(0))
        # _dist[p, v]: Manhattan distance of tile v standing at cell p from its home (0 for the blank)
        home = np.append(nn - 1, np.arange(nn - 1))  # home cell of each tile value
        dist = np.abs(row[:, None] - row[home][None, :]) + np.abs(col[:, None] - col[home][None, :])
        dist[:, 0] = 0
        self._dist = dist.astype(np.uint8)
        # distance of the blank from the bottom-right corner, by cell
        self._blank_dist = (n - 1 - row) + (n - 1 - col)
        # the transpose (the board mirrored in its main diagonal): cell (r, c) goes to (c, r) and
        # tile v, whose home is cell v - 1, becomes the tile whose home is the mirrored cell
        self._t_cell = col * n + row
        self._t_tile = np.append(0, self._t_cell[: nn - 1] + 1).astype(np.uint8)

    # ---- constants ------------------------------------------------------------------------------
    @property
    def state_shape(self) -> tuple[int, ...]:
        return (self.num_cells,)

    @property
    def inverse_action(self) -> np.ndarray:
        return np.array([1, 0, 3, 2], dtype=np.int64)

    def goal(self) -> np.ndarray:
        return self._goal.copy()

    def _subgoals(self) -> tuple[Goal, ...]:
        """The top rows in place, one goal per number of rows short of the last two: ``row1`` (the
        top row's tiles home), ``rows2`` (the top two rows), ... up to ``rows{n-2}`` (15-puzzle:
        ``row1``, ``rows2``; 8-puzzle: ``row1``). The last two rows are left to ``solved``."""
        n = self.size
        return tuple(
            Goal(
                "row1" if k == 1 else f"rows{k}",
                f"the top {'row' if k == 1 else f'{k} rows'} in place: tiles 1..{k * n} home",
                positions=np.arange(k * n),
                values=self._goal[: k * n],
            )
            for k in range(1, n - 1)
        )

    # ---- rules ----------------------------------------------------------------------------------
    @staticmethod
    def blank_positions(states: np.ndarray) -> np.ndarray:
        """``int64[B]``: the cell index of the blank in each state ``[B, n*n]``."""
        return np.argmin(states, axis=1)

    def expand(self, states: np.ndarray) -> np.ndarray:
        """All four children ``[B, 4, n*n]`` (order ``U D L R``); a blocked move copies the parent."""
        states = np.asarray(states)
        b, nn = states.shape
        blank = self.blank_positions(states)
        src = self.swap[blank]  # [B, 4] cell of the tile that moves
        tiles = np.take_along_axis(states, src, axis=1)
        children = np.repeat(states[:, None, :], 4, axis=1)
        flat = children.reshape(-1)
        base = np.arange(0, b * 4 * nn, nn, dtype=np.int64)
        flat[base + np.repeat(blank, 4)] = tiles.reshape(-1)
        flat[base + src.reshape(-1)] = 0  # a blocked move writes the blank back onto itself
        return children

    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        rows = np.arange(states.shape[0])
        blank = self.blank_positions(states)
        src = self.swap[blank, np.asarray(actions, dtype=np.int64)]
        out = states.copy()
        out[rows, blank] = states[rows, src]
        out[rows, src] = 0
        return out

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        blank = self.blank_positions(np.asarray(states))
        return self.swap[blank] != blank[:, None]

    def scramble(
        self,
        rng: np.random.Generator,
        n: int,
        depth: int | np.ndarray | tuple[int, int],
        chunk: int = 8192,
    ) -> np.ndarray:
        """``n`` random walks of the blank from the goal, each of its own depth.

        Unlike the base class, each step picks uniformly among the moves that are possible in the
        current state (never a blocked no-op), so a walk of depth ``d`` really makes ``d`` moves.
        The walks run in a numba kernel fed with random words from ``rng`` (``chunk`` at a time).
        """
        return self._walks(rng, n, depth, chunk, nonbacktracking=False)[0]

    def random_walks(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> np.ndarray:
        """Non-backtracking walks (see :meth:`Puzzle.random_walks`): the blank never steps straight
        back to the cell it just left; in the same numba kernel as :meth:`scramble`."""
        return self._walks(rng, n, depth, 8192, nonbacktracking=True)[0]

    def walks_with_undo(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`random_walks` with their lengths and the move that sends the blank back where it
        was before the last step (see :meth:`Puzzle.walks_with_undo`), from the same kernel."""
        if self.uniform_cost is None:  # a subclass with unequal costs: the generic walk adds them
            return super().walks_with_undo(rng, n, depth)
        states, depths, blank, came_from = self._walks(rng, n, depth, 8192, nonbacktracking=True)
        undo = np.argmax(self.swap[blank] == came_from[:, None], axis=1)
        return states, depths * self.uniform_cost, np.where(came_from >= 0, undo, -1)

    def _walks(
        self,
        rng: np.random.Generator,
        n: int,
        depth: int | np.ndarray | tuple[int, int],
        chunk: int,
        nonbacktracking: bool,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(states, depths, blank, came_from)``: the walks, their lengths, where each blank ends
        and where it was before its last step (``-1``: no step)."""
        from puzzlezero.puzzles.npuzzle.walk import random_walks  # numba: imported only when needed

        depths = walks.draw_depths(rng, n, depth)
        states = self.goals(n)
        blank = np.full(n, self.num_cells - 1, dtype=np.int64)
        came_from = np.full(n, -1, dtype=np.int64)
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            words = rng.integers(0, 2**32, size=(hi - lo, int(depths[lo:hi].max(initial=0))), dtype=np.uint32)
            random_walks(
                states[lo:hi],
                blank[lo:hi],
                depths[lo:hi],
                words,
                self.swap,
                nonbacktracking,
                came_from[lo:hi],
            )
        return states, depths, blank, came_from

    def manhattan(self, states: np.ndarray) -> np.ndarray:
        """``int32[B]``: sum over tiles (not the blank) of the distance to their home cell.

        An admissible heuristic; ``0`` exactly at the goal.
        """
        states = np.asarray(states, dtype=np.int64)
        return self._dist[np.arange(self.num_cells), states].sum(axis=1, dtype=np.int32)

    def solvable(self, states: np.ndarray) -> np.ndarray:
        """``bool[B]``: whether each permutation of tiles can reach the goal.

        A move swaps the blank with a tile (one transposition) and moves the blank one cell, so the
        permutation parity (blank counted as tile ``n*n``) always equals the parity of the blank's
        distance from the bottom-right corner; states where they differ are unsolvable.
        """
        return self._permutation_parity(states) == self._blank_dist[self.blank_positions(states)] % 2

    def _permutation_parity(self, states: np.ndarray) -> np.ndarray:
        seq = np.asarray(states, dtype=np.int64).copy()
        seq[seq == 0] = self.num_cells
        inversions = np.triu(seq[:, :, None] > seq[:, None, :], k=1).sum(axis=(1, 2))
        return inversions % 2

    # ---- images -------------------------------------------------------------------------------
    #: the board mirrored in its main diagonal, tiles renamed so that the goal is its own mirror
    #: image (the blank's home, the bottom-right corner, lies on the diagonal)
    image_names = ("transpose",)
    #: the transpose turns a move of the blank down into one to the right: ``U``<->``L``, ``D``<->``R``
    _T_ACTION = np.array([2, 3, 0, 1], dtype=np.int64)

    def image(self, name: str, state: np.ndarray, solution: Sequence[int]) -> np.ndarray:
        """The ``transpose`` of ``state``: cell ``(r, c)`` holds the renamed tile of cell ``(c, r)``
        (tile ``v``, at home in cell ``(i, j)``, becomes the tile at home in ``(j, i)``). Every move
        of the state is a move of its transpose (``U`` for ``L``, ``D`` for ``R``), so the two are
        exactly as far from the goal; ``solution`` is not needed."""
        if name not in self.image_names:
            raise PuzzleError(self._no_image(name))
        state = np.asarray(state)
        out = np.empty_like(state)
        out[self._t_cell] = self._t_tile[state.astype(np.int64)]
        return out

    def from_image(self, name: str, actions: Sequence[int]) -> list[int]:
        """A solution of the state from one of its transpose: each move swapped back (``L`` to ``U``)."""
        if name not in self.image_names:
            raise PuzzleError(self._no_image(name))
        return [int(a) for a in self._T_ACTION[np.asarray(actions, dtype=np.int64)]]

    # ---- text -----------------------------------------------------------------------------------
    def parse(self, text: str) -> np.ndarray:
        """Read tiles from text: numbers separated by spaces, commas or brackets (``0``, ``_`` or ``.``
        for the blank), row-major. A grid as printed by :meth:`render_text` also reads back."""
        if not isinstance(text, str):
            raise InvalidStateError(f"expected text for a {self.name} state, got {type(text).__name__}")
        nn = self.num_cells
        values: list[int] = []
        for tok in _SEPARATORS.split(text):
            if not tok:
                continue
            if tok in ("_", "."):
                values.append(0)
            elif tok.isascii() and tok.isdigit():
                digits = tok.lstrip("0") or "0"
                if len(digits) > 6:  # int() of thousands of digits is slow, then refused
                    raise InvalidStateError(
                        f"tile {digits[:20]}... ({len(digits)} digits) is out of range: a {self.name} has "
                        f"tiles 1..{nn - 1} and 0 for the blank"
                    )
                values.append(int(digits))
            else:
                raise InvalidStateError(
                    f"cannot read {tok[:20]!r} as a tile: write the {nn} tiles as numbers 0..{nn - 1} "
                    "(0 = blank) separated by spaces or commas"
                )
        if len(values) != nn:
            raise InvalidStateError(f"expected {nn} numbers, got {len(values)}")
        big = [v for v in values if v >= nn]
        if big:
            raise InvalidStateError(
                f"tile {big[0]} is out of range: a {self.name} has tiles 1..{nn - 1} and 0 for the blank"
            )
        state = np.array(values, dtype=np.uint8)
        self.validate(state)
        return state

    def validate(self, state: np.ndarray) -> None:
        """Raise ``InvalidStateError`` unless ``state`` is a solvable arrangement of ``0..n*n-1``."""
        state = np.asarray(state)
        nn = self.num_cells
        if state.shape != (nn,):
            raise InvalidStateError(f"expected {nn} numbers, got shape {state.shape}")
        values = state.astype(np.int64)
        bad = values[(values < 0) | (values >= nn)]
        if bad.size:
            raise InvalidStateError(f"tiles must be 0..{nn - 1} (0 = blank), got {int(bad[0])}")
        counts = np.bincount(values, minlength=nn)
        if np.any(counts[:nn] != 1):
            dup = [_tile_name(v) for v in np.flatnonzero(counts[:nn] > 1)]
            missing = [_tile_name(v) for v in np.flatnonzero(counts[:nn] == 0)]
            raise InvalidStateError(
                f"not a permutation of 0..{nn - 1}: {', '.join(dup)} appear{'s' if len(dup) == 1 else ''}"
                f" more than once and {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing"
            )
        if not self.solvable(state[None])[0]:
            parity = int(self._permutation_parity(state[None])[0])
            d = int(self._blank_dist[int(np.argmin(state))])
            raise InvalidStateError(
                f"this arrangement is unsolvable: its permutation parity is {_PARITY[parity]} but the "
                f"blank is {d} cells from the bottom-right corner ({_PARITY[d % 2]}); moves keep the two "
                "equal, so no sequence of moves reaches the goal (as if two tiles had been swapped)"
            )

    def format(self, state: np.ndarray) -> str:
        """One line of ``n*n`` numbers, row-major (what :meth:`parse` reads)."""
        return " ".join(str(int(v)) for v in np.asarray(state))

    def render_text(self, state: np.ndarray) -> str:
        """The board as ``n`` rows of right-aligned numbers, ``.`` for the blank."""
        width = len(str(self.num_cells - 1))
        cells = [str(int(v)) if v else "." for v in np.asarray(state)]
        n = self.size
        return "\n".join(" ".join(c.rjust(width) for c in cells[r * n : (r + 1) * n]) for r in range(n))

    def to_json(self, state: np.ndarray) -> dict[str, Any]:
        return {self.json_key: [int(v) for v in np.asarray(state)], "size": self.size}

    def to_svg(self, state: np.ndarray, size: int = 300) -> str:
        from puzzlezero.puzzles.npuzzle.viewer import npuzzle_svg

        return npuzzle_svg(np.asarray(state), self.size, size)


_PARITY = ("even", "odd")


def _tile_name(v: int | np.integer) -> str:
    return "the blank (0)" if v == 0 else f"tile {v}"
