"""Solving, valuing and benching with the shipped models without the train extra (no PyTorch, no
matplotlib), through the ``puzzlezero`` command line and the API; training says which extra it
needs instead of failing with a traceback."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sysconfig
from pathlib import Path

import pytest

import puzzlezero
from puzzlezero.model_folders import shipped_models
from tests.core_install.helpers import HAS_TRAIN_EXTRA, TRAIN_EXTRA, cli, cli_json, python

CUBE_SCRAMBLE = "R U R' F2 D L'"
#: a 15-puzzle 60 random moves from the goal (rows of four, 0 the blank)
PUZZLE15 = "2 9 8 3 1 5 7 4 6 11 14 12 13 0 10 15"


def replays(puzzle_name: str, start_text: str, solution: list[str], *, scramble: bool = False) -> bool:
    p = puzzlezero.make(puzzle_name)
    start = p.apply_moves(p.goal(), p.parse_moves(start_text)) if scramble else p.parse(start_text)
    end = p.apply_moves(start, p.parse_moves(solution))
    return bool(p.is_goal(end[None])[0])


@pytest.mark.skipif(HAS_TRAIN_EXTRA, reason="checks the core install (scripts/test_core_install.sh)")
def test_the_core_install_has_no_train_extra_and_runs_the_installed_package() -> None:
    assert [m for m in TRAIN_EXTRA if importlib.util.find_spec(m) is not None] == []
    installed = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    package = Path(puzzlezero.__file__).resolve().parent
    assert package.parent in installed, f"puzzlezero imported from {package}, not the installed package"
    assert {"cube3", "puzzle15"} <= set(shipped_models())


def test_version_is_the_package_version(tmp_path: Path) -> None:
    done = cli("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["puzzlezero", puzzlezero.__version__]
    assert importlib.metadata.version("puzzlezero") == puzzlezero.__version__


def test_solve_a_cube_scramble_with_the_shipped_model(tmp_path: Path) -> None:
    out = cli_json("solve", "cube3", CUBE_SCRAMBLE, "--time-limit", "20", "--no-anytime", cwd=tmp_path)
    assert out["solved"] is True
    assert replays("cube3", CUBE_SCRAMBLE, out["solution"], scramble=True)
    assert 1 <= out["length"] <= 14


def test_solve_a_15_puzzle_with_the_shipped_model(tmp_path: Path) -> None:
    out = cli_json("solve", "puzzle15", PUZZLE15, "--time-limit", "20", "--no-anytime", cwd=tmp_path)
    assert out["solved"] is True
    assert replays("puzzle15", PUZZLE15, out["solution"])


def test_value_of_a_cube_scramble(tmp_path: Path) -> None:
    out = cli_json("value", "cube3", "R U R' F2", "--no-optimal", cwd=tmp_path)
    # four moves from solved: the network's estimate is near 4 (DeepCubeA's are within a move or two)
    assert 2.0 <= out["value"] <= 7.0


def test_bench_on_generated_cases(tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    made = cli(
        "cases",
        "make",
        "puzzle15",
        "--n",
        "3",
        "--depth",
        "20",
        "30",
        "--seed",
        "1",
        "--out",
        str(cases),
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    report = cli_json("bench", "puzzle15", "--cases", str(cases), "--time-limit", "20", cwd=tmp_path)
    assert [r["solved"] for r in report["results"]] == [True, True, True]


def test_the_api_solves_and_values_without_torch(tmp_path: Path) -> None:
    out = python(
        "import json\n"
        "import puzzlezero as pz\n"
        f"r = pz.solve('cube3', {CUBE_SCRAMBLE!r}, time_limit=20, anytime=False)\n"
        f"v = pz.value('puzzle15', {PUZZLE15!r}, optimal=False)\n"
        "print(json.dumps({'solved': r.solved, 'solution': list(r.solution), 'value': float(v.value)}))\n",
        cwd=tmp_path,
    )
    assert out["solved"] is True
    assert replays("cube3", CUBE_SCRAMBLE, out["solution"], scramble=True)
    assert out["value"] > 10  # 60 random moves from the goal: far from solved


def test_training_names_the_extra_it_needs(tmp_path: Path) -> None:
    done = cli("train", "cube2", "--out", str(tmp_path / "run"), "--max-minutes", "0.1", cwd=tmp_path)
    assert done.returncode in (1, 2)
    assert "Traceback" not in done.stderr
    assert 'pip install "puzzlezero[train]"' in done.stderr
    assert not (tmp_path / "run" / "checkpoint.pt").exists()
