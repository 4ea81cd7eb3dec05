"""Autodidactic iteration (ADI; McAleer, Agostinelli, Shmakov, Baldi 2018; A. Agarwal, "Solving
Rubik's cube using Reinforcement Learning", "Training").

ADI trains one network with a value and a policy output on states scrambled backwards from the goal.
For each training state ``x`` every child ``A(x, a)`` is valued by the current network, and

    y_v(x) = max_a ( R(A(x, a)) + v(A(x, a)) ),       y_p(x) = argmax_a ( R(A(x, a)) + v(A(x, a)) ),

with reward ``R = +1`` at the goal and ``-1`` elsewhere. The loss is the squared error of the value
plus the cross-entropy of the policy, each sample weighted by ``W(x) = 1 / D(x)``, ``D(x)`` the number
of scramble moves that made it, so states near the goal, whose labels are sound first, count most.

Here the value is a cost-to-go ``J = -v`` with each move costing ``cost(a)`` (1 on the cube), so the
same labels read

    y_J(x) = min_a ( cost(a) + J_target(A(x, a)) ),   y_p(x) = argmin_a ( ... ),   J = 0 at goals,

which is DAVI's target (:func:`puzzlezero.train.objectives.davi.action_targets`) plus the action that attains it
and the weight. The value head trains on ``y_J`` and the policy head (logits over actions) on
``y_p`` (:meth:`puzzlezero.train.trainer.Trainer._step`); the rows are ``(y_J, y_p, W)``.

Two choices differ from the 2018 paper, both in the direction of the later DeepCubeA paper: children
are valued by the *target* network (updated by the trainer's schedule, ``target_update``), and the
training states are independent scrambles whose depths are uniform in ``[1, K]`` instead of every
state along ``l`` scrambles of length ``K`` (the same depth distribution, without the correlation of
states that share a scramble). Moves that leave the state unchanged are never the policy target.

The policy head then serves searches that take a prior over moves: MCTS and the weighted
convolutional distance (``nn.make_policy``, ``nn.make_policy_value``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles import walks
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.descents import scramble_depths
from puzzlezero.train.objectives.davi import action_targets
from puzzlezero.train.objectives.path_costs import cap_values, scrambles_with_path_cost
from puzzlezero.train.objectives.registry import ValueFn, register_objective

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["adi_targets", "adi_labels"]


def adi_targets(
    puzzle: Puzzle, value_fn: ValueFn, states: np.ndarray, depths: np.ndarray, *, chunk: int = 2048
) -> np.ndarray:
    """``float32[N, 3]``: per state the value target ``min_a (cost(a) + J(child_a))`` (0 at goals),
    the policy target (the index of the action attaining it, as a float) and the weight
    ``1 / depth``."""
    q = action_targets(puzzle, value_fn, states, chunk=chunk)
    stuck = np.isnan(q).all(axis=1)
    q[stuck] = np.inf  # no move changes the state: no sensible target (does not happen on a cube)
    best = np.argmin(np.where(np.isnan(q), np.inf, q), axis=1)
    value = q[np.arange(len(q)), best]
    value[puzzle.is_goal(states) | stuck] = 0.0
    weight = 1.0 / np.maximum(np.asarray(depths, dtype=np.float64), 1.0)
    weight[stuck] = 0.0
    return np.stack([value, best.astype(np.float64), weight], axis=1).astype(np.float32)


@register_objective(
    "adi",
    needs_target=True,
    head="policy",
    caps_labels=True,
    summary="autodidactic iteration: value and policy targets from the children, weighted 1/depth",
    recipe=lambda cfg: "ADI value and policy targets weighted 1/depth",
)
def adi_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None,
    config: TrainConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` states scrambled ``D ~ U[1, max_scramble]`` times with their ADI rows ``(y_J, y_p, 1/D)``;
    with ``config.cap_labels`` ``y_J`` is capped at the scramble's cost back (:mod:`.path_costs`)."""
    assert value_fn is not None
    depths = walks.draw_depths(rng, n, scramble_depths(rng, n, max_scramble, config))
    if not config.cap_labels:
        states = puzzle.scramble(rng, n, depths)
        return states, adi_targets(puzzle, value_fn, states, depths, chunk=config.inference_batch)
    states, path_cost = scrambles_with_path_cost(puzzle, rng, n, depths)
    rows = adi_targets(puzzle, value_fn, states, depths, chunk=config.inference_batch)
    rows[:, 0] = cap_values(rows[:, 0], path_cost)  # the value target; the policy keeps the argmin
    return states, rows
