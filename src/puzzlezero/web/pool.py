"""Solving off the event loop: a bounded pool of solver workers.

Why processes: batch weighted A* spends much of its time in Python (heap pops, dictionary
look-ups of visited states, bookkeeping between network calls). Those hold the GIL, so solver
threads would take turns on one core; torch only releases the GIL inside its kernels. Each worker
process therefore runs whole searches, loads a network once (the solver caches it per process) and
uses ``torch.set_num_threads(threads_per_worker)`` so that workers do not oversubscribe the cores.
The ``spawn`` start method keeps the children free of the parent's threads and locks. A thread pool
is available for tests and fakes (``executor="thread"``).

Admission control happens on the event loop, so the counters need no lock: at most ``workers``
jobs run, at most ``queue`` more wait for a slot, and anything beyond that is refused at once
(:class:`QueueFullError`, HTTP 429). A running job that overruns its wall-clock budget is answered
with :class:`SolveTimeoutError` (HTTP 504) but keeps its slot until it really ends, so the pool is
never oversubscribed.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.web.config import ServerConfig

__all__ = ["SolveJob", "SolvePool", "QueueFullError", "SolveTimeoutError", "WorkerCrashedError", "run_job"]

log = logging.getLogger("puzzlezero.web")

#: ``solve(puzzle, state, **options) -> SolveResult``-shaped callable (must pickle for processes)
SolveFn = Callable[..., Any]


class QueueFullError(Exception):
    """Every worker is busy and the waiting line is full."""


class SolveTimeoutError(Exception):
    """A solve ran past its time limit plus the server's grace period."""


class WorkerCrashedError(Exception):
    """A worker process died (killed, out of memory); the pool has been rebuilt."""


@dataclass(frozen=True)
class SolveJob:
    """One solve: a registered puzzle name, one parsed state ``[*state_shape]`` and solver keywords."""

    puzzle: str
    state: np.ndarray
    options: dict[str, Any] = field(default_factory=dict)


def _init_worker(threads: int, warm: tuple[tuple[str, str | None], ...] = ()) -> None:
    """Process initializer: pin torch's thread count, pay the heavy imports and load the networks
    of ``warm`` (``(puzzle, model folder or None = shipped)``) before the first request."""
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:  # pragma: no cover - torch is a core dependency
        pass
    from puzzlezero.registry import make
    from puzzlezero.solver import SEARCHES, get_heuristic, resolve_options

    for name, model in warm:
        try:
            opts = resolve_options(make(name))  # the heuristic of the puzzle's own search (Q*: Q head)
            if opts.heuristic is not None:  # cached per process by the solver
                get_heuristic(make(name), opts.heuristic, model, SEARCHES[opts.search].heuristic_kind)
        except PuzzleError as exc:  # a request will report it; the worker still serves others
            log.warning("could not preload the %s model: %s", name, exc)


def _ping() -> float:
    return time.time()


def run_job(job: SolveJob, solve_fn: SolveFn | None = None) -> dict[str, Any]:
    """Run one solve in a worker and return plain data (never raises for bad input).

    Returns ``{"ok": SolveResult.to_json()}`` or ``{"error": message, "kind": exception class}``
    for a :class:`PuzzleError`; any other exception propagates (a server bug, answered 500).
    """
    from puzzlezero.registry import make

    if solve_fn is None:
        from puzzlezero.solver import solve as solve_fn
    try:
        result = solve_fn(make(job.puzzle), job.state, **job.options)
    except PuzzleError as exc:
        return {"error": str(exc), "kind": type(exc).__name__}
    return {"ok": result.to_json()}


class SolvePool:
    """A worker pool with a bounded waiting line. Use from one event loop only."""

    def __init__(self, config: ServerConfig, solve_fn: SolveFn | None = None) -> None:
        self.config = config
        self.solve_fn = solve_fn
        self.capacity = config.workers + config.queue
        self.pending = 0  # running + waiting
        self.running = 0
        self.completed = 0
        self._slots: asyncio.Semaphore | None = None
        self._executor: Executor | None = None

    # ---- life cycle ----------------------------------------------------------------------------
    def _make_executor(self) -> Executor:
        if self.config.executor == "thread":
            return ThreadPoolExecutor(self.config.workers, thread_name_prefix="pz-solve")
        return ProcessPoolExecutor(
            self.config.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(self.config.threads_per_worker, self._warm()),
        )

    def _warm(self) -> tuple[tuple[str, str | None], ...]:
        if self.solve_fn is not None:  # a test double needs no networks
            return ()
        from puzzlezero.registry import names

        return tuple(self.config.served_models(names()))

    def start(self) -> None:
        """Create the executor and start the worker processes in the background."""
        self._slots = asyncio.Semaphore(self.config.workers)
        self._executor = self._make_executor()
        for _ in range(self.config.workers):  # spawn every worker now, not on the first request
            self._executor.submit(_ping)

    def close(self) -> None:
        """Stop the workers without waiting for running searches."""
        ex, self._executor = self._executor, None
        if ex is None:
            return
        procs = list((getattr(ex, "_processes", None) or {}).values()) if isinstance(ex, ProcessPoolExecutor) else []
        ex.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + 3.0  # idle workers exit on the shutdown sentinel at once
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in procs:  # a search may run for a minute: do not let it outlive the server
            if p.is_alive():
                p.terminate()
                p.join(1.0)
        ex.shutdown(wait=True)  # join the executor's manager thread: it releases the queues' semaphores

    @property
    def waiting(self) -> int:
        return self.pending - self.running

    def stats(self) -> dict[str, int]:
        return {
            "workers": self.config.workers,
            "queue": self.config.queue,
            "running": self.running,
            "waiting": self.waiting,
            "completed": self.completed,
        }

    # ---- solving -------------------------------------------------------------------------------
    async def solve(self, job: SolveJob, wall_limit: float) -> dict[str, Any]:
        """Run ``job`` on a worker; ``wall_limit`` seconds once it runs (waiting excluded).

        Raises :class:`QueueFullError` at once when ``workers + queue`` jobs are already admitted.
        """
        if self._executor is None or self._slots is None:
            raise RuntimeError("SolvePool.start() was not called")
        if self.pending >= self.capacity:
            raise QueueFullError(
                f"the server is busy: {self.running} solves running and {self.waiting} waiting "
                f"(limit {self.capacity}); try again in a few seconds"
            )
        self.pending += 1
        handed_over = False
        try:
            await self._slots.acquire()
            try:
                fut = asyncio.get_running_loop().run_in_executor(self._executor, run_job, job, self.solve_fn)
            except BaseException:
                self._slots.release()
                raise
            self.running += 1
            fut.add_done_callback(self._job_done)
            handed_over = True
            try:
                return await asyncio.wait_for(asyncio.shield(fut), wall_limit)
            except TimeoutError:
                raise SolveTimeoutError(
                    f"the solve did not finish within {wall_limit:.0f} s; try a smaller time_limit or max_nodes"
                ) from None
            except BrokenProcessPool:
                self._rebuild()
                raise WorkerCrashedError(
                    "a solver worker died (out of memory?) and the pool was restarted; "
                    "try again, perhaps with a smaller max_nodes"
                ) from None
        finally:
            if not handed_over:
                self.pending -= 1

    def _job_done(self, fut: asyncio.Future[Any]) -> None:
        self.running -= 1
        self.pending -= 1
        self.completed += 1
        if self._slots is not None:
            self._slots.release()
        if not fut.cancelled() and fut.exception() is not None:  # retrieve it: no "never retrieved" noise
            log.debug("solve job ended with %r", fut.exception())

    def _rebuild(self) -> None:
        if isinstance(self._executor, ProcessPoolExecutor) and getattr(self._executor, "_broken", False):
            log.error("solver process pool broke; starting a new one")
            old, self._executor = self._executor, self._make_executor()
            old.shutdown(wait=False, cancel_futures=True)
