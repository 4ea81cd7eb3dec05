"""Policies for the searches that use one (MCTS, :mod:`.mcts`; weighted convolutional distance,
:mod:`.wcd`), as plain functions (no torch here).

* a **policy** maps ``states[B, *state_shape]`` to action probabilities ``float32[B, A]`` (rows
  sum to 1);
* a **policy-value function** maps ``states[B, *state_shape]`` to ``(values float32[B], probs
  float32[B, A])``: the cost-to-go of each state and a policy, from one evaluation where a network
  has both heads; optionally a third array ``q float32[B, A]``, the cost-to-go after each move
  (its cost included), where the source has it (a Q head, or the children's values): MCTS uses
  it as the estimate of a move not yet tried.

Sources, for any puzzle:

* a network's policy head: ``softmax(logits / T)`` (:func:`puzzlezero.nn.make_policy_value`);
* a Q head (cost-to-go after each action, its cost included): ``softmax(-Q / T)``
  (:func:`policy_from_q`, :func:`policy_value_from_q`);
* any value heuristic ``h``: ``softmax(-(cost(a) + h(A(s, a))) / T)``, the children evaluated
  (:func:`policy_value_from_heuristic`).

``T`` (``temperature``, in cost units: moves) sets how sharply the policy prefers the action of
least estimated cost: at ``T = 1`` an action estimated one move worse is ``e`` times less likely.

>>> import numpy as np
>>> softmin(np.array([[3.0, 4.0, 3.0]]), 1.0).round(3)
array([[0.422, 0.155, 0.422]], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle

__all__ = [
    "Policy",
    "PolicyValue",
    "check_temperature",
    "policy_from_q",
    "policy_of",
    "policy_value_from_heuristic",
    "policy_value_from_q",
    "softmin",
]

Policy = Callable[[np.ndarray], np.ndarray]
PolicyValue = Callable[[np.ndarray], tuple[np.ndarray, ...]]
Heuristic = Callable[[np.ndarray], np.ndarray]


def check_temperature(temperature: float) -> float:
    """``temperature`` as a float; :class:`PuzzleError` unless it is finite and positive."""
    if isinstance(temperature, bool) or not isinstance(temperature, int | float | np.floating):
        raise PuzzleError(f"the policy temperature must be a number, got {temperature!r}")
    if not np.isfinite(temperature) or temperature <= 0:
        raise PuzzleError(f"the policy temperature must be positive, got {temperature!r}")
    return float(temperature)


def softmin(costs: np.ndarray, temperature: float, mask: np.ndarray | None = None) -> np.ndarray:
    """``softmax(-costs / temperature)`` over the last axis, ``float32``; where ``mask`` (same
    shape, ``bool``) is ``False`` the probability is 0 (a row with nothing allowed is all 0)."""
    z = -np.asarray(costs, dtype=np.float64) / temperature
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    top = z.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(z - top)
    total = e.sum(axis=-1, keepdims=True)
    return (e / np.where(total > 0, total, 1.0)).astype(np.float32)


def policy_from_q(q_function: Heuristic, temperature: float = 1.0) -> Policy:
    """The policy ``softmax(-Q(s, .) / T)`` of a Q function ``states[B] -> float32[B, A]``."""
    t = check_temperature(temperature)

    def policy(states: np.ndarray) -> np.ndarray:
        return softmin(np.asarray(q_function(states), dtype=np.float32), t)

    return policy


def policy_of(policy_value: PolicyValue) -> Policy:
    """The policy half of a policy-value function: ``states -> float32[B, A]``."""

    def policy(states: np.ndarray) -> np.ndarray:
        return np.asarray(policy_value(states)[1], dtype=np.float32)

    return policy


def policy_value_from_q(puzzle: Puzzle, q_function: Heuristic, temperature: float = 1.0) -> PolicyValue:
    """A policy-value function from a Q function: values ``min_a Q(s, a)`` (0 at goals), policy
    ``softmax(-Q / T)``, and ``Q`` itself; one Q call per state."""
    t = check_temperature(temperature)

    def policy_value(states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q = np.asarray(q_function(states), dtype=np.float32)
        values = np.maximum(q.min(axis=1), 0.0)
        values[puzzle.is_goal(states)] = 0.0
        return values, softmin(q, t), q

    return policy_value


def policy_value_from_heuristic(
    puzzle: Puzzle, heuristic: Heuristic, temperature: float = 1.0
) -> PolicyValue:
    """A policy-value function from any value heuristic: values ``h(s)``, policy
    ``softmax(-(cost(a) + h(A(s, a))) / T)`` over the moves that change the state (a goal child
    counts ``h = 0``), and ``cost(a) + h(A(s, a))`` as each move's cost-to-go. One heuristic call on the states and their children together
    (``1 + num_actions`` states per state)."""
    t = check_temperature(temperature)
    n_act = puzzle.num_actions
    cost = puzzle.action_costs.astype(np.float64)[None, :]

    def policy_value(states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        b = states.shape[0]
        if b == 0:
            return np.zeros(0, np.float32), np.zeros((0, n_act), np.float32), np.zeros((0, n_act), np.float32)
        children = puzzle.expand(states)
        flat = children.reshape(b * n_act, *puzzle.state_shape)
        values = np.asarray(heuristic(np.concatenate([states, flat])), dtype=np.float32).reshape(-1)
        if values.shape[0] != b * (1 + n_act):
            raise PuzzleError(f"the heuristic returned {values.shape[0]} values for {b * (1 + n_act)} states")
        own, child_h = values[:b].copy(), values[b:].copy()
        own[puzzle.is_goal(states)] = 0.0
        child_h[puzzle.is_goal(flat)] = 0.0
        moved = puzzle.moved(states, children)
        q = (cost + child_h.reshape(b, n_act)).astype(np.float32)
        return own, softmin(q, t, moved), q

    return policy_value
