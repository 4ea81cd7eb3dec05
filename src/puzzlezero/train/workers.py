"""Label workers: processes that make a chunk's labels while the trainer steps on the previous one.

On a CPU the two halves of a training iteration are about equal work: labels (target-network calls
on children or on search-tree nodes) and the gradient step. With one worker per spare core the
trainer never waits for labels, so two cores train about twice as fast as one. Workers evaluate the
target network on the run's ``device`` (with its ``amp``), like the trainer: on a GPU machine,
where one process's NumPy work on states and children leaves the GPU mostly idle, several workers
feed one trainer from several cores. Each worker runs one torch thread; jobs carry the target
weights they must use (:class:`~.objectives.LabelJob` names the version), so the labels do not
depend on timing and a resumed run repeats them exactly.
Workers are started with ``spawn`` (a fresh interpreter: no torch thread pools inherited across
``fork``) and ignore Ctrl-C, which the trainer handles.

The trainer waits for a chunk's labels under supervision (:meth:`LabelPool.result`): a worker that
dies (killed by the system for memory, say) or workers that give no labels within
:data:`RESULT_TIMEOUT` seconds (hung, or stopped) raise :class:`LabelWorkerError` naming the pids
and what became of them, and the pool's processes are then killed rather than waited for. The
run's last checkpoint is intact, so ``--resume`` continues it exactly.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from puzzlezero.errors import PuzzleError

if TYPE_CHECKING:
    from puzzlezero.nn.config import NetConfig
    from puzzlezero.puzzles.base import Puzzle
    from puzzlezero.train.config import TrainConfig
    from puzzlezero.train.objectives import LabelJob

__all__ = ["RESULT_TIMEOUT", "LabelPool", "LabelTicket", "LabelWorkerError"]

#: seconds the trainer waits for one chunk's labels before it calls the workers hung (a chunk takes
#: seconds, a minute or two with search-tree labels on a slow CPU)
RESULT_TIMEOUT = 1800.0

_STATE: dict[str, Any] = {}  # per worker process: puzzle, config, net config, cached value function


def _init(puzzle: Puzzle, config: TrainConfig, net_config: NetConfig) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)
    _STATE.update(puzzle=puzzle, config=config, net_config=net_config, version=None, value_fn=None)


def _work(job: LabelJob, weights: dict[str, torch.Tensor] | None) -> tuple[np.ndarray, np.ndarray]:
    from puzzlezero.nn.models import build_model
    from puzzlezero.train.objectives import make_labels, target_function

    puzzle, config = _STATE["puzzle"], _STATE["config"]
    value_fn = None
    if weights is not None:
        if _STATE["version"] != job.target_version:
            net = build_model(_STATE["net_config"])
            net.load_state_dict(weights)
            device = torch.device(config.device)
            _STATE["value_fn"] = target_function(puzzle, net.eval().to(device), config, device)
            _STATE["version"] = job.target_version
        value_fn = _STATE["value_fn"]
    return make_labels(puzzle, job, value_fn, config)


class LabelWorkerError(PuzzleError):
    """A label worker process that died, or workers that gave no labels in time; the message names
    the pids and what became of them."""


@dataclass(frozen=True)
class LabelTicket:
    """One submitted chunk: :meth:`result` waits for its labels under supervision."""

    pool: LabelPool
    job: LabelJob
    future: Future

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        return self.pool.result(self)


class LabelPool:
    """``workers`` label processes; :meth:`submit` returns a :class:`LabelTicket` of
    ``(states, targets)``, waited for at most ``timeout`` seconds with a look at the workers every
    ``poll`` seconds."""

    def __init__(
        self,
        workers: int,
        puzzle: Puzzle,
        config: TrainConfig,
        net_config: NetConfig,
        timeout: float = RESULT_TIMEOUT,
        poll: float = 1.0,
    ) -> None:
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init,
            initargs=(puzzle, config, net_config),
        )
        self.timeout, self.poll = float(timeout), float(poll)
        self._processes: dict[int, Any] = {}  # pid -> multiprocessing.Process, every worker started
        self._failed = False

    def submit(self, job: LabelJob, weights: dict[str, torch.Tensor] | None) -> LabelTicket:
        future = self._pool.submit(_work, job, weights)
        self._processes.update(getattr(self._pool, "_processes", None) or {})  # started by submit
        return LabelTicket(self, job, future)

    def pids(self) -> list[int]:
        """The pids of the worker processes started so far."""
        return sorted(self._processes)

    def result(self, ticket: LabelTicket) -> tuple[np.ndarray, np.ndarray]:
        """The labels of ``ticket``'s chunk. Raises :class:`LabelWorkerError` when a worker dies
        (its pid and exit code or signal) or when no labels come within :attr:`timeout` seconds
        (the workers' pids and states: running, sleeping, stopped); the workers are then killed."""
        chunk = ticket.job.chunk
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            try:
                return ticket.future.result(timeout=max(0.0, min(self.poll, left)))
            except TimeoutError:
                dead = self._dead()
                if dead:
                    self._fail(f"label worker {dead} while chunk {chunk} was labelled")
                if left <= self.poll:
                    states = ", ".join(f"pid {pid} ({_process_state(pid)})" for pid in self.pids())
                    self._fail(
                        f"no labels for chunk {chunk} within {self.timeout:g} s from the label workers "
                        f"({states}): a worker hung or was stopped"
                    )
            except BrokenProcessPool:
                dead, until = self._dead(), time.monotonic() + 5.0
                while not dead and time.monotonic() < until:  # the pool may be reaping it right now
                    time.sleep(0.05)
                    dead = self._dead()
                self._fail(f"label worker {dead or 'process ended'} while chunk {chunk} was labelled")

    def _dead(self) -> str:
        """``"pid N was killed by SIGKILL"`` (or ``"pid N exited with code C"``) for the first worker
        that ended, else ``""``."""
        for pid, proc in sorted(self._processes.items()):
            code = proc.exitcode
            if code is not None:
                if code >= 0:
                    return f"pid {pid} exited with code {code}"
                try:
                    return f"pid {pid} was killed by {signal.Signals(-code).name}"
                except ValueError:
                    return f"pid {pid} was killed by signal {-code}"
        return ""

    def _fail(self, what: str) -> None:
        self._failed = True
        self._kill()
        raise LabelWorkerError(f"{what}; the workers are stopped (the last checkpoint is intact: --resume)")

    def _kill(self) -> None:
        for proc in self._processes.values():
            if proc.exitcode is None:
                try:
                    os.kill(proc.pid, signal.SIGKILL)  # ends a stopped process too
                except ProcessLookupError:
                    pass

    def close(self) -> None:
        """Stop the workers: a healthy pool finishes the chunks it is labelling, a failed one is killed."""
        if self._failed:
            self._kill()
        self._pool.shutdown(wait=True, cancel_futures=True)


def _process_state(pid: int) -> str:
    """A process's state as ``/proc/PID/stat`` gives it (``running``, ``sleeping``, ``stopped``,
    ...), ``"gone"`` once it has ended, ``"unknown"`` where there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            code = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"
    except (OSError, IndexError):
        return "unknown"
    names = {"R": "running", "S": "sleeping", "D": "waiting on disk", "T": "stopped", "t": "stopped"}
    return names.get(code, "gone" if code in ("Z", "X") else code)
