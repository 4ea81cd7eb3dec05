"""The solver pool's waiting line: tickets, their estimates, and the rules of admission and order.

:meth:`SolvePool.submit <puzzlezero.web.pool.SolvePool.submit>` admits a job as a :class:`Ticket`.
At most ``workers`` tickets run; the others wait in the :class:`WaitingLine`, at most ``queue`` of
them, and a job beyond that is refused at once (:class:`QueueFullError`, HTTP 429, with the time
until a place frees). Each client (the API keys them by browser key or address) may have ``client_waiting``
tickets waiting (one more: :class:`ClientLimitError`, 429) and ``client_running`` running; a free
worker takes the first waiting ticket whose client is under its running limit, so one client's
flood of jobs waits behind itself while other clients pass (and, when no other client waits,
takes a free worker anyway: no worker idles while tickets wait). A ticket's wall-clock budget starts
when a worker takes it, never while it waits, and the solver's own ``time_limit`` starts inside
the worker, so a job is never answered 504 because it waited. :meth:`WaitingLine.estimate` tells a
waiting ticket its place and expected wait from the measured durations of recent solves
(:mod:`puzzlezero.web.wait_estimate`).

A running solve's reported solutions are kept on its ticket (:attr:`Ticket.improvements`, at most
:data:`MAX_IMPROVEMENTS`), so a polled job shows its first solution long before its answer.

The errors a ticket can end with are here too: the line's refusals, :class:`SolveTimeoutError` (its
job overran its budget), :class:`WorkerCrashedError` (its worker died) and its kind
:class:`NoWorkerError` (no worker runs: starting one failed, or they keep crashing; HTTP 503).
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from collections import deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from puzzlezero.web.wait_estimate import RecentDurations, start_times

if TYPE_CHECKING:
    from puzzlezero.web.config import ServerConfig
    from puzzlezero.web.worker import SolveJob

__all__ = [
    "MAX_IMPROVEMENTS",
    "ClientLimitError",
    "Estimate",
    "NoWorkerError",
    "QueueFullError",
    "SolveTimeoutError",
    "Ticket",
    "WaitingLine",
    "WorkerCrashedError",
]

#: improvements a ticket keeps while its solve runs: the first ones, and the newest in the last place
MAX_IMPROVEMENTS = 32


class QueueFullError(Exception):
    """Every worker is busy and the waiting line is full; ``retry_after``: whole seconds until a
    place in the line is expected to free (at least 1)."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ClientLimitError(QueueFullError):
    """This client already has as many solves waiting as one client may (``client_waiting``)."""


class SolveTimeoutError(Exception):
    """A solve ran past its time limit plus the server's grace period."""


class WorkerCrashedError(Exception):
    """A worker process died (killed, out of memory) during a job, or no worker can start."""


class NoWorkerError(WorkerCrashedError):
    """No worker process is running or starting: starting one failed, or they crashed too often,
    and the pool waits before it tries again. The message says why; ``retry_after``: whole seconds
    until the next try (at least 1)."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(eq=False)
class Ticket:
    """One admitted job: waiting in line, running on a worker, or ended.

    ``outcome`` resolves to :func:`~puzzlezero.web.worker.run_job`'s dict, or fails with
    :class:`SolveTimeoutError`, :class:`WorkerCrashedError` or a server bug's exception; it is
    cancelled when the ticket is cancelled (:meth:`SolvePool.cancel
    <puzzlezero.web.pool.SolvePool.cancel>`). ``client``: who asked (the API uses the peer address;
    ``""`` is no client and has no per-client limits). Times are ``time.monotonic()`` seconds.
    """

    job: SolveJob
    wall_limit: float
    outcome: asyncio.Future[dict[str, Any]]
    client: str = ""
    id: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    # read through this module's ``time`` when the ticket is made (a test may put a fake clock there)
    submitted: float = field(default_factory=lambda: time.monotonic())
    started: float | None = None
    """When a worker took it (``None`` while it waits)."""
    worker_pid: int | None = None
    """The process id of the worker that took it (``None`` while it waits, and for threads)."""
    ended: float | None = None
    """When its outcome was settled (answered, overrun, failed or cancelled)."""
    improvements: list[dict[str, Any]] = field(default_factory=list)
    """The solutions its running solve has reported so far, in order (``Improvement.to_json()``
    plus ``notation``): the first, then each shorter one; at most :data:`MAX_IMPROVEMENTS` (the
    newest replaces the last kept)."""

    @property
    def time_limit(self) -> float:
        """The seconds the solver may search (its job's ``time_limit``; else the wall limit)."""
        limit = self.job.time_limit
        return self.wall_limit if limit is None else limit

    @property
    def status(self) -> str:
        """``"queued"``, ``"running"``, ``"cancelled"`` or ``"ended"`` (its outcome is settled)."""
        if self.outcome.cancelled():
            return "cancelled"
        if self.outcome.done():
            return "ended"
        return "queued" if self.started is None else "running"

    def add_improvement(self, improvement: dict[str, Any]) -> None:
        """Keep one more solution its running solve reported: appended while fewer than
        :data:`MAX_IMPROVEMENTS` are kept, else in place of the last kept one."""
        kept = self.improvements
        if len(kept) < MAX_IMPROVEMENTS:
            kept.append(improvement)
        else:
            kept[-1] = improvement

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


class WaitingLine:
    """The tickets waiting for a worker, in the order they came, with the rules that admit one
    (the line's bound ``queue``, each client's ``client_waiting``), the rule that picks the next
    to run (each client's ``client_running``) and the expected start of each.

    It holds only the waiting tickets. Its methods that count the running ones get them from the
    supervisor (``running``, in the order they started), with the time (``now``,
    ``time.monotonic()`` seconds). Use from one event loop.
    """

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.durations = RecentDurations()
        """How long recent solves held a worker, per puzzle: what the estimates come from."""
        self._tickets: deque[Ticket] = deque()

    def __len__(self) -> int:
        return len(self._tickets)

    def __contains__(self, ticket: object) -> bool:
        return ticket in self._tickets

    def append(self, ticket: Ticket) -> None:
        """Put ``ticket`` at the end of the line."""
        self._tickets.append(ticket)

    def remove(self, ticket: Ticket) -> None:
        """Take ``ticket`` out of the line (it starts, or it was cancelled)."""
        self._tickets.remove(ticket)

    def popleft(self) -> Ticket:
        """Take the first ticket out of the line."""
        return self._tickets.popleft()

    def admit(self, client: str, running: Collection[Ticket], idle: bool, now: float) -> None:
        """Raise :class:`QueueFullError` when the line is full and no worker is ``idle``, or
        :class:`ClientLimitError` when ``client`` has ``client_waiting`` tickets waiting; each
        says when a place is expected to free. ``running``: the running tickets."""
        waiting = len(self._tickets)
        if waiting >= self.config.queue and not idle:
            wait = self.start_times(now, 1, running)[0] if self._tickets else 0.0
            retry = max(1, math.ceil(wait))
            raise QueueFullError(
                f"the server is busy: {_count(len(running), 'solve')} running and {waiting} waiting, "
                f"and the line holds at most {self.config.queue}; try again in about {retry} s",
                retry,
            )
        limit = self.config.client_waiting
        if client and limit:
            mine = [i for i, t in enumerate(self._tickets) if t.client == client]
            if len(mine) >= limit:
                wait = self.start_times(now, mine[0] + 1, running)[-1]
                retry = max(1, math.ceil(wait))
                raise ClientLimitError(
                    f"you already have {_count(len(mine), 'solve')} waiting, the most one client may have "
                    f"waiting (client_waiting {limit}, serve --client-waiting); wait for one to start "
                    f"(about {retry} s) or cancel one",
                    retry,
                )

    def next(self, running: Iterable[Ticket]) -> Ticket | None:
        """The first waiting ticket whose client is under its running limit; when every waiting
        ticket's client is at its limit, the first ticket (a free worker never idles while
        tickets wait: the limit orders the line, it does not hold work back)."""
        if not self._tickets:
            return None
        limit = self.config.client_running
        if not limit:
            return self._tickets[0]
        busy: dict[str, int] = {}
        for t in running:
            busy[t.client] = busy.get(t.client, 0) + 1
        eligible = (t for t in self._tickets if not t.client or busy.get(t.client, 0) < limit)
        return next(eligible, self._tickets[0])

    def estimate(self, ticket: Ticket, running: Iterable[Ticket], now: float) -> Estimate:
        """Its place in line and expected seconds to start and to answer (see :class:`Estimate`)."""
        expected = self.durations.expected(ticket.job.puzzle, ticket.time_limit)
        recent = self.durations.count(ticket.job.puzzle)
        status = ticket.status
        if status == "running":
            assert ticket.started is not None
            return Estimate(None, 0.0, max(0.0, expected - (now - ticket.started)), recent)
        if status != "queued":
            return Estimate(None, 0.0, 0.0, recent)
        position = self._tickets.index(ticket) + 1
        start = self.start_times(now, position, running)[-1]
        return Estimate(position, start, start + expected, recent)

    def start_times(self, now: float, count: int, running: Iterable[Ticket]) -> list[float]:
        """Expected seconds until each of the first ``count`` tickets in line starts."""
        free_at = [0.0] * self.config.workers
        for i, t in enumerate(list(running)[: self.config.workers]):
            assert t.started is not None
            free_at[i] = self.durations.expected(t.job.puzzle, t.time_limit) - (now - t.started)
        ahead = [self.durations.expected(t.job.puzzle, t.time_limit) for t in list(self._tickets)[:count]]
        return start_times(free_at, ahead)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
