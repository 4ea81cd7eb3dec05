"""Random-walk length regression: the cheap supervised warm start (CayleyPy, arXiv 2502.13266).

Each training state is the goal walked ``k ~ U[1, K]`` steps by a *non-backtracking* random walk
(no step undoes the one before it; :meth:`Puzzle.random_walks`), and its label is ``k`` itself
(0 if the walk happens to end at the goal). A label costs one forward and backward pass and no
network call at all, against one target-network call per child for a Bellman label.

With unequal action costs (a cube whose half turns cost 1.5) the label is the walk's cost rather
than its length: the cost of walking it back, the sum of ``action_costs[inverse_action[a]]`` over
its steps (:func:`puzzlezero.puzzles.walks.walks_with_cost`; ``k * move_cost`` when all moves cost the same).

The label is an upper bound of the true cost-to-go, loose for long walks, so the regression learns the
*expected walk length* that reaches a state: it ranks states well but overestimates. Used as a warm
start (``warmup_iterations``), after which Bellman targets (``davi`` or ``lhbl``) pull the values down
to costs-to-go; the model card of every shipped model says which recipe made it.

``scramble_depth`` (:mod:`.scramble_depth`) is the same regression on the depth of a plain scramble.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles import walks
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.descents import scramble_depths
from puzzlezero.train.objectives.registry import ValueFn, register_objective

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["length_labels", "random_walk_labels"]


def length_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    *,
    nonbacktracking: bool,
    config: TrainConfig | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` states ``k ~ U[1, max_scramble]`` steps from the goal, labelled with the cost of the
    walk back (``k`` where every move costs 1; 0 at goals): non-backtracking random walks, or plain
    scrambles."""
    depths = scramble_depths(rng, n, max_scramble, config)
    states, cost = walks.walks_with_cost(puzzle, rng, n, depths, nonbacktracking=nonbacktracking)
    targets = cost.astype(np.float32)
    targets[puzzle.is_goal(states)] = 0.0
    return states, targets


@register_objective(
    "random_walk", needs_target=False, summary="walk length of a non-backtracking random walk (CayleyPy)"
)
def random_walk_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None = None,
    config: TrainConfig | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` states walked ``k ~ U[1, max_scramble]`` steps without backtracking, labelled with
    the walk's cost (``k`` with unit costs)."""
    return length_labels(puzzle, rng, n, max_scramble, nonbacktracking=True, config=config)
