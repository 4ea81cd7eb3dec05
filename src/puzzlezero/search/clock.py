"""The one clock of the searches and solvers: a time limit becomes an absolute deadline once, where a
solve begins, and that deadline is passed down; no level subtracts what the one above spent.

A deadline is a reading of :func:`now` (``time.monotonic()`` seconds) past which a search stops and
reports ``"time limit"``; ``math.inf`` is no deadline. A search that is given both a deadline and
a ``time_limit`` (seconds from its own start, for callers who call it directly) stops at the
earlier of the two.

Tests put a fake clock in place of this module's ``time`` (``tests/clock.py``), and every search
then sees only the time the test lets pass.
"""

from __future__ import annotations

import math
import time

__all__ = ["NO_DEADLINE", "deadline_after", "now", "passed", "seconds_left"]

#: no deadline: the search stops on its other bounds only
NO_DEADLINE = math.inf


def now() -> float:
    """Seconds on the monotonic clock that every deadline is read against."""
    return time.monotonic()


def deadline_after(time_limit: float | None, deadline: float | None = None, start: float | None = None) -> float:
    """The deadline of a search started at ``start`` (default: now) with at most ``time_limit``
    seconds (``None``: no limit of its own) and an outer ``deadline`` (``None``: none): the
    earlier of the two, :data:`NO_DEADLINE` when neither is given."""
    own = NO_DEADLINE if time_limit is None else (now() if start is None else start) + float(time_limit)
    return min(own, NO_DEADLINE if deadline is None else float(deadline))


def seconds_left(deadline: float) -> float:
    """Seconds until ``deadline`` (never negative; ``math.inf`` for no deadline)."""
    return max(0.0, deadline - now())


def passed(deadline: float) -> bool:
    """The deadline has come."""
    return now() >= deadline
