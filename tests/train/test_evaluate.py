"""The training-time evaluation: the fixed 15-puzzle validation set (its optimal costs checked by an
independent IDA*), error figures against hand-computed values, BWAS on sets without exact costs,
the progress-bar headline and the training plot with old and new log records."""

from __future__ import annotations

import json

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.errors import ModelFileError
from puzzlezero.train import evaluate as ev
from puzzlezero.train.evaluate import (
    RANDOM_DEPTH,
    EvalSet,
    eval_set_for,
    evaluate,
    headline,
    load_fixed_set,
    make_eval_set,
)

VALID_FILE = ev.DATA_DIR / ev.FIXED_SETS["puzzle15"]


@pytest.fixture(scope="module")
def p15():
    return make("puzzle15")


@pytest.fixture(scope="module")
def valid_rows():
    return json.loads(VALID_FILE.read_text(encoding="utf-8"))


# ---- the fixed 15-puzzle set -----------------------------------------------------------------------
def test_fixed_set_loads_with_exact_costs(p15, valid_rows):
    es = load_fixed_set(p15)
    assert es is not None and es.true_cost is not None and es.reference == "true cost-to-go"
    assert valid_rows["puzzle"] == "puzzle15" and "IDA*" in valid_rows["method"]
    walk = valid_rows["walk_depths"]
    assert len(walk) >= 8 and min(walk) == 5 and max(walk) >= 150 and not valid_rows["dropped"]
    counts = dict(zip(*np.unique(es.depths, return_counts=True), strict=True))
    assert counts == {d: 20 for d in [*walk, RANDOM_DEPTH]}
    assert es.states.shape == (20 * (len(walk) + 1), 16) and es.states.dtype == p15.dtype
    assert p15.solvable(es.states).all()
    # a walk of d moves ends at most d moves from the goal, with the parity of d
    w = es.depths != RANDOM_DEPTH
    assert (es.true_cost[w] <= es.depths[w]).all() and ((es.depths[w] - es.true_cost[w]) % 2 == 0).all()
    # per_depth keeps the first boards of each group
    few = eval_set_for(p15, (1, 2, 3), 3, seed=0)
    assert len(few.states) == 3 * (len(walk) + 1)
    np.testing.assert_array_equal(few.states[:3], es.states[:3])


def test_fixed_set_boards_are_the_documented_walks(p15, valid_rows):
    """The boards are what the header says: the puzzle's scramble with generator [seed, depth]."""
    es = load_fixed_set(p15)
    for d in (5, max(valid_rows["walk_depths"])):
        again = p15.scramble(np.random.default_rng([valid_rows["seed"], d]), 20, d)
        np.testing.assert_array_equal(es.states[es.depths == d], again)


def test_lightsout_fixed_set_has_gf2_costs_and_documented_boards():
    """The 7x7 Lights Out set: each board's cost is its minimum set of presses (an independent
    brute force over the first row's 2^7 presses and light chasing), and the boards are the
    documented scrambles."""
    lo = make("lightsout7")
    rows = json.loads((ev.DATA_DIR / ev.FIXED_SETS["lightsout7"]).read_text(encoding="utf-8"))
    es = load_fixed_set(lo)
    assert es is not None and es.true_cost is not None and len(es.states) == len(rows["states"]) == 500
    d = rows["walk_depths"][1]
    again = lo.scramble(np.random.default_rng([rows["seed"], d]), rows["per_depth"], d)
    np.testing.assert_array_equal(es.states[es.depths == d], again)

    def chase(board: np.ndarray) -> int:  # the fewest presses, by light chasing from each first row
        best = 99
        for first in range(128):
            b, presses = board.reshape(7, 7).copy(), np.zeros((7, 7), np.uint8)
            presses[0] = [(first >> c) & 1 for c in range(7)]
            for r in range(7):
                if r:
                    presses[r] = b[r - 1]
                for c in np.flatnonzero(presses[r]):
                    b = lo.apply(b.reshape(1, 49), np.array([r * 7 + c]))[0].reshape(7, 7)
            if not b.any():
                best = min(best, int(presses.sum()))
        return best

    for i in range(0, 500, 50):
        assert chase(es.states[i]) == es.true_cost[i]
    for row in rows["states"][::25]:
        moves = lo.parse_moves(row["solution"])
        assert len(moves) == row["optimal_cost"]
        assert lo.is_goal(lo.apply_moves(np.array(row["lights"], dtype=lo.dtype), moves)[None])[0]


def test_stored_solutions_replay_with_the_stored_cost(p15, valid_rows):
    for row in valid_rows["states"]:
        moves = p15.parse_moves(row["solution"])
        assert len(moves) == row["optimal_cost"]
        end = p15.apply_moves(np.array(row["tiles"], dtype=p15.dtype), moves)
        assert p15.is_goal(end[None])[0], row


def test_stored_costs_are_optimal_by_an_independent_search(p15, valid_rows):
    """IDA* over another partition (4-4-4-3, built in about a second) than the generator's 5-5-5,
    on every walk board up to depth 120 and a few random ones; A* with Manhattan on the shallow ones."""
    from puzzlezero.classic.optimal.sliding_ida import solve_sliding
    from puzzlezero.classic.optimal.sliding_pdb import load_sliding_pdb
    from puzzlezero.search import bwas

    pdb = load_sliding_pdb(4, ((1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11, 12), (13, 14, 15)))
    rows = [r for r in valid_rows["states"] if r["walk_depth"] is not None and r["walk_depth"] <= 120]
    rows += [r for r in valid_rows["states"] if r["walk_depth"] is None][:3]
    assert len(rows) >= 150
    for r in rows:
        res = solve_sliding(p15, np.array(r["tiles"], dtype=p15.dtype), pdb=pdb, time_limit=10)
        assert res.solved and res.length == r["optimal_cost"], (r, res.status, res.length)
    shallow = [r for r in valid_rows["states"] if r["walk_depth"] in (5, 10)]
    starts = np.array([r["tiles"] for r in shallow], dtype=p15.dtype)
    manhattan = lambda s: p15.manhattan(s).astype(np.float32)  # noqa: E731
    found = bwas(p15, starts, manhattan, weight=1.0, batch_size=1)
    assert [x.length for x in found] == [r["optimal_cost"] for r in shallow]


def test_eval_set_for_scrambles_puzzles_without_a_file():
    p8 = make("puzzle8")
    a, b = eval_set_for(p8, (2, 5), 4, seed=3), make_eval_set(p8, (2, 5), 4, seed=3)
    np.testing.assert_array_equal(a.states, b.states)
    assert a.true_cost is None and a.depths.tolist() == [2] * 4 + [5] * 4


def test_a_corrupt_fixed_file_is_named_in_the_error(p15, tmp_path, monkeypatch):
    monkeypatch.setattr(ev, "DATA_DIR", tmp_path)
    (tmp_path / ev.FIXED_SETS["puzzle15"]).write_text('{"puzzle": "puzzle15", "states": [{"tiles": [1, 1]}]}')
    with pytest.raises(ModelFileError, match="puzzle15_valid.json"):
        load_fixed_set(p15)
    (tmp_path / ev.FIXED_SETS["puzzle15"]).unlink()  # missing: a scrambled set instead, with a warning
    with pytest.warns(UserWarning, match="missing"):
        es = eval_set_for(p15, (3,), 2, seed=0)
    assert es.true_cost is None and len(es.states) == 2


# ---- figures on a hand-made set --------------------------------------------------------------------
def _tiny_set():
    """puzzle8: two boards 1 move away, two 2 moves away, one 'random' board 3 away (exact costs)."""
    p = make("puzzle8")
    g = p.goal()
    boards = [["D"], ["R"], ["D", "D"], ["R", "R"], ["D", "R", "D"]]
    states = np.stack([p.apply_moves(g, p.parse_moves(m)) for m in boards])
    depths = np.array([1, 1, 2, 2, RANDOM_DEPTH])
    cost = np.array([1, 1, 2, 2, 3], dtype=np.float32)
    assert (p.manhattan(states) == cost).all()  # these costs are exact (Manhattan is a lower bound)
    pred = {states[i].tobytes(): v for i, v in enumerate([1.5, 0.5, 2.0, 3.0, 1.0])}

    def h(s):
        base = p.manhattan(s).astype(np.float32)
        return np.array([pred.get(x.tobytes(), b) for x, b in zip(s, base, strict=True)], dtype=np.float32)

    return p, EvalSet(states, depths, cost, source="hand-made"), h


def test_error_figures_equal_hand_computed_values():
    p, es, h = _tiny_set()
    rec = evaluate(p, h, es, max_steps=5)
    assert rec["depths"] == [1, 2] and rec["counts"] == [2, 2]
    # depth 1: errors +0.5, -0.5; depth 2: 0, +1; random: 1 - 3 = -2
    assert rec["mae"] == [0.5, 0.5] and rec["bias"] == [0.0, 0.5]
    assert rec["underestimate_pct"] == [50.0, 50.0]
    assert rec["mean_pred"] == [1.0, 2.5] and rec["mean_ref"] == [1.0, 2.0]
    assert rec["random"] == {
        "n": 1,
        "solved_pct": 100.0,
        "mean_pred": 1.0,
        "mean_ref": 3.0,
        "mae": 2.0,
        "bias": -2.0,
        "underestimate_pct": 100.0,
    }
    o = rec["overall"]
    assert (o["n"], o["mae"], o["bias"], o["underestimate_pct"]) == (5, 0.8, -0.2, 60.0)
    assert rec["reference"] == "true cost-to-go" and rec["eval_set"] == "hand-made"
    assert "bwas_solved_pct" not in rec and "bwas" not in rec  # exact costs: no BWAS needed
    assert headline(rec) == {"val MAE": "0.80", "greedy": "100%"}


def test_bwas_figures_on_a_set_without_exact_costs():
    p = make("puzzle8")
    es = make_eval_set(p, (1, 4, 30), 5, seed=7)
    manhattan = lambda s: p.manhattan(s).astype(np.float32)  # noqa: E731
    rec = evaluate(p, manhattan, es, max_steps=30, bwas_states=7, bwas_weight=1.0)
    assert "mae" not in rec and rec["reference"].startswith("scramble depth")
    assert rec["bwas"]["states"] == 7 and rec["overall"]["bwas_solved_pct"] == 100.0
    assert rec["bwas_solved_pct"] == [100.0, 100.0, 100.0]
    # A* with an admissible heuristic finds optimal lengths: 1 for one-move walks, at most 4 for four
    assert rec["bwas_mean_length"][0] == 1.0 and rec["bwas_mean_length"][1] <= 4
    none = evaluate(p, manhattan, es, max_steps=30, bwas_states=0)
    assert "bwas_solved_pct" not in none and none["solved_pct"] == rec["solved_pct"]
    assert set(headline(rec)) == {"greedy", "BWAS"}


def test_bwas_subset_spreads_over_depths():
    depths = np.repeat([1, 2, 3], 4)
    pick = ev.bwas_subset(depths, 5)
    assert depths[pick].tolist() == [1, 2, 3, 1, 2] and len(set(pick.tolist())) == 5


def test_headline_formats_old_and_empty_records():
    assert headline({"depths": [1, 2], "solved_pct": [100.0, 50.0]}) == {"greedy": "75%"}
    old_exact = {"depths": [1, 2], "counts": [1, 3], "solved_pct": [100, 0], "mae": [0.0, 2.0]}
    assert headline(old_exact) == {"val MAE": "1.50", "greedy": "25%"}
    assert headline({"overall": {"solved_pct": 12.345, "bwas_solved_pct": 99.6}}) == {
        "greedy": "12%",
        "BWAS": "100%",
    }
    assert headline({}) == {}


# ---- the plot ----------------------------------------------------------------------------------------
def _write_log(run, records):
    run.mkdir()
    (run / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _train(samples):
    return {
        "type": "train",
        "samples": samples,
        "loss": 0.5 / (1 + samples),
        "target_updated": samples == 200,
    }


OLD_EVAL = {
    "type": "eval",
    "iteration": 2,
    "samples": 200,
    "max_steps": 4,
    "depths": [1, 2, 4],
    "solved_pct": [100.0, 80.0, 40.0],
    "mean_pred": [1.0, 1.8, 3.1],
    "mean_ref": [1.0, 2.0, 4.0],
    "reference": "scramble depth (upper bound)",
}


def test_plot_run_with_old_and_new_records(tmp_path):
    from puzzlezero.train.report import plot_run, validation_series

    p, es, h = _tiny_set()
    new = [{"type": "eval", "samples": s, "max_steps": 5, **evaluate(p, h, es, 5)} for s in (300, 400)]
    old_run, new_run = tmp_path / "old", tmp_path / "new"
    _write_log(old_run, [_train(100), _train(200), OLD_EVAL])
    _write_log(new_run, [_train(100), _train(200), OLD_EVAL, *new])
    for run in (old_run, new_run):
        path = plot_run(run)
        assert path == run / "training.png" and path.read_bytes()[:4] == b"\x89PNG"

    title, ylabel, series = validation_series([OLD_EVAL])
    assert ylabel == "% solved" and series["greedy, all depths"] == ([200], [pytest.approx(220 / 3)])
    assert series["greedy, depth 4"] == ([200], [40.0])
    title, ylabel, series = validation_series([OLD_EVAL, *new])  # MAE only where the records have it
    assert "hand-made" in title and ylabel.startswith("mean absolute error")
    assert series["depth 1"] == ([300, 400], [0.5, 0.5]) and series["random boards"][1] == [2.0, 2.0]
    assert series["all states"] == ([300, 400], [0.8, 0.8])
