"""The network heuristics (``learned_*``: a model folder's network, loaded once per process and
run on onnxruntime without torch, :mod:`puzzlezero.nn.runtime`) and the models of a layered solve,
one per goal (:func:`stage_models`).

``precision`` (the heuristic option of that name): ``"auto"`` (int8 on a CPU with int8 dot
products, VNNI or AMX; float32 elsewhere), ``"float32"`` or ``"int8"``. A network of an
architecture the ONNX graph builder does not cover runs on torch, which it then needs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver.names import Heuristic


def _load_net(puzzle: Puzzle, model: str | None, precision: str) -> Any:
    from puzzlezero.nn.runtime import load_network

    try:
        definition = getattr(puzzle, "definition", None)
        if definition is not None:  # a permutation puzzle: the model must be of its definition
            from puzzlezero.model_folders import resolve_model_dir
            from puzzlezero.puzzles.permutation.definition import check_model_definition

            check_model_definition(resolve_model_dir(model or puzzle.name), definition)
        net = load_network(model or puzzle.name, precision=precision)
    except ModelFileError as exc:
        if model is not None:
            raise
        other = (
            "solve with the group solver (`solve --search group`), which answers any state of a "
            "permutation puzzle"
            if hasattr(puzzle, "move_permutations")
            else "use the pdb heuristic or the optimal search"
        )
        what = "its definition file" if getattr(puzzle, "from_file", False) else puzzle.name
        raise ModelFileError(
            f"{exc}. The learned heuristic needs a model: name a model or model folder (`model`, "
            f"--model on the command line), train one with `puzzlezero train {what}`, or {other}"
        ) from None
    return net


def learned_heuristic(
    puzzle: Puzzle, model: str | None, *, precision: str = "auto", goal: str | None = None
) -> Heuristic:
    """The network heuristic: ``nn.make_heuristic(puzzle, nn.load_network(model or puzzle.name))``
    in ``precision`` (``"auto"``: int8 where the CPU has VNNI, about 2x faster, errors of a few
    hundredths of a move; ``"learned-fp32"`` is the float32 one); ``goal``: the cost-to-go to that
    goal (the model must have been trained for it: one head, or one of a multi-head network's)."""
    from puzzlezero.nn.heuristic import make_heuristic

    return make_heuristic(puzzle, _value_net(puzzle, model, precision), goal=goal)


def _value_net(puzzle: Puzzle, model: str | None, precision: str) -> Any:
    """:func:`_load_net`, refusing a network whose card says its last training taught the policy
    only (``policy_only``: ``objective=efficientcube``, the value head never learned), with what to
    search it with."""
    net = _load_net(puzzle, model, precision)
    if net.card.get("policy_only"):  # written by the trainer
        objective = (net.card.get("train_config") or {}).get("objective", "?")
        raise ModelFileError(
            f"this model was trained with objective={objective}: it has a policy but no value, "
            "so search it with its policy beam (--search pbeam)"
        )
    return net


def learned_q_function(
    puzzle: Puzzle, model: str | None, *, precision: str = "auto", goal: str | None = None
) -> Heuristic:
    """The network's Q head as a Q function: ``nn.make_q_function``; ``goal`` must be the one the
    network was trained for (a Q head learns the cost to one goal)."""
    from puzzlezero.nn.heuristic import goal_column, make_q_function

    net = _value_net(puzzle, model, precision)
    goal_column(puzzle, net, goal)  # another goal: ModelFileError naming the network's
    return make_q_function(puzzle, net)


def learned_policy_value(
    puzzle: Puzzle, model: str | None, *, precision: str = "auto", policy_temperature: float = 1.0
) -> Any:
    """The network as a policy-value function for MCTS: its value head and a policy from its policy
    head, else its Q head, else its value head on the children (``nn.make_policy_value``). A
    policy-only model is refused: MCTS backs up its values."""
    from puzzlezero.nn.heuristic import make_policy_value

    net = _value_net(puzzle, model, precision)
    return make_policy_value(puzzle, net, temperature=policy_temperature)


def learned_policy(
    puzzle: Puzzle, model: str | None, *, precision: str = "auto", policy_temperature: float = 1.0
) -> Heuristic:
    """The network's move probabilities, as :func:`learned_policy_value` reads them, from any
    model, policy-only ones included: ``states[B] -> float32[B, A]``."""
    from puzzlezero.nn.heuristic import make_policy_value
    from puzzlezero.search.policy import policy_of

    net = _load_net(puzzle, model, precision)
    return policy_of(make_policy_value(puzzle, net, temperature=policy_temperature))


def learned_wcd(
    puzzle: Puzzle,
    model: str | None,
    *,
    precision: str = "auto",
    wcd_depth: int = 1,
    wcd_mu: float = 0.5,
    policy_temperature: float = 1.0,
) -> Heuristic:
    """The network's weighted convolutional distance (:func:`puzzlezero.search.wcd.wcd`): ``d0``
    its value head, the policy its policy or Q head (else from the children's values)."""
    from puzzlezero.nn.heuristic import make_heuristic, make_policy
    from puzzlezero.search.wcd import wcd

    net = _value_net(puzzle, model, precision)
    value = make_heuristic(puzzle, net)
    policy = make_policy(puzzle, net, temperature=policy_temperature)
    return wcd(puzzle, value, depth=wcd_depth, mu=wcd_mu, policy=policy, temperature=policy_temperature)


def learned_heuristic_fp32(puzzle: Puzzle, model: str | None, *, goal: str | None = None) -> Heuristic:
    """The network heuristic evaluated in float32 (slower, faithful to the stored weights)."""
    return learned_heuristic(puzzle, model, precision="float32", goal=goal)


def cube3_view_heuristic(puzzle: Puzzle, model: str | None, *, precision: str = "auto") -> Heuristic:
    """cube3's network (``model``: a cube3 model; by default the shipped ``cube3``) as the heuristic
    of the competition's 3x3x3 (``cube_3-3-3``): each state read as a cube3 state in the frame that
    puts its centres home (:class:`~puzzlezero.puzzles.cube.frames.Cube3View`), plus the moves that
    turn the whole cube back from that frame (3 a quarter turn); 0 at the goal. cube3 counts face
    quarter turns, and a middle-slice turn is two of them in cube3's frame, so it overestimates
    where slices help; it ranks states well enough for a beam."""
    from puzzlezero.nn.heuristic import make_heuristic
    from puzzlezero.puzzles.cube.frames import Cube3View
    from puzzlezero.registry import make

    view = Cube3View(puzzle)
    cube3 = make("cube3")
    value = make_heuristic(cube3, _value_net(cube3, model, precision))

    def h(states: Any) -> Any:
        read, frame = view.cube3(states)
        return value(read) + view.rotation_moves[frame]

    return h


def cube3_view_q_function(puzzle: Puzzle, model: str | None, *, precision: str = "auto") -> Heuristic:
    """:func:`cube3_view_heuristic` as a Q function (``float32[B, A]``, for the Q-beam): a face
    turn's entry is cube3's Q head at that turn in the state's frame (one network row per state for
    twelve moves), a middle-slice turn's is 1 plus the heuristic of its child (six rows), so a
    state costs 7 network rows where the value heuristic on its children costs 18."""
    import numpy as np

    from puzzlezero.nn.heuristic import make_heuristic, make_q_function
    from puzzlezero.puzzles.cube.frames import Cube3View
    from puzzlezero.registry import make

    view = Cube3View(puzzle)
    cube3 = make("cube3")
    net = _value_net(cube3, model, precision)
    value, q3 = make_heuristic(cube3, net), make_q_function(cube3, net)
    perms = view.moves
    slices = np.flatnonzero((view.face_turns < 0).all(axis=0))
    costs = np.asarray(puzzle.action_costs, dtype=np.float32)

    def q(states: Any) -> Any:
        states = np.asarray(states).reshape(len(states), -1)
        read, frame = view.cube3(states)
        turns = view.face_turns[frame]  # [B, A]: the cube3 turn of each move, -1 for a slice
        out = np.take_along_axis(q3(read), np.maximum(turns, 0), axis=1)
        out += view.rotation_moves[frame][:, None]
        children = np.take(states, perms[slices], axis=1).reshape(-1, states.shape[1])
        read, frame = view.cube3(children)
        after = (value(read) + view.rotation_moves[frame]).reshape(len(states), len(slices))
        out[:, slices] = costs[slices] + after
        return out

    return q


#: model folder) of this name, a multi-head model or one sub-folder per goal
LAYERED_MODEL = "{puzzle}-layered"
#: in a layered model folder: which model serves each goal (``{"layer1": "layer1", "solved": "cube3"}``)
STAGES_FILE = "stages.json"


def stage_models(puzzle: Puzzle, model: str | None, goals: Sequence[str]) -> dict[str, str]:
    """The model of each goal of a layered solve, from ``model``:

    * ``"layer1=DIR,layer2=DIR,solved=DIR"``: one model (folder or shipped name) per goal;
    * a model folder (or shipped name) with a ``config.json``: that model for every goal (a
      multi-head model with a head per goal);
    * a folder of sub-folders named after the goals (``DIR/layer1``, ``DIR/layer2``,
      ``DIR/solved``): each goal's own; or a folder with a ``stages.json`` naming each goal's model
      (a sub-folder, or any model name or folder: the shipped ``cube3-layered`` serves ``solved``
      with the shipped ``cube3``);
    * ``None``: the shipped ``<puzzle>-layered`` model, in either of the two forms above.

    A goal without a model raises :class:`ModelFileError` naming the ways to give one."""
    from pathlib import Path

    from puzzlezero.model_folders import resolve_model_dir
    from puzzlezero.nn.io import CONFIG

    if model is not None and "=" in model:
        out: dict[str, str] = {}
        for part in model.split(","):
            name, sep, where = part.partition("=")
            name, where = name.strip(), where.strip()
            if not sep or not name or not where:
                raise PuzzleError(f"--model: {part!r} is not GOAL=MODEL (e.g. layer1=runs/layer1-model)")
            puzzle.goal_named(name)
            out[name] = where
        missing = [g for g in goals if g not in out]
        if missing:
            raise ModelFileError(
                f"--model names no model for {', '.join(missing)}; a layered solve of {puzzle.name} "
                f"needs one for each of {', '.join(goals)} (or one multi-head model)"
            )
        return {g: out[g] for g in goals}
    name = model if model is not None else LAYERED_MODEL.format(puzzle=puzzle.name)
    try:
        folder = resolve_model_dir(name)
    except ModelFileError as exc:
        raise ModelFileError(
            f"{exc}. A layered solve of {puzzle.name} needs a cost-to-go to each of "
            f"{', '.join(goals)}: --model {','.join(g + '=DIR' for g in goals)} (train each with "
            f"`puzzlezero train {puzzle.name} --set goal=NAME`), a multi-head model (--set "
            f"goals={','.join(goals)} --set objective=multigoal), a folder of one sub-folder per "
            f"goal, or --heuristic misplaced to try it without models"
        ) from None
    if (folder / CONFIG).is_file():
        return {g: str(folder) for g in goals}
    if (folder / STAGES_FILE).is_file():
        return _stages_file(folder / STAGES_FILE, goals)
    per_goal = {g: Path(folder) / g for g in goals}
    missing = [g for g, sub in per_goal.items() if not (sub / CONFIG).is_file()]
    if missing:
        raise ModelFileError(
            f"{folder}: neither a model folder nor one sub-folder per goal (no model in "
            f"{', '.join(str(per_goal[g]) for g in missing)})"
        )
    return {g: str(sub) for g, sub in per_goal.items()}


def _stages_file(path: Any, goals: Sequence[str]) -> dict[str, str]:
    """A layered model folder's ``stages.json``: ``{goal: model}``, each model a sub-folder of that
    folder or any model name or folder (so that a shipped solved model serves without a copy)."""
    import json

    from puzzlezero.model_folders import resolve_model_dir

    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad UTF-8, JSON or numbers
        raise ModelFileError(f"{path}: not readable as JSON ({exc})") from None
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise ModelFileError(f'{path}: expected {{"GOAL": "MODEL", ...}}')
    missing = [g for g in goals if g not in table]
    if missing:
        raise ModelFileError(f"{path}: no model for {', '.join(missing)}")
    out = {}
    for g in goals:
        local = path.parent / table[g]
        out[g] = str(local) if local.is_dir() else str(resolve_model_dir(table[g]))
    return out
