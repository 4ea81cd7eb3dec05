"""The selection and backup loops of :mod:`.mcts` as numba kernels (one tree step is a handful of
scalar operations: in NumPy the per-call overhead would dominate)."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def select(
    roots, slot, dead, child, ok, prior, visits, total, best, flight, first, c, vloss, max_value,
    out_nodes, out_actions, out_lengths, out_leaves,
):  # fmt: skip
    """Descend one path from each of ``roots`` in order (virtual loss added on the way, so later
    paths see earlier ones). ``out_leaves[d]``: the unexpanded node reached, ``-1`` when the path
    ended on a dead node (its virtual loss taken back, the edge into it closed), ``-2`` when the
    root itself is dead."""
    n_act = child.shape[1]
    for d in range(roots.shape[0]):
        node = roots[d]
        depth = 0
        out_leaves[d] = node
        while slot[node] >= 0:
            r = slot[node]
            n_parent = 0
            for a in range(n_act):
                n_parent += visits[r, a] + flight[r, a]
            sq = np.sqrt(n_parent + 1.0)
            best_a = -1
            best_score = -np.inf
            for a in range(n_act):
                if not ok[r, a] or dead[child[r, a]]:
                    continue
                v = visits[r, a]
                if v > 0:
                    est = best[r, a] if max_value else total[r, a] / v
                else:
                    est = first[r, a]
                f = flight[r, a]
                score = c * prior[r, a] * sq / (1.0 + v + f) - (est + vloss * f)
                if score > best_score:
                    best_score = score
                    best_a = a
            if best_a < 0:  # every move leads back into the tree: a dead node
                dead[node] = True
                for t in range(depth):
                    flight[slot[out_nodes[d, t]], out_actions[d, t]] -= 1
                if depth == 0:
                    out_leaves[d] = -2
                else:
                    ok[slot[out_nodes[d, depth - 1]], out_actions[d, depth - 1]] = False
                    out_leaves[d] = -1
                depth = 0
                break
            out_nodes[d, depth] = node
            out_actions[d, depth] = best_a
            flight[r, best_a] += 1
            depth += 1
            node = child[r, best_a]
            out_leaves[d] = node
        out_lengths[d] = depth


@nb.njit(cache=True)
def backup(slot, visits, total, best, flight, cost, nodes, actions, lengths, leaf_values):
    """Back up each path: from its leaf towards the root, the path's cost from each node to the
    leaf plus the leaf's value; one visit added, one virtual loss taken back."""
    for d in range(nodes.shape[0]):
        to_leaf = leaf_values[d]
        for t in range(lengths[d] - 1, -1, -1):
            r = slot[nodes[d, t]]
            a = actions[d, t]
            to_leaf += cost[a]
            visits[r, a] += 1
            flight[r, a] -= 1
            total[r, a] += to_leaf
            if to_leaf < best[r, a]:
                best[r, a] = to_leaf
