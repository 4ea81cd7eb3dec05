"""The one clock of the searches and solvers: a time limit becomes an absolute deadline once, where a
solve begins, and that deadline is passed down; no level subtracts what the one above spent.

A deadline is a reading of :func:`now` (``time.monotonic()`` seconds) past which a search stops and
reports ``"time limit"``; ``math.inf`` is no deadline. A search that is given both a deadline and
a ``time_limit`` (seconds from its own start, for callers who call it directly) stops at the
earlier of the two.

A search that calls another (an anytime schedule its stages, a layered search its goals, the
solver its search, fallback and shortcut pass) hands down the one deadline: a function that takes
a ``deadline`` keyword gets it as it is, one that takes only a ``time_limit`` (a plugin's search)
gets the seconds left until it (:func:`with_deadline`, decided once where the function is received).

Tests put a fake clock in place of this module's ``time`` (``tests/clock.py``), and every search
then sees only the time the test lets pass.

A process may ask every search it runs to stop early (:func:`stop_when`, what a solver worker does
when its job is cancelled): while the check it installs answers true, :func:`now` reads
:data:`STOP_AHEAD` seconds ahead and :func:`deadline_after` gives the present, so every deadline
has come and each search ends at its next look at the clock, as at its time limit.
"""

from __future__ import annotations

import functools
import inspect
import math
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "MIN_TIME_LIMIT",
    "NO_DEADLINE",
    "STOP_AHEAD",
    "deadline_after",
    "takes_keyword",
    "with_deadline",
    "now",
    "passed",
    "seconds_left",
    "stop_when",
    "takes_deadline",
    "time_limit_until",
]

#: no deadline: the search stops on its other bounds only
NO_DEADLINE = math.inf
#: the least time limit handed to a search that takes no deadline (a time limit must be positive):
#: one whose deadline has come still starts, and stops at its first check of the time
MIN_TIME_LIMIT = 1e-3
#: how far :func:`now` reads ahead while a stop is asked for (:func:`stop_when`): past every
#: deadline a search is given, yet a finite number of seconds for what a search computes from it
STOP_AHEAD = 1e9

_stop: Callable[[], bool] | None = None


def stop_when(check: Callable[[], bool] | None) -> Callable[[], bool] | None:
    """Make every deadline of this process come at once whenever ``check()`` answers true
    (``None``: never); returns the check it replaces. Called often (at every reading of the
    clock), so ``check`` must be cheap: a solver worker reads one shared integer."""
    global _stop
    before, _stop = _stop, check
    return before


def now() -> float:
    """Seconds on the monotonic clock that every deadline is read against (:data:`STOP_AHEAD`
    more while a stop is asked for: :func:`stop_when`)."""
    t = time.monotonic()
    if _stop is not None and _stop():
        return t + STOP_AHEAD
    return t


def deadline_after(
    time_limit: float | None, deadline: float | None = None, start: float | None = None
) -> float:
    """The deadline of a search started at ``start`` (default: now) with at most ``time_limit``
    seconds (``None``: no limit of its own) and an outer ``deadline`` (``None``: none): the
    earlier of the two, :data:`NO_DEADLINE` when neither is given.

    The own deadline is the least reading ``t`` with ``t - start >= time_limit`` in floating
    point (``start + time_limit``, one step up where the sum rounded down), so that a search
    stopped by it has run its whole time limit by the seconds it reports. While a stop is asked
    for (:func:`stop_when`) it is the present: the search ends at its first look at the clock."""
    if _stop is not None and _stop():
        return min(now(), NO_DEADLINE if deadline is None else float(deadline))
    own = NO_DEADLINE
    if time_limit is not None:
        begun = now() if start is None else float(start)
        own = begun + float(time_limit)
        while own - begun < time_limit:
            own = math.nextafter(own, math.inf)
    return min(own, NO_DEADLINE if deadline is None else float(deadline))


def seconds_left(deadline: float) -> float:
    """Seconds until ``deadline`` (never negative; ``math.inf`` for no deadline)."""
    return max(0.0, deadline - now())


def passed(deadline: float) -> bool:
    """The deadline has come."""
    return now() >= deadline


def time_limit_until(deadline: float) -> float | None:
    """The ``time_limit`` that ends at ``deadline`` for a search that takes no deadline: the
    seconds left, at least :data:`MIN_TIME_LIMIT`; ``None`` (no limit) for no deadline."""
    return None if math.isinf(deadline) else max(seconds_left(deadline), MIN_TIME_LIMIT)


def takes_deadline(fn: Callable[..., Any]) -> bool:
    """Does ``fn`` name a ``deadline`` parameter (a keyword it can be given by name)? A function
    whose signature cannot be read, or that takes only ``**kwargs``, does not."""
    try:
        param = inspect.signature(fn).parameters.get("deadline")
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD)


def with_deadline(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a search called with a ``deadline`` keyword: ``fn`` itself where it takes one
    (:func:`takes_deadline`), else a wrapper that gives it the seconds left until the deadline as
    its ``time_limit`` (a plugin's search that knows no deadline). Decided once, where a caller
    receives the function, not at each call; a function wrapped already is returned as it is (its
    ``__wrapped__`` shows the plugin's own signature, so :func:`takes_keyword` reads that)."""
    if getattr(fn, _GIVES_TIME_LIMIT, False) or takes_deadline(fn):
        return fn

    @functools.wraps(fn)
    def given_time_limit(*args: Any, deadline: float | None = None, **kwargs: Any) -> Any:
        limit = {} if deadline is None else {"time_limit": time_limit_until(deadline)}
        return fn(*args, **kwargs, **limit)

    setattr(given_time_limit, _GIVES_TIME_LIMIT, True)
    return given_time_limit


#: the mark of a :func:`with_deadline` wrapper (it takes a deadline, though its signature, read
#: through ``__wrapped__``, is the wrapped function's)
_GIVES_TIME_LIMIT = "_puzzlezero_gives_time_limit"


def takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Does ``fn`` name a parameter ``name`` (BWAS's and Q*'s ``on_solved``)? A function whose
    signature cannot be read does not."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
