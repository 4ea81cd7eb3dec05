"""MCTS (search/mcts.py) and the policies it takes (search/policy.py, nn.make_policy_value): short
scrambles solved and replayed with exact or simple heuristics, rows independent, node and time
limits, bad settings, and the solver's ``--search mcts`` with its options."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.errors import PuzzleError, UnknownNameError
from puzzlezero.nn import NetConfig, build_model, make_policy_value
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.search import SearchStats
from puzzlezero.search.mcts import mcts
from puzzlezero.search.policy import policy_value_from_heuristic, policy_value_from_q, softmin
from puzzlezero.solver import solve_many, verify


def exact_cube2(states: np.ndarray) -> np.ndarray:
    return distance(states).astype(np.float32)


def manhattan(puzzle):  # noqa: ANN001, ANN201
    """The 8-puzzle's Manhattan distance (blank at index 0 of the goal excluded)."""
    n = 3
    goal_pos = np.argsort(puzzle.goal().reshape(-1))

    def h(states: np.ndarray) -> np.ndarray:
        pos = np.argsort(states.reshape(states.shape[0], -1), axis=1)
        tiles = np.arange(1, n * n)
        rows, cols = pos[:, tiles] // n, pos[:, tiles] % n
        return (abs(rows - goal_pos[tiles] // n) + abs(cols - goal_pos[tiles] % n)).sum(1).astype(np.float32)

    return h


def test_cube2_with_exact_distances_finds_optimal_solutions_that_replay():
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(3), 8, (4, 9))
    results = mcts(p, starts, policy_value_from_heuristic(p, exact_cube2), max_nodes=200_000)
    assert [r.status for r in results] == ["solved"] * 8
    assert verify(p, starts, [r.actions for r in results]).all()
    assert [r.length for r in results] == distance(starts).tolist()
    assert all(r.cost == r.length for r in results)


def test_puzzle8_with_manhattan_distance_solves_and_replays():
    p = make("puzzle8")
    starts = p.scramble(np.random.default_rng(4), 10, 30)
    stats = SearchStats()
    results = mcts(p, starts, policy_value_from_heuristic(p, manhattan(p)), max_nodes=100_000, stats=stats)
    assert all(r.solved for r in results)
    assert verify(p, starts, [r.actions for r in results]).all()
    # the 8-puzzle's moves alternate parity: every solution's length has the scramble's parity
    assert all(r.length % 2 == 0 for r in results)
    # every distinct leaf of every instance in one call per iteration
    assert stats.heuristic_calls == stats.iterations
    assert stats.nodes_generated == sum(r.nodes_generated for r in results)


@pytest.mark.parametrize("max_value", [True, False])
def test_rows_are_independent_and_both_backups_solve(max_value):
    """A batch of instances gives the same answers as one at a time (mctx's test of rows)."""
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(5), 3, 7)
    pv = policy_value_from_heuristic(p, exact_cube2)
    together = mcts(p, starts, pv, max_value=max_value, leaves=8)
    alone = [mcts(p, s, pv, max_value=max_value, leaves=8)[0] for s in starts]
    assert together == alone
    assert all(r.solved for r in together)


def test_the_shortest_path_in_the_tree_is_returned_not_the_path_selected():
    """With a blind prior and values the tree wanders; the solution is still the shortest path
    over the edges seen (here: a breadth-first-like tree, so the optimal one)."""
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(6), 4, (3, 4))

    def blind(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ones(states.shape[0], np.float32), np.full(
            (states.shape[0], p.num_actions), 1 / 12, np.float32
        )

    results = mcts(p, starts, blind, c=50.0, max_nodes=500_000)
    assert all(r.solved for r in results)
    assert verify(p, starts, [r.actions for r in results]).all()
    assert [r.length for r in results] == distance(starts).tolist()


def test_exact_move_costs_as_first_play_estimates_lead_straight_to_the_goal():
    """With each move's exact cost-to-go for untried moves and no exploration (c = 0), every
    path follows an optimal move: d expansions for a state d moves out, the root included."""
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(12), 4, 8)
    for start, d in zip(starts, distance(starts), strict=True):
        (r,) = mcts(p, start, policy_value_from_heuristic(p, exact_cube2), c=0.0, leaves=1)
        assert r.solved and r.length == d
        assert r.nodes_generated == 1 + p.num_actions * d


@pytest.mark.parametrize(("virtual_loss", "distinct"), [(100.0, 4), (0.0, 1)])
def test_virtual_loss_spreads_the_paths_of_one_iteration(virtual_loss, distinct):
    """Blind values and priors: without virtual loss the 4 paths of an iteration all reach the
    same leaf (one evaluation); with a large one they reach 4 different leaves."""
    p = make("cube2")
    start = p.scramble(np.random.default_rng(13), 1, 10)

    def blind(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.ones(states.shape[0], np.float32), np.full(
            (states.shape[0], p.num_actions), 1 / 12, np.float32
        )

    stats = SearchStats()
    (r,) = mcts(
        p, start, blind, c=0.0, leaves=4, virtual_loss=virtual_loss, max_nodes=1 + 5 * 12, stats=stats
    )
    assert stats.iterations >= 2
    assert stats.heuristic_states == stats.heuristic_calls + (distinct - 1)  # root, then the 2nd call


def test_a_dead_end_is_exhausted_after_every_reachable_state_was_expanded():
    """A Sokoban box in a corner: the agent can walk its 7 free cells and nothing else; each is
    expanded once (moves back into the tree are never re-entered), then the root is dead."""
    from puzzlezero.puzzles.sokoban import Sokoban

    p = Sokoban(height=4, width=6, num_boxes=1)
    start = p.parse("######\n#$  .#\n#   @#\n######")
    (r,) = mcts(p, start, policy_value_from_heuristic(p, lambda s: np.ones(s.shape[0], np.float32)))
    assert r.status == "exhausted" and not r.solved
    assert r.nodes_generated == 1 + 7 * p.num_actions


def test_a_goal_start_is_solved_with_no_moves():
    p = make("puzzle8")
    (r,) = mcts(p, p.goal(), policy_value_from_heuristic(p, manhattan(p)))
    assert r.status == "solved" and r.actions == () and r.nodes_generated == 1


def test_node_limit_is_respected_and_reported():
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(7), 2, 11)
    blind = policy_value_from_heuristic(p, lambda s: np.zeros(s.shape[0], np.float32))
    results = mcts(p, starts, blind, max_nodes=1000)
    for r in results:
        assert r.status == "node limit" and not r.solved and r.actions == ()
        assert 1000 - p.num_actions < r.nodes_generated <= 1000


def test_time_limit_is_respected_and_reported(monkeypatch):
    from tests.clock import FakeClock

    p = make("cube2")
    start = p.scramble(np.random.default_rng(8), 1, 11)
    inner = policy_value_from_heuristic(p, lambda s: np.zeros(s.shape[0], np.float32))

    clock, calls = FakeClock(), []
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", clock)

    def slow(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls.append(len(states))
        clock.sleep(0.02)  # on the fake clock: the search sees 20 ms pass per call
        return inner(states)

    (r,) = mcts(p, start, slow, time_limit=0.3, max_nodes=None)
    assert r.status == "time limit" and not r.solved
    assert 0.3 <= r.seconds < 0.3 + 0.02 + 1e-9 and 15 <= len(calls) <= 16, (r.seconds, len(calls))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"c": -1.0}, "c must be non-negative"),
        ({"leaves": 0}, "leaves must be positive"),
        ({"leaves": 2.5}, "leaves must be an integer"),
        ({"virtual_loss": float("nan")}, "virtual_loss"),
        ({"max_value": "yes"}, "max_value must be true or false"),
        ({"max_nodes": 0}, "max_nodes must be positive"),
    ],
)
def test_bad_settings_are_puzzle_errors(kwargs, message):
    p = make("puzzle8")
    with pytest.raises(PuzzleError, match=message):
        mcts(p, p.goal(), policy_value_from_heuristic(p, manhattan(p)), **kwargs)


def test_a_policy_value_function_of_the_wrong_shape_is_a_puzzle_error():
    p = make("puzzle8")
    start = p.apply_moves(p.goal(), [0, 1])

    def wrong(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(states.shape[0], np.float32), np.zeros((states.shape[0], 3), np.float32)

    with pytest.raises(PuzzleError, match="expected"):
        mcts(p, start, wrong)


# ---- policies ------------------------------------------------------------------------------------
def test_softmin_and_the_policies_of_values_and_q():
    probs = softmin(
        np.array([[1.0, 2.0, np.inf], [3.0, 3.0, 3.0]]), 1.0, np.array([[1, 1, 0], [1, 1, 1]], bool)
    )
    assert np.allclose(probs[0], [np.e / (np.e + 1), 1 / (np.e + 1), 0.0], atol=1e-6)
    assert np.allclose(probs[1], 1 / 3)
    p = make("puzzle8")
    start = p.apply_moves(p.goal(), p.parse_moves("D R"))[None]
    h = manhattan(p)
    values, pol, qv = policy_value_from_heuristic(p, h, temperature=0.5)(start)
    children = p.expand(start)[0]
    moved = np.any(children.reshape(4, -1) != start.reshape(1, -1), axis=1)
    want = np.where(moved, np.exp(-(1 + h(children)) / 0.5), 0.0)
    assert values[0] == h(start)[0]
    assert np.allclose(pol[0], want / want.sum(), atol=1e-6)
    assert np.allclose(qv[0], 1 + h(children))  # each move's cost-to-go: MCTS's first-play estimate
    q = lambda s: np.tile(np.array([[2.0, 1.0, 3.0, 1.0]], np.float32), (s.shape[0], 1))  # noqa: E731
    v, pq, q_out = policy_value_from_q(p, q)(np.concatenate([start, p.goals(1)]))
    assert np.array_equal(q_out[0], [2.0, 1.0, 3.0, 1.0])
    assert v.tolist() == [1.0, 0.0]  # min Q, 0 at the goal
    assert np.allclose(pq.sum(axis=1), 1.0) and pq[0, 1] == pq[0, 3] > pq[0, 0] > pq[0, 2]
    with pytest.raises(PuzzleError, match="temperature must be positive"):
        policy_value_from_q(p, q, temperature=0.0)


def test_the_policy_of_values_answers_an_empty_batch_with_the_same_three_arrays():
    p = make("puzzle8")
    empty = p.goals(0)
    values, pol, qv = policy_value_from_heuristic(p, manhattan(p))(empty)
    assert values.shape == (0,) and pol.shape == qv.shape == (0, p.num_actions)


@pytest.mark.parametrize("head", ["policy", "q", "value"])
def test_make_policy_value_reads_each_head(head):
    p = make("puzzle8")
    cfg = NetConfig.from_preset(
        "tiny",
        input_dim=inputs.dim(p),
        num_actions=p.num_actions,
        policy_head=head == "policy",
        q_head=head == "q",
    )
    net = build_model(cfg, seed=0).eval()
    states = np.concatenate([p.scramble(np.random.default_rng(9), 5, 6), p.goals(1)])
    out = make_policy_value(p, net, temperature=2.0)(states)
    values, probs = out[:2]
    assert len(out) == (2 if head == "policy" else 3)  # each move's cost-to-go where known
    assert values.shape == (6,) and probs.shape == (6, p.num_actions)
    assert values[-1] == 0.0 and np.all(values >= 0)
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    with torch.inference_mode():
        heads = net(torch.from_numpy(p.encode(states)), all_heads=True)
    goal = p.is_goal(states)
    assert np.allclose(values[~goal], np.maximum(heads["value"].numpy()[~goal], 0), atol=1e-4)
    if head == "policy":
        want = torch.softmax(heads["policy"] / 2.0, dim=1).numpy()
        assert np.allclose(probs, want, atol=1e-5)
    elif head == "q":
        want = torch.softmax(-heads["q"] / 2.0, dim=1).numpy()
        assert np.allclose(probs, want, atol=1e-5)
        assert np.allclose(out[2], np.maximum(heads["q"].numpy(), 1.0), atol=1e-4)
    else:  # moves that change nothing get no probability
        assert np.all(probs[p.legal_mask(states) == 0] == 0)


# ---- the solver ------------------------------------------------------------------------------------
def test_solver_mcts_with_the_shipped_cube2_model_replays_and_takes_options(one_torch_thread):
    p = make("cube2")
    starts = p.scramble(np.random.default_rng(10), 3, 6)
    results = solve_many(p, starts, search="mcts", time_limit=30, options={"mcts_c": 1.0, "mcts_leaves": 8})
    assert all(r.solved and r.search == "mcts" for r in results)
    assert verify(p, starts, [r.actions for r in results]).all()
    # the shortest path in the tree: never longer than the scramble
    assert all(r.length <= 6 for r in results)


def test_solver_option_errors_name_the_option():
    with pytest.raises(PuzzleError, match=r"--mcts-c must be >= 0, got -1"):
        solve_many("cube2", [make("cube2").goal()], search="mcts", options={"mcts_c": -1})
    with pytest.raises(PuzzleError, match=r"--wcd-depth is an option of heuristic wcd, not of search mcts"):
        solve_many("cube2", [make("cube2").goal()], search="mcts", options={"wcd_depth": 2})
    with pytest.raises(PuzzleError, match=r"--mcts-leaves is an option of search mcts, not of search bwas"):
        solve_many("cube2", [make("cube2").goal()], search="bwas", options={"mcts_leaves": 2})
    with pytest.raises(UnknownNameError, match="unknown option 'mcts_cc'"):
        solve_many("cube2", [make("cube2").goal()], search="mcts", options={"mcts_cc": 2})
    with pytest.raises(PuzzleError, match="must be true or false"):
        solve_many("cube2", [make("cube2").goal()], search="mcts", options={"mcts_max_value": 1})


def test_option_defaults_come_from_the_puzzle_then_the_table_and_named_ones_win():
    from puzzlezero.solver import resolve_options

    lights, cube = make("lightsout7"), make("cube3")
    assert resolve_options(lights, search="mcts").option("mcts_max_value") is True  # its Defaults
    assert resolve_options(cube, search="mcts").option("mcts_max_value") is False  # the table's
    named = resolve_options(lights, search="mcts", options={"mcts_max_value": False, "mcts_c": 3})
    assert dict(named.options) == {
        "mcts_c": 3.0,
        "mcts_leaves": 32,
        "mcts_max_value": False,
        "mcts_virtual_loss": 1.0,
        "policy_temperature": 1.0,
        "precision": "auto",
    }
    # BWAS with the network takes only the images and precision options, no images where the puzzle has none
    assert resolve_options(lights, search="bwas").options == (("images", 0), ("precision", "auto"))
