"""AlphaZero-style self-play (J. Rute, "Solving the puzzle cube with deep reinforcement
learning and tree search"), the training objective ``selfplay``.

Each chunk of labels comes from **episodes**: a state scrambled ``D`` moves from the goal is solved
move by move, each move chosen by a tree search (:func:`puzzlezero.search.discounted_mcts`: PUCT
with gamma-discounted backups and exploration scaled by the node's value) with the network's policy
as prior and its value at the leaves; the move played is the root action visited most. Every state
an episode passes through becomes one training row:

* **policy target**: the root's visit counts, normalised;
* **value target**: ``gamma^k`` (``gamma = 0.95``) if the episode reached the goal ``k`` moves after
  this state, 0 if it did not within ``selfplay_max_moves`` moves.

The **scramble depth** ``D`` adapts so that about half the episodes are solved: after each chunk,
``D`` grows by one if more than ``selfplay_target_solved`` of its episodes were solved and shrinks
by one if fewer were (:func:`adapt_depth`; within ``[1, K]``, starting at ``selfplay_start_depth``).
On the cubes, each row is moved by a random one of the 48 symmetries (states recoloured so centres
keep their colours, the policy target's moves mapped with them; :mod:`puzzlezero.puzzles.cube.symmetry`),
and the tree search evaluates every node under a random symmetry (its policy mapped back). Other
puzzles train without symmetries.

**Value scale.** Rute's value head is a sigmoid ``v ~ gamma^distance`` (higher is closer); this
project's heads are costs-to-go (lower is closer), which A*, beam search and the evaluation read.
So the value head stays a cost-to-go ``J`` and self-play reads it as ``v = gamma^J`` (``J = log v /
log gamma``): the loss is Rute's squared error on ``v``, ``(gamma^J - v_target)^2``, plus the
cross-entropy of the policy against the visit distribution (the trainer's ``"alphazero"`` head,
:meth:`puzzlezero.train.trainer.Trainer._step`). A target of 0 (unsolved) pushes ``J`` up without
bound but with a vanishing gradient, so states beyond the network's reach read as far. The
trained network is an ordinary model folder for every search; its policy head serves MCTS and
policy-greedy solving.

**History.** A network with ``history = H`` (the ``cubeconv`` presets: 8) sees each state with the
``H - 1`` states before it on the episode (or, inside the tree, on the path from the root), newest
first; before an episode's first state there is nothing, and those planes are zeros (Rute's
choice, and what :mod:`puzzlezero.nn.cube_conv` gives a search that passes single states).

Rows are ``(v_target, weight, first, p_0 .. p_{A-1})``, ``first`` = 1 on each episode's first state
(the trainer counts solved episodes from these rows); states are ``[rows, H, *state_shape]``
(``[rows, *state_shape]`` when ``H = 1``). Episodes whose start is already solved give no rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from puzzlezero.nn.heuristic import missing_state
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.symmetry import NUM_SYMMETRIES, CubeSymmetries, symmetries_for
from puzzlezero.search.discounted_mcts import PolicyValueFn, discounted_mcts
from puzzlezero.train.objectives.registry import ValueFn, register_objective

if TYPE_CHECKING:
    import torch

    from puzzlezero.train.config import TrainConfig

__all__ = [
    "Episodes",
    "adapt_depth",
    "init_value_head",
    "play_episodes",
    "selfplay_labels",
    "selfplay_rows",
    "solved_fraction",
    "symmetrized",
]

#: leading columns of a row before the policy target
VALUE, WEIGHT, FIRST, POLICY = 0, 1, 2, 3


@dataclass(frozen=True)
class Episodes:
    """Rows of a batch of episodes (``N`` rows, ``E`` episodes).

    Attributes:
        states: ``[N, H, *state_shape]``: each state played from, with the ``H - 1`` before it.
        policy: ``float64[N, A]``: the root visit distribution of its search.
        episode: ``int64[N]``: which episode the row belongs to.
        step: ``int64[N]``: the move number within its episode (0 = the scrambled start).
        solved: ``bool[E]``: whether each episode reached a goal.
        length: ``int64[E]``: moves each episode played.
    """

    states: np.ndarray
    policy: np.ndarray
    episode: np.ndarray
    step: np.ndarray
    solved: np.ndarray
    length: np.ndarray

    def value_targets(self, gamma: float) -> np.ndarray:
        """``float64[N]``: ``gamma^(moves left to the goal)`` on solved episodes, else 0."""
        left = self.length[self.episode] - self.step
        return np.where(self.solved[self.episode], gamma ** left.astype(np.float64), 0.0)


def adapt_depth(depth: int, solved: int, episodes: int, *, target: float, max_depth: int) -> int:
    """The next scramble depth: one more if more than ``target`` of the ``episodes`` were solved,
    one less if fewer, the same otherwise (or with no episodes); always within ``[1, max_depth]``.

    >>> adapt_depth(5, 40, 64, target=0.5, max_depth=30), adapt_depth(5, 20, 64, target=0.5, max_depth=30)
    (6, 4)
    """
    if episodes > 0:
        frac = solved / episodes
        depth += 1 if frac > target else -1 if frac < target else 0
    return int(min(max(depth, 1), max_depth))


def solved_fraction(targets: np.ndarray) -> tuple[int, int]:
    """``(solved, episodes)`` counted on the rows of :func:`selfplay_rows` (first rows only)."""
    first = targets[:, FIRST] > 0
    return int((targets[first, VALUE] > 0).sum()), int(first.sum())


def symmetrized(
    policy_value: PolicyValueFn, symmetries: CubeSymmetries, rng: np.random.Generator
) -> PolicyValueFn:
    """``policy_value`` evaluated on each state (with its history) under a random symmetry drawn
    from ``rng``, its policy mapped back to the state's own moves."""

    def wrapped(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = rng.integers(NUM_SYMMETRIES, size=len(states))
        p, cost = policy_value(symmetries.apply(states, k))
        return symmetries.unmap_policy(p, k), cost

    return wrapped


def play_episodes(
    puzzle: Puzzle,
    starts: np.ndarray,
    policy_value: PolicyValueFn,
    *,
    simulations: int,
    max_moves: int,
    gamma: float = 0.95,
    c_puct: float = 1.0,
    history: int = 1,
    unvisited: str = "parent",
) -> Episodes:
    """Play one episode from each of ``starts[E, *state_shape]``, all in lockstep (one search of
    ``simulations`` per move for all unfinished episodes together), at most ``max_moves`` moves."""
    starts = np.asarray(starts)
    e = len(starts)
    cur = starts.copy()
    before = np.full((e, history - 1, *starts.shape[1:]), missing_state(starts.dtype), starts.dtype)
    done = puzzle.is_goal(cur)
    length = np.zeros(e, dtype=np.int64)
    out_states, out_policy, out_episode, out_step = [], [], [], []
    for t in range(max_moves):
        live = np.flatnonzero(~done)
        if not len(live):
            break
        stats = discounted_mcts(
            puzzle,
            cur[live],
            policy_value,
            simulations=simulations,
            gamma=gamma,
            c_puct=c_puct,
            history=before[live] if history > 1 else None,
            unvisited=unvisited,
        )
        out_states.append(np.concatenate([cur[live][:, None], before[live]], axis=1))
        out_policy.append(stats.visits / stats.visits.sum(axis=1, keepdims=True))
        out_episode.append(live)
        out_step.append(np.full(len(live), t, dtype=np.int64))
        if history > 1:
            before[live] = np.concatenate([cur[live][:, None], before[live][:, :-1]], axis=1)
        cur[live] = puzzle.apply(cur[live], np.argmax(stats.visits, axis=1))
        length[live] += 1
        done[live] = puzzle.is_goal(cur[live])
    a = puzzle.num_actions
    states = (
        np.concatenate(out_states) if out_states else np.zeros((0, history, *starts.shape[1:]), starts.dtype)
    )
    return Episodes(
        states=states if history > 1 else states[:, 0],
        policy=np.concatenate(out_policy) if out_policy else np.zeros((0, a)),
        episode=np.concatenate(out_episode) if out_episode else np.zeros(0, dtype=np.int64),
        step=np.concatenate(out_step) if out_step else np.zeros(0, dtype=np.int64),
        solved=done,
        length=length,
    )


def selfplay_rows(
    episodes: Episodes,
    gamma: float,
    symmetries: CubeSymmetries | None = None,
    rng: np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(states, float32[N, 3 + A] rows)`` of :class:`Episodes`; with ``symmetries`` (and ``rng``)
    each row is moved by a random one of the 48 symmetries."""
    states, policy = episodes.states, episodes.policy
    if symmetries is not None and len(states):
        assert rng is not None
        k = rng.integers(NUM_SYMMETRIES, size=len(states))
        states, policy = symmetries.apply(states, k), symmetries.map_policy(policy, k)
    rows = np.zeros((len(states), POLICY + policy.shape[1]), dtype=np.float32)
    rows[:, VALUE] = episodes.value_targets(gamma)
    rows[:, WEIGHT] = 1.0
    rows[:, FIRST] = episodes.step == 0
    rows[:, POLICY:] = policy
    return states, rows


@register_objective(
    "selfplay",
    needs_target=True,
    head="alphazero",
    summary="AlphaZero-style self-play: discounted-MCTS visit counts and gamma^distance (Rute)",
    recipe=lambda cfg: (
        f"self-play with discounted MCTS ({cfg.selfplay_simulations} simulations per move, "
        f"gamma {cfg.selfplay_gamma}, depth adapted to {cfg.selfplay_target_solved:.0%} solved)"
    ),
)
def selfplay_labels(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: ValueFn | None,
    config: TrainConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """At least ``n`` rows from batches of ``selfplay_episodes`` episodes scrambled ``max_scramble``
    moves (the adapted depth ``D``; the trainer passes it), searched with the target network
    ``value_fn`` (a policy-value function from :func:`puzzlezero.nn.make_policy_value_function`,
    whose ``history`` attribute gives ``H``)."""
    assert value_fn is not None
    policy_value: PolicyValueFn = value_fn  # type: ignore[assignment]
    history = int(getattr(value_fn, "history", 1))
    symmetries = symmetries_for(puzzle) if config.selfplay_symmetry else None
    search_fn = symmetrized(policy_value, symmetries, rng) if symmetries is not None else policy_value
    max_moves = config.selfplay_max_moves or max_scramble_bound(puzzle, config)
    parts_s, parts_t, made = [], [], 0
    while made < n:
        starts = puzzle.scramble(rng, config.selfplay_episodes, max_scramble)
        episodes = play_episodes(
            puzzle,
            starts,
            search_fn,
            simulations=config.selfplay_simulations,
            max_moves=max_moves,
            gamma=config.selfplay_gamma,
            c_puct=config.selfplay_c_puct,
            history=history,
            unvisited=config.selfplay_unvisited,
        )
        states, rows = selfplay_rows(episodes, config.selfplay_gamma, symmetries, rng)
        parts_s.append(states)
        parts_t.append(rows)
        made += len(rows)
        if not len(rows) and episodes.solved.all():
            break  # every start solved already (depth too small to move off the goal): nothing to learn
    return np.concatenate(parts_s), np.concatenate(parts_t)


def init_value_head(model: torch.nn.Module, gamma: float, value: float = 0.5) -> None:
    """Start a fresh network's value head at ``gamma^J = value`` (0.5: Rute's sigmoid at zero;
    ``J = log 0.5 / log 0.95 = 13.5`` moves) by setting the bias of its last layer. A cost-to-go
    head starts near ``J = 0``, which self-play would read as ``v = 1`` everywhere: every state as
    good as the goal, and the tree search blind to it."""
    import torch

    # the value layer of a CostToGoNet (an attribute torch types as ``Tensor | Module``)
    last = [m for m in cast(torch.nn.Module, model.value).modules() if isinstance(m, torch.nn.Linear)][-1]
    with torch.no_grad():
        last.bias.fill_(float(np.log(value) / np.log(gamma)))


def max_scramble_bound(puzzle: Puzzle, config: TrainConfig) -> int:
    """K: ``config.max_scramble`` or the puzzle's default scramble depth."""
    return int(config.max_scramble or puzzle.default_scramble_depth)
