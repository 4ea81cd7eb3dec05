"""What a cost-to-go network is made of: :class:`NetConfig`, everything needed to rebuild one
(saved as a model folder's ``config.json``), its size presets and the convolutional trunk's
receptive field. Plain data, without torch: :mod:`puzzlezero.nn.models` and
:mod:`puzzlezero.nn.cube_conv` build the networks from it.

>>> NetConfig.from_preset("small", input_dim=324).h1
1000
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from puzzlezero.errors import ModelFileError, PuzzleError, UnknownNameError

__all__ = [
    "ARCHS",
    "CONV_PRESETS",
    "MULTIHEAD_VARIANTS",
    "PRESETS",
    "PRESET_FIELDS",
    "NetConfig",
    "block_dilations",
    "blocks_to_cover",
    "config_parameters",
    "receptive_radius",
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
    """Everything needed to rebuild a :class:`~puzzlezero.nn.models.CostToGoNet` (saved as
    ``config.json``)."""

    #: width of the encoded input, ``inputs.dim(puzzle, encoding)``
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
    #: ``conv``: the grid encoding's ``(C, H, W)``, ``inputs.shape(puzzle, encoding)``
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
