"""Anytime solving: restarts with stronger settings keep the shortest solution, the cost bound
prunes exactly, the time budget holds, and the solver turns it on by default only where it should."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.search import beam, bwas
from puzzlezero.search.anytime import anytime, anytime_beam
from puzzlezero.search.qstar import q_from_value, qstar
from puzzlezero.solver import DEFAULTS, resolve_options, solve_many, verify
from tests.search.test_search import bfs_distances


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


def test_a_start_that_is_solved_and_a_spent_budget(p8, monkeypatch):
    from tests.clock import FakeClock

    p, exact, starts = p8
    (r,) = anytime(bwas, p, p.goals(1), exact, [(0.5, 10), (1.0, 10)], time_limit=5.0)
    assert r.solved and r.actions == () and r.improvements == ((r.improvements[0][0], 0),)
    clock = FakeClock()  # the schedule and its searches on one fake clock: 10 ms a heuristic call
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", clock)

    def slow(s):  # blind: the first stage cannot finish in time
        clock.sleep(0.01)
        return exact(s) * 0.0

    hardest = p.parse("8 6 7 2 5 4 3 0 1")[
        None
    ]  # 31 moves: blind search must visit most of the 181,440 states
    (r,) = anytime(bwas, p, hardest, slow, [(1.0, 1), (1.0, 100)], time_limit=0.05)
    assert not r.solved and r.status == "time limit" and 0.05 <= r.seconds < 0.05 + 0.01 + 1e-9
    assert r.iterations <= 6  # the first stage stopped within a call of the limit; the second never began
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
    from puzzlezero.search.bwas import BatchWeightedAStar

    p, exact, starts = p8
    bound = exact(starts) - 2  # tight: many children are pruned
    search = BatchWeightedAStar.checked(
        p, starts, exact, weight=0.3, batch_size=5, max_nodes=None, max_cost=bound
    )
    results = search.run()
    h = search.table.h[: search.table.n]
    assert np.isfinite(h).all()
    assert search.table.g[: search.table.n].max() <= bound.max()
    assert all(r.status == "exhausted" for r in results)


# ---- beam search restarted with wider beams ------------------------------------------------------
@pytest.fixture(scope="module")
def p8_manhattan():
    """puzzle8 states on which a beam of 2 under the Manhattan distance finds long solutions, and
    one of 50 optimal ones (a test that a wider beam did something can fail)."""
    p = make("puzzle8")
    starts = p.scramble(np.random.default_rng(2), 8, depth=(30, 80))
    return p, (lambda s: p.manhattan(s).astype(np.float32)), starts


def test_a_beam_bounded_below_its_solution_finds_none_and_at_it_the_same_path(p8_manhattan):
    p, h, starts = p8_manhattan
    free = beam(p, starts, h, beam_width=2, max_steps=200)
    assert all(r.solved for r in free)
    lengths = np.array([r.length for r in free], dtype=np.float64)
    # up to its own length no child is beyond the bound: the very same beams, the same path
    at = beam(p, starts, h, beam_width=2, max_steps=200, max_cost=lengths)
    assert [r.actions for r in at] == [r.actions for r in free]
    # one below: the same beams up to the last step, whose children are all dropped
    below = beam(p, starts, h, beam_width=2, max_steps=200, max_cost=lengths - 1)
    assert [(r.solved, r.status) for r in below] == [(False, "exhausted")] * len(starts)
    assert [r.iterations for r in below] == lengths.astype(int).tolist()


def test_wider_beams_only_shorten_the_narrow_ones_answer(p8_manhattan):
    p, h, starts = p8_manhattan
    narrow = beam(p, starts, h, beam_width=2, max_steps=200)
    wide = beam(p, starts, h, beam_width=50, max_steps=200)
    assert any(w.length < n.length for n, w in zip(narrow, wide, strict=True))  # the test can tell
    results = anytime_beam(beam, p, starts, h, [2, 50], time_limit=60.0, max_steps=200)
    assert verify(p, starts, [r.actions for r in results]).all()
    for r, n, w in zip(results, narrow, wide, strict=True):
        assert r.improvements[0][1] == n.length  # the narrow beam answers first
        assert r.length == min(n.length, w.length)
        assert [k for _, k in r.improvements] == sorted({n.length, r.length}, reverse=True)
        assert r.nodes_generated > n.nodes_generated  # both beams counted


def test_a_wide_beam_out_of_nodes_leaves_the_narrow_ones_answer(p8, p8_manhattan):
    p, h, starts = p8_manhattan
    exact = p8[1]
    starts = starts[exact(starts) >= 10]  # a beam of 10,000 meets the goal only past 1,000 nodes
    narrow = beam(p, starts, h, beam_width=2, max_steps=200)
    assert len(starts) >= 3 and max(r.nodes_generated for r in narrow) < 1_000
    wide = beam(p, starts, h, beam_width=10_000, max_steps=200, max_nodes=1_000)
    assert all(r.status == "node limit" for r in wide)
    results = anytime_beam(beam, p, starts, h, [2, 10_000], time_limit=60.0, max_nodes=1_000, max_steps=200)
    assert [(r.solved, r.status, r.length) for r in results] == [(True, "solved", n.length) for n in narrow]


def test_a_group_is_bounded_by_its_cheapest_member(p8_manhattan):
    p, h, starts = p8_manhattan
    pair = starts[[0, 1]]  # as one group (the guises of one problem), whatever they are
    first = [r.length for r in beam(p, pair, h, beam_width=2, max_steps=200)]
    assert first[0] != first[1]
    bounds = []

    def spy(puzzle, rows, heuristic, **kw):
        bounds.append(np.asarray(kw["max_cost"]).tolist())
        return beam(puzzle, rows, heuristic, **kw)

    anytime_beam(spy, p, pair, h, [2, 50], time_limit=60.0, max_steps=200, groups=np.array([0, 0]))
    assert min(bounds[0]) > 1e30  # no bound before a solution
    assert bounds[1] == [min(first) - 1] * 2


def test_its_beams_are_paced_where_the_search_can_be(p8_manhattan):
    """A search that takes ``pace`` is asked to pace every beam up to the schedule's width (the
    beam itself paces only a bounded one: tests/search/test_beam.py); one that does not is never
    given the keyword (the spy of the test above)."""
    p, h, starts = p8_manhattan
    asked = []

    def paced(puzzle, rows, heuristic, *, pace=None, **kw):
        asked.append(pace)
        return beam(puzzle, rows, heuristic, pace=pace, **kw)

    results = anytime_beam(paced, p, starts, h, [2, 50], time_limit=60.0, max_steps=200)
    assert asked == [2, 50] and verify(p, starts, [r.actions for r in results]).all()


@pytest.mark.parametrize(
    ("widths", "message"), [([], "at least one width"), ([10, 0], "beam_width must be positive")]
)
def test_bad_widths(p8_manhattan, widths, message):
    p, h, starts = p8_manhattan
    with pytest.raises(PuzzleError, match=message):
        anytime_beam(beam, p, starts, h, widths, time_limit=1.0)
