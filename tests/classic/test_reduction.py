"""Reduction, the sliding puzzles' model-free solver: every solvable board solved, each step the
shortest for its tiles, and the fallback of the sliding puzzles' own searches."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from puzzlezero.classic.reduction import _cut_loops, _place, placement_order, solve_reduction
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.npuzzle import NPuzzle
from puzzlezero.registry import make
from puzzlezero.solver import solve
from tests.conftest import load_bench


def _replays(p, start, actions) -> bool:  # noqa: ANN001
    return bool(p.is_goal(p.apply_moves(start, list(actions))[None])[0])


@pytest.mark.parametrize("n", range(2, 9))
def test_every_cell_but_the_blanks_home_is_placed_once(n: int) -> None:
    for budget in (1 << 21, 1000):
        steps = placement_order(n, budget)
        cells = [c for step in steps for c in step]
        assert sorted(cells) == list(range(n * n - 1))
        assert all(1 <= len(step) <= 3 for step in steps)
        # the last cell of every row and column is placed with its neighbour, never alone
        for step in steps[:-1]:
            if len(step) == 1:
                r, c = divmod(step[0], n)
                assert c < n - 1 and r < n - 1


def test_placement_order_of_the_8_puzzle() -> None:
    assert placement_order(3) == [(0, 1, 2), (3, 6), (4, 5, 7)]
    assert placement_order(3, max_states=1000) == [(0,), (1, 2), (3, 6), (4, 5, 7)]


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6])
def test_random_boards_are_solved(size: int) -> None:
    p = NPuzzle(size)
    for start in p.scramble(np.random.default_rng(7), 6, 1000):
        r = solve_reduction(p, start)
        assert r.solved and r.status == "solved" and _replays(p, start, r.actions)
        assert r.cost == len(r.actions) and r.iterations == len(placement_order(p.size))


def test_the_goal_needs_no_move() -> None:
    p = make("puzzle15")
    r = solve_reduction(p, p.goal())
    assert r.solved and r.actions == ()


def _bfs_distance(p, start, done) -> int:  # noqa: ANN001
    """Moves from ``start`` to the nearest board where ``done(board)``, by breadth-first search
    over whole boards."""
    seen = {start.tobytes()}
    queue = deque([(start, 0)])
    while queue:
        board, d = queue.popleft()
        if done(board):
            return d
        for child in p.expand(board[None])[0]:
            key = child.tobytes()
            if key not in seen:
                seen.add(key)
                queue.append((child, d + 1))
    raise AssertionError("unreachable")


def test_a_step_is_the_shortest_for_its_tiles() -> None:
    """The first step on the 8-puzzle (tiles 1, 2, 3 to the top row) against a breadth-first
    search over whole boards, and the 2x2 puzzle, one step over its three tiles, against its
    optimum."""
    p = make("puzzle8")
    free = np.ones(9, dtype=bool)
    for start in p.scramble(np.random.default_rng(3), 4, 100):
        moves, generated = _place(start, p.swap, free, (0, 1, 2))
        end = p.apply_moves(start, moves)
        assert end[:3].tolist() == [1, 2, 3] and generated > 0
        assert len(moves) == _bfs_distance(p, start, lambda b: b[:3].tolist() == [1, 2, 3])
    small = NPuzzle(2)
    goal = small.goal()
    for start in small.scramble(np.random.default_rng(4), 6, 30):
        r = solve_reduction(small, start)
        assert len(r.actions) == _bfs_distance(small, start, lambda b: (b == goal).all())


def test_frozen_cells_are_never_touched() -> None:
    p = make("puzzle15")
    start = p.scramble(np.random.default_rng(5), 1, 500)[0]
    free = np.ones(16, dtype=bool)
    board = p.apply_moves(start, _place(start, p.swap, free, (0, 1))[0])
    free[[0, 1]] = False
    for a in _place(board, p.swap, free, (2, 3))[0]:
        board = p.apply(board[None], np.array([a]))[0]
        assert board[:2].tolist() == [1, 2]  # tiles 1 and 2 stay home at every move
    assert board[:4].tolist() == [1, 2, 3, 4]


def test_loops_are_cut() -> None:
    p = make("puzzle8")
    start = p.goal()
    up, down = p.action_names.index("U"), p.action_names.index("D")

    # the blank in the bottom-right corner: D (the tile above it slides down), then back with U
    def cut(actions: list[int]) -> list[int]:
        return _cut_loops([p.apply_moves(start, actions[:i]) for i in range(len(actions) + 1)], actions)

    assert cut([down, up]) == []
    left = p.action_names.index("R")  # the tile left of the blank slides right
    right = p.action_names.index("L")
    assert cut([left, down, up, right, left]) == [left]


def test_unsolvable_boards_and_other_puzzles_are_refused() -> None:
    p = make("puzzle8")
    odd = p.goal()
    odd[[0, 1]] = odd[[1, 0]]  # two tiles swapped: the wrong parity
    with pytest.raises(InvalidStateError, match="cannot be solved"):
        solve_reduction(p, odd)
    with pytest.raises(PuzzleError, match="sliding puzzles"):
        solve_reduction(make("cube2"), make("cube2").goal())


def test_benchmark_48_puzzle_boards_are_solved() -> None:
    p = make("puzzle48")
    cases = load_bench("puzzle48")["cases"][:2]
    for case in cases:
        start = np.array(case["tiles"], dtype=np.uint8)
        r = solve_reduction(p, start)
        assert _replays(p, start, r.actions) and len(r.actions) < 1000


def test_the_sliding_puzzles_fall_back_on_it() -> None:
    p = make("puzzle15")
    start = p.scramble(np.random.default_rng(11), 1, 500)[0]
    starved = solve(p, start, heuristic="misplaced", max_nodes=50)
    assert starved.solved and starved.fallback == "reduction" and starved.search == "bwas"
    assert _replays(p, start, starved.actions)
    off = solve(p, start, heuristic="misplaced", max_nodes=50, fallback=False)
    assert not off.solved and off.fallback is None
    named = solve(p, start, search="reduction")
    assert named.solved and named.fallback is None and named.actions == starved.actions
