"""Supervision of the solver workers: :class:`SolvePool` starts them, hands them the waiting
line's tickets, reads their answers, and replaces the ones that die or overrun.

The pool starts its own worker processes (:func:`puzzlezero.web.worker.worker_main`, with the
``spawn`` start method), one pipe and one shared cancel flag each, and knows which job each worker
runs and its pid; threads (``executor="thread"``) serve tests and fakes. A worker that dies (the OS
killed it: out of memory, SIGKILL) fails only its own job with
:class:`~puzzlezero.web.line.WorkerCrashedError` (HTTP 503, naming the signal or exit code); the
other workers' jobs finish and a new worker takes its place. A running job that overruns its
budget (``wall_limit``) is answered :class:`~puzzlezero.web.line.SolveTimeoutError` (HTTP 504) at
once and its search is asked to stop; if it has not ended ``overrun_margin`` seconds later (a
runaway or frozen search), its worker is killed (SIGKILL: :mod:`puzzlezero.web.processes`) and
replaced.

Cancels cost nothing: :meth:`SolvePool.cancel` settles the ticket as cancelled at once and writes
the job's number into its worker's cancel flag, which the worker's searches read at every look at
the clock (:class:`~puzzlezero.web.worker.CancelFlag`); the search ends, the worker's late answer
is discarded and the same worker takes the next job. Only a worker that has not answered
``cancel_grace`` seconds later (a search in native code that never reads the clock) is killed and
replaced. Workers ignore SIGTERM (a service manager signals the whole process group; the server
drains) and die with the server (:func:`~puzzlezero.web.processes.die_with_parent`). A worker is
replaced between jobs, cleanly, after ``recycle_after`` jobs and after a job that ran out of memory.

Starting a worker can fail: the process does not start (``EMFILE``, ``EAGAIN``, ``ENOMEM``), or its
start-up (the initializer, loading the models) fails or hangs past ``start_timeout``. Each failure
is logged in one line and the next start is tried after ``respawn_backoff`` seconds, doubled after
each further failure (at most :data:`MAX_BACKOFF`), never in a loop; a worker that becomes ready
ends the backoff. Workers that crash or are killed during a job count too: beyond
:data:`CRASH_BUDGET` within :data:`CRASH_WINDOW` seconds, each further one doubles the wait before
the next start. While no worker is running or starting, :meth:`SolvePool.health` says so and
admission refuses new solves with :class:`~puzzlezero.web.line.NoWorkerError` (HTTP 503, saying
why and when the next start is tried).

The line (:mod:`puzzlezero.web.line`): :meth:`SolvePool.submit` admits a job as a ticket, which
waits in a :class:`~puzzlezero.web.line.WaitingLine` until a free worker takes it; that line's
rules decide admission, per-client limits, who goes next and the estimates. Admission and
dispatch happen on the event loop (each worker's messages come back to it through a reader
thread and ``call_soon_threadsafe``), so the line and the counters need no lock.

Progress: the ``("progress", seq, improvement)`` messages of a running solve are kept on its
ticket (:meth:`Ticket.add_improvement <puzzlezero.web.line.Ticket.add_improvement>`).

Why one file: supervision is one state machine (workers, their pipes, tickets, timers, backoff);
its transitions are read and tested together, while the worker side, the waiting line and the
process utilities are modules of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import multiprocessing
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

from puzzlezero.web.config import ServerConfig
from puzzlezero.web.line import (
    Estimate,
    NoWorkerError,
    SolveTimeoutError,
    Ticket,
    WaitingLine,
    WorkerCrashedError,
)
from puzzlezero.web.processes import exit_text, join, kill
from puzzlezero.web.wait_estimate import RecentDurations
from puzzlezero.web.worker import SolveFn, SolveJob, run_job, warm_options, worker_main

if TYPE_CHECKING:
    from puzzlezero.solver import SolveOptions

__all__ = ["CRASH_BUDGET", "CRASH_WINDOW", "KILL_AFTER", "MAX_BACKOFF", "SolvePool"]

log = logging.getLogger("puzzlezero.web")

#: seconds a closing pool keeps, at the end of its timeout, to kill the workers still running and
#: see them exit
KILL_AFTER = 1.0
#: the longest wait before a worker that keeps failing to start is tried again
MAX_BACKOFF = 300.0
#: workers that may crash (or be killed) during their jobs within :data:`CRASH_WINDOW` seconds and
#: be replaced at once; each crash beyond doubles the wait before the next start
CRASH_BUDGET = 5
CRASH_WINDOW = 60.0
#: seconds a worker stopped cleanly (recycled) may take to exit before it is killed
EXIT_WAIT = 10.0


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
    """Why the pool is stopping it (``"overrun"``, ``"cancelled"``, ``"start timeout"``: killed;
    ``"recycled"``, ``"closing"``: a clean stop), else ``None``."""
    start_error: str | None = None
    alive: bool = True
    """Its process has not been seen to exit."""
    pid: int | None = None
    cancel: Any = None
    """The shared integer its searches read (:class:`~puzzlezero.web.worker.CancelFlag`): the number
    of the job to stop."""
    jobs: int = 0
    """Jobs it has taken."""


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
        self.recycled = 0
        """Workers stopped cleanly to be replaced (after ``recycle_after`` jobs, or out of memory)."""
        self.cancels = 0
        """Running jobs cancelled (each asked its worker's search to stop)."""
        self.kills = 0
        """Workers the pool killed: a cancel not heeded in time, an overrun, a hung start-up."""
        self._crashes: deque[float] = deque()  # when workers crashed or were killed during a job
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

    def _spawn(self) -> bool:
        """Start one worker process and the thread that reads its pipe. ``False`` when it could not
        be started (``EMFILE``, ``EAGAIN``, ``ENOMEM``, ...): counted as a failed start."""
        ctx = multiprocessing.get_context("spawn")
        ours: Connection | None = None
        theirs: Connection | None = None
        process: BaseProcess | None = None
        try:
            ours, theirs = ctx.Pipe()
            cancel = ctx.Value("q", 0, lock=False)  # the number of the job to stop (none: 0)
            args = (
                theirs,
                self.config.threads_per_worker,
                self._warm(),
                self.config.worker_memory_limit,
                self.solve_fn,
                self.initializer,
                self.config.puzzle_definitions,
                cancel,
            )
            process = ctx.Process(target=worker_main, args=args, name=f"pz-solve-{self.spawned + 1}")
            process.start()
            theirs.close()  # the worker holds the only other end: its death closes the pipe
            worker = _Worker(process=process, conn=ours, pid=process.pid, cancel=cancel)
            threading.Thread(
                target=self._read, args=(worker,), name=f"pz-pipe-{process.pid}", daemon=True
            ).start()
        except Exception as exc:  # the OS refused a pipe, a process or a thread: back off, retry
            for end in (ours, theirs):
                if end is not None:
                    with contextlib.suppress(OSError):
                        end.close()
            if process is not None and process.pid is not None:  # started, but nobody would read it
                kill(process)
                join([process], time.monotonic() + KILL_AFTER)
            self._start_failed(_reason(exc))
            return False
        self.spawned += 1
        self._workers.append(worker)
        assert self._loop is not None
        worker.timers = [self._loop.call_later(self.config.start_timeout, self._start_overdue, worker)]
        return True

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

    def _missing(self) -> int:
        """Workers to start to have ``workers`` (those being stopped do not count)."""
        return self.config.workers - sum(1 for w in self._workers if w.stopping is None)

    def _recent_crashes(self) -> int:
        """Workers that crashed or were killed during a job in the last :data:`CRASH_WINDOW` s."""
        now = time.monotonic()
        while self._crashes and now - self._crashes[0] > CRASH_WINDOW:
            self._crashes.popleft()
        return len(self._crashes)

    def _backoff_level(self) -> int:
        """Failed starts in a row, plus crashes beyond :data:`CRASH_BUDGET`: 0 = start at once."""
        return self.start_failures + max(0, self._recent_crashes() - CRASH_BUDGET)

    def _delay(self) -> float:
        """Seconds before the next start while backing off: 1 s, 2 s, 4 s, ... (``respawn_backoff``
        doubled per level), at most :data:`MAX_BACKOFF`."""
        level = max(1, self._backoff_level())
        return min(MAX_BACKOFF, self.config.respawn_backoff * 2 ** (level - 1))

    def _fill(self) -> None:
        """Start workers up to ``workers``: at once while nothing fails, else one probe after the
        backoff (:meth:`_delay`), the others once it is ready. While starting fails and no worker
        runs, the waiting tickets are failed: nobody would serve them."""
        if self._draining or not self._process_mode():
            return
        while self._respawn is None and self._missing() > 0:
            if self._backoff_level() == 0:
                self._spawn()  # a failure is counted: the next round backs off
                continue
            if not any(not w.ready and w.stopping is None for w in self._workers):  # no probe starting
                delay = self._delay()
                assert self._loop is not None
                self._respawn_at = time.monotonic() + delay
                self._respawn = self._loop.call_later(delay, self._probe)
            break
        if self.start_failures:
            while self._line and (refused := self._no_worker()) is not None:
                self._settle(self._line.popleft(), refused)

    def _probe(self) -> None:
        """The backoff has passed: start one worker; more follow once it is ready."""
        self._respawn = self._respawn_at = None
        if self._draining or self._missing() <= 0:
            return
        self._spawn()
        self._fill()

    def _start_failed(self, why: str) -> None:
        """A worker could not start: count it (the backoff grows) and log it in one line."""
        self.start_failures += 1
        self.last_error = why
        log.error(
            "a solver worker could not start (%s); %d failed starts in a row, the next in %.1f s",
            why, self.start_failures, self._delay(),
        )  # fmt: skip

    def _crashed(self) -> None:
        """A worker crashed or was killed during a job: beyond the budget, replacements back off."""
        self._crashes.append(time.monotonic())
        crashes = self._recent_crashes()
        if crashes > CRASH_BUDGET:
            log.error(
                "%d solver workers crashed or were killed within %.0f s; the next starts in %.1f s",
                crashes, CRASH_WINDOW, self._delay(),
            )  # fmt: skip

    async def aclose(self, timeout: float | None = None) -> None:
        """Stop gracefully within ``timeout`` seconds (default ``shutdown_timeout``): admission
        ends, no worker is started any more and waiting tickets are cancelled at once; running
        jobs may end (and are answered) until shortly before the timeout; then :meth:`close`
        stops what still runs."""
        timeout = self.config.shutdown_timeout if timeout is None else float(timeout)
        deadline = time.monotonic() + timeout
        self._draining = True
        if self._respawn is not None:
            self._respawn.cancel()
            self._respawn = self._respawn_at = None
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
        :class:`~puzzlezero.web.line.WorkerCrashedError`. Each worker is stopped cleanly: its
        running search is asked to stop and its pipe gets ``None``, so it exits once its job has
        ended; one still starting up, and any still running ``cancel_grace`` seconds later (or
        shortly before the timeout), is killed. :meth:`aclose` lets running jobs end first."""
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
            w.timers = []
            w.stopping = w.stopping or "closing"
            if w.thread is not None:
                w.thread.shutdown(wait=False, cancel_futures=True)
            elif w.conn is not None and w.process is not None:
                if not w.ready and w.ticket is None:  # still starting: its models are not worth a wait
                    kill(w.process)
                    continue
                if w.ticket is not None and w.cancel is not None:
                    w.cancel.value = w.seq  # its search stops at its next look at the clock
                with contextlib.suppress(OSError, ValueError):
                    w.conn.send(None)  # it exits once its job has ended
        procs = [w.process for w in workers if w.process is not None]
        margin = min(timeout / 2, KILL_AFTER)  # kept to kill the rest and see them exit
        join(procs, min(deadline - margin, time.monotonic() + self.config.cancel_grace))
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
        """Workers busy (an overrun or cancelled job keeps its worker until it ends or is stopped)."""
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
        ``restarts`` (workers started to replace others that died, were killed or could not
        start; not the recycled ones), ``recycled`` (replaced cleanly between jobs),
        ``cancels`` (running jobs cancelled), ``kills`` (workers the pool killed),
        ``crashes`` (workers that crashed or were killed during a job in the last
        :data:`CRASH_WINDOW` seconds), ``start_failures`` (in a row), ``last_error`` (the last
        start-up failure), ``retry_in`` (seconds until the next start-up attempt while backing
        off), ``pids`` and ``ok``: False when no worker can run a job (none started or starting
        without failures, every one stuck in an overrun, or closed)."""
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
            "restarts": max(0, self.spawned - self.config.workers - self.recycled),
            "recycled": self.recycled,
            "cancels": self.cancels,
            "kills": self.kills,
            "crashes": self._recent_crashes(),
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
    def _no_worker(self) -> NoWorkerError | None:
        """Why no worker can take a job (none runs or starts, and the next start waits for the
        backoff), as the error admission answers; ``None`` while one runs or starts."""
        if not self._process_mode() or any(w.alive and w.stopping is None for w in self._workers):
            return None
        if self._respawn is None and not self._backoff_level():
            return None  # replacements start at once
        if self.start_failures:
            why = f"starting failed ({self.last_error})"
        else:
            why = f"{self._recent_crashes()} workers crashed within {CRASH_WINDOW:.0f} s"
        if self._respawn_at is None:
            return NoWorkerError(f"no solver worker is running: {why}")
        retry = max(1, math.ceil(self._respawn_at - time.monotonic()))
        return NoWorkerError(f"no solver worker is running: {why}; retrying in {retry} s", retry)

    def admit(self, client: str = "") -> None:
        """Raise what :meth:`submit` would raise for ``client``, without submitting: cheap, for
        checking before a request's body is parsed. :class:`~puzzlezero.web.line.QueueFullError`
        (the line is full), :class:`~puzzlezero.web.line.ClientLimitError` (this client has
        ``client_waiting`` waiting), :class:`~puzzlezero.web.line.NoWorkerError` (no worker runs
        or starts: it says why and when the next start is tried) or
        :class:`~puzzlezero.web.line.WorkerCrashedError` (the server is shutting down)."""
        if self._loop is None or self._closed:
            raise RuntimeError("SolvePool.start() was not called, or the pool is closed")
        if self._draining:
            raise WorkerCrashedError("the server is shutting down")
        refused = self._no_worker()
        if refused is not None:
            raise refused
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
        job is cancelled: :meth:`cancel`)."""
        try:
            return await asyncio.shield(ticket.outcome)
        except asyncio.CancelledError:
            self.cancel(ticket)
            raise

    async def solve(self, job: SolveJob, wall_limit: float, client: str = "") -> dict[str, Any]:
        """:meth:`submit` then :meth:`result`."""
        return await self.result(self.submit(job, wall_limit, client))

    def cancel(self, ticket: Ticket) -> bool:
        """Cancel a ticket: a waiting one leaves the line; a running one is settled as cancelled
        at once and its worker's search is asked to stop (its cancel flag): the worker stays,
        its late answer is discarded and it takes the next job; it is killed and replaced only if
        it has not answered ``cancel_grace`` seconds later. A worker thread cannot be stopped:
        ``False``, as for a ticket that has ended."""
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
        self.cancels += 1
        if worker.cancel is not None:
            worker.cancel.value = worker.seq
        assert self._loop is not None
        worker.timers.append(self._loop.call_later(self.config.cancel_grace, self._unheeded, worker, ticket))
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
        worker.jobs += 1
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
        if self._closed:
            return
        kind = message[0]
        if kind == "ready" and worker.stopping is None:  # (one being killed for its slow start stays so)
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
            out = message[2]
            if kind == "done":
                assert ticket.started is not None
                if not ticket.outcome.cancelled():  # a cancelled search's answer is discarded
                    self.durations.record(ticket.job.puzzle, time.monotonic() - ticket.started)
                self._settle(ticket, out)
            else:
                self._settle(ticket, out if isinstance(out, BaseException) else RuntimeError(out))
            if worker.process is not None and worker.stopping is None:
                if kind == "done" and isinstance(out, dict) and out.get("out_of_memory"):
                    self._recycle(worker, "its last job ran out of memory")
                elif self.config.recycle_after and worker.jobs >= self.config.recycle_after:
                    self._recycle(worker, f"it has run {worker.jobs} jobs")
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

    def _recycle(self, worker: _Worker, why: str) -> None:
        """Stop an idle worker cleanly (``None`` on its pipe: it exits) and start its replacement."""
        assert worker.conn is not None and worker.process is not None and self._loop is not None
        worker.stopping = "recycled"
        self.recycled += 1
        log.info("replacing solver worker %s: %s", worker.pid, why)
        with contextlib.suppress(OSError, ValueError):
            worker.conn.send(None)
        worker.timers = [self._loop.call_later(EXIT_WAIT, kill, worker.process)]  # it should be gone
        self._fill()

    def _on_exit(self, worker: _Worker) -> None:
        """A worker process ended: fail its job (unless the pool already answered it), count a
        crash or a failed start, and start a replacement (at once, or after the backoff)."""
        worker.alive = False
        for timer in worker.timers:
            timer.cancel()
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
            self._crashed()
        elif worker.stopping == "start timeout" or (worker.stopping is None and not worker.ready):
            self._start_failed(worker.start_error or f"it exited ({how}) before it was ready")
        elif worker.stopping is None:
            log.error("idle solver worker %s died (%s)", worker.pid, how)
            self._crashed()
        # else a clean stop (recycled, closing: its replacement is already starting), or a worker
        # killed after its job's answer came (a cancel or an overrun answered as it was killed):
        # counted in the kills, never as a failed start
        self._fill()
        self._dispatch()

    def _start_overdue(self, worker: _Worker) -> None:
        """Not ready ``start_timeout`` seconds after it was started (a hung or frozen start-up):
        kill it; its exit counts as a failed start (:meth:`_on_exit`)."""
        if worker.ready or worker.stopping is not None or not worker.alive or self._closed:
            return
        worker.start_error = f"it was not ready {self.config.start_timeout:.0f} s after it was started"
        log.error("solver worker %s: %s; stopping it", worker.pid, worker.start_error)
        self._stop(worker, "start timeout", replace_now=False)

    def _unheeded(self, worker: _Worker, ticket: Ticket) -> None:
        """A cancelled job's worker has not answered within ``cancel_grace``: kill and replace it."""
        if worker.ticket is not ticket or worker.stopping is not None or self._closed:
            return
        log.error(
            "solver worker %s did not stop its cancelled %s within %.1f s: killing it",
            worker.pid, ticket.job.kind, self.config.cancel_grace,
        )  # fmt: skip
        self._stop(worker, "cancelled")

    def _overrun(self, worker: _Worker, ticket: Ticket) -> None:
        """Past its wall limit: answer 504 now and ask its search to stop; kill its worker if it
        still runs after the margin."""
        if worker.ticket is not ticket:
            return
        self._settle(
            ticket,
            SolveTimeoutError(
                f"the {ticket.job.kind} did not finish within {ticket.wall_limit:.0f} s of solving "
                "(time in line not counted); try a smaller time_limit or max_nodes"
            ),
        )
        if worker.cancel is not None:  # a search that is only late stops at its next look at the clock
            worker.cancel.value = worker.seq
        assert self._loop is not None
        worker.timers.append(self._loop.call_later(self.config.overrun_margin, self._overran, worker, ticket))

    def _overran(self, worker: _Worker, ticket: Ticket) -> None:
        if worker.ticket is not ticket or worker.stopping is not None:
            return
        if worker.process is None:
            log.warning(
                "a solve thread overran its limit by %.0f s and cannot be stopped", self.config.overrun_margin
            )
            return
        log.error(
            "solver worker %s still runs a %s %.0f s past its limit of %.0f s: killing it",
            worker.pid, ticket.job.kind, self.config.overrun_margin, ticket.wall_limit,
        )  # fmt: skip
        self._stop(worker, "overrun")

    def _stop(self, worker: _Worker, why: str | None, replace_now: bool = True) -> None:
        """Kill a worker process (SIGKILL: workers ignore SIGTERM, and a frozen one dies too); its
        exit (:meth:`_on_exit`) frees its place and counts the crash. ``why``: the reason its job
        already has an outcome (``None``: the job fails as a crash when the exit is seen).
        ``replace_now``: start the replacement at once instead of when the exit is seen (a failed
        start-up waits for its exit, which counts the failure and sets the backoff)."""
        worker.stopping = why
        worker.ready = False
        self.kills += 1
        assert worker.process is not None
        kill(worker.process)
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


def _reason(exc: BaseException) -> str:
    """What stopped a worker from starting, in a few words: an OS error's own text ("Too many open
    files"), else the exception's class and message."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {exc}"


def _retrieve(fut: asyncio.Future[Any]) -> None:
    """Mark an outcome's exception as seen: nobody may ever ask for an abandoned job's result."""
    if not fut.cancelled() and fut.exception() is not None:
        log.debug("solve ended with %r", fut.exception())
