"""Cost-to-go values (``pz.value``, ``values``, ``puzzlezero value``) against exact distances."""

from __future__ import annotations

import json

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.cli.main import main
from puzzlezero.cost_to_go import _optimal, values
from puzzlezero.errors import PuzzleError, UnknownNameError
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.search.result import SearchResult
from puzzlezero.solver import get_heuristic, read_state


def test_exact_heuristic_gives_exact_values_and_q() -> None:
    """cube2's pdb heuristic is its exact distance table: the value is the optimum and each move's
    Q is 1 + the exact distance of the child."""
    p = pz.make("cube2")
    v = pz.value(p, "R U F'", heuristic="pdb")
    start = read_state(p, "R U F'")
    children = p.expand(start[None])[0]
    assert v.value == v.optimal == 3.0 and v.optimal_status == "solved"
    assert v.error == 0.0
    np.testing.assert_allclose(v.action_values, 1.0 + distance(children))
    assert v.best_move == "F"  # undoes the last move: Q = 1 + 2
    assert v.moves == tuple(p.action_names) and not v.is_goal


def test_goal_state() -> None:
    p = pz.make("cube2")
    v = pz.value(p, p.format(p.goals(1)[0]), heuristic="pdb")
    assert v.is_goal and v.value == 0.0 and v.optimal == 0.0 and v.best_move is None
    assert all(q == 2.0 for q in v.action_values)  # any move, then its inverse


def test_learned_value_is_close_on_cube2_and_json_round_trips() -> None:
    v = pz.value("cube2", "R U R' U' F")
    assert v.model == "cube2" and v.heuristic == "learned"
    assert abs(v.value - v.optimal) < 1.0
    out = json.loads(json.dumps(v.to_json()))
    assert out["optimal"] == v.optimal and out["best_move"] == v.best_move
    assert set(out["action_values"]) == set(pz.make("cube2").action_names)
    # the best move by the network's Q leads one move closer
    p = pz.make("cube2")
    child = p.apply(read_state(p, "R U R' U' F")[None], np.array([p.action_names.index(v.best_move)]))
    assert distance(child)[0] == v.optimal - 1


def test_q_head_is_used_where_the_model_has_one() -> None:
    p = pz.make("cube3")
    v = pz.value(p, "R U", optimal=False)
    q = get_heuristic(p, "learned-q", None, "q")(read_state(p, "R U")[None])[0]
    np.testing.assert_allclose(v.action_values, q, rtol=1e-6)
    assert v.optimal is None and v.optimal_status == "not asked"


def test_values_batch_matches_heuristic_and_reads_texts() -> None:
    p = pz.make("cube2")
    texts = ["R", "R U", "R U F'", p.format(p.goals(1)[0])]
    got = values(p, texts, heuristic="pdb")
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0, 0.0])
    arr = np.stack([read_state(p, t) for t in texts])
    np.testing.assert_array_equal(values("cube2", arr, heuristic="pdb"), got)
    assert values(p, np.zeros((0, 24), dtype=p.dtype)).shape == (0,)
    with pytest.raises(PuzzleError, match="batch of cube2 states"):
        values(p, arr[0])


def test_optimal_limits_and_missing_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    import puzzlezero.classic.optimal as optimal

    cube = pz.make("cube2")
    seen = {}

    def out_of_time(puzzle, state, *, time_limit=None, max_nodes=None):  # noqa: ANN001, ANN202
        seen["time_limit"] = time_limit
        return SearchResult(False, (), 123, 1, 0.5, "time limit")

    monkeypatch.setattr(optimal, "solve_optimal", out_of_time)
    v = pz.value(cube, "R U", heuristic="pdb", optimal_time_limit=0.25)
    assert (v.optimal, v.optimal_status, v.error) == (None, "time limit", None)
    assert seen["time_limit"] == 0.25
    monkeypatch.undo()
    soko = pz.make("sokoban")
    state = soko.scramble(np.random.default_rng(0), 1, 3)[0]
    monkeypatch.delitem(optimal.SOLVERS, "Sokoban")  # a puzzle without one
    assert _optimal(soko, state, 1.0) == (None, "no optimal solver", None)
    monkeypatch.undo()
    with pytest.raises(PuzzleError, match="optimal_time_limit"):
        pz.value("cube2", "R", heuristic="pdb", optimal_time_limit=0)
    with pytest.raises(UnknownNameError, match="unknown heuristic 'nope'"):
        pz.value("cube2", "R", heuristic="nope")


def test_cli_value(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["value", "cube2", "R U F'", "--heuristic", "pdb", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == out["optimal"] == 3.0 and out["best_move"] == "F"
    assert main(["value", "cube2", "R U F'", "--heuristic", "pdb"]) == 0
    text = capsys.readouterr().out
    assert "value:    3.00 (pdb)" in text and "optimal:  3 " in text and text.count(",") == 4
    assert main(["value", "cube2", "R U", "--heuristic", "pdb", "--no-optimal"]) == 0
    assert "optimal" not in capsys.readouterr().out
    assert main(["value", "cube2", "R Q"]) == 2
    assert "unknown move 'Q'" in capsys.readouterr().err


def test_top_level_api() -> None:
    r = pz.solve("cube2", "R U R'")
    assert r.solved and r.length == 3
    assert pz.__all__.count("solve") == 1 and "value" in pz.__all__


def test_value_takes_the_heuristics_options_by_name() -> None:
    """``options={"precision": ...}`` reaches the network: float32 gives learned-fp32's value exactly,
    int8 a value within a few tenths of it; an unknown option or precision is refused by name."""
    exact = pz.value("cube3", "R U R' F2", heuristic="learned-fp32", optimal=False).value
    as_float = pz.value("cube3", "R U R' F2", optimal=False, options={"precision": "float32"})
    as_int8 = pz.value("cube3", "R U R' F2", optimal=False, options={"precision": "int8"})
    assert as_float.value == exact and abs(as_int8.value - exact) < 0.5
    assert values("cube3", ["R U", "F2"], options={"precision": "float32"}).shape == (2,)
    with pytest.raises(UnknownNameError, match="unknown option 'precison'"):
        pz.value("cube3", "R U", optimal=False, options={"precison": "int8"})
    with pytest.raises(PuzzleError, match="precision"):
        pz.value("cube3", "R U", optimal=False, options={"precision": "int4"})
