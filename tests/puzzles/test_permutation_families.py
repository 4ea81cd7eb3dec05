"""The generated cubes, globes and wreaths: the competition's moves and goals, and their algebra."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from puzzlezero.puzzles.permutation import families
from puzzlezero.puzzles.permutation.definition import Definition
from puzzlezero.puzzles.permutation.families import (
    FAMILIES,
    cube,
    cubers_cube,
    family_definition,
    globe,
    wreath,
)

GENERATORS = Path(
    os.environ.get(
        "PUZZLEZERO_PERMUTATION_GENERATORS",
        Path(__file__).resolve().parents[2].parent / "shared" / "permutation" / "generators",
    )
)

#: every puzzle type of the competition's puzzle_info.csv
COMPETITION_TYPES = (
    *(f"cube_{n}/{n}/{n}" for n in (2, 3, 4, 5, 6, 7, 8, 9, 10, 19, 33)),
    *(f"wreath_{a}/{a}" for a in (6, 7, 12, 21, 33, 100)),
    *(f"globe_{t}" for t in ("1/8", "1/16", "2/6", "3/4", "6/4", "6/8", "6/10", "3/33", "33/3", "8/25")),
)


def perms_of(d: dict) -> dict[str, np.ndarray]:
    return {name: np.asarray(p, dtype=np.int64) for name, p in d["moves"].items()}


def identity(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64)


def then(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The permutation of applying ``first`` then ``second`` (``child = parent[perm]``)."""
    return first[second]


def power(perm: np.ndarray, k: int) -> np.ndarray:
    out = identity(perm.size)
    for _ in range(k):
        out = then(out, perm)
    return out


def order(perm: np.ndarray) -> int:
    k, cur = 1, perm
    while not (cur == identity(perm.size)).all():
        cur, k = then(cur, perm), k + 1
    return k


def apply(d: dict, *moves: str) -> list[str]:
    state = np.asarray(d["goal"])
    for m in moves:
        state = state[np.asarray(d["moves"][m])]
    return state.tolist()


# ---- the reference generator files --------------------------------------------------------------
def reference_files() -> list[Path]:
    return sorted(GENERATORS.glob("*.json")) if GENERATORS.is_dir() else []


def generated(stem: str) -> dict:
    kind, sizes = stem.split("_")
    args = [int(x) for x in sizes.split("-")]
    return family_definition(f"{kind}_{'/'.join(map(str, args))}")


@pytest.mark.parametrize("path", reference_files() or [None], ids=lambda p: p.stem if p else "none")
def test_moves_equal_the_reference_generators(path: Path | None) -> None:
    if path is None:
        pytest.skip(f"no reference generator files in {GENERATORS} (set PUZZLEZERO_PERMUTATION_GENERATORS)")
    ref = json.loads(path.read_text())
    d = generated(path.stem)
    ours = d["moves"]
    listed = []
    for name, action in zip(ref["names"], ref["actions"], strict=True):
        if name in ours:
            listed.append(name)
            assert ours[name] == action, f"{path.stem}: move {name} differs"
        else:
            # a self-inverse move is listed once here; the file repeats it as its own inverse
            base = name[:-1]
            assert name.endswith("'") and base in ours, f"{path.stem}: move {name} missing"
            assert (
                ours[base] == action
                and (np.asarray(action)[np.asarray(action)] == identity(len(action))).all()
            )
    assert listed == list(ours), f"{path.stem}: moves in another order"
    assert d["positions"] == len(ref["actions"][0])


def test_every_reference_file_is_a_family() -> None:
    files = reference_files()
    if not files:
        pytest.skip(f"no reference generator files in {GENERATORS}")
    for path in files:
        kind, sizes = path.stem.split("_")
        assert f"{kind}_{sizes.replace('-', '/')}" in FAMILIES


# ---- the competition's types and goals ----------------------------------------------------------
def test_families_are_the_competition_types() -> None:
    assert set(FAMILIES) == set(COMPETITION_TYPES)


def test_unknown_type_and_goal_are_named() -> None:
    with pytest.raises(ValueError, match=r"unknown puzzle type 'cube_11/11/11'.*cube_2/2/2.*globe_8/25"):
        family_definition("cube_11/11/11")
    with pytest.raises(ValueError, match="unknown goal 'alternating' for wreaths"):
        family_definition("wreath_6/6", "alternating")
    with pytest.raises(ValueError, match="unknown goal"):
        cube(3, goal="solved")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cube(1), "cube's size"),
        (lambda: cube(34), "cube's size"),
        (lambda: cube(True), "cube's size"),
        (lambda: globe(0, 4), "rows"),
        (lambda: globe(2, 1), "columns"),
        (lambda: globe(1, 8, band_width=3), "divide"),
        (lambda: wreath(2, 6), "left ring"),
    ],
)
def test_bad_sizes(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# the competition's solution states (puzzles.csv) of some of its puzzles
COMPETITION_GOALS = {
    ("cube_2/2/2", "standard"): "A;A;A;A;B;B;B;B;C;C;C;C;D;D;D;D;E;E;E;E;F;F;F;F",
    ("cube_2/2/2", "alternating"): "A;B;A;B;B;C;B;C;C;D;C;D;D;E;D;E;E;F;E;F;F;A;F;A",
    ("cube_3/3/3", "alternating"): (
        "A;B;A;B;A;B;A;B;A;B;C;B;C;B;C;B;C;B;C;D;C;D;C;D;C;D;C;D;E;D;E;D;E;D;E;D;E;F;E;F;E;F;E;F;E;F;"
        "A;F;A;F;A;F;A;F"
    ),
    ("cube_4/4/4", "alternating"): ";".join(
        ";".join([a, b] * 8) for a, b in zip("ABCDEF", "BCDEFA", strict=True)
    ),
    ("wreath_7/7", "standard"): "C;A;C;A;A;A;A;B;B;B;B;B",
    ("wreath_12/12", "standard"): "C;A;A;C;A;A;A;A;A;A;A;A;B;B;B;B;B;B;B;B;B;B",
    ("globe_1/8", "standard"): "A;A;C;C;E;E;G;G;I;I;K;K;M;M;O;O;B;B;D;D;F;F;H;H;J;J;L;L;N;N;P;P",
    ("globe_2/6", "standard"): "A;A;A;D;D;D;G;G;G;J;J;J;B;B;B;E;E;E;H;H;H;K;K;K;C;C;C;F;F;F;I;I;I;L;L;L",
    ("globe_3/4", "standard"): "A;A;C;C;E;E;G;G;A;A;C;C;E;E;G;G;B;B;D;D;F;F;H;H;B;B;D;D;F;F;H;H",
    ("globe_6/4", "standard"): (
        "A;A;D;D;G;G;J;J;A;A;D;D;G;G;J;J;A;A;D;D;G;G;J;J;B;B;E;E;H;H;K;K;"
        "C;C;F;F;I;I;L;L;C;C;F;F;I;I;L;L;C;C;F;F;I;I;L;L"
    ),
}


@pytest.mark.parametrize(("key", "expected"), COMPETITION_GOALS.items(), ids=lambda k: str(k))
def test_competition_goals(key: tuple[str, str], expected: str) -> None:
    assert ";".join(family_definition(*key)["goal"]) == expected


def test_large_competition_goals() -> None:
    # globe_8/25: bands of 5 sectors, colours A..Z a..d; wreath_100/100 crosses at 0 and 25
    g = family_definition("globe_8/25")["goal"]
    rings = [g[i * 50 : (i + 1) * 50] for i in range(9)]
    assert rings[0][:10] == ["A"] * 5 + ["D"] * 5 and rings[0][-5:] == ["b"] * 5
    assert rings[4][:6] == ["B"] * 5 + ["E"] and rings[8][-1] == "d"
    assert all(r == rings[0] for r in rings[:4]) and all(r == rings[8] for r in rings[5:])
    w = family_definition("wreath_100/100")["goal"]
    assert [i for i, lab in enumerate(w) if lab == "C"] == [0, 25]
    assert Counter(w) == {"A": 98, "B": 98, "C": 2}
    assert family_definition("globe_3/33")["goal"][:7] == ["A"] * 6 + ["C"]


@pytest.mark.parametrize(
    "puzzle_type", [t for t in COMPETITION_TYPES if not t.startswith(("cube_19", "cube_33"))]
)
def test_definitions_are_valid_and_json(puzzle_type: str) -> None:
    d = family_definition(puzzle_type)
    assert json.loads(json.dumps(d)) == d
    defn = Definition.from_dict(d, where=puzzle_type)
    assert defn.given_moves == len(d["moves"]) == len(defn.move_names)  # every inverse is given
    assert d["name"] == puzzle_type.replace("/", "-")
    assert "Santa 2023" in d["description"]


def test_big_cubes_are_generated() -> None:
    d = family_definition("cube_33/33/33")
    assert d["positions"] == 6534 and len(d["moves"]) == 198 and len(d["pieces"]) == 6 * 31 * 31 + 12 * 31 + 8
    f16 = np.asarray(d["moves"]["f16"])
    assert order(f16) == 4


# ---- cubes --------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_cube_algebra(n: int) -> None:
    d = cube(n)
    p = perms_of(d)
    size = 6 * n * n
    names = [f"{f}{i}" for f in "frd" for i in range(n)]
    assert list(p) == names + [f"{m}'" for m in names]
    for m in names:
        assert sorted(p[m].tolist()) == list(range(size))
        assert order(p[m]) == 4
        assert (then(p[m], p[f"{m}'"]) == identity(size)).all()
        moved = int((p[m] != identity(size)).sum())
        face = n * n - n % 2  # a face turn moves its stickers too, all but an odd cube's centre
        assert moved == (4 * n + face if m[1:] in ("0", str(n - 1)) else 4 * n)
    for f in "frd":  # parallel slices commute
        for i in range(n):
            for j in range(i + 1, n):
                assert (then(p[f"{f}{i}"], p[f"{f}{j}"]) == then(p[f"{f}{j}"], p[f"{f}{i}"])).all()
    assert not (then(p["f0"], p["r0"]) == then(p["r0"], p["f0"])).all()
    assert len({v.tobytes() for v in p.values()}) == len(p)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_cube_pieces_move_rigidly(n: int) -> None:
    d = cube(n)
    pieces = [tuple(piece) for piece in d["pieces"]]
    assert sorted(q for piece in pieces for q in piece) == list(range(6 * n * n))
    sizes = Counter(len(piece) for piece in pieces)
    assert sizes == {3: 8, **({2: 12 * (n - 2), 1: 6 * (n - 2) ** 2} if n > 2 else {})}
    owner = {q: k for k, piece in enumerate(pieces) for q in piece}
    for m, perm in perms_of(d).items():
        where = np.empty_like(perm)
        where[perm] = np.arange(perm.size)  # where the sticker at q goes
        for piece in pieces:
            dest = {owner[int(where[q])] for q in piece}
            assert len(dest) == 1 and len(pieces[dest.pop()]) == len(piece), (m, piece)
    labels = d["goal"]
    for piece in pieces:  # a cubie shows different colours
        assert len({labels[q] for q in piece}) == len(piece)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_cube_goals(n: int) -> None:
    k = n * n
    standard = cube(n)["goal"]
    assert standard == [c for c in "ABCDEF" for _ in range(k)]
    distinct = cube(n, "distinct")
    assert (
        distinct["goal"] == [f"N{i}" for i in range(6 * k)]
        and distinct["name"] == f"cube_{n}-{n}-{n}-distinct"
    )
    alternating = cube(n, "alternating")["goal"]
    for f, (own, nxt) in enumerate(zip("ABCDEF", "BCDEFA", strict=True)):
        face = alternating[f * k : (f + 1) * k]
        assert Counter(face) == {own: (k + 1) // 2, nxt: k // 2}
    assert cube(n, "alternating")["moves"] == cube(n)["moves"]


def test_cube_layout() -> None:
    # the 3x3x3: f0 turns F clockwise and carries U's bottom row onto R's left column
    d = cube(3)
    after = apply(d, "f0")
    assert [after[18 + 3 * r] for r in range(3)] == ["A"] * 3  # R's left column (face 2)
    assert after[6:9] == ["E"] * 3  # U's bottom row now shows L's colour
    assert cube(3)["moves"]["f0"][9:18] == [15, 12, 9, 16, 13, 10, 17, 14, 11]  # F itself turns
    assert d["drawing"] == {"kind": "cube", "size": 3}


def compose(d: dict, *moves: str) -> list[int]:
    out = identity(d["positions"])
    for m in moves:
        out = then(out, np.asarray(d["moves"][m]))
    return out.tolist()


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_cubers_cube(n: int) -> None:
    outer, sliced = cubers_cube(n), cube(n)
    last = n - 1
    same = {"U": f"d{last}'", "F": "f0", "R": "r0", "B": f"f{last}'", "L": f"r{last}'", "D": "d0"}
    for face, slice_move in same.items():
        assert outer["moves"][face] == sliced["moves"][slice_move]
    if n >= 4:
        assert outer["moves"]["Rw"] == compose(sliced, "r0", "r1")
        assert outer["moves"]["Uw'"] == compose(sliced, f"d{last}", f"d{last - 1}")
    if n >= 6:
        assert outer["moves"]["3Fw"] == compose(sliced, "f0", "f1", "f2")
    widths = range(1, n // 2 + 1)
    names = [families._block_name(f, w) for w in widths for f in "UFRBLD"]
    assert list(outer["moves"]) == names + [f"{m}'" for m in names]
    assert outer["pieces"] == sliced["pieces"] and outer["name"] == f"cube_{n}-{n}-{n}-outer"
    Definition.from_dict(outer)


def test_cubers_moves_have_their_usual_meaning() -> None:
    d = cubers_cube(3)
    # R carries F's right column up to U; U carries F's top row to L; F carries U's bottom row to R
    assert [apply(d, "R")[2 + 3 * r] for r in range(3)] == ["B"] * 3
    assert apply(d, "U")[36:39] == ["B"] * 3
    assert [apply(d, "F")[18 + 3 * r] for r in range(3)] == ["A"] * 3
    assert apply(d, "R'", "R") == d["goal"]


# ---- globes -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [(1, 8), (2, 6), (3, 4), (6, 4), (1, 3), (4, 5)])
def test_globe_algebra(a: int, b: int) -> None:
    d = globe(a, b)
    p = perms_of(d)
    size = (a + 1) * 2 * b
    assert d["positions"] == size and d["name"] == f"globe_{a}-{b}"
    rings = [f"r{i}" for i in range(a + 1)]
    flips = [f"f{j}" for j in range(2 * b)]
    assert list(p) == rings + flips + [f"{r}'" for r in rings]
    for r in rings:
        assert order(p[r]) == 2 * b and (then(p[r], p[f"{r}'"]) == identity(size)).all()
    for f in flips:
        assert order(p[f]) == 2
        assert int((p[f] != identity(size)).sum()) == 2 * b * ((a + 1) // 2)
    for i in range(a + 1):  # rings turn independently
        for j in range(i + 1, a + 1):
            assert (then(p[rings[i]], p[rings[j]]) == then(p[rings[j]], p[rings[i]])).all()
    goal = d["goal"]
    bands = 3 if (a + 1) % 2 else 2
    assert len(set(goal)) == bands * 2 * b // families.GLOBE_BAND_WIDTHS.get((a, b), 2)
    assert Counter(globe(a, b, "distinct")["goal"]) == {f"N{i}": 1 for i in range(size)}
    Definition.from_dict(d)


def test_globe_band_width() -> None:
    assert globe(1, 8)["goal"] == family_definition("globe_1/8")["goal"]
    wide = globe(1, 8, band_width=8)["goal"]
    assert wide[:16] == ["A"] * 8 + ["C"] * 8 and wide[16:] == ["B"] * 8 + ["D"] * 8
    assert globe(1, 8, band_width=8)["moves"] == globe(1, 8)["moves"]


# ---- wreaths ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [(6, 6), (7, 7), (12, 12), (21, 21), (100, 100), (5, 9), (9, 4)])
def test_wreath_algebra(a: int, b: int) -> None:
    d = wreath(a, b)
    p = perms_of(d)
    size = a + b - 2
    assert d["positions"] == size and list(p) == ["l", "r", "l'", "r'"]
    assert order(p["l"]) == a and order(p["r"]) == b
    assert (then(p["l"], p["l'"]) == identity(size)).all() and (then(p["r"], p["r'"]) == identity(size)).all()
    moved_l, moved_r = (
        set(np.flatnonzero(p["l"] != identity(size))),
        set(np.flatnonzero(p["r"] != identity(size))),
    )
    assert len(moved_l) == a and len(moved_r) == b and moved_l | moved_r == set(range(size))
    shared = moved_l & moved_r
    assert len(shared) == 2 and 0 in shared
    goal = d["goal"]
    assert {goal[q] for q in shared} == {"C"} and Counter(goal) == {"A": a - 2, "B": b - 2, "C": 2}
    assert all(goal[q] == "A" for q in moved_l - shared) and all(goal[q] == "B" for q in moved_r - shared)
    assert wreath(a, b, "distinct")["goal"] == [f"N{i}" for i in range(size)]
    Definition.from_dict(d)
