"""The fallback search: states the puzzle's own search leaves unsolved get the group solver's answer
(a legal cube always gets a solution) or the sliding puzzles' reduction, in a reserve taken from the
time limit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from puzzlezero.bench import run_bench
from puzzlezero.case_files import load_cases
from puzzlezero.errors import PuzzleError
from puzzlezero.registry import make
from puzzlezero.search.result import SearchResult
from puzzlezero.solver import (
    FALLBACK_RESERVE,
    SEARCHES,
    SearchSpec,
    declare_search,
    read_state,
    resolve_options,
    solve,
)
from puzzlezero.solver.run import _run_with_fallback

DEEP = "R U F' D2 L B' R2 U' F D L' B2 U"


def test_a_state_the_search_cannot_solve_gets_the_fallbacks_solution() -> None:
    p = make("cube2")
    starved = solve(p, DEEP, heuristic="pdb", max_nodes=13)  # one expansion: not enough
    assert starved.solved and starved.fallback == "group" and starved.search == "bwas"
    end = p.apply_moves(read_state(p, DEEP), list(starved.actions))
    assert p.is_goal(end[None])[0]
    assert starved.nodes_generated > 13  # both searches' nodes
    assert starved.to_json()["fallback"] == "group"
    assert starved.improvements == ((starved.seconds, starved.length),)
    off = solve(p, DEEP, heuristic="pdb", max_nodes=13, fallback=False)
    assert not off.solved and off.status == "node limit" and off.fallback is None
    assert "fallback" not in off.to_json()
    fine = solve(p, DEEP, heuristic="pdb")
    assert fine.solved and fine.fallback is None  # solved by the search itself


def test_only_under_the_puzzles_own_settings_unless_asked() -> None:
    p = make("cube2")
    assert resolve_options(p).fallback == "group"
    assert resolve_options(p, weight=0.5).fallback is None  # a named setting is measured as it is
    assert resolve_options(p, weight=0.5, fallback=True).fallback == "group"
    assert resolve_options(p, search="gbfs").fallback is None
    assert resolve_options(make("cube3")).fallback == "group"
    assert resolve_options(make("puzzle48")).fallback == "reduction"
    with pytest.raises(PuzzleError, match="no fallback search for bwas on sokoban"):
        resolve_options(make("sokoban"), fallback=True)
    with pytest.raises(PuzzleError, match="its fallback is group itself"):
        resolve_options(p, search="group", fallback=True)


def test_the_fallback_runs_in_a_reserve_taken_from_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from puzzlezero.search import clock
    from tests.clock import FakeClock

    monkeypatch.setattr(clock, "time", FakeClock())  # the search is handed exactly the time left
    p = make("cube2")
    seen: list[float] = []

    def gives_up(fn, puzzle, states, h, o):  # noqa: ANN001, ANN202
        seen.append(o.time_limit)
        return [SearchResult(False, (), 7, 1, 0.5, "time limit") for _ in states]

    spec = declare_search(
        SearchSpec(entry="puzzlezero.search:bwas", run=gives_up, needs_heuristic=True, description="fake")
    )
    states = np.stack([read_state(p, DEEP), read_state(p, "R U")])
    for limit in (60.0, 5.0):
        opts = resolve_options(p, time_limit=limit)
        found, rescued, _ = _run_with_fallback(spec, SEARCHES["bwas"].entry, p, states, None, opts)
        assert seen[-1] == pytest.approx(limit - min(FALLBACK_RESERVE, 0.1 * limit))
        assert rescued == ["group", "group"] and all(r.solved for r in found)
        assert [r.nodes_generated > 7 for r in found] == [True, True]


def test_bench_counts_the_fallbacks(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    cases = [{"id": 0, "scramble": DEEP}, {"id": 1, "scramble": "R"}]
    path.write_text(json.dumps({"puzzle": "cube2", "cases": cases}))
    p = make("cube2")
    report = run_bench(p, load_cases(p, path, None), heuristic="pdb", max_nodes=40)
    assert report.summary["solved_pct"] == 100.0 and report.summary["fallback_pct"] == 50.0
    assert report.summary["fallback"] == "group"
    assert [r.get("fallback") for r in report.results] == ["group", None]


def test_the_web_answer_names_the_fallback() -> None:
    from fastapi.testclient import TestClient

    from puzzlezero.web.app import create_app
    from puzzlezero.web.config import ServerConfig

    config = ServerConfig(executor="thread", workers=1, allowed_hosts=("testserver",))  # TestClient's Host
    with TestClient(create_app(config)) as client:
        body = {"puzzle": "cube2", "state": DEEP, "heuristic": "pdb", "max_nodes": 13}
        r = client.post("/api/solve", json=body)
        assert r.status_code == 200 and r.json()["solved"] and r.json()["fallback"] == "group"
