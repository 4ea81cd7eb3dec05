"""Actions of unequal cost: the searches find and report least-cost solutions (against Dijkstra),
the training labels count each action's cost (hand-computed values), the optimal solvers refuse
what they cannot do, and puzzles whose actions all cost 1 keep their behaviour."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from puzzlezero import make, solver
from puzzlezero.classic.optimal import pdb_heuristic, solve_optimal
from puzzlezero.classic.optimal.heuristics import PDBHeuristic, cost_scaled
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles import inputs, walks
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube import Cube3HTM
from puzzlezero.puzzles.npuzzle import NPuzzle
from puzzlezero.search import beam, bwas, gbfs
from puzzlezero.search.anytime import anytime, cost_bound
from puzzlezero.search.qstar import q_from_value, qstar
from puzzlezero.solver import HeuristicSpec, solve
from puzzlezero.train.objectives.davi import action_targets, one_step_targets
from puzzlezero.train.objectives.lhbl import lhbl_labels
from puzzlezero.train.objectives.qlearning import q_targets
from puzzlezero.train.objectives.random_walk import random_walk_labels
from puzzlezero.train.objectives.scramble_depth import scramble_depth_labels
from tests.search.test_search import GraphPuzzle


# ---- helpers -------------------------------------------------------------------------------------
def robot(half_turn_cost: float) -> Cube3HTM:
    """The half-turn-metric cube whose half turns cost ``half_turn_cost`` (quarter turns 1)."""
    p = Cube3HTM(half_turn_cost=half_turn_cost)
    p.name = f"cube3robot{half_turn_cost:g}"
    return p


class CostedGraph(GraphPuzzle):
    """A graph puzzle whose action ``a`` costs ``costs[a]``."""

    def __init__(self, edges: dict[int, list[int]], goal: int, costs: list[float]) -> None:
        super().__init__(edges, goal)
        self.costs = costs

    def _action_costs(self) -> list[float]:
        return self.costs


class CostedTiles(NPuzzle):
    """The 8-puzzle whose vertical moves (U, D) cost 2."""

    def __init__(self) -> None:
        super().__init__(size=3)
        self.name = "puzzle8costed"

    def _action_costs(self) -> list[float]:
        return [2.0 if n in ("U", "D") else 1.0 for n in self.action_names]


#: 0 -> 3 directly with action 0 (cost 5), or 0 -> 1 -> 2 -> 3 with action 1 three times (cost 3)
DETOUR = {0: [3, 1], 1: [1, 2], 2: [2, 3], 3: [3, 3]}


def zero(states: np.ndarray) -> np.ndarray:
    return np.zeros(len(states), np.float32)


def dijkstra_cost(puzzle: Puzzle, start: np.ndarray) -> float:
    """The least cost from ``start`` to a goal, by Dijkstra over the puzzle's moves."""
    best = {start.tobytes(): 0.0}
    heap = [(0.0, 0, start)]
    count = 1
    while heap:
        g, _, s = heapq.heappop(heap)
        if g > best[s.tobytes()]:
            continue
        if puzzle.is_goal(s[None])[0]:
            return g
        for a, child in enumerate(puzzle.expand(s[None])[0]):
            cg = g + float(puzzle.action_costs[a])
            if cg < best.get(child.tobytes(), np.inf):
                best[child.tobytes()] = cg
                heapq.heappush(heap, (cg, count, child))
                count += 1
    raise AssertionError("no goal reachable")


def shallow(puzzle: Puzzle, n: int, depth: int, seed: int) -> np.ndarray:
    return puzzle.scramble(np.random.default_rng(seed), n, depth)


# ---- the costs themselves ------------------------------------------------------------------------
def test_costs_default_to_move_cost_and_are_checked() -> None:
    p8 = make("puzzle8")
    assert p8.action_costs.tolist() == [1.0] * 4 and p8.uniform_cost == 1.0 and p8.unit_costs
    assert p8.path_cost([0, 1, 2]) == 3.0
    r = robot(1.5)
    assert r.action_costs.tolist() == [1.0, 1.0, 1.5] * 6 and r.uniform_cost is None and not r.unit_costs
    assert r.path_cost(r.parse_moves("U2 R F2")) == 4.0
    assert make("cube3htm").unit_costs
    with pytest.raises(ValueError):
        r.action_costs[0] = 2.0  # read-only
    with pytest.raises(PuzzleError, match="half_turn_cost must be a positive number"):
        Cube3HTM(half_turn_cost=0)
    with pytest.raises(PuzzleError, match="finite positive"):
        _ = CostedGraph(DETOUR, 3, [1.0, -1.0]).action_costs


# ---- searches ------------------------------------------------------------------------------------
def test_astar_takes_the_cheaper_longer_path() -> None:
    g = CostedGraph(DETOUR, 3, [5.0, 1.0])
    (r,) = bwas(g, np.array([0], np.uint8), zero, weight=1.0, batch_size=1)
    assert r.solved and r.actions == (1, 1, 1) and r.cost == 3.0
    (r,) = bwas(CostedGraph(DETOUR, 3, [1.0, 1.0]), np.array([0], np.uint8), zero, weight=1.0, batch_size=1)
    assert r.actions == (0,) and r.cost == 1.0  # equal costs: the one-move path


def test_a_dear_half_turn_is_solved_as_two_quarter_turns() -> None:
    for half, names, cost in ((2.5, ["U", "U"], 2.0), (1.5, ["U2"], 1.5), (1.0, ["U2"], 1.0)):
        p = robot(half)
        (r,) = bwas(p, p.parse("U2"), zero, weight=1.0, batch_size=1)
        assert p.format_moves(r.actions) in (names, [n.replace("U", "U'") for n in names])
        assert r.cost == cost == p.path_cost(r.actions)


@pytest.mark.parametrize("half", [1.5, 2.5])
def test_astar_and_qstar_find_dijkstras_least_cost(half: float) -> None:
    p = robot(half)
    starts = shallow(p, 6, 2, seed=int(10 * half))
    expected = [dijkstra_cost(p, s) for s in starts]
    found = bwas(p, starts, zero, weight=1.0, batch_size=1)
    assert [r.cost for r in found] == expected
    assert all(r.cost == p.path_cost(r.actions) for r in found)
    assert found == [bwas(p, s, zero, weight=1.0, batch_size=1)[0] for s in starts]  # batch = one by one
    q_found = qstar(p, starts, q_from_value(p, zero), weight=1.0, batch_size=1)
    assert [r.cost for r in q_found] == expected


def test_qstar_with_a_value_heuristic_searches_as_bwas_under_costs() -> None:
    p = robot(1.5)
    goal = p.goal()

    def misplaced(states: np.ndarray) -> np.ndarray:  # whole numbers: Q - cost(a) is exact
        return ((states != goal).sum(axis=1) // 12).astype(np.float32)

    starts = shallow(p, 5, 4, seed=3)
    a = bwas(p, starts, misplaced, weight=0.5, batch_size=20)
    b = qstar(p, starts, q_from_value(p, misplaced), weight=0.5, batch_size=20)
    assert a == b and [r.cost for r in a] == [r.cost for r in b]


def test_q_from_value_adds_each_actions_cost() -> None:
    p = robot(1.5)
    q = q_from_value(p, lambda s: np.full(len(s), 10.0, np.float32))(p.parse("U2")[None])[0]
    expected = np.where(p.action_costs == 1.5, 11.5, 11.0)
    expected[2] = 1.5  # U2 reaches the goal: its cost alone
    np.testing.assert_array_equal(q, expected)


def test_beam_and_greedy_report_the_cost_of_their_solution() -> None:
    p = robot(2.5)
    (r,) = beam(p, p.parse("U2"), zero, beam_width=10)
    assert (
        r.solved and p.format_moves(r.actions) == ["U2"] and r.cost == 2.5
    )  # a beam stops at the first goal
    starts = shallow(p, 4, 2, seed=5)
    for r in beam(p, starts, zero, beam_width=400, max_steps=2):  # all of depth 2 fits in the beam
        assert r.solved and r.cost == p.path_cost(r.actions) > 0
    g = CostedGraph(DETOUR, 3, [5.0, 1.0])
    (r,) = beam(g, np.array([0], np.uint8), zero, beam_width=1)
    assert r.actions == (0,) and r.cost == 5.0
    (r,) = gbfs(g, np.array([0], np.uint8), zero)
    assert r.actions == (0,) and r.cost == 5.0


def test_anytime_keeps_the_cheapest_solution_even_when_it_is_longer() -> None:
    p = robot(2.5)
    goal = p.goal()
    near = p.apply(p.goals(12), np.array([a for a in range(18) if a % 3 != 2]))  # one quarter turn away

    def misleading(states: np.ndarray) -> np.ndarray:  # 0 at the goal, 100 one quarter turn away
        one_quarter = (states[:, None, :] == near[None]).all(axis=2).any(axis=1)
        return np.where((states == goal).all(axis=1), 0.0, np.where(one_quarter, 100.0, 50.0)).astype(
            np.float32
        )

    (first,) = bwas(p, p.parse("U2"), misleading, weight=0.0, batch_size=1)
    assert p.format_moves(first.actions) == ["U2"] and first.cost == 2.5
    (r,) = anytime(bwas, p, p.parse("U2"), misleading, [(0.0, 1), (1.0, 1)], time_limit=60)
    assert r.solved and r.cost == 2.0 and len(r.actions) == 2
    assert [n for _, n in r.improvements] == [1, 2]  # cheaper, and longer
    assert cost_bound(p, 2.5) == pytest.approx(2.499)
    assert cost_bound(make("cube3htm"), 20.0) == 19.0  # equal costs: one move less, as before


def test_solver_reports_cost_beside_length(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(solver.HEURISTICS, "zero", HeuristicSpec(lambda puzzle: zero))
    p = robot(1.5)
    r = solve(p, p.format(p.parse("U2 R")), search="bwas", heuristic="zero", weight=1.0, batch=1)
    assert r.solved and p.format_moves(r.actions) == ["R'", "U2"] and r.cost == 2.5
    assert r.to_json()["length"] == 2 and r.to_json()["cost"] == 2.5
    tiles = CostedTiles()
    r = solve(tiles, "1 2 3 4 0 5 7 8 6", search="bwas", heuristic="zero", weight=1.0, batch=1)
    assert r.solved and r.length == 2 and r.cost == 3.0  # one vertical move (2) and one horizontal (1)
    unsolved = solve(p, "R U F", search="bwas", heuristic="zero", weight=1.0, batch=1, max_nodes=19)
    assert not unsolved.solved and unsolved.to_json()["cost"] is None


# ---- optimal solvers and pattern databases -------------------------------------------------------
def test_optimal_solvers_refuse_costs_they_do_not_count() -> None:
    tiles = CostedTiles()
    with pytest.raises(PuzzleError, match="optimal solvers count moves.*U 2, D 2, L 1, R 1"):
        solve_optimal(tiles, tiles.parse("1 2 3 4 0 5 7 8 6"))
    with pytest.raises(PuzzleError, match="count quarter turns.*--search kociemba"):
        solve_optimal(robot(1.5), robot(1.5).parse("U2"))
    with pytest.raises(PuzzleError, match="count quarter turns.*--search kociemba"):
        solve_optimal(make("cube3htm"), make("cube3htm").parse("U2"))
    lights = make("lightsout7")
    assert solve_optimal(lights, lights.apply(lights.goals(1), np.array([24]))[0]).actions == (24,)


def test_pattern_database_values_are_scaled_to_stay_admissible() -> None:
    moves = PDBHeuristic("moves", lambda s: np.asarray(s)[:, 0].astype(np.float32), 0)
    states = np.array([[0], [3], [5]])
    assert cost_scaled(make("cube3htm"), moves, 0.5)(states).tolist() == [0.0, 2.0, 3.0]  # ceil(h / 2)
    assert cost_scaled(robot(1.5), moves, 0.75)(states).tolist() == [0.0, 2.25, 3.75]
    assert cost_scaled(robot(1.5), moves)(states).tolist() == [0.0, 3.0, 5.0]  # the cheapest move: 1
    assert cost_scaled(make("puzzle8"), moves) is moves  # unit costs: unchanged
    assert robot(1.5).quarter_turns.tolist() == [1, 1, 2] * 6
    with pytest.raises(PuzzleError, match="no pattern-database heuristic for graph"):
        pdb_heuristic(CostedGraph(DETOUR, 3, [5.0, 1.0]))


# ---- training labels -----------------------------------------------------------------------------
def ten(states: np.ndarray) -> np.ndarray:
    return np.full(len(states), 10.0, np.float32)


def test_davi_and_q_targets_add_each_actions_cost() -> None:
    p = robot(1.5)
    state = p.parse("U2")[None]
    row = np.where(p.action_costs == 1.5, 11.5, 11.0).astype(np.float32)
    row[2] = 1.5  # U2 solves it: cost 1.5 and no value
    np.testing.assert_array_equal(action_targets(p, ten, state)[0], row)
    np.testing.assert_array_equal(q_targets(p, ten, state)[0], row)
    assert one_step_targets(p, ten, state).tolist() == [1.5]
    assert one_step_targets(robot(2.5), ten, state).tolist() == [2.5]  # nothing cheaper within one move


def test_lhbl_labels_count_each_actions_cost() -> None:
    p = robot(2.5)
    root = p.parse("U2")[None]
    states, targets = lhbl_labels(p, root, ten, 1)
    assert targets.tolist() == [2.5]  # one expansion: DAVI's target
    states, targets = lhbl_labels(p, root, ten, 2)
    # the second expansion is U from the root (the first cheapest open node): one quarter turn from solved
    np.testing.assert_array_equal(states[1], p.apply(root, np.array([0]))[0])
    assert targets.tolist() == [2.0, 1.0]  # U U (cost 2) beats U2 (2.5)
    _, targets = lhbl_labels(robot(1.5), root, ten, 2)
    assert targets.tolist() == [1.5, 1.0]


def test_random_walk_labels_are_the_cost_of_walking_back() -> None:
    p = robot(1.5)
    states, labels = random_walk_labels(p, np.random.default_rng(0), 300, 1)
    back = p.expand(states)  # one move from the goal: the move that undoes it tells the cost
    half_away = p.is_goal(back[:, 2::3].reshape(-1, 54)).reshape(-1, 6).any(axis=1)
    np.testing.assert_array_equal(labels, np.where(half_away, 1.5, 1.0).astype(np.float32))
    assert 0 < half_away.mean() < 1
    states, labels = scramble_depth_labels(p, np.random.default_rng(1), 500, 3)
    assert set(np.unique(labels).tolist()) <= {0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5}
    assert labels.max() > 3.0  # half turns cost more than the walk's length
    _, unit = random_walk_labels(make("cube3htm"), np.random.default_rng(0), 300, 1)
    assert unit.tolist() == [1.0] * 300


def test_a_new_q_head_starts_at_each_actions_cost_plus_the_value() -> None:
    torch = pytest.importorskip("torch")
    from puzzlezero.nn.config import NetConfig
    from puzzlezero.nn.models import build_model

    p = robot(1.5)
    config = NetConfig.from_preset("tiny", inputs.dim(p), q_head=True, num_actions=18)
    net = build_model(config, seed=0)
    net.init_q_from_value(p.action_costs)
    x = torch.from_numpy(p.encode(p.scramble(np.random.default_rng(0), 4, 5)))
    net.eval()
    with torch.no_grad():
        heads = net.heads(x)
    gap = (heads["q"] - heads["value"][:, None]).numpy()
    np.testing.assert_allclose(gap, np.tile(p.action_costs, (4, 1)), atol=1e-5)


def test_unit_cost_labels_and_walks_are_unchanged() -> None:
    """The random stream and labels of a unit-cost puzzle are those of the walk alone."""
    p = make("cube3")
    states, labels = random_walk_labels(p, np.random.default_rng(4), 50, 9)
    rng = np.random.default_rng(4)
    depths = walks.draw_depths(rng, 50, (1, 9))
    np.testing.assert_array_equal(states, p.random_walks(rng, 50, depths))
    expected = depths.astype(np.float32)
    expected[p.is_goal(states)] = 0.0
    np.testing.assert_array_equal(labels, expected)
