"""Solutions found in worker threads, passed on in the caller's thread: searches that run side by
side (a state's images, :mod:`.images`; an ensemble's members, :mod:`.ensemble`) put what they find
in a queue, and the thread that started them calls the caller's hook with it while it waits, so
that a caller's progress display or web job is only ever called from its own thread."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["pass_on"]


def pass_on(
    solutions: queue.SimpleQueue[tuple[Any, ...]],
    pool: list[threading.Thread],
    on_solution: Callable[..., None] | None,
    on_failure: Callable[[], None] | None = None,
) -> BaseException | None:
    """Wait for the threads of ``pool``, calling ``on_solution(*item)`` with each item they put in
    ``solutions`` meanwhile (in order). Returns the error ``on_solution`` raised, if it did: no
    item is passed on after it, and ``on_failure`` (if given) is called at once, so that the
    threads can be told to end."""
    failed: BaseException | None = None
    while True:
        alive = any(t.is_alive() for t in pool)
        try:
            got = solutions.get(timeout=0.05) if alive else solutions.get_nowait()
        except queue.Empty:
            if alive:
                continue
            return failed
        if on_solution is not None and failed is None:
            try:
                on_solution(*got)
            except BaseException as exc:  # noqa: BLE001  raised by the caller once the threads end
                failed = exc
                if on_failure is not None:
                    on_failure()
