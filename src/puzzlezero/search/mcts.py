"""Monte Carlo tree search with PUCT (McAleer, Agostinelli, Shmakov, Baldi: "Solving the Rubik's
Cube Without Human Knowledge", 2018), batched over instances, for any puzzle.

The search takes a **policy-value function** ``states[B] -> (values float32[B], probs float32[B,
A])`` (:mod:`.policy`; no torch here): the values are cost-to-go estimates (the value at the
leaves), the probabilities the prior of each move. Each iteration, for every unfinished instance:

1. **Select** ``leaves`` paths from the root, one after the other: at a node ``s`` take the move
   ``a`` of the highest ``U(s, a) - C(s, a)`` with

       U(s, a) = c * P(s, a) * sqrt(N(s) + 1) / (1 + N(s, a) + L(s, a))
       C(s, a) = W(s, a) / N(s, a) (the mean, the default)  or  the least of the backed-up
                 costs (``max_value=True``: the maximum action value both seeds suggest)
                 + virtual_loss * L(s, a)

   where ``C`` is the estimated cost to a goal through ``a`` (in moves, or the puzzle's action
   costs), ``N(s, a)`` the visits, ``L(s, a)`` the paths of this iteration still in flight
   through the edge (**virtual loss**: each makes the edge look ``virtual_loss`` moves worse, so
   the paths of one iteration spread over the tree), and ``N(s) = sum_a N(s, a) + L(s, a)``. An
   unvisited edge's ``C`` (first-play estimate) is the move's cost-to-go ``Q(s, a)`` where the
   policy-value function gives one (a Q head; ``cost + h(child)`` from a value heuristic), else
   the node's own value ``v(s)``. The descents run in a numba kernel (:mod:`._mcts_kernels`), all
   instances' in one call. On hard 12-move cube3 scrambles with the shipped model (c 2, 32
   leaves, virtual loss 1), the first-play estimate from the Q head solved 5 of 5 with the mean
   (0.6 M nodes in all) and 4 of 5 with the minimum; with ``v(s)`` instead the minimum did better
   than the mean but left 5 of 30 scrambles unsolved in 60 s (docs/mcts_wcd.md).
2. **Evaluate** every distinct leaf of every instance in ONE call of the policy-value function.
3. **Expand** each leaf: its children are generated (``num_actions`` nodes, the count BWAS
   uses), goal-tested, and deduplicated against every state of the instance's tree (exact state
   bytes, :mod:`.table`). A child already in the tree (the cube's inverse move, commuting moves)
   is linked but never selected through this edge, which keeps the tree a tree; moves that change
   nothing are dropped; the prior is renormalised over the remaining moves.
4. **Back up** along each path: ``N += 1``, ``L -= 1``, and the path's cost from each node to the
   leaf plus ``v(leaf)`` is added to ``W`` (mean) or lowers the minimum (max).

A node whose moves all lead to states already in the tree is dead: its edge is closed, and an
instance whose root is dead is ``"exhausted"``. The search stops when a goal is generated; the
solution is then the cheapest path from the root to that goal over every edge seen (the tree's
and the linked duplicates), found by a shortest-path pass over the tree, and it is replayed by
the solver. Memory is bounded by ``max_nodes`` (the nodes generated, root included), time by
``deadline`` and ``time_limit`` (checked before each iteration): statuses ``"solved" | "node limit" | "time limit" | "exhausted"``.

>>> import numpy as np                                                          # doctest: +SKIP
>>> pv = make_policy_value(cube, load_model("cube3"))                            # doctest: +SKIP
>>> [r.length for r in mcts(cube, starts, pv, c=2.0, leaves=32)]                 # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from puzzlezero.budget import SearchSettings, state_bytes
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, SearchStats, as_batch, check_positive

__all__ = ["C", "LEAVES", "MAX_VALUE", "VIRTUAL_LOSS", "mcts", "memory_estimate"]

PolicyValue = Callable[[np.ndarray], tuple[np.ndarray, ...]]

#: default exploration constant ``c`` of PUCT (in cost units: moves)
C = 2.0
#: default paths selected (leaves evaluated) per instance and iteration
LEAVES = 32
#: default virtual loss: moves added to an edge's cost per path in flight through it
VIRTUAL_LOSS = 1.0
#: default backup: the mean of the costs backed up through an edge (see above)
MAX_VALUE = False


def mcts(
    puzzle: Puzzle,
    starts: np.ndarray,
    policy_value: PolicyValue,
    *,
    c: float = C,
    leaves: int = LEAVES,
    virtual_loss: float = VIRTUAL_LOSS,
    max_value: bool = MAX_VALUE,
    max_nodes: int | None = 1_000_000,
    time_limit: float | None = None,
    stats: SearchStats | None = None,
    deadline: float | None = None,
) -> list[SearchResult]:
    """Search every state of ``starts[B, *state_shape]`` (or one state) to a goal with MCTS.

    Args:
        puzzle: the puzzle.
        starts: start states; instances are independent but share each evaluation call.
        policy_value: ``states[M] -> (float32[M] cost-to-go, float32[M, A] move probabilities)``,
            optionally with a third ``float32[M, A]``: each move's cost-to-go (its cost included),
            the estimate of a move not tried yet (else the state's own cost-to-go).
        c: PUCT exploration constant (``>= 0``; 0: follow the values only).
        leaves: paths selected per instance and iteration (leaves per evaluation call).
        virtual_loss: cost added to an edge per path in flight through it (``>= 0``).
        max_value: back up the least cost seen through an edge instead of the mean.
        max_nodes: per-instance cap on nodes generated (root + ``num_actions`` per expansion;
            ``None``: no cap); status ``"node limit"``. It bounds the memory of the tree.
        time_limit: seconds for the whole call (``None``: none); status ``"time limit"``.
        stats: filled in with the time split and counts when given.
        deadline: when the search must stop, a reading of :func:`.clock.now` (``None``: none), for
            a caller whose own time limit this search shares; with ``time_limit`` too, the earlier
            one ends it. Status ``"time limit"``.

    Returns:
        One :class:`SearchResult` per start state, in order; ``iterations`` counts the
        evaluation calls an instance took part in.
    """
    starts = as_batch(puzzle, starts)
    check_positive("c", c, allow_zero=True)
    check_positive("leaves", leaves, integer=True)
    check_positive("virtual_loss", virtual_loss, allow_zero=True)
    check_positive("max_nodes", max_nodes, integer=True)
    check_positive("time_limit", time_limit)
    if not isinstance(max_value, bool | np.bool_):
        raise PuzzleError(f"max_value must be true or false, got {max_value!r}")
    search = _Mcts(puzzle, starts, policy_value, float(c), int(leaves), float(virtual_loss), bool(max_value))
    return search.run(max_nodes, time_limit, deadline, stats if stats is not None else SearchStats())


#: bytes a generated node takes beyond the node table: its slot, dead flag and depth and the edge
#: arrays of its parent's expansion (``num_actions`` edges of 37 bytes per ``num_actions`` nodes),
#: three times each while they double (the old arrays and the new ones of twice their size), and
#: the shortest-path pass at the end
NODE_BYTES = 3 * 13 + 3 * 37 + 24
#: the node cap per instance where none is given (the search's own default)
UNCAPPED_NODES = 1_000_000


def memory_estimate(puzzle: Puzzle, options: SearchSettings, instances: int = 1) -> int:
    """Peak bytes of an MCTS call on ``instances`` states: every instance's node cap filled with
    new nodes, in the node table (:func:`~.table.table_bytes`, from its starting 4,096) and the
    tree's arrays (:data:`NODE_BYTES` a node). Calibrated with tracemalloc on cube3 with a NumPy
    policy-value function: 1,000,000 nodes, 32 leaves: estimated 304 MB, measured 201 MB;
    100,000 nodes: estimated 33.7 MB, measured 25.2 MB (tests/solver/test_budget.py checks the latter)."""
    from puzzlezero.search.table import table_bytes

    per = int(options.max_nodes) if options.max_nodes is not None else UNCAPPED_NODES
    nodes = max(1, int(instances)) * per
    return table_bytes(state_bytes(puzzle), nodes, 1 << 12) + nodes * NODE_BYTES


class _Mcts:
    """The trees of one :func:`mcts` call: node arrays shared by all instances (node ids are the
    indices of a :class:`~.table.NodeTable`, which holds the states and finds duplicates)."""

    # the edge arrays of ``_EDGE``, ``[slots, num_actions]`` each (set with setattr)
    child: np.ndarray
    ok: np.ndarray
    prior: np.ndarray
    visits: np.ndarray
    total: np.ndarray
    best: np.ndarray
    flight: np.ndarray
    first: np.ndarray

    def __init__(self, puzzle, starts, policy_value, c, leaves, virtual_loss, max_value):  # noqa: ANN001
        from puzzlezero.search.table import NodeTable

        self.p, self.pv = puzzle, policy_value
        self.c, self.leaves, self.vloss, self.max_value = c, leaves, virtual_loss, max_value
        self.A = puzzle.num_actions
        self.cost = puzzle.action_costs.astype(np.float64)
        b = starts.shape[0]
        self.table = NodeTable(puzzle.state_shape, puzzle.dtype, capacity=1 << 12)
        self.slot, self.dead = np.full(1 << 12, -1, np.int64), np.zeros(1 << 12, bool)
        self.depth = np.zeros(1 << 12, np.int32)  # tree depth of each node
        self.max_depth = 0
        self.n_slots = 0
        for name, (dtype, fill) in self._EDGE.items():
            setattr(self, name, np.full((1 << 8, self.A), fill, dtype))
        inst = np.arange(b)
        keys = NodeTable.mix_instance(puzzle.hash64(starts), inst)
        zeros = np.zeros(b)
        _, self.roots = self.table.add(keys, self.table.as_rows(starts), inst, np.full(b, -1), zeros, zeros)
        self._grow_nodes(self.table.n)
        self.generated = np.ones(b, np.int64)
        self.iterations = np.zeros(b, np.int64)
        self.status: list[str | None] = [None] * b
        self.seconds = np.zeros(b)
        self.goal_node = np.full(b, -1, np.int64)

    # ---- storage -------------------------------------------------------------------------------
    # nodes (every generated state): ``slot`` (its row in the edge arrays once expanded, else -1),
    # ``dead``; expanded nodes (one row of ``num_actions`` edges each): the arrays of ``_EDGE`` and
    # ``value`` (the node's own cost-to-go estimate)
    _EDGE = {
        "child": (np.int64, -1),  # node reached by the move
        "ok": (bool, False),  # a tree edge that may be selected
        "prior": (np.float32, 0.0),
        "visits": (np.int32, 0),
        "total": (np.float64, 0.0),  # sum of backed-up costs (mean)
        "best": (np.float32, np.inf),  # least backed-up cost (max action value)
        "flight": (np.int32, 0),  # paths of this iteration in flight through the edge
        "first": (np.float32, 0.0),  # the edge's cost estimate while unvisited (first play)
    }

    def _grow_nodes(self, need: int) -> None:
        if need <= self.slot.shape[0]:
            return
        cap = max(need, 2 * self.slot.shape[0])
        slot, dead, depth = np.full(cap, -1, np.int64), np.zeros(cap, bool), np.zeros(cap, np.int32)
        n = self.slot.shape[0]
        slot[:n], dead[:n], depth[:n] = self.slot, self.dead, self.depth
        self.slot, self.dead, self.depth = slot, dead, depth

    def _new_slots(self, m: int) -> np.ndarray:
        """Rows for ``m`` newly expanded nodes (the edge arrays grow by doubling)."""
        need = self.n_slots + m
        cap = self.child.shape[0]
        if need > cap:
            cap = max(need, 2 * cap)
            for name, (dtype, fill) in self._EDGE.items():
                arr = np.full((cap, self.A), fill, dtype)
                arr[: self.n_slots] = getattr(self, name)[: self.n_slots]
                setattr(self, name, arr)
        out = np.arange(self.n_slots, need)
        self.n_slots = need
        return out

    # ---- the loop ------------------------------------------------------------------------------
    def run(
        self, max_nodes: int | None, time_limit: float | None, deadline: float | None, st: SearchStats
    ) -> list[SearchResult]:
        t0 = clock.now()
        self.t0 = t0
        stop = clock.deadline_after(time_limit, deadline, start=t0)
        b = self.roots.size
        with st.timer("goal_test"):
            for g in np.flatnonzero(self.p.is_goal(self.table.states(self.roots))):
                self._finish(int(g), "solved", int(self.roots[g]))
        st.nodes_generated += b
        first = True
        while active := [i for i, s in enumerate(self.status) if s is None]:
            if clock.passed(stop):
                for i in active:
                    self._finish(i, "time limit")
                break
            budget = {}
            for i in active:
                k = self.leaves if not first else 1
                if max_nodes is not None:
                    k = min(k, int(max_nodes - self.generated[i]) // self.A)
                if k <= 0:
                    self._finish(i, "node limit")
                else:
                    budget[i] = k
            if not budget:
                break
            if first:  # the roots are the first leaves
                inst = np.fromiter(budget, np.int64)
                empty = np.zeros((inst.size, 1), np.int64)
                paths = (self.roots[inst], empty, empty, np.zeros(inst.size, np.int64))
                first = False
            else:
                with st.timer("open_list"):  # selection
                    paths = self._select(budget)
            if paths[0].size == 0:
                continue
            st.iterations += 1
            self._evaluate_and_expand(paths, st)
        st.total += clock.now() - t0
        return [self._result(i) for i in range(b)]

    def _finish(self, i: int, status: str, node: int = -1) -> None:
        self.status[i] = status
        self.goal_node[i] = node
        self.seconds[i] = clock.now() - self.t0

    def _select(self, budget: dict[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Descend ``budget[i]`` paths in each instance, one after another (each sees the virtual
        loss of those before it). Returns ``(leaves[D], nodes[D, T], actions[D, T], lengths[D])``
        of the paths that reached an unexpanded node (a path that ended on a dead node is
        dropped, and an instance whose root is dead is finished as exhausted)."""
        from puzzlezero.search._mcts_kernels import select

        inst = np.repeat(np.fromiter(budget, np.int64), np.fromiter(budget.values(), np.int64))
        width = int(self.max_depth) + 1
        nodes = np.empty((inst.size, width), np.int64)
        actions = np.empty((inst.size, width), np.int64)
        lengths = np.zeros(inst.size, np.int64)
        leaves = np.empty(inst.size, np.int64)
        select(
            self.roots[inst], self.slot, self.dead, self.child, self.ok, self.prior, self.visits,
            self.total, self.best, self.flight, self.first, self.c, self.vloss, self.max_value,
            nodes, actions, lengths, leaves,
        )  # fmt: skip
        for i in np.unique(inst[leaves == -2]):  # the root is dead: every move leads back
            self._finish(int(i), "exhausted")
        keep = leaves >= 0
        return leaves[keep], nodes[keep], actions[keep], lengths[keep]

    def _evaluate_and_expand(
        self, paths: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], st: SearchStats
    ) -> None:
        from puzzlezero.search.table import NEW, NodeTable

        t, A = self.table, self.A
        leaves, where = np.unique(paths[0], return_inverse=True)
        states = t.states(leaves)
        with st.timer("heuristic"):
            out = self.pv(states)
        values = np.asarray(out[0], dtype=np.float64).reshape(-1)
        probs = np.asarray(out[1], dtype=np.float64)
        m = leaves.size
        q = np.asarray(out[2], dtype=np.float64) if len(out) > 2 and out[2] is not None else None
        st.heuristic_calls += 1
        st.heuristic_states += m
        if values.shape != (m,) or probs.shape != (m, A) or (q is not None and q.shape != (m, A)):
            shapes = ", ".join(str(list(np.shape(x))) for x in out)
            raise PuzzleError(
                f"the policy-value function returned shapes {shapes} for {m} states; expected [{m}] "
                f"and [{m}, {A}] (and [{m}, {A}] for the moves' costs-to-go)"
            )
        finite = (
            np.all(np.isfinite(values))
            and np.all(np.isfinite(probs))
            and (q is None or np.all(np.isfinite(q)))
        )
        if not (finite and np.all(probs >= 0)):
            raise PuzzleError("the policy-value function returned NaN, infinite or negative numbers")
        values = np.maximum(values, 0.0)
        inst = t.inst[leaves].astype(np.int64)
        with st.timer("expand"):
            children = self.p.expand(states).reshape(m * A, *self.p.state_shape)
        np.add.at(self.generated, inst, A)
        st.nodes_generated += m * A
        st.nodes_expanded += m
        c_inst = np.repeat(inst, A)
        with st.timer("dedup"):
            keys = NodeTable.mix_instance(self.p.hash64(children), c_inst)
            code, idx = t.add(
                keys,
                t.as_rows(children),
                c_inst,
                np.repeat(leaves, A),
                np.tile(np.arange(A), m),
                np.zeros(m * A),
            )
        self._grow_nodes(t.n)
        fresh = np.flatnonzero(code == NEW)
        if fresh.size:
            self.depth[idx[fresh]] = self.depth[np.repeat(leaves, A)[fresh]] + 1
            self.max_depth = max(self.max_depth, int(self.depth[idx[fresh]].max()))
        rows = self._new_slots(m)
        self.slot[leaves] = rows
        new = (code == NEW).reshape(m, A)
        self.child[rows] = idx.reshape(m, A)
        self.ok[rows] = new
        prior = np.where(new, probs, 0.0)
        total = prior.sum(axis=1, keepdims=True)
        flat = new / np.maximum(new.sum(axis=1, keepdims=True), 1)
        self.prior[rows] = np.where(total > 0, prior / np.where(total > 0, total, 1.0), flat)
        self.first[rows] = np.maximum(q, self.cost[None, :]) if q is not None else values[:, None]
        for i in np.unique(inst):
            self.iterations[i] += 1
        with st.timer("goal_test"):
            goal = fresh[self.p.is_goal(children[fresh])] if fresh.size else fresh
        for j in goal:  # the first goal of an instance ends it
            i = int(c_inst[j])
            if self.status[i] is None:
                self._finish(i, "solved", int(idx[j]))
        from puzzlezero.search._mcts_kernels import backup

        _, nodes, actions, lengths = paths
        backup(self.slot, self.visits, self.total, self.best, self.flight, self.cost, nodes, actions, lengths,
               values[where.reshape(-1)])  # fmt: skip

    # ---- results -------------------------------------------------------------------------------
    def _shortest_path(self, i: int) -> tuple[int, ...]:
        """The cheapest path from root ``i`` to its goal over every edge seen (relaxation rounds
        over the expanded nodes of the instance: Bellman-Ford on the tree's graph)."""
        t = self.table
        n = t.n
        dist = np.full(n, np.inf)
        pred = np.full(n, -1, np.int64)
        pred_a = np.full(n, -1, np.int64)
        root = int(self.roots[i])
        dist[root] = 0.0
        frontier = np.array([root])
        while frontier.size:
            src = frontier[self.slot[frontier] >= 0]
            if src.size == 0:
                break
            dst = self.child[self.slot[src]]
            cand = dist[src][:, None] + self.cost[None, :]
            ok = dst >= 0
            s_rep = np.broadcast_to(src[:, None], dst.shape)[ok]
            a_rep = np.broadcast_to(np.arange(self.A)[None, :], dst.shape)[ok]
            d_, c_ = dst[ok], cand[ok]
            better = c_ < dist[d_]
            if not better.any():
                break
            d_, c_, s_rep, a_rep = d_[better], c_[better], s_rep[better], a_rep[better]
            order = np.lexsort((c_, d_))
            firsts = np.ones(order.size, bool)
            firsts[1:] = d_[order][1:] != d_[order][:-1]
            pick = order[firsts]
            dist[d_[pick]] = c_[pick]
            pred[d_[pick]], pred_a[d_[pick]] = s_rep[pick], a_rep[pick]
            frontier = d_[pick]
        goal = int(self.goal_node[i])
        actions = []
        node = goal
        while node != root:
            actions.append(int(pred_a[node]))
            node = int(pred[node])
        return tuple(reversed(actions))

    def _result(self, i: int) -> SearchResult:
        solved = self.status[i] == "solved"
        actions = self._shortest_path(i) if solved else ()
        return SearchResult(
            solved=solved,
            actions=actions,
            nodes_generated=int(self.generated[i]),
            iterations=int(self.iterations[i]),
            seconds=float(self.seconds[i]),
            status=self.status[i],  # type: ignore[arg-type]
            cost=self.p.path_cost(actions) if solved else None,
        )
