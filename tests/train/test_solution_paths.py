"""Training states on the paths of solutions already found (``train.solution_paths``,
``TrainConfig.solution_paths``, ``puzzlezero solution-paths``)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import InvalidStateError, ModelFileError, PuzzleError
from puzzlezero.train import DAVITrainer, TrainConfig
from puzzlezero.train.objectives import LabelJob, make_labels
from puzzlezero.train.solution_paths import path_states, read_solution_paths, write_solution_paths
from tests.conftest import tiny_train_config

LEVEL = [  # one box, one push (R) from its target
    "##########",
    "#        #",
    "#  @$.   #",
    "#        #",
    "#        #",
    "#        #",
    "#        #",
    "#        #",
    "#        #",
    "##########",
]


def scrambled(p, moves):
    """A state ``moves`` away from the goal and the solution that undoes them."""
    start = p.apply_moves(p.goal(), moves)
    return start, [int(p.inverse_action[a]) for a in reversed(moves)]


def test_a_solution_gives_each_state_the_cost_of_its_rest():
    p = make("cube2")
    start, solution = scrambled(p, [0, 3, 6])
    states, costs = path_states(p, start, solution)
    assert states.shape == (3, *p.state_shape) and (states[0] == start).all()
    assert costs.tolist() == [3.0, 2.0, 1.0]  # every cube2 move costs 1
    for i in range(3):  # each state's rest replays to the goal
        assert p.is_goal(p.apply_moves(states[i], solution[i:])[None])[0]
    with pytest.raises(InvalidStateError, match="a solution of 2 moves does not reach the goal of cube2"):
        path_states(p, start, solution[:2])
    none, no_costs = path_states(p, p.goal(), [])  # already solved: no state before the goal
    assert none.shape == (0, *p.state_shape) and no_costs.shape == (0,)


def test_the_costs_are_the_moves_own(monkeypatch):
    p = make("cube2")
    start, solution = scrambled(p, [0, 3])
    costs = np.ones(p.num_actions)
    costs[solution[0]] = 2.5
    monkeypatch.setattr(type(p), "action_costs", property(lambda self: costs))
    assert path_states(p, start, solution)[1].tolist() == [3.5, 1.0]


def test_a_sokoban_level_and_its_file(tmp_path):
    p = make("sokoban")
    start = p.parse("\n".join(LEVEL))
    states, costs = path_states(p, start, p.parse_moves(["R"]))
    assert costs.tolist() == [1.0] and (states[0] == start).all()
    path = tmp_path / "paths.npz"
    write_solution_paths(path, p, states, costs)
    back, back_costs = read_solution_paths(p, path)
    assert (back == states).all() and back_costs.tolist() == [1.0]


def test_a_bad_file_is_refused_by_name(tmp_path):
    p, cube = make("sokoban"), make("cube2")
    start, solution = scrambled(cube, [1, 4])
    states, costs = path_states(cube, start, solution)
    write_solution_paths(tmp_path / "cube.npz", cube, states, costs)
    with pytest.raises(ModelFileError, match="holds 'cube2' solution paths, not 'sokoban'"):
        read_solution_paths(p, tmp_path / "cube.npz")
    with pytest.raises(ModelFileError, match="no such solution paths file"):
        read_solution_paths(p, tmp_path / "none.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ModelFileError, match="unreadable solution paths file"):
        read_solution_paths(p, tmp_path / "junk.npz")
    np.savez(tmp_path / "neg.npz", puzzle=np.array("cube2"), states=states, costs=-costs)
    with pytest.raises(ModelFileError, match="costs must be one finite positive number per state"):
        read_solution_paths(cube, tmp_path / "neg.npz")
    bad = states.copy()
    bad[0, :2] = bad[0, 0]  # a sticker colour twice where it belongs once: not a cube
    np.savez(tmp_path / "bad.npz", puzzle=np.array("cube2"), states=bad, costs=costs)
    with pytest.raises(ModelFileError, match="bad.npz: state 0: "):
        read_solution_paths(cube, tmp_path / "bad.npz")


def test_the_config_takes_the_file_and_its_share_together():
    with pytest.raises(PuzzleError, match="set both or neither"):
        TrainConfig(puzzle="cube2", path_share=0.2)
    with pytest.raises(PuzzleError, match="set both or neither"):
        TrainConfig(puzzle="cube2", solution_paths="p.npz")
    with pytest.raises(PuzzleError, match=r"need 0 <= path_share < 1, got 1.0"):
        TrainConfig(puzzle="cube2", solution_paths="p.npz", path_share=1.0)
    with pytest.raises(PuzzleError, match="'qlearning' is not one"):
        TrainConfig(puzzle="cube2", solution_paths="p.npz", path_share=0.2, objective="qlearning")
    assert (
        TrainConfig(puzzle="cube2", solution_paths="p.npz", path_share=0.2, objective="lhbl").path_share
        == 0.2
    )


@pytest.mark.parametrize("objective", ["davi", "lhbl"])
def test_a_chunk_gets_its_share_of_path_states_with_their_costs(tmp_path, objective):
    p = make("cube2")
    start, solution = scrambled(p, [0, 4, 8, 1, 5])
    states, costs = path_states(p, start, solution)
    write_solution_paths(tmp_path / "paths.npz", p, states, costs)
    plain = tiny_train_config(objective=objective, target_update="period")
    cfg = replace(plain, solution_paths=str(tmp_path / "paths.npz"), path_share=0.25)
    job = LabelJob(chunk=0, objective=objective, n=300, max_scramble=8, seed=(0, 0, 0), target_version=0)

    def value_fn(s):
        return np.zeros(len(s), dtype=np.float32)

    base_states, base_y = make_labels(p, job, value_fn, plain)
    with_states, with_y = make_labels(p, job, value_fn, cfg)
    n = len(base_states)
    assert len(with_states) == n + round(n / 3)  # a quarter of the rows in all
    assert (with_states[:n] == base_states).all() and (with_y[:n] == base_y).all()  # the objective's draws
    by_state = {s.tobytes(): c for s, c in zip(states, costs, strict=True)}
    assert [by_state[s.tobytes()] for s in with_states[n:]] == with_y[n:].tolist()
    warm = replace(job, objective="scramble_depth")  # a warm start's chunks are the warm start's own
    assert len(make_labels(p, warm, None, replace(cfg, warmup_objective="scramble_depth"))[0]) == 300


def test_a_run_trains_on_them_and_resumes(tmp_path):
    p = make("cube2")
    start, solution = scrambled(p, [0, 4, 8])
    write_solution_paths(tmp_path / "paths.npz", p, *path_states(p, start, solution))
    cfg = tiny_train_config(
        objective="lhbl",
        target_update="period",
        solution_paths=str(tmp_path / "paths.npz"),
        path_share=0.5,
        max_iterations=10,
    )
    DAVITrainer(cfg, tmp_path / "run").run()
    again = DAVITrainer(replace(cfg, max_iterations=20), tmp_path / "run", resume=True)
    again.run()
    assert again.counters.iteration == 20
    with pytest.raises(PuzzleError, match=r"changed settings \['path_share'\]"):
        DAVITrainer(replace(cfg, path_share=0.4, max_iterations=30), tmp_path / "run", resume=True)


def test_the_command_writes_the_states_of_a_reports_solutions(tmp_path, capsys):
    level = "; 0\n" + "\n".join(LEVEL) + "\n\n; 1\n" + "\n".join(LEVEL) + "\n"
    (tmp_path / "000.txt").write_text(level)
    report = {
        "summary": {"puzzle": "sokoban"},
        "results": [
            {"id": "000:0", "solved": True, "solution": ["R"]},
            {"id": "000:1", "solved": False, "solution": None},
            {"id": "001:0", "solved": True, "solution": ["L"]},  # another file's level
        ],
    }
    (tmp_path / "report.json").write_text(json.dumps(report))
    out = tmp_path / "paths.npz"
    args = ["solution-paths", "sokoban", "--cases", str(tmp_path / "000.txt")]
    args += ["--report", str(tmp_path / "report.json"), "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "1 solutions from" in printed and "(1 not solved there), 1 states" in printed
    states, costs = read_solution_paths(make("sokoban"), out)
    assert costs.tolist() == [1.0] and len(states) == 1
    assert main([*args, "--report", str(tmp_path / "report.json")]) == 2
    assert "give one --report per --cases (1 cases, 2 reports)" in capsys.readouterr().err
    report["results"][0]["solution"] = ["L"]  # does not solve the level
    (tmp_path / "report.json").write_text(json.dumps(report))
    assert main(args) == 2
    assert "does not reach the goal of sokoban" in capsys.readouterr().err
    report["summary"]["puzzle"] = "cube2"
    (tmp_path / "report.json").write_text(json.dumps(report))
    assert main(args) == 2
    assert "is a report of 'cube2', not 'sokoban'" in capsys.readouterr().err
