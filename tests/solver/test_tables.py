"""The cached tables a solve reads, named from its options and built before a bench's clock."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import puzzlezero.classic as classic
from puzzlezero import bench
from puzzlezero.case_files import Case
from puzzlezero.errors import MemoryBudgetError, PuzzleError, UnknownNameError
from puzzlezero.registry import make
from puzzlezero.solver import resolve_options
from puzzlezero.solver.tables import prepare_solve_tables, table_kinds, table_needs


def test_the_kinds_are_the_search_its_members_and_the_group_fallback() -> None:
    # cube3: the network beside the two-phase search, the group solver as the fallback
    assert table_kinds(resolve_options(make("cube3"))) == ["two-phase", "group"]
    assert table_kinds(resolve_options(make("cube3"), search="bwas", models=["cube3"], fallback=True)) == [
        "group"
    ]
    assert table_kinds(resolve_options(make("cube3"), search="bwas", models=["cube3"], fallback=False)) == []
    assert table_kinds(resolve_options(make("cube_3-3-3"))) == ["two-phase", "group"]
    assert table_kinds(resolve_options(make("puzzle15"))) == []  # the reduction solver reads none
    assert table_kinds(resolve_options(make("cube3"), search="two-phase", fallback=False)) == ["two-phase"]


def test_the_solves_a_search_runs_inside_bring_their_tables() -> None:
    """The 4x4x4's reduction ends in cube3's own solve: its tables (cube3's two-phase search, its
    group fallback) are needed beside the reduction's, each once."""
    p = make("cube_4-4-4")
    needs = [(q.name, kind) for q, kind in table_needs(p, resolve_options(p))]
    assert needs == [
        ("cube_4-4-4", "reduction"),
        ("cube_4-4-4", "group"),
        ("cube3", "two-phase"),
        ("cube3", "group"),
    ]
    # a search with no inner solve needs only its own
    cube3 = make("cube3")
    assert [(q.name, k) for q, k in table_needs(cube3, resolve_options(cube3))] == [
        ("cube3", "two-phase"),
        ("cube3", "group"),
    ]


def test_a_bench_of_the_4x4x4_prepares_cube3s_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[str, str]] = []

    def build(q: Any, kind: str, **bounds: Any) -> list[str]:
        built.append((q.name, kind))
        return [f"{q.name}: {kind}"]

    monkeypatch.setattr(classic, "build_tables", build)
    p = make("cube_4-4-4")
    lines = prepare_solve_tables(p, resolve_options(p, fallback=False))
    assert built == [("cube_4-4-4", "reduction"), ("cube3", "two-phase"), ("cube3", "group")]
    assert lines == ["cube_4-4-4: reduction", "cube3: two-phase", "cube3: group"]


def test_a_kind_the_puzzle_has_no_table_of_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []

    def build(p: Any, kind: str, **bounds: Any) -> list[str]:
        if kind == "group":
            raise PuzzleError("no group table")
        built.append(kind)
        return [f"{p.name}: {kind}"]

    monkeypatch.setattr(classic, "build_tables", build)
    assert prepare_solve_tables(make("cube3"), resolve_options(make("cube3"))) == ["cube3: two-phase"]
    assert built == ["two-phase"]


def test_a_table_above_the_memory_budget_is_left_to_the_solves_or_stops_a_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bench goes on (each solve that reads the table says so); a server's start, whose workers
    never build, stops by name; a kind the puzzle has none of is skipped by both."""

    def build(p: Any, kind: str, **bounds: Any) -> list[str]:
        if kind == "two-phase":
            raise MemoryBudgetError("building the two-phase tables needs about 9 GiB")
        raise UnknownNameError("no group table")

    monkeypatch.setattr(classic, "build_tables", build)
    p = make("cube3")
    lines = prepare_solve_tables(p, resolve_options(p))
    assert lines == ["building the two-phase tables needs about 9 GiB (each solve that reads it says so)"]
    assert "needs about 9 GiB" in capsys.readouterr().err
    with pytest.raises(MemoryBudgetError, match="needs about 9 GiB"):
        prepare_solve_tables(p, resolve_options(p), required=True)


def test_bench_builds_the_tables_before_the_first_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bench's first case gets the time limit the others get: the tables its solve reads are
    built before it starts, not inside its clock."""
    events: list[str] = []

    def build(p: Any, kind: str, **bounds: Any) -> list[str]:
        events.append(f"build {kind}")
        return []

    monkeypatch.setattr(classic, "build_tables", build)
    real = bench.solve_many

    def solve_many(*args: Any, **kwargs: Any) -> Any:
        events.append("solve")
        return real(*args, **kwargs)

    monkeypatch.setattr(bench, "solve_many", solve_many)
    p = make("cube3")
    state = p.apply(p.goals(1), np.array([0]))[0]  # one quarter turn
    report = bench.run_bench(
        p, [Case(id="0", state=state)], search="bwas", models=["cube3"], fallback=True, time_limit=5
    )
    assert events == ["build group", "solve"]
    assert report.summary["solved_pct"] == 100.0


def test_a_bench_that_does_not_fit_the_memory_budget_builds_no_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its searches' memory is checked before the tables are prepared (up to 600 s of them), not
    after: the refusal comes at once."""
    from puzzlezero.budget import use_memory_budget

    monkeypatch.setattr(classic, "build_tables", lambda *a, **k: pytest.fail("a table was prepared"))
    p = make("cube3")
    state = p.apply(p.goals(1), np.array([0]))[0]
    with (
        use_memory_budget("1MiB"),
        pytest.raises(MemoryBudgetError, match="above the memory budget of 1.0 MiB"),
    ):
        bench.run_bench(p, [Case(id="0", state=state)], search="bwas", fallback=True, time_limit=5)


def test_a_solve_builds_first_the_tables_without_which_its_search_answers_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The 4x4x4's reduction answers nothing without its tables (about 25 s to build on a fresh
    machine), nor without the two-phase tables of the 3x3x3 it leaves (its first answers): a solve
    builds both before its clock starts, not inside it; not those of its own fallback."""
    from puzzlezero.search.result import SearchResult
    from puzzlezero.solver import reduced, solve

    events: list[str] = []

    def build(p: Any, kind: str, **bounds: Any) -> list[str]:
        events.append(f"build {p.name} {kind}")
        return []

    def search(puzzle: Any, state: Any, **kwargs: Any) -> SearchResult:
        events.append("search")
        return SearchResult(False, (), 0, 1, 0.0, "exhausted")

    monkeypatch.setattr(classic, "build_tables", build)
    monkeypatch.setattr(reduced, "solve_reduced", search)
    p = make("cube_4-4-4")
    state = p.scramble(np.random.default_rng(0), 1, 30)[0]
    r = solve(p, state, fallback=False, time_limit=5)
    # cube3's solve inside reads its group table where its own search leaves a state; the 4x4x4's
    # own fallback (the group solver, which answers meanwhile) builds in the time limit
    assert events == ["build cube_4-4-4 reduction", "build cube3 two-phase", "build cube3 group", "search"]
    assert not r.solved


def test_a_short_scramble_is_answered_without_waiting_for_those_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The breadth-first pass answers a scramble of a few moves before any table is built: a
    cuber's first short scramble of the 5x5x5 does not wait a minute for the reduction's tables;
    the first state it leaves has them built off the clock, once for the call."""
    from puzzlezero.search.result import SearchResult
    from puzzlezero.solver import reduced, solve_many

    events: list[str] = []
    monkeypatch.setattr(
        classic, "build_tables", lambda p, kind, **b: events.append(f"build {p.name} {kind}") or []
    )

    def search(puzzle: Any, state: Any, **kwargs: Any) -> SearchResult:
        events.append("search")
        return SearchResult(False, (), 0, 1, 0.0, "exhausted")

    monkeypatch.setattr(reduced, "solve_reduced", search)
    p = make("cube_5-5-5")
    near = p.apply_moves(p.goal(), [p.action_names.index("f1"), p.action_names.index("r3'")])[None]
    [r] = solve_many(p, near, fallback=False, time_limit=20)
    assert r.solved and len(r.solution) == 2 and events == []
    far = p.scramble(np.random.default_rng(1), 2, 40)
    solve_many(p, np.concatenate([near, far]), fallback=False, time_limit=20)
    assert events[:2] == ["build cube_5-5-5 reduction", "build cube3 two-phase"]
    assert events.count("build cube_5-5-5 reduction") == 1 and events.count("search") == 2
