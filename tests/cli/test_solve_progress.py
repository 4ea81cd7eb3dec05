"""`solve` shows each solution as the solver reports it: plain lines when standard output is not a
terminal, a live status line on one; --quiet prints only the answer, --json only JSON; Ctrl-C
keeps the best solution found so far."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from puzzlezero import make, solver
from puzzlezero.cli.main import main
from puzzlezero.cli.progress import SolutionFeed
from puzzlezero.solver import HeuristicSpec, Improvement, verify
from tests.search.test_search import bfs_distances

#: a puzzle8 board 24 moves from the goal whose greedy first stage finds a longer way
BOARD = "8 6 7 2 5 4 3 0 1"


def noisy_puzzle8(puzzle: Any) -> Any:
    """The exact distance, misled by a term that sends greedy search on long detours."""
    dist = bfs_distances(make("puzzle8"))
    return lambda s: (
        np.array([dist[x.tobytes()] for x in s], np.float32) + 4.0 * ((s * np.arange(9)).sum(1) % 5)
    )


@pytest.fixture(autouse=True)
def noisy_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(solver.HEURISTICS, "noisy", HeuristicSpec(noisy_puzzle8))
    solver.get_heuristic.cache_clear()


ARGS = ("solve", "puzzle8", BOARD, "--heuristic", "noisy", "--stages", "0:1,1:50", "--no-fallback")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def _replays(text: str) -> bool:
    p = make("puzzle8")
    return bool(verify(p, p.parse(BOARD)[None], [p.parse_moves(text)]).all())


def test_piped_solve_prints_each_solution_as_a_line_before_the_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, out, _ = run(capsys, *ARGS)
    lines = out.splitlines()
    found = [line for line in lines if line.startswith("found ")]
    answer = lines.index(next(line for line in lines if line.startswith("solution: ")))
    assert rc == 0 and len(found) >= 2 and lines[: len(found)] == found and answer == len(found)
    lengths = [int(line.split()[1]) for line in found]
    assert lengths == sorted(set(lengths), reverse=True) and "(stage 1)" in found[0]
    moves = [line.split("): ", 1)[1] for line in found]
    assert all(_replays(m) for m in moves)
    assert lines[answer] == f"solution: {moves[-1]}" and f"length:   {lengths[-1]} moves" in out


def test_quiet_prints_only_the_moves_and_json_only_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rc, out, _ = run(capsys, *ARGS, "--quiet")
    assert rc == 0 and len(out.splitlines()) == 1 and _replays(out.strip())
    quiet = out.strip()
    rc, out, _ = run(capsys, *ARGS, "--json", "--out", str(tmp_path / "r.json"))
    data = json.loads(out)  # nothing else on stdout
    assert rc == 0 and " ".join(data["solution"]) == quiet
    assert json.loads((tmp_path / "r.json").read_text()) == data
    rc, out, err = run(
        capsys, "solve", "puzzle8", BOARD, "--heuristic", "noisy", "--max-nodes", "10", "--no-fallback", "-q"
    )
    assert rc == 1 and out == "" and "not solved within budget (node limit)" in err


def test_on_a_terminal_a_status_line_runs_and_each_solution_is_printed_above_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    p = make("puzzle8")
    found = Improvement(0, ("R", "D"), 2, 2.0, 0.5, 100, "stage 1")
    with SolutionFeed(p, "puzzle8, bwas", live=True) as feed:
        assert feed._status is not None  # the status line runs while the search does
        feed(found)
    assert feed._status is None and feed.best == found
    assert "found 2 moves after 0.50 s (stage 1): R D" in capsys.readouterr().out
    silent = SolutionFeed(p, "puzzle8, bwas", show=False)
    with silent:
        silent(found)
    assert silent.best == found and capsys.readouterr().out == ""


def test_ctrl_c_prints_the_best_solution_so_far(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: Any, on_solution: Any, **kw: Any) -> Any:
        on_solution(Improvement(0, ("R", "D"), 2, 2.0, 0.5, 100, "stage 1"))
        raise KeyboardInterrupt

    monkeypatch.setattr(solver, "solve_many", interrupted)
    rc, out, _ = run(capsys, *ARGS)
    assert rc == 130 and "solution: R D\n" in out and "interrupted" in out
    rc, out, _ = run(capsys, *ARGS, "--json")
    assert rc == 130 and json.loads(out)["interrupted"] and json.loads(out)["solution"] == ["R", "D"]

    def nothing_yet(*args: Any, **kw: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(solver, "solve_many", nothing_yet)
    rc, out, err = run(capsys, *ARGS)
    assert rc == 130 and out == ""
