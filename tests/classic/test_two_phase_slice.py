"""The two-phase search in the slice quarter-turn metric of the competition's 3x3x3: its moves
against cube3's turns and the puzzle's own, its answers replayed, optimal where it finishes."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic import build_tables
from puzzlezero.classic import two_phase as tp
from puzzlezero.classic import two_phase_slice as ts
from puzzlezero.classic.optimal.cube_model import CORNER_FACELETS, CORNER_MOVE, EDGE_MOVE, MOVE_NAMES, SOLVED
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.search.goal_ball import cached_goal_ball
from puzzlezero.search.result import SearchResult

CUBE = make("cube_3-3-3")


@pytest.fixture(scope="module")
def cube() -> ts.SliceCube:
    return ts.slice_cube(CUBE)


@pytest.fixture(scope="module")
def tables() -> tp.TwoPhaseTables:
    return ts.slice_tables(CUBE)


def replay(cube: ts.SliceCube, moves: list[int]) -> tuple[np.ndarray, int, list[int]]:
    """Kernel moves from the goal: the pieces, the frame and the competition's moves that make them."""
    v, frame, actions = SOLVED.copy(), 0, []
    for m in moves:
        v[:8] = cube.metric.cmove[v[:8], m]
        v[8:] = cube.metric.emove[v[8:], m]
        actions.append(int(cube.actions[frame, m]))
        frame = int(cube.metric.ce_move[frame, m])
    return v, frame, actions


def test_moves_are_face_turns_and_pairs_that_turn_the_frame(cube: ts.SliceCube) -> None:
    m = cube.metric
    for k, word in enumerate(ts.READING):
        turns = [MOVE_NAMES.index(n) for n in word]
        for move, seq in ((2 * k, turns), (2 * k + 1, [t ^ 1 for t in turns])):
            c, e = np.arange(24), np.arange(24)
            for t in seq:
                c, e = CORNER_MOVE[c, t], EDGE_MOVE[e, t]
            assert (m.cmove[:, move] == c).all() and (m.emove[:, move] == e).all()
            # a face turn keeps the frame; a pair (a middle slice) turns it in every frame
            assert ((m.ce_move[:, move] == np.arange(24)).all()) == (len(word) == 1)
            assert (m.ce_move[:, move] != np.arange(24)).all() or len(word) == 1
    # in each frame the eighteen moves are the puzzle's eighteen
    assert all(sorted(row) == list(range(18)) for row in cube.actions.tolist())


def test_pieces_follow_the_puzzles_own_moves(cube: ts.SliceCube) -> None:
    rng = np.random.default_rng(5)
    for _ in range(40):
        v, frame, actions = replay(cube, [int(x) for x in rng.integers(0, 18, 30)])
        state = CUBE.apply_moves(CUBE.goal(), actions)
        got, got_frame = cube.pieces(state)
        assert (got == v).all() and got_frame == frame
        assert (frame == 0) == bool(
            (
                np.asarray(state)[cube.view.stickers[4::9]]
                == np.asarray(CUBE.goal())[cube.view.stickers[4::9]]
            ).all()
        )


def test_phase2_keeps_g1_with_its_own_moves(tables: tp.TwoPhaseTables) -> None:
    # U, D and the E slice (U D') a quarter turn; the others' half turns
    quarters: list[tuple[int, ...]] = [(m,) for m in range(6)]
    halves: list[tuple[int, ...]] = [(m, m) for m in range(6, 18, 2)]
    assert sorted(tables.phase2_moves) == sorted(quarters + halves)
    assert (tables.p2_cs >= 0).all() and (tables.p2_es >= 0).all()
    assert (tables.p1 >= 0).all() and int(tables.ce_h1.max()) == 1 and int((tables.ce_p2 >= 0).sum()) == 8


def test_phase1_table_is_consistent_over_the_slice_moves(tables: tp.TwoPhaseTables) -> None:
    rng = np.random.default_rng(11)
    t = tables

    def h(tw: int, fl: int, sl: int) -> int:
        return int(t.p1[tp._p1_index(tw, fl, sl, t.fs_class, t.fs_sym, t.twist_conj)])

    for _ in range(300):
        tw, fl, sl = (
            int(rng.integers(tp.N_TWIST)),
            int(rng.integers(tp.N_FLIP)),
            int(rng.integers(tp.N_SLICE)),
        )
        here = h(tw, fl, sl)
        kids = [h(t.tw_move[tw, m], t.fl_move[fl, m], t.sl_move[sl, m]) for m in range(18)]
        assert all(abs(k - here) <= 1 for k in kids) and (here == 0 or min(kids) == here - 1)
    # the slice moves make phase 1 no longer, and shorter somewhere
    qtm = tp.two_phase_tables()
    sample = rng.integers(0, len(t.p1), 20_000)
    assert (t.p1[sample] <= qtm.p1[sample]).all() and (t.p1[sample] < qtm.p1[sample]).any()


def test_short_scrambles_come_back_optimal() -> None:
    ball = cached_goal_ball(CUBE, 100_000)
    rng = np.random.default_rng(2)
    for k in (1, 2, 3, 4, 4, 4):
        state = CUBE.apply_moves(CUBE.goal(), [int(a) for a in rng.integers(0, 18, k)])
        r = ts.solve_two_phase_slice(CUBE, state, time_limit=60)
        depth = int(ball.depth_of(CUBE.hash64(np.asarray(state)[None]))[0])
        assert r.solved and len(r.actions) == depth <= k
        assert CUBE.is_goal(CUBE.apply_moves(state, r.actions)[None])[0]


def test_deep_scrambles_are_answered_and_replayed() -> None:
    # the kernels compiled (or loaded from numba's cache) before the 3-s clocks below: with an
    # empty cache that takes about 12 s, which a timed search would spend finding nothing
    assert ts.solve_two_phase_slice(CUBE, CUBE.apply_moves(CUBE.goal(), [0, 5, 9]), time_limit=60).solved
    rng = np.random.default_rng(8)
    for guises in (1, 6):
        state = CUBE.apply_moves(CUBE.goal(), [int(a) for a in rng.integers(0, 18, 60)])
        got: list[int] = []

        def told(x: SearchResult, got: list[int] = got) -> None:
            got.append(len(x.actions))

        r = ts.solve_two_phase_slice(CUBE, state, time_limit=3, guises=guises, on_solution=told)
        assert r.solved and CUBE.is_goal(CUBE.apply_moves(state, r.actions)[None])[0]
        assert len(r.actions) <= 24 and got == sorted(got, reverse=True) and got[-1] == len(r.actions)
    assert ts.solve_two_phase_slice(CUBE, CUBE.goal(), time_limit=1).actions == ()


def test_other_puzzles_and_impossible_states_are_refused() -> None:
    with pytest.raises(PuzzleError, match="competition's 3x3x3"):
        ts.solve_two_phase_slice(make("cube3"), make("cube3").goal(), time_limit=1)
    with pytest.raises(PuzzleError, match="guises"):
        ts.solve_two_phase_slice(CUBE, CUBE.goal(), guises=7)
    stickers = ts.slice_cube(CUBE).view.stickers
    goal = np.asarray(CUBE.goal()).reshape(-1)
    swapped = goal.copy()
    u, f = stickers[4], stickers[22]  # two centres swapped: no turn of the cube
    swapped[u], swapped[f] = goal[f], goal[u]
    with pytest.raises(PuzzleError, match="centres"):
        ts.solve_two_phase_slice(CUBE, swapped, time_limit=1)
    twisted = goal.copy()
    a, b, c = stickers[CORNER_FACELETS[0]]  # one corner twisted in place
    twisted[a], twisted[b], twisted[c] = goal[b], goal[c], goal[a]
    with pytest.raises(InvalidStateError, match="twisted"):
        ts.solve_two_phase_slice(CUBE, twisted, time_limit=1)


def test_the_tables_are_built_by_name() -> None:
    # its own tables, and cube3's, which its default solve's route runs too
    lines = build_tables(CUBE, "two-phase")
    assert len(lines) == 2 and "slice quarter-turn" in lines[0] and lines[1].startswith("cube3: two-phase")
    with pytest.raises(PuzzleError, match="has none"):
        build_tables(make("cube_2-2-2"), "two-phase")
