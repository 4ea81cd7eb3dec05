"""experiments/descent_probe.py: where greedy descents under a network go, and how it values them."""

from __future__ import annotations

import re

import pytest

from tests.conftest import load_script


@pytest.fixture(scope="module")
def probe():
    return load_script("experiments/descent_probe.py")


def test_shipped_puzzle15_network_has_no_holes_on_its_descents(probe, capsys):
    assert probe.main(["puzzle15", "--steps", "40", "--walkers", "20"]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\s*(\d+) \|\s+([\d.]+) \|\s+([\d.]+) \| (\d+)%$", out, flags=re.M)
    assert [int(r[0]) for r in rows] == [0, 10, 20, 30, 39]
    first, last = rows[0], rows[-1]
    assert float(last[1]) < float(first[1])  # the walks go downhill in value
    share = float(re.search(r"all descent states valued below Manhattan: ([\d.]+)%", out).group(1))
    assert share < 15.0  # the shipped 15-puzzle model: a few near-goal states a fraction of a move low


def test_bad_input_is_a_message(probe, capsys):
    assert probe.main(["cube2"]) == 2
    assert "not a sliding puzzle" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        probe.main(["puzzle15", "--steps", "0"])
