"""Training states from the network's own greedy descents: states where a search would go.

Scrambles from the goal (DeepCubeA's training distribution) never make some states that a search
reaches: a beam or best-first search over a learned cost-to-go goes wherever the network is lowest,
and where the network was never trained it can be wrong by far, valuing a board dozens of moves
from the goal at a few moves (a *hole*; docs/training-research.md, "How far out the training
states reach": on the 48-puzzle a beam fell into such boards and wandered there for a thousand steps).
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
4. With ``TrainConfig.cap_labels`` each recorded state comes with the cost of a known path to the
   goal (:func:`descent_states_with_path_cost`): a walker that reached the goal has walked one
   from every state it recorded on the way, and every walker can undo its walk back to its start
   and then the start's scramble. The smaller of the two caps the state's labels
   (:mod:`puzzlezero.train.objectives.path_costs`); only bookkeeping is added, the states and the
   random draws are those of an uncapped run.

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
from typing import TYPE_CHECKING, Any

import numpy as np

from puzzlezero.puzzles import walks
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.walks import Depth

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = [
    "chunk_descents",
    "chunk_descents_with_path_cost",
    "descent_count",
    "descent_states",
    "descent_states_with_path_cost",
    "scramble_depths",
    "scrambles_with_path_cost",
    "training_states",
]

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


def scrambles_with_path_cost(
    puzzle: Puzzle, rng: np.random.Generator, n: int, depth: Depth
) -> tuple[np.ndarray, np.ndarray]:
    """``(states, cost float64[n])``: exactly what ``puzzle.scramble(rng, n, depth)`` draws (the
    same states, the same random draws taken from ``rng``), with the cost of walking each state back
    to the goal along its scramble: an upper bound of its cost-to-go. Where the puzzle scrambles
    with the generic walk (the cubes) the walk back leaves out the scramble's steps back
    (:func:`puzzlezero.puzzles.walks.walk`, ``reduced``); a puzzle's own scrambler gives the cost of
    all its moves (:func:`.walks.walks_with_cost`)."""
    if type(puzzle).scramble is Puzzle.scramble:
        depths = walks.draw_depths(rng, n, depth)
        return walks.walk(puzzle, rng, depths, nonbacktracking=False, with_cost=True, reduced=True)[:2]
    return walks.walks_with_cost(puzzle, rng, n, depth, nonbacktracking=False)


def _starts(
    puzzle: Puzzle,
    rng: np.random.Generator,
    m: int,
    max_scramble: int,
    config: TrainConfig | None,
    with_cost: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """``m`` walkers' starts: scrambles like the training states', drawn again where one came back
    to the goal (a walker at the goal would have nowhere to descend); with ``with_cost`` also each
    start's scramble cost back to the goal (:func:`scrambles_with_path_cost`: the same draws)."""

    def draw(k: int) -> tuple[np.ndarray, np.ndarray | None]:
        depth = scramble_depths(rng, k, max_scramble, config)
        if with_cost:
            return scrambles_with_path_cost(puzzle, rng, k, depth)
        return puzzle.scramble(rng, k, depth), None

    starts, cost = draw(m)
    again = np.flatnonzero(puzzle.is_goal(starts))
    while again.size:
        starts[again], more = draw(again.size)
        if cost is not None and more is not None:
            cost[again] = more
        again = again[puzzle.is_goal(starts[again])]
    return starts, cost


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
    return _descend(puzzle, rng, n, max_scramble, value_fn, steps, epsilon, stride, config, False)[0]


def descent_states_with_path_cost(
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
) -> tuple[np.ndarray, np.ndarray]:
    """``(states, cost float64[n])``: :func:`descent_states` (the same states from the same random
    draws) with the cost of a known path from each state to the goal, the smaller of

    * the walker's own steps from the state to the goal, where its walk reached the goal (the sum
      of the costs of the moves it took from there on), and
    * the walk undone back to its start (the sum of the costs of the inverse moves; none where a
      move cannot be undone) and then the start's scramble undone (:func:`scrambles_with_path_cost`);

    ``inf`` where neither is known."""
    states, cost = _descend(puzzle, rng, n, max_scramble, value_fn, steps, epsilon, stride, config, True)
    assert cost is not None
    return states, cost


def _descend(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn,
    steps: int,
    epsilon: float,
    stride: int,
    config: TrainConfig | None,
    with_cost: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The walkers of :func:`descent_states`; with ``with_cost`` the known path costs of
    :func:`descent_states_with_path_cost` too (bookkeeping only: the random draws are the same)."""
    if steps < 1 or not 1 <= stride <= steps or not 0.0 <= epsilon <= 1.0:
        raise ValueError(
            f"need 1 <= stride <= steps and 0 <= epsilon <= 1, got steps {steps!r}, stride {stride!r}, "
            f"epsilon {epsilon!r}"
        )
    shape = tuple(puzzle.state_shape)
    if n <= 0:
        return np.zeros((0, *shape), dtype=puzzle.dtype), (np.zeros(0) if with_cost else None)
    kept = steps // stride  # states recorded per walker
    walkers = -(-n // kept)
    n_act = puzzle.num_actions
    action_cost = puzzle.action_costs.astype(np.float64)
    cost = action_cost[None, :]
    cur, start_cost = _starts(puzzle, rng, walkers, max_scramble, config, with_cost)
    prev = cur.copy()  # a walker's previous state; equal to ``cur`` at a start (nothing to undo)
    record = np.empty((kept, walkers, *shape), dtype=cur.dtype)
    rows = np.arange(walkers)
    if with_cost:
        assert start_cost is not None
        inverse = np.asarray(puzzle.inverse_action, dtype=np.int64)
        undo_cost = np.where(inverse >= 0, action_cost[np.maximum(inverse, 0)], np.inf)  # [A]
        back = start_cost.astype(np.float64)  # each walker's walk undone, then its start's scramble
        walked = np.zeros(walkers)  # the cost of the moves each walker made since its start
        walk_id = rows.copy()  # which walk (one per start) each walker is on
        walk_total = np.full(walkers, np.inf)  # per walk: its cost from start to goal, if it got there
        rec_back = np.empty((kept, walkers))
        rec_walked = np.empty((kept, walkers))
        rec_walk = np.empty((kept, walkers), dtype=np.int64)
    for t in range(kept * stride):
        if t % stride == stride - 1:
            record[t // stride] = cur
            if with_cost:
                rec_back[t // stride] = back
                rec_walked[t // stride] = walked
                rec_walk[t // stride] = walk_id
        if t == kept * stride - 1:
            break
        children = puzzle.expand(cur).reshape(walkers, n_act, *shape)
        flat_children = children.reshape(walkers, n_act, -1)
        moved = puzzle.moved(cur, children)
        backward = np.all(flat_children == prev.reshape(walkers, 1, -1), axis=2)
        allowed = moved & ~backward
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
        if with_cost:
            walked = walked + np.where(stuck, 0.0, action_cost[choice])
            back = back + np.where(stuck, 0.0, undo_cost[choice])
            arrived = done & ~stuck
            walk_total[walk_id[arrived]] = walked[arrived]
        if done.any():
            m = int(done.sum())
            cur[done], more = _starts(puzzle, rng, m, max_scramble, config, with_cost)
            prev[done] = cur[done]
            if with_cost:
                assert more is not None
                back[done] = more
                walked[done] = 0.0
                walk_id[done] = walk_total.size + np.arange(m)
                walk_total = np.concatenate([walk_total, np.full(m, np.inf)])
    states = record.transpose(1, 0, *range(2, 2 + len(shape))).reshape(walkers * kept, *shape)[:n]
    if not with_cost:
        return states, None
    ahead = walk_total[rec_walk] - rec_walked  # the rest of the walk to the goal (inf: never got there)
    known = np.minimum(ahead, rec_back)  # [kept, walkers]
    return states, known.T.reshape(walkers * kept)[:n]


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
    return descent_states(puzzle, rng, n, max_scramble, value_fn, **_settings(config))


def chunk_descents_with_path_cost(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn,
    config: TrainConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`chunk_descents` (the same states from the same draws) with their known path costs
    (:func:`descent_states_with_path_cost`)."""
    return descent_states_with_path_cost(puzzle, rng, n, max_scramble, value_fn, **_settings(config))


def _settings(config: TrainConfig) -> dict[str, Any]:
    """The descent keywords of :func:`descent_states` set by the configuration."""
    return {
        "steps": config.descent_steps,
        "epsilon": config.descent_epsilon,
        "stride": config.descent_stride,
        "config": config,
    }


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
