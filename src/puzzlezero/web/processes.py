"""Process utilities of the solver pool's supervisor: stopping worker processes (SIGTERM that a
frozen process acts on, SIGKILL), waiting for them to exit until a deadline, and saying how one
ended."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from multiprocessing.process import BaseProcess

__all__ = ["exit_text", "join", "kill", "terminate"]


def terminate(process: BaseProcess) -> None:
    """SIGTERM, and SIGCONT so that a frozen (SIGSTOPped) worker acts on it."""
    if process.is_alive() and process.pid is not None:
        with contextlib.suppress(OSError):
            process.terminate()
            os.kill(process.pid, signal.SIGCONT)


def kill(process: BaseProcess) -> None:
    """SIGKILL, where the process still runs (a closed process handle is left alone)."""
    with contextlib.suppress(OSError, ValueError):
        if process.is_alive():
            process.kill()


def join(procs: list[BaseProcess], deadline: float) -> None:
    """Wait until every one of ``procs`` has exited, or until ``deadline`` (``time.monotonic()``)."""
    from multiprocessing.connection import wait

    alive = [p for p in procs if p.is_alive()]
    while alive and (left := deadline - time.monotonic()) > 0:
        wait([p.sentinel for p in alive], left)
        alive = [p for p in alive if p.is_alive()]


def exit_text(code: int | None) -> str:
    """``"killed by SIGKILL"``, ``"exit code 3"``."""
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
