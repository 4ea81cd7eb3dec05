"""Wrap a cost-to-go network into a plain heuristic function for the searches.

The searches never import torch: they take ``heuristic(states[B, *state_shape]) -> float32[B]``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from puzzlezero.errors import ModelFileError
from puzzlezero.nn.fast import inference_copy
from puzzlezero.nn.models import CPU_CHUNK, CostToGoNet
from puzzlezero.puzzles.base import Puzzle

__all__ = ["make_heuristic", "make_q_function", "predict"]


def predict(
    puzzle: Puzzle,
    model: CostToGoNet,
    states: np.ndarray,
    *,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    head: str = "value",
) -> np.ndarray:
    """Raw network outputs for ``states[B, *state_shape]`` (no clipping, no goal test), in chunks of
    ``batch_size`` under ``torch.inference_mode()``: ``float32[B]`` from the value head
    (``head="value"``) or ``float32[B, A]`` from the Q head (``head="q"``). The caller sets eval mode.
    A convolutional net on a CPU gets at most :data:`~puzzlezero.nn.models.CPU_CHUNK` states a pass."""
    if head not in ("value", "q"):
        raise ModelFileError(f"unknown network head {head!r}; choose value or q")
    if head == "q" and getattr(model, "q", None) is None:
        raise ModelFileError("this model has no Q head (train one with objective=qlearning)")
    n = states.shape[0]
    if model.config.arch == "conv" and torch.device(device).type == "cpu":
        batch_size = min(batch_size, CPU_CHUNK)
    out = np.empty((n, puzzle.num_actions) if head == "q" else n, dtype=np.float32)
    enc = model.config.encoding
    with torch.inference_mode():
        for lo in range(0, n, batch_size):
            x = torch.from_numpy(puzzle.encode(states[lo : lo + batch_size], enc)).to(device)
            y = model(x, all_heads=True)["q"] if head == "q" else model(x)
            out[lo : lo + batch_size] = y.float().cpu().numpy()
    return out


def check_compatible(puzzle: Puzzle, model: CostToGoNet) -> None:
    """Raise :class:`ModelFileError` if ``model`` was made for another puzzle or input size."""
    if model.puzzle and puzzle.name and model.puzzle != puzzle.name:
        raise ModelFileError(f"this model was trained for {model.puzzle!r}, not {puzzle.name!r}")
    want = puzzle.input_dim(model.config.encoding)
    if model.config.input_dim != want:
        raise ModelFileError(
            f"model expects {model.config.input_dim} inputs but {puzzle.name or puzzle!r} with encoding "
            f"{model.config.encoding!r} gives {want}"
        )
    shape = puzzle.input_shape(model.config.encoding)
    if model.config.arch == "conv" and model.config.input_shape != shape:
        raise ModelFileError(
            f"model reads a {'x'.join(map(str, model.config.input_shape))} grid but {puzzle.name or puzzle!r} "
            f"with encoding {model.config.encoding!r} gives {'x'.join(map(str, shape))}"
        )


def make_heuristic(
    puzzle: Puzzle,
    model: CostToGoNet,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    *,
    int8: bool = False,
    head: str = "value",
) -> Callable[[np.ndarray], np.ndarray]:
    """A heuristic ``states[B, *state_shape] -> float32[B]``: the network's cost-to-go, clipped at
    ``>= 0`` and exactly ``0`` for goal states, evaluated chunk by chunk (``batch_size`` states)
    under ``torch.inference_mode()``. It runs a frozen eval-mode copy of ``model`` on ``device``
    (batch norm folded into the linear layers; ``int8=True``: int8 linear layers on CPU, ~2.5-3x
    faster, errors of a few hundredths; see :mod:`puzzlezero.nn.fast`). Later training of ``model``
    does not change the heuristic. ``head="qmin"`` reads the cost-to-go off a Q head instead, as
    ``min_a Q(s, a)`` (the Q-learning target network's value of a state).

    Example:
        >>> h = make_heuristic(puzzle, load_model("cube3"))     # doctest: +SKIP
        >>> h(puzzle.goals(2))                                  # doctest: +SKIP
        array([0., 0.], dtype=float32)
    """
    if head not in ("value", "qmin"):
        raise ModelFileError(f"unknown heuristic head {head!r}; choose value or qmin")
    check_compatible(puzzle, model)
    model = inference_copy(model, int8=int8, device=device)
    net_head = "q" if head == "qmin" else "value"

    def heuristic(states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        if states.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        raw = predict(puzzle, model, states, batch_size=batch_size, device=device, head=net_head)
        values = raw.min(axis=1) if head == "qmin" else raw
        np.maximum(values, 0.0, out=values)
        values[puzzle.is_goal(states)] = 0.0
        return values

    return heuristic


def make_q_function(
    puzzle: Puzzle,
    model: CostToGoNet,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    *,
    int8: bool = False,
) -> Callable[[np.ndarray], np.ndarray]:
    """A Q function ``states[B, *state_shape] -> float32[B, A]`` for Q* search: the Q head's cost to
    reach a goal after taking each action (the action's cost included), clipped at ``>=`` that
    action's cost (``puzzle.action_costs``).
    One network call per state, however many actions (see :func:`make_heuristic` for the copy)."""
    check_compatible(puzzle, model)
    if model.q is None:
        raise ModelFileError(
            f"this {puzzle.name} model has no Q head; Q* search needs one (train with "
            f"--set objective=qlearning), or use --search bwas"
        )
    model = inference_copy(model, int8=int8, device=device)
    cost = puzzle.action_costs.astype(np.float32)[None, :]

    def q_function(states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        q = predict(puzzle, model, states, batch_size=batch_size, device=device, head="q")
        np.maximum(q, cost, out=q)
        return q

    return q_function
