"""Training objectives, registered by name: how a chunk of (state, target cost-to-go) pairs is made.

An objective is a function ``make(puzzle, rng, n, max_scramble, value_fn, config) -> (states,
targets)``: it draws about ``n`` training states with ``rng`` (scramble depths up to
``max_scramble``) and labels them, using ``value_fn`` (the target network as a plain heuristic
``states[B] -> float32[B]``, clipped at 0 and 0 at goals) where it needs one. It may return more
rows than ``n`` (LHBL labels every node of its search trees). Objectives of the Q head
(``head="q"``) return targets ``[rows, num_actions]`` (see :func:`target_head` for the values);
objectives of a value and a policy head (``head="policy"``) return rows ``(value, action, weight)``;
the multi-head objective (``head="goals"``) returns ``[rows, G]``, one column per goal of
``config.goals``, and gets a ``value_fn`` returning ``[rows, G]`` (:func:`target_value_fn`).
``goal_aware`` objectives label the cost to ``config.goal`` (0 at the states that meet it), the
others the cost to the puzzle's own goal only.
Objectives never touch the trained network or the optimizer, so they run as well in a worker
process as in the trainer.

=================  =====================================================================  ==========
name               labels                                                                 file
=================  =====================================================================  ==========
``davi``           one-step Bellman: ``min_a (cost + J_target(A(s, a)))`` (DeepCubeA)    davi.py
``lhbl``           shortest path through a small search tree, ``J_target`` at its leaves lhbl.py
``random_walk``    the length of a non-backtracking random walk from the goal (CayleyPy)  random_walk.py
``scramble_depth`` the scramble depth ``k`` (the earlier warm start, kept for old runs)   random_walk.py
``qlearning``      ``cost + J_target(A(s, a))`` for every action (a Q head, for Q*)      qlearning.py
``adi``            DAVI's target, its argmin for a policy head, weight 1/depth (ADI)      adi.py
``multigoal``      one-step Bellman targets of every goal's head (Dong et al.'s networks) multigoal.py
``selfplay``       discounted-MCTS visit counts and ``gamma^distance`` of episodes        selfplay.py
=================  =====================================================================  ==========

>>> sorted(OBJECTIVES)  # doctest: +SKIP
['adi', 'davi', 'lhbl', 'multigoal', 'qlearning', 'random_walk', 'scramble_depth', 'selfplay']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from puzzlezero.errors import UnknownNameError
from puzzlezero.puzzles.base import Puzzle

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = [
    "HEADS",
    "Objective",
    "OBJECTIVES",
    "register_objective",
    "get_objective",
    "objective_names",
    "target_head",
    "target_value_fn",
    "LabelJob",
    "make_labels",
    "ValueFn",
    "MakeLabels",
    "scramble_depths",
]

ValueFn = Callable[[np.ndarray], np.ndarray]
MakeLabels = Callable[
    [Puzzle, np.random.Generator, int, int, "ValueFn | None", "TrainConfig"], tuple[np.ndarray, np.ndarray]
]


def scramble_depths(
    rng: np.random.Generator, n: int, max_scramble: int, config: TrainConfig | None
) -> tuple[int, int] | np.ndarray:
    """The ``depth`` argument of :meth:`Puzzle.scramble` (and the walks) for ``n`` training states:
    ``(1, K)``, i.e. ``k ~ U[1, K]``, the paper's, when ``config.scramble_power`` is 1 (or there is
    no config); else ``int64[n]`` depths ``k = ceil(K * u**p)`` with ``u ~ U(0, 1)`` drawn here from
    ``rng`` (:attr:`TrainConfig.scramble_power`)."""
    power = 1.0 if config is None else float(config.scramble_power)
    if power == 1.0:
        return (1, max_scramble)
    return np.clip(np.ceil(max_scramble * rng.random(n) ** power), 1, max_scramble).astype(np.int64)


@dataclass(frozen=True)
class Objective:
    """A registered label maker. ``needs_target``: whether it calls the target network; ``head``:
    the network head its targets train (``"value"``: ``[rows]``, ``"q"``: ``[rows, num_actions]``,
    ``"policy"``: ``[rows, 3]`` = value target, policy target action, sample weight, or
    ``[rows, 3 + A]`` with a target distribution over actions after them (the action then -1);
    ``"alphazero"``: ``[rows, 3 + A]`` = ``gamma^distance`` target, weight, episode-start flag,
    target distribution over actions (self-play; its states may carry a history axis);
    ``"goals"``: ``[rows, G]`` for a multi-head network; the value head trains beside the Q and
    policy heads); ``goal_aware``: it labels the cost to ``config.goal`` (or, ``"goals"``, to each
    of ``config.goals``)."""

    name: str
    make: MakeLabels
    needs_target: bool
    summary: str
    head: str = "value"
    goal_aware: bool = False
    #: trains the policy head only (its value targets are NaN): validated by following the policy
    policy_only: bool = False


#: the heads an objective may train (see :class:`Objective`)
HEADS = ("value", "q", "policy", "alphazero", "goals")

#: name -> objective; filled by the modules below on import (see :func:`get_objective`)
OBJECTIVES: dict[str, Objective] = {}

_MODULES = (
    "puzzlezero.train.davi",
    "puzzlezero.train.lhbl",
    "puzzlezero.train.random_walk",
    "puzzlezero.train.qlearning",
    "puzzlezero.train.adi",
    "puzzlezero.train.efficientcube",
    "puzzlezero.train.multigoal",
    "puzzlezero.train.selfplay",
)


def register_objective(
    name: str,
    *,
    needs_target: bool,
    summary: str,
    head: str = "value",
    goal_aware: bool = False,
    policy_only: bool = False,
) -> Callable[[MakeLabels], MakeLabels]:
    """Decorator: register ``make`` under ``name``."""
    if head not in HEADS:
        raise ValueError(f"objective head must be one of {HEADS}, got {head!r}")

    def deco(make: MakeLabels) -> MakeLabels:
        OBJECTIVES[name] = Objective(name, make, needs_target, summary, head, goal_aware, policy_only)
        return make

    return deco


def _load_all() -> None:
    import importlib

    for mod in _MODULES:
        importlib.import_module(mod)


def get_objective(name: str) -> Objective:
    """The objective called ``name``; an unknown name raises :class:`UnknownNameError` listing them."""
    _load_all()
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise UnknownNameError(
            f"unknown training objective {name!r}; choose one of {', '.join(sorted(OBJECTIVES))}"
        ) from None


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


def objective_names() -> list[str]:
    _load_all()
    return sorted(OBJECTIVES)


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
    return states, np.asarray(targets, dtype=np.float32)
