"""The shape of a puzzle's network input, as functions over the puzzle.

A puzzle declares its encodings by name in :attr:`~puzzlezero.puzzles.base.Puzzle.encoders`
(``"onehot"``, the paper's flat input, always; ``"grid"``, ``float32[B, C, H, W]`` planes for a
convolutional network, where the puzzle is a board), encodes with
:meth:`~puzzlezero.puzzles.base.Puzzle.encode`, and says in
:attr:`~puzzlezero.puzzles.base.Puzzle.num_values` how many values a state element takes. What a
network, a trainer or an exporter needs besides follows from those, here:

* :func:`shape`, :func:`dim`: the shape and size of one encoded state;
* :func:`onehot_values`: ``V`` where the one-hot encoding is the plain one-hot of the elements
  over ``V`` values (:class:`OneHot`), so that a GPU can make the input from the states' bytes
  itself (:func:`puzzlezero.nn.encode_on`), ``None`` where it is something else (Sokoban's planes).

Example:
    >>> from puzzlezero import make
    >>> from puzzlezero.puzzles import inputs
    >>> cube = make("cube3")
    >>> cube.encode(cube.goals(2)).shape, inputs.dim(cube), inputs.onehot_values(cube)
    ((2, 324), 324, 6)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = ["Encodable", "OneHot", "dim", "onehot", "onehot_values", "shape"]


class Encodable(Protocol):
    """What these functions read of a puzzle (every :class:`~puzzlezero.puzzles.base.Puzzle`)."""

    @property
    def encoders(self) -> Mapping[str, Callable[[np.ndarray], np.ndarray]]: ...

    def encode(self, states: np.ndarray, encoding: str = "onehot") -> np.ndarray: ...

    def goals(self, n: int) -> np.ndarray: ...


def onehot(states: np.ndarray, num_values: int) -> np.ndarray:
    """One-hot encode integer states ``[B, ...]`` with values in ``[0, num_values)``.

    Returns ``float32[B, prod(state_shape) * num_values]`` (value index fastest).
    """
    flat = states.reshape(states.shape[0], -1)
    return np.take(np.eye(num_values, dtype=np.float32), flat, axis=0).reshape(flat.shape[0], -1)


@dataclass(frozen=True)
class OneHot:
    """The plain one-hot encoder over ``values`` values (:func:`onehot`): the default
    ``"onehot"`` of :attr:`Puzzle.encoders <puzzlezero.puzzles.base.Puzzle.encoders>`, and what
    :func:`onehot_values` recognises."""

    values: int

    def __call__(self, states: np.ndarray) -> np.ndarray:
        return onehot(np.asarray(states), self.values)


def shape(puzzle: Encodable, encoding: str = "onehot") -> tuple[int, ...]:
    """Shape of one encoded state: ``(D,)`` for flat encodings, ``(C, H, W)`` for a grid one."""
    return tuple(int(v) for v in puzzle.encode(puzzle.goals(1), encoding).shape[1:])


def dim(puzzle: Encodable, encoding: str = "onehot") -> int:
    """Numbers per encoded state (``C*H*W`` for a grid encoding)."""
    return int(np.prod(shape(puzzle, encoding)))


def onehot_values(puzzle: Encodable) -> int | None:
    """``V`` where the puzzle's ``"onehot"`` encoder is exactly :func:`onehot` of the state's
    elements over ``V`` values (an :class:`OneHot`), else ``None``."""
    encoder = puzzle.encoders.get("onehot")
    return encoder.values if isinstance(encoder, OneHot) else None
