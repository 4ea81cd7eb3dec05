"""The objectives' registry: each objective module registers its label maker by name.

An objective is a function ``make(puzzle, rng, n, max_scramble, value_fn, config) -> (states,
targets)``: it draws about ``n`` training states with ``rng`` (scramble depths up to
``max_scramble``) and labels them, using ``value_fn`` (the target network as a plain heuristic
``states[B] -> float32[B]``, clipped at 0 and 0 at goals) where it needs one. It may return more
rows than ``n`` (LHBL labels every node of its search trees). Objectives of the Q head
(``head="q"``) return targets ``[rows, num_actions]``; objectives of a value and a policy head
(``head="policy"``) return rows ``(value, action, weight)``; the multi-head objective
(``head="goals"``) returns ``[rows, G]``, one column per goal of ``config.goals``, and gets a
``value_fn`` returning ``[rows, G]``. ``goal_aware`` objectives label the cost to ``config.goal``
(0 at the states that meet it), the others the cost to the puzzle's own goal only. Objectives
never touch the trained network or the optimizer, so they run as well in a worker process as in
the trainer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from puzzlezero.errors import UnknownNameError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.train import config as train_config
from puzzlezero.train.config import TrainConfig

__all__ = [
    "HEADS",
    "Objective",
    "OBJECTIVES",
    "register_objective",
    "get_objective",
    "objective_names",
    "descent_objectives",
    "capping_objectives",
    "ValueFn",
    "MakeLabels",
]

ValueFn = Callable[[np.ndarray], np.ndarray]
MakeLabels = Callable[
    [Puzzle, np.random.Generator, int, int, "ValueFn | None", "TrainConfig"], tuple[np.ndarray, np.ndarray]
]
Recipe = Callable[["TrainConfig"], str]


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
    #: labels states that :func:`~puzzlezero.train.descents.training_states` draws, so a share of
    #: them may come from greedy descents (``TrainConfig.descent_share``)
    descents: bool = False
    #: honours ``TrainConfig.cap_labels``: caps its targets by each training state's known path
    #: cost (:mod:`.path_costs`)
    caps_labels: bool = False
    #: the objective in a model card's one-line recipe, from the run's config (default: its name)
    recipe: Recipe | None = None

    def describe(self, config: TrainConfig) -> str:
        """This objective as a model card's recipe names it."""
        return self.name if self.recipe is None else self.recipe(config)


#: the heads an objective may train (see :class:`Objective`)
HEADS = ("value", "q", "policy", "alphazero", "goals")

#: name -> objective; filled by the objective modules of this package as it is imported
OBJECTIVES: dict[str, Objective] = {}


def register_objective(
    name: str,
    *,
    needs_target: bool,
    summary: str,
    head: str = "value",
    goal_aware: bool = False,
    policy_only: bool = False,
    descents: bool = False,
    caps_labels: bool = False,
    recipe: Recipe | None = None,
) -> Callable[[MakeLabels], MakeLabels]:
    """Decorator: register ``make`` under ``name``."""
    if head not in HEADS:
        raise ValueError(f"objective head must be one of {HEADS}, got {head!r}")

    def deco(make: MakeLabels) -> MakeLabels:
        OBJECTIVES[name] = Objective(
            name, make, needs_target, summary, head, goal_aware, policy_only, descents, caps_labels, recipe
        )
        return make

    return deco


def get_objective(name: str) -> Objective:
    """The objective called ``name``; an unknown name raises :class:`UnknownNameError` listing them."""
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise UnknownNameError(
            f"unknown training objective {name!r}; choose one of {', '.join(sorted(OBJECTIVES))}"
        ) from None


def objective_names() -> list[str]:
    """The registered objectives' names, sorted."""
    return sorted(OBJECTIVES)


def descent_objectives() -> list[str]:
    """The objectives whose training states may come in part from greedy descents, sorted."""
    return sorted(name for name, objective in OBJECTIVES.items() if objective.descents)


def capping_objectives() -> list[str]:
    """The objectives that honour ``TrainConfig.cap_labels``, sorted."""
    return sorted(name for name, objective in OBJECTIVES.items() if objective.caps_labels)


# the checks of a TrainConfig read the objectives through these: config.py imports no objective
train_config.OBJECTIVE_LOOKUP = (get_objective, descent_objectives, capping_objectives)
