"""Bench plots (``bench --plot``, ``plot-bench``) and the figure writer the training plot shares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.plots import bench_series, plot_bench

REPORT = {
    "summary": {"puzzle": "cube2", "search": "bwas", "weight": 0.6, "batch": 100, "solved_pct": 66.67},
    "results": [
        {
            "id": 3,
            "solved": True,
            "length": 9,
            "optimal_length": 7,
            "seconds": 0.5,
            "first_solution_seconds": 0.1,
        },
        {"id": 4, "solved": False, "length": None, "optimal_length": 11, "seconds": 2.0},
        {"id": 5, "solved": True, "length": 6, "optimal_length": None, "seconds": 0.25},
    ],
}


def test_series_are_the_report_points() -> None:
    by_opt = bench_series(REPORT)
    assert by_opt["solved"] == [(7, 9)]  # case 5 has no optimum: not on the length-vs-optimal axes
    assert by_opt["failed"] == [(11, 0)]
    assert by_opt["seconds"] == [(3, 0.5), (4, 2.0), (5, 0.25)]
    assert by_opt["unsolved_seconds"] == [(4, 2.0)] and by_opt["first"] == [(3, 0.1)]
    by_id = bench_series(REPORT, by_optimal=False)
    assert by_id["solved"] == [(3, 9), (5, 6)] and by_id["failed"] == [(4, 0)]


def test_png_and_svg(tmp_path: Path) -> None:
    png = plot_bench([REPORT], tmp_path / "a.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    other = json.loads(json.dumps(REPORT))
    for r in other["results"]:
        r["optimal_length"] = None
    svg = plot_bench([REPORT, other], tmp_path / "sub" / "b.svg", labels=["one", "two"], title="t")
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert not list(tmp_path.glob("**/*.tmp*"))  # written atomically


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(PuzzleError, match=r"\.png or \.svg"):
        plot_bench([REPORT], tmp_path / "a.pdf")
    with pytest.raises(PuzzleError, match="2 labels for 1 reports"):
        plot_bench([REPORT], tmp_path / "a.png", labels=["x", "y"])
    with pytest.raises(PuzzleError, match="non-empty 'results'"):
        plot_bench([{"summary": {}, "results": []}], tmp_path / "a.png")
    assert not (tmp_path / "a.png").exists()


def test_cli_bench_plot_and_plot_bench(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(
        json.dumps({"puzzle": "cube2", "cases": [{"id": 0, "scramble": "R U", "optimal_length": 2}]})
    )
    report, fig = tmp_path / "r.json", tmp_path / "r.svg"
    args = ["bench", "cube2", "--cases", str(cases), "--heuristic", "pdb", "--out", str(report)]
    assert main([*args, "--plot", str(fig)]) == 0
    assert f"plot written to {fig}" in capsys.readouterr().out and "<svg" in fig.read_text()
    both = tmp_path / "both.png"
    assert (
        main(["plot-bench", str(report), str(report), "--out", str(both), "--label", "a", "--label", "b"])
        == 0
    )
    assert both.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    # a bad suffix fails before the bench runs; a bad report is named
    assert main([*args, "--plot", str(tmp_path / "r.jpg")]) == 2
    assert "written as .png or .svg" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    assert main(["plot-bench", str(bad), "--out", str(both)]) == 2
    assert f"{bad} is not a bench report" in capsys.readouterr().err


def test_training_plot_as_svg(tmp_path: Path) -> None:
    from puzzlezero.train.report import plot_run

    run = tmp_path / "run"
    run.mkdir()
    record = {"type": "train", "phase": "davi", "iteration": 1, "samples": 100, "loss": 1.0}
    (run / "log.jsonl").write_text(json.dumps(record) + "\n")
    out = plot_run(run, tmp_path / "training.svg")
    assert "<svg" in out.read_text()
    with pytest.raises(PuzzleError):
        plot_run(run, tmp_path / "training.gif")
