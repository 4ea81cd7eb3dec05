"""Solutions as cubers write them: ``format_compact`` (``R R`` -> ``R2``), ``half_turn_length`` in
``solve --json``, SolveResult and the web API, and puzzles without half turns left as they were."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlezero as pz
from puzzlezero import solver
from puzzlezero.cli.main import main
from puzzlezero.puzzles.cube import ACTION_NAMES, compact_moves
from puzzlezero.solver import HeuristicSpec, SearchSpec

C3, C2 = pz.make("cube3"), pz.make("cube2")
CUBES = pytest.mark.parametrize("cube", [C3, C2], ids=["cube3", "cube2"])


def zero_heuristic(puzzle: Any) -> Any:
    """Heuristic factory (test double): h = 0, so BWAS with weight 1 is uniform-cost search."""
    return lambda s: np.zeros(s.shape[0], dtype=np.float32)


@pytest.fixture(autouse=True)
def zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(solver.HEURISTICS, "zero", HeuristicSpec(zero_heuristic))
    solver.get_heuristic.cache_clear()


def ids(text: str) -> list[int]:
    return [ACTION_NAMES.index(m) for m in text.split()]


# ---- compaction on hand-written cases ----------------------------------------------------------
@pytest.mark.parametrize(
    ("moves", "compact"),
    [
        ("", ""),
        ("R", "R"),
        ("R R", "R2"),
        ("R' R'", "R2"),
        ("R R R", "R2 R"),
        ("R' R' R'", "R2 R'"),
        ("R R R R", "R2 R2"),
        ("R R'", "R R'"),  # notation only: nothing cancels
        ("R L R", "R L R"),  # nor do commuting turns merge
        ("U U D D", "U2 D2"),
        ("F' U U R' R' B", "F' U2 R2 B"),
    ],
)
def test_compaction_cases(moves: str, compact: str) -> None:
    assert compact_moves(moves.split()) == compact.split()
    for cube in (C3, C2):
        assert cube.format_compact(ids(moves)) == compact.split()
        assert cube.half_turn_length(ids(moves)) == len(compact.split())


# ---- the compact text reads back to the same state ----------------------------------------------
@CUBES
@settings(max_examples=60, deadline=None)
@given(actions=st.lists(st.integers(0, 11), max_size=40))
def test_compact_text_replays_to_the_same_state(cube: pz.Puzzle, actions: list[int]) -> None:
    text = cube.format_compact(actions)
    assert len(text) == cube.half_turn_length(actions) <= len(actions)
    assert sum(2 if t.endswith("2") else 1 for t in text) == len(actions)  # still len(actions) QTM
    for form in (" ".join(text), text):  # pasted back as a string or as a list of names
        back = cube.parse_moves(form)
        assert len(back) == len(actions)
        np.testing.assert_array_equal(
            cube.apply_moves(cube.goal(), back), cube.apply_moves(cube.goal(), actions)
        )
    if text:  # and as a state: the scramble reads as the same cube
        np.testing.assert_array_equal(cube.parse(" ".join(text)), cube.apply_moves(cube.goal(), actions))


@pytest.mark.parametrize("name", [n for n in pz.names() if n not in ("cube3", "cube2")])
def test_puzzles_without_half_turns_are_unchanged(name: str) -> None:
    p = pz.make(name)
    actions = list(np.random.default_rng(0).integers(0, p.num_actions, size=12))
    actions += [actions[-1]] * 2  # repeats stay repeats
    assert p.format_compact(actions) == p.format_moves(actions)
    assert p.half_turn_length(actions) is None


# ---- results and the command line -----------------------------------------------------------------
def test_solve_result_fills_half_turn_length_for_cubes_only() -> None:
    r = solver.solve("cube3", "R2 U", heuristic="zero", weight=1.0, batch=100)
    assert r.solved and r.length == 3 and r.half_turn_length == 2
    assert r.to_json()["half_turn_length"] == 2 and len(r.to_json()["solution"]) == 3  # quarter turns
    r8 = solver.solve("puzzle8", "1 2 3 4 5 6 7 0 8", heuristic="zero", weight=1.0)
    assert r8.solved and r8.half_turn_length is None and "half_turn_length" not in r8.to_json()
    unsolved = solver.solve("cube3", "R2 U F", heuristic="zero", weight=1.0, batch=1, max_nodes=13)
    assert not unsolved.solved and "half_turn_length" not in unsolved.to_json()


def test_a_search_that_counts_half_turns_itself_keeps_its_count(monkeypatch: pytest.MonkeyPatch) -> None:
    from puzzlezero.classic.optimal.kociemba_bridge import KociembaResult

    def fake_two_phase(puzzle: pz.Puzzle, state: np.ndarray, **_: Any) -> KociembaResult:
        return KociembaResult(True, (7, 7), 3, 1, 0.0, "solved", half_turn_solution="R2", half_turn_length=1)

    monkeypatch.setitem(
        solver.SEARCHES,
        "fake",
        SearchSpec(entry=fake_two_phase, run=solver.SEARCHES["optimal"].run, needs_heuristic=False),
    )
    r = solver.solve("cube3", "R2", search="fake")
    assert r.solved and r.solution == ("R'", "R'") and r.half_turn_length == 1


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = main(list(args))
    return rc, capsys.readouterr().out


def test_solve_cli_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("solve", "cube3", "R2 U", "--heuristic", "zero", "--weight", "1", "--batch", "100")
    rc, out = run_cli(capsys, *args, "--json")
    data = json.loads(out)
    assert rc == 0 and data["length"] == 3 and data["half_turn_length"] == 2
    assert len(data["solution"]) == 3 and all(not m.endswith("2") for m in data["solution"])
    rc, out = run_cli(capsys, *args)
    assert rc == 0 and "length:   3 moves (QTM), 2 half-turn moves" in out
    text = out.split("solution:", 1)[1].splitlines()[0].strip()
    assert len(text.split()) == 2 and "2" in text  # e.g. "U' R2"
    assert C3.is_goal(C3.apply_moves(C3.parse("R2 U"), C3.parse_moves(text))[None])[0]  # pastes back


def test_solve_cli_text_of_other_puzzles_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run_cli(capsys, "solve", "puzzle8", "1 2 3 4 5 6 7 0 8", "--heuristic", "zero", "--weight", "1")
    assert rc == 0 and "length:   1 moves\n" in out and "half-turn" not in out
    rc, out = run_cli(capsys, "solve", "puzzle8", "1 2 3 4 5 6 7 0 8", "--heuristic", "zero", "--json")
    assert "half_turn_length" not in json.loads(out)


def test_web_solve_response_carries_half_turn_length() -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from puzzlezero.web import ServerConfig, create_app

    def real_solve(
        puzzle: pz.Puzzle, state: np.ndarray, opts: solver.SolveOptions, on_solution: Any = None
    ) -> solver.SolveResult:
        limits = {"batch": opts.batch, "max_nodes": opts.max_nodes, "time_limit": opts.time_limit}
        return solver.solve(puzzle, state, heuristic="zero", weight=1.0, **limits)

    config = ServerConfig(executor="thread", workers=1, allowed_hosts=("testserver",))  # TestClient's Host
    app = create_app(config, solve_fn=real_solve)
    with TestClient(app, raise_server_exceptions=False) as c:
        cube = c.post("/api/solve", json={"puzzle": "cube3", "state": "R2 U", "batch": 100}).json()
        tiles = c.post("/api/solve", json={"puzzle": "puzzle8", "state": "1 2 3 4 5 6 7 0 8"}).json()
    assert cube["solved"] and cube["length"] == 3 and cube["half_turn_length"] == 2
    assert tiles["solved"] and tiles["half_turn_length"] is None
