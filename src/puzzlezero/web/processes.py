"""Process utilities of the solver pool: stopping worker processes (SIGKILL; SIGTERM that a frozen
process acts on), waiting for them to exit until a deadline, saying how one ended, and, on the
worker's side, dying with the parent (:func:`die_with_parent`)."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import time
from multiprocessing.process import BaseProcess

__all__ = ["die_with_parent", "exit_text", "join", "kill", "terminate"]

#: ``prctl`` option: the signal the kernel sends a process when the thread that started it ends
PR_SET_PDEATHSIG = 1


def die_with_parent() -> bool:
    """Linux: have the kernel SIGKILL this process when its parent ends (``prctl(PR_SET_PDEATHSIG)``),
    so a worker never outlives a server that was killed; a parent already gone by the time the
    signal is set ends this process at once. The kernel ties the signal to the thread that started
    the process: the solver pool starts its workers from its event loop's thread, which lives as
    long as the pool. Elsewhere (or where ``prctl`` is not available) it does nothing: ``False``."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None and os.getppid() != parent.pid:
        os._exit(1)  # the parent ended before the signal was set: nobody would ever stop this process
    return True


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
