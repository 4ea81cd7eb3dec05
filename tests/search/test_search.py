"""BWAS and greedy search: optimality with exact heuristics, batching, reopening, limits, and the
promise never to evaluate the heuristic on duplicates, closed states or the parent."""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import SearchStats, bwas, gbfs
from puzzlezero.search.heap import OpenList
from puzzlezero.search.table import DUPLICATE, IMPROVED, NEW, NodeTable


# ---- helpers -------------------------------------------------------------------------------------
class GraphPuzzle(Puzzle):
    """A directed graph as a puzzle: a state is a node id ``uint8[1]``; action ``a`` follows the
    ``a``-th out-edge, or stays put when the node has fewer edges."""

    name = "graph"

    def __init__(self, edges: dict[int, list[int]], goal: int) -> None:
        n = max(max(edges), max(v for vs in edges.values() for v in vs)) + 1
        width = max(len(vs) for vs in edges.values())
        self.table = np.tile(np.arange(n)[:, None], (1, width)).astype(np.uint8)
        for u, vs in edges.items():
            self.table[u, : len(vs)] = vs
        self.action_names = tuple(str(a) for a in range(width))
        self._goal = goal

    state_shape = (1,)  # type: ignore[assignment]
    inverse_action = np.array([], dtype=np.int64)  # type: ignore[assignment]

    def goal(self) -> np.ndarray:
        return np.array([self._goal], np.uint8)

    def expand(self, states: np.ndarray) -> np.ndarray:
        return self.table[states[:, 0]][:, :, None]

    def parse(self, text: str) -> np.ndarray:
        return np.array([int(text)], np.uint8)

    def format(self, state: np.ndarray) -> str:
        return str(int(state[0]))

    def to_json(self, state: np.ndarray) -> dict[str, Any]:
        return {"state": int(state[0])}

    def to_svg(self, state: np.ndarray, size: int = 300) -> str:
        return "<svg/>"


def bfs_distances(puzzle: Puzzle) -> dict[bytes, int]:
    """Exact distance to the goal of every state (the puzzle's moves are reversible)."""
    dist = {puzzle.goal().tobytes(): 0}
    frontier = puzzle.goals(1)
    d = 0
    while frontier.shape[0]:
        d += 1
        kids = puzzle.unique(puzzle.expand(frontier).reshape(-1, *puzzle.state_shape))[0]
        new = [k for k in kids if k.tobytes() not in dist]
        for k in new:
            dist[k.tobytes()] = d
        frontier = np.array(new, dtype=puzzle.dtype).reshape(-1, *puzzle.state_shape)
    return dist


@pytest.fixture(scope="module")
def puzzle8() -> tuple[Puzzle, dict[bytes, int]]:
    p = make("puzzle8")
    return p, bfs_distances(p)


def table_heuristic(dist: dict[bytes, int]) -> Any:
    return lambda s: np.array([dist[x.tobytes()] for x in s], dtype=np.float32)


def replays(puzzle: Puzzle, start: np.ndarray, actions: tuple[int, ...]) -> bool:
    return bool(puzzle.is_goal(puzzle.apply_moves(start, actions)[None])[0])


class Recorder:
    """Wraps a heuristic and keeps every state it was asked about."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.seen, self.calls = inner, [], 0

    def __call__(self, states: np.ndarray) -> np.ndarray:
        self.calls += 1
        self.seen.extend(s.tobytes() for s in states)
        return self.inner(states)


# ---- optimality with exact heuristics ------------------------------------------------------------
@pytest.mark.parametrize("batch_size", [1, 7, 100])
def test_exact_heuristic_gives_optimal_puzzle8(puzzle8: Any, batch_size: int) -> None:
    p, dist = puzzle8
    starts = p.scramble(np.random.default_rng(batch_size), 12, depth=(5, 60))
    results = bwas(p, starts, table_heuristic(dist), weight=1.0, batch_size=batch_size)
    for s, r in zip(starts, results, strict=True):
        assert r.solved and r.status == "solved"
        assert len(r.actions) == dist[s.tobytes()]
        assert replays(p, s, r.actions)
        assert (r.nodes_generated - 1) % p.num_actions == 0
        np.testing.assert_array_equal(r.path_states[0], s)
        assert p.is_goal(r.path_states[-1:])[0]


def test_exact_heuristic_gives_optimal_cube2() -> None:
    table = pytest.importorskip("puzzlezero.puzzles.cube.table")
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(1), 16, depth=(4, 40))
    exact = table.distance(starts)
    assert exact.max() >= 10  # the test needs some hard cases
    results = bwas(p, starts, lambda s: table.distance(s).astype(np.float32), weight=1.0, batch_size=20)
    assert [r.length for r in results] == exact.tolist()
    assert all(replays(p, s, r.actions) for s, r in zip(starts, results, strict=True))


def test_batch_of_instances_equals_one_at_a_time(puzzle8: Any) -> None:
    p, dist = puzzle8
    rng = np.random.default_rng(5)
    starts = p.scramble(rng, 6, depth=(10, 40))
    noise = {k: float(v) for k, v in zip(dist, rng.random(len(dist)) * 4, strict=True)}  # inadmissible
    h = lambda s: np.array([dist[x.tobytes()] + noise[x.tobytes()] for x in s], np.float32)  # noqa: E731
    together = bwas(p, starts, h, weight=0.6, batch_size=5)
    alone = [bwas(p, s, h, weight=0.6, batch_size=5)[0] for s in starts]
    assert together == alone  # actions, nodes, iterations and status (seconds aside)
    assert len({r.actions for r in together}) > 1


def test_start_already_solved(puzzle8: Any) -> None:
    p, _ = puzzle8
    r = bwas(p, p.goals(2), lambda s: np.zeros(len(s), np.float32))
    assert [(x.solved, x.actions, x.nodes_generated) for x in r] == [(True, (), 1)] * 2


# ---- the paper's reopening rule --------------------------------------------------------------------
#   0=S -> 1=A -> 3=C -> 4=D -> 5=G     (length 4)
#   0=S -> 2=B1 -> 6=B2 -> 3=C          (C reached first by this longer way, and expanded)
REOPEN = GraphPuzzle({0: [1, 2], 1: [3], 2: [6], 6: [3], 3: [4], 4: [5], 5: [5]}, goal=5)
REOPEN_H = np.array([0, 5, 0, 0, 3, 0, 0], np.float32)  # inadmissible at A and D


def test_reopening_a_closed_node_finds_the_shorter_path() -> None:
    rec = Recorder(lambda s: REOPEN_H[s[:, 0]])
    (r,) = bwas(REOPEN, np.array([[0]], np.uint8), rec, weight=1.0, batch_size=1)
    # C is expanded at g=3 (via B1, B2), then reached from A at g=2: it must be reopened, and its
    # child D improved, to find S A C D G (4 moves) instead of S B1 B2 C D G (5 moves)
    assert r.solved and r.actions == (0, 0, 0, 0)
    np.testing.assert_array_equal(r.path_states[:, 0], [0, 1, 3, 4, 5])
    assert sorted(rec.seen) == sorted(bytes([v]) for v in (1, 2, 3, 4, 5, 6))  # each state once


def test_table_reopens_only_on_strictly_lower_g() -> None:
    t = NodeTable((2,), np.dtype(np.uint8))
    rows = np.array([[1, 2], [1, 2], [3, 4], [1, 2]], np.uint8)
    keys = NodeTable.mix_instance(np.zeros(4, np.uint64), np.zeros(4, np.int64))  # all keys collide
    code, idx = t.add(keys, rows, np.zeros(4), np.arange(4), np.arange(4), np.array([5, 5, 1, 4]))
    assert code.tolist() == [NEW, DUPLICATE, NEW, IMPROVED]
    assert idx.tolist() == [0, 0, 1, 0] and t.g[0] == 4 and t.parent[0] == 3
    other = NodeTable.mix_instance(np.zeros(1, np.uint64), np.ones(1, np.int64))
    code, _ = t.add(other, rows[:1], np.ones(1), np.zeros(1), np.zeros(1), np.zeros(1))
    assert code.tolist() == [NEW]  # same state, other instance: a different node


def test_open_list_orders_by_f_then_push_order_and_skips_stale() -> None:
    heap = OpenList(capacity=2)
    g = np.array([1, 1, 1, 1], np.float32)
    closed = np.full(4, np.inf, np.float32)
    heap.push(np.array([3.0, 1.0, 3.0, 2.0]), np.arange(4), g, seq0=0)
    g[3] = 0.5  # node 3 improved: its entry (g=1) is stale
    assert heap.pop(10, g, closed).tolist() == [1, 0, 2]
    assert closed[[0, 1, 2]].tolist() == [1, 1, 1] and len(heap) == 0


# ---- never evaluate duplicates, closed states or the parent --------------------------------------
def test_heuristic_only_sees_new_states(puzzle8: Any) -> None:
    p, dist = puzzle8
    starts = p.scramble(np.random.default_rng(9), 3, depth=(20, 30))
    rec, stats = Recorder(table_heuristic(dist)), SearchStats()
    results = bwas(p, starts, rec, weight=0.3, batch_size=10, stats=stats)
    assert all(r.solved for r in results)
    assert rec.calls == stats.heuristic_calls <= stats.iterations  # at most one call per iteration
    # puzzle8 expansions create many duplicates (moves back, impossible moves = the parent), yet
    # no state is evaluated twice per instance and no start state is ever evaluated
    for i, s in enumerate(starts):
        (r,) = bwas(p, s, rec := Recorder(table_heuristic(dist)), weight=0.3, batch_size=10)
        assert r == results[i]
        assert len(rec.seen) == len(set(rec.seen)) and s.tobytes() not in rec.seen
        assert 0 < len(rec.seen) < r.nodes_generated - 1  # duplicates were generated but skipped


def test_hash_collisions_never_merge_states(puzzle8: Any) -> None:
    p, dist = puzzle8
    colliding = copy.copy(p)
    colliding.hash64 = lambda s: np.zeros(len(s), np.uint64)  # type: ignore[method-assign]
    starts = p.scramble(np.random.default_rng(2), 2, depth=14)
    h = table_heuristic(dist)
    assert bwas(colliding, starts, h, weight=1.0, batch_size=4) == bwas(
        p, starts, h, weight=1.0, batch_size=4
    )


def test_a_copy_of_a_registered_puzzle_is_a_new_instance() -> None:
    """The test above changes a copy's hash64; the registered puzzle (pickled by name) must keep its own."""
    p = make("puzzle8")
    colliding = copy.copy(p)
    colliding.hash64 = lambda s: np.zeros(len(s), np.uint64)  # type: ignore[method-assign]
    assert colliding is not p and make("puzzle8") is p
    states = p.scramble(np.random.default_rng(3), 4, depth=6)
    assert len(set(p.hash64(states).tolist())) > 1 and not colliding.hash64(states).any()


# ---- limits and statuses ---------------------------------------------------------------------------
def test_node_limit() -> None:
    p = make("cube3")
    starts = p.scramble(np.random.default_rng(0), 2, depth=15)
    results = bwas(p, starts, lambda s: np.zeros(len(s), np.float32), batch_size=50, max_nodes=1000)
    for r in results:
        assert (r.solved, r.status, r.actions) == (False, "node limit", ())
        assert 1000 - 12 < r.nodes_generated <= 1000


def test_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a fake clock: each heuristic call takes 20 ms; the search stops at the first look at the
    clock past its 0.1 s, within one more call, and reports the time it ran."""
    from tests.clock import FakeClock

    p = make("cube3")
    clock, calls = FakeClock(), []
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", clock)

    def slow(s: np.ndarray) -> np.ndarray:
        calls.append(len(s))
        clock.sleep(0.02)
        return np.zeros(len(s), np.float32)

    (r,) = bwas(p, p.scramble(np.random.default_rng(0), 1, depth=15), slow, batch_size=1, time_limit=0.1)
    assert (r.solved, r.status) == (False, "time limit")
    assert 0.1 <= r.seconds < 0.1 + 0.02 + 1e-9 and 5 <= len(calls) <= 6


def test_exhausted_when_goal_unreachable() -> None:
    g = GraphPuzzle({0: [1], 1: [0, 2], 2: [1], 3: [3]}, goal=3)
    (r,) = bwas(g, np.array([0], np.uint8), lambda s: np.ones(len(s), np.float32))
    assert (r.solved, r.status, r.nodes_generated) == (False, "exhausted", 1 + 3 * 2)


def test_goal_test_on_generation_variant(puzzle8: Any) -> None:
    p, dist = puzzle8
    starts = p.scramble(np.random.default_rng(4), 5, depth=(15, 30))
    h = table_heuristic(dist)
    late = bwas(p, starts, h, weight=1.0, batch_size=50)
    early = bwas(p, starts, h, weight=1.0, batch_size=50, goal_test="generate")
    for s, a, b in zip(starts, late, early, strict=True):
        assert b.solved and replays(p, s, b.actions) and len(b.actions) >= len(a.actions)
        assert b.nodes_generated <= a.nodes_generated


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"weight": -1.0}, "weight"), ({"batch_size": 0}, "batch_size"), ({"max_nodes": 2.5}, "max_nodes")],
)
def test_bad_arguments(puzzle8: Any, kwargs: dict[str, Any], message: str) -> None:
    p, _ = puzzle8
    with pytest.raises(PuzzleError, match=message):
        bwas(p, p.goals(1), lambda s: np.zeros(len(s), np.float32), **kwargs)


def test_bad_starts_and_bad_heuristic(puzzle8: Any) -> None:
    p, _ = puzzle8
    with pytest.raises(PuzzleError, match=r"shape \[B, 9\]"):
        bwas(p, np.zeros((2, 16), np.uint8), lambda s: np.zeros(len(s)))
    start = p.scramble(np.random.default_rng(0), 1, depth=5)
    with pytest.raises(PuzzleError, match="returned 1 values"):
        bwas(p, start, lambda s: np.zeros(1))
    with pytest.raises(PuzzleError, match="NaN"):
        gbfs(p, start, lambda s: np.full(len(s), np.nan))


# ---- greedy search ---------------------------------------------------------------------------------
def test_gbfs_with_exact_heuristic_is_optimal(puzzle8: Any) -> None:
    p, dist = puzzle8
    starts = p.scramble(np.random.default_rng(3), 10, depth=(1, 50))
    rec = Recorder(table_heuristic(dist))
    results = gbfs(p, starts, rec, max_steps=40)
    for s, r in zip(starts, results, strict=True):
        assert r.solved and len(r.actions) == dist[s.tobytes()] and replays(p, s, r.actions)
        assert r.nodes_generated == 1 + p.num_actions * len(r.actions)
    assert rec.calls <= max(len(r.actions) for r in results)  # one call per step for all instances
    for s, r in zip(starts, results, strict=True):
        (alone,) = gbfs(p, s, rec := Recorder(table_heuristic(dist)), max_steps=40)
        assert alone == r
        assert s.tobytes() not in rec.seen and len(rec.seen) == len(set(rec.seen))  # no parent, no repeat


def test_gbfs_step_limit(puzzle8: Any) -> None:
    p, dist = puzzle8
    start = p.scramble(np.random.default_rng(8), 1, depth=30)
    (r,) = gbfs(p, start, table_heuristic(dist), max_steps=3)
    assert (r.solved, r.status, r.iterations, r.nodes_generated) == (False, "step limit", 3, 13)


def test_gbfs_never_revisits_a_state() -> None:
    # from 1 the heuristic points back to 0 (h=0); a plain greedy walk would cycle 0 1 0 1 ...
    g = GraphPuzzle({0: [1], 1: [0, 2], 2: [3], 3: [3]}, goal=3)
    h = np.array([0, 1, 5, 0], np.float32)
    (r,) = gbfs(g, np.array([0], np.uint8), lambda s: h[s[:, 0]], max_steps=10)
    assert r.solved and r.path_states[:, 0].tolist() == [0, 1, 2, 3]
    dead_end = GraphPuzzle({0: [1], 1: [0], 2: [2]}, goal=2)
    (r,) = gbfs(dead_end, np.array([0], np.uint8), lambda s: np.zeros(len(s), np.float32))
    assert (r.solved, r.status, r.iterations, r.nodes_generated) == (False, "exhausted", 1, 1 + 2)


def test_search_and_solver_do_not_import_torch() -> None:
    code = "import sys, puzzlezero.search, puzzlezero.solver, puzzlezero.bench; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
