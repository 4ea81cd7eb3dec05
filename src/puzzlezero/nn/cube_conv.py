"""The convolutional cube network of J. Rute, "Solving the puzzle cube with deep reinforcement
learning and tree search" (an AlphaZero-style cube solver).

The ``6n²`` stickers of an ``n``-cube are embedded in an ``(n+2)³`` grid (cube3: 54 stickers in a
5x5x5 grid): a sticker on face X sits one step outside the ``n³`` block of cubies, on X's side, at
the cubie it belongs to. A 3x3x3 convolution over that grid, restricted to the occupied cells, is a
**gather**: each sticker's features are concatenated with those of the stickers at its 26
neighbouring cells (a zero row where a cell holds no sticker; :func:`neighbour_indices`) and one
linear map of width ``27 * C_in -> C_out`` is applied at every sticker. Unlike a plain MLP on the
one-hot, the same weights see every sticker's neighbourhood; unlike the cube's symmetry, the 27
offsets are told apart, so the network is not symmetric itself (training adds the 48 symmetries,
:mod:`puzzlezero.puzzles.cube.symmetry`).

Architecture (Rute, "Neural network architecture")::

    input: the last H states, one-hot over 6 colours  -> [B, S, 6H]     (Rute: H = 8, S = 54)
    stem: gather-conv F -> BN -> ReLU                                    (Rute: F = 64)
    R residual blocks: gather-conv F -> BN -> ReLU -> gather-conv F -> BN, + skip, ReLU   (R = 4)
    value head:  gather-conv F -> BN -> ReLU -> flatten -> FC h -> ReLU -> FC 1   (h = 64)
    policy head: gather-conv F -> BN -> ReLU -> flatten -> FC h -> ReLU -> FC A

The value head outputs a **cost-to-go** ``J`` (moves to the goal), as every network of this
project does, not Rute's sigmoid value ``v ~ gamma^distance``; the self-play trainer reads
``v = gamma^J`` (:mod:`puzzlezero.train.objectives.selfplay`), so A*, beam search and MCTS all use one head.

**History.** The input is the current state and the ``H - 1`` states before it, newest first,
as ``H * 6S`` one-hot columns. Where no earlier state exists its planes are **zeros**, as in the
Rute's code (a history slot of ``None`` is an all-zero bit array): before an episode's first
state in self-play, and behind every state a search passes alone (``6S`` columns; every search in
this project passes single states), so training and search see the same input for a state whose
past is unknown. In a states array with a history axis a missing state is a row of the dtype's
largest value (:data:`puzzlezero.nn.heuristic.NO_STATE` for ``uint8``), which
:func:`puzzlezero.nn.heuristic.encode_rows` encodes as zeros.
"""

from __future__ import annotations

import itertools
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from puzzlezero.errors import PuzzleError

if TYPE_CHECKING:
    from puzzlezero.nn.config import NetConfig

__all__ = ["CubeConvNet", "GatherConv", "neighbour_indices", "grid_coordinates", "cube_size"]

OFFSETS = np.array(list(itertools.product((-1, 0, 1), repeat=3)), dtype=np.int64)  # 27, centre = 13


def cube_size(num_stickers: int) -> int:
    """``n`` of an ``n``-cube with ``num_stickers = 6n²`` stickers (2 or 3)."""
    for n in (2, 3):
        if 6 * n * n == num_stickers:
            return n
    raise PuzzleError(
        f"the cube network needs the 24 stickers of cube2 or the 54 of cube3, got {num_stickers}"
    )


@cache
def grid_coordinates(n: int) -> np.ndarray:
    """``int64[6n², 3]``: each sticker's cell in the ``(n+2)³`` grid (x right, y up, z front; 0 is
    the left / bottom / back outside layer, ``n + 1`` the right / top / front one)."""
    from puzzlezero.puzzles.cube.geometry import sticker_points

    pts = sticker_points(n)  # normal coordinate +-n, the others odd numbers in [-(n-1), n-1]
    grid = np.where(pts == n, n + 1, np.where(pts == -n, 0, (pts + n - 1) // 2 + 1))
    grid.flags.writeable = False
    return grid


@cache
def neighbour_indices(n: int) -> np.ndarray:
    """``int64[6n², 27]``: for each sticker the sticker at each cell of its 3x3x3 neighbourhood
    (offsets in ``itertools.product((-1, 0, 1), repeat=3)`` order, the sticker itself at 13), or
    ``6n²`` (the zero padding row) where that cell holds no sticker."""
    grid = grid_coordinates(n)
    cell = {tuple(g): i for i, g in enumerate(grid.tolist())}
    pad = len(grid)
    out = np.array([[cell.get(tuple((g + off).tolist()), pad) for off in OFFSETS] for g in grid])
    out.flags.writeable = False
    return out


class GatherConv(nn.Module):
    """A 3x3x3 convolution over the stickers: ``[B, S, C_in] -> [B, S, C_out]``."""

    neighbours: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, neighbours: np.ndarray, c_in: int, c_out: int) -> None:
        super().__init__()
        self.register_buffer(
            "neighbours", torch.tensor(np.array(neighbours), dtype=torch.long), persistent=False
        )
        self.linear = nn.Linear(neighbours.shape[1] * c_in, c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, c = x.shape
        padded = torch.cat([x, x.new_zeros(b, 1, c)], dim=1)  # [B, S + 1, C]
        gathered = padded[:, self.neighbours]  # [B, S, 27, C]
        return self.linear(gathered.reshape(b, s, -1))


class _ConvBN(nn.Module):
    """gather-conv -> batch norm (over channels) -> optional ReLU."""

    def __init__(self, neighbours: np.ndarray, c_in: int, c_out: int, relu: bool = True) -> None:
        super().__init__()
        self.conv = GatherConv(neighbours, c_in, c_out)
        self.bn = nn.BatchNorm1d(c_out)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn(self.conv(x).transpose(1, 2)).transpose(1, 2)
        return torch.relu(y) if self.relu else y


class _Residual(nn.Module):
    def __init__(self, neighbours: np.ndarray, width: int) -> None:
        super().__init__()
        self.a = _ConvBN(neighbours, width, width)
        self.b = _ConvBN(neighbours, width, width, relu=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.b(self.a(x)))


class _Head(nn.Module):
    def __init__(self, neighbours: np.ndarray, width: int, hidden: int, out: int) -> None:
        super().__init__()
        self.conv = _ConvBN(neighbours, width, width)
        self.fc = nn.Sequential(nn.Linear(len(neighbours) * width, hidden), nn.ReLU(), nn.Linear(hidden, out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.conv(x).flatten(1))


class CubeConvNet(nn.Module):
    """Rute's cube network (``NetConfig.arch == "cubeconv"``); the interface of
    :class:`~puzzlezero.nn.models.CostToGoNet`: ``forward(x[B, D or H*D]) -> float32[B]``
    cost-to-go, ``all_heads=True`` -> ``{"value": [B], "policy": [B, A]}``.

    Sizes from :class:`~puzzlezero.nn.config.NetConfig`: ``h2`` = filters F, ``num_res_blocks`` =
    R, ``h1`` = width of the heads' hidden layer, ``history`` = H, ``input_dim`` = ``6S`` (one
    state's one-hot). There is no Q head.

    >>> from puzzlezero.nn.config import NetConfig
    >>> from puzzlezero.nn.models import build_model
    >>> net = build_model(NetConfig.from_preset("cubeconv", 324, num_actions=12, policy_head=True))
    >>> out = net.eval()(torch.zeros(2, 324), all_heads=True)
    >>> out["value"].shape, out["policy"].shape
    (torch.Size([2]), torch.Size([2, 12]))
    """

    def __init__(self, config: NetConfig) -> None:
        super().__init__()
        if config.encoding != "onehot" or config.input_dim % 6:
            raise PuzzleError(
                f"the cube network reads the one-hot of a cube's stickers (6 colours each); got "
                f"encoding {config.encoding!r} with {config.input_dim} inputs"
            )
        if config.q_head:
            raise PuzzleError("the cube network has no Q head; use arch 'mlp' for Q-learning")
        self.config = config
        self.puzzle: str = ""
        self.card: dict[str, Any] = {}
        self.num_stickers = config.input_dim // 6
        nb = neighbour_indices(cube_size(self.num_stickers))
        width, hist = config.h2, config.history
        self.trunk = nn.Sequential(
            _ConvBN(nb, 6 * hist, width), *[_Residual(nb, width) for _ in range(config.num_res_blocks)]
        )
        self.value = _Head(nb, width, config.h1, 1)
        self.policy = _Head(nb, width, config.h1, config.num_actions) if config.policy_head else None
        self.q = None

    def _planes(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, D]`` or ``[B, H*D]`` one-hot -> ``[B, S, 6H]`` sticker features (newest state first)."""
        d, hist = self.config.input_dim, self.config.history
        if x.shape[1] == d and hist > 1:
            x = torch.cat([x, x.new_zeros(x.shape[0], d * (hist - 1))], dim=1)  # no past known: zeros
        elif x.shape[1] != d * hist:
            raise PuzzleError(f"the cube network takes {d} or {d * hist} inputs per row, got {x.shape[1]}")
        planes = x.reshape(x.shape[0], hist, self.num_stickers, 6)
        return planes.permute(0, 2, 1, 3).reshape(x.shape[0], self.num_stickers, 6 * hist)

    def forward(self, x: torch.Tensor, all_heads: bool = False) -> Any:
        h = self.trunk(self._planes(x))
        value = self.value(h).squeeze(1)
        if not all_heads:
            return value
        out = {"value": value}
        if self.policy is not None:
            out["policy"] = self.policy(h)
        return out

    def heads(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.forward(x, all_heads=True)

    def init_q_from_value(self, move_cost: Any) -> None:
        raise PuzzleError("the cube network has no Q head")
