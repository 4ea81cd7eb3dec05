"""Lights Out: press masks, algebra (self-inverse, commuting presses), text, benchmark replay."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlezero as pz
from puzzlezero.errors import InvalidMoveError, InvalidStateError, PuzzleError
from puzzlezero.puzzles import inputs, walks
from tests.conftest import load_bench


@pytest.fixture(scope="module")
def p() -> pz.Puzzle:
    return pz.make("lightsout7")


def test_constants(p: pz.Puzzle) -> None:
    assert p.name == "lightsout7" and p.json_key == "lights" and p.default_scramble_depth == 500
    assert p.action_names == tuple(str(i) for i in range(49))
    np.testing.assert_array_equal(p.inverse_action, np.arange(49))
    assert inputs.dim(p) == 98 and p.goal().tolist() == [0] * 49


def test_press_toggles_cell_and_orthogonal_neighbours(p: pz.Puzzle) -> None:
    g = p.goals(1)
    on = {a: np.flatnonzero(p.apply(g, np.array([a]))[0]).tolist() for a in (0, 6, 3, 24, 48, 21)}
    assert on == {
        0: [0, 1, 7],
        6: [5, 6, 13],  # no wrap to the next row
        3: [2, 3, 4, 10],
        24: [17, 23, 24, 25, 31],
        48: [41, 47, 48],
        21: [14, 21, 22, 28],  # no wrap to the previous row
    }


def test_algebra(p: pz.Puzzle) -> None:
    rng = np.random.default_rng(0)
    s = p.scramble(rng, 64, (0, 60))
    kids = p.expand(s)
    assert kids.shape == (64, 49, 49)
    for a in range(49):
        np.testing.assert_array_equal(p.apply(kids[:, a], np.full(64, a)), s)  # a press twice is nothing
    a, b = rng.integers(0, 49, 64), rng.integers(0, 49, 64)
    np.testing.assert_array_equal(p.apply(p.apply(s, a), b), p.apply(p.apply(s, b), a))  # presses commute
    assert p.legal_mask(s).all()


def test_scramble_equals_sequential_presses(p: pz.Puzzle) -> None:
    assert p.is_goal(p.scramble(np.random.default_rng(0), 4, 0)).all()
    one = p.scramble(np.random.default_rng(1), 200, 1)
    assert all(any((row == m).all() for m in p.masks) for row in one)  # exactly one press
    presses = np.random.default_rng(2).integers(0, 49, size=(30, 25))
    counts = np.stack([np.bincount(r, minlength=49) for r in presses])
    seq = p.goals(30)
    for t in range(25):
        seq = p.apply(seq, presses[:, t])
    np.testing.assert_array_equal(p.press_sets(counts), seq)


def test_walks_press_distinct_cells_and_their_length_is_the_exact_cost(p: pz.Puzzle) -> None:
    """A non-backtracking walk presses k different cells (a second press would undo the first);
    on 7x7, whose press matrix is invertible over GF(2), k is then the optimal cost, checked here
    against the GF(2) solver; on 5x5 (nullity 2) it is only an upper bound."""
    from puzzlezero.classic.optimal.lightsout import min_presses
    from puzzlezero.puzzles.lightsout import LightsOut

    states, cost = walks.walks_with_cost(p, np.random.default_rng(0), 600, (1, 80))
    # a range (1, 80) is (1, 49): at most 49 distinct presses, every length about equally often
    assert cost.min() == 1 and cost.max() == 49 and np.bincount(cost.astype(int)).max() < 30
    assert (walks.walks_with_cost(p, np.random.default_rng(0), 10, 60)[1] == 49).all()
    np.testing.assert_array_equal(min_presses(p, states).sum(axis=1), cost)
    np.testing.assert_array_equal(p.random_walks(np.random.default_rng(0), 600, (1, 80)), states)
    one = p.random_walks(np.random.default_rng(1), 49, 49)
    np.testing.assert_array_equal(one, np.repeat(p.press_sets(np.ones((1, 49), np.uint8)), 49, axis=0))
    # two presses: two different cells, each cell about 8000 / 49 = 163 times (sd 12.6)
    two = min_presses(p, p.random_walks(np.random.default_rng(2), 4000, 2))
    assert (two.sum(axis=1) == 2).all() and 110 < two.sum(axis=0).min() <= two.sum(axis=0).max() < 220
    small = LightsOut(5)
    s5, c5 = walks.walks_with_cost(small, np.random.default_rng(3), 500, (1, 25))
    m5 = min_presses(small, s5).sum(axis=1)
    assert (m5 <= c5).all() and (m5 < c5).any()
    # plain scrambles keep their own (multinomial) presses and depths
    _, plain = walks.walks_with_cost(p, np.random.default_rng(4), 50, 70, nonbacktracking=False)
    assert (plain == 70).all()


def test_reduce_moves_keeps_the_cells_pressed_an_odd_number_of_times(p: pz.Puzzle) -> None:
    """Presses commute and undo themselves: a path acts as its odd-count cells; on 7x7 (an
    invertible press matrix) those are the board's unique minimum press set, the GF(2) answer."""
    from puzzlezero.classic.optimal.lightsout import min_presses

    assert p.reduce_moves([3, 5, 3]) == [5]
    assert p.reduce_moves([3, 5, 3, 3, 9]) == [3, 5, 9]  # the order of first presses
    assert p.reduce_moves([]) == [] and p.reduce_moves([7, 7]) == []
    assert pz.make("puzzle15").reduce_moves([0, 1, 1]) == [0, 1, 1]  # other puzzles: unchanged
    rng = np.random.default_rng(5)
    for _ in range(20):
        path = rng.integers(0, 49, size=int(rng.integers(1, 120))).tolist()
        start = p.scramble(rng, 1, 40)[0]
        short = p.reduce_moves(path)
        assert len(short) == len(set(short)) <= len(path)
        np.testing.assert_array_equal(p.apply_moves(start, short), p.apply_moves(start, path))
        # a path from the goal to a board, reduced, is the board's minimum press set
        board = p.apply_moves(p.goal(), path)
        assert sorted(short) == np.flatnonzero(min_presses(p, board[None])[0]).tolist()


def test_benchmark_solutions_replay(p: pz.Puzzle) -> None:
    for case in load_bench("lightsout7")["cases"]:
        state = p.parse(str(case["lights"]))
        assert len(case["optimal_presses"]) == case["optimal_length"]
        assert sorted(case["released_solution"]) == case["optimal_presses"]
        for key in ("optimal_presses", "released_solution"):
            moves = p.parse_moves(case[key])
            assert p.is_goal(p.apply_moves(state, moves)[None])[0], f"case {case['id']} {key}"
        # applying the solution to the goal gives back the state (presses are self-inverse)
        np.testing.assert_array_equal(p.apply_moves(p.goal(), case["optimal_presses"]), state)


def test_parse_forms_and_round_trip(p: pz.Puzzle) -> None:
    s = p.scramble(np.random.default_rng(4), 1, 20)[0]
    line = "".join(map(str, s.tolist()))
    for text in [line, p.render_text(s), str(s.tolist()), "\n" + line[:20] + "\n  " + line[20:] + "\n"]:
        np.testing.assert_array_equal(p.parse(text), s)
    assert p.format(s) == line and p.to_json(s)["lights"] == s.tolist()
    svg = p.to_svg(s)
    assert svg.count("data-index=") == 49 and svg.count("#ffd84a") == int(s.sum())


@pytest.mark.parametrize(
    "text,message",
    [
        ("0" * 48, "expected 49 lights (0 or 1), got 48"),
        ("0" * 50, "expected 49 lights (0 or 1), got 50"),
        ("012", "expected 49 lights (0 or 1), got 3 characters"),
        ("0" * 10 + "x" + "0" * 38, "light 10 (row 1, col 3) is 'x'"),
        ("", "expected 49 lights"),
    ],
)
def test_parse_errors(p: pz.Puzzle, text: str, message: str) -> None:
    with pytest.raises(InvalidStateError) as err:
        p.parse(text)
    assert message in str(err.value)


def test_moves_text(p: pz.Puzzle) -> None:
    assert p.parse_moves("3 5 48") == p.parse_moves("[3, 5, 48]") == p.parse_moves([3, "5", 48]) == [3, 5, 48]
    assert p.format_moves([3, 5]) == ["3", "5"]
    for bad in ["49", "-1", "3 x", "2.5"]:
        with pytest.raises(InvalidMoveError, match="0..48"):
            p.parse_moves(bad)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=120), st.text(alphabet="01 ,[]\n2x", min_size=40, max_size=120)))
def test_parse_fuzz_raises_only_puzzle_errors(text: str) -> None:
    p = pz.make("lightsout7")
    try:
        s = p.parse(text)
    except PuzzleError:
        return
    assert s.shape == (49,) and set(s.tolist()) <= {0, 1}
