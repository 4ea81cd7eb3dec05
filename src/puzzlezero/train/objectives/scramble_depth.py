"""Scramble-depth regression: the warm start before random-walk lengths, kept for old runs.

Each training state is the goal scrambled ``k ~ U[1, K]`` times (a plain scramble, which may undo
itself, so its labels are looser than :mod:`.random_walk`'s) and its label is the scramble's cost
(``k`` where every move costs 1; 0 at goals).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.objectives.random_walk import length_labels
from puzzlezero.train.objectives.registry import ValueFn, register_objective

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["scramble_depth_labels"]


@register_objective("scramble_depth", needs_target=False, summary="depth of a plain scramble")
def scramble_depth_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None = None,
    config: TrainConfig | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` states scrambled ``k ~ U[1, max_scramble]`` times, labelled with the scramble's cost
    (``k`` with unit costs)."""
    return length_labels(puzzle, rng, n, max_scramble, nonbacktracking=False, config=config)
