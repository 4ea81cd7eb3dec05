"""Solution analyses on hand-made move lists with hand-counted answers, the heuristic's
overestimate share, reading solutions from every supported file, and the analyze command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.reports.solution_analysis import (
    is_commutator,
    is_conjugate,
    move_patterns,
    overestimate_share,
    read_solutions,
    windows,
)

CUBE = make("cube3")


def moves(text: str) -> list[int]:
    return CUBE.parse_moves(text)


def test_conjugates_and_commutators_by_definition():
    assert is_conjugate(CUBE, moves("R U R'")) and is_conjugate(CUBE, moves("F' D F"))
    assert is_conjugate(CUBE, moves("D B' B' D'"))  # the conjugate of the half turn B2
    assert not is_conjugate(CUBE, moves("R R R'"))  # b = a: this is just R
    assert not is_conjugate(CUBE, moves("R R' R'"))  # b = a⁻¹
    assert not is_conjugate(CUBE, moves("R U R"))
    assert not is_conjugate(CUBE, moves("D B' F D'"))  # the middle is not one move twice
    assert is_commutator(CUBE, moves("R U R' U'")) and is_commutator(CUBE, moves("F' L F L'"))
    assert not is_commutator(CUBE, moves("R U R' U"))
    assert not is_commutator(CUBE, moves("R R' R' R"))  # b = a⁻¹
    assert not is_commutator(CUBE, moves("R U R'"))


def test_move_patterns_hand_counted():
    sols = [moves("R U R' U' R U R'"), moves("F R F'"), moves("U"), moves("R U R' F")]
    # 3-move windows: solution 1 (7 moves) has RUR', UR'U', R'U'R, U'RU, RUR' (all conjugates
    # a b a⁻¹); solution 2 FRF' (conjugate); solution 3 none; solution 4 RUR' (conjugate) and
    # UR'F (not). 8 windows, 6 distinct, 7 conjugates = 87.5%.
    m = move_patterns(CUBE, sols, top=3)
    w3 = m["windows"]["3"]
    assert (w3["total"], w3["distinct"]) == (8, 6)
    assert w3["top"][0] == {"moves": "R U R'", "count": 3, "pct": 37.5, "conjugate": True}
    assert m["conjugate_triplets_pct"] == 87.5
    assert w3["conjugates_in_top"] == 3  # R U R', then U R' U' and R' U' R (count 1, first seen)
    # 4-move windows: solution 1 has RUR'U', UR'U'R, R'U'RU, U'RUR' (all a b a⁻¹ b⁻¹), solution
    # 4 RUR'F (not): 5 windows, 4 commutators = 80%; the top 3 (ties in order of first
    # appearance) are the first three of solution 1.
    w4 = m["windows"]["4"]
    assert w4["total"] == 5 and m["commutator_quadruplets_pct"] == 80.0
    assert w4["commutators_in_top"] == 3 and w4["conjugates_in_top"] == 0
    assert (m["solutions"], m["moves"]) == (4, 15)
    assert windows([[1, 2, 1, 2]], 2) == {(1, 2): 2, (2, 1): 1}
    with pytest.raises(PuzzleError, match="top must be"):
        move_patterns(CUBE, sols, top=0)


def test_patterns_work_for_other_puzzles_with_their_inverses():
    p = make("puzzle8")  # U D L R: inverse U <-> D, L <-> R
    m = move_patterns(p, [p.parse_moves("U L D R")], top=5)
    assert m["conjugate_triplets_pct"] == 100.0  # U L D and L D R
    assert m["commutator_quadruplets_pct"] == 100.0


def test_overestimate_share():
    states = CUBE.goals(4)
    share = overestimate_share(lambda s: np.array([3.0, 5.0, 7.5, 2.0]), states, [3, 6, 7, 2.00001])
    assert share == {
        "states": 4,
        "not_overestimating_pct": 75.0,
        "mean_error": -0.125,
        "max_overestimate": 0.5,
    }
    with pytest.raises(PuzzleError, match="4 states but 3"):
        overestimate_share(lambda s: np.zeros(4), states, [1, 2, 3])


def test_read_solutions_from_every_format(tmp_path):
    bench = {
        "summary": {},
        "results": [
            {"id": 0, "solved": True, "solution": ["R", "U", "R'"]},
            {"id": 1, "solved": False, "solution": None},
        ],
    }
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    (tmp_path / "solve.json").write_text(json.dumps({"solved": True, "solution": ["F", "F'"]}))
    (tmp_path / "list.json").write_text(json.dumps(["R U", ["D"]]))
    (tmp_path / "sols.txt").write_text("# a comment\nR U R' U'\n\nF2 D  # half turn = two quarter turns\n")
    assert read_solutions(CUBE, tmp_path / "bench.json") == [moves("R U R'")]
    assert read_solutions(CUBE, tmp_path / "solve.json") == [moves("F F'")]
    assert read_solutions(CUBE, tmp_path / "list.json") == [moves("R U"), moves("D")]
    assert read_solutions(CUBE, tmp_path / "sols.txt") == [moves("R U R' U'"), moves("F F D")]
    (tmp_path / "bad.txt").write_text("R U X\n")
    with pytest.raises(PuzzleError, match=r"bad.txt: solution 1: .*'X'"):
        read_solutions(CUBE, tmp_path / "bad.txt")
    with pytest.raises(PuzzleError, match="cannot read solutions file"):
        read_solutions(CUBE, tmp_path / "missing.txt")
    (tmp_path / "empty.json").write_text("[]")
    with pytest.raises(PuzzleError, match="no solutions found"):
        read_solutions(CUBE, tmp_path / "empty.json")


def test_report_analysis_command(tmp_path, capsys):
    (tmp_path / "sols.txt").write_text("R U R' U' R U R'\nF R F'\n")
    cases = {
        "puzzle": "cube3",
        "cases": [
            {"id": 0, "scramble": "R U", "optimal_length": 2},
            {"id": 1, "scramble": "F", "optimal_length": 1},
            {"id": 2, "scramble": "D"},
        ],
    }
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    argv = [
        "report",
        "analysis",
        "cube3",
        "--solutions",
        str(tmp_path / "sols.txt"),
        "--cases",
        str(tmp_path / "cases.json"),
    ]
    assert main([*argv, "--heuristic", "misplaced", "--out", str(tmp_path / "out.json")]) == 0
    text = capsys.readouterr().out
    assert "a b a' triplets: 100.0% of all 3-move windows" in text
    assert "R U R'" in text and "[conjugate]" in text
    out = json.loads((tmp_path / "out.json").read_text())
    # misplaced stickers: R U moves 20+ stickers (> 2), F 20 (> 1): both overestimate
    assert out["heuristic"]["states"] == 2 and out["heuristic"]["not_overestimating_pct"] == 0.0
    assert out["patterns"]["windows"]["4"]["total"] == 4
    # --json: the figures alone on stdout, the same as the file's
    assert main([*argv, "--heuristic", "misplaced", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == out
    assert main(["report", "analysis", "cube3"]) == 2
    assert "give --solutions FILE" in capsys.readouterr().err
    assert main(["analyze", "cube3"]) == 2  # one command for it: report analysis
    assert "No such command 'analyze'" in capsys.readouterr().err
