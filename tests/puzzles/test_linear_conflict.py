"""The sliding puzzles' network-free heuristic, Manhattan distance plus linear conflicts: values
counted by hand on small boards, admissible against the optimal solver, batched as one at a time,
and registered as ``manhattan``."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic.optimal import optimal_length
from puzzlezero.classic.optimal.bidirectional_bfs import solve_bfs
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.npuzzle.linear_conflict import linear_conflict_heuristic
from puzzlezero.solver import HEURISTICS, get_heuristic

P8 = make("puzzle8")
P15 = make("puzzle15")


def h_of(p, text: str) -> float:  # noqa: ANN001
    return float(linear_conflict_heuristic(p)(p.parse(text)[None])[0])


@pytest.mark.parametrize("name", ["puzzle8", "puzzle15", "puzzle24", "puzzle35", "puzzle48"])
def test_zero_at_the_goal(name: str) -> None:
    p = make(name)
    assert linear_conflict_heuristic(p)(p.goals(3)).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("board", "manhattan", "extra"),
    [
        # tiles 1 and 2 swapped in the top row, tile 5 two moves from home: one conflict pair
        ("2 1 3 4 0 6 7 8 5", 4, 2),
        # the same board mirrored in the diagonal: tiles 1 and 4 swapped in the left column
        ("4 2 3 1 0 6 7 8 5", 4, 2),
        # 3 1 2: tile 3 conflicts with 1 and with 2, but only it must leave the row
        ("3 1 2 4 5 6 7 8 0", 4, 2),
        # 3 2 1: two of the three must leave (the longest run in goal order is one tile)
        ("3 2 1 6 5 4 7 8 0", 8, 8),
        # four moves of the blank from the goal: tiles off home, none in conflict (h exact here)
        ("0 1 2 4 5 3 7 8 6", 4, 0),
    ],
)
def test_hand_counted_values_on_the_8_puzzle(board: str, manhattan: int, extra: int) -> None:
    state = P8.parse(board)
    assert int(P8.manhattan(state[None])[0]) == manhattan
    assert h_of(P8, board) == manhattan + extra


def test_a_conflict_in_a_row_and_one_in_a_column_both_count() -> None:
    # 15-puzzle: 2 1 in the top row (+2), 5 and 9 swapped in the left column (+2)
    board = "2 1 3 4 9 6 7 8 5 10 11 12 13 14 15 0"
    assert int(P15.manhattan(P15.parse(board)[None])[0]) == 4
    assert h_of(P15, board) == 8


def test_admissible_on_200_random_8_puzzle_states() -> None:
    """h <= the optimal length (:mod:`puzzlezero.classic.optimal`), and at least the Manhattan
    distance, by an even number of moves."""
    states = P8.scramble(np.random.default_rng(0), 200, depth=100)
    h = linear_conflict_heuristic(P8)(states)
    manhattan = P8.manhattan(states)
    optimal = np.array([optimal_length(P8, s) for s in states])
    assert np.all(h <= optimal)
    assert np.all(h >= manhattan) and np.all((h - manhattan) % 2 == 0)
    assert np.any(h > manhattan)  # the conflicts do count somewhere
    assert np.all((optimal - h) % 2 == 0)  # both have the parity of the blank's walk


def test_admissible_on_short_15_puzzle_scrambles() -> None:
    """Against shortest solutions by bidirectional breadth-first search (no table to build)."""
    states = P15.scramble(np.random.default_rng(1), 30, depth=16)
    h = linear_conflict_heuristic(P15)(states)
    optimal = np.array([solve_bfs(P15, s).length for s in states])
    assert np.all(h <= optimal)


@pytest.mark.parametrize("name", ["puzzle8", "puzzle48"])
def test_batched_equals_one_at_a_time(name: str) -> None:
    p = make(name)
    h = linear_conflict_heuristic(p)
    states = p.scramble(np.random.default_rng(2), 64, depth=300)
    batched = h(states)
    assert batched.dtype == np.float32 and batched.shape == (64,)
    assert batched.tolist() == [float(h(s[None])[0]) for s in states]
    assert h(states[:0]).shape == (0,)


def test_a_puzzle_that_is_not_sliding_is_refused_by_name() -> None:
    with pytest.raises(PuzzleError, match="'cube3' is not one"):
        linear_conflict_heuristic(make("cube3"))
    with pytest.raises(PuzzleError, match="sliding puzzles"):
        get_heuristic(make("lightsout7"), "manhattan")


def test_registered_as_manhattan_without_a_model() -> None:
    spec = HEURISTICS["manhattan"]
    assert not spec.uses_model and spec.kind == "value" and spec.member_width > 1
    h = get_heuristic(P15, "manhattan")
    board = "2 1 3 4 9 6 7 8 5 10 11 12 13 14 15 0"
    assert h(P15.parse(board)[None]).tolist() == [8.0]
