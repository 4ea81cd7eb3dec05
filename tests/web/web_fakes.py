"""Picklable fake solvers and worker start-ups for the web pool's process tests: module-level, so
spawned worker processes can import them by name."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Slept:
    """What :func:`sleepy` answers: which process ran the job, and how long it slept."""

    puzzle: str
    pid: int
    seconds: float
    tag: str

    def to_json(self) -> dict[str, Any]:
        return {"puzzle": self.puzzle, "pid": self.pid, "seconds": self.seconds, "tag": self.tag}


def sleepy(puzzle: Any, state: np.ndarray, opts: Mapping[str, Any], on_solution: Any = None) -> Slept:
    """Sleep the job's ``seconds`` (a long search), then answer with this process's pid and the
    job's ``tag``."""
    seconds = opts.get("seconds", 0.0)
    time.sleep(seconds)
    return Slept(puzzle.name, os.getpid(), seconds, opts.get("tag", ""))


def raising(puzzle: Any, state: np.ndarray, opts: Mapping[str, Any], on_solution: Any = None) -> Slept:
    """Raise the job's ``error``: ``SystemExit`` (what ``heuristic: "sys:exit"`` did, the default)
    or ``MemoryError``, or ``allocate`` more than a worker may map."""
    error = opts.get("error", "SystemExit")
    if error == "SystemExit":
        raise SystemExit(0)
    if error == "MemoryError":
        raise MemoryError
    if error == "allocate":  # a real allocation: 4 GiB of zeros written to (fails under RLIMIT_AS)
        np.ones(1 << 29, dtype=np.float64)
    return Slept(puzzle.name, os.getpid(), 0.0, error)


def address_limit(puzzle: Any, state: np.ndarray, opts: Mapping[str, Any], on_solution: Any = None) -> Slept:
    """Answer with this process's ``RLIMIT_AS`` soft limit in MiB (-1: none) as ``seconds``, or
    fail as :func:`raising` does when the job names an ``error``."""
    if opts.get("error"):
        return raising(puzzle, state, opts)
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return Slept(puzzle.name, os.getpid(), -1.0 if soft == resource.RLIM_INFINITY else float(soft >> 20), "")


def exit_at_start() -> None:
    """A worker start-up that fails as badly as it can: ``SystemExit``."""
    raise SystemExit(7)


def hang_at_start() -> None:
    """A worker start-up that never ends (a hung import or a frozen disk)."""
    import time

    time.sleep(3600)


def forbid_resolving() -> None:
    """A worker start-up after which resolving solve options raises: its jobs must carry options
    the server resolved."""
    from puzzlezero import solver
    from puzzlezero.solver import resolve

    def refuse(*args: Any, **kw: Any) -> None:
        raise AssertionError("a worker resolved solve options again")

    solver.resolve_options = refuse  # type: ignore[assignment]
    resolve.resolve_options = refuse  # type: ignore[assignment]


@dataclass(frozen=True)
class Reported:
    """What :func:`reporting` answers: the last of the solutions it reported."""

    puzzle: str
    solution: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"puzzle": self.puzzle, "solved": True, "solution": list(self.solution)}


def reporting(puzzle: Any, state: np.ndarray, opts: Mapping[str, Any], on_solution: Any = None) -> Reported:
    """Report each of ``opts["reports"]`` (move lists) to ``on_solution`` as the solver would, a
    ``opts["pause"]`` seconds apart, then answer with the last."""
    from puzzlezero.solver import Improvement

    reports = [tuple(r) for r in opts["reports"]]
    for i, moves in enumerate(reports):
        if i:
            time.sleep(float(opts.get("pause", 0.0)))
        if on_solution is not None:
            on_solution(
                Improvement(0, moves, len(moves), float(len(moves)), 0.1 * i, 10 * (i + 1), f"stage {i + 1}")
            )
    return Reported(puzzle.name, reports[-1])


def heeds_cancel(puzzle: Any, state: np.ndarray, opts: Mapping[str, Any], on_solution: Any = None) -> Slept:
    """A search that runs for the job's ``seconds`` and looks at the searches' clock every few
    milliseconds, as the real ones do: a cancel (or the end of its time) stops it at its next look."""
    from puzzlezero.search import clock

    t0 = time.monotonic()
    deadline = clock.deadline_after(float(opts.get("seconds", 60.0)))
    while not clock.passed(deadline):
        time.sleep(0.005)
    return Slept(puzzle.name, os.getpid(), time.monotonic() - t0, opts.get("tag", ""))


def ignores_cancel(puzzle: Any, state: np.ndarray, opts: Mapping[str, Any], on_solution: Any = None) -> Slept:
    """A search that spins for the job's ``seconds`` without ever looking at the searches' clock
    (native code that never checks its deadline): a cancel cannot stop it."""
    t0 = time.monotonic()
    spins = 0
    while time.monotonic() - t0 < float(opts.get("seconds", 60.0)):
        spins += 1
    return Slept(puzzle.name, os.getpid(), time.monotonic() - t0, opts.get("tag", ""))


@dataclass(frozen=True)
class Undone:
    """What :func:`undoes_slowly` answers: a solve response's fields."""

    puzzle: str
    solution: tuple[str, ...]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"puzzle": self.puzzle, "solved": True, "solution": list(self.solution),
                "length": len(self.solution), "nodes_generated": 1, "seconds": self.seconds}  # fmt: skip


def undoes_slowly(puzzle: Any, state: np.ndarray, opts: Any, on_solution: Any = None) -> Undone:
    """Solve a one-turn cube (``R``) in 1.5 s, looking at the searches' clock as a search does
    (a cancel ends it early): a request that holds its worker for a while."""
    from puzzlezero.search import clock

    t0 = time.monotonic()
    deadline = clock.deadline_after(1.5)
    while not clock.passed(deadline):
        time.sleep(0.005)
    return Undone(puzzle.name, ("R'",), time.monotonic() - t0)
