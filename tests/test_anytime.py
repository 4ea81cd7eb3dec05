"""Anytime solving: restarts with stronger settings keep the shortest solution, the cost bound
prunes exactly, the time budget holds, and the solver turns it on by default only where it should."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from test_search import bfs_distances

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.search import bwas
from puzzlezero.search.anytime import anytime
from puzzlezero.search.qstar import q_from_value, qstar
from puzzlezero.solver import DEFAULTS, resolve_options, solve_many, verify


@pytest.fixture(scope="module")
def p8():
    p = make("puzzle8")
    dist = bfs_distances(p)
    exact = lambda s: np.array([dist[x.tobytes()] for x in s], dtype=np.float32)  # noqa: E731
    starts = p.scramble(np.random.default_rng(7), 6, (20, 40))
    return p, exact, starts


def test_the_stages_improve_on_the_first_solution_and_the_last_is_optimal(p8):
    p, exact, starts = p8
    # greedy with a misleading heuristic first (long solutions), then A* with the exact one
    noisy = lambda s: exact(s) * 3.0 + (s[:, 0] % 3)  # noqa: E731
    first = bwas(p, starts, noisy, weight=0.0, batch_size=1)
    results = anytime(bwas, p, starts, noisy, [(0.0, 1), (1.0, 50)], time_limit=60.0)
    optimal = exact(starts).astype(int)
    assert verify(p, starts, [r.actions for r in results]).all()
    for r, f, opt in zip(results, first, optimal, strict=True):
        lengths = [n for _, n in r.improvements]
        assert lengths[0] == f.length and lengths == sorted(lengths, reverse=True)
        assert r.length == lengths[-1] <= f.length and r.length >= opt
        assert r.nodes_generated > f.nodes_generated  # both stages counted
        assert all(t <= r.seconds for t, _ in r.improvements)
    # the exact heuristic at weight 1 is optimal, and the stage only looked for shorter solutions
    exact_runs = anytime(bwas, p, starts, exact, [(0.0, 1), (1.0, 50)], time_limit=60.0)
    assert [r.length for r in exact_runs] == optimal.tolist()


def test_the_cost_bound_prunes_exactly(p8):
    p, exact, starts = p8
    opt = exact(starts)
    at_opt = bwas(p, starts, exact, weight=1.0, batch_size=10, max_cost=opt)
    assert [r.length for r in at_opt] == opt.astype(int).tolist()
    below = bwas(p, starts, exact, weight=1.0, batch_size=10, max_cost=opt - 1)
    assert all(r.status == "exhausted" for r in below)  # no solution of cost <= opt - 1 exists
    # Q* takes the same bound
    below_q = qstar(p, starts, q_from_value(p, exact), weight=1.0, batch_size=10, max_cost=opt - 1)
    assert all(r.status == "exhausted" for r in below_q)


def test_a_start_that_is_solved_and_a_spent_budget(p8):
    p, exact, starts = p8
    (r,) = anytime(bwas, p, p.goals(1), exact, [(0.5, 10), (1.0, 10)], time_limit=5.0)
    assert r.solved and r.actions == () and r.improvements == ((r.improvements[0][0], 0),)
    slow = lambda s: exact(s) * 0.0  # noqa: E731  (blind: the first stage cannot finish in time)
    hardest = p.parse("8 6 7 2 5 4 3 0 1")[
        None
    ]  # 31 moves: blind search must visit most of the 181,440 states
    (r,) = anytime(bwas, p, hardest, slow, [(1.0, 1), (1.0, 100)], time_limit=0.05)
    assert not r.solved and r.status == "time limit" and r.seconds < 2.0
    with pytest.raises(PuzzleError, match="at least one"):
        anytime(bwas, p, starts, exact, [], time_limit=1.0)


def test_the_solver_runs_a_schedule_only_for_the_puzzles_own_search_and_settings():
    cube = make("cube3")
    d = DEFAULTS["cube3"]
    assert d.stages and resolve_options(cube).stages == d.stages
    assert resolve_options(cube).search == d.search
    assert resolve_options(cube, weight=0.4).stages == ()  # one named setting: one search
    assert resolve_options(cube, anytime=False).stages == ()
    other = "qstar" if d.search == "bwas" else "bwas"
    assert resolve_options(cube, search=other).stages == ()
    with pytest.raises(PuzzleError, match="anytime solving runs"):
        resolve_options(cube, anytime=True, batch=100)
    with pytest.raises(PuzzleError, match="has no schedule"):
        resolve_options(make("puzzle8"), anytime=True)


def test_solve_reports_when_the_first_solution_came(monkeypatch, capsys):
    from puzzlezero import solver

    monkeypatch.setitem(
        solver.DEFAULTS, "puzzle8", replace(DEFAULTS["puzzle8"], stages=((0.0, 1), (1.0, 20)))
    )
    state = "8 6 7 2 5 4 3 0 1"  # 31 moves from the goal
    (r,) = solve_many("puzzle8", [state], heuristic="pdb")
    assert r.solved and r.length == 31 and r.first_solution_seconds is not None
    assert main(["solve", "puzzle8", state, "--heuristic", "pdb", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["length"] == 31 and out["first_solution_seconds"] <= out["seconds"]
    assert out["improvements"][-1]["length"] == 31


def test_a_schedule_of_ones_own_from_the_command_line(capsys):
    state = "8 6 7 2 5 4 3 0 1"
    argv = ["solve", "puzzle8", state, "--heuristic", "pdb", "--json", "--stages", "0:1,1:20"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["length"] == 31 and len(out["improvements"]) >= 1
    assert main(["solve", "puzzle8", state, "--heuristic", "pdb", "--stages", "0.4"]) == 2
    assert "is not weight:batch" in capsys.readouterr().err
    assert main(["solve", "puzzle8", state, "--stages", "0:1", "--weight", "0.5"]) == 2
    assert "without --weight/--batch" in capsys.readouterr().err


def test_children_beyond_the_cost_bound_are_never_recorded(p8):
    """Every state the search records has its heuristic value: a child pruned by ``max_cost`` is
    not kept half-made (it would re-enter later, reached more cheaply, with no value at all)."""
    from puzzlezero.search.bwas import _Bwas

    p, exact, starts = p8
    bound = exact(starts) - 2  # tight: many children are pruned
    search = _Bwas.checked(p, starts, exact, 0.3, 5, None, None, "expand", None, bound)
    results = search.run()
    h = search.table.h[: search.table.n]
    assert np.isfinite(h).all()
    assert search.table.g[: search.table.n].max() <= bound.max()
    assert all(r.status == "exhausted" for r in results)
