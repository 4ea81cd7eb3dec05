"""The pancake puzzle, added to puzzlezero from outside the package: a whole puzzle in one file.

A stack of ``n`` pancakes of sizes ``1..n``. A state is ``uint8[n]``: the sizes from the top of the
stack down. The goal is the sorted stack, smallest on top (``1 2 ... n``). Move ``Fk`` (``k = 2..n``)
slides the spatula under the ``k``-th pancake and flips the top ``k`` (a prefix reversal): ``n - 1``
moves, each its own inverse. Every stack can be sorted; for ``n = 8`` the longest optimal
solutions take 9 flips.

Load it before any command: ``puzzlezero --plugin examples/pancake.py list`` (which also reaches
worker processes), or ``puzzlezero.plugins.load_plugin`` from Python. ``docs/adding-a-puzzle.md``
walks through this file.

Example:
    >>> import numpy as np, puzzlezero as pz
    >>> p = pz.make("pancake8")
    >>> p.format(p.apply(p.goals(1), np.array([p.action_names.index("F3")]))[0])
    '3 2 1 4 5 6 7 8'
    >>> int(p.gaps(p.parse("3 2 1 4 5 6 7 8")[None])[0])
    1
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

import puzzlezero as pz
from puzzlezero.classic import optimal
from puzzlezero.errors import InvalidStateError
from puzzlezero.search.result import SearchResult

_SEPARATORS = re.compile(r"[\s,;\[\]()]+")


class Pancake(pz.Puzzle):
    """``n`` pancakes sorted by prefix reversals. See the module docstring for states and moves.

    Args:
        n: number of pancakes, 2 to 64.
    """

    json_key = "pancakes"  # benchmark cases and the JSON API hold the stack under this key

    def __init__(self, n: int = 8) -> None:
        if not isinstance(n, int) or not 2 <= n <= 64:
            raise ValueError(f"n must be an integer from 2 to 64, got {n!r}")
        self.n = n
        self.action_names = tuple(f"F{k}" for k in range(2, n + 1))
        self.num_values = n + 1  # one-hot of the sizes 1..n at each place (0 never occurs)
        self.default_scramble_depth = 2 * n  # K: training states are 1..K random flips from the goal
        # _flips[a]: the place each place takes its pancake from under move a (the top k reversed)
        places = np.arange(n)
        self._flips = np.stack([np.r_[places[:k][::-1], places[k:]] for k in range(2, n + 1)])

    # ---- rules: pure batched NumPy ------------------------------------------------------------
    @property
    def state_shape(self) -> tuple[int, ...]:
        return (self.n,)

    @property
    def inverse_action(self) -> np.ndarray:
        return np.arange(self.n - 1, dtype=np.int64)  # a flip undoes itself

    def goal(self) -> np.ndarray:
        return np.arange(1, self.n + 1, dtype=np.uint8)

    def expand(self, states: np.ndarray) -> np.ndarray:
        """All ``n - 1`` children ``[B, n - 1, n]``, in the order ``F2 .. Fn``: one gather."""
        return np.asarray(states)[:, self._flips]

    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return np.take_along_axis(
            np.asarray(states), self._flips[np.asarray(actions, dtype=np.int64)], axis=1
        )

    def gaps(self, states: np.ndarray) -> np.ndarray:
        """``float32[B]``: the gap heuristic (Helmert 2010), the number of neighbours in the stack,
        the plate below the bottom one included, whose sizes differ by more than 1. A flip changes
        one neighbour pair, so it is admissible and consistent; 0 exactly at the goal."""
        s = np.asarray(states, dtype=np.int16)
        below = np.concatenate([s[:, 1:], np.full((s.shape[0], 1), self.n + 1, np.int16)], axis=1)
        return (np.abs(s - below) != 1).sum(axis=1).astype(np.float32)

    # ---- human text ---------------------------------------------------------------------------
    def parse(self, text: str) -> np.ndarray:
        """The sizes from the top down, separated by spaces or commas: ``"3 1 4 2 8 6 5 7"``."""
        if not isinstance(text, str):
            raise InvalidStateError(f"expected text for a {self.name} state, got {type(text).__name__}")
        tokens = [t for t in _SEPARATORS.split(text) if t]
        bad = next((t for t in tokens if not (t.isascii() and t.isdigit())), None)
        if bad is not None:
            raise InvalidStateError(
                f"cannot read {bad[:20]!r} as a pancake: write the sizes 1..{self.n}, top first"
            )
        if len(tokens) != self.n:
            raise InvalidStateError(
                f"expected {self.n} pancakes (sizes 1..{self.n}, top first), got {len(tokens)}"
            )
        values = [int(t) for t in tokens]
        wrong = [v for v in values if not 1 <= v <= self.n]
        if wrong:
            raise InvalidStateError(f"pancake sizes are 1..{self.n}, got {wrong[0]}")
        state = np.array(values, dtype=np.uint8)
        self.validate(state)
        return state

    def validate(self, state: np.ndarray) -> None:
        """Raise ``InvalidStateError`` unless ``state`` holds each size ``1..n`` once."""
        state = np.asarray(state)
        if state.shape != (self.n,):
            raise InvalidStateError(f"expected {self.n} pancakes, got shape {state.shape}")
        counts = np.bincount(state.astype(np.int64), minlength=self.n + 1)
        if counts[0] or len(counts) > self.n + 1 or np.any(counts[1:] != 1):
            twice = [int(v) for v in np.flatnonzero(counts > 1)]
            missing = [int(v) for v in np.flatnonzero(counts[1 : self.n + 1] == 0) + 1]
            raise InvalidStateError(
                f"not a stack of the pancakes 1..{self.n}: {twice} more than once, {missing} missing"
            )

    def format(self, state: np.ndarray) -> str:
        return " ".join(str(int(v)) for v in np.asarray(state))

    def render_text(self, state: np.ndarray) -> str:
        """The stack drawn with ``=``, top first, each pancake's size beside it."""
        width = 2 * self.n - 1
        return "\n".join(f"{'=' * (2 * int(v) - 1):^{width}}  {int(v)}" for v in np.asarray(state))

    def to_svg(self, state: np.ndarray, size: int = 300) -> str:
        """Pancakes on a plate, a sorted one lighter; clicking the k-th pancake from the top flips
        the top k (``data-move``: the web board plays the move a shape names)."""
        n, row, w = self.n, 36.0, 400.0
        height = (n + 1) * row
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:g} {height:g}" width="{size}" '
            f'height="{size * height / w:.0f}" role="img" aria-label="{self.name}">'
        ]
        for i, v in enumerate(int(x) for x in np.asarray(state)):
            bar = 60 + (w - 80) * (v - 1) / max(1, n - 1) * 0.9
            move = f' data-move="F{i + 1}"' if i else ""
            parts.append(
                f'<g{move}><rect x="{(w - bar) / 2:g}" y="{i * row + 4:g}" width="{bar:g}" height="{row - 8:g}" '
                f'rx="14" fill="{"#f6dca4" if v == i + 1 else "#e8b04a"}"/><text x="{w / 2:g}" '
                f'y="{i * row + row / 2:g}" font-family="sans-serif" font-size="18" text-anchor="middle" '
                f'dominant-baseline="central">{v}</text></g>'
            )
        parts.append(
            f'<rect x="20" y="{n * row + 6:g}" width="{w - 40:g}" height="10" rx="5" fill="#3b3f46"/>'
        )
        return "\n".join([*parts, "</svg>"])


# ---- an optimal reference, so that `bench` reports how far from optimal the learned solver is ------
def solve_optimal(
    puzzle: Pancake,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
) -> SearchResult:
    """A shortest solution: A* (BWAS with weight 1, one node per iteration, goal test on expansion)
    over the consistent gap heuristic, so the first goal it expands is optimal. ``deadline`` (a
    reading of :func:`puzzlezero.search.clock.now`) goes to the search as it is."""
    from puzzlezero.search import bwas

    return bwas(
        puzzle,
        state[None],
        puzzle.gaps,
        weight=1.0,
        batch_size=1,
        max_nodes=max_nodes,
        time_limit=time_limit,
        deadline=deadline,
    )[0]


def gap_heuristic(puzzle: Pancake) -> Callable[[np.ndarray], Any]:
    """The admissible heuristic behind ``--heuristic pdb`` for pancakes: :meth:`Pancake.gaps`."""
    return puzzle.gaps


# ---- registration: what --plugin / load_plugin runs -------------------------------------------------
# defaults: this puzzle's solver settings (fields of puzzlezero.solver.Defaults; the others keep the
# fallback values). BWAS pops N = 10 nodes a step: with a 2-minute tiny model it solved the 20 stacks
# of examples/pancake8.json all optimally (docs/adding-a-puzzle.md compares other settings).
pz.register(
    "pancake8",
    Pancake,
    "8 pancakes sorted by prefix reversals (plugin: examples/pancake.py)",
    defaults={"weight": 0.8, "batch": 10, "time_limit": 30.0, "max_steps": 100},
    n=8,
)
optimal.SOLVERS["Pancake"] = solve_optimal  # --search optimal, bench --reference optimal
optimal.HEURISTICS["Pancake"] = gap_heuristic  # --heuristic pdb
