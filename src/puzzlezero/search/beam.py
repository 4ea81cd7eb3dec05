"""Batched beam search (CayleyPy, arXiv 2502.13266; EfficientCube), many instances in one loop.

Each instance keeps a *beam* of at most ``W`` states, starting with its start state. One step:

1. expand every beam state of every unfinished instance in ONE ``puzzle.expand`` call;
2. drop the children equal to a state that was in one of the instance's earlier beams (its
   *visited* set; the parent and impossible moves included) and all but the first copy of a child
   generated twice in the step. States are compared by ``puzzle.hash64`` mixed with the instance
   id: a (very rare) hash collision drops a state, it never yields a wrong path;
3. goal-test the children: an instance is solved at the first step in which a goal child appears
   (the first such child in beam order), so its solution has as many moves as steps taken;
4. call the heuristic ONCE on the surviving non-goal children of all unsolved instances;
5. keep, per instance, the ``W`` children with the lowest heuristic value (ties broken by the
   state hash, so the result does not depend on which other instances share the call).

Only the beam is kept, never the tree: each step stores, per beam state, the index of its parent in
the previous beam and the action that led to it (``int64`` and ``int16``), and a solution is read
back through them; the visited set is one sorted ``uint64`` array for all instances.

Statuses: ``"solved"``; ``"step limit"`` after ``max_steps`` steps without a goal; ``"node
limit"`` when the next step would take ``nodes_generated`` past ``max_nodes`` (an instance never
starts a step it cannot finish); ``"time limit"`` at the ``deadline`` or ``time_limit`` seconds
after the start, the earlier (checked before each step); ``"exhausted"`` when no child survives (the beam
is empty). ``nodes_generated`` counts the root plus ``num_actions`` per expanded state, as BWAS
does; ``iterations`` is the number of steps (expansions of the whole beam) the instance took.

With a perfect heuristic a beam of width 1 follows an optimal path; with an inexact one, wider
beams give shorter solutions at a cost linear in ``W``. Unlike A*, beam search gives no optimality
guarantee at any width.

Costs: with unequal action costs (``puzzle.uniform_cost is None``) step 5 ranks children by
``g + h`` (``g``: the cost of the path to the child) and step 3 takes the cheapest goal child of
the step; with equal costs every child of a step has the same ``g`` and the rules above are
unchanged. ``SearchResult.cost`` is the solution's cost.

**The goal's ball** (``ball``, :mod:`puzzlezero.search.goal_ball`): the states within ``r`` moves
of the goal, each with its exact distance. In step 3 a child inside it gives a solution at once, its
path cost plus its distance, down the ball; the cheapest of an instance's step is kept, and the
instance ends after that step, since a child outside the ball is more than ``r`` moves from the
goal. The beam's choices up to that step are the same as without the ball, so its solution is never
longer, and it ends up to ``r`` steps sooner. A start inside the ball is solved at once, optimally.
An instance stopped by a limit keeps a solution found down the ball.

**Pacing** (``pace``): a beam with a deadline that would not reach the goal in time finds nothing
at all when the deadline comes, however close it was to an answer; one planned from a slower beam's
rate leaves time unused. A paced beam measures, each step it is full, the seconds a beam state takes
to expand and rank, and sets its width for the next step to the one whose remaining steps fit the
time left (:data:`PACE_MARGIN` of it, less one step), never wider than ``pace``. A beam bounded by
``max_cost`` (a later beam of an anytime schedule, :mod:`.anytime`) plans for :data:`PACE_STEPS` of
its bound's steps, where a shorter answer mostly comes, and from a tenth of the bound before them
on, for a tenth of it ahead, up to the bound. A start without a bound (a schedule's first beam)
plans for the puzzle's ``default_scramble_depth`` steps, the depth at which its random walks stop
moving away from the goal, at most :data:`PACE_VALUE_STEPS` times its value (the one estimate
overstates some puzzles' distances, the other understates them), and once past them for
:data:`PACE_FREE_AHEAD` of them ahead: where the time is short, the first beam narrows to answer
within it instead of not at all. Narrower, it drops its worst-ranked states, and its last steps,
where the heuristic is surest, run narrower instead of not at all; wider, it keeps more of the
step's children. A beam paced at its own width only narrows, and one that fits keeps it.

**Q-beam** (:func:`qbeam`): with a network that has a Q head (the cost-to-go after each action,
its cost included; :mod:`puzzlezero.search.qstar`) step 4 becomes ONE call of the Q function on
the beam states being expanded, before their children exist, and a child ``A(s, a)`` is ranked by
``Q(s, a) - cost(a)`` (= its ``h``; unequal costs: ``g + h``, the same key as above). That is one
network call per beam state instead of one per child: twelve times fewer on the cube, as Q* is to
BWAS. Everything else (visited sets, goal tests, statuses, limits) is the same loop.

**Policy beam** (:func:`pbeam`; EfficientCube, Takano 2023): with a policy ``states -> float32[B,
A]`` (move probabilities, e.g. a network trained by :mod:`puzzlezero.train.objectives.efficientcube`) step 4
is again ONE call, on the beam states being expanded, and a child ``A(s, a)`` is ranked by the
log-probability of its whole path, ``score(child) = score(s) - log p(a | s)`` (lower is better;
``score = 0`` at the start): the beam keeps the ``W`` most probable paths, whatever the action
costs. With ``W = 1`` it follows the policy greedily.

Example:
    >>> from puzzlezero import make                                   # doctest: +SKIP
    >>> cube = make("cube3"); starts = cube.scramble(rng, 4, depth=8)  # doctest: +SKIP
    >>> [r.length for r in beam(cube, starts, h, beam_width=1000)]     # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from puzzlezero.budget import SearchSettings, guises, state_bytes, widest
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import GoalTest, Puzzle
from puzzlezero.search import clock
from puzzlezero.search.goal_ball import GoalBall, walk_home
from puzzlezero.search.goal_ball import check_puzzle as check_ball_puzzle
from puzzlezero.search.goal_ball import memory_estimate as ball_bytes
from puzzlezero.search.result import SearchResult, SearchStats, as_batch, check_positive, evaluate, evaluate_q

__all__ = ["beam", "memory_estimate", "pbeam", "qbeam"]

Heuristic = Callable[[np.ndarray], np.ndarray]
QFunction = Callable[[np.ndarray], np.ndarray]
Policy = Callable[[np.ndarray], np.ndarray]
#: what the function of each mode is called in errors
_CALLED = {"q": "Q function", "policy": "policy"}
#: the least probability a policy move is scored with (``-log`` of it: about 69 moves' worth)
_MIN_PROB = 1e-30
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: the keywords every beam takes: beam_width, max_steps, max_nodes, time_limit, stats, is_goal,
#: max_cost, deadline
_Limits = tuple[
    int,
    int,
    int | None,
    float | None,
    SearchStats | None,
    str | GoalTest | None,
    float | np.ndarray | None,
    float | None,
]


def beam(
    puzzle: Puzzle,
    starts: np.ndarray,
    heuristic: Heuristic,
    *,
    beam_width: int = 1000,
    max_steps: int = 1000,
    max_nodes: int | None = 10_000_000,
    time_limit: float | None = None,
    stats: SearchStats | None = None,
    is_goal: str | GoalTest | None = None,
    max_cost: float | np.ndarray | None = None,
    deadline: float | None = None,
    ball: GoalBall | None = None,
    pace: int | None = None,
) -> list[SearchResult]:
    """Beam search from every state of ``starts[B, *state_shape]`` (or one state) to a goal.

    Args:
        puzzle: the puzzle (its ``expand``, ``is_goal`` and ``hash64`` are used).
        starts: start states; instances are independent but share each expansion and heuristic call.
        heuristic: ``states[M, *state_shape] -> float32[M]`` cost-to-go estimates.
        beam_width: ``W``, states kept per instance after each step.
        max_steps: steps (= solution moves) before the status ``"step limit"``; 0 only tests the start.
        max_nodes: per-instance cap on ``nodes_generated`` (``None``: no cap); status ``"node limit"``.
        time_limit: seconds for the whole call (``None``: none); status ``"time limit"``.
        stats: filled in with the time split and counts when given (beam selection counts as
            ``open_list``).
        is_goal: the goal searched for, a goal name of the puzzle or a ``states[B] -> bool[B]``
            function (``None``: the puzzle's own ``is_goal``).
        max_cost: children whose path cost exceeds it are dropped, goals included (a scalar or one
            per start; ``None``: no bound): an anytime schedule's bound, so that a restart looks
            only for solutions cheaper than the one it has (:func:`~.anytime.anytime_beam`). An
            instance left with no child is ``"exhausted"``.
        deadline: when the search must stop, a reading of :func:`.clock.now` (``None``: none), for
            a caller whose own time limit this search shares; with ``time_limit`` too, the earlier
            one ends it. Status ``"time limit"``.
        ball: the states near the goal (:mod:`puzzlezero.search.goal_ball`; ``None``: none): a
            child inside it ends its instance's search once no later step can reach the goal
            more cheaply than down the ball from it (see the module's "The goal's ball").
        pace: with a deadline (``deadline`` or ``time_limit``), the widest the beam may become as
            it sets its width, step by step, to what reaches its bound in time (without
            ``max_cost``: the steps it plans from the puzzle's ``default_scramble_depth`` and its
            start's value; see the module's "Pacing"; ``beam_width``: narrower only); ``None``,
            or without a deadline: the beam keeps ``beam_width``.

    Returns:
        One :class:`SearchResult` per start state, in order.
    """
    limits = beam_width, max_steps, max_nodes, time_limit, stats, is_goal, max_cost, deadline
    return _checked(puzzle, starts, heuristic, limits, mode="value", ball=ball, pace=pace).run()


def qbeam(
    puzzle: Puzzle,
    starts: np.ndarray,
    q_function: QFunction,
    *,
    beam_width: int = 1000,
    max_steps: int = 1000,
    max_nodes: int | None = 10_000_000,
    time_limit: float | None = None,
    stats: SearchStats | None = None,
    is_goal: str | GoalTest | None = None,
    max_cost: float | np.ndarray | None = None,
    deadline: float | None = None,
    ball: GoalBall | None = None,
    pace: int | None = None,
) -> list[SearchResult]:
    """Beam search that ranks children by a Q function ``states[M, *state_shape] -> float32[M, A]``
    called once on the beam states expanded in a step (see the module's "Q-beam"); the other
    arguments and the results are those of :func:`beam`."""
    limits = beam_width, max_steps, max_nodes, time_limit, stats, is_goal, max_cost, deadline
    return _checked(puzzle, starts, q_function, limits, mode="q", ball=ball, pace=pace).run()


def pbeam(
    puzzle: Puzzle,
    starts: np.ndarray,
    policy: Policy,
    *,
    beam_width: int = 1000,
    max_steps: int = 1000,
    max_nodes: int | None = 10_000_000,
    time_limit: float | None = None,
    stats: SearchStats | None = None,
    is_goal: str | GoalTest | None = None,
    max_cost: float | np.ndarray | None = None,
    deadline: float | None = None,
    ball: GoalBall | None = None,
    pace: int | None = None,
) -> list[SearchResult]:
    """Beam search that keeps the ``beam_width`` most probable paths under a policy
    ``states[M, *state_shape] -> float32[M, A]`` (move probabilities), called once on the beam
    states expanded in a step (see the module's "Policy beam"); the other arguments and the
    results are those of :func:`beam`."""
    limits = beam_width, max_steps, max_nodes, time_limit, stats, is_goal, max_cost, deadline
    return _checked(puzzle, starts, policy, limits, mode="policy", ball=ball, pace=pace).run()


#: the share of the time left that a paced beam plans its remaining steps to take
PACE_MARGIN = 0.9
#: the share of its bound's steps a paced beam plans for, keeping a tenth of the bound ahead from
#: 0.8 of it on, up to the bound (:meth:`_Beam._pace`): the 48-puzzle's wide beam answers at a
#: median of 0.84 of its bound, and one planned for the whole bound from its first step was
#: narrower than its answers need; the 35-puzzle's answers at 0.96, which the tenth ahead reaches
PACE_STEPS = 0.9
#: the share of its planned steps that a paced beam without a bound keeps ahead once it has taken
#: them: its width for the steps it still needs
PACE_FREE_AHEAD = 0.25
#: a paced beam without a bound plans for at most this many times its start's value (in steps):
#: the scramble depth overstates the sliding puzzles' distances (1,000 for the 35-puzzle, whose beam
#: of 500 answers in about 140 steps), the learned values understate them (a globe_6-4 state about
#: 40 where a beam of 1,000 answers in about 60)
PACE_VALUE_STEPS = 2.0
#: the weight of the latest full step in a paced beam's measured seconds a beam state
PACE_SMOOTHING = 0.3

#: bytes a child takes in a step beyond three copies of its state (the children, those kept, the
#: next beam): its instance, parent, action, hash, key, path cost, rank key and the sort orders
CHILD_BYTES = 144
#: bytes a beam state keeps for the rest of the search: its key in the visited set (three times while
#: the set is merged), its parent and its action
KEPT_BYTES = 3 * 8 + 8 + 2


def memory_estimate(puzzle: Puzzle, options: SearchSettings, instances: int = 1) -> int:
    """Peak bytes of a beam search (beam, qbeam, pbeam; an anytime schedule's widest beam) on
    ``instances`` states, each with its images: one step's children (``W * num_actions`` an
    instance, :data:`CHILD_BYTES` and three copies of the state each) and what every step keeps
    (:data:`KEPT_BYTES` a beam state) for as many steps as the node cap and ``max_steps`` allow
    (a network's batch is the solver's to add). Calibrated with tracemalloc on cube3 with a NumPy
    heuristic: W 10,000, 30 steps: estimated 46.9 MB, measured 37.8 MB; puzzle48 W 20,000, 100
    steps: estimated 91.3 MB, measured 69.8 MB (tests/solver/test_budget.py checks such settings within
    0.8-3x)."""
    b = max(1, int(instances)) * guises(puzzle, options)
    width, a, s = widest(options.beam_width), puzzle.num_actions, state_bytes(puzzle)
    steps = options.max_steps
    if options.max_nodes is not None:
        steps = min(steps, max(1, (options.max_nodes - 1) // (a * width)))
    step = b * width * a * (3 * s + CHILD_BYTES)
    kept = b * width * steps * KEPT_BYTES
    ball = int(options.option("goal_ball") or 0)
    return step + kept + (ball_bytes(puzzle, ball) if ball else 0)


def max_nodes_within(puzzle: Puzzle, options: SearchSettings, nbytes: int, instances: int = 1) -> int:
    """The largest node cap under which :func:`memory_estimate` stays within ``nbytes`` (at least
    one step's nodes: a wider beam than that fits is refused by the estimate, not the cap)."""
    b = max(1, int(instances)) * guises(puzzle, options)
    width, a = widest(options.beam_width), puzzle.num_actions
    fixed = memory_estimate(puzzle, _one_step(options), instances)
    steps = max(1, (nbytes - fixed) // max(1, b * width * KEPT_BYTES))
    return 1 + a * width * int(steps)


class _OneStep:
    """``options`` with one step: :func:`max_nodes_within`'s fixed part of the estimate."""

    def __init__(self, options: SearchSettings) -> None:
        self._o = options

    def __getattr__(self, name: str) -> object:
        return 1 if name == "max_steps" else getattr(self._o, name)


def _one_step(options: SearchSettings) -> SearchSettings:
    return _OneStep(options)  # type: ignore[return-value]


def _checked(
    puzzle: Puzzle,
    starts: np.ndarray,
    fn: Heuristic,
    limits: _Limits,
    *,
    mode: str,
    ball: GoalBall | None = None,
    pace: int | None = None,
) -> _Beam:
    """The search of :func:`beam`'s (``mode="value"``), :func:`qbeam`'s (``"q"``) or
    :func:`pbeam`'s (``"policy"``) arguments, checked (bad values raise :class:`PuzzleError`);
    ``limits``: their ``beam_width, max_steps, max_nodes, time_limit, stats, is_goal, max_cost,
    deadline``."""
    beam_width, max_steps, max_nodes, time_limit, stats, is_goal, max_cost, deadline = limits
    starts = as_batch(puzzle, starts)
    check_positive("beam_width", beam_width, integer=True)
    check_positive("max_steps", max_steps, integer=True, allow_zero=True)
    check_positive("max_nodes", max_nodes, integer=True)
    check_positive("time_limit", time_limit)
    check_positive("pace", pace, integer=True)
    stats = stats if stats is not None else SearchStats()
    goal_test = puzzle.goal_test(is_goal)
    bound = None if max_cost is None else np.broadcast_to(np.float32(max_cost), (starts.shape[0],))
    return _Beam(
        puzzle,
        starts,
        fn,
        beam_width,
        max_steps,
        max_nodes,
        time_limit,
        stats,
        goal_test,
        bound,
        mode=mode,
        deadline=deadline,
        ball=_checked_ball(puzzle, ball),
        pace=pace,
    )


def _checked_ball(puzzle: Puzzle, ball: GoalBall | None) -> GoalBall | None:
    """``ball`` where it applies: a ball of this puzzle, whose moves all cost the same."""
    if ball is None:
        return None
    if ball.puzzle != puzzle.name:
        raise PuzzleError(f"a ball around {ball.puzzle}'s goal cannot guide a search of {puzzle.name}")
    check_ball_puzzle(puzzle)
    return ball


def _mix(hashes: np.ndarray, inst: np.ndarray) -> np.ndarray:
    """Per-instance keys: the state hash mixed with the instance id (as the BWAS node table does)."""
    with np.errstate(over="ignore"):
        return hashes ^ ((inst.astype(np.uint64) + np.uint64(1)) * _GOLDEN)


class _Beam:
    """State of one :func:`beam` call (kept in one object so that :meth:`run` reads as the loop)."""

    def __init__(
        self,
        puzzle: Puzzle,
        starts: np.ndarray,
        heuristic: Heuristic,
        beam_width: int,
        max_steps: int,
        max_nodes: int | None,
        time_limit: float | None,
        stats: SearchStats,
        is_goal: GoalTest,
        max_cost: np.ndarray | None = None,
        *,
        mode: str = "value",
        deadline: float | None = None,
        ball: GoalBall | None = None,
        pace: int | None = None,
    ) -> None:
        self.p, self.heuristic, self.stats, self.is_goal = puzzle, heuristic, stats, is_goal
        self.ball = ball
        self.mode, self.max_cost = mode, max_cost
        self.W, self.max_steps, self.max_nodes = beam_width, max_steps, max_nodes
        self.t0 = clock.now()
        self.deadline = clock.deadline_after(time_limit, deadline, start=self.t0)
        # pacing (the module's "Pacing"): only a beam with a deadline can be paced
        self.widest = pace if np.isfinite(self.deadline) else None
        self.row_seconds = 0.0  # measured seconds to expand and rank one beam state (0: not yet)
        # a paced beam's starts: whether each has a bound, and the steps it plans for (set below)
        self.bounded, self.plan = np.zeros(0, bool), np.zeros(0)
        self.starts = starts
        b = starts.shape[0]
        self.A = puzzle.num_actions
        self.generated = np.ones(b, np.int64)
        self.iterations = np.zeros(b, np.int64)
        self.seconds = np.zeros(b)
        self.status: list[str | None] = [None] * b
        self.solution: list[tuple[int, ...]] = [()] * b
        # the current beam (rows grouped by instance) and the history of beams as parent pointers
        self.beam, self.beam_inst = starts, np.arange(b)
        self.g = np.zeros(b)  # path cost of each beam state
        self.score = np.zeros(b)  # its rank key: h (value, Q) or -log p of its path (policy)
        self.action_costs = puzzle.action_costs
        self.parents: list[np.ndarray] = [np.full(b, -1, np.int64)]  # per step: index in previous beam
        self.actions: list[np.ndarray] = [np.full(b, -1, np.int16)]  # per step: action from the parent
        start_hashes = puzzle.hash64(starts)
        self.visited = np.sort(_mix(start_hashes, self.beam_inst))
        # the cheapest solution down the goal's ball found so far, per instance
        self.ball_cost = np.full(b, np.inf)
        self.ball_path: list[tuple[int, ...] | None] = [None] * b
        stats.nodes_generated += b
        with stats.timer("goal_test"):
            for i in np.flatnonzero(is_goal(starts)):
                self._finish(int(i), "solved")
        if ball is not None:  # a start inside the ball: its depth is its distance, the optimum
            none = np.full(b, -1)
            self._meet(starts, np.arange(b), none, none, self.g, start_hashes, step=0)
            self._finish_met()
        if self.widest is not None:
            self.bounded, self.plan = self._planned_steps(starts)

    def _planned_steps(self, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which paced starts have a bound, and the steps each plans for (the module's "Pacing"):
        its bound's, ``max_cost`` over the cheapest move; without one (a schedule's first answer:
        ``max_cost`` at float32's largest) the puzzle's ``default_scramble_depth``, at most
        :data:`PACE_VALUE_STEPS` times the start's value in steps where a value heuristic ranks
        the beam (read for those starts only)."""
        cheapest = float(self.action_costs.min())
        steps = np.full(starts.shape[0], float(self.p.default_scramble_depth))
        if self.max_cost is None:
            bounded = np.zeros(starts.shape[0], bool)
        else:
            bounded = self.max_cost < np.finfo(np.float32).max
            steps[bounded] = np.floor(self.max_cost[bounded] / cheapest + 1e-6)
        free = ~bounded
        if self.mode == "value" and free.any():
            h = evaluate(self.heuristic, starts[free], self.stats).astype(np.float64)
            value_steps = PACE_VALUE_STEPS * np.maximum(h, 0.0) / cheapest
            steps[free] = np.clip(np.minimum(steps[free], value_steps), 1.0, None)
        return bounded, steps

    def _finish(self, i: int, status: str) -> None:
        if status != "solved" and self.ball_path[i] is not None:  # a limit: the ball's solution
            status, self.solution[i] = "solved", self.ball_path[i]  # type: ignore[assignment]
        self.status[i] = status
        self.seconds[i] = clock.now() - self.t0

    def _active(self) -> np.ndarray:
        return np.array([s is None for s in self.status])

    # ---- the loop ------------------------------------------------------------------------------
    def run(self) -> list[SearchResult]:
        st = self.stats
        for step in range(1, self.max_steps + 1):
            active = self._active()
            if not active.any():
                break
            if clock.passed(self.deadline):
                for i in np.flatnonzero(active):
                    self._finish(int(i), "time limit")
                break
            rows = self._rows_to_expand(active)
            if rows.size == 0:
                continue
            # a paced beam times its full steps (the others: no clock read, no count)
            paced = self.widest is not None and rows.size >= self.W * np.unique(self.beam_inst[rows]).size
            step_start = clock.now() if paced else 0.0
            st.iterations += 1
            q = None
            if self.mode != "value":
                q = evaluate_q(self.heuristic, self.beam[rows], self.A, st, _CALLED[self.mode])
            children, c_inst, c_parent, c_action, c_hash = self._expand(rows)
            c_g = self.g[c_parent] + self.action_costs[c_action]
            if self.max_cost is not None:  # beyond the bound: no cheaper solution through them
                keep = c_g <= self.max_cost[c_inst]
                children, c_inst, c_parent, c_action, c_hash, c_g = (
                    x[keep] for x in (children, c_inst, c_parent, c_action, c_hash, c_g)
                )
            if q is not None:
                out = q[np.searchsorted(rows, c_parent), c_action]
                if self.mode == "q":  # each child's h from its parent's Q row: Q(s, a) - cost(a)
                    c_h = out - self.action_costs[c_action]
                else:  # the path's -log probability
                    c_h = self.score[c_parent] - np.log(np.maximum(out.astype(np.float64), _MIN_PROB))
            if self.ball is not None:
                with st.timer("goal_test"):
                    self._meet(children, c_inst, c_parent, c_action, c_g, c_hash, step=step)
            with st.timer("goal_test"):
                goal = self.is_goal(children) if children.shape[0] else np.zeros(0, bool)
            if goal.any():
                solved = self._finish_goals(step, c_inst, c_parent, c_action, c_g, goal)
                keep = ~goal & ~np.isin(c_inst, solved)
                children, c_inst, c_parent, c_action, c_hash, c_g = (
                    x[keep] for x in (children, c_inst, c_parent, c_action, c_hash, c_g)
                )
                if q is not None:
                    c_h = c_h[keep]
            if q is not None:
                h = c_h
            elif children.shape[0]:
                h = evaluate(self.heuristic, children, st)
            else:
                h = np.zeros(0, np.float32)
            self._select(children, c_inst, c_parent, c_action, c_hash, c_g, h)
            if self.ball is not None:
                self._finish_met()
            if paced:
                self._pace(step, (clock.now() - step_start) / rows.size)
        for i in np.flatnonzero(self._active()):
            self._finish(int(i), "step limit")
        st.total += clock.now() - self.t0
        return [self._result(i) for i in range(len(self.status))]

    def _pace(self, step: int, row_seconds: float) -> None:
        """Set :attr:`W` for the next steps to what reaches the bound (without one: the planned
        steps) before the deadline (at most :attr:`widest`), at the seconds a beam state took in the
        full steps so far (``row_seconds``: this step's)."""
        a = PACE_SMOOTHING
        self.row_seconds = (
            row_seconds if not self.row_seconds else a * row_seconds + (1 - a) * self.row_seconds
        )
        active = np.flatnonzero(self._active())
        if not active.size:
            return
        least = np.full(len(self.status), np.inf)  # each instance's cheapest path in its beam
        np.minimum.at(least, self.beam_inst, self.g)
        cheapest = float(self.action_costs.min())
        reach = 0 if self.ball is None else self.ball.radius  # the ball ends a beam that much sooner
        bounded, steps = self.bounded[active], self.plan[active]
        done = np.ceil(least[active] / cheapest - 1e-6)
        # bounded: to PACE_STEPS of the bound, and from then on the bound; as it nears the first, it
        # keeps (1 - PACE_STEPS) of the bound's steps ahead, so that the switch asks for no sudden
        # narrowing. Unbounded: the planned steps, then PACE_FREE_AHEAD of them at a time
        ahead = np.where(
            bounded,
            np.maximum(PACE_STEPS * steps - done, np.minimum(steps - done, (1 - PACE_STEPS) * steps)),
            np.maximum(steps - done, PACE_FREE_AHEAD * steps),
        )
        # at least the next step: a beam planned for none would be given any width, past its time
        left = np.clip(np.minimum(np.floor(ahead) - reach, self.max_steps - step), 1, None)
        counts = np.bincount(self.beam_inst, minlength=len(self.status))[active]
        budget = PACE_MARGIN * clock.seconds_left(self.deadline) - self.row_seconds * float(counts.sum())
        per_width = self.row_seconds * float(left.sum())  # seconds to the bound a unit of width
        assert self.widest is not None
        if per_width > 0:  # else the clock did not move: every width fits
            self.W = max(1, min(self.widest, int(max(budget, 0.0) / per_width)))
        else:
            self.W = self.widest

    def _rows_to_expand(self, active: np.ndarray) -> np.ndarray:
        """Beam rows of the active instances that can afford a full step; the others hit the cap."""
        counts = np.bincount(self.beam_inst, minlength=active.size)
        if self.max_nodes is not None:
            over = active & (self.generated + self.A * counts > self.max_nodes)
            for i in np.flatnonzero(over):
                self._finish(int(i), "node limit")
            active = active & ~over
        self.iterations[active] += 1
        self.generated[active] += self.A * counts[active]
        return np.flatnonzero(active[self.beam_inst])

    def _expand(self, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """All children of ``beam[rows]``, less the visited and the repeated ones (first copy kept)."""
        st, A, n = self.stats, self.A, rows.size
        with st.timer("expand"):
            children = self.p.expand(self.beam[rows]).reshape(n * A, *self.p.state_shape)
        st.nodes_generated += n * A
        st.nodes_expanded += n
        c_inst = np.repeat(self.beam_inst[rows], A)
        with st.timer("dedup"):
            c_hash = self.p.hash64(children)
            keys = _mix(c_hash, c_inst)
            # in key order (stable: the first copy of a key first), so that one pass finds the
            # repeats and the look-ups into the visited set go forward (3 times faster)
            order = np.argsort(keys, kind="stable")
            ordered = keys[order]
            first = np.ones(ordered.size, bool)
            first[1:] = ordered[1:] != ordered[:-1]
            pos = np.minimum(np.searchsorted(self.visited, ordered), self.visited.size - 1)
            keep = np.sort(order[first & (self.visited[pos] != ordered)])
        return (
            children[keep],
            c_inst[keep],
            np.repeat(rows, A)[keep],
            np.tile(np.arange(A, dtype=np.int16), n)[keep],
            c_hash[keep],
        )

    def _finish_goals(
        self,
        step: int,
        c_inst: np.ndarray,
        c_parent: np.ndarray,
        c_action: np.ndarray,
        c_g: np.ndarray,
        goal: np.ndarray,
    ) -> np.ndarray:
        """Finish every instance with a goal child (its cheapest one, the first in beam order
        among equals); returns their ids."""
        where = np.flatnonzero(goal)
        where = where[np.lexsort((c_g[where], c_inst[where]))]  # stable: beam order among equals
        solved, first = np.unique(c_inst[where], return_index=True)
        for i, k in zip(solved, where[first], strict=True):
            if self.ball_cost[i] < c_g[k]:  # the ball's solution is cheaper
                self.solution[int(i)] = self.ball_path[int(i)]  # type: ignore[assignment]
            else:
                self.solution[int(i)] = self._path(step, int(c_parent[k]), int(c_action[k]))
            self._finish(int(i), "solved")
        return solved

    def _meet(
        self,
        children: np.ndarray,
        c_inst: np.ndarray,
        c_parent: np.ndarray,
        c_action: np.ndarray,
        c_g: np.ndarray,
        c_hash: np.ndarray,
        *,
        step: int,
    ) -> None:
        """Children inside the goal's ball: per instance the cheapest ``g + depth`` (within the
        bound), kept where cheaper than the instance's solution down the ball so far."""
        assert self.ball is not None
        if not children.shape[0]:
            return
        depth = self.ball.depth_of(c_hash)
        inside = np.flatnonzero(depth > 0)  # depth 0: a goal, which the goal test takes
        if not inside.size:
            return
        cost = c_g[inside] + depth[inside] * float(self.p.uniform_cost or 1.0)
        if self.max_cost is not None:
            ok = cost <= self.max_cost[c_inst[inside]]
            inside, cost = inside[ok], cost[ok]
        order = np.lexsort((cost, c_inst[inside]))  # per instance, cheapest first (beam order)
        inside, cost = inside[order], cost[order]
        insts, first = np.unique(c_inst[inside], return_index=True)
        for i, k, c in zip(insts, inside[first], cost[first], strict=True):
            i = int(i)
            if self.status[i] is not None or c >= self.ball_cost[i]:
                continue
            home = walk_home(self.p, self.ball, children[k])
            if home is None:  # a hash collision: no way down from this child
                continue
            head = () if step == 0 else self._path(step, int(c_parent[k]), int(c_action[k]))
            self.ball_cost[i], self.ball_path[i] = float(c), head + home

    def _finish_met(self) -> None:
        """Finish every instance whose solution down the ball no later step can beat. The ball's
        depths are exact distances, so a beam state outside it is more than its radius from the
        goal: the first step whose children touch the ball ends the instance."""
        assert self.ball is not None
        step_cost = float(self.p.uniform_cost or 1.0)
        beyond = np.full(len(self.status), np.inf)
        np.minimum.at(beyond, self.beam_inst, self.g + (self.ball.radius + 1) * step_cost)
        for i in np.flatnonzero(self._active() & np.isfinite(self.ball_cost) & (self.ball_cost <= beyond)):
            self.solution[int(i)] = self.ball_path[int(i)]  # type: ignore[assignment]
            self._finish(int(i), "solved")

    def _path(self, step: int, parent: int, action: int) -> tuple[int, ...]:
        """Actions from the start to a child (``action`` from ``parent`` of the beam of ``step - 1``)."""
        acts = [action]
        for s in range(step - 1, 0, -1):
            acts.append(int(self.actions[s][parent]))
            parent = int(self.parents[s][parent])
        return tuple(reversed(acts))

    def _select(
        self,
        children: np.ndarray,
        c_inst: np.ndarray,
        c_parent: np.ndarray,
        c_action: np.ndarray,
        c_hash: np.ndarray,
        c_g: np.ndarray,
        h: np.ndarray,
    ) -> None:
        """The next beam: per instance the ``W`` children of lowest ``h`` (unequal action costs:
        ``g + h``; ties: lowest hash). Instances that were expanded but kept nothing are exhausted."""
        with self.stats.timer("open_list"):
            by_h = self.p.uniform_cost is not None or self.mode == "policy"
            key = h if by_h else c_g + h
            order = np.lexsort((c_hash, key, c_inst))
            inst = c_inst[order]
            rank = np.arange(inst.size) - np.searchsorted(inst, inst, side="left")
            order = order[rank < self.W]
            self.beam, self.beam_inst, self.g = children[order], c_inst[order], c_g[order]
            self.score = np.asarray(h, dtype=np.float64)[order]
            self.parents.append(c_parent[order])
            self.actions.append(c_action[order])
            # a merge (timsort's runs: the set, then the step's keys), not a sort of the whole set
            new = _mix(c_hash[order], self.beam_inst)
            self.visited = np.sort(np.concatenate([self.visited, new]), kind="stable")
        kept = np.zeros(len(self.status), bool)
        kept[self.beam_inst] = True
        for i in np.flatnonzero(self._active() & ~kept):
            self._finish(int(i), "exhausted")

    def _result(self, i: int) -> SearchResult:
        solved = self.status[i] == "solved"
        actions = self.solution[i] if solved else ()
        path_states = None
        if solved:
            path_states = np.empty((len(actions) + 1, *self.p.state_shape), self.p.dtype)
            path_states[0] = self.starts[i]
            for t, a in enumerate(actions):
                path_states[t + 1] = self.p.apply(path_states[t : t + 1], np.array([a]))[0]
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
