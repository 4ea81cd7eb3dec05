"""Training states from the network's own greedy descents: states where a search would go.

Scrambles from the goal (DeepCubeA's training distribution) never make some states that a search
reaches: a beam or best-first search over a learned cost-to-go goes wherever the network is lowest,
and where the network was never trained it can be wrong by far, valuing a board dozens of moves
from the goal at a few moves (a *hole*; docs/training.md, "How far out the training states
reach": on the 48-puzzle a beam fell into such boards and wandered there for a thousand steps).
A search that trusts a hole never leaves it, and no amount of training on scrambles fills it.

The remedy is old: learn the heuristic on the states that searching with it visits (bootstrapping,
Arfaee, Zilles & Holte, "Learning heuristic functions for large state spaces", AIJ 2011; AlphaZero
trains on the positions of its own play, as Rute's cube solver does). Here a share of each chunk's training
states comes from **greedy descents under the target network**:

1. Start ``R`` walkers at scrambles drawn like the training states (``k ~ U[1, K]``, or the
   :attr:`~puzzlezero.train.config.TrainConfig.scramble_power` spread).
2. ``steps`` times: record every walker's state (only every ``stride``-th step's, if asked), then
   move it to the child of least ``cost(a) + h(child)`` (``h``: the target network, 0 at goals)
   among the moves that change the state and do not undo the walker's previous move; with
   probability ``epsilon`` to a random such child instead (so walkers that meet one another's paths
   part again). A walker with no such child steps back; one that reaches the goal restarts at a
   fresh scramble (never the goal itself).
3. The recorded states (``R * steps / stride`` of them, the first ``n`` kept) are training states
   like any other: the objective labels them (one-step or limited-horizon Bellman targets), so a
   hole's value rises by at least a move at every target update until the descents no longer end
   there.

One network call per step values the children of all walkers together (``steps`` calls in all,
``stride * num_actions`` evaluations per state recorded; LHBL's ten expansions spend about
``10 * num_actions`` on a state). A search's holes lie at the end of long descents (on the 48-puzzle
after 500-1000 steps from the benchmark's distances), so long walks recorded with a stride give
many walkers, far apart, per chunk. Every random draw comes from the objective's ``rng``, so
training resumes exactly. Used by ``davi`` and ``lhbl`` when ``TrainConfig.descent_share > 0``.

Example:
    >>> import numpy as np
    >>> from puzzlezero import make
    >>> p = make("puzzle8")
    >>> h = lambda s: p.manhattan(s).astype(np.float32)
    >>> states = descent_states(p, np.random.default_rng(0), 12, 20, h, steps=4, epsilon=0.0)
    >>> states.shape
    (12, 9)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles.base import Puzzle

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["chunk_descents", "descent_count", "descent_states", "scramble_depths", "training_states"]

ValueFn = Callable[[np.ndarray], np.ndarray]


def scramble_depths(
    rng: np.random.Generator, n: int, max_scramble: int, config: TrainConfig | None
) -> tuple[int, int] | np.ndarray:
    """The ``depth`` argument of :meth:`Puzzle.scramble` (and the walks) for ``n`` training states:
    ``(1, K)``, i.e. ``k ~ U[1, K]``, the paper's, when ``config.scramble_power`` is 1 (or there is
    no config); else ``int64[n]`` depths ``k = ceil(K * u**p)`` with ``u ~ U(0, 1)`` drawn here from
    ``rng`` (:attr:`TrainConfig.scramble_power`)."""
    power = 1.0 if config is None else float(config.scramble_power)
    if power == 1.0:
        return (1, max_scramble)
    return np.clip(np.ceil(max_scramble * rng.random(n) ** power), 1, max_scramble).astype(np.int64)


def _starts(
    puzzle: Puzzle, rng: np.random.Generator, m: int, max_scramble: int, config: TrainConfig | None
) -> np.ndarray:
    """``m`` walkers' starts: scrambles like the training states', drawn again where one came back
    to the goal (a walker at the goal would have nowhere to descend)."""
    starts = puzzle.scramble(rng, m, scramble_depths(rng, m, max_scramble, config))
    again = np.flatnonzero(puzzle.is_goal(starts))
    while again.size:
        starts[again] = puzzle.scramble(
            rng, again.size, scramble_depths(rng, again.size, max_scramble, config)
        )
        again = again[puzzle.is_goal(starts[again])]
    return starts


def descent_states(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn,
    *,
    steps: int,
    epsilon: float,
    stride: int = 1,
    config: TrainConfig | None = None,
) -> np.ndarray:
    """``n`` states ``[n, *state_shape]``: every ``stride``-th state visited by
    ``ceil(n * stride / steps)`` greedy descents of ``steps`` steps under ``value_fn`` (see the
    module docstring), walker by walker in visiting order. ``config``: its ``scramble_power``
    spreads the starting scrambles (``None``: uniform)."""
    if steps < 1 or not 1 <= stride <= steps or not 0.0 <= epsilon <= 1.0:
        raise ValueError(
            f"need 1 <= stride <= steps and 0 <= epsilon <= 1, got steps {steps!r}, stride {stride!r}, "
            f"epsilon {epsilon!r}"
        )
    shape = tuple(puzzle.state_shape)
    if n <= 0:
        return np.zeros((0, *shape), dtype=puzzle.dtype)
    kept = steps // stride  # states recorded per walker
    walkers = -(-n // kept)
    n_act = puzzle.num_actions
    cost = puzzle.action_costs.astype(np.float64)[None, :]
    cur = _starts(puzzle, rng, walkers, max_scramble, config)
    prev = cur.copy()  # a walker's previous state; equal to ``cur`` at a start (nothing to undo)
    record = np.empty((kept, walkers, *shape), dtype=cur.dtype)
    rows = np.arange(walkers)
    for t in range(kept * stride):
        if t % stride == stride - 1:
            record[t // stride] = cur
        if t == kept * stride - 1:
            break
        children = puzzle.expand(cur).reshape(walkers, n_act, *shape)
        flat_children = children.reshape(walkers, n_act, -1)
        moved = puzzle.moved(cur, children)
        back = np.all(flat_children == prev.reshape(walkers, 1, -1), axis=2)
        allowed = moved & ~back
        allowed |= moved & ~allowed.any(axis=1, keepdims=True)  # a dead end: stepping back is allowed
        flat = children.reshape(walkers * n_act, *shape)
        goal = puzzle.is_goal(flat)
        need = allowed.ravel() & ~goal
        goal = goal.reshape(walkers, n_act)
        value = np.zeros(walkers * n_act)
        if need.any():
            value[need] = np.maximum(np.asarray(value_fn(flat[need]), dtype=np.float64).reshape(-1), 0.0)
        score = np.where(allowed, cost + value.reshape(walkers, n_act), np.inf)
        choice = np.argmin(score, axis=1)
        explore = rng.random(walkers) < epsilon
        if explore.any():  # a random allowed child: the argmax of random keys over the allowed moves
            keys = np.where(allowed[explore], rng.random((int(explore.sum()), n_act)), -1.0)
            choice[explore] = np.argmax(keys, axis=1)
        stuck = ~allowed.any(axis=1)  # no move changes the state: stay (and restart below)
        prev = cur.copy()
        cur = np.where(stuck.reshape(-1, *([1] * len(shape))), cur, children[rows, choice])
        done = stuck | goal[rows, choice]  # a stuck walker stays where it was: never at the goal
        if done.any():
            m = int(done.sum())
            cur[done] = _starts(puzzle, rng, m, max_scramble, config)
            prev[done] = cur[done]
    return record.transpose(1, 0, *range(2, 2 + len(shape))).reshape(walkers * kept, *shape)[:n]


def descent_count(n: int, value_fn: ValueFn | None, config: TrainConfig) -> int:
    """How many of a chunk's ``n`` training states come from greedy descents: ``round(n *
    config.descent_share)``, none without a value function."""
    return int(round(n * config.descent_share)) if value_fn is not None else 0


def chunk_descents(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn,
    config: TrainConfig,
) -> np.ndarray:
    """``n`` :func:`descent_states` under ``value_fn`` with the configuration's descent settings."""
    return descent_states(
        puzzle,
        rng,
        n,
        max_scramble,
        value_fn,
        steps=config.descent_steps,
        epsilon=config.descent_epsilon,
        stride=config.descent_stride,
        config=config,
    )


def training_states(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None,
    config: TrainConfig,
) -> np.ndarray:
    """The ``n`` training states of a chunk: the goal scrambled ``k`` times (DeepCubeA), the last
    :func:`descent_count` of them replaced by :func:`chunk_descents` under ``value_fn``. With
    ``descent_share`` 0 this draws exactly what a plain scramble draws."""
    n_descent = descent_count(n, value_fn, config)
    n_scramble = n - n_descent
    states = puzzle.scramble(rng, n_scramble, scramble_depths(rng, n_scramble, max_scramble, config))
    if n_descent == 0:
        return states
    assert value_fn is not None
    return np.concatenate([states, chunk_descents(puzzle, rng, n_descent, max_scramble, value_fn, config)])
