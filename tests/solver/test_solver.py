"""solve() / solve_many(): name tables, defaults, verification by replay, JSON shape, models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from puzzlezero import make, solver
from puzzlezero.errors import InvalidStateError, PuzzleError, UnknownNameError
from puzzlezero.puzzles import inputs
from puzzlezero.search import SearchResult
from puzzlezero.solver import HeuristicSpec, SearchSpec, solve, solve_many, verify
from puzzlezero.solver.searches import _run_each

JSON_KEYS = {"puzzle", "solved", "solution", "length", "nodes_generated", "seconds"}


def exact_cube2(puzzle: Any) -> Any:
    """Heuristic factory (test double): the exact cube2 distance table."""
    table = pytest.importorskip("puzzlezero.puzzles.cube.table")
    return lambda s: table.distance(s).astype(np.float32)


@pytest.fixture(autouse=True)
def exact_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(solver.HEURISTICS, "exact", HeuristicSpec(exact_cube2))
    solver.get_heuristic.cache_clear()


def test_solve_text_state_with_exact_heuristic_is_optimal_and_verified() -> None:
    r = solve("cube2", "R U F' U R2 F", heuristic="exact", weight=1.0, batch=10)
    p = make("cube2")
    optimal = int(exact_cube2(p)(p.parse("R U F' U R2 F")[None])[0])
    assert r.solved and r.status == "solved" and r.length == optimal == 7 and r.search == "bwas"
    assert r.solution == tuple(p.format_moves(r.actions))
    assert p.is_goal(p.apply_moves(p.parse("R U F' U R2 F"), r.actions)[None])[0]
    js = r.to_json()
    assert JSON_KEYS <= set(js) and js["solution"] == list(r.solution) and js["length"] == 7
    assert p.parse_moves(js["solution"]) == list(r.actions)  # the notation reads back


def test_solve_array_state_and_already_solved() -> None:
    p = make("cube2")
    r = solve(p, p.goal(), heuristic="exact")
    assert (r.solved, r.length, r.to_json()["solution"]) == (True, 0, [])


def test_not_solved_reports_status_and_no_solution() -> None:
    r = solve("cube2", "R U F' U R2 F L' B", heuristic="exact", weight=0.0, batch=1, max_nodes=20)
    assert (r.solved, r.status, r.length) == (False, "node limit", None)
    assert r.to_json()["solution"] is None and r.nodes_generated <= 20


def test_gbfs_by_name_uses_per_puzzle_defaults() -> None:
    r = solve("cube2", "R U F' U", search="gbfs", heuristic="exact")
    assert r.solved and r.length == 4 and r.search == "gbfs"
    opts = solver.resolve_options(make("cube3"))
    d = solver.DEFAULTS["cube3"]
    assert (opts.weight, opts.batch, opts.max_nodes, opts.time_limit) == (
        d.weight,
        d.batch,
        d.max_nodes,
        d.time_limit,
    )


def test_constant_memory_searches_get_no_default_node_cap() -> None:
    """The node cap bounds the memory of BWAS's node table; IDA* (optimal) needs none, so only its
    time limit applies unless the caller names ``max_nodes``."""
    p, d = make("cube3"), solver.DEFAULTS["cube3"]
    assert solver.resolve_options(p, search="bwas").max_nodes == d.max_nodes
    opt = solver.resolve_options(p, search="optimal")
    assert opt.max_nodes is None and opt.time_limit == d.time_limit
    assert solver.resolve_options(p, search="optimal", max_nodes=1000).max_nodes == 1000


def test_solve_many_together_matches_one_at_a_time_with_amortised_seconds() -> None:
    p = make("cube2")
    states = p.scramble(np.random.default_rng(0), 5, depth=(3, 12))
    alone = solve_many(p, states, heuristic="exact", weight=1.0, batch=5)
    seen: list[int] = []
    together = solve_many(
        p,
        states,
        heuristic="exact",
        weight=1.0,
        batch=5,
        together=5,
        on_results=lambda rs: seen.append(len(rs)),
    )
    assert seen == [5]
    assert [r.actions for r in alone] == [r.actions for r in together]
    assert len({r.seconds for r in together}) == 1  # the call's wall time, shared out


def test_a_wrong_solution_is_never_reported_solved(monkeypatch: pytest.MonkeyPatch) -> None:
    def liar(puzzle: Any, state: np.ndarray, *, time_limit: float, max_nodes: int) -> SearchResult:
        return SearchResult(True, (0, 1, 0), 37, 1, 0.0, "solved")

    monkeypatch.setitem(solver.SEARCHES, "liar", SearchSpec(entry=liar, run=_run_each, needs_heuristic=False))
    r = solve("cube2", "R U", search="liar")
    assert (r.solved, r.status, r.solution) == (False, "invalid solution", ())


def test_lights_out_paths_come_back_without_presses_made_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The puzzle's algebra shortens a search's path (Puzzle.reduce_moves); the result says how long
    the search's own path was, and the shortened one is verified by replay like any other."""

    def stray(puzzle: Any, state: np.ndarray, *, time_limit: float, max_nodes: int) -> SearchResult:
        return SearchResult(True, (9, 3, 9, 24), 200, 4, 0.0, "solved")  # 9 pressed twice

    monkeypatch.setitem(
        solver.SEARCHES, "stray", SearchSpec(entry=stray, run=_run_each, needs_heuristic=False)
    )
    p = make("lightsout7")
    board = p.apply_moves(p.goal(), [24, 3])
    r = solve(p, board, search="stray")
    assert (r.solved, r.actions, r.length, r.search_length) == (True, (3, 24), 2, 4)
    assert r.to_json()["search_length"] == 4 and r.solution == ("3", "24")

    def straight(puzzle: Any, state: np.ndarray, *, time_limit: float, max_nodes: int) -> SearchResult:
        return SearchResult(True, (24, 3), 200, 2, 0.0, "solved")

    monkeypatch.setitem(
        solver.SEARCHES, "stray", SearchSpec(entry=straight, run=_run_each, needs_heuristic=False)
    )
    r = solve(p, board, search="stray")  # nothing to drop: no search_length
    assert r.actions == (24, 3) and r.search_length is None and "search_length" not in r.to_json()


def test_verify_is_batched_replay() -> None:
    p = make("cube2")
    states = np.stack([p.parse("R U"), p.parse("F"), p.goal()])
    u, r, f = (p.parse_moves(m)[0] for m in ("U'", "R'", "F'"))
    assert verify(p, states, [(u, r), (f,), ()]).tolist() == [True, True, True]
    assert verify(p, states, [(r, u), (f, f), (99,)]).tolist() == [False, False, False]
    assert verify(p, states[:0], []).tolist() == []  # an empty batch (no instance solved)


def test_unknown_names_and_missing_parts() -> None:
    with pytest.raises(UnknownNameError, match="choose one of bwas, .*qstar.*beam"):
        solve("cube2", "R", search="dfs")
    with pytest.raises(UnknownNameError, match="unknown heuristic 'magic'"):
        solve("cube2", "R", heuristic="magic")
    spec = SearchSpec(entry="puzzlezero.no_such_module:solve", run=_run_each, needs_heuristic=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(solver.SEARCHES, "ghost", spec)
        with pytest.raises(PuzzleError, match="not available: module puzzlezero.no_such_module"):
            solve("cube2", "R", search="ghost")


@pytest.mark.parametrize(
    ("state", "message"),
    [("R U X", "X"), (np.zeros(5, np.uint8), "shape"), (np.full(24, -1), "non-negative")],
)
def test_bad_states_raise_invalid_state(state: Any, message: str) -> None:
    with pytest.raises(PuzzleError, match=message):
        solve("cube2", state, heuristic="exact")


def test_bad_settings() -> None:
    with pytest.raises(PuzzleError, match="batch must be positive"):
        solve("cube2", "R", heuristic="exact", batch=0)
    with pytest.raises(InvalidStateError):
        solver.read_state(make("puzzle8"), [1, 2, 3, 4, 5, 6, 8, 7, 0])  # odd permutation


def test_learned_heuristic_from_a_model_folder(tmp_path: Path) -> None:
    nn = pytest.importorskip("puzzlezero.nn")
    p = make("puzzle8")
    net = nn.build_model(nn.NetConfig.from_preset("tiny", input_dim=inputs.dim(p)), seed=0)
    folder = nn.save_model(tmp_path / "tiny8", net, puzzle="puzzle8")
    start = p.apply_moves(p.goal(), p.parse_moves("D D R U L D R"))
    r = solve(p, start, model=str(folder), weight=1.0, batch=50)  # an untrained net, a short scramble
    assert r.solved and p.is_goal(p.apply_moves(start, r.actions)[None])[0]
    h1 = solver.get_heuristic(p, "learned", str(folder))
    assert solver.get_heuristic(p, "learned", str(folder)) is h1  # loaded once per process
    with pytest.raises(PuzzleError, match="trained for 'puzzle8', not 'cube2'"):
        solve("cube2", "R", model=str(folder))
    # no heuristic named: the default one, the learned network (not a crash deep in the search)
    r = solve(p, start, model=str(folder), heuristic=None, weight=1.0, batch=50)
    assert r.solved and p.is_goal(p.apply_moves(start, r.actions)[None])[0]
    assert solver.resolve_options(p, search="bwas", heuristic=None).heuristic == "learned"


def test_the_beam_searches_and_only_they_read_the_beam_width() -> None:
    """Bench reports name the beam width of every beam search (policy and Q beams too) and of no other."""
    wide = {name for name in solver.SEARCHES if solver.SEARCHES[name].reads("beam_width")}
    assert {"beam", "qbeam", "pbeam"} <= wide and not wide & {"bwas", "qstar", "gbfs", "mcts", "group"}


def test_a_wider_beam_gets_a_proportionally_larger_default_node_cap() -> None:
    """W 10000 on Lights Out keeps the steps W 1000 has under its 3M-node default (it stopped
    after about six steps before); a cap the user names, and narrower beams, are left alone."""
    p = make("lightsout7")
    d = solver.defaults_for(p)
    assert (d.search, d.beam_width, d.max_nodes) == ("pbeam", 1000, 3_000_000)
    assert solver.resolve_options(p, beam_width=10_000).max_nodes == 30_000_000
    assert solver.resolve_options(p, beam_width=1500).max_nodes == 4_500_000
    assert solver.resolve_options(p, beam_width=100).max_nodes == 3_000_000
    assert solver.resolve_options(p, beam_width=10_000, max_nodes=5000).max_nodes == 5000
    assert solver.resolve_options(p, search="bwas", beam_width=10_000).max_nodes == d.max_nodes
    cube = solver.resolve_options(make("cube3"), search="beam", beam_width=4000)
    assert cube.max_nodes == 4 * solver.resolve_options(make("cube3"), search="beam").max_nodes


def test_the_learned_heuristics_take_a_precision_and_keep_their_contracts() -> None:
    p = make("cube3")
    states = np.concatenate([p.goals(2), p.scramble(np.random.default_rng(0), 200, (1, 20))])
    values = {
        precision: solver.get_heuristic(p, "learned", options=(("precision", precision),))(states)
        for precision in ("float32", "int8")
    }
    fp32 = solver.get_heuristic(p, "learned-fp32")(states)
    np.testing.assert_array_equal(values["float32"], fp32)  # the same network, the same numbers
    for v in values.values():
        assert v.dtype == np.float32 and v[:2].tolist() == [0.0, 0.0] and (v >= 0).all()
    diff = np.abs(values["int8"] - values["float32"])
    assert 0 < diff.mean() < 0.05  # int8 arithmetic, close to float32
    q = solver.get_heuristic(p, "learned-q", kind="q", options=(("precision", "int8"),))(states)
    assert q.shape == (202, 12) and q.dtype == np.float32 and (q >= p.action_costs[None, :]).all()
    r = solve(p, "R U F' L", options={"precision": "int8"}, anytime=False)
    assert r.solved and verify(p, p.parse("R U F' L")[None], [r.actions]).tolist() == [True]
    with pytest.raises(PuzzleError, match="--precision must be one of auto, float32, int8, got 'int4'"):
        solve(p, "R", options={"precision": "int4"})


def test_a_bench_report_names_what_ran_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    from puzzlezero.bench import network_description, run_bench
    from puzzlezero.case_files import Case
    from puzzlezero.nn import runtime

    monkeypatch.setattr(runtime, "cpu_int8_support", lambda: "AVX-512 VNNI")
    p = make("cube3")
    cases = [Case(0, p.parse("R U")), Case(1, p.parse("F' L"))]
    report = run_bench(p, cases, time_limit=5.0, options={"precision": "int8"})
    assert report.summary["network"] == "onnxruntime int8 (CPU with AVX-512 VNNI)"
    assert run_bench(p, cases, heuristic="learned-fp32").summary["network"] == "onnxruntime float32"
    assert (
        run_bench(make("cube2"), [Case(0, make("cube2").parse("R"))], heuristic="exact").summary["network"]
        is None
    )
    layered = solver.resolve_options(p, search="layered", options={"precision": "float32"})
    assert network_description(p, layered) == "onnxruntime float32"  # every goal's network
