"""Solving off the event loop: a pool of solver workers behind a bounded first-come-first-served line.

Why processes: batch weighted A* spends much of its time in Python (heap pops, dictionary
look-ups of visited states, bookkeeping between network calls). Those hold the GIL, so solver
threads would take turns on one core; torch only releases the GIL inside its kernels. Each worker
process therefore runs whole searches, loads a network once (the solver caches it per process) and
uses ``torch.set_num_threads(threads_per_worker)`` so that workers do not oversubscribe the cores.
The ``spawn`` start method keeps the children free of the parent's threads and locks. A thread pool
is available for tests and fakes (``executor="thread"``).

The line: :meth:`SolvePool.submit` admits a job as a :class:`Ticket`. At most ``workers`` tickets
run; the others wait in submission order (FIFO), at most ``queue`` of them, and a job beyond that
is refused at once (:class:`QueueFullError`, HTTP 429, with the time until a place frees). A
ticket's wall-clock budget (``wall_limit``) starts when a worker takes it, never while it waits,
and the solver's own ``time_limit`` starts inside the worker, so a job is never answered 504
because it waited. A running job that overruns its budget is answered with
:class:`SolveTimeoutError` (HTTP 504) but keeps its worker until it really ends, so the pool is
never oversubscribed. :meth:`SolvePool.estimate` tells a waiting ticket its place and expected wait
from the measured durations of recent solves (:mod:`puzzlezero.web.wait_estimate`).

Admission and dispatch happen on the event loop (the executor's completions come back to it as
callbacks), so the line and the counters need no lock.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import secrets
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.web.config import ServerConfig
from puzzlezero.web.wait_estimate import RecentDurations, start_times

__all__ = [
    "Estimate",
    "QueueFullError",
    "SolveJob",
    "SolvePool",
    "SolveTimeoutError",
    "Ticket",
    "WorkerCrashedError",
    "run_job",
]

log = logging.getLogger("puzzlezero.web")

#: ``solve(puzzle, state, **options) -> SolveResult``-shaped callable (must pickle for processes)
SolveFn = Callable[..., Any]


class QueueFullError(Exception):
    """Every worker is busy and the waiting line is full; ``retry_after``: whole seconds until a
    place in the line is expected to free (at least 1)."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


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
    from puzzlezero.solver import SEARCHES, get_heuristic, resolve_entry, resolve_options

    for name, model in warm:
        try:
            p = make(name)
            opts = resolve_options(p)  # the heuristic of the puzzle's own search (Q*: Q head)
            if opts.heuristic is not None:  # cached per process by the solver
                get_heuristic(p, opts.heuristic, model, SEARCHES[opts.search].heuristic_kind)
            if opts.fallback is not None:  # its tables (the cube's group table) load or build now
                spec = SEARCHES[opts.fallback]
                spec.run(resolve_entry(spec.entry, opts.fallback), p, p.goals(1), None, opts)
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
        from puzzlezero.solver import solve

        solve_fn = solve
    try:
        result = solve_fn(make(job.puzzle), job.state, **job.options)
    except PuzzleError as exc:
        return {"error": str(exc), "kind": type(exc).__name__}
    return {"ok": result.to_json()}


@dataclass(eq=False)
class Ticket:
    """One admitted solve: waiting in line, running on a worker, or ended.

    ``outcome`` resolves to :func:`run_job`'s dict, or fails with :class:`SolveTimeoutError`,
    :class:`WorkerCrashedError` or a server bug's exception; it is cancelled when the ticket leaves
    the line unrun (:meth:`SolvePool.cancel`). Times are ``time.monotonic()`` seconds.
    """

    job: SolveJob
    wall_limit: float
    outcome: asyncio.Future[dict[str, Any]]
    id: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None
    """When a worker took it (``None`` while it waits)."""
    ended: float | None = None
    """When its outcome was settled (answered, overrun, failed or cancelled)."""

    @property
    def time_limit(self) -> float:
        """The seconds the solver may search (the request's ``time_limit``; else the wall limit)."""
        return float(self.job.options.get("time_limit", self.wall_limit))

    @property
    def status(self) -> str:
        """``"queued"``, ``"running"``, ``"cancelled"`` or ``"ended"`` (its outcome is settled)."""
        if self.outcome.cancelled():
            return "cancelled"
        if self.outcome.done():
            return "ended"
        return "queued" if self.started is None else "running"

    def waited(self, now: float | None = None) -> float:
        """Seconds in line: until a worker took it, or until ``now`` while it still waits."""
        end = self.started if self.started is not None else (self.ended or now or time.monotonic())
        return max(0.0, end - self.submitted)


@dataclass(frozen=True)
class Estimate:
    """Where a ticket stands. ``position``: its place in line (1 = next to start; ``None`` once it
    runs or has ended); ``start_seconds``: expected seconds until a worker takes it (0 once it
    runs); ``answer_seconds``: expected seconds until its answer; ``recent_solves``: how many
    recent solves of its puzzle the durations come from (0: its time limit stood in for them)."""

    position: int | None
    start_seconds: float
    answer_seconds: float
    recent_solves: int


class SolvePool:
    """Worker pool with a bounded FIFO waiting line. Use from one event loop only.

    >>> ticket = pool.submit(SolveJob("cube3", state, {"time_limit": 20.0}), 35.0)   # doctest: +SKIP
    >>> pool.estimate(ticket)                                                         # doctest: +SKIP
    Estimate(position=7, start_seconds=61.2, answer_seconds=81.2, recent_solves=20)
    >>> out = await pool.result(ticket)                                               # doctest: +SKIP
    """

    def __init__(self, config: ServerConfig, solve_fn: SolveFn | None = None) -> None:
        self.config = config
        self.solve_fn = solve_fn
        self.completed = 0
        self.durations = RecentDurations()
        self._line: deque[Ticket] = deque()
        self._running: dict[Ticket, None] = {}  # holding a worker, in start order (overrun ones too)
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
        self._executor = self._make_executor()
        for _ in range(self.config.workers):  # spawn every worker now, not on the first request
            self._executor.submit(_ping)

    def close(self) -> None:
        """Stop the workers without waiting for running searches; waiting tickets are cancelled."""
        while self._line:
            self._line.popleft().outcome.cancel()
        for ticket in self._running:
            ticket.outcome.cancel()
        ex, self._executor = self._executor, None
        if ex is None:
            return
        procs = (
            list((getattr(ex, "_processes", None) or {}).values())
            if isinstance(ex, ProcessPoolExecutor)
            else []
        )
        ex.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + 3.0  # idle workers exit on the shutdown sentinel at once
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in procs:  # a search may run for a minute: do not let it outlive the server
            if p.is_alive():
                p.terminate()
                p.join(1.0)
        ex.shutdown(wait=True)  # join the executor's manager thread: it releases the queues' semaphores

    # ---- state ---------------------------------------------------------------------------------
    @property
    def running(self) -> int:
        """Workers busy (an overrun solve keeps its worker until it really ends)."""
        return len(self._running)

    @property
    def waiting(self) -> int:
        return len(self._line)

    def stats(self) -> dict[str, int]:
        return {
            "workers": self.config.workers,
            "queue": self.config.queue,
            "running": self.running,
            "waiting": self.waiting,
            "completed": self.completed,
        }

    def estimate(self, ticket: Ticket) -> Estimate:
        """Its place in line and expected seconds to start and to answer (see :class:`Estimate`)."""
        now = time.monotonic()
        expected = self.durations.expected(ticket.job.puzzle, ticket.time_limit)
        recent = self.durations.count(ticket.job.puzzle)
        status = ticket.status
        if status == "running":
            assert ticket.started is not None
            return Estimate(None, 0.0, max(0.0, expected - (now - ticket.started)), recent)
        if status != "queued":
            return Estimate(None, 0.0, 0.0, recent)
        position = self._line.index(ticket) + 1
        start = self._start_times(now, position)[-1]
        return Estimate(position, start, start + expected, recent)

    def _start_times(self, now: float, count: int) -> list[float]:
        """Expected seconds until each of the first ``count`` tickets in line starts."""
        free_at = [0.0] * self.config.workers
        for i, t in enumerate(list(self._running)[: self.config.workers]):
            assert t.started is not None
            free_at[i] = self.durations.expected(t.job.puzzle, t.time_limit) - (now - t.started)
        ahead = [self.durations.expected(t.job.puzzle, t.time_limit) for t in list(self._line)[:count]]
        return start_times(free_at, ahead)

    # ---- solving -------------------------------------------------------------------------------
    def submit(self, job: SolveJob, wall_limit: float) -> Ticket:
        """Admit ``job``: it starts at once on a free worker, else waits its turn in line.

        ``wall_limit``: seconds it may hold a worker before it is answered 504 (counted from when a
        worker takes it). Raises :class:`QueueFullError` at once when every worker is busy and
        ``queue`` tickets already wait.
        """
        if self._executor is None:
            raise RuntimeError("SolvePool.start() was not called")
        if self.running >= self.config.workers and self.waiting >= self.config.queue:
            wait = self._start_times(time.monotonic(), 1)[0] if self._line else 0.0
            retry = max(1, math.ceil(wait))
            raise QueueFullError(
                f"the server is busy: {_count(self.running, 'solve')} running and {self.waiting} waiting, "
                f"and the line holds at most {self.config.queue}; try again in about {retry} s",
                retry,
            )
        ticket = Ticket(job, float(wall_limit), asyncio.get_running_loop().create_future())
        ticket.outcome.add_done_callback(_retrieve)
        self._line.append(ticket)
        self._dispatch()
        return ticket

    async def result(self, ticket: Ticket) -> dict[str, Any]:
        """Wait for ``ticket``'s outcome; a caller that goes away while it waits gives up its place."""
        try:
            return await asyncio.shield(ticket.outcome)
        except asyncio.CancelledError:
            self.cancel(ticket)
            raise

    async def solve(self, job: SolveJob, wall_limit: float) -> dict[str, Any]:
        """:meth:`submit` then :meth:`result`."""
        return await self.result(self.submit(job, wall_limit))

    def cancel(self, ticket: Ticket) -> bool:
        """Take a waiting ticket out of the line (its outcome is cancelled); ``False`` when it
        already runs or has ended (a running search cannot be stopped early)."""
        try:
            self._line.remove(ticket)
        except ValueError:
            return False
        ticket.ended = time.monotonic()
        ticket.outcome.cancel()
        return True

    def _dispatch(self) -> None:
        """Hand waiting tickets, in order, to free workers."""
        while self._line and self.running < self.config.workers:
            self._start(self._line.popleft())

    def _start(self, ticket: Ticket) -> None:
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            assert self._executor is not None
            try:
                fut = loop.run_in_executor(self._executor, run_job, ticket.job, self.solve_fn)
                break
            except BrokenProcessPool:  # it broke while idle: rebuild once and try again
                if attempt:
                    self._settle(ticket, _crashed())
                    return
                self._rebuild()
        ticket.started = time.monotonic()
        self._running[ticket] = None
        timer = loop.call_later(ticket.wall_limit, self._overrun, ticket)
        fut.add_done_callback(lambda f: self._ran(ticket, f, timer))

    def _overrun(self, ticket: Ticket) -> None:
        self._settle(
            ticket,
            SolveTimeoutError(
                f"the solve did not finish within {ticket.wall_limit:.0f} s of solving "
                "(time in line not counted); try a smaller time_limit or max_nodes"
            ),
        )

    def _ran(self, ticket: Ticket, fut: asyncio.Future[Any], timer: asyncio.TimerHandle) -> None:
        timer.cancel()
        self._running.pop(ticket, None)
        self.completed += 1
        assert ticket.started is not None
        if fut.cancelled():
            self._settle(ticket, WorkerCrashedError("the server is shutting down"))
        elif isinstance(fut.exception(), BrokenProcessPool):
            self._rebuild()
            self._settle(ticket, _crashed())
        else:
            self.durations.record(ticket.job.puzzle, time.monotonic() - ticket.started)
            exc = fut.exception()
            self._settle(ticket, exc if exc is not None else fut.result())
        if self._executor is not None:
            self._dispatch()

    @staticmethod
    def _settle(ticket: Ticket, outcome: dict[str, Any] | BaseException) -> None:
        if ticket.outcome.done():  # already answered (overrun) or cancelled
            return
        ticket.ended = time.monotonic()
        if isinstance(outcome, BaseException):
            ticket.outcome.set_exception(outcome)
        else:
            ticket.outcome.set_result(outcome)

    def _rebuild(self) -> None:
        if isinstance(self._executor, ProcessPoolExecutor) and getattr(self._executor, "_broken", False):
            log.error("solver process pool broke; starting a new one")
            old, self._executor = self._executor, self._make_executor()
            old.shutdown(wait=False, cancel_futures=True)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _crashed() -> WorkerCrashedError:
    return WorkerCrashedError(
        "a solver worker died (out of memory?) and the pool was restarted; try again, perhaps with a smaller max_nodes"
    )


def _retrieve(fut: asyncio.Future[Any]) -> None:
    """Mark an outcome's exception as seen: nobody may ever ask for an abandoned job's result."""
    if not fut.cancelled() and fut.exception() is not None:
        log.debug("solve ended with %r", fut.exception())
