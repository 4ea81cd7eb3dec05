"""``puzzlezero report merge`` (reports/merge.py): bench reports of one run made in parts, joined."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.reports.merge import merge_reports


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def parts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[Path], Path]:
    """A case file of 8-puzzle boards, its bench run in two parts and in one."""
    p = make("puzzle8")
    boards = p.scramble(np.random.default_rng(2), 4, (6, 12)).reshape(4, -1)
    cases = tmp_path / "p8.json"
    cases.write_text(
        json.dumps(
            {"puzzle": "puzzle8", "cases": [{"id": i, "tiles": b.tolist()} for i, b in enumerate(boards)]}
        )
    )
    bench = ["bench", "puzzle8", "--cases", str(cases), "--heuristic", "misplaced"]
    files = []
    for ids in ("0:2", "2:4"):
        files.append(tmp_path / f"part{ids[0]}.json")
        assert run(capsys, *bench, "--ids", ids, "--out", str(files[-1]))[0] == 0
    whole = tmp_path / "whole.json"
    assert run(capsys, *bench, "--out", str(whole))[0] == 0
    return cases, files, whole


def test_the_parts_joined_are_the_whole_run(parts, tmp_path, capsys) -> None:
    _, files, whole = parts
    out = tmp_path / "merged.json"
    rc, printed, _ = run(
        capsys, "report", "merge", *map(str, files), "--out", str(out), "--commit", "abc1234"
    )
    assert rc == 0 and printed.startswith(f"{out}: 4 cases from 2 parts, 100.0% solved")
    merged, alone = json.loads(out.read_text()), json.loads(whole.read_text())
    assert [r["id"] for r in merged["results"]] == [r["id"] for r in alone["results"]]
    s, t = merged["summary"], alone["summary"]
    for key in ("cases", "solved_pct", "mean_length", "mean_optimal_length", "search", "heuristic", "puzzle"):
        assert s[key] == t[key], key
    assert s["parts"] == 2 and s["hardware"] == t["hardware"]
    assert s["commit"] == (t.get("commit") or "abc1234")  # --commit only where a part does not say


def test_parts_of_different_runs_are_refused(parts, tmp_path, capsys) -> None:
    _, files, _ = parts
    reports = [json.loads(f.read_text()) for f in files]
    with pytest.raises(PuzzleError, match="a case appears in two parts: 0, 1"):
        merge_reports([reports[0], reports[0]])
    reports[1]["summary"]["heuristic"] = "manhattan"
    with pytest.raises(PuzzleError, match="different settings: heuristic"):
        merge_reports(reports)
    with pytest.raises(PuzzleError, match="no reports to merge"):
        merge_reports([])
    with pytest.raises(PuzzleError, match="not a bench report"):
        merge_reports([{"results": []}])
    (tmp_path / "bad.json").write_text("{")
    rc, _, err = run(capsys, "report", "merge", str(files[0]), str(tmp_path / "bad.json"), "--out", "x.json")
    assert rc == 2 and "bad.json: unreadable bench report" in err
