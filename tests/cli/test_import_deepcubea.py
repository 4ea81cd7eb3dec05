"""`puzzlezero cases import-deepcubea`: DeepCubeA's published test sets (pickles of its own state
classes) read as data and written as case files that `bench` reads.

The fixtures are pickles of the same structure as the published ``data/<puzzle>/test/data_0.pkl``:
a dict of ``states`` (objects of classes ``environments.<module>.<Class>`` with DeepCubeA's
``__slots__``), ``solutions``, ``times`` and ``num_nodes_generated``, dumped while a fake
``environments`` package stands in ``sys.modules``. The cube's states are made with DeepCubeA's own
sticker moves (:data:`DEEPCUBEA_CUBE_MOVES`, the sticker each position takes after ``(face, 1)``
from the solved cube, computed from ``environments/cube3.py``'s move tables), so the conversion is
checked against DeepCubeA's layout, not against itself.
"""

from __future__ import annotations

import doctest
import json
import os
import pickle
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from puzzlezero import deepcubea_files as dca
from puzzlezero import make
from puzzlezero.case_files import load_cases
from puzzlezero.cli.main import main
from puzzlezero.deepcubea_files import (
    DeepCubeAFileError,
    SolutionReplayError,
    UnsafePickleError,
    read_deepcubea,
)
from puzzlezero.puzzles.sokoban.cells import AGENT, BOX, TARGET, WALL
from tests.conftest import load_bench

#: DeepCubeA's quarter turn ``(face, 1)`` as a gather: the state after it is ``state[perm]``
#: (``environments/cube3.py``: stickers ``9f + 3i + j``, faces ``U D L R B F``, solved = 0..53)
DEEPCUBEA_CUBE_MOVES = {
    "U": [6, 3, 0, 7, 4, 1, 8, 5, 2, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 47, 21, 22, 50, 24, 25, 53, 27, 28, 38, 30, 31, 41, 33, 34, 44, 36, 37, 20, 39, 40, 23, 42, 43, 26, 45, 46, 29, 48, 49, 32, 51, 52, 35],
    "D": [0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 12, 9, 16, 13, 10, 17, 14, 11, 36, 19, 20, 39, 22, 23, 42, 25, 26, 45, 28, 29, 48, 31, 32, 51, 34, 35, 27, 37, 38, 30, 40, 41, 33, 43, 44, 18, 46, 47, 21, 49, 50, 24, 52, 53],
    "L": [44, 43, 42, 3, 4, 5, 6, 7, 8, 45, 46, 47, 12, 13, 14, 15, 16, 17, 24, 21, 18, 25, 22, 19, 26, 23, 20, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 11, 10, 9, 0, 1, 2, 48, 49, 50, 51, 52, 53],
    "R": [0, 1, 2, 3, 4, 5, 51, 52, 53, 9, 10, 11, 12, 13, 14, 38, 37, 36, 18, 19, 20, 21, 22, 23, 24, 25, 26, 33, 30, 27, 34, 31, 28, 35, 32, 29, 8, 7, 6, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 15, 16, 17],
    "B": [0, 1, 35, 3, 4, 34, 6, 7, 33, 20, 10, 11, 19, 13, 14, 18, 16, 17, 2, 5, 8, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 9, 12, 15, 42, 39, 36, 43, 40, 37, 44, 41, 38, 45, 46, 47, 48, 49, 50, 51, 52, 53],
    "F": [24, 1, 2, 25, 4, 5, 26, 7, 8, 9, 10, 27, 12, 13, 28, 15, 16, 29, 18, 19, 20, 21, 22, 23, 17, 14, 11, 6, 3, 0, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 51, 48, 45, 52, 49, 46, 53, 50, 47],
}  # fmt: skip

#: DeepCubeA's modules and their state classes' slots (environments/*.py)
CLASSES = {
    "cube3": ("Cube3State", ["colors", "hash"]),
    "n_puzzle": ("NPuzzleState", ["tiles", "hash"]),
    "lights_out": ("LOState", ["tiles", "hash"]),
    "sokoban": ("SokobanState", ["agent", "walls", "boxes", "goals", "hash"]),
    "cube2": ("Cube2State", ["colors", "hash"]),  # a set this importer does not read
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@contextmanager
def environments() -> Iterator[dict[str, type]]:
    """Stand-ins of DeepCubeA's state classes, in a fake ``environments`` package that is in
    ``sys.modules`` only inside the block (pickle finds a class by its module there)."""
    saved = {k: v for k, v in sys.modules.items() if k == "environments" or k.startswith("environments.")}
    classes: dict[str, type] = {}
    try:
        sys.modules["environments"] = types.ModuleType("environments")
        for module, (name, slots) in CLASSES.items():
            mod = types.ModuleType(f"environments.{module}")
            cls = type(name, (), {"__slots__": slots, "__module__": f"environments.{module}"})
            setattr(mod, name, cls)
            sys.modules[f"environments.{module}"] = mod
            classes[name] = cls
        yield classes
    finally:
        for k in [k for k in sys.modules if k == "environments" or k.startswith("environments.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def state(cls: type, **fields: Any) -> Any:
    obj: Any = object.__new__(cls)
    for k, v in {**fields, "hash": None}.items():
        setattr(obj, k, v)
    return obj


def write_pickle(path: Path, build: Callable[[dict[str, type]], Any], protocol: int = 4) -> Path:
    """``build(classes)`` pickled to ``path`` (protocol 4: what DeepCubeA's Python 3.7 wrote)."""
    with environments() as classes:
        path.write_bytes(pickle.dumps(build(classes), protocol=protocol))
    return path


def test_the_fake_environments_package_leaves_no_trace(tmp_path: Path) -> None:
    write_pickle(tmp_path / "x.pkl", lambda c: {"states": [state(c["LOState"], tiles=np.zeros(49))]})
    assert "environments" not in sys.modules and "environments.cube3" not in sys.modules


# ---- the cube ------------------------------------------------------------------------------------


def deepcubea_turn(colors: np.ndarray, face: str, sign: int) -> np.ndarray:
    perm = np.array(DEEPCUBEA_CUBE_MOVES[face])
    return colors[perm if sign == 1 else np.argsort(perm)]


def deepcubea_scrambles(n: int, length: int, seed: int) -> list[list[tuple[str, int]]]:
    rng = np.random.default_rng(seed)
    return [[("UDLRBF"[rng.integers(6)], int(rng.choice([-1, 1]))) for _ in range(length)] for _ in range(n)]


def inverse(moves: list[tuple[str, int]]) -> list[tuple[str, int]]:
    return [(face, -sign) for face, sign in reversed(moves)]


def standard(moves: list[tuple[str, int]]) -> str:
    """DeepCubeA's ``(X, 1)`` is the standard clockwise ``X``, ``(X, -1)`` is ``X'``."""
    return " ".join(face if sign == 1 else f"{face}'" for face, sign in moves)


def cube3_file(path: Path, scrambles: list[list[tuple[str, int]]], protocol: int = 4) -> Path:
    def build(c: dict[str, type]) -> dict[str, Any]:
        states = []
        for moves in scrambles:
            colors = np.arange(54, dtype=np.uint8)
            for face, sign in moves:
                colors = deepcubea_turn(colors, face, sign)
            states.append(state(c["Cube3State"], colors=colors))
        return {
            "states": states,
            "solutions": [inverse(m) for m in scrambles],
            "times": [0.5] * len(scrambles),
            "num_nodes_generated": [np.int64(1000)] * len(scrambles),
        }

    return write_pickle(path, build, protocol)


@pytest.mark.parametrize(("face", "sign"), [(f, s) for f in "UDLRBF" for s in (1, -1)])
def test_each_deepcubea_turn_is_the_standard_quarter_turn(face: str, sign: int) -> None:
    cube = make("cube3")
    colors = deepcubea_turn(np.arange(54), face, sign)
    got = dca._CUBE3_COLOURS[colors[dca.CUBE3_FACELETS] // 9]
    want = cube.apply_moves(cube.goal(), cube.parse_moves(standard([(face, sign)])))
    assert cube.format(got) == cube.format(want)


def test_the_solved_cube_and_the_facelet_table() -> None:
    assert sorted(dca.CUBE3_FACELETS.tolist()) == list(range(54))
    centres = [dca.CUBE3_FACELETS[9 * k + 4] for k in range(6)]  # U R F D L B centres
    assert centres == [4, 31, 49, 13, 22, 40]  # DeepCubeA's faces U D L R B F: centre 9f + 4


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_cube3_round_trip_with_optimal_lengths(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, protocol: int
) -> None:
    scrambles = deepcubea_scrambles(6, 14, seed=protocol)
    src = cube3_file(tmp_path / "data_0.pkl", scrambles, protocol)
    out = tmp_path / "cube3_deepcubea.json"
    rc, text, err = run(capsys, "cases", "import-deepcubea", str(src), "--out", str(out))
    assert rc == 0 and err == ""
    assert text.splitlines() == [
        "wrote 6 cases of cube3 to " + str(out) + ", with optimal lengths (mean 14.00)",
        f"bench them: puzzlezero bench cube3 --cases {out}",
    ]
    data = json.loads(out.read_text())
    assert data["puzzle"] == "cube3" and "data/cube3/test/data_0.pkl" in data["source"]
    assert "forestagostinelli/DeepCubeA" in data["source"] and "optimal" in data["optimal_lengths"]
    cube = make("cube3")
    for i, (case, moves) in enumerate(zip(data["cases"], scrambles, strict=True)):
        assert case["id"] == i and case["optimal_length"] == 14
        assert case["facelets"] == cube.format(cube.parse(standard(moves)))
        assert case["optimal_solution"] == standard(inverse(moves))
    cases = load_cases(cube, out)  # what bench reads
    assert [c.optimal_length for c in cases] == [14] * 6
    assert [cube.format(c.state) for c in cases] == [c["facelets"] for c in data["cases"]]


def test_cube3_moves_in_every_form_deepcubea_writes(tmp_path: Path) -> None:
    """``("U", 1)``, ``["U", 1]``, ``"U1"``/``"U-1"`` and action indices in DeepCubeA's order."""
    moves = [("R", 1), ("U", -1), ("F", 1), ("B", -1), ("L", 1), ("D", -1)]
    solution = inverse(moves)
    forms: list[Any] = [
        list(solution),
        [list(m) for m in solution],
        [f"{f}{s}" for f, s in solution],
        [dca.CUBE3_MOVES.index((f, s)) for f, s in solution],
        [np.int64(dca.CUBE3_MOVES.index((f, s))) for f, s in solution],
        [(f, np.int64(s)) for f, s in solution],
    ]
    path = cube3_file(tmp_path / "c.pkl", [moves] * len(forms))

    def rewrite(c: dict[str, type]) -> dict[str, Any]:
        content = pickle.loads(path.read_bytes())
        return {**content, "solutions": forms}

    write_pickle(path, rewrite)
    found = read_deepcubea(path)
    assert found.optimal == [6] * len(forms) and found.solutions is not None
    assert len({tuple(s) for s in found.solutions}) == 1


# ---- sliding puzzles, Lights Out, Sokoban --------------------------------------------------------


def walks(name: str, n: int, length: int, seed: int) -> tuple[np.ndarray, list[list[int]]]:
    """States ``length`` random moves from the goal and the moves undoing each (as actions)."""
    p = make(name)
    rng = np.random.default_rng(seed)
    states, undo = [], []
    for _ in range(n):
        s, moves = p.goal(), list[int]()
        while len(moves) < length:
            a = int(rng.integers(p.num_actions))
            child = p.apply_moves(s, [a])
            if not np.array_equal(child, s):
                s, moves = child, [*moves, a]
        states.append(s)
        undo.append([int(p.inverse_action[a]) for a in reversed(moves)])
    return np.stack(states), undo


def test_deepcubea_tile_moves_are_the_same_letters() -> None:
    """DeepCubeA's ``D`` swaps the blank with the tile above it (environments/n_puzzle.py); ``U``
    with the tile below, none here: a no-op in the corner."""
    p = make("puzzle15")
    assert p.apply_moves(p.goal(), p.parse_moves("D")).tolist() == [*range(1, 12), 0, 13, 14, 15, 12]
    assert p.apply_moves(p.goal(), p.parse_moves("U")).tolist() == p.goal().tolist()


@pytest.mark.parametrize("name", ["puzzle15", "puzzle24"])
def test_sliding_puzzle_sets_with_optimal_solutions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    p = make(name)
    states, undo = walks(name, 5, 12, seed=3)
    letters = [[p.action_names[a] for a in moves] for moves in undo]
    src = write_pickle(
        tmp_path / "data_0.pkl",
        lambda c: {
            "states": [
                state(c["NPuzzleState"], tiles=s.astype(np.uint8 if name == "puzzle15" else np.int64))
                for s in states
            ],
            "solutions": letters,
            "times": [0.1] * 5,
            "num_nodes_generated": [10] * 5,
        },
    )
    rc, text, _ = run(capsys, "cases", "import-deepcubea", str(src))  # no --out: the JSON on stdout
    data = json.loads(text)
    assert rc == 0 and data["puzzle"] == name and f"data/{name}/test/data_0.pkl" in data["source"]
    for i, case in enumerate(data["cases"]):
        assert case["tiles"] == states[i].tolist() and case["size"] ** 2 == len(states[i])
        assert case["optimal_length"] == len(undo[i]) and case["optimal_solution"] == " ".join(letters[i])


def test_a_sliding_puzzle_set_benches(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    states, undo = walks("puzzle15", 3, 6, seed=1)
    src = write_pickle(
        tmp_path / "p15.pkl",
        lambda c: {
            "states": [state(c["NPuzzleState"], tiles=s) for s in states],
            "solutions": [[int(a) for a in u] for u in undo],  # action indices 0..3 = U D L R
        },
    )
    out = tmp_path / "p15.json"
    assert (
        run(capsys, "cases", "import-deepcubea", str(src), "--puzzle", "puzzle15", "--out", str(out))[0] == 0
    )
    rc, text, _ = run(capsys, "bench", "puzzle15", "--cases", str(out), "--heuristic", "misplaced", "--json")
    summary = json.loads(text)["summary"]
    assert rc == 0 and summary["cases"] == 3 and summary["solved_pct"] == 100.0
    assert summary["optimal_pct"] is not None  # compared with the file's lengths (those of the walks)


@pytest.mark.parametrize("name", ["puzzle35", "puzzle48"])
def test_sets_without_solutions_have_no_optimal_lengths(tmp_path: Path, name: str) -> None:
    states, _ = walks(name, 2, 30, seed=2)
    src = write_pickle(
        tmp_path / "d.pkl", lambda c: {"states": [state(c["NPuzzleState"], tiles=s) for s in states]}
    )
    found = read_deepcubea(src)
    data = dca.deepcubea_cases(found, "data_0.pkl")
    assert data["puzzle"] == name and data["optimal_lengths"].startswith("not known")
    assert all("optimal_length" not in c for c in data["cases"])
    assert [c["tiles"] for c in data["cases"]] == states.tolist()


def test_lights_out_optimal_lengths_are_computed(tmp_path: Path) -> None:
    p = make("lightsout7")
    rng = np.random.default_rng(5)
    presses = [sorted(rng.choice(49, size=k, replace=False).tolist()) for k in (3, 10, 20)]
    states = [p.apply_moves(p.goal(), ps) for ps in presses]
    src = write_pickle(
        tmp_path / "lo.pkl",
        lambda c: {"states": [state(c["LOState"], tiles=s.astype(np.uint8)) for s in states]},
    )
    data = dca.deepcubea_cases(read_deepcubea(src), "data_0.pkl")
    assert data["puzzle"] == "lightsout7" and "GF(2)" in data["optimal_lengths"]
    for case, ps, s in zip(data["cases"], presses, states, strict=True):
        assert case["lights"] == s.tolist() and case["optimal_length"] == len(ps)
        assert case["optimal_solution"] == " ".join(str(a) for a in ps)  # the one minimal set
    # a file with solutions: replayed; their lengths, not known optimal, are best known
    src = write_pickle(
        tmp_path / "lo2.pkl",
        lambda c: {
            "states": [state(c["LOState"], tiles=s) for s in states],
            "solutions": [ps[::-1] for ps in presses],
        },
    )
    found = read_deepcubea(src)
    assert found.best_known is not None and [len(s) for s in found.best_known] == [3, 10, 20]


LEVEL = [
    "##########",
    "#        #",
    "#  $  .  #",
    "#  ##    #",
    "#  $ .   #",
    "#    @   #",
    "# *      #",
    "#   $  . #",
    "#        #",
    "##########",
]


def sokoban_planes(rows: list[str]) -> dict[str, Any]:
    grid = np.array([list(r) for r in rows])
    (r, c) = np.argwhere(np.isin(grid, ["@", "+"]))[0]
    return {
        "agent": np.array([r, c]),
        "walls": grid == "#",
        "boxes": np.isin(grid, ["$", "*"]),
        "goals": np.isin(grid, [".", "*", "+"]),
    }


def test_sokoban_levels(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = write_pickle(
        tmp_path / "s.pkl", lambda c: {"states": [state(c["SokobanState"], **sokoban_planes(LEVEL))]}
    )
    rc, text, _ = run(capsys, "cases", "import-deepcubea", str(src))
    data = json.loads(text)
    assert rc == 0 and data["puzzle"] == "sokoban" and "data/sokoban/test/data_0.pkl" in data["source"]
    assert data["cases"] == [{"id": 0, "grid": LEVEL, "agent": [5, 5]}]
    p = make("sokoban")
    cell = p.parse("\n".join(LEVEL)).reshape(10, 10)
    assert cell[6, 2] == BOX | TARGET and cell[5, 5] == AGENT and cell[0, 0] == WALL and cell[2, 6] == TARGET


def test_sokoban_solutions_are_deepcubea_actions_and_best_known(tmp_path: Path) -> None:
    rows = ["##########"] * 4 + ["#  @$ .  #"] + ["##########"] * 5
    push_right = 3  # DeepCubeA 0..3 = up, down, left, right
    src = write_pickle(
        tmp_path / "s.pkl",
        lambda c: {
            "states": [state(c["SokobanState"], **sokoban_planes(rows))],
            "solutions": [[push_right, push_right]],
        },
    )
    data = dca.deepcubea_cases(read_deepcubea(src), "data_0.pkl")
    assert data["cases"][0]["best_known"] == 2 and data["cases"][0]["best_known_solution"] == "R R"
    assert "optimal_length" not in data["cases"][0]


def test_deepcubeas_own_results_give_best_known_lengths(tmp_path: Path) -> None:
    """results/<puzzle>/results.pkl (it has ``paths``): DeepCubeA's solutions, not optimal ones."""
    states, undo = walks("puzzle15", 2, 8, seed=4)
    src = write_pickle(
        tmp_path / "results.pkl",
        lambda c: {
            "states": [state(c["NPuzzleState"], tiles=s) for s in states],
            "solutions": undo,
            "paths": [[state(c["NPuzzleState"], tiles=s)] for s in states],
            "times": [1.0, 2.0],
            "num_nodes_generated": [5, 6],
        },
    )
    data = dca.deepcubea_cases(read_deepcubea(src), "results.pkl")
    assert (
        "results/puzzle15/results.pkl" in data["source"] and "DeepCubeA's own" in data["best_known_lengths"]
    )
    assert [c["best_known"] for c in data["cases"]] == [8, 8]
    assert all("optimal_length" not in c for c in data["cases"])
    assert [c.best_known for c in load_cases(make("puzzle15"), write_json(tmp_path / "r.json", data))] == [
        8,
        8,
    ]


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


# ---- refused files ---------------------------------------------------------------------------------


class Reduces:
    """An object whose pickle calls ``func(*args)`` when loaded."""

    def __init__(self, func: Callable[..., Any], *args: Any) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple[Any, ...]:
        return self.func, self.args


@pytest.mark.parametrize(
    "payload",
    [
        lambda marker: Reduces(os.system, f"echo pwned > {marker}"),
        lambda marker: Reduces(eval, f"open({str(marker)!r}, 'w').write('pwned')"),
        lambda marker: Reduces(exec, f"open({str(marker)!r}, 'w').write('pwned')"),
        lambda marker: Reduces(Path.write_text, marker, "pwned"),
    ],
    ids=["os.system", "builtins.eval", "builtins.exec", "pathlib.Path.write_text"],
)
def test_a_pickle_that_runs_code_is_refused_by_name_and_nothing_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, payload: Callable[[Path], Reduces]
) -> None:
    marker = tmp_path / "pwned.txt"
    evil = payload(marker)
    name = f"{evil.func.__module__}.{evil.func.__qualname__}"  # os.system pickles as posix.system
    src = write_pickle(
        tmp_path / "data_0.pkl",
        lambda c: {"states": [state(c["Cube3State"], colors=np.arange(54, dtype=np.uint8)), evil]},
    )
    with pytest.raises(UnsafePickleError, match=f"asks for {name}, ") as exc:
        read_deepcubea(src)
    assert exc.value.global_name == name and not marker.exists()
    rc, out, err = run(capsys, "cases", "import-deepcubea", str(src))
    assert rc == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: {src}: refused: the pickle asks for {name},") and "nothing" in err
    assert not marker.exists()


def test_a_payload_inside_a_state_attribute_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned.txt"
    src = write_pickle(
        tmp_path / "d.pkl",
        lambda c: {"states": [state(c["NPuzzleState"], tiles=Reduces(os.system, f"touch {marker}"))]},
    )
    with pytest.raises(UnsafePickleError, match=r"posix\.system|os\.system|nt\.system"):
        read_deepcubea(src)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("module", "name"),
    [("numpy", "load"), ("subprocess", "Popen"), ("builtins", "getattr"), ("numpy.lib.format", "read_array")],
)
def test_any_other_global_is_refused_before_it_is_looked_up(tmp_path: Path, module: str, name: str) -> None:
    data = b"\x80\x04" + b"c" + f"{module}\n{name}\n".encode() + b")R."  # GLOBAL, EMPTY_TUPLE, REDUCE
    with pytest.raises(UnsafePickleError, match=rf"asks for {module}\.{name}, ") as exc:
        dca.read_deepcubea_bytes(data, "x.pkl")
    assert exc.value.global_name == f"{module}.{name}"


def test_numpy_parts_are_not_callable_with_other_arguments(tmp_path: Path) -> None:
    # numpy.ndarray((10**12,)) would allocate: the pickle's ndarray is a token, never called
    big = b"\x80\x04cnumpy\nndarray\n\x8a\x06\x00\x10\xa5\xd4\xe8\x00\x85\x85R."
    with pytest.raises(DeepCubeAFileError, match="not a readable pickle"):
        dca.read_deepcubea_bytes(big, "x.pkl")
    # the stand-in of a state class takes no arguments
    args = b"\x80\x04cenvironments.cube3\nCube3State\nK\x01\x85R."
    with pytest.raises(DeepCubeAFileError, match="not a readable pickle"):
        dca.read_deepcubea_bytes(args, "x.pkl")


def test_an_object_array_is_refused(tmp_path: Path) -> None:
    src = write_pickle(
        tmp_path / "o.pkl",
        lambda c: {"states": [state(c["LOState"], tiles=np.array([None] * 49, dtype=object))]},
    )
    with pytest.raises(DeepCubeAFileError, match="only arrays of numbers or text are read"):
        read_deepcubea(src)


def test_a_class_of_another_deepcubea_environment_is_refused(tmp_path: Path) -> None:
    src = write_pickle(
        tmp_path / "c2.pkl", lambda c: {"states": [state(c["Cube2State"], colors=np.arange(24))]}
    )
    with pytest.raises(
        DeepCubeAFileError, match=r"environments\.cube2\.Cube2State is not a DeepCubeA state class"
    ):
        read_deepcubea(src)


def cube_states(c: dict[str, type], *colors: Any) -> dict[str, Any]:
    return {"states": [state(c["Cube3State"], colors=x) for x in colors]}


GOAL = np.arange(54, dtype=np.uint8)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda c: [cube_states(c, GOAL)], r"holds a list, not DeepCubeA's dict of 'states'"),
        (lambda c: {"solutions": []}, r"no 'states' in the file \(its keys: 'solutions'\)"),
        (
            lambda c: {"states": np.zeros((2, 54))},
            r"'states' is a NumPy array of shape \(2, 54\), not a list",
        ),
        (lambda c: {"states": [GOAL]}, r"state 0 is a NumPy array of shape \(54,\), not one of DeepCubeA's"),
        (
            lambda c: cube_states(c, GOAL[:53]),
            r"state 0: colors has 53 values \(shape \(53,\)\); expected 54",
        ),
        (lambda c: cube_states(c, GOAL, GOAL % 9), r"state 1: colors must be DeepCubeA's 54 sticker numbers"),
        (
            lambda c: cube_states(c, GOAL, GOAL[[9, *range(1, 9), 0, *range(10, 54)]]),
            r"state 1: corner at UFL has colours .*no such corner",
        ),
        (lambda c: cube_states(c, np.array(["x"] * 54)), r"state 0: colors is not an array of whole numbers"),
        (
            lambda c: {
                "states": [
                    state(c["NPuzzleState"], tiles=np.array([*range(1, 16), 0])),
                    state(c["NPuzzleState"], tiles=np.arange(25)),
                ]
            },
            r"state 1: tiles has 25 values",
        ),
        (
            lambda c: {"states": [state(c["NPuzzleState"], tiles=np.arange(17))]},
            r"state 0 has 17 tiles, not a square board",
        ),
        (
            lambda c: {"states": [state(c["NPuzzleState"], tiles=np.array([*range(1, 14), 15, 14, 0]))]},
            r"state 0: this arrangement is unsolvable",
        ),
        (
            lambda c: {"states": [state(c["LOState"], tiles=np.full(49, 2))]},
            r"state 0: tiles must be 0 \(off\) or 1 \(on\)",
        ),
        (
            lambda c: {
                "states": [
                    state(c["SokobanState"], **{**sokoban_planes(LEVEL), "walls": np.zeros((9, 9), bool)})
                ]
            },
            r"state 0: walls has 81 values",
        ),
        (
            lambda c: {
                "states": [
                    state(
                        c["SokobanState"], **{k: v for k, v in sokoban_planes(LEVEL).items() if k != "goals"}
                    )
                ]
            },
            r"state 0 \(environments\.sokoban\.SokobanState\) has no goals",
        ),
        (
            lambda c: {
                "states": [state(c["Cube3State"], colors=GOAL), state(c["LOState"], tiles=np.zeros(49))]
            },
            r"state 1 is a environments\.lights_out\.LOState, state 0 a environments\.cube3\.Cube3State",
        ),
        (
            lambda c: {**cube_states(c, GOAL), "solutions": [[], []]},
            r"'solutions' is 2 solutions for 1 states",
        ),
    ],
)
def test_malformed_files_are_refused_with_a_reason(
    tmp_path: Path, build: Callable[..., Any], message: str
) -> None:
    src = write_pickle(tmp_path / "bad.pkl", build)
    with pytest.raises(DeepCubeAFileError, match=message):
        read_deepcubea(src)


def test_a_truncated_file_and_a_file_that_is_no_pickle(tmp_path: Path) -> None:
    src = cube3_file(tmp_path / "data_0.pkl", deepcubea_scrambles(3, 5, seed=1))
    whole = src.read_bytes()
    for cut in (len(whole) // 2, len(whole) - 1, 3):
        (tmp_path / "cut.pkl").write_bytes(whole[:cut])
        with pytest.raises(DeepCubeAFileError, match=r"cut\.pkl: not a (complete|readable) pickle"):
            read_deepcubea(tmp_path / "cut.pkl")
    (tmp_path / "text.pkl").write_text("states: [1, 2, 3]\n")
    with pytest.raises(DeepCubeAFileError, match=r"text\.pkl: not a readable pickle"):
        read_deepcubea(tmp_path / "text.pkl")
    with pytest.raises(DeepCubeAFileError, match=r"missing\.pkl: no such file"):
        read_deepcubea(tmp_path / "missing.pkl")
    with pytest.raises(DeepCubeAFileError, match="not a file"):
        read_deepcubea(tmp_path)


def test_size_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = cube3_file(tmp_path / "data_0.pkl", deepcubea_scrambles(2, 5, seed=1))
    monkeypatch.setattr(dca, "MAX_FILE_BYTES", 100)
    with pytest.raises(DeepCubeAFileError, match=r"data_0\.pkl: [\d,]+ bytes; at most 100 are read"):
        read_deepcubea(src)
    monkeypatch.setattr(dca, "MAX_FILE_BYTES", 2**20)
    monkeypatch.setattr(dca, "MAX_ARRAY_ELEMENTS", 50)
    with pytest.raises(DeepCubeAFileError, match=r"refused: an array of 54 elements .*at most 50"):
        read_deepcubea(src)
    for protocol in (2, 5):  # arrays rebuilt by _reconstruct, and by _frombuffer (protocol 5)
        cube3_file(src, deepcubea_scrambles(1, 5, seed=1), protocol)
        with pytest.raises(DeepCubeAFileError, match=r"refused: an array of 54 elements"):
            read_deepcubea(src)


def test_solutions_that_do_not_solve_name_the_state(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scrambles = deepcubea_scrambles(3, 7, seed=9)
    src = cube3_file(tmp_path / "data_0.pkl", scrambles)

    def wrong(c: dict[str, type]) -> dict[str, Any]:
        content = pickle.loads(src.read_bytes())
        content["solutions"][2] = content["solutions"][2][:-1]  # one move short
        return content

    write_pickle(src, wrong)
    with pytest.raises(
        SolutionReplayError, match=r"state 2: its solution \(6 moves\) does not reach the goal"
    ) as exc:
        read_deepcubea(src)
    assert exc.value.index == 2
    rc, out, err = run(capsys, "cases", "import-deepcubea", str(src), "--out", str(tmp_path / "x.json"))
    assert rc == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "x.json").exists()

    def unreadable(c: dict[str, type]) -> dict[str, Any]:
        content = pickle.loads(src.read_bytes())
        content["solutions"][1] = [("U", 2)]
        return content

    write_pickle(src, unreadable)
    with pytest.raises(
        SolutionReplayError, match=r"state 1: move 1 of its solution, \('U', 2\), is not a cube3 move"
    ):
        read_deepcubea(src)


def test_puzzle_option_must_match_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = cube3_file(tmp_path / "data_0.pkl", deepcubea_scrambles(1, 3, seed=1))
    rc, out, err = run(capsys, "cases", "import-deepcubea", str(src), "--puzzle", "puzzle15")
    assert (
        rc == 2
        and out == ""
        and err == f"error: {src} holds cube3 states (environments.cube3.Cube3State), not puzzle15\n"
    )
    rc, out, err = run(capsys, "cases", "import-deepcubea", str(tmp_path / "none.pkl"))
    assert rc == 2 and err == f"error: {tmp_path / 'none.pkl'}: no such file\n"


# ---- the published sets, where this checkout has them ---------------------------------------------


def test_the_development_sets_convert_back_to_themselves(tmp_path: Path) -> None:
    """The benchmark files (made from the same pickles) rewritten as DeepCubeA pickles: importing
    them gives the same states and optimal lengths, case by case."""
    cube = make("cube3")
    bench = load_bench("cube3")["cases"][:40]
    scrambles = [[(m[0], -1 if m.endswith("'") else 1) for m in c["scramble"].split()] for c in bench]
    src = cube3_file(tmp_path / "cube3.pkl", scrambles)

    def with_published_solutions(c: dict[str, type]) -> dict[str, Any]:
        content = pickle.loads(src.read_bytes())
        content["solutions"] = [
            [(m[0], -1 if m.endswith("'") else 1) for m in b["optimal_solution"].split()] for b in bench
        ]
        return content

    write_pickle(src, with_published_solutions)
    data = dca.deepcubea_cases(read_deepcubea(src), "data_0.pkl")
    for mine, theirs in zip(data["cases"], bench, strict=True):
        assert mine["facelets"] == theirs["facelets"] and mine["optimal_length"] == theirs["optimal_length"]
        assert cube.parse_moves(mine["optimal_solution"]) == cube.parse_moves(theirs["optimal_solution"])

    for name in ("puzzle15", "puzzle24", "puzzle48"):
        bench = load_bench(name)["cases"][:20]
        content: dict[str, Any] = {"states": [np.array(b["tiles"], dtype=np.uint8) for b in bench]}
        if "optimal_solution" in bench[0]:
            content["solutions"] = [b["optimal_solution"].split() for b in bench]

        def build(c: dict[str, type], content: dict[str, Any] = content) -> dict[str, Any]:
            return {**content, "states": [state(c["NPuzzleState"], tiles=t) for t in content["states"]]}

        src = write_pickle(tmp_path / f"{name}.pkl", build)
        data = dca.deepcubea_cases(read_deepcubea(src, name), "data_0.pkl")
        assert [c["tiles"] for c in data["cases"]] == [b["tiles"] for b in bench]
        assert [c.get("optimal_length") for c in data["cases"]] == [b.get("optimal_length") for b in bench]

    bench = load_bench("lightsout7")["cases"]
    src = write_pickle(
        tmp_path / "lo.pkl",
        lambda c: {
            "states": [state(c["LOState"], tiles=np.array(b["lights"], dtype=np.uint8)) for b in bench]
        },
    )
    data = dca.deepcubea_cases(read_deepcubea(src), "data_0.pkl")
    assert [c["optimal_length"] for c in data["cases"]] == [b["optimal_length"] for b in bench]
    assert [c["optimal_solution"] for c in data["cases"]] == [
        " ".join(map(str, b["optimal_presses"])) for b in bench
    ]

    bench = load_bench("sokoban")["cases"][:50]
    src = write_pickle(
        tmp_path / "sok.pkl",
        lambda c: {"states": [state(c["SokobanState"], **sokoban_planes(b["grid"])) for b in bench]},
    )
    data = dca.deepcubea_cases(read_deepcubea(src), "data_0.pkl")
    assert [(c["grid"], c["agent"]) for c in data["cases"]] == [(b["grid"], b["agent"]) for b in bench]


def test_the_module_examples_run() -> None:
    result = doctest.testmod(dca, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3


@pytest.mark.parametrize(
    "target",
    [b"cenvironments.cube3\nCube3State\n", b"cnumpy\ndtype\n", b"cnumpy\nndarray\n", b"c_codecs\nencode\n"],
)
def test_a_pickle_cannot_change_what_it_is_given(target: bytes) -> None:
    """Pickle's BUILD sets attributes (``(None, {name: value})``): on a stand-in class, an allowed
    function or the array token it is refused, so nothing the importer holds changes."""
    build = b"N}\x8c\nclass_name\x8c\x01xs\x86b."  # BUILD (None, {"class_name": "x"})
    with pytest.raises(DeepCubeAFileError, match="not a readable pickle"):
        dca.read_deepcubea_bytes(b"\x80\x04" + target + build, "x.pkl")
    assert dca._STAND_INS["environments.cube3.Cube3State"].class_name == "environments.cube3.Cube3State"
