"""The 4x4x4's reduction to a 3x3x3: its pieces read from the moves, the centres' tables against
their counted sizes, the edges paired, the parity fixes by their effect, the 3x3x3's moves, and a
whole solve replayed."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic import cube_reduction as cr
from puzzlezero.errors import InvalidStateError, MissingTableError, PuzzleError
from puzzlezero.puzzles.cube.frames import Cube3View
from puzzlezero.puzzles.cube.rules import permutation_parity
from puzzlezero.storage import forbid_table_builds


@pytest.fixture(scope="module")
def cube4():
    return make("cube_4-4-4")


@pytest.fixture(scope="module")
def geo(cube4):
    return cr.CubeGeometry.of(cube4)


def _deep(cube4, seed: int) -> np.ndarray:
    return cube4.scramble(np.random.default_rng(seed), 1, 150)[0]


def test_the_pieces_are_read_from_the_moves(cube4, geo):
    assert len(geo.centres) == 24 and geo.wings.shape == (24, 2) and geo.slots.shape == (12, 4)
    assert geo.corners.shape == (8, 3)
    names = cube4.action_names
    # an inner slice's quarter turn is a 4-cycle of wings (odd); an outer layer's, two (even)
    for a, name in enumerate(names):
        inner = name.rstrip("'")[1] in "12"
        assert bool(geo.wing_odd[a]) == inner
        assert bool(geo.outer[a]) == (not inner)
    # the three axes are the three letters
    for a, name in enumerate(names):
        assert geo.move_axis[a] == geo.move_axis[names.index(name[0] + "0")]
    goal = np.asarray(cube4.goal())[None]
    assert cr.paired(geo, goal).all() and cr.centres_home(geo, goal)[0] == 0


def test_other_puzzles_are_refused_by_name():
    with pytest.raises(PuzzleError, match="4x4x4"):
        cr.CubeGeometry.of(make("cube_3-3-3"))
    with pytest.raises(PuzzleError, match="4x4x4"):
        cr.CubeGeometry.of(make("cube_5-5-5"))


def test_the_centre_tables_hold_every_arrangement(cube4):
    # phase 1: 8 of the 24 centre positions; phase 2: 8 of the 16 left, times the wing parity;
    # phase 3: each axis's 8 positions split 4 and 4
    assert [len(cr._phase1(cube4, a)) for a in range(3)] == [comb(24, 8)] * 3
    assert len(cr._phase2(cube4, 0, 1)) == 2 * comb(16, 8)
    assert len(cr._phase3(cube4)) == comb(8, 4) ** 3
    # one inner slice's quarter turn from the goal: one move from phase 1's goal for the two axes
    # it disturbs, none for its own
    a = cube4.action_names.index("d1")
    state = np.asarray(cube4.goal())[np.asarray(cube4.perms)[a]]
    geo = cr.CubeGeometry.of(cube4)
    depths = [
        int(t.depth_of(t.keys(state[geo.centres][None]))[0]) for t in (cr._phase1(cube4, k) for k in range(3))
    ]
    assert sorted(depths) == [0, 1, 1]


def test_the_centres_come_home_with_an_even_wing_parity(cube4, geo):
    for seed in range(3):
        start = _deep(cube4, seed)
        moves = cr.solve_centres(cube4, start)
        end = cube4.apply_moves(start, moves)
        assert cr.centres_home(geo, end[None])[0] == 0
        assert permutation_parity(cr.wing_permutation(end, geo.wings, geo.wing_ids, geo.num_labels)) == 0
        assert len(moves) <= 30
    # outer turns never move a centre sticker to another face
    start = cube4.apply_moves(np.asarray(cube4.goal()), cube4.parse_moves("f0 r3 d0' f3"))
    assert cr.solve_centres(cube4, start) == []


def test_the_parity_fix_swaps_two_edge_pairs_and_nothing_else(cube4, geo):
    fix = cr.pll_parity_fix(cube4)
    assert len(fix) == 14
    goal = np.asarray(cube4.goal())
    end = cube4.apply_moves(goal, list(fix))
    assert cr.is_reduced(geo, end) and np.array_equal(end[geo.corners], goal[geo.corners])
    moved = {int(k) for k in np.flatnonzero((end[geo.slots] != goal[geo.slots]).any(axis=1))}
    assert len(moved) == 2
    assert cr.pll_parity(cube4, end) and not cr.pll_parity(cube4, goal)


def test_the_3x3x3_moves_turn_a_reduced_cube_alike(cube4):
    cube3 = make("cube_3-3-3")
    moves = cr.moves_of_3x3x3(cube4, cube3)
    assert sorted(len(m) for m in moves) == [1] * 12 + [2] * 6
    rng = np.random.default_rng(3)
    for _ in range(5):
        seq = rng.integers(0, 18, 25)
        three = cube3.apply_moves(np.asarray(cube3.goal()), list(seq))
        four = cube4.apply_moves(np.asarray(cube4.goal()), [a for j in seq for a in moves[j]])
        assert np.array_equal(cr.to_3x3x3(cube4, four), three)


def test_a_deep_state_is_reduced_to_a_3x3x3(cube4, geo):
    view = Cube3View(make("cube_3-3-3"))
    for seed in (10, 11):
        start = _deep(cube4, seed)
        r = cr.reduce_cube(cube4, start, width=200)
        end = cube4.apply_moves(start, list(r.actions))
        assert np.array_equal(end, r.state)
        assert cr.is_reduced(geo, end) and not cr.pll_parity(cube4, end)
        assert permutation_parity(cr.wing_permutation(end, geo.wings, geo.wing_ids, geo.num_labels)) == 0
        assert sum(r.parts) == len(r.actions) and r.parts[2] in (0, 14)
        # a 3x3x3 with its centres home: cube3 reads it in its own frame, and it is solvable
        _, frame = view.cube3(cr.to_3x3x3(cube4, end)[None])
        assert int(frame[0]) == 0


def test_the_centre_solutions_are_distinct_and_of_the_fewest_moves(cube4, geo):
    start = _deep(cube4, 9)
    ways = cr.centre_solutions(cube4, start, 12)
    assert ways[0] == cr.solve_centres(cube4, start) and len(ways) > 1
    assert len({len(w) for w in ways}) == 1
    ends = [cube4.apply_moves(start, w) for w in ways]
    assert len({e.tobytes() for e in ends}) == len(ways)
    for end in ends:
        assert cr.centres_home(geo, end[None])[0] == 0
        assert permutation_parity(cr.wing_permutation(end, geo.wings, geo.wing_ids, geo.num_labels)) == 0


def test_another_centre_solution_is_paired_only_while_time_allows(cube4, fake, monkeypatch):
    calls = []
    real = cr.pair_edges

    def slow_give_up(*args, **kwargs):  # each beam takes 10 s and pairs nothing
        calls.append(kwargs["deadline"])
        fake.sleep(10.0)
        return None

    monkeypatch.setattr(cr, "pair_edges", slow_give_up)
    start = _deep(cube4, 8)
    tries = len(cr.PAIR_TRIES)
    # until a start pairs, every start is tried (while the deadline allows)
    t0 = fake.now
    with pytest.raises(InvalidStateError):
        cr.reduce_cube(cube4, start, starts=3, deadline=t0 + 1000, more_until=t0 + 1)
    assert len(calls) == 3 * tries
    # the first beam of each start ends by more_until, the others by the deadline
    assert calls[:tries] == [t0 + 1] + [t0 + 1000] * (tries - 1)
    # the deadline passed during the second start: no third
    calls.clear()
    with pytest.raises(TimeoutError):
        cr.reduce_cube(cube4, start, starts=3, deadline=fake.now + 10 * tries + 5)
    assert len(calls) == tries + 1

    # once a start has paired, another begins only if it would end by more_until
    monkeypatch.setattr(cr, "pair_edges", _timed(real, fake, 10.0, calls))
    calls.clear()
    t0 = fake.now
    one = cr.reduce_cube(cube4, start, width=100, starts=3, deadline=t0 + 1000, more_until=t0 + 15)
    assert len(calls) == 1  # the first took 10 s: a second would end at 20 s, after 15
    calls.clear()
    more = cr.reduce_cube(cube4, start, width=100, starts=3, deadline=fake.now + 1000)
    assert len(calls) == 3 and len(more.actions) <= len(one.actions)
    end = cube4.apply_moves(start, list(more.actions))
    assert cr.is_reduced(cr.CubeGeometry.of(cube4), end) and not cr.pll_parity(cube4, end)


def _timed(fn, fake, seconds, calls):
    def timed(*args, **kwargs):
        calls.append(kwargs["deadline"])
        fake.sleep(seconds)
        return fn(*args, **kwargs)

    return timed


def test_the_pairing_beam_stops_at_its_deadline(cube4):
    start = _deep(cube4, 5)
    centred = cube4.apply_moves(start, cr.solve_centres(cube4, start))
    assert cr.pair_edges(cube4, centred, deadline=-1.0) is None
    with pytest.raises(TimeoutError):
        cr.reduce_cube(cube4, start, deadline=-1.0)


def test_a_missing_table_names_its_command(cube4, monkeypatch, tmp_path):
    monkeypatch.setenv("PUZZLEZERO_CACHE", str(tmp_path))
    cr._phase1.cache_clear()
    forbid_table_builds(True)
    try:
        with pytest.raises(MissingTableError, match="puzzlezero pdb build cube_4-4-4 --kind reduction"):
            cr._phase1(cube4, 0)
    finally:
        forbid_table_builds(False)
        cr._phase1.cache_clear()


def test_the_default_solve_reduces_then_solves_the_3x3x3(monkeypatch):
    """Through ``solve``, at the default pairing widths: the reduction answers, replayed, and its
    first answer (the quick 3x3x3 solve's) is reported before the final one, which is never
    longer."""
    from puzzlezero.solver import reduced, solve

    cube4 = make("cube_4-4-4")
    start = _deep(cube4, 7)
    # the path, not the time rule (which a fake clock tests above): one centre solution, its
    # tables built before the clock (as bench and serve do; a fresh cache takes about 16 s), and
    # a limit the pairing (about 22 s on an idle 2-core machine) meets however loaded the machine;
    # the 3x3x3's full solve capped at its least, 5 s, from its default 30 (it fits its beams to
    # the time left)
    monkeypatch.setattr(reduced, "PAIR_STARTS", 1)
    real = reduced.solve

    def capped(*args, **kwargs):
        if kwargs.get("search") is None:
            kwargs["time_limit"] = min(kwargs["time_limit"], reduced.MIN_THREE_SECONDS)
        return real(*args, **kwargs)

    monkeypatch.setattr(reduced, "solve", capped)
    cr.build_reduction_tables(cube4)
    improvements = []
    r = solve(cube4, start, time_limit=600, on_solution=improvements.append)
    assert r.solved and r.search == "cube-reduction" and r.fallback is None
    end = cube4.apply_moves(start, list(r.actions))
    assert bool(cube4.is_goal(np.asarray(end)[None])[0])
    assert r.length is not None and r.length < 130
    assert improvements and r.length == min(i.length for i in improvements)
    assert improvements[0].seconds < r.seconds
    assert r.first_solution_seconds is not None and r.improvements[-1][1] == r.length


def test_the_first_reduction_is_an_answer_at_once(monkeypatch):
    """Anytime: each shorter reduction is made an answer by a quick two-phase 3x3x3 solve and
    passed on, every answer replayed; the shortest comes back, the quick one where cube3's full
    solve leaves the 3x3x3 unsolved."""
    from puzzlezero.solver import reduced
    from puzzlezero.solver.result import SolveResult

    cube4 = make("cube_4-4-4")
    start = _deep(cube4, 7)
    cr.build_reduction_tables(cube4)
    monkeypatch.setattr(reduced, "PAIR_STARTS", 2)
    # the anytime path, not the pairing's width (the default solve's test pairs at the default
    # widths): beams of 100 pair a centre solution in seconds where the default's take 20-45 s
    monkeypatch.setattr(cr, "PAIR_TRIES", tuple((r, 100, *rest) for r, _, *rest in cr.PAIR_TRIES))
    searches = []
    real = reduced.solve

    def full_solve_fails(*args, **kwargs):  # cube3's full solve leaves the 3x3x3 unsolved
        searches.append(kwargs.get("search"))
        if kwargs.get("search") == "two-phase":
            return real(*args, **kwargs)
        return SolveResult(reduced.FACES, False, (), (), 0, 0.0, "exhausted")

    monkeypatch.setattr(reduced, "solve", full_solve_fails)
    found = []
    r = reduced.solve_reduced(cube4, start, on_solution=found.append)
    assert searches[-1] is None and "two-phase" in searches  # quick solves, then cube3's own
    assert found and r.solved and r.actions == found[-1].actions
    lengths = [len(f.actions) for f in found]
    assert lengths == sorted(set(lengths), reverse=True)  # each shorter than the one before
    assert [n for _, n in r.improvements] == lengths  # the bench's first-answer time and curve
    for f in found:
        end = cube4.apply_moves(start, list(f.actions))
        assert bool(cube4.is_goal(np.asarray(end)[None])[0])


def test_an_answer_that_does_not_replay_is_an_error_not_a_fallback(monkeypatch):
    from puzzlezero.solver import reduced

    cube4 = make("cube_4-4-4")
    goal = cube4.goal().reshape(-1)

    def reduce(puzzle, start, *, on_reduction=None, **kwargs):  # the goal, reduced at once
        r = cr.Reduction((), goal, (0, 0, 0))
        on_reduction(r)
        return r

    monkeypatch.setattr(cr, "reduce_cube", reduce)
    monkeypatch.setattr(reduced, "_answer", lambda *args: (0,))  # one move: not the goal
    with pytest.raises(RuntimeError, match="does not solve"):
        reduced.solve_reduced(cube4, goal, deadline=None)


def test_a_pairing_that_gives_up_leaves_the_state_to_the_fallback(monkeypatch):
    from puzzlezero.solver import reduced, solve

    cube4 = make("cube_4-4-4")
    calls = []

    def gives_up(*args, **kwargs):
        calls.append(kwargs)
        return None

    monkeypatch.setattr(cr, "pair_edges", gives_up)
    start = _deep(cube4, 8)
    r = solve(cube4, start, time_limit=30)
    # every (weight, finishing width) from every centre solution is tried before the reduction
    # gives the state up
    starts = len(cr.centre_solutions(cube4, start, reduced.PAIR_STARTS))
    assert starts > 1 and len(calls) == len(cr.PAIR_TRIES) * starts
    assert r.solved and r.fallback == "group"
    end = cube4.apply_moves(start, list(r.actions))
    assert bool(cube4.is_goal(np.asarray(end)[None])[0])


def test_the_memory_estimate_covers_the_3x3x3s_solve(cube4):
    # the reduction's pairing beam, then cube3's solve: the search's estimate is the larger
    from puzzlezero.solver.memory import memory_estimate
    from puzzlezero.solver.resolve import resolve_options

    cube3 = make("cube3")
    o3, o4 = resolve_options(cube3), resolve_options(cube4)
    assert o4.search == "cube-reduction"
    estimate = memory_estimate(cube4, o4.search, o4)
    assert estimate >= cr.memory_estimate(cube4)
    assert estimate >= min(memory_estimate(cube3, o3.search, o3), 1 << 30)


def test_a_key_holds_two_bits_a_class_the_first_lowest_and_the_parity_at_bit_60():
    rng = np.random.default_rng(5)
    for n in (1, 3, 4, 5, 8, 24, 30):
        classes = rng.integers(0, 4, (6, n)).astype(np.uint8)
        parity = rng.integers(0, 2, 6).astype(np.uint8)
        by_hand = [sum(int(c) << (2 * i) for i, c in enumerate(row)) for row in classes]
        assert cr._pack(classes, None).tolist() == by_hand
        with_parity = [k | (int(p) << 60) for k, p in zip(by_hand, parity, strict=True)]
        assert cr._pack(classes, parity).tolist() == with_parity
        # any leading shape, one key per row
        assert cr._pack(classes.reshape(2, 3, n), None).tolist() == np.reshape(by_hand, (2, 3)).tolist()
