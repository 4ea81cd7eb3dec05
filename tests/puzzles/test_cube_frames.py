"""The competition's 3x3x3 read as cube3 (:mod:`puzzlezero.puzzles.cube.frames`) and cube3's
network as its heuristic: face turns correspond, whole-cube turns are taken out and counted, other
puzzles are refused, and a search in the competition's metric solves with it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.cube.frames import Cube3View
from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle
from puzzlezero.puzzles.permutation.families import cube

#: each competition face turn and the cube3 turn of the same face (cube3 turns clockwise as seen
#: from the face; the competition's f2, r2 and d2 turn the B, L and U faces as seen from F, R, D)
FACE_TURNS = {
    "f0": "F",
    "f2'": "B",
    "r0": "R",
    "r2'": "L",
    "d0": "D",
    "d2'": "U",
    "f0'": "F'",
    "f2": "B'",
    "r0'": "R'",
    "r2": "L'",
    "d0'": "D'",
    "d2": "U'",
}
#: cube3's turn -> the competition's outer-layer move of the same face (centres home)
_OUTER = {turn: move for move, turn in FACE_TURNS.items()}


@pytest.fixture(scope="module")
def comp() -> PermutationPuzzle:
    return pz.make("cube_3-3-3")


@pytest.fixture(scope="module")
def view(comp: PermutationPuzzle) -> Cube3View:
    return Cube3View(comp)


def _walk(p: pz.Puzzle, names: list[str], rng: np.random.Generator, n: int) -> np.ndarray:
    s = p.goal()
    for name in rng.choice(names, size=n):
        s = p.apply_moves(s, p.parse_moves(str(name)))
    return s


def test_face_turns_read_as_cube3_turns(comp: PermutationPuzzle, view: Cube3View) -> None:
    cube3 = pz.make("cube3")
    rng = np.random.default_rng(3)
    for _ in range(20):
        s = _walk(comp, list(FACE_TURNS), rng, 30)  # face turns only: the centres stay home
        read, frame = view.cube3(s[None])
        assert frame[0] == 0 and view.rotation_moves[frame[0]] == 0
        for move, turn in FACE_TURNS.items():
            child = comp.apply_moves(s, comp.parse_moves(move))
            expected = cube3.apply_moves(read[0], cube3.parse_moves(turn))
            assert (view.cube3(child[None])[0][0] == expected).all(), (move, turn)
    # the goal reads as cube3's goal, colour for colour
    assert (view.cube3(comp.goal()[None])[0][0] == cube3.goal()).all()


def test_whole_cube_turns_are_taken_out_and_counted(comp: PermutationPuzzle, view: Cube3View) -> None:
    rng = np.random.default_rng(5)
    s = _walk(comp, list(FACE_TURNS), rng, 40)
    read = view.cube3(s[None])[0][0]
    for axis in "frd":
        quarter = comp.parse_moves(f"{axis}0 {axis}1 {axis}2")
        turned = comp.apply_moves(s, quarter)
        again, frame = view.cube3(turned[None])
        assert (again[0] == read).all()  # the same position, seen from elsewhere
        assert view.rotation_moves[frame[0]] == 3.0
        half = comp.apply_moves(turned, quarter)
        assert view.rotation_moves[view.frame(half[None])[0]] == 6.0
    # every one of the 24 orientations is found, each once, with 0, 3, 6 or 9 moves
    assert sorted(set(view.rotation_moves.tolist())) == [0.0, 3.0, 6.0, 9.0]
    assert len({tuple(g) for g in view.gathers}) == 24


def test_a_slice_turn_moves_the_frame(comp: PermutationPuzzle, view: Cube3View) -> None:
    s = comp.apply_moves(comp.goal(), comp.parse_moves("d1"))
    read, frame = view.cube3(s[None])
    assert view.rotation_moves[frame[0]] == 3.0
    # d1 is d0' d2 in the turned frame: cube3 reads two face turns, U' D (or its mirror) away
    cube3 = pz.make("cube3")
    two = {cube3.format(cube3.apply_moves(cube3.goal(), cube3.parse_moves(m))) for m in ("U' D", "U D'")}
    assert cube3.format(read[0]) in two


def test_other_puzzles_are_refused() -> None:
    with pytest.raises(PuzzleError, match="competition's 3x3x3"):
        Cube3View(pz.make("cube_4-4-4"))
    with pytest.raises(PuzzleError, match="competition's 3x3x3"):
        Cube3View(pz.make("cube3"))
    with pytest.raises(PuzzleError, match="six one-colour faces"):
        Cube3View(PermutationPuzzle(Definition.from_dict(cube(3, goal="distinct"))))
    moves = cube(3)
    for a, b in (("f0", "r0"), ("f0'", "r0'")):  # the same moves under each other's names
        moves["moves"][a], moves["moves"][b] = moves["moves"][b], moves["moves"][a]
    with pytest.raises(PuzzleError, match="move f0"):
        Cube3View(PermutationPuzzle(Definition.from_dict(moves)))


def test_cube3s_network_guides_the_competition_cube(comp: PermutationPuzzle, view: Cube3View) -> None:
    from puzzlezero.solver import solve
    from puzzlezero.solver.heuristics import get_heuristic

    h = get_heuristic(comp, "cube3-view")
    goal = comp.goal()
    turned = comp.apply_moves(goal, comp.parse_moves("r0 r1 r2"))  # solved, seen from the side
    values = h(np.stack([goal, turned]))
    assert values[0] == 0.0 and values[1] == 3.0
    rng = np.random.default_rng(11)
    s = _walk(comp, list(comp.action_names), rng, 40)
    r = solve(comp, s, search="beam", beam_width=2000, time_limit=60, shortcut=0, fallback=False)
    assert r.solved and r.search == "beam" and r.fallback is None
    assert (comp.apply_moves(s, list(r.actions)) == goal).all()  # replayed
    assert len(r.actions) <= 30  # cube3's network, not a group solver's 70-move answers


def test_the_q_function_reads_cube3s_q_head_and_the_slices_children(comp: PermutationPuzzle) -> None:
    from puzzlezero.solver.heuristics import get_heuristic

    cube3 = pz.make("cube3")
    q = get_heuristic(comp, "cube3-view-q", kind="q")
    h = get_heuristic(comp, "cube3-view")
    q3 = get_heuristic(cube3, "learned-q", kind="q")
    rng = np.random.default_rng(2)
    s = _walk(comp, list(FACE_TURNS), rng, 30)  # centres home: comp face turns are cube3's by name
    row = q(s[None])[0]
    own = q3(Cube3View(comp).cube3(s[None])[0])[0]
    for move, turn in FACE_TURNS.items():
        assert row[comp.parse_moves(move)[0]] == pytest.approx(own[cube3.parse_moves(turn)[0]])
    slices = [comp.parse_moves(m)[0] for m in ("f1", "r1", "d1", "f1'", "r1'", "d1'")]
    children = comp.expand(s[None])[0][slices]
    assert row[slices] == pytest.approx(1.0 + h(children))
    # the same position turned a quarter turn: the same twelve face values, 3 moves more each
    turned = comp.apply_moves(s, comp.parse_moves("d0 d1 d2"))
    face = [a for a in range(comp.num_actions) if a not in slices]
    assert sorted(q(turned[None])[0][face] - 3.0) == pytest.approx(sorted(row[face]), abs=1e-4)


def test_it_is_the_competition_cubes_own_heuristic(comp: PermutationPuzzle) -> None:
    from puzzlezero.cost_to_go import value
    from puzzlezero.solver import resolve_options

    o = resolve_options(comp)
    assert (o.search, o.heuristic, o.fallback) == ("cube3-route", "cube3-view", "group")
    assert resolve_options(comp, heuristic="learned").heuristic == "cube3-view"  # no model named
    assert resolve_options(comp, search="qbeam").heuristic == "cube3-view-q"
    assert resolve_options(pz.make("cube3"), search="beam").heuristic == "learned"
    r = value(comp, "r0 r1 r2", optimal=False)  # solved, seen from the side: 3 moves
    assert (r.value, r.model) == (3.0, "cube3")


def _slice_turns(comp: PermutationPuzzle, axis: str) -> dict[tuple[int, int, int], list[int]]:
    """Every way of turning ``axis``'s three slices ``(t0, t1, t2)`` quarter turns, as moves."""
    out = {}
    for t in itertools.product(range(4), repeat=3):
        if any(t):
            word = [
                f"{axis}{layer}'" if q == 3 else f"{axis}{layer}"
                for layer, q in enumerate(t)
                for _ in range(min(q, 4 - q))
            ]
            out[t] = comp.parse_moves(" ".join(word))
    return out


def test_a_middle_slice_comes_back_in_one_move(comp: PermutationPuzzle, view: Cube3View) -> None:
    cube3 = pz.make("cube3")
    goal = cube3.goal()
    for move in ("f1", "r1", "d1", "f1'", "r1'", "d1'"):
        s = comp.apply_moves(comp.goal(), comp.parse_moves(move))
        read = view.cube3(s[None])[0][0]
        # cube3 answers the reading with two face turns (the slice's outer faces)
        turns = next(
            [a, b] for a in range(12) for b in range(12) if (cube3.apply_moves(read, [a, b]) == goal).all()
        )
        answer = view.slice_answer(s, turns)
        assert comp.format_moves(answer) == [move[:2] if move.endswith("'") else move + "'"]


def test_a_turned_cube_comes_back_by_its_three_slices(comp: PermutationPuzzle, view: Cube3View) -> None:
    for turn, moves in (("r0 r1 r2", 3), ("d0 d1 d2 d0 d1 d2", 6), ("f0 f1 f2 r0' r1' r2'", 6)):
        s = comp.apply_moves(comp.goal(), comp.parse_moves(turn))
        answer = view.slice_answer(s, ())  # the reading is solved already
        assert len(answer) == moves == view.rotation_moves[view.frame(s[None])[0]]
        assert (comp.apply_moves(s, list(answer)) == comp.goal()).all()


def test_slice_answers_are_the_fewest_moves_through_the_readings(
    comp: PermutationPuzzle, view: Cube3View
) -> None:
    """Against every way of making two runs of turns (about two axes) with their slices, each
    followed by the whole-cube turn home: the dynamic programme's answer is as short as the best."""
    cube3 = pz.make("cube3")
    rng = np.random.default_rng(8)
    rotations = ["", "r0 r1 r2", "d0' d1' d2'", "f0 f1 f2 f0 f1 f2", "r0 r1 r2 d0 d1 d2"]
    runs = {"r": ["R L'", "R R", "L", "R' L'"], "d": ["U D'", "D", "U U D"]}
    by_axis = {axis: _slice_turns(comp, axis) for axis in "frd"}
    for _ in range(6):
        first, second = str(rng.choice(runs["r"])), str(rng.choice(runs["d"]))
        turns = cube3.parse_moves(f"{first} {second}")
        # the state whose reading these turns solve, turned as a whole
        outer = [comp.parse_moves(_OUTER[name])[0] for name in cube3.format_moves(turns)]
        inverse = [int(comp.inverse_action[a]) for a in reversed(outer)]
        s = comp.apply_moves(
            comp.apply_moves(comp.goal(), inverse), comp.parse_moves(str(rng.choice(rotations)))
        )
        read = view.cube3(s[None])[0][0]
        mid = cube3.apply_moves(read, cube3.parse_moves(first))
        best = np.inf
        for axis_one, axis_two in itertools.permutations("frd", 2):
            for w1 in by_axis[axis_one].values():
                a = comp.apply_moves(s, w1)
                if not (view.cube3(a[None])[0][0] == mid).all():
                    continue
                for w2 in by_axis[axis_two].values():
                    b = comp.apply_moves(a, w2)
                    seen, frame = view.cube3(b[None])
                    if (seen[0] == cube3.goal()).all():
                        best = min(best, len(w1) + len(w2) + view.rotation_moves[frame[0]])
        answer = view.slice_answer(s, turns)
        assert (comp.apply_moves(s, list(answer)) == comp.goal()).all()
        assert len(answer) == best
        assert len(answer) <= len(turns) + view.rotation_moves[view.frame(s[None])[0]]


def test_turns_that_do_not_solve_the_reading_are_refused(comp: PermutationPuzzle, view: Cube3View) -> None:
    s = comp.apply_moves(comp.goal(), comp.parse_moves("f0 r1"))
    with pytest.raises(PuzzleError, match="do not solve"):
        view.slice_answer(s, pz.make("cube3").parse_moves("F"))
