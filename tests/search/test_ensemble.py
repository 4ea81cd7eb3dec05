"""The ensemble of searches (:mod:`puzzlezero.search.ensemble`): each state's cheapest solution of
the members, their work added up, their progress passed on in the caller's thread."""

from __future__ import annotations

import threading

import pytest

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.cube import Cube3HTM
from puzzlezero.search.ensemble import ensemble, merge
from puzzlezero.search.result import SearchResult


def _solved(actions: tuple[int, ...], nodes: int = 10, seconds: float = 1.0, improvements=()) -> SearchResult:
    return SearchResult(True, actions, nodes, 2, seconds, "solved", improvements=tuple(improvements))


def _failed(status: str = "time limit", nodes: int = 7) -> SearchResult:
    return SearchResult(False, (), nodes, 3, 2.0, status)  # type: ignore[arg-type]


P = make("puzzle8")


def test_merge_keeps_the_cheapest_solution_and_adds_up_the_work() -> None:
    a = [_solved((0, 1, 2), nodes=10, seconds=1.0, improvements=[(0.2, 5), (0.9, 3)]), _failed(nodes=4)]
    b = [_solved((3, 2), nodes=20, seconds=1.5, improvements=[(0.5, 4), (1.4, 2)]), _solved((1,), nodes=6)]
    found, winners = merge(P, [a, b])
    assert winners == [1, 1]
    assert found[0].actions == (3, 2) and found[0].cost == 2.0
    assert found[0].nodes_generated == 30 and found[0].iterations == 4
    assert found[0].seconds == 1.5
    # every improvement of either member in time order, each shorter than the one before
    assert found[0].improvements == ((0.2, 5), (0.5, 4), (0.9, 3), (1.4, 2))
    assert found[1].actions == (1,) and found[1].nodes_generated == 10


def test_merge_a_tie_goes_to_the_first_member_and_nothing_found_keeps_its_status() -> None:
    found, winners = merge(P, [[_solved((0, 1)), _failed("node limit")], [_solved((2, 3)), _failed()]])
    assert winners == [0, None]
    assert found[0].actions == (0, 1)
    assert not found[1].solved and found[1].status == "node limit" and found[1].actions == ()
    assert found[1].nodes_generated == 14


def test_merge_counts_time_from_when_the_first_member_began() -> None:
    a = [_solved((0, 1, 2), seconds=1.0, improvements=[(1.0, 3)])]
    b = [_solved((0,), seconds=0.5, improvements=[(0.5, 1)])]
    found, _ = merge(P, [a, b], began=[0.0, 3.0])  # b ran after a, in turn
    assert found[0].seconds == 3.5
    assert found[0].improvements == ((1.0, 3), (3.5, 1))


def test_merge_refuses_members_of_different_lengths() -> None:
    with pytest.raises(PuzzleError, match="different numbers"):
        merge(P, [[_solved((0,))], [_solved((0,)), _solved((1,))]])


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_members_run_side_by_side_and_report_in_the_callers_thread(threads: int) -> None:
    caller = threading.current_thread()
    ran_in: list[str] = []
    seen: list[tuple[int, int, int, bool]] = []

    def member(k: int, actions: tuple[int, ...]):
        def run(hook):
            ran_in.append(threading.current_thread().name)
            r = _solved(actions)
            if hook is not None:
                hook(0, r, k)
            return [r]

        return run

    found, winners = ensemble(
        [member(0, (0, 1, 2)), member(1, (0,)), member(2, (1, 2))],
        puzzle=P,
        threads=threads,
        on_solution=lambda m, row, r, stage: seen.append(
            (m, row, stage, threading.current_thread() is caller)
        ),
    )
    assert winners == [1] and found[0].actions == (0,)
    assert sorted(s[0] for s in seen) == [0, 1, 2]
    assert all(s[3] for s in seen)  # every report came in the caller's thread
    assert len(ran_in) == 3 and all(name.startswith("ensemble-") for name in ran_in)


def test_a_members_error_is_raised_after_the_others_end() -> None:
    ended = []

    def good(hook):
        ended.append(True)
        return [_solved((0,))]

    def bad(hook):
        raise PuzzleError("member failed")

    with pytest.raises(PuzzleError, match="member failed"):
        ensemble([bad, good], puzzle=P, threads=2)
    assert ended == [True]


def test_an_error_of_the_callers_hook_is_raised_and_stops_the_reports() -> None:
    calls = []

    def member(hook):
        for row in range(3):
            hook(row, _solved((0,)), 0)
        return [_solved((0,))] * 3

    def on_solution(m, row, r, stage):
        calls.append(row)
        raise KeyError("display closed")

    with pytest.raises(KeyError):
        ensemble([member, member], puzzle=P, threads=2, on_solution=on_solution)
    assert calls == [0]


def test_no_member_is_an_error() -> None:
    with pytest.raises(PuzzleError, match="at least one"):
        ensemble([], puzzle=P)


def test_costs_come_from_the_puzzle_where_a_result_has_none() -> None:
    # half turns cost 1.5 (moves 2, 5, ...), quarter turns 1: of two one-move solutions the
    # quarter turn is cheaper, and of a half turn and two quarter turns the half turn
    p = Cube3HTM(half_turn_cost=1.5)
    assert p.action_costs.tolist()[:3] == [1.0, 1.0, 1.5]
    half = [SearchResult(True, (2,), 1, 1, 0.1, "solved")]
    quarter = [SearchResult(True, (0,), 1, 1, 0.1, "solved")]
    two = [SearchResult(True, (0, 0), 1, 1, 0.1, "solved")]
    found, winners = merge(p, [half, quarter])
    assert winners == [1] and found[0].cost == 1.0
    found, winners = merge(p, [two, half])
    assert winners == [1] and found[0].cost == 1.5


def test_each_members_network_gets_one_thread_in_its_own_thread() -> None:
    from functools import partial

    from puzzlezero.nn import runtime

    seen: list[int | None] = []
    gate = threading.Barrier(2, timeout=10)

    def member(hook):
        gate.wait()  # both members inside their contexts at once
        seen.append(getattr(runtime._local, "threads", None))
        return [_solved((0,))]

    ensemble([member, member], puzzle=P, threads=2, thread_context=partial(runtime.call_threads, 1))
    assert seen == [1, 1]
    assert getattr(runtime._local, "threads", None) is None  # the caller's own count is untouched


def test_torchs_process_wide_count_is_restored_when_the_last_thread_leaves() -> None:
    torch = pytest.importorskip("torch")
    from puzzlezero.nn import runtime

    before = torch.get_num_threads()
    inside: list[int] = []
    entered, leave_first = threading.Barrier(2, timeout=10), threading.Event()

    def body(first: bool) -> None:
        with runtime.call_threads(1):
            entered.wait()
            if first:
                leave_first.set()
            else:
                leave_first.wait(10)
                inside.append(torch.get_num_threads())  # the other thread has left: still 1

    threads = [threading.Thread(target=body, args=(k == 0,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert inside == [1]
    assert torch.get_num_threads() == before
