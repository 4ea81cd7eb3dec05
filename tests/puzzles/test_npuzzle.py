"""Sliding-tile puzzles: move convention, algebra, parity, Manhattan distance, text, benchmark replay."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlezero as pz
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.npuzzle import NPuzzle
from tests.conftest import load_bench

SIZES = {"puzzle8": 3, "puzzle15": 4, "puzzle24": 5, "puzzle35": 6, "puzzle48": 7}


def reference_move(tiles: np.ndarray, n: int, letter: str) -> np.ndarray:
    """The benchmark README's definition, one state at a time."""
    out = tiles.copy()
    b = int(np.flatnonzero(tiles == 0)[0])
    r, c = divmod(b, n)
    dr, dc = {"U": (1, 0), "D": (-1, 0), "L": (0, 1), "R": (0, -1)}[letter]
    r2, c2 = r + dr, c + dc
    if 0 <= r2 < n and 0 <= c2 < n:
        out[b], out[r2 * n + c2] = tiles[r2 * n + c2], 0
    return out


@pytest.mark.parametrize("name", list(SIZES))
def test_constants_and_goal(name: str) -> None:
    p = pz.make(name)
    n = SIZES[name]
    assert isinstance(p, NPuzzle) and p.size == n and p.name == name
    assert p.action_names == ("U", "D", "L", "R") and p.json_key == "tiles"
    assert p.goal().tolist() == [*range(1, n * n), 0]
    assert p.num_values == n * n and inputs.dim(p) == n**4
    assert p.default_scramble_depth == {3: 100, 4: 500, 5: 500, 6: 1000, 7: 1000}[n]
    np.testing.assert_array_equal(p.inverse_action, [1, 0, 3, 2])


def test_move_letters_name_the_tile_direction() -> None:
    p = pz.make("puzzle15")
    g = p.goals(4)
    kids = p.expand(g)
    np.testing.assert_array_equal(kids[:, 0], g)  # U: nothing below the blank
    np.testing.assert_array_equal(kids[:, 2], g)  # L: nothing right of it
    assert kids[0, 1].tolist()[11:] == [0, 13, 14, 15, 12]  # D: tile 12 slides down
    assert kids[0, 3].tolist()[12:] == [13, 14, 0, 15]  # R: tile 15 slides right
    np.testing.assert_array_equal(p.legal_mask(g[:1]), [[False, True, False, True]])


@pytest.mark.parametrize("name", ["puzzle8", "puzzle15", "puzzle48"])
def test_expand_matches_reference_and_inverse_undoes(name: str) -> None:
    p = pz.make(name)
    states = p.scramble(np.random.default_rng(0), 40, (0, 60))
    kids = p.expand(states)
    for i in range(len(states)):
        for a, letter in enumerate(p.action_names):
            np.testing.assert_array_equal(kids[i, a], reference_move(states[i], p.size, letter))
    for a in range(4):
        back = p.apply(kids[:, a], np.full(len(states), p.inverse_action[a]))
        legal = p.legal_mask(states)[:, a]
        np.testing.assert_array_equal(back[legal], states[legal])


def test_scramble_makes_real_moves() -> None:
    p = pz.make("puzzle24")
    for d in (1, 2, 7, 30):
        s = p.scramble(np.random.default_rng(d), 300, d)
        blank = p.blank_positions(s)
        assert np.all((blank // 5 + blank % 5) % 2 == d % 2)  # every step moved the blank
        assert np.all(p.manhattan(s) <= d) and p.solvable(s).all()
    assert (p.manhattan(p.scramble(np.random.default_rng(9), 300, 1)) == 1).all()


def test_manhattan() -> None:
    p = pz.make("puzzle15")
    assert p.manhattan(p.goals(2)).tolist() == [0, 0]
    s = p.scramble(np.random.default_rng(3), 50, (0, 100))
    want = [
        sum(abs(i // 4 - (v - 1) // 4) + abs(i % 4 - (v - 1) % 4) for i, v in enumerate(row) if v)
        for row in s.tolist()
    ]
    assert p.manhattan(s).tolist() == want


@pytest.mark.parametrize("name", ["puzzle15", "puzzle24"])
def test_benchmark_optimal_solutions_replay(name: str) -> None:
    p = pz.make(name)
    bench = load_bench(name)
    assert bench["goal"] == p.goal().tolist()
    for case in bench["cases"]:
        state = p.parse(str(case["tiles"]))
        moves = p.parse_moves(case["optimal_solution"])
        assert len(moves) == case["optimal_length"]
        assert p.manhattan(state[None])[0] <= case["optimal_length"]  # admissible
        s = state[None]
        for a in moves:
            assert p.legal_mask(s)[0, a]  # no optimal solution contains a no-op
            s = p.apply(s, np.array([a]))
        assert p.is_goal(s)[0], f"case {case['id']} does not replay to the goal"


@pytest.mark.parametrize("name", ["puzzle35", "puzzle48"])
def test_benchmark_states_parse(name: str) -> None:
    p = pz.make(name)
    for case in load_bench(name)["cases"]:
        np.testing.assert_array_equal(p.parse(" ".join(map(str, case["tiles"]))), case["tiles"])


def test_parse_forms_round_trip() -> None:
    p = pz.make("puzzle8")
    want = [1, 2, 3, 4, 5, 6, 0, 7, 8]
    for text in [
        "1 2 3 4 5 6 0 7 8",
        "[1,2,3,4,5,6,0,7,8]",
        "1,2,3\n4,5,6\n_,7,8",
        "(1 2 3) (4 5 6) (. 7 8)",
    ]:
        assert p.parse(text).tolist() == want
    s = np.array(want, dtype=np.uint8)
    assert p.render_text(s) == "1 2 3\n4 5 6\n. 7 8"
    assert p.parse(p.render_text(s)).tolist() == want
    assert p.to_json(s) == {"tiles": want, "size": 3}
    svg = p.to_svg(s)
    assert svg.startswith("<svg") and svg.count("<text") == 8


@pytest.mark.parametrize(
    "text,message",
    [
        ("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", "expected 16 numbers, got 15"),
        ("", "expected 16 numbers, got 0"),
        ("1 2 3 4 5 6 7 8 9 10 11 12 13 14 16 0", "tile 16 is out of range"),
        ("1 2 3 4 5 5 7 8 9 10 11 12 13 14 15 0", "tile 5 appears more than once and tile 6 is missing"),
        ("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 x", "cannot read 'x' as a tile"),
        (
            "2 1 3 4 5 6 7 8 9 10 11 12 13 14 15 0",
            "this arrangement is unsolvable: its permutation parity is odd",
        ),
        ("1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15", None),  # one move from the goal: fine
    ],
)
def test_parse_errors(text: str, message: str | None) -> None:
    p = pz.make("puzzle15")
    if message is None:
        p.parse(text)
        return
    with pytest.raises(InvalidStateError) as err:
        p.parse(text)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_parity_rule_on_even_and_odd_boards() -> None:
    rng = np.random.default_rng(5)
    for n in (3, 4):
        p = NPuzzle(n)
        states = p.scramble(rng, 100, (0, 80))
        assert p.solvable(states).all()
        swapped = states.copy()
        for row in swapped:  # swap the first two tiles (not the blank) of each state
            i, j = np.flatnonzero(row)[:2]
            row[[i, j]] = row[[j, i]]
        assert not p.solvable(swapped).any()
        with pytest.raises(InvalidStateError, match="unsolvable"):
            p.validate(swapped[0])


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=80), st.text(alphabet="0123456789 ,[]()._;\n-x", max_size=80)))
def test_parse_fuzz_raises_only_puzzle_errors(text: str) -> None:
    p = pz.make("puzzle8")
    try:
        s = p.parse(text)
    except PuzzleError:
        return
    assert p.solvable(s[None])[0] and sorted(s.tolist()) == list(range(9))


def test_shipped_puzzle35_model_solves_a_scramble_with_its_defaults() -> None:
    """The shipped 35-puzzle model with its default search (``solver.DEFAULTS["puzzle35"]``)
    solves a 40-move scramble; the solution replays to the goal and is no longer than the scramble."""
    from puzzlezero import solver

    p = pz.make("puzzle35")
    state = p.scramble(np.random.default_rng(35), 1, 40)[0]
    r = solver.solve("puzzle35", state)
    assert r.solved and r.search == "beam"  # over the board and its transpose
    assert 0 < len(r.solution) <= 40
    assert p.is_goal(p.apply_moves(state, list(r.actions))[None])[0]
