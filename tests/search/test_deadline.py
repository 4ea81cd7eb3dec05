"""One deadline for a whole search: every search stops at the earlier of its ``deadline`` and its
``time_limit``, and the searches that run others (anytime schedules, images, layered stages, the
shortcut pass) hand every one of them the same deadline instead of a budget of their own. All on
a fake clock (:mod:`tests.clock`) that only the test moves: the searches read
:mod:`puzzlezero.search.clock`, whose ``time`` is patched."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.search import beam, bwas, clock, gbfs, mcts
from puzzlezero.search.anytime import anytime, anytime_beam
from puzzlezero.search.images import anytime_images
from puzzlezero.search.layered import layered
from puzzlezero.search.policy import policy_value_from_heuristic
from puzzlezero.search.qstar import q_from_value, qstar
from puzzlezero.search.result import SearchResult
from puzzlezero.search.shortcut import shortcut
from tests.clock import FakeClock


def zero(s: np.ndarray) -> np.ndarray:
    return np.zeros(len(s), np.float32)


def slow(fake: FakeClock, seconds: float, h: Any = zero) -> Any:
    """``h`` that takes ``seconds`` of the fake clock a call."""

    def call(s: np.ndarray) -> Any:
        fake.sleep(seconds)
        return h(s)

    return call


def test_the_clock_helpers(fake: FakeClock) -> None:
    assert clock.now() == 1000.0 and clock.deadline_after(2.0) == 1002.0
    assert clock.deadline_after(2.0, deadline=1001.0) == 1001.0  # the earlier
    assert clock.deadline_after(None, deadline=1001.0) == 1001.0
    assert clock.deadline_after(None) == clock.NO_DEADLINE and clock.deadline_after(1.0, start=5.0) == 6.0
    # 1000.0 + 0.05 rounds down: the deadline is one step later, so a search stopped at it has run 0.05 s
    assert clock.deadline_after(0.05) - 1000.0 >= 0.05 > (1000.0 + 0.05) - 1000.0
    fake.sleep(0.25)
    assert clock.seconds_left(1001.0) == 0.75 and not clock.passed(1001.0)
    fake.sleep(1.0)
    assert clock.seconds_left(1001.0) == 0.0 and clock.passed(1001.0)
    assert clock.time_limit_until(1001.0) == clock.MIN_TIME_LIMIT  # a time limit must be positive
    assert clock.time_limit_until(clock.NO_DEADLINE) is None

    def with_deadline(p: Any, *, time_limit: float | None = None, deadline: float | None = None) -> None: ...

    assert clock.with_deadline(with_deadline) is with_deadline  # taken as it is
    seen: dict[str, Any] = {}

    def without(p: Any, *, time_limit: float | None = None, **rest: Any) -> None:
        seen.update(rest, time_limit=time_limit)

    wrapped = clock.with_deadline(without)
    assert clock.with_deadline(wrapped) is wrapped  # wrapped once, however often it is handed on
    wrapped("p", deadline=1300.0, max_nodes=5)
    assert seen == {"time_limit": 1300.0 - 1001.25, "max_nodes": 5}  # the seconds left, the rest as given
    seen.clear()
    clock.with_deadline(without)("p", deadline=None)
    assert seen == {"time_limit": None}
    assert clock.takes_keyword(bwas, "on_solved") and not clock.takes_keyword(without, "on_solved")
    assert clock.takes_deadline(bwas) and not clock.takes_deadline(without) and not clock.takes_deadline(len)


SEARCHES = {
    "bwas": lambda p, s, h, **kw: bwas(p, s, h, batch_size=1, max_nodes=None, **kw),
    "qstar": lambda p, s, h, **kw: qstar(p, s, q_from_value(p, h), batch_size=1, max_nodes=None, **kw),
    "beam": lambda p, s, h, **kw: beam(p, s, h, beam_width=2, max_nodes=None, **kw),
    "gbfs": lambda p, s, h, **kw: gbfs(p, s, h, **kw),
    "mcts": lambda p, s, h, **kw: mcts(p, s, policy_value_from_heuristic(p, h), max_nodes=None, **kw),
}


@pytest.mark.parametrize("name", SEARCHES)
@pytest.mark.parametrize(("time_limit", "deadline"), [(None, 1000.1), (5.0, 1000.1), (0.1, 1005.0)])
def test_a_search_stops_at_the_earlier_of_its_deadline_and_its_time_limit(
    fake: FakeClock, name: str, time_limit: float | None, deadline: float
) -> None:
    """Each heuristic call takes 20 ms: the search stops at its first look at the clock past
    1000.1 (its seconds counted from its own start), within one more call."""
    p = make("cube3")
    start = p.scramble(np.random.default_rng(0), 1, depth=15)
    (r,) = SEARCHES[name](p, start, slow(fake, 0.02), time_limit=time_limit, deadline=deadline)
    assert (r.solved, r.status) == (False, "time limit")
    assert 0.1 <= r.seconds < 0.1 + 0.02 + 1e-9 and 1000.1 <= clock.now() < 1000.1 + 0.02 + 1e-9


@pytest.mark.parametrize("name", SEARCHES)
def test_a_deadline_already_passed_ends_a_search_before_its_first_expansion(
    fake: FakeClock, name: str
) -> None:
    p = make("cube3")
    calls: list[int] = []
    (r,) = SEARCHES[name](
        p,
        p.scramble(np.random.default_rng(1), 1, depth=9),
        lambda s: calls.append(1) or zero(s),
        deadline=999.0,
    )
    assert (r.status, r.seconds, calls) == ("time limit", 0.0, [])


def _recording(search: Any, seen: list[tuple[str, float | None]]) -> Any:
    """``search`` that notes the deadline it was given and the clock's reading then."""

    def recorded(*args: Any, deadline: float | None = None, **kw: Any) -> list[SearchResult]:
        seen.append((clock.now(), deadline))
        return search(*args, deadline=deadline, **kw)

    return recorded


def test_every_stage_of_a_schedule_gets_the_one_deadline(fake: FakeClock) -> None:
    """Stages that spend time do not shorten the next stage's limit by what they measured: each
    is handed the deadline of the whole call, and no stage starts once it has come."""
    p = make("puzzle8")
    starts = p.scramble(np.random.default_rng(3), 2, depth=(18, 24))
    manhattan = lambda s: p.manhattan(s).astype(np.float32)  # noqa: E731
    seen: list[tuple[float, float | None]] = []
    results = anytime(
        _recording(bwas, seen),
        p,
        starts,
        slow(fake, 0.01, manhattan),
        [(0.2, 5), (0.6, 5), (1.0, 5)],
        time_limit=30.0,
    )
    assert all(r.solved for r in results) and len(seen) == 3
    assert [d for _, d in seen] == [1030.0] * 3 and seen[0][0] < seen[1][0] < seen[2][0]
    assert results[0].seconds == clock.now() - 1000.0  # its seconds: the same clock
    # an outer deadline earlier than the time limit, 50 ms after the first stage's end: the
    # stages get it, the second (A*, one node an iteration) stops at it, the third never starts
    first = anytime(bwas, p, starts, slow(fake, 0.01, manhattan), [(0.2, 5)], time_limit=30.0)
    seen.clear()
    start = clock.now()
    deadline = start + first[0].seconds + 0.05
    results = anytime(
        _recording(bwas, seen),
        p,
        starts,
        slow(fake, 0.01, manhattan),
        [(0.2, 5), (1.0, 1), (1.0, 5)],
        time_limit=30.0,
        deadline=deadline,
    )
    assert [d for _, d in seen] == [deadline, deadline] and seen[1][0] == start + first[0].seconds
    assert deadline <= clock.now() < deadline + 0.01 + 1e-9
    assert [r.actions for r in results] == [r.actions for r in first]  # the first stage's solutions


def test_a_stage_without_a_deadline_keyword_gets_the_seconds_left(fake: FakeClock) -> None:
    """A plugin's search that knows only ``time_limit`` is given what is left of the one deadline
    at the moment its stage starts."""
    p = make("puzzle8")
    got: list[float] = []

    def old_style(puzzle, starts, h, *, time_limit, max_nodes, max_cost, weight, batch_size):  # noqa: ANN001, ANN202
        got.append(time_limit)
        fake.sleep(2.0)
        return [SearchResult(False, (), 1, 1, 2.0, "node limit") for _ in starts]

    start = p.scramble(np.random.default_rng(0), 1, depth=10)
    (r,) = anytime(old_style, p, start, zero, [(0.5, 1), (1.0, 1), (1.0, 2)], time_limit=5.0)
    assert got == [5.0, 3.0, 1.0] and r.status == "node limit" and r.seconds == 6.0


def test_a_schedule_of_beams_gets_the_one_deadline(fake: FakeClock) -> None:
    p = make("puzzle8")
    seen: list[tuple[float, float | None]] = []
    starts = p.scramble(np.random.default_rng(4), 2, depth=(18, 24))
    h = slow(fake, 0.01, lambda s: p.manhattan(s).astype(np.float32))
    anytime_beam(_recording(beam, seen), p, starts, h, [2, 8, 32], time_limit=10.0, max_steps=100)
    assert [d for _, d in seen] == [1010.0] * 3


def test_images_run_to_the_deadline_of_the_first_stage(fake: FakeClock) -> None:
    """The first stage (the states alone) and the later ones (with the images, in one search or
    in two threads) are given the one deadline of the call."""
    p = make("cube3")
    starts = p.scramble(np.random.default_rng(3), 2, (6, 8))
    h = slow(fake, 0.001, lambda s: (s != p.goal()[None]).sum(axis=1).astype(np.float32) / 8)
    for threads in (1, 2):
        seen: list[tuple[float, float | None]] = []
        start = clock.now()
        results = anytime_images(
            _recording(bwas, seen),
            p,
            starts,
            h,
            [(0.2, 10), (0.5, 10)],
            images=p.image_names,
            time_limit=60.0,
            max_nodes=50_000,
            threads=threads,
        )
        assert all(r.solved for r in results) and len(seen) == 1 + threads
        assert {d for _, d in seen} == {start + 60.0}
    # a deadline that comes during the first stage: the images are never searched
    seen.clear()
    start = clock.now()
    blind = slow(fake, 0.01)
    far = p.scramble(np.random.default_rng(5), 1, 20)
    (r,) = anytime_images(
        _recording(bwas, seen),
        p,
        far,
        blind,
        [(0.2, 10), (0.5, 10)],
        images=p.image_names,
        deadline=start + 0.1,
    )
    assert (r.status, len(seen)) == ("time limit", 1) and start + 0.1 <= clock.now() < start + 0.11 + 1e-9


def test_layered_stages_get_the_one_deadline_and_a_stage_after_it_is_not_run(fake: FakeClock) -> None:
    cube = make("cube3")
    misplaced = {
        g: (lambda goal: lambda s: goal.misplaced(s))(pred)
        for g, pred in cube.goal_predicates().items()
        if g != "solved"
    }
    misplaced["solved"] = lambda s: np.count_nonzero(s != cube.goal(), axis=1).astype(np.float32)
    seen: list[tuple[float, float | None]] = []
    h = {g: slow(fake, 0.01, f) for g, f in misplaced.items()}
    (r,) = layered(
        cube,
        cube.parse("R U F'")[None],
        h,
        search=_recording(bwas, seen),
        weight=1.0,
        batch_size=20,
        time_limit=60.0,
    )
    assert r.solved and [d for _, d in seen] == [1060.0] * 3
    # each stage spends more than a third of the time: the last one is never started
    seen.clear()
    start = clock.now()
    h = {g: slow(fake, 0.5, f) for g, f in misplaced.items()}
    (r,) = layered(
        cube,
        cube.parse("R U F' L")[None],
        h,
        search=_recording(bwas, seen),
        weight=1.0,
        batch_size=20,
        deadline=start + 1.0,
    )
    assert not r.solved and r.status == "time limit" and [d for _, d in seen] == [start + 1.0] * len(seen)
    assert r.stages[-1].status == "time limit" and len(seen) < 3


def test_a_layered_stage_search_without_a_deadline_gets_the_seconds_left(fake: FakeClock) -> None:
    cube = make("cube3")
    got: list[float | None] = []

    def old_style(puzzle, states, h, *, is_goal, time_limit, **kw):  # noqa: ANN001, ANN202
        got.append(time_limit)
        fake.sleep(1.5)
        return bwas(puzzle, states, h, is_goal=is_goal, **kw)

    h = lambda s: np.zeros(len(s), np.float32)  # noqa: E731
    layered(cube, cube.goal()[None], h, search=old_style, time_limit=10.0)
    assert got == [10.0, 8.5, 7.0]
    got.clear()
    layered(cube, cube.goal()[None], h, search=old_style)  # no limit: none handed down
    assert got == [None, None, None]


def test_the_shortcut_pass_stops_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """As with its time limit (tests/search/test_shortcut.py): on a clock that moves one second a
    reading, a deadline 3.5 s after the start lets one round grow its balls one level (read at 0,
    the start; 1, a round may start; 2 and 3, before and after the first level's one batch; then
    4 + that batch's second is past 3.5)."""
    p = make("puzzle15")
    rng = np.random.default_rng(0)
    start = p.scramble(rng, 1, 60)[0]
    from tests.search.test_shortcut import _walk_on

    path = _walk_on(p, start, [], 40, rng)
    monkeypatch.setattr(clock, "time", FakeClock(start=0.0, tick=1.0))
    by_deadline = shortcut(p, start, path, max_states=300_000, deadline=3.5)
    monkeypatch.setattr(clock, "time", FakeClock(start=0.0, tick=1.0))
    by_limit = shortcut(p, start, path, max_states=300_000, time_limit=3.5)
    assert (by_deadline.rounds, by_deadline.radius) == (by_limit.rounds, by_limit.radius) == (1, 1)
    assert by_deadline.actions == by_limit.actions
    monkeypatch.setattr(clock, "time", FakeClock(start=0.0, tick=1.0))
    both = shortcut(p, start, path, max_states=300_000, time_limit=100.0, deadline=0.5)  # the earlier
    assert both.rounds == 0 and both.actions == tuple(path)


def test_a_later_beam_is_narrowed_to_what_the_time_left_buys(fake: FakeClock) -> None:
    """A beam's time grows as its width times its steps: a schedule's later beam is narrowed to
    what the seconds left buy at the rate the first beam measured (and ends in time), is run as it
    is where it fits, and is not run at all where the time left buys too narrow a beam."""
    p = make("puzzle8")
    start = p.apply_moves(p.goal(), p.parse_moves("L U R D L D R U L U R D D L U R R D L U"))
    # a heuristic that takes 0.1 ms of the fake clock a state
    h = lambda s: (fake.sleep(1e-4 * len(s)), p.manhattan(s).astype(np.float32))[1]  # noqa: E731

    def run(time_limit: float) -> tuple[list[int], SearchResult, float]:
        widths: list[int] = []

        def recorded(*args: Any, beam_width: int, **kw: Any) -> list[SearchResult]:
            widths.append(beam_width)
            return beam(*args, beam_width=beam_width, **kw)

        t0 = clock.now()
        (r,) = anytime_beam(recorded, p, start, h, [10, 1000], time_limit=time_limit, max_steps=100)
        return widths, r, clock.now() - t0

    t0 = clock.now()
    (first,) = beam(p, start, h, beam_width=10, max_steps=100)
    t1 = clock.now() - t0  # the first beam's seconds
    assert first.solved and t1 > 0

    widths, r, took = run(1000.0)  # time enough: the schedule as it is
    assert widths == [10, 1000] and r.solved
    widths, r, took = run(20 * t1)  # about 19 first beams' time left: narrowed, and in time
    # each narrowed beam, once run, is fitted again at its full width while that buys one 1.5 times wider
    assert len(widths) >= 3 and all(1.5 * a <= b < 1000 and b % 10 == 0 for a, b in pairwise(widths))
    assert r.solved and took <= 20 * t1 and r.length <= first.length
    widths, r, took = run(1.5 * t1)  # half a first beam's time left: too little to be worth a beam
    assert widths == [10] and r.solved and r.actions == first.actions and took < 1.5 * t1
