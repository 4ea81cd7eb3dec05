"""Competition cases: `puzzlezero cases import-santa` (also `puzzlezero import-santa`) writes definitions and case files from the Santa 2023
competition's CSV files, and `bench` checks each case's goal and wildcards against the puzzle's,
compares with the cases' best known lengths and writes solutions in the competition's notation."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from puzzlezero.bench import best_known_summary, summarize
from puzzlezero.case_files import load_cases
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.permutation import PermutationPuzzle, load_definition
from puzzlezero.puzzles.permutation.santa import solves

# a type of the competition's kind that no generated family has: two 3-cycles on 5 positions
TRI_MOVES = {"a": [1, 2, 0, 3, 4], "b": [0, 1, 3, 4, 2]}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def scrambled(goal: list[str], moves: dict[str, list[int]], names: list[str]) -> tuple[str, str]:
    """The state that the competition's move text of ``names`` (``-m``: the inverse) solves, and
    that text."""
    s = np.array(goal, dtype=object)
    for name in reversed(names):  # undo the solution, last move first
        perm = np.array(moves[name.lstrip("-")])
        s = s[perm] if name.startswith("-") else s[np.argsort(perm)]
    return ";".join(s), ".".join(names)


def write_competition(
    folder: Path, rows: list[tuple[str, list[str], list[str], int]], moves: dict[str, dict[str, list[int]]]
) -> tuple[Path, Path, Path]:
    """puzzle_info.csv, puzzles.csv and submission.csv of ``rows`` (type, goal, solution, wildcards)."""
    folder.mkdir(parents=True, exist_ok=True)
    info, puzzles, submission = folder / "puzzle_info.csv", folder / "puzzles.csv", folder / "submission.csv"
    with info.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["puzzle_type", "allowed_moves"])
        w.writerows([(t, repr(m)) for t, m in moves.items()])
    with puzzles.open("w", newline="") as f, submission.open("w", newline="") as g:
        w, v = csv.writer(f), csv.writer(g)
        w.writerow(["id", "puzzle_type", "solution_state", "initial_state", "num_wildcards"])
        v.writerow(["id", "moves"])
        for i, (ptype, goal, names, wildcards) in enumerate(rows):
            state, text = scrambled(goal, moves[ptype], names)
            w.writerow([i, ptype, ";".join(goal), state, wildcards])
            v.writerow([i, text])
    return info, puzzles, submission


# ---- the summary ---------------------------------------------------------------------------------
def result(length: int | None, best: int | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {
        "id": 0,
        "solved": length is not None,
        "length": length,
        "optimal_length": None,
        "nodes_generated": 10,
        "seconds": 0.1,
    }
    if best is not None:
        r["best_known"] = best
    return r


def test_the_summary_compares_with_best_known_lengths() -> None:
    results = [result(5, 6), result(7, 6), result(4, 4), result(9)]
    s = summarize(results)
    assert s["best_known_cases"] == 3 and s["mean_best_known"] == round(16 / 3, 4)
    assert s["mean_length_on_best_known"] == round(16 / 3, 4)  # 5, 7, 4: the case without one left out
    assert s["at_or_below_best_known_pct"] == round(200 / 3, 2)
    assert (s["total_length"], s["total_best_known"]) == (16, 16)
    assert s["mean_length"] == 6.25  # every solved case, as before


def test_an_unsolved_case_leaves_no_total_and_no_best_known_leaves_no_fields() -> None:
    s = best_known_summary([result(5, 6), result(None, 3)])
    assert s["total_length"] is None and s["total_best_known"] == 9
    assert s["mean_length_on_best_known"] == 5.0 and s["at_or_below_best_known_pct"] == 50.0
    plain = summarize([result(5), result(None)])
    assert not any("best_known" in k or k.startswith("total_") for k in plain)


# ---- case files ----------------------------------------------------------------------------------
@pytest.fixture
def tri(tmp_path: Path) -> PermutationPuzzle:
    from puzzlezero.registry import make

    path = tmp_path / "tri_cases.json"
    path.write_text(
        json.dumps(
            {
                "format": "puzzlezero-permutation/1",
                "name": "tri_cases",
                "positions": 5,
                "moves": TRI_MOVES,
                "goal": "A;B;C;D;E",
            }
        )
    )
    p = make(str(path))
    assert isinstance(p, PermutationPuzzle)
    return p


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"goal": "A;B;C;E;D"},
            "case 7: its goal is not tri_cases's (position 3 is 'E' where tri_cases's goal has 'D')",
        ),
        ({"goal": ["A", "B"]}, "case 7: its goal is not tri_cases's (it has 2 labels for 5 positions)"),
        ({"wildcards": -1}, "case 7: -1 wildcards, but tri_cases allows 0"),
        ({"best_known": -1}, "case 7: 'best_known' must be 0 or more"),
        ({"best_known": "many"}, "case 7: 'best_known' must be a whole number"),
    ],
)
def test_a_case_of_another_goal_is_refused_by_name(
    tri: PermutationPuzzle, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    case = {"id": 7, "state": "B;C;A;D;E", "goal": "A;B;C;D;E", "wildcards": 0, "best_known": 1} | change
    path = tmp_path / "c.json"
    path.write_text(json.dumps([case]))
    with pytest.raises(PuzzleError, match="^" + str(path).replace(".", r"\.") + ": ") as info:
        load_cases(tri, path)
    assert message in str(info.value)


def test_cases_carry_their_best_known_length(tri: PermutationPuzzle, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "puzzle": "tri_cases",
                "cases": [
                    {"id": 1, "state": "B;C;A;D;E", "goal": "A;B;C;D;E", "wildcards": 0, "best_known": 1},
                    {"id": 2, "state": "A;B;C;D;E"},
                ],
            }
        )
    )
    cases = load_cases(tri, path)
    assert [(c.id, c.best_known) for c in cases] == [(1, 1), (2, None)]
    assert tri.format(cases[0].state) == "B;C;A;D;E"


def test_a_case_with_more_wildcards_than_its_puzzle_is_answered_by_the_solution_cut_short(
    tri: PermutationPuzzle,
) -> None:
    from puzzlezero.bench import run_bench
    from puzzlezero.case_files import Case

    # b then a: positions 2..4 and 0..2 turned; undone by a' b' (2 moves, every position back)
    state = tri.apply_moves(tri.goal(), tri.parse_moves("b a"))
    exact, loose = Case(1, state), Case(2, state, wildcards=3)
    report = run_bench(tri, [exact, loose], search="group", time_limit=30)
    full, cut = report.results
    assert full["solved"] and cut["solved"]
    assert cut["length"] < full["length"]
    # the cut solution leaves at most 3 positions off the goal, one move fewer would leave more
    end = tri.apply_moves(state, tri.parse_moves(cut["solution"]))
    assert int((end != tri.goal()).sum()) <= 3
    before = tri.apply_moves(state, tri.parse_moves(cut["solution"][:-1])) if cut["length"] else state
    assert cut["length"] == 0 or int((before != tri.goal()).sum()) > 3


# ---- import-santa, then bench --------------------------------------------------------------------
def test_import_santa_then_bench_compares_with_the_submission(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    distinct = ["N0", "N1", "N2", "N3", "N4"]
    rows = [
        ("tri_5", list("AABBC"), ["a", "-b"], 0),
        ("tri_5", distinct, ["a", "b", "a", "b", "a", "b", "-a"], 0),  # a long way round
        ("tri_5", distinct, ["-a", "b"], 0),
        ("tri_5", distinct, ["b", "b", "b"], 0),  # the identity: solved by nothing
    ]
    info, puzzles, submission = write_competition(tmp_path / "santa", rows, {"tri_5": TRI_MOVES})
    out_dir = tmp_path / "imported"
    rc, out, err = run(
        capsys, "cases", "import-santa", "--info", str(info), "--puzzles", str(puzzles),
        "--submission", str(submission), "--out", str(out_dir),
    )  # fmt: skip
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == (
        f"wrote {out_dir / 'tri_5-distinct.json'} (definition) and {out_dir / 'tri_5-distinct.cases.json'}: "
        "3 cases of tri_5, 3 with a best known length"
    )
    assert lines[1].startswith(f"wrote {out_dir / 'tri_5-goal1.json'} (definition) and ")
    assert lines[-2] == "4 cases of 1 puzzle type in 2 definitions"
    assert (
        lines[-1]
        == f"bench one: puzzlezero bench {out_dir / 'tri_5-distinct.json'} --cases {out_dir / 'tri_5-distinct.cases.json'} --search group"
    )
    defn = load_definition(out_dir / "tri_5-distinct.json")
    assert defn.goal == tuple(distinct) and defn.move_names == ("a", "b", "a'", "b'")

    cases = out_dir / "tri_5-distinct.cases.json"
    rc, out, _ = run(
        capsys,
        "bench",
        str(out_dir / "tri_5-distinct.json"),
        "--cases",
        str(cases),
        "--search",
        "group",
        "--json",
    )
    report = json.loads(out)
    s = report["summary"]
    assert rc == 0 and s["solved_pct"] == 100.0 and s["best_known_cases"] == 3
    assert s["mean_best_known"] == 4.0 and s["total_best_known"] == 12  # 7 + 2 + 3
    assert s["total_length"] == sum(r["length"] for r in report["results"]) <= 12
    assert s["at_or_below_best_known_pct"] == 100.0
    written = {c["id"]: c for c in json.loads(cases.read_text())["cases"]}
    for r in report["results"]:
        case = written[r["id"]]
        assert r["best_known"] == case["best_known"]
        # the competition's notation replays with the competition's own moves
        assert solves(r["santa_moves"], TRI_MOVES, case["state"].split(";"), distinct, 0) is None
    assert {r["id"]: r["length"] for r in report["results"]}[3] == 0


def test_import_santa_with_wildcards_and_a_rejected_solution(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = [
        ("tri_w", ["N0", "N1", "N2", "N3", "N4"], ["a"], 3),
        ("tri_w", ["N0", "N1", "N2", "N3", "N4"], ["b", "a"], 0),
    ]
    info, puzzles, submission = write_competition(tmp_path, rows, {"tri_w": TRI_MOVES})
    text = submission.read_text().replace("1,b.a", "1,b.b")
    submission.write_text(text)
    rc, out, _ = run(capsys, "cases", "import-santa", str(tmp_path), "--out", str(tmp_path / "out"))
    assert rc == 0 and "2 submitted solutions checked: 1 solve their puzzle, 1 do not" in out
    assert "rejected id 1 (tri_w): after its 2 moves" in out
    written = [c for f in (tmp_path / "out").glob("*.cases.json") for c in json.loads(f.read_text())["cases"]]
    assert sorted((c["id"], c["wildcards"], "best_known" in c) for c in written) == [
        (0, 3, True),
        (1, 0, False),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--info", "nope.csv", "--puzzles", "puzzles.csv"], "--info nope.csv: no such file"),
        (["--info", "puzzle_info.csv", "--puzzles", "."], "--puzzles .: a folder, not a file"),
        (
            ["--info", "puzzle_info.csv", "--puzzles", "puzzles.csv", "--types", "cube_9/9/9"],
            "has no puzzles of type 'cube_9/9/9'",
        ),
        (
            ["--puzzles", "puzzles.csv"],
            "name the competition's files: --info puzzle_info.csv --puzzles puzzles.csv",
        ),
        (
            ["--info", "puzzles.csv", "--puzzles", "puzzles.csv"],
            "puzzles.csv: the header lacks allowed_moves",
        ),
    ],
)
def test_import_santa_refuses_missing_and_malformed_files_by_name(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    write_competition(tmp_path, [("tri_x", list("ABCDE"), ["a"], 0)], {"tri_x": TRI_MOVES})
    monkeypatch.chdir(tmp_path)
    for command in (["cases", "import-santa"], ["import-santa"]):  # the top-level name is the same command
        rc, out, err = run(capsys, *command, *args, "--out", "out")
        assert rc == 2 and out == "" and message in err and "Traceback" not in err


def test_a_built_in_familys_cases_bench_in_the_competitions_notation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The standard goal of a competition type is the built-in puzzle (wreath_6-6), whose
    definition lists the inverses (l'): its solutions are still written -l."""
    from puzzlezero.puzzles.permutation.families import family_definition

    family = family_definition("wreath_6/6")
    moves = {m: p for m, p in family["moves"].items() if not m.endswith("'")}
    goal = list(family["goal"])
    rows = [("wreath_6/6", goal, ["l", "-r", "-l"], 0), ("wreath_6/6", goal, ["-r", "-r", "l"], 0)]
    info, puzzles, submission = write_competition(tmp_path / "santa", rows, {"wreath_6/6": moves})
    rc, out, _ = run(capsys, "import-santa", str(tmp_path / "santa"), "--out", str(tmp_path / "out"))
    cases = tmp_path / "out" / "wreath_6-6.cases.json"
    assert rc == 0 and f"bench one: puzzlezero bench wreath_6-6 --cases {cases}" in out
    rc, out, _ = run(
        capsys, "bench", "wreath_6-6", "--cases", str(cases), "--heuristic", "misplaced", "--json"
    )
    report = json.loads(out)
    assert rc == 0 and report["summary"]["solved_pct"] == 100.0 and report["summary"]["total_best_known"] == 6
    written = {c["id"]: c for c in json.loads(cases.read_text())["cases"]}
    for r in report["results"]:
        state = written[r["id"]]["state"].split(";")
        assert solves(r["santa_moves"], moves, state, goal, 0) is None, r["santa_moves"]


def test_a_generated_family_that_is_not_registered_is_benched_by_its_definition_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The competition's cubes of 8 layers and more are generated families, not registered
    puzzles: their case files name the definition written beside them, and the bench command the
    import prints runs as printed, with the definition's default (the commutator solver)."""
    from puzzlezero.puzzles.permutation.families import family_definition
    from puzzlezero.registry import names

    assert "cube_8-8-8" not in names()
    family = family_definition("cube_8/8/8")
    moves = {m: p for m, p in family["moves"].items() if not m.endswith("'")}
    goal = list(family["goal"])
    rows = [("cube_8/8/8", goal, ["f0", "-r3", "d7", "f5"], 0)]
    write_competition(tmp_path / "santa", rows, {"cube_8/8/8": moves})
    out_dir = tmp_path / "out"
    rc, out, err = run(capsys, "import-santa", str(tmp_path / "santa"), "--out", str(out_dir))
    definition, cases = out_dir / "cube_8-8-8.json", out_dir / "cube_8-8-8.cases.json"
    assert rc == 0 and err == ""
    assert (
        out.splitlines()[0]
        == f"wrote {definition} (definition) and {cases}: 1 cases of cube_8/8/8, 1 with a best known length"
    )
    assert json.loads(cases.read_text())["puzzle"] == "cube_8-8-8.json"
    assert json.loads(definition.read_text()) == family_definition("cube_8/8/8")
    suggested = out.splitlines()[-1]  # its default, the commutator solver, answers in seconds
    assert suggested == f"bench one: puzzlezero bench {definition} --cases {cases}"
    rc, out, err = run(capsys, *suggested.split()[3:], "--json")
    report = json.loads(out)
    assert rc == 0 and report["summary"]["solved_pct"] == 100.0, err
    assert report["summary"]["search"] == "cube-commutators"
    (r,) = report["results"]
    assert (
        solves(
            r["santa_moves"], moves, json.loads(cases.read_text())["cases"][0]["state"].split(";"), goal, 0
        )
        is None
    )


def test_a_small_cube_of_distinct_stickers_is_benched_in_its_colours(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A 2x2x2 case whose goal labels every sticker apart is read in cube_2-2-2's colours, which
    name every piece: the printed bench command solves it with the shipped model, and the
    solution, in the competition's notation, solves the case as the competition gave it."""
    from puzzlezero.puzzles.permutation.families import family_definition

    family = family_definition("cube_2/2/2")
    moves = {m: p for m, p in family["moves"].items() if not m.endswith("'")}
    labels = [f"N{i}" for i in range(24)]
    rows = [("cube_2/2/2", labels, ["f0", "-r1", "d0", "f1", "r0"], 0)]
    write_competition(tmp_path / "santa", rows, {"cube_2/2/2": moves})
    out_dir = tmp_path / "out"
    rc, out, err = run(capsys, "import-santa", str(tmp_path / "santa"), "--out", str(out_dir))
    cases = out_dir / "cube_2-2-2-distinct.cases.json"
    assert rc == 0 and err == ""
    assert out.splitlines()[0] == (
        f"wrote {out_dir / 'cube_2-2-2-distinct.json'} (definition; its cases read in cube_2-2-2's colours, "
        f"which name every piece) and {cases}: 1 cases of cube_2/2/2, 1 with a best known length"
    )
    suggested = out.splitlines()[-1]
    assert suggested == f"bench one: puzzlezero bench cube_2-2-2 --cases {cases}"
    rc, out, err = run(capsys, *suggested.split()[3:], "--json")
    (r,) = json.loads(out)["results"]
    (case,) = json.loads(cases.read_text())["cases"]
    assert rc == 0 and r["solved"] and r["length"] <= case["best_known"] == 5, err
    assert solves(r["santa_moves"], moves, case["given_state"].split(";"), labels, 0) is None
