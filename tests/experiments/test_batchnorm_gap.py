"""experiments/batchnorm_gap.py: a network's inference output against its training-mode output."""

from __future__ import annotations

import re

import pytest

from tests.conftest import load_script


@pytest.fixture(scope="module")
def gap():
    return load_script("experiments/batchnorm_gap.py")


def _numbers(out: str) -> list[float]:
    line = next(x for x in out.splitlines() if x.startswith("inference minus training mode"))
    return [float(v) for v in re.findall(r"[+-]\d+\.\d+", line)]


def test_the_gap_is_reported_over_all_states_and_each_kind(gap, capsys):
    assert gap.main(["puzzle15", "--batches", "3", "--batch", "500"]) == 0
    total, scrambles = _numbers(capsys.readouterr().out)
    assert total == scrambles  # scrambles only
    assert abs(total) < 5.0  # the shipped network on the states it was trained on: modes near agree
    assert gap.main(["puzzle15", "--batches", "3", "--batch", "500", "--share", "0.5", "--steps", "40"]) == 0
    total, scrambles, descents = _numbers(capsys.readouterr().out)
    assert min(scrambles, descents) <= total <= max(scrambles, descents)  # half of each: between


def test_bad_input_is_a_message(gap, capsys):
    assert gap.main(["puzzle15", "--model", "no/such/folder"]) == 2
    assert "no such model folder" in capsys.readouterr().err
    assert gap.main(["puzzle15", "--share", "1"]) == 2
    assert "descent_share < 1" in capsys.readouterr().err
    assert gap.main(["puzzle15", "--steps", "4", "--stride", "5"]) == 2
    assert "descent_stride <= descent_steps" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        gap.main(["puzzle15", "--batch", "0"])
