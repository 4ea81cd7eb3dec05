"""Beam search: optimal with a perfect heuristic at width 1, verified solutions, batches equal to one
instance at a time, one heuristic call per step on fresh states only, statuses, solver and CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from puzzlezero import make, solver
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import SearchStats, beam
from puzzlezero.solver import HeuristicSpec, solve, verify
from tests.search.test_search import GraphPuzzle


# ---- helpers -------------------------------------------------------------------------------------
def exact_cube2(puzzle: Any = None) -> Any:
    """The exact cube2 distance table as a heuristic (a perfect one)."""
    table = pytest.importorskip("puzzlezero.puzzles.cube.table")
    return lambda s: table.distance(s).astype(np.float32)


def manhattan(puzzle: Puzzle) -> Any:
    """Sliding-tile Manhattan distance: admissible, far from exact, full of ties."""
    return lambda s: puzzle.manhattan(s).astype(np.float32)


def zero(s: np.ndarray) -> np.ndarray:
    return np.zeros(len(s), np.float32)


class Recorder:
    """Wraps a heuristic and keeps the states of every call."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, []

    def __call__(self, states: np.ndarray) -> np.ndarray:
        self.calls.append([s.tobytes() for s in states])
        return self.inner(states)


def check_solutions(puzzle: Puzzle, starts: np.ndarray, results: list[Any]) -> None:
    """Every solved result replays to a goal, its path states match, and nodes are counted per step."""
    solved = [r.solved for r in results]
    assert verify(puzzle, starts[solved], [r.actions for r in results if r.solved]).all()
    for s, r in zip(starts, results, strict=True):
        assert (r.nodes_generated - 1) % puzzle.num_actions == 0
        if r.solved:
            assert r.status == "solved" and r.iterations == len(r.actions)
            assert r.path_states.shape == (len(r.actions) + 1, *puzzle.state_shape)
            np.testing.assert_array_equal(r.path_states[0], s)
            assert puzzle.is_goal(r.path_states[-1:])[0]


# ---- the algorithm -------------------------------------------------------------------------------
@pytest.mark.parametrize("width", [1, 4])
def test_perfect_heuristic_gives_optimal_solutions(width: int) -> None:
    p, h = make("cube2"), exact_cube2()
    starts = p.scramble(np.random.default_rng(1), 12, depth=(3, 40))
    exact = h(starts).astype(int)
    assert exact.max() >= 10  # some hard cases
    results = beam(p, starts, h, beam_width=width)
    assert [r.length for r in results] == exact.tolist()
    check_solutions(p, starts, results)
    if width == 1:  # one state expanded per step
        assert [r.nodes_generated for r in results] == (1 + p.num_actions * exact).tolist()


@pytest.mark.parametrize("width", [1, 8, 64])
def test_solutions_replay_and_widen_with_width(width: int) -> None:
    p = make("puzzle8")
    starts = p.scramble(np.random.default_rng(2), 10, depth=(10, 60))
    results = beam(p, starts, manhattan(p), beam_width=width, max_steps=200)
    check_solutions(p, starts, results)
    assert all(r.status in ("solved", "exhausted") for r in results)
    if width == 64:
        assert all(r.solved for r in results)


def test_batch_of_instances_equals_one_at_a_time() -> None:
    p = make("puzzle8")
    starts = p.scramble(np.random.default_rng(5), 6, depth=(10, 40))
    h = manhattan(p)  # many ties: broken by the state hash, whatever shares the call
    together = beam(p, starts, h, beam_width=5, max_steps=100)
    alone = [beam(p, s, h, beam_width=5, max_steps=100)[0] for s in starts]
    assert together == alone  # actions, nodes, iterations and status (seconds aside)
    assert len({r.actions for r in together}) > 1


def test_one_heuristic_call_per_step_on_fresh_states_only() -> None:
    p = make("puzzle8")
    starts = p.scramble(np.random.default_rng(3), 5, depth=(15, 40))
    rec, stats = Recorder(manhattan(p)), SearchStats()
    results = beam(p, starts, rec, beam_width=6, max_steps=100, stats=stats)
    steps = max(r.iterations for r in results)
    assert len(rec.calls) <= steps and stats.heuristic_calls == len(rec.calls) and stats.iterations == steps
    assert stats.nodes_generated == sum(r.nodes_generated for r in results)
    for call in rec.calls:  # never a goal (tested before)
        assert not p.is_goal(np.frombuffer(b"".join(call), p.dtype).reshape(-1, *p.state_shape)).any()
    # one instance: no state twice in a call, never a state of an earlier beam
    (r,) = beam(p, starts[0], rec := Recorder(manhattan(p)), beam_width=6, max_steps=100)
    assert r.solved and len(rec.calls) == r.iterations - 1  # the last step finds the goal
    for t, call in enumerate(rec.calls):
        assert len(call) == len(set(call))
        assert not {s.tobytes() for s in r.path_states[: t + 1]} & set(call)
        assert r.path_states[t + 1].tobytes() in call


def test_width_one_never_revisits_a_state() -> None:
    # from 1 the heuristic points back to 0 (h=0): without the visited set the beam would cycle
    g = GraphPuzzle({0: [1], 1: [0, 2], 2: [3], 3: [3]}, goal=3)
    h = np.array([0, 1, 5, 0], np.float32)
    (r,) = beam(g, np.array([0], np.uint8), lambda s: h[s[:, 0]], beam_width=1, max_steps=10)
    assert r.solved and r.path_states[:, 0].tolist() == [0, 1, 2, 3]


# ---- statuses and limits ---------------------------------------------------------------------------
def test_start_already_solved() -> None:
    p = make("puzzle8")
    results = beam(p, p.goals(2), zero)
    assert [(r.solved, r.actions, r.nodes_generated, r.iterations) for r in results] == [(True, (), 1, 0)] * 2


def test_step_limit() -> None:
    p = make("puzzle8")
    start = p.scramble(np.random.default_rng(8), 1, depth=30)
    (r,) = beam(p, start, manhattan(p), beam_width=1, max_steps=3)
    assert (r.solved, r.status, r.actions, r.iterations, r.nodes_generated) == (
        False,
        "step limit",
        (),
        3,
        13,
    )


def test_node_limit_never_starts_a_step_past_the_cap() -> None:
    p = make("cube3")
    starts = p.scramble(np.random.default_rng(0), 2, depth=15)
    results = beam(p, starts, zero, beam_width=50, max_nodes=1000)
    for r in results:  # 1 -> 12 -> 50 states: 1 + 12 + 144 + 600 = 757; 600 more would pass 1000
        assert (r.solved, r.status, r.nodes_generated, r.iterations) == (False, "node limit", 757, 3)


def test_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a fake clock: each heuristic call takes 20 ms; the beam stops at the first look at the
    clock past its 0.1 s, within one more step."""
    from tests.clock import FakeClock

    p = make("cube3")
    clock, calls = FakeClock(), []
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", clock)

    def slow(s: np.ndarray) -> np.ndarray:
        calls.append(len(s))
        clock.sleep(0.02)
        return zero(s)

    (r,) = beam(p, p.scramble(np.random.default_rng(0), 1, depth=15), slow, beam_width=2, time_limit=0.1)
    assert (r.solved, r.status) == (False, "time limit") and 0.1 <= r.seconds < 0.1 + 0.02 + 1e-9
    assert 5 <= len(calls) <= 6, calls


def _paced(monkeypatch: pytest.MonkeyPatch, time_limit: float, **kwargs: Any) -> tuple[Any, list[int]]:
    """A 15-puzzle beam of 200 on a fake clock where the heuristic takes 0.1 ms a state (about
    0.04 s a step): the beam of 200 answers this start in 40 steps (1.6 s); bound 44."""
    from tests.clock import FakeClock

    p = make("puzzle15")
    start = p.scramble(np.random.default_rng(3), 1, depth=200)
    clock, calls = FakeClock(), []
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", clock)
    h = manhattan(p)

    def slow(s: np.ndarray) -> np.ndarray:
        calls.append(len(s))
        clock.sleep(1e-4 * len(s))
        return h(s)

    kwargs = {"beam_width": 200, **kwargs}
    if "expect" in kwargs:  # the steps an unbounded paced beam plans for
        monkeypatch.setattr(p, "default_scramble_depth", kwargs.pop("expect"))
    (r,) = beam(p, start, slow, max_steps=500, time_limit=time_limit, **kwargs)
    if r.solved:
        assert verify(p, start, [r.actions]).all()
    return r, calls


def test_a_paced_beam_narrows_to_reach_its_bound_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """1.0 s buys 31 of the 40 steps: unpaced, the beam runs out at step 31 and finds nothing;
    paced (the bound and the deadline known), it narrows as it goes and answers within its bound."""
    (free, _) = _paced(monkeypatch, 100.0)
    assert (free.solved, free.length) == (True, 40)
    (lost, calls) = _paced(monkeypatch, 1.0, max_cost=44)
    assert (lost.solved, lost.status, lost.iterations) == (False, "time limit", 31)
    assert min(calls[10:]) > 350  # the full beam to the end: about 400 children a step
    (paced, calls) = _paced(monkeypatch, 1.0, max_cost=44, pace=200)
    assert paced.solved and paced.length <= 44 and paced.seconds < 1.0
    assert max(calls[-10:]) < 350  # its last steps narrower (the full beam: 385-433 children)


def test_a_paced_beam_without_a_bound_plans_for_the_puzzles_scramble_depth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A schedule's first beam has no bound: paced, it plans for the puzzle's scramble depth (here
    set to 44 steps, 10% over the 40 the full beam takes; twice the start's Manhattan distance is
    as much) and answers within the 1.0 s that buy 31 steps of the full beam, where unpaced it finds
    nothing; with time for the full beam, it is that beam."""
    (lost, calls) = _paced(monkeypatch, 1.0, expect=44)
    assert (lost.solved, lost.status, lost.iterations) == (False, "time limit", 31)
    (paced, calls) = _paced(monkeypatch, 1.0, pace=200, expect=44)
    assert paced.solved and paced.seconds < 1.0
    assert max(calls[-10:]) < 350  # narrower than the full beam's 385-433 children a step
    # a scramble depth far over the distance (the sliding puzzles': 500 for this one) is capped at
    # twice the start's value (22 here): the same plan, the same beam (planned for 1,000 steps it
    # would narrow to a few states and answer in 64 moves)
    (capped, calls_capped) = _paced(monkeypatch, 1.0, pace=200, expect=1000)
    assert capped.actions == paced.actions and calls_capped == calls
    (free, calls_free) = _paced(monkeypatch, 100.0, expect=44)
    (roomy, calls_roomy) = _paced(monkeypatch, 100.0, pace=200, expect=44)
    assert roomy.actions == free.actions and len(roomy.actions) == 40
    assert calls_roomy == [1, *calls_free]  # the start's value, read once for the plan


def test_a_paced_beam_that_fits_its_time_is_the_beam_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    (free, calls) = _paced(monkeypatch, 4.0, max_cost=44)
    (paced, calls_paced) = _paced(monkeypatch, 4.0, max_cost=44, pace=200)
    assert paced.actions == free.actions and calls_paced == calls and len(free.actions) == 40


def test_a_paced_beam_widens_into_time_it_would_leave(monkeypatch: pytest.MonkeyPatch) -> None:
    """Started at 50 (about 2.1 children a beam state here, 0.1 ms each), a beam allowed 400
    widens as the time buys: with 1.5 s for its bound of 44 steps to about 200, with all the time in
    the world to 400 and no further. Not paced, it stays at 50."""
    (fixed, calls) = _paced(monkeypatch, 1.5, max_cost=44, beam_width=50)
    assert fixed.solved and max(calls) < 3 * 50
    (paced, calls) = _paced(monkeypatch, 1.5, max_cost=44, beam_width=50, pace=400)
    assert paced.solved and paced.length <= 44 and paced.seconds < 1.5
    assert max(calls[:6]) < 3 * 50 and 3 * 100 < max(calls[-10:]) < 3 * 200
    (roomy, calls) = _paced(monkeypatch, 400.0, max_cost=44, beam_width=50, pace=400)
    (wide, calls_wide) = _paced(monkeypatch, 400.0, max_cost=44, beam_width=400)
    assert roomy.solved and max(calls) == max(calls_wide) and calls[-10:] == calls_wide[-10:]


def test_a_paced_beam_at_the_goals_ball_still_plans_its_next_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """The goal's ball (radius 8 here) ends a beam that many steps sooner, so near the end the steps
    left to plan can come to none: the beam still plans its next step, and the time left sets its
    width. Planned for none, it would be given its cap, 2,000, and run out of time on a step of
    1,016 children."""
    from puzzlezero.search.goal_ball import goal_ball

    ball = goal_ball(make("puzzle15"), 1000)
    assert ball.radius == 8
    (paced, calls) = _paced(monkeypatch, 1.0, max_cost=42, pace=2000, ball=ball)
    assert paced.solved and paced.length <= 42 and paced.seconds < 1.0
    assert max(calls) < 3 * 200  # never near the cap: about 2.1 children a beam state


def test_exhausted_when_the_beam_empties() -> None:
    g = GraphPuzzle({0: [1], 1: [0, 2], 2: [1], 3: [3]}, goal=3)
    (r,) = beam(g, np.array([0], np.uint8), lambda s: np.ones(len(s), np.float32), beam_width=5)
    assert (r.solved, r.status, r.iterations, r.nodes_generated) == (False, "exhausted", 3, 1 + 3 * 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"beam_width": 0}, "beam_width must be positive"),
        ({"beam_width": 2.5}, "beam_width must be an integer"),
        ({"max_steps": -1}, "max_steps"),
        ({"max_nodes": 0}, "max_nodes"),
        ({"time_limit": -1.0}, "time_limit"),
        ({"pace": 0}, "pace must be positive"),
        ({"pace": True}, "pace must be an integer"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    p = make("puzzle8")
    with pytest.raises(PuzzleError, match=message):
        beam(p, p.goals(1), zero, **kwargs)


# ---- solver and command line ---------------------------------------------------------------------
@pytest.fixture
def test_heuristics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(solver.HEURISTICS, "exact", HeuristicSpec(exact_cube2))
    monkeypatch.setitem(solver.HEURISTICS, "manhattan", HeuristicSpec(manhattan))
    solver.get_heuristic.cache_clear()


@pytest.mark.usefixtures("test_heuristics")
def test_solver_runs_beam_by_name_with_per_puzzle_width() -> None:
    r = solve("cube2", "R U F' U R2 F", search="beam", heuristic="exact", beam_width=1)
    assert (r.solved, r.length, r.search) == (True, 7, "beam")
    opts = solver.resolve_options(make("cube3"), search="beam")
    assert opts.beam_width == solver.DEFAULTS["cube3"].beam_width == 1000
    assert solver.resolve_options(make("puzzle8"), search="beam").beam_width == 100  # per puzzle
    assert solver.resolve_options(make("cube3"), search="beam", beam_width=7).beam_width == 7
    assert all(min(np.atleast_1d(d.beam_width)) > 0 for d in solver.DEFAULTS.values())
    with pytest.raises(PuzzleError, match="beam_width must be positive"):
        solve("cube2", "R", search="beam", heuristic="exact", beam_width=0)


@pytest.mark.usefixtures("test_heuristics")
def test_solver_runs_a_schedule_of_widths_with_and_without_images() -> None:
    p = make("puzzle8")
    starts = p.scramble(np.random.default_rng(2), 8, depth=(30, 80))
    h = manhattan(p)
    narrow, wide = (beam(p, starts, h, beam_width=w, max_steps=200) for w in (2, 50))
    opts = solver.resolve_options(p, search="beam", heuristic="manhattan", beam_width=[2, 50])
    assert opts.beam_width == (2, 50)
    wider = solver.resolve_options(p, search="beam", beam_width=[2, 300])  # its widest sizes the cap
    assert wider.max_nodes == 3 * solver.DEFAULTS["puzzle8"].max_nodes == 3 * opts.max_nodes
    assert solver.resolve_options(p, search="beam", beam_width=(7,)).beam_width == 7  # one: no schedule
    for n, w, s in zip(narrow, wide, starts, strict=True):
        r = solve(p, s, search="beam", heuristic="manhattan", beam_width=(2, 50))
        assert r.solved and r.length == min(n.length, w.length) and r.improvements[0][1] == n.length
        imaged = solve(p, s, search="beam", heuristic="manhattan", beam_width=(2, 50), options={"images": 1})
        assert imaged.solved and imaged.length <= r.length  # the transpose too, the shorter kept
        assert [k for _, k in imaged.improvements] == sorted(
            {k for _, k in imaged.improvements}, reverse=True
        )
    with pytest.raises(PuzzleError, match="beam_width must be positive"):
        solver.resolve_options(p, search="beam", beam_width=(10, 0))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.usefixtures("test_heuristics")
def test_cli_solve_with_beam(capsys: pytest.CaptureFixture[str]) -> None:
    p = make("puzzle8")
    start = p.scramble(np.random.default_rng(4), 1, depth=40)[0]
    args = ("solve", "puzzle8", p.format(start), "--search", "beam", "--heuristic", "manhattan")
    rc, out, _ = run(capsys, *args, "--beam-width", "50", "--json")
    data = json.loads(out)
    assert rc == 0 and data["solved"] and data["search"] == "beam"
    assert p.is_goal(p.apply_moves(start, p.parse_moves(data["solution"]))[None])[0]
    rc, out, err = run(capsys, *args, "--beam-width", "0")
    assert rc == 2 and err.startswith("error:") and "beam_width must be positive" in err
    assert "Traceback" not in out + err
    rc, out, _ = run(capsys, *args, "--beam-width", "2,50", "--json")
    data = json.loads(out)
    assert rc == 0 and data["solved"] and len(data["improvements"]) >= 1
    rc, out, err = run(capsys, *args, "--beam-width", "2,wide")
    assert (
        rc == 2 and "--beam-width: '2,wide' is not a width or widths" in err and "Traceback" not in out + err
    )


@pytest.mark.usefixtures("test_heuristics")
def test_cli_bench_with_beam(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    p = make("cube2")
    states = p.scramble(np.random.default_rng(7), 4, depth=(2, 14))
    opt = exact_cube2()(states).astype(int)
    cases = [
        {"id": i, "facelets": p.format(s), "optimal_length": int(o)}
        for i, (s, o) in enumerate(zip(states, opt, strict=True))
    ]
    path = tmp_path / "cube2.json"
    path.write_text(json.dumps({"puzzle": "cube2", "cases": cases}))
    out_path = tmp_path / "r.json"
    args = ("bench", "cube2", "--cases", str(path), "--search", "beam", "--heuristic", "exact")
    rc, _, _ = run(capsys, *args, "--beam-width", "1", "--out", str(out_path))
    summary = json.loads(out_path.read_text())["summary"]
    assert (
        rc == 0 and summary["search"] == "beam" and summary["solved_pct"] == summary["optimal_pct"] == 100.0
    )
    rc, _, err = run(capsys, *args, "--beam-width", "-3")
    assert rc == 2 and "beam_width must be positive" in err


# ---- Q-beam: the children's h from one Q call on their parents ------------------------------------
@pytest.mark.parametrize("name", ["puzzle8", "puzzle8costed"])
def test_qbeam_with_the_q_of_a_heuristic_is_that_heuristics_beam(name: str) -> None:
    """``Q(s, a) = cost(a) + h(A(s, a))`` ranks every child as ``h`` does, so Q-beam returns the
    same solutions, nodes and statuses as the plain beam, with one Q call per step (on the expanded
    beam states, never on children)."""
    from puzzlezero.search import qbeam
    from puzzlezero.search.qstar import q_from_value
    from tests.search.test_action_costs import CostedTiles

    p = make("puzzle8") if name == "puzzle8" else CostedTiles()
    starts = p.scramble(np.random.default_rng(4), 8, depth=(10, 40))
    h = manhattan(p)
    plain = beam(p, starts, h, beam_width=6, max_steps=100)
    rec, stats = Recorder(q_from_value(p, h)), SearchStats()
    viaq = qbeam(p, starts, rec, beam_width=6, max_steps=100, stats=stats)
    assert [(r.actions, r.nodes_generated, r.status) for r in viaq] == [
        (r.actions, r.nodes_generated, r.status) for r in plain
    ]
    check_solutions(p, starts, viaq)
    assert stats.heuristic_calls == len(rec.calls) == max(r.iterations for r in viaq)
    expanded = sum(len(c) for c in rec.calls)
    assert stats.nodes_expanded == expanded  # Q rows of exactly the states expanded


def test_qbeam_checks_the_q_functions_answer() -> None:
    from puzzlezero.search import qbeam

    p = make("puzzle8")
    start = p.scramble(np.random.default_rng(0), 1, depth=10)
    with pytest.raises(PuzzleError, match="returned shape"):
        qbeam(p, start, lambda s: np.zeros(len(s), np.float32))
    with pytest.raises(PuzzleError, match="NaN or infinite"):
        qbeam(p, start, lambda s: np.full((len(s), 4), np.nan, np.float32))


def test_solver_runs_qbeam_by_name_on_the_shipped_q_head() -> None:
    r = solve("cube3", "R U F'", search="qbeam", beam_width=100, anytime=False)
    assert r.solved and r.search == "qbeam" and len(r.actions) == 3


# ---- policy beam (EfficientCube): the most probable paths ----------------------------------------
def exact_policy(puzzle: Puzzle) -> Any:
    """The uniform distribution over the moves that lead one step closer (cube2 distance table)."""
    h = exact_cube2(puzzle)

    def policy(states: np.ndarray) -> np.ndarray:
        children = puzzle.expand(states).reshape(-1, *puzzle.state_shape)
        closer = h(children).reshape(len(states), -1) == h(states)[:, None] - 1
        return (closer / closer.sum(axis=1, keepdims=True)).astype(np.float32)

    return policy


@pytest.mark.parametrize("width", [1, 3])
def test_pbeam_with_a_perfect_policy_is_optimal_with_one_call_per_step(width: int) -> None:
    from puzzlezero.search import pbeam

    p = make("cube2")
    starts = p.scramble(np.random.default_rng(1), 12, depth=(3, 40))
    exact = exact_cube2()(starts).astype(int)
    rec, stats = Recorder(exact_policy(p)), SearchStats()
    results = pbeam(p, starts, rec, beam_width=width, stats=stats)
    assert [r.length for r in results] == exact.tolist()
    check_solutions(p, starts, results)
    assert stats.heuristic_calls == len(rec.calls) == max(r.iterations for r in results)
    assert stats.nodes_expanded == sum(len(c) for c in rec.calls)  # only the expanded beam states


@pytest.mark.parametrize(("p_2_to_5", "path_of_two"), [(0.99, [0, 2, 5, 9]), (0.7, [0, 1, 3, 7, 9])])
def test_pbeam_ranks_whole_paths_by_their_probability(p_2_to_5: float, path_of_two: list[int]) -> None:
    """From 0 the policy prefers node 1 (0.6 to 0.4); from 1 both moves have 0.5. A beam of one
    follows 1 and needs four moves. A beam of two keeps 2 as runner-up and, in step 2, the two most
    probable *paths*: 0-2-5 at 0.4 * 0.99 beats 0-1-3 and 0-1-4 at 0.3 and finds the three-move
    path through 5; at 0.4 * 0.7 = 0.28 it does not, although 0.7 is the most probable single
    move of that step: the beam then holds 3 and 4."""
    from puzzlezero.search import pbeam

    edges = {
        0: [1, 2],
        1: [3, 4],
        2: [5, 6],
        3: [7, 0],
        4: [7, 0],
        5: [9, 0],
        6: [0, 0],
        7: [9, 0],
        9: [9, 9],
    }
    g = GraphPuzzle(edges, goal=9)
    probs = {0: (0.6, 0.4), 1: (0.5, 0.5), 2: (p_2_to_5, 1 - p_2_to_5), 5: (0.9, 0.1), 7: (0.9, 0.1)}

    def policy(states: np.ndarray) -> np.ndarray:
        return np.array([probs.get(int(s[0]), (0.9, 0.1)) for s in states], np.float32)

    start = np.array([[0]], np.uint8)
    (greedy,) = pbeam(g, start, policy, beam_width=1)
    (two,) = pbeam(g, start, policy, beam_width=2)
    assert greedy.solved and [int(s[0]) for s in greedy.path_states[:2]] == [0, 1] and greedy.length == 4
    via = [int(s[0]) for s in two.path_states]
    assert two.solved and via[:2] == path_of_two[:2] and two.length == len(path_of_two) - 1
    assert via[-1] == 9


def test_solver_runs_pbeam_by_name_and_a_policy_is_no_heuristic(tmp_path: Path) -> None:
    """``--search pbeam`` reads a model's policy (here, the Q head's softmin); a policy named as
    the heuristic of a search over values gets a clear error."""
    r = solve("cube3", "R U F'", search="pbeam", beam_width=100, anytime=False)
    assert r.solved and r.search == "pbeam" and len(r.actions) == 3
    # a value heuristic serves as the policy softmax(-(cost + h(child)) / T)
    r = solve("puzzle8", "1 2 3 4 5 6 0 7 8", search="pbeam", heuristic="misplaced", beam_width=10)
    assert r.solved and len(r.actions) == 2
    with pytest.raises(PuzzleError, match="move probabilities"):
        solve("cube3", "R U F'", search="bwas", heuristic="learned-policy", anytime=False)


def test_pbeam_checks_the_policys_answer() -> None:
    from puzzlezero.search import pbeam

    p = make("puzzle8")
    start = p.scramble(np.random.default_rng(0), 1, depth=10)
    with pytest.raises(PuzzleError, match="the policy returned shape"):
        pbeam(p, start, lambda s: np.zeros(len(s), np.float32))
    with pytest.raises(PuzzleError, match="the policy returned NaN"):
        pbeam(p, start, lambda s: np.full((len(s), 4), np.nan, np.float32))
