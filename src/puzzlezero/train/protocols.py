"""What the training loop (:mod:`puzzlezero.train.loop`) and the data-parallel exchanges
(:mod:`puzzlezero.train.collectives`) use of a :class:`~puzzlezero.train.trainer.Trainer`, as
protocols: those modules are written against these, so that they need nothing of the trainer,
which calls them. Every ``Trainer`` is both."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import torch

from puzzlezero.train.checkpoint import Counters
from puzzlezero.train.config import TrainConfig

__all__ = ["LoopTrainer", "RankTrainer"]


class RankTrainer(Protocol):
    """What the exchanges between data-parallel ranks use: the model whose batch-norm statistics
    rank 0 hands on, the device, the number of ranks and the counters they agree on."""

    @property
    def model(self) -> torch.nn.Module: ...

    @property
    def device(self) -> torch.device: ...

    @property
    def world_size(self) -> int: ...

    @property
    def counters(self) -> Counters: ...


class LoopTrainer(RankTrainer, Protocol):
    """What the outer training loop uses: the configuration, the run folder, and a chunk of
    training, a log line, a checkpoint and an evaluation on demand; rank 0 alone writes."""

    @property
    def rank(self) -> int: ...

    @property
    def config(self) -> TrainConfig: ...

    @property
    def run_dir(self) -> Path: ...

    def train_chunk(self) -> dict[str, Any]: ...

    def append_log(self, record: dict[str, Any]) -> None: ...

    def checkpoint(self) -> Path: ...

    def evaluate(self) -> dict[str, Any]: ...
