"""A goal whose labels all differ, read in the family's colours (the 2x2x2's and the 3x3x3's):
the reading found from the moves alone, states read so equal the family's states move for move,
a state that splits a piece left as it is, and ``solve``, ``bench`` and ``value`` on a definition
file answered by the family's puzzle, each answer replayed on its state as given (the web app's:
tests/web/test_web_permutation.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import make, registry
from puzzlezero.cli.main import main
from puzzlezero.puzzles.permutation.colours import colour_reading
from puzzlezero.puzzles.permutation.definition import Definition
from puzzlezero.puzzles.permutation.families import cube, family_definition
from puzzlezero.puzzles.permutation.rules import PermutationPuzzle


def distinct(n: int, **changes: object) -> PermutationPuzzle:
    data = dict(cube(n, "distinct"), **changes)
    return PermutationPuzzle(Definition.from_dict(data))


@pytest.mark.parametrize("n", [2, 3])
def test_states_read_in_colours_are_the_familys_move_for_move(n: int) -> None:
    p = distinct(n)
    reading = colour_reading(p, registry.names())
    assert reading is not None and reading.family == f"cube_{n}-{n}-{n}"
    family = make(reading.family)
    rng = np.random.default_rng(n)
    for _ in range(20):
        names = [p.action_names[a] for a in rng.integers(0, p.num_actions, size=int(rng.integers(0, 30)))]
        mine = p.apply_moves(p.goal(), p.parse_moves(names))
        theirs = family.apply_moves(family.goal(), family.parse_moves(names))
        read = reading.read(mine[None])
        assert read is not None and read.dtype == theirs.dtype
        np.testing.assert_array_equal(read[0], theirs)
        assert bool(family.is_goal(read)[0]) == bool(p.is_goal(mine[None])[0])


def test_only_a_goal_of_distinct_labels_on_exactly_the_familys_moves_is_read() -> None:
    names = registry.names()
    assert colour_reading(make("cube_3-3-3"), names) is None  # its own colours already
    assert colour_reading(distinct(3), [n for n in names if n != "cube_3-3-3"]) is None  # not registered
    assert colour_reading(distinct(3, wildcards=2), names) is None  # fewer colours off is not fewer labels
    moves = dict(cube(3, "distinct")["moves"])
    swapped = moves | {"f0": moves["f1"], "f1": moves["f0"], "f0'": moves["f1'"], "f1'": moves["f0'"]}
    assert colour_reading(distinct(3, moves=swapped), names) is None  # other moves by those names
    renamed = {("F0" if m == "f0" else "F0'" if m == "f0'" else m): v for m, v in moves.items()}
    assert colour_reading(distinct(3, moves=renamed), names) is None  # the same moves by other names
    big = PermutationPuzzle(Definition.from_dict(family_definition("cube_4/4/4", "distinct")))
    assert colour_reading(big, names) is None  # the 4x4x4's centres share their colours


def test_a_state_that_splits_a_piece_is_not_read() -> None:
    p = distinct(3)
    reading = colour_reading(p, registry.names())
    assert reading is not None
    state = p.apply_moves(p.goal(), p.parse_moves("f0 r1"))
    corner, edge = cube(3)["pieces"][0][0], cube(3)["pieces"][1][0]  # a corner's sticker, an edge's
    split = state.copy()
    split[corner], split[edge] = state[edge], state[corner]
    assert reading.read(state[None]) is not None
    assert reading.read(np.stack([state, split])) is None


def test_solve_on_a_definition_file_of_distinct_labels_uses_the_familys_puzzle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``puzzlezero definition family cube_2/2/2 --goal distinct``, then ``solve`` that file: the
    2x2x2's model solves it (not the definition's group solver), no longer than its scramble, and
    the answer replays on the state of distinct labels; with ``--search group`` named as well."""
    path = tmp_path / "cube2-distinct.json"
    assert main(["definition", "family", "cube_2/2/2", "--goal", "distinct", "--out", str(path)]) == 0
    p = make(str(path))
    scramble = "f0 r1 d0' f1 r0"
    state = p.apply_moves(p.goal(), p.parse_moves(scramble))
    capsys.readouterr()
    for extra in ([], ["--search", "group"]):
        rc = main(["solve", str(path), p.format(state), "--json", "--time-limit", "20", *extra])
        out = json.loads(capsys.readouterr().out)
        assert rc == 0 and out["puzzle"] == p.name and out["read_as"] == "cube_2-2-2"
        assert out["search"] == (extra[1] if extra else registry.spec("cube_2-2-2").defaults.search)
        moves = p.parse_moves(out["solution"])
        assert bool(p.is_goal(p.apply_moves(state, moves)[None])[0])
        if not extra:
            assert out["length"] <= 5


def test_bench_on_cases_of_distinct_labels_uses_the_familys_puzzle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``cases make`` on the 2x2x2's definition of distinct labels, then ``bench`` that file: the
    cases are read in the 2x2x2's colours and solved by its puzzle (the report says so), every
    answer replays on its case as given; a case that allows wildcards keeps the definition's own
    solve."""
    path = tmp_path / "cube2-distinct.json"
    assert main(["definition", "family", "cube_2/2/2", "--goal", "distinct", "--out", str(path)]) == 0
    cases = tmp_path / "cases.json"
    assert main(["cases", "make", str(path), "--n", "3", "--depth", "20", "30", "--out", str(cases)]) == 0
    capsys.readouterr()
    assert main(["bench", str(path), "--cases", str(cases), "--json", "--time-limit", "20"]) == 0
    report = json.loads(capsys.readouterr().out)
    p = make(str(path))
    assert report["summary"]["puzzle"] == p.name and report["summary"]["read_as"] == "cube_2-2-2"
    given = json.loads(cases.read_text())["cases"]
    for case, row in zip(given, report["results"], strict=True):
        state = p.parse(case["state"])
        assert row["solved"] and bool(
            p.is_goal(p.apply_moves(state, p.parse_moves(row["solution"]))[None])[0]
        )
    data = json.loads(cases.read_text())
    data["cases"][0]["wildcards"] = 2
    cases.write_text(json.dumps(data))
    assert (
        main(["bench", str(path), "--cases", str(cases), "--json", "--time-limit", "5", "--ids", "0:1"]) == 0
    )
    assert "read_as" not in json.loads(capsys.readouterr().out)["summary"]


def test_value_on_a_definition_file_of_distinct_labels_is_the_familys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``value`` on the 2x2x2's definition of distinct labels: the 2x2x2's model values the state
    read in its colours (where the definition alone has no model to value it with)."""
    path = tmp_path / "cube2-distinct.json"
    assert main(["definition", "family", "cube_2/2/2", "--goal", "distinct", "--out", str(path)]) == 0
    p = make(str(path))
    state = p.apply_moves(p.goal(), p.parse_moves("f0 r1 d0'"))
    family = make("cube_2-2-2")
    shown = family.apply_moves(family.goal(), family.parse_moves("f0 r1 d0'"))
    capsys.readouterr()
    assert main(["value", str(path), p.format(state), "--json", "--no-optimal"]) == 0
    mine = json.loads(capsys.readouterr().out)
    assert main(["value", "cube_2-2-2", family.format(shown), "--json", "--no-optimal"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    assert mine["puzzle"] == p.name and mine["read_as"] == "cube_2-2-2" and mine["state"] == p.format(state)
    assert mine["value"] == theirs["value"] and mine["action_values"] == theirs["action_values"]
    assert mine["model"] == theirs["model"] is not None
