"""Discounted PUCT tree search: the Monte Carlo tree search of the self-play of J. Rute, "Solving
the puzzle cube with deep reinforcement learning and tree search".

A search grows one tree per start state, all trees in lockstep: each simulation walks every tree
from its root to a new leaf, evaluates all the new leaves in **one** call of the network function,
and backs the values up. Values live on Rute's scale, ``v = gamma^distance`` in ``[0, 1]``
(1 at a goal, higher is closer); a cost-to-go ``J`` from the network becomes ``v = gamma^J``.
Rute's two changes to AlphaZero's PUCT:

* **discounted backups**: a value ``v`` backed up from a child is worth ``gamma * v`` to its parent,
  so the mean action value ``Q(s, a) = W(s, a) / N(s, a)`` estimates ``gamma^(1 + distance of the
  child)``;
* **exploration scaled by the node's value**: a node's actions are ranked by

      Q(s, a) + c_puct * v(s) * P(s, a) * sqrt(max(1, sum_b N(s, b))) / (1 + N(s, a)),

  ``v(s)`` the network's value of ``s`` and ``P`` its policy. (Far from the goal all Q are small, and
  the exploration term shrinks with them.) ``max(1, .)`` makes the first visit of a fresh node go
  to the action of highest prior, as Rute's code does.

**Unvisited actions.** Rute's code gives them ``Q = 0`` (``unvisited="zero"``). With its 800-1600
simulations per move the exploration term eventually reaches them, but with a few dozen the first
action tried keeps every later visit (its Q, about ``gamma * v``, beats ``c * v * P``), so a search
from one move away need not even try the winning move. The default ``unvisited="parent"`` values
an unvisited action at the node's own value ``v(s)`` (the estimate of ``gamma^d`` at hand for a child
whose distance is unknown): a child that looks worse than its parent then gives way to its
siblings, one that looks better (or is the goal, ``Q = gamma``) keeps the visits.

Goal nodes are terminal (value 1, never expanded). There is no transposition table: a node's
network input includes its history (the path to it), so equal states on different paths are
different nodes. Moves that leave a state unchanged are never taken. Unvisited actions have Q = 0.

The network is a function ``policy_value(states[B, H, *state_shape]) -> (p float32[B, A], cost
float32[B])`` (``H`` = ``history``; :func:`puzzlezero.nn.make_policy_value_function`), so this
module imports no torch. It is a building block of training (:mod:`puzzlezero.train.objectives.selfplay`),
not a solver: it returns the root's visit counts, from which self-play takes its policy targets
and its next move.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle

__all__ = ["PolicyValueFn", "TreeStats", "discounted_mcts"]

PolicyValueFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class TreeStats:
    """What a search leaves at its roots (``E`` trees, ``A`` actions).

    Attributes:
        visits: ``int64[E, A]``: how often each root action was tried.
        q: ``float64[E, A]``: each root action's mean backed-up value (0 where not visited).
        root_value: ``float64[E]``: the network's ``gamma^J`` of each root (1 at a goal).
        nodes: ``int64[E]``: nodes in each tree, root included.
        goal_found: ``bool[E]``: whether a goal node was reached in each tree.
    """

    visits: np.ndarray
    q: np.ndarray
    root_value: np.ndarray
    nodes: np.ndarray
    goal_found: np.ndarray


def discounted_mcts(
    puzzle: Puzzle,
    roots: np.ndarray,
    policy_value: PolicyValueFn,
    *,
    simulations: int,
    gamma: float = 0.95,
    c_puct: float = 1.0,
    history: np.ndarray | None = None,
    unvisited: str = "parent",
) -> TreeStats:
    """Search ``simulations`` times from each of ``roots[E, *state_shape]`` (see the module text).

    ``history``: ``[E, H - 1, *state_shape]``, the states before each root (newest first) that the
    network sees behind the root; ``None`` = the network takes one state (``H = 1``).
    ``unvisited``: the Q of untried actions, ``"parent"`` (the node's value) or ``"zero"`` (Rute's).
    """
    if unvisited not in ("parent", "zero"):
        raise PuzzleError(f"unvisited must be 'parent' or 'zero', got {unvisited!r}")
    if simulations < 1:
        raise PuzzleError(f"discounted MCTS needs simulations >= 1, got {simulations}")
    if not 0 < gamma <= 1 or c_puct < 0:
        raise PuzzleError(f"discounted MCTS needs 0 < gamma <= 1 and c_puct >= 0, got {gamma}, {c_puct}")
    roots = np.asarray(roots)
    e, a_count = roots.shape[0], puzzle.num_actions
    if roots.shape[1:] != puzzle.state_shape:
        raise PuzzleError(
            f"roots must be [E, {puzzle.state_shape}] states of {puzzle.name}, got shape {roots.shape}"
        )
    pre = np.zeros((e, 0, *roots.shape[1:]), dtype=roots.dtype) if history is None else np.asarray(history)
    if pre.ndim != roots.ndim + 1 or pre.shape[0] != e or pre.shape[2:] != roots.shape[1:]:
        raise PuzzleError(
            f"history must be [E, H - 1, *state_shape] = [{e}, H - 1, {', '.join(map(str, roots.shape[1:]))}], "
            f"got shape {pre.shape}"
        )
    hist_len = 1 + pre.shape[1]
    cap = simulations + 1
    rows = np.arange(e)
    state = np.empty((e, cap, *roots.shape[1:]), dtype=roots.dtype)
    parent = np.full((e, cap), -1, dtype=np.int64)
    via = np.full((e, cap), -1, dtype=np.int64)
    child = np.full((e, cap, a_count), -1, dtype=np.int64)
    visits = np.zeros((e, cap, a_count), dtype=np.int64)
    total = np.zeros((e, cap, a_count), dtype=np.float64)
    prior = np.zeros((e, cap, a_count), dtype=np.float64)
    value = np.zeros((e, cap), dtype=np.float64)
    goal = np.zeros((e, cap), dtype=bool)
    legal = np.zeros((e, cap, a_count), dtype=bool)
    count = np.ones(e, dtype=np.int64)

    def evaluate(tree: np.ndarray, node: np.ndarray) -> None:
        """Set goal flags, priors and values of new nodes ``(tree[k], node[k])``."""
        s = state[tree, node]
        goal[tree, node] = is_goal = puzzle.is_goal(s)
        value[tree, node] = 1.0
        legal[tree, node] = puzzle.legal_mask(s)
        todo = ~is_goal
        if not todo.any():
            return
        t, n = tree[todo], node[todo]
        p, cost = policy_value(_histories(state, parent, pre, t, n, hist_len))
        prior[t, n] = p
        value[t, n] = gamma ** np.asarray(cost, dtype=np.float64)

    state[:, 0] = roots
    evaluate(rows, np.zeros(e, dtype=np.int64))
    for _ in range(simulations):
        node = np.zeros(e, dtype=np.int64)
        walking = ~goal[rows, node]
        new_leaf = np.zeros(e, dtype=bool)
        while walking.any():
            t, n = rows[walking], node[walking]
            nv = visits[t, n]
            explore = np.sqrt(np.maximum(1, nv.sum(axis=1)))[:, None]
            first = np.broadcast_to(value[t, n][:, None] if unvisited == "parent" else 0.0, nv.shape)
            q = np.divide(total[t, n], nv, out=np.array(first, dtype=np.float64), where=nv > 0)
            score = q + c_puct * value[t, n][:, None] * prior[t, n] * explore / (1 + nv)
            score[~legal[t, n]] = -np.inf
            act = np.argmax(score, axis=1)
            nxt = child[t, n, act]
            fresh = nxt < 0
            if fresh.any():  # expand: one new node per tree that walked off the tree
                ft, fn, fa = t[fresh], n[fresh], act[fresh]
                idx = count[ft]
                count[ft] += 1
                state[ft, idx] = puzzle.apply(state[ft, fn], fa)
                parent[ft, idx], via[ft, idx] = fn, fa
                child[ft, fn, fa] = idx
                nxt[fresh] = idx
                new_leaf[ft] = True
            node[t] = nxt
            walking[t] = ~fresh & ~goal[t, nxt]
        leaves = rows[new_leaf]
        if len(leaves):
            evaluate(leaves, node[leaves])
        # back up gamma-discounted values from each leaf (goal or new node) to the root
        backed = value[rows, node].copy()
        cur = node.copy()
        while (cur > 0).any():
            up = rows[cur > 0]
            c = cur[up]
            p, act = parent[up, c], via[up, c]
            backed[up] *= gamma
            visits[up, p, act] += 1
            total[up, p, act] += backed[up]
            cur[up] = p
    root_visits = visits[:, 0]
    q_root = np.divide(total[:, 0], root_visits, out=np.zeros(root_visits.shape), where=root_visits > 0)
    # numpy's stubs type ``any(axis=...)`` as ``bool | ndarray``; over axis 1 of a 2-D array it is an array
    return TreeStats(root_visits, q_root, value[:, 0].copy(), count, goal.any(axis=1))  # type: ignore[arg-type]


def _histories(
    state: np.ndarray, parent: np.ndarray, pre: np.ndarray, tree: np.ndarray, node: np.ndarray, hist_len: int
) -> np.ndarray:
    """``[K, H, *state_shape]``: each node's state, then its ancestors', then the states before the
    root (``pre``), newest first; ``[K, *state_shape]`` when ``H == 1``."""
    if hist_len == 1:
        return state[tree, node]
    out = np.empty((len(tree), hist_len, *state.shape[2:]), dtype=state.dtype)
    out[:, 0] = state[tree, node]
    anc = node.copy()
    before = np.full(len(tree), -1, dtype=np.int64)  # index into pre once the root is passed
    for h in range(1, hist_len):
        in_pre = (before >= 0) | (anc == 0)
        before[in_pre] += 1
        anc = np.where(in_pre, anc, parent[tree, anc])
        out[:, h] = np.where(
            _expand(in_pre, out.ndim - 2), pre[tree, np.maximum(before, 0)], state[tree, np.maximum(anc, 0)]
        )
    return out


def _expand(mask: np.ndarray, extra: int) -> np.ndarray:
    return mask.reshape(mask.shape + (1,) * extra)
