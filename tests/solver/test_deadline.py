"""One deadline per search call of the solver: the time limit becomes a deadline where the call
begins; the search ends a reserve before it where a fallback follows, and the fallback and the
shortcut pass end by it. On a fake clock (:mod:`tests.clock`) that only the test moves."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import puzzlezero.solver.run as run_module
from puzzlezero.registry import make
from puzzlezero.search import bwas, clock
from puzzlezero.search.result import SearchResult
from puzzlezero.solver import (
    FALLBACK_RESERVE,
    SEARCHES,
    SearchSpec,
    declare_search,
    resolve_entry,
    solve_many,
)
from puzzlezero.solver.searches import _run_each, run_search
from tests.clock import FakeClock

DEEP = "R U F' D2 L B' R2 U' F D L' B2 U"
T = 60.0  # the time limit of every solve here: the deadline is 1060 on the clock stopped at 1000


@pytest.fixture
def fake(fake: FakeClock, monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The fake clock, and no untimed warm-up call in the records."""
    monkeypatch.setattr(run_module, "_warm_up", lambda *args: None)
    return fake


def _stalls(fake: FakeClock, seconds: float, seen: list[tuple[float, float]]) -> Any:
    """A search of one state (the optimal solvers' signature, with a deadline) that notes the
    deadline it was given, spends ``seconds`` and gives up."""

    def search(puzzle: Any, state: np.ndarray, *, max_nodes: int | None, deadline: float) -> SearchResult:
        seen.append((clock.now(), deadline))
        fake.sleep(seconds)
        return SearchResult(False, (), 7, 1, seconds, "node limit")

    return search


def _group_that_knows_only_a_time_limit(
    fake: FakeClock, seconds: float, seen: list[tuple[float, float]]
) -> Any:
    """The real group solver behind a signature of a plugin's (no deadline): notes its time limit."""
    group = resolve_entry(SEARCHES["group"].entry, "group")

    def rescue(puzzle: Any, state: np.ndarray, *, time_limit: float, max_nodes: int | None) -> SearchResult:
        seen.append((clock.now(), time_limit))
        fake.sleep(seconds)
        found = group(puzzle, state, max_nodes=max_nodes)
        return replace(found, seconds=found.seconds + seconds)

    return rescue


def _recorded_shortcut(seen: list[tuple[float, float]]) -> Any:
    real = run_module.find_shortcuts

    def shortcut(*args: Any, deadline: float, **kw: Any) -> Any:
        seen.append((clock.now(), deadline))
        return real(*args, deadline=deadline, **kw)

    return shortcut


#: the end of the search and its fallback where a shortcut pass follows: its share kept for it
ENDS = T - run_module.SHORTCUT_SHARE * T


def _stalling_search_and_group(
    monkeypatch: pytest.MonkeyPatch,
    fake: FakeClock,
    spent: float,
    searched: list[tuple[float, float]],
    rescued: list[tuple[float, float]],
) -> None:
    """A search "stalls" that takes ``spent`` seconds and finds nothing, and a group solver that
    takes 0.5 s and knows only a time limit, each noting what it was given."""
    monkeypatch.setitem(
        SEARCHES,
        "stalls",
        SearchSpec(
            entry=_stalls(fake, spent, searched), run=_run_each, needs_heuristic=False, node_cap=False
        ),
    )
    monkeypatch.setitem(
        SEARCHES,
        "group",
        SearchSpec(
            entry=_group_that_knows_only_a_time_limit(fake, 0.5, rescued),
            run=_run_each,
            needs_heuristic=False,
            node_cap=False,
        ),
    )


@pytest.mark.parametrize(
    ("spent", "fallback_limit"),
    [(3.0, ENDS - 3.0), (ENDS - 1.5, 1.5), (T + 4.0, clock.MIN_TIME_LIMIT)],
    ids=["early", "into the reserve", "past the deadline"],
)
def test_search_fallback_and_shortcut_share_one_deadline(
    fake: FakeClock, monkeypatch: pytest.MonkeyPatch, spent: float, fallback_limit: float
) -> None:
    """With a shortcut pass to follow, the search and its fallback end its share of the time limit
    early: the search is given that end less the fallback's reserve; the fallback (a search that
    takes only a time limit) all that is left until that end when its turn comes, however long
    the search took (never less than a minimal limit: the group solver's first sift is always
    done); the shortcut pass the deadline itself."""
    p = make("cube2")
    searched: list[tuple[float, float]] = []
    rescued: list[tuple[float, float]] = []
    shortened: list[tuple[float, float]] = []
    _stalling_search_and_group(monkeypatch, fake, spent, searched, rescued)
    monkeypatch.setattr(run_module, "find_shortcuts", _recorded_shortcut(shortened))
    (r,) = solve_many(p, [DEEP], search="stalls", fallback=True, shortcut=1000, time_limit=T)
    reserve = min(FALLBACK_RESERVE, 0.1 * T)
    assert searched == [(1000.0, 1000.0 + ENDS - reserve)]
    assert rescued == [(1000.0 + spent, fallback_limit)]
    assert shortened == [(1000.0 + spent + 0.5, 1000.0 + T)]
    assert r.solved and r.fallback == "group" and r.seconds == spent + 0.5


def test_without_a_shortcut_pass_the_search_and_fallback_have_the_whole_limit(
    fake: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = make("cube2")
    searched: list[tuple[float, float]] = []
    rescued: list[tuple[float, float]] = []
    _stalling_search_and_group(monkeypatch, fake, 3.0, searched, rescued)
    (r,) = solve_many(p, [DEEP], search="stalls", fallback=True, shortcut=0, time_limit=T)
    assert searched == [(1000.0, 1000.0 + T - min(FALLBACK_RESERVE, 0.1 * T))]
    assert rescued == [(1003.0, T - 3.0)]
    assert r.solved and r.fallback == "group"


def test_a_fallback_that_takes_a_deadline_gets_it(fake: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    p = make("cube2")
    searched: list[tuple[float, float]] = []
    rescued: list[tuple[float, float]] = []
    group = resolve_entry(SEARCHES["group"].entry, "group")

    def rescue(puzzle: Any, state: np.ndarray, *, max_nodes: int | None, deadline: float) -> SearchResult:
        rescued.append((clock.now(), deadline))
        return group(puzzle, state, max_nodes=max_nodes)

    monkeypatch.setitem(
        SEARCHES,
        "stalls",
        SearchSpec(entry=_stalls(fake, 10.0, searched), run=_run_each, needs_heuristic=False, node_cap=False),
    )
    monkeypatch.setitem(
        SEARCHES, "group", SearchSpec(entry=rescue, run=_run_each, needs_heuristic=False, node_cap=False)
    )
    (r,) = solve_many(p, [DEEP], search="stalls", fallback=True, time_limit=T)
    assert r.solved and rescued == [(1010.0, 1060.0)]


def test_one_deadline_per_search_call(fake: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """States searched together share their call's deadline; the next call has its own."""
    p = make("cube2")
    seen: list[tuple[float, float]] = []
    monkeypatch.setitem(
        SEARCHES,
        "stalls",
        SearchSpec(entry=_stalls(fake, 1.0, seen), run=_run_each, needs_heuristic=False, node_cap=False),
    )
    states = [DEEP, "R U", "F"]
    solve_many(p, states, search="stalls", time_limit=T, together=3)
    assert seen == [(1000.0, 1060.0), (1001.0, 1060.0), (1002.0, 1060.0)]
    seen.clear()
    solve_many(p, states, search="stalls", time_limit=T, together=1)
    assert seen == [(1003.0, 1063.0), (1004.0, 1064.0), (1005.0, 1065.0)]


def _recording_bwas(seen: list[tuple[float, float | None]]) -> Any:
    def recorded(*args: Any, deadline: float | None = None, **kw: Any) -> list[SearchResult]:
        seen.append((clock.now(), deadline))
        return bwas(*args, deadline=deadline, **kw)

    return recorded


@pytest.mark.parametrize(
    ("settings", "reserve"),
    [
        ({"fallback": False}, 0.0),
        ({}, min(FALLBACK_RESERVE, 0.1 * T)),  # puzzle8's own search: its fallback follows
        ({"stages": ((0.4, 10), (1.0, 10)), "fallback": False}, 0.0),
        ({"options": {"images": 1}, "fallback": False}, 0.0),
    ],
    ids=["alone", "with a fallback", "anytime", "images"],
)
def test_the_solvers_bwas_gets_the_deadline(
    fake: FakeClock, monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any], reserve: float
) -> None:
    """One search, a search followed by a fallback, an anytime schedule, a search with the
    states' images: every call of the search is given the one deadline of the solve."""
    p = make("puzzle8")
    seen: list[tuple[float, float | None]] = []
    monkeypatch.setitem(SEARCHES, "bwas", replace(SEARCHES["bwas"], entry=_recording_bwas(seen)))
    (r,) = solve_many(p, ["4 1 3 7 2 6 0 5 8"], heuristic="misplaced", time_limit=T, **settings)
    assert r.solved and len(seen) == (2 if "stages" in settings else 1)
    assert [d for _, d in seen] == [1000.0 + T - reserve] * len(seen)


def test_an_adapter_of_five_arguments_gets_the_seconds_left_as_its_time_limit(fake: FakeClock) -> None:
    """A plugin's ``run`` that predates deadlines: the options it is given carry the time left."""
    p = make("cube2")
    got: list[float] = []

    def old_run(fn: Any, puzzle: Any, states: np.ndarray, h: Any, o: Any) -> list[SearchResult]:
        got.append(o.time_limit)
        return [SearchResult(False, (), 1, 0, 0.0, "node limit") for _ in states]

    spec = declare_search(SearchSpec(entry=lambda *a, **k: None, run=old_run, needs_heuristic=False))
    o = replace(run_module.options_for(p, None, {"time_limit": T}), fallback=None)
    fake.sleep(5.0)
    run_search(spec, None, p, p.goals(1), None, o, 1000.0 + T)
    assert got == [T - 5.0]
