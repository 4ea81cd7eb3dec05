"""Deep approximate value iteration (DeepCubeA, Algorithm 1): one-step Bellman targets.

Each training state is the goal scrambled ``k ~ U[1, K]`` times, and its target is

    y(s) = min_a ( cost(s, a) + J_target(A(s, a)) ),   J_target(goal) = 0,   y(goal) = 0,

one network call per child, ``cost(s, a)`` being the puzzle's ``action_costs[a]`` (1 for every
move of most puzzles; half turns may cost more on a costed cube). Moves that leave a state unchanged (a tile against the border, a
Sokoban wall) are not moves and are left out of the minimum; the target net's outputs are clipped
at 0 (a cost-to-go is never negative). The trainer (:mod:`puzzlezero.train.trainer`) takes Adam
steps on the squared error of ``J_theta(s)`` against ``y`` and refreshes ``J_target`` every ``C``
iterations: when the loss is below ``epsilon`` (the paper) or always (``target_update="period"``).
With ``TrainConfig.cap_labels`` a target is at most the cost of its state's scramble walked back
(:mod:`.path_costs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles.base import GoalTest, Puzzle
from puzzlezero.train.descents import training_states
from puzzlezero.train.objectives.path_costs import cap_values, training_states_with_path_cost
from puzzlezero.train.objectives.registry import ValueFn, register_objective

if TYPE_CHECKING:
    import torch

    from puzzlezero.nn.models import CostToGoNet
    from puzzlezero.train.config import TrainConfig

__all__ = ["action_targets", "one_step_targets", "bellman_targets", "davi_labels"]


def action_targets(
    puzzle: Puzzle,
    value_fn: ValueFn,
    states: np.ndarray,
    *,
    chunk: int = 2048,
    noop_when_stuck: bool = False,
    is_goal: str | GoalTest | None = None,
) -> np.ndarray:
    """``float32[N, A]``: ``cost(a) + value_fn(child_a)`` for every action (``cost`` =
    ``puzzle.action_costs``), ``cost(a)`` where the child is a goal, NaN where the action leaves the
    state unchanged (with ``noop_when_stuck``, a
    state that no action changes keeps its no-op children instead). ``value_fn`` gets the non-goal
    children of about ``chunk // num_actions`` parents per call and must return values ``>= 0``.
    DAVI's target is the minimum of a row (:func:`one_step_targets`); a Q head learns the whole row
    (:mod:`puzzlezero.train.objectives.qlearning`). ``is_goal``: the goal (a name or a function; default the
    puzzle's own) whose children count 0."""
    goal_test = puzzle.goal_test(is_goal)
    n, n_act = states.shape[0], puzzle.num_actions
    per = max(1, chunk // n_act)
    out = np.empty((n, n_act), dtype=np.float32)
    cost: np.ndarray | np.float32 = (
        np.float32(puzzle.uniform_cost)
        if puzzle.uniform_cost is not None
        else puzzle.action_costs.astype(np.float32)[None, :]
    )
    for lo in range(0, n, per):
        parents = states[lo : lo + per]
        m = parents.shape[0]
        children = puzzle.expand(parents).reshape(m * n_act, *puzzle.state_shape)
        moved = puzzle.moved(parents, children)  # [m, A]
        if noop_when_stuck:
            moved[~moved.any(axis=1)] = True  # no real move at all: fall back to the no-op children
        moved = moved.ravel()
        need = moved & ~goal_test(children)
        values = np.zeros(m * n_act, dtype=np.float32)
        if need.any():
            values[need] = value_fn(children[need])
        out[lo : lo + m] = np.where(moved.reshape(m, n_act), cost + values.reshape(m, n_act), np.nan)
    return out


def one_step_targets(
    puzzle: Puzzle,
    value_fn: ValueFn,
    states: np.ndarray,
    *,
    chunk: int = 2048,
    is_goal: str | GoalTest | None = None,
) -> np.ndarray:
    """``float32[N]``: ``min_a (cost(a) + value_fn(child_a))`` over the moves that change the
    state, 0 for goal children and for goal states. ``value_fn`` gets the non-goal children of about
    ``chunk // num_actions`` parents per call and must return values ``>= 0``. ``is_goal``: the
    goal (a name such as ``"layer1"`` or a function; default the puzzle's own)."""
    goal_test = puzzle.goal_test(is_goal)
    per_action = action_targets(
        puzzle, value_fn, states, chunk=chunk, noop_when_stuck=True, is_goal=goal_test
    )
    out = np.where(np.isnan(per_action), np.inf, per_action).min(axis=1).astype(np.float32)
    out[goal_test(states)] = 0.0
    return out


def bellman_targets(
    puzzle: Puzzle,
    target_net: CostToGoNet,
    states: np.ndarray,
    *,
    inference_batch: int = 2048,
    device: str | torch.device = "cpu",
) -> np.ndarray:
    """:func:`one_step_targets` with ``J_target`` = ``target_net`` (raw outputs clipped at 0),
    about ``inference_batch`` children per network call. The caller puts the net in eval mode."""
    from puzzlezero.nn.heuristic import predict

    def value_fn(children: np.ndarray) -> np.ndarray:
        values = predict(puzzle, target_net, children, batch_size=inference_batch, device=device)
        return np.maximum(values, 0.0)

    return one_step_targets(puzzle, value_fn, states, chunk=inference_batch)


@register_objective(
    "davi",
    needs_target=True,
    summary="one-step Bellman targets (DeepCubeA)",
    goal_aware=True,
    descents=True,
    caps_labels=True,
    recipe=lambda cfg: (
        "DAVI one-step Bellman targets" + (", capped by the scrambles' costs" if cfg.cap_labels else "")
    ),
)
def davi_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None,
    config: TrainConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1's data: ``n`` states scrambled ``k ~ U[1, max_scramble]`` times from the
    solved state (a ``config.descent_share`` of them from greedy descents, :mod:`.descents`), with
    their one-step Bellman targets to ``config.goal`` under ``value_fn`` (the
    target network); with ``config.cap_labels`` each capped at its scramble's cost back
    (:mod:`.path_costs`)."""
    assert value_fn is not None
    if not config.cap_labels:
        states = training_states(puzzle, rng, n, max_scramble, value_fn, config)
        return states, one_step_targets(
            puzzle, value_fn, states, chunk=config.inference_batch, is_goal=config.goal
        )
    states, path_cost = training_states_with_path_cost(puzzle, rng, n, max_scramble, value_fn, config)
    targets = one_step_targets(puzzle, value_fn, states, chunk=config.inference_batch, is_goal=config.goal)
    return states, cap_values(targets, path_cost)
