"""The heuristics by name (:data:`HEURISTICS`), each declared once by :func:`register_heuristic`,
and :func:`get_heuristic`, which builds one once per process and adapts it to the kind a search
calls (value, Q function, policy)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, get_args

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import SOLVED, Goal, Puzzle
from puzzlezero.solver.learned import (
    cube3_view_heuristic,
    cube3_view_q_function,
    learned_heuristic,
    learned_heuristic_fp32,
    learned_policy,
    learned_policy_value,
    learned_q_function,
    learned_wcd,
    stage_models,
)
from puzzlezero.solver.names import Heuristic, check_new_name, lookup, resolve_entry
from puzzlezero.solver.search_options import OPTIONS

#: what a heuristic returns, and what a search calls (``SearchSpec.heuristic_kind``): a value
#: ``states[B] -> float32[B]``, a Q function ``float32[B, A]``, a policy (probabilities
#: ``float32[B, A]``) or a value with a policy
Kind = Literal["value", "q", "policy", "policy_value"]
KINDS: tuple[str, ...] = get_args(Kind)


@dataclass(frozen=True)
class HeuristicSpec:
    """A heuristic by name: ``entry`` builds it, called as ``entry(puzzle, model)`` when
    ``uses_model`` else ``entry(puzzle)``, and returns ``states[B] -> float32[B]`` (``kind="value"``)
    or a Q function ``states[B] -> float32[B, A]`` (``kind="q"``) or a policy-value function
    ``states[B] -> (float32[B], float32[B, A])`` (``kind="policy_value"``, MCTS). The
    :data:`OPTIONS` named in ``options`` are passed to ``entry`` as keyword arguments. ``uses_goal``:
    it is called with ``goal=NAME`` too and estimates the cost to that goal (the others estimate the
    cost to the puzzle's own goal, whatever goal is searched for). ``threaded``: it runs a network
    on intra-op threads (:mod:`puzzlezero.nn.runtime`), so searches run side by side in threads (a
    state's images) give each thread one of them. ``member_width``: a heuristic without a model as
    a member of an ensemble (``heuristic:NAME`` in ``--models``): its beams are this many times the
    widths of the others, and its node cap as many times theirs (it makes no network calls, so the
    same time buys a wider beam; searches without a beam width ignore it)."""

    entry: str | Callable
    uses_model: bool = False
    description: str = ""
    kind: Kind = "value"
    uses_goal: bool = False
    options: tuple[str, ...] = ()
    threaded: bool = False
    member_width: int = 1
    #: the model it loads when none is named (``uses_model``): ``None``, the puzzle's own; a
    #: name, another puzzle's network read through this heuristic (``cube3-view``: ``"cube3"``)
    default_model: str | None = None


def misplaced_heuristic(puzzle: Puzzle, *, goal: str = SOLVED) -> Heuristic:
    """How many of the goal's cells (stickers, tiles) are not yet right: ``Goal.misplaced`` of a
    goal made of positions, else (``"solved"``) of the whole state against ``puzzle.goal()``.
    Cheap, 0 at the goal (at ``goal()`` itself where a puzzle has several solved states), not
    admissible (one move fixes several cells): for tests, demos and sub-goals without a trained
    model."""
    target = puzzle.goal_named(goal)
    if target.positions is None:
        if target.name != SOLVED:
            raise PuzzleError(f"the misplaced heuristic needs a goal made of cells; {goal!r} is a test")
        whole = puzzle.goal().reshape(-1)
        target = Goal(SOLVED, "every cell", positions=np.arange(whole.size), values=whole)
    return target.misplaced


#: the heuristics by name, each declared once by :func:`register_heuristic`
HEURISTICS: dict[str, HeuristicSpec] = {}


def register_heuristic(name: str, spec: HeuristicSpec, *, replace: bool = False) -> HeuristicSpec:
    """Declare the heuristic ``name``: after this ``solve(..., heuristic=name)`` and
    ``--heuristic name`` know it. Its kind must be one of :data:`KINDS` and its knobs declared in
    :data:`OPTIONS`; a name already registered is an error unless ``replace``."""
    check_new_name(HEURISTICS, name, "heuristic", replace)
    if spec.kind not in KINDS:
        raise PuzzleError(f"a heuristic's kind is one of {', '.join(KINDS)}, got {spec.kind!r}")
    unknown = [n for n in spec.options if n not in OPTIONS]
    if unknown:
        raise PuzzleError(
            f"a heuristic reads knobs declared in OPTIONS (register_option); unknown: {', '.join(unknown)}"
        )
    width = spec.member_width
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise PuzzleError(f"a heuristic's member_width is a whole number of at least 1, got {width!r}")
    if spec.uses_model and width != 1:
        raise PuzzleError("member_width is for heuristics without a model (a network's member is its model)")
    HEURISTICS[name] = spec
    return spec


_BUILTINS: dict[str, HeuristicSpec] = {
    "learned": HeuristicSpec(
        learned_heuristic,
        uses_model=True,
        description="DeepCubeA cost-to-go network (--precision: int8 on a CPU with VNNI, else float32)",
        uses_goal=True,
        options=("precision",),
        threaded=True,
    ),
    "learned-fp32": HeuristicSpec(
        learned_heuristic_fp32,
        uses_model=True,
        description="DeepCubeA cost-to-go network (float32)",
        uses_goal=True,
        threaded=True,
    ),
    "learned-q": HeuristicSpec(
        learned_q_function,
        uses_model=True,
        kind="q",
        description="the network's Q head (for Q*)",
        uses_goal=True,
        options=("precision",),
        threaded=True,
    ),
    "learned-onnx": HeuristicSpec(
        "puzzlezero.onnx:onnx_heuristic",
        uses_model=True,
        description="the network on onnxruntime (float32): --model FILE.onnx, or a model folder's "
        "model.onnx, else the graph built from its weights",
    ),
    "learned-onnx-q": HeuristicSpec(
        "puzzlezero.onnx:onnx_q_function",
        uses_model=True,
        kind="q",
        description="the network's Q head on onnxruntime (for Q*)",
    ),
    "learned-pv": HeuristicSpec(
        learned_policy_value,
        uses_model=True,
        kind="policy_value",
        description="the network's value head with a policy (policy head, else softmax(-Q / T)) (for MCTS)",
        options=("policy_temperature", "precision"),
    ),
    "learned-policy": HeuristicSpec(
        learned_policy,
        uses_model=True,
        kind="policy",
        description="the network's move probabilities: its policy head (else softmax(-Q / T), else "
        "of its values of the children) (for pbeam)",
        options=("policy_temperature", "precision"),
    ),
    "wcd": HeuristicSpec(
        learned_wcd,
        uses_model=True,
        description="weighted convolutional distance of the network (Yao and Lee 2024): --wcd-depth, "
        "--wcd-mu; the policy from its Q head",
        options=("wcd_depth", "wcd_mu", "policy_temperature", "precision"),
    ),
    "cube3-view": HeuristicSpec(
        cube3_view_heuristic,
        uses_model=True,
        default_model="cube3",
        description="the competition's 3x3x3 (cube_3-3-3): cube3's network on each state turned so "
        "that its centres are home, plus 3 moves a quarter turn of the whole cube (--model: a cube3 model)",
        options=("precision",),
        threaded=True,
    ),
    "cube3-view-q": HeuristicSpec(
        cube3_view_q_function,
        uses_model=True,
        default_model="cube3",
        kind="q",
        description="cube3-view as a Q function (for qbeam): cube3's Q head for the face turns, its "
        "value of the child for the middle-slice turns",
        options=("precision",),
        threaded=True,
    ),
    "pdb": HeuristicSpec(
        "puzzlezero.classic.optimal:pdb_heuristic", description="pattern databases (admissible)"
    ),
    "manhattan": HeuristicSpec(
        "puzzlezero.puzzles.npuzzle.linear_conflict:linear_conflict_heuristic",
        description="sliding puzzles: Manhattan distance plus linear conflicts (admissible, no network)",
        # as an ensemble's member (heuristic:manhattan): a beam 8 times wider, about the network
        # member's time on the 48-puzzle (a beam under the network generates a tenth as many nodes a second)
        member_width=8,
    ),
    "misplaced": HeuristicSpec(
        misplaced_heuristic,
        description="cells (stickers, tiles) of the goal not yet right: cheap, inadmissible, any goal",
        uses_goal=True,
    ),
}
for _name, _spec in _BUILTINS.items():
    register_heuristic(_name, _spec)
del _name, _spec

#: names that stand for one network read as each kind of search needs it: Q* reads the Q head
BY_KIND: dict[str, dict[str, str]] = {
    "learned": {
        "value": "learned",
        "q": "learned-q",
        "policy_value": "learned-pv",
        "policy": "learned-policy",
    },
    "learned-onnx": {"value": "learned-onnx", "q": "learned-onnx-q"},
    "cube3-view": {"value": "cube3-view", "q": "cube3-view-q"},
}
#: the heuristic a search of each kind gets for ``"learned"`` (the default)
LEARNED_BY_KIND = BY_KIND["learned"]


@lru_cache(maxsize=8)
def get_heuristic(
    puzzle: Puzzle,
    name: str,
    model: str | None = None,
    kind: Kind = "value",
    goal: str = SOLVED,
    options: tuple[tuple[str, Any], ...] = (),
) -> Heuristic:
    """The heuristic ``name`` for ``puzzle`` (a :data:`HEURISTICS` name or ``"module:factory"``),
    built once per process (a network is loaded once), as a search of ``kind`` calls it: a value
    heuristic asked for as a Q function becomes ``Q(s, a) = cost + h(A(s, a))``
    (:func:`~puzzlezero.search.qstar.q_from_value`); a Q function asked for as a value heuristic
    becomes ``min_a Q(s, a)``, 0 at goals; either asked for as a policy-value function (MCTS)
    gets a policy ``softmax(-Q / T)`` or ``softmax(-(cost + h(child)) / T)``
    (:mod:`puzzlezero.search.policy`). ``options``: :data:`OPTIONS` values, ``(name, value)``
    pairs; the factory gets those its :class:`HeuristicSpec` names. ``goal``: the goal searched
    for; heuristics that know goals (``uses_goal``: the learned ones, ``misplaced``) estimate the
    cost to it."""
    if name in HEURISTICS or ":" not in name:
        spec = lookup(HEURISTICS, name, "heuristic")
    else:
        spec = HeuristicSpec(name)  # "module:factory", called as factory(puzzle)
    factory = resolve_entry(spec.entry, f"heuristic {name!r}")
    given = dict(options)
    kw = {n: given.get(n, OPTIONS[n].default) for n in spec.options}
    if spec.uses_goal and goal != SOLVED:
        kw["goal"] = goal
    if spec.uses_model and model is None:
        model = spec.default_model
    fn = factory(puzzle, model, **kw) if spec.uses_model else factory(puzzle, **kw)
    if spec.kind == kind:
        return fn
    goal_test = puzzle.goal_test(goal)
    if spec.kind == "policy":
        raise PuzzleError(
            f"heuristic {name!r} gives move probabilities, which only a search over a policy (pbeam) "
            "can use; this search needs cost-to-go estimates"
        )
    if spec.kind == "policy_value":  # read as a value heuristic (then, if asked, as a Q function)
        pv = fn

        def fn(states: np.ndarray) -> np.ndarray:
            return np.asarray(pv(states)[0], dtype=np.float32)

        if kind == "value":
            return fn
    if kind in ("policy_value", "policy"):
        from puzzlezero.search import policy

        if spec.kind != "policy_value":
            temperature = given.get("policy_temperature", OPTIONS["policy_temperature"].default)
            if spec.kind == "q":
                pv = policy.policy_value_from_q(puzzle, fn, temperature)
            else:
                pv = policy.policy_value_from_heuristic(puzzle, fn, temperature)
        return pv if kind == "policy_value" else policy.policy_of(pv)
    if kind == "q":
        from puzzlezero.search.qstar import q_from_value

        return q_from_value(puzzle, fn, goal_test)

    def value_from_q(states: np.ndarray) -> np.ndarray:
        values = np.maximum(np.asarray(fn(states), dtype=np.float32).min(axis=1), 0.0)
        values[goal_test(states)] = 0.0
        return values

    return value_from_q


def stage_heuristics(
    puzzle: Puzzle, name: str, model: str | None, kind: Kind = "value"
) -> dict[str, Heuristic]:
    """One heuristic per goal of a layered solve, in solving order (``puzzle.goal_predicates()``):
    heuristic ``name`` with each goal's model (:func:`stage_models`) where it uses models."""
    goals = tuple(puzzle.goal_predicates())
    spec = HEURISTICS.get(name)
    if spec is not None and spec.uses_model:
        models: dict[str, str | None] = dict(stage_models(puzzle, model, goals))
    else:
        models = dict.fromkeys(goals, model)
    return {g: get_heuristic(puzzle, name, models[g], kind, g) for g in goals}
