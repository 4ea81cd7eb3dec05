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
"""

from __future__ import annotations

import multiprocessing
import signal
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:
    from puzzlezero.nn.models import NetConfig
    from puzzlezero.puzzles.base import Puzzle
    from puzzlezero.train.config import TrainConfig
    from puzzlezero.train.objectives import LabelJob

__all__ = ["LabelPool"]

_STATE: dict[str, Any] = {}  # per worker process: puzzle, config, net config, cached value function


def _init(puzzle: Puzzle, config: TrainConfig, net_config: NetConfig) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)
    _STATE.update(puzzle=puzzle, config=config, net_config=net_config, version=None, value_fn=None)


def _work(job: LabelJob, weights: dict[str, torch.Tensor] | None) -> tuple[np.ndarray, np.ndarray]:
    from puzzlezero.nn.models import build_model
    from puzzlezero.train.objectives import make_labels
    from puzzlezero.train.trainer import target_function

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


class LabelPool:
    """``workers`` label processes; :meth:`submit` returns a future of ``(states, targets)``."""

    def __init__(self, workers: int, puzzle: Puzzle, config: TrainConfig, net_config: NetConfig) -> None:
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init,
            initargs=(puzzle, config, net_config),
        )

    def submit(self, job: LabelJob, weights: dict[str, torch.Tensor] | None) -> Future:
        return self._pool.submit(_work, job, weights)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
