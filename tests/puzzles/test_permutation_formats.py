"""The permutation puzzles' other formats: CayleyPy generator files, GAP cycle notation, cubing.js
KPuzzle JSON and the Santa 2023 competition's CSV files, read into (and written from) the native
definition, with the conventions of each worked out by hand on small cases."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import DefinitionError
from puzzlezero.puzzles.permutation import Definition, cayleypy, colours, gap, kpuzzle, load_definition, santa

#: CayleyPy's generator files of the competition's puzzles, beside the checkout (not shipped)
GENERATORS = Path(__file__).resolve().parents[2].parent / "shared" / "permutation" / "generators"


def needs_generators(name: str) -> Path:
    path = GENERATORS / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"needs CayleyPy's generator file {name}.json in shared/permutation/generators")
    return path


def apply(state: list[str], perm: list[int]) -> list[str]:
    return [state[p] for p in perm]


def same_partition(a: list[str], b: list[str]) -> bool:
    """Whether two label lists are equal up to renaming the labels."""
    return [a.index(x) for x in a] == [b.index(x) for x in b]


# ---- CayleyPy ------------------------------------------------------------------------------------
def test_cayleypy_reads_moves_as_given_with_a_default_goal() -> None:
    data = {"actions": [[1, 2, 0, 3], [0, 1, 3, 2], [2, 0, 1, 3]], "names": ["a", "s", "a'"]}
    d = cayleypy.read(data, name="tiny")
    assert list(d["moves"]) == ["a", "s", "a'"]
    assert d["moves"]["a"] == [1, 2, 0, 3]
    assert d["goal"] == ["0", "1", "2", "3"] and d["positions"] == 4
    checked = Definition.from_dict(d)
    assert checked.move_names == ("a", "s", "a'")  # the involution s stays one move
    assert cayleypy.read(data, name="tiny", goal=list("AABB"))["goal"] == ["A", "A", "B", "B"]
    assert cayleypy.read(cayleypy.write(d), name="tiny") == d


def test_cayleypy_drops_the_second_listing_of_a_self_inverse_move() -> None:
    data = {"actions": [[1, 0, 2], [1, 0, 2], [0, 2, 1]], "names": ["f0", "f0'", "r0"]}
    d = cayleypy.read(data, name="flip")
    assert list(d["moves"]) == ["f0", "r0"]
    Definition.from_dict(d)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"actions": [[1, 0]], "names": ["a", "b"]}, "1 actions but 2 names"),
        ({"actions": [[1, 0], [0, 1, 2]], "names": ["a", "b"]}, "actions[1] ('b') has 3 positions"),
        ({"actions": [[1, "x"]], "names": ["a"]}, "must be a list of whole numbers"),
        ({"actions": [[1, 0], [1, 0]], "names": ["a", "a"]}, "appears twice"),
        ({"actions": [], "names": []}, "non-empty list"),
        ({"actions": [[1, 0]], "names": "a"}, "'names' must be a list"),
    ],
)
def test_cayleypy_errors_name_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(DefinitionError, match="gens.json") as err:
        cayleypy.read(data, name="x", source="gens.json")
    assert message in str(err.value)


@pytest.mark.parametrize("puzzle", ["cube_2-2-2", "wreath_6-6", "globe_1-8"])
def test_cayleypy_reads_the_competitions_generator_files(puzzle: str) -> None:
    raw = json.loads(needs_generators(puzzle).read_text())
    d = cayleypy.read(raw, name=puzzle)
    checked = Definition.from_dict(d, where=puzzle)
    assert checked.positions == len(raw["actions"][0])
    kept = [(m, a) for m, a in zip(raw["names"], raw["actions"], strict=True) if m in d["moves"]]
    assert cayleypy.write(d) == {"actions": [a for _, a in kept], "names": [m for m, _ in kept]}
    # every listed move survives (a dropped f0' is f0 itself), with its permutation
    for m, a in zip(raw["names"], raw["actions"], strict=True):
        name = m if m in d["moves"] else m[:-1]
        assert d["moves"][name] == a


def test_a_generator_file_loads_through_load_definition(tmp_path: Path) -> None:
    path = tmp_path / "tri.json"
    path.write_text(json.dumps({"actions": [[1, 2, 0], [2, 0, 1]], "names": ["t", "t'"]}))
    d = load_definition(path)
    assert d.name == "tri" and d.move_names == ("t", "t'")


# ---- GAP -----------------------------------------------------------------------------------------
def test_gap_direction_a_three_cycle_worked_by_hand() -> None:
    # GAP's (1,2,3) sends the sticker at 1 to 2, at 2 to 3, at 3 to 1: "a b c" becomes "c a b"
    d = gap.read("t:=(1,2,3);", name="three")
    assert d["moves"] == {"t": [2, 0, 1]}
    assert apply(["a", "b", "c"], d["moves"]["t"]) == ["c", "a", "b"]
    assert gap.write(d).splitlines()[3] == "t:=(1,2,3);"


def test_gap_products_powers_and_generator_lists() -> None:
    text = """# two cycles
    U:=(1,2,3,4)
       (5,6);           # a statement may span lines
    V:=U^-1*(1,5);      # first U^-1, then (1,5), as in GAP
    W:=U^2;
    Gen:=[U, V];
    G:=Group(Gen);
    """
    d = gap.read(text, name="two")
    assert list(d["moves"]) == ["U", "V"]  # the generator list, not every permutation
    # V maps 1->4->4, 2->1->5, 3->2, 4->3, 5->6, 6->5->1: the cycle (1,4,3,2,5,6)
    v = d["moves"]["V"]
    image = {int(i) + 1: p + 1 for p, i in enumerate(v)}  # point -> where its sticker goes
    assert image == {1: 4, 4: 3, 3: 2, 2: 5, 5: 6, 6: 1}
    without_list = gap.read("U:=(1,2)(3,4);\nW:=U*(1,3);\n", name="two")
    assert list(without_list["moves"]) == ["U", "W"]


def test_gap_identical_pieces_and_comment_directives() -> None:
    d = gap.read("M:=(1,2,3)(4,5);\nip:=[[1,2],[4,5]];\n", name="ip")
    assert d["goal"] == ["0", "0", "2", "3", "3"]
    d = gap.read("# positions: 7\n# move: M_inv M'\nM_inv:=(1,2,3);\n", name="pos")
    assert d["positions"] == 7 and list(d["moves"]) == ["M'"]
    d = gap.read("# goal: A;A;B\nM:=(1,2,3);\nip:=[[1,2]];\n", name="goal")
    assert d["goal"] == ["A", "A", "B"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("M:=(1,2,2);", "line 1: point 2 appears twice in one cycle"),
        ("M:=(1,2)\n(3,", "line 2: expected a point"),
        ("M:=(0,1);", "line 1: point 0 is outside"),
        ("M:=(1,2);\nN:=X*M;", "line 2: 'X' is not a permutation defined above"),
        ("Gen:=[M];", "line 1: 'M' in the generator list is not a permutation"),
        ("M:=(1,2);\nip:=[[1],[1,2]];", "point 1 is in two lists"),
        ("M:=(1,2) N:=(1,3);", "line 1: expected ';'"),
        ("M:=(1,2);\nPrint(M);", "line 2: expected ':='"),
        ("M = (1,2);", "line 1: unexpected '='"),
        ("# positions: 2\nM:=(1,3);", "line 1: '# positions: 2' but point 3"),
        ("# goal: A;B\nM:=(1,3);", "'# goal:' has 2 labels for 3 positions"),
        ("M:=(1,2);\nN:=(2,3);\nA:=[M];\nB:=[N];", "line 4: a second, different generator list"),
        ("", "no permutations"),
    ],
)
def test_gap_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(DefinitionError, match="cube.g") as err:
        gap.read(text, name="x", source="cube.g")
    assert message in str(err.value)


def test_gap_round_trip_keeps_names_order_moves_and_goal() -> None:
    defn: dict[str, Any] = {
        "format": "puzzlezero-permutation/1",
        "name": "tri",
        "description": "two 3-cycles sharing a position",
        "positions": 5,
        "moves": {"a": [1, 2, 0, 3, 4], "b": [0, 1, 3, 4, 2], "a'": [2, 0, 1, 3, 4], "Gen": [0, 1, 4, 2, 3]},
        "goal": ["A", "A", "B", "C", "C"],
    }
    text = gap.write(defn)
    assert "ip:=[[1,2], [4,5]];" in text
    back = gap.read(text, name="tri")
    assert back["moves"] == defn["moves"] and list(back["moves"]) == list(defn["moves"])
    assert back["goal"] == defn["goal"]
    Definition.from_dict(back)


def test_gap_file_loads_through_load_definition(tmp_path: Path) -> None:
    path = tmp_path / "tri.g"
    path.write_text("a:=(1,2,3);\nb:=(3,4,5);\nip:=[[1,2]];\n")
    d = load_definition(path)
    assert d.name == "tri" and d.move_names == ("a", "b", "a'", "b'") and d.goal[:2] == ("0", "0")


def test_gap_round_trip_of_a_competition_cube() -> None:
    raw = json.loads(needs_generators("cube_2-2-2").read_text())
    d = cayleypy.read(raw, name="cube_2-2-2", goal=[c for c in "ABCDEF" for _ in range(4)])
    back = gap.read(gap.write(d), name="cube_2-2-2")
    assert back["moves"] == d["moves"] and back["goal"] == d["goal"]


# ---- KPuzzle -------------------------------------------------------------------------------------
#: two corner-like pieces of 3 orientations and three plain pieces; X swaps and twists the corners
#: and cycles the plain pieces; Q turns a ring of four edge-like pieces, flipping two
TINY: dict[str, Any] = {
    "name": "tiny kpuzzle",
    "orbits": [
        {"orbitName": "C", "numPieces": 2, "numOrientations": 3},
        {"orbitName": "E", "numPieces": 3, "numOrientations": 1},
        {"orbitName": "R", "numPieces": 4, "numOrientations": 2},
    ],
    "defaultPattern": {
        "C": {"pieces": [0, 1], "orientation": [0, 0]},
        "E": {"pieces": [0, 1, 2], "orientation": [0, 0, 0]},
        "R": {"pieces": [0, 1, 2, 3], "orientation": [0, 0, 0, 0]},
    },
    "moves": {
        "X": {
            "C": {"permutation": [1, 0], "orientationDelta": [1, 2]},
            "E": {"permutation": [1, 2, 0], "orientationDelta": [0, 0, 0]},
        },
        "Q": {"R": {"permutation": [1, 2, 3, 0], "orientationDelta": [1, 0, 0, 1]}},
    },
}


def kpattern_apply(orbits: dict[str, int], pattern: dict[str, Any], move: dict[str, Any]) -> dict[str, Any]:
    """cubing.js's rule: pieces[i] = old.pieces[perm[i]], orientation[i] = (old.orientation[perm[i]]
    + orientationDelta[i]) mod numOrientations."""
    out = {}
    for orbit, o in orbits.items():
        t = move.get(orbit)
        old = pattern[orbit]
        if t is None:
            out[orbit] = old
            continue
        perm, delta = t["permutation"], t["orientationDelta"]
        out[orbit] = {
            "pieces": [old["pieces"][p] for p in perm],
            "orientation": [(old["orientation"][p] + d) % o for p, d in zip(perm, delta, strict=True)],
        }
    return out


def test_kpuzzle_flattening_worked_by_hand() -> None:
    d = kpuzzle.read(TINY)
    assert d["name"] == "tiny_kpuzzle" and d["positions"] == 2 * 3 + 3 + 4 * 2
    # C slot 0 <- slot 1 turned by 1: facet k shows the old facet k-1 of slot 1 -> 5, 3, 4;
    # C slot 1 <- slot 0 turned by 2 -> 1, 2, 0; E (offset 6) -> 7, 8, 6; R unchanged
    assert d["moves"]["X"] == [5, 3, 4, 1, 2, 0, 7, 8, 6, 9, 10, 11, 12, 13, 14, 15, 16]
    assert d["goal"][:7] == ["C:0:0", "C:0:1", "C:0:2", "C:1:0", "C:1:1", "C:1:2", "E:0"]
    assert d["pieces"][:2] == [[0, 1, 2], [3, 4, 5]] and [9, 10] in d["pieces"]
    checked = Definition.from_dict(d)
    assert checked.move_names == ("X", "Q", "X'", "Q'")


def test_kpuzzle_flattening_agrees_with_cubing_js_on_any_pattern() -> None:
    d = kpuzzle.read(TINY)
    orbits = {o["orbitName"]: o["numOrientations"] for o in TINY["orbits"]}
    rng = np.random.default_rng(5)
    pattern = TINY["defaultPattern"]
    for _ in range(30):
        name = str(rng.choice(["X", "Q"]))
        after = kpattern_apply(orbits, pattern, TINY["moves"][name])
        flat_before = kpuzzle.read({**TINY, "defaultPattern": pattern})["goal"]
        flat_after = kpuzzle.read({**TINY, "defaultPattern": after})["goal"]
        assert apply(flat_before, d["moves"][name]) == flat_after
        pattern = after


def test_kpuzzle_move_orders_are_kept() -> None:
    d = kpuzzle.read(TINY)
    goal = d["goal"]
    state = goal
    for k in range(1, 5):
        state = apply(state, d["moves"]["Q"])
        assert (state == goal) == (k == 4)  # a quarter turn of the ring is the identity only at the 4th
    state = goal
    for k in range(1, 7):
        state = apply(state, d["moves"]["X"])
        assert (state == goal) == (k == 6)  # swap-and-twist (order 2) with a 3-cycle: order 6


def test_kpuzzle_identical_pieces_orientation_mod_and_older_files() -> None:
    data = json.loads(json.dumps(TINY))
    data["defaultPattern"]["E"]["pieces"] = [0, 0, 2]
    data["defaultPattern"]["C"]["orientationMod"] = [1, 0]
    d = kpuzzle.read(data, name="same")
    assert d["goal"][6:9] == ["E:0", "E:0", "E:2"]
    assert d["goal"][:3] == ["C:0:0"] * 3  # orientation known mod 1: all facets alike
    older = {
        "name": "tiny",
        "orbits": {
            o["orbitName"]: {"numPieces": o["numPieces"], "numOrientations": o["numOrientations"]}
            for o in TINY["orbits"]
        },
        "startStateData": TINY["defaultPattern"],
        "moves": {
            m: {
                orb: {"permutation": t["permutation"], "orientation": t["orientationDelta"]}
                for orb, t in spec.items()
            }
            for m, spec in TINY["moves"].items()
        },
    }
    assert kpuzzle.read(older, name="x") == kpuzzle.read(TINY, name="x")


def test_kpuzzle_round_trips() -> None:
    d = kpuzzle.read(TINY)
    k = kpuzzle.write(d)
    assert k["orbits"] == [{"orbitName": "POSITIONS", "numPieces": d["positions"], "numOrientations": 1}]
    back = kpuzzle.read(json.loads(json.dumps(k)))
    assert back["moves"] == d["moves"] and list(back["moves"]) == list(d["moves"])
    assert same_partition(back["goal"], d["goal"])
    rng = np.random.default_rng(0)
    s1, s2 = d["goal"], back["goal"]
    for name in rng.choice(list(d["moves"]), size=20):
        s1, s2 = apply(s1, d["moves"][name]), apply(s2, back["moves"][name])
        assert same_partition(s1, s2)
    # and from a native definition with repeated labels
    native = {
        "format": "puzzlezero-permutation/1",
        "name": "tri",
        "positions": 5,
        "moves": {"a": [1, 2, 0, 3, 4], "b": [0, 1, 3, 4, 2]},
        "goal": "A;A;B;C;C",
    }
    again = kpuzzle.read(kpuzzle.write(native))
    assert again["name"] == "tri" and again["moves"] == native["moves"]
    assert same_partition(again["goal"], ["A", "A", "B", "C", "C"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["moves"]["X"].update(Z={"permutation": [0]}), "move 'X' names the orbit 'Z'"),
        (
            lambda d: d["moves"]["X"]["E"].update(permutation=[0, 0, 1]),
            "orbit 'E': 'permutation' must list each slot",
        ),
        (
            lambda d: d["moves"]["X"]["C"].update(orientationDelta=[1]),
            "'orientationDelta' must be a list of 2",
        ),
        (lambda d: d.pop("defaultPattern"), "no 'defaultPattern'"),
        (lambda d: d["defaultPattern"]["E"].update(pieces=[0, 1, 3]), "piece numbers must be from 0 to 2"),
        (lambda d: d["orbits"][0].update(numPieces=0), "orbit 'C': numPieces and numOrientations"),
        (lambda d: d.update(moves={}), "'moves' must be a non-empty object"),
    ],
)
def test_kpuzzle_errors_name_the_field(change: Any, message: str) -> None:
    data = json.loads(json.dumps(TINY))
    change(data)
    with pytest.raises(DefinitionError, match="tiny.kpuzzle.json") as err:
        kpuzzle.read(data, source="tiny.kpuzzle.json")
    assert message in str(err.value)


def test_kpuzzle_file_loads_through_load_definition(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    d = load_definition(path)
    assert d.move_names[:2] == ("X", "Q") and d.positions == 17


# ---- Santa 2023 ----------------------------------------------------------------------------------
TRI = {"a": [1, 2, 0, 3, 4], "b": [0, 1, 3, 4, 2]}


def scramble(goal: list[str], moves: dict[str, list[int]], names: list[str]) -> tuple[str, str]:
    """The state after ``names`` from ``goal``, and the solution undoing them (competition text)."""
    state = goal
    for m in names:
        state = apply(state, moves[m])
    undo = [m[1:] if m.startswith("-") else "-" + m for m in reversed(names)]
    return ";".join(state), ".".join(undo)


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def competition(tmp_path: Path, with_cube: bool) -> tuple[Path, Path, Path, dict[str, list[int]]]:
    """A tiny competition folder: a hand-made puzzle (and a 2x2x2) with several goals."""
    info_rows: list[list[Any]] = [["tri_3/3", repr(TRI)]]
    cube_moves: dict[str, list[int]] = {}
    if with_cube:
        from puzzlezero.puzzles.permutation.families import family_definition

        fam = family_definition("cube_2/2/2")
        cube_moves = {m: p for m, p in fam["moves"].items() if not m.endswith("'")}
        info_rows.append(["cube_2/2/2", repr(cube_moves)])
    info = write_csv(tmp_path / "puzzle_info.csv", ["puzzle_type", "allowed_moves"], info_rows)
    rows: list[list[Any]] = []
    sub: list[list[Any]] = []

    def add(
        ptype: str, goal: list[str], moves: dict[str, list[int]], names: list[str], wild: int = 0
    ) -> None:
        state, undo = scramble(goal, moves | {"-" + m: list(np.argsort(p)) for m, p in moves.items()}, names)
        rows.append([len(rows), ptype, ";".join(goal), state, wild])
        sub.append([len(sub), undo])

    add("tri_3/3", list("AABCC"), TRI, ["a", "b", "b"])  # id 0
    add("tri_3/3", list("AABCC"), TRI, ["b", "-a"])  # id 1
    add("tri_3/3", [f"N{i}" for i in range(5)], TRI, ["a", "b"])  # id 2
    add("tri_3/3", list("ABABC"), TRI, ["a"])  # id 3
    if with_cube:
        std = fam["goal"]
        add("cube_2/2/2", std, cube_moves, ["f0", "r1", "-d0"])  # id 4
        add("cube_2/2/2", std, cube_moves, ["r0", "r0"])  # id 5
        add("cube_2/2/2", [f"N{i}" for i in range(24)], cube_moves, ["d1"])  # id 6
        add("cube_2/2/2", std[::-1], cube_moves, ["f1", "d0"], wild=2)  # id 7
        add(
            "cube_2/2/2", [f"M{i}" for i in range(24)], cube_moves, ["r1"]
        )  # id 8: distinct, not the family's
    puzzles = write_csv(
        tmp_path / "puzzles.csv",
        ["id", "puzzle_type", "solution_state", "initial_state", "num_wildcards"],
        rows,
    )
    sub[1][1] = "a.a"  # a wrong solution
    if with_cube:
        sub[7][1] = sub[7][1].split(".")[0]  # half of it: wrong in more than 2 places
        sub.append([99, "f0"])  # no such puzzle
    submission = write_csv(tmp_path / "submission.csv", ["id", "moves"], sub)
    return info, puzzles, submission, cube_moves


def solution_names(text: str) -> list[str]:
    return [m[1:] + "'" if m.startswith("-") else m for m in text.split(".") if m]


def test_santa_import_of_a_hand_made_puzzle(tmp_path: Path) -> None:
    info, puzzles, submission, _ = competition(tmp_path, with_cube=False)
    out = tmp_path / "out"
    summary = santa.import_santa(info, puzzles, out, submission=submission)
    assert [p.name for p in summary.puzzles] == ["tri_3-3-goal1", "tri_3-3-distinct", "tri_3-3-goal2"]
    assert summary.cases_per_type == {"tri_3/3": 4}
    assert [r.id for r in summary.rejected] == [1] and "positions differ" in summary.rejected[0].reason
    assert summary.solutions_checked == 4
    cases = json.loads((out / "tri_3-3-goal1.cases.json").read_text())
    assert cases["puzzle"] == "tri_3-3-goal1.json"
    assert [c["id"] for c in cases["cases"]] == [0, 1]
    assert cases["cases"][0] == {
        "id": 0,
        "state": cases["cases"][0]["state"],
        "goal": "A;A;B;C;C",
        "wildcards": 0,
        "best_known": 3,
    }
    assert "best_known" not in cases["cases"][1]
    d = load_definition(out / cases["puzzle"])
    assert d.name == "tri_3-3-goal1" and d.move_names == ("a", "b", "a'", "b'")
    # a checked solution, in the definition's names, solves the case
    sub = dict(csv.reader(submission.read_text().splitlines()))
    state = cases["cases"][0]["state"].split(";")
    for m in solution_names(sub["0"]):
        state = apply(state, d.perms[d.move_names.index(m)].tolist())
    assert state == list(d.goal)
    assert summary.files == tuple(p for imp in summary.puzzles for p in (imp.definition, imp.cases_file))
    lines = summary.lines()
    assert "4 submitted solutions checked: 3 solve their puzzle, 1 do not" in lines
    assert [line for line in lines if line.startswith("rejected")] == [
        f"rejected id 1 (tri_3/3): {summary.rejected[0].reason}"
    ]


def test_santa_import_names_the_family_puzzles(tmp_path: Path) -> None:
    pytest.importorskip("puzzlezero.puzzles.permutation.families", reason="needs the generated families")
    info, puzzles, submission, cube_moves = competition(tmp_path, with_cube=True)
    out = tmp_path / "out"
    registered = ("cube_2-2-2",)  # the registry's names, as the CLI passes them
    summary = santa.import_santa(
        info, puzzles, out, submission=submission, types=["cube_2-2-2"], registered=registered
    )
    names = {p.name: p for p in summary.puzzles}
    assert set(names) == {"cube_2-2-2", "cube_2-2-2-distinct", "cube_2-2-2-goal1", "cube_2-2-2-goal2"}
    assert names["cube_2-2-2"].puzzle == "cube_2-2-2" and names["cube_2-2-2"].family
    # the goals whose labels all differ are read in the 2x2x2's colours, which name every piece
    distinct = names["cube_2-2-2-distinct"]
    assert distinct.family and (distinct.puzzle, distinct.read_as) == ("cube_2-2-2", "cube_2-2-2")
    assert distinct.bench_puzzle == "cube_2-2-2"
    assert names["cube_2-2-2-goal2"].read_as == "cube_2-2-2"  # M0..M23: not the family's, all different
    assert names["cube_2-2-2-goal1"].read_as is None  # wildcards: fewer colours off is not fewer labels
    assert not names["cube_2-2-2-goal1"].family
    assert names["cube_2-2-2-goal1"].bench_puzzle == str(out / "cube_2-2-2-goal1.json")
    (case,) = json.loads((out / "cube_2-2-2-distinct.cases.json").read_text())["cases"]
    colour_of = dict(zip(case["given_goal"].split(";"), std_goal := family_goal("cube_2/2/2"), strict=True))
    assert case["goal"] == ";".join(std_goal) and case["wildcards"] == 0
    assert case["state"] == ";".join(colour_of[label] for label in case["given_state"].split(";"))
    assert case["best_known"] == 1  # the submission's d1, checked on the case as given
    cube = pz.make("cube_2-2-2")
    state = cube.parse(case["state"])
    undo = cube.parse_moves("d1'")
    assert cube.is_goal(cube.apply_moves(state, undo)[None])[0]
    assert [(r.id, r.puzzle_type) for r in summary.rejected] == [(7, "cube_2/2/2"), (99, "?")]
    std = json.loads((out / "cube_2-2-2.cases.json").read_text())
    assert std["puzzle"] == "cube_2-2-2" and [c["best_known"] for c in std["cases"]] == [3, 2]
    from puzzlezero.puzzles.permutation.families import family_definition

    assert json.loads((out / "cube_2-2-2.json").read_text()) == family_definition("cube_2/2/2")
    other = load_definition(out / "cube_2-2-2-goal1.json")  # the family's moves, drawing and pieces
    assert other.drawing is not None and other.pieces and other.move_names[:2] == ("f0", "f1")
    odd = json.loads((out / "cube_2-2-2-goal1.cases.json").read_text())
    assert odd["cases"][0]["wildcards"] == 2 and "best_known" not in odd["cases"][0]
    mapping = santa.santa_notation(dict(zip(other.move_names, other.perms.tolist(), strict=True)), cube_moves)
    assert mapping["f0"] == "f0" and mapping["f0'"] == "-f0"
    assert santa.format_santa_moves(["f0'", "r1", "d0'"], mapping) == "-f0.r1.-d0"
    assert not (out / "tri_3-3-goal1.json").exists()  # types= keeps to the types asked for
    # where the family's puzzle is not registered, its case file names the definition file
    again = santa.import_santa(info, puzzles, tmp_path / "again", types=["cube_2-2-2"])
    assert {p.name: p.puzzle for p in again.puzzles}["cube_2-2-2"] == "cube_2-2-2.json"
    assert {p.name: p.read_as for p in again.puzzles}["cube_2-2-2-distinct"] is None
    assert (
        json.loads((tmp_path / "again" / "cube_2-2-2.cases.json").read_text())["puzzle"] == "cube_2-2-2.json"
    )


def test_santa_wildcards_accept_a_near_solution(tmp_path: Path) -> None:
    goal = list("ABCDE")
    state = apply(goal, TRI["a"])  # B C A D E: 3 positions differ
    assert santa.solves("", TRI, state, goal, 3) is None
    assert "3 positions differ" in str(santa.solves("", TRI, state, goal, 2))
    assert santa.solves("-a", TRI, state, goal, 0) is None
    assert "not a move" in str(santa.solves("a.z", TRI, state, goal, 0))


def test_format_santa_moves() -> None:
    assert santa.format_santa_moves(["f0", "r1'", "d0"]) == "f0.-r1.d0"
    assert santa.format_santa_moves(["x", "y"], {"x": "-f2"}) == "-f2.y"
    assert santa.format_santa_moves([]) == ""


@pytest.mark.parametrize(
    ("allowed", "message"),
    [
        ("__import__('os').system('true')", "must be a dict literal"),
        ("{'a': [1, 0], 'b': [0, 1, 2]}", "move 'b' has 3 positions"),
        ("{'a': [1, 1]}", "not a permutation"),
        ("{'a': 'ba'}", "must be a list of whole numbers"),
        ("{'a': [1, 0]", "not a Python dict literal"),
        ("[1, 0]", "non-empty dict"),
        ("{'-a': [1, 0]}", "move name '-a'"),
    ],
)
def test_santa_puzzle_info_is_read_as_data(tmp_path: Path, allowed: str, message: str) -> None:
    info = write_csv(tmp_path / "puzzle_info.csv", ["puzzle_type", "allowed_moves"], [["t", allowed]])
    with pytest.raises(DefinitionError, match="puzzle_info.csv: line 2 \\(t\\)") as err:
        santa.read_allowed_moves(info)
    assert message in str(err.value)


def test_santa_errors_name_file_and_line(tmp_path: Path) -> None:
    info = write_csv(
        tmp_path / "puzzle_info.csv", ["puzzle_type", "allowed_moves"], [["t", repr({"a": [1, 2, 0]})]]
    )
    header = ["id", "puzzle_type", "solution_state", "initial_state", "num_wildcards"]
    cases = [
        ([[0, "t", "A;B", "A;B", 0]], "line 2: t has 3 positions"),
        ([[0, "t", "A;B;C", "A;B;B", 0]], "line 2: the initial state's labels are not those"),
        (
            [[0, "t", "A;B;C", "A;B;C", 0], [1, "u", "A;B;C", "A;B;C", 0]],
            "line 3: the puzzle type 'u' is not in",
        ),
        ([[0, "t", "A;B;C", "A;B;C", 0], [0, "t", "A;B;C", "A;B;C", 0]], "line 3: the id 0 appears twice"),
        ([["x", "t", "A;B;C", "A;B;C", 0]], "line 2: id and num_wildcards must be whole numbers"),
        ([[0, "t", "A;B C;D", "A;B;C", 0]], "line 2: solution_state must be labels without spaces"),
    ]
    for rows, message in cases:
        puzzles = write_csv(tmp_path / "puzzles.csv", header, rows)
        with pytest.raises(DefinitionError, match="puzzles.csv") as err:
            santa.import_santa(info, puzzles, tmp_path / "out")
        assert message in str(err.value)
    bad = write_csv(tmp_path / "puzzles.csv", ["id", "puzzle_type"], [[0, "t"]])
    with pytest.raises(DefinitionError, match="the header lacks solution_state"):
        santa.import_santa(info, bad, tmp_path / "out")
    puzzles = write_csv(tmp_path / "puzzles.csv", header, [[0, "t", "A;B;C", "A;B;C", 0]])
    with pytest.raises(DefinitionError, match="no puzzles of type 'cube_9/9/9'"):
        santa.import_santa(info, puzzles, tmp_path / "out", types=["cube_9/9/9"])


def test_find_santa_files(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="no puzzle_info.csv"):
        santa.find_santa_files(tmp_path)
    for name in ("puzzle_info.csv", "puzzles.csv", "sample_submission.csv"):
        (tmp_path / name).write_text("x\n")
    assert santa.find_santa_files(tmp_path) == (
        tmp_path / "puzzle_info.csv",
        tmp_path / "puzzles.csv",
        tmp_path / "sample_submission.csv",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{'t': [1, 2, 0], 't': [2, 0, 1]}", "allowed_moves names the move 't' twice"),
        ("{'t': [1, 2, 0], \"u\": [2, 0, 1], 'u': [1, 2, 0] }", "allowed_moves names the move 'u' twice"),
        ("{'t': [1, 2, 0], 'u': [0, 1, 2]}", "move 'u' moves nothing"),
        ("{'t': [1, 2, 0], 'u': [1, 2, 0]}", "moves 't' and 'u' are the same permutation"),
    ],
)
def test_santa_moves_named_twice_or_doing_nothing_are_refused_at_their_line(text: str, message: str) -> None:
    from puzzlezero.puzzles.permutation.santa import _parse_moves

    with pytest.raises(DefinitionError, match="puzzle_info.csv: line 2: " + message):
        _parse_moves(text, "puzzle_info.csv: line 2")


def family_goal(ptype: str) -> list[str]:
    from puzzlezero.puzzles.permutation.families import family_definition

    return list(family_definition(ptype)["goal"])


@pytest.mark.parametrize(
    ("ptype", "named"), [("cube_2/2/2", True), ("cube_3/3/3", True), ("cube_4/4/4", False)]
)
def test_colours_name_the_pieces_of_the_small_cubes_only(ptype: str, named: bool) -> None:
    """The 2x2x2's and 3x3x3's pieces each show colours no other piece shows, none twice; the
    4x4x4's centres share their face's colour."""
    from puzzlezero.puzzles.permutation.families import family_definition

    family = family_definition(ptype)
    assert colours.colours_name_the_pieces(family) is named
    assert not colours.colours_name_the_pieces({k: v for k, v in family.items() if k != "pieces"})
    broken = dict(family, pieces=[*family["pieces"][1:], family["pieces"][0][:1]])  # not a partition
    assert not colours.colours_name_the_pieces(broken)


def test_a_state_that_splits_a_piece_is_left_in_its_own_labels(tmp_path: Path) -> None:
    """Two stickers of different pieces swapped: no move does that, and in colours the state could
    look solvable where its labels are not; the goal's cases stay as given, on its definition."""
    from puzzlezero.puzzles.permutation.families import family_definition

    family = family_definition("cube_3/3/3")
    moves = {m: p for m, p in family["moves"].items() if not m.endswith("'")}
    labels = [f"N{i}" for i in range(54)]
    good = np.array(labels)[np.asarray(moves["f0"])].tolist()
    assert colours.keeps_the_pieces(family, labels, good)
    corner, edge = family["pieces"][0][0], family["pieces"][1][0]  # a corner's sticker, an edge's
    split = list(good)
    split[corner], split[edge] = split[edge], split[corner]
    assert not colours.keeps_the_pieces(family, labels, split)
    info = write_csv(
        tmp_path / "puzzle_info.csv", ["puzzle_type", "allowed_moves"], [["cube_3/3/3", repr(moves)]]
    )
    rows = [
        [0, "cube_3/3/3", ";".join(labels), ";".join(good), 0],
        [1, "cube_3/3/3", ";".join(labels), ";".join(split), 0],
    ]
    puzzles = write_csv(
        tmp_path / "puzzles.csv",
        ["id", "puzzle_type", "solution_state", "initial_state", "num_wildcards"],
        rows,
    )
    (imp,) = santa.import_santa(info, puzzles, tmp_path / "out", registered=("cube_3-3-3",)).puzzles
    assert imp.read_as is None and imp.puzzle == "cube_3-3-3-distinct.json"
    rows_ok = write_csv(
        tmp_path / "ok.csv",
        ["id", "puzzle_type", "solution_state", "initial_state", "num_wildcards"],
        rows[:1],
    )
    (read,) = santa.import_santa(info, rows_ok, tmp_path / "ok", registered=("cube_3-3-3",)).puzzles
    assert read.read_as == "cube_3-3-3"
