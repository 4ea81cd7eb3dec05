"""Mixed precision for training (``TrainConfig.amp``): bfloat16 autocast around forward passes.

With ``amp="bf16"`` the trainer runs the forward pass of each gradient step and the target
network's label inference under ``torch.autocast(device, dtype=torch.bfloat16)``: matrix products
in bfloat16 with float32 accumulation, the loss, gradients and Adam state in float32 (bfloat16 has
float32's range, so no loss scaling is needed). It is meant for GPUs' bf16 tensor cores; on a CPU
without bf16 instructions it is much slower than float32 (6-8x for the ``small`` preset on this
project's 2-core Xeon), hence the warning. Label worker processes (``label_workers``) use it too, on
the same device; the evaluation stays float32. ``amp="off"`` changes nothing: the contexts below
are no-ops and results stay bit for bit those of float32 training.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import TypeVar

import torch

__all__ = ["autocast", "with_autocast", "check_amp"]

F = TypeVar("F", bound=Callable[..., object])


def autocast(amp: str, device: torch.device) -> contextlib.AbstractContextManager[object]:
    """The autocast context for ``amp`` on ``device`` (a no-op context for ``"off"``)."""
    if amp == "off":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)


def with_autocast(fn: F, amp: str, device: torch.device) -> F:
    """``fn`` (a value function ``states -> float32[B]``) called under :func:`autocast`; ``fn``
    itself for ``"off"``."""
    if amp == "off":
        return fn

    def wrapped(*args: object, **kwargs: object) -> object:
        with autocast(amp, device):
            return fn(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def check_amp(amp: str, device: torch.device) -> None:
    """Warn when bfloat16 autocast is asked for where it is likely slower than float32 (CPU)."""
    if amp != "off" and device.type != "cuda":
        warnings.warn(
            f"amp={amp!r} on {device}: bfloat16 autocast is meant for GPUs and is usually slower than "
            "float32 on a CPU (use amp=off here)",
            stacklevel=3,
        )
