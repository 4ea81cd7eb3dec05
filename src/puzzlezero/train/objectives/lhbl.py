"""Limited-horizon Bellman labels (LHBL; DeepXube, AAAI 2026, arXiv:2511.10264).

DAVI (DeepCubeA) labels a training state ``s`` with the one-step Bellman target
``min_a (cost + h(child_a))``, where ``h`` is the target network. LHBL looks further: from each
training state (the *root*) it grows a small best-first search tree and labels every node of the
tree by the Bellman equation over that tree, so a label is the shortest-path cost from the node to
the tree's frontier plus the target network's estimate there.

The algorithm, for every root at once:

1. **Grow the tree.** ``expansions`` times, pop the open node with the smallest
   ``f = weight * g + h`` (``g``: cost from the root along the best path found so far; ``h``: the
   target network's cost-to-go, clipped at 0, and exactly 0 at goal states) and expand it: generate
   every child of a move that changes the state (no-op children, child == parent, are skipped).
   A child already in the tree is the same node (duplicates are merged by exact state, found through
   ``hash64`` and checked element by element), so the tree is really a small graph; a shorter ``g``
   to an open node lowers its ``f``. New non-goal children are opened; goal children are never
   expanded. A tree whose open list runs out early stops; a root that is a goal is not expanded.
2. **Label it.** Every generated node that was not expanded is a leaf with value ``h(leaf)``
   (``0`` for a goal). Expanded nodes take the Bellman backup over their real moves,

   ``label(n) = min_{moves a} (cost(a) + label(child_a))``  (``cost`` = ``puzzle.action_costs``),

   solved by value iteration from ``+inf`` on the expanded set until no label changes (Bellman-Ford:
   with positive costs at most ``expansions`` sweeps, each vectorised over all trees). The fixed
   point is the shortest-path cost through the explored graph to its frontier.

The labels returned are those of the root and of every expanded node: with ``expansions=1`` the root's
label is exactly DAVI's one-step target, and when ``h`` is the exact cost-to-go every label equals it
(exact values are a fixed point of the Bellman equation). Note that a label is *not* bounded by the
one-step target: once a child is expanded its label is its own backup, which may exceed ``h(child)``
(with an admissible ``h`` the tree's labels are at least as large, i.e. better informed).

Capped labels (``TrainConfig.cap_labels``): a training state made by scrambling the goal, or
walked to by a greedy descent, comes with a known path to the goal, of cost ``c(root)``
(:mod:`.path_costs`). Every node of its tree goes back to the root along the tree's edges and on
along that path, so each label returned is capped at ``g_back(n) + c(root)``, ``g_back(n)`` the
cheapest path back to the root that the tree holds (:func:`_paths_back`; ``g(n)`` or less where
every move costs 1 and can be undone, as on the sliding puzzles; the root's cap is ``c(root)``).
A target network that over-estimates can then lift no label above a path that is known.

Batching: step ``t`` expands the best open node of every tree together, and all new non-goal children
of all trees are valued in ONE ``value_fn`` call, so there are ``expansions`` calls in all (plus one on
roots that have no move at all, which is rare). No Python loop runs per node or per tree.

Edge cases: a node with no move that changes it (possible in puzzles with walls) is labelled like
DAVI's fallback, ``min_a cost(a) + h(node)``. A tree that exhausts a finite component holding no goal has
labels ``inf`` there (the true cost-to-go); callers filter with ``np.isfinite`` if it matters.

Example:
    >>> import numpy as np
    >>> from puzzlezero import make
    >>> p = make("puzzle8")
    >>> roots = p.scramble(np.random.default_rng(0), 3, depth=4)
    >>> states, targets = lhbl_labels(p, roots, lambda s: p.manhattan(s).astype(np.float32), 5)
    >>> bool((states[:3] == roots).all()), targets.dtype
    (True, dtype('float32'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.descents import training_states
from puzzlezero.train.objectives.path_costs import training_states_with_path_cost
from puzzlezero.train.objectives.registry import register_objective

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["lhbl_labels", "lhbl_objective"]

ValueFn = Callable[[np.ndarray], np.ndarray]


def _values(value_fn: ValueFn, states: np.ndarray) -> np.ndarray:
    """``max(0, value_fn(states))`` as ``float64[B]``; no call for an empty batch."""
    if states.shape[0] == 0:
        return np.zeros(0)
    out = np.asarray(value_fn(states), dtype=np.float64).reshape(states.shape[0])
    return np.maximum(out, 0.0)


def lhbl_labels(
    puzzle: Puzzle,
    roots: np.ndarray,
    value_fn: ValueFn,
    expansions: int,
    *,
    weight: float = 1.0,
    path_cost: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Limited-horizon Bellman labels for ``roots[N, *state_shape]`` (see the module docstring).

    Args:
        puzzle: the puzzle (its ``expand``, ``is_goal``, ``hash64`` and ``action_costs`` are used).
        roots: training states ``[N, *state_shape]``.
        value_fn: the target network as a function ``states[B, *state_shape] -> float[B]``
            (called once per expansion step, on the new non-goal children of all trees).
        expansions: node expansions per tree (``>= 1``); ``1`` gives DAVI's one-step targets.
        weight: ``f = weight * g + h`` orders each tree's open list.
        path_cost: ``float[N]``, the cost of a known path from each root to the goal (its
            scramble undone, ``TrainConfig.cap_labels``), or ``None`` for no cap. Each label is
            then at most ``g_back(node) + path_cost[root]`` (:func:`_paths_back`).

    Returns:
        ``(states[M, *state_shape], targets float32[M])``: the roots first (rows ``0..N-1``, in
        order), then, tree by tree, the other expanded nodes in expansion order.
    """
    if expansions < 1:
        raise ValueError(f"expansions must be at least 1, got {expansions!r}")
    roots = np.asarray(roots, dtype=puzzle.dtype)
    shape = tuple(puzzle.state_shape)
    if roots.shape[1:] != shape:
        raise ValueError(f"roots must have shape [N, *{shape}], got {roots.shape}")
    n, n_act = roots.shape[0], puzzle.num_actions
    cost = puzzle.action_costs[None, :]  # [1, A]: the cost of each move
    stuck_cost = float(puzzle.action_costs.min())  # DAVI's fallback: the cheapest no-op move
    width = int(np.prod(shape))
    cap = 1 + expansions * n_act  # most nodes a tree can hold
    tree_ids = np.arange(n)

    # ---- node tables, one row per tree -----------------------------------------------------------
    nodes = np.zeros((n, cap, width), dtype=roots.dtype)
    hashes = np.zeros((n, cap), dtype=np.uint64)
    g = np.full((n, cap), np.inf)
    h = np.zeros((n, cap))  # clipped target values; 0 for goals
    is_open = np.zeros((n, cap), dtype=bool)
    count = np.ones(n, dtype=np.int64)  # nodes used per tree
    nodes[:, 0] = roots.reshape(n, width)
    hashes[:, 0] = puzzle.hash64(roots)
    g[:, 0] = 0.0
    root_goal = puzzle.is_goal(roots)
    is_open[:, 0] = ~root_goal
    # expansion record: which node tree i expanded at step t, and the node index of each child
    expanded = np.full((n, expansions), -1, dtype=np.int64)
    edges = np.full((n, expansions, n_act), -1, dtype=np.int64)
    stuck_value = np.full((n, cap), np.inf)  # label of an expanded node that has no real move

    # ---- 1. grow the trees: one expansion per tree per step ------------------------------------
    for step in range(expansions):
        used = int(count.max())
        f = np.where(is_open[:, :used], weight * g[:, :used] + h[:, :used], np.inf)
        best = np.argmin(f, axis=1)
        trees = np.flatnonzero(np.isfinite(f[tree_ids, best]))
        if trees.size == 0:
            break
        b = trees.size
        par = best[trees]
        is_open[trees, par] = False
        expanded[trees, step] = par
        parents = nodes[trees, par]  # [b, width]
        children = puzzle.expand(parents.reshape(b, *shape)).reshape(b, n_act, width)
        children = children.astype(nodes.dtype, copy=False)
        moved = np.any(children != parents[:, None, :], axis=2)  # [b, A]
        child_hash = puzzle.hash64(children.reshape(b * n_act, *shape)).reshape(b, n_act)

        # children already in their tree (hash, then exact check)
        same = (child_hash[:, :, None] == hashes[trees, None, :used]) & (
            np.arange(used)[None, None, :] < count[trees, None, None]
        )
        index = np.argmax(same, axis=2)  # [b, A]
        found = same.any(axis=2)
        found &= np.all(nodes[trees[:, None], index] == children, axis=2)
        found &= moved

        # two moves of one parent giving the same new state: the later one points at the first
        fresh = moved & ~found
        copy_of = np.full((b, n_act), -1, dtype=np.int64)
        pair = (child_hash[:, :, None] == child_hash[:, None, :]) & np.tri(n_act, k=-1, dtype=bool)
        pair &= fresh[:, :, None] & fresh[:, None, :]
        if pair.any():
            r, a, a2 = np.nonzero(pair)
            exact = np.all(children[r, a] == children[r, a2], axis=1)
            r, a, a2 = r[exact], a[exact], a2[exact]
            first = np.full((b, n_act), n_act, dtype=np.int64)
            np.minimum.at(first, (r, a), a2)
            has = first < n_act
            copy_of[has] = first[has]
            fresh &= ~has

        # new nodes get the next free slots of their tree
        rank = np.cumsum(fresh, axis=1) - 1
        index = np.where(fresh, count[trees, None] + rank, index)
        rows, acts = np.nonzero(copy_of >= 0)
        index[rows, acts] = index[rows, copy_of[rows, acts]]
        g_child = g[trees, par][:, None] + cost  # [b, A]
        r, a = np.nonzero(fresh)
        t_new, i_new = trees[r], index[r, a]
        new_states = children[r, a]
        goal = puzzle.is_goal(new_states.reshape(-1, *shape)) if r.size else np.zeros(0, dtype=bool)
        value = np.zeros(r.size)
        value[~goal] = _values(value_fn, new_states[~goal].reshape(-1, *shape))
        nodes[t_new, i_new] = new_states
        hashes[t_new, i_new] = child_hash[r, a]
        g[t_new, i_new] = g_child[r, a]
        h[t_new, i_new] = value
        is_open[t_new, i_new] = ~goal
        count[trees] += fresh.sum(axis=1)
        # a shorter path to a node already in the tree (each tree has one parent per step)
        r, a = np.nonzero(found)
        t_old, i_old = trees[r], index[r, a]
        g[t_old, i_old] = np.minimum(g[t_old, i_old], g_child[r, a])

        edges[trees, step] = np.where(moved, index, -1)
        no_move = ~moved.any(axis=1)
        if no_move.any():  # DAVI's fallback for a state without a real move: cost + h(state)
            t_stuck, i_stuck = trees[no_move], par[no_move]
            at_root = i_stuck == 0
            h_stuck = h[t_stuck, i_stuck].copy()
            h_stuck[at_root] = _values(value_fn, roots[t_stuck[at_root]])
            stuck_value[t_stuck, i_stuck] = stuck_cost + h_stuck

    # ---- 2. label: value iteration from +inf on the expanded nodes (Bellman-Ford) ---------------
    t_exp, s_exp = np.nonzero(expanded >= 0)
    i_exp = expanded[t_exp, s_exp]
    label = h.copy()  # leaves keep h (0 at goals, and at a goal root)
    label[t_exp, i_exp] = np.inf
    child = edges[t_exp, s_exp]  # [E, A]
    real = child >= 0
    child_rows = np.broadcast_to(t_exp[:, None], child.shape)
    floor = stuck_value[t_exp, i_exp]
    for _ in range(expansions + 1):
        backup = np.where(real, cost + label[child_rows, np.maximum(child, 0)], np.inf).min(axis=1)
        backup = np.minimum(backup, floor)
        if np.array_equal(backup, label[t_exp, i_exp]):
            break
        label[t_exp, i_exp] = backup

    if path_cost is not None:
        known = np.asarray(path_cost, dtype=np.float64).reshape(n)
        back = _paths_back(puzzle, expanded, edges, cap, int(count.max()))
        label = np.minimum(label, back + known[:, None])

    # ---- output: roots first, then each tree's other expanded nodes in expansion order ----------
    others = i_exp != 0
    t_out, i_out = t_exp[others], i_exp[others]
    states = np.concatenate([roots.reshape(n, width), nodes[t_out, i_out]]).reshape(-1, *shape)
    targets = np.concatenate([label[:, 0], label[t_out, i_out]]).astype(np.float32)
    return states, targets


def _paths_back(puzzle: Puzzle, expanded: np.ndarray, edges: np.ndarray, size: int, used: int) -> np.ndarray:
    """``g_back``: ``float64[N, size]`` (``size``: the node tables' width; ``used``: the most
    nodes a tree holds), the cost of the cheapest path from each node of each tree back to its root
    through the tree's edges, ``inf`` where there is none. An edge ``p -a-> c`` (``expanded`` and
    ``edges`` of :func:`lhbl_labels`) is walked forward at ``cost(a)`` and backward, from ``c`` to
    ``p``, at ``cost(inverse(a))`` where ``a`` can be undone. This is the best path the tree holds:
    for moves of equal cost that can be undone (the sliding puzzles, every move costing 1) it is the
    node's distance to the root in the tree's graph, at most its ``g`` (never above it: ``g`` is one
    such path read backward, and a shorter path found later to an inner node is not passed on to
    its children's ``g``). Where no move can be undone (Sokoban) only the root, and nodes with a
    forward path back to it, have a path back: the rest keep ``inf``, i.e. no cap. Bellman-Ford from
    the roots, at most ``used`` sweeps, each vectorised over all trees."""
    n = expanded.shape[0]
    costs = np.asarray(puzzle.action_costs, dtype=np.float64)
    inverse = np.asarray(puzzle.inverse_action, dtype=np.int64)
    undo = np.where(inverse >= 0, costs[np.maximum(inverse, 0)], np.inf)
    t, s = np.nonzero(expanded >= 0)
    parent = np.broadcast_to(expanded[t, s][:, None], (t.size, edges.shape[2]))
    child = edges[t, s]  # [E, A]
    real = child >= 0
    rows = np.broadcast_to(t[:, None], child.shape)[real]
    par, kid = parent[real], child[real]
    act = np.nonzero(real)[1]
    forward, backward = costs[act], undo[act]
    back = np.full((n, size), np.inf)
    back[:, 0] = 0.0
    for _ in range(used):
        new = back.copy()
        np.minimum.at(new, (rows, kid), back[rows, par] + backward)  # child -> parent, undone
        np.minimum.at(new, (rows, par), back[rows, kid] + forward)  # parent -> child, forward
        if np.array_equal(new, back):
            break
        back = new
    return back


@register_objective(
    "lhbl",
    needs_target=True,
    summary="limited-horizon Bellman labels (DeepXube)",
    descents=True,
    caps_labels=True,
    recipe=lambda cfg: (
        f"LHBL ({cfg.lhbl_expansions} expansions)" + (", capped by known paths" if cfg.cap_labels else "")
    ),
)
def lhbl_objective(
    puzzle: Puzzle,
    rng: np.random.Generator,
    n: int,
    max_scramble: int,
    value_fn: Callable[[np.ndarray], np.ndarray] | None,
    config: TrainConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """About ``n`` labels: ``ceil(n / lhbl_expansions)`` roots scrambled ``k ~ U[1, max_scramble]``
    times (a ``descent_share`` of them from greedy descents, :mod:`.descents`), a tree of
    ``lhbl_expansions`` expansions grown from each (the target network at its leaves), every
    expanded node labelled by :func:`lhbl_labels`. Nodes of a tree that ran out of
    moves without reaching a goal (infinite labels) are left out. With ``config.cap_labels`` every
    label is at most the cost of a known path: ``g_back(node) + c(root)``, ``c(root)`` the root's
    scramble undone or its descent's known path (:mod:`.path_costs`); the states and the random
    draws are those of an uncapped run."""
    assert value_fn is not None
    n_roots = -(-n // config.lhbl_expansions)
    if config.cap_labels:
        roots, path_cost = training_states_with_path_cost(
            puzzle, rng, n_roots, max_scramble, value_fn, config
        )
    else:
        roots, path_cost = training_states(puzzle, rng, n_roots, max_scramble, value_fn, config), None
    states, targets = lhbl_labels(
        puzzle, roots, value_fn, config.lhbl_expansions, weight=config.lhbl_weight, path_cost=path_cost
    )
    keep = np.isfinite(targets)
    return states[keep], targets[keep]
