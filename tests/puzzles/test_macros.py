"""Dong, Hao and Nakayama's options (macros here): the wrapped puzzle's children, costs and inverses equal
replayed move sequences, mining counts equal hand counts, bad files name their line, and the
solver's solutions with options replay in the puzzle's own moves."""

from __future__ import annotations

import json

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.macros import MacroPuzzle, format_macros, mine_macros, read_macros
from puzzlezero.solver import solve, verify

CUBE = make("cube3")
SEXY, INVERSE, OTHER = (tuple(CUBE.parse_moves(t)) for t in ("R U R' U'", "U R U' R'", "F R F'"))


def test_children_costs_and_inverses_are_the_move_sequences():
    mp = MacroPuzzle(CUBE, [SEXY, INVERSE, OTHER])
    assert mp.num_actions == 15 and mp.action_names[12:] == ("[R U R' U']", "[U R U' R']", "[F R F']")
    assert mp.action_costs.tolist() == [1.0] * 12 + [4.0, 4.0, 3.0]
    assert mp.inverse_action.tolist() == [*CUBE.inverse_action.tolist(), 13, 12, -1]
    states = CUBE.scramble(np.random.default_rng(0), 5, 7)
    kids = mp.expand(states)
    assert kids.shape == (5, 15, *CUBE.state_shape)
    assert np.array_equal(kids[:, :12], CUBE.expand(states))
    for i, m in enumerate((SEXY, INVERSE, OTHER)):
        assert all(np.array_equal(kids[b, 12 + i], CUBE.apply_moves(states[b], m)) for b in range(5))
    acts = np.array([0, 12, 14, 5, 13])
    assert np.array_equal(mp.apply(states, acts), kids[np.arange(5), acts])
    # a macro and its inverse undo each other; the goal, encoding and hashes are the cube's
    assert np.array_equal(mp.apply(mp.apply(states, np.full(5, 12)), np.full(5, 13)), states)
    assert mp.is_goal(CUBE.goals(1))[0] and np.array_equal(mp.encode(states), CUBE.encode(states))
    assert mp.primitive([3, 14, 12]) == [3, *OTHER, *SEXY]


def test_bad_options_are_refused():
    with pytest.raises(PuzzleError, match="at least 2"):
        MacroPuzzle(CUBE, [(0,)])
    with pytest.raises(PuzzleError, match="at least 2"):
        MacroPuzzle(CUBE, [(0, 12)])  # 12 is not a cube move
    with pytest.raises(PuzzleError, match="twice"):
        MacroPuzzle(CUBE, [SEXY, SEXY])
    with pytest.raises(PuzzleError, match="no macros"):
        MacroPuzzle(CUBE, [])


def test_mining_counts_by_hand():
    sols = [[0, 1, 2, 3, 0, 1, 2], [5, 0, 1, 2], [0, 1, 9]]
    # length 3: (0,1,2) three times, (1,2,3) (2,3,0) (3,0,1) (5,0,1) (0,1,9) once each
    assert mine_macros(sols, [3], top=2) == [(0, 1, 2)]
    # length 2: (0,1) four times, (1,2) three times, the rest once
    assert mine_macros(sols, [2, 3], top=2) == [(0, 1), (1, 2), (0, 1, 2)]
    assert mine_macros(sols, [8]) == []
    with pytest.raises(PuzzleError):
        mine_macros(sols, [1])


def test_options_file_round_trip_and_errors(tmp_path):
    f = tmp_path / "opts.txt"
    f.write_text(format_macros(CUBE, [SEXY, OTHER], "two macros\nby hand"))
    assert f.read_text().startswith("# two macros\n# by hand\nR U R' U'\n")
    assert read_macros(CUBE, f) == (SEXY, OTHER)
    for text, where in (
        ("R U\nR X\n", "line 2"),
        ("R\n", "line 1"),
        ("R U\n\n# c\nR U\n", "line 4"),
        ("# only\n", "no macros"),
    ):
        f.write_text(text)
        with pytest.raises(PuzzleError, match=where):
            read_macros(CUBE, f)


def test_solutions_with_options_replay_in_the_puzzles_moves(tmp_path):
    start = CUBE.apply_moves(CUBE.goal(), [*CUBE.parse_moves("F"), *SEXY, *SEXY])
    kw = dict(search="bwas", weight=0.6, batch=100, fallback=False, time_limit=30)
    plain = solve(CUBE, start, **kw)
    with_opts = solve(CUBE, start, macros=[INVERSE, SEXY], **kw)
    assert plain.solved and with_opts.solved
    assert all(0 <= a < CUBE.num_actions for a in with_opts.actions)  # the cube's own moves
    assert verify(CUBE, start[None], [with_opts.actions])[0]
    assert with_opts.length == with_opts.cost <= 9
    with pytest.raises(PuzzleError, match="does not take macros"):
        solve(CUBE, start, search="qstar", macros=[SEXY])


def test_cli_macros_and_bench_summary(tmp_path, capsys):
    opts = tmp_path / "opts.txt"
    opts.write_text("R U R' U'\nU R U' R'\n")
    assert (
        main(["solve", "cube3", "R U R' U' R U R' U'", "--search", "bwas", "--macros", str(opts), "--json"])
        == 0
    )
    answer = json.loads(capsys.readouterr().out)
    assert answer["solved"] and set(answer["solution"]) <= set(CUBE.action_names)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"puzzle": "cube3", "cases": [{"id": 0, "scramble": "R U F"}]}))
    report = tmp_path / "bench.json"
    argv = [
        "bench",
        "cube3",
        "--cases",
        str(cases),
        "--search",
        "bwas",
        "--macros",
        str(opts),
        "--out",
        str(report),
    ]
    assert main(argv) == 0
    summary = json.loads(report.read_text())["summary"]
    assert summary["macros"] == ["R U R' U'", "U R U' R'"] and summary["solved_pct"] == 100.0
    sols = tmp_path / "sols.txt"
    sols.write_text("R U R' U' R U\nR U F\nF D\n")
    mined = tmp_path / "mined.txt"
    assert (
        main(
            [
                "macros",
                "cube3",
                "--solutions",
                str(sols),
                "--lengths",
                "2:3",
                "--top",
                "1",
                "--out",
                str(mined),
            ]
        )
        == 0
    )
    assert read_macros(CUBE, mined) == (tuple(CUBE.parse_moves("R U")),)  # R U three times; no triple twice
    assert main(["macros", "cube3", "--solutions", str(sols), "--lengths", "5:6"]) == 2
    bad = tmp_path / "bad.txt"
    bad.write_text("R Q\n")
    capsys.readouterr()
    assert main(["solve", "cube3", "R U", "--search", "bwas", "--macros", str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err
