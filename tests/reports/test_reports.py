"""The reports package: ``puzzlezero report NAME`` runs each report; the solve-rate report (seed
004's plot) on cube2 with small untrained networks, whose figures can be checked by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.nn import NetConfig, build_model, save_model
from puzzlezero.puzzles import inputs
from puzzlezero.reports import REPORTS
from puzzlezero.reports.solve_rate import policy_greedy, solve_rate_by_depth, starts

CUBE2 = make("cube2")


def tiny(tmp_path, name: str, puzzle: str = "cube2", **heads) -> str:  # noqa: ANN001
    """An untrained network whose value head says 5 moves everywhere but at goals."""
    p = make(puzzle)
    cfg = NetConfig(
        input_dim=inputs.dim(p), h1=32, h2=16, num_res_blocks=1, num_actions=p.num_actions, **heads
    )
    net = build_model(cfg, seed=0).eval()
    with torch.no_grad():
        net.value.weight.zero_()
        net.value.bias.fill_(5.0)
    folder = tmp_path / name
    save_model(folder, net, puzzle=puzzle)
    return str(folder)


def test_every_report_is_a_command_and_a_module():
    import importlib

    for name, module in REPORTS.items():
        importlib.import_module(module)
        assert main(["report", name, "--help"]) == 0


def test_scrambles_are_non_goal_walks_of_the_depth():
    rng = np.random.default_rng(0)
    s = starts(CUBE2, rng, 50, 1)
    assert s.shape == (50, *CUBE2.state_shape) and not CUBE2.is_goal(s).any()
    # one move from the goal: some move solves each
    kids = np.stack([CUBE2.apply(s, np.full(len(s), a)) for a in range(CUBE2.num_actions)])
    assert (
        CUBE2.is_goal(kids.reshape(-1, *CUBE2.state_shape)).reshape(CUBE2.num_actions, -1).any(axis=0).all()
    )


def test_policy_greedy_plays_the_favourite_move_and_counts_it():
    rng = np.random.default_rng(1)
    s = starts(CUBE2, rng, 20, 1)

    def oracle(states: np.ndarray) -> np.ndarray:  # the move that solves a one-move scramble
        probs = np.zeros((len(states), CUBE2.num_actions), np.float32)
        for a in range(CUBE2.num_actions):
            probs[CUBE2.is_goal(CUBE2.apply(states, np.full(len(states), a))), a] = 1
        return probs

    solved, length = policy_greedy(CUBE2, oracle, s, 5)
    assert solved.all() and (length == 1).all()
    never = lambda states: np.eye(CUBE2.num_actions, dtype=np.float32)[np.zeros(len(states), int)]  # noqa: E731
    solved, length = policy_greedy(CUBE2, never, s, 2)  # move 0 twice: a half turn never undoes a quarter
    first = CUBE2.is_goal(CUBE2.apply(s, np.zeros(len(s), int)))
    assert (solved == first).all() and (length[~solved] == 2).all() and (length[solved] == 1).all()


def test_solve_rate_report_on_cube2(tmp_path):
    pv = tiny(tmp_path, "pv", policy_head=True)
    v = tiny(tmp_path, "v")
    report = solve_rate_by_depth([pv, v], [1, 2], cubes=12, mcts_nodes=2000, seed=3)
    assert report["models"] == [pv, v] and report["depths"] == [1, 2] and report["cubes"] == 12
    for m in (pv, v):
        one = report["rows"][m]["1"]
        assert one["mcts_solved"] == 1.0 and one["mcts_length"] == 1.0  # the root's children hold the goal
        assert one["mcts_nodes"] == 1 + CUBE2.num_actions
    # the value network's greedy move is one step of look-ahead: the goal child (0) beats 1 + 5
    assert report["rows"][v]["1"]["greedy_solved"] == 1.0 and report["rows"][v]["1"]["greedy_length"] == 1.0
    assert 0 <= report["rows"][pv]["2"]["greedy_solved"] <= 1


def test_solve_rate_command_writes_the_table_json_and_plot(tmp_path, capsys):
    v = tiny(tmp_path, "v")
    out = tmp_path / "rate"
    assert (
        main(
            [
                "report",
                "solve-rate",
                "--models",
                v,
                "--depths",
                "1:2",
                "--n",
                "4",
                "--mcts-nodes",
                "500",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "| 1 | 100% | 100%" in capsys.readouterr().out
    data = json.loads(out.with_suffix(".json").read_text())
    assert set(data["rows"][v]) == {"1", "2"}
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_solve_rate_refuses_bad_input(tmp_path, capsys):
    with pytest.raises(PuzzleError, match="different puzzles"):
        solve_rate_by_depth([tiny(tmp_path, "a"), tiny(tmp_path, "b", puzzle="puzzle8")], [1], cubes=2)
    assert main(["report", "solve-rate", "--depths", "one:two"]) == 2
    assert "--depths" in capsys.readouterr().err


def test_wcd_table1_rows_and_the_seeds_figures(tmp_path, capsys):
    from puzzlezero.reports.wcd_table1 import SEED, distinct_scrambles

    states, depths = distinct_scrambles(make("cube3"), np.random.default_rng(0), 6, 2, 3)
    assert len({s.tobytes() for s in states}) == 6 and set(depths) <= {2, 3}
    out = tmp_path / "wcd"
    argv = [
        "report",
        "wcd",
        "--n",
        "3",
        "--min-depth",
        "2",
        "--max-depth",
        "3",
        "--levels",
        "0,1",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    table = capsys.readouterr().out
    rows = json.loads(out.with_suffix(".json").read_text())["rows"]
    assert [r["level"] for r in rows] == [0, 1] and all(r["solved"] == 3 for r in rows)
    assert all(r["mean_length"] <= 3 for r in rows)  # A* with lambda 1 on 2-3 move scrambles
    assert f"| {SEED[1][0]} | {SEED[1][1]} | {SEED[1][2]} |" in table
    assert main(["report", "wcd", "--levels", "a,b"]) == 2


def test_solve_rate_adds_a_model_to_an_earlier_report_on_the_same_cubes(tmp_path):
    v, pv = tiny(tmp_path, "v"), tiny(tmp_path, "pv", policy_head=True)
    both = solve_rate_by_depth([v, pv], [2, 3], cubes=6, mcts_nodes=300, seed=4)
    first = solve_rate_by_depth([v], [2, 3], cubes=6, mcts_nodes=300, seed=4)
    added = solve_rate_by_depth([pv], [2, 3], cubes=6, mcts_nodes=300, seed=4, add_to=first)
    assert added["models"] == [v, pv]
    strip = lambda rows: {d: {k: x for k, x in r.items() if k != "mcts_seconds"} for d, r in rows.items()}  # noqa: E731
    for m in (v, pv):
        assert strip(added["rows"][m]) == strip(both["rows"][m])
    with pytest.raises(PuzzleError, match="mcts_nodes"):
        solve_rate_by_depth([pv], [2, 3], cubes=6, mcts_nodes=400, seed=4, add_to=first)
    with pytest.raises(PuzzleError, match="already"):
        solve_rate_by_depth([v], [2, 3], cubes=6, mcts_nodes=300, seed=4, add_to=first)


def test_solve_rate_with_nothing_solved(tmp_path):
    v = tiny(tmp_path, "v")
    report = solve_rate_by_depth([v], [6], cubes=3, greedy_moves=1, mcts_nodes=13, seed=0)
    r = report["rows"][v]["6"]
    assert r["mcts_solved"] == 0.0 and r["mcts_length"] is None and r["greedy_solved"] == 0.0


def test_layered_table1_solves_every_row_on_the_same_cubes_and_adds_rows(tmp_path):
    from puzzlezero.reports.layered_table1 import SEED, layered_table1, markdown, random_cubes

    multi = tiny(tmp_path, "multi", puzzle="cube3", goals=("layer1", "layer2", "solved"))
    solved = tiny(tmp_path, "solved", puzzle="cube3")
    kw = {
        "n": 4,
        "depth": 2,
        "seed": 5,
        "settings": [(0.2, 100)],
        "layer_nodes": 20_000,
        "whole_nodes": 20_000,
    }
    report = layered_table1([("MultiH Baseline", multi), ("DeepCubeA Baseline", solved)], **kw)
    layered, whole = report["rows"]
    assert (layered["search"], whole["search"]) == ("layered", "bwas")
    assert layered["solved"] == whole["solved"] == 4 and layered["n"] == 4  # 2-move cubes: all solved
    assert whole["mean_length"] <= 2 and layered["mean_length"] >= whole["mean_length"]
    stages = layered["stage_mean_lengths"]
    assert list(stages) == ["layer1", "layer2", "solved"]
    assert sum(stages.values()) == pytest.approx(layered["mean_length"])
    assert report["settings"]["cubes_sha256"] and random_cubes(4, 2, 5).shape == (4, 54)
    text = markdown(report)
    seed_baseline = SEED[("MultiH Baseline", 0.2, 100)]
    assert "MultiH Baseline | 4/4 (100%)" in text and f"{seed_baseline[2]:,}" in text

    # a second run adds a setting to the same cubes; other cubes or limits are refused
    more = layered_table1(
        [("DeepCubeA Baseline", solved)], **{**kw, "settings": [(0.6, 1000)]}, add_to=report
    )
    assert [(r["model"], r["lambda"]) for r in more["rows"]] == [
        ("MultiH Baseline", 0.2), ("DeepCubeA Baseline", 0.2), ("DeepCubeA Baseline", 0.6)
    ]  # fmt: skip
    assert more["settings"]["settings"] == [[0.2, 100], [0.6, 1000]]
    with pytest.raises(PuzzleError, match="other cubes_sha256, seed"):
        layered_table1([("DeepCubeA Baseline", solved)], **{**kw, "seed": 6}, add_to=report)


def test_layered_report_command_names_bad_rows_and_settings(capsys):
    assert main(["report", "layered", "--row", "SingleH"]) == 2
    assert "is not LABEL=MODEL" in capsys.readouterr().err
    assert main(["report", "layered", "--settings", "0.2-100"]) == 2
    assert "LAMBDA:B pairs" in capsys.readouterr().err
