"""Permutation puzzles from their definitions: the checks of the native format, the puzzle it
makes (one gather per move, labels, wildcards, orbits, text, move algebra), and a definition file
named wherever a puzzle name goes, reaching a spawned process as data."""

from __future__ import annotations

import json
import multiprocessing
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import DefinitionError, InvalidMoveError, InvalidStateError
from puzzlezero.puzzles.permutation import FORMAT, Definition, PermutationPuzzle, load_definition
from puzzlezero.registry import register_definition
from puzzlezero.testing import check_puzzle

# a wreath of two rings of 4 positions sharing positions 0 and 2:
# ring l = (0 1 2 3), ring r = (0 4 2 5); labels: A on ring l, B on ring r, C where they meet
RING_L = [3, 0, 1, 2, 4, 5]  # child[i] = parent[perm[i]]: position i takes what i-1 held
RING_R = [5, 1, 0, 3, 2, 4]


def wreath(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": FORMAT,
        "name": "tinywreath",
        "description": "two rings of four sharing two positions",
        "positions": 6,
        "moves": {"l": RING_L, "r": RING_R},
        "goal": "C;A;C;A;B;B",
    }
    data.update(changes)
    return data


def brute_force_distances(p: PermutationPuzzle) -> dict[bytes, int]:
    """Breadth-first search from the goal over every reachable state (tiny puzzles only)."""
    dist = {p.goal().tobytes(): 0}
    frontier = p.goal()[None]
    d = 0
    while frontier.size:
        d += 1
        children = p.expand(frontier).reshape(-1, p.definition.positions)
        new = [c for c in np.unique(children, axis=0) if c.tobytes() not in dist]
        for c in new:
            dist[c.tobytes()] = d
        frontier = np.array(new, dtype=p.dtype).reshape(-1, p.definition.positions)
    return dist


# ---- the definition's checks -------------------------------------------------------------------
def test_inverses_are_added_after_the_given_moves_and_an_involution_stays_one_move() -> None:
    swap = [1, 0, 2, 3, 4, 5]
    d = Definition.from_dict(wreath(moves={"l": RING_L, "r": RING_R, "s": swap}))
    assert d.move_names == ("l", "r", "s", "l'", "r'")
    assert d.given_moves == 3
    for a, b in enumerate(d.inverse):
        assert (d.perms[a][d.perms[b]] == np.arange(6)).all()
    assert d.inverse[2] == 2


def test_given_inverses_are_paired_not_added() -> None:
    inv_l = np.argsort(RING_L).tolist()
    d = Definition.from_dict(wreath(moves={"l": RING_L, "back": inv_l, "r": RING_R}))
    assert d.move_names == ("l", "back", "r", "r'")
    assert d.inverse == (1, 0, 3, 2)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"moves": {"l": [0, 0, 1, 2, 3, 4]}},
            "move 'l' is not a permutation: position 0 appears 2 times and position 5 never",
        ),
        ({"moves": {"l": [0, 1, 2]}}, "move 'l' must list 6 positions, got 3"),
        ({"moves": {"l": [0, 1, 2, 3, 4, 6]}}, "move 'l' names position 6, outside 0..5"),
        ({"moves": {"l": [0, 1, 2, 3, 4, 5]}}, "move 'l' moves nothing"),
        ({"moves": {"l": RING_L, "m": RING_L}}, "moves 'l' and 'm' are the same permutation"),
        ({"moves": {"a b": RING_L}}, "move name 'a b'"),
        ({"moves": {"-l": RING_L}}, "move name '-l'"),
        ({"moves": {}}, "'moves' must be an object"),
        ({"goal": "A;B"}, "goal has 2 labels for 6 positions"),
        ({"goal": "A;B;C;D;E;F F"}, "goal label 'F F'"),
        ({"positions": 0}, "'positions' must be a whole number from 1"),
        ({"format": "other/2"}, "'format' must be 'puzzlezero-permutation/1'"),
        ({"name": "../evil"}, "'name' '../evil'"),
        ({"wildcards": 6}, "'wildcards' must be a whole number from 0 to 5"),
        ({"costs": {"x": 1}}, "'costs' names 'x', which is not a move"),
        ({"costs": {"l": 0}}, "the cost of 'l' must be a positive number"),
        ({"pieces": [[0, 1]]}, "move 'l' breaks piece 0"),
        ({"pieces": [[0], [0]]}, "position 0 is in pieces 0 and 1"),
        ({"drawing": {"kind": "hexagon"}}, "'drawing' must be an object whose kind is one of"),
        ({"code": "import os"}, "unknown field 'code'"),
        ({"costs": {"l": 1e308}}, "the cost of 'l' must be a positive number of at most 1e+06"),
        ({"moves": {"l": RING_L, "l'": RING_R}}, "move \"l'\" is not the inverse of 'l'"),
        (
            {"drawing": {"kind": "cube", "size": 2}},
            "a cube drawing of {'kind': 'cube', 'size': 2} has 24 positions, not 6",
        ),
        ({"drawing": {"kind": "wreath", "left": 4, "right": 4}}, None),
    ],
)
def test_a_bad_definition_is_refused_by_name(changes: dict[str, Any], message: str | None) -> None:
    if message is None:  # the control: the same field, right
        Definition.from_dict(wreath(**changes), where="good.json")
        return
    with pytest.raises(DefinitionError) as err:
        Definition.from_dict(wreath(**changes), where="bad.json")
    assert str(err.value).startswith("bad.json: ")
    assert message in str(err.value)


def test_duplicate_move_names_in_a_file_are_refused(tmp_path: Path) -> None:
    text = json.dumps(wreath()).replace('"r":', '"l":')
    path = tmp_path / "dup.json"
    path.write_text(text)
    with pytest.raises(DefinitionError, match="dup.json: the key 'l' appears twice"):
        load_definition(path)


def test_the_native_format_round_trips_and_the_digest_follows_the_moves(tmp_path: Path) -> None:
    d = Definition.from_dict(wreath(costs={"l": 2}, wildcards=1, drawing={"kind": "grid", "columns": 3}))
    path = tmp_path / "w.json"
    path.write_text(json.dumps(d.to_dict()))
    back = load_definition(path)
    assert back == d and back.digest == d.digest
    assert back.costs == (2.0, 1.0, 2.0, 1.0)
    assert Definition.from_dict(wreath(goal="C;A;C;A;B;A")).digest != d.digest


def test_deep_nesting_is_refused_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(
        '{"format": "puzzlezero-permutation/1", "moves": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    )
    with pytest.raises(DefinitionError, match="deep.json: its JSON nests too deeply"):
        load_definition(path)
    gap = tmp_path / "deep.g"
    gap.write_text("M:=" + "(" * 50_000 + "1,2" + ")" * 50_000 + ";\n")
    with pytest.raises(DefinitionError, match="deep.g"):
        load_definition(gap)


def test_not_a_definition_is_named(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(DefinitionError, match="x.json: not a puzzle definition"):
        load_definition(path)
    path.write_text("{not json")
    with pytest.raises(DefinitionError, match="x.json: line 1: not valid JSON"):
        load_definition(path)


# ---- the puzzle --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny() -> PermutationPuzzle:
    register_definition(Definition.from_dict(wreath()))
    p = pz.make("tinywreath")
    assert isinstance(p, PermutationPuzzle)
    return p


def test_the_puzzle_passes_the_conformance_checks(tiny: PermutationPuzzle) -> None:
    assert set(check_puzzle(tiny).values()) == {"passed"}


def test_a_move_is_one_gather_child_equals_parent_at_perm(tiny: PermutationPuzzle) -> None:
    rng = np.random.default_rng(0)
    states = tiny.scramble(rng, 7, (0, 20))
    children = tiny.expand(states)
    assert children.shape == (7, 4, 6)
    for a in range(4):
        np.testing.assert_array_equal(children[:, a], states[:, tiny.perms[a]])
    # by hand: l moves the labels one step round ring l
    assert tiny.format(tiny.apply_moves(tiny.goal(), [0])) == "A;C;A;C;B;B"


def test_labels_parse_and_format_and_a_scramble_text_is_read(tiny: PermutationPuzzle) -> None:
    s = tiny.parse("A;C;A;C;B;B")
    assert tiny.format(s) == "A;C;A;C;B;B"
    np.testing.assert_array_equal(tiny.parse("A C A C B B"), s)
    np.testing.assert_array_equal(tiny.parse("l"), s)
    np.testing.assert_array_equal(tiny.parse("l r -r"), s)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A;C;A;C;B", "a state has 6 labels, got 5"),
        ("A;C;A;C;B;Z", "unknown label 'Z' at position 5"),
        ("A;A;A;C;B;B", "hold 1 of label 'C' where the goal has 2"),
        ("l q", "unknown move 'q'"),
    ],
)
def test_a_bad_state_is_refused_by_name(tiny: PermutationPuzzle, text: str, message: str) -> None:
    with pytest.raises(InvalidStateError, match=message):
        tiny.parse(text)


def test_a_state_whose_labels_sit_in_the_wrong_orbit_cannot_reach_the_goal() -> None:
    # two separate 3-cycles: labels cannot cross from one to the other
    p = PermutationPuzzle(
        Definition.from_dict(
            {"format": FORMAT, "name": "twocycles", "positions": 6,
             "moves": {"a": [1, 2, 0, 3, 4, 5], "b": [0, 1, 2, 4, 5, 3]}, "goal": "X;X;Y;Z;Z;Z"}
        )
    )  # fmt: skip
    assert [o.tolist() for o in p.orbits] == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(InvalidStateError, match=r"positions \[0, 1, 2\] hold 1 of label 'X'"):
        p.parse("X;Z;Y;X;Z;Z")


def test_moves_text_reads_dots_minus_and_primes(tiny: PermutationPuzzle) -> None:
    assert tiny.parse_moves("l.-r.r'") == [0, 3, 3]
    assert tiny.parse_moves("l  r' l'") == [0, 3, 2]
    assert tiny.santa_moves([0, 3, 2, 1]) == "l.-r.-l.r"
    with pytest.raises(InvalidMoveError, match="unknown move '-x'"):
        tiny.parse_moves("-x")


def test_wildcards_accept_states_within_that_many_differences() -> None:
    p = PermutationPuzzle(Definition.from_dict(wreath(name="wild", wildcards=2)))
    goal = p.goal()
    one_move = p.apply_moves(goal, [0])  # ring l turned: A and C swap on 4 positions
    swapped = goal.copy()
    swapped[[1, 4]] = swapped[[4, 1]]  # two positions differ
    assert p.is_goal(np.stack([goal, swapped, one_move])).tolist() == [True, True, False]


def test_reduce_moves_keeps_the_permutation_and_never_lengthens(tiny: PermutationPuzzle) -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        word = rng.integers(0, 4, size=int(rng.integers(0, 12))).tolist()
        short = tiny.reduce_moves(word)
        assert len(short) <= len(word)
        start = tiny.scramble(rng, 1, 9)[0]
        np.testing.assert_array_equal(tiny.apply_moves(start, short), tiny.apply_moves(start, word))
    assert tiny.reduce_moves([0, 0, 0, 0]) == []  # a ring of four turned round
    assert tiny.reduce_moves([0, 0, 0]) == [2]  # three quarter turns are one back


def test_the_optimal_distance_is_what_brute_force_gives(tiny: PermutationPuzzle) -> None:
    dist = brute_force_distances(tiny)
    # 6 positions with labels C,C,A,A,B,B: at most 6!/(2!2!2!) = 90 arrangements reachable
    assert 1 < len(dist) <= 90
    assert max(dist.values()) >= 3


def test_a_registered_definition_unpickles_as_itself_and_elsewhere_as_data(tiny: PermutationPuzzle) -> None:
    assert pickle.loads(pickle.dumps(tiny)) is tiny
    assert tiny.from_file


def _expand_in_child(p: PermutationPuzzle, states: np.ndarray) -> tuple[str, np.ndarray]:
    return p.name, p.expand(states)


def test_a_spawned_process_rebuilds_a_file_puzzle_from_its_definition(tiny: PermutationPuzzle) -> None:
    states = tiny.scramble(np.random.default_rng(1), 5, (1, 9))
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        name, children = pool.apply(_expand_in_child, (tiny, states))
    assert name == "tinywreath"
    np.testing.assert_array_equal(children, tiny.expand(states))


def test_a_definition_file_goes_where_a_puzzle_name_goes(tmp_path: Path) -> None:
    path = tmp_path / "filewreath.json"
    path.write_text(json.dumps(wreath(name="filewreath")))
    p = pz.make(str(path))
    assert p is pz.make("filewreath")
    assert p.name == "filewreath"
    other = tmp_path / "clash.json"
    other.write_text(json.dumps(wreath(name="filewreath", goal="A;C;A;C;B;B")))
    with pytest.raises(DefinitionError, match="has other moves or another goal"):
        pz.make(str(other))


def test_a_missing_definition_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(pz.errors.UnknownNameError, match="no puzzle or definition file"):
        pz.make(str(tmp_path / "nothere.json"))


def test_a_competition_type_as_the_competition_writes_it_names_the_registered_puzzle() -> None:
    assert pz.make("cube_4/4/4") is pz.make("cube_4-4-4")
    assert pz.make("globe_1/8").name == "globe_1-8"


def test_solved_prefix_stops_at_the_first_state_within_the_wildcards(tiny: PermutationPuzzle) -> None:
    state = tiny.apply_moves(tiny.goal(), tiny.parse_moves("l r"))
    back = tiny.parse_moves("r' l'")
    assert tiny.solved_prefix(state, back) == back  # no wildcards: to the goal itself
    after_one = tiny.apply_moves(state, back[:1])
    off = int((after_one != tiny.goal()).sum())
    assert off > 0
    assert tiny.solved_prefix(state, back, wildcards=off) == back[:1]
    assert tiny.solved_prefix(tiny.goal(), back) == []


def test_a_definition_without_a_model_solves_by_default_with_the_rollout(
    tmp_path: Path, tiny: PermutationPuzzle
) -> None:
    """No model named or installed under its name: the group solver's answer shortened by rollouts
    (as the registered puzzles without a shipped model), each answer replayed; a model named brings
    the learned search back (and asks for the model by name where it is not there)."""
    from puzzlezero.defaults import MODEL_FREE_DEFAULTS
    from puzzlezero.errors import ModelFileError
    from puzzlezero.solver import defaults_for, resolve_options, solve

    assert defaults_for(tiny) is MODEL_FREE_DEFAULTS and defaults_for("tinywreath") is MODEL_FREE_DEFAULTS
    assert resolve_options(tiny).search == "rollout"
    assert resolve_options(tiny, model=str(tmp_path / "model")).search == "bwas"
    dist = brute_force_distances(tiny)
    for seed in range(3):
        state = tiny.scramble(np.random.default_rng(seed), 1, 20)[0]
        r = solve(tiny, state)
        assert r.solved and tiny.is_goal(tiny.apply_moves(state, list(r.actions))[None])[0]
        assert len(r.actions) >= dist[state.tobytes()]
    with pytest.raises(ModelFileError, match="no such model folder"):
        solve(tiny, tiny.goal(), model=str(tmp_path / "model"))
    assert defaults_for("cube_4-4-4").search == "cube-reduction"  # a registered puzzle keeps its own
