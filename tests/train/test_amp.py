"""bfloat16 autocast for training (TrainConfig.amp): off changes nothing, bf16 runs (on CPU too)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.nn import load_model, make_heuristic
from puzzlezero.train import TrainConfig, Trainer
from puzzlezero.train.amp import autocast, with_autocast
from tests.conftest import tiny_train_config

TINY = tiny_train_config(check_every=10)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_amp_setting_is_checked():
    assert TrainConfig(puzzle="cube2").amp == "off"
    with pytest.raises(PuzzleError, match=r"amp must be one of \('off', 'bf16'\), got 'fp16'"):
        replace(TINY, amp="fp16")


def test_amp_off_is_plain_float32():
    cpu = torch.device("cpu")
    fn = np.negative
    assert with_autocast(fn, "off", cpu) is fn
    with autocast("off", cpu):
        assert not torch.is_autocast_enabled("cpu")
    with autocast("bf16", cpu):
        assert torch.is_autocast_enabled("cpu")


def test_bf16_value_function_is_close_to_float32():
    puzzle = make("cube2")
    h = make_heuristic(puzzle, load_model("cube2"))
    states = puzzle.scramble(np.random.default_rng(0), 200, (1, 11))
    exact, bf16 = h(states), with_autocast(h, "bf16", torch.device("cpu"))(states)
    assert bf16.dtype == np.float32 and np.abs(bf16 - exact).mean() < 0.1


def test_bf16_training_runs_on_cpu_with_a_warning_and_may_be_switched_on_resume(tmp_path):
    with pytest.warns(UserWarning, match="usually slower than float32 on a CPU"):
        trainer = Trainer(replace(TINY, amp="bf16", max_iterations=20), tmp_path / "run")
    summary = trainer.run()
    assert summary["iteration"] == 20 and math.isfinite(summary["loss"])
    resumed = Trainer(replace(TINY, amp="off", max_iterations=30), tmp_path / "run", resume=True)
    assert resumed.run()["iteration"] == 30
