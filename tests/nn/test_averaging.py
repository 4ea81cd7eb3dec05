"""Checkpoint averaging (puzzlezero.nn.averaging, ``puzzlezero average``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.nn import NetConfig, build_model, load_model, save_model
from puzzlezero.nn.averaging import average_models
from puzzlezero.puzzles import inputs

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _model(tmp_path, name, seed, samples, h1=None):
    """A tiny cube2 network with weights and batch-norm statistics of its own (``seed``)."""
    puzzle = make("cube2")
    cfg = NetConfig.from_preset("tiny", input_dim=inputs.dim(puzzle), num_actions=puzzle.num_actions)
    if h1 is not None:
        cfg = NetConfig.from_dict({**cfg.to_dict(), "h1": h1})
    net = build_model(cfg, seed=seed)
    net.train()
    states = puzzle.scramble(np.random.default_rng(seed), 64, (1, 8))
    for _ in range(seed + 1):  # a different number of batch-norm updates each
        net(torch.from_numpy(puzzle.encode(states)))
    card = {"samples_seen_total": samples, "recipe": f"run {seed}"}
    return save_model(tmp_path / name, net.eval(), puzzle="cube2", card=card)


def test_the_average_is_the_mean_of_every_weight_and_statistic(tmp_path):
    folders = [_model(tmp_path, f"m{i}", seed=i, samples=1000 * (i + 1)) for i in range(3)]
    states = [load_model(f).state_dict() for f in folders]
    mean = average_models(folders)
    got = mean.state_dict()
    floats = [k for k, v in got.items() if v.is_floating_point()]
    assert any("running_mean" in k for k in floats) and any("weight" in k for k in floats)
    for name in floats:
        by_hand = (states[0][name] + states[1][name] + states[2][name]) / 3
        torch.testing.assert_close(got[name], by_hand)
    counters = [k for k, v in got.items() if not v.is_floating_point()]
    assert counters and all(torch.equal(got[k], states[2][k]) for k in counters)  # the last model's
    assert mean.card["recipe"] == "run 2" and not mean.training
    assert [e["samples_seen_total"] for e in mean.card["averaged_from"]] == [1000, 2000, 3000]
    assert "3 models" in mean.card["weights"]


def test_averaging_a_model_with_itself_changes_nothing(tmp_path):
    folder = _model(tmp_path, "m", seed=4, samples=10)
    net, mean = load_model(folder), average_models([folder, folder])
    x = torch.from_numpy(make("cube2").encode(make("cube2").scramble(np.random.default_rng(0), 16, (1, 8))))
    with torch.inference_mode():
        torch.testing.assert_close(mean(x), net(x))


def test_models_that_cannot_be_averaged_get_specific_errors(tmp_path):
    a = _model(tmp_path, "a", seed=0, samples=1)
    with pytest.raises(PuzzleError, match="at least two models"):
        average_models([a])
    wider = _model(tmp_path, "wide", seed=1, samples=1, h1=40)
    with pytest.raises(PuzzleError, match="different networks.*h1"):
        average_models([a, wider])
    other = load_model(a)
    save_model(tmp_path / "other", other, puzzle="cube3", card={})
    with pytest.raises(PuzzleError, match="one puzzle"):
        average_models([a, tmp_path / "other"])


def test_the_average_command_writes_a_model_folder(tmp_path, capsys):
    a = _model(tmp_path, "a", seed=0, samples=5)
    b = _model(tmp_path, "b", seed=1, samples=6)
    assert main(["average", str(tmp_path / "out"), str(a), str(b)]) == 0
    assert "the mean of 2 models" in capsys.readouterr().out
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert [e["model"] for e in card["averaged_from"]] == [str(a), str(b)]
    assert main(["average", str(tmp_path / "out2"), str(a)]) != 0
    assert "at least two models" in capsys.readouterr().err
    assert not (tmp_path / "out2").exists()
