"""Picklable fake solvers and worker start-ups for the web pool's process tests: module-level, so
spawned worker processes can import them by name."""

from __future__ import annotations

import os
import resource
import time
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


def sleepy(puzzle: Any, state: np.ndarray, *, seconds: float = 0.0, tag: str = "", **options: Any) -> Slept:
    """Sleep ``seconds`` (a long search), then answer with this process's pid."""
    time.sleep(seconds)
    return Slept(puzzle.name, os.getpid(), seconds, tag)


def raising(puzzle: Any, state: np.ndarray, *, error: str = "SystemExit", **options: Any) -> Slept:
    """Raise ``SystemExit`` (what ``heuristic: "sys:exit"`` did) or ``MemoryError``."""
    if error == "SystemExit":
        raise SystemExit(0)
    if error == "MemoryError":
        raise MemoryError
    if error == "allocate":  # a real allocation: 4 GiB of zeros written to (fails under RLIMIT_AS)
        np.ones(1 << 29, dtype=np.float64)
    return Slept(puzzle.name, os.getpid(), 0.0, error)


def address_limit(puzzle: Any, state: np.ndarray, *, error: str = "", **options: Any) -> Slept:
    """Answer with this process's ``RLIMIT_AS`` soft limit in MiB (-1: none) as ``seconds``, or
    fail as :func:`raising` does when ``error`` is named."""
    if error:
        return raising(puzzle, state, error=error)
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return Slept(puzzle.name, os.getpid(), -1.0 if soft == resource.RLIM_INFINITY else float(soft >> 20), "")


def exit_at_start() -> None:
    """A worker start-up that fails as badly as it can: ``SystemExit``."""
    raise SystemExit(7)


def hang_at_start() -> None:
    """A worker start-up that never ends (a hung import or a frozen disk)."""
    import time

    time.sleep(3600)
