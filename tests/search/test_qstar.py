"""The Q head and Q* search: Q-learning targets equal hand-computed ones, training lowers the Q
head's error against exact cube2 distances, Q* with a value heuristic's Q function searches exactly
as BWAS does, one Q call per expansion, limits, and the solver's names."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn import build_model, make_heuristic, make_q_function
from puzzlezero.nn.config import NetConfig
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.search import SearchStats, bwas
from puzzlezero.search.qstar import q_from_value, qstar
from puzzlezero.solver import solve_many, verify
from puzzlezero.train import Trainer, one_step_targets
from puzzlezero.train.evaluate import make_eval_set
from puzzlezero.train.objectives import get_objective, target_head
from puzzlezero.train.objectives.qlearning import q_targets
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = tiny_train_config()


def exact_cube2(states: np.ndarray) -> np.ndarray:
    return distance(states).astype(np.float32)


# ---- Q-learning targets ---------------------------------------------------------------------------
def test_q_targets_equal_hand_computed_ones_on_puzzle8():
    """cost + value(child) per action, cost where the child is the goal, NaN for a tile pushed
    against the border (the state does not change)."""
    p = make("puzzle8")
    rng = np.random.default_rng(1)
    states = p.scramble(rng, 40, (1, 6))
    value = lambda s: (s != p.goal()).sum(axis=1).astype(np.float32)  # noqa: E731  (any values >= 0)
    q = q_targets(p, value, states, chunk=18)
    assert q.shape == (40, p.num_actions)
    for s, row in zip(states, q, strict=True):
        for a, child in enumerate(p.expand(s[None])[0]):
            if np.array_equal(child, s):
                assert np.isnan(row[a])
            elif p.is_goal(child[None])[0]:
                assert row[a] == 1.0
            else:
                assert row[a] == 1.0 + value(child[None])[0]


def test_q_targets_with_exact_values_are_exact_and_their_minimum_is_davis_target():
    p = make("cube2")
    states = p.scramble(np.random.default_rng(2), 300, (1, 10))
    q = q_targets(p, exact_cube2, states, chunk=120)
    children = p.expand(states).reshape(-1, *p.state_shape)
    assert np.array_equal(q.ravel(), 1.0 + exact_cube2(children))
    davi = one_step_targets(p, exact_cube2, states)
    goal = p.is_goal(states)
    assert np.array_equal(q.min(axis=1)[~goal], davi[~goal])
    assert np.array_equal(q.min(axis=1)[~goal], exact_cube2(states)[~goal])


def test_qlearning_is_registered_for_the_q_head():
    assert get_objective("qlearning").head == "q"
    assert target_head(replace(TINY, objective="qlearning")) == "value"  # the stable default
    assert target_head(replace(TINY, objective="qlearning", q_bootstrap="qmin")) == "qmin"
    assert target_head(replace(TINY, q_bootstrap="qmin")) == "value"  # DAVI has no Q head


# ---- the network's Q head ---------------------------------------------------------------------------
def test_a_q_head_starts_as_the_value_plus_one_move():
    cfg = NetConfig(input_dim=144, h1=32, h2=16, num_res_blocks=1, num_actions=12, q_head=True)
    net = build_model(cfg, seed=0).eval()
    net.init_q_from_value(1.0)
    x = torch.rand(5, 144)
    out = net(x, all_heads=True)
    assert torch.allclose(out["q"], out["value"][:, None] + 1.0, atol=1e-6)


def test_training_with_qlearning_lowers_the_q_heads_error_against_exact_distances(tmp_path):
    p = make("cube2")
    es = make_eval_set(p, (1, 2, 3, 4, 5), 60, seed=5)
    cfg = replace(TINY, preset="small", h1=200, h2=100, batch_size=200, max_scramble=6, max_iterations=160)
    t = Trainer(replace(cfg, objective="qlearning", target_update="period"), tmp_path / "run")
    assert t.model.q is not None

    def q_mae() -> float:
        q = make_q_function(p, t.model)(es.states)  # [M, A]: cost + J(child) for each action
        children = p.expand(es.states).reshape(-1, *p.state_shape)
        return float(np.abs(q.ravel() - (1.0 + exact_cube2(children))).mean())

    before = q_mae()
    t.run()
    after = q_mae()
    assert after < 0.6 * before and after < 1.2, (before, after)
    # the value head learned the minimum of the Q targets beside it
    v_err = np.abs(make_heuristic(p, t.model)(es.states) - es.true_cost).mean()
    assert v_err < 1.2


def test_init_from_a_value_model_adds_a_q_head_started_from_the_value(tmp_path):
    base = Trainer(replace(TINY, max_iterations=20), tmp_path / "a")
    base.run()
    base.export(tmp_path / "m")
    t = Trainer(replace(TINY, objective="qlearning", init_from=str(tmp_path / "m")), tmp_path / "b")
    x = torch.from_numpy(
        make("cube2").encode(make("cube2").scramble(np.random.default_rng(0), 4, 5), "onehot")
    )
    out = t.model.eval()(x, all_heads=True)
    assert torch.allclose(out["q"], out["value"][:, None] + 1.0, atol=1e-5)
    assert torch.equal(out["value"], base.model.eval()(x))


def test_a_model_without_a_q_head_is_refused_by_q_search_with_a_way_out(tmp_path):
    Trainer(replace(TINY, max_iterations=10), tmp_path / "a").export(tmp_path / "m")
    with pytest.raises(ModelFileError, match="no Q head.*objective=qlearning"):
        solve_many("cube2", ["R U"], search="qstar", model=str(tmp_path / "m"))


# ---- Q* search ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("weight", [1.0, 0.4])
def test_qstar_with_a_value_heuristics_q_searches_exactly_as_bwas(weight):
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(3), 6, (6, 11))
    kw = dict(weight=weight, batch_size=10, max_nodes=200_000)
    assert qstar(p, starts, q_from_value(p, exact_cube2), **kw) == bwas(p, starts, exact_cube2, **kw)


def test_qstar_is_optimal_with_an_exact_q_and_weight_one():
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(4), 8, (8, 12))
    results = qstar(p, starts, q_from_value(p, exact_cube2), weight=1.0, batch_size=5)
    assert [r.length for r in results] == exact_cube2(starts).astype(int).tolist()
    assert verify(p, starts, [r.actions for r in results]).all()


def test_qstar_calls_the_q_function_once_per_expansion_on_the_expanded_nodes():
    p = make("cube2")
    seen: list[int] = []
    inner = q_from_value(p, exact_cube2)

    def q(states: np.ndarray) -> np.ndarray:
        seen.append(states.shape[0])
        return inner(states)

    stats = SearchStats()
    (r,) = qstar(p, p.scramble(np.random.default_rng(5), 1, 9), q, weight=0.6, batch_size=4, stats=stats)
    assert r.solved and len(seen) == stats.heuristic_calls
    # each call covers at most the N nodes popped in that iteration (those with new children)
    assert max(seen) <= 4 and sum(seen) == stats.heuristic_states <= stats.nodes_expanded


def test_qstar_limits_and_bad_q_functions():
    p = make("cube2")
    start = p.scramble(np.random.default_rng(6), 1, 11)
    zero_q = lambda s: np.ones((s.shape[0], p.num_actions), np.float32)  # noqa: E731
    (r,) = qstar(p, start, zero_q, batch_size=10, max_nodes=500)
    assert r.status == "node limit" and r.nodes_generated <= 500
    (r,) = qstar(p, p.goals(1), zero_q)
    assert r.solved and r.actions == ()
    with pytest.raises(PuzzleError, match="shape"):
        qstar(p, start, lambda s: np.ones(s.shape[0], np.float32))
    with pytest.raises(PuzzleError, match="NaN"):
        qstar(p, start, lambda s: np.full((s.shape[0], p.num_actions), np.nan, np.float32))


def test_solver_runs_qstar_by_name_with_any_value_heuristic():
    """``--search qstar --heuristic pdb``: the value heuristic is adapted into a Q function."""
    (r,) = solve_many("puzzle8", ["8 6 7 2 5 4 3 0 1"], search="qstar", heuristic="pdb", weight=1.0, batch=10)
    assert r.solved and r.length == 31 and r.search == "qstar"
