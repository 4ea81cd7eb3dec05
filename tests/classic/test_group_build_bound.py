"""A group table's build is bounded by the solve's deadline: the table of a large puzzle (the
19x19x19's 2,166 stickers) takes far longer than a time limit, so a build with a deadline runs
in a process of its own, stopped at the deadline, and the solve says so by name."""

from __future__ import annotations

import multiprocessing
import time

import numpy as np
import pytest

from puzzlezero.classic import group
from puzzlezero.classic.group import group_table, solve_group
from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle, family_puzzle
from puzzlezero.search import clock
from puzzlezero.solver import solve
from puzzlezero.solver.tables import prepare_solve_tables
from puzzlezero.storage import cache_dir


def never_ends(*job: object) -> None:  # a build's process that does not finish
    while True:
        time.sleep(1)


def _rotor(name: str, from_file: bool = False) -> PermutationPuzzle:
    """A puzzle of its own name (so no table of it is cached or shipped): a 5-cycle and a 3-cycle
    that share a position, which make the alternating group of 7 positions (2,520 elements)."""
    moves = {"a": [1, 2, 3, 4, 0, 5, 6], "b": [0, 1, 2, 3, 5, 6, 4]}
    defn = Definition.from_dict(
        {
            "format": "puzzlezero-permutation/1",
            "name": name,
            "positions": 7,
            "moves": moves,
            "goal": list(range(7)),
        }
    )
    return PermutationPuzzle(defn, from_file=from_file)


@pytest.fixture(autouse=True)
def _no_build_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rotor's 7 positions would be built in place, in milliseconds: here it stands for a
    puzzle whose build needs a process of its own."""
    monkeypatch.setattr(group, "IN_PLACE_POSITIONS", 0)


def _cached(p: PermutationPuzzle) -> list[str]:
    return [f.name for f in cache_dir("group").glob(f"{p.name}-*.npz")]


def test_a_solve_left_no_time_for_the_table_answers_time_limit_and_saves_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    p = _rotor("rotor-no-time", from_file=True)  # named by the file the user has
    state = p.scramble(np.random.default_rng(0), 1, 12)[0]
    r = solve_group(p, state, deadline=clock.now() - 1.0)
    assert not r.solved and r.status == "time limit" and r.actions == ()
    err = capsys.readouterr().err
    assert (
        "the group table of rotor-no-time is not built" in err
        and "puzzlezero pdb build FILE --kind group" in err
    )
    assert _cached(p) == []
    # without a deadline the same solve builds the table (in this process) and answers
    r = solve_group(p, state)
    assert r.solved and bool(p.is_goal(p.apply_moves(state, list(r.actions))[None])[0])
    assert len(_cached(p)) == 1


def test_a_build_within_its_deadline_is_loaded_from_its_process() -> None:
    p = _rotor("rotor-in-time")
    table = group_table(p, deadline=clock.now() + 300.0)  # a spawned build, generous
    assert table.order == 2520
    assert len(_cached(p)) == 1
    state = p.scramble(np.random.default_rng(1), 1, 12)[0]
    r = solve_group(p, state)
    assert r.solved and bool(p.is_goal(p.apply_moves(state, list(r.actions))[None])[0])


def test_the_19x19x19s_solve_ends_at_its_time_limit(capsys: pytest.CaptureFixture[str]) -> None:
    """For real: its table (2,166 stickers; no table of it ships) takes far longer than any time
    limit (the chain alone 22 s on a 2-core CPU, then Minkwitz's words), and a solve of 10 s stops
    it and says so (the build starts after the solve's own set-up, which a loaded machine has taken
    more than 3 s to do)."""
    p = family_puzzle("cube_19/19/19")
    state = p.scramble(np.random.default_rng(0), 1, 20)[0]
    t0 = time.monotonic()
    r = solve(p, state, search="group", fallback=False, time_limit=10)
    assert not r.solved and r.status == "time limit"
    assert time.monotonic() - t0 < 60  # stopped, not run to its end (hours)
    assert "not built within the time limit" in capsys.readouterr().err
    assert multiprocessing.active_children() == []


def test_a_table_whose_build_runs_out_of_memory_answers_memory_limit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A group table's size is not known before its chain is built: its process may take the
    memory budget's worth of address space and no more (tests/test_table_build_memory.py stops a
    real one there). A build stopped so leaves the state unsolved, "memory limit", by name."""
    from puzzlezero.errors import MemoryBudgetError

    def out_of_memory(*args: object, what: str, **kwargs: object) -> None:
        raise MemoryBudgetError(f"building {what} ran out of memory at the memory budget of 1.0 GiB")

    monkeypatch.setattr(group, "build_in_process", out_of_memory)
    p = _rotor("rotor-no-memory")
    state = p.scramble(np.random.default_rng(2), 1, 12)[0]
    r = solve_group(p, state, deadline=clock.now() + 300.0)
    assert not r.solved and r.status == "memory limit" and r.actions == ()
    assert "the group table of rotor-no-memory ran out of memory" in capsys.readouterr().err
    assert _cached(p) == []
    # building every table the puzzle has (serve --build-tables, pdb build --kind all) says so too,
    # not "no group table"
    from puzzlezero.classic import build_tables

    with pytest.raises(MemoryBudgetError, match="ran out of memory"):
        build_tables(p, "all", deadline=clock.now() + 300.0)


def test_a_bench_goes_on_without_a_table_not_built_in_time(capsys: pytest.CaptureFixture[str]) -> None:
    from puzzlezero.solver.resolve import resolve_options

    p = _rotor("rotor-bench")
    lines = prepare_solve_tables(p, resolve_options(p, search="group"), seconds=0)
    assert any(
        "not built" in line and "a solve with a longer time limit tries again" in line for line in lines
    )
    assert _cached(p) == []


def test_a_build_stopped_once_is_not_started_again_with_no_more_time(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bench's cases one after the other: the first case's build is stopped at its limit; the
    next case, with no more time, answers at once, and one with more time tries again."""
    from puzzlezero import storage

    p = _rotor("rotor-stopped")
    monkeypatch.setattr(storage, "_STOPPED", {})
    monkeypatch.setattr(group, "_build_and_save", never_ends)  # a chain that does not end
    state = p.scramble(np.random.default_rng(0), 1, 12)[0]
    said = []
    for limit in (1.0, 1.0, 2.0):
        r = solve_group(p, state, time_limit=limit)
        assert not r.solved and r.status == "time limit"
        said.append(capsys.readouterr().err)
    assert "not built within the time limit (1 s)" in said[0]
    assert "was not built in 1 s before, and this solve has not much more time" in said[1]
    assert "not built within the time limit (2 s)" in said[2]  # started again: 2 s >= 1.25 x 1 s
    assert multiprocessing.active_children() == []
    assert _cached(p) == []


def test_a_small_puzzle_builds_its_table_in_place_even_with_no_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At most 24 positions (the 2x2x2's stickers): in place, in under a second, and the state is
    answered; a process of its own would take longer to start than a short time limit."""
    monkeypatch.setattr(group, "IN_PLACE_POSITIONS", 24)
    monkeypatch.setattr(group, "build_in_process", lambda *a, **k: pytest.fail("a process was started"))
    p = _rotor("rotor-in-place")
    state = p.scramble(np.random.default_rng(2), 1, 12)[0]
    r = solve_group(p, state, deadline=clock.now() - 1.0)
    assert r.solved and bool(p.is_goal(p.apply_moves(state, list(r.actions))[None])[0])
    assert len(_cached(p)) == 1
