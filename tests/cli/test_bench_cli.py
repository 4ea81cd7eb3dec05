"""The `solve` and `bench` commands end to end (in-process through main()), and bench helpers."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from puzzlezero import make, solver
from puzzlezero.bench import by_seconds, summarize
from puzzlezero.case_files import cases_path, load_cases, parse_ids
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.solver import HeuristicSpec
from puzzlezero.solver.searches import _run_each
from tests.conftest import BENCH_DIR, needs

JSON_KEYS = {"puzzle", "solved", "solution", "length", "nodes_generated", "seconds"}
SUMMARY_KEYS = {
    "cases",
    "solved_pct",
    "mean_length",
    "mean_optimal_length",
    "optimal_pct",
    "mean_nodes",
    "max_nodes_generated",
    "peak_rss_mib",
    "nodes_per_second",
    "median_seconds",
    "mean_seconds",
}
RESULT_KEYS = {"id", "solved", "solution", "length", "optimal_length", "nodes_generated", "seconds"}


def exact_cube2(puzzle: Any) -> Any:
    table = pytest.importorskip("puzzlezero.puzzles.cube.table")
    return lambda s: table.distance(s).astype(np.float32)


@pytest.fixture(autouse=True)
def exact_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(solver.HEURISTICS, "exact", HeuristicSpec(exact_cube2))
    solver.get_heuristic.cache_clear()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


# ---- solve ---------------------------------------------------------------------------------------
def test_solve_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "solve", "cube2", "R U F'", "--heuristic", "exact", "--weight", "1", "--json")
    data = json.loads(out)
    assert rc == 0 and JSON_KEYS <= set(data)
    assert data["puzzle"] == "cube2" and data["solved"] and data["length"] == 3
    p = make("cube2")
    assert p.is_goal(p.apply_moves(p.parse("R U F'"), p.parse_moves(data["solution"]))[None])[0]


def test_solve_human_output_and_budget_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "solve", "cube2", "R U", "--heuristic", "exact")
    assert rc == 0 and "solution: " in out and "length:   2 moves" in out and "nodes:" in out
    rc, out, _ = run(
        capsys,
        "solve",
        "cube2",
        "R U F' L",
        "--heuristic",
        "exact",
        "--weight",
        "0",
        "--batch",
        "1",
        "--max-nodes",
        "13",
    )
    assert rc == 1 and "not solved within budget (node limit)" in out


def test_solve_says_when_moves_that_cancel_were_dropped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from puzzlezero.search import SearchResult

    def stray(puzzle: Any, state: np.ndarray, *, time_limit: float, max_nodes: int) -> SearchResult:
        return SearchResult(True, (9, 24, 9), 150, 3, 0.0, "solved")  # 9 pressed twice

    monkeypatch.setitem(
        solver.SEARCHES, "stray", solver.SearchSpec(entry=stray, run=_run_each, needs_heuristic=False)
    )
    lights = make("lightsout7")
    rc, out, _ = run(
        capsys,
        "solve",
        "lightsout7",
        lights.format(lights.apply_moves(lights.goal(), [24])),
        "--search",
        "stray",
    )
    assert rc == 0 and "solution: 24\n" in out
    assert "length:   1 moves (the search's path had 3: cancelling moves or detours taken out)" in out


def test_solve_and_bench_take_the_solve_flags_declared_once() -> None:
    """Both commands take every :class:`SolveFlags` field and every knob of ``solver.OPTIONS`` as
    an option, and their solve is the one SolveOptions the flags resolve to: the puzzle's defaults
    where none is given."""
    import inspect
    from dataclasses import fields

    from puzzlezero.cli.solve_cmds import bench_cmd, solve_cmd
    from puzzlezero.cli.solve_flags import SolveFlags

    names = {f.name for f in fields(SolveFlags) if f.name != "knobs"} | set(solver.OPTIONS)
    for command in (solve_cmd, bench_cmd):
        params = inspect.signature(command).parameters
        assert names <= set(params) and "flags" not in params
    p = make("cube3")
    assert SolveFlags().options(p) == solver.resolve_options(p)
    typed = SolveFlags(search="beam", beam_width="50,500", heuristic="misplaced", time_limit=3.0)
    assert typed.options(p) == solver.resolve_options(
        p, search="beam", beam_width=(50, 500), heuristic="misplaced", time_limit=3.0
    )
    images = SolveFlags(knobs=(("images", 0),)).options(p)
    assert images.option("images") == 0 and images.search == solver.resolve_options(p).search


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "cube3", "R U Q"], "Q"),
        (["solve", "cube3", "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBU"], "error:"),
        (["solve", "puzzle8", "1 2 3"], "error:"),
        (["solve", "cube2", "R", "--search", "dfs"], "unknown search 'dfs'"),
        (["solve", "cube2", "R", "--heuristic", "exact", "--batch", "0"], "batch must be positive"),
    ],
)
def test_bad_input_gives_message_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    rc, out, err = run(capsys, *args)
    assert rc == 2 and message in err and err.startswith("error:") and "Traceback" not in err + out


# ---- bench ---------------------------------------------------------------------------------------
@pytest.fixture
def cube2_cases(tmp_path: Path) -> Path:
    p = make("cube2")
    rng = np.random.default_rng(7)
    states = p.scramble(rng, 6, depth=(2, 14))
    opt = exact_cube2(p)(states).astype(int)
    cases = [
        {"id": 10 + i, "facelets": p.format(s), "optimal_length": int(o)}
        for i, (s, o) in enumerate(zip(states, opt, strict=True))
    ]
    cases[1].pop("optimal_length")  # one case without a known optimum
    path = tmp_path / "cube2.json"
    path.write_text(json.dumps({"puzzle": "cube2", "cases": cases}))
    return path


def test_bench_writes_report(capsys: pytest.CaptureFixture[str], tmp_path: Path, cube2_cases: Path) -> None:
    out_path = tmp_path / "out" / "report.json"
    rc, out, _ = run(
        capsys,
        "bench",
        "cube2",
        "--cases",
        str(cube2_cases),
        "--heuristic",
        "exact",
        "--weight",
        "1",
        "--batch",
        "5",
        "--out",
        str(out_path),
    )
    assert rc == 0 and "summary" in out and "solved_pct" in out
    report = json.loads(out_path.read_text())
    s, results = report["summary"], report["results"]
    assert SUMMARY_KEYS <= set(s) and all(RESULT_KEYS <= set(r) for r in results)
    assert [r["id"] for r in results] == [10, 11, 12, 13, 14, 15]
    assert s["cases"] == 6 and s["solved_pct"] == 100.0 and s["optimal_pct"] == 100.0  # exact h, weight 1
    known = [r["optimal_length"] for r in results if r["optimal_length"] is not None]
    assert len(known) == 5 and s["mean_optimal_length"] == pytest.approx(np.mean(known), abs=1e-4)
    assert s["mean_length"] == pytest.approx(np.mean([r["length"] for r in results]), abs=1e-4)
    assert s["timing"].startswith("per instance")
    assert s["max_nodes_generated"] == max(r["nodes_generated"] for r in results)
    assert 10 < s["peak_rss_mib"] < 1_000_000  # MiB of this process (Python + NumPy alone is > 10)
    assert "max_nodes_generated" in out and "peak_rss_mib" in out  # in the summary table too
    p = make("cube2")
    for r, case in zip(results, json.loads(cube2_cases.read_text())["cases"], strict=True):
        assert p.is_goal(p.apply_moves(p.parse(case["facelets"]), p.parse_moves(r["solution"]))[None])[0]


def test_bench_report_names_the_model_and_beam_width_of_a_policy_beam(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """lightsout7's defaults: the shipped policy searched by its beam; the report says so."""
    p = make("lightsout7")
    presses = [[3, 17, 40], [0, 24], [5, 6, 12, 30, 48]]
    cases = [
        {"id": i, "lights": p.format(p.apply_moves(p.goal(), m)), "optimal_length": len(m)}
        for i, m in enumerate(presses)
    ]
    path = tmp_path / "lo.json"
    path.write_text(json.dumps({"puzzle": "lightsout7", "cases": cases}))
    rc, _, _ = run(capsys, "bench", "lightsout7", "--cases", str(path), "--out", str(tmp_path / "r.json"))
    s = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert rc == 0 and (s["search"], s["heuristic"], s["model"], s["beam_width"]) == (
        "pbeam",
        "learned-policy",
        "lightsout7",
        1000,
    )
    assert s["solved_pct"] == 100.0 and s["optimal_pct"] == 100.0 and s["weight"] is None


def test_bench_ids_and_together(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cube2_cases: Path
) -> None:
    out_path = tmp_path / "r.json"
    rc, _, _ = run(
        capsys,
        "bench",
        "cube2",
        "--cases",
        str(cube2_cases),
        "--ids",
        "12:14",
        "--heuristic",
        "exact",
        "--together",
        "2",
        "--out",
        str(out_path),
    )
    report = json.loads(out_path.read_text())
    assert rc == 0 and [r["id"] for r in report["results"]] == [12, 13]
    assert "amortised" in report["summary"]["timing"]


def test_bench_reference_optimal_fills_missing_lengths(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cube2_cases: Path
) -> None:
    pytest.importorskip("puzzlezero.classic.optimal")
    out_path = tmp_path / "r.json"
    rc, _, _ = run(
        capsys,
        "bench",
        "cube2",
        "--cases",
        str(cube2_cases),
        "--ids",
        "11:12",
        "--search",
        "gbfs",
        "--heuristic",
        "exact",
        "--reference",
        "optimal",
        "--out",
        str(out_path),
    )
    (r,) = json.loads(out_path.read_text())["results"]
    p = make("cube2")
    case = json.loads(cube2_cases.read_text())["cases"][1]
    assert rc == 0 and "optimal_length" not in case
    assert r["optimal_length"] == int(exact_cube2(p)(p.parse(case["facelets"])[None])[0]) == r["length"]


def test_bench_bad_files(capsys: pytest.CaptureFixture[str], tmp_path: Path, cube2_cases: Path) -> None:
    rc, _, err = run(capsys, "bench", "cube3", "--cases", str(cube2_cases))
    assert rc == 2 and "holds 'cube2' cases, not 'cube3'" in err
    rc, _, err = run(capsys, "bench", "cube2", "--cases", str(tmp_path / "nope.json"))
    assert rc == 2 and "no such cases file" in err
    rc, _, err = run(capsys, "bench", "cube3", "--cases", str(tmp_path / "nope.json"))
    assert rc == 2 and "shipped case files for cube3: hard" in err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cases": [{"id": 0, "facelets": "UUU"}]}))
    rc, _, err = run(capsys, "bench", "cube2", "--cases", str(bad))
    assert rc == 2 and err.startswith("error: case 0:")


def test_parse_ids_and_summary() -> None:
    assert parse_ids("3:9") == (3, 9) and parse_ids(":5") == (None, 5) and parse_ids(None) is None
    with pytest.raises(PuzzleError, match="A:B"):
        parse_ids("3-9")
    rows = [
        {"solved": True, "length": 20, "optimal_length": 20, "nodes_generated": 100, "seconds": 1.0},
        {"solved": True, "length": 23, "optimal_length": 21, "nodes_generated": 300, "seconds": 3.0},
        {"solved": False, "length": None, "optimal_length": None, "nodes_generated": 600, "seconds": 6.0},
    ]
    s = summarize(rows)
    assert s["solved_pct"] == pytest.approx(66.67) and s["mean_length"] == 21.5 and s["optimal_pct"] == 50.0
    assert s["mean_optimal_length"] == 20.5 and s["nodes_per_second"] == 100.0 and s["median_seconds"] == 3.0
    assert s["max_nodes_generated"] == 600 and summarize([])["max_nodes_generated"] is None
    # excess 0 and 2 over the two solved cases: mean 1, sample deviation sqrt(2), standard error 1
    assert s["mean_excess"] == 1.0 and s["excess_stderr"] == 1.0
    assert s["length_stderr"] == 1.5  # lengths 20 and 23: deviation 3/sqrt(2), over sqrt(2)
    one = summarize(rows[:1])
    assert one["mean_excess"] == 0.0 and one["excess_stderr"] is None and one["length_stderr"] is None
    assert "reduced_pct" not in s and "mean_search_length" not in s
    rows[1]["search_length"] = 27  # the puzzle's algebra shortened this path from 27 moves to 23
    s = summarize(rows)
    assert (
        s["reduced_pct"] == pytest.approx(33.33)
        and s["mean_search_length"] == 23.5
        and s["mean_length"] == 21.5
    )


def test_by_seconds_reads_what_each_case_had_found_by_then() -> None:
    rows = [  # anytime: 26 moves at 0.4 s, 22 at 4 s (optimal 20), the search ending at 30 s
        {
            "solved": True,
            "length": 22,
            "optimal_length": 20,
            "nodes_generated": 1,
            "seconds": 30.0,
            "first_solution_seconds": 0.4,
            "improvements": [{"seconds": 0.4, "length": 26}, {"seconds": 4.0, "length": 22}],
        },
        {
            "solved": True,
            "length": 21,
            "optimal_length": 21,
            "nodes_generated": 1,
            "seconds": 30.0,
            "first_solution_seconds": 1.5,
            "improvements": [{"seconds": 1.5, "length": 21}],
        },
        {"solved": False, "length": None, "optimal_length": 19, "nodes_generated": 1, "seconds": 30.0},
    ]
    prof = {row["seconds"]: row for row in by_seconds(rows)}
    assert list(prof) == [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0]  # the instants below 30 s, then 30 s
    assert prof[0.5] == {
        "seconds": 0.5,
        "solved_pct": pytest.approx(33.33),
        "mean_length": 26.0,
        "mean_excess": 6.0,
        "optimal_pct": 0.0,
    }
    assert prof[2.0]["mean_length"] == 23.5 and prof[2.0]["mean_excess"] == 3.0  # (26-20 + 21-21) / 2
    assert prof[2.0]["optimal_pct"] == pytest.approx(33.33)
    assert prof[5.0]["mean_length"] == 21.5 and prof[5.0]["mean_excess"] == 1.0 == prof[30.0]["mean_excess"]
    assert summarize(rows)["by_seconds"] == by_seconds(rows)
    rows[2]["optimal_length"] = None  # an unknown optimum: lengths only
    assert "mean_excess" not in by_seconds(rows)[0] and by_seconds([]) == []
    early = [dict(rows[1], seconds=0.2, improvements=[{"seconds": 0.1, "length": 21}])]
    assert [r["seconds"] for r in by_seconds(early)] == [0.2]  # a run shorter than every instant
    one_search = {k: v for k, v in rows[1].items() if k not in ("improvements", "first_solution_seconds")}
    assert "by_seconds" not in summarize([one_search])  # no schedule: no profile


def test_bench_of_an_anytime_schedule_keeps_each_cases_improvements(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cases = tmp_path / "p8.json"
    state = [8, 6, 7, 2, 5, 4, 3, 0, 1]  # 31 moves from the goal
    cases.write_text(
        json.dumps({"puzzle": "puzzle8", "cases": [{"id": 0, "tiles": state, "optimal_length": 31}]})
    )
    out_path = tmp_path / "r.json"
    argv = ["bench", "puzzle8", "--cases", str(cases), "--heuristic", "pdb", "--stages", "0:1,1:20"]
    rc, out, _ = run(capsys, *argv, "--out", str(out_path))
    assert rc == 0 and "shortest found by" in out
    report = json.loads(out_path.read_text())
    (r,) = report["results"]
    steps = r["improvements"]
    assert steps[-1]["length"] == r["length"] == 31 and steps[0]["seconds"] == r["first_solution_seconds"]
    assert all(a["seconds"] <= b["seconds"] and a["length"] > b["length"] for a, b in pairwise(steps))
    last = report["summary"]["by_seconds"][-1]
    assert last["seconds"] == r["seconds"] and last["mean_excess"] == 0.0 and last["optimal_pct"] == 100.0


@pytest.mark.parametrize("name", ["cube3", "puzzle15", "lightsout7", "sokoban"])
def test_shared_benchmark_files_load(name: str) -> None:
    path = needs(BENCH_DIR / f"{name}.json", "the shared benchmark sets")
    p = make(name)
    cases = load_cases(p, path, (0, 5))
    assert [c.id for c in cases] == [0, 1, 2, 3, 4]
    raw = json.loads(path.read_text())["cases"][:5]
    for c, r in zip(cases, raw, strict=True):
        assert c.optimal_length == r.get("optimal_length")
        known = r.get("optimal_solution") or r.get("released_solution")
        if known is not None:  # the released solutions solve the states we read
            assert p.is_goal(p.apply_moves(c.state, p.parse_moves(known))[None])[0]


# ---- the shipped hard cube3 positions (no search runs on them here: they are slow) ----------------
SUPERFLIP_HTM = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
FOUR_SPOT = "F2 B2 U D' R2 L2 U D'"


def test_shipped_hard_cube3_cases_are_what_they_claim() -> None:
    from puzzlezero.puzzles.cube import corner_cubies, edge_cubies

    p = make("cube3")
    path = cases_path(p, "hard")
    assert path.name == "cube3_hard.json" and path.is_file()
    raw = {c["id"]: c for c in json.loads(path.read_text())["cases"]}
    flip, spot = load_cases(p, path)  # the bench reader: facelets read and validated
    assert (flip.id, flip.optimal_length, spot.id, spot.optimal_length) == (0, 24, 1, 26)
    for case in (flip, spot):  # facelets and scramble agree
        np.testing.assert_array_equal(case.state, p.parse(raw[case.id]["scramble"]))

    # superflip: every edge flipped in its own slot, every corner solved, centres fixed
    np.testing.assert_array_equal(flip.state, p.apply_moves(p.goal(), p.parse_moves(SUPERFLIP_HTM)))
    edges, flips = edge_cubies(flip.state[None])
    corners, twists = corner_cubies(flip.state[None], 3)
    assert edges[0].tolist() == list(range(12)) and flips[0].tolist() == [1] * 12
    assert corners[0].tolist() == list(range(8)) and twists[0].tolist() == [0] * 8
    assert len(p.parse_moves(SUPERFLIP_HTM)) == 28 and p.half_turn_length(p.parse_moves(SUPERFLIP_HTM)) == 20
    optimal = p.parse_moves(raw[0]["optimal_solution"])  # a 24-quarter-turn solution replays
    assert len(optimal) == 24 and p.is_goal(p.apply_moves(flip.state, optimal)[None])[0]

    # superflip * four-spot: a different state; the superflip is central, so the order does not matter
    four_spot = p.apply_moves(p.goal(), p.parse_moves(FOUR_SPOT))
    np.testing.assert_array_equal(spot.state, p.apply_moves(flip.state, p.parse_moves(FOUR_SPOT)))
    np.testing.assert_array_equal(spot.state, p.apply_moves(four_spot, p.parse_moves(SUPERFLIP_HTM)))
    assert len({p.format(s) for s in (p.goal(), four_spot, flip.state, spot.state)}) == 4
    _, spot_flips = edge_cubies(spot.state[None])
    assert spot_flips[0].tolist() == [1] * 12  # four-spot moves edges without flipping them


def test_a_cases_file_without_puzzle_keeps_its_optimal_lengths(tmp_path: Path) -> None:
    """Without ``"puzzle"`` the file holds cases of the puzzle named on the command line: their
    optimal lengths are read (they were dropped as if of another metric), and bad numbers are named."""
    rows = [
        {"id": 0, "scramble": "R U", "optimal_length": 2},
        {"id": 1, "scramble": "F", "optimal_length": 1},
    ]
    for data in ({"cases": rows}, rows):
        path = tmp_path / "cases.json"
        path.write_text(json.dumps(data))
        for name in ("cube3", "cube3htm"):
            assert [c.optimal_length for c in load_cases(make(name), path)] == [2, 1]
    path.write_text(json.dumps({"puzzle": "cube3", "cases": rows}))  # named: cube3htm counts another metric
    assert [c.optimal_length for c in load_cases(make("cube3htm"), path)] == [None, None]
    for bad in ({"puzzle": 3, "cases": rows}, {"cases": [{"scramble": "R", "optimal_length": "two"}]}):
        path.write_text(json.dumps(bad))
        with pytest.raises(PuzzleError, match="'puzzle' must be a puzzle name|'optimal_length' must be"):
            load_cases(make("cube3"), path)
