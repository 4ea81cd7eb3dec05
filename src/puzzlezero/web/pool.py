"""Supervision of the solver workers: :class:`SolvePool` starts them, hands them the waiting
line's tickets, reads their answers, and replaces the ones that die or overrun.

The pool starts its own worker processes (:func:`puzzlezero.web.worker.worker_main`, with the
``spawn`` start method), one pipe each, and knows which job each worker runs and its pid; threads
(``executor="thread"``) serve tests and fakes. A worker that dies (the OS killed it: out of
memory, SIGKILL) fails only its own job with :class:`~puzzlezero.web.line.WorkerCrashedError` (HTTP
503, naming the signal or exit code); the other workers' jobs finish and a new worker takes its
place. A running job that overruns its budget (``wall_limit``) is answered
:class:`~puzzlezero.web.line.SolveTimeoutError` (HTTP 504) at once; if its search has not ended
``overrun_margin`` seconds later (a runaway or frozen search), its worker is terminated (SIGTERM,
then SIGKILL: :mod:`puzzlezero.web.processes`) and replaced. A worker that cannot start (its
initializer fails) is reported and retried after ``respawn_backoff`` seconds, doubled after each
further failure, never in a loop; while no worker can run, :meth:`SolvePool.health` says so and
new solves are refused with 503.

The line (:mod:`puzzlezero.web.line`): :meth:`SolvePool.submit` admits a job as a ticket, which
waits in a :class:`~puzzlezero.web.line.WaitingLine` until a free worker takes it; that line's
rules decide admission, per-client limits, who goes next and the estimates. Admission and
dispatch happen on the event loop (each worker's messages come back to it through a reader
thread and ``call_soon_threadsafe``), so the line and the counters need no lock.

Progress: the ``("progress", seq, improvement)`` messages of a running solve are kept on its
ticket (:meth:`Ticket.add_improvement <puzzlezero.web.line.Ticket.add_improvement>`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

from puzzlezero.web.config import ServerConfig
from puzzlezero.web.line import Estimate, SolveTimeoutError, Ticket, WaitingLine, WorkerCrashedError
from puzzlezero.web.processes import exit_text, join, kill, terminate
from puzzlezero.web.wait_estimate import RecentDurations
from puzzlezero.web.worker import SolveFn, SolveJob, run_job, warm_options, worker_main

if TYPE_CHECKING:
    from puzzlezero.solver import SolveOptions

__all__ = ["KILL_AFTER", "MAX_BACKOFF", "SolvePool"]

log = logging.getLogger("puzzlezero.web")

#: seconds between SIGTERM and SIGKILL when the pool stops a worker
KILL_AFTER = 1.0
#: the longest wait before a worker that keeps failing to start is tried again
MAX_BACKOFF = 300.0


@dataclass(eq=False)
class _Worker:
    """One worker as the pool sees it: a process and its pipe (or a one-thread executor)."""

    process: BaseProcess | None = None
    conn: Connection | None = None
    thread: ThreadPoolExecutor | None = None
    """Thread mode: the executor the workers share (each worker stands for one of its threads)."""
    ready: bool = False
    """It finished starting up and takes jobs."""
    ticket: Ticket | None = None
    """The job it runs (an overrun one too, until it ends or is stopped)."""
    seq: int = 0
    timers: list[asyncio.TimerHandle] = field(default_factory=list)
    stopping: str | None = None
    """Why the pool is stopping it (``"overrun"``, ``"cancelled"``, ``"closing"``), else ``None``."""
    start_error: str | None = None
    alive: bool = True
    """Its process has not been seen to exit."""
    pid: int | None = None


class SolvePool:
    """Supervised workers with a bounded, per-client fair waiting line. Use from one event loop.

    >>> opts = resolve_options(make("cube3"), time_limit=20.0)                          # doctest: +SKIP
    >>> ticket = pool.submit(SolveJob("cube3", state, opts), 35.0, "10.0.0.7")          # doctest: +SKIP
    >>> pool.estimate(ticket)                                                         # doctest: +SKIP
    Estimate(position=7, start_seconds=61.2, answer_seconds=81.2, recent_solves=20)
    >>> out = await pool.result(ticket)                                               # doctest: +SKIP

    ``solve_fn`` replaces the workers' :func:`~puzzlezero.web.worker.solve_one` (tests; a
    picklable module-level function for processes);
    ``initializer`` runs in each worker process after its own start-up (a failure there means the
    worker cannot start).
    """

    def __init__(
        self,
        config: ServerConfig,
        solve_fn: SolveFn | None = None,
        initializer: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.solve_fn = solve_fn
        self.initializer = initializer
        self.completed = 0
        self.spawned = 0
        """Worker processes started so far (the first ``workers`` and every replacement)."""
        self.start_failures = 0
        """Worker start-ups that failed since the last one that succeeded (drives the backoff)."""
        self.last_error: str | None = None
        self._line = WaitingLine(config)
        self._running: dict[Ticket, _Worker] = {}  # holding a worker, in start order (overrun ones too)
        self._workers: list[_Worker] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._respawn: asyncio.TimerHandle | None = None
        self._respawn_at: float | None = None
        self._closed = False
        self._draining = False  # admission has ended (aclose)
        self._warmups: tuple[tuple[str, SolveOptions], ...] | None = None  # resolved at the first spawn

    # ---- life cycle ----------------------------------------------------------------------------
    def _warm(self) -> tuple[tuple[str, SolveOptions], ...]:
        """What each new worker loads before its first job
        (:func:`~puzzlezero.web.worker.warm_options`, resolved once for all the workers)."""
        if self.solve_fn is not None:  # a test double needs no networks
            return ()
        if self._warmups is None:
            self._warmups = warm_options(self.config)
        return self._warmups

    def start(self) -> None:
        """Start the workers (processes start up in the background). Call on the event loop."""
        self._loop = asyncio.get_running_loop()
        self._closed = self._draining = False
        if self.config.executor == "thread":  # one shared executor: jobs start in the order handed out
            ex = ThreadPoolExecutor(self.config.workers, thread_name_prefix="pz-solve")
            self._workers = [_Worker(thread=ex, ready=True) for _ in range(self.config.workers)]
            return
        self._fill()

    def _process_mode(self) -> bool:
        return self.config.executor != "thread"

    def _spawn(self) -> None:
        """Start one worker process and the thread that reads its pipe."""
        ctx = multiprocessing.get_context("spawn")
        ours, theirs = ctx.Pipe()
        args = (
            theirs,
            self.config.threads_per_worker,
            self._warm(),
            self.config.worker_memory_limit,
            self.solve_fn,
            self.initializer,
            self.config.puzzle_definitions,
        )
        self.spawned += 1
        process = ctx.Process(target=worker_main, args=args, name=f"pz-solve-{self.spawned}")
        process.start()
        theirs.close()  # the worker holds the only other end: its death closes the pipe
        worker = _Worker(process=process, conn=ours, pid=process.pid)
        self._workers.append(worker)
        assert self._loop is not None
        worker.timers = [self._loop.call_later(self.config.start_timeout, self._start_overdue, worker)]
        threading.Thread(
            target=self._read, args=(worker,), name=f"pz-pipe-{process.pid}", daemon=True
        ).start()

    def _read(self, worker: _Worker) -> None:
        """Reader thread: hand the worker's messages, then its exit, to the event loop."""
        assert worker.conn is not None and worker.process is not None and self._loop is not None
        loop = self._loop
        while True:
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):
                break
            except Exception as exc:  # a message that does not unpickle: the worker is broken
                log.error("unreadable message from solver worker %s: %r", worker.pid, exc)
                with contextlib.suppress(OSError):
                    worker.process.kill()
                break
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(self._on_message, worker, message)
        worker.process.join()
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._on_exit, worker)

    def _fill(self) -> None:
        """Start workers up to ``workers``: at once after a success, else one probe after the
        backoff (1 s, 2 s, 4 s, ... at most :data:`MAX_BACKOFF`)."""
        if self._draining or not self._process_mode() or self._respawn is not None:
            return
        missing = self.config.workers - sum(1 for w in self._workers if w.stopping is None)
        if missing <= 0:
            return
        if self.start_failures == 0:
            for _ in range(missing):
                self._spawn()
            return
        if any(not w.ready and w.stopping is None for w in self._workers):  # a probe is starting
            return
        delay = min(MAX_BACKOFF, self.config.respawn_backoff * 2 ** (self.start_failures - 1))
        assert self._loop is not None
        self._respawn_at = time.monotonic() + delay
        self._respawn = self._loop.call_later(delay, self._probe)

    def _probe(self) -> None:
        self._respawn = self._respawn_at = None
        if not self._closed and sum(1 for w in self._workers if w.stopping is None) < self.config.workers:
            self._spawn()

    async def aclose(self, timeout: float | None = None) -> None:
        """Stop gracefully within ``timeout`` seconds (default ``shutdown_timeout``): admission
        ends and waiting tickets are cancelled at once; running jobs may end (and are answered)
        until shortly before the timeout; then :meth:`close` stops what still runs."""
        timeout = self.config.shutdown_timeout if timeout is None else float(timeout)
        deadline = time.monotonic() + timeout
        self._draining = True
        self._cancel_waiting()
        pending = [t.outcome for t in self._running if not t.outcome.done()]
        if pending:
            await asyncio.wait(pending, timeout=max(0.0, timeout - min(timeout / 2, 2 * KILL_AFTER)))
        self.close(max(0.0, deadline - time.monotonic()))

    def _cancel_waiting(self) -> None:
        while self._line:
            ticket = self._line.popleft()
            ticket.ended = time.monotonic()
            ticket.outcome.cancel()

    def close(self, timeout: float | None = None) -> None:
        """Stop at once, within ``timeout`` seconds (default ``shutdown_timeout``): waiting
        tickets are cancelled and running ones fail with
        :class:`~puzzlezero.web.line.WorkerCrashedError`; idle workers exit, busy ones are
        terminated (SIGTERM, then SIGKILL). :meth:`aclose` lets running jobs end first."""
        timeout = self.config.shutdown_timeout if timeout is None else float(timeout)
        deadline = time.monotonic() + timeout
        self._closed = self._draining = True
        if self._respawn is not None:
            self._respawn.cancel()
            self._respawn = self._respawn_at = None
        self._cancel_waiting()
        for ticket in list(self._running):
            self._settle(ticket, WorkerCrashedError("the server shut down before the solve ended"))
        workers, self._workers = self._workers, []
        for w in workers:
            for timer in w.timers:
                timer.cancel()
            w.stopping = w.stopping or "closing"
            if w.thread is not None:
                w.thread.shutdown(wait=False, cancel_futures=True)
            elif w.conn is not None and w.process is not None:
                if w.ticket is None and w.ready:
                    with contextlib.suppress(OSError, ValueError):
                        w.conn.send(None)  # idle: it exits now
                else:  # busy or still starting: a search is not worth waiting for
                    terminate(w.process)
        procs = [w.process for w in workers if w.process is not None]
        join(procs, deadline - min(timeout / 2, KILL_AFTER))  # keep time to kill the rest
        for p in procs:
            terminate(p)
        join(procs, deadline - min(timeout / 4, KILL_AFTER / 2))
        for p in procs:
            kill(p)
        join(procs, deadline + KILL_AFTER)
        for w in workers:
            if w.conn is not None:
                w.conn.close()
        self._running.clear()

    # ---- state ---------------------------------------------------------------------------------
    @property
    def running(self) -> int:
        """Workers busy (an overrun solve keeps its worker until it ends or is stopped)."""
        return len(self._running)

    @property
    def waiting(self) -> int:
        return len(self._line)

    @property
    def durations(self) -> RecentDurations:
        """How long recent solves held a worker, per puzzle: what the line's estimates come from."""
        return self._line.durations

    @durations.setter
    def durations(self, durations: RecentDurations) -> None:
        self._line.durations = durations

    def stats(self) -> dict[str, int]:
        return {
            "workers": self.config.workers,
            "queue": self.config.queue,
            "running": self.running,
            "waiting": self.waiting,
            "completed": self.completed,
        }

    def health(self) -> dict[str, Any]:
        """How the workers are: ``workers_alive`` (processes, starting ones too), ``ready``,
        ``busy``, ``overrun`` (past their wall limit, still holding a worker), ``waiting``,
        ``restarts`` (workers started to replace others), ``start_failures`` (in a row),
        ``last_error`` (the last start-up failure), ``retry_in`` (seconds until the next start-up
        attempt while backing off), ``pids`` and ``ok``: False when no worker can run a job (none
        started or starting without failures, every one stuck in an overrun, or closed)."""
        now = time.monotonic()
        live = [w for w in self._workers if w.alive and w.stopping is None]
        overrun = {t for t in self._running if t.started is not None and now - t.started > t.wall_limit}
        serving = [w for w in live if w.ready and w.ticket not in overrun]
        starting = [w for w in live if not w.ready]
        ok = (
            not self._closed
            and self._loop is not None
            and bool(serving or (starting and not self.start_failures))
        )
        return {
            "ok": ok,
            "workers": self.config.workers,
            "workers_alive": sum(1 for w in self._workers if w.alive),
            "ready": sum(1 for w in live if w.ready),
            "busy": len(self._running),
            "overrun": len(overrun),
            "waiting": len(self._line),
            "restarts": max(0, self.spawned - self.config.workers),
            "start_failures": self.start_failures,
            "last_error": self.last_error,
            "retry_in": None if self._respawn_at is None else round(max(0.0, self._respawn_at - now), 1),
            "pids": [w.pid for w in self._workers if w.pid is not None and w.alive],
        }

    def estimate(self, ticket: Ticket) -> Estimate:
        """Its place in line and expected seconds to start and to answer (see
        :class:`~puzzlezero.web.line.Estimate`)."""
        return self._line.estimate(ticket, self._running, time.monotonic())

    # ---- admission -----------------------------------------------------------------------------
    def _cannot_run(self) -> str | None:
        """Why no worker can run a job (start-ups keep failing and none is starting), else ``None``."""
        if not self.start_failures or any(w.stopping is None and w.alive for w in self._workers):
            return None
        retry = (
            ""
            if self._respawn_at is None
            else f"; trying again in {max(0.0, self._respawn_at - time.monotonic()):.0f} s"
        )
        return f"no solver worker can start ({self.last_error}){retry}"

    def admit(self, client: str = "") -> None:
        """Raise what :meth:`submit` would raise for ``client``, without submitting: cheap, for
        checking before a request's body is parsed. :class:`~puzzlezero.web.line.QueueFullError`
        (the line is full), :class:`~puzzlezero.web.line.ClientLimitError` (this client has
        ``client_waiting`` waiting) or :class:`~puzzlezero.web.line.WorkerCrashedError` (no worker
        can start)."""
        if self._loop is None or self._closed:
            raise RuntimeError("SolvePool.start() was not called, or the pool is closed")
        if self._draining:
            raise WorkerCrashedError("the server is shutting down")
        broken = self._cannot_run()
        if broken is not None:
            raise WorkerCrashedError(broken)
        idle = any(w.ready and w.ticket is None and w.stopping is None for w in self._workers)
        self._line.admit(client, self._running, idle, time.monotonic())

    def submit(self, job: SolveJob, wall_limit: float, client: str = "") -> Ticket:
        """Admit ``job`` for ``client``: it starts at once on a free worker, else waits in line.

        ``wall_limit``: seconds it may hold a worker before it is answered 504 (counted from when a
        worker takes it). Raises at once what :meth:`admit` raises.
        """
        self.admit(client)
        assert self._loop is not None
        ticket = Ticket(job, float(wall_limit), self._loop.create_future(), client)
        ticket.outcome.add_done_callback(_retrieve)
        self._line.append(ticket)
        self._dispatch()
        return ticket

    async def result(self, ticket: Ticket) -> dict[str, Any]:
        """Wait for ``ticket``'s outcome; a caller that goes away gives up its place (a running
        job's worker is stopped and replaced)."""
        try:
            return await asyncio.shield(ticket.outcome)
        except asyncio.CancelledError:
            self.cancel(ticket)
            raise

    async def solve(self, job: SolveJob, wall_limit: float, client: str = "") -> dict[str, Any]:
        """:meth:`submit` then :meth:`result`."""
        return await self.result(self.submit(job, wall_limit, client))

    def cancel(self, ticket: Ticket) -> bool:
        """Cancel a ticket: a waiting one leaves the line; a running one's worker process is
        terminated and replaced (a worker thread cannot be stopped: ``False``, as for one that
        has ended)."""
        if ticket in self._line:
            self._line.remove(ticket)
            ticket.ended = time.monotonic()
            ticket.outcome.cancel()
            return True
        worker = self._running.get(ticket)
        if worker is None or ticket.outcome.done() or worker.process is None:
            return False
        ticket.ended = time.monotonic()
        ticket.outcome.cancel()
        self._stop(worker, "cancelled")
        return True

    # ---- dispatch and supervision --------------------------------------------------------------
    def _dispatch(self) -> None:
        """Hand waiting tickets to free workers."""
        if self._closed:
            return
        for worker in self._workers:
            if not self._line:
                return
            if worker.ready and worker.ticket is None and worker.stopping is None:
                ticket = self._line.next(self._running)
                if ticket is None:
                    return
                self._line.remove(ticket)
                self._start(worker, ticket)

    def _start(self, worker: _Worker, ticket: Ticket) -> None:
        assert self._loop is not None
        ticket.started = time.monotonic()
        ticket.worker_pid = worker.pid
        worker.ticket = ticket
        worker.seq += 1
        self._running[ticket] = worker
        worker.timers = [self._loop.call_later(ticket.wall_limit, self._overrun, worker, ticket)]
        if worker.thread is not None:
            seq = worker.seq
            loop = self._loop

            def progress(data: dict[str, Any]) -> None:
                loop.call_soon_threadsafe(self._on_message, worker, ("progress", seq, data))

            fut = loop.run_in_executor(worker.thread, run_job, ticket.job, self.solve_fn, progress)
            fut.add_done_callback(lambda f: self._thread_done(worker, seq, f))
            return
        assert worker.conn is not None
        try:
            worker.conn.send((worker.seq, ticket.job))
        except Exception as exc:  # its pipe broke: it died between jobs (its exit is on the way)
            log.error("could not hand a job to solver worker %s: %r", worker.pid, exc)
            self._stop(worker, None)

    def _thread_done(self, worker: _Worker, seq: int, fut: asyncio.Future[Any]) -> None:
        if fut.cancelled():
            return
        exc = fut.exception()
        self._on_message(worker, ("failed", seq, exc) if exc is not None else ("done", seq, fut.result()))

    def _on_message(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "ready":
            worker.ready = True
            for timer in worker.timers:  # the start-up timeout
                timer.cancel()
            worker.timers = []
            self.start_failures = 0
            log.info("solver worker %s ready", message[1])
            self._fill()
            self._dispatch()
        elif kind == "start_failed":
            worker.start_error = message[1]
        elif kind == "progress" and message[1] == worker.seq and worker.ticket is not None:
            worker.ticket.add_improvement(message[2])
        elif kind in ("done", "failed") and message[1] == worker.seq and worker.ticket is not None:
            ticket = self._release(worker)
            if kind == "done":
                assert ticket.started is not None
                self.durations.record(ticket.job.puzzle, time.monotonic() - ticket.started)
                self._settle(ticket, message[2])
            else:
                err = message[2]
                self._settle(ticket, err if isinstance(err, BaseException) else RuntimeError(err))
            self._dispatch()

    def _release(self, worker: _Worker) -> Ticket:
        """Free ``worker`` of its ticket (its job ended one way or another)."""
        ticket = worker.ticket
        assert ticket is not None
        worker.ticket = None
        for timer in worker.timers:
            timer.cancel()
        worker.timers = []
        self._running.pop(ticket, None)
        self.completed += 1
        return ticket

    def _on_exit(self, worker: _Worker) -> None:
        """A worker process ended: fail its job (unless the pool stopped it for that job), note a
        start-up failure, and start a replacement."""
        worker.alive = False
        if worker in self._workers:
            self._workers.remove(worker)
        if self._closed:
            return
        assert worker.process is not None and worker.conn is not None
        how = exit_text(worker.process.exitcode)
        worker.conn.close()  # its reader thread has ended: free the pipe and the process handle
        with contextlib.suppress(ValueError):
            worker.process.close()
        if worker.ticket is not None:
            ticket = self._release(worker)
            if worker.stopping is None:
                log.error("solver worker %s died (%s) during a %s", worker.pid, how, ticket.job.kind)
                self._settle(
                    ticket,
                    WorkerCrashedError(
                        f"the solver worker running this {ticket.job.kind} died ({how}; out of memory?) and "
                        "was replaced; try again, perhaps with a smaller max_nodes"
                    ),
                )
        elif not worker.ready:
            self.start_failures += 1
            self.last_error = worker.start_error or f"it exited ({how}) before it was ready"
            log.error("a solver worker could not start: %s", self.last_error)
            broken = self._cannot_run()
            if broken is not None:  # nobody can serve the line: tell the waiting now
                while self._line:
                    self._settle(self._line.popleft(), WorkerCrashedError(broken))
        elif worker.stopping is None:
            log.error("idle solver worker %s died (%s)", worker.pid, how)
        self._fill()
        self._dispatch()

    def _start_overdue(self, worker: _Worker) -> None:
        """Not ready ``start_timeout`` seconds after it was started (a hung or frozen start-up):
        stop it; its exit counts as a failed start (:meth:`_on_exit`)."""
        if worker.ready or worker.stopping is not None or not worker.alive or self._closed:
            return
        worker.start_error = f"it was not ready {self.config.start_timeout:.0f} s after it was started"
        log.error("solver worker %s: %s; stopping it", worker.pid, worker.start_error)
        self._stop(worker, "start timeout", replace_now=False)

    def _overrun(self, worker: _Worker, ticket: Ticket) -> None:
        """Past its wall limit: answer 504 now; stop its worker if it still runs after the margin."""
        if worker.ticket is not ticket:
            return
        self._settle(
            ticket,
            SolveTimeoutError(
                f"the {ticket.job.kind} did not finish within {ticket.wall_limit:.0f} s of solving "
                "(time in line not counted); try a smaller time_limit or max_nodes"
            ),
        )
        assert self._loop is not None
        worker.timers.append(self._loop.call_later(self.config.overrun_margin, self._overran, worker, ticket))

    def _overran(self, worker: _Worker, ticket: Ticket) -> None:
        if worker.ticket is not ticket:
            return
        if worker.process is None:
            log.warning(
                "a solve thread overran its limit by %.0f s and cannot be stopped", self.config.overrun_margin
            )
            return
        log.error(
            "solver worker %s still runs a %s %.0f s past its limit of %.0f s: stopping it",
            worker.pid, ticket.job.kind, self.config.overrun_margin, ticket.wall_limit,
        )  # fmt: skip
        self._stop(worker, "overrun")

    def _stop(self, worker: _Worker, why: str | None, replace_now: bool = True) -> None:
        """Terminate a worker process (SIGTERM, then SIGKILL after :data:`KILL_AFTER` seconds);
        its exit (:meth:`_on_exit`) frees its place and starts a replacement. ``why``: the reason
        its job already has an outcome (``None``: the job fails as a crash when the exit is seen).
        ``replace_now``: start the replacement at once instead of when the exit is seen (a failed
        start-up waits for its exit, which counts the failure and sets the backoff)."""
        worker.stopping = why
        worker.ready = False
        assert worker.process is not None and self._loop is not None
        terminate(worker.process)
        self._loop.call_later(KILL_AFTER, kill, worker.process)
        if replace_now:
            self._fill()

    @staticmethod
    def _settle(ticket: Ticket, outcome: dict[str, Any] | BaseException) -> None:
        if ticket.outcome.done():  # already answered (overrun) or cancelled
            return
        ticket.ended = time.monotonic()
        if isinstance(outcome, BaseException):
            ticket.outcome.set_exception(outcome)
        else:
            ticket.outcome.set_result(outcome)


def _retrieve(fut: asyncio.Future[Any]) -> None:
    """Mark an outcome's exception as seen: nobody may ever ask for an abandoned job's result."""
    if not fut.cancelled() and fut.exception() is not None:
        log.debug("solve ended with %r", fut.exception())
