"""Batch weighted A* search (BWAS, DeepCubeA Methods), many instances in one batched loop.

Each iteration, for every unfinished instance, pops up to ``batch_size`` nodes with the lowest
``f = weight * g + h`` from its OPEN list; all popped states of all instances are goal-tested and
expanded in ONE ``puzzle.expand`` call; the children are deduplicated (within the batch and against
each instance's table of generated states, exact state bytes, see :mod:`.table`); the heuristic is
called ONCE on only the children never seen before; new and improved children are pushed.

Semantics (the paper's, defaults):

* **Goal test on selection** (``goal_test="expand"``): an instance is solved when a goal node is
  popped for expansion, as in A*; among goal nodes popped in the same batch the one of lowest ``g``
  is returned. ``goal_test="generate"`` is the common variant that stops as soon as a goal child is
  generated (fewer nodes, possibly longer solutions with an inadmissible heuristic).
* **Reopening**: a state reached again with a strictly lower ``g`` takes the new parent and ``g``
  and goes back to OPEN, whether it was still open or already expanded (CLOSED). This is the paper's
  rule ("remove that node from CLOSED and add x to OPEN"); its heuristic value is reused, not
  recomputed. Reaching a state with an equal or higher ``g`` discards the child.
* The root's heuristic is never evaluated: it is alone in OPEN, so its ``f`` does not matter.
* ``nodes_generated`` counts the root plus ``num_actions`` per expansion (the paper's count);
  ``max_nodes`` caps it: an instance never starts an expansion that would exceed it.
* **Costs**: ``g`` adds ``puzzle.action_costs[a]`` for the action taken (one number,
  ``puzzle.uniform_cost``, where every action costs the same). With ``weight=1``, ``batch_size=1``
  and an admissible heuristic this is A*: the solution found has the least cost, also when a
  cheaper solution has more moves. (With ``N > 1`` a goal popped beside cheaper nodes of the same
  batch ends the search, so the guarantee needs ``N = 1``.)

* **Time**: the search stops at its ``deadline`` (a reading of :func:`.clock.now`, shared with
  the searches around it) or ``time_limit`` seconds after it began, the earlier; every instance
  still open then ends ``"time limit"``. The time is checked once an iteration.

Searches that are BWAS with another way of valuing the new children subclass
:class:`BatchWeightedAStar` and override :meth:`~BatchWeightedAStar.child_values` (Q*, :mod:`.qstar`).

Example:
    >>> from puzzlezero import make                                   # doctest: +SKIP
    >>> cube = make("cube3"); starts = cube.scramble(rng, 4, depth=8)  # doctest: +SKIP
    >>> [r.length for r in bwas(cube, starts, h, weight=0.6, batch_size=1000)]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from puzzlezero.budget import SearchSettings, guises, state_bytes
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import GoalTest, Puzzle
from puzzlezero.search import clock
from puzzlezero.search.anytime import GroupLedger
from puzzlezero.search.result import SearchResult, SearchStats, as_batch, check_positive, evaluate

# the node table and open lists are numba kernels: imported when a search runs, not with the package
# (importing numba costs about 0.3 s, which a process that never searches should not pay)

__all__ = ["BatchWeightedAStar", "bwas", "memory_estimate"]

Heuristic = Callable[[np.ndarray], np.ndarray]

#: bytes a child takes in an iteration beyond three copies of its state (the children, those
#: filed, those evaluated): its instance, path cost, key, hash, parent, action, code and index
CHILD_BYTES = 96
#: the table's nodes per instance where no node cap is given (its starting capacity)
UNCAPPED_NODES = 1 << 20


def memory_estimate(puzzle: Puzzle, options: SearchSettings, instances: int = 1) -> int:
    """Peak bytes of a BWAS or Q* call (one setting or an anytime schedule, whose stages free
    their tables in turn) on ``instances`` states, each with its images: every instance's node
    cap filled with new nodes (the node table, :func:`~.table.table_bytes`, and the heaps,
    :func:`~.heap.heap_bytes`) and one iteration's children of the largest batch (a network's
    batch is the solver's to add).
    Calibrated on cube3 with a NumPy heuristic: one instance, N 1000, 3,000,000 nodes: estimated
    687 MB, 636 MB measured with tracemalloc; 12,000,000 nodes (the table's arrays grown thrice):
    estimated 2.25 GB, the process's peak RSS 1.66 GB above an idle one's; Q*, four instances of
    60,000 nodes, N 200: estimated 35.1 MB, measured 35.2 MB (tests/solver/test_budget.py checks such
    settings within 0.8-3x)."""
    from puzzlezero.search.heap import heap_bytes
    from puzzlezero.search.table import table_bytes

    b = max(1, int(instances)) * guises(puzzle, options)
    per = int(options.max_nodes) if options.max_nodes is not None else UNCAPPED_NODES
    batch = max([options.batch, *(n for _, n in options.stages)])
    s = state_bytes(puzzle)
    nodes = b * per
    table = table_bytes(s, nodes, min(nodes + b, 1 << 22))
    step = b * min(batch, per) * puzzle.num_actions * (3 * s + CHILD_BYTES)
    return table + b * heap_bytes(per) + step


def bwas(
    puzzle: Puzzle,
    starts: np.ndarray,
    heuristic: Heuristic,
    *,
    weight: float = 0.6,
    batch_size: int = 1000,
    max_nodes: int | None = 10_000_000,
    time_limit: float | None = None,
    goal_test: Literal["expand", "generate"] = "expand",
    stats: SearchStats | None = None,
    max_cost: float | np.ndarray | None = None,
    is_goal: str | GoalTest | None = None,
    groups: np.ndarray | None = None,
    ledger: GroupLedger | None = None,
    group_stop: bool = False,
    deadline: float | None = None,
    on_solved: Callable[[int, SearchResult], None] | None = None,
) -> list[SearchResult]:
    """Search every state of ``starts[B, *state_shape]`` (or one state) to a goal with BWAS.

    Args:
        puzzle: the puzzle (its ``expand``, ``is_goal``, ``hash64`` and ``action_costs`` are used).
        starts: start states; instances are independent but share each expansion and heuristic call.
        heuristic: ``states[M, *state_shape] -> float32[M]`` cost-to-go estimates.
        weight: the path-cost weight ``lambda`` in ``f = lambda * g + h`` (1 = A*, 0 = greedy).
        batch_size: ``N``, nodes popped per instance per iteration.
        max_nodes: per-instance cap on ``nodes_generated`` (``None``: no cap); status ``"node limit"``.
        time_limit: seconds for the whole call (``None``: none); status ``"time limit"``.
        goal_test: ``"expand"`` (paper, A*) or ``"generate"`` (see the module docstring).
        stats: filled in with the time split and counts when given.
        max_cost: children whose path cost ``g`` exceeds it are dropped (not evaluated, not
            pushed): an anytime search passes just below the best solution's cost, so that only
            cheaper solutions are looked for. A number, one per start state, or ``None`` (no bound).
        is_goal: the goal searched for: a goal name of the puzzle (``"layer1"``, see
            ``puzzle.goal_predicates()``) or any ``states[B] -> bool[B]`` function; ``None``: the
            puzzle's own ``is_goal``.
        groups: ``int[B]``, starts that are one problem in other guises (a state and its images,
            :mod:`.images`): when one of a group is solved at cost ``C``, the others' ``max_cost``
            drops at once to just below ``C`` (:func:`~.anytime.cost_bound`), so they spend the
            rest of the search only on cheaper solutions. ``None``: every start on its own.
        ledger: the groups' :class:`~.anytime.GroupLedger`, read at every iteration and written
            at every solution, shared by searches of one group's members side by side (threads,
            :mod:`.images`); with ``groups`` and no ledger, one of this search's own.
        group_stop: end the other members of a group once they have searched as long again as
            its solution took (status ``"exhausted"``: what their stage could give, it gave; see
            :class:`~.anytime.GroupLedger`).
        deadline: when the search must stop, a reading of :func:`.clock.now` (``None``: none), for
            a caller whose own time limit this search shares; with ``time_limit`` too, the earlier
            one ends it. Status ``"time limit"``.
        on_solved: called as ``on_solved(i, result)`` the moment start ``i`` is solved, with the
            :class:`SearchResult` it will return for it (while the other starts still search: an
            anytime schedule passes the solution on at once); what it raises ends the search.

    Returns:
        One :class:`SearchResult` per start state, in order.
    """
    return BatchWeightedAStar.checked(
        puzzle,
        starts,
        heuristic,
        weight=weight,
        batch_size=batch_size,
        max_nodes=max_nodes,
        time_limit=time_limit,
        goal_test=goal_test,
        stats=stats,
        max_cost=max_cost,
        is_goal=is_goal,
        groups=groups,
        ledger=ledger,
        group_stop=group_stop,
        deadline=deadline,
        on_solved=on_solved,
    ).run()


class BatchWeightedAStar:
    """One BWAS call: its node table, open lists and loop, in one object so that :meth:`run`
    reads as the algorithm. :meth:`checked` makes one of :func:`bwas`'s arguments, and
    ``BatchWeightedAStar.checked(...).run()`` is :func:`bwas`.

    It is also the way to build searches that are BWAS with another way of valuing new children:
    a subclass overrides :meth:`child_values`, and keeps everything else (the batches of ``N``
    nodes, the goal test, duplicate detection, the reopening rule, the cost bounds, the node and
    time limits). Q* (:mod:`.qstar`) is one. What :meth:`child_values` may read:

    * ``heuristic``: the function the search was given (a value heuristic for BWAS; Q*'s Q function);
    * ``stats``: the :class:`SearchStats` the search fills in (for :func:`~.result.evaluate`);
    * ``num_actions``; ``step_cost``, the cost of every action where all cost the same (else
      ``None``); ``action_costs``, ``float32[num_actions]``;
    * ``is_goal``: the goal test, ``states[M] -> bool[M]``.

    After :meth:`run`, ``table`` holds every node the search recorded (:class:`~.table.NodeTable`).
    """

    def __init__(
        self,
        puzzle: Puzzle,
        starts: np.ndarray,
        heuristic: Callable[[np.ndarray], np.ndarray],
        *,
        weight: float,
        batch_size: int,
        max_nodes: int | None,
        time_limit: float | None,
        goal_test: str,
        stats: SearchStats,
        max_cost: float | np.ndarray | None = None,
        is_goal: GoalTest | None = None,
        groups: np.ndarray | None = None,
        ledger: GroupLedger | None = None,
        group_stop: bool = False,
        deadline: float | None = None,
        on_solved: Callable[[int, SearchResult], None] | None = None,
    ) -> None:
        """Use :meth:`checked`: this takes its arguments as they are, ``starts`` a batch."""
        from puzzlezero.search.heap import OpenList
        from puzzlezero.search.table import NodeTable

        self.p, self.heuristic, self.stats = puzzle, heuristic, stats
        self.is_goal = puzzle.goal_test(is_goal)
        self.weight, self.batch, self.max_nodes = float(weight), batch_size, max_nodes
        self.goal_on_generate = goal_test == "generate"
        self.max_cost = (
            None if max_cost is None else np.broadcast_to(np.float32(max_cost), (starts.shape[0],))
        )
        self.groups = None if groups is None else np.asarray(groups, dtype=np.int64)
        if self.groups is not None and ledger is None:
            ledger = GroupLedger(int(self.groups.max(initial=-1)) + 1)
        self.ledger, self.group_stop = ledger, bool(group_stop)
        self.on_solved = on_solved
        self.t0 = clock.now()
        self.deadline = clock.deadline_after(time_limit, deadline, start=self.t0)
        b = starts.shape[0]
        self.num_actions = puzzle.num_actions
        # path costs: one number where every action costs the same (the fast path), else per action
        self.step_cost = None if puzzle.uniform_cost is None else np.float32(puzzle.uniform_cost)
        self.action_costs = puzzle.action_costs.astype(np.float32)
        expected = b * max_nodes if max_nodes is not None else 1 << 20
        self.table = NodeTable(puzzle.state_shape, puzzle.dtype, capacity=min(expected + b, 1 << 22))
        self.generated = np.ones(b, np.int64)
        self.iterations = np.zeros(b, np.int64)
        self.seconds = np.zeros(b)
        self.status: list[str | None] = [None] * b
        self.goal_node = np.full(b, -1, np.int64)
        self.opens = [OpenList() for _ in range(b)]
        self.seq = 0
        inst = np.arange(b)
        keys = NodeTable.mix_instance(puzzle.hash64(starts), inst)
        _, roots = self.table.add(
            keys, self.table.as_rows(starts), inst, np.full(b, -1), np.zeros(b), np.zeros(b)
        )
        self.table.h[roots] = 0.0
        for i in range(b):
            self._push(i, roots[i : i + 1])
        with stats.timer("goal_test"):
            for j in np.flatnonzero(self.is_goal(starts)):
                self._finish(int(j), "solved", int(roots[j]))
        stats.nodes_generated += b

    @classmethod
    def checked(
        cls,
        puzzle: Puzzle,
        starts: np.ndarray,
        heuristic: Callable[[np.ndarray], np.ndarray],
        *,
        weight: float = 0.6,
        batch_size: int = 1000,
        max_nodes: int | None = 10_000_000,
        time_limit: float | None = None,
        goal_test: Literal["expand", "generate"] = "expand",
        stats: SearchStats | None = None,
        max_cost: float | np.ndarray | None = None,
        is_goal: str | GoalTest | None = None,
        groups: np.ndarray | None = None,
        ledger: GroupLedger | None = None,
        group_stop: bool = False,
        deadline: float | None = None,
        on_solved: Callable[[int, SearchResult], None] | None = None,
    ) -> BatchWeightedAStar:
        """The search of :func:`bwas`'s arguments (the same keywords and defaults), checked (bad
        values raise :class:`PuzzleError`), ready to :meth:`run`. Its clock starts here."""
        starts = as_batch(puzzle, starts)
        if group_stop and groups is None:
            raise PuzzleError("group_stop needs groups: the starts whose solutions end each other's search")
        if groups is not None:
            groups = np.asarray(groups)
            if groups.shape != (starts.shape[0],) or groups.dtype.kind not in "iu" or groups.min() < 0:
                raise PuzzleError(f"groups needs one group number >= 0 per start ({starts.shape[0]})")
            if ledger is not None and ledger.cost.shape[0] <= groups.max():
                raise PuzzleError(f"the ledger needs an entry for each of the {groups.max() + 1} groups")
        check_positive("weight", weight, allow_zero=True)
        check_positive("batch_size", batch_size, integer=True)
        check_positive("max_nodes", max_nodes, integer=True)
        check_positive("time_limit", time_limit)
        if goal_test not in ("expand", "generate"):
            raise PuzzleError(f"goal_test must be 'expand' or 'generate', got {goal_test!r}")
        stats = stats if stats is not None else SearchStats()
        return cls(
            puzzle,
            starts,
            heuristic,
            weight=weight,
            batch_size=batch_size,
            max_nodes=max_nodes,
            time_limit=time_limit,
            goal_test=goal_test,
            stats=stats,
            max_cost=max_cost,
            is_goal=puzzle.goal_test(is_goal),
            groups=groups,
            ledger=ledger,
            group_stop=group_stop,
            deadline=deadline,
            on_solved=on_solved,
        )

    # ---- bookkeeping ---------------------------------------------------------------------------
    def _finish(self, i: int, status: str, node: int = -1) -> None:
        self.status[i] = status
        self.goal_node[i] = node
        now = clock.now()
        self.seconds[i] = now - self.t0
        if status == "solved" and self.groups is not None:  # the group's bound tightens at once
            assert self.ledger is not None  # there is one wherever there are groups
            self.ledger.solved(int(self.groups[i]), float(self.table.g[node]), self.t0, now)
        if status == "solved" and self.on_solved is not None:
            self.on_solved(i, self._result(i))

    def _bounds(self) -> np.ndarray | None:
        """Each instance's ``max_cost`` now: its own, tightened by its group's cheapest solution."""
        if self.groups is None:
            return self.max_cost
        assert self.ledger is not None
        group = self.ledger.bounds(self.p, self.groups)
        return group if self.max_cost is None else np.minimum(self.max_cost, group)

    def _push(self, i: int, nodes: np.ndarray) -> None:
        g = self.table.g[nodes]
        f = self.weight * g.astype(np.float64) + self.table.h[nodes]
        self.opens[i].push(f, nodes, g, self.seq)
        self.seq += nodes.shape[0]

    def _active(self) -> list[int]:
        if self.ledger is not None and self.ledger.abandoned:  # the caller gave up: end at once
            for i, s in enumerate(self.status):
                if s is None:
                    self._finish(i, "time limit")
        if self.group_stop:  # members whose group's stage has given its solution stop here
            assert self.ledger is not None and self.groups is not None  # checked: group_stop needs groups
            ended = self.ledger.ended(self.groups, self.t0, clock.now())
            for member in np.flatnonzero(ended).tolist():
                if self.status[member] is None:
                    self._finish(member, "exhausted")
        return [i for i, s in enumerate(self.status) if s is None]

    # ---- the loop ------------------------------------------------------------------------------
    def run(self) -> list[SearchResult]:
        """Search until every instance has ended; one :class:`SearchResult` per start, in order."""
        t, st = self.table, self.stats
        while active := self._active():
            if clock.passed(self.deadline):
                for i in active:
                    self._finish(i, "time limit")
                break
            popped, p_inst = self._pop(active)
            if popped.size == 0:
                continue
            st.iterations += 1
            with st.timer("goal_test"):
                states = t.states(popped)
                is_goal = self.is_goal(states)
            if is_goal.any():
                keep = self._finish_goals(popped, p_inst, is_goal)
                popped, p_inst, states = popped[keep], p_inst[keep], states[keep]
                if popped.size == 0:
                    continue
            self._expand(popped, p_inst, states)
        st.total += clock.now() - self.t0
        return [self._result(i) for i in range(len(self.status))]

    def _pop(self, active: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Pop up to N nodes per active instance; instances with nothing to pop are finished."""
        parts, owners = [], []
        with self.stats.timer("open_list"):
            for i in active:
                k = self.batch
                if self.max_nodes is not None:
                    k = min(k, int(self.max_nodes - self.generated[i]) // self.num_actions)
                    if k <= 0:
                        self._finish(i, "node limit")
                        continue
                nodes = self.opens[i].pop(k, self.table.g, self.table.closed_g)
                if nodes.size == 0:
                    self._finish(i, "exhausted")
                    continue
                self.iterations[i] += 1
                parts.append(nodes)
                owners.append(np.full(nodes.size, i, np.int64))
        if not parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(parts), np.concatenate(owners)

    def _finish_goals(self, nodes: np.ndarray, inst: np.ndarray, is_goal: np.ndarray) -> np.ndarray:
        """Finish every instance with a goal among ``nodes`` (lowest ``g`` wins); keep-mask of the rest."""
        g_nodes, g_inst = nodes[is_goal], inst[is_goal]
        order = np.lexsort((self.table.g[g_nodes], g_inst))
        first = np.ones(order.size, bool)
        first[1:] = g_inst[order][1:] != g_inst[order][:-1]
        for node, i in zip(g_nodes[order][first], g_inst[order][first], strict=True):
            self._finish(int(i), "solved", int(node))
        return ~np.isin(inst, g_inst)

    def _expand(self, popped: np.ndarray, p_inst: np.ndarray, states: np.ndarray) -> None:
        from puzzlezero.search.table import NEW, NodeTable

        t, st, A = self.table, self.stats, self.num_actions
        n = popped.size
        with st.timer("expand"):
            children = self.p.expand(states).reshape(n * A, *self.p.state_shape)
        np.add.at(self.generated, p_inst, A)
        st.nodes_generated += n * A
        st.nodes_expanded += n
        c_inst = np.repeat(p_inst, A)
        if self.step_cost is not None:
            g_child = np.repeat(t.g[popped] + self.step_cost, A)
        else:
            g_child = (t.g[popped][:, None] + self.action_costs[None, :]).ravel()
        # children beyond max_cost are never recorded: a state first seen beyond it and later
        # reached more cheaply must then enter as NEW, with its heuristic value computed
        bounds = self._bounds()
        keep = np.ones(n * A, bool) if bounds is None else g_child <= bounds[c_inst]
        code = np.zeros(n * A, np.int64)  # DUPLICATE where not kept
        idx = np.zeros(n * A, np.int64)
        if keep.any():
            with st.timer("dedup"):
                keys = NodeTable.mix_instance(self.p.hash64(children[keep]), c_inst[keep])
                code[keep], idx[keep] = t.add(
                    keys,
                    t.as_rows(children[keep]),
                    c_inst[keep],
                    np.repeat(popped, A)[keep],
                    np.tile(np.arange(A), n)[keep],
                    g_child[keep],
                )
        live = code > 0  # NEW or IMPROVED
        if self.goal_on_generate and live.any():
            with st.timer("goal_test"):
                goal = np.zeros(live.size, bool)
                goal[live] = self.is_goal(children[live])
            if goal.any():
                t.h[idx[goal]] = 0.0
                live &= self._finish_goals(idx, c_inst, goal)
        fresh = live & (code == NEW)
        if fresh.any():
            t.h[idx[fresh]] = self.child_values(states, children, fresh)
        with st.timer("open_list"):
            push, owner = idx[live], c_inst[live]
            bounds = np.flatnonzero(np.diff(owner)) + 1
            for seg in np.split(push, bounds):
                if seg.size:
                    self._push(int(t.inst[seg[0]]), seg)

    def child_values(self, parents: np.ndarray, children: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        """``float32[fresh.sum()]``: the ``h`` of the children never generated before,
        ``children[fresh]``. ``parents[n]`` are the states expanded this iteration, ``children``
        their ``n * num_actions`` children (parent major: parent ``j``'s action ``a`` is row
        ``j * num_actions + a``), ``fresh`` a mask over them. BWAS calls its heuristic once on
        the new children; a subclass may value them otherwise (Q*: one call on the parents)."""
        return evaluate(self.heuristic, children[fresh], self.stats)

    def _result(self, i: int) -> SearchResult:
        solved = self.status[i] == "solved"
        actions: tuple[int, ...] = ()
        path_states = None
        if solved:
            acts, nodes = self.table.path(int(self.goal_node[i]))
            actions = tuple(acts)
            path_states = self.table.states(nodes)
        return SearchResult(
            solved=solved,
            actions=actions,
            nodes_generated=int(self.generated[i]),
            iterations=int(self.iterations[i]),
            seconds=float(self.seconds[i]),
            status=self.status[i],  # type: ignore[arg-type]
            path_states=path_states,
            cost=self.p.path_cost(actions) if solved else None,
        )
