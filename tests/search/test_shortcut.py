"""Shortcuts (search/shortcut.py): detours found by meeting in the middle, and the solver's pass."""

from __future__ import annotations

import doctest
from dataclasses import replace

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic.optimal import solve_optimal
from puzzlezero.errors import PuzzleError
from puzzlezero.search import shortcut as shortcut_module
from puzzlezero.search.result import SearchResult
from puzzlezero.search.shortcut import can_shortcut, shortcut
from puzzlezero.solver import resolve_options
from puzzlezero.solver.run import _shortened
from tests.clock import FakeClock


def _reaches(p, start, actions, end) -> bool:  # noqa: ANN001
    return bool(np.array_equal(p.apply_moves(start, list(actions)), end))


def test_doctest() -> None:
    assert doctest.testmod(shortcut_module).failed == 0


def _loop(p, state) -> list[int]:  # noqa: ANN001
    """Twelve moves around a 2x2 block that bring ``state`` back to itself, none undoing the last."""
    inv = p.inverse_action
    for first in range(p.num_actions):
        for second in range(p.num_actions):
            if second in (first, int(inv[first])):
                continue  # a walk straight back, not around a block
            cycle = [first, second, int(inv[first]), int(inv[second])]
            moves = cycle * 3
            if p.legal_mask(state[None])[0, first] and np.array_equal(p.apply_moves(state, moves), state):
                states = [p.apply_moves(state, moves[:k]) for k in range(len(moves))]
                if len({s.tobytes() for s in states}) == len(moves):  # no state twice
                    return moves
    raise AssertionError("no loop of twelve moves")


def test_a_detour_is_cut_out_and_an_optimal_path_is_left_alone() -> None:
    p = make("puzzle8")
    rng = np.random.default_rng(3)
    for _ in range(5):
        start = p.scramble(rng, 1, 40)[0]
        path = list(solve_optimal(p, start).actions)
        best = len(path)
        same = shortcut(p, start, path, max_states=50_000)
        assert list(same.actions) == path and same.rounds == 1  # nothing shorter exists
        k = len(path) // 2
        mid = p.apply_moves(start, path[:k])
        detour = path[:k] + _loop(p, mid) + path[k:]
        cut = shortcut(p, start, detour, max_states=50_000)
        assert len(cut.actions) == best  # the loop of 12 is gone
        assert _reaches(p, start, cut.actions, p.goal())


def test_two_detours_on_one_path_go_in_one_round_and_the_bound_holds() -> None:
    p = make("puzzle15")
    rng = np.random.default_rng(0)
    start = p.scramble(rng, 1, 60)[0]
    walk = [int(a) for a in rng.integers(0, 4, 30)]
    end = p.apply_moves(start, walk)
    a = p.apply_moves(start, walk[:10])
    b = p.apply_moves(start, walk[:20])
    path = walk[:10] + _loop(p, a) + walk[10:20] + _loop(p, b) + walk[20:]
    cut = shortcut(p, start, path, max_states=300_000)
    assert len(cut.actions) <= len(walk)
    assert _reaches(p, start, cut.actions, end)  # same end state, not only some goal
    assert cut.states <= cut.rounds * 300_000
    assert cut.radius >= 6  # a loop of 12 needs balls of radius 6 to meet


def test_a_path_through_one_state_twice_is_cut_there_without_balls() -> None:
    p = make("puzzle8")
    start = p.apply_moves(p.goal(), p.parse_moves("D D"))
    detour = _loop(p, start) + p.parse_moves("U U")
    cut = shortcut(p, start, detour, max_states=len(detour) + 1)  # no room for a level of balls
    assert list(cut.actions) == [0, 0] and cut.states <= cut.rounds * (len(detour) + 1)


def test_balls_too_small_to_meet_leave_the_path() -> None:
    p = make("puzzle8")
    rng = np.random.default_rng(1)
    start = p.scramble(rng, 1, 30)[0]
    walk, seen, cur = [], {start.tobytes()}, start
    while len(walk) < 16:  # a walk that never comes back to a state
        a = int(rng.integers(0, 4))
        nxt = p.apply_moves(cur, [a])
        if nxt.tobytes() not in seen:
            walk, cur = walk + [a], nxt
            seen.add(cur.tobytes())
    path = walk + list(solve_optimal(p, cur).actions)
    assert len({p.apply_moves(start, path[:k]).tobytes() for k in range(len(path) + 1)}) == len(path) + 1
    same = shortcut(p, start, path, max_states=len(path) + 1)
    assert list(same.actions) == path and same.radius == 0
    cut = shortcut(p, start, path, max_states=200_000)
    best = len(solve_optimal(p, start).actions)
    assert best <= len(cut.actions) < len(path) and _reaches(p, start, cut.actions, p.goal())


def _walk_on(p, state, moves: list[int], n: int, rng) -> list[int]:  # noqa: ANN001
    """``moves`` (a path from ``state``) and ``n`` more, none undoing the move before it."""
    moves, cur = list(moves), p.apply_moves(state, moves)
    while n:
        a = int(rng.integers(0, p.num_actions))
        nxt = p.apply_moves(cur, [a])
        if not np.array_equal(nxt, cur) and (not moves or a != int(p.inverse_action[moves[-1]])):
            moves, cur, n = moves + [a], nxt, n - 1
    return moves


def _slow(monkeypatch: pytest.MonkeyPatch, p, expand: float, match: float) -> FakeClock:  # noqa: ANN001
    """A fake machine: the searches' clock moves only by the work, ``expand`` seconds a state
    expanded and ``match`` seconds a ball entry matched (all else takes no time)."""
    clock = FakeClock(start=0.0)
    monkeypatch.setattr(shortcut_module.clock, "time", clock)  # the searches' one clock
    real_expand, real_found = p.expand, shortcut_module._found

    def slow_expand(states: np.ndarray) -> np.ndarray:
        clock.sleep(expand * states.shape[0])
        return real_expand(states)

    def slow_found(balls):  # noqa: ANN001, ANN202
        clock.sleep(match * balls.hashes.size)
        return real_found(balls)

    monkeypatch.setattr(p, "expand", slow_expand)
    monkeypatch.setattr(shortcut_module, "_found", slow_found)
    return clock


def _puzzle15_walk():  # noqa: ANN202
    p = make("puzzle15")
    rng = np.random.default_rng(0)
    start = p.scramble(rng, 1, 60)[0]
    return p, start, _walk_on(p, start, [], 40, rng)  # no move undone, but ways round 2x2 blocks


def test_the_balls_stop_growing_in_time_for_their_matching_to_end_by_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a machine that takes 0.1 ms to expand a state and 10 us to match an entry (a round of
    300,000 entries: 3 s of matching), every pass ends by its time limit: the balls stop growing
    early enough; stopping them at the deadline itself overran it by the matching."""
    p, start, path = _puzzle15_walk()
    unbounded = shortcut(p, start, path, max_states=300_000)
    assert len(unbounded.actions) < len(path) and unbounded.radius >= 6
    monkeypatch.setattr(shortcut_module, "_CHUNK_BYTES", 1000 * p.num_actions * 16)  # 1,000 a batch
    monkeypatch.setattr(shortcut_module, "FINISH_SECONDS", 1e-5)  # this machine's rate, known
    _slow(monkeypatch, p, expand=1e-4, match=1e-5)
    taken = []
    for limit in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0):
        late = shortcut(p, start, path, max_states=300_000, time_limit=limit)
        assert late.seconds <= limit and late.rounds >= 1
        assert _reaches(p, start, late.actions, p.apply_moves(start, path))
        taken.append(len(late.actions))
    assert taken[0] > taken[-1] == len(unbounded.actions)  # smaller balls met fewer ways
    monkeypatch.setattr(shortcut_module, "FINISH_SECONDS", 0.0)  # growing to the deadline
    assert shortcut(p, start, path, max_states=300_000, time_limit=4.0).seconds > 4.0
    assert shortcut(p, start, path, max_states=300_000, time_limit=0.0).rounds == 0


def test_a_level_cut_short_by_the_deadline_is_kept_as_far_as_it_grew(monkeypatch: pytest.MonkeyPatch) -> None:
    p, start, path = _puzzle15_walk()
    states = shortcut_module.path_states(p, start, path)
    whole = shortcut_module._grow(p, states, 300_000)
    levels = np.bincount(whole.depth)
    monkeypatch.setattr(shortcut_module, "_CHUNK_BYTES", 10 * p.num_actions * 16)  # 10 states a batch
    clock = _slow(monkeypatch, p, expand=0.1, match=0.0)  # a second a batch
    deadline = 4.5 + 1e-9 * 41  # room for four batches and matching the entries at 1 ns each
    cut = shortcut_module._grow(p, states, 300_000, deadline, shortcut_module._Pace(1e-9))
    assert clock.now == 4.0 and cut.radius == 1  # 41 path states, 5 batches of level 1: 4 grown
    kept = np.bincount(cut.depth)
    assert kept[0] == levels[0] == 41 and 0 < kept[1] < levels[1]
    assert (
        kept[1]
        == np.count_nonzero(cut.pos[cut.depth == 1] < 40)
        == np.count_nonzero(whole.pos[whole.depth == 1] < 40)
    )
    assert cut.grown_at == 4.0 and clock.now + 1e-9 * cut.hashes.size <= deadline
    for e in np.flatnonzero(cut.depth == 1):  # each entry a child of its path state, as in the whole
        child = p.apply_moves(states[cut.pos[e]], cut.moves_from_root(int(e)))
        assert p.hash64(child[None])[0] == cut.hashes[e]


def test_the_next_round_plans_at_the_rate_the_last_one_took(monkeypatch: pytest.MonkeyPatch) -> None:
    p, start, path = _puzzle15_walk()
    _slow(monkeypatch, p, expand=0.0, match=3e-6)
    rates = []
    real_grow = shortcut_module._grow

    def grow(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        rates.append(args[4].finish)  # the rate it was handed, before it measures its batches
        return real_grow(*args, **kwargs)

    monkeypatch.setattr(shortcut_module, "_grow", grow)
    cut = shortcut(p, start, path, max_states=300_000, time_limit=100.0)
    assert cut.rounds == len(rates) >= 2
    assert rates[0] == shortcut_module.FINISH_SECONDS and rates[1:] == pytest.approx(
        [3e-6] * (len(rates) - 1)
    )


def test_a_batch_of_children_is_bounded_in_bytes_and_changes_nothing_but_the_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """65,536 states a batch, fewer where their children pass 64 MiB: the 8/25 globe (450
    one-byte stickers, 68 moves) expands 2,193 at a time. Batches of 10 states give the same
    balls and the same answer as batches of 65,536."""
    assert shortcut_module._chunk(make("puzzle15")) == 65_536
    assert shortcut_module._chunk(make("globe_8-25")) == (64 << 20) // (68 * 450) == 2_193
    p, start, path = _puzzle15_walk()
    whole = shortcut(p, start, path, max_states=300_000)
    monkeypatch.setattr(shortcut_module, "_CHUNK_BYTES", 10 * p.num_actions * 16)  # 10 states
    assert shortcut_module._chunk(p) == 10
    small = shortcut(p, start, path, max_states=300_000)
    assert (small.actions, small.radius, small.states) == (whole.actions, whole.radius, whole.states)


def test_which_puzzles_it_takes_and_bad_bounds() -> None:
    assert can_shortcut(make("puzzle15")) and can_shortcut(make("cube2"))
    sokoban = make("sokoban")
    assert not can_shortcut(sokoban)  # pushes have no inverse
    with pytest.raises(PuzzleError, match="max_states"):
        shortcut(make("puzzle8"), make("puzzle8").goal(), [0, 1], max_states=0)
    with pytest.raises(PuzzleError, match="do not fit in memory"):  # 8 PB of hashes alone
        shortcut(make("puzzle8"), make("puzzle8").goal(), [0, 1], max_states=10**15)


def test_the_solver_runs_it_by_the_puzzles_defaults_and_on_request() -> None:
    p48 = make("puzzle48")
    assert resolve_options(p48).shortcut > 0  # its own settings
    assert resolve_options(p48, beam_width=1000).shortcut > 0
    assert resolve_options(p48, search="bwas").shortcut == 0  # a named search is measured as it is
    assert resolve_options(p48, shortcut=0).shortcut == 0
    assert resolve_options(make("puzzle15")).shortcut == 0
    assert resolve_options(make("puzzle15"), shortcut=1000).shortcut == 1000
    with pytest.raises(PuzzleError, match="shortcut must be"):
        resolve_options(p48, shortcut=-1)
    with pytest.raises(PuzzleError, match="inverse"):
        resolve_options(make("sokoban"), shortcut=1000)


def test_the_solver_pass_keeps_the_search_length_and_adds_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import puzzlezero.solver.run as run_module

    real = run_module.find_shortcuts
    # each pass reports half a second: the result's seconds are the search's plus the pass's
    monkeypatch.setattr(run_module, "find_shortcuts", lambda *a, **k: replace(real(*a, **k), seconds=0.5))
    p = make("puzzle8")
    start = p.apply_moves(p.goal(), p.parse_moves("D D"))
    detour = tuple(_loop(p, start) + p.parse_moves("U U"))
    found = SearchResult(True, detour, 100, 5, 1.5, "solved", improvements=((0.5, 20), (1.5, 14)))
    plain = SearchResult(True, (0, 0), 10, 1, 0.2, "solved")
    unsolved = SearchResult(False, (), 10, 1, 0.2, "node limit")
    o = replace(resolve_options(p), shortcut=100_000)
    out, searched = _shortened(p, np.stack([start, start, start]), [found, plain, unsolved], o)
    assert out[0].actions == (0, 0) and searched[0] == len(detour)
    assert out[0].seconds == 1.5 + 0.5 and out[0].improvements[-1] == (2.0, 2)
    assert out[1].seconds == 0.2 + 0.5  # a path the pass could not shorten still spent its time
    assert out[0].improvements[:2] == found.improvements
    assert searched[1:] == [None, None] and out[2] == unsolved
    off, searched_off = _shortened(p, np.stack([start]), [found], replace(o, shortcut=0))
    assert off[0].actions == detour and searched_off == [None]


def test_the_check_script_cuts_a_reports_detour_and_refuses_what_it_cannot(tmp_path, capsys) -> None:
    import json

    from tests.conftest import load_script

    script = load_script("experiments/shortcut_check.py")
    p = make("puzzle8")
    start = p.apply_moves(p.goal(), p.parse_moves("D D"))
    detour = _loop(p, start) + p.parse_moves("U U")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"puzzle": "puzzle8", "cases": [{"id": 0, "tiles": start.tolist()}]}))
    report = tmp_path / "report.json"
    summary = {"puzzle": "puzzle8", "cases_file": str(cases)}
    results = [{"id": 0, "solved": True, "solution": p.format_moves(detour)}]
    report.write_text(json.dumps({"summary": summary, "results": results}))
    assert script.main([str(report), "--states", "1e3,1e5"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("1,000", "14.00", "2.00"), ("100,000", "14.00", "2.00")]
    report.write_text(json.dumps({"summary": {"puzzle": "sokoban"}, "results": []}))
    assert script.main([str(report)]) == 2
    assert "inverse" in capsys.readouterr().err
