"""What the data-parallel ranks exchange after each chunk (see :mod:`puzzlezero.train.ddp`).

The trainer and the training loop call these only when ``world_size > 1``, inside the process
group :func:`puzzlezero.train.ddp.start` joined.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist

if TYPE_CHECKING:
    from puzzlezero.train.protocols import RankTrainer

__all__ = ["sync_chunk", "agree"]


def _comm_device(t: RankTrainer) -> torch.device:
    return t.device if dist.get_backend() == "nccl" else torch.device("cpu")


def sync_chunk(t: RankTrainer, loss: float, labels: int) -> tuple[float, int]:
    """End of a chunk: every rank takes rank 0's batch-norm running statistics (each rank's last
    forward pass updated its own); returns the chunk's loss averaged and its labels summed over
    the ranks (the same numbers on every rank)."""
    for buf in t.model.buffers():
        dist.broadcast(buf, src=0)
    both = torch.tensor([loss, float(labels)], dtype=torch.float64, device=_comm_device(t))
    dist.all_reduce(both)
    return float(both[0]) / t.world_size, round(float(both[1]))


def agree(t: RankTrainer, reason: str) -> str:
    """Rank 0's stop decision (``""`` = go on) and curriculum depth bound, on every rank."""
    shared: list[Any] = [reason, t.counters.max_scramble_now]
    dist.broadcast_object_list(shared, src=0)
    reason, t.counters.max_scramble_now = shared
    return reason
