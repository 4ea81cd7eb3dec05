"""Goals as data: the goal table of a puzzle (cube3 layers, sliding-puzzle rows), goal tests by
name or function in every search, DAVI targets to a goal, and the solver's and CLI's --goal."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError, UnknownNameError
from puzzlezero.puzzles.base import Goal
from puzzlezero.search import beam, bwas, gbfs
from puzzlezero.search.qstar import q_from_value, qstar
from puzzlezero.solver import solve, verify
from puzzlezero.train.objectives.davi import one_step_targets


def zero(states: np.ndarray) -> np.ndarray:
    return np.zeros(len(states), np.float32)


def bfs_distance(puzzle, start: np.ndarray, goal: str, max_depth: int = 3) -> int:
    """Fewest moves from ``start`` to ``goal`` by trying every move sequence (a second, naive
    implementation to check the searches against)."""
    test = puzzle.goal_test(goal)
    for depth in range(max_depth + 1):
        for seq in itertools.product(range(puzzle.num_actions), repeat=depth):
            if test(puzzle.apply_moves(start, seq)[None])[0]:
                return depth
    raise AssertionError("deeper than max_depth")


# ---- the goal table --------------------------------------------------------------------------------
def test_cube3_goals_are_the_U_layer_then_the_top_two_layers_then_solved():
    cube = make("cube3")
    assert list(cube.goal_predicates()) == ["layer1", "layer2", "solved"]
    layer1, layer2 = cube.goal_named("layer1"), cube.goal_named("layer2")
    # U1..U9 and the top row of R, F, L, B (facelets R1-R3 = 9-11, F1-F3 = 18-20, L = 36-38, B = 45-47)
    assert layer1.positions.tolist() == [*range(9), 9, 10, 11, 18, 19, 20, 36, 37, 38, 45, 46, 47]
    # plus the middle rows (R4-R6, F4-F6, L4-L6, B4-B6): 9 + 4 * 6 stickers
    assert layer2.positions.size == 33 and set(layer1.positions) < set(layer2.positions)
    assert {12, 13, 14, 21, 22, 23, 39, 40, 41, 48, 49, 50} <= set(layer2.positions)

    def met(text: str) -> tuple[bool, bool, bool]:
        s = cube.parse(text)[None]
        return bool(layer1(s)[0]), bool(layer2(s)[0]), bool(cube.is_goal(s)[0])

    assert met("R R'") == (True, True, True)
    assert met("D") == (True, True, False)  # a D turn leaves the top two layers alone
    assert met("D R' D'") == (False, False, False)
    assert met("U") == (False, False, False)
    assert met("R U R' U' R' F R F'") == (False, False, False)
    # the FR edge flipped in place (F6 = facelet 23 and R4 = 12 swapped): the top layer is
    # intact, the middle layer is not (the predicate reads stickers; legality is not its business)
    flipped = cube.goal()
    flipped[[23, 12]] = flipped[[12, 23]]
    assert (layer1(flipped[None])[0], layer2(flipped[None])[0]) == (True, False)
    # and a legal one: R' F' R' F D R keeps the U layer and takes an edge out of the middle
    assert met("R' F' R' F D R") == (True, False, False)


def test_sliding_puzzles_have_row_goals_and_a_second_puzzle_shares_the_design():
    p = make("puzzle15")
    assert list(p.goal_predicates()) == ["row1", "rows2", "solved"]
    assert list(make("puzzle8").goal_predicates()) == ["row1", "solved"]
    assert list(make("puzzle24").goal_predicates()) == ["row1", "rows2", "rows3", "solved"]
    # the predicates read tiles; these need not be solvable (two tiles swapped)
    rows1 = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 14, 0], np.uint8)
    top_only = np.array([1, 2, 3, 4, 6, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0], np.uint8)
    broken = np.array([2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0], np.uint8)
    states = np.stack([rows1, top_only, broken, p.goal()])
    assert p.goal_named("row1")(states).tolist() == [True, True, False, True]
    assert p.goal_named("rows2")(states).tolist() == [True, False, False, True]
    assert p.goal_named("row1").misplaced(states).tolist() == [0, 0, 2, 0]
    # puzzles without sub-goals have only their own
    assert list(make("lightsout7").goal_predicates()) == ["solved"]
    assert list(make("cube2").goal_predicates()) == ["solved"]


def test_goal_lookup_and_construction_errors_are_clear():
    cube = make("cube3")
    with pytest.raises(
        UnknownNameError, match="unknown goal 'layer3' for cube3; choose one of layer1, layer2, solved"
    ):
        cube.goal_named("layer3")
    assert cube.goal_test(None) == cube.is_goal and cube.goal_test("solved") == cube.is_goal
    with pytest.raises(PuzzleError, match="a goal is a name or a function"):
        cube.goal_test(3)  # type: ignore[arg-type]
    with pytest.raises(PuzzleError, match="either a test or positions"):
        Goal("g", "nothing")
    with pytest.raises(PuzzleError, match="one value per position"):
        Goal("g", "bad", positions=np.arange(3), values=np.zeros(2))
    with pytest.raises(PuzzleError, match="nothing to count"):
        cube.goal_named("solved").misplaced(cube.goals(1))


# ---- searches --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["R", "R U", "D R", "F' D F", "L B"])
def test_bwas_as_astar_finds_the_fewest_moves_to_a_sub_goal(text):
    cube = make("cube3")
    start = cube.parse(text)
    for goal in ("layer1", "layer2"):
        (r,) = bwas(cube, start, zero, weight=1.0, batch_size=1, is_goal=goal)
        assert r.solved and len(r.actions) == bfs_distance(cube, start, goal)
        assert cube.goal_named(goal)(cube.apply_moves(start, r.actions)[None])[0]


def test_every_search_stops_at_the_goal_it_is_given_by_name_or_function():
    cube = make("cube3")
    start = cube.parse("D R")  # layer1 is one move away (R'), solved two
    layer1 = cube.goal_named("layer1")
    h = layer1.misplaced
    runs = {
        "bwas": bwas(cube, start, h, weight=1.0, batch_size=10, is_goal="layer1"),
        "bwas-fn": bwas(cube, start, h, weight=1.0, batch_size=10, is_goal=layer1),
        "gbfs": gbfs(cube, start, h, max_steps=10, is_goal="layer1"),
        "beam": beam(cube, start, h, beam_width=50, max_steps=5, is_goal="layer1"),
        "qstar": qstar(
            cube, start, q_from_value(cube, h, "layer1"), weight=1.0, batch_size=10, is_goal="layer1"
        ),
    }
    for name, (r,) in runs.items():
        end = cube.apply_moves(start, r.actions)
        assert r.solved and layer1(end[None])[0], name
        assert not cube.is_goal(end[None])[0], name  # it stopped at layer1, D is still turned
    assert [cube.action_names[a] for a in runs["bwas"][0].actions] == ["R'"]


def test_goal_searches_keep_instances_independent():
    cube = make("cube3")
    starts = np.stack([cube.parse(t) for t in ("R", "D", "U F")])
    together = bwas(cube, starts, zero, weight=1.0, batch_size=1, is_goal="layer1")
    alone = [bwas(cube, s, zero, weight=1.0, batch_size=1, is_goal="layer1")[0] for s in starts]
    assert [r.actions for r in together] == [r.actions for r in alone]
    assert together[1].actions == ()  # D leaves layer1 solved: nothing to do


# ---- DAVI to a goal ----------------------------------------------------------------------------------
def test_one_step_targets_are_zero_exactly_at_the_goal_and_bellman_elsewhere():
    p = make("puzzle8")
    goal = p.goal()
    s1 = np.array([1, 2, 3, 4, 5, 6, 7, 0, 8], np.uint8)  # row1 met, one move (L) from solved
    s2 = np.array([1, 2, 0, 4, 5, 3, 7, 8, 6], np.uint8)  # row1 broken; U restores it
    states = np.stack([goal, s1, s2])

    def five(children: np.ndarray) -> np.ndarray:
        return np.full(len(children), 5.0, np.float32)

    # row1: 0 at goal and s1 (they meet it); s2: its U child meets row1, so 1 + 0
    assert one_step_targets(p, five, states, is_goal="row1").tolist() == [0.0, 0.0, 1.0]
    # solved: s1's L child is solved (1 + 0); s2's children (U, R) are not: 1 + 5
    assert one_step_targets(p, five, states).tolist() == [0.0, 1.0, 6.0]


# ---- solver and CLI ----------------------------------------------------------------------------------
def test_solver_solves_to_a_goal_and_verifies_against_it():
    r = solve("cube3", "D R", search="bwas", heuristic="misplaced", goal="layer1", weight=1.0, batch=10)
    assert r.solved and r.solution == ("R'",) and r.to_json()["goal"] == "layer1"
    cube = make("cube3")
    start = cube.parse("D R")[None]
    assert verify(cube, start, [[cube.action_names.index("R'")]], "layer1").tolist() == [True]
    assert verify(cube, start, [[cube.action_names.index("R'")]]).tolist() == [False]  # not solved
    with pytest.raises(PuzzleError, match="solves to the puzzle's own goal only"):
        solve("cube3", "D R", search="group", goal="layer1")
    with pytest.raises(UnknownNameError, match="unknown goal"):
        solve("cube3", "D R", search="bwas", heuristic="misplaced", goal="cross")


def test_cli_goal_option_and_goals_command(capsys):
    argv = ["solve", "cube3", "D R", "--search", "bwas", "--heuristic", "misplaced", "--goal", "layer1"]
    assert main([*argv, "--weight", "1", "--batch", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solution"] == ["R'"] and out["goal"] == "layer1"
    assert main(["goals", "cube3", "D"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["layer1", "layer2", "solved"]
    assert [ln.endswith("[met]") for ln in lines] == [True, True, False]
    assert main(["solve", "cube3", "R", "--goal", "corners"]) == 2
    assert "unknown goal 'corners' for cube3" in capsys.readouterr().err
