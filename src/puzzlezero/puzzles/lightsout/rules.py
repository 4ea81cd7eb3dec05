"""Lights Out on an ``N x N`` board (7x7 in the benchmarks) as batched NumPy functions.

A state is ``uint8[N*N]`` of 0/1, row-major (index ``row*N + col``, row 0 at the top), 1 = light on.
The goal is all lights off. There are ``N*N`` actions: action ``i`` (named ``"i"``, e.g. ``"24"``)
presses cell ``i = row*N + col``, which toggles that cell and its up/down/left/right neighbours that
lie on the board. Every press is its own inverse and presses commute, so a state is solved by the
set of cells pressed an odd number of times; moves text is a list of press indices.

Example:
    >>> import numpy as np
    >>> from puzzlezero import make
    >>> p = make("lightsout7")
    >>> s = p.apply(p.goals(1), np.array([0]))  # press the top-left corner
    >>> np.flatnonzero(s[0]).tolist()
    [0, 1, 7]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidMoveError, InvalidStateError
from puzzlezero.puzzles import walks
from puzzlezero.puzzles.base import Puzzle

__all__ = ["LightsOut"]

_SEPARATORS = re.compile(r"[\s,;\[\]()]+")


class LightsOut(Puzzle):
    """``N x N`` Lights Out. See the module docstring for the state layout and the presses.

    Args:
        size: board width ``N`` (7 in the DeepCubeA benchmarks).
    """

    json_key = "lights"
    default_scramble_depth = 500  # the paper's K for Lights Out
    num_values = 2

    def __init__(self, size: int = 7) -> None:
        if not isinstance(size, int | np.integer) or not 1 <= int(size) <= 15:
            raise ValueError(f"size must be an integer from 1 to 15, got {size!r}")
        n = self.size = int(size)
        nn = self.num_cells = n * n
        self.name = f"lightsout{n}"
        self.max_walk_length = nn  # a walk presses each cell at most once
        self.action_names = tuple(str(i) for i in range(nn))
        row, col = np.divmod(np.arange(nn), n)
        # masks[a, i] = 1 if pressing a toggles cell i (itself and the 4-neighbours on the board)
        dr = np.abs(row[:, None] - row[None, :])
        dc = np.abs(col[:, None] - col[None, :])
        self.masks = ((dr + dc) <= 1).astype(np.uint8)
        self.masks.setflags(write=False)

    # ---- constants ------------------------------------------------------------------------------
    @property
    def state_shape(self) -> tuple[int, ...]:
        return (self.num_cells,)

    @property
    def inverse_action(self) -> np.ndarray:
        return np.arange(self.num_cells, dtype=np.int64)

    def goal(self) -> np.ndarray:
        return np.zeros(self.num_cells, dtype=np.uint8)

    # ---- rules ----------------------------------------------------------------------------------
    def is_goal(self, states: np.ndarray) -> np.ndarray:
        return ~np.any(np.asarray(states), axis=1)

    def expand(self, states: np.ndarray) -> np.ndarray:
        """All ``N*N`` children ``[B, N*N, N*N]``: child ``a`` is the state XOR ``masks[a]``."""
        return np.bitwise_xor(np.asarray(states)[:, None, :], self.masks[None, :, :])

    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return np.bitwise_xor(np.asarray(states), self.masks[np.asarray(actions, dtype=np.int64)])

    # ---- networks -------------------------------------------------------------------------------
    @property
    def encoders(self) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
        """``"onehot"`` (a flat one-hot vector of the lights) and ``"grid"`` (:meth:`encode_grid`)."""
        return {**super().encoders, "grid": self.encode_grid}

    def encode_grid(self, states: np.ndarray) -> np.ndarray:
        """``float32[B, 1, N, N]``: one plane of lights (1 = on), for convolutional networks."""
        states = np.asarray(states)
        return states.reshape(states.shape[0], 1, self.size, self.size).astype(np.float32)

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        """Every press changes the board: ``bool[B, N*N]`` of ones."""
        return np.ones((np.asarray(states).shape[0], self.num_cells), dtype=bool)

    def press_sets(self, presses: np.ndarray) -> np.ndarray:
        """``uint8[B, N*N]`` boards reached from all-off by pressing each cell ``presses[b, i]``
        times (only the parity matters), computed as one GF(2) matrix product."""
        odd = (np.asarray(presses, dtype=np.int64) & 1).astype(np.float32)
        return ((odd @ self.masks.astype(np.float32)).astype(np.int64) & 1).astype(np.uint8)  # exact: <= 5

    def reduce_moves(self, actions: Sequence[int]) -> list[int]:
        """Presses commute and each undoes itself, so a sequence acts as the set of cells it
        presses an odd number of times: those cells, each once, in the order first pressed. (A
        search path can press a cell twice when its policy strayed off the press set and came back.)
        Where the press matrix is invertible over GF(2), as on 7x7, what is left is the board's
        unique minimum press set."""
        acts = [int(a) for a in actions]
        odd = np.bincount(np.asarray(acts, dtype=np.int64), minlength=self.num_cells) & 1
        out: list[int] = []
        for a in acts:
            if odd[a]:
                out.append(a)
                odd[a] = 0
        return out

    def scramble(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> np.ndarray:
        """``n`` boards made by ``depth`` uniformly random presses from all-off each.

        Same distribution as pressing one random cell at a time, but computed at once: presses
        commute, so only how often each cell was pressed matters, and those counts are multinomial.
        """
        depths = walks.draw_depths(rng, n, depth)
        counts = rng.multinomial(depths, np.full(self.num_cells, 1.0 / self.num_cells))
        return self.press_sets(counts.reshape(n, self.num_cells))

    def random_walks(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> np.ndarray:
        """``n`` walks of ``k`` *distinct* presses from all-off (``depth`` as in :meth:`scramble`).

        Presses commute and each undoes itself, so pressing a cell again undoes an earlier step:
        the non-backtracking walk of Lights Out never presses a cell twice, and is at most
        ``N*N`` steps long (:attr:`max_walk_length`: longer depths are cut there, and a range
        ``(1, K)`` becomes ``(1, min(K, N*N))``, so the random-walk labels stay uniform over the
        lengths). Where the press matrix is invertible over GF(2) (7x7, 6x6, 8x8) the set of
        pressed cells is the only solution, so a walk's length is its board's exact cost-to-go;
        elsewhere (4x4, 5x5, 9x9) an upper bound.
        """
        return self._subset_walks(rng, n, depth)[0]

    def walks_with_undo(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`random_walks` with their lengths and each walk's last press, a uniformly random
        cell of its press set (``-1`` for no press): pressing it again undoes that step, whatever
        the order of the others (see :meth:`Puzzle.walks_with_undo`)."""
        states, depths, order, _ = self._subset_walks(rng, n, depth)
        last = order[np.arange(n), np.maximum(depths - 1, 0)]
        return states, depths.astype(np.float64), np.where(depths > 0, last, -1)

    def walks_with_undo_sets(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`random_walks` with each walk's press set as a distribution over the cells: any of
        them may have been pressed last, and pressing it again undoes that step, so each is an
        undo move, equally likely (:meth:`Puzzle.walks_with_undo_sets`)."""
        states, depths, _, pressed = self._subset_walks(rng, n, depth)
        dist = pressed.astype(np.float32) / np.maximum(depths, 1)[:, None].astype(np.float32)
        return states, dist

    def _subset_walks(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(boards, depths, order, pressed)``: each board presses the first ``depths[b]`` cells of
        the uniformly random permutation ``order[b]`` (a uniform ``k``-subset, pressed in that
        order); ``pressed uint8[n, N*N]`` marks that subset."""
        depths = walks.walk_depths(self, rng, n, depth)
        order = np.argsort(rng.random((n, self.num_cells)), axis=1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(self.num_cells)[None, :], axis=1)
        pressed = (rank < depths[:, None]).astype(np.uint8)
        return self.press_sets(pressed), depths, order, pressed

    # ---- text -----------------------------------------------------------------------------------
    def parse(self, text: str) -> np.ndarray:
        """Read ``N*N`` lights written as ``0``/``1`` characters, row-major. Spaces, newlines, commas
        and brackets are ignored, so ``"0110..."``, seven rows of digits, or ``[0, 1, 1, ...]`` all work."""
        if not isinstance(text, str):
            raise InvalidStateError(f"expected text for a {self.name} state, got {type(text).__name__}")
        nn = self.num_cells
        chars = "".join(_SEPARATORS.split(text))
        if len(chars) != nn:
            raise InvalidStateError(
                f"expected {nn} lights (0 or 1), got {len(chars)}"
                + ("" if set(chars) <= {"0", "1"} else " characters")
            )
        bad = next((i for i, ch in enumerate(chars) if ch not in "01"), None)
        if bad is not None:
            raise InvalidStateError(
                f"light {bad} (row {bad // self.size}, col {bad % self.size}) is {chars[bad]!r}: "
                f"write each of the {nn} lights as 0 (off) or 1 (on)"
            )
        return np.frombuffer(chars.encode("ascii"), dtype=np.uint8) - np.uint8(ord("0"))

    def validate(self, state: np.ndarray) -> None:
        state = np.asarray(state)
        if state.shape != (self.num_cells,):
            raise InvalidStateError(f"expected {self.num_cells} lights, got shape {state.shape}")
        if not np.isin(state, (0, 1)).all():
            i = int(np.flatnonzero(~np.isin(state, (0, 1)))[0])
            raise InvalidStateError(f"light {i} is {state[i]!r}: every light is 0 (off) or 1 (on)")

    def format(self, state: np.ndarray) -> str:
        """``N*N`` characters ``0``/``1`` on one line, row-major (what :meth:`parse` reads)."""
        return "".join("1" if v else "0" for v in np.asarray(state))

    def render_text(self, state: np.ndarray) -> str:
        """``N`` rows of ``0``/``1`` separated by spaces (also readable by :meth:`parse`)."""
        n = self.size
        s = ["1" if v else "0" for v in np.asarray(state)]
        return "\n".join(" ".join(s[r * n : (r + 1) * n]) for r in range(n))

    def to_json(self, state: np.ndarray) -> dict[str, Any]:
        return {self.json_key: [int(v) for v in np.asarray(state)], "size": self.size}

    def to_svg(self, state: np.ndarray, size: int = 300) -> str:
        from puzzlezero.puzzles.lightsout.viewer import lightsout_svg

        return lightsout_svg(np.asarray(state), self.size, size)

    # ---- moves ----------------------------------------------------------------------------------
    def parse_moves(self, text: str | Sequence[str | int]) -> list[int]:
        """Press indices ``0..N*N-1`` separated by spaces or commas (``"3 5 6"``, ``"[3, 5, 6]"``),
        or a sequence of indices (ints or strings)."""
        tokens = [t for t in _SEPARATORS.split(text) if t] if isinstance(text, str) else list(text)
        out: list[int] = []
        for tok in tokens:
            s = str(tok).strip()
            digits = s.lstrip("0") or "0"  # thousands of digits: out of range, not int()'s error
            if not (s.isascii() and s.isdigit()) or len(digits) > 6 or int(digits) >= self.num_cells:
                raise InvalidMoveError(
                    f"unknown press {str(tok)[:20]!r} for {self.name}: a press is a cell index "
                    f"0..{self.num_cells - 1} (row*{self.size} + col)"
                )
            out.append(int(digits))
        return out
