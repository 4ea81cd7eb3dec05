"""The solver's progress hook (``on_solution``): the first solution as soon as a stage has it, then
each strictly cheaper one, every one verified by replay, the last one the final answer; on a fake
clock (:mod:`tests.clock`) that only the test moves."""

from __future__ import annotations

import threading
from dataclasses import FrozenInstanceError
from typing import Any

import numpy as np
import pytest

import puzzlezero.solver.run as run_module
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make
from puzzlezero.search import bwas, clock
from puzzlezero.search.anytime import GroupLedger, anytime
from puzzlezero.search.images import anytime_images
from puzzlezero.search.result import SearchResult
from puzzlezero.solver import SEARCHES, Improvement, SearchSpec, solve, solve_many, verify
from puzzlezero.solver.searches import _run_each
from tests.clock import FakeClock
from tests.search.test_search import bfs_distances


@pytest.fixture
def fake(fake: FakeClock, monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The fake clock, and no untimed warm-up call."""
    monkeypatch.setattr(run_module, "_warm_up", lambda *args: None)
    return fake


@pytest.fixture(scope="module")
def p8() -> tuple[Puzzle, Any, np.ndarray]:
    p = make("puzzle8")
    dist = bfs_distances(p)
    exact = lambda s: np.array([dist[x.tobytes()] for x in s], dtype=np.float32)  # noqa: E731
    return p, exact, p.scramble(np.random.default_rng(7), 4, (60, 90))


def _replays(p: Puzzle, start: Any, solution: tuple[str, ...]) -> bool:
    state = p.parse(start) if isinstance(start, str) else np.asarray(start)
    return bool(verify(p, state[None], [p.parse_moves(" ".join(solution))]).all())


def _noisy_heuristic(fake: FakeClock, exact: Any) -> Any:
    """A misleading heuristic (greedy on it finds long paths) that takes 10 ms a call."""

    def h(states: np.ndarray) -> np.ndarray:
        fake.sleep(0.01)
        return exact(states) + 4.0 * ((states * np.arange(9)).sum(axis=1) % 5)

    return h


def test_each_state_gets_its_first_solution_then_strictly_cheaper_ones_ending_on_its_answer(
    fake: FakeClock, monkeypatch: pytest.MonkeyPatch, p8: tuple[Puzzle, Any, np.ndarray]
) -> None:
    p, exact, starts = p8
    monkeypatch.setattr(run_module, "get_heuristic", lambda *args: _noisy_heuristic(fake, exact))
    seen: list[Improvement] = []
    results = solve_many(
        p,
        starts,
        search="bwas",
        heuristic="misplaced",
        stages=[(0.0, 1), (1.0, 50)],
        time_limit=600.0,
        together=2,
        on_solution=seen.append,
    )
    assert {s.index for s in seen} == set(range(len(starts)))
    for i, (start, r) in enumerate(zip(starts, results, strict=True)):
        mine = [s for s in seen if s.index == i]
        costs = [s.cost for s in mine]
        assert costs == sorted(set(costs), reverse=True)  # strictly decreasing
        assert mine[0].stage == "stage 1" and {s.stage for s in mine} <= {"stage 1", "stage 2"}
        assert mine[-1].solution == r.solution and mine[-1].length == r.length and mine[-1].cost == r.cost
        assert all(_replays(p, start, s.solution) and s.length == len(s.solution) for s in mine)
        # times on the solve's clock: in order, within the call, the first long before the answer
        times = [s.seconds for s in mine]
        assert times == sorted(times) and 0 < times[0] and times[-1] <= 2 * r.seconds
        assert all(0 < s.nodes_generated <= r.nodes_generated for s in mine)
    # the greedy stage's answers are worse than the final ones on at least one state
    assert any(len([s for s in seen if s.index == i]) > 1 for i in range(len(starts)))


def test_bwas_passes_each_solution_on_the_moment_it_is_found(
    fake: FakeClock, p8: tuple[Puzzle, Any, np.ndarray]
) -> None:
    """A start near the goal is reported while the far one still searches, with the result the
    search returns for it: an anytime stage's improvement is shown when found, not when the stage ends."""
    p, exact, starts = p8
    near = p.apply_moves(p.goal(), [0, 1])

    def h(states: np.ndarray) -> np.ndarray:
        fake.sleep(0.01)
        return exact(states)

    seen: list[tuple[int, SearchResult, float]] = []
    results = bwas(
        p,
        np.stack([near, starts[3]]),
        h,
        weight=1.0,
        batch_size=1,
        on_solved=lambda i, r: seen.append((i, r, clock.now())),
    )
    assert [i for i, _, _ in seen] == [0, 1] and [r for _, r, _ in seen] == results
    assert seen[0][2] == 1000.0 + results[0].seconds < seen[1][2] == 1000.0 + results[1].seconds


def test_an_abandoned_ledger_ends_the_searches_that_share_it_at_once(
    p8: tuple[Puzzle, Any, np.ndarray],
) -> None:
    p, exact, starts = p8
    ledger = GroupLedger(1)
    (r,) = bwas(p, starts[:1], exact, groups=np.zeros(1, np.int64), ledger=ledger)
    assert r.solved and r.iterations > 0
    ledger.abandon()
    (r,) = bwas(p, starts[:1], exact, groups=np.zeros(1, np.int64), ledger=ledger)
    assert r.status == "time limit" and r.iterations == 0
    # and an anytime schedule sharing it starts no stage
    (r,) = anytime(bwas, p, starts[:1], exact, [(1.0, 10)], groups=np.zeros(1, np.int64), ledger=ledger)
    assert not r.solved and r.iterations == 0


def _stalls(fake: FakeClock) -> Any:
    def search(puzzle: Any, state: np.ndarray, *, max_nodes: int | None, deadline: float) -> SearchResult:
        fake.sleep(3.0)
        return SearchResult(False, (), 7, 1, 3.0, "node limit")

    return search


def test_the_fallback_and_the_shortcut_pass_report_their_solutions(
    fake: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = make("cube3")
    deep = "R U F' D2 L B' R2 U' F D L' B2 U"
    monkeypatch.setitem(
        SEARCHES,
        "stalls",
        SearchSpec(entry=_stalls(fake), run=_run_each, needs_heuristic=False, node_cap=False),
    )
    seen: list[Improvement] = []
    r = solve(
        p, deep, search="stalls", fallback=True, shortcut=100_000, time_limit=60.0, on_solution=seen.append
    )
    assert r.solved and r.fallback == "group"
    assert seen[0].stage == "fallback" and seen[0].seconds == 3.0  # after the search's 3 s, on the clock
    assert [s.stage for s in seen] == ["fallback", "shortcut"]  # the group's long answer, then shortened
    assert seen[1].length < seen[0].length and seen[-1].solution == r.solution
    assert all(_replays(p, deep, s.solution) for s in seen)
    with pytest.raises(FrozenInstanceError):
        seen[0].length = 1  # type: ignore[misc]
    assert seen[-1].to_json()["solution"] == list(r.solution)


def test_an_unsolved_state_reports_nothing_and_a_solved_one_its_empty_solution(
    fake: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = make("cube2")
    monkeypatch.setitem(
        SEARCHES,
        "stalls",
        SearchSpec(entry=_stalls(fake), run=_run_each, needs_heuristic=False, node_cap=False),
    )
    seen: list[Improvement] = []
    r = solve(p, "R U", search="stalls", fallback=False, time_limit=60.0, on_solution=seen.append)
    assert not r.solved and seen == []
    r = solve(p, p.goal(), search="group", time_limit=60.0, on_solution=seen.append)
    assert r.solved and [(s.length, s.stage, s.solution) for s in seen] == [(0, "search", ())]


def test_what_the_callback_raises_propagates(
    fake: FakeClock, monkeypatch: pytest.MonkeyPatch, p8: tuple[Puzzle, Any, np.ndarray]
) -> None:
    p, exact, starts = p8
    monkeypatch.setattr(run_module, "get_heuristic", lambda *args: _noisy_heuristic(fake, exact))

    class Enough(Exception):
        pass

    def stop(found: Improvement) -> None:
        raise Enough(found.stage)

    with pytest.raises(Enough, match="stage 1"):
        solve_many(
            p,
            starts[:1],
            search="bwas",
            heuristic="misplaced",
            stages=[(0.0, 1), (1.0, 50)],
            on_solution=stop,
        )


def _scripted(answers: dict[bytes, list[int]]) -> Any:
    """A search that 'finds' the solution scripted for each start where it is below the bound,
    noting the thread it ran in."""

    def search(
        puzzle: Any, starts: np.ndarray, heuristic: Any, *, max_cost: Any, **_: Any
    ) -> list[SearchResult]:
        out = []
        for s, bound in zip(starts, np.broadcast_to(max_cost, len(starts)), strict=True):
            actions = answers.get(s.tobytes())
            ok = actions is not None and len(actions) <= bound
            out.append(
                SearchResult(ok, tuple(actions) if ok else (), 12, 1, 0.01, "solved" if ok else "no solution")
            )
        return out

    return search


def _cube_with_a_shorter_inverse() -> tuple[Puzzle, np.ndarray, list[int], list[int], Any]:
    """A cube whose first stage finds 10 moves and whose inverse, searched in a later stage, 5."""
    p = make("cube3")
    scramble = p.parse_moves("R U F' L D2")
    state = p.apply_moves(p.goal(), scramble)
    short = [int(a) for a in p.inverse_action[np.asarray(scramble)[::-1]]]
    long = [0, 1, 0, 1, *short]
    inverse = p.image("inverse", state, long)
    return p, state, long, short, _scripted({state.tobytes(): long, inverse.tobytes(): list(scramble)})


def test_an_images_solution_from_another_thread_is_mapped_back_and_reported_in_the_callers() -> None:
    p, state, long, short, search = _cube_with_a_shorter_inverse()
    seen: list[tuple[int, tuple[int, ...], int, str]] = []

    def note(row: int, r: SearchResult, stage: int) -> None:
        seen.append((row, tuple(r.actions), stage, threading.current_thread().name))

    (r,) = anytime_images(
        search,
        p,
        state[None],
        None,
        [(0.1, 10), (0.5, 10)],
        images=p.image_names,
        time_limit=10,
        threads=2,
        on_solution=note,
    )
    caller = threading.current_thread().name
    assert seen == [(0, tuple(long), 0, caller), (0, tuple(short), 1, caller)]
    assert list(r.actions) == short


def test_a_callback_that_raises_while_images_search_in_threads_ends_them() -> None:
    p, state, _, _, search = _cube_with_a_shorter_inverse()

    def refuse(row: int, r: SearchResult, stage: int) -> None:
        if stage > 0:
            raise PuzzleError("no more")

    with pytest.raises(PuzzleError, match="no more"):
        anytime_images(
            search,
            p,
            state[None],
            None,
            [(0.1, 10), (0.5, 10), (0.6, 10)],
            images=p.image_names,
            time_limit=10,
            threads=2,
            on_solution=refuse,
        )
