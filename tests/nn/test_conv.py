"""Grid encodings and the residual convolutional value network (``arch="conv"``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make, solve
from puzzlezero.cli.main import main
from puzzlezero.errors import ModelFileError, PuzzleError, UnknownNameError
from puzzlezero.nn import CONV_PRESETS, NetConfig, build_model, inference_copy, load_model, make_heuristic
from puzzlezero.nn.config import block_dilations, blocks_to_cover, receptive_radius
from puzzlezero.nn.models import ConvBlock, GlobalPool
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.sokoban import AGENT, BOX, TARGET, WALL
from puzzlezero.search import bwas
from puzzlezero.train import DAVITrainer, TrainConfig
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def conv_config(name: str, preset: str = "conv-tiny", **overrides) -> NetConfig:
    p = make(name)
    return NetConfig.from_preset(
        preset,
        inputs.dim(p, "grid"),
        input_shape=inputs.shape(p, "grid"),
        num_actions=p.num_actions,
        **overrides,
    )


# ---- encodings ----------------------------------------------------------------------------------
def test_lights_out_grid_is_one_plane_of_lights():
    p = make("lightsout7")
    s = p.scramble(np.random.default_rng(0), 5, 10)
    x = p.encode(s, "grid")
    assert x.shape == (5, 1, 7, 7) and x.dtype == np.float32
    assert inputs.shape(p, "grid") == (1, 7, 7) and inputs.dim(p, "grid") == 49
    np.testing.assert_array_equal(x[:, 0], s.reshape(5, 7, 7))
    assert x[0, 0, 3, 4] == s[0, 3 * 7 + 4]  # row-major: cell row*N + col
    assert inputs.shape(p) == (98,) and inputs.dim(p) == 98  # the flat one-hot stays the default


def test_sokoban_grid_is_agent_box_target_wall_planes():
    p = make("sokoban")
    s = p.parse("#####\n#@$.#\n#####")
    x = p.encode(s[None], "grid")
    assert x.shape == (1, 4, 10, 10) and inputs.shape(p, "grid") == (4, 10, 10)
    agent, box, target, wall = x[0]
    assert agent[1, 1] == 1 and agent.sum() == 1
    assert box[1, 2] == 1 and box.sum() == 1
    assert target[1, 3] == 1 and target.sum() == 1
    np.testing.assert_array_equal(wall, (s.reshape(10, 10) == WALL))
    states = p.scramble(np.random.default_rng(1), 20, (1, 40))
    np.testing.assert_array_equal(p.encode(states, "grid").reshape(20, -1), p.encode(states))
    for plane, flag in enumerate((AGENT, BOX, TARGET, WALL)):
        np.testing.assert_array_equal(
            p.encode(states, "grid")[:, plane].reshape(20, -1), (states & flag) != 0
        )


def test_unknown_encoding_is_named():
    with pytest.raises(
        UnknownNameError, match=r"unknown encoding 'grid' for cube2; choose one of \['onehot'\]"
    ):
        make("cube2").encode(make("cube2").goals(1), "grid")


# ---- the network ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "blocks"), [("lightsout7", 2), ("sokoban", 3)])
def test_conv_net_shapes_and_heads(name, blocks):
    p = make(name)
    cfg = conv_config(name, policy_head=True, q_head=True)
    assert (cfg.arch, cfg.encoding, cfg.input_shape, cfg.num_res_blocks) == (
        "conv",
        "grid",
        inputs.shape(p, "grid"),
        blocks,  # conv-tiny has 2 blocks; a 10x10 board needs 3 for its receptive field
    )
    net = build_model(cfg, seed=0).eval()
    x = torch.from_numpy(p.encode(p.scramble(np.random.default_rng(0), 3, 5), "grid"))
    out = net.heads(x)
    assert out["value"].shape == (3,) and out["policy"].shape == out["q"].shape == (3, p.num_actions)
    torch.testing.assert_close(net(x.reshape(3, -1)), out["value"])  # a flat input is read as the grid
    assert NetConfig.from_dict(cfg.to_dict()) == cfg  # JSON round trip (input_shape as a list)


def test_receptive_radius_is_exact_and_gap_free():
    """Stack the stem and the blocks' convolutions on a big board: the cells one output cell
    depends on form exactly the square of :func:`receptive_radius`."""
    size = 41
    for n in range(5):
        torch.manual_seed(n)
        layers = [torch.nn.Conv2d(1, 4, 3, padding=1)] + [ConvBlock(4, d) for d in block_dilations(n)]
        net = torch.nn.Sequential(*layers).eval()
        with torch.no_grad():
            for m in net.modules():
                if isinstance(m, torch.nn.Conv2d):
                    m.weight.copy_(m.weight.abs() + 0.01)  # no cancellation: every path counts
        x = torch.rand(1, 1, size, size, requires_grad=True)
        net(x)[0, :, size // 2, size // 2].sum().backward()
        seen = (x.grad[0, 0].abs() > 0).numpy()
        r = receptive_radius(n)
        c = size // 2
        want = np.zeros_like(seen)
        want[c - r : c + r + 1, c - r : c + r + 1] = True
        np.testing.assert_array_equal(seen, want, err_msg=f"{n} blocks")
    assert [receptive_radius(n) for n in range(5)] == [1, 3, 6, 11, 13]
    assert (blocks_to_cover(7, 7), blocks_to_cover(10, 10), blocks_to_cover(20, 12)) == (2, 3, 6)


@pytest.mark.parametrize("name", ["lightsout7", "sokoban"])
def test_a_corner_feature_depends_on_the_far_corner(name):
    """Before pooling, the trunk's features at cell (0, 0) change with the input at (H-1, W-1)."""
    cfg = conv_config(name)
    net = build_model(cfg, seed=0).eval()
    pool = next(i for i, m in enumerate(net.trunk) if isinstance(m, GlobalPool))
    features = net.trunk[:pool]
    c, h, w = cfg.input_shape
    x = torch.zeros(1, c, h, w, requires_grad=True)
    features(x)[0, :, 0, 0].sum().backward()
    assert x.grad[0, :, h - 1, w - 1].abs().sum() > 0
    # and the value itself: lighting the far corner (Lights Out) or walling it changes it
    y = torch.zeros(1, c, h, w)
    y[0, -1, h - 1, w - 1] = 1.0
    with torch.no_grad():
        assert net(torch.zeros(1, c, h, w)).item() != net(y).item()


def test_too_few_blocks_and_flat_encodings_are_refused():
    with pytest.raises(
        PuzzleError,
        match="1 residual blocks see 3 cells around a cell, too few for a 10x10 board: use at least 3",
    ):
        conv_config("sokoban", num_res_blocks=1)
    p = make("sokoban")
    with pytest.raises(PuzzleError, match=r"needs a grid encoding of shape \(C, H, W\).*--set encoding=grid"):
        NetConfig.from_preset("conv", inputs.dim(p), input_shape=inputs.shape(p), encoding="onehot")
    with pytest.raises(
        UnknownNameError,
        match="choose one of tiny, small, medium, paper, cubeconv, cubeconv-small, conv-tiny, conv, conv-large",
    ):
        NetConfig.from_preset("giant", 10)
    assert set(CONV_PRESETS) == {"conv-tiny", "conv", "conv-large"}


def test_batch_norms_fold_into_the_convolutions():
    p = make("sokoban")
    net = build_model(conv_config("sokoban", q_head=True), seed=1)
    net.train()
    x = torch.from_numpy(p.encode(p.scramble(np.random.default_rng(0), 64, (1, 30)), "grid"))
    for _ in range(3):  # move the running statistics away from their initial values
        net(x)
    net.eval()
    fast = inference_copy(net)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in fast.modules())
    with torch.no_grad():
        torch.testing.assert_close(fast.heads(x)["value"], net.heads(x)["value"], rtol=1e-4, atol=1e-4)


def test_the_mlp_stays_the_default_and_reads_a_grid_flattened():
    cfg = TrainConfig(puzzle="lightsout7")
    assert (cfg.preset, cfg.encoding) == ("small", "onehot")
    assert TrainConfig(puzzle="lightsout7", preset="conv").encoding == "grid"
    shipped = load_model("lightsout7")  # an MLP (a policy net: the medium preset)
    assert shipped.config.arch == "mlp" and shipped.config.input_shape == ()
    p = make("sokoban")
    mlp = build_model(NetConfig.from_preset("tiny", inputs.dim(p, "grid"), encoding="grid"), seed=0).eval()
    s = p.scramble(np.random.default_rng(0), 4, 5)
    with torch.no_grad():
        torch.testing.assert_close(
            mlp(torch.from_numpy(p.encode(s, "grid"))), mlp(torch.from_numpy(p.encode(s)))
        )


# ---- training, export, resume, --init-from, solving ---------------------------------------------
LIGHTS = tiny_train_config(puzzle="lightsout7", preset="conv-tiny", max_scramble=6, max_iterations=20)


def test_a_tiny_conv_run_trains_resumes_exports_and_solves(tmp_path):
    run = tmp_path / "run"
    first = DAVITrainer(LIGHTS, run)
    assert first.net_config.arch == "conv" and first.config.encoding == "grid"
    first.run()
    second = DAVITrainer(replace(LIGHTS, max_iterations=40), run, resume=True)
    assert second.counters.iteration == 20
    second.run()
    net = load_model(second.export(tmp_path / "model"))
    assert net.config == second.net_config and net.config.arch == "conv"
    p = make("lightsout7")
    h = make_heuristic(p, net)
    starts = p.scramble(np.random.default_rng(5), 3, 2)
    assert h(p.goals(2)).tolist() == [0.0, 0.0] and h(starts).shape == (3,)
    for r, s in zip(bwas(p, starts, h, weight=1.0, batch_size=50, max_nodes=100_000), starts, strict=True):
        assert r.solved and p.is_goal(p.apply_moves(s, r.actions)[None])[0]
    out = solve(p, starts[0], model=str(tmp_path / "model"), search="bwas", weight=1.0, batch=50)
    assert out.solved and out.status == "solved"  # the solver replays the solution

    # a new run from these weights keeps the network's shape, whatever the preset says
    third = DAVITrainer(replace(LIGHTS, preset="small", init_from=str(tmp_path / "model")), tmp_path / "more")
    assert third.net_config == net.config
    for k, v in net.state_dict().items():
        assert torch.equal(third.model.state_dict()[k], v)
    with pytest.raises(PuzzleError, match="its input size does not fit sokoban"):
        DAVITrainer(
            tiny_train_config(puzzle="sokoban", preset="conv-tiny", init_from=str(tmp_path / "model")),
            tmp_path / "bad",
        )


def test_cli_trains_a_conv_net_and_a_wrong_model_is_refused(tmp_path, capsys):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(replace(tiny_train_config(puzzle="sokoban"), max_scramble=4).to_json())
    argv = ["train", "sokoban", "--config", str(cfg), "--preset", "conv-tiny", "--out", str(tmp_path / "run")]
    assert main([*argv, "--set", "max_iterations=10", "--export", str(tmp_path / "model")]) == 0
    assert "finished: 10 iterations" in capsys.readouterr().out
    net = load_model(tmp_path / "model")
    assert (net.puzzle, net.config.arch, net.config.input_shape) == ("sokoban", "conv", (4, 10, 10))
    with pytest.raises(ModelFileError, match="this model was trained for 'sokoban', not 'lightsout7'"):
        make_heuristic(make("lightsout7"), net)


def test_a_conv_model_exports_to_onnx_and_solves_there(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    from puzzlezero.onnx import export_onnx, load_onnx

    p = make("sokoban")
    net = build_model(conv_config("sokoban", q_head=True), seed=2).eval()
    net.puzzle = "sokoban"
    path = export_onnx(net, tmp_path / "sokoban.onnx")  # checks onnxruntime against PyTorch itself
    model = load_onnx(path)
    assert (model.encoding, model.input_dim) == ("grid", 400)
    states = p.scramble(np.random.default_rng(0), 10, (1, 20))
    with torch.no_grad():
        want = net(torch.from_numpy(p.encode(states, "grid"))).numpy()
    np.testing.assert_allclose(model.predict(p, states), want, rtol=1e-4, atol=1e-4)
