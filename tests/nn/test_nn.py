"""Cost-to-go networks, presets, model folders and the heuristic wrapper (puzzlezero.nn)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from puzzlezero import make, model_folders
from puzzlezero.errors import ModelFileError, PuzzleError, UnknownNameError
from puzzlezero.nn import (
    PRESETS,
    CostToGoNet,
    NetConfig,
    build_model,
    count_parameters,
    inference_copy,
    load_model,
    make_heuristic,
    save_model,
    update_card,
)
from puzzlezero.nn import io as nn_io
from puzzlezero.puzzles import inputs
from puzzlezero.train import bellman_targets

pytestmark = pytest.mark.usefixtures("one_torch_thread")


CUBE_INPUTS = 54 * 6  # one-hot stickers of the 3x3x3 cube


def test_paper_preset_has_the_papers_parameter_count():
    # 324*5000 + 5000*1000 + 8 * 1000*1000 + biases and batch norms: the paper's 14.7 M
    n = count_parameters(CostToGoNet(NetConfig.from_preset("paper", input_dim=CUBE_INPUTS)))
    assert abs(n - 14.7e6) < 0.1e6


@pytest.mark.parametrize(("preset", "lo", "hi"), [("small", 1.0e6, 2.0e6), ("medium", 4.0e6, 5.0e6)])
def test_cpu_presets_are_sized_as_documented(preset, lo, hi):
    n = count_parameters(CostToGoNet(NetConfig.from_preset(preset, input_dim=CUBE_INPUTS)))
    assert lo <= n <= hi


def test_architecture_follows_the_paper():
    cfg = NetConfig(input_dim=10, h1=7, h2=5, num_res_blocks=3)
    net = CostToGoNet(cfg)
    linears = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    norms = [m for m in net.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    # FC h1, FC h2, two FC per residual block, one linear output unit
    assert [(m.in_features, m.out_features) for m in linears] == [(10, 7), (7, 5)] + [(5, 5)] * 6 + [(5, 1)]
    assert len(norms) == 2 + 2 * 3  # batch norm in every hidden layer, none on the output


def test_forward_and_heads_shapes():
    cfg = NetConfig.from_preset("tiny", input_dim=20, num_actions=6, policy_head=True, q_head=True)
    net = build_model(cfg, seed=0).eval()
    x = torch.rand(4, 20)
    assert net(x).shape == (4,)
    heads = net.heads(x)
    assert heads["value"].shape == (4,) and heads["policy"].shape == (4, 6) and heads["q"].shape == (4, 6)
    assert torch.equal(heads["value"], net(x))
    assert set(CostToGoNet(NetConfig(input_dim=20)).eval().heads(x)) == {"value"}


def test_build_model_is_deterministic_and_leaves_global_rng_alone():
    cfg = NetConfig.from_preset("tiny", input_dim=12)
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a, b = build_model(cfg, seed=5), build_model(cfg, seed=5)
    assert torch.rand(1) == before
    assert all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())
    c = build_model(cfg, seed=6)
    assert not torch.equal(a.trunk[0].weight, c.trunk[0].weight)


def test_bad_configs_are_rejected_with_clear_errors():
    with pytest.raises(UnknownNameError, match="huge.*tiny, small, medium, paper"):
        NetConfig.from_preset("huge", input_dim=10)
    with pytest.raises(PuzzleError, match="h1 must be >= 1"):
        NetConfig(input_dim=10, h1=0)
    with pytest.raises(PuzzleError, match="num_actions"):
        NetConfig(input_dim=10, policy_head=True)
    with pytest.raises(ModelFileError, match="unknown network config keys"):
        NetConfig.from_dict({"input_dim": 3, "depth": 9})
    assert set(PRESETS) >= {"paper", "small", "medium"}


@pytest.fixture()
def cube2_model(tmp_path):
    puzzle = make("cube2")
    cfg = NetConfig.from_preset("tiny", input_dim=inputs.dim(puzzle), num_actions=puzzle.num_actions)
    net = build_model(cfg, seed=1)
    # non-trivial batch-norm statistics, so that a round trip must restore them too
    net.train()
    net(torch.from_numpy(puzzle.encode(puzzle.scramble(np.random.default_rng(0), 64, (1, 8)))))
    folder = save_model(tmp_path / "m", net, puzzle="cube2", card={"samples_seen": 123})
    return puzzle, net.eval(), folder


def test_save_load_round_trip(cube2_model):
    puzzle, net, folder = cube2_model
    assert sorted(p.name for p in folder.iterdir()) == ["card.json", "config.json", "model.npz"]
    with np.load(folder / "model.npz", allow_pickle=False) as stored:  # plain arrays, by state_dict key
        assert sorted(stored.files) == sorted(net.state_dict())
        assert stored["value.bias"].dtype == np.float32
    loaded = load_model(folder)
    assert loaded.puzzle == "cube2" and loaded.card == {"samples_seen": 123}
    assert loaded.config == net.config and not loaded.training
    x = torch.from_numpy(puzzle.encode(puzzle.scramble(np.random.default_rng(1), 32, (1, 8))))
    with torch.inference_mode():
        assert torch.equal(loaded(x), net(x))
    assert update_card(folder, bench={"solved": 1.0})["bench"] == {"solved": 1.0}
    assert load_model(folder).card["samples_seen"] == 123


def test_half_precision_weights_are_half_the_file_and_load_back_into_float32(cube2_model, tmp_path):
    puzzle, net, full = cube2_model
    half = save_model(tmp_path / "half", net, puzzle="cube2", card={"samples_seen": 123}, weights="float16")
    assert json.loads((half / "config.json").read_text())["weights"] == "float16"
    assert "weights" not in json.loads((full / "config.json").read_text())  # float32: the format as before
    size = (half / "model.npz").stat().st_size / (full / "model.npz").stat().st_size
    assert 0.45 < size < 0.6
    with np.load(half / "model.npz", allow_pickle=False) as archive:
        stored = {k: archive[k] for k in archive.files}
    assert {v.dtype for k, v in stored.items() if "num_batches_tracked" not in k} == {np.dtype(np.float16)}
    assert all(v.dtype == np.int64 for k, v in stored.items() if "num_batches_tracked" in k)
    loaded = load_model(half)
    assert {p.dtype for p in loaded.parameters()} == {torch.float32} and loaded.card == {"samples_seen": 123}
    # every weight is the float32 one rounded to the nearest float16, and no further
    for name, value in net.state_dict().items():
        if value.is_floating_point():
            assert torch.equal(loaded.state_dict()[name], value.half().float()), name
    x = torch.from_numpy(puzzle.encode(puzzle.scramble(np.random.default_rng(1), 32, (1, 8))))
    with torch.inference_mode():
        torch.testing.assert_close(loaded(x), net(x), rtol=1e-2, atol=1e-2)


def test_half_precision_refuses_weights_beyond_its_range(cube2_model, tmp_path):
    _, net, _ = cube2_model
    with torch.no_grad():
        next(net.parameters())[0, 0] = 1e6
    with pytest.raises(ModelFileError, match=r"cannot store .* in float16: its largest magnitude 1e\+06"):
        save_model(tmp_path / "half", net, puzzle="cube2", weights="float16")
    assert not (tmp_path / "half" / "model.npz").exists()
    with pytest.raises(ModelFileError, match="weights='int4': expected one of float32, float16"):
        save_model(tmp_path / "x", net, puzzle="cube2", weights="int4")


def test_a_folder_naming_an_unknown_weight_type_is_refused(cube2_model):
    _, _, folder = cube2_model
    _edit_json(folder / "config.json", lambda d: d.update(weights="bfloat8"))
    with pytest.raises(ModelFileError, match="config.json: weights is 'bfloat8'"):
        load_model(folder)


def test_load_by_bare_name_uses_shipped_models(cube2_model, monkeypatch):
    _, _, folder = cube2_model
    monkeypatch.setattr(model_folders, "model_roots", lambda: [folder.parent])
    assert nn_io.shipped_models() == [folder.name]
    assert load_model(folder.name).puzzle == "cube2"
    with pytest.raises(ModelFileError, match=r"no model folder 'nosuch'.*installed model \(m\)"):
        load_model("nosuch")


@pytest.mark.parametrize(
    ("damage", "culprit"),
    [
        (lambda f: (f / "model.npz").write_bytes(b"not a zip file"), "model.npz"),
        (lambda f: (f / "model.npz").write_bytes((f / "model.npz").read_bytes()[:200]), "model.npz"),
        (lambda f: (f / "model.npz").unlink(), "model.npz"),
        (lambda f: (f / "config.json").write_text("{ broken"), "config.json"),
        (lambda f: (f / "config.json").unlink(), "config.json"),
        (lambda f: (f / "card.json").write_text("[1, 2"), "card.json"),
        (lambda f: _edit_json(f / "config.json", lambda d: d["net"].update(h1=65)), "model.npz"),
        (lambda f: _edit_json(f / "config.json", lambda d: d.update(format="other/9")), "config.json"),
    ],
)
def test_missing_or_corrupt_files_raise_model_file_error_naming_the_file(cube2_model, damage, culprit):
    _, _, folder = cube2_model
    damage(folder)
    with pytest.raises(ModelFileError, match=culprit):
        load_model(folder)


def test_a_pickled_array_in_the_weights_is_refused(cube2_model):
    _, _, folder = cube2_model
    np.savez(folder / "model.npz", **{"value.bias": np.array([object()], dtype=object)})
    with pytest.raises(ModelFileError, match="model.npz: unreadable or corrupt"):
        load_model(folder)


def test_a_legacy_model_pt_folder_still_loads_and_saving_replaces_it(cube2_model, tmp_path):
    puzzle, net, folder = cube2_model
    torch.save(net.state_dict(), folder / "model.pt")
    (folder / "model.npz").unlink()
    loaded = load_model(folder)
    x = torch.from_numpy(puzzle.encode(puzzle.scramble(np.random.default_rng(1), 8, (1, 8))))
    with torch.inference_mode():
        assert torch.equal(loaded(x), net(x))
    save_model(folder, loaded, puzzle="cube2")
    assert sorted(p.name for p in folder.iterdir()) == ["card.json", "config.json", "model.npz"]


def _edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_heuristic_is_zero_at_goal_nonnegative_and_chunked(cube2_model):
    puzzle, net, _ = cube2_model
    states = np.concatenate([puzzle.goals(3), puzzle.scramble(np.random.default_rng(2), 200, (1, 10))])
    h = make_heuristic(puzzle, net, batch_size=7)
    values = h(states)
    assert values.dtype == np.float32 and values.shape == (203,)
    assert np.all(values[:3] == 0.0) and np.all(values >= 0.0)
    goal_mask = puzzle.is_goal(states)
    with torch.inference_mode():
        raw = net(torch.from_numpy(puzzle.encode(states))).numpy()
    expect = np.where(goal_mask, 0.0, np.maximum(raw, 0.0))
    np.testing.assert_allclose(values, expect, rtol=1e-5, atol=1e-5)
    assert h(states[:0]).shape == (0,)


def test_heuristic_refuses_a_model_of_another_puzzle(cube2_model):
    _, _, folder = cube2_model
    net = load_model(folder)
    with pytest.raises(ModelFileError, match="trained for 'cube2', not 'cube3'"):
        make_heuristic(make("cube3"), net)
    net.puzzle = ""
    with pytest.raises(ModelFileError, match="expects 144 inputs"):
        make_heuristic(make("cube3"), net)


def test_bellman_targets_match_the_definition():
    """y(s) = min over real moves of 1 + max(0, J(child)), J(goal) = 0, y(goal) = 0."""
    puzzle = make("puzzle8")
    net = build_model(NetConfig.from_preset("tiny", input_dim=inputs.dim(puzzle)), seed=3).eval()
    rng = np.random.default_rng(4)
    states = np.concatenate([puzzle.goals(1), puzzle.scramble(rng, 50, (1, 20))])
    y = bellman_targets(puzzle, net, states, inference_batch=9)
    with torch.inference_mode():
        for i, s in enumerate(states):
            if puzzle.is_goal(s[None])[0]:
                assert y[i] == 0.0
                continue
            kids = puzzle.expand(s[None])[0][puzzle.legal_mask(s[None])[0]]
            j = np.maximum(net(torch.from_numpy(puzzle.encode(kids))).numpy(), 0.0)
            j[puzzle.is_goal(kids)] = 0.0
            assert y[i] == pytest.approx(1.0 + j.min(), abs=1e-5)
    one_away = puzzle.scramble(rng, 20, 1)
    assert np.all(bellman_targets(puzzle, net, one_away) == 1.0)  # the goal child counts 0


def test_inference_copies_fold_batch_norm_exactly_and_int8_stays_close(cube2_model):
    puzzle, net, _ = cube2_model
    net.train()  # the copies are eval-mode regardless, and the original is left as it was
    states = puzzle.scramble(np.random.default_rng(5), 300, (1, 10))
    x = torch.from_numpy(puzzle.encode(states))
    fused, quant = inference_copy(net), inference_copy(net, int8=True)
    assert net.training and any(isinstance(m, torch.nn.BatchNorm1d) for m in net.modules())
    assert not any(isinstance(m, torch.nn.BatchNorm1d) for m in fused.modules())
    assert not any(type(m) is torch.nn.Linear for m in quant.modules())  # really quantized
    with torch.inference_mode():
        ref = net.eval()(x).numpy()
        np.testing.assert_allclose(fused(x).numpy(), ref, atol=1e-5)
        diff = np.abs(quant(x).numpy() - ref)
    assert 0 < diff.max() < 0.05
    y32 = bellman_targets(puzzle, fused, states)
    y8 = bellman_targets(puzzle, quant, states)
    assert np.abs(y8 - y32).max() < 0.05 and np.all(y8[y32 == 1.0] == 1.0)
    h8 = make_heuristic(puzzle, net, int8=True)
    expect = np.where(puzzle.is_goal(states), 0.0, np.maximum(ref, 0.0))
    assert h8(puzzle.goals(1))[0] == 0.0 and np.abs(h8(states) - expect).max() < 0.05


@pytest.mark.parametrize("name", ["cube3", "cube2", "puzzle8", "puzzle48", "lightsout7"])
def test_a_device_makes_the_same_one_hot_input_from_the_state_elements(name):
    from puzzlezero.nn.heuristic import encode_on

    puzzle = make(name)
    assert inputs.onehot_values(puzzle) is not None
    states = puzzle.scramble(np.random.default_rng(3), 50, (0, 30))
    numpy_made = torch.from_numpy(puzzle.encode(states))
    device_made = encode_on(puzzle, states, "onehot", "cpu", on_device=True)
    assert device_made.dtype == torch.float32
    assert torch.equal(device_made, numpy_made)
    # the automatic choice on a CPU is NumPy's, and gives the same
    assert torch.equal(encode_on(puzzle, states, "onehot", "cpu"), numpy_made)


def test_puzzles_whose_one_hot_is_not_plain_are_encoded_by_numpy_on_any_device():
    from puzzlezero.nn.heuristic import encode_on
    from puzzlezero.puzzles.lightsout import LightsOut

    sokoban = make("sokoban")
    assert inputs.onehot_values(sokoban) is None  # four planes, not a one-hot of the state's elements
    states = sokoban.goals(2)
    assert torch.equal(
        encode_on(sokoban, states, "onehot", "cpu", on_device=True),
        torch.from_numpy(sokoban.encode(states)),
    )

    class Shifted(LightsOut):  # a plugin whose one-hot is its own
        @property
        def encoders(self):
            return {**super().encoders, "onehot": lambda states: 1.0 - inputs.onehot(states, 2)}

    assert inputs.onehot_values(Shifted(3)) is None
    assert Shifted(3).encode(Shifted(3).goals(1)).tolist() == [[0.0, 1.0] * 9]
    assert inputs.onehot_values(make("lightsout7")) == 2
    # the grid encoding is never scattered, whatever the puzzle's one-hot
    lights = make("lightsout7")
    board = lights.scramble(np.random.default_rng(0), 3, 5)
    assert torch.equal(
        encode_on(lights, board, "grid", "cpu", on_device=True),
        torch.from_numpy(lights.encode(board, "grid")),
    )


def _trained_looking(puzzle, seed: int = 0) -> CostToGoNet:  # noqa: ANN001
    """A small random network for ``puzzle`` with batch-norm statistics that are not the identity."""
    torch.manual_seed(seed)
    net = build_model(
        NetConfig(
            input_dim=inputs.dim(puzzle),
            h1=64,
            h2=32,
            num_res_blocks=1,
            q_head=True,
            num_actions=puzzle.num_actions,
        )
    )
    states = puzzle.scramble(np.random.default_rng(seed), 512, (0, 200))
    net.train()
    with torch.no_grad():
        net(torch.from_numpy(puzzle.encode(states)))  # batch statistics into the running ones
    return net.eval()


@pytest.mark.parametrize("name", ["puzzle24", "puzzle48"])
def test_a_wide_one_hot_first_layer_is_a_sum_of_rows_with_the_same_values(name):
    from puzzlezero.nn.fast import GATHER_MIN_VALUES, OneHotGather, gathers_onehot
    from puzzlezero.nn.heuristic import make_q_function, network_input, predict

    puzzle = make(name)
    assert inputs.onehot_values(puzzle) >= GATHER_MIN_VALUES
    net = _trained_looking(puzzle)
    states = puzzle.scramble(np.random.default_rng(1), 300, (0, 300))
    with torch.inference_mode():
        ref = net(torch.from_numpy(puzzle.encode(states))).numpy()
    plain = inference_copy(net)
    gather = inference_copy(net, onehot_values=inputs.onehot_values(puzzle))
    assert gathers_onehot(plain) is None and gathers_onehot(gather) == inputs.onehot_values(puzzle)
    assert isinstance(gather.trunk[0], OneHotGather)
    x = network_input(puzzle, gather, states, "cpu")
    assert x.dtype == torch.int64 and x.shape == (300, inputs.dim(puzzle) // inputs.onehot_values(puzzle))
    onehot = torch.from_numpy(puzzle.encode(states))
    assert torch.equal(onehot.nonzero()[:, 1].reshape(x.shape), x)  # the positions of the ones
    np.testing.assert_allclose(predict(puzzle, gather, states), ref, atol=1e-4)
    with torch.inference_mode():  # the one-hot itself still works as the layer's input
        np.testing.assert_allclose(gather(onehot).numpy(), ref, atol=1e-4)
    # int8: the first layer stays float32 (not quantized), the others are int8
    quant = inference_copy(net, int8=True, onehot_values=inputs.onehot_values(puzzle))
    assert isinstance(quant.trunk[0], OneHotGather) and not any(
        type(m) is torch.nn.Linear for m in quant.modules()
    )
    h = make_heuristic(puzzle, net, int8=True)
    expect = np.where(puzzle.is_goal(states), 0.0, np.maximum(ref, 0.0))
    assert np.abs(h(states) - expect).max() < 0.1
    q = make_q_function(puzzle, net)
    with torch.inference_mode():
        q_ref = net(onehot, all_heads=True)["q"].numpy()
    np.testing.assert_allclose(q(states), np.maximum(q_ref, 1.0), atol=1e-4)


def test_narrow_one_hots_and_other_devices_keep_the_dense_first_layer():
    from puzzlezero.nn.fast import gathers_onehot

    for name in ("cube3", "puzzle15", "lightsout7"):  # 6, 16 and 2 values: the matrix product is faster
        puzzle = make(name)
        net = _trained_looking(puzzle)
        assert gathers_onehot(inference_copy(net, onehot_values=inputs.onehot_values(puzzle))) is None
    p48 = make("puzzle48")
    net = _trained_looking(p48)
    assert gathers_onehot(inference_copy(net)) is None  # no values given: the encoding is not known plain
    assert gathers_onehot(inference_copy(net, device="meta", onehot_values=49)) is None  # not a CPU
