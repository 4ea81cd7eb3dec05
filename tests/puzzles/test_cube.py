"""Cube3 and Cube2: move algebra, the benchmark's conventions, text, validation messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlezero as pz
from puzzlezero.errors import InvalidMoveError, InvalidStateError, PuzzleError
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.cube import Cube2, Cube3, corner_cubies, corner_stickers, edge_cubies
from tests.conftest import load_bench

SOLVED3 = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
C3, C2 = pz.make("cube3"), pz.make("cube2")
CUBES = pytest.mark.parametrize("cube", [C3, C2], ids=["cube3", "cube2"])


def moves(cube: pz.Puzzle, text: str, start: np.ndarray | None = None) -> np.ndarray:
    return cube.apply_moves(cube.goal() if start is None else start, cube.parse_moves(text))


# ---- algebra -------------------------------------------------------------------------------------


def test_registry_classes_and_constants() -> None:
    assert isinstance(C3, Cube3) and isinstance(C2, Cube2)
    assert C3.action_names == ("U", "U'", "D", "D'", "L", "L'", "R", "R'", "F", "F'", "B", "B'")
    assert C3.state_shape == (54,) and C2.state_shape == (24,)
    assert inputs.dim(C3) == 324 and inputs.dim(C2) == 144
    assert C3.default_scramble_depth == 30 and C3.json_key == "facelets"
    for a, name in enumerate(C3.action_names):
        inv = C3.action_names[C3.inverse_action[a]]
        assert inv == (name[0] if name.endswith("'") else name + "'")


@CUBES
def test_moves_are_permutations_and_inverses(cube: pz.Puzzle) -> None:
    size = cube.state_shape[0]
    for a in range(12):
        assert sorted(cube.perms[a]) == list(range(size))
        assert not (cube.perms[a] == np.arange(size)).all()
    rng = np.random.default_rng(0)
    s = cube.scramble(rng, 50, 25)
    for a in range(12):
        back = cube.apply(cube.apply(s, np.full(50, a)), np.full(50, cube.inverse_action[a]))
        np.testing.assert_array_equal(back, s)
        four = s
        for k in range(4):
            four = cube.apply(four, np.full(50, a))
            assert (four == s).all() == (k == 3)  # order exactly 4


@CUBES
def test_opposite_faces_commute_and_adjacent_do_not(cube: pz.Puzzle) -> None:
    s = cube.scramble(np.random.default_rng(1), 1, 20)[0]
    for x, y in [("U", "D"), ("L", "R"), ("F", "B'")]:
        np.testing.assert_array_equal(moves(cube, f"{x} {y}", s), moves(cube, f"{y} {x}", s))
    assert not (moves(cube, "U R", s) == moves(cube, "R U", s)).all()


@CUBES
def test_sexy_move_has_order_six(cube: pz.Puzzle) -> None:
    s = cube.goal()
    for k in range(1, 7):
        s = moves(cube, "R U R' U'", s)
        assert cube.is_goal(s[None])[0] == (k == 6)


@CUBES
def test_random_sequence_undone_by_reversed_inverses(cube: pz.Puzzle) -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        seq = rng.integers(0, 12, size=40).tolist()
        s = cube.apply_moves(cube.goal(), seq)
        back = cube.apply_moves(s, [int(cube.inverse_action[a]) for a in reversed(seq)])
        np.testing.assert_array_equal(back, cube.goal())


@CUBES
def test_group_order(cube: pz.Puzzle) -> None:
    combinatorics = pytest.importorskip("sympy.combinatorics")
    group = combinatorics.PermutationGroup([combinatorics.Permutation(p.tolist()) for p in cube.perms[::2]])
    # cube3: the Rubik's cube group; cube2 with all six faces: 8! * 3^7 (all rotations included)
    assert group.order() == (43_252_003_274_489_856_000 if cube is C3 else 88_179_840)


def test_turn_directions_follow_the_readme() -> None:
    """Clockwise seen looking at the face: U carries the front's top row to the left face, R carries
    the front's right column up to U, F carries U's bottom row to R."""
    u, r, f = (C3.format(moves(C3, m)) for m in "URF")
    assert u[36:39] == "FFF" and u[18:21] == "RRR"  # L1..L3 now green, F1..F3 now red
    assert r[2] + r[5] + r[8] == "FFF"  # U3, U6, U9
    assert f[9] + f[12] + f[15] == "UUU"  # R1, R4, R7


# ---- the benchmark -------------------------------------------------------------------------------


def test_every_benchmark_scramble_and_optimal_solution() -> None:
    cases = load_bench("cube3")["cases"]
    assert len(cases) == 500
    scrambles = [C3.parse_moves(c["scramble"]) for c in cases]
    solutions = [C3.parse_moves(c["optimal_solution"]) for c in cases]
    assert [len(s) for s in solutions] == [c["optimal_length"] for c in cases]
    states = replay(C3.goals(len(cases)), scrambles)
    assert [C3.format(s) for s in states] == [c["facelets"] for c in cases]
    assert C3.is_goal(replay(states, solutions)).all()
    assert not C3.is_goal(states).any()


def replay(states: np.ndarray, sequences: list[list[int]]) -> np.ndarray:
    """Apply sequences of different lengths to a batch, all rows moving together."""
    states = states.copy()
    lengths = np.array([len(s) for s in sequences])
    for step in range(lengths.max()):
        rows = np.flatnonzero(lengths > step)
        states[rows] = C3.apply(states[rows], np.array([sequences[i][step] for i in rows]))
    return states


def test_benchmark_facelets_parse_to_the_scrambled_state() -> None:
    for case in load_bench("cube3")["cases"][:100]:
        np.testing.assert_array_equal(C3.parse(case["facelets"]), C3.parse(case["scramble"]))


# ---- text ----------------------------------------------------------------------------------------


def test_move_notation() -> None:
    assert C3.parse_moves("U2") == C3.parse_moves("U U") == [0, 0]
    assert C3.parse_moves("R2'") == C3.parse_moves("R'2") == C3.parse_moves("R' R'") == [7, 7]
    assert C3.parse_moves("  R U,R'\tU'  ") == C3.parse_moves("R U R' U'") == [6, 0, 7, 1]
    assert C3.parse_moves("RUR’U'") == [6, 0, 7, 1] and C3.parse_moves(["R2", "F'"]) == [6, 6, 9]
    assert C3.parse_moves("") == []
    with pytest.raises(InvalidMoveError, match="'X'"):
        C3.parse_moves("R U X")
    with pytest.raises(InvalidMoveError, match="'R3'"):
        C3.parse_moves("R3")


@pytest.mark.parametrize("text", ["r u", "R u'", "Ru2", "r2"])
def test_lower_case_is_a_wide_turn_and_refused_as_such(text: str) -> None:
    """Cubers write ``r`` for a wide turn (two layers), which a cube of face turns has not: it was
    read as ``R``; now it is refused, by name, by every cube and by the state parser."""
    wide = next(ch for ch in text if ch.islower())
    msg = f"'{wide}' is a wide turn in cubers' notation .*face turns U R F D L B"
    for name in ("cube2", "cube3", "cube3htm"):
        with pytest.raises(InvalidMoveError, match=msg):
            pz.make(name).parse_moves(text)
        with pytest.raises(InvalidStateError, match=msg):
            pz.make(name).parse(text)


@CUBES
def test_parse_format_round_trip(cube: pz.Puzzle) -> None:
    for s in cube.scramble(np.random.default_rng(3), 30, (1, 30)):
        text = cube.format(s)
        np.testing.assert_array_equal(cube.parse(text), s)
        np.testing.assert_array_equal(cube.parse(text.lower()), s)
        assert cube.to_json(s) == {"facelets": text}
    np.testing.assert_array_equal(cube.parse("R U2 F'"), moves(cube, "R U U F'"))


def test_parse_spaced_facelets_and_scramble_equivalence() -> None:
    spaced = " ".join(SOLVED3[i : i + 9] for i in range(0, 54, 9))
    np.testing.assert_array_equal(C3.parse(spaced), C3.goal())
    np.testing.assert_array_equal(C3.parse("R U R' U'"), C3.parse(C3.format(moves(C3, "R U R' U'"))))


def bad(cube: pz.Puzzle, changes: dict[int, str], base: str = SOLVED3) -> str:
    chars = list(base)
    for i, ch in changes.items():
        chars[i] = ch
    return "".join(chars)


# facelet indices: U1 = 0 .. U9 = 8, R1 = 9, F1 = 18, D1 = 27, L1 = 36, B1 = 45
INVALID_CUBE3 = {
    "length": (SOLVED3[:-1], r"54 letters .*got 53"),
    "letters": (
        bad(C3, {4: "X", 20: "7"}),
        r"outside URFDLB: 'X' at position 5 \(U5\), '7' at position 21 \(F3\)",
    ),
    "counts": (bad(C3, {0: "R"}), "each colour must appear 9 times: U appears 8 times, R appears 10 times"),
    "centres": (
        SOLVED3.translate(str.maketrans("UD", "DU")),
        "centres must be U R F D L B .* got D R F U L B",
    ),
    "corner opposite colours": (bad(C3, {9: "D", 28: "R"}), r"corner at UFR has colours U and D \(opposite"),
    "corner same colour twice": (
        bad(C3, {9: "F", 19: "R"}),
        "corner at UFR has two F stickers: no such corner",
    ),
    "corner mirror image": (
        bad(C3, {9: "F", 20: "R"}),
        "corner at UFR has colours U, F, R in mirror-image order",
    ),
    "edge opposite colours": (
        bad(C3, {19: "D", 28: "F"}),
        r"edge at UF has colours U and D \(opposite faces\): no such edge",
    ),
    "piece twice": (
        bad(C3, {33: "U", 53: "R", 42: "F", 1: "D", 23: "B", 12: "L"}),
        r"corner UFR appears 2 times \(at UFR and DBL\).*missing: corner DBL",
    ),
    "twisted corner": (
        bad(C3, {8: "F", 9: "U", 20: "R"}),
        "corner at UFR is twisted: no legal cube has this",
    ),
    "flipped edge": (bad(C3, {7: "F", 19: "U"}), "edge at UF is flipped: no legal cube has this"),
    "parity": (
        bad(C3, {7: "U", 19: "R", 5: "U", 10: "F"}),
        "two pieces are swapped: corner and edge permutation parities differ",
    ),
}


@pytest.mark.parametrize("text,message", INVALID_CUBE3.values(), ids=list(INVALID_CUBE3))
def test_cube3_validation_messages(text: str, message: str) -> None:
    with pytest.raises(InvalidStateError, match=message):
        C3.parse(text)


def test_cube2_validation_messages() -> None:
    solved = C2.format(C2.goal())
    with pytest.raises(InvalidStateError, match="24 letters .*got 54"):
        C2.parse(SOLVED3)
    with pytest.raises(InvalidStateError, match="must appear 4 times"):
        C2.parse("R" + solved[1:])
    with pytest.raises(InvalidStateError, match="corner at UFR is twisted"):
        C2.parse(bad(C2, {3: "F", 4: "U", 9: "R"}, solved))  # U4 R1 F2 turned
    with pytest.raises(InvalidStateError, match="corner at UFR has colours U, F, R in mirror-image"):
        C2.parse(bad(C2, {4: "F", 9: "R"}, solved))
    # any corner permutation is legal on the 2x2x2: swap two corners (stickers kept in slot order)
    s = C2.goal()[None]
    piece, twist = corner_cubies(s, 2)
    piece[0, [0, 1]] = piece[0, [1, 0]]
    C2.validate(corner_stickers(piece, twist)[0])


def test_validate_arrays() -> None:
    C3.validate(C3.goal())
    with pytest.raises(InvalidStateError, match="54 stickers"):
        C3.validate(np.zeros(53, np.uint8))
    with pytest.raises(InvalidStateError, match="0..5"):
        C3.validate(np.full(54, 6, np.uint8))
    with pytest.raises(InvalidStateError, match="integers"):
        C3.validate(C3.goal().astype(float))


@CUBES
def test_random_states_are_valid_with_sound_cubies(cube: pz.Puzzle) -> None:
    states = cube.scramble(np.random.default_rng(4), 300, (0, 40))
    for s in states:
        cube.validate(s)
    piece, twist = corner_cubies(states, cube.n)
    assert (np.sort(piece, axis=1) == np.arange(8)).all() and (twist.sum(axis=1) % 3 == 0).all()
    if cube is C2:
        np.testing.assert_array_equal(corner_stickers(piece, twist), states)
    else:
        ep, flip = edge_cubies(states)
        assert (np.sort(ep, axis=1) == np.arange(12)).all() and (flip.sum(axis=1) % 2 == 0).all()


def test_parse_errors_for_empty_and_unreadable_text() -> None:
    with pytest.raises(InvalidStateError, match="empty input"):
        C3.parse("   ")
    with pytest.raises(InvalidStateError, match="'X'"):
        C3.parse("R U X")
    with pytest.raises(InvalidStateError, match="got 3.*spaces between moves"):
        C3.parse("RUF")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("URFDLBurfdlbXx2'’ ,\n*0") | st.characters(), max_size=80))
def test_parse_arbitrary_text_raises_only_puzzle_errors(text: str) -> None:
    for cube in (C3, C2):
        try:
            state = cube.parse(text)
        except PuzzleError:
            continue
        cube.validate(state)


# ---- cube2 goal and canonical form ---------------------------------------------------------------


def test_cube2_goal_is_any_orientation_and_canonical_form() -> None:
    rotated = C2.goal()[C2.rotations]  # the 24 orientations of the solved cube
    assert len({r.tobytes() for r in rotated}) == 24
    assert C2.is_goal(rotated).all() and not C2.is_goal(moves(C2, "R")[None])[0]
    np.testing.assert_array_equal(C2.canonical(rotated), C2.goals(24))
    states = C2.scramble(np.random.default_rng(5), 200, (0, 20))
    canon = C2.canonical(states)
    dbl = np.array([14, 23, 18])  # D3 B4 L3: the DBL corner's stickers
    assert (canon[:, dbl] == [3, 5, 4]).all()
    for rot in C2.rotations:
        np.testing.assert_array_equal(C2.canonical(states[:, rot]), canon)
    # D turns the same cube as U up to rotation
    np.testing.assert_array_equal(C2.canonical(moves(C2, "D")[None]), C2.canonical(moves(C2, "U")[None]))


# ---- drawings ------------------------------------------------------------------------------------


def test_render_text_and_svg() -> None:
    s = moves(C3, "R")
    net = C3.render_text(s).splitlines()
    assert net[0] == "      U U F" and net[3] == "L L L F F D R R R U B B"
    assert "\x1b[" not in C3.render_text(s) and "\x1b[" in C3.render_text(s, color=True)
    svg = C3.to_svg(s, size=240)
    assert svg.startswith("<svg") and svg.count("<rect") == 54
    assert svg.count('fill="#ffffff"') == 9 and 'data-facelet="U9"' in svg
    assert C2.to_svg(C2.goal()).count("<rect") == 24 and len(C2.render_text(C2.goal()).splitlines()) == 6
