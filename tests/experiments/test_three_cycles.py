"""experiments/three_cycles.py: boards one 3-cycle from the goal, and the shipped networks' values of them."""

from __future__ import annotations

import re

import numpy as np
import pytest

from puzzlezero import make
from tests.conftest import load_script


@pytest.fixture(scope="module")
def probe():
    return load_script("experiments/three_cycles.py")


def test_boards_are_solvable_three_cycles_with_the_blank_home(probe):
    p = make("puzzle24")
    goal = p.goal().reshape(-1)
    boards = probe.three_cycle_boards(goal, goal.size - 1, 200, np.random.default_rng(1))
    assert p.solvable(boards).all()
    assert ((boards != goal).sum(axis=1) == 3).all()  # exactly three tiles off, none of them the blank
    assert (boards[:, -1] == 0).all()
    assert (np.sort(boards, axis=1) == np.sort(goal)).all()  # the same tiles, permuted


def test_shipped_puzzle15_network_prices_the_cycles_above_their_manhattan_distance(probe, capsys):
    assert probe.main(["puzzle15", "--n", "100"]) == 0
    out = capsys.readouterr().out
    ratio = float(re.search(r"value / Manhattan ([\d.]+)", out).group(1))
    below = int(re.search(r"below the Manhattan distance: (\d+)%", out).group(1))
    # a 3-cycle costs several moves per cell of displacement; a network with holes gives < 1
    assert ratio > 2.0 and below == 0


def test_a_puzzle_without_manhattan_distance_is_refused(probe, capsys):
    assert probe.main(["cube2"]) == 2
    assert "not a sliding puzzle" in capsys.readouterr().err
