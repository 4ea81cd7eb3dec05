"""Wrap a cost-to-go network into a plain heuristic function for the searches.

The searches never import torch: they take ``heuristic(states[B, *state_shape]) -> float32[B]``.
A network here is either a model folder's :class:`~puzzlezero.nn.runtime.Network` (onnxruntime,
no torch: what the solver runs) or an in-memory torch :class:`~puzzlezero.nn.models.CostToGoNet`
(training's evaluations), which runs on a frozen torch inference copy; the functions made have the
same contracts either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from puzzlezero.errors import ModelFileError
from puzzlezero.nn.onehot_rows import positions
from puzzlezero.nn.runtime import Network
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.base import Puzzle

if TYPE_CHECKING:
    import torch

    from puzzlezero.nn.models import CostToGoNet

#: what the functions here evaluate: a model folder's network, or a torch network in memory
Model = Any
#: ``run(states, heads)``: the raw outputs of ``heads`` for ``states``, one array per head
Evaluator = Callable[[np.ndarray, Sequence[str]], list[np.ndarray]]

__all__ = [
    "encode_on",
    "encode_rows",
    "goal_column",
    "has_head",
    "make_heuristic",
    "make_policy",
    "make_policy_value",
    "make_policy_value_function",
    "make_q_function",
    "network_input",
    "onehot_index",
    "policy_source",
    "predict",
]


def has_head(model: Model, head: str) -> bool:
    """Whether ``model`` (a :class:`Network` or a torch network) has the output ``head``."""
    if isinstance(model, Network):
        return head in model.heads
    return getattr(model, head, None) is not None


def _output_shape(model: Model, n: int, head: str, num_actions: int) -> tuple[int, ...]:
    if head != "value":
        return (n, num_actions)
    return (n, len(model.config.goal_names)) if model.config.multi_head else (n,)


def predict(
    puzzle: Puzzle,
    model: Model,
    states: np.ndarray,
    *,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    head: str = "value",
) -> np.ndarray:
    """Raw network outputs for ``states[B, *state_shape]`` (no clipping, no goal test), in chunks of
    ``batch_size``: ``float32[B]`` from the value head (``head="value"``; ``float32[B, G]`` from a
    multi-head network, one column per goal), ``float32[B, A]`` from the Q head (``head="q"``) or
    the policy head's logits (``head="policy"``). ``model``: a :class:`Network`, or a torch network
    (run under ``torch.inference_mode()`` on ``device``; the caller sets eval mode; a convolutional
    net on a CPU gets at most :data:`~puzzlezero.nn.models.CPU_CHUNK` states a pass)."""
    if head not in ("value", "q", "policy"):
        raise ModelFileError(f"unknown network head {head!r}; choose value, q or policy")
    if head == "q" and not has_head(model, "q"):
        raise ModelFileError("this model has no Q head (train one with objective=qlearning)")
    if head == "policy" and not has_head(model, "policy"):
        raise ModelFileError("this model has no policy head (train one with objective=adi)")
    return _run(puzzle, model, batch_size, device)(np.asarray(states), (head,))[0]


def _run(puzzle: Puzzle, model: Model, batch_size: int, device: str | torch.device) -> Evaluator:
    """An :data:`Evaluator` of ``model`` as it is (a torch network: no inference copy made here)."""
    if isinstance(model, Network):
        return _network_run(puzzle, model, batch_size)
    return _torch_run(puzzle, model, batch_size, device)


def _network_run(puzzle: Puzzle, net: Network, batch_size: int) -> Evaluator:
    encoding = net.config.encoding
    # a network whose first layer is a sum of rows reads where the one-hot's ones are
    values = net.first.values if net.first is not None else None

    def run(states: np.ndarray, heads: Sequence[str]) -> list[np.ndarray]:
        n = states.shape[0]
        outs = [np.empty(_output_shape(net, n, h, puzzle.num_actions), np.float32) for h in heads]
        for lo in range(0, n, batch_size):
            part = states[lo : lo + batch_size]
            x = positions(part, values) if values is not None else encode_rows(puzzle, part, encoding)
            for out, y in zip(outs, net.run(x, tuple(heads)), strict=True):
                out[lo : lo + batch_size] = y
        return outs

    return run


def _torch_run(puzzle: Puzzle, model: CostToGoNet, batch_size: int, device: str | torch.device) -> Evaluator:
    import torch

    from puzzlezero.nn.models import CPU_CHUNK

    if model.config.arch == "conv" and torch.device(device).type == "cpu":
        batch_size = min(batch_size, CPU_CHUNK)

    def run(states: np.ndarray, heads: Sequence[str]) -> list[np.ndarray]:
        n = states.shape[0]
        outs = [np.empty(_output_shape(model, n, h, puzzle.num_actions), np.float32) for h in heads]
        with torch.inference_mode():
            for lo in range(0, n, batch_size):
                x = network_input(puzzle, model, states[lo : lo + batch_size], device)
                y = model(x, all_heads=True) if heads != ("value",) else {"value": model(x)}
                for out, head in zip(outs, heads, strict=True):
                    out[lo : lo + batch_size] = y[head].float().cpu().numpy()
        return outs

    return run


def _evaluator(
    puzzle: Puzzle, model: Model, int8: bool, device: str | torch.device, batch_size: int
) -> Evaluator:
    """What the functions made here call: a :class:`Network` as it is (its precision chosen when
    it was loaded), a torch network through a frozen inference copy (:func:`_inference_copy`)."""
    if isinstance(model, Network):
        return _network_run(puzzle, model, batch_size)
    return _torch_run(puzzle, _inference_copy(puzzle, model, int8, device), batch_size, device)


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


def encode_on(
    puzzle: Puzzle,
    states: np.ndarray,
    encoding: str,
    device: str | torch.device,
    *,
    on_device: bool | None = None,
) -> torch.Tensor:
    """The network input for ``states`` (as :func:`encode_rows`) as a tensor on ``device``.

    A one-hot input is ``4 V`` bytes per state element (``V = inputs.onehot_values(puzzle)``: 2,401 floats
    per 48-puzzle state), made by NumPy on one core and copied to the device: on a GPU that is
    most of a training step. With ``on_device`` (the default on any device but the CPU, where NumPy
    is the faster) and a plain one-hot encoding of plain states, only the elements travel, one
    byte each, and the one-hot is scattered on the device; the result is the same tensor. Other
    encodings, and states with a history, are encoded by NumPy as before."""
    import torch

    device = torch.device(device)
    states = np.asarray(states)
    values = inputs.onehot_values(puzzle) if encoding == "onehot" else None
    if on_device is None:
        on_device = device.type != "cpu"
    if not on_device or values is None or states.ndim != len(puzzle.state_shape) + 1:
        return torch.from_numpy(encode_rows(puzzle, states, encoding)).to(device)
    index = onehot_index(states, values, device)
    x = torch.zeros((index.shape[0], index.shape[1] * values), dtype=torch.float32, device=device)
    return x.scatter_(1, index, 1.0)


def onehot_index(states: np.ndarray, values: int, device: str | torch.device) -> torch.Tensor:
    """Where the ones of a plain one-hot of ``states`` are: ``int64[B, E]``, ``e * values +
    state[:, e]``; the elements travel to ``device`` one byte each and are widened there."""
    import torch

    flat = torch.from_numpy(np.ascontiguousarray(states.reshape(states.shape[0], -1))).to(device)
    return flat.long() + torch.arange(flat.shape[1], device=device) * values


def network_input(
    puzzle: Puzzle, model: CostToGoNet, states: np.ndarray, device: str | torch.device
) -> torch.Tensor:
    """What ``model`` reads for ``states``: its encoding (:func:`encode_on`), or, for an inference
    copy that sums its one-hot input's rows (:func:`~puzzlezero.nn.fast.gathers_onehot`), the
    positions of the ones, ``int64[B, E]`` (``e * V + state[:, e]``)."""
    from puzzlezero.nn.fast import gathers_onehot

    values = gathers_onehot(model)
    if values is None:
        return encode_on(puzzle, states, model.config.encoding, device)
    return onehot_index(np.asarray(states), values, device)


def _inference_copy(
    puzzle: Puzzle, model: CostToGoNet, int8: bool, device: str | torch.device
) -> CostToGoNet:
    """:func:`~puzzlezero.nn.fast.inference_copy` of ``model`` for ``puzzle``: told the puzzle's
    ``onehot_values`` where the model reads the plain one-hot encoding (see :func:`network_input`)."""
    from puzzlezero.nn.fast import inference_copy

    values = inputs.onehot_values(puzzle) if model.config.encoding == "onehot" else None
    return inference_copy(model, int8=int8, device=device, onehot_values=values)


def check_compatible(puzzle: Puzzle, model: Model) -> None:
    """Raise :class:`ModelFileError` if ``model`` was made for another puzzle or input size."""
    if model.puzzle and puzzle.name and model.puzzle != puzzle.name:
        raise ModelFileError(f"this model was trained for {model.puzzle!r}, not {puzzle.name!r}")
    want = inputs.dim(puzzle, model.config.encoding)
    if model.config.input_dim != want:
        raise ModelFileError(
            f"model expects {model.config.input_dim} inputs but {puzzle.name or puzzle!r} with encoding "
            f"{model.config.encoding!r} gives {want}"
        )
    shape = inputs.shape(puzzle, model.config.encoding)
    if model.config.arch == "conv" and model.config.input_shape != shape:
        raise ModelFileError(
            f"model reads a {'x'.join(map(str, model.config.input_shape))} grid but {puzzle.name or puzzle!r} "
            f"with encoding {model.config.encoding!r} gives {'x'.join(map(str, shape))}"
        )


def goal_column(puzzle: Puzzle, model: Model, goal: str | None) -> tuple[str, int | None]:
    """Which goal a heuristic of ``model`` estimates and where: ``(goal, column)``, ``column``
    the multi-head output of that goal, ``None`` for a single-head network. ``goal=None`` is the
    network's own goal (single head) or ``"solved"`` (multi-head); a goal the network was not
    trained for raises :class:`ModelFileError` naming the ones it was."""
    names = model.config.goal_names
    if goal is None:
        goal = names[0] if not model.config.multi_head else "solved"
    puzzle.goal_named(goal)  # an unknown goal of the puzzle: UnknownNameError listing them
    if goal not in names:
        raise ModelFileError(
            f"this {puzzle.name} model estimates the cost to reach {', '.join(names)}, not {goal!r} "
            f"(train one with --set goal={goal}, or a multi-head one with --set goals=...)"
        )
    return goal, names.index(goal) if model.config.multi_head else None


def make_heuristic(
    puzzle: Puzzle,
    model: Model,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    *,
    int8: bool = False,
    head: str = "value",
    goal: str | None = None,
) -> Callable[[np.ndarray], np.ndarray]:
    """A heuristic ``states[B, *state_shape] -> float32[B]``: the network's cost-to-go, clipped at
    ``>= 0`` and exactly ``0`` for goal states, evaluated chunk by chunk (``batch_size`` states).
    ``model``: a :class:`Network` (:func:`~puzzlezero.nn.runtime.load_network`: onnxruntime, in
    the precision it was loaded with), or a torch network, of which a frozen eval-mode copy runs on
    ``device`` under ``torch.inference_mode()`` (batch norm folded into the linear layers;
    ``int8=True``: int8 linear layers on CPU; see :mod:`puzzlezero.nn.fast`); later training of
    ``model`` does not change the heuristic. ``head="qmin"`` reads the cost-to-go off a Q head
    instead, as ``min_a Q(s, a)`` (the Q-learning target network's value of a state). ``goal``: the
    goal whose cost-to-go is read (a multi-head network's column of it; see :func:`goal_column`), 0
    at the states that meet it.

    Example:
        >>> h = make_heuristic(puzzle, load_network("cube3"))   # doctest: +SKIP
        >>> h(puzzle.goals(2))                                  # doctest: +SKIP
        array([0., 0.], dtype=float32)
    """
    if head not in ("value", "qmin"):
        raise ModelFileError(f"unknown heuristic head {head!r}; choose value or qmin")
    check_compatible(puzzle, model)
    goal, column = goal_column(puzzle, model, goal)
    is_goal = puzzle.goal_test(goal)
    if head == "qmin" and not has_head(model, "q"):
        raise ModelFileError("this model has no Q head (train one with objective=qlearning)")
    run = _evaluator(puzzle, model, int8, device, batch_size)
    net_head = ("q",) if head == "qmin" else ("value",)

    def heuristic(states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        if states.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        raw = run(states, net_head)[0]
        if head == "qmin":
            values = raw.min(axis=1)
        else:
            values = np.ascontiguousarray(raw[:, column]) if column is not None else raw
        np.maximum(values, 0.0, out=values)
        values[is_goal(states)] = 0.0
        return values

    return heuristic


def make_q_function(
    puzzle: Puzzle,
    model: Model,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    *,
    int8: bool = False,
) -> Callable[[np.ndarray], np.ndarray]:
    """A Q function ``states[B, *state_shape] -> float32[B, A]`` for Q* search: the Q head's cost to
    reach a goal after taking each action (the action's cost included), clipped at ``>=`` that
    action's cost (``puzzle.action_costs``).
    One network call per state, however many actions (see :func:`make_heuristic` for ``model``)."""
    check_compatible(puzzle, model)
    if not has_head(model, "q"):
        raise ModelFileError(
            f"this {puzzle.name} model has no Q head; Q* search needs one (train with "
            f"--set objective=qlearning), or use --search bwas"
        )
    run = _evaluator(puzzle, model, int8, device, batch_size)
    cost = puzzle.action_costs.astype(np.float32)[None, :]

    def q_function(states: np.ndarray) -> np.ndarray:
        q = run(np.asarray(states), ("q",))[0]
        np.maximum(q, cost, out=q)
        return q

    return q_function


#: where a network's policy comes from (:func:`policy_source`)
POLICY_SOURCES = ("auto", "policy", "q", "value")


def policy_source(model: Model, source: str = "auto") -> str:
    """The head a policy is read from: ``"policy"`` (a policy head: ``softmax(logits / T)``),
    ``"q"`` (a Q head: ``softmax(-Q / T)``) or ``"value"`` (the value head on the children:
    ``softmax(-(cost + h(child)) / T)``); ``"auto"`` takes the first the model has, in that
    order. A head the model lacks raises :class:`ModelFileError`."""
    if source not in POLICY_SOURCES:
        raise ModelFileError(f"unknown policy source {source!r}; choose one of {', '.join(POLICY_SOURCES)}")
    if source == "auto":
        if has_head(model, "policy"):
            return "policy"
        return "q" if has_head(model, "q") else "value"
    if source != "value" and not has_head(model, source):
        raise ModelFileError(f"this model has no {source} head; its policy can only come from its values")
    return source


def make_policy_value(
    puzzle: Puzzle,
    model: Model,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    *,
    int8: bool = False,
    temperature: float = 1.0,
    source: str = "auto",
    legal_only: bool = False,
) -> Callable[[np.ndarray], tuple[np.ndarray, ...]]:
    """A policy-value function ``states[B] -> (float32[B], float32[B, A][, float32[B, A]])`` for
    MCTS (:mod:`puzzlezero.search.mcts`): the value head's cost-to-go (clipped at ``>= 0``, 0 at
    goals) and a policy (:func:`policy_source`) from ONE forward pass where the model has a policy
    or Q head (with a Q head, the Q values third: each move's cost-to-go); from the value head on
    the states and their children otherwise
    (:func:`~puzzlezero.search.policy.policy_value_from_heuristic`, the children's values third).

    ``legal_only``: moves that leave a state unchanged get probability 0 (``puzzle.legal_mask``;
    MCTS drops them itself when it expands). A network with history (``model.config.history``
    ``H > 1``) takes ``states[B, H, *state_shape]``, newest first (:func:`encode_rows`); the goal
    test and the mask read the newest."""
    from puzzlezero.search.policy import check_temperature, policy_value_from_heuristic, softmin

    t = check_temperature(temperature)
    head = policy_source(model, source)
    if head == "value":
        return policy_value_from_heuristic(
            puzzle, make_heuristic(puzzle, model, batch_size, device, int8=int8), t
        )
    check_compatible(puzzle, model)
    run = _evaluator(puzzle, model, int8, device, batch_size)
    ndim = len(puzzle.state_shape) + 1
    cost = puzzle.action_costs.astype(np.float32)[None, :]

    def policy_value(states: np.ndarray) -> tuple[np.ndarray, ...]:
        states = np.asarray(states)
        n = states.shape[0]
        current = states if states.ndim == ndim else states[:, 0]
        mask = puzzle.legal_mask(current) if legal_only and n else None
        values, raw = run(states, ("value", head))
        probs = softmin(-raw if head == "policy" else raw, t, mask)
        np.maximum(values, 0.0, out=values)
        if n:
            values[puzzle.is_goal(current)] = 0.0
        return (values, probs) if head == "policy" else (values, probs, np.maximum(raw, cost))

    policy_value.history = model.config.history  # type: ignore[attr-defined]
    return policy_value


@overload
def make_policy(
    puzzle: Puzzle,
    model: Model,
    batch_size: int = ...,
    device: str | torch.device = ...,
    *,
    int8: bool = ...,
    temperature: float = ...,
    source: Literal["policy", "q"],
) -> Callable[[np.ndarray], np.ndarray]: ...
@overload
def make_policy(
    puzzle: Puzzle,
    model: Model,
    batch_size: int = ...,
    device: str | torch.device = ...,
    *,
    int8: bool = ...,
    temperature: float = ...,
    source: str = ...,
) -> Callable[[np.ndarray], np.ndarray] | None: ...
def make_policy(
    puzzle: Puzzle,
    model: Model,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
    *,
    int8: bool = False,
    temperature: float = 1.0,
    source: str = "auto",
) -> Callable[[np.ndarray], np.ndarray] | None:
    """A policy ``states[B] -> float32[B, A]`` from the model's policy or Q head
    (:func:`policy_source`), one forward pass per state; ``None`` where the policy would come
    from the value head (the caller evaluates the children itself: weighted convolutional
    distance does anyway)."""
    from puzzlezero.search.policy import policy_of

    if policy_source(model, source) == "value":  # "policy" and "q" name a head, or raise
        return None
    pv = make_policy_value(
        puzzle, model, batch_size, device, int8=int8, temperature=temperature, source=source
    )
    return policy_of(pv)


def make_policy_value_function(
    puzzle: Puzzle,
    model: Model,
    batch_size: int = 2048,
    device: str | torch.device = "cpu",
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``f(states) -> (policy float32[B, A], cost float32[B])`` from one network call per state,
    for the tree search of self-play (:mod:`puzzlezero.search.discounted_mcts`): the policy head's
    move probabilities with moves that leave a state unchanged set to 0, and the value head's
    cost-to-go (clipped at ``>= 0``, exactly 0 at goals); :func:`make_policy_value` with
    ``source="policy", legal_only=True``, its outputs in the order that search takes. ``states`` is
    ``[B, *state_shape]`` or, for a network with history, ``[B, H, *state_shape]`` (newest first);
    the function's ``history`` attribute is the network's ``H``."""
    if not has_head(model, "policy"):
        raise ModelFileError(
            f"this {puzzle.name} model has no policy head (train one with --set objective=selfplay)"
        )
    pv = make_policy_value(puzzle, model, batch_size, device, source="policy", legal_only=True)

    def policy_value(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cost, probs = pv(states)
        return probs, cost

    policy_value.history = model.config.history  # type: ignore[attr-defined]
    return policy_value
