"""experiments/scramble_coverage.py: the benchmark's distances and the training distribution's, side by side."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import load_script


@pytest.fixture(scope="module")
def coverage():
    return load_script("experiments/scramble_coverage.py")


def figures(line: str) -> dict[str, float]:
    return {k: float(v) for k, v in re.findall(r"(mean|p10|p50|p90|max)\s+([\d.]+)", line)}


def test_benchmark_line_is_the_manhattan_distance_of_its_states(coverage, tmp_path, capsys):
    # 8-puzzle boards (0 = blank) whose Manhattan distances are 0, 2 and 4 by hand:
    # the goal; the blank walked left twice (tiles 7 and 8 one cell off); the blank walked left, up,
    # up, left (tiles 8, 5, 2 and 1 one cell off each)
    boards = [[1, 2, 3, 4, 5, 6, 7, 8, 0], [1, 2, 3, 4, 5, 6, 0, 7, 8], [0, 1, 3, 4, 2, 6, 7, 5, 8]]
    cases = tmp_path / "cases.json"
    cases.write_text(
        json.dumps({"puzzle": "puzzle8", "cases": [{"id": i, "tiles": b} for i, b in enumerate(boards)]})
    )
    code = coverage.main(["puzzle8", "--cases", str(cases), "--max-scramble", "5,100", "--n", "2000"])
    out = capsys.readouterr().out
    assert code == 0
    bench = next(line for line in out.splitlines() if line.startswith("benchmark"))
    assert "(3 states)" in bench
    f = figures(bench)
    assert f["mean"] == pytest.approx(2.0) and f["p50"] == 2.0 and f["max"] == 4.0
    k5, k100 = (figures(line) for line in out.splitlines() if line.startswith("training"))
    # five moves change the Manhattan distance by at most five; a hundred reach farther on average
    assert k5["max"] <= 5.0 and k100["mean"] > k5["mean"]
    shares = re.findall(r"benchmark median:\s+([\d.]+)%", out)
    assert len(shares) == 2 and float(shares[1]) > float(shares[0])
    # scramble_power 3 draws most depths near 1: the K = 100 states lie nearer the goal
    assert (
        coverage.main(
            [
                "puzzle8",
                "--cases",
                str(cases),
                "--max-scramble",
                "100",
                "--n",
                "2000",
                "--scramble-power",
                "3",
            ]
        )
        == 0
    )
    (k100_p3,) = (
        figures(line) for line in capsys.readouterr().out.splitlines() if line.startswith("training")
    )
    assert k100_p3["mean"] < k100["mean"] - 1


def test_a_puzzle_without_manhattan_gets_a_helpful_error(coverage, tmp_path, capsys):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": []}))
    assert coverage.main(["cube2", "--cases", str(cases)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no manhattan method" in err and "misplaced" in err


@pytest.mark.parametrize(
    ("given", "said"), [("0,5", "expected positive whole numbers"), ("5,abc", "comma-separated")]
)
def test_bad_depth_list_is_a_usage_error(coverage, capsys, given, said):
    with pytest.raises(SystemExit) as exc:
        coverage.main(["puzzle8", "--cases", "x.json", "--max-scramble", given])
    assert exc.value.code == 2
    assert said in capsys.readouterr().err
