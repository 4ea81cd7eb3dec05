"""Time in tests without the machine's speed in the assertions: a fake clock that a test moves
itself, and a wait for a real process that gives up only after a generous limit (:func:`until`,
:func:`until_async` on an event loop).

Every search and the solver read one clock, :mod:`puzzlezero.search.clock` (``time.monotonic()``
of its ``time``); put a :class:`FakeClock` in its place and every search sees only the time the
test lets pass (a heuristic that "takes" 20 ms calls ``clock.sleep(0.02)``):

    clock = FakeClock()
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", clock)
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class FakeClock:
    """Stands in for the ``time`` module of the modules a test patches: ``perf_counter``,
    ``monotonic`` and ``time`` read :attr:`now`, which moves only by :meth:`sleep` (or
    :meth:`advance`) and by ``tick`` seconds at each read; anything else (``strftime``, ...) is
    the real module's."""

    def __init__(self, start: float = 1000.0, tick: float = 0.0) -> None:
        self.now, self.tick, self.reads = start, tick, 0

    def __call__(self) -> float:
        t = self.now
        self.now += self.tick
        self.reads += 1
        return t

    perf_counter = monotonic = time = __call__

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    advance = sleep

    def __getattr__(self, name: str) -> Any:
        return getattr(_time, name)


def until(condition: Callable[[], T], timeout: float, what: str = "the condition", every: float = 0.02) -> T:
    """Wait for a real process or thread: ``condition()`` until it is truthy (and return it), at
    most ``timeout`` seconds, a limit generous enough for a loaded machine; past it the test fails
    saying what did not happen. Nothing is asserted about how long it took."""
    deadline = _time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if _time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen in {timeout:g} s")
        _time.sleep(every)


async def until_async(
    condition: Callable[[], T], timeout: float, what: str = "the condition", every: float = 0.01
) -> T:
    """:func:`until` for a test that runs on an event loop: between checks it awaits
    ``asyncio.sleep``, so the loop (and what runs on it, a solver pool say) goes on meanwhile."""
    import asyncio

    deadline = _time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if _time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen in {timeout:g} s")
        await asyncio.sleep(every)
