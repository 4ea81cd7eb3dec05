"""The DeepCubeA cost-to-go network; its :class:`NetConfig` and size presets are defined in
:mod:`puzzlezero.nn.config` and importable from here too.

Architecture (DeepCubeA, Methods, "Neural network architecture", Supplementary Fig. 3)::

    input[B, D] -> FC h1 -> BN -> ReLU -> FC h2 -> BN -> ReLU
                -> R x residual block (FC h2 -> BN -> ReLU -> FC h2 -> BN, + skip, ReLU)
                -> value head: FC 1            (cost-to-go, float32[B])
                   optional policy head: FC A  (logits over actions, float32[B, A])
                   optional Q head: FC A       (cost-to-go after each action, float32[B, A])

Multi-head networks (Dong, Hao and Nakayama, "Solving the Rubik's Cube with Deep Reinforcement
Learning Using Multi-Headed Models", §4.2.2) learn one cost-to-go per goal (cube3: ``layer1``,
``layer2``, ``solved``): ``goals`` names the heads, the trunk above is shared, and each goal gets
``head_layers`` hidden layers of its own before its output (two layers form a residual block, an odd
one is FC -> BN -> ReLU), so ``forward`` returns ``float32[B, G]``. With ``head_layers = 0`` only
the output layer differs (Dong et al.'s "MultiH Baseline"). Their variants, for their 4-block
network: :data:`MULTIHEAD_VARIANTS` (``"4+1"``: 4 shared blocks and one FC layer per goal;
``"3+2"``: 3 shared blocks and a residual block per goal; ``"4+2"``: 4 shared blocks and a residual
block per goal). A network with no ``goals`` (every model before them) or one goal has the single
value output ``float32[B]``.

Batch normalisation and ReLU are used in every hidden layer, no regularisation. The paper's network
(``"paper"`` preset: 5000 / 1000 / 4 blocks of 1000) has 14.7 M parameters for the cube's 324 one-hot
inputs; the CPU presets are sized for a 2-core machine (a 2 M-parameter net evaluates ~30 k states/s).

Grid puzzles (Lights Out, Sokoban) also have a residual convolutional network (``arch="conv"``,
presets :data:`CONV_PRESETS`), fed by a puzzle's ``"grid"`` encoding ``float32[B, C, H, W]``::

    input[B, C, H, W] (+ a constant plane of ones, so zero padding marks the board's edge)
        -> conv 3x3 (C+1 -> ch) -> BN -> ReLU
        -> R x residual block (conv 3x3 -> BN -> ReLU -> conv 3x3, dilation d_r -> BN, + skip, ReLU)
        -> global mean and max pooling over the board (2 ch) -> FC h2 -> BN -> ReLU
        -> value head: FC 1 (and the optional policy / Q heads: FC A)

Why this shape: the cost-to-go of a grid puzzle is a property of the whole board (which lights
must be pressed follows from every light, a box's way to its target runs across the room), so
every cell's final features must see every other cell. A 3x3 convolution of dilation ``d`` widens
the receptive field by ``d`` cells each side; the second convolution of block ``r`` has dilation
``1, 2, 4, 1, 2, 4, ...``, which grows the field quickly while keeping it gap-free (each dilated
convolution follows an undilated one, :func:`receptive_radius` computes the exact covered
offsets). The number of blocks is raised where needed so that the radius reaches ``max(H, W) - 1``:
the feature at one corner depends on the opposite corner. Pooling over the board (rather than
flattening) keeps the value head independent of the board size and counts per-cell evidence
(Lights Out: the number of cells to press). A plain convolution pads with zeros, which on a Lights
Out board reads like lights that are off; the constant plane of ones appended to the input makes
the board's edge visible, as on-board planes do in Go networks.

>>> cfg = NetConfig.from_preset("small", input_dim=324)
>>> net = CostToGoNet(cfg)
>>> import torch
>>> net.eval()(torch.zeros(3, 324)).shape
torch.Size([3])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from puzzlezero.errors import PuzzleError
from puzzlezero.nn.config import (  # NetConfig and its presets, importable from here too
    ARCHS,
    CONV_PRESETS,
    MULTIHEAD_VARIANTS,
    PRESET_FIELDS,
    PRESETS,
    NetConfig,
    block_dilations,
    blocks_to_cover,
    config_parameters,
    receptive_radius,
)

__all__ = [
    "MULTIHEAD_VARIANTS",
    "NetConfig",
    "CostToGoNet",
    "PRESETS",
    "CONV_PRESETS",
    "ARCHS",
    "PRESET_FIELDS",
    "build_model",
    "count_parameters",
    "config_parameters",
    "grown_weights",
    "receptive_radius",
    "blocks_to_cover",
]

#: :func:`puzzlezero.nn.predict` feeds a conv net on a CPU at most this many states per pass: on
#: this project's 2-core CPU the ``conv`` preset does 1.6-2.5x more boards/s in chunks of 128-512
#: than in one of 4096 (the activations then stay in cache)
CPU_CHUNK = 512


class ResidualBlock(nn.Module):
    """Two FC layers of width ``width`` with batch norm; ``relu(x + bn(fc(relu(bn(fc(x))))))``."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.bn1 = nn.BatchNorm1d(width)
        self.fc2 = nn.Linear(width, width)
        self.bn2 = nn.BatchNorm1d(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.fc1(x)))
        return torch.relu(x + self.bn2(self.fc2(y)))


class GoalHead(nn.Module):
    """One goal's own layers of a multi-head network: ``layers`` hidden layers of width ``width``
    (a :class:`ResidualBlock` per two, FC -> BN -> ReLU for an odd one), then FC 1."""

    def __init__(self, width: int, layers: int) -> None:
        super().__init__()
        hidden: list[nn.Module] = [ResidualBlock(width) for _ in range(layers // 2)]
        if layers % 2:
            hidden += [nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU()]
        self.hidden = nn.Sequential(*hidden)
        self.out = nn.Linear(width, 1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.out(self.hidden(h)).squeeze(1)


class ConvBlock(nn.Module):
    """``relu(x + bn(conv_d(relu(bn(conv(x))))))``: two 3x3 convolutions of ``channels``, the second
    of dilation ``dilation``; padding keeps the board size."""

    def __init__(self, channels: int, dilation: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.cbn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=dilation, dilation=dilation, bias=False)
        self.cbn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.cbn1(self.conv1(x)))
        return torch.relu(x + self.cbn2(self.conv2(y)))


class BoardInput(nn.Module):
    """``[B, C*H*W]`` or ``[B, C, H, W]`` -> ``[B, C+1, H, W]``: the grid with a plane of ones
    appended, so that zero padding is distinguishable from cells of value 0."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__()
        self.shape = tuple(shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.reshape(x.shape[0], *self.shape)
        x = torch.cat([x, torch.ones_like(x[:, :1])], dim=1)
        return x.contiguous(memory_format=torch.channels_last)


class GlobalPool(nn.Module):
    """``[B, ch, H, W]`` -> ``[B, 2 ch]``: the mean and the maximum of each channel over the board."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=1)


def _mlp_trunk(config: NetConfig) -> nn.Sequential:
    return nn.Sequential(  # indices are state_dict keys of shipped models: keep them
        nn.Linear(config.input_dim, config.h1),
        nn.BatchNorm1d(config.h1),
        nn.ReLU(),
        nn.Linear(config.h1, config.h2),
        nn.BatchNorm1d(config.h2),
        nn.ReLU(),
        *[ResidualBlock(config.h2) for _ in range(config.num_res_blocks)],
    )


def _conv_trunk(config: NetConfig) -> nn.Sequential:
    ch = config.channels
    return nn.Sequential(
        BoardInput(config.input_shape),
        nn.Conv2d(config.input_shape[0] + 1, ch, 3, padding=1, bias=False),
        nn.BatchNorm2d(ch),
        nn.ReLU(),
        *[ConvBlock(ch, d) for d in block_dilations(config.num_res_blocks)],
        GlobalPool(),
        nn.Linear(2 * ch, config.h2),
        nn.BatchNorm1d(config.h2),
        nn.ReLU(),
    )


class CostToGoNet(nn.Module):
    """The paper's cost-to-go network, ``forward(x[B, D]) -> float32[B]``, or with
    ``config.arch == "conv"`` the residual convolutional one, ``forward(x[B, C, H, W])`` (see the
    module docstring). Both end in the same heads on an ``h2``-wide hidden vector; a multi-head
    network (``config.multi_head``) returns ``float32[B, G]``, one column per ``config.goals``.

    Attributes set by :func:`puzzlezero.nn.load_model`: ``puzzle`` (registry name or ``""``) and
    ``card`` (the model card dict); :attr:`config` always.
    """

    def __init__(self, config: NetConfig) -> None:
        super().__init__()
        self.config = config
        self.puzzle: str = ""
        self.card: dict[str, Any] = {}
        self.trunk = _conv_trunk(config) if config.arch == "conv" else _mlp_trunk(config)
        # one output per goal; with goal-specific layers each goal has its own GoalHead instead
        heads = len(config.goal_names)
        self.value = nn.Linear(config.h2, heads) if config.head_layers == 0 else None
        self.goal_heads = (
            nn.ModuleList([GoalHead(config.h2, config.head_layers) for _ in range(heads)])
            if config.head_layers > 0
            else None
        )
        self.policy = nn.Linear(config.h2, config.num_actions) if config.policy_head else None
        self.q = nn.Linear(config.h2, config.num_actions) if config.q_head else None
        if config.arch == "conv":  # NHWC: 20-40% faster convolutions on CPUs (oneDNN) and GPUs
            self.to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # not in torch's stubs

    def forward(self, x: torch.Tensor, all_heads: bool = False) -> Any:
        """Cost-to-go estimates ``float32[B]`` for encoded states ``x[B, input_dim]`` (or the grid
        ``x[B, C, H, W]``); with
        ``all_heads=True`` the dict of :meth:`heads` (so that a DistributedDataParallel wrapper,
        which only sees ``forward``, can train every head)."""
        if self.config.arch == "mlp" and x.dim() > 2:
            x = x.flatten(1)  # a grid encoding [B, C, H, W] feeds the MLP as its C*H*W numbers
        h = self.trunk(x)
        if self.goal_heads is not None:
            value = torch.stack([head(h) for head in self.goal_heads], dim=1)
        else:
            assert self.value is not None  # no goal heads: head_layers == 0, so the shared value layer
            value = self.value(h)
            value = value if self.config.multi_head else value.squeeze(1)
        if not all_heads:
            return value
        out = {"value": value}
        if self.policy is not None:
            out["policy"] = self.policy(h)
        if self.q is not None:
            out["q"] = self.q(h)
        return out

    def heads(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """All heads: ``{"value": [B], "policy": [B, A], "q": [B, A]}`` (those that exist)."""
        return self.forward(x, all_heads=True)

    def init_q_from_value(self, move_cost: float | Sequence[float] | np.ndarray) -> None:
        """Set the Q head to ``Q(s, a) = cost(a) + J(s)`` (a copy of the value head plus each
        action's cost: one number for all, or ``puzzle.action_costs``): a Q head added to a
        trained value network starts from what that network knows instead of from noise
        (``min_a Q`` is then ``J`` plus one move, an over-estimate that Q-learning targets pull
        down)."""
        if self.q is None or self.value is None:
            raise PuzzleError("this network has no Q head")
        with torch.no_grad():
            self.q.weight.copy_(self.value.weight.expand_as(self.q.weight))
            cost = torch.as_tensor(np.array(move_cost, dtype=np.float64), dtype=self.q.bias.dtype)  # a copy
            self.q.bias.copy_(self.value.bias + cost.to(self.q.bias.device))


def build_model(config: NetConfig, seed: int | None = None) -> CostToGoNet:
    """A freshly initialised network of ``config.arch`` (PyTorch default init; deterministic when
    ``seed`` is given). Every architecture has :class:`CostToGoNet`'s interface."""
    if config.arch == "cubeconv":
        from puzzlezero.nn.cube_conv import CubeConvNet

        make: Any = CubeConvNet
    else:
        make = CostToGoNet
    if seed is None:
        return make(config)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return make(config)


def grown_weights(model: CostToGoNet, weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``weights`` of a shallower or single-headed network, completed so that ``model`` starts out
    computing what that network computed (function-preserving growth, as in Net2Net):

    * a residual block of ``model`` that ``weights`` lack (more shared blocks, or a goal head's own
      blocks) starts as the identity: its fresh weights with the last batch norm's scale at 0, so
      ``relu(x + 0) = x`` for the non-negative ``x`` a block receives;
    * a single value output (a ``solved`` model) starts every goal's output of a multi-head network
      (each head then begins at the solved cost-to-go, an over-estimate for a sub-goal that its own
      targets pull down); a goal head with an FC layer of its own (odd ``head_layers``) stays fresh.

    Keys that ``weights`` has are kept as they are; the result still goes through
    ``load_state_dict``, which names anything that does not fit."""
    own = model.state_dict()
    out = dict(weights)
    for name, module in model.named_modules():
        if isinstance(module, ResidualBlock):
            keys = [f"{name}.{k}" for k in module.state_dict()]
            if not any(k in weights for k in keys):
                out.update({k: own[k].clone() for k in keys})
                out[f"{name}.bn2.weight"] = torch.zeros_like(own[f"{name}.bn2.weight"])
    value_w, value_b = weights.get("value.weight"), weights.get("value.bias")
    if value_w is not None and value_b is not None and value_w.shape[0] == 1:
        if model.value is not None and "value.weight" in own and own["value.weight"].shape[0] > 1:
            out["value.weight"] = value_w.expand_as(own["value.weight"]).clone()
            out["value.bias"] = value_b.expand_as(own["value.bias"]).clone()
        if model.goal_heads is not None and model.config.head_layers % 2 == 0:
            for i in range(len(model.goal_heads)):
                out[f"goal_heads.{i}.out.weight"] = value_w.clone()
                out[f"goal_heads.{i}.out.bias"] = value_b.clone()
    return out


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
