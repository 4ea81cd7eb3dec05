"""Solving off the event loop: supervised solver workers behind a bounded, fair waiting line.

Why processes: batch weighted A* spends much of its time in Python (heap pops, dictionary
look-ups of visited states, bookkeeping between network calls). Those hold the GIL, so solver
threads would take turns on one core; the network runtime only releases the GIL inside its
kernels. Each worker process therefore runs whole searches, one at a time, loads a network once
(the solver caches it per process) and gives its networks ``threads_per_worker`` intra-op threads
(:func:`puzzlezero.nn.runtime.set_default_threads`) so that workers do not oversubscribe the cores. The ``spawn`` start method keeps the children free of the parent's
threads and locks. Threads (``executor="thread"``) serve tests and fakes.

Supervision: the pool starts its own worker processes, one pipe each, and knows which job each
worker runs and its pid. A worker that dies (the OS killed it: out of memory, SIGKILL) fails only
its own job with :class:`WorkerCrashedError` (HTTP 503, naming the signal or exit code); the other
workers' jobs finish and a new worker takes its place. A running job that overruns its budget
(``wall_limit``) is answered :class:`SolveTimeoutError` (HTTP 504) at once; if its search has not
ended ``overrun_margin`` seconds later (a runaway or frozen search), its worker is terminated
(SIGTERM, then SIGKILL) and replaced. A worker that cannot start (its initializer fails) is
reported and retried after ``respawn_backoff`` seconds, doubled after each further failure, never
in a loop; while no worker can run, :meth:`SolvePool.health` says so and new solves are refused
with 503. Workers run under an address-space limit (``worker_memory_mib``) and never build tables
(:func:`puzzlezero.storage.forbid_table_builds`).

The line: :meth:`SolvePool.submit` admits a job as a :class:`Ticket`. At most ``workers`` tickets
run; the others wait, at most ``queue`` of them, and a job beyond that is refused at once
(:class:`QueueFullError`, HTTP 429, with the time until a place frees). Each client (the API keys
them by peer address) may have ``client_waiting`` tickets waiting (one more:
:class:`ClientLimitError`, 429) and ``client_running`` running; a free worker takes the first
waiting ticket whose client is under its running limit, so one client's flood of jobs waits behind
itself while other clients pass. A ticket's wall-clock budget starts when a worker takes it, never
while it waits, and the solver's own ``time_limit`` starts inside the worker, so a job is never
answered 504 because it waited. :meth:`SolvePool.estimate` tells a waiting ticket its place and
expected wait from the measured durations of recent solves (:mod:`puzzlezero.web.wait_estimate`).

Admission and dispatch happen on the event loop (each worker's messages come back to it through a
reader thread and ``call_soon_threadsafe``), so the line and the counters need no lock.

Progress: while a solve runs, its worker sends each solution the solver reports before it returns
(the first one, then each strictly shorter: the solver's ``on_solution``) as a ``("progress", seq,
improvement)`` message; the ticket keeps them (:attr:`Ticket.improvements`, at most
:data:`MAX_IMPROVEMENTS`), so a polled job shows its first solution long before its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import multiprocessing
import os
import resource
import secrets
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.web.config import ServerConfig
from puzzlezero.web.wait_estimate import RecentDurations, start_times

if TYPE_CHECKING:
    from puzzlezero.puzzles.base import Puzzle
    from puzzlezero.solver import SolveOptions, SolveResult

__all__ = [
    "ClientLimitError",
    "Estimate",
    "QueueFullError",
    "SolveJob",
    "SolvePool",
    "SolveTimeoutError",
    "Ticket",
    "WorkerCrashedError",
    "register_definitions",
    "run_job",
    "solve_one",
    "warm_options",
]

log = logging.getLogger("puzzlezero.web")

#: what a worker calls for a solve job, as ``solve_fn(puzzle, state, opts=job.options)``: shaped like
#: :func:`puzzlezero.solver.solve` (a result with ``to_json()``); must pickle for processes
SolveFn = Callable[..., Any]

#: what a job asks of a worker: a search (``solver.solve``) or a state's value (``cost_to_go.value``)
JobKind = Literal["solve", "value"]
JOB_KINDS: tuple[str, ...] = ("solve", "value")

#: seconds between SIGTERM and SIGKILL when the pool stops a worker
KILL_AFTER = 1.0
#: the longest wait before a worker that keeps failing to start is tried again
MAX_BACKOFF = 300.0
#: improvements a ticket keeps while its solve runs: the first ones, and the newest in the last place
MAX_IMPROVEMENTS = 32

#: what a worker calls with each improvement of a running solve, as plain data (``Improvement.to_json()``)
Progress = Callable[[dict[str, Any]], None]


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


@dataclass(frozen=True)
class SolveJob:
    """One job for a worker: a registered puzzle name, one parsed state ``[*state_shape]`` and
    ``options``, resolved before the job takes its place in line. ``kind="solve"``: the solve's
    :class:`~puzzlezero.solver.SolveOptions` (frozen, so they pickle to a worker process as they
    are), which the worker passes to ``solve_many`` without resolving them again; a pool's own
    ``solve_fn`` (tests, fakes) receives them as the job carries them. ``kind="value"``: the
    keywords of :func:`puzzlezero.cost_to_go.value`."""

    puzzle: str
    state: np.ndarray
    options: SolveOptions | Mapping[str, Any] = field(default_factory=dict)
    kind: JobKind = "solve"

    def __post_init__(self) -> None:
        if self.kind not in JOB_KINDS:
            raise ValueError(f"job kind must be one of {', '.join(JOB_KINDS)}, got {self.kind!r}")
        if self.kind == "value" and not isinstance(self.options, Mapping):
            raise TypeError(f"a value job carries the keywords of value(), got {type(self.options).__name__}")

    @property
    def time_limit(self) -> float | None:
        """The seconds the solver may search (the options' ``time_limit``); ``None`` where the
        job names none (a value)."""
        o = self.options
        limit = o.get("time_limit") if isinstance(o, Mapping) else getattr(o, "time_limit", None)
        return None if limit is None else float(limit)


# ---- inside a worker ---------------------------------------------------------------------------
def _limit_memory(mib: int) -> None:
    """Cap this process's address space at ``mib`` MiB (``RLIMIT_AS``; 0 = leave it).

    The address space, not the resident set: Linux enforces no RSS limit, and a search that grows
    past the cap gets ``MemoryError`` (reported as a named error) where it would otherwise push the
    machine into swap or be killed by the OOM killer. Torch reserves address space it never touches
    (thread stacks, allocator arenas), so the cap sits above the resident need: a cube3 worker
    mapped at most 3.3 GiB (2.3 GiB resident) in a solve at the server's 10M-node cap, and the
    default cap is at least 4 GiB."""
    if mib <= 0:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = mib << 20
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(resource.RLIMIT_AS, (want, hard))


def register_definitions(definitions: Sequence[Mapping[str, Any]]) -> list[str]:
    """Check and register permutation puzzles given as data (native definitions, JSON objects) in
    this process, and return their names: what the server does with ``--puzzle-file``'s
    definitions, and each worker before it serves. Idempotent; a definition that fails its checks,
    or whose name another puzzle holds, raises :class:`~puzzlezero.errors.DefinitionError` naming it."""
    from puzzlezero.errors import DefinitionError
    from puzzlezero.puzzles.permutation.definition import Definition
    from puzzlezero.registry import register_definition

    out = []
    for data in definitions:
        where = str(data.get("name", "definition")) if isinstance(data, Mapping) else "definition"
        definition = Definition.from_dict(data, where=where)
        try:
            out.append(register_definition(definition))
        except DefinitionError as exc:  # its name is another puzzle's
            raise DefinitionError(f"{where}: {exc}") from None
    return out


def _init_worker(
    threads: int,
    warm: tuple[tuple[str, SolveOptions], ...] = (),
    memory_mib: int = 0,
    load_torch: bool = True,
    definitions: tuple[Mapping[str, Any], ...] = (),
) -> None:
    """Prepare a worker process: ignore Ctrl-C (the server stops its workers), cap its memory,
    forbid table builds, register the puzzles the server was given as data (``definitions``,
    :func:`register_definitions`), pin the networks' thread count, then load the networks and tables of ``warm``
    (``(puzzle, the options of its own search, resolved by the server)``: the heuristic, with the
    operator's model where one is served, and the fallback search's tables) before the first request.

    A failure to preload one model is logged and the worker still serves (a request for that
    puzzle reports the error); anything else that fails here means the worker cannot start."""
    with contextlib.suppress(ValueError):  # not the main thread (a test calling this directly)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _limit_memory(memory_mib)
    from puzzlezero.storage import forbid_table_builds

    forbid_table_builds()  # tables are built by `puzzlezero pdb build`, never by a request
    register_definitions(definitions)  # data, as the server checked it: never a file read here
    if load_torch:  # the networks' intra-op threads (onnxruntime; torch too where a model runs on it)
        from puzzlezero.nn.runtime import set_default_threads

        set_default_threads(threads)
    if not warm:
        return
    from puzzlezero.registry import make
    from puzzlezero.solver import SEARCHES, get_heuristic, resolve_entry

    for name, opts in warm:
        try:
            p = make(name)
            if opts.heuristic is not None:  # cached per process by the solver (Q*: the Q head)
                get_heuristic(p, opts.heuristic, opts.model, SEARCHES[opts.search].heuristic_kind)
            if opts.fallback is not None:  # its tables (the cube's group table) load now
                spec = SEARCHES[opts.fallback]
                spec.run(resolve_entry(spec.entry, opts.fallback), p, p.goals(1), None, opts)
        except BaseException as exc:  # noqa: BLE001 - a request will report it; the worker serves others
            log.warning(
                "could not warm up %s (its requests will say why): %s: %s", name, type(exc).__name__, exc
            )


def solve_one(
    puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Callable[[Any], None] | None = None
) -> SolveResult:
    """A worker's solve: :func:`~puzzlezero.solver.solve_many` of the one state with the job's
    options as they are (resolved by the server; nothing is resolved again here). The time limit
    starts now, when a worker has taken the job, not while it waited in line. ``on_solution`` gets
    the solver's improvements (:class:`~puzzlezero.solver.Improvement`) as they come."""
    from puzzlezero.solver import SolveOptions, solve_many

    if not isinstance(opts, SolveOptions):
        raise TypeError(f"a solve job carries resolved SolveOptions, got {type(opts).__name__}")
    return solve_many(puzzle, [state], opts, on_solution=on_solution)[0]


def _takes_on_solution(fn: SolveFn) -> bool:
    """Does ``fn`` take an ``on_solution`` keyword (the solver's own does; a test double may not)?"""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "on_solution" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _reporter(puzzle: Puzzle, on_progress: Progress) -> Callable[[Any], None]:
    """The ``on_solution`` of a worker's solve: each improvement as plain data, its moves also as
    people write them (``notation``: the puzzle's ``format_compact``, R R as R2), handed to
    ``on_progress``. A report that fails is logged and dropped: it never ends the solve."""

    def report(improvement: Any) -> None:
        try:
            data = dict(improvement.to_json() if hasattr(improvement, "to_json") else improvement)
            data["notation"] = puzzle.format_compact(puzzle.parse_moves(list(data["solution"])))
            on_progress(data)
        except Exception as exc:  # noqa: BLE001 - progress is a courtesy; the answer still comes
            log.warning("could not report a solve's progress: %s: %s", type(exc).__name__, exc)

    return report


def run_job(
    job: SolveJob, solve_fn: SolveFn | None = None, on_progress: Progress | None = None
) -> dict[str, Any]:
    """Run one job in a worker and return plain data (never raises for bad input).

    Returns ``{"ok": result.to_json()}`` or ``{"error": message, "kind": exception class}`` for a
    :class:`PuzzleError` (and ``"MemoryBudgetError"`` when the search ran out of the worker's
    memory). Any other exception propagates (a server bug, answered 500); ``SystemExit``,
    ``KeyboardInterrupt`` and other ``BaseException`` come back as a ``RuntimeError`` of this job,
    so they never end a worker or the server. ``solve_fn`` replaces :func:`solve_one`: it is called
    ``solve_fn(puzzle, state, opts=job.options)``, as :func:`puzzlezero.solver.solve` takes them
    (with ``on_solution=`` too where it takes that keyword). ``on_progress`` gets each improvement
    of a solve as it comes (see :func:`_reporter`).
    """
    try:
        from puzzlezero.registry import make

        if job.kind == "value":
            from puzzlezero.cost_to_go import value

            assert isinstance(job.options, Mapping)  # checked when the job was made
            return {"ok": value(make(job.puzzle), job.state, **job.options).to_json()}
        solve: SolveFn = solve_one if solve_fn is None else solve_fn
        p = make(job.puzzle)
        if on_progress is not None and _takes_on_solution(solve):
            return {
                "ok": solve(p, job.state, opts=job.options, on_solution=_reporter(p, on_progress)).to_json()
            }
        return {"ok": solve(p, job.state, opts=job.options).to_json()}
    except PuzzleError as exc:
        return {"error": str(exc), "kind": type(exc).__name__}
    except MemoryError:
        return {"error": _out_of_memory(), "kind": "MemoryBudgetError"}
    except Exception:
        raise
    except BaseException as exc:
        raise RuntimeError(f"the {job.kind} raised {type(exc).__name__}: {exc}") from None


def _out_of_memory() -> str:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    limit = (
        ""
        if soft == resource.RLIM_INFINITY
        else f" (each worker may map {soft >> 20} MiB: serve --worker-memory-mib)"
    )
    return f"the search ran out of memory{limit}; try a smaller max_nodes, batch or beam width"


def _worker_main(
    conn: Connection,
    threads: int,
    warm: tuple[tuple[str, SolveOptions], ...],
    memory_mib: int,
    solve_fn: SolveFn | None,
    initializer: Callable[[], None] | None,
    definitions: tuple[Mapping[str, Any], ...] = (),
) -> None:
    """A worker process: start up, say ``("ready", pid)``, then run ``(seq, job)`` messages one at
    a time, answering ``("done", seq, run_job output)`` or ``("failed", seq, text)`` (after any
    ``("progress", seq, improvement)`` of a solve), until ``None`` or the parent's end of the pipe
    closes. A start-up failure is sent as
    ``("start_failed", text)`` and ends the process with exit code 3."""
    try:
        _init_worker(threads, warm, memory_mib, load_torch=solve_fn is None, definitions=definitions)
        if initializer is not None:
            initializer()
    except BaseException as exc:  # noqa: BLE001 - reported to the pool, which backs off
        with contextlib.suppress(Exception):
            conn.send(("start_failed", f"{type(exc).__name__}: {exc}"))
        raise SystemExit(3) from None
    conn.send(("ready", os.getpid()))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the server went away
            return
        if message is None:
            return
        seq, job = message

        def progress(data: dict[str, Any], seq: int = seq) -> None:
            conn.send(("progress", seq, data))

        try:
            reply: tuple[Any, ...] = ("done", seq, run_job(job, solve_fn, progress))
        except BaseException as exc:  # noqa: BLE001 - a bug in this job, not the end of the worker
            reply = ("failed", seq, f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an answer that does not pickle
            conn.send(("failed", seq, f"unsendable answer: {type(exc).__name__}: {exc}"))


# ---- in the server -----------------------------------------------------------------------------
def warm_options(config: ServerConfig) -> tuple[tuple[str, SolveOptions], ...]:
    """For every registered puzzle with a model served (the operator's or the shipped one), the
    options of its own search with that model, resolved by the server for its workers to load
    before their first job (the heuristic, the fallback search's tables). A puzzle whose options
    do not resolve is logged and left out: its requests say why."""
    from puzzlezero.registry import make, names
    from puzzlezero.solver import resolve_options

    warm = []
    for name, model in config.served_models(names()):
        try:
            warm.append((name, resolve_options(make(name), model=model)))
        except Exception as exc:  # noqa: BLE001 - a request for it will report it
            log.warning("will not warm up %s (its requests will say why): %s", name, exc)
    return tuple(warm)


@dataclass(eq=False)
class Ticket:
    """One admitted job: waiting in line, running on a worker, or ended.

    ``outcome`` resolves to :func:`run_job`'s dict, or fails with :class:`SolveTimeoutError`,
    :class:`WorkerCrashedError` or a server bug's exception; it is cancelled when the ticket is
    cancelled (:meth:`SolvePool.cancel`). ``client``: who asked (the API uses the peer address;
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

    ``solve_fn`` replaces the workers' :func:`solve_one` (tests; a picklable module-level function
    for processes);
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
        self.durations = RecentDurations()
        self.spawned = 0
        """Worker processes started so far (the first ``workers`` and every replacement)."""
        self.start_failures = 0
        """Worker start-ups that failed since the last one that succeeded (drives the backoff)."""
        self.last_error: str | None = None
        self._line: deque[Ticket] = deque()
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
        """What each new worker loads before its first job (:func:`warm_options`, resolved once
        for all the workers)."""
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
        process = ctx.Process(target=_worker_main, args=args, name=f"pz-solve-{self.spawned}")
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
        tickets are cancelled and running ones fail with :class:`WorkerCrashedError`; idle workers
        exit, busy ones are terminated (SIGTERM, then SIGKILL). :meth:`aclose` lets running jobs
        end first."""
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
                    _terminate(w.process)
        procs = [w.process for w in workers if w.process is not None]
        _join(procs, deadline - min(timeout / 2, KILL_AFTER))  # keep time to kill the rest
        for p in procs:
            _terminate(p)
        _join(procs, deadline - min(timeout / 4, KILL_AFTER / 2))
        for p in procs:
            _kill(p)
        _join(procs, deadline + KILL_AFTER)
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
        checking before a request's body is parsed. :class:`QueueFullError` (the line is full),
        :class:`ClientLimitError` (this client has ``client_waiting`` waiting) or
        :class:`WorkerCrashedError` (no worker can start)."""
        if self._loop is None or self._closed:
            raise RuntimeError("SolvePool.start() was not called, or the pool is closed")
        if self._draining:
            raise WorkerCrashedError("the server is shutting down")
        broken = self._cannot_run()
        if broken is not None:
            raise WorkerCrashedError(broken)
        idle = any(w.ready and w.ticket is None and w.stopping is None for w in self._workers)
        if self.waiting >= self.config.queue and not idle:
            wait = self._start_times(time.monotonic(), 1)[0] if self._line else 0.0
            retry = max(1, math.ceil(wait))
            raise QueueFullError(
                f"the server is busy: {_count(self.running, 'solve')} running and {self.waiting} waiting, "
                f"and the line holds at most {self.config.queue}; try again in about {retry} s",
                retry,
            )
        limit = self.config.client_waiting
        if client and limit:
            mine = [i for i, t in enumerate(self._line) if t.client == client]
            if len(mine) >= limit:
                wait = self._start_times(time.monotonic(), mine[0] + 1)[-1]
                retry = max(1, math.ceil(wait))
                raise ClientLimitError(
                    f"you already have {_count(len(mine), 'solve')} waiting, the most one client may have "
                    f"waiting (client_waiting {limit}, serve --client-waiting); wait for one to start "
                    f"(about {retry} s) or cancel one",
                    retry,
                )

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
    def _next(self) -> Ticket | None:
        """The first waiting ticket whose client is under its running limit."""
        limit = self.config.client_running
        if not limit:
            return self._line[0] if self._line else None
        busy: dict[str, int] = {}
        for t in self._running:
            busy[t.client] = busy.get(t.client, 0) + 1
        return next((t for t in self._line if not t.client or busy.get(t.client, 0) < limit), None)

    def _dispatch(self) -> None:
        """Hand waiting tickets to free workers."""
        if self._closed:
            return
        for worker in self._workers:
            if not self._line:
                return
            if worker.ready and worker.ticket is None and worker.stopping is None:
                ticket = self._next()
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
            kept = worker.ticket.improvements
            if len(kept) < MAX_IMPROVEMENTS:
                kept.append(message[2])
            else:
                kept[-1] = message[2]
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
        how = _exit_text(worker.process.exitcode)
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
        _terminate(worker.process)
        self._loop.call_later(KILL_AFTER, _kill, worker.process)
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


def _terminate(process: BaseProcess) -> None:
    """SIGTERM, and SIGCONT so that a frozen (SIGSTOPped) worker acts on it."""
    if process.is_alive() and process.pid is not None:
        with contextlib.suppress(OSError):
            process.terminate()
            os.kill(process.pid, signal.SIGCONT)


def _kill(process: BaseProcess) -> None:
    with contextlib.suppress(OSError, ValueError):
        if process.is_alive():
            process.kill()


def _join(procs: list[BaseProcess], deadline: float) -> None:
    from multiprocessing.connection import wait

    alive = [p for p in procs if p.is_alive()]
    while alive and (left := deadline - time.monotonic()) > 0:
        wait([p.sentinel for p in alive], left)
        alive = [p for p in alive if p.is_alive()]


def _exit_text(code: int | None) -> str:
    """``"killed by SIGKILL"``, ``"exit code 3"``."""
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _retrieve(fut: asyncio.Future[Any]) -> None:
    """Mark an outcome's exception as seen: nobody may ever ask for an abandoned job's result."""
    if not fut.cancelled() and fut.exception() is not None:
        log.debug("solve ended with %r", fut.exception())
