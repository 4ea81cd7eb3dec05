"""Q-learning targets for a Q head (Q* search, Agostinelli et al. 2024, "Training").

A deep Q-network outputs, for a state ``s``, the cost to reach a goal after taking each action:
``Q(s, a) = cost(s, a) + J(A(s, a))``. It is trained like DAVI, one step of value iteration at a
time, on the goal scrambled ``k ~ U[1, K]`` times, with the targets

    y(s, a) = cost(s, a) + J_target(A(s, a)),     and  cost(s, a)  when A(s, a) is a goal,

where ``J_target(s') = min_a' Q_target(s', a')`` in the paper's Q-learning (below: ``"qmin"``),

so labelling one state costs one target-network call per child, as DAVI does, and gives a target
for every action instead of one for the state. The searcher then needs ONE network call per
expanded node (:mod:`puzzlezero.search.qstar`) where BWAS needs one per child.

Moves that leave the state unchanged (a tile against the border) get no target (NaN: left out of
the loss; Q* never follows them, the child is its own parent). The trainer also fits the value head
on ``min_a y(s, a)``, so a Q network still serves every search that takes a value heuristic.

``value_fn`` values the children (``TrainConfig.q_bootstrap``): ``"qmin"`` is the paper's
``min_a' Q_target(child, a')``; ``"value"`` (the default) is the target network's value head. With
``"value"`` the value head learns by DAVI exactly (its target is ``min_a y(s, a)``) and the Q head
distils that one-step look-ahead into one call. Measured on cube2 (small net, 160 iterations of
B = 200, period 20): ``qmin`` over-estimated more with every target update (Q error against exact
distances 1.7 -> 2.7 moves, the least Q of a state +1.2 to +3 too high: while the head cannot yet
tell the actions apart, ``min_a' Q`` is about their mean), while ``value`` went 2.3 -> 0.84 with a
value head as good as DAVI's (0.43 against 0.41). A warm start on random-walk lengths trains the
value head; the Q head then starts as ``cost + J(s)``
(:meth:`~puzzlezero.nn.models.CostToGoNet.init_q_from_value`).

With ``TrainConfig.cap_labels`` a target is at most ``cost(a) + cost(inverse(a)) + c(s)``, ``c(s)``
the cost of walking the state's scramble back (:mod:`.path_costs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.descents import scramble_depths
from puzzlezero.train.objectives.davi import action_targets
from puzzlezero.train.objectives.path_costs import cap_action_values, scrambles_with_path_cost
from puzzlezero.train.objectives.registry import ValueFn, register_objective

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["q_targets", "qlearning_labels"]


def q_targets(puzzle: Puzzle, value_fn: ValueFn, states: np.ndarray, *, chunk: int = 2048) -> np.ndarray:
    """``float32[N, A]``: ``cost(a) + value_fn(child_a)``, ``cost(a)`` where the child is a goal
    and NaN where action ``a`` leaves the state unchanged (:func:`~.davi.action_targets`, whose row
    minimum is DAVI's target)."""
    return action_targets(puzzle, value_fn, states, chunk=chunk)


@register_objective(
    "qlearning",
    needs_target=True,
    head="q",
    caps_labels=True,
    summary="Q-learning targets for a Q head (Q* search)",
    recipe=lambda cfg: "Q-learning targets for the Q head (value head on their minimum)",
)
def qlearning_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None,
    config: TrainConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` states scrambled ``k ~ U[1, max_scramble]`` times with their Q-learning targets
    ``[n, num_actions]`` under ``value_fn`` (``min_a' Q_target``); with ``config.cap_labels``
    each capped by the path through the parent (:func:`.path_costs.cap_action_values`)."""
    assert value_fn is not None
    depth = scramble_depths(rng, n, max_scramble, config)
    if not config.cap_labels:
        states = puzzle.scramble(rng, n, depth)
        return states, q_targets(puzzle, value_fn, states, chunk=config.inference_batch)
    states, path_cost = scrambles_with_path_cost(puzzle, rng, n, depth)
    targets = q_targets(puzzle, value_fn, states, chunk=config.inference_batch)
    return states, cap_action_values(puzzle, targets, path_cost)
