"""Labels capped by the paths the scrambles already know (``TrainConfig.cap_labels``).

A training state made by scrambling the goal comes with a path back to it: the scramble, undone
move by move. Its cost bounds the state's cost-to-go from above, so a Bellman target above it is
wrong by at least the difference, and the capped target

    y_cap(s) = min( min_a [cost(s, a) + J_target(A(s, a))],  c(s) ),   c(s) = the scramble's cost back,

is never further from the truth than the uncapped one (the cost-to-go is at most ``c(s)``; where
the target is already below ``c(s)`` nothing changes). This is bootstrap learning's bound (Jabbari
Arfaee, Zilles and Holte, "Learning heuristic functions for large state spaces", Artificial
Intelligence 2011: a heuristic is trained on the costs of the solutions found so far); DeepXube
bounds its labels with the solutions it has found, JAxtar caps its temporal-difference targets.

``c(s)`` comes from the scrambler itself (:func:`puzzlezero.puzzles.walks.walks_with_cost` with
``nonbacktracking=False``: the puzzle's own ``scramble``, the same states from the same random
draws, with each walk's cost back), not from a second pass: the sum of ``action_costs`` of the
inverse moves (``k`` for a unit-cost walk of ``k`` moves). Where the puzzle scrambles with the
generic walk (the cubes) the walk keeps its moves as it goes and leaves out the steps back: a turn
followed by its inverse cancels, so ``R U U' R'`` costs nothing (:func:`.walks.walk`,
``reduced``). The sliding puzzles' and Lights Out's own scramblers give the cost of all their
moves: every one of them is a real move (the sliding walk picks among the legal moves, every press
changes the board), so ``c(s)`` is the cost of a true path, steps back included. Sokoban's reverse
play stops early where the agent is boxed in, so there ``c(s)`` bounds the path from above.

A Q target ``y(s, a) = cost(a) + J_target(A(s, a))`` is capped by the path through ``s``: the
child goes back to ``s`` by the inverse move and on along the known path, so
``y_cap(s, a) = min(y(s, a), cost(a) + cost(inverse(a)) + c(s))``.

States that come from greedy descents (``TrainConfig.descent_share``) know two paths: a walker
that reached the goal walked one from every state it recorded (the cost of its remaining steps),
and every walker can undo its walk back to its start and then the start's scramble (the cost of the
inverse moves plus the start's ``c``). Their cap is the smaller of the two, ``inf`` only where
neither is known (a walk that never reached the goal, with a move that cannot be undone):
:func:`puzzlezero.train.descents.descent_states_with_path_cost`, the same states from the same
draws as an uncapped run.

LHBL caps every node of its trees (:func:`puzzlezero.train.objectives.lhbl.lhbl_labels`,
``path_cost``): a node ``n`` goes back to the root along the tree's edges, then on along the root's
known path, so its cap is ``g_back(n) + c(root)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.descents import (
    chunk_descents_with_path_cost,
    descent_count,
    scramble_depths,
    scrambles_with_path_cost,
)
from puzzlezero.train.objectives.registry import ValueFn

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = [
    "scrambles_with_path_cost",
    "training_states_with_path_cost",
    "cap_values",
    "cap_action_values",
]


def training_states_with_path_cost(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None,
    config: TrainConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~puzzlezero.train.descents.training_states` (the same states from the same draws)
    with each state's known path cost: the scramble's cost back, and for the states of greedy
    descents the cheaper of the descent's own steps to the goal and the descent undone back to its
    start then the start's scramble undone
    (:func:`~puzzlezero.train.descents.descent_states_with_path_cost`; ``inf`` where neither is
    known)."""
    n_descent = descent_count(n, value_fn, config)
    n_scramble = n - n_descent
    states, cost = scrambles_with_path_cost(
        puzzle, rng, n_scramble, scramble_depths(rng, n_scramble, max_scramble, config)
    )
    if n_descent == 0:
        return states, cost
    assert value_fn is not None
    more, more_cost = chunk_descents_with_path_cost(puzzle, rng, n_descent, max_scramble, value_fn, config)
    return np.concatenate([states, more]), np.concatenate([cost, more_cost])


def cap_values(targets: np.ndarray, path_cost: np.ndarray) -> np.ndarray:
    """``float32[N]`` or ``[N, G]``: ``min(targets, path_cost)`` row by row (``path_cost[N]``; a
    goal's cost-to-go is at most that of the solved state, which every scramble path reaches, so
    each goal column takes the same cap). Never above ``targets``."""
    cap = np.asarray(path_cost, dtype=np.float64).reshape(-1, *([1] * (targets.ndim - 1)))
    return np.minimum(targets, cap).astype(np.float32)


def cap_action_values(puzzle: Puzzle, targets: np.ndarray, path_cost: np.ndarray) -> np.ndarray:
    """``float32[N, A]``: the Q targets ``targets[N, A]`` capped at ``cost(a) + cost(inverse(a)) +
    path_cost`` (the child back to its parent, then the parent's known path); NaN (no move) stays
    NaN. Needs moves that can be undone."""
    inverse = np.asarray(puzzle.inverse_action, dtype=np.int64)
    if np.any(inverse < 0):
        raise PuzzleError(
            f"cap_labels: {puzzle.name}'s moves cannot all be undone, so a child has no known path "
            "back through its parent; train its Q head with cap_labels=false"
        )
    costs = np.asarray(puzzle.action_costs, dtype=np.float64)
    there_and_back = costs + costs[inverse]
    cap = there_and_back[None, :] + np.asarray(path_cost, dtype=np.float64)[:, None]
    return np.minimum(targets, cap).astype(np.float32)  # NaN stays NaN
