"""Data-parallel training with ``torch.distributed``: several GPUs (or CPU processes) train one network.

Launch ``puzzlezero train`` under torchrun, one process per GPU::

    torchrun --standalone --nproc_per_node 8 -m puzzlezero train cube3 --out runs/cube3 \\
        --max-minutes 10 --set device=cuda --set amp=bf16 --set batch_size=10000

``puzzlezero train`` sees ``WORLD_SIZE > 1`` (or ``--ddp``) and calls :func:`train`. What each
process (rank ``r`` of ``W``) does:

* **the same start**: rank 0 creates or resumes the run folder first; the other ranks then read the
  checkpoint it wrote or resumed from, so all start from the same weights, Adam state and counters.
* **its own data**: chunk ``j`` of rank ``r`` is seeded with ``(seed, r, j)`` (see
  :meth:`Trainer._job`), so the ranks label different states, ``B`` per rank and step.
* **one gradient**: gradient steps go through :class:`DistributedDataParallel`, which averages the
  gradients over the ranks, so every rank takes the same Adam step and the weights stay identical.
  At the end of each chunk the ranks also take rank 0's batch-norm statistics, average the chunk's
  loss (the ``loss`` target-update rule then decides the same everywhere) and sum the fresh labels;
  ``samples`` counts ``B * W`` per iteration (:func:`puzzlezero.train.collectives.sync_chunk`). Target
  updates therefore happen on all ranks alike.
* **one writer**: rank 0 alone writes the log, checkpoints, plot, evaluations and the exported model,
  and decides after each chunk whether to stop (time limit, signal, limits);
  :func:`puzzlezero.train.collectives.agree` tells the others, so all stop after the same chunk.

Backends: ``nccl`` on CUDA (rank ``r`` uses GPU ``LOCAL_RANK``), ``gloo`` on CPU (the test suite runs
two CPU processes). Label worker processes are not supported here (``label_workers`` must be 0).
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from puzzlezero.errors import PuzzleError

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig
    from puzzlezero.train.trainer import Trainer

__all__ = ["World", "launched", "start", "make_trainer", "train"]

#: how long a rank waits for the others; rank 0 evaluates and checkpoints while they wait
TIMEOUT = datetime.timedelta(minutes=60)

_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class World:
    """This process's place among the data-parallel ranks (from torchrun's environment)."""

    rank: int
    world_size: int
    local_rank: int
    backend: str


def launched() -> bool:
    """Whether this process was started by torchrun with more than one process."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def start(config: TrainConfig) -> World:
    """Join the process group torchrun set up (``nccl`` on CUDA, ``gloo`` on CPU); on CUDA this
    process then uses GPU ``LOCAL_RANK``. Raises :class:`PuzzleError` outside torchrun."""
    missing = [k for k in _ENV if k not in os.environ]
    if missing:
        raise PuzzleError(
            f"data-parallel training needs the environment torchrun sets ({', '.join(missing)} missing): "
            "launch it as torchrun --nproc_per_node N -m puzzlezero train ..."
        )
    if config.label_workers:
        raise PuzzleError(
            f"data-parallel training makes labels in each rank: set label_workers=0 "
            f"(got {config.label_workers})"
        )
    rank, world_size, local_rank = (int(os.environ[k]) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))
    device = torch.device(config.device)
    if device.type == "cuda":
        if device.index is not None and world_size > 1:
            raise PuzzleError(
                f"data-parallel training: use device=cuda, not {config.device!r} "
                "(each rank takes the GPU of its LOCAL_RANK)"
            )
        if not torch.cuda.is_available():
            raise PuzzleError(
                f"config: device {config.device!r} asked for, but this torch build sees no CUDA GPU"
            )
        torch.cuda.set_device(local_rank)  # "cuda" now means this rank's GPU
    backend = "nccl" if device.type == "cuda" else "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend, rank=rank, world_size=world_size, timeout=TIMEOUT)
    return World(rank=rank, world_size=world_size, local_rank=local_rank, backend=backend)


def make_trainer(
    config: TrainConfig,
    run_dir: str | os.PathLike[str],
    world: World,
    *,
    resume: bool = False,
    command: str | None = None,
) -> Trainer:
    """This rank's :class:`Trainer`: rank 0 creates (or resumes) ``run_dir`` as a lone trainer would;
    the other ranks then load the checkpoint it holds and never write. A failure on rank 0 (a
    folder that already holds a run, say) is raised on every rank."""
    from puzzlezero.train.trainer import Trainer

    trainer = error = None
    if world.rank == 0:
        try:
            trainer = Trainer(config, run_dir, resume=resume, command=command)
        except PuzzleError as exc:
            error = exc
    message = [None if error is None else str(error)]
    dist.broadcast_object_list(message, src=0)
    if error is not None:
        raise error
    if message[0] is not None:
        raise PuzzleError(message[0])
    if trainer is None:  # ranks > 0: the state rank 0 starts from, read only
        trainer = Trainer(config, Path(run_dir), read_only=True, command=command)
    trainer.rank, trainer.world_size = world.rank, world.world_size
    model = trainer.model
    trainer.train_net = DistributedDataParallel(
        model,
        device_ids=[world.local_rank] if world.backend == "nccl" else None,
        find_unused_parameters=model.policy is not None or model.q is not None,  # forward: value head only
    )
    return trainer


def train(
    config: TrainConfig,
    run_dir: str | os.PathLike[str],
    *,
    resume: bool = False,
    command: str | None = None,
    max_minutes: float | None = None,
) -> tuple[Trainer, dict[str, Any]]:
    """Join the process group, train (see :meth:`Trainer.run`) and leave it; returns this rank's
    trainer and summary (rank 0's is the one to report)."""
    world = start(config)
    try:
        trainer = make_trainer(config, run_dir, world, resume=resume, command=command)
        summary = trainer.run(max_minutes=max_minutes)
        # every rank reaches the end before any tears the group down: a rank that left while rank 0
        # still wrote its last checkpoint and export could abort in gloo's teardown (SIGABRT,
        # "terminate called without an active exception") in about 1 of 10 runs on 2 cores
        dist.barrier()
        return trainer, summary
    finally:
        dist.destroy_process_group()
