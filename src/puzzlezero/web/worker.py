"""The worker side of the solver pool: what runs inside a worker process (or a worker thread).

Why processes: batch weighted A* spends much of its time in Python (heap pops, dictionary
look-ups of visited states, bookkeeping between network calls). Those hold the GIL, so solver
threads would take turns on one core; the network runtime only releases the GIL inside its
kernels. Each worker process therefore runs whole searches, one at a time, loads a network once
(the solver caches it per process) and gives its networks ``threads_per_worker`` intra-op threads
(:func:`puzzlezero.nn.runtime.set_default_threads`) so that workers do not oversubscribe the cores.
The supervisor (:class:`~puzzlezero.web.pool.SolvePool`) starts them with the ``spawn`` start
method, which keeps the children free of the parent's threads and locks, and runs
:func:`worker_main` in each; threads (``executor="thread"``) call :func:`run_job` directly.

It holds :class:`SolveJob` (what a worker is asked to do); the start-up of a worker process
(:func:`_init_worker`): an address-space limit of ``worker_memory_mib``, no table builds
(:func:`puzzlezero.storage.forbid_table_builds`), the puzzles the server was given as data
(:func:`register_definitions`), the networks' threads, and the models to preload (resolved by the
server: :func:`warm_options`); the pipe protocol of :func:`worker_main`; and :func:`run_job`,
which turns one job into plain data and never lets a job's error end its worker.

Progress: while a solve runs, its worker sends each solution the solver reports before it returns
(the first one, then each strictly shorter: the solver's ``on_solution``) as a ``("progress", seq,
improvement)`` message.

Cancel: the pool writes the number of a job to stop into a shared integer of its worker
(:class:`CancelFlag`); the worker installs it as the searches' stop check
(:func:`puzzlezero.search.clock.stop_when`), so the running search ends at its next look at the
clock, the worker answers (the pool discards that answer) and takes the next job.

A worker process outlives neither its server (the kernel kills it when the server ends:
:func:`~puzzlezero.web.processes.die_with_parent`) nor is it stopped by a SIGTERM from outside
(a service manager signals the server's whole process group): it ignores SIGTERM and SIGINT, and
the pool stops it by closing its pipe or sending ``None`` (a clean stop between jobs), else by
SIGKILL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.web.config import ServerConfig
from puzzlezero.web.processes import die_with_parent

if TYPE_CHECKING:
    from puzzlezero.puzzles.base import Puzzle
    from puzzlezero.solver import SolveOptions, SolveResult

__all__ = [
    "JOB_KINDS",
    "CancelFlag",
    "JobKind",
    "Progress",
    "SolveFn",
    "SolveJob",
    "register_definitions",
    "run_job",
    "solve_one",
    "warm_options",
    "worker_main",
]

log = logging.getLogger("puzzlezero.web")


class SolveFn(Protocol):
    """What a worker calls for a solve job: ``solve_fn(puzzle, state, opts=job.options,
    on_solution=report)``, shaped like :func:`solve_one` (a result with ``to_json()``;
    ``on_solution`` ``None`` or called with each improvement); must pickle for processes."""

    def __call__(
        self, puzzle: Puzzle, state: np.ndarray, opts: Any, on_solution: Callable[[Any], None] | None = None
    ) -> Any: ...


#: what a job asks of a worker: a search (``solver.solve``) or a state's value (``cost_to_go.value``)
JobKind = Literal["solve", "value"]
JOB_KINDS: tuple[str, ...] = ("solve", "value")

#: what a worker calls with each improvement of a running solve, as plain data (``Improvement.to_json()``)
Progress = Callable[[dict[str, Any]], None]


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


class CancelFlag:
    """A worker process's stop check, for :func:`puzzlezero.search.clock.stop_when`: true while the
    job it runs (``seq``; -1 between jobs) is the one whose number the pool wrote into ``shared``
    (a shared integer: ``multiprocessing`` ``Value("q", lock=False)``)."""

    def __init__(self, shared: Any) -> None:
        self.shared = shared
        self.seq = -1

    def __call__(self) -> bool:
        return self.seq >= 0 and self.shared.value == self.seq


def _init_worker(
    threads: int,
    warm: tuple[tuple[str, SolveOptions], ...] = (),
    memory_mib: int = 0,
    load_torch: bool = True,
    definitions: tuple[Mapping[str, Any], ...] = (),
) -> None:
    """Prepare a worker process: ignore Ctrl-C (the server stops its workers), cap its memory,
    forbid table builds, register the puzzles the server was given as data (``definitions``,
    :func:`register_definitions`), pin the networks' thread count, then load the networks and
    tables of ``warm`` (``(puzzle, the options of its own search, resolved by the server)``: the
    heuristic, with the operator's model where one is served, and the fallback search's tables)
    before the first request.

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
    from puzzlezero.solver import SolveOptions, States, solve_many

    if not isinstance(opts, SolveOptions):
        raise TypeError(f"a solve job carries resolved SolveOptions, got {type(opts).__name__}")
    checked = States(puzzle.name, state[None])  # read and checked by the server that made the job
    return solve_many(puzzle, checked, opts, on_solution=on_solution)[0]


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
    :class:`PuzzleError` (and ``"MemoryBudgetError"`` with ``"out_of_memory": True`` when the
    search ran out of the worker's memory: the pool then replaces the worker after this job). Any
    other exception propagates (a server bug, answered 500); ``SystemExit``,
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
        report = None if on_progress is None else _reporter(p, on_progress)
        return {"ok": solve(p, job.state, opts=job.options, on_solution=report).to_json()}
    except PuzzleError as exc:
        return {"error": str(exc), "kind": type(exc).__name__}
    except MemoryError:
        return {"error": _out_of_memory(), "kind": "MemoryBudgetError", "out_of_memory": True}
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


def worker_main(
    conn: Connection,
    threads: int,
    warm: tuple[tuple[str, SolveOptions], ...],
    memory_mib: int,
    solve_fn: SolveFn | None,
    initializer: Callable[[], None] | None,
    definitions: tuple[Mapping[str, Any], ...] = (),
    cancel: Any = None,
) -> None:
    """A worker process: start up, say ``("ready", pid)``, then run ``(seq, job)`` messages one at
    a time, answering ``("done", seq, run_job output)`` or ``("failed", seq, text)`` (after any
    ``("progress", seq, improvement)`` of a solve), until ``None`` or the parent's end of the pipe
    closes. A start-up failure is sent as ``("start_failed", text)`` and ends the process with
    exit code 3. ``cancel``: the shared integer into which the pool writes the number of a job to
    stop (:class:`CancelFlag`; ``None``: jobs run to their own end). The process dies with its
    parent and ignores SIGTERM from the start, before it loads anything."""
    die_with_parent()
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        _init_worker(threads, warm, memory_mib, load_torch=solve_fn is None, definitions=definitions)
        if initializer is not None:
            initializer()
    except BaseException as exc:  # noqa: BLE001 - reported to the pool, which backs off
        with contextlib.suppress(Exception):
            conn.send(("start_failed", f"{type(exc).__name__}: {exc}"))
        raise SystemExit(3) from None
    flag = None if cancel is None else CancelFlag(cancel)
    if flag is not None:
        from puzzlezero.search import clock

        clock.stop_when(flag)
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

        if flag is not None:
            flag.seq = seq
        try:
            reply: tuple[Any, ...] = ("done", seq, run_job(job, solve_fn, progress))
        except BaseException as exc:  # noqa: BLE001 - a bug in this job, not the end of the worker
            reply = ("failed", seq, f"{type(exc).__name__}: {exc}")
        finally:
            if flag is not None:
                flag.seq = -1
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an answer that does not pickle
            conn.send(("failed", seq, f"unsendable answer: {type(exc).__name__}: {exc}"))


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
