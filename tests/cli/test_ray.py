"""Benches and batch solves as Ray tasks: the same results as the local run, errors carried back."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from puzzlezero.bench import run_bench
from puzzlezero.case_files import load_cases
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.ray_solve import solve_on_ray
from puzzlezero.registry import make

ray = pytest.importorskip("ray")

CASES = {
    "puzzle": "cube2",
    "cases": [
        {"id": 0, "scramble": "R U F'", "optimal_length": 3},
        {"id": 1, "scramble": "R U R' U' F2 D", "optimal_length": 7},
        {"id": 2, "scramble": "F R"},
        {"id": 3, "scramble": "D' B L2 U"},
        {"id": 4, "scramble": "U"},
    ],
}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _without_times(results: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in results]


def test_bench_on_ray_equals_local(local_ray: None, tmp_path) -> None:  # noqa: ANN001
    import json

    path = tmp_path / "cases.json"
    path.write_text(json.dumps(CASES))
    p = make("cube2")
    cases = load_cases(p, path, None)
    options = {"heuristic": "pdb", "weight": 0.5, "batch": 10}
    local = run_bench(p, cases, **options)
    seen: list[int] = []
    remote = run_bench(p, cases, ray=True, on_results=lambda rs: seen.append(len(rs)), **options)
    assert _without_times(remote.results) == _without_times(local.results)
    assert [r["id"] for r in remote.results] == [0, 1, 2, 3, 4] and all(r["solved"] for r in remote.results)
    assert sorted(seen) == [1, 1, 1, 1, 1]  # one task per case (BWAS: together 1), each reported
    s = remote.summary
    assert s["ray"] == "default" and s["hardware"] and s["peak_rss_mib"] is None
    assert s["date"] and local.summary["date"]  # each run dates itself; the two may differ by a second
    assert _without_run(s) == _without_run(local.summary)


def _without_run(summary: dict) -> dict:
    """The summary less what belongs to the run rather than the results: times, when, where."""
    run = ("ray", "hardware", "peak_rss_mib", "nodes_per_second", "date")
    return {k: v for k, v in summary.items() if "seconds" not in k and k not in run}


def test_chunks_keep_input_order(local_ray: None) -> None:
    texts = [c["scramble"] for c in CASES["cases"]]
    got = solve_on_ray("cube2", texts, heuristic="pdb", weight=1.0, batch=10, together=2)
    assert [r.length for r in got] == [3, 7, 2, 5, 1]  # exact heuristic, weight 1: optimal (QTM)
    p = make("cube2")
    for text, r in zip(texts, got, strict=True):
        assert p.is_goal(p.apply_moves(p.parse(text), list(r.actions))[None])[0]


def test_task_errors_come_back_as_themselves(local_ray: None) -> None:
    with pytest.raises(ModelFileError, match="no model folder 'nope'"):
        solve_on_ray("cube2", ["R U"], model="nope")
    with pytest.raises(PuzzleError, match="unknown search"):  # checked before any task
        solve_on_ray("cube2", ["R U"], search="nope")
    assert solve_on_ray("cube2", []) == []


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(PuzzleError, match=r"puzzlezero\[ray\]"):
        solve_on_ray("cube2", ["R U"], heuristic="pdb")
