"""The model-free solvers and the one search clock: IDA* and the group solver stop at an absolute
``deadline`` (or their own ``time_limit``, whichever comes first), and the optimal-solver table
hands the deadline down, as seconds left to a solver that takes none. All on a fake clock."""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic import group, optimal, reduction
from puzzlezero.classic.optimal import cube2, cube_ida, ida, kociemba_bridge, lightsout, sliding_ida
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from tests.clock import FakeClock


def test_every_classic_solver_takes_a_deadline_next_to_its_time_limit() -> None:
    for fn in (
        optimal.solve_optimal,
        sliding_ida.solve_sliding,
        cube_ida.solve_cube,
        cube2.solve_cube2,
        lightsout.solve_lightsout,
        kociemba_bridge.solve_kociemba,
        group.solve_group,
        reduction.solve_reduction,
    ):
        params = inspect.signature(fn).parameters
        assert "time_limit" in params and params["deadline"].default is None, fn.__name__
        assert clock.takes_deadline(fn)


def _drive(fake: FakeClock, **limits: Any) -> tuple[SearchResult, int]:
    """IDA* over a kernel that never finishes an iteration, each budget of nodes taking 1 s."""
    calls = []

    def run(budget: int) -> int:
        calls.append(budget)
        fake.sleep(1.0)
        return ida.PAUSED

    ctx = ida.new_context(5)
    path, nxt = np.zeros(8, dtype=np.int64), np.zeros(9, dtype=np.int64)
    r = ida.drive(run, ctx, path, nxt, (0, 1), max_nodes=None, max_depth=8, **limits)
    return r, len(calls)


def test_ida_stops_at_the_deadline_after_the_budget_that_passes_it(fake: FakeClock) -> None:
    r, calls = _drive(fake, time_limit=None, deadline=clock.now() + 2.5)
    assert (r.solved, r.status, calls, r.seconds) == (False, "time limit", 3, 3.0)


def test_ida_stops_at_the_earlier_of_its_time_limit_and_the_deadline(fake: FakeClock) -> None:
    r, calls = _drive(fake, time_limit=1.5, deadline=clock.now() + 10.0)
    assert (r.status, calls) == ("time limit", 2)
    r, calls = _drive(fake, time_limit=10.0, deadline=clock.now() + 0.5)
    assert (r.status, calls) == ("time limit", 1)


def test_an_ida_solve_past_its_deadline_still_returns_a_solution_found_in_its_first_budget(
    fake: FakeClock,
) -> None:
    p = make("puzzle8")
    start = p.apply_moves(p.goal(), p.parse_moves("D R D"))
    r = sliding_ida.solve_sliding(p, start, deadline=clock.now() - 1.0)
    assert r.solved and len(r.actions) == 3


@pytest.fixture
def timed_sifts(fake: FakeClock, monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Each sift through the group table takes 1 ms of the fake clock."""
    sift = group.GroupTable._sift

    def slow(self: group.GroupTable, q: np.ndarray) -> list[int] | None:
        fake.sleep(0.001)
        return sift(self, q)

    monkeypatch.setattr(group.GroupTable, "_sift", slow)
    return fake


def test_the_group_solver_sifts_until_its_deadline(timed_sifts: FakeClock) -> None:
    cube = make("cube2")
    start = cube.parse("R U F' U2 R'")
    group.group_table(cube)  # built or loaded before the clock starts
    # the plain sift (1 ms), then one premove sift per 1 ms until 10.5 ms have passed: 11 in all
    for kind in ("time_limit", "deadline"):
        limit = {"time_limit": 0.0105} if kind == "time_limit" else {"deadline": clock.now() + 0.0105}
        r = group.solve_group(cube, start, **limit)
        assert r.solved and r.iterations == r.nodes_generated == 11, kind
        assert cube.is_goal(cube.apply_moves(start, list(r.actions))[None])[0]
    both = group.solve_group(cube, start, time_limit=1.0, deadline=clock.now() + 0.0055)
    assert both.iterations == 6  # the deadline came first
    assert group.solve_group(cube, start, max_nodes=40).iterations == 40  # no limit: the count


def test_a_group_solve_past_its_deadline_still_does_the_plain_sift(timed_sifts: FakeClock) -> None:
    cube = make("cube2")
    start = cube.parse("R U F' U2 R'")
    r = group.solve_group(cube, start, deadline=clock.now() - 1.0)
    assert r.solved and r.iterations == 1
    assert cube.is_goal(cube.apply_moves(start, list(r.actions))[None])[0]


def test_solve_optimal_hands_the_deadline_down(fake: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, dict[str, Any]] = {}

    def with_deadline(puzzle: Any, state: Any, *, time_limit=None, max_nodes=None, deadline=None):  # noqa: ANN001, ANN202
        seen["with"] = {"time_limit": time_limit, "deadline": deadline}
        return SearchResult(True, (), 1, 0, 0.0, "solved")

    def without_deadline(puzzle: Any, state: Any, *, time_limit=None, max_nodes=None):  # noqa: ANN001, ANN202
        seen["without"] = {"time_limit": time_limit}
        return SearchResult(True, (), 1, 0, 0.0, "solved")

    p = make("lightsout7")
    s = p.goal()
    end = clock.now() + 5.0
    monkeypatch.setitem(optimal.SOLVERS, "LightsOut", with_deadline)
    optimal.solve_optimal(p, s, time_limit=30.0, deadline=end)
    assert seen["with"] == {"time_limit": 30.0, "deadline": end}  # as they are: it takes the earlier
    monkeypatch.setitem(optimal.SOLVERS, "LightsOut", without_deadline)
    optimal.solve_optimal(p, s, time_limit=30.0, deadline=end)
    assert seen["without"] == {"time_limit": 5.0}  # the seconds left
    optimal.solve_optimal(p, s, time_limit=2.0, deadline=end)
    assert seen["without"] == {"time_limit": 2.0}  # its own limit came first
    optimal.solve_optimal(p, s, deadline=clock.now() - 1.0)
    assert seen["without"] == {"time_limit": clock.MIN_TIME_LIMIT}  # passed: still a valid limit
    optimal.solve_optimal(p, s, deadline=math.inf)
    assert seen["without"] == {"time_limit": None}
    assert optimal.optimal_length(p, s, deadline=end) == 0
