"""Batched Q* search (Agostinelli, Shmakov, McAleer, Fox, Baldi: "Q* Search: Heuristic Search with
Deep Q-Networks", 2024): BWAS with a Q function, one network call per expanded node.

BWAS (:mod:`.bwas`) calls its heuristic on every new child, ``num_actions`` states per expansion.
A deep Q-network gives, in ONE call on the expanded node ``s``, the cost to reach a goal after
each action, ``Q(s, a) = cost(s, a) + J(A(s, a))``. Q* uses it to put the children on OPEN without
evaluating them:

    f(A(s, a)) = weight * g(A(s, a)) + (Q(s, a) - cost(s, a)),

the same priority as BWAS's ``weight * g + h`` with the child's ``h`` read off its parent's Q
vector. (The paper writes ``weight * g(s) + Q(s, a)``; with equal move costs it orders OPEN the
same way.) Everything else is BWAS, unchanged and shared: ``N`` nodes popped per instance and
iteration, the goal test on selection, duplicate detection against all generated states, the
paper's reopening rule, node counting and limits. Children that are goals get ``h = 0``: the goal
test costs a comparison, not a network call. In code: :class:`QStar` is
:class:`~.bwas.BatchWeightedAStar` with the one method that values new children replaced.

The Q function is a plain ``q(states[B, *state_shape]) -> float32[B, A]`` (no torch here):
:func:`puzzlezero.nn.make_q_function` wraps a network with a Q head; :func:`q_from_value` turns
any value heuristic into one (every child evaluated: for comparisons and tests, not for speed).

>>> import numpy as np                                                          # doctest: +SKIP
>>> q = make_q_function(cube, load_model("cube3"))                               # doctest: +SKIP
>>> [r.length for r in qstar(cube, starts, q, weight=0.6, batch_size=1000)]      # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from puzzlezero.puzzles.base import GoalTest, Puzzle
from puzzlezero.search.anytime import GroupLedger
from puzzlezero.search.bwas import BatchWeightedAStar
from puzzlezero.search.result import SearchResult, SearchStats, evaluate_q

__all__ = ["QStar", "q_from_value", "qstar"]

QFunction = Callable[[np.ndarray], np.ndarray]


def qstar(
    puzzle: Puzzle,
    starts: np.ndarray,
    q_function: QFunction,
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
    """Search every state of ``starts[B, *state_shape]`` (or one state) to a goal with Q*.

    Args:
        puzzle: the puzzle.
        starts: start states; instances share each expansion and each Q call.
        q_function: ``states[M, *state_shape] -> float32[M, num_actions]``, the cost-to-go after
            each action, the action's own cost included.
        weight, batch_size, max_nodes, time_limit, goal_test, stats, max_cost, is_goal, groups,
            ledger, group_stop, deadline, on_solved: as :func:`~.bwas.bwas` (the Q function should estimate
            the cost to reach that goal).

    Returns:
        One :class:`SearchResult` per start state, in order.
    """
    return QStar.checked(
        puzzle,
        starts,
        q_function,
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


class QStar(BatchWeightedAStar):
    """BWAS whose new children take ``h = Q(parent, a) - cost(a)`` from one call of the Q function
    (its ``heuristic``) on their parents, instead of one call of a heuristic on the children."""

    def child_values(self, parents: np.ndarray, children: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        """``max(Q(s, a) - cost(a), 0)`` of each new child ``A(s, a)``, 0 for a goal; the Q
        function is called once, on the parents with at least one new child."""
        n, n_act = parents.shape[0], self.num_actions
        fresh2 = fresh.reshape(n, n_act)
        rows = np.flatnonzero(fresh2.any(axis=1))  # parents with at least one new child
        st = self.stats
        q = evaluate_q(self.heuristic, parents[rows], n_act, st)
        if self.step_cost is not None:
            h = np.maximum(q[fresh2[rows]] - self.step_cost, 0.0)
        else:  # each child's own action cost
            h = np.maximum((q - self.action_costs[None, :])[fresh2[rows]], 0.0)
        with st.timer("goal_test"):
            h[self.is_goal(children[fresh])] = 0.0
        return h


def q_from_value(
    puzzle: Puzzle, heuristic: Callable[[np.ndarray], np.ndarray], is_goal: str | GoalTest | None = None
) -> QFunction:
    """A Q function from a value heuristic: ``Q(s, a) = cost(a) + h(A(s, a))``, ``cost(a)`` (the
    puzzle's ``action_costs``) where the child is a goal. It evaluates every child (``num_actions`` heuristic states per state), so Q*
    with it does the work of BWAS: for comparing a Q network with the value it was trained from,
    and for exact heuristics in tests. ``is_goal``: the goal whose children count 0 (default: the
    puzzle's own)."""
    n_act, cost = puzzle.num_actions, puzzle.action_costs.astype(np.float32)
    goal_test = puzzle.goal_test(is_goal)

    def q_function(states: np.ndarray) -> np.ndarray:
        m = states.shape[0]
        children = puzzle.expand(states).reshape(m * n_act, *puzzle.state_shape)
        values = np.asarray(heuristic(children), dtype=np.float32)
        values[goal_test(children)] = 0.0
        return values.reshape(m, n_act) + cost[None, :]

    return q_function
