"""Training objectives and the trainer's schedules: labels, target updates, reuse, curriculum,
label workers, exact resume for every objective, --init-from and the accumulating model card."""

from __future__ import annotations

import json
import signal
import warnings
from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import ModelFileError, PuzzleError, UnknownNameError
from puzzlezero.nn import load_model, make_heuristic
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.train import TrainConfig, Trainer, one_step_targets
from puzzlezero.train.evaluate import make_eval_set
from puzzlezero.train.objectives import LabelJob, get_objective, make_labels, objective_names
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


TINY = tiny_train_config()


def _same(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def _bfs_distances(puzzle, depth: int) -> dict[bytes, int]:
    """Exact distances of every state within ``depth`` moves of the goal (small BFS)."""
    frontier = puzzle.goals(1)
    seen = {frontier[0].tobytes(): 0}
    for d in range(1, depth + 1):
        children = puzzle.expand(frontier).reshape(-1, *puzzle.state_shape)
        new = [c for c in children if c.tobytes() not in seen]
        for c in new:
            seen.setdefault(c.tobytes(), d)
        frontier = np.unique(np.array(new), axis=0) if new else frontier[:0]
    return seen


# ---- the registry and the labels --------------------------------------------------------------------
def test_registry_lists_objectives_and_names_unknown_ones():
    assert {"davi", "lhbl", "random_walk", "scramble_depth", "qlearning"} <= set(objective_names())
    assert get_objective("davi").needs_target and not get_objective("random_walk").needs_target
    with pytest.raises(UnknownNameError, match="unknown training objective 'nope'.*davi"):
        get_objective("nope")
    with pytest.raises(PuzzleError, match="unknown training objective"):
        TINY.with_overrides(["objective=nope"])


@pytest.mark.parametrize("name", ["puzzle8", "cube2", "cube3"])
def test_random_walks_never_backtrack(name):
    """Two non-backtracking steps never return to the goal state (cube2's goal test also accepts a
    turned cube, which U D' reaches); walk labels bound the true distance."""
    puzzle = make(name)
    rng = np.random.default_rng(3)
    two = puzzle.random_walks(rng, 4000, 2)
    assert not (two == puzzle.goal()).all(axis=1).any()
    states, labels = get_objective("random_walk").make(puzzle, rng, 500, 6, None, TINY)
    if name == "cube2":
        true = distance(states)
    else:
        dist = _bfs_distances(puzzle, 6)
        true = np.array([dist[s.tobytes()] for s in states])
    assert labels.dtype == np.float32 and (true <= labels).all() and (labels >= 1).any()


@pytest.mark.parametrize("name", ["puzzle8", "cube2", "cube3"])
def test_efficientcube_labels_are_the_moves_undoing_each_walks_last_step(name):
    """A walk of one step is undone back to the goal; one of two non-backtracking steps is undone
    to a state one move from the goal. Rows are (NaN: no value target, the undo move, weight 1)."""
    puzzle = make(name)
    dist = _bfs_distances(puzzle, 2)
    for k in (1, 2):
        states, cost, undo = puzzle.walks_with_undo(np.random.default_rng(k), 300, k)
        back = puzzle.apply(states, undo)
        assert [dist[s.tobytes()] for s in states] == [k] * len(states)
        assert [dist[s.tobytes()] for s in back] == [k - 1] * len(states)
        costs = puzzle.action_costs
        assert (
            (cost >= costs[undo]).all()
            and (cost <= k * costs.max()).all()
            and (cost >= k * costs.min()).all()
        )
    # the objective leaves out walks that end at a goal (cube2: a turned cube is solved too)
    last = replace(TINY, efficientcube_target="last")
    states, rows = get_objective("efficientcube").make(puzzle, np.random.default_rng(0), 300, 2, None, last)
    assert 280 <= len(states) <= 300 and rows.dtype == np.float32 and rows.shape == (len(states), 3)
    assert not puzzle.is_goal(states).any()
    assert np.isnan(rows[:, 0]).all() and (rows[:, 2] == 1).all()
    back = puzzle.apply(states, rows[:, 1].astype(np.int64))
    assert all(dist[b.tobytes()] == dist[s.tobytes()] - 1 for s, b in zip(states, back, strict=True))


def test_efficientcube_labels_lights_out_with_a_cell_of_the_only_solution():
    """Lights Out 7x7: every label is a cell of the board's unique minimum press set (the GF(2)
    oracle), whatever the walk's length, so pressing it leaves a board one press shorter."""
    from puzzlezero.classic.optimal.lightsout import min_presses

    puzzle = make("lightsout7")
    last = replace(TINY, efficientcube_target="last")
    states, rows = get_objective("efficientcube").make(puzzle, np.random.default_rng(0), 2000, 49, None, last)
    press = min_presses(puzzle, states)
    cells = rows[:, 1].astype(np.int64)
    assert press[np.arange(len(states)), cells].all()
    after = min_presses(puzzle, puzzle.apply(states, cells)).sum(axis=1)
    np.testing.assert_array_equal(after, press.sum(axis=1) - 1)
    assert set(np.unique(press.sum(axis=1))) >= {1, 25, 49}  # lengths uniform in 1..49


def _first_choice_share(puzzle, trainer: Trainer, states: np.ndarray, good: np.ndarray) -> float:
    """The share of ``states`` whose policy's most probable move is marked in ``good[state, move]``."""
    from puzzlezero.nn.heuristic import make_policy

    probs = make_policy(puzzle, trainer.model, source="policy")(states)
    return float(good[np.arange(len(states)), probs.argmax(axis=1)].mean())


def test_efficientcube_set_target_lights_out_is_the_whole_press_set():
    """``efficientcube_target="set"``: on Lights Out 7x7 a row's distribution is uniform over the
    board's unique minimum press set (the GF(2) oracle): every cell that may have been pressed
    last, 1/k each; rows are (NaN, -1, 1, p[49])."""
    from puzzlezero.classic.optimal.lightsout import min_presses

    puzzle = make("lightsout7")
    cfg = replace(TINY, efficientcube_target="set")
    states, rows = get_objective("efficientcube").make(puzzle, np.random.default_rng(0), 2000, 49, None, cfg)
    assert rows.dtype == np.float32 and rows.shape == (len(states), 3 + 49) and len(states) == 2000
    assert np.isnan(rows[:, 0]).all() and (rows[:, 1] == -1).all() and (rows[:, 2] == 1).all()
    press = min_presses(puzzle, states).astype(bool)
    dist = rows[:, 3:]
    np.testing.assert_array_equal(dist > 0, press)
    np.testing.assert_allclose(dist.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(dist[press], np.repeat(1.0 / press.sum(axis=1), press.sum(axis=1)), rtol=1e-6)


@pytest.mark.parametrize("name", ["cube2", "puzzle8"])
def test_undo_sets_of_non_commuting_puzzles_are_the_one_undo_move(name):
    """Elsewhere the distribution is one-hot on :meth:`walks_with_undo`'s move (same walks for the
    same generator state), and a one-step walk's undo leads back to the goal."""
    puzzle = make(name)
    states, undo = puzzle.walks_with_undo(np.random.default_rng(5), 200, (1, 6))[0::2]
    same, dist = puzzle.walks_with_undo_sets(np.random.default_rng(5), 200, (1, 6))
    np.testing.assert_array_equal(same, states)
    assert dist.shape == (200, puzzle.num_actions) and dist.dtype == np.float32
    np.testing.assert_array_equal(dist.argmax(axis=1), undo)
    np.testing.assert_array_equal(dist.sum(axis=1), 1.0)
    one, dist1 = puzzle.walks_with_undo_sets(np.random.default_rng(6), 50, 1)
    assert puzzle.is_goal(puzzle.apply(one, dist1.argmax(axis=1))).all()


def test_efficientcube_set_target_trains_lights_out_and_is_checked(tmp_path):
    """A few seconds on Lights Out 7x7 boards of 1-4 presses with the set target: the policy's
    first choice becomes a cell of the press set far more often than chance (at most 4 of 49);
    an unknown target is refused by name."""

    puzzle = make("lightsout7")
    states, rows = get_objective("efficientcube").make(
        puzzle, np.random.default_rng(1), 400, 4, None, replace(TINY, efficientcube_target="set")
    )
    in_set = rows[:, 3:] > 0
    cfg = replace(
        TINY,
        puzzle="lightsout7",
        objective="efficientcube",
        efficientcube_target="set",
        preset="small",
        h1=200,
        h2=100,
        batch_size=200,
        max_scramble=4,
        eval_every=0,
    )
    t = Trainer(replace(cfg, max_iterations=150), tmp_path / "run")
    before = _first_choice_share(puzzle, t, states, in_set)
    t.run()
    after = _first_choice_share(puzzle, t, states, in_set)
    assert before < 0.3 and after > 0.9, (before, after)
    with pytest.raises(PuzzleError, match="efficientcube_target must be 'last' or 'set'"):
        replace(cfg, efficientcube_target="all")
    # the default is the set; a config file written before the option existed meant the last move
    assert TrainConfig(puzzle="lightsout7").efficientcube_target == "set"
    old = {k: v for k, v in cfg.to_dict().items() if k != "efficientcube_target"}
    assert TrainConfig.from_dict(old).efficientcube_target == "last"


def test_walks_with_undo_need_moves_that_can_be_undone():
    with pytest.raises(PuzzleError, match="cannot all be undone"):
        make("sokoban").walks_with_undo(np.random.default_rng(0), 3, 4)


def test_efficientcube_training_teaches_the_policy_optimal_moves(tmp_path):
    """A few seconds of training: the policy's first choice is a move that brings cube2 states of
    1-5 moves one move closer (exact distances) for most states, from about 1 in 6 before; its
    validation follows the policy, and finds shortest solutions for the shallow states."""

    puzzle = make("cube2")
    states = puzzle.scramble(np.random.default_rng(9), 400, (1, 5))
    d = distance(states)
    states, d = states[d > 0], d[d > 0]
    closer = distance(puzzle.expand(states).reshape(-1, *puzzle.state_shape)).reshape(len(states), -1)
    closer = closer == d[:, None] - 1
    cfg = replace(
        TINY, objective="efficientcube", preset="small", h1=200, h2=100, batch_size=200, max_scramble=6
    )
    t = Trainer(replace(cfg, max_iterations=160, eval_depths=(1, 2, 3), eval_states=30), tmp_path / "run")
    before = _first_choice_share(puzzle, t, states, closer)
    t.run()
    after = _first_choice_share(puzzle, t, states, closer)
    assert before < 0.35 and after > 0.75, (before, after)
    record = t.evaluate()
    assert record["search"] == "policy" and record["depths"] == [1, 2, 3]
    assert record["optimal_pct"][0] == 100.0 and record["overall"]["solved_pct"] > 80
    from puzzlezero.train.evaluate import headline

    assert set(headline(record)) == {"greedy", "optimal"}
    # the exported model is searched over its policy; searches over values refuse it by name
    from puzzlezero.solver import solve

    t.export(tmp_path / "model")
    state = puzzle.scramble(np.random.default_rng(4), 1, 3)[0]
    assert solve("cube2", state, model=str(tmp_path / "model"), search="pbeam", beam_width=50).solved
    with pytest.raises(ModelFileError, match="objective=efficientcube.*--search pbeam"):
        solve("cube2", state, model=str(tmp_path / "model"), search="bwas", anytime=False)
    with pytest.raises(ModelFileError, match="objective=efficientcube.*--search pbeam"):
        solve("cube2", state, model=str(tmp_path / "model"), search="mcts")  # MCTS backs up values


def test_plain_scrambles_do_backtrack():
    """The contrast: a plain scramble of 2 moves returns to the goal about 1/A of the time."""
    puzzle = make("cube3")
    back = puzzle.is_goal(puzzle.scramble(np.random.default_rng(3), 4000, 2)).mean()
    assert 0.05 < back < 0.12


def test_scramble_power_one_is_the_papers_uniform_draw_and_two_moves_states_toward_the_goal():
    from puzzlezero.train.descents import scramble_depths

    rng = np.random.default_rng(5)
    assert scramble_depths(rng, 10, 600, None) == (1, 600)
    assert scramble_depths(rng, 10, 600, TINY) == (1, 600)  # power 1: the draws of old runs, unchanged
    assert rng.bit_generator.state == np.random.default_rng(5).bit_generator.state  # nothing drawn
    k = scramble_depths(rng, 200_000, 600, replace(TINY, scramble_power=2.0))
    assert k.dtype == np.int64 and k.min() == 1 and k.max() == 600
    # k = ceil(600 u^2): P(k <= 150) = P(u <= 1/2) = 1/2 (uniform: 1/4); E[k] ~ 600/3 + 1/2
    assert abs((k <= 150).mean() - 0.5) < 0.01
    assert abs(k.mean() - 200.5) < 2.0
    # the objectives take the spread: DAVI's states of a K = 40 8-puzzle run sit nearer the goal
    puzzle = make("puzzle8")
    dist = _bfs_distances(puzzle, 30)
    value = lambda s: np.array([dist.get(x.tobytes(), 30) for x in s], np.float32)  # noqa: E731
    mean_distance = {}
    for p in (1.0, 3.0):
        cfg = replace(TINY, scramble_power=p)
        states, _ = get_objective("davi").make(puzzle, np.random.default_rng(0), 4000, 40, value, cfg)
        mean_distance[p] = value(states).mean()
    assert mean_distance[3.0] < mean_distance[1.0] - 2


@pytest.mark.parametrize(
    ("overrides", "said"),
    [
        ({"scramble_power": 0.0}, "scramble_power must be > 0"),
        ({"scramble_power": float("nan")}, "scramble_power must be > 0"),
        ({"scramble_power": 2.0, "objective": "selfplay"}, "selfplay has its own depth schedule"),
    ],
)
def test_scramble_power_is_checked(overrides, said):
    with pytest.raises(PuzzleError, match=said):
        replace(TINY, **overrides)


def test_davi_labels_equal_hand_computed_one_step_targets():
    puzzle = make("puzzle8")
    dist = _bfs_distances(puzzle, 10)
    value = lambda s: np.array([dist.get(x.tobytes(), 10) for x in s], np.float32)  # noqa: E731
    states, targets = get_objective("davi").make(puzzle, np.random.default_rng(0), 50, 6, value, TINY)
    for s, y in zip(states, targets, strict=True):
        kids = [c for c in puzzle.expand(s[None])[0] if not np.array_equal(c, s)]
        want = 0.0 if puzzle.is_goal(s[None])[0] else min(1.0 + value(c[None])[0] for c in kids)
        assert y == want
    # with exact values the one-step target is the exact distance
    assert np.array_equal(targets, value(states))


def test_lhbl_objective_labels_roots_and_tree_nodes_exactly_with_exact_values():
    puzzle = make("cube2")
    exact = lambda s: distance(s).astype(np.float32)  # noqa: E731
    cfg = replace(TINY, objective="lhbl", lhbl_expansions=5)
    states, targets = get_objective("lhbl").make(puzzle, np.random.default_rng(1), 100, 8, exact, cfg)
    assert 80 <= len(states) <= 100  # 20 roots x 5 expansions (fewer where a tree reached the goal)
    assert np.array_equal(targets, exact(states))
    # with a blind value (0 off the goal) a tree still finds goals nearby: labels are lower bounds
    blind = lambda s: np.zeros(len(s), np.float32)  # noqa: E731
    states, targets = get_objective("lhbl").make(puzzle, np.random.default_rng(1), 100, 8, blind, cfg)
    assert (targets <= exact(states)).all() and (targets >= 1).sum() > 0


def test_make_labels_is_a_function_of_the_job():
    puzzle = make("cube2")
    job = LabelJob(chunk=3, objective="random_walk", n=64, max_scramble=9, seed=(0, 0, 3), target_version=0)
    a, b = make_labels(puzzle, job, None, TINY), make_labels(puzzle, job, None, TINY)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    other = make_labels(puzzle, replace(job, seed=(0, 1, 3)), None, TINY)  # another rank
    assert not np.array_equal(a[0], other[0])


# ---- schedules ---------------------------------------------------------------------------------------
def test_period_updates_copy_regardless_of_loss_and_loss_updates_need_a_low_loss(tmp_path):
    never = Trainer(replace(TINY, epsilon=0.0, max_iterations=60), tmp_path / "loss")
    never.run()
    assert never.counters.target_updates == 0
    period = Trainer(replace(TINY, epsilon=0.0, target_update="period", max_iterations=60), tmp_path / "p")
    period.run()
    assert period.counters.target_update_iterations == [20, 40, 60]
    assert _same(period.target, period.model)


def test_target_reuse_trains_each_label_several_times(tmp_path):
    t = Trainer(replace(TINY, target_reuse=2, max_iterations=20), tmp_path / "r")
    t.run()
    assert (t.counters.samples, t.counters.labels) == (2000, 1000)
    with pytest.raises(PuzzleError, match="target_reuse"):
        replace(TINY, target_reuse=3)


def test_curriculum_grows_the_depth_bound_from_one(tmp_path):
    cfg = replace(
        TINY, curriculum="double", curriculum_threshold=0.05, target_update="period", max_iterations=60
    )
    t = Trainer(cfg, tmp_path / "c")
    assert t.counters.max_scramble_now == 1
    t.run()
    lines = [json.loads(x) for x in (tmp_path / "c" / "log.jsonl").read_text().splitlines()]
    bounds = [r["max_scramble"] for r in lines if r["type"] == "train"]
    assert bounds[0] == 1 and bounds[-1] > 1 and bounds == sorted(bounds) and max(bounds) <= 8
    assert all("curriculum_solved_pct" in r for r in lines if r["iteration"] % 20 == 0)


# ---- learning: a few seconds improve the validation figure, for every objective ----------------
@pytest.mark.parametrize(
    "overrides",
    [
        {"objective": "davi", "target_update": "period"},
        {"objective": "lhbl", "target_update": "period", "lhbl_expansions": 4},
        {"warmup_iterations": 40, "target_update": "period"},
    ],
    ids=["davi", "lhbl", "random_walk+davi"],
)
def test_each_objective_lowers_the_error_against_exact_cube2_distances(tmp_path, overrides):
    puzzle = make("cube2")
    es = make_eval_set(puzzle, (1, 2, 3, 4, 5), 60, seed=5)
    cfg = replace(TINY, preset="small", h1=200, h2=100, batch_size=200, max_scramble=6, max_iterations=160)
    t = Trainer(replace(cfg, **overrides), tmp_path / "run")

    def mae() -> float:
        return float(np.abs(make_heuristic(puzzle, t.model)(es.states) - es.true_cost).mean())

    before = mae()
    t.run()
    after = mae()
    assert after < 0.6 * before and after < 1.2, (before, after)


# ---- exact resume for every objective, and with a label worker -------------------------------------
@pytest.mark.parametrize(
    "overrides",
    [
        {"objective": "lhbl", "lhbl_expansions": 3},
        {"warmup_iterations": 20, "target_update": "period", "target_reuse": 2},
        {"curriculum": "plus1", "curriculum_threshold": 0.05, "target_update": "period"},
        {"label_workers": 1, "target_update": "period"},
        {"objective": "qlearning", "q_bootstrap": "qmin", "warmup_iterations": 10},
        {"objective": "efficientcube"},
        {"objective": "lhbl", "lhbl_expansions": 3, "scramble_power": 2.0, "warmup_iterations": 10},
        {
            "objective": "lhbl",
            "lhbl_expansions": 3,
            "descent_share": 0.5,
            "descent_steps": 12,
            "descent_stride": 3,
            "batch_norm": "frozen",
        },
    ],
    ids=[
        "lhbl",
        "random_walk-warmup+reuse",
        "curriculum",
        "label-worker",
        "qlearning",
        "efficientcube",
        "scramble_power",
        "descents+frozen-batch-norm",
    ],
)
def test_resume_after_a_kill_is_bit_identical(tmp_path, overrides):
    cfg = replace(TINY, **overrides)
    full = Trainer(replace(cfg, max_iterations=60), tmp_path / "full")
    full.run()
    first = Trainer(replace(cfg, max_iterations=30), tmp_path / "cut")
    first.run()
    if cfg.label_workers == 0:  # work past the checkpoint that a kill throws away
        first.append_log(first.train_chunk())
    del first
    second = Trainer(replace(cfg, max_iterations=60), tmp_path / "cut", resume=True)
    assert second.counters.iteration == 30
    second.run()
    assert _same(full.model, second.model) and _same(full.target, second.target)
    assert full.counters.target_update_iterations == second.counters.target_update_iterations


def test_label_workers_lag_one_chunk_and_stay_exact(tmp_path):
    """With a worker, chunk j is labelled by the target of chunk j-1: different from serial labels,
    but the same on every run."""
    cfg = replace(TINY, target_update="period", max_iterations=40, check_every=10)
    runs = [
        Trainer(replace(cfg, label_workers=w), tmp_path / f"w{w}{i}") for w, i in ((1, 0), (1, 1), (0, 0))
    ]
    for t in runs:
        t.run()
    assert _same(runs[0].model, runs[1].model)
    assert not _same(runs[0].model, runs[2].model)


def test_a_label_worker_labels_a_job_as_the_trainer_would(tmp_path):
    """A worker evaluates the target on the run's device with its amp (bf16 here: the same bfloat16
    rounding as the trainer's own labels, which float32 labels would not match)."""
    from puzzlezero.train import workers
    from puzzlezero.train.objectives import target_function

    cfg = replace(TINY, objective="lhbl", lhbl_expansions=3, amp="bf16", target_update="period")
    cfg = replace(cfg, check_every=10, max_iterations=20)
    with pytest.warns(UserWarning, match="bfloat16"):
        t = Trainer(cfg, tmp_path / "run")
    t.run()  # a trained target: the first one's labels are all 1 here, whatever the rounding
    job = t._job(2)
    assert job.target_version > 0
    states, own = make_labels(t.puzzle, job, t._value_fn(job.target_version), cfg)
    sigint = signal.getsignal(signal.SIGINT)
    workers._init(t.puzzle, cfg, t.net_config)  # in this process: what a worker process runs
    try:
        w_states, w_targets = workers._work(job, t._target_weights(job.target_version))
    finally:
        workers._STATE.clear()
        signal.signal(signal.SIGINT, sigint)
        torch.set_num_threads(cfg.threads)
    fp32_target = target_function(t.puzzle, t.target, replace(cfg, amp="off"), t.device)
    fp32 = make_labels(t.puzzle, job, fp32_target, cfg)[1]
    assert np.array_equal(states, w_states) and np.array_equal(own, w_targets)
    assert not np.array_equal(own, fp32)  # the check above could tell float32 labels apart


# ---- --init-from and the card ----------------------------------------------------------------------
def test_init_from_starts_from_a_model_and_the_card_accumulates(tmp_path, capsys):
    base = Trainer(replace(TINY, max_iterations=20), tmp_path / "a")
    base.run()
    base.export(tmp_path / "m1")
    argv = ["train", "cube2", "--out", str(tmp_path / "b"), "--init-from", str(tmp_path / "m1")]
    argv += ["--set", "max_iterations=10", "--set", "preset=tiny", "--export", str(tmp_path / "m2")]
    # the new run starts from m1's weights with a fresh optimizer
    t = Trainer(replace(TINY, init_from=str(tmp_path / "m1"), max_iterations=10), tmp_path / "c")
    assert _same(t.model, base.model) and _same(t.target, base.model)
    assert not t.optimizer.state_dict()["state"]
    assert main(argv) == 0
    card = load_model(tmp_path / "m2").card
    assert [r["samples"] for r in card["runs"]] == [2000, 10_000]  # the CLI run has B = 1000
    assert card["samples_seen_total"] == 12_000 and card["runs"][1]["init_from"] == str(tmp_path / "m1")
    assert card["wall_seconds_total"] >= card["runs"][0]["wall_seconds"]


def test_init_from_warns_when_the_batch_size_differs_fourfold(tmp_path, capsys):
    """Batch norm in training mode normalizes by the batch: a model continued on batches 4x smaller
    or larger than it was trained on starts off worse, so the trainer says so (the CLI as one line)."""
    base = Trainer(replace(TINY, max_iterations=10), tmp_path / "a")  # B = 100
    base.run()
    base.export(tmp_path / "m")
    init = str(tmp_path / "m")
    with pytest.warns(UserWarning, match="trained on batches of 100 and this run uses 400;.*batch_size=100"):
        Trainer(replace(TINY, init_from=init, batch_size=400), tmp_path / "b")
    with pytest.warns(UserWarning, match="trained on batches of 100 and this run uses 25;"):
        Trainer(replace(TINY, init_from=init, batch_size=25), tmp_path / "c")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # under 4x: no warning
        Trainer(replace(TINY, init_from=init, batch_size=300), tmp_path / "d")
        Trainer(replace(TINY, init_from=init, batch_size=400), tmp_path / "b", resume=True)  # nor resumes
    argv = ["train", "cube2", "--out", str(tmp_path / "f"), "--init-from", init, "--set", "preset=tiny"]
    assert main([*argv, "--set", "max_iterations=10", "--set", "progress=false"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(
        f"warning: --init-from {init}: it was trained on batches of 100 and this run uses 1,000"
    )
    assert "UserWarning" not in err and "Trainer(" not in err


def test_init_from_refuses_a_model_that_does_not_fit_and_resume(tmp_path, capsys):
    with pytest.raises(PuzzleError, match="input size does not fit puzzle8 \\(it is a cube2 model\\)"):
        Trainer(TrainConfig(puzzle="puzzle8", init_from="cube2", max_iterations=10), tmp_path / "x")
    argv = ["train", "cube2", "--out", str(tmp_path / "y"), "--init-from", "cube2", "--resume"]
    assert main([*argv, "--max-minutes", "1"]) == 2
    assert "give only one of them" in capsys.readouterr().err


def test_init_from_a_puzzle_with_the_same_states_and_other_moves(tmp_path):
    """cube3 (12 quarter turns, with a Q head) starts cube3htm (18 moves): the trunk and value head
    carry over, the Q head is rebuilt over the 18 moves as cost + J."""
    cube3 = load_model("cube3")
    cfg = TrainConfig(puzzle="cube3htm", init_from="cube3", objective="qlearning", batch_size=10_000)
    t = Trainer(cfg, tmp_path / "h")
    assert t.net_config.num_actions == 18 and t.model.q.weight.shape[0] == 18
    mine, theirs = t.model.state_dict(), cube3.state_dict()
    assert all(torch.equal(mine[k], theirs[k]) for k in theirs if not k.startswith("q."))
    assert torch.equal(t.model.q.weight, cube3.value.weight.expand(18, -1))
    assert torch.allclose(t.model.q.bias, cube3.value.bias + 1.0)


def test_old_cards_become_the_first_run_of_the_history(tmp_path):
    with pytest.warns(UserWarning, match="batches of 1,000 and this run uses 100"):
        t = Trainer(replace(TINY, init_from="cube2", max_iterations=10), tmp_path / "r")
    t.run()
    runs = t.card()["runs"]
    shipped = load_model("cube2").card
    assert len(runs) >= 2 and runs[-1]["samples"] == 1000
    assert sum(r["samples"] for r in runs[:-1]) == sum(
        r["samples"] for r in shipped.get("runs", [{"samples": shipped["samples_seen"]}])
    )


def test_one_step_targets_take_any_value_function():
    puzzle = make("cube2")
    states = puzzle.scramble(np.random.default_rng(0), 200, (1, 8))
    exact = lambda s: distance(s).astype(np.float32)  # noqa: E731
    assert np.array_equal(one_step_targets(puzzle, exact, states, chunk=50), exact(states))
