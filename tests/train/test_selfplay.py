"""AlphaZero-style self-play (Rute): episode targets against an exact cube2 oracle, the depth
rule, symmetry augmentation, a short run that learns, exact resume, and the CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.nn import load_model, make_heuristic, make_policy
from puzzlezero.puzzles.cube.symmetry import cube_symmetries
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.train import Trainer
from puzzlezero.train.config import TrainConfig
from puzzlezero.train.objectives import get_objective
from puzzlezero.train.objectives.selfplay import (
    FIRST,
    POLICY,
    VALUE,
    adapt_depth,
    play_episodes,
    selfplay_rows,
    solved_fraction,
)
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")

G = 0.95
CUBE = make("cube2")
TINY = tiny_train_config(
    objective="selfplay",
    target_update="period",
    preset="cubeconv-small",
    batch_size=32,
    chunk_iterations=2,
    check_every=2,
    selfplay_simulations=8,
    selfplay_episodes=8,
)


def oracle(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact cube2 values, the prior on the optimal moves; takes states with or without history."""
    cur = states if states.ndim == 2 else states[:, 0]
    d = distance(cur)
    dc = distance(CUBE.expand(cur).reshape(-1, 24)).reshape(len(cur), 12)
    best = (dc == d[:, None] - 1).astype(np.float32)
    p = 0.2 / 12 + 0.8 * best / np.maximum(best.sum(axis=1, keepdims=True), 1)
    return p.astype(np.float32), d.astype(np.float32)


def test_the_depth_rule():
    rule = dict(target=0.5, max_depth=10)
    assert adapt_depth(4, 33, 64, **rule) == 5  # more than half solved: deeper
    assert adapt_depth(4, 31, 64, **rule) == 3  # fewer: shallower
    assert adapt_depth(4, 32, 64, **rule) == 4  # exactly half: stay
    assert adapt_depth(1, 0, 64, **rule) == 1  # never below 1
    assert adapt_depth(10, 64, 64, **rule) == 10  # never above K
    assert adapt_depth(4, 0, 0, **rule) == 4  # no episodes: no evidence
    assert adapt_depth(4, 20, 64, target=0.25, max_depth=10) == 5


def test_episode_targets_are_gamma_to_the_moves_left():
    starts = CUBE.scramble(np.random.default_rng(0), 12, 4)
    starts = starts[~CUBE.is_goal(starts)]
    ep = play_episodes(CUBE, starts, oracle, simulations=20, max_moves=10, gamma=G, history=3)
    assert ep.solved.all()
    assert (ep.length == distance(starts)).all()  # the exact oracle plays optimally
    v = ep.value_targets(G)
    assert np.allclose(v, G ** (ep.length[ep.episode] - ep.step))
    for e in range(len(starts)):
        rows = np.flatnonzero(ep.episode == e)
        assert ep.step[rows].tolist() == list(range(ep.length[e]))
        first = ep.states[rows[0]]
        assert (first[0] == starts[e]).all() and (first[1:] == 255).all()  # no past: the zero planes
        for a, b in zip(rows[:-1], rows[1:], strict=True):
            # the next row is the visited-most child, and its history starts with this state
            assert (ep.states[b, 0] == CUBE.apply(ep.states[a, :1], ep.policy[a].argmax()[None])).all()
            assert (ep.states[b, 1] == ep.states[a, 0]).all() and (ep.states[b, 2] == ep.states[a, 1]).all()
        assert np.allclose(ep.policy[rows].sum(axis=1), 1.0)
    states, rows = selfplay_rows(ep, G)
    assert rows.shape == (len(v), POLICY + 12)
    assert np.allclose(rows[:, VALUE], v) and (rows[:, FIRST] == (ep.step == 0)).all()
    assert solved_fraction(rows) == (len(starts), len(starts))


def test_unsolved_episodes_get_value_zero():
    starts = CUBE.scramble(np.random.default_rng(1), 10, 6)
    starts = starts[distance(starts) >= 3]
    ep = play_episodes(CUBE, starts, oracle, simulations=10, max_moves=2, gamma=G)
    assert not ep.solved.any() and (ep.length == 2).all()
    assert (ep.value_targets(G) == 0).all()
    assert ep.states.shape == (2 * len(starts), 24)  # no history axis for a one-state network
    _, rows = selfplay_rows(ep, G)
    assert solved_fraction(rows) == (0, len(starts))


def test_augmented_rows_keep_distances_and_moves():
    starts = CUBE.scramble(np.random.default_rng(2), 8, 5)
    ep = play_episodes(CUBE, starts, oracle, simulations=20, max_moves=8, gamma=G, history=2)
    sym = cube_symmetries(CUBE)
    plain_states, plain = selfplay_rows(ep, G)
    states, rows = selfplay_rows(ep, G, sym, np.random.default_rng(3))
    k = np.random.default_rng(3).integers(48, size=len(states))
    assert len(set(k.tolist())) > 10
    assert (states == sym.apply(plain_states, k)).all()
    assert np.allclose(rows[:, :POLICY], plain[:, :POLICY])  # values and flags do not move
    cur, orig = states[:, 0], plain_states[:, 0]
    assert (distance(cur) == distance(orig)).all()
    # the augmented policy's favourite move does to the image what the original did to the state
    moved = distance(CUBE.apply(cur, rows[:, POLICY:].argmax(axis=1)))
    assert (moved == distance(CUBE.apply(orig, plain[:, POLICY:].argmax(axis=1)))).all()


def test_a_short_run_on_cube2_learns_optimal_moves(tmp_path):
    cfg = replace(
        TINY, batch_size=64, chunk_iterations=4, check_every=4, lr=3e-3, selfplay_simulations=16,
        selfplay_episodes=32, max_iterations=32,
    )  # fmt: skip
    t = Trainer(cfg, tmp_path / "run")
    assert t.model.policy is not None and t.model.config.history == 8
    assert get_objective("selfplay").head == "alphazero"
    states = CUBE.scramble(np.random.default_rng(7), 300, (1, 3))
    states = states[~CUBE.is_goal(states)]

    def optimal_share() -> float:
        p = make_policy(CUBE, t.model, source="policy")(states)
        return float((distance(CUBE.apply(states, p.argmax(axis=1))) == distance(states) - 1).mean())

    before = optimal_share()
    assert make_heuristic(CUBE, t.model)(states).mean() == pytest.approx(np.log(0.5) / np.log(G), abs=2)
    t.run()
    after = optimal_share()
    assert after > before + 0.25, (before, after)
    log = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    depths = [r["selfplay_depth"] for r in log if r["type"] == "train"]
    assert max(depths) >= 2  # the depth grew past 1 once the easy episodes were all solved


def test_selfplay_resumes_bit_identically(tmp_path):
    full = Trainer(replace(TINY, max_iterations=8), tmp_path / "full")
    full.run()
    cut = Trainer(replace(TINY, max_iterations=4), tmp_path / "cut")
    cut.run()
    cut.append_log(cut.train_chunk())  # work past the checkpoint that a kill throws away
    del cut
    again = Trainer(replace(TINY, max_iterations=8), tmp_path / "cut", resume=True)
    again.run()
    for a, b in ((full.model, again.model), (full.target, again.target)):
        sa, sb = a.state_dict(), b.state_dict()
        assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    assert full.counters.max_scramble_now == again.counters.max_scramble_now
    logs = [(tmp_path / d / "log.jsonl").read_text().splitlines() for d in ("full", "cut")]
    timing = ("second", "per_s", "wall")
    strip = [
        [{k: v for k, v in json.loads(x).items() if not any(w in k for w in timing)} for x in lines]
        for lines in logs
    ]
    assert strip[0] == strip[1]


def test_bad_settings_are_refused():
    with pytest.raises(PuzzleError, match="curriculum=off"):
        TrainConfig(puzzle="cube2", objective="selfplay", curriculum="plus1")
    with pytest.raises(PuzzleError, match="selfplay_simulations"):
        TrainConfig(puzzle="cube2", selfplay_simulations=0)
    with pytest.raises(PuzzleError, match="selfplay_gamma"):
        TrainConfig(puzzle="cube2", selfplay_gamma=1.5)
    with pytest.raises(PuzzleError, match="selfplay_unvisited"):
        TrainConfig(puzzle="cube2", selfplay_unvisited="max")


def test_the_cli_trains_and_exports_a_cube_network(tmp_path, capsys):
    out, model = tmp_path / "run", tmp_path / "model"
    args = [
        "train", "cube2", "--preset", "cubeconv-small", "--out", str(out), "--export", str(model),
        "--set", "objective=selfplay", "--set", "batch_size=32", "--set", "chunk_iterations=2",
        "--set", "check_every=2", "--set", "selfplay_simulations=8", "--set", "selfplay_episodes=8",
        "--set", "max_iterations=4", "--set", "eval_every=0", "--set", "threads=1", "--set", "progress=false",
    ]  # fmt: skip
    assert main(args) == 0
    net = load_model(model)
    assert net.config.arch == "cubeconv" and net.policy is not None
    assert "self-play" in net.card["algorithm"]
    capsys.readouterr()
    bad = ["train", "puzzle8", "--preset", "cubeconv", "--max-minutes", "1", "--out", str(tmp_path / "x")]
    assert main(bad) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "cube" in err and "Traceback" not in err


def test_search_time_symmetry_maps_the_policy_back():
    # the oracle is equivariant (values and optimal moves do not depend on how the cube is held),
    # so evaluating it on random symmetric images and mapping the policy back changes nothing
    from puzzlezero.train.objectives.selfplay import symmetrized

    sym = cube_symmetries(CUBE)
    hist = CUBE.scramble(np.random.default_rng(5), 40, (1, 8))[:, None].repeat(2, axis=1)
    hist[:, 1] = 255  # no earlier state: the marker survives every symmetry
    wrapped = symmetrized(oracle, sym, np.random.default_rng(6))
    p, d = wrapped(hist)
    p0, d0 = oracle(hist)
    assert np.allclose(p, p0) and np.allclose(d, d0)

    # a network that always favours U on the image it sees favours, on the cube itself, the move
    # the symmetry turns into U
    def likes_u(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert (states[:, 1] == 255).all()
        return np.eye(12, dtype=np.float32)[np.zeros(len(states), dtype=int)], np.zeros(
            len(states), np.float32
        )

    p, _ = symmetrized(likes_u, sym, np.random.default_rng(6))(hist)
    k = np.random.default_rng(6).integers(48, size=len(hist))
    assert (sym.moves[k, p.argmax(axis=1)] == 0).all()
