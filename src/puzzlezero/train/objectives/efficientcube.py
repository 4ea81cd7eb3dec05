"""EfficientCube: a policy that learns the scramble backwards (Takano, "Self-Supervision is All You
Need for Solving Rubik's Cube", TMLR 2023, arXiv:2106.03157).

The whole method is one supervised task. Walk from the goal by random moves that do not undo the
step before (:meth:`Puzzle.walks_with_undo`); the network sees the state where the walk stopped and
learns, by cross-entropy, **the move that undoes the walk's last step**. No network call makes a
label, no target network, no Bellman error. The paper's argument: among the random paths that
connect a state with the goal, those whose first move lies on a shortest path are the most
numerous, so the predicted distribution over moves peaks on optimal moves, and a search that
follows the most probable paths (:func:`puzzlezero.search.beam.pbeam`: beam search ranked by the
path's summed log-probability) finds near-optimal solutions.

On Lights Out, whose presses commute, the last press of a walk of ``k`` distinct presses is a
uniformly random cell of its press set, and every cell of the set is a move on a shortest path: the
policy learns the probability that a cell must be pressed (EfficientCube reports 100% optimal
solutions of 7x7 boards this way). By default (``efficientcube_target="set"``) the label is that
distribution itself, 1/k on each pressed cell, instead of one cell drawn from it: the expected
label, the same gradient on average without the draw's noise, which learned more than twice as
fast per sample (docs/lightsout.md). Where moves do not commute it is the one undo move, as in the
paper (:meth:`Puzzle.walks_with_undo_sets`); ``"last"`` keeps the paper's label everywhere.

Rows are ADI's ``(value, action, weight)`` (the ``"policy"`` head,
:meth:`puzzlezero.train.trainer.Trainer._step`) with the value ``NaN``: as in the paper only the
policy learns. (The walk's length, :mod:`.random_walk`'s label, is a noisy target whose squared
error grows with ``K``: thousands on the large sliding puzzles, where it would drown the
cross-entropy in the shared layers.) The value head stays untrained, so such a model is searched
with :func:`~puzzlezero.search.beam.pbeam` (``--search pbeam``), and the training-time validation
follows the policy (:func:`puzzlezero.train.evaluate.evaluate_policy`). Walks that end back at the
goal carry no move to learn and are left out. Walk lengths are uniform in ``[1, K]``
(``max_scramble``); the paper scrambles every training sequence to a fixed length and trains on all
its prefixes, the same lengths in equal number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.descents import scramble_depths
from puzzlezero.train.objectives.registry import ValueFn, register_objective

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["efficientcube_labels", "undo_rows"]


def undo_rows(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    target: str = "set",
    config: TrainConfig | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(states, rows)`` for ``n`` walks of ``k ~ U[1, max_scramble]`` steps, one row per state
    that is not a goal (``M <= n``): ``target="last"``, ``float32[M, 3]`` rows ``(NaN, undo move,
    1)``; ``"set"``, ``float32[M, 3 + A]`` rows ``(NaN, -1, 1, p[A])`` with ``p`` the distribution
    of the undo move (:meth:`Puzzle.walks_with_undo_sets`). ``config``: its ``scramble_power``
    spreads the walks' lengths (:func:`~puzzlezero.train.descents.scramble_depths`)."""
    depths = scramble_depths(rng, n, max_scramble, config)
    if target == "set":
        states, dist = puzzle.walks_with_undo_sets(rng, n, depths)
        has_undo, action = dist.sum(axis=1) > 0, np.full(len(states), -1.0)
    else:
        states, _, action = puzzle.walks_with_undo(rng, n, depths)
        has_undo, dist = action >= 0, np.empty((len(states), 0))
    keep = has_undo & ~puzzle.is_goal(states)
    m = int(keep.sum())
    head = np.stack([np.full(m, np.nan), action[keep], np.ones(m)], axis=1)
    return states[keep], np.concatenate([head, dist[keep]], axis=1).astype(np.float32)


@register_objective(
    "efficientcube",
    needs_target=False,
    head="policy",
    policy_only=True,
    summary="a policy: the move undoing a random walk's last step (EfficientCube; search it with pbeam)",
)
def efficientcube_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None = None,
    config: TrainConfig | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """About ``n`` rows of :func:`undo_rows` (the policy's target: the undo move's distribution, or
    with ``config.efficientcube_target="last"`` the move itself; no value)."""
    target = "set" if config is None else config.efficientcube_target
    return undo_rows(puzzle, rng, n, max_scramble, target, config)
