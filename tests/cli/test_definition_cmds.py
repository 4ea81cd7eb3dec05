"""`puzzlezero definition check | convert | family`, and a definition file given where a puzzle name
goes to `solve`, `value`, `cases` and `bench` (in-process through main())."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.cli.main import main
from puzzlezero.puzzles.permutation import FORMAT, Definition, PermutationPuzzle, load_definition

# two rings of four positions sharing positions 0 and 2 (child[i] = parent[perm[i]])
RING_L = [3, 0, 1, 2, 4, 5]
RING_R = [5, 1, 0, 3, 2, 4]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def write_definition(tmp_path: Path, name: str, **changes: Any) -> Path:
    data: dict[str, Any] = {
        "format": FORMAT,
        "name": name,
        "description": "two rings of four sharing two positions",
        "positions": 6,
        "moves": {"l": RING_L, "r": RING_R},
        "goal": "C;A;C;A;B;B",
        "pieces": [[0], [1], [2], [3], [4], [5]],
    }
    data.update(changes)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


# ---- check ---------------------------------------------------------------------------------------
def test_check_summarises_a_definition(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_definition(tmp_path, "checkwreath", wildcards=1)
    rc, out, err = run(capsys, "definition", "check", str(path))
    assert rc == 0 and err == ""
    lines = dict(line.split(":", 1) for line in out.splitlines())
    assert lines["name"].strip() == "checkwreath (native format)"
    assert lines["positions"].strip() == "6"
    assert lines["moves"].strip() == "4 (2 given, 2 inverses added): l r l' r'"
    assert lines["labels"].strip() == "3 in the goal: C x2, A x2, B x2"
    assert lines["wildcards"].strip() == "1"
    assert lines["orbits"].strip() == "1 (sizes 6)"
    assert lines["pieces"].strip() == "6 (sizes 1 x6)"
    assert lines["digest"].strip() == load_definition(path).digest

    rc, out, _ = run(capsys, "definition", "check", str(path), "--json", "--name", "renamed")
    s = json.loads(out)
    assert rc == 0 and s["name"] == "renamed" and s["format"] == "native"
    assert (s["moves"], s["given_moves"], s["added_inverses"]) == (4, 2, 2)
    assert s["label_counts"] == {"C": 2, "A": 2, "B": 2} and s["orbits"] == [6]


def test_check_reads_the_other_formats(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cayley = tmp_path / "gens.json"
    cayley.write_text(json.dumps({"actions": [RING_L, RING_R], "names": ["l", "r"]}))
    gap = tmp_path / "three.g"
    gap.write_text("# positions: 4\nt:=(1,2,3);\nu:=(3,4);\nGen:=[t, u];\n")
    rc, out, _ = run(capsys, "definition", "check", str(cayley), "--json")
    s = json.loads(out)
    assert rc == 0 and (s["format"], s["name"], s["labels"], s["given_moves"]) == ("cayleypy", "gens", 6, 2)
    rc, out, _ = run(capsys, "definition", "check", str(gap), "--json")
    s = json.loads(out)
    assert rc == 0 and (s["format"], s["positions"], s["move_names"]) == ("gap", 4, ["t", "u", "t'"])
    assert s["own_inverses"] == 1  # u is a transposition


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            {"format": FORMAT, "name": "badmove", "positions": 3, "moves": {"t": [0, 0, 1]}, "goal": "A;B;C"},
            "badmove.json: move 't' is not a permutation",
        ),
        (
            {"format": FORMAT, "name": "badgoal", "positions": 3, "moves": {"t": [1, 2, 0]}, "goal": "A;B"},
            "goal has 2 labels",
        ),
        ({"hello": 1}, "not a puzzle definition"),
        ("{not json", "not valid JSON"),
    ],
)
def test_check_refuses_a_bad_file_by_name_without_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: Any, message: str
) -> None:
    name = content.get("name", "odd") if isinstance(content, dict) else "broken"
    path = tmp_path / f"{name}.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    rc, out, err = run(capsys, "definition", "check", str(path))
    assert rc == 2 and out == "" and err.startswith("error: ") and message in err
    assert path.name in err and "Traceback" not in err
    rc, _, err = run(capsys, "definition", "check", str(tmp_path / "missing.json"))
    assert rc == 2 and "missing.json" in err and "cannot read" in err


# ---- convert -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["native", "gap", "kpuzzle", "cayleypy"])
def test_convert_round_trips_every_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    src = write_definition(tmp_path, f"conv-{fmt}", costs={"l": 2})
    original = load_definition(src)
    out_path = tmp_path / f"out.{'g' if fmt == 'gap' else 'json'}"
    rc, out, err = run(capsys, "definition", "convert", str(src), "--to", fmt, "--out", str(out_path))
    assert rc == 0 and out == f"wrote conv-{fmt} (6 positions, 2 moves) as {fmt} to {out_path}\n"
    back = load_definition(out_path, name=original.name)
    # the moves survive every format, inverses and their order included
    assert back.move_names == original.move_names and np.array_equal(back.perms, original.perms)
    if fmt == "native":
        assert back == original and back.pieces == original.pieces and err == ""
        assert json.loads(out_path.read_text())["moves"] == {"l": RING_L, "r": RING_R}  # as given
    elif fmt == "gap":
        assert back.goal == original.goal and "does not hold" in err and "costs" in err
    elif fmt == "kpuzzle":  # the goal's pattern, under other label names
        assert [back.goal.index(x) for x in back.goal] == [original.goal.index(x) for x in original.goal]
    else:  # CayleyPy files list every move and its inverse, and hold no goal
        assert json.loads(out_path.read_text())["names"] == ["l", "r", "l'", "r'"]
        assert "the goal" in err and back.goal == tuple(str(i) for i in range(6))


def test_convert_gives_a_cayleypy_file_its_goal_and_prints_without_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cayley = tmp_path / "ringgens.json"
    cayley.write_text(json.dumps({"actions": [RING_L, RING_R], "names": ["l", "r"]}))
    rc, out, _ = run(
        capsys, "definition", "convert", str(cayley), "--goal-labels", "C;A;C;A;B;B", "--wildcards", "1"
    )
    data = json.loads(out)
    assert rc == 0 and data["goal"] == "C;A;C;A;B;B" and data["wildcards"] == 1 and data["name"] == "ringgens"
    d = Definition.from_dict(data)
    assert d.move_names == ("l", "r", "l'", "r'")
    rc, out, _ = run(capsys, "definition", "convert", str(cayley), "--to", "gap")
    assert rc == 0 and "l:=(1,2,3,4);\nr:=(1,3,5,6);\nGen:=[l, r];\n" in out


def test_convert_refuses_an_unknown_format_and_a_goal_of_the_wrong_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = write_definition(tmp_path, "convbad")
    rc, _, err = run(capsys, "definition", "convert", str(src), "--to", "yaml")
    assert rc == 2 and "--to must be one of native, cayleypy, gap, kpuzzle" in err
    rc, _, err = run(capsys, "definition", "convert", str(src), "--goal-labels", "A;B")
    assert rc == 2 and "convbad.json" in err and "goal has 2 labels for 6 positions" in err


# ---- family --------------------------------------------------------------------------------------
def test_family_writes_a_generated_definition(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_path = tmp_path / "c2.json"
    rc, out, _ = run(capsys, "definition", "family", "cube_2/2/2", "--out", str(out_path))
    d = load_definition(out_path)
    assert rc == 0 and out == f"wrote cube_2-2-2 (24 positions, 12 moves) as native to {out_path}\n"
    assert d.name == "cube_2-2-2" and d.positions == 24 and d.move_names[:3] == ("f0", "f1", "r0")
    assert d.goal[:5] == ("A", "A", "A", "A", "B") and d.drawing == {"kind": "cube", "size": 2}
    p = PermutationPuzzle(d)
    assert p.is_goal(p.apply_moves(p.goal(), p.parse_moves("f0 f0 f0 f0"))[None])[0]

    gap_path = tmp_path / "w.g"
    rc, _, _ = run(capsys, "definition", "family", "wreath_6-6", "--goal", "distinct", "--out", str(gap_path))
    w = load_definition(gap_path)
    assert rc == 0 and w.positions == 10 and len(set(w.goal)) == 10  # '-' spelling; .g -> GAP


def test_family_lists_the_types_and_refuses_an_unknown_one(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "definition", "family")
    assert rc == 0 and "cube_4/4/4" in out and "wreath_6/6" in out and "globe_1/8" in out
    rc, out, err = run(capsys, "definition", "family", "cube_11/11/11")
    assert rc == 2 and out == "" and "cube_11/11/11" in err and "cube_4/4/4" in err
    rc, _, err = run(capsys, "definition", "family", "wreath_6/6", "--goal", "alternating")
    assert rc == 2 and "alternating" in err and "Traceback" not in err


# ---- a definition file as the puzzle -------------------------------------------------------------
def test_solve_value_cases_and_bench_take_a_definition_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_definition(tmp_path, "solvewreath", goal="A;B;C;D;E;F")  # every label distinct
    p = PermutationPuzzle(load_definition(path))
    start = p.format(p.apply_moves(p.goal(), p.parse_moves("l r l")))
    rc, out, _ = run(capsys, "solve", str(path), start, "--search", "group", "--json")
    data = json.loads(out)
    assert rc == 0 and data["solved"] and data["puzzle"] == "solvewreath"
    assert p.is_goal(p.apply_moves(p.parse(start), p.parse_moves(data["solution"]))[None])[0]

    rc, out, _ = run(capsys, "value", str(path), start, "--heuristic", "misplaced", "--json")
    v = json.loads(out)
    assert rc == 0 and v["value"] == float(np.count_nonzero(p.parse(start) != p.goal()))

    cases = tmp_path / "cases.json"
    rc, out, _ = run(
        capsys, "cases", "make", str(path), "--n", "4", "--depth", "3", "8", "--seed", "2",
        "--out", str(cases),
    )  # fmt: skip
    written = json.loads(cases.read_text())
    assert rc == 0 and written["puzzle"] == "solvewreath" and all("state" in c for c in written["cases"])
    assert written["source"] == f"puzzlezero cases make {path} --n 4 --depth 3 8 --seed 2"
    rc, out, _ = run(capsys, "bench", str(path), "--cases", str(cases), "--search", "group", "--json")
    report = json.loads(out)
    assert (
        rc == 0 and report["summary"]["solved_pct"] == 100.0 and report["summary"]["puzzle"] == "solvewreath"
    )
    for case, r in zip(written["cases"], report["results"], strict=True):
        end = p.apply_moves(p.parse(case["state"]), p.parse_moves(r["solution"]))
        assert p.is_goal(end[None])[0]
        assert p.parse_moves(r["santa_moves"]) == p.parse_moves(r["solution"])  # the competition's notation


def test_a_definition_with_a_bad_move_is_refused_by_file_and_move(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_definition(tmp_path, "badwreath", moves={"l": RING_L, "r": [5, 1, 0, 3, 2, 9]})
    for args in (["solve", str(path), "A;B", "--search", "group"], ["bench", str(path), "--cases", "x.json"]):
        rc, out, err = run(capsys, *args)
        assert (
            rc == 2 and out == "" and "badwreath.json" in err and "move 'r'" in err and "Traceback" not in err
        )


def test_show_draws_the_goal_or_a_state(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_definition(tmp_path, "showgrid", drawing={"kind": "grid", "columns": 3})
    p = PermutationPuzzle(load_definition(path))
    rc, out, _ = run(capsys, "definition", "show", str(path))
    assert rc == 0 and out == p.render_text(p.goal()) + "\nsolved\n"
    rc, out, _ = run(capsys, "definition", "show", str(path), "l r")
    state = p.apply_moves(p.goal(), p.parse_moves("l r"))
    assert rc == 0 and out == p.render_text(state) + "\nnot solved\n"
    rc, _, err = run(capsys, "definition", "show", "puzzle8")
    assert rc == 2 and "puzzle8 is not a permutation puzzle" in err


def test_family_outer_writes_cubers_block_turns(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "c4outer.json"
    rc, _, _ = run(capsys, "definition", "family", "cube_4/4/4", "--outer", "--out", str(out))
    assert rc == 0
    outer = load_definition(out)
    slices = pz.make("cube_4-4-4")
    # Rw turns the two R-side slices together: the competition's r0 then r1
    rw = outer.perms[outer.move_names.index("Rw")]
    both = slices.apply_moves(
        slices.apply_moves(np.arange(96), [slices.action_names.index("r0")]),
        [slices.action_names.index("r1")],
    )
    assert rw.tolist() == both.tolist()
    rc, _, err = run(capsys, "definition", "family", "wreath_6/6", "--outer")
    assert rc == 2 and "--outer is for the cubes" in err
