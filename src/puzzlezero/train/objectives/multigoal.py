"""Multi-goal DAVI (Dong, Hao and Nakayama, "Solving the Rubik's Cube with Deep Reinforcement
Learning Using Multi-Headed Models", §4.2.2): one-step Bellman targets for every head of a
multi-head network at once.

A multi-head network (``NetConfig.goals``, e.g. cube3's ``layer1``, ``layer2``, ``solved``) has
one cost-to-go output per goal over a shared trunk. Each head ``g`` gets its own DAVI target on
the same training states (scrambled ``k ~ U[1, K]`` times from the solved state, as in the paper):

    y_g(s) = 0                                                   if s meets goal g
    y_g(s) = min_a ( cost(s, a) + J_target,g(A(s, a)) )          otherwise, J_target,g = 0 on goal g,

with moves that leave the state unchanged left out, as in :mod:`.davi`. One target-network call on
the children serves every head (``value_fn`` returns ``[rows, G]``, :func:`target_value_fn`), and
the trainer fits all heads jointly on the mean squared error over every (state, goal) pair.

>>> from puzzlezero.train.objectives import get_objective
>>> get_objective("multigoal").head
'goals'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.descents import scramble_depths
from puzzlezero.train.objectives.path_costs import cap_values, scrambles_with_path_cost
from puzzlezero.train.objectives.registry import ValueFn, register_objective

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["multigoal_labels", "multigoal_targets"]


def multigoal_targets(
    puzzle: Puzzle,
    value_fn: ValueFn,
    states: np.ndarray,
    goals: Sequence[str],
    *,
    chunk: int = 2048,
) -> np.ndarray:
    """``float32[N, G]``: each goal's one-step Bellman target of ``states[N]``. ``value_fn`` maps
    children ``[M] -> float32[M, G]`` (values ``>= 0``, column ``g`` 0 where goal ``g`` holds);
    it gets about ``chunk // num_actions`` parents' children per call. A state no move changes keeps
    its no-op children (as :func:`.davi.one_step_targets`)."""
    tests = [puzzle.goal_test(g) for g in goals]
    n, n_act, n_goals = states.shape[0], puzzle.num_actions, len(tests)
    if n_goals == 0:
        raise PuzzleError("multigoal targets need at least one goal")
    per = max(1, chunk // n_act)
    cost = (
        np.float32(puzzle.uniform_cost)
        if puzzle.uniform_cost is not None
        else puzzle.action_costs.astype(np.float32)[None, :, None]
    )
    out = np.empty((n, n_goals), dtype=np.float32)
    for lo in range(0, n, per):
        parents = states[lo : lo + per]
        m = parents.shape[0]
        children = puzzle.expand(parents).reshape(m * n_act, *puzzle.state_shape)
        moved = puzzle.moved(parents, children)
        moved[~moved.any(axis=1)] = True
        values = np.asarray(value_fn(children), dtype=np.float32).reshape(m * n_act, n_goals).copy()
        for k, test in enumerate(tests):
            values[test(children), k] = 0.0
        per_action = cost + values.reshape(m, n_act, n_goals)
        per_action[~moved] = np.inf
        out[lo : lo + m] = per_action.min(axis=1)
    for k, test in enumerate(tests):
        out[test(states), k] = 0.0
    return out


@register_objective(
    "multigoal",
    needs_target=True,
    summary="one-step Bellman targets of every goal's head (Dong et al.'s multi-head networks)",
    head="goals",
    goal_aware=True,
    caps_labels=True,
    recipe=lambda cfg: f"multi-head DAVI ({', '.join(cfg.goals)}; {cfg.head_layers} goal-specific layers)",
)
def multigoal_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None,
    config: TrainConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` states scrambled ``k ~ U[1, max_scramble]`` times from the solved state, with the
    targets ``[n, G]`` of the goals ``config.goals`` under ``value_fn`` (the target network); with
    ``config.cap_labels`` each capped at the scramble's cost back to the solved state, which meets
    every goal (:mod:`.path_costs`)."""
    assert value_fn is not None
    depth = scramble_depths(rng, n, max_scramble, config)
    if not config.cap_labels:
        states = puzzle.scramble(rng, n, depth)
        return states, multigoal_targets(puzzle, value_fn, states, config.goals, chunk=config.inference_batch)
    states, path_cost = scrambles_with_path_cost(puzzle, rng, n, depth)
    targets = multigoal_targets(puzzle, value_fn, states, config.goals, chunk=config.inference_batch)
    return states, cap_values(targets, path_cost)
