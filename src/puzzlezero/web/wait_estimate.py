"""How long a queued solve will wait: recent solve durations and a first-come-first-served schedule.

The estimate is measured, not assumed. :class:`RecentDurations` keeps how long the last
:data:`WINDOW` solves of each puzzle held a worker; a job's expected duration is their mean, never
more than the job's own time limit (a solve cannot search longer), and the time limit itself
before any solve of that puzzle has finished. :func:`start_times` then plays the waiting line
forward: the workers free up when their running solves are expected to end, and each waiting job,
in order, takes the worker that is free first (the pool's rule).

>>> start_times([4.0, 10.0], [6.0, 6.0, 6.0])   # two workers busy for 4 s and 10 s, three waiting
[4.0, 10.0, 10.0]
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence

__all__ = ["WINDOW", "RecentDurations", "start_times"]

#: solves per puzzle whose durations the estimate averages
WINDOW = 20


class RecentDurations:
    """The wall-clock seconds of the last ``window`` solves of each puzzle (bounded memory)."""

    def __init__(self, window: int = WINDOW) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self.window = window
        self._by_puzzle: dict[str, deque[float]] = {}

    def record(self, puzzle: str, seconds: float) -> None:
        """Note that a solve of ``puzzle`` held a worker for ``seconds``."""
        self._by_puzzle.setdefault(puzzle, deque(maxlen=self.window)).append(max(0.0, float(seconds)))

    def count(self, puzzle: str) -> int:
        """How many recent solves of ``puzzle`` the estimate rests on (0: none yet)."""
        return len(self._by_puzzle.get(puzzle, ()))

    def expected(self, puzzle: str, time_limit: float) -> float:
        """Expected seconds of a solve of ``puzzle`` allowed ``time_limit`` seconds: the mean of the
        recent solves of that puzzle capped at ``time_limit``, or ``time_limit`` when there are none."""
        recent = self._by_puzzle.get(puzzle)
        if not recent:
            return float(time_limit)
        return min(sum(recent) / len(recent), float(time_limit))


def start_times(free_at: Sequence[float], durations: Sequence[float]) -> list[float]:
    """Seconds from now until each waiting job starts, first come first served.

    ``free_at``: one entry per worker, the seconds until it is free (0 for an idle one);
    ``durations``: the expected seconds of each waiting job, in line order. Each job in turn takes
    the worker free first and keeps it for its duration. Returns one start time per job.
    """
    if not free_at:
        raise ValueError("need at least one worker")
    heap = [max(0.0, float(t)) for t in free_at]
    heapq.heapify(heap)
    starts = []
    for d in durations:
        t = heapq.heappop(heap)
        starts.append(t)
        heapq.heappush(heap, t + max(0.0, float(d)))
    return starts
