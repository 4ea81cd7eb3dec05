"""Solve jobs that a client polls: ``POST /api/jobs`` queues one, ``GET /api/jobs/{id}`` reports it.

A job wraps a :class:`~puzzlezero.web.line.Ticket` of the solver pool. While it waits the client
sees its place in line and the expected wait (:meth:`SolvePool.estimate
<puzzlezero.web.pool.SolvePool.estimate>`); when it ends, the answer (or the error, with the HTTP
status the blocking ``POST /api/solve`` would have given) is kept for ``result_ttl`` seconds,
and at most ``max_results`` ended jobs are kept at all (the oldest go first), so memory stays
bounded however many clients never come back. Jobs still waiting or running are bounded by the
pool (``workers + queue``), and a waiting job whose client has not polled it for ``idle_timeout``
seconds leaves the line (:meth:`JobStore.sweep`): a client that went away keeps no place.

While a solve runs, the job shows the solutions its worker has reported so far
(:attr:`Ticket.improvements <puzzlezero.web.line.Ticket.improvements>`: the first one, then each
shorter one), each checked by the job's ``check`` (the API replays it on the job's state), so a
client sees a first solution long before the answer.

Whatever a worker's outcome is, a job settles it: even a ``SystemExit`` or ``KeyboardInterrupt``
that comes back from a worker becomes a failed job (500), never an exception on the event loop.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from puzzlezero.web.errors import http_error
from puzzlezero.web.line import Ticket
from puzzlezero.web.pool import SolvePool

__all__ = ["Job", "JobStore"]

#: turns the pool's outcome dict into the response body of a solve (may raise, like the endpoint)
Finish = Callable[[dict[str, Any]], dict[str, Any]]
#: seconds on a monotonic clock (``time.monotonic``; tests pass a fake one)
Clock = Callable[[], float]
#: turns one reported improvement into what the client sees of it, or ``None`` to leave it out
Check = Callable[[dict[str, Any]], dict[str, Any] | None]


@dataclass(eq=False)
class Job:
    """A ticket, and once it has ended its ``result`` (a solve response) or ``error``
    (``{"status": HTTP status, "detail": message}``)."""

    ticket: Ticket
    finish: Finish
    polled: float = field(default_factory=time.monotonic)
    """When its client last asked for it (created, or ``GET /api/jobs/{id}``)."""
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    expires: float | None = None
    """Clock time after which the ended job is forgotten."""
    check: Check | None = None
    """Checks each improvement its solve reports (``None``: shown as reported)."""
    checked: list[tuple[dict[str, Any], dict[str, Any] | None]] = field(default_factory=list)
    """Each reported improvement beside what its check made of it (each is checked once)."""
    settled: bool = False
    """Its outcome has been turned into ``result`` or ``error`` (:meth:`JobStore.settle`)."""

    def improvements(self) -> list[dict[str, Any]]:
        """The solutions its solve has reported so far, checked (the ticket's list is bounded and
        the newest replaces its last entry: an entry is checked again when it is a new one)."""
        reported = self.ticket.improvements
        del self.checked[len(reported) :]
        for i, data in enumerate(reported):
            if i < len(self.checked) and self.checked[i][0] is data:
                continue
            entry = (data, data if self.check is None else self.check(data))
            if i < len(self.checked):
                self.checked[i] = entry
            else:
                self.checked.append(entry)
        return [shown for _, shown in self.checked if shown is not None]

    @property
    def status(self) -> str:
        """``"queued"``, ``"running"``, ``"done"``, ``"failed"`` or ``"cancelled"``."""
        status = self.ticket.status
        if status != "ended":
            return status
        if not self.settled:  # the outcome is in, its answer not made yet (JobStore.settle)
            return "running"
        return "done" if self.result is not None else "failed"


class JobStore:
    """The jobs of one app, by id. Use from the event loop only."""

    def __init__(
        self,
        pool: SolvePool,
        result_ttl: float,
        max_results: int,
        idle_timeout: float = 120.0,
        clock: Clock = time.monotonic,
    ) -> None:
        self.pool = pool
        self.result_ttl = float(result_ttl)
        self.max_results = int(max_results)
        self.idle_timeout = float(idle_timeout)
        self.clock = clock
        self._jobs: dict[str, Job] = {}
        self._ended: OrderedDict[str, None] = OrderedDict()  # ended job ids, oldest first

    def __len__(self) -> int:
        return len(self._jobs)

    def add(self, ticket: Ticket, finish: Finish, check: Check | None = None) -> Job:
        """Keep ``ticket`` as a job; ``finish`` makes its response body when it ends, ``check``
        what a client sees of each solution reported before that (``None`` leaves one out)."""
        self.purge()
        job = Job(ticket, finish, polled=self.clock(), check=check)
        self._jobs[ticket.id] = job
        ticket.outcome.add_done_callback(lambda _: self.settle(job))
        return job

    def get(self, job_id: str) -> Job | None:
        """The job, or ``None`` when the id is unknown or its result has expired. A job whose
        outcome is in is settled first: the outcome's callback runs on a later turn of the event
        loop, and a poll in between must see the answer, not a job ended without one."""
        self.purge()
        job = self._jobs.get(job_id)
        if job is not None and job.ticket.outcome.done():
            self.settle(job)
        return job

    def touch(self, job: Job) -> None:
        """Its client asked for it: a waiting job keeps its place for ``idle_timeout`` more."""
        job.polled = self.clock()

    def cancel(self, job: Job) -> bool:
        """Take a waiting job out of the line, or stop a running one's search (its worker process
        takes the next job); ``False`` when it has ended or runs on a worker thread, which cannot
        be stopped."""
        return self.pool.cancel(job.ticket)

    def sweep(self) -> int:
        """Take out of the line every waiting job not polled for ``idle_timeout`` seconds (its
        status becomes ``cancelled``, with an error saying why); returns how many left."""
        now = self.clock()
        idle = [
            job
            for job in self._jobs.values()
            if job.status == "queued" and now - job.polled > self.idle_timeout
        ]
        left = 0
        for job in idle:
            if self.pool.cancel(job.ticket):
                job.error = {
                    "status": 408,
                    "detail": f"left the line: its client did not poll it for {self.idle_timeout:.0f} s",
                }
                left += 1
        return left

    def view(self, job: Job) -> dict[str, Any]:
        """The body of ``GET /api/jobs/{id}`` (see :class:`~puzzlezero.web.schemas.JobResponse`)."""
        t = job.ticket
        now = time.monotonic()
        est = self.pool.estimate(t)
        live = job.status in ("queued", "running")
        return {
            "id": t.id,
            "status": job.status,
            "puzzle": t.job.puzzle,
            "position": est.position,
            "waiting": self.pool.waiting,
            "estimated_start_seconds": round(est.start_seconds, 1) if live else None,
            "estimated_seconds": round(est.answer_seconds, 1) if live else None,
            "recent_solves": est.recent_solves,
            "waited_seconds": round(t.waited(now), 3),
            "expires_in": None if job.expires is None else round(max(0.0, job.expires - self.clock()), 1),
            "improvements": job.improvements(),
            "result": job.result,
            "error": job.error,
        }

    def purge(self) -> None:
        """Forget ended jobs past their time, and the oldest beyond ``max_results``."""
        now = self.clock()
        while self._ended:
            oldest = next(iter(self._ended))
            job = self._jobs[oldest]
            if len(self._ended) <= self.max_results and job.expires is not None and job.expires > now:
                break
            del self._ended[oldest], self._jobs[oldest]

    def settle(self, job: Job) -> None:
        """Turn its ended ticket's outcome into ``result`` or ``error`` (once; later calls do
        nothing), and start the time it is kept."""
        if job.settled:
            return
        job.settled = True
        outcome = job.ticket.outcome
        if not outcome.cancelled():
            exc = outcome.exception()
            try:
                if exc is not None:
                    raise exc
                job.result = job.finish(outcome.result())
            except BaseException as err:  # noqa: BLE001 - a worker's SystemExit fails its job, not the server
                status, detail = http_error(err)  # the blocking endpoint's status and message for it
                job.error = {"status": status, "detail": detail}
        job.expires = self.clock() + self.result_ttl
        self._ended[job.ticket.id] = None
        self.purge()
