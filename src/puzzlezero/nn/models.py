"""The DeepCubeA cost-to-go network and its size presets.

Architecture (DeepCubeA, Methods, "Neural network architecture", Supplementary Fig. 3)::

    input[B, D] -> FC h1 -> BN -> ReLU -> FC h2 -> BN -> ReLU
                -> R x residual block (FC h2 -> BN -> ReLU -> FC h2 -> BN, + skip, ReLU)
                -> value head: FC 1            (cost-to-go, float32[B])
                   optional policy head: FC A  (logits over actions, float32[B, A])
                   optional Q head: FC A       (cost-to-go after each action, float32[B, A])

Batch normalisation and ReLU are used in every hidden layer, no regularisation. The paper's network
(``"paper"`` preset: 5000 / 1000 / 4 blocks of 1000) has 14.7 M parameters for the cube's 324 one-hot
inputs; the CPU presets are sized for a 2-core machine (a 2 M-parameter net evaluates ~30 k states/s).

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

__all__ = ["ARCHS", "NetConfig", "CostToGoNet", "PRESETS", "PRESET_FIELDS", "build_model", "count_parameters"]

#: preset name -> (h1, h2, num_res_blocks); parameter counts are for the cube's 324 inputs
PRESETS: dict[str, tuple[int, int, int]] = {
    "tiny": (64, 32, 1),  # tests and smoke runs: ~25 k parameters
    "small": (1000, 500, 2),  # ~1.8 M: ~30 k states/s inference on 2 CPU threads
    "medium": (1500, 700, 3),  # ~4.5 M
    "paper": (5000, 1000, 4),  # DeepCubeA: 14.7 M
    # seed 004's convolutional cube network (nn/cube_conv.py): h1 = heads' hidden width, h2 = filters
    "cubeconv": (64, 64, 4),  # the seed's: 4 residual blocks of 64 filters, 8 states of history
    "cubeconv-small": (32, 32, 2),  # the same with 32 filters and 2 blocks, for CPU runs and tests
}
#: presets of another architecture than the fully connected one: preset -> NetConfig fields
PRESET_FIELDS: dict[str, dict[str, Any]] = {
    "cubeconv": {"arch": "cubeconv", "history": 8},
    "cubeconv-small": {"arch": "cubeconv", "history": 8},
}
#: network architectures: ``fc`` (DeepCubeA's, any puzzle) and ``cubeconv`` (seed 004's, cubes only)
ARCHS = ("fc", "cubeconv")


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
    #: the architecture: ``"fc"`` (this class) or ``"cubeconv"`` (:mod:`puzzlezero.nn.cube_conv`);
    #: configs written before this field existed are ``"fc"``
    arch: str = "fc"
    #: states the network sees: the current one and ``history - 1`` before it (cubeconv; fc: 1)
    history: int = 1

    def __post_init__(self) -> None:
        for name in ("input_dim", "h1", "h2"):
            if int(getattr(self, name)) < 1:
                raise PuzzleError(f"NetConfig.{name} must be >= 1, got {getattr(self, name)!r}")
        if self.num_res_blocks < 0:
            raise PuzzleError(f"NetConfig.num_res_blocks must be >= 0, got {self.num_res_blocks!r}")
        if (self.policy_head or self.q_head) and self.num_actions < 1:
            raise PuzzleError("NetConfig: a policy or Q head needs num_actions >= 1")
        if self.arch not in ARCHS:
            raise PuzzleError(f"NetConfig.arch must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        if self.history < 1 or (self.arch == "fc" and self.history != 1):
            raise PuzzleError(f"NetConfig.history must be >= 1 (and 1 for arch 'fc'), got {self.history!r}")

    @classmethod
    def from_preset(cls, preset: str, input_dim: int, **overrides: Any) -> NetConfig:
        """The preset's sizes for ``input_dim`` inputs; ``overrides`` replace any field."""
        if preset not in PRESETS:
            raise UnknownNameError(f"unknown network preset {preset!r}; choose one of {', '.join(PRESETS)}")
        h1, h2, blocks = PRESETS[preset]
        base = cls(input_dim=input_dim, h1=h1, h2=h2, num_res_blocks=blocks, **PRESET_FIELDS.get(preset, {}))
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NetConfig:
        """Rebuild from :meth:`to_dict` output; unknown or missing keys raise ModelFileError."""
        known = {f.name for f in fields(cls)}
        extra = set(data) - known
        if extra:
            raise ModelFileError(f"unknown network config keys {sorted(extra)}; known: {sorted(known)}")
        try:
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


class CostToGoNet(nn.Module):
    """The paper's cost-to-go network; ``forward(x[B, D]) -> float32[B]``.

    Attributes set by :func:`puzzlezero.nn.load_model`: ``puzzle`` (registry name or ``""``) and
    ``card`` (the model card dict); :attr:`config` always.
    """

    def __init__(self, config: NetConfig) -> None:
        super().__init__()
        self.config = config
        self.puzzle: str = ""
        self.card: dict[str, Any] = {}
        self.trunk = nn.Sequential(
            nn.Linear(config.input_dim, config.h1),
            nn.BatchNorm1d(config.h1),
            nn.ReLU(),
            nn.Linear(config.h1, config.h2),
            nn.BatchNorm1d(config.h2),
            nn.ReLU(),
            *[ResidualBlock(config.h2) for _ in range(config.num_res_blocks)],
        )
        self.value = nn.Linear(config.h2, 1)
        self.policy = nn.Linear(config.h2, config.num_actions) if config.policy_head else None
        self.q = nn.Linear(config.h2, config.num_actions) if config.q_head else None

    def forward(self, x: torch.Tensor, all_heads: bool = False) -> Any:
        """Cost-to-go estimates ``float32[B]`` for encoded states ``x[B, input_dim]``; with
        ``all_heads=True`` the dict of :meth:`heads` (so that a DistributedDataParallel wrapper,
        which only sees ``forward``, can train every head)."""
        h = self.trunk(x)
        value = self.value(h).squeeze(1)
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
        if self.q is None:
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


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
