"""Tables built inside a solve's time limit: a build runs in a process of its own, stopped at the
solve's deadline (:func:`puzzlezero.storage.build_in_process`), and a solve that finds a table
missing says so by name and answers "time limit" instead of spending minutes and gigabytes past
its limit (the 24-puzzle's pattern database: 40 s and 1.5 GB)."""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import make, storage
from puzzlezero.classic.optimal import sliding_pdb
from puzzlezero.errors import MissingTableError, ModelFileError, PuzzleError, TableTimeoutError
from puzzlezero.solver import solve
from puzzlezero.solver.resolve import resolve_options
from puzzlezero.solver.tables import table_kinds
from puzzlezero.storage import build_in_process, build_once, table_builds_deferred


def never_ends(*args: object) -> None:  # a build's process that does not finish
    while True:
        time.sleep(1)


def fails(*args: object) -> None:
    raise RuntimeError("a defect in the build")


def writes(path: str) -> None:
    Path(path).write_text("built")


def _build(key: str, target: object, args: tuple[object, ...] = (), seconds: float = 60.0) -> None:
    build_in_process(target, args, seconds=seconds, key=key, what="the table", command="CMD")  # type: ignore[arg-type]


def test_a_build_still_running_at_its_limit_is_stopped_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage, "_STOPPED", {})
    with pytest.raises(TableTimeoutError, match=r"not built within the time limit \(1 s\).*: CMD") as err:
        _build("slow", never_ends, seconds=1.0)
    assert err.value.seconds == 1.0
    assert multiprocessing.active_children() == []  # its process is gone, not left running
    # the same build with no more time is not started again; with 1.25 times as long it is
    with pytest.raises(TableTimeoutError, match="not built in 1 s before"):
        _build("slow", never_ends, seconds=1.2)
    with pytest.raises(TableTimeoutError, match=r"within the time limit \(1 s\)"):
        _build("slow", never_ends, seconds=1.25)


def test_a_build_left_no_time_is_not_started(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage, "_STOPPED", {})
    with pytest.raises(TableTimeoutError, match="left no time to build it; build it once with: CMD"):
        _build("none", never_ends, seconds=0.0)


def test_a_build_whose_process_fails_is_an_error_with_its_exit_code() -> None:
    with pytest.raises(PuzzleError, match="building the table failed .*exited with code 1"):
        _build("fails", fails)


def test_a_build_that_ends_in_time_leaves_its_file(tmp_path: Path) -> None:
    target = tmp_path / "table.txt"
    _build("writes", writes, (str(target),))
    assert target.read_text() == "built"  # written by the spawned process


def test_a_daemonic_process_builds_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemonic process may start no process of its own: it builds in place, unbounded."""

    class Daemon:
        daemon = True

    monkeypatch.setattr(multiprocessing, "current_process", lambda: Daemon())
    ran: list[tuple[object, ...]] = []
    _build("daemon", lambda *args: ran.append(args), (1, 2), seconds=0.0)
    assert ran == [(1, 2)]  # run here: a spawned process could not have filled this list


def test_deferred_builds_raise_in_this_thread_only(tmp_path: Path) -> None:
    path = tmp_path / "t.npz"
    built: list[str] = []

    def load() -> str:
        if not path.exists():
            raise ModelFileError("missing")
        return path.read_text()

    def build() -> str:
        path.write_text("table")
        built.append(threading.current_thread().name)
        return "table"

    with table_builds_deferred():
        with pytest.raises(MissingTableError, match="the table is not built; build it with: CMD"):
            build_once(path, load, build, what="the table", command="CMD")
        other = threading.Thread(
            target=build_once, args=(path, load, build), kwargs={"what": "t", "command": "C"}
        )
        other.start()
        other.join()
        assert built == [other.name]  # another thread builds as before
        assert build_once(path, load, build, what="the table", command="CMD") == "table"  # there: loads
    assert not storage.table_builds_forbidden()


def test_the_optimal_solve_and_the_pdb_heuristic_read_pattern_databases() -> None:
    """So bench and serve build them before the clock, and a solve within its time limit."""
    p = make("puzzle15")
    assert table_kinds(resolve_options(p, search="optimal")) == ["pdb"]
    assert "pdb" in table_kinds(resolve_options(p, search="bwas", heuristic="pdb"))
    assert "pdb" not in table_kinds(resolve_options(p))


def test_a_missing_pattern_database_is_built_in_its_own_process(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 8-puzzle's databases, taken for big ones: built by the spawned process, not by this
    one (whose builder is broken here), then loaded, and the solve answers optimally."""

    import puzzlezero.classic.optimal as optimal

    def broken(*args: object) -> None:
        raise AssertionError("built in the solving process")

    monkeypatch.setattr(sliding_pdb, "build_pattern", broken)
    monkeypatch.setattr(optimal, "IN_PLACE_ENTRIES", 0)  # as if it were a big one
    from puzzlezero.classic.optimal.bidirectional_bfs import solve_bfs

    p = make("puzzle8")
    start = p.scramble(np.random.default_rng(3), 1, 60)[0]
    shortest = solve_bfs(p, start, max_nodes=10**6)  # breadth first from both ends: no table
    assert shortest.solved and shortest.length is not None and shortest.length >= 12
    r = solve(p, start, search="optimal", time_limit=120)
    assert r.solved and r.length == shortest.length
    assert bool(p.is_goal(p.apply_moves(start, list(r.actions))[None])[0])
    assert len(list((empty_cache / "pdb").glob("puzzle8_*.npz"))) == 1


def test_small_tables_are_built_in_place_within_a_short_limit(empty_cache: Path) -> None:
    """The 8-puzzle's databases (6,048 entries) and cube2's table (3.7 million) take under a
    second: a solve of 1 s from an empty cache builds them itself and answers, where a process of
    their own would take longer to start than the limit."""
    from puzzlezero.classic.optimal import IN_PLACE_ENTRIES, table_entries

    assert table_entries(make("puzzle8")) == 6048 and table_entries(make("cube2")) == 3_674_160
    assert table_entries(make("puzzle15")) == 576_576_000 > IN_PLACE_ENTRIES  # 80 s: a process
    for name, moves in (("puzzle8", "U L D R R U L L D"), ("cube2", "R U F' D R2 F U'")):
        p = make(name)
        start = p.apply_moves(p.goal(), p.parse_moves(moves))
        r = solve(p, start, search="optimal", time_limit=1)
        assert r.solved and bool(p.is_goal(p.apply_moves(start, list(r.actions))[None])[0])
    assert multiprocessing.active_children() == []


def test_a_pattern_database_not_built_in_time_ends_the_solve_by_name(
    empty_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """For real: the 24-puzzle's databases take about 40 s and 1.5 GB to build; a solve of 2 s
    stops the build and says what builds it, and saves nothing."""
    p = make("puzzle24")
    start = p.scramble(np.random.default_rng(0), 1, 40)[0]
    for search, extra in (("optimal", {}), ("bwas", {"heuristic": "pdb"})):
        r = solve(p, start, search=search, time_limit=2, **extra)  # type: ignore[arg-type]
        assert not r.solved and r.status == "time limit"
        assert "puzzlezero pdb build puzzle24" in capsys.readouterr().err
    assert multiprocessing.active_children() == []
    assert list((empty_cache / "pdb").glob("*.npz")) == []


def test_the_library_call_is_bounded_too(empty_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``solve_optimal`` and ``optimal_length`` (what ``bench --reference optimal`` calls) with a
    time limit: the same bound, without the solve's command line around them."""
    from puzzlezero.classic.optimal import optimal_length, solve_optimal

    p = make("puzzle24")
    start = p.scramble(np.random.default_rng(1), 1, 40)[0]
    r = solve_optimal(p, start, time_limit=2)
    assert not r.solved and r.status == "time limit" and r.actions == ()
    assert (
        "the pattern database of puzzle24 was not built within the time limit (2 s)"
        in capsys.readouterr().err
    )
    assert optimal_length(p, start, time_limit=2) is None  # stopped before: not started again
    assert "not built in 2 s before" in capsys.readouterr().err
    assert multiprocessing.active_children() == []
    assert list((empty_cache / "pdb").glob("*.npz")) == []


def test_where_builds_are_forbidden_a_missing_table_is_named_not_built(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A web worker: no process is started for the table; the missing table is named."""
    monkeypatch.setattr(storage, "_BUILDS_FORBIDDEN", True)
    import puzzlezero.classic.optimal as optimal
    from puzzlezero.classic import build_tables

    monkeypatch.setattr(optimal, "build_in_process", lambda *a, **k: pytest.fail("a build was started"))
    monkeypatch.setattr(optimal, "IN_PLACE_ENTRIES", 0)  # as if it were a big one
    from puzzlezero.search import clock

    with pytest.raises(MissingTableError, match="build it with: puzzlezero pdb build puzzle8"):
        build_tables(make("puzzle8"), "pdb", deadline=clock.now() + 60.0)


def test_the_window_pass_without_its_databases_in_time_leaves_the_answer_as_found(
    empty_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cube3's windows read Korf's databases (minutes to build): a solve of 10 s keeps its beam's
    answer, says what builds them, and leaves nothing behind. (The beam answers in 1.3 s on an
    idle 2-core CPU without int8, in float32: the limit leaves room for a loaded test run.)"""
    p = make("cube3")
    start = p.scramble(np.random.default_rng(5), 1, 12)[0]
    r = solve(p, start, search="beam", fallback=False, windows=14, time_limit=10)
    assert r.solved and bool(p.is_goal(p.apply_moves(start, list(r.actions))[None])[0])
    assert "puzzlezero pdb build cube3" in capsys.readouterr().err
    assert multiprocessing.active_children() == []
    assert list((empty_cache / "pdb").glob("*.npz")) == []
