"""DAVI training (puzzlezero.train): config, learning, exact resume, evaluation, CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn import load_model, make_heuristic
from puzzlezero.train import DAVITrainer, TrainConfig
from puzzlezero.train.evaluate import greedy_rollout, greedy_solved, make_eval_set
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


TINY = tiny_train_config()


def _same_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _train_lines(run_dir) -> list[dict]:
    """Log lines without the wall-clock fields (which never repeat)."""
    out = []
    for line in (run_dir / "log.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out.append(
            {k: v for k, v in rec.items() if k not in ("wall_seconds", "samples_per_s", "eval_seconds")}
        )
    return out


# ---- config --------------------------------------------------------------------------------------
def test_config_json_round_trip_and_overrides(tmp_path):
    cfg = TINY.with_overrides(["lr=3e-4", "eval_depths=[1,3,5]", "max_iterations=null", "progress=true"])
    assert (cfg.lr, cfg.eval_depths, cfg.max_iterations, cfg.progress) == (3e-4, (1, 3, 5), None, True)
    path = tmp_path / "c.json"
    path.write_text(cfg.to_json())
    assert TrainConfig.from_json(path) == cfg


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("nosuch=1", "key=value with a config key"),
        ("batch_size", "key=value"),
        ("batch_size=many", "cannot read 'many' as int"),
        ("batch_size=0", "batch_size must be >= 1"),
        ("check_every=15", "multiple of chunk_iterations"),
        ("lr=null", "may not be null"),
    ],
)
def test_bad_overrides_raise_puzzle_errors(assignment, message):
    with pytest.raises(PuzzleError, match=message):
        TINY.with_overrides([assignment])


def test_config_file_errors(tmp_path):
    with pytest.raises(ModelFileError, match="no such config file"):
        TrainConfig.from_json(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"puzzle": "cube2", "batch": 3}')
    with pytest.raises(PuzzleError, match=r"unknown keys \['batch'\]"):
        TrainConfig.from_json(tmp_path / "bad.json")


# ---- learning ------------------------------------------------------------------------------------
def test_davi_learns_cube2_in_seconds(tmp_path):
    """Greedy solve rate and value accuracy at low depths rise clearly over the untrained net."""
    puzzle = make("cube2")
    cfg = replace(
        TINY,
        preset="small",
        h1=200,
        h2=100,
        batch_size=200,
        max_iterations=200,
        max_scramble=6,
        check_every=30,
    )
    trainer = DAVITrainer(cfg, tmp_path / "run")
    es = make_eval_set(puzzle, (1, 2, 3, 4), 100, seed=99)
    assert es.true_cost is not None  # cube2 has an exact table

    def scores() -> tuple[float, float]:
        h = make_heuristic(puzzle, trainer.model)
        solved = greedy_rollout(puzzle, h, es.states, max_steps=4).mean()
        return float(solved), float(np.abs(h(es.states) - es.true_cost).mean())

    solved0, err0 = scores()
    summary = trainer.run()
    solved1, err1 = scores()
    assert summary["stop_reason"] == "finished" and summary["iteration"] == 200
    assert summary["target_updates"] >= 3  # the target network really moved (loss < epsilon at checks)
    assert solved1 >= 0.8 and solved1 >= solved0 + 0.4, (solved0, solved1)
    assert err1 <= 0.5 and err1 < err0 / 2, (err0, err1)


@pytest.mark.parametrize("solver", [greedy_rollout, greedy_solved])
def test_greedy_search_with_the_exact_distance_solves_everything(solver):
    from puzzlezero.puzzles.cube.table import distance

    puzzle = make("cube2")
    es = make_eval_set(puzzle, (2, 5, 9), 30, seed=1)
    exact = lambda s: distance(s).astype(np.float32)  # noqa: E731
    assert solver(puzzle, exact, es.states, 9).all()
    assert not solver(puzzle, exact, es.states, 1)[es.true_cost > 1].any()
    blind = lambda s: np.zeros(len(s), np.float32)  # noqa: E731
    assert solver(puzzle, blind, es.states, 9)[es.depths == 9].mean() < 0.2


def test_warm_start_then_davi(tmp_path):
    run = tmp_path / "run"
    warm = DAVITrainer(replace(TINY, warmup_iterations=20, max_iterations=20), run)
    warm.run()
    # the warm start regresses on scramble depth, then hands its weights to the target network
    assert _same_weights(warm.target.state_dict(), warm.model.state_dict())
    assert warm.counters.target_update_iterations == [20]
    DAVITrainer(replace(TINY, warmup_iterations=20, max_iterations=40), run, resume=True).run()
    lines = _train_lines(run)
    assert [r["phase"] for r in lines] == ["warmup", "warmup", "davi", "davi"]
    assert [r["target_updated"] for r in lines] == [False, True, False, lines[3]["loss"] < TINY.epsilon]


# ---- exact resume --------------------------------------------------------------------------------
def test_resume_after_kill_is_bit_identical(tmp_path):
    k = 40
    full = DAVITrainer(replace(TINY, max_iterations=2 * k), tmp_path / "full")
    full.run()

    first = DAVITrainer(replace(TINY, max_iterations=k), tmp_path / "cut")
    first.run()  # stops at k with a checkpoint
    # keep training past the checkpoint and "die" without writing another one: that work is lost
    first.append_log(first.train_chunk())
    first.append_log(first.train_chunk())
    del first
    second = DAVITrainer(replace(TINY, max_iterations=2 * k), tmp_path / "cut", resume=True)
    assert second.counters.iteration == k
    second.run()

    assert _same_weights(full.model.state_dict(), second.model.state_dict())
    assert _same_weights(full.target.state_dict(), second.target.state_dict())
    assert full.counters.target_updates == second.counters.target_updates >= 1
    assert _train_lines(tmp_path / "full") == _train_lines(tmp_path / "cut")
    assert (
        full.optimizer.state_dict()["state"][0]["step"] == second.optimizer.state_dict()["state"][0]["step"]
    )


def test_resume_refuses_changed_settings_and_fresh_runs_refuse_old_folders(tmp_path):
    DAVITrainer(replace(TINY, max_iterations=10), tmp_path / "run").run()
    with pytest.raises(PuzzleError, match=r"changed settings \['lr'\]"):
        DAVITrainer(replace(TINY, max_iterations=20, lr=0.1), tmp_path / "run", resume=True)
    with pytest.raises(PuzzleError, match="already holds a training run"):
        DAVITrainer(replace(TINY, max_iterations=10), tmp_path / "run")
    (tmp_path / "run" / "checkpoint.pt").write_bytes(b"garbage")
    with pytest.raises(ModelFileError, match="checkpoint.pt"):
        DAVITrainer(replace(TINY, max_iterations=20), tmp_path / "run", resume=True)


def test_time_limit_stops_cleanly_with_a_checkpoint(tmp_path):
    trainer = DAVITrainer(replace(TINY, max_iterations=None), tmp_path / "run")
    summary = trainer.run(max_minutes=1e-6)
    assert summary["stop_reason"] == "time limit" and summary["iteration"] == TINY.chunk_iterations
    assert DAVITrainer.from_run(tmp_path / "run").counters.iteration == TINY.chunk_iterations


# ---- evaluation, plot, export, CLI ---------------------------------------------------------------
def test_cli_train_end_to_end(tmp_path, capsys):
    run, model = tmp_path / "run", tmp_path / "model"
    cfg_file = tmp_path / "cfg.json"
    cfg_file.write_text(replace(TINY, eval_every=20, eval_states=10).to_json())
    argv = [
        "train",
        "cube2",
        "--config",
        str(cfg_file),
        "--out",
        str(run),
        "--set",
        "max_iterations=40",
        "--export",
        str(model),
    ]
    assert main(argv) == 0
    assert "finished: 40 iterations, 4,000 samples" in capsys.readouterr().out
    assert {p.name for p in run.iterdir()} >= {"config.json", "checkpoint.pt", "log.jsonl", "training.png"}
    evals = [r for r in _train_lines(run) if r["type"] == "eval"]
    assert [r["iteration"] for r in evals] == [20, 40]
    assert evals[-1]["reference"] == "true cost-to-go" and evals[-1]["depths"][0] == 1
    net = load_model(model)
    card = net.card
    assert (net.puzzle, card["iterations"], card["samples_seen"]) == ("cube2", 40, 4000)
    assert card["last_eval"]["iteration"] == 40 and card["train_config"]["batch_size"] == 100
    puzzle = make("cube2")
    assert make_heuristic(puzzle, net)(puzzle.goals(2)).tolist() == [0.0, 0.0]

    assert main(["train", "cube2", "--out", str(run), "--resume", "--set", "max_iterations=60"]) == 0
    assert main(["export", str(run), str(tmp_path / "model2")]) == 0
    assert load_model(tmp_path / "model2").card["iterations"] == 60
    # a run or a model folder written again in half precision: same card, same values to 1e-2
    assert main(["export", str(run), str(tmp_path / "half"), "--half"]) == 0
    assert main(["export", str(tmp_path / "half"), str(tmp_path / "half2")]) == 0
    assert "(weights in float32)" in capsys.readouterr().out.splitlines()[-1]
    states = puzzle.scramble(np.random.default_rng(3), 50, (1, 14))
    full, half = (make_heuristic(puzzle, load_model(tmp_path / m))(states) for m in ("model2", "half2"))
    assert load_model(tmp_path / "half2").card == load_model(tmp_path / "model2").card
    np.testing.assert_allclose(half, full, atol=2e-2)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "nosuch", "--max-minutes", "1"], "unknown puzzle 'nosuch'"),
        (["train", "cube2"], "no stopping rule"),
        (["train", "cube2", "--max-minutes", "1", "--preset", "giant"], "unknown network preset 'giant'"),
        (["train", "cube2", "--max-minutes", "1", "--set", "bogus=1"], "key=value with a config key"),
        (["train", "cube2", "--max-minutes", "1", "--resume"], "nothing to resume in"),
    ],
)
def test_cli_errors_are_one_line_messages(tmp_path, capsys, argv, message):
    assert main([*argv, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
