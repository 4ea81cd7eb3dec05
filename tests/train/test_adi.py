"""Autodidactic iteration (McAleer et al.; Agarwal's re-implementation): labels equal hand-computed
ones, the policy head learns the optimal move on cube2, training resumes exactly, and the policy
function serves searches."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.errors import ModelFileError
from puzzlezero.nn import load_model, make_heuristic, make_policy, save_model
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.train import Trainer
from puzzlezero.train.objectives import get_objective
from puzzlezero.train.objectives.adi import adi_targets
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = tiny_train_config(objective="adi", target_update="period")


def _exact(states: np.ndarray) -> np.ndarray:
    return distance(states).astype(np.float32)


def test_adi_rows_are_the_best_child_its_move_and_one_over_depth():
    puzzle = make("puzzle8")
    rng = np.random.default_rng(0)
    depths = np.array([1, 2, 3, 5, 8, 13])
    states = puzzle.scramble(rng, len(depths), depths)
    value = lambda s: s[:, 0].astype(np.float32) + 0.5  # noqa: E731  any values >= 0 will do
    rows = adi_targets(puzzle, value, states, depths)
    assert rows.shape == (6, 3) and rows.dtype == np.float32
    for s, (y, a, w), d in zip(states, rows, depths, strict=True):
        kids = puzzle.expand(s[None])[0]
        options = {
            i: 1.0 + (0.0 if puzzle.is_goal(c[None])[0] else value(c[None])[0])
            for i, c in enumerate(kids)
            if not np.array_equal(c, s)  # a tile against the border: never a target
        }
        best = min(options, key=lambda i: (options[i], i))
        want = 0.0 if puzzle.is_goal(s[None])[0] else options[best]
        assert y == np.float32(want) and int(a) == best and w == np.float32(1.0 / d)


def test_adi_objective_draws_depths_and_labels_them():
    puzzle = make("cube2")
    cfg = replace(TINY, inference_batch=256)
    states, rows = get_objective("adi").make(puzzle, np.random.default_rng(1), 300, 6, _exact, cfg)
    assert states.shape == (300, *puzzle.state_shape) and rows.shape == (300, 3)
    # with exact values the value target is the exact distance and the move leads one step closer
    assert np.array_equal(rows[:, 0], _exact(states))
    off = ~puzzle.is_goal(states)
    after = puzzle.apply(states[off], rows[off, 1].astype(np.int64))
    assert np.array_equal(_exact(after), rows[off, 0] - 1)
    # weights are 1/D for depths D in 1..6, and an upper bound on 1/distance
    assert set(np.round(1 / rows[:, 2]).astype(int)) <= set(range(1, 7))
    assert (rows[off, 2] <= 1.0 / rows[off, 0] + 1e-6).all()


def test_adi_trains_a_policy_that_picks_optimal_moves_on_cube2(tmp_path):
    puzzle = make("cube2")
    cfg = replace(TINY, preset="small", h1=200, h2=100, batch_size=200, max_scramble=4, max_iterations=200)
    t = Trainer(cfg, tmp_path / "run")
    assert t.model.policy is not None and t.model.q is None
    rng = np.random.default_rng(7)
    states = puzzle.scramble(rng, 400, (1, 4))
    states = states[~puzzle.is_goal(states)]

    def optimal_share() -> float:
        policy = make_policy(puzzle, t.model, source="policy")(states)
        moved = puzzle.apply(states, policy.argmax(axis=1))
        return float((_exact(moved) == _exact(states) - 1).mean())

    before = optimal_share()
    t.run()
    after = optimal_share()
    assert after > 0.8 and after > before + 0.3, (before, after)
    v = make_heuristic(puzzle, t.model)(states)
    assert np.abs(v - _exact(states)).mean() < 0.6


def test_adi_resumes_bit_identically(tmp_path):
    full = Trainer(replace(TINY, max_iterations=40), tmp_path / "full")
    full.run()
    cut = Trainer(replace(TINY, max_iterations=20), tmp_path / "cut")
    cut.run()
    cut.append_log(cut.train_chunk())  # work past the checkpoint that a kill throws away
    del cut
    again = Trainer(replace(TINY, max_iterations=40), tmp_path / "cut", resume=True)
    again.run()
    for a, b in ((full.model, again.model), (full.target, again.target)):
        sa, sb = a.state_dict(), b.state_dict()
        assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_the_policy_head_serves_searches_after_save_and_load(tmp_path):
    puzzle = make("puzzle8")
    t = Trainer(replace(TINY, puzzle="puzzle8", max_iterations=10), tmp_path / "run")
    t.run()
    save_model(tmp_path / "model", t.model, puzzle="puzzle8")
    model = load_model(tmp_path / "model")
    assert model.policy is not None
    states = puzzle.scramble(np.random.default_rng(2), 50, (1, 10))
    p = make_policy(puzzle, model)(states)  # "auto" reads the policy head first
    assert p.shape == (50, 4) and np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    with pytest.raises(ModelFileError, match="no policy head"):
        make_policy(make("cube3"), load_model("cube3"), source="policy")
