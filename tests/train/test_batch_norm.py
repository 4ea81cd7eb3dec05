"""``batch_norm="frozen"``: training steps use the batch-norm layers' running statistics, so the
function trained is the one the target network and searches evaluate."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero.errors import PuzzleError
from puzzlezero.nn.heuristic import encode_rows
from puzzlezero.train.trainer import Trainer
from tests.conftest import tiny_train_config

TINY = tiny_train_config(max_iterations=20)


def _norms(model: torch.nn.Module) -> list[torch.nn.modules.batchnorm._BatchNorm]:
    return [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


def _snapshot(model: torch.nn.Module) -> list[dict[str, torch.Tensor]]:
    return [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in _norms(model)]


@pytest.mark.parametrize("mode", ["batch", "frozen"])
def test_frozen_statistics_stay_and_their_scale_and_shift_still_learn(tmp_path, mode):
    t = Trainer(replace(TINY, batch_norm=mode), tmp_path / mode)
    assert _norms(t.model), "the tiny network has batch-norm layers"
    before = _snapshot(t.model)
    t.train_chunk()
    after = _snapshot(t.model)
    stats_moved = any(
        not torch.equal(b[k], a[k])
        for b, a in zip(before, after, strict=True)
        for k in ("running_mean", "running_var")
    )
    affine_moved = any(
        not torch.equal(b[k], a[k]) for b, a in zip(before, after, strict=True) for k in ("weight", "bias")
    )
    assert affine_moved
    assert stats_moved == (mode == "batch")
    # in training steps the layers run as in inference (frozen) or on batch statistics (batch)
    assert all(m.training == (mode == "batch") for m in _norms(t.model))
    t.close()


def test_a_frozen_step_fits_the_inference_function(tmp_path):
    """With frozen statistics the output a step trains is the eval-mode output, bit for bit."""
    t = Trainer(replace(TINY, batch_norm="frozen"), tmp_path / "run")
    t.train_chunk()  # leaves the model as a training step runs it
    x = torch.from_numpy(encode_rows(t.puzzle, t.puzzle.scramble(np.random.default_rng(0), 64, 6)))
    with torch.no_grad():
        stepping = t.model(x)
        t.model.eval()
        inference = t.model(x)
    assert torch.equal(stepping, inference)
    t.close()


def test_an_unknown_mode_is_refused():
    with pytest.raises(PuzzleError, match="batch_norm must be one of"):
        replace(TINY, batch_norm="group")
