"""The torch-free network runtime: the ONNX graph built from a model folder's weights computes what
the torch network computes, for every shipped model and for random networks of every head kind;
int8 is chosen where the CPU suits it; a network is built once per process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.errors import MissingExtraError, ModelFileError, PuzzleError
from puzzlezero.model_folders import model_roots
from puzzlezero.nn import NetConfig, build_model, load_model, read_model, runtime, save_model
from puzzlezero.nn.graph import build_graph
from puzzlezero.nn.runtime import int8_support, load_network, resolve_precision
from puzzlezero.puzzles import inputs

#: every model folder with weights, in both roots (the layered model's goal networks included)
FOLDERS = sorted({p.parent for root in model_roots() for p in root.rglob("config.json")})


def _name(folder: Path) -> str:
    root = next(r for r in model_roots() if r in folder.parents)
    return str(folder.relative_to(root))


def _states(puzzle_name: str, n: int, seed: int = 0) -> np.ndarray:
    p = make(puzzle_name)
    return p.scramble(np.random.default_rng(seed), n, (0, p.default_scramble_depth))


def _torch_heads(net, x: np.ndarray) -> dict[str, np.ndarray]:
    with torch.inference_mode():
        return {k: v.numpy() for k, v in net.eval()(torch.from_numpy(x), all_heads=True).items()}


def test_the_folders_are_found() -> None:
    assert len(FOLDERS) >= 13


@pytest.mark.parametrize("folder", FOLDERS, ids=_name)
def test_every_shipped_model_computes_what_its_torch_network_computes(folder: Path) -> None:
    net = load_network(folder, precision="float32", threads=1)
    assert (net.backend, net.precision, net.describe()) == ("onnxruntime", "float32", "onnxruntime float32")
    reference = load_model(folder)
    assert net.puzzle == reference.puzzle and net.config == reference.config and net.card == reference.card
    x = make(net.puzzle).encode(_states(net.puzzle, 400), net.config.encoding)
    want = _torch_heads(reference, x)
    assert net.heads == tuple(want)
    for head, expected in want.items():
        got = net.predict(x, head)
        assert got.dtype == np.float32 and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)
    assert np.ptp(want["value"]) > 1  # the states differ: not a comparison of constants


CASES: dict[str, dict[str, Any]] = {
    "value": {},
    "policy": {"policy_head": True},
    "q": {"q_head": True},
    "policy-and-q": {"policy_head": True, "q_head": True},
    "no-blocks": {"num_res_blocks": 0, "q_head": True},
    "three-blocks": {"num_res_blocks": 3},
    "one-goal": {"goals": ("layer1",)},
    "goals": {"goals": ("layer1", "layer2", "solved")},
    "goals-one-layer": {"goals": ("layer1", "layer2", "solved"), "head_layers": 1},
    "goals-block": {"goals": ("layer1", "solved"), "head_layers": 2},
    "one-goal-q": {"goals": ("layer1",), "q_head": True},
    "goals-three-layers": {"goals": ("layer1", "layer2", "solved"), "head_layers": 3, "num_res_blocks": 0},
    "one-goal-own-layers": {"goals": ("layer1",), "head_layers": 2},
}


@pytest.mark.parametrize("case", CASES)
def test_random_networks_of_every_shape_compute_what_torch_computes(case: str, tmp_path: Path) -> None:
    p = make("cube2")
    cfg = NetConfig.from_preset("tiny", input_dim=inputs.dim(p), num_actions=p.num_actions, **CASES[case])
    model = build_model(cfg, seed=3)
    model.train()  # batch-norm statistics of their own, so that folding them in is tested
    for seed in range(3):
        model(torch.from_numpy(p.encode(_states("cube2", 128, seed))))
    folder = save_model(tmp_path / case, model.eval(), puzzle="cube2")
    net = load_network(folder, precision="float32", threads=1)
    x = p.encode(_states("cube2", 300, 9))
    want = _torch_heads(model, x)
    assert net.heads == tuple(want)
    for head, expected in want.items():
        np.testing.assert_allclose(net.predict(x, head), expected, rtol=1e-5, atol=1e-4)
    assert net.run(x[:0], net.heads)[0].shape == (0, *want["value"].shape[1:])


def test_int8_is_close_to_float32_and_says_so() -> None:
    f32 = load_network("cube3", precision="float32", threads=1)
    i8 = load_network("cube3", precision="int8", threads=1)
    assert i8.precision == "int8" and i8.describe().startswith("onnxruntime int8 (CPU ")
    x = make("cube3").encode(_states("cube3", 1000))
    for head in ("value", "q"):
        diff = np.abs(i8.predict(x, head) - f32.predict(x, head))
        assert 0 < diff.mean() < 0.05 and diff.max() < 0.5, head  # quantised, and not far off


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        ("fpu sse2 avx2 avx512f avx512_vnni", "AVX-512 VNNI"),
        ("fpu avx2 avx_vnni", "AVX-VNNI"),
        ("avx512_vnni amx_tile amx_int8 avx_vnni", "AMX, AVX-512 VNNI, AVX-VNNI"),
        ("fpu sse2 avx2 avx512f", "AVX2"),
        ("fpu sse2 sse4_2", None),
    ],
)
def test_int8_support_is_read_from_the_cpu_flags(flags: str, words: str | None) -> None:
    text = (
        f"processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: amx_int8\n"
    )
    assert int8_support(text) == words


def test_auto_precision_is_int8_only_on_a_cpu_with_int8_vector_instructions(monkeypatch) -> None:
    monkeypatch.setattr(runtime, "cpu_int8_support", lambda: "AVX-512 VNNI")
    assert [resolve_precision(p) for p in ("auto", "float32", "int8")] == ["int8", "float32", "int8"]
    monkeypatch.setattr(runtime, "cpu_int8_support", lambda: None)
    assert [resolve_precision(p) for p in ("auto", "float32", "int8")] == ["float32", "float32", "int8"]
    with pytest.raises(PuzzleError, match="precision must be one of auto, float32, int8, got 'int4'"):
        load_network("cube3", precision="int4")


def test_a_network_is_built_once_per_process_and_again_when_its_folder_changes(tmp_path: Path) -> None:
    assert load_network("cube3", precision="float32", threads=1) is load_network(
        "cube3", precision="float32", threads=1
    )
    p = make("cube2")
    cfg = NetConfig.from_preset("tiny", input_dim=inputs.dim(p), num_actions=p.num_actions)
    folder = save_model(tmp_path / "m", build_model(cfg, seed=1), puzzle="cube2")
    first = load_network(folder, precision="float32", threads=1)
    assert load_network(folder, precision="float32", threads=1) is first
    save_model(folder, build_model(cfg, seed=2), puzzle="cube2")
    second = load_network(folder, precision="float32", threads=1)
    x = p.encode(_states("cube2", 4))
    assert second is not first and not np.array_equal(second.predict(x), first.predict(x))


@pytest.mark.parametrize(("name", "spin"), [("puzzle24", "0"), ("cube3", "1")])
def test_a_session_sleeps_between_runs_where_a_first_layer_needs_the_cores(name: str, spin: str) -> None:
    net = load_network(name, precision="int8", threads=2)
    assert (net.first is None) == (spin == "1")  # the 24-puzzle sums its first layer's rows in threads
    options = net._session_for(2).get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == spin


def test_each_thread_count_gets_its_own_session() -> None:
    net = load_network("puzzle15", precision="float32", threads=2)
    x = make("puzzle15").encode(_states("puzzle15", 50))
    whole = net.predict(x)
    with runtime.call_threads(1):
        one = net.predict(x)
    assert sorted(net._sessions) == [1, 2]
    assert net._sessions[1].get_session_options().intra_op_num_threads == 1
    np.testing.assert_allclose(one, whole, rtol=1e-6, atol=1e-5)


def test_weights_that_do_not_fit_the_config_are_named(tmp_path: Path) -> None:
    p = make("cube2")
    cfg = NetConfig.from_preset("tiny", input_dim=inputs.dim(p), num_actions=p.num_actions)
    folder = save_model(tmp_path / "m", build_model(cfg, seed=1), puzzle="cube2")
    with np.load(folder / "model.npz") as archive:
        weights = {k: archive[k] for k in archive.files}
    del weights["trunk.3.bias"]
    np.savez(folder / "model.npz", **weights)
    with pytest.raises(
        ModelFileError, match=r"m: the weights do not match the network of config.json .*trunk.3.bias"
    ):
        load_network(folder, precision="float32")
    with pytest.raises(ModelFileError, match="covers the mlp architecture, not 'conv'"):
        build_graph(
            NetConfig.from_preset("conv-tiny", 49, input_shape=(1, 7, 7)), {}, puzzle="x", num_actions=1
        )


def test_a_conv_network_runs_on_torch_and_without_torch_names_the_extra(tmp_path: Path, monkeypatch) -> None:
    p = make("lightsout7")
    cfg = NetConfig.from_preset(
        "conv-tiny", inputs.dim(p, "grid"), input_shape=inputs.shape(p, "grid"), num_actions=p.num_actions
    )
    model = build_model(cfg, seed=1).eval()
    folder = save_model(tmp_path / "conv", model, puzzle="lightsout7")
    net = load_network(folder, precision="float32")
    assert (net.backend, net.describe()) == ("torch", "torch float32")
    x = p.encode(_states("lightsout7", 20), "grid")
    np.testing.assert_allclose(net.predict(x), _torch_heads(model, x)["value"], rtol=1e-5, atol=1e-4)
    assert json.loads((folder / "config.json").read_text())["net"]["arch"] == "conv"
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(
        MissingExtraError, match=r'runs on torch, which is not installed: pip install "puzzlezero\[train\]"'
    ):
        runtime._load(folder.resolve(), "int8", None, (0.0,))


@pytest.mark.parametrize("name", ["cube3", "puzzle48", "cube3-adi"])
def test_int8_quantizes_every_hidden_layer_and_keeps_the_outputs_in_float(name: str) -> None:
    import onnx

    files = read_model(name)
    graph = build_graph(files.config, files.weights, puzzle=files.puzzle, num_actions=12, linear="matmul")
    model = onnx.load_from_string(runtime.quantized(graph))
    in_float = {n.doc_string for n in model.graph.node if n.op_type == "MatMul"}
    assert in_float == set(runtime.network_heads(files.config))  # value, and policy or q where it has them
    integer = sum(n.op_type == "MatMulInteger" for n in model.graph.node)
    assert integer == 2 + 2 * files.config.num_res_blocks  # the trunk's layers, the first included


@pytest.mark.parametrize("name", ["puzzle24", "puzzle35", "puzzle48"])
def test_a_network_of_many_values_sums_the_rows_of_its_first_layer(name: str) -> None:
    from puzzlezero.nn.heuristic import predict
    from puzzlezero.nn.onehot_rows import positions

    p = make(name)
    net = load_network(name, precision="float32", threads=2)
    values = inputs.onehot_values(p)
    assert values is not None and net.first is not None and net.first.values == values
    states = _states(name, 600)
    want = _torch_heads(load_model(name), p.encode(states))["value"]
    np.testing.assert_allclose(net.predict(positions(states, values)), want, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(
        predict(p, net, states, batch_size=256), want, rtol=1e-5, atol=1e-3
    )  # the searches' way
    np.testing.assert_allclose(
        net.predict(p.encode(states)), want, rtol=1e-5, atol=1e-3
    )  # the one-hot itself
    assert net.run(positions(states[:0], values), ("value",))[0].shape == (0,)
    assert np.ptp(want) > 10
    int8 = load_network(name, precision="int8", threads=1)
    assert int8.first is not None and int8.first.rows.dtype == np.int16  # int16 sums, int8 for the rest
    assert np.abs(predict(p, int8, states) - want).mean() < 0.5


@pytest.mark.parametrize("name", ["cube3", "puzzle15", "sokoban", "lightsout7"])
def test_a_network_of_few_values_keeps_its_first_layer_in_the_graph(name: str) -> None:
    assert load_network(name, precision="float32", threads=1).first is None
