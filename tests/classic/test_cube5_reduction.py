"""The 5x5x5's reduction to a 3x3x3: its pieces read from the moves, the wings and the midges
paired by their beams (every answer replayed), the 3x3x3's moves, and (behind the slow marker:
their tables take a minute or two to build) the centres' phases and a whole reduction."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic import cube5_reduction as c5
from puzzlezero.classic import cube_reduction, reduction_of
from puzzlezero.classic.cube5_midges import midge_moves, pair_midges
from puzzlezero.classic.cube5_wings import (
    WingGeometry,
    pair_wings,
    pairs_match_midges,
    scramble,
    wings_paired,
)
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.cube.frames import Cube3View


@pytest.fixture(scope="module")
def cube5():
    return make("cube_5-5-5")


@pytest.fixture(scope="module")
def geo(cube5):
    return c5.CubeGeometry5.of(cube5)


def test_the_pieces_are_read_from_the_moves(cube5, geo):
    assert len(geo.centres) == 54 and geo.wings.shape == (24, 2) and geo.midges.shape == (12, 2)
    assert geo.edges.shape == (12, 6) and geo.corners.shape == (8, 3)
    assert np.bincount(geo.move_kind).tolist() == [12, 12, 6]
    # only an inner slice's quarter turn changes the wing parity
    assert np.array_equal(geo.wing_odd.astype(bool), geo.move_kind == 1)
    names = cube5.format_moves(list(range(30)))
    for a, name in enumerate(names):
        assert geo.move_kind[a] == {"0": 0, "4": 0, "2": 2}.get(name[1], 1)
        assert geo.move_axis[a] == geo.move_axis[names.index(name[0] + "0")]
    goal = np.asarray(cube5.goal())[None]
    assert c5.edges_paired(geo, goal).all() and c5.centres_home(geo, goal)[0] == 0
    # the three inner slices turned together turn it like a 3x3x3's middle slice, four faces'
    # centres to other faces; the middle slice alone does not
    turned = cube5.apply_moves(goal[0], cube5.parse_moves("f1 f2 f3"))
    assert c5._turns_like(geo, turned) and c5.centres_home(geo, turned[None])[0] == 36
    assert not c5._turns_like(geo, cube5.apply_moves(goal[0], cube5.parse_moves("f2")))


def test_other_puzzles_are_refused_by_name(cube5):
    with pytest.raises(PuzzleError, match="5x5x5"):
        c5.CubeGeometry5.of(make("cube_4-4-4"))
    assert reduction_of(cube5) is c5 and reduction_of(make("cube_4-4-4")) is cube_reduction


def test_the_wings_pair_as_the_midges_stand(cube5, geo):
    wgeo = WingGeometry.of(cube5)
    rng = np.random.default_rng(1)
    for _ in range(3):
        start = scramble(cube5, rng, 40)
        moves = pair_wings(cube5, start)
        assert moves is not None
        end = cube5.apply_moves(start, moves)
        assert wings_paired(wgeo, end) and c5.centres_home(geo, end[None])[0] == 0
        assert pairs_match_midges(wgeo, end)


def test_an_odd_wing_parity_is_refused_by_name(cube5, geo):
    state = np.asarray(cube5.goal()).copy()
    a, b = geo.wings[0], geo.wings[2]
    state[a], state[b] = state[b].copy(), state[a].copy()
    with pytest.raises(InvalidStateError, match="odd"):
        pair_wings(cube5, state)


def test_the_midges_come_between_their_wings(cube5, geo):
    moves = midge_moves(cube5)
    rng = np.random.default_rng(2)
    for _ in range(3):
        seq = [a for i in rng.integers(len(moves), size=12) for a in moves.actions[int(i)]]
        start = cube5.apply_moves(np.asarray(cube5.goal()), seq)
        assert not c5.edges_paired(geo, start[None]).all()
        answer = pair_midges(cube5, start)
        assert answer is not None
        end = cube5.apply_moves(start, answer)
        assert c5.edges_paired(geo, end[None]).all() and c5.centres_home(geo, end[None])[0] == 0


def test_the_3x3x3_moves_turn_a_reduced_cube_alike(cube5):
    cube3 = make("cube_3-3-3")
    moves = c5.moves_of_3x3x3(cube5, cube3)
    assert sorted(len(m) for m in moves) == [1] * 12 + [3] * 6
    rng = np.random.default_rng(3)
    for _ in range(5):
        seq = rng.integers(0, 18, 25)
        three = cube3.apply_moves(np.asarray(cube3.goal()), list(seq))
        five = cube5.apply_moves(np.asarray(cube5.goal()), [a for j in seq for a in moves[j]])
        assert np.array_equal(c5.to_3x3x3(cube5, five), three)


@pytest.mark.slow
def test_a_deep_state_is_reduced_to_a_3x3x3(cube5, geo):
    view = Cube3View(make("cube_3-3-3"))
    for seed in (10, 11):
        start = cube5.scramble(np.random.default_rng(seed), 1, 150)[0]
        centres = c5.centre_solutions(cube5, start, 3)
        for way in centres:
            end = cube5.apply_moves(start, way)
            assert c5.centres_home(geo, end[None])[0] == 0 and c5.wing_parity(geo, end) == 0
        assert len(centres[0]) <= 50
        r = c5.reduce_cube(cube5, start)
        end = cube5.apply_moves(start, list(r.actions))
        assert np.array_equal(end, r.state) and c5._turns_like(geo, end)
        assert c5.centres_home(geo, end[None])[0] == 0 and sum(r.parts) == len(r.actions)
        # a 3x3x3 with its centres home: cube3 reads it in its own frame
        _, frame = view.cube3(c5.to_3x3x3(cube5, end)[None])
        assert int(frame[0]) == 0


@pytest.mark.slow
def test_the_default_solve_reduces_then_solves_the_3x3x3():
    from puzzlezero.solver import solve

    cube5 = make("cube_5-5-5")
    start = cube5.scramble(np.random.default_rng(7), 1, 150)[0]
    c5.build_reduction_tables(cube5)
    r = solve(cube5, start, time_limit=120)
    assert r.solved and r.search == "cube-reduction" and r.fallback is None
    end = cube5.apply_moves(start, list(r.actions))
    assert bool(cube5.is_goal(np.asarray(end)[None])[0])
    assert r.length is not None and r.length < 160


@pytest.mark.parametrize("kind", ["middle", pytest.param("x", marks=pytest.mark.slow)])
def test_axis_0s_first_table_turned_reads_as_each_axiss_own(cube5, geo, kind, tmp_path, monkeypatch):
    """The first phase's tables of axes 1 and 2 are axis 0's, read on the state turned as a whole:
    the same distance as the table grown for that axis, on every state tried."""
    monkeypatch.setenv("PUZZLEZERO_CACHE", str(tmp_path))
    c5._table.cache_clear()
    states = cube5.scramble(np.random.default_rng(4), 200, 60)[:, geo.centres]
    for axis in (1, 2):
        cells, turned = c5._phase1_table(cube5, kind, axis)
        assert isinstance(turned, c5._Turned)
        own = c5._table(cube5, kind, 1, axis, 0)
        mine = turned.depth_of(turned.keys(states[:, cells]))
        assert np.array_equal(mine, own.depth_of(own.keys(states[:, cells]))) and (mine >= 0).all()
    c5._table.cache_clear()
