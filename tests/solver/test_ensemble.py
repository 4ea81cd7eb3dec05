"""Ensembles through the solver: ``models=`` / ``--models``, ensemble folders, the defaults, the
memory each member adds, and the answer: the shortest of the members' verified solutions."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.cost_to_go import value
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.model_folders import ENSEMBLE_FILE, ensemble_members, resolve_model_dir
from puzzlezero.registry import DEFAULTS
from puzzlezero.solver import memory_estimate, resolve_options, solve, solve_many
from puzzlezero.solver.result import verify

P15 = make("puzzle15")
#: a weighted search that leans on the heuristic, so two networks take different paths
SETTINGS = {"search": "bwas", "weight": 0.3, "batch": 1, "time_limit": 60.0, "max_nodes": 200_000}


@pytest.fixture(scope="module")
def other_network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped puzzle15 network with its value head scaled by 1.6: a second, greedier network
    (its solutions differ from the shipped one's)."""
    folder = tmp_path_factory.mktemp("models") / "puzzle15-scaled"
    shutil.copytree(resolve_model_dir("puzzle15"), folder)
    with np.load(folder / "model.npz") as z:
        arrays = {k: z[k] for k in z.files}
    for key in ("value.weight", "value.bias"):
        arrays[key] = (arrays[key].astype(np.float32) * 1.6).astype(arrays[key].dtype)
    np.savez(folder / "model.npz", **arrays)
    return folder


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    return P15.scramble(np.random.default_rng(7), 6, depth=120)


def test_the_answer_is_the_shortest_members_solution_verified(
    other_network: Path, boards: np.ndarray
) -> None:
    one = solve_many(P15, boards, **SETTINGS)
    two = solve_many(P15, boards, model=str(other_network), **SETTINGS)
    both = solve_many(P15, boards, models=["puzzle15", str(other_network)], **SETTINGS)
    lengths = [(a.length, b.length) for a, b in zip(one, two, strict=True)]
    assert any(a != b for a, b in lengths), "the two networks should answer differently somewhere"
    for (a, b), r, board in zip(lengths, both, boards, strict=True):
        assert r.solved and r.length == min(a, b)
        assert r.model == ("puzzle15" if a <= b else str(other_network))
        assert verify(P15, board[None], [r.actions])[0]
        assert r.to_json()["model"] == r.model
    # each member's nodes count: the ensemble did both searches' work
    for r, a, b in zip(both, one, two, strict=True):
        assert r.nodes_generated == a.nodes_generated + b.nodes_generated


def test_progress_names_the_member(other_network: Path, boards: np.ndarray) -> None:
    seen = []
    r = solve(P15, boards[0], models=["puzzle15", str(other_network)], on_solution=seen.append, **SETTINGS)
    assert seen and seen[-1].length == r.length
    assert all(i.length > j.length for i, j in zip(seen, seen[1:], strict=False))
    assert {i.stage for i in seen} <= {"search", "shortcut", "fallback"} | {
        f"{name} stage 1" for name in ("puzzle15", other_network.name)
    }


def test_an_ensemble_folder_names_its_members(tmp_path: Path, other_network: Path) -> None:
    folder = tmp_path / "pair"
    folder.mkdir()
    shutil.copytree(resolve_model_dir("puzzle15"), folder / "a")
    shutil.copytree(other_network, folder / "b")
    (folder / ENSEMBLE_FILE).write_text(json.dumps({"members": ["a", "b"]}))
    assert ensemble_members(folder) == (folder / "a", folder / "b")
    for given in ({"model": str(folder)}, {"models": [str(folder)]}):
        opts = resolve_options(P15, **given)
        assert opts.models == (str(folder / "a"), str(folder / "b")) and opts.model == str(folder / "a")
    assert ensemble_members(resolve_model_dir("puzzle15")) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"members": ["a"]}, "two or more"),
        ({"members": ["a", "../outside"]}, "not a plain folder name"),
        ({"members": ["a", "/etc"]}, "not a plain folder name"),
        ({"members": ["a", "missing"]}, "not a model folder"),
        ({"members": ["a", "a"]}, "named twice"),
        (["a", "b"], "two or more folder names"),
        ("not json", "not a readable JSON"),
    ],
)
def test_an_ensemble_file_is_data_checked_before_use(tmp_path: Path, content: object, message: str) -> None:
    shutil.copytree(resolve_model_dir("puzzle15"), tmp_path / "a")
    text = content if isinstance(content, str) else json.dumps(content)
    (tmp_path / ENSEMBLE_FILE).write_text(text)
    with pytest.raises(ModelFileError, match=message):
        ensemble_members(tmp_path)
    with pytest.raises(ModelFileError, match=message):
        resolve_options(P15, model=str(tmp_path))


def test_settings_that_do_not_make_an_ensemble_are_refused(other_network: Path) -> None:
    pair = ["puzzle15", str(other_network)]
    with pytest.raises(PuzzleError, match="not both"):
        resolve_options(P15, model="puzzle15", models=pair)
    with pytest.raises(PuzzleError, match="twice"):
        resolve_options(P15, models=["puzzle15", "puzzle15"])
    with pytest.raises(PuzzleError, match="reads no model"):
        resolve_options(P15, models=pair, heuristic="misplaced")
    with pytest.raises(PuzzleError, match="uses no heuristic"):
        resolve_options(P15, models=pair, search="reduction")
    with pytest.raises(PuzzleError, match="model per goal"):
        resolve_options(make("cube3"), models=["cube3", "cube3htm"], search="layered")
    with pytest.raises(ModelFileError, match="no model folder"):
        solve(P15, P15.goal(), models=["puzzle15", "no-such-model"])
    assert resolve_options(P15, models=["puzzle15"]).models == ()  # one model is no ensemble
    assert resolve_options(P15, models="puzzle15," + str(other_network)).models == tuple(pair)


def test_a_puzzles_default_ensemble_is_for_its_own_search(
    monkeypatch: pytest.MonkeyPatch, other_network: Path
) -> None:
    pair = ("puzzle15", str(other_network))
    monkeypatch.setitem(DEFAULTS, "puzzle15", replace(DEFAULTS["puzzle15"], models=pair))
    assert resolve_options(P15).models == pair
    assert resolve_options(P15, time_limit=5.0).models == pair
    assert resolve_options(P15, model="puzzle15").models == ()  # a model named: that one alone
    assert resolve_options(P15, heuristic="misplaced").models == ()
    assert resolve_options(P15, search="gbfs").models == ()


def test_each_member_adds_its_memory(other_network: Path) -> None:
    one = resolve_options(P15, **SETTINGS)
    two = resolve_options(P15, models=["puzzle15", str(other_network)], **SETTINGS)
    assert memory_estimate(P15, "bwas", two) == 2 * memory_estimate(P15, "bwas", one)


def test_bench_reports_the_members_and_their_wins(
    tmp_path: Path, other_network: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.json"
    boards = P15.scramble(np.random.default_rng(3), 3, depth=60)
    cases.write_text(
        json.dumps(
            {"puzzle": "puzzle15", "cases": [{"id": i, "tiles": b.tolist()} for i, b in enumerate(boards)]}
        )
    )
    out = tmp_path / "report.json"
    models = f"puzzle15,{other_network}"
    args = ["--search", "bwas", "--weight", "0.3", "--batch", "1"]
    rc = main(["bench", "puzzle15", "--cases", str(cases), "--models", models, *args, "--out", str(out)])
    assert rc == 0, capsys.readouterr()
    report = json.loads(out.read_text())
    summary = report["summary"]
    assert summary["models"] == ["puzzle15", str(other_network)]
    assert sum(summary["model_wins"].values()) == 3
    assert all(r["model"] in summary["models"] for r in report["results"])
    capsys.readouterr()
    rc = main(["solve", "puzzle15", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15", "--models", "a,,b"])
    _, err = capsys.readouterr()
    assert rc != 0 and "--models" in err and "Traceback" not in err


def test_a_command_of_one_network_names_an_ensemble_folder_for_what_it_is(tmp_path: Path) -> None:
    shutil.copytree(resolve_model_dir("puzzle15"), tmp_path / "a")
    shutil.copytree(resolve_model_dir("puzzle15"), tmp_path / "b")
    (tmp_path / ENSEMBLE_FILE).write_text(json.dumps({"members": ["a", "b"]}))
    with pytest.raises(ModelFileError, match="is an ensemble of models"):
        value("puzzle15", P15.goal(), model=str(tmp_path))
