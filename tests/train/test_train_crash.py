"""Training runs that meet real faults: SIGKILL at random points and in the middle of a checkpoint
write, a full disk (RLIMIT_FSIZE), a second process on the same run folder, and a resume with
another configuration or package version. Each fault happens to a real ``puzzlezero train``
process (tests/train/crash_train.py injects the mid-write death); the runs are cube2 with the tiny net,
a few seconds each."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import puzzlezero.train.trainer as trainer_module
from puzzlezero.cli.main import main
from puzzlezero.errors import CheckpointMismatchError, FileBusyError
from puzzlezero.storage import lock_folder
from puzzlezero.train import Trainer
from puzzlezero.train.checkpoint import load_checkpoint
from tests.clock import until
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CFG = tiny_train_config(checkpoint_every=10, max_iterations=60)
HERE = Path(__file__).parent
CRASH = [sys.executable, str(HERE / "crash_train.py")]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONHASHSEED": "0"}


def _train_argv(run: Path, cfg_file: Path | None = None, *more: str) -> list[str]:
    argv = ["train", "cube2", "--out", str(run)]
    return argv + (["--config", str(cfg_file)] if cfg_file else ["--resume"]) + list(more)


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _train_lines(run: Path) -> list[dict]:
    drop = ("wall_seconds", "samples_per_s", "eval_seconds")
    lines = (run / "log.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in drop} for line in lines]


def _logged_iteration(run: Path) -> int:
    """The last training iteration in the run's log (0 before any)."""
    try:
        lines = (run / "log.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return 0
    iterations = [json.loads(line).get("iteration", 0) for line in lines if line.strip().endswith("}")]
    return max(iterations, default=0)


def _temps(run: Path) -> list[str]:
    return sorted(p.name for p in run.iterdir() if ".pz-" in p.name)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The run left alone: its final checkpoint and log."""
    torch.set_num_threads(1)
    run = tmp_path_factory.mktemp("ref") / "run"
    Trainer(CFG, run).run()
    return run


@pytest.fixture
def cfg_file(tmp_path) -> Path:
    path = tmp_path / "cfg.json"
    path.write_text(CFG.to_json())
    return path


def test_sigkill_in_a_checkpoint_write_and_at_a_random_point_then_resume_is_bit_identical(
    tmp_path, cfg_file, reference
):
    run = tmp_path / "run"
    # 1. the third checkpoint write (iteration 20) dies half written, by SIGKILL
    died = subprocess.run(
        [*CRASH, "--die-in-checkpoint", "3", "--", *_train_argv(run, cfg_file)],
        capture_output=True, text=True, timeout=180, env=_env(),
    )  # fmt: skip
    assert died.returncode == -signal.SIGKILL, died.stderr
    assert len(_temps(run)) == 1 and _temps(run)[0].startswith(".checkpoint.pt.pz-")  # the half file
    assert load_checkpoint(run / "checkpoint.pt").counters.iteration == 10  # the last one is intact

    # 2. a resume killed while it runs, once its log has reached a random iteration: killed for
    # certain, not finished before the kill (a fast machine would otherwise escape it)
    target = int(np.random.default_rng().choice([20, 30, 40]))  # at least 20 iterations before its end
    proc = subprocess.Popen([*CRASH, "--", *_train_argv(run)], stderr=subprocess.DEVNULL, env=_env())
    until(lambda: proc.poll() is not None or _logged_iteration(run) >= target, 120)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL, "the resumed run ended before it could be killed"
    assert load_checkpoint(run / "checkpoint.pt").counters.iteration in range(10, 61, 10)

    # 3. resumed to the end: the same weights, bit for bit, and the same log as the run left alone
    done = subprocess.run(
        [*CRASH, "--", *_train_argv(run)], capture_output=True, text=True, timeout=180, env=_env()
    )
    assert done.returncode == 0, done.stderr
    assert _temps(run) == []  # what the killed writers left is gone
    final, ref = load_checkpoint(run / "checkpoint.pt"), load_checkpoint(reference / "checkpoint.pt")
    assert final.counters.iteration == ref.counters.iteration == 60
    assert _same(final.model, ref.model) and _same(final.target, ref.target)
    assert _train_lines(run) == _train_lines(reference)


@pytest.mark.slow
def test_five_random_sigkills_then_resume_is_bit_identical(tmp_path, cfg_file, reference):
    run = tmp_path / "run"
    rng = np.random.default_rng()
    for attempt in range(6):
        # killed before its first checkpoint, a run is started again; after it, resumed
        argv = _train_argv(run) if (run / "checkpoint.pt").exists() else _train_argv(run, cfg_file)
        hook = ["--die-in-checkpoint", str(int(rng.integers(1, 5)))] if attempt % 2 else []
        proc = subprocess.Popen([*CRASH, *hook, "--", *argv], stderr=subprocess.DEVNULL, env=_env())
        try:
            proc.wait(timeout=float(rng.uniform(2.0, 8.0)))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    done = subprocess.run(
        [*CRASH, "--", *_train_argv(run)], capture_output=True, text=True, timeout=180, env=_env()
    )
    assert done.returncode == 0, done.stderr
    assert _temps(run) == []
    final, ref = load_checkpoint(run / "checkpoint.pt"), load_checkpoint(reference / "checkpoint.pt")
    assert _same(final.model, ref.model) and _same(final.target, ref.target)
    assert _train_lines(run) == _train_lines(reference)


def test_full_disk_is_a_named_error_and_the_last_checkpoint_stays_loadable(tmp_path, reference):
    run = tmp_path / "run"
    Trainer(replace(CFG, max_iterations=20), run).run()
    before = (run / "checkpoint.pt").read_bytes()
    assert len(before) > 100_000  # the limit below is below one checkpoint, above the log and config

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    full = subprocess.run(
        [*CRASH, "--", *_train_argv(run, None, "--set", "max_iterations=60")],
        capture_output=True, text=True, timeout=180, env=_env(), preexec_fn=small_disk,
    )  # fmt: skip
    assert full.returncode == 2, full.stderr
    assert "Traceback" not in full.stderr
    error = full.stderr.strip().splitlines()[-1]
    assert error.startswith("error: ") and "checkpoint.pt: cannot write it: File too large" in error
    assert "the previous checkpoint.pt is intact" in error
    assert (run / "checkpoint.pt").read_bytes() == before and _temps(run) == []
    assert load_checkpoint(run / "checkpoint.pt").counters.iteration == 20
    # with room again, the run resumes from there and ends as the run left alone
    resumed = Trainer(CFG, run, resume=True)
    resumed.run()
    assert _same(resumed.model.state_dict(), load_checkpoint(reference / "checkpoint.pt").model)


def test_a_second_train_on_a_busy_run_folder_fails_at_once_naming_the_holder(tmp_path, cfg_file, capsys):
    run = tmp_path / "run"
    first = subprocess.Popen(
        [sys.executable, "-m", "puzzlezero", *_train_argv(run, cfg_file, "--set", "max_iterations=100000")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(),
    )  # fmt: skip
    try:

        def started() -> bool:  # its checkpoint is written at iteration 0, under the lock
            if (run / "checkpoint.pt").exists():
                return True
            assert first.poll() is None, "the first run ended before it started"
            return False

        until(started, 120, "the first run's start", every=0.1)
        for argv in (_train_argv(run, None, "--max-minutes", "1"), _train_argv(run, cfg_file)):
            assert main(argv) == 2
            err = capsys.readouterr().err
            assert err.startswith(f"error: {run} is in use: pid {first.pid} holds its lock"), err
        with pytest.raises(FileBusyError, match=f"pid {first.pid}"):
            Trainer(CFG, run, resume=True)
    finally:
        first.send_signal(signal.SIGTERM)  # stops at the end of its chunk, with a checkpoint
        first.wait(timeout=120)
        first.stderr.close()  # type: ignore[union-attr]
    assert first.returncode == 0
    lock_folder(run).release()  # free again once the first run has ended


def test_a_checkpoint_refuses_another_configuration_or_version_by_name(tmp_path, monkeypatch):
    run = tmp_path / "run"
    Trainer(replace(CFG, max_iterations=10), run).run()
    other = tmp_path / "other"
    Trainer(replace(CFG, max_iterations=10, lr=0.5, seed=7), other).run()
    (run / "config.json").write_text((other / "config.json").read_text())  # config.json of another run
    with pytest.raises(
        CheckpointMismatchError, match=r"another configuration \(lr: 0\.001 -> 0\.5, seed: 0 -> 7\)"
    ):
        Trainer(replace(CFG, max_iterations=20, lr=0.5, seed=7), run, resume=True)
    assert not (run / ".lock").exists() or lock_folder(run).release() is None  # the refusal let go

    Trainer(replace(CFG, max_iterations=10), run := tmp_path / "run2").run()
    written = trainer_module.__version__
    monkeypatch.setattr(trainer_module, "__version__", "99.0")
    with pytest.raises(
        CheckpointMismatchError, match=rf"written by puzzlezero {re.escape(written)}, and this is 99\.0"
    ):
        Trainer(replace(CFG, max_iterations=20), run, resume=True)
    # reading a run (export, evaluate) is not training it: another version may
    assert Trainer.from_run(run).counters.iteration == 10
    # limits may change on resume, as before
    monkeypatch.setattr(trainer_module, "__version__", written)
    resumed = Trainer(replace(CFG, max_iterations=20, checkpoint_every=5), run, resume=True)
    assert resumed.run()["iteration"] == 20
