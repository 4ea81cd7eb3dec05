"""cube3htm, the 3x3x3 cube in the half-turn metric: its algebra against cube3's quarter turns, its
notation, the solver and command line (cost beside length), the clear error of the learned
heuristic without a model, the two-phase bridge, benchmark cases and a short training run."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero import solver
from puzzlezero.case_files import cases_path, load_cases
from puzzlezero.cli.main import main
from puzzlezero.errors import InvalidMoveError, ModelFileError
from puzzlezero.puzzles.cube import HTM_ACTION_NAMES
from puzzlezero.solver import HeuristicSpec
from tests.conftest import tiny_train_config


@pytest.fixture(scope="module")
def htm() -> pz.Puzzle:
    return pz.make("cube3htm")


@pytest.fixture(scope="module")
def qtm() -> pz.Puzzle:
    return pz.make("cube3")


@pytest.fixture
def zero_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        solver.HEURISTICS, "zero", HeuristicSpec(lambda puzzle: lambda s: np.zeros(len(s), np.float32))
    )


# ---- algebra -------------------------------------------------------------------------------------
def test_eighteen_distinct_moves_in_standard_notation(htm: pz.Puzzle) -> None:
    assert htm.num_actions == 18 and htm.action_names == HTM_ACTION_NAMES
    assert htm.action_names[:3] == ("U", "U'", "U2") and len(set(htm.action_names)) == 18
    children = htm.expand(htm.goals(1))[0]
    assert len({c.tobytes() for c in children}) == 18 and not htm.is_goal(children).any()
    assert pz.registry.spec("cube3htm").description == "3x3x3 cube, half-turn metric"
    assert htm.unit_costs and htm.default_scramble_depth == 24


def test_moves_are_cube3s_quarter_turns(htm: pz.Puzzle, qtm: pz.Puzzle) -> None:
    states = htm.scramble(np.random.default_rng(0), 20, 15)
    for face in "UDLRFB":
        x, xi, x2 = (htm.action_names.index(face + m) for m in ("", "'", "2"))
        q, qi = qtm.action_names.index(face), qtm.action_names.index(face + "'")
        n = len(states)
        np.testing.assert_array_equal(htm.apply(states, np.full(n, x)), qtm.apply(states, np.full(n, q)))
        np.testing.assert_array_equal(htm.apply(states, np.full(n, xi)), qtm.apply(states, np.full(n, qi)))
        twice = qtm.apply(qtm.apply(states, np.full(n, q)), np.full(n, q))
        np.testing.assert_array_equal(htm.apply(states, np.full(n, x2)), twice)  # X2 = X X
        np.testing.assert_array_equal(htm.apply(htm.apply(states, np.full(n, x2)), np.full(n, x2)), states)
        back = htm.apply(htm.apply(states, np.full(n, xi)), np.full(n, xi))
        np.testing.assert_array_equal(back, htm.apply(states, np.full(n, x2)))  # X' X' = X2
    assert htm.inverse_action.tolist() == [1, 0, 2, 4, 3, 5, 7, 6, 8, 10, 9, 11, 13, 12, 14, 16, 15, 17]


def test_a_scramble_is_undone_by_its_inverse(htm: pz.Puzzle) -> None:
    rng = np.random.default_rng(1)
    for _ in range(10):
        moves = rng.integers(0, 18, size=25).tolist()
        state = htm.apply_moves(htm.goal(), moves)
        undo = [int(htm.inverse_action[a]) for a in reversed(moves)]
        assert htm.is_goal(htm.apply_moves(state, undo)[None])[0]
    depths = htm.scramble(np.random.default_rng(2), 200, (1, 24))
    assert not htm.is_goal(depths).all() and depths.shape == (200, 54)
    for s in depths[:20]:
        htm.validate(s)  # every scramble is a legal cube


# ---- notation ------------------------------------------------------------------------------------
def test_parse_and_format_round_trip(htm: pz.Puzzle, qtm: pz.Puzzle) -> None:
    moves = np.random.default_rng(3).integers(0, 18, size=40).tolist()
    names = htm.format_moves(moves)
    assert htm.parse_moves(" ".join(names)) == moves and htm.parse_moves(names) == moves
    assert htm.format_compact(moves) == names and htm.half_turn_length(moves) is None
    assert htm.parse_moves("U2' U'2 R2 R") == htm.parse_moves("U2 U2 R2 R")  # X2' and X'2 are X2
    assert htm.format_moves(htm.parse_moves("RU2R'U'")) == ["R", "U2", "R'", "U'"]
    text = "R U2 F' D2 L B'"
    np.testing.assert_array_equal(htm.parse(text), qtm.parse(text))  # the same cube as cube3 reads it
    assert htm.format(htm.parse(text)) == qtm.format(qtm.parse(text))
    with pytest.raises(InvalidMoveError, match="X2 = half turn"):
        htm.parse_moves("R X")


# ---- solving -------------------------------------------------------------------------------------
@pytest.mark.usefixtures("zero_heuristic")
def test_solve_json_reports_cost_and_text_has_no_quarter_turn_label(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ("solve", "cube3htm", "R U2", "--heuristic", "zero", "--weight", "1", "--batch", "100")
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["solution"] == ["U2", "R'"] and data["length"] == 2 and data["cost"] == 2.0
    assert "half_turn_length" not in data
    assert main(list(args)) == 0
    out = capsys.readouterr().out
    assert "solution: U2 R'" in out and "length:   2 moves\n" in out and "cost:" not in out


@pytest.mark.usefixtures("zero_heuristic")
def test_solve_cube3_json_has_cost_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["solve", "cube3", "R2 U", "--heuristic", "zero", "--weight", "1", "--batch", "100", "--json"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["length"] == 3 and data["cost"] == 3.0 and data["half_turn_length"] == 2


def test_the_shipped_model_solves_in_half_turns_and_a_missing_model_is_a_clear_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = solver.solve("cube3htm", "R U2 F'", anytime=False)
    assert r.solved and r.search == "qstar" and r.solution == ("F", "U2", "R'")
    one_move = "1 2 3 4 5 0 7 8 6"  # the 8-puzzle has no model (it is for tests and tables)
    with pytest.raises(ModelFileError, match="no model folder 'puzzle8'.*puzzlezero train puzzle8"):
        solver.solve("puzzle8", one_move, search="bwas")
    assert main(["solve", "puzzle8", one_move, "--search", "bwas"]) != 0
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "puzzlezero train puzzle8" in err and "Traceback" not in err


def test_pdb_heuristic_is_admissible_for_half_turns(htm: pz.Puzzle) -> None:
    """``--heuristic pdb`` on cube3htm: Korf's quarter-turn values halved and rounded up (the
    databases themselves take minutes to build, so the rule is checked on given values)."""
    from puzzlezero.classic.optimal.heuristics import PDBHeuristic, cost_scaled

    qtm_distance = PDBHeuristic("qtm", lambda s: np.asarray(s, dtype=np.float32), 0)
    per_quarter_turn = float(np.min(htm.action_costs / htm.quarter_turns))
    assert per_quarter_turn == 0.5
    values = cost_scaled(htm, qtm_distance, per_quarter_turn)(np.array([0, 1, 2, 3, 26]))
    assert values.tolist() == [0, 1, 1, 2, 13]  # ceil(qtm / 2) <= half-turn distance


def test_kociemba_bridge_keeps_half_turns(monkeypatch: pytest.MonkeyPatch, htm: pz.Puzzle) -> None:
    calls = []

    def two_phase(facelets: str, max_depth: int = 24) -> str:
        calls.append(facelets)
        return "U2 R'"

    monkeypatch.setitem(sys.modules, "kociemba", SimpleNamespace(solve=two_phase))
    r = solver.solve("cube3htm", "R U2", search="kociemba")
    assert r.solved and r.solution == ("U2", "R'") and r.length == 2 and r.cost == 2.0
    assert r.half_turn_length is None and calls == [htm.format(htm.parse("R U2"))]
    q = solver.solve("cube3", "R U2", search="kociemba")  # cube3 still reads X2 as two quarter turns
    assert q.solution == ("U", "U", "R'") and q.half_turn_length == 2


def test_bench_reads_cube3_cases_without_their_quarter_turn_optima(htm: pz.Puzzle, qtm: pz.Puzzle) -> None:
    hard = cases_path(htm, "hard")
    assert hard.name == "cube3_hard.json"
    cases = load_cases(htm, hard)
    assert len(cases) == 2 and all(c.optimal_length is None for c in cases)
    assert all(c.optimal_length is not None for c in load_cases(qtm, hard))
    np.testing.assert_array_equal(cases[0].state, load_cases(qtm, hard)[0].state)


def test_a_short_training_run_with_a_q_head(tmp_path, one_torch_thread) -> None:  # noqa: ANN001
    from puzzlezero.train import Trainer

    config = tiny_train_config(puzzle="cube3htm", objective="qlearning", max_iterations=20)
    trainer = Trainer(config, tmp_path / "run")
    trainer.run()
    assert trainer.model.q.out_features == 18
    assert trainer.counters.iteration == 20
