"""Search results and the cheap instrumentation shared by the searches."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.search import clock

__all__ = [
    "SearchResult",
    "SearchStats",
    "StageResult",
    "Status",
    "as_batch",
    "check_positive",
    "evaluate",
    "improving",
]

#: why a search stopped. ``"step limit"`` is used by greedy search (``max_steps``), ``"exhausted"``
#: when no state is left to try (OPEN empty, or greedy search stuck on visited states).
Status = Literal["solved", "node limit", "time limit", "memory limit", "step limit", "exhausted"]


@dataclass(frozen=True)
class StageResult:
    """One stage of a layer-by-layer search (:mod:`.layered`): the search from where the previous
    stage ended to ``goal``.

    Attributes:
        goal: the goal name of the stage (``"layer1"``, ...).
        actions: the stage's moves (empty when the stage failed or its start already met the goal).
        nodes_generated: nodes the stage's search generated.
        seconds: wall-clock seconds of the stage's search call.
        status: the stage search's status (``"solved"`` when the goal was reached).
    """

    goal: str
    actions: tuple[int, ...]
    nodes_generated: int
    seconds: float = field(compare=False)
    status: str


@dataclass(frozen=True)
class SearchResult:
    """The outcome of searching one instance.

    Attributes:
        solved: a goal state was reached; ``actions`` leads from the start state to it.
        actions: action ids from the start to the goal (empty when not solved or the start is a goal).
        nodes_generated: the root plus every child produced by an expansion (``num_actions`` per
            expanded node, duplicates and impossible moves included: the paper's count).
        iterations: search iterations this instance took part in (BWAS: batches popped; GBFS: steps).
        seconds: time (on :func:`.clock.now`) from the start of the search call until this
            instance finished.
            Instances searched together share the heuristic calls, so this is their latency, not an
            exclusive cost; divide the call's wall time among them for an amortised cost. Not part
            of equality: two results are equal when the searches did the same thing.
        status: ``"solved"``, ``"node limit"``, ``"time limit"``, ``"step limit"`` or ``"exhausted"``.
        path_states: ``[len(actions) + 1, *state_shape]``, start to goal, when solved; else ``None``.
        improvements: anytime search (:mod:`.anytime`): ``(seconds, length)`` each time a cheaper
            solution was found (with equal action costs: a shorter one), the first one first;
            empty for the other searches.
        cost: the solution's cost, the sum of its actions' costs (``Puzzle.path_cost``; the
            length where every move costs 1), when solved; ``None`` otherwise (and from searches
            that do not report it: the solver computes it from ``actions``).
        stages: layer-by-layer search (:mod:`.layered`): one :class:`StageResult` per goal, in
            order (``actions`` is their concatenation); empty for the other searches.
    """

    solved: bool
    actions: tuple[int, ...]
    nodes_generated: int
    iterations: int
    seconds: float = field(compare=False)
    status: Status
    path_states: np.ndarray | None = field(default=None, compare=False, repr=False)
    improvements: tuple[tuple[float, int], ...] = field(default=(), compare=False)
    cost: float | None = field(default=None, compare=False)
    stages: tuple[StageResult, ...] = field(default=(), compare=False)

    @property
    def length(self) -> int | None:
        """Number of moves of the solution, ``None`` when not solved."""
        return len(self.actions) if self.solved else None


def improving(found: Iterable[tuple[float, int]]) -> tuple[tuple[float, int], ...]:
    """Solutions found by several searches of one state, ``(seconds, length)``, as that state's
    :attr:`SearchResult.improvements`: in time order, each one shorter than every one before it."""
    record, kept = float("inf"), []
    for t, n in sorted(found):
        if n < record:
            record = n
            kept.append((t, n))
    return tuple(kept)


@dataclass
class SearchStats:
    """Where a search call spent its time (seconds) and how much work it did.

    Pass one to :func:`~puzzlezero.search.bwas` or :func:`~puzzlezero.search.gbfs` to have it
    filled in; the timers cost a few readings of the searches' clock (:func:`.clock.now`) per
    iteration.
    """

    heuristic: float = 0.0
    expand: float = 0.0
    dedup: float = 0.0
    open_list: float = 0.0
    goal_test: float = 0.0
    total: float = 0.0
    iterations: int = 0
    nodes_generated: int = 0
    nodes_expanded: int = 0
    heuristic_calls: int = 0
    heuristic_states: int = 0

    @contextmanager
    def timer(self, name: str) -> Iterator[None]:
        t0 = clock.now()
        try:
            yield
        finally:
            setattr(self, name, getattr(self, name) + clock.now() - t0)

    @property
    def other(self) -> float:
        return max(
            0.0, self.total - self.heuristic - self.expand - self.dedup - self.open_list - self.goal_test
        )

    @property
    def nodes_per_second(self) -> float:
        return self.nodes_generated / self.total if self.total > 0 else 0.0

    def as_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["other"] = self.other
        out["nodes_per_second"] = self.nodes_per_second
        return out

    def summary(self) -> str:
        """One line: nodes/s and the share of time of each part."""
        t = self.total or 1.0
        parts = ("heuristic", "expand", "dedup", "open_list", "goal_test", "other")
        shares = ", ".join(f"{p} {100 * getattr(self, p) / t:.0f}%" for p in parts)
        return (
            f"{self.nodes_generated:,} nodes in {self.total:.2f} s ({self.nodes_per_second:,.0f}/s), "
            f"{self.heuristic_states:,} heuristic states in {self.heuristic_calls} calls; {shares}"
        )


def check_positive(
    name: str, value: float | None, *, integer: bool = False, allow_zero: bool = False
) -> None:
    """Raise :class:`PuzzleError` unless ``value`` is ``None`` or a positive (int) number."""
    if value is None:
        return
    if integer and (isinstance(value, bool) or not isinstance(value, int | np.integer)):
        raise PuzzleError(f"{name} must be an integer, got {value!r}")
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise PuzzleError(f"{name} must be {kind}, got {value!r}")


def as_batch(puzzle, starts: np.ndarray) -> np.ndarray:  # noqa: ANN001 (Puzzle: avoid import cycle)
    """``starts`` as a contiguous ``[B, *state_shape]`` array of the puzzle's dtype (one state -> B=1)."""
    arr = np.asarray(starts)
    shape = tuple(puzzle.state_shape)
    if arr.shape == shape:
        arr = arr[None]
    if arr.ndim != len(shape) + 1 or arr.shape[1:] != shape:
        raise PuzzleError(
            f"start states for {puzzle.name or puzzle!r} must have shape [B, {', '.join(map(str, shape))}], "
            f"got {list(arr.shape)}"
        )
    if arr.shape[0] == 0:
        raise PuzzleError("no start states given")
    return np.ascontiguousarray(arr, dtype=puzzle.dtype)


def evaluate(heuristic, states: np.ndarray, stats: SearchStats) -> np.ndarray:  # noqa: ANN001
    """Call ``heuristic`` once on ``states[M]`` and check its answer: finite ``float32[M]``."""
    with stats.timer("heuristic"):
        values = np.asarray(heuristic(states), dtype=np.float32).reshape(-1)
    stats.heuristic_calls += 1
    stats.heuristic_states += states.shape[0]
    if values.shape[0] != states.shape[0]:
        raise PuzzleError(f"the heuristic returned {values.shape[0]} values for {states.shape[0]} states")
    if not np.all(np.isfinite(values)):
        raise PuzzleError("the heuristic returned NaN or infinite values")
    return values


def evaluate_q(
    q_function,  # noqa: ANN001
    states: np.ndarray,
    num_actions: int,
    stats: SearchStats,
    what: str = "Q function",
) -> np.ndarray:
    """Call the Q function (or policy: ``what`` names it in errors) once on ``states[M]`` and check
    its answer: finite ``float32[M, A]`` (Q*, Q-beam and policy beam, one row per expanded state)."""
    with stats.timer("heuristic"):
        q = np.asarray(q_function(states), dtype=np.float32)
    stats.heuristic_calls += 1
    stats.heuristic_states += states.shape[0]
    if q.shape != (states.shape[0], num_actions):
        raise PuzzleError(
            f"the {what} returned shape {list(q.shape)} for {states.shape[0]} states; "
            f"expected [{states.shape[0]}, {num_actions}]"
        )
    if not np.all(np.isfinite(q)):
        raise PuzzleError(f"the {what} returned NaN or infinite values")
    return q
