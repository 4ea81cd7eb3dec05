"""The DeepCubeA cost-to-go network and its size presets.

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
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from puzzlezero.errors import ModelFileError, PuzzleError, UnknownNameError

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

#: preset name -> (h1, h2, num_res_blocks); parameter counts are for the cube's 324 inputs
PRESETS: dict[str, tuple[int, int, int]] = {
    "tiny": (64, 32, 1),  # tests and smoke runs: ~25 k parameters
    "small": (1000, 500, 2),  # ~1.8 M: ~30 k states/s inference on 2 CPU threads
    "medium": (1500, 700, 3),  # ~4.5 M
    "paper": (5000, 1000, 4),  # DeepCubeA: 14.7 M
    # Rute's convolutional cube network (nn/cube_conv.py): h1 = heads' hidden width, h2 = filters
    "cubeconv": (64, 64, 4),  # Rute's: 4 residual blocks of 64 filters, 8 states of history
    "cubeconv-small": (32, 32, 2),  # the same with 32 filters and 2 blocks, for CPU runs and tests
}
#: presets of another architecture than the fully connected one: preset -> NetConfig fields
PRESET_FIELDS: dict[str, dict[str, Any]] = {
    "cubeconv": {"arch": "cubeconv", "history": 8},
    "cubeconv-small": {"arch": "cubeconv", "history": 8},
}

#: Dong et al.'s multi-head networks: name -> (shared residual blocks, goal-specific hidden layers);
#: set them with ``num_res_blocks`` and ``head_layers`` (training: ``--set num_res_blocks=4
#: --set head_layers=1``). "baseline" shares every layer of the 4-block network but the output.
MULTIHEAD_VARIANTS: dict[str, tuple[int, int]] = {
    "baseline": (4, 0),
    "4+1": (4, 1),
    "3+2": (3, 2),
    "4+2": (4, 2),
}

#: convolutional preset name -> (channels, h2 = width of the head, num_res_blocks (a minimum: more
#: where the board needs them for its receptive field)); parameter counts for Sokoban's 4 planes
CONV_PRESETS: dict[str, tuple[int, int, int]] = {
    "conv-tiny": (16, 32, 2),  # tests and smoke runs: ~16 k parameters on Sokoban's 10x10
    "conv": (32, 128, 4),  # ~0.09 M; a 2-core CPU evaluates a few thousand 10x10 boards a second
    "conv-large": (64, 256, 6),  # ~0.5 M: for GPUs
}

#: network architectures: ``mlp`` (the paper's, on a flat encoding, any puzzle), ``conv`` (on a
#: grid encoding: Lights Out, Sokoban) and ``cubeconv`` (Rute's, cubes only)
ARCHS = ("mlp", "conv", "cubeconv")

#: :func:`puzzlezero.nn.predict` feeds a conv net on a CPU at most this many states per pass: on
#: this project's 2-core CPU the ``conv`` preset does 1.6-2.5x more boards/s in chunks of 128-512
#: than in one of 4096 (the activations then stay in cache)
CPU_CHUNK = 512

#: dilation of the second convolution of residual block ``r``: ``_DILATIONS[r % 3]``
_DILATIONS = (1, 2, 4)


def block_dilations(num_blocks: int) -> tuple[int, ...]:
    """Dilation of the second 3x3 convolution of each residual block: 1, 2, 4, 1, 2, 4, ..."""
    return tuple(_DILATIONS[r % len(_DILATIONS)] for r in range(num_blocks))


def receptive_radius(num_blocks: int) -> int:
    """Chebyshev radius of the gap-free square of cells that one output cell of the convolutional
    trunk depends on (stem, then per block a 3x3 convolution and a dilated 3x3 convolution).

    Computed from the exact set of offsets the stacked kernels reach (one axis suffices: the 3x3
    kernels are products of 1-D ones), so a gap would show as a smaller radius."""
    reach = {-1, 0, 1}  # the stem
    for d in block_dilations(num_blocks):
        for step in (1, d):
            reach = {r + k * step for r in reach for k in (-1, 0, 1)}
    radius = 0
    while radius + 1 in reach and -(radius + 1) in reach:
        radius += 1
    return radius


def blocks_to_cover(height: int, width: int) -> int:
    """The fewest residual blocks whose receptive radius reaches ``max(height, width) - 1`` cells:
    every output cell then depends on every input cell of an ``height x width`` board."""
    need, blocks = max(height, width) - 1, 0
    while receptive_radius(blocks) < need:
        blocks += 1
    return blocks


@dataclass(frozen=True)
class NetConfig:
    """Everything needed to rebuild a :class:`CostToGoNet` (saved as ``config.json``)."""

    #: width of the encoded input, ``puzzle.input_dim(encoding)``
    input_dim: int
    #: width of the first hidden layer (paper: 5000)
    h1: int = 1000
    #: width of the second hidden layer and of every residual block (paper: 1000)
    h2: int = 500
    #: number of residual blocks of two FC layers each (paper: 4; 6 for the 24-puzzle)
    num_res_blocks: int = 2
    #: name of the puzzle encoder feeding the net (``puzzle.encode(states, encoding)``)
    encoding: str = "onehot"
    #: number of actions of the puzzle (needed by the policy / Q heads only)
    num_actions: int = 0
    #: add a policy head (logits over actions) beside the value head
    policy_head: bool = False
    #: add a Q head (cost-to-go after each action) beside the value head
    q_head: bool = False
    #: the goal of each value output (``puzzle.goal_predicates()`` names); ``()``: one output for
    #: the puzzle's own goal (``"solved"``); two or more: a multi-head network, ``float32[B, G]``
    goals: tuple[str, ...] = ()
    #: hidden layers of each goal's own (a residual block per two, an FC layer for an odd one)
    #: between the shared trunk and its output; 0: only the output layer differs
    head_layers: int = 0
    #: ``"mlp"`` (the paper's fully connected net, the default; configs written before this field
    #: existed), ``"conv"`` (residual convolutional net on a grid encoding; ``h1`` is then unused
    #: and ``h2`` is the head's width) or ``"cubeconv"`` (Rute's cube network,
    #: :mod:`puzzlezero.nn.cube_conv`)
    arch: str = "mlp"
    #: ``conv``: channels of every convolution
    channels: int = 64
    #: ``conv``: the grid encoding's ``(C, H, W)``, ``puzzle.input_shape(encoding)``
    input_shape: tuple[int, ...] = ()
    #: states the network sees: the current one and ``history - 1`` before it (cubeconv; else 1)
    history: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "goals", tuple(str(g) for g in self.goals))
        object.__setattr__(self, "input_shape", tuple(int(v) for v in self.input_shape))  # JSON lists
        for name in ("input_dim", "h1", "h2", "channels"):
            if int(getattr(self, name)) < 1:
                raise PuzzleError(f"NetConfig.{name} must be >= 1, got {getattr(self, name)!r}")
        if self.num_res_blocks < 0:
            raise PuzzleError(f"NetConfig.num_res_blocks must be >= 0, got {self.num_res_blocks!r}")
        if (self.policy_head or self.q_head) and self.num_actions < 1:
            raise PuzzleError("NetConfig: a policy or Q head needs num_actions >= 1")
        if len(set(self.goals)) != len(self.goals):
            raise PuzzleError(f"NetConfig: goals must differ, got {list(self.goals)}")
        if self.head_layers < 0:
            raise PuzzleError(f"NetConfig.head_layers must be >= 0, got {self.head_layers!r}")
        if self.multi_head and (self.policy_head or self.q_head):
            raise PuzzleError("NetConfig: a multi-head (several goals) network has no policy or Q head")
        if self.arch not in ARCHS:
            raise PuzzleError(f"NetConfig.arch must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        if self.arch == "conv":
            shape = self.input_shape
            if len(shape) != 3 or min(shape) < 1:
                raise PuzzleError(
                    f"the conv network needs a grid encoding of shape (C, H, W), got {shape or 'none'} "
                    f"from encoding {self.encoding!r} (train with --set encoding=grid on a grid puzzle)"
                )
            if int(np.prod(shape)) != self.input_dim:
                raise PuzzleError(f"NetConfig: input_dim {self.input_dim} is not C*H*W of {shape}")
            need = blocks_to_cover(shape[1], shape[2])
            if self.num_res_blocks < need:
                raise PuzzleError(
                    f"NetConfig: {self.num_res_blocks} residual blocks see {receptive_radius(self.num_res_blocks)} "
                    f"cells around a cell, too few for a {shape[1]}x{shape[2]} board: use at least {need}"
                )

        if self.history < 1 or (self.arch != "cubeconv" and self.history != 1):
            raise PuzzleError(
                f"NetConfig.history must be >= 1 (and 1 for arch {self.arch!r}), got {self.history!r}"
            )

    @property
    def goal_names(self) -> tuple[str, ...]:
        """The goal of each value output: ``goals``, or ``("solved",)`` for a net without them."""
        return self.goals or ("solved",)

    @property
    def multi_head(self) -> bool:
        """One value output per goal (``forward`` returns ``[B, G]``): two or more goals, or
        goal-specific layers."""
        return len(self.goals) > 1 or self.head_layers > 0

    @classmethod
    def from_preset(
        cls, preset: str, input_dim: int, input_shape: tuple[int, ...] | None = None, **overrides: Any
    ) -> NetConfig:
        """The preset's sizes for ``input_dim`` inputs; ``overrides`` replace any field (``None``
        values are ignored). A convolutional preset (:data:`CONV_PRESETS`) needs the grid's
        ``input_shape`` ``(C, H, W)`` and takes at least :func:`blocks_to_cover` blocks for it."""
        if preset in CONV_PRESETS:
            channels, h2, blocks = CONV_PRESETS[preset]
            shape = tuple(input_shape or ())
            if overrides.get("num_res_blocks") is not None:
                blocks = int(overrides.pop("num_res_blocks"))
            elif len(shape) == 3:
                blocks = max(blocks, blocks_to_cover(shape[1], shape[2]))
            # the network's own fields win over the MLP-only widths a caller passes through
            overrides.pop("h1", None)
            base = cls(
                input_dim=input_dim,
                h2=h2,
                num_res_blocks=blocks,
                arch="conv",
                channels=channels,
                input_shape=shape,
                encoding=str(overrides.pop("encoding", None) or "grid"),
            )
            return replace(base, **{k: v for k, v in overrides.items() if v is not None})
        if preset not in PRESETS:
            names = ", ".join((*PRESETS, *CONV_PRESETS))
            raise UnknownNameError(f"unknown network preset {preset!r}; choose one of {names}")
        h1, h2, blocks = PRESETS[preset]
        base = cls(input_dim=input_dim, h1=h1, h2=h2, num_res_blocks=blocks, **PRESET_FIELDS.get(preset, {}))
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-able values; ``goals`` and ``head_layers`` only where set, so that a
        single-head network's ``config.json`` reads as it did before them."""
        d = asdict(self)
        d["goals"] = list(self.goals)
        d["input_shape"] = list(d["input_shape"])
        for key, default in (("goals", []), ("head_layers", 0)):
            if d[key] == default:
                del d[key]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NetConfig:
        """Rebuild from :meth:`to_dict` output; unknown or missing keys raise ModelFileError."""
        known = {f.name for f in fields(cls)}
        extra = set(data) - known
        if extra:
            raise ModelFileError(f"unknown network config keys {sorted(extra)}; known: {sorted(known)}")
        try:
            if "goals" in data:
                if not isinstance(data["goals"], list | tuple):
                    raise TypeError(f"goals must be a list of names, got {data['goals']!r}")
                data = {**data, "goals": tuple(data["goals"])}
            return cls(**data)
        except (TypeError, PuzzleError) as exc:
            raise ModelFileError(f"invalid network config: {exc}") from None


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


def _linear(n_in: int, n_out: int) -> int:
    return n_in * n_out + n_out


def _bn(n: int) -> int:
    return 4 * n + 1  # weight, bias, running mean and variance, the batch counter


def config_parameters(config: NetConfig) -> int:
    """The numbers in the ``state_dict`` of :func:`build_model`'s network for ``config``
    (parameters and batch-norm buffers), counted from the sizes alone: nothing is allocated, so a
    model folder's ``config.json`` can be checked before its network is built."""
    c = config
    if c.arch == "cubeconv":
        stickers, taps = c.input_dim // 6, 27

        def conv_bn(n_in: int, n_out: int) -> int:
            return _linear(taps * n_in, n_out) + _bn(n_out)

        def head(out: int) -> int:
            return conv_bn(c.h2, c.h2) + _linear(stickers * c.h2, c.h1) + _linear(c.h1, out)

        trunk = conv_bn(6 * c.history, c.h2) + 2 * c.num_res_blocks * conv_bn(c.h2, c.h2)
        return trunk + head(1) + (head(c.num_actions) if c.policy_head else 0)
    block = 2 * _linear(c.h2, c.h2) + 2 * _bn(c.h2)
    if c.arch == "conv":
        ch = c.channels
        trunk = (c.input_shape[0] + 1) * ch * 9 + _bn(ch) + c.num_res_blocks * (2 * 9 * ch * ch + 2 * _bn(ch))
        trunk += _linear(2 * ch, c.h2) + _bn(c.h2)
    else:
        trunk = _linear(c.input_dim, c.h1) + _bn(c.h1) + _linear(c.h1, c.h2) + _bn(c.h2)
        trunk += c.num_res_blocks * block
    goals = len(c.goal_names)
    if c.head_layers == 0:
        heads = _linear(c.h2, goals)
    else:
        own = (c.head_layers // 2) * block + (c.head_layers % 2) * (_linear(c.h2, c.h2) + _bn(c.h2))
        heads = goals * (own + _linear(c.h2, 1))
    heads += (c.policy_head + c.q_head) * _linear(c.h2, c.num_actions)
    return trunk + heads
