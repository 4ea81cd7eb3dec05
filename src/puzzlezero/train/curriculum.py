"""A curriculum on scramble depth: train near the goal first, go deeper once the net solves there.

DeepXube's ``bal`` schedule starts at depth bound K = 1 and doubles K once greedy search solves at
least half of the states at the current bound; Dong, Hao and Nakayama, "Solving the Rubik's Cube
with Deep Reinforcement Learning Using Multi-Headed Models", grows the walk length by one whenever
at least 25% were solved. Both are here (``curriculum="double"`` / ``"plus1"``, with
``curriculum_threshold``). The test states are fresh (drawn for each check from the run's seeds),
scrambled exactly to the current bound, and searched greedily for at most twice that many steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.evaluate import greedy_rollout
from puzzlezero.train.objectives import ValueFn

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["grow_depth", "CURRICULUM_STATES"]

#: fresh states per curriculum check
CURRICULUM_STATES = 100


def grow_depth(
    puzzle: Puzzle,
    heuristic: ValueFn,
    rng: np.random.Generator,
    bound: int,
    max_bound: int,
    config: TrainConfig,
    goal: str | None = None,
) -> tuple[int, float]:
    """``(new_bound, solved_pct)``: the greedy solve rate at ``bound`` (to ``goal``, default the
    puzzle's own; Dong et al. grow each layer agent's walks by its own goal) and the bound it allows."""
    states = puzzle.scramble(rng, CURRICULUM_STATES, bound)
    solved = 100.0 * float(
        greedy_rollout(puzzle, heuristic, states, max_steps=2 * bound, is_goal=goal).mean()
    )
    if solved >= 100.0 * config.curriculum_threshold:
        bound = 2 * bound if config.curriculum == "double" else bound + 1
    return min(bound, max_bound), round(solved, 2)
