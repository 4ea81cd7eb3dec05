"""Window re-solving (:mod:`puzzlezero.search.windows`) and its exact solvers between two states:
the sliding puzzles' IDA* to any board (:mod:`puzzlezero.classic.optimal.sliding_between`) and the
cube's (:func:`puzzlezero.classic.optimal.cube_ida.cube_between`). Every way is replayed."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic.optimal import solve_optimal, window_solver
from puzzlezero.classic.optimal.cube_ida import cube_between
from puzzlezero.classic.optimal.cube_pdb import CubePattern
from puzzlezero.classic.optimal.sliding_between import sliding_between
from puzzlezero.errors import PuzzleError
from puzzlezero.search.windows import resolve_windows
from puzzlezero.solver import resolve_options

SMALL_CUBE = (CubePattern("corner", (0, 1, 2, 3)), CubePattern("edge", (0, 1, 2, 3)))


def _walk(p, state, rng, k):
    return p.apply_moves(state, [int(a) for a in rng.integers(0, p.num_actions, size=k)])


def _relabelled(a: np.ndarray, b: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """Board ``a`` with each tile renamed to the goal's tile of the cell it holds on ``b``: a way
    from ``a`` to ``b`` is then a way from it to the goal (``b``'s blank where the goal's is)."""
    name = np.zeros(a.size, dtype=a.dtype)
    name[b] = goal
    return name[a]


@pytest.mark.parametrize("seed", range(12))
def test_the_sliding_window_solver_is_optimal_to_any_board(seed: int) -> None:
    p = make("puzzle8")
    rng = np.random.default_rng(seed)
    goal = p.goal()
    b = _walk(p, goal, rng, 40)
    # put b's blank where the goal's is, so that the optimal solver can check the distance
    blank = int(np.flatnonzero(b == 0)[0])
    r, c = divmod(blank, 3)
    b = p.apply_moves(b, p.parse_moves(["U"] * (2 - r) + ["L"] * (2 - c)))
    a = _walk(p, b, rng, int(rng.integers(6, 30)))
    shortest = solve_optimal(p, _relabelled(a, b, goal)).length
    way, nodes = sliding_between(p)(a, b, (), bound=100, max_nodes=10**7)
    assert way is not None and len(way) == shortest and nodes > 0
    assert np.array_equal(p.apply_moves(a, list(way)), b)
    # only a shorter way than the bound counts
    assert sliding_between(p)(a, b, (), bound=shortest, max_nodes=10**7)[0] is None
    if shortest >= 2:
        assert sliding_between(p)(a, b, (), bound=shortest + 1, max_nodes=10**7)[0] is not None


def test_the_sliding_window_solver_reaches_a_board_with_the_blank_anywhere() -> None:
    p = make("puzzle15")
    rng = np.random.default_rng(3)
    for _ in range(10):
        b = _walk(p, p.goal(), rng, 61)
        if b[-1] == 0:  # the blank off the goal's cell
            b = p.apply_moves(b, p.parse_moves("D"))
        a = _walk(p, b, rng, 25)
        way, _ = sliding_between(p)(a, b, (), bound=26, max_nodes=10**7)
        assert way is not None and len(way) <= 25
        assert np.array_equal(p.apply_moves(a, list(way)), b)


def test_a_node_bound_answers_none_and_leaves_the_board_as_given() -> None:
    p = make("puzzle24")
    rng = np.random.default_rng(0)
    a = _walk(p, p.goal(), rng, 300)
    b = _walk(p, a, rng, 60)
    a0 = a.copy()
    way, nodes = sliding_between(p)(a, b, (), bound=60, max_nodes=50)
    assert way is None and nodes == 50
    assert np.array_equal(a, a0)


def _loop_path(p):
    """A 15-puzzle start two moves from the goal and a path of 14 moves to it: the two moves with
    a 12-move loop (the blank three times round a 2x2 block) between them."""
    start = p.apply_moves(p.goal(), p.parse_moves("D D"))
    loop = p.parse_moves("U R D L U R D L U R D L")
    return start, p.parse_moves("U") + loop + p.parse_moves("U")


def test_windows_take_a_loop_out_and_the_path_still_solves() -> None:
    p = make("puzzle15")
    start, path = _loop_path(p)
    assert p.is_goal(p.apply_moves(start, path)[None])[0]
    r = resolve_windows(p, start, path, window_solver(p), length=8)
    assert p.format_moves(r.actions) == ["U", "U"]
    assert r.improved >= 1 and not r.cut and r.rounds >= 2


def test_windows_that_find_nothing_keep_the_path() -> None:
    p = make("puzzle15")
    start = p.apply_moves(p.goal(), p.parse_moves("D D R R"))
    path = p.parse_moves("L L U U")
    r = resolve_windows(p, start, path, window_solver(p), length=3)
    assert r.actions == tuple(path) and r.improved == 0 and not r.cut


def test_a_passed_deadline_stops_the_pass_and_says_so(fake) -> None:  # noqa: ANN001
    from puzzlezero.search import clock

    p = make("puzzle15")
    start, path = _loop_path(p)
    r = resolve_windows(p, start, path, window_solver(p), length=20, deadline=clock.now())
    assert r.actions == tuple(path) and r.cut and r.windows == 0


def test_a_window_bound_in_nodes_is_reported_as_cut() -> None:
    p = make("puzzle15")
    start, path = _loop_path(p)
    r = resolve_windows(p, start, path, window_solver(p), length=20, max_nodes=1)
    assert r.actions == tuple(path) and r.cut


def test_an_answer_that_does_not_lead_there_is_refused() -> None:
    p = make("puzzle15")
    start, path = _loop_path(p)

    def wrong(a, b, moves, *, bound, max_nodes):  # noqa: ANN001, ANN202, ARG001
        return (0,), 1  # one move, which does not reach the window's end

    r = resolve_windows(p, start, path, wrong, length=20)
    assert r.actions == tuple(path) and r.improved == 0


def test_the_cube_window_solver_finds_the_shorter_way() -> None:
    p = make("cube3")
    between = cube_between(p, SMALL_CUBE)
    start = p.apply_moves(p.goal(), p.parse_moves("F U' R"))
    detour = p.parse_moves("R R R U F'")  # R R R is R'
    assert p.is_goal(p.apply_moves(start, detour)[None])[0]
    r = resolve_windows(p, start, detour, between, length=5)
    assert p.format_moves(r.actions) == ["R'", "U", "F'"]
    way, _ = between(start, p.goal(), p.parse_moves("R' U F'"), bound=3, max_nodes=10**6)
    assert way is None  # none shorter than 3


def test_windows_are_a_solve_setting_checked_against_the_puzzle() -> None:
    assert resolve_options(make("puzzle15"), windows=30).windows == 30
    assert resolve_options(make("puzzle15")).windows == 0
    with pytest.raises(PuzzleError, match="window re-solving needs an exact solver"):
        resolve_options(make("lightsout7"), windows=30)
    with pytest.raises(PuzzleError, match="windows"):
        resolve_options(make("puzzle15"), windows=-1)


def test_the_solver_runs_the_window_pass_on_its_answer() -> None:
    from puzzlezero.solver import solve

    p = make("puzzle15")
    state = p.apply_moves(p.goal(), p.parse_moves("D D R R U U L L D D"))
    got = solve(p, state, search="beam", heuristic="manhattan", beam_width=1, windows=12, time_limit=30,
                fallback=False)  # fmt: skip
    assert got.solved and p.is_goal(p.apply_moves(state, list(got.actions))[None])[0]
    assert got.length <= 10


def test_a_window_that_found_nothing_is_not_asked_again() -> None:
    p = make("puzzle15")
    start, path = _loop_path(p)
    path = p.parse_moves("R L D U R L") + path  # moves that undo each other first: more rounds
    solver = window_solver(p)
    asked: list[bytes] = []

    def counting(a, b, moves, *, bound, max_nodes):  # noqa: ANN001, ANN202
        asked.append(a.tobytes() + b.tobytes())
        return solver(a, b, moves, bound=bound, max_nodes=max_nodes)

    r = resolve_windows(p, start, path, counting, length=6)
    assert p.is_goal(p.apply_moves(start, list(r.actions))[None])[0]
    assert r.rounds >= 3 and len(asked) == len(set(asked)) == r.windows
