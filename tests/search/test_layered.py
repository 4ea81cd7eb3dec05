"""Layer-by-layer solving (Dong, Hao and Nakayama): the layered search, its solver entry (registered by name),
the per-goal models, the stage checks by replay, and the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn.config import NetConfig
from puzzlezero.nn.io import save_model
from puzzlezero.nn.models import build_model
from puzzlezero.search.layered import layered
from puzzlezero.search.result import SearchResult, StageResult
from puzzlezero.solver import SEARCHES, solve, solve_many, stage_models
from puzzlezero.solver.result import _stages_ok

CUBE_SCRAMBLES = ["R U F'", "L' B D2", "F R' U'", "D R", "U"]


def misplaced_per_goal(puzzle):
    from puzzlezero.solver import misplaced_heuristic

    return {g: misplaced_heuristic(puzzle, goal=g) for g in puzzle.goal_predicates()}


def assert_stages_meet_their_goals(puzzle, start, result):
    state = start
    for st in result.stages:
        state = puzzle.apply_moves(state, st.actions)
        assert puzzle.goal_named(st.goal)(state[None])[0], st.goal
    assert [a for st in result.stages for a in st.actions] == list(result.actions)


@pytest.mark.parametrize("text", CUBE_SCRAMBLES)
def test_layered_bwas_on_short_cube_scrambles_meets_each_goal_in_turn(text):
    cube = make("cube3")
    start = cube.parse(text)
    (r,) = layered(cube, start, misplaced_per_goal(cube), weight=1.0, batch_size=50, max_nodes=300_000)
    assert r.solved and [st.goal for st in r.stages] == ["layer1", "layer2", "solved"]
    assert_stages_meet_their_goals(cube, start, r)
    assert cube.is_goal(cube.apply_moves(start, r.actions)[None])[0]
    assert r.nodes_generated == sum(st.nodes_generated for st in r.stages)


def test_a_stage_whose_goal_already_holds_costs_nothing_and_instances_stay_independent():
    cube = make("cube3")
    starts = np.stack([cube.parse(t) for t in ("D", "R", "D R")])
    h = misplaced_per_goal(cube)
    together = layered(cube, starts, h, weight=1.0, batch_size=20)
    alone = [layered(cube, s, h, weight=1.0, batch_size=20)[0] for s in starts]
    assert [r.actions for r in together] == [r.actions for r in alone]
    d = together[0]  # D: layer1 and layer2 hold, only the last stage moves
    assert [len(st.actions) for st in d.stages] == [0, 0, 1] and d.stages[0].nodes_generated == 1
    assert [cube.action_names[a] for a in together[2].actions] == ["R'", "D'"]  # layer1 first


def test_a_failing_stage_ends_the_instance_with_its_status():
    cube = make("cube3")
    start = cube.parse("R U F' L' B D2")
    (r,) = layered(cube, start, misplaced_per_goal(cube), weight=1.0, batch_size=10, max_nodes=200)
    assert not r.solved and r.status == "node limit" and r.actions == ()
    assert r.stages[-1].status == "node limit" and len(r.stages) < 3


def test_layered_works_for_any_puzzle_with_sub_goals():
    p = make("puzzle8")
    start = p.scramble(np.random.default_rng(2), 1, 30)[0]
    (r,) = layered(p, start, misplaced_per_goal(p), weight=1.0, batch_size=10)
    assert r.solved and [st.goal for st in r.stages] == ["row1", "solved"]
    assert_stages_meet_their_goals(p, start, r)


def test_layered_arguments_are_checked():
    cube = make("cube3")
    h = misplaced_per_goal(cube)
    with pytest.raises(PuzzleError, match="no heuristic for the goal"):
        layered(cube, cube.goals(1), {"layer1": h["layer1"]})
    with pytest.raises(PuzzleError, match="unknown goal 'cross'"):
        layered(cube, cube.goals(1), h, goals=["cross"])
    one = h["solved"]  # one heuristic for every stage is allowed
    (r,) = layered(cube, cube.parse("U")[None], one, weight=1.0, batch_size=10)
    assert r.solved and len(r.actions) == 1


# ---- the solver ------------------------------------------------------------------------------------------
def test_layered_is_registered_by_name_and_the_solver_reports_every_stage():
    assert SEARCHES["layered"].per_goal
    r = solve("cube3", "R U F'", search="layered", heuristic="misplaced", weight=1.0, batch=50)
    out = r.to_json()
    assert out["solved"] and out["search"] == "layered"
    assert [st["goal"] for st in out["stages"]] == ["layer1", "layer2", "solved"]
    assert sum((st["solution"] for st in out["stages"]), []) == out["solution"]
    assert all(st["status"] == "solved" and st["length"] == len(st["solution"]) for st in out["stages"])
    many = solve_many(
        "puzzle8", ["1 2 3 4 5 6 0 7 8", "4 1 3 7 2 5 0 8 6"], search="layered", heuristic="misplaced"
    )
    assert all(m.solved and [st["goal"] for st in m.stages] == ["row1", "solved"] for m in many)


def test_the_solver_replays_every_stage_against_its_goal():
    cube = make("cube3")
    start = cube.parse("D R")
    r_prime, d_prime = cube.parse_moves("R'"), cube.parse_moves("D'")
    good = SearchResult(
        True,
        (*r_prime, *d_prime),
        3,
        2,
        0.0,
        "solved",
        stages=(
            StageResult("layer1", tuple(r_prime), 1, 0.0, "solved"),
            StageResult("layer2", (), 1, 0.0, "solved"),
            StageResult("solved", tuple(d_prime), 1, 0.0, "solved"),
        ),
    )
    assert _stages_ok(cube, start, good)
    # the same moves, but claimed as D' first: after D' alone layer1 does not hold
    swapped = SearchResult(
        True,
        (*d_prime, *r_prime),
        3,
        2,
        0.0,
        "solved",
        stages=(
            StageResult("layer1", tuple(d_prime), 1, 0.0, "solved"),
            StageResult("layer2", (), 1, 0.0, "solved"),
            StageResult("solved", tuple(r_prime), 1, 0.0, "solved"),
        ),
    )
    assert not _stages_ok(cube, start, swapped)


def test_stage_models_by_goal_by_folder_and_by_multi_head_model(tmp_path):
    cube = make("cube3")
    goals = tuple(cube.goal_predicates())
    assert stage_models(cube, "layer1=a, layer2=b,solved=cube3", goals) == {
        "layer1": "a",
        "layer2": "b",
        "solved": "cube3",
    }
    with pytest.raises(ModelFileError, match="no model for layer2"):
        stage_models(cube, "layer1=a,solved=c", goals)
    with pytest.raises(PuzzleError, match="is not GOAL=MODEL"):
        stage_models(cube, "layer1=a,layer2", goals)
    tiny = NetConfig(input_dim=324, h1=16, h2=8, num_res_blocks=1)
    for goal in goals:
        save_model(
            tmp_path / "per_goal" / goal,
            build_model(NetConfig(**{**tiny.to_dict(), "goals": (goal,)})),
            puzzle="cube3",
        )
    assert stage_models(cube, str(tmp_path / "per_goal"), goals) == {
        g: str(tmp_path / "per_goal" / g) for g in goals
    }
    multi = NetConfig(**{**tiny.to_dict(), "goals": goals, "head_layers": 1})
    save_model(tmp_path / "multi", build_model(multi), puzzle="cube3")
    assert set(stage_models(cube, str(tmp_path / "multi"), goals).values()) == {str(tmp_path / "multi")}
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelFileError, match="neither a model folder nor one sub-folder per goal"):
        stage_models(cube, str(tmp_path / "empty"), goals)
    # stages.json: sub-folders, or any model name or folder (the shipped cube3 serves "solved")
    (tmp_path / "per_goal" / "stages.json").write_text(
        json.dumps({"layer1": "layer1", "layer2": str(tmp_path / "multi"), "solved": "cube3"})
    )
    named = stage_models(cube, str(tmp_path / "per_goal"), goals)
    assert named["layer1"] == str(tmp_path / "per_goal" / "layer1")
    assert named["layer2"] == str(tmp_path / "multi") and named["solved"].endswith("models/cube3")
    (tmp_path / "empty" / "stages.json").write_text(json.dumps({"layer1": "layer1"}))
    with pytest.raises(ModelFileError, match="stages.json: no model for layer2, solved"):
        stage_models(cube, str(tmp_path / "empty"), goals)
    (tmp_path / "empty" / "stages.json").write_text("[1]")
    with pytest.raises(ModelFileError, match='expected {"GOAL": "MODEL", ...}'):
        stage_models(cube, str(tmp_path / "empty"), goals)


@pytest.mark.parametrize("layout", ["multi", "per_goal"])
def test_layered_solving_with_learned_models_of_each_goal(tmp_path, layout):
    """Untrained tiny networks: the point is the plumbing (each stage reads its own goal's
    network and is searched to its own goal), not the heuristic's quality."""
    cube = make("cube3")
    goals = tuple(cube.goal_predicates())
    tiny = NetConfig(input_dim=324, h1=16, h2=8, num_res_blocks=1)
    if layout == "multi":
        save_model(
            tmp_path / "m",
            build_model(NetConfig(**{**tiny.to_dict(), "goals": goals}), seed=0),
            puzzle="cube3",
        )
        model = str(tmp_path / "m")
    else:
        for g in goals:
            save_model(
                tmp_path / g,
                build_model(NetConfig(**{**tiny.to_dict(), "goals": (g,)}), seed=1),
                puzzle="cube3",
            )
        model = ",".join(f"{g}={tmp_path / g}" for g in goals)
    r = solve("cube3", "R U", search="layered", model=model, heuristic="learned-fp32", weight=1.0, batch=100)
    assert r.solved and [st["goal"] for st in r.stages] == list(goals)
    assert cube.is_goal(cube.apply_moves(cube.parse("R U"), r.actions)[None])[0]


# ---- the command line ------------------------------------------------------------------------------------
def test_cli_solve_layered_json_and_text(capsys):
    argv = ["solve", "cube3", "L' B D2", "--search", "layered", "--heuristic", "misplaced", "--weight", "1"]
    assert main([*argv, "--batch", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [st["goal"] for st in out["stages"]] == ["layer1", "layer2", "solved"]
    assert sum((st["solution"] for st in out["stages"]), []) == out["solution"]
    assert main([*argv, "--batch", "50"]) == 0
    text = capsys.readouterr().out
    assert "layer1" in text and "layer2" in text and "solution:" in text
    assert main(["solve", "cube3", "R U", "--search", "layered", "--model", "no-such-model"]) == 2
    assert (
        "layered solve of cube3 needs a cost-to-go to each of layer1, layer2, solved"
        in capsys.readouterr().err
    )


def test_bench_reports_the_stages_and_solves_to_a_goal(tmp_path, capsys):
    cases = {
        "puzzle": "cube3",
        "cases": [
            {"id": 0, "scramble": "R U F'", "optimal_length": 3},
            {"id": 1, "scramble": "D R", "optimal_length": 2},
        ],
    }
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    base = ["bench", "cube3", "--cases", str(tmp_path / "cases.json"), "--heuristic", "misplaced"]
    argv = [
        *base,
        "--search",
        "layered",
        "--weight",
        "1",
        "--batch",
        "50",
        "--out",
        str(tmp_path / "l.json"),
    ]
    assert main(argv) == 0
    report = json.loads((tmp_path / "l.json").read_text())
    s = report["summary"]
    assert s["search"] == "layered" and s["solved_pct"] == 100.0
    assert (s["weight"], s["batch"], s["max_nodes"]) == (1.0, 50, 5_000_000)  # per stage
    assert list(s["stage_mean_lengths"]) == ["layer1", "layer2", "solved"]
    case1 = report["results"][1]
    assert [st["solution"] for st in case1["stages"]] == [["R'"], [], ["D'"]]
    assert s["stage_mean_lengths"]["layer1"] == (len(report["results"][0]["stages"][0]["solution"]) + 1) / 2
    argv = [*base, "--search", "bwas", "--goal", "layer1", "--weight", "1", "--batch", "10"]
    assert main([*argv, "--out", str(tmp_path / "g.json")]) == 0
    report = json.loads((tmp_path / "g.json").read_text())
    assert report["summary"]["goal"] == "layer1" and report["summary"]["mean_optimal_length"] is None
    assert report["results"][1]["solution"] == ["R'"]  # layer1 only: D stays turned
    capsys.readouterr()


def test_layered_solving_defaults_to_the_seeds_settings_unless_named():
    from puzzlezero.solver import resolve_options

    cube = make("cube3")
    o = resolve_options(cube, search="layered", heuristic="misplaced")
    assert (o.weight, o.batch, o.max_nodes, o.time_limit) == (0.2, 100, 5_000_000, 120.0)
    o = resolve_options(cube, search="layered", heuristic="misplaced", weight=0.6, batch=1000, max_nodes=10)
    assert (o.weight, o.batch, o.max_nodes) == (0.6, 1000, 10)
    assert resolve_options(cube, search="bwas").weight == 0.3  # the puzzle's own for other searches


def test_the_shipped_layered_models_each_serve_their_goal_and_solve_a_scramble():
    from puzzlezero.nn import load_model

    cube = make("cube3")
    goals = tuple(cube.goal_predicates())
    models = stage_models(cube, None, goals)  # the shipped cube3-layered
    assert models["solved"].endswith("models/cube3")  # stages.json: no copy of the solved model
    for goal in ("layer1", "layer2"):
        assert models[goal].endswith(f"cube3-layered/{goal}")
        assert load_model(models[goal]).config.goals == (goal,)
    start = cube.apply_moves(cube.goal(), cube.parse_moves("R U F' L D2 B R'".split()))
    r = solve("cube3", start, search="layered")
    assert r.solved and [st["goal"] for st in r.stages] == list(goals)
    state = start
    for st in r.stages:  # each stage ends where its goal is met
        state = cube.apply_moves(state, cube.parse_moves(st["solution"]))
        assert cube.goal_named(st["goal"])(state[None])[0]
