"""A bare model name means an installed model; only a path names a folder of one's own.

A folder in the working directory called like a shipped model (``./cube3``) must not replace the
shipped model for ``--model cube3`` (or for no ``--model`` at all, which means the puzzle's shipped
model): it is used only when written as a path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from puzzlezero import make
from puzzlezero.errors import ModelFileError
from puzzlezero.model_folders import find_model_dir, is_bare_name, resolve_model_dir


@pytest.fixture
def decoys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding folders and files named like the shipped models."""
    monkeypatch.chdir(tmp_path)
    for name in ("cube3", "puzzle15"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text('{"format": "not a model"}')
        (tmp_path / name / "ensemble.json").write_text('{"members": ["a", "b"]}')
    shutil.copytree(find_model_dir("cube2"), tmp_path / "mine")
    (tmp_path / "puzzle24").write_bytes(b"not an onnx file")  # a file named like a model
    return tmp_path


@pytest.mark.parametrize(
    ("text", "bare"),
    [("cube3", True), ("cube3-adi", True), ("./cube3", False), ("runs/x/model", False), ("/abs/m", False)],
)
def test_what_a_bare_name_is(text: str, bare: bool) -> None:
    assert is_bare_name(text) is bare


def test_a_bare_name_is_the_shipped_model_even_beside_a_folder_of_that_name(decoys: Path) -> None:
    shipped = find_model_dir("cube3")
    assert shipped is not None and shipped.resolve() != (decoys / "cube3").resolve()
    assert resolve_model_dir("cube3") == shipped


def test_a_path_is_the_folder_it_names(decoys: Path) -> None:
    assert resolve_model_dir("./cube3") == Path("./cube3")
    assert resolve_model_dir(str(decoys / "cube3")) == decoys / "cube3"
    assert resolve_model_dir(decoys / "cube3") == decoys / "cube3"  # a Path object is a path
    assert resolve_model_dir(Path("mine")) == Path("mine")


def test_a_bare_name_of_no_installed_model_says_how_to_name_the_folder(decoys: Path) -> None:
    with pytest.raises(ModelFileError, match=r"no model folder 'mine'.* write it as a path: \./mine"):
        resolve_model_dir("mine")


def test_the_runtime_loads_the_shipped_network_for_a_bare_name(decoys: Path) -> None:
    from puzzlezero.nn.runtime import load_network

    net = load_network("cube3", precision="float32")
    assert net.puzzle == "cube3" and Path(net.folder) == find_model_dir("cube3").resolve()
    assert load_network("./mine", precision="float32").puzzle == "cube2"


def test_a_solve_with_the_puzzles_own_model_ignores_the_working_directory(decoys: Path) -> None:
    from puzzlezero.solver import solve

    p = make("puzzle15")
    state = p.apply_moves(p.goals(1)[0], p.parse_moves("R D L"))  # three moves from solved
    for model in (None, "puzzle15"):
        result = solve(p, state, model=model, heuristic="learned", search="bwas")
        assert result.solved and len(result.solution) == 3


def test_the_onnx_heuristic_ignores_a_file_named_like_the_model(decoys: Path) -> None:
    from puzzlezero.onnx import find_onnx

    found = find_onnx(make("puzzle24"))
    assert found.resolve() != (decoys / "puzzle24").resolve()
    assert found == find_model_dir("puzzle24") or found.parent == find_model_dir("puzzle24")


def test_an_ensemble_file_in_a_folder_named_like_the_model_is_not_read(decoys: Path) -> None:
    from puzzlezero.solver.resolve import _ensemble_folder

    assert _ensemble_folder("cube3") is None  # the shipped cube3 is one network
    with pytest.raises(ModelFileError, match="member 'a' is not a model folder"):
        _ensemble_folder("./cube3")


def test_an_unreadable_decoy_config_is_not_read_for_a_bare_name(decoys: Path) -> None:
    from puzzlezero.nn.io import read_config

    cfg, _ = read_config(resolve_model_dir("puzzle15"))
    assert cfg["puzzle"] == "puzzle15"
    assert json.loads((decoys / "puzzle15" / "config.json").read_text())["format"] == "not a model"


def test_init_from_a_bare_name_starts_from_the_shipped_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``train cube2 --init-from cube2`` run beside a folder ``cube2/`` (here another puzzle's
    model) starts from the shipped cube2; ``--init-from ./cube2`` is that folder."""
    pytest.importorskip("torch")
    from puzzlezero.errors import PuzzleError
    from puzzlezero.train import TrainConfig
    from puzzlezero.train.warm_start import open_init

    monkeypatch.chdir(tmp_path)
    shutil.copytree(find_model_dir("puzzle15"), tmp_path / "cube2")
    start = open_init("cube2", make("cube2"), TrainConfig(puzzle="cube2"))
    assert start.model.puzzle == "cube2"
    with pytest.raises(PuzzleError, match="--init-from ./cube2: its input size does not fit cube2"):
        open_init("./cube2", make("cube2"), TrainConfig(puzzle="cube2"))


def test_an_oversized_ensemble_file_is_refused_unread(tmp_path: Path) -> None:
    from puzzlezero.model_folders import ensemble_members

    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "ensemble.json").write_bytes(b"[" + b" " * (2 << 20) + b"]")
    with pytest.raises(ModelFileError, match=r"ensemble\.json: more than 1,048,576 bytes; not read"):
        ensemble_members(tmp_path / "e")
