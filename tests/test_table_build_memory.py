"""Table builds bounded in memory: a pattern database whose build would pass the memory budget
is not started (:func:`puzzlezero.budget.check_build`), whether it is built in place, in a
process of its own within a solve's time limit, or by ``puzzlezero pdb build``; the estimate is
the build's own arithmetic (the 15-puzzle's: 4.3 GiB, 4.8 GB measured for the whole process)."""

from __future__ import annotations

import math
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.budget import ENV, memory_budget, use_memory_budget
from puzzlezero.classic.optimal import pdb_within, table_build_bytes
from puzzlezero.classic.optimal.cube_pdb import KORF
from puzzlezero.classic.optimal.cube_pdb import build_bytes as cube_build_bytes
from puzzlezero.classic.optimal.sliding_pdb import build_bytes, load_sliding_pdb
from puzzlezero.classic.optimal.sliding_pdb_build import _VALUE_SHIFT
from puzzlezero.cli.main import main
from puzzlezero.errors import MemoryBudgetError
from puzzlezero.search import clock
from puzzlezero.solver import solve
from puzzlezero.storage import build_in_process


def writes_budget(path: str) -> None:  # a spawned build's process: what budget it sees
    Path(path).write_text(str(memory_budget()))


def takes_too_much(path: str) -> None:  # a build without an estimate that needs 6 GiB
    table = np.ones(6 << 30, dtype=np.uint8)
    Path(path).write_text(str(table.size))


def test_the_estimates_are_the_builds_arithmetic() -> None:
    """One int64 word a placement and a byte of table for the pattern being built, the tables
    built before it beside it, then all joined: worked out by hand per board."""
    # 8-puzzle: two patterns of 4 tiles, 9!/5! = 3,024 placements each, neither the other's mirror
    assert build_bytes(3) == max(9 * 3024, 3024 + 9 * 3024, 2 * 6048) == 30_240
    # 15-puzzle: the 8 tiles first (518,918,400), then the 7 (57,657,600)
    assert build_bytes(4) == max(9 * 518_918_400, 518_918_400 + 9 * 57_657_600, 2 * 576_576_000)
    # 24-puzzle: 6-6-6-6 with one mirror pair, so three tables of 25!/19! = 127,512,000
    six = math.perm(25, 6)
    assert build_bytes(5) == 2 * six + 9 * six == 1_402_632_000
    # 35-puzzle: two words a placement (boards of more than 28 cells); seven patterns of 5 tiles
    assert build_bytes(6) > 17 * math.perm(36, 5)
    for n in (9, 16, 25, 36, 49):  # the word size agrees with the build's layout
        assert (2 * n <= 56) == (2 * n <= _VALUE_SHIFT)
    assert cube_build_bytes() == 2 * (88_179_840 + 2 * 42_577_920) == 2 * sum(p.size for p in KORF)
    assert table_build_bytes(make("puzzle15")) == build_bytes(4)
    assert table_build_bytes(make("cube3")) == cube_build_bytes()
    assert table_build_bytes(make("cube2")) is None  # 3.7 million entries, built in place


def test_a_build_above_the_budget_is_not_started(empty_cache: Path) -> None:
    """In place: the 8-puzzle's databases need 29.5 KiB; under a budget of 20,000 bytes they are
    refused by name and nothing is saved; under 1 MiB they build and answer."""
    with use_memory_budget(20_000), pytest.raises(MemoryBudgetError) as err:
        load_sliding_pdb(3)
    assert "needs about 29.5 KiB (estimated), above the memory budget of 19.5 KiB" in str(err.value)
    assert "raise --memory-budget" in str(err.value)
    assert list(empty_cache.rglob("*.npz")) == []
    with use_memory_budget("1MiB"):
        pdb = load_sliding_pdb(3)
    p = make("puzzle8")
    start = p.apply_moves(p.goal(), p.parse_moves("U L D R R U L L D"))
    assert 0 < int(pdb.values(start[None])[0]) <= 9  # admissible: at most the scramble's 9 moves
    assert len(list(empty_cache.rglob("*.npz"))) == 1


def test_a_solve_is_refused_before_any_process_starts(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 24-puzzle's databases (1.3 GiB at the peak of their build) under a budget of 1 GiB:
    the solve stops at once, naming the estimate and the budget; no process is started."""
    import multiprocessing as mp

    monkeypatch.setattr(mp, "get_context", lambda *a: pytest.fail("a build's process was started"))
    p = make("puzzle24")
    start = p.scramble(np.random.default_rng(0), 1, 40)[0]
    with use_memory_budget("1GiB"):
        with pytest.raises(MemoryBudgetError, match=r"pattern database of puzzle24 needs about 1\.3 GiB"):
            pdb_within(p, clock.now() + 60.0)
        with pytest.raises(MemoryBudgetError, match="above the memory budget of 1.0 GiB"):
            solve(p, start, search="optimal", time_limit=60)
    assert list(empty_cache.rglob("*.npz")) == []


def test_a_spawned_build_keeps_the_budget_of_the_process_that_started_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A budget set in this process only (not in the environment) is the new process's too, so
    that the builds inside it check against the same."""
    monkeypatch.setenv(ENV, "")
    out = tmp_path / "budget.txt"
    with use_memory_budget("3GiB"):
        build_in_process(writes_budget, (str(out),), seconds=60.0, key="b", what="t", command="CMD")
    assert out.read_text() == str(3 << 30)
    assert multiprocessing.active_children() == []


def test_a_spawned_build_without_an_estimate_is_stopped_at_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build whose peak is not known before (a group table's) runs in at most the budget and
    1 GiB of address space: one that asks for 6 GiB under a budget of 1 GiB is stopped there, by
    name, and leaves nothing (without the limit the 6 GiB would be there: 23 GiB machines)."""
    monkeypatch.setenv(ENV, "")
    out = tmp_path / "table.txt"
    with use_memory_budget("1GiB"), pytest.raises(MemoryBudgetError) as err:
        build_in_process(
            takes_too_much, (str(out),), seconds=60.0, key="m", what="the big table", command="CMD"
        )
    assert "building the big table ran out of memory at the memory budget of 1.0 GiB" in str(err.value)
    assert not out.exists() and multiprocessing.active_children() == []


def test_the_window_pass_above_the_budget_is_left_out_and_the_answer_kept(
    empty_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cube3's windows read Korf's databases (330.6 MiB to build): under a budget of 100 MiB the
    beam's answer is kept and stderr says why the pass was left out."""
    p = make("cube3")
    start = p.scramble(np.random.default_rng(5), 1, 12)[0]
    with use_memory_budget("100MiB"):
        r = solve(p, start, search="beam", fallback=False, windows=14, time_limit=20)
    assert r.solved and bool(p.is_goal(p.apply_moves(start, list(r.actions))[None])[0])
    err = capsys.readouterr().err
    assert "needs about 330.6 MiB" in err and "the window pass is left out" in err
    assert list(empty_cache.rglob("*.npz")) == []


def test_pdb_build_takes_a_memory_budget(empty_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``puzzlezero pdb build puzzle15 --memory-budget 2GiB``: refused at once, by name, exit 2."""
    assert main(["pdb", "build", "puzzle15", "--memory-budget", "2GiB"]) == 2
    err = capsys.readouterr().err
    assert "needs about 4.3 GiB (estimated), above the memory budget of 2.0 GiB" in err
    assert list(empty_cache.rglob("*.npz")) == []
