"""scripts/train_gpu.sh: its help is its head comment, printed whole when the arguments are wrong."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train_gpu.sh"


@pytest.mark.parametrize("args", [[], ["cube3"], ["cube3", "runs/x", "10", "5", "extra"]])
def test_wrong_arguments_print_the_whole_head_comment(args):
    run = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    help_text = run.stderr
    head = SCRIPT.read_text().splitlines()[1:]
    comment_lines = next(i for i, line in enumerate(head) if not line.startswith("#"))
    assert help_text.count("\n") == comment_lines
    assert help_text.startswith("Train on a CUDA machine")
    for setting in ("DEVICE=", "LABEL_WORKERS=", "INIT_FROM=", "lr_decay is per iteration", "Example:"):
        assert setting in help_text
    assert not any(line.startswith("#") for line in help_text.splitlines())  # the marks are gone
