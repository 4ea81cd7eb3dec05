"""Wrap a cost-to-go network into a plain heuristic function for the searches.

The searches never import torch: they take ``heuristic(states[B, *state_shape]) -> float32[B]``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from puzzlezero.errors import ModelFileError
from puzzlezero.nn.fast import inference_copy
from puzzlezero.nn.models import CostToGoNet
from puzzlezero.puzzles.base import Puzzle

__all__ = [
    "make_heuristic",
    "make_policy_function",
    "make_policy_value_function",
    "make_q_function",
    "predict",
]


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
    (``head="value"``), ``float32[B, A]`` from the Q head (``head="q"``) or the policy head's logits
    (``head="policy"``). The caller sets eval mode."""
    if head not in ("value", "q", "policy"):
        raise ModelFileError(f"unknown network head {head!r}; choose value, q or policy")
    if head == "q" and getattr(model, "q", None) is None:
        raise ModelFileError("this model has no Q head (train one with objective=qlearning)")
    if head == "policy" and getattr(model, "policy", None) is None:
        raise ModelFileError("this model has no policy head (train one with objective=adi)")
    n = states.shape[0]
    out = np.empty((n, puzzle.num_actions) if head != "value" else n, dtype=np.float32)
    enc = model.config.encoding
    with torch.inference_mode():
        for lo in range(0, n, batch_size):
            x = torch.from_numpy(encode_rows(puzzle, states[lo : lo + batch_size], enc)).to(device)
            y = model(x, all_heads=True)[head] if head != "value" else model(x)
            out[lo : lo + batch_size] = y.float().cpu().numpy()
    return out


#: a missing state in a history (before an episode's start) in ``uint8`` states: every element 255
NO_STATE = 255


def missing_state(dtype: np.dtype) -> int:
    """The element value that marks a missing history state in states of ``dtype`` (its maximum)."""
    return int(np.iinfo(dtype).max)


def encode_rows(puzzle: Puzzle, states: np.ndarray, encoding: str = "onehot") -> np.ndarray:
    """``puzzle.encode`` of ``states[B, *state_shape]``, or of states with their history
    ``[B, H, *state_shape]`` (newest first) as ``float32[B, H * D]``: the input of a network with
    ``history = H`` (:mod:`puzzlezero.nn.cube_conv`). A history state made only of
    :func:`missing_state` values (none known) is encoded as zeros."""
    states = np.asarray(states)
    if states.ndim == len(puzzle.state_shape) + 1:
        return puzzle.encode(states, encoding)
    b, h = states.shape[:2]
    flat = states.reshape((b * h, -1))
    absent = (flat == missing_state(flat.dtype)).all(axis=1)
    if absent.any():
        flat = flat.copy()
        flat[absent] = puzzle.goal().reshape(-1)
    enc = puzzle.encode(flat.reshape((b * h, *states.shape[2:])), encoding)
    enc[absent] = 0.0
    return enc.reshape(b, -1)


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


def make_policy_function(
    puzzle: Puzzle,
    model: CostToGoNet,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    *,
    int8: bool = False,
) -> Callable[[np.ndarray], np.ndarray]:
    """A policy ``states[B, *state_shape] -> float32[B, A]``: the policy head's move probabilities
    (softmax of its logits; ADI, :mod:`puzzlezero.train.adi`), moves that leave a state unchanged
    set to 0 and each row renormalised. One network call per state."""
    check_compatible(puzzle, model)
    if model.policy is None:
        raise ModelFileError(
            f"this {puzzle.name} model has no policy head (train one with --set objective=adi)"
        )
    model = inference_copy(model, int8=int8, device=device)

    def policy(states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        logits = predict(puzzle, model, states, batch_size=batch_size, device=device, head="policy")
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits) * puzzle.legal_mask(states)
        total = p.sum(axis=1, keepdims=True)
        return np.divide(p, total, out=np.zeros_like(p), where=total > 0)

    return policy


def make_policy_value_function(
    puzzle: Puzzle,
    model: CostToGoNet,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``f(states) -> (policy float32[B, A], cost float32[B])`` from one network call per state:
    the policy head's move probabilities (moves that leave a state unchanged set to 0) and the value
    head's cost-to-go (clipped at ``>= 0``, exactly 0 at goals). ``states`` is ``[B, *state_shape]``
    or, for a network with history, ``[B, H, *state_shape]`` (newest first; see
    :func:`encode_rows`); the function's ``history`` attribute is the network's ``H``. The tree
    search of self-play (:mod:`puzzlezero.search.discounted_mcts`) calls this."""
    check_compatible(puzzle, model)
    if model.policy is None:
        raise ModelFileError(
            f"this {puzzle.name} model has no policy head (train one with --set objective=selfplay)"
        )
    model = inference_copy(model, device=device)
    ndim = len(puzzle.state_shape) + 1

    def policy_value(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        states = np.asarray(states)
        n, a = states.shape[0], puzzle.num_actions
        logits = np.empty((n, a), dtype=np.float32)
        cost = np.empty(n, dtype=np.float32)
        with torch.inference_mode():
            for lo in range(0, n, batch_size):
                x = torch.from_numpy(encode_rows(puzzle, states[lo : lo + batch_size], model.config.encoding))
                out = model(x.to(device), all_heads=True)
                logits[lo : lo + batch_size] = out["policy"].float().cpu().numpy()
                cost[lo : lo + batch_size] = out["value"].float().cpu().numpy()
        current = states if states.ndim == ndim else states[:, 0]
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits) * puzzle.legal_mask(current)
        total = p.sum(axis=1, keepdims=True)
        p = np.divide(p, total, out=np.zeros_like(p), where=total > 0)
        np.maximum(cost, 0.0, out=cost)
        cost[puzzle.is_goal(current)] = 0.0
        return p, cost

    policy_value.history = model.config.history  # type: ignore[attr-defined]
    return policy_value
