"""ONNX export (``puzzlezero export MODEL --onnx FILE``) and the onnxruntime heuristic
``learned-onnx``: outputs equal to PyTorch's, solves equal to ``learned``'s, specific errors.

Three exports in all (cube3 through the CLI, the shipped 15-puzzle into the cache, a tiny training
run), each shared by the tests that read it; an export takes a few seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from puzzlezero import make, solver
from puzzlezero.cli.main import main
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn import load_model
from puzzlezero.onnx import find_onnx, load_onnx, onnx_heuristic, onnx_q_function
from puzzlezero.solver import solve, verify
from tests.conftest import tiny_train_config

pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def torch_heads(model_name: str, puzzle_name: str, states: np.ndarray) -> dict[str, np.ndarray]:
    """The shipped PyTorch network's raw heads on ``states`` (the reference)."""
    net = load_model(model_name)
    with torch.inference_mode():
        out = net(torch.from_numpy(make(puzzle_name).encode(states, net.config.encoding)), all_heads=True)
    return {k: v.numpy() for k, v in out.items()}


def random_states(puzzle_name: str, n: int, seed: int = 0) -> np.ndarray:
    p = make(puzzle_name)
    return p.scramble(np.random.default_rng(seed), n, (0, p.default_scramble_depth))


@pytest.fixture(scope="module")
def cube3_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped cube3 model (value and Q heads) exported through the CLI."""
    path = tmp_path_factory.mktemp("onnx") / "cube3.onnx"
    assert main(["export", "cube3", "--onnx", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def puzzle15_onnx() -> Path:
    """The shipped 15-puzzle model (value head only): its folder, whose graph is built from its weights."""
    return find_onnx(make("puzzle15"))


@pytest.fixture(autouse=True)
def _fresh_heuristics() -> None:
    solver.get_heuristic.cache_clear()  # heuristics are cached per (puzzle, name, model, kind)


# ---- export: same numbers as PyTorch ------------------------------------------------------------
def test_cli_export_of_cube3_matches_pytorch_on_value_and_q_heads(cube3_onnx: Path) -> None:
    net = load_onnx(cube3_onnx)
    assert (net.puzzle, net.encoding, net.heads, net.input_dim, net.num_actions) == (
        "cube3",
        "onehot",
        ("value", "q"),
        324,
        12,
    )
    meta = net.session.get_modelmeta().custom_metadata_map
    assert json.loads(meta["net"])["q_head"] is True and len(meta["weights_sha256"]) == 64
    assert [i.name for i in net.session.get_inputs()] == ["x"]
    assert net.session.get_inputs()[0].shape[0] == "batch"  # a dynamic batch axis
    p = make("cube3")
    states = random_states("cube3", 300)
    want = torch_heads("cube3", "cube3", states)
    for head in ("value", "q"):
        got = net.predict(p, states, head, batch_size=128)  # chunks of 128, then the rest (44)
        assert got.shape == want[head].shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want[head], atol=1e-4, rtol=0)
        np.testing.assert_allclose(net.predict(p, states[:1], head), want[head][:1], atol=1e-4, rtol=0)
    assert np.ptp(want["value"]) > 5  # the states differ: the comparison is not of constants


def test_a_shipped_model_runs_as_the_graph_built_from_its_weights_without_writing(
    puzzle15_onnx: Path,
) -> None:
    from puzzlezero.model_folders import resolve_model_dir

    assert puzzle15_onnx == resolve_model_dir("puzzle15")  # the folder itself: no export, no cache
    cache = Path(os.environ["PUZZLEZERO_CACHE"]) / "onnx"
    assert not cache.exists() or not any(cache.iterdir())
    net = load_onnx(puzzle15_onnx)
    assert (net.puzzle, net.heads) == ("puzzle15", ("value",))
    p = make("puzzle15")
    states = random_states("puzzle15", 300, seed=1)
    np.testing.assert_allclose(
        net.predict(p, states), torch_heads("puzzle15", "puzzle15", states)["value"], atol=1e-4, rtol=0
    )
    h = onnx_heuristic(p)
    assert h(p.goals(2)).tolist() == [0.0, 0.0]  # exactly 0 at goals, like make_heuristic
    assert h(states[:0]).shape == (0,)


# ---- solving: the same solutions as the PyTorch heuristics --------------------------------------
def fp32_q_function(puzzle):
    """Heuristic factory (test double): the shipped cube3 Q head in float32 (``learned-q`` is int8)."""
    from puzzlezero.nn import make_q_function

    return make_q_function(puzzle, load_model("cube3"), int8=False)


def test_qstar_with_learned_onnx_finds_learneds_solution(cube3_onnx: Path, monkeypatch) -> None:
    monkeypatch.setitem(solver.HEURISTICS, "q-fp32", solver.HeuristicSpec(fp32_q_function, kind="q"))
    scramble = "R U' F L D' B"  # a unique shortest solution: the inverse
    kw = {"search": "qstar", "weight": 0.3, "batch": 100, "anytime": False}
    onnx = solve("cube3", scramble, heuristic="learned-onnx", model=str(cube3_onnx), **kw)
    assert onnx.solved and onnx.status == "solved" and onnx.solution == ("B'", "D", "L'", "F'", "U", "R'")
    p = make("cube3")
    assert verify(p, p.parse(scramble)[None], [onnx.actions]).tolist() == [True]
    fp32 = solve("cube3", scramble, heuristic="q-fp32", **kw)  # the same search step for step
    assert (onnx.actions, onnx.nodes_generated) == (fp32.actions, fp32.nodes_generated)
    assert onnx.actions == solve("cube3", scramble, heuristic="learned", **kw).actions  # int8 Q head


def test_bwas_with_learned_onnx_finds_learneds_solution(puzzle15_onnx: Path) -> None:
    p = make("puzzle15")
    start = p.scramble(np.random.default_rng(3), 1, 14)[0]
    kw = {"search": "bwas", "weight": 0.8, "batch": 20, "anytime": False}
    onnx = solve(p, start, heuristic="learned-onnx", **kw)  # no model: the shipped one's graph
    assert onnx.solved and verify(p, start[None], [onnx.actions]).tolist() == [True]
    assert onnx.actions == solve(p, start, heuristic="learned-fp32", **kw).actions
    assert onnx.actions == solve(p, start, heuristic="learned", **kw).actions


def test_cli_solve_with_learned_onnx(cube3_onnx: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["solve", "cube3", "R U", "--heuristic", "learned-onnx", "--model", str(cube3_onnx)]
    assert main([*argv, "--json", "--no-anytime"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["search"], out["solution"], out["status"]) == ("qstar", ["U'", "R'"], "solved")


def test_a_one_shot_solve_with_learned_onnx_does_not_import_torch(cube3_onnx: Path) -> None:
    """The point of onnxruntime for one-shot solves: torch takes seconds to import, onnxruntime less."""
    code = (
        "import sys\n"
        "from puzzlezero.cli.main import main\n"
        f"rc = main(['solve', 'cube3', 'R U', '--heuristic', 'learned-onnx', '--model', {str(cube3_onnx)!r},"
        " '--json', '--no-anytime'])\n"
        "print(rc, 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    lines = out.stdout.splitlines()
    assert json.loads(lines[0])["solution"] == ["U'", "R'"] and lines[-1] == "0 False"


def test_a_training_run_exports_next_to_its_model_folder(tmp_path: Path, capsys) -> None:
    from puzzlezero.train import Trainer

    run, folder = tmp_path / "run", tmp_path / "model"
    Trainer(tiny_train_config(max_iterations=10), run).run()
    assert main(["export", str(run), str(folder), "--onnx", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"ONNX model written to {folder / 'model.onnx'} (cube2; heads value)" in out
    p = make("cube2")
    assert find_onnx(p, str(folder)) == folder / "model.onnx"  # beside model.npz, not the cache
    states = random_states("cube2", 50)
    want = torch_heads(str(folder), "cube2", states)["value"]
    np.testing.assert_allclose(load_onnx(folder / "model.onnx").predict(p, states), want, atol=1e-4, rtol=0)
    with open(folder / "model.npz", "ab") as f:  # other weights now: the export beside is stale
        f.write(b"\0")
    with pytest.raises(ModelFileError, match="exported from other weights than"):
        onnx_heuristic(p, str(folder))


# ---- errors --------------------------------------------------------------------------------------
def test_a_model_for_another_puzzle_is_refused(cube3_onnx: Path, capsys) -> None:
    with pytest.raises(ModelFileError, match="exported for 'cube3', not 'puzzle15'"):
        onnx_heuristic(make("puzzle15"), str(cube3_onnx))
    argv = ["solve", "puzzle15", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15", "--heuristic", "learned-onnx"]
    assert main([*argv, "--model", str(cube3_onnx)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {cube3_onnx}: exported for 'cube3', not 'puzzle15'"


def test_qstar_needs_a_q_head_in_the_export(puzzle15_onnx: Path) -> None:
    with pytest.raises(ModelFileError, match="has no Q head; Q\\* search needs one"):
        onnx_q_function(make("puzzle15"), str(puzzle15_onnx))


def test_missing_unreadable_and_foreign_files(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    p = make("cube3")
    with pytest.raises(ModelFileError, match="no such ONNX file or model folder"):
        onnx_heuristic(p, str(tmp_path / "nothing.onnx"))
    with pytest.raises(ModelFileError, match="nothing.onnx: no such ONNX file"):
        load_onnx(tmp_path / "nothing.onnx")
    with pytest.raises(ModelFileError, match="no model folder 'cube9'.*installed model .*cube3"):
        onnx_heuristic(p, "cube9")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a protobuf")
    with pytest.raises(ModelFileError, match="junk.onnx: not a readable ONNX model"):
        onnx_heuristic(p, str(junk))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 324])
    y = helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch", 324])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["value"])], "g", [x], [y])
    foreign = tmp_path / "foreign.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), foreign)
    with pytest.raises(ModelFileError, match="not a puzzlezero ONNX export.*puzzlezero export MODEL --onnx"):
        onnx_heuristic(p, str(foreign))


def test_missing_onnxruntime_names_the_extra(cube3_onnx: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    with pytest.raises(PuzzleError, match=r"needs onnxruntime, which is not installed.*puzzlezero\[onnx\]"):
        onnx_heuristic(make("cube3"), str(cube3_onnx))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "cube3"], "nothing to write: give a model folder to write"),
        (
            ["export", "cube9", "somewhere"],
            "cube9 is neither a training run folder (no checkpoint.pt) nor a model",
        ),
        (["export", "cube3", "--half", "--onnx", "x.onnx"], "--half stores a model folder's weights"),
        (["export", "cube9", "--onnx", "x.onnx"], "no model folder 'cube9'"),
    ],
)
def test_export_cli_errors(argv: list[str], message: str, capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_onnxruntime_uses_torchs_thread_setting(cube3_onnx: Path) -> None:
    def threads(net) -> int:
        return net.session.get_session_options().intra_op_num_threads

    assert torch.get_num_threads() == 1  # the one_torch_thread fixture
    assert threads(load_onnx(cube3_onnx)) == 1
    torch.set_num_threads(2)
    assert threads(load_onnx(cube3_onnx)) == 2
    assert threads(load_onnx(cube3_onnx, threads=3)) == 3
