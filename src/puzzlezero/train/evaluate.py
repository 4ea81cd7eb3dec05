"""Periodic evaluation during training, as in DeepCubeA's Fig. 3.

For a fixed set of states scrambled ``d`` times (for each depth ``d``): the percentage solved by
greedy best-first search (from each state, repeatedly move to the child with the lowest heuristic
value, as DeepCubeA's training-time test; :func:`puzzlezero.search.gbfs`), and the mean predicted cost-to-go
beside a reference: the true distance where an exact table exists (``cube2``), else the scramble
depth itself (an upper bound of the true distance; the plot says which).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzlezero.puzzles.base import Puzzle

__all__ = ["EvalSet", "make_eval_set", "greedy_rollout", "greedy_solved", "evaluate", "default_eval_depths"]

Heuristic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class EvalSet:
    """Fixed evaluation states: ``states[N, *state_shape]``, their scramble ``depths`` (int64[N]) and,
    when known, exact cost-to-go ``true_cost`` (float32[N]; otherwise ``None``)."""

    states: np.ndarray
    depths: np.ndarray
    true_cost: np.ndarray | None

    @property
    def reference(self) -> str:
        return "true cost-to-go" if self.true_cost is not None else "scramble depth (upper bound)"


def default_eval_depths(max_scramble: int, count: int = 10, cap: int = 30) -> tuple[int, ...]:
    """About ``count`` depths spread evenly over ``[1, min(max_scramble, cap)]``."""
    top = max(1, min(max_scramble, cap))
    return tuple(int(d) for d in np.unique(np.linspace(1, top, num=min(count, top)).round().astype(int)))


def _true_cost(puzzle: Puzzle, states: np.ndarray) -> np.ndarray | None:
    """Exact distances where the project has a table (cube2), else ``None``."""
    if puzzle.name != "cube2":
        return None
    try:
        from puzzlezero.puzzles.cube2_table import distance

        return np.asarray(distance(states), dtype=np.float32)
    except Exception as exc:  # no table: evaluation falls back to the scramble depth, training goes on
        warnings.warn(
            f"no exact cube2 distances for the evaluation ({exc}); using scramble depths", stacklevel=2
        )
        return None


def make_eval_set(puzzle: Puzzle, depths: tuple[int, ...], per_depth: int, seed: int) -> EvalSet:
    """``per_depth`` states for each depth, from an RNG of its own (training RNG untouched)."""
    rng = np.random.default_rng([seed, 0xE7A1])
    d = np.repeat(np.asarray(depths, dtype=np.int64), per_depth)
    states = puzzle.scramble(rng, d.size, d)
    return EvalSet(states, d, _true_cost(puzzle, states))


def greedy_rollout(puzzle: Puzzle, heuristic: Heuristic, states: np.ndarray, max_steps: int) -> np.ndarray:
    """Greedy best-first rollout of every state at once; returns ``bool[N]`` solved within
    ``max_steps`` moves. Each step evaluates the children of all unsolved states in one call."""
    states = states.copy()
    solved = puzzle.is_goal(states)
    n_act = puzzle.num_actions
    for _ in range(max_steps):
        active = np.flatnonzero(~solved)
        if active.size == 0:
            break
        children = puzzle.expand(states[active])  # [n, A, ...]
        flat = children.reshape(active.size * n_act, *puzzle.state_shape)
        h = heuristic(flat).reshape(active.size, n_act)
        legal = puzzle.legal_mask(states[active])
        h = np.where(legal, h, np.inf)
        best = np.argmin(h, axis=1)
        states[active] = children[np.arange(active.size), best]
        solved[active] = puzzle.is_goal(states[active])
    return solved


def greedy_solved(puzzle: Puzzle, heuristic: Heuristic, states: np.ndarray, max_steps: int) -> np.ndarray:
    """``bool[N]``: solved by greedy best-first search within ``max_steps`` moves, using
    :func:`puzzlezero.search.gbfs` (which never revisits a state), else :func:`greedy_rollout`."""
    try:
        from puzzlezero.search import gbfs
    except ImportError:
        return greedy_rollout(puzzle, heuristic, states, max_steps)
    return np.array([r.solved for r in gbfs(puzzle, states, heuristic, max_steps=max_steps)], dtype=bool)


def evaluate(puzzle: Puzzle, heuristic: Heuristic, eval_set: EvalSet, max_steps: int) -> dict[str, Any]:
    """Per-depth results: ``{"depths", "solved_pct", "mean_pred", "mean_ref", "reference"}``."""
    pred = heuristic(eval_set.states)
    solved = greedy_solved(puzzle, heuristic, eval_set.states, max_steps)
    ref = eval_set.true_cost if eval_set.true_cost is not None else eval_set.depths.astype(np.float32)
    depths = np.unique(eval_set.depths)
    out: dict[str, Any] = {"depths": [], "solved_pct": [], "mean_pred": [], "mean_ref": []}
    for d in depths:
        m = eval_set.depths == d
        out["depths"].append(int(d))
        out["solved_pct"].append(round(100.0 * float(solved[m].mean()), 2))
        out["mean_pred"].append(round(float(pred[m].mean()), 4))
        out["mean_ref"].append(round(float(ref[m].mean()), 4))
    out["reference"] = eval_set.reference
    return out
