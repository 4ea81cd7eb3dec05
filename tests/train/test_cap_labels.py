"""Labels capped by the known path of each scramble (TrainConfig.cap_labels): the path costs, the
capped targets of every objective that honours the option, the checks, and exact resume."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.cube import Cube3HTM
from puzzlezero.train import TrainConfig, Trainer
from puzzlezero.train.descents import training_states
from puzzlezero.train.objectives import (
    LabelJob,
    capping_objectives,
    get_objective,
    make_labels,
    target_value_fn,
)
from puzzlezero.train.objectives.path_costs import (
    cap_action_values,
    cap_values,
    scrambles_with_path_cost,
    training_states_with_path_cost,
)
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = tiny_train_config()


def _bfs_distances(puzzle, depth: int) -> dict[bytes, int]:
    """Exact distances of every state within ``depth`` moves of the goal."""
    frontier = puzzle.goals(1)
    seen = {frontier[0].tobytes(): 0}
    for d in range(1, depth + 1):
        children = puzzle.expand(frontier).reshape(-1, *puzzle.state_shape)
        new = [c for c in children if c.tobytes() not in seen]
        for c in new:
            seen.setdefault(c.tobytes(), d)
        frontier = np.unique(np.array(new), axis=0) if new else frontier[:0]
    return seen


def _constant_net(trainer: Trainer, value: float) -> torch.nn.Module:
    """The trainer's target network with its value (and Q) outputs set to ``value`` for every state."""
    net = trainer.target
    with torch.no_grad():
        for head in (net.value, net.q):
            if head is not None:
                head.weight.zero_()
                head.bias.fill_(value)
    return net


# ---- the path costs --------------------------------------------------------------------------------
class _Recorder:
    """Wraps a puzzle's ``apply`` and keeps the actions of every call (the generic walk's moves)."""

    def __init__(self, puzzle):
        self.apply, self.calls = puzzle.apply, []

    def __call__(self, states, actions):
        self.calls.append(np.array(actions, dtype=np.int64))
        return self.apply(states, actions)


@pytest.mark.parametrize("puzzle", [make("cube2"), Cube3HTM(half_turn_cost=1.5)], ids=["cube2", "htm-1.5"])
def test_the_path_cost_is_the_cost_of_replaying_the_inverse_scramble_to_the_goal(puzzle):
    """The cubes scramble with the generic walk, whose steps back cancel: the path back is the
    scramble with every turn that undoes the one before taken out (again and again), inverted."""
    depths = np.random.default_rng(1).integers(0, 15, size=60)
    recorder = _Recorder(puzzle)
    puzzle.apply = recorder  # the generic walk moves every active state by one call per step
    states, cost = scrambles_with_path_cost(puzzle, np.random.default_rng(5), len(depths), depths)
    del puzzle.apply
    inverse, costs = puzzle.inverse_action, puzzle.action_costs
    shortened = 0
    for i, k in enumerate(depths):
        moves = [int(recorder.calls[t][np.flatnonzero(depths > t).tolist().index(i)]) for t in range(k)]
        kept: list[int] = []
        for a in moves:  # every cube turn changes the state
            if kept and inverse[kept[-1]] == a:
                kept.pop()
            else:
                kept.append(a)
        back = [int(inverse[a]) for a in reversed(kept)]
        assert puzzle.is_goal(puzzle.apply_moves(states[i], back)[None])[0]
        assert cost[i] == pytest.approx(sum(costs[a] for a in back))
        shortened += len(kept) < len(moves)
    assert shortened > 0  # some scrambles stepped back, and their paths are shorter than k
    assert np.array_equal(states, puzzle.scramble(np.random.default_rng(5), len(depths), depths))


def test_a_scramble_that_undoes_itself_has_a_path_of_cost_zero():
    puzzle = make("cube2")
    recorder = _Recorder(puzzle)
    puzzle.apply = recorder
    states, cost = scrambles_with_path_cost(puzzle, np.random.default_rng(0), 4000, 4)
    del puzzle.apply
    moves = np.stack(recorder.calls, axis=1)  # [n, 4]
    inverse = puzzle.inverse_action
    nested = (inverse[moves[:, 1]] == moves[:, 2]) & (inverse[moves[:, 0]] == moves[:, 3])  # R U U' R'
    paired = (inverse[moves[:, 0]] == moves[:, 1]) & (inverse[moves[:, 2]] == moves[:, 3])  # R R' U U'
    assert nested.any() and paired.any() and np.all(puzzle.is_goal(states[nested | paired]))
    assert np.array_equal(cost == 0, nested | paired)  # R R R R is the goal too, but its path costs 4


@pytest.mark.parametrize("name", ["puzzle8", "cube2", "lightsout7"])
def test_path_costs_come_with_the_same_states_and_random_draws_as_a_plain_scramble(name):
    puzzle = make(name)
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    states, cost = scrambles_with_path_cost(puzzle, a, 300, (1, 12))
    assert np.array_equal(states, puzzle.scramble(b, 300, (1, 12)))
    assert a.integers(1 << 30) == b.integers(1 << 30)  # the stream goes on in step
    assert cost.shape == (300,) and cost.min() >= 0 and cost.max() <= 12


def test_sliding_puzzle_path_costs_bound_the_distance_with_its_parity():
    """Every step of the sliding puzzles' walk moves a tile (the blank changes colour on the
    chessboard each time), so the walk back is a path of exactly ``k`` moves: its length is at least
    the distance and of the same parity."""
    puzzle = make("puzzle8")
    exact = _bfs_distances(puzzle, 10)
    states, cost = scrambles_with_path_cost(puzzle, np.random.default_rng(0), 500, (1, 10))
    d = np.array([exact[s.tobytes()] for s in states])
    assert np.all(d <= cost) and np.all((cost - d) % 2 == 0)
    assert np.any(d < cost)  # plain scrambles step back: the bound is not always tight


# ---- the capped labels -----------------------------------------------------------------------------
def test_capped_davi_labels_on_the_8_puzzle_equal_hand_computed_ones(tmp_path):
    """A target net that answers 10 everywhere: the uncapped target is 0 at the goal, 1 next to it
    and 1 + 10 = 11 elsewhere; scrambles of at most 3 moves cap it at k >= distance, with k of the
    distance's parity, so every capped label is the exact distance."""
    cfg = tiny_train_config(puzzle="puzzle8", max_scramble=3, target_update="period")
    puzzle = make("puzzle8")
    trainer = Trainer(cfg, tmp_path / "run")
    value_fn = target_value_fn(puzzle, _constant_net(trainer, 10.0), cfg)
    job = LabelJob(chunk=0, objective="davi", n=400, max_scramble=3, seed=(7, 1), target_version=0)
    states, plain = make_labels(puzzle, job, value_fn, cfg)
    capped_states, capped = make_labels(puzzle, job, value_fn, replace(cfg, cap_labels=True))
    assert np.array_equal(states, capped_states)

    exact = _bfs_distances(puzzle, 3)
    d = np.array([exact[s.tobytes()] for s in states])
    assert set(d) == {0, 1, 2, 3}
    assert np.array_equal(plain, np.where(d == 0, 0.0, np.where(d == 1, 1.0, 11.0)))
    _, k = scrambles_with_path_cost(puzzle, np.random.default_rng(list(job.seed)), job.n, (1, 3))
    assert np.array_equal(capped, np.minimum(plain, k)) and np.array_equal(capped, d)


def test_capped_q_targets_on_the_8_puzzle_equal_hand_computed_ones(tmp_path):
    """Q targets under a net that answers 10: ``1 + 10`` per real move (1 into the goal), NaN for
    blocked moves; the cap is ``cost(a) + cost(inverse(a)) + k = 2 + k``."""
    cfg = tiny_train_config(puzzle="puzzle8", max_scramble=3, objective="qlearning", target_update="period")
    puzzle = make("puzzle8")
    trainer = Trainer(cfg, tmp_path / "run")
    value_fn = target_value_fn(puzzle, _constant_net(trainer, 10.0), cfg)
    job = LabelJob(chunk=0, objective="qlearning", n=300, max_scramble=3, seed=(2,), target_version=0)
    states, plain = make_labels(puzzle, job, value_fn, cfg)
    _, capped = make_labels(puzzle, job, value_fn, replace(cfg, cap_labels=True))
    _, k = scrambles_with_path_cost(puzzle, np.random.default_rng(list(job.seed)), job.n, (1, 3))

    children = puzzle.expand(states)
    moved = puzzle.moved(states, children.reshape(-1, *puzzle.state_shape))
    into_goal = puzzle.is_goal(children.reshape(-1, *puzzle.state_shape)).reshape(moved.shape)
    hand = np.where(moved, np.where(into_goal, 1.0, 11.0), np.nan)
    np.testing.assert_array_equal(plain, hand)
    np.testing.assert_array_equal(capped, np.where(moved, np.minimum(hand, 2.0 + k[:, None]), np.nan))
    assert np.any(capped[moved] < plain[moved])


@pytest.mark.parametrize("objective", ["davi", "adi", "multigoal", "qlearning"])
def test_the_cap_never_raises_a_label_and_lowers_exactly_those_above_the_path_cost(objective):
    goals = ("layer1", "solved") if objective == "multigoal" else ()  # cube3's first layer, then all
    puzzle = make("cube3" if goals else "cube2")
    cfg = tiny_train_config(puzzle=puzzle.name, objective=objective, goals=goals, max_scramble=6)
    rng = np.random.default_rng(0)
    table = rng.uniform(0.0, 12.0, size=1 << 12).astype(np.float32)  # a noisy, inflated value function

    def value_fn(children: np.ndarray) -> np.ndarray:
        h = table[np.abs(children.astype(np.int64) * np.arange(1, children.shape[1] + 1)).sum(1) % 4096]
        return np.repeat(h[:, None], len(goals), axis=1) if goals else h

    job = LabelJob(chunk=3, objective=objective, n=500, max_scramble=6, seed=(11, 3), target_version=0)
    states, plain = make_labels(puzzle, job, value_fn, cfg)
    capped_states, capped = make_labels(puzzle, job, value_fn, replace(cfg, cap_labels=True))
    assert np.array_equal(states, capped_states)
    if objective == "adi":  # rows (value, action, weight): only the value is capped
        assert np.array_equal(plain[:, 1:], capped[:, 1:])
        plain, capped = plain[:, 0], capped[:, 0]
    assert np.array_equal(np.isnan(plain), np.isnan(capped))
    real = ~np.isnan(plain)
    assert np.all(capped[real] <= plain[real])
    lowered = capped[real] < plain[real]
    assert lowered.any() and (~lowered).any()
    _, k = scrambles_with_path_cost(puzzle, np.random.default_rng(list(job.seed)), job.n, (1, 6))
    bound = 2.0 + k[:, None] if objective == "qlearning" else k.reshape(-1, *([1] * (plain.ndim - 1)))
    assert np.array_equal(capped[real], np.broadcast_to(np.minimum(plain, bound), plain.shape)[real])


def test_states_of_greedy_descents_are_capped_by_their_known_paths():
    """Descent states know a path too (tests/train/test_capped_paths.py computes it by hand): with a
    network valuing every board at 9, far above cube2's scrambles of 6, their labels are lowered."""
    puzzle = make("cube2")
    cfg = tiny_train_config(descent_share=0.5, descent_steps=8, descent_stride=2, max_scramble=6)

    def value_fn(s: np.ndarray) -> np.ndarray:
        return np.full(len(s), 9.0, dtype=np.float32)

    states, cost = training_states_with_path_cost(puzzle, np.random.default_rng(4), 200, 6, value_fn, cfg)
    assert np.array_equal(states, training_states(puzzle, np.random.default_rng(4), 200, 6, value_fn, cfg))
    assert np.all(np.isfinite(cost))
    job = LabelJob(chunk=0, objective="davi", n=200, max_scramble=6, seed=(4, 4), target_version=0)
    _, plain = make_labels(puzzle, job, value_fn, cfg)
    _, capped = make_labels(puzzle, job, value_fn, replace(cfg, cap_labels=True))
    assert np.any(capped[100:] < plain[100:]) and np.any(capped[:100] < plain[:100])
    job_rng = np.random.default_rng(list(job.seed))
    _, job_cost = training_states_with_path_cost(puzzle, job_rng, 200, 6, value_fn, cfg)
    np.testing.assert_array_equal(capped, np.minimum(plain, job_cost))


def test_cap_helpers_keep_shapes_and_nans():
    y = np.array([[1.0, np.nan, 9.0], [4.0, 5.0, np.nan]], dtype=np.float32)
    assert cap_values(y, np.array([3.0, 4.5])).tolist()[0][0] == 1.0
    np.testing.assert_array_equal(cap_values(np.array([5.0, 2.0]), np.array([3.0, 3.0])), [3.0, 2.0])
    puzzle = make("puzzle8")
    out = cap_action_values(puzzle, np.array([[9.0, np.nan, 1.0, 9.0]], dtype=np.float32), np.array([4.0]))
    np.testing.assert_array_equal(out, [[6.0, np.nan, 1.0, 6.0]])


def test_q_targets_of_moves_that_cannot_be_undone_are_refused_by_name():
    with pytest.raises(PuzzleError, match="cap_labels: sokoban's moves cannot all be undone"):
        cap_action_values(make("sokoban"), np.zeros((1, 4), dtype=np.float32), np.array([3.0]))


# ---- the setting -------------------------------------------------------------------------------------
def test_cap_labels_is_a_setting_with_a_json_round_trip_and_old_files_mean_off(tmp_path):
    cfg = TINY.with_overrides(["cap_labels=true"])
    assert cfg.cap_labels is True and TINY.cap_labels is False
    path = tmp_path / "c.json"
    path.write_text(cfg.to_json())
    assert TrainConfig.from_json(path) == cfg
    old = {k: v for k, v in json.loads(TINY.to_json()).items() if k != "cap_labels"}
    assert TrainConfig.from_dict(old).cap_labels is False
    assert capping_objectives() == ["adi", "davi", "lhbl", "multigoal", "qlearning"]
    assert all(get_objective(name).caps_labels for name in capping_objectives())
    assert "capped" in get_objective("davi").describe(cfg) and "capped" not in get_objective("davi").describe(
        TINY
    )


@pytest.mark.parametrize("objective", ["random_walk", "scramble_depth", "efficientcube", "selfplay"])
def test_objectives_without_bellman_targets_refuse_cap_labels_by_name(objective):
    with pytest.raises(PuzzleError, match=f"cap_labels caps .*; '{objective}' has no such targets"):
        TINY.with_overrides([f"objective={objective}", "cap_labels=true"])


def test_cap_labels_may_not_change_when_resuming(tmp_path):
    Trainer(replace(TINY, max_iterations=10), tmp_path / "run").run()
    with pytest.raises(PuzzleError, match=r"changed settings \['cap_labels'\]"):
        Trainer(replace(TINY, max_iterations=20, cap_labels=True), tmp_path / "run", resume=True)


# ---- training ----------------------------------------------------------------------------------------
def _same(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize(
    "overrides",
    [
        {"target_update": "period"},
        {"objective": "qlearning", "target_update": "period"},
        {
            "objective": "lhbl",
            "lhbl_expansions": 3,
            "target_update": "period",
            "descent_share": 0.25,
            "descent_steps": 6,
            "descent_stride": 2,
        },
    ],
    ids=["davi", "qlearning", "lhbl-descents"],
)
def test_resume_after_a_kill_with_capped_labels_is_bit_identical(tmp_path, overrides):
    # short scrambles and quick target updates: some targets pass their scramble's cost within 30 iterations
    cfg = replace(TINY, cap_labels=True, max_scramble=3, check_every=10, lr=0.01, **overrides)
    full = Trainer(replace(cfg, max_iterations=60), tmp_path / "full")
    full.run()
    first = Trainer(replace(cfg, max_iterations=30), tmp_path / "cut")
    first.run()
    first.append_log(first.train_chunk())  # work past the checkpoint that a kill throws away
    del first
    second = Trainer(replace(cfg, max_iterations=60), tmp_path / "cut", resume=True)
    assert second.counters.iteration == 30
    second.run()
    assert _same(full.model, second.model) and _same(full.target, second.target)
    assert full.counters.target_update_iterations == second.counters.target_update_iterations
    uncapped = Trainer(replace(cfg, max_iterations=60, cap_labels=False), tmp_path / "plain")
    uncapped.run()
    assert not _same(full.model, uncapped.model)  # the cap changed some labels, hence the weights
