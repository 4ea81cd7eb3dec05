"""Fast inference copies of a cost-to-go network (CPU).

:func:`inference_copy` folds every batch norm into the linear layer before it (exact up to float
rounding, ~5% faster) and optionally quantizes the linear layers to int8 with dynamic activation
quantization (fbgemm, VNNI): measured 2.5-3x more states/s on this project's 2-core Xeon for the
``small`` preset, with output errors of a few hundredths of a move on trained cube nets (mean
|diff| 0.035 at outputs near 15). The copy is frozen: it does not follow later training.

**A one-hot first layer as a sum of rows.** A plain one-hot input (``E`` state elements, each one
of ``V`` values) has ``E`` ones among its ``E V`` numbers, so the first linear layer's output is
the bias plus ``E`` columns of its weight: :class:`OneHotGather` adds those up
(``torch.nn.functional.embedding_bag``) from the elements' indices instead of multiplying an
``E V``-wide input, in float32. Where ``V`` is large that is the larger part of the network: the
48-puzzle's first layer is 2,401 x 1,000 of its 3.9M weights. On this project's 2-core Xeon
(``small`` preset, int8 elsewhere, 8,192 states, one thread) it made the whole network 1.39x faster
on puzzle48 (``V`` 49), 1.15x on puzzle35 (36), 1.13x on puzzle24 (25) and 1.03x on puzzle15
(16), and 1.8x slower on cube3's first layer (``V`` 6, 324 inputs): so the copy uses it from
:data:`GATHER_MIN_VALUES` values up (:data:`puzzlezero.nn.onehot_rows.MIN_VALUES`, where the
networks without torch do the same). The float32 sum is also closer to the float32 network than
the int8 layer it replaces (puzzle48: mean |diff| 0.29 against 0.37 moves at outputs near 300).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

from puzzlezero.nn.models import CostToGoNet
from puzzlezero.nn.onehot_rows import MIN_VALUES, sums_rows

__all__ = [
    "GATHER_MIN_VALUES",
    "OneHotGather",
    "fuse_batch_norms",
    "gathers_onehot",
    "inference_copy",
    "intra_op_threads",
    "torch_threads",
]

#: the fewest values per state element (``inputs.onehot_values(puzzle)``) at which an inference copy reads
#: its one-hot input as indices (:class:`OneHotGather`); measured break-even on the Xeon: 12-16
GATHER_MIN_VALUES = MIN_VALUES


class OneHotGather(nn.Module):
    """A linear layer whose input is a plain one-hot of ``E`` elements over ``values`` values (value
    index fastest), fed the positions of its ones: ``forward(idx[B, E])`` with ``idx[:, e] = e *
    values + state[:, e]`` returns ``bias + sum_e weight[:, idx[:, e]]`` (float32[B, out]), which is
    ``linear(onehot)``. A float input ``[B, E * values]`` is taken as the one-hot itself."""

    def __init__(self, linear: nn.Linear, values: int) -> None:
        super().__init__()
        self.values = int(values)
        self.rows = nn.Parameter(linear.weight.detach().t().contiguous(), requires_grad=False)
        bias = linear.bias.detach() if linear.bias is not None else torch.zeros(linear.out_features)
        self.bias = nn.Parameter(bias.clone(), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_floating_point():
            return F.linear(x, self.rows.t(), self.bias)
        return F.embedding_bag(x, self.rows, mode="sum") + self.bias


def gathers_onehot(model: nn.Module) -> int | None:
    """``V`` where ``model`` (an inference copy) takes its input as one-hot indices
    (:class:`OneHotGather`), else ``None``."""
    trunk = getattr(model, "trunk", None)
    first = trunk[0] if isinstance(trunk, nn.Sequential) and len(trunk) else None
    return first.values if isinstance(first, OneHotGather) else None


def fuse_batch_norms(model: CostToGoNet) -> CostToGoNet:
    """A copy of ``model`` in eval mode with each ``Linear -> BatchNorm1d`` and ``Conv2d ->
    BatchNorm2d`` pair folded into one layer (the batch norm becomes ``Identity``). Same outputs as
    ``model.eval()``."""
    fused = copy.deepcopy(model).eval()
    _fuse_sequential(fused.trunk)
    for head in getattr(fused, "goal_heads", None) or ():  # multi-head: each goal's own layers
        _fuse_sequential(head.hidden)
    if model.config.arch == "conv":
        # the folded weights come out NCHW (torch's stubs lack ``to``'s memory_format keyword)
        fused.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    for p in fused.parameters():
        p.requires_grad_(False)
    return fused


def _fuse_sequential(layers: nn.Sequential) -> None:
    """Fold, in place, every ``Linear -> BatchNorm1d`` and ``Conv2d -> BatchNorm2d`` pair and
    every residual block's pairs."""
    for i in range(len(layers) - 1):
        layer, following = layers[i], layers[i + 1]
        if isinstance(layer, nn.Linear) and isinstance(following, nn.BatchNorm1d):
            layers[i] = fuse_linear_bn_eval(layer, following)
            layers[i + 1] = nn.Identity()
        elif isinstance(layer, nn.Conv2d) and isinstance(following, nn.BatchNorm2d):
            layers[i] = fuse_conv_bn_eval(layer, following)
            layers[i + 1] = nn.Identity()
    for block in layers:
        # ResidualBlock (fc1/bn1/fc2/bn2) or ConvBlock (conv1/cbn1/conv2/cbn2) of .models
        if hasattr(block, "fc1") and isinstance(block.bn1, nn.BatchNorm1d):
            block.fc1, block.bn1 = fuse_linear_bn_eval(cast(nn.Linear, block.fc1), block.bn1), nn.Identity()
            block.fc2, block.bn2 = (
                fuse_linear_bn_eval(cast(nn.Linear, block.fc2), cast(nn.BatchNorm1d, block.bn2)),
                nn.Identity(),
            )
        if hasattr(block, "conv1") and isinstance(block.cbn1, nn.BatchNorm2d):
            block.conv1, block.cbn1 = (
                fuse_conv_bn_eval(cast(nn.Conv2d, block.conv1), block.cbn1),
                nn.Identity(),
            )
            block.conv2, block.cbn2 = (
                fuse_conv_bn_eval(cast(nn.Conv2d, block.conv2), cast(nn.BatchNorm2d, block.cbn2)),
                nn.Identity(),
            )


def inference_copy(
    model: CostToGoNet,
    *,
    int8: bool = False,
    device: str | torch.device = "cpu",
    onehot_values: int | None = None,
) -> CostToGoNet:
    """A frozen eval-mode copy for fast batched inference on ``device``: batch norms folded, and with
    ``int8=True`` (CPU only) linear layers quantized to int8. Falls back to float32 with a warning
    where this torch build has no dynamic quantization. ``onehot_values``: the puzzle's
    ``onehot_values`` where the model reads its plain one-hot encoding; on a CPU, from
    :data:`GATHER_MIN_VALUES` up, the first layer becomes a :class:`OneHotGather` (float32, never
    quantized) and the copy takes index input (:func:`gathers_onehot`; ``predict`` and the
    searches' functions make it)."""
    fused = fuse_batch_norms(model).to(device)
    cpu = torch.device(device).type == "cpu"
    config = model.config
    if (
        cpu
        and onehot_values is not None
        and sums_rows(config, onehot_values)
        and isinstance(fused.trunk[0], nn.Linear)
    ):
        fused.trunk[0] = OneHotGather(cast(nn.Linear, fused.trunk[0]), onehot_values)
    if not int8:
        return fused
    if not cpu:
        warnings.warn("int8 inference is CPU only; using float32 on " + str(device), stacklevel=2)
        return fused
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.ao.quantization announces its move to torchao
            from torch.ao.quantization import quantize_dynamic

            quant = quantize_dynamic(fused, {nn.Linear}, dtype=torch.qint8)
    except (ImportError, RuntimeError, AttributeError) as exc:
        warnings.warn(f"int8 inference unavailable ({exc}); using float32", stacklevel=2)
        return fused
    quant.config, quant.puzzle, quant.card = model.config, model.puzzle, model.card
    return quant


def intra_op_threads() -> int:
    """The threads torch runs one operation on (``torch.get_num_threads()``)."""
    return torch.get_num_threads()


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the body with ``n`` torch intra-op threads, the count before restored after: searches
    in ``n`` Python threads side by side each run their networks on the thread that calls them."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
