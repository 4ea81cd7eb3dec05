"""Rute's convolutional cube network: the sticker grid, its neighbourhoods checked by hand, the
history planes, model folders old and new, and a gradient step."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn import NetConfig, build_model, load_model, make_heuristic, save_model
from puzzlezero.nn.cube_conv import CubeConvNet, grid_coordinates, neighbour_indices
from puzzlezero.nn.heuristic import encode_rows, make_policy_value_function, missing_state
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.cube import FACES

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def sticker(name: str, n: int = 3) -> int:
    """Index of a facelet such as ``"U1"`` (cube2: numbered 1..4 row by row)."""
    return FACES.index(name[0]) * n * n + int(name[1:]) - 1


def real_neighbours(name: str, n: int = 3) -> set[str]:
    nb = neighbour_indices(n)[sticker(name, n)]
    names = [f"{f}{i + 1}" for f in FACES for i in range(n * n)]
    return {names[j] for j in nb if j < 6 * n * n}


def net(preset: str = "cubeconv-small", input_dim: int = 324, **kw) -> CubeConvNet:
    cfg = NetConfig.from_preset(preset, input_dim, num_actions=12, policy_head=True, **kw)
    return build_model(cfg, seed=0)


def test_the_stickers_fill_the_outer_shell_of_the_grid_once():
    for n in (2, 3):
        grid = grid_coordinates(n)
        assert grid.shape == (6 * n * n, 3)
        assert len({tuple(g) for g in grid.tolist()}) == 6 * n * n  # one sticker per cell
        outside = (grid == 0) | (grid == n + 1)
        assert (outside.sum(axis=1) == 1).all()  # exactly one coordinate on the shell
        assert grid.min() == 0 and grid.max() == n + 1


def test_neighbourhoods_checked_by_hand():
    nb = neighbour_indices(3)
    assert nb.shape == (54, 27) and (nb[:, 13] == np.arange(54)).all()  # the centre of the window
    # a face centre sees its own face only
    assert real_neighbours("U5") == {f"U{i}" for i in range(1, 10)}
    assert real_neighbours("F5") == {f"F{i}" for i in range(1, 10)}
    # the corner sticker U1 (at UBL) sees its corner of U, and the L and B stickers across the edges
    assert real_neighbours("U1") == {"U1", "U2", "U4", "U5", "L1", "L2", "B2", "B3"}
    # the edge sticker F2 (at UF) sees the top of F and the U stickers along that edge
    assert real_neighbours("F2") == {"F1", "F2", "F3", "F4", "F5", "F6", "U7", "U8", "U9"}
    # cube2: a 4x4x4 grid; U1 sees all of U and two stickers each of L and B
    assert real_neighbours("U1", 2) == {"U1", "U2", "U3", "U4", "L1", "L2", "B1", "B2"}
    # neighbourhoods are symmetric: i sees j iff j sees i
    pairs = {(i, int(j)) for i in range(54) for j in nb[i] if j < 54}
    assert all((j, i) in pairs for i, j in pairs)


def test_shapes_heads_and_parameter_count():
    big = net("cubeconv")
    assert big.config.arch == "cubeconv" and big.config.history == 8
    assert big.config.h2 == 64 and big.config.num_res_blocks == 4
    assert 1_000_000 < sum(p.numel() for p in big.parameters()) < 2_500_000  # under 10 MB of float32
    big.eval()
    out = big(torch.zeros(3, 8 * 324), all_heads=True)
    assert out["value"].shape == (3,) and out["policy"].shape == (3, 12)
    assert big(torch.zeros(3, 324)).shape == (3,)
    small2 = net(input_dim=144).eval()  # cube2
    assert small2(torch.zeros(5, 144), all_heads=True)["policy"].shape == (5, 12)
    with pytest.raises(PuzzleError, match="324 or 2592"):
        big(torch.zeros(2, 100))


def test_history_planes_matter_and_a_missing_past_is_zeros():
    cube = make("cube3")
    model = net().eval()
    rng = np.random.default_rng(0)
    s = cube.scramble(rng, 4, 10)
    hist = np.repeat(s[:, None], 8, axis=1)
    hist[:, 1:] = missing_state(s.dtype)
    x_alone = torch.from_numpy(encode_rows(cube, s))
    x_hist = torch.from_numpy(encode_rows(cube, hist))
    assert x_hist.shape == (4, 8 * 324) and (x_hist[:, 324:] == 0).all()
    with torch.no_grad():
        assert torch.equal(model(x_alone), model(x_hist))
        past = cube.scramble(rng, 4, 10)
        hist[:, 1] = past
        assert not torch.allclose(model(x_alone), model(torch.from_numpy(encode_rows(cube, hist))))


def test_save_load_round_trip_and_old_configs_still_load(tmp_path):
    cube = make("cube3")
    model = net()
    model.train()
    model(torch.randn(64, 324))  # move the batch-norm statistics off their defaults
    model.eval()
    save_model(tmp_path / "m", model, puzzle="cube3")
    cfg = json.loads((tmp_path / "m" / "config.json").read_text())
    assert cfg["net"]["arch"] == "cubeconv" and cfg["net"]["history"] == 8
    loaded = load_model(tmp_path / "m")
    assert isinstance(loaded, CubeConvNet)
    x = torch.from_numpy(cube.encode(cube.scramble(np.random.default_rng(1), 16, 20)))
    with torch.no_grad():
        assert torch.equal(model(x, all_heads=True)["policy"], loaded(x, all_heads=True)["policy"])
        assert torch.equal(model(x), loaded(x))
    h = make_heuristic(cube, loaded)(cube.goals(2))
    assert (h == 0).all()
    p, cost = make_policy_value_function(cube, loaded)(cube.scramble(np.random.default_rng(2), 3, 5))
    assert p.shape == (3, 12) and np.allclose(p.sum(axis=1), 1) and (cost >= 0).all()
    # a config.json written before arch and history existed is the fully connected network
    old = build_model(NetConfig.from_preset("tiny", 324))
    save_model(tmp_path / "old", old, puzzle="cube3")
    cfg = json.loads((tmp_path / "old" / "config.json").read_text())
    del cfg["net"]["arch"], cfg["net"]["history"]
    (tmp_path / "old" / "config.json").write_text(json.dumps(cfg))
    again = load_model(tmp_path / "old")
    assert again.config.arch == "mlp" and type(again).__name__ == "CostToGoNet"
    # a cube network config for a puzzle that is no cube is refused with the file named
    cfg = json.loads((tmp_path / "m" / "config.json").read_text())
    cfg["net"]["input_dim"] = 256
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelFileError, match="config.json.*cube"):
        load_model(tmp_path / "m")


def test_bad_configs_are_refused():
    with pytest.raises(PuzzleError, match="arch"):
        NetConfig(input_dim=324, arch="transformer")
    with pytest.raises(PuzzleError, match="history"):
        NetConfig(input_dim=324, history=4)  # fc takes one state
    with pytest.raises(PuzzleError, match="no Q head"):
        build_model(NetConfig.from_preset("cubeconv", 324, num_actions=12, q_head=True))
    with pytest.raises(PuzzleError, match="cube"):
        build_model(NetConfig.from_preset("cubeconv", inputs.dim(make("puzzle15"))))


def test_a_gradient_step_lowers_the_loss():
    torch.manual_seed(0)
    model = net(input_dim=144)
    cube = make("cube2")
    x = torch.from_numpy(cube.encode(cube.scramble(np.random.default_rng(3), 64, (1, 6))))
    y = torch.rand(64) * 6
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    losses = []
    for _ in range(5):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        assert all(p.grad is not None for p in model.trunk.parameters())
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
