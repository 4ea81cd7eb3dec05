"""The DeepCubeA cost-to-go network and its size presets.

Architecture (DeepCubeA, Methods, "Neural network architecture", Supplementary Fig. 3)::

    input[B, D] -> FC h1 -> BN -> ReLU -> FC h2 -> BN -> ReLU
                -> R x residual block (FC h2 -> BN -> ReLU -> FC h2 -> BN, + skip, ReLU)
                -> value head: FC 1            (cost-to-go, float32[B])
                   optional policy head: FC A  (logits over actions, float32[B, A])
                   optional Q head: FC A       (cost-to-go after each action, float32[B, A])

Multi-head networks (seed 001, §4.2.2) learn one cost-to-go per goal (cube3: ``layer1``,
``layer2``, ``solved``): ``goals`` names the heads, the trunk above is shared, and each goal gets
``head_layers`` hidden layers of its own before its output (two layers form a residual block, an
odd one is FC -> BN -> ReLU), so ``forward`` returns ``float32[B, G]``. With ``head_layers = 0``
only the output layer differs (the seed's "MultiH Baseline"). The seed's variants, for its 4-block
network: :data:`MULTIHEAD_VARIANTS` (``"4+1"``: 4 shared blocks and one FC layer per goal; ``"3+2"``:
3 shared blocks and a residual block per goal; ``"4+2"``: 4 shared blocks and a residual block per
goal). A network with no ``goals`` (every model before them) or one goal has the single value
output ``float32[B]``.

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

__all__ = [
    "MULTIHEAD_VARIANTS",
    "NetConfig",
    "CostToGoNet",
    "PRESETS",
    "build_model",
    "count_parameters",
]

#: preset name -> (h1, h2, num_res_blocks); parameter counts are for the cube's 324 inputs
PRESETS: dict[str, tuple[int, int, int]] = {
    "tiny": (64, 32, 1),  # tests and smoke runs: ~25 k parameters
    "small": (1000, 500, 2),  # ~1.8 M: ~30 k states/s inference on 2 CPU threads
    "medium": (1500, 700, 3),  # ~4.5 M
    "paper": (5000, 1000, 4),  # DeepCubeA: 14.7 M
}

#: seed 001's multi-head networks: name -> (shared residual blocks, goal-specific hidden layers);
#: set them with ``num_res_blocks`` and ``head_layers`` (training: ``--set num_res_blocks=4
#: --set head_layers=1``). "baseline" shares every layer of the 4-block network but the output.
MULTIHEAD_VARIANTS: dict[str, tuple[int, int]] = {
    "baseline": (4, 0),
    "4+1": (4, 1),
    "3+2": (3, 2),
    "4+2": (4, 2),
}


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "goals", tuple(str(g) for g in self.goals))
        for name in ("input_dim", "h1", "h2"):
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
    def from_preset(cls, preset: str, input_dim: int, **overrides: Any) -> NetConfig:
        """The preset's sizes for ``input_dim`` inputs; ``overrides`` replace any field."""
        if preset not in PRESETS:
            raise UnknownNameError(f"unknown network preset {preset!r}; choose one of {', '.join(PRESETS)}")
        h1, h2, blocks = PRESETS[preset]
        base = cls(input_dim=input_dim, h1=h1, h2=h2, num_res_blocks=blocks)
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-able values; ``goals`` and ``head_layers`` only where set, so that a
        single-head network's ``config.json`` reads as it did before them."""
        d = asdict(self)
        d["goals"] = list(self.goals)
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


class CostToGoNet(nn.Module):
    """The paper's cost-to-go network; ``forward(x[B, D]) -> float32[B]`` (a multi-head network,
    ``config.multi_head``: ``float32[B, G]``, one column per ``config.goals``).

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

    def forward(self, x: torch.Tensor, all_heads: bool = False) -> Any:
        """Cost-to-go estimates ``float32[B]`` for encoded states ``x[B, input_dim]``; with
        ``all_heads=True`` the dict of :meth:`heads` (so that a DistributedDataParallel wrapper,
        which only sees ``forward``, can train every head)."""
        h = self.trunk(x)
        if self.goal_heads is not None:
            value = torch.stack([head(h) for head in self.goal_heads], dim=1)
        else:
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
    """A freshly initialised network (PyTorch default init; deterministic when ``seed`` is given)."""
    if seed is None:
        return CostToGoNet(config)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return CostToGoNet(config)


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
