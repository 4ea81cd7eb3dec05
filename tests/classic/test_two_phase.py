"""Kociemba's two-phase search in the quarter-turn metric: its coordinates and tables against their
definitions, its answers replayed and, where the search can finish, optimal."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic import two_phase as tp
from puzzlezero.classic.optimal.cube_model import CORNER_MOVE, EDGE_MOVE, SOLVED, apply_moves
from puzzlezero.errors import InvalidStateError, PuzzleError

CUBE = make("cube3")
KERNEL = [
    CUBE.action_names.index(n) for n in ("U", "U'", "R", "R'", "F", "F'", "D", "D'", "L", "L'", "B", "B'")
]


@pytest.fixture(scope="module")
def tables() -> tp.TwoPhaseTables:
    return tp.two_phase_tables()


def coordinates(v: np.ndarray) -> tuple[int, int, int]:
    """(twist, flip, slice) of piece values, straight from their definitions."""
    co, eo, ep = np.zeros(8, int), np.zeros(12, int), np.zeros(12, int)
    co[v[:8] // 3] = v[:8] % 3
    eo[v[8:] // 2] = v[8:] % 2
    ep[v[8:] // 2] = np.arange(12)
    twist = int(sum(int(c) * 3 ** (6 - i) for i, c in enumerate(co[:7])))
    flip = int(sum(int(e) * 2 ** (10 - i) for i, e in enumerate(eo[:11])))
    return twist, flip, int(tp._slice_rank(ep))


def test_ranks_are_bijections() -> None:
    assert {tuple(tp._perm_unrank(r, 4)) for r in range(24)} == set(permutations(range(4)))
    for n, ranks in ((4, range(24)), (8, range(0, tp.N_PERM8, 7))):
        for r in ranks:
            assert tp._perm_rank(tp._perm_unrank(r, n)) == r
    assert tp._perm_rank(np.arange(8)) == 0
    ranks = {int(tp._slice_rank(tp._slice_unrank(r))) for r in range(tp.N_SLICE)}
    assert ranks == set(range(tp.N_SLICE))
    assert tp._slice_rank(np.arange(12)) == tp.SLICE_HOME  # FR FL BL BR in the slice


def test_move_tables_follow_the_cube(tables: tp.TwoPhaseTables) -> None:
    rng = np.random.default_rng(3)
    for _ in range(30):
        v = apply_moves(SOLVED, rng.integers(0, 12, 25))
        tw, fl, sl = coordinates(v)
        for m in range(12):
            assert coordinates(apply_moves(v, [m])) == (
                tables.tw_move[tw, m],
                tables.fl_move[fl, m],
                tables.sl_move[sl, m],
            )


def test_phase1_table_is_the_exact_distance_near_the_goal(tables: tp.TwoPhaseTables) -> None:
    """Breadth first over (twist, flip, slice) from the goal to depth 5: every coordinate's table
    value is its depth."""
    t = tables
    layer = {(0, 0, tp.SLICE_HOME)}
    seen = set(layer)
    for depth in range(6):
        for tw, fl, sl in layer:
            assert tp._h1(tw, fl, sl, 0, t.fs_class, t.fs_sym, t.twist_conj, t.p1, t.ce_h1) == depth
        nxt = set()
        for tw, fl, sl in layer:
            for m in range(12):
                c = (int(t.tw_move[tw, m]), int(t.fl_move[fl, m]), int(t.sl_move[sl, m]))
                if c not in seen:
                    seen.add(c)
                    nxt.add(c)
        layer = nxt
    assert len(seen) > 10_000


def test_phase1_table_is_symmetric_and_consistent(tables: tp.TwoPhaseTables) -> None:
    """Along any move the exact distance changes by at most one, and it is 0 only in G1."""
    t = tables
    rng = np.random.default_rng(5)
    for _ in range(300):
        v = apply_moves(SOLVED, rng.integers(0, 12, 40))
        tw, fl, sl = coordinates(v)
        h = tp._h1(tw, fl, sl, 0, t.fs_class, t.fs_sym, t.twist_conj, t.p1, t.ce_h1)
        assert (h == 0) == (tw == 0 and fl == 0 and sl == tp.SLICE_HOME)
        assert 0 <= h <= 13
        kids = [
            tp._h1(
                t.tw_move[tw, m],
                t.fl_move[fl, m],
                t.sl_move[sl, m],
                0,
                t.fs_class,
                t.fs_sym,
                t.twist_conj,
                t.p1,
                t.ce_h1,
            )
            for m in range(12)
        ]
        assert all(abs(k - h) <= 1 for k in kids) and (h == 0 or min(kids) == h - 1)


def test_phase2_tables_count_half_turns_twice(tables: tp.TwoPhaseTables) -> None:
    t = tables
    # one quarter turn of U is 1; R2 is 2 (and nothing in G1 is closer)
    u = tables.phase2_moves.index((0,))
    r2 = tables.phase2_moves.index((2, 2))
    for mv, cost in ((u, 1), (r2, 2)):
        c, s = int(t.cp_move[0, mv]), int(t.sc_move[0, mv])
        e = int(t.ep_move[0, mv])
        assert max(t.p2_cs[c * tp.N_PERM4 + s], t.p2_es[e * tp.N_PERM4 + s]) == cost


def test_inverse_pieces_undo_the_moves() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        moves = rng.integers(0, 12, 30)
        v = apply_moves(SOLVED, moves)
        inv = tp.invert_pieces(v)
        assert (inv == apply_moves(SOLVED, [m ^ 1 for m in moves[::-1]])).all()
        assert (apply_moves(v, [m ^ 1 for m in moves[::-1]]) == SOLVED).all()
        assert (tp.invert_pieces(inv) == v).all()


def test_merging_runs_about_one_axis_keeps_the_cube() -> None:
    rng = np.random.default_rng(9)
    for _ in range(200):
        moves = [int(m) for m in rng.choice([0, 1, 6, 7, 2, 3], rng.integers(1, 9))]
        merged = tp.merge_axis_runs(moves)
        assert (apply_moves(SOLVED, merged) == apply_moves(SOLVED, moves)).all()
        assert len(merged) <= len(moves)
    assert tp.merge_axis_runs([0, 6, 1, 2, 2, 2]) == [6, 3]  # U D U' R R R -> D R'
    assert tp.merge_axis_runs([0, 0, 0]) == [1]
    assert tp.merge_axis_runs([2, 8, 3, 9]) == []


def replayed(state: np.ndarray, actions: tuple[int, ...]) -> bool:
    return bool(CUBE.is_goal(CUBE.apply_moves(state, list(actions))[None])[0])


@pytest.mark.parametrize("guises", [1, 6])
def test_short_scrambles_come_back_optimal(guises: int) -> None:
    """A scramble of k quarter turns: the search finishes (so its answer is optimal) within k."""
    rng = np.random.default_rng(guises)
    for k in range(1, 8):
        state = CUBE.apply_moves(CUBE.goal(), [KERNEL[m] for m in rng.integers(0, 12, k)])
        r = tp.solve_two_phase(CUBE, state, time_limit=120, guises=guises)
        assert r.solved and replayed(state, r.actions) and len(r.actions) <= k
        assert len(r.actions) % 2 == k % 2  # a quarter-turn answer has the scramble's parity


def test_a_cube_in_g1_and_the_solved_cube() -> None:
    g1 = CUBE.parse("R2 U D' F2 L2 U2 B2 D")  # phase 1 has nothing to do; 13 quarter turns
    r = tp.solve_two_phase(CUBE, g1, time_limit=60)
    assert r.solved and replayed(g1, r.actions) and len(r.actions) <= 13
    assert tp.solve_two_phase(CUBE, CUBE.goal(), time_limit=1).actions == ()


def test_deep_states_get_answers_that_improve_by_two(fake) -> None:
    """On a fake clock the search runs to its node cap; every answer reported replays, each two
    quarter turns shorter than the one before (the parity of a cube's answers)."""
    rng = np.random.default_rng(21)
    for state in CUBE.scramble(rng, 3, depth=100):
        got: list = []
        r = tp.solve_two_phase(CUBE, state, max_nodes=3_000_000, on_solution=got.append)
        assert r.solved and replayed(state, r.actions) and len(r.actions) <= 30
        lengths = [len(x.actions) for x in got]
        assert lengths[-1] == len(r.actions) and all(
            a - b >= 2 for a, b in zip(lengths, lengths[1:], strict=False)
        )
        assert all(replayed(state, x.actions) for x in got)
        assert r.improvements == tuple((x.seconds, len(x.actions)) for x in got)


def test_the_deadline_ends_the_search(fake) -> None:
    state = CUBE.scramble(np.random.default_rng(4), 1, depth=100)[0]
    fake.tick = 0.1  # each reading of the clock 100 ms later
    r = tp.solve_two_phase(CUBE, state, time_limit=0.5)
    assert r.solved and replayed(state, r.actions)
    assert r.seconds <= 1.0


def test_bad_puzzles_and_states_are_refused_by_name() -> None:
    with pytest.raises(PuzzleError, match="cube3 .12 quarter turns.; cube3htm has 18"):
        tp.solve_two_phase(make("cube3htm"), make("cube3htm").goal(), time_limit=1)
    with pytest.raises(PuzzleError, match="guises is 1 to 6"):
        tp.solve_two_phase(CUBE, CUBE.goal(), guises=7)
    twisted = CUBE.goal().copy()
    twisted[8], twisted[9], twisted[20] = twisted[9], twisted[20], twisted[8]  # one corner twisted
    with pytest.raises(InvalidStateError, match="twisted"):
        tp.solve_two_phase(CUBE, twisted, time_limit=1)


def test_phase2_reaches_every_permutation(tables: tp.TwoPhaseTables) -> None:
    """G1's moves reach every corner and U/D-edge permutation with every slice permutation."""
    assert (tables.p2_cs >= 0).all() and (tables.p2_es >= 0).all()


def test_move_tables_match_the_piece_tables() -> None:
    cdest, ctw, edest, efl = tp._position_moves(CORNER_MOVE, EDGE_MOVE)
    for m in range(12):
        assert sorted(cdest[m]) == list(range(8)) and sorted(edest[m]) == list(range(12))
        assert ctw[m].sum() % 3 == 0 and efl[m].sum() % 2 == 0
