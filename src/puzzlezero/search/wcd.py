"""Weighted convolutional distance (Yao and Lee, "Solving a Rubik's Cube Using its Local Graph
Structure", 2024): a heuristic that averages a value heuristic over each state's neighbourhood,
weighted by a policy, for any search and any puzzle.

    d0(s)     = h(s)                                   (the value heuristic)
    dk+1(s)   = mu * dk(s) + (1 - mu) * p(s)^T dk(children of s)

``p(s)`` is a policy over the moves (a network's policy or Q head; without one, ``softmax(-(cost
+ h(child)) / T)`` from the children's values the convolution evaluates anyway). ``d_K`` reads
the value heuristic on every state within ``K`` moves. Goal states keep 0 at every level. Moves
that leave a state unchanged (a tile against the border) are not neighbours: the policy is
renormalised over the moves that change the state, and a state without any keeps its value.

The paper's complaint was speed (326 s a solve at depth 2): here each level is one batched call.
For the states of one heuristic call, the neighbourhood is built level by level
(``expand``), deduplicated by the puzzle's ``hash64`` across the whole neighbourhood (the cube's
inverse moves lead back to the level before, commuting moves to the same state), and the value
heuristic is called ONCE per level on the states first seen at that level; the policy is called
once on the states within ``K - 1`` moves. With the cube's 12 moves, depth 1 costs 13 value
evaluations and 1 policy evaluation per state, depth 2 about 127 and 13 (a 64-bit hash
collision, about one in 10^10 at a million states, would give a state another's estimate: a
heuristic value, never a wrong solution, as every search verifies its path).

Note that the formula adds no move cost: with a good policy the children are about one move
closer, so ``d1 = d0 - (1 - mu)`` on a perfect ``d0`` (an estimate lowered by a constant, which
does not reorder A*'s open list; WCD helps by smoothing the network's errors over the
neighbourhood). ``step_cost=True`` uses ``p(s)^T (cost + dk(children))`` instead (a one-step
look-ahead that keeps a perfect ``d0`` exact).

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("puzzle8")
>>> h = lambda s: (s != p.goal()).sum(axis=1).astype(np.float32)
>>> d1 = wcd(p, h, depth=1, mu=0.5)
>>> bool(d1(p.goals(1))[0] == 0.0)
True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search.policy import check_temperature, softmin

__all__ = ["DEPTH", "MU", "wcd"]

Heuristic = Callable[[np.ndarray], np.ndarray]
Policy = Callable[[np.ndarray], np.ndarray]

#: default number of convolution levels K
DEPTH = 1
#: default weight mu of a state's own value (the paper leaves it open)
MU = 0.5
#: the most levels allowed: the neighbourhood grows about ``num_actions ** K``
MAX_DEPTH = 4


def wcd(
    puzzle: Puzzle,
    heuristic: Heuristic,
    *,
    depth: int = DEPTH,
    mu: float = MU,
    policy: Policy | None = None,
    temperature: float = 1.0,
    step_cost: bool = False,
) -> Heuristic:
    """The ``depth``-level weighted convolutional distance of ``heuristic`` as a heuristic
    ``states[B, *state_shape] -> float32[B]`` (0 at goals).

    Args:
        puzzle: the puzzle (``expand``, ``is_goal``, ``hash64``, ``action_costs``).
        heuristic: the value heuristic ``d0``: ``states[M] -> float32[M]``.
        depth: ``K >= 0`` levels (0: ``heuristic`` itself, goals set to 0).
        mu: weight in ``[0, 1]`` of a state's own value (1: ``d0``; 0: the policy's average of
            the neighbours only).
        policy: ``states[M] -> float32[M, A]`` action probabilities; ``None``: ``softmax(-(cost(a)
            + d0(A(s, a))) / temperature)`` from the children's ``d0``.
        temperature: of the policy derived from values (unused when ``policy`` is given).
        step_cost: add each move's cost to its neighbour's value (see the module docstring).
    """
    if isinstance(depth, bool) or not isinstance(depth, int | np.integer) or not 0 <= depth <= MAX_DEPTH:
        raise PuzzleError(f"the WCD depth must be an integer from 0 to {MAX_DEPTH}, got {depth!r}")
    if isinstance(mu, bool) or not isinstance(mu, int | float | np.floating) or not 0.0 <= mu <= 1.0:
        raise PuzzleError(f"the WCD weight mu must be a number in [0, 1], got {mu!r}")
    t = check_temperature(temperature)
    depth, mu = int(depth), float(mu)
    n_act = puzzle.num_actions
    cost = puzzle.action_costs.astype(np.float64)[None, :]

    def values_of(states: np.ndarray) -> np.ndarray:
        out = np.asarray(heuristic(states), dtype=np.float64).reshape(-1)
        if out.shape[0] != states.shape[0]:
            raise PuzzleError(f"the heuristic returned {out.shape[0]} values for {states.shape[0]} states")
        return out

    def convolved(states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        b = states.shape[0]
        if b == 0:
            return np.zeros(0, np.float32)
        # the neighbourhood: unique states (by hash), the level each was first seen at
        keys = puzzle.hash64(states)
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        order = np.argsort(first)  # keep the first occurrences in input order
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        pool_states = [states[first[order]]]
        pool_keys = uniq[order]
        level_start = [0, pool_keys.size]
        start_ids = rank[inverse.reshape(-1)]
        children_ids: list[np.ndarray] = []  # per level < K: [n_level, A] pool ids of the children
        d0 = [values_of(pool_states[0])]
        for _ in range(depth):
            parents = pool_states[-1]
            m = parents.shape[0]
            kids = puzzle.expand(parents).reshape(m * n_act, *puzzle.state_shape)
            kid_keys = puzzle.hash64(kids)
            sorter = np.argsort(pool_keys, kind="stable")
            pos = np.searchsorted(pool_keys, kid_keys, sorter=sorter)
            pos = np.minimum(pos, pool_keys.size - 1)
            found = pool_keys[sorter[pos]] == kid_keys
            ids = np.where(found, sorter[pos], -1)
            new_keys, new_first, new_inv = np.unique(kid_keys[~found], return_index=True, return_inverse=True)
            new_order = np.argsort(new_first)
            new_rank = np.empty_like(new_order)
            new_rank[new_order] = np.arange(new_order.size)
            ids[~found] = pool_keys.size + new_rank[new_inv.reshape(-1)]
            fresh = kids[np.flatnonzero(~found)[new_first[new_order]]]
            pool_keys = np.concatenate([pool_keys, new_keys[new_order]])
            pool_states.append(fresh)
            level_start.append(pool_keys.size)
            children_ids.append(ids.reshape(m, n_act))
            d0.append(values_of(fresh) if fresh.shape[0] else np.zeros(0))
        all_states = np.concatenate(pool_states)
        d = np.concatenate(d0)
        d = np.maximum(d, 0.0)
        goal = puzzle.is_goal(all_states)
        d[goal] = 0.0
        if depth:
            inner = level_start[depth]  # states within K - 1 moves: the ones that need a policy
            child = np.concatenate(children_ids)  # [inner, A]
            parent_ids = np.arange(inner)
            moved = child != parent_ids[:, None]
            probs = None
            if policy is not None:
                probs = np.asarray(policy(all_states[:inner]), dtype=np.float64)
                if probs.shape != (inner, n_act):
                    raise PuzzleError(
                        f"the policy returned shape {list(probs.shape)} for {inner} states; "
                        f"expected [{inner}, {n_act}]"
                    )
                if not np.all(np.isfinite(probs)) or np.any(probs < 0):
                    raise PuzzleError("the policy returned negative, NaN or infinite probabilities")
                probs = np.where(moved, probs, 0.0)
                total = probs.sum(axis=1, keepdims=True)
                # a policy with all its mass on moves that change nothing: uniform over the others
                flat = moved / np.maximum(moved.sum(axis=1, keepdims=True), 1)
                probs = np.where(total > 0, probs / np.where(total > 0, total, 1.0), flat)
            else:
                probs = softmin(cost + d[child], t, moved).astype(np.float64)
            stuck = ~moved.any(axis=1)
            add = cost if step_cost else 0.0
            for k in range(depth):
                n = level_start[depth - k]  # d_{k+1} is needed within K - k - 1 moves
                nxt = d.copy()
                avg = (probs[:n] * (add + d[child[:n]])).sum(axis=1)
                nxt[:n] = np.where(stuck[:n], d[:n], mu * d[:n] + (1.0 - mu) * avg)
                nxt[goal] = 0.0
                d = nxt
        return d[start_ids].astype(np.float32)

    return convolved
