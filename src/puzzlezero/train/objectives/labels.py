"""How the trainer (or a worker process) gets a chunk's labels from the objective it names.

:class:`LabelJob` says everything that decides a chunk's labels; :func:`make_labels` makes them;
:func:`target_value_fn` reads the target network as the ``value_fn`` the objective needs
(:func:`target_head` says which of its heads), and :func:`target_function` wraps it as the trainer
and the label workers call it (self-play's policy-value function, under ``config.amp``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train.objectives.registry import ValueFn, get_objective

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["LabelJob", "make_labels", "target_head", "target_value_fn", "target_function"]


def target_head(config: TrainConfig) -> str:
    """How the target network is read as ``value_fn`` for ``config.objective``: ``"qmin"``
    (``min_a Q``) for an objective of the Q head with ``q_bootstrap="qmin"``, ``"policy_value"``
    (:func:`puzzlezero.nn.make_policy_value_function`) for self-play, else ``"value"`` (see
    :func:`puzzlezero.nn.make_heuristic`)."""
    if get_objective(config.objective).head == "alphazero":
        return "policy_value"
    q = get_objective(config.objective).head == "q"
    return "qmin" if q and config.q_bootstrap == "qmin" else "value"


def target_value_fn(
    puzzle: Puzzle,
    net: Any,
    config: TrainConfig,
    *,
    device: Any = "cpu",
    int8: bool = False,
) -> ValueFn:
    """The target network ``net`` as the ``value_fn`` of ``config.objective``'s labels: for a
    multi-head network ``states[B] -> float32[B, G]``, each goal's column clipped at 0 and 0 at the
    states that meet that goal; else ``nn.make_heuristic`` on :func:`target_head`, for the goal
    ``config.goal``."""
    from puzzlezero.nn.heuristic import make_heuristic, predict

    if not net.config.multi_head:
        return make_heuristic(
            puzzle,
            net,
            batch_size=config.inference_batch,
            device=device,
            int8=int8,
            head=target_head(config),
            goal=config.goal,
        )
    from puzzlezero.nn.fast import inference_copy

    tests = [puzzle.goal_test(g) for g in net.config.goal_names]
    frozen = inference_copy(net, int8=int8, device=device)

    def values(states: np.ndarray) -> np.ndarray:
        if states.shape[0] == 0:
            return np.zeros((0, len(tests)), dtype=np.float32)
        out = predict(puzzle, frozen, states, batch_size=config.inference_batch, device=device)
        np.maximum(out, 0.0, out=out)
        for k, test in enumerate(tests):
            out[test(states), k] = 0.0
        return out

    return values


def target_function(puzzle: Puzzle, net: Any, config: TrainConfig, device: Any = "cpu") -> Any:
    """The target network as its objective reads it (:func:`target_head`): a heuristic
    ``states -> float32[B]``, or for self-play a policy-value function; evaluated on ``device``
    under ``config.amp`` (the trainer and the label workers both label with this)."""
    import torch

    from puzzlezero.train.amp import with_autocast

    if target_head(config) == "policy_value":
        from puzzlezero.nn.heuristic import make_policy_value_function

        h: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray] | np.ndarray] = make_policy_value_function(
            puzzle, net, batch_size=config.inference_batch, device=device
        )
    else:
        h = target_value_fn(puzzle, net, config, device=device, int8=config.int8_targets)
    fn = with_autocast(h, config.amp, torch.device(device))
    if hasattr(h, "history") and fn is not h:
        fn.history = h.history  # type: ignore[attr-defined]  # self-play reads it
    return fn


@dataclass(frozen=True)
class LabelJob:
    """Everything that decides one chunk's labels (JSON-able; kept in checkpoints while in flight)."""

    chunk: int
    objective: str
    n: int
    max_scramble: int
    seed: tuple[int, ...]
    target_version: int

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LabelJob:
        return cls(**{**d, "seed": tuple(d["seed"])})


def make_labels(
    puzzle: Puzzle, job: LabelJob, value_fn: ValueFn | None, config: TrainConfig
) -> tuple[np.ndarray, np.ndarray]:
    """The labelled states of ``job`` (the same in the trainer and in a worker process)."""
    rng = np.random.default_rng(list(job.seed))
    states, targets = get_objective(job.objective).make(
        puzzle, rng, job.n, job.max_scramble, value_fn, config
    )
    targets = np.asarray(targets, dtype=np.float32)
    if config.solution_paths is not None and job.objective == config.objective:  # not in a warm start
        from puzzlezero.train.solution_paths import with_path_states

        return with_path_states(puzzle, np.random.default_rng([*job.seed, 2]), states, targets, config)
    return states, targets
