"""Rute's discounted PUCT search on cube2 with an exact oracle: backed-up values checked by hand
on tiny trees, the first-play rule, histories, and trees independent of their batch."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.search.discounted_mcts import _histories, discounted_mcts

G = 0.95
CUBE = make("cube2")


def oracle(sharp: float = 0.0):
    """Exact values ``gamma^distance``; the prior puts ``sharp`` of its mass on the first optimal
    move (on the 2x2x2 two moves are optimal where one is on the 3x3x3: L' undoes R as well as R'
    does, since R L' is a whole-cube rotation and every orientation of the solved cube is a goal)."""

    def policy_value(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cur = states if states.ndim == 2 else states[:, 0]
        d = distance(cur)
        children = CUBE.expand(cur)  # [B, 12, 24]
        dc = distance(children.reshape(-1, 24)).reshape(len(cur), 12)
        best = np.eye(12)[np.argmax(dc == d[:, None] - 1, axis=1)]
        p = (1 - sharp) / 12 + sharp * best
        return p.astype(np.float32), d.astype(np.float32)

    return policy_value


def state(moves: str) -> np.ndarray:
    return CUBE.apply_moves(CUBE.goal(), CUBE.parse_moves(moves))[None]


def test_one_move_from_the_goal_every_visit_goes_to_the_goal():
    # prior 0.9 on L' (a solution): it is tried first, reaches the goal (value 1, backed up as
    # gamma), and keeps every visit: Q = 0.95 + 0.95 * 0.91 / (1 + N) * sqrt(N) beats the
    # untried moves' 0.95 (the root's value) + 0.95 * 0.008 * sqrt(N)
    stats = discounted_mcts(CUBE, state("R"), oracle(0.9), simulations=5, gamma=G, c_puct=1.0)
    solve = CUBE.action_names.index("L'")
    assert stats.visits[0, solve] == 5 and stats.visits.sum() == 5
    assert stats.q[0, solve] == pytest.approx(G)
    assert stats.root_value[0] == pytest.approx(G)
    assert stats.goal_found[0] and stats.nodes[0] == 2  # the goal is terminal: never expanded again


def test_two_moves_from_the_goal_the_backups_are_discounted_per_level():
    # R U: solution U' L'. Simulation 1 expands U' (value gamma^1), backed up to the root as
    # gamma^2; simulation 2 walks U' again and expands L' = the goal (value 1): gamma on the
    # edge below, gamma^2 on the root edge. Mean root Q of U' = gamma^2.
    stats = discounted_mcts(CUBE, state("R U"), oracle(0.9), simulations=2, gamma=G, c_puct=1.0)
    u_inv = CUBE.action_names.index("U'")
    assert stats.visits[0, u_inv] == 2
    assert stats.q[0, u_inv] == pytest.approx(G**2)
    assert stats.root_value[0] == pytest.approx(G**2)
    assert stats.nodes[0] == 3 and stats.goal_found[0]


def test_value_scaled_exploration_by_hand():
    # uniform prior, root one move away (value 0.95). Simulation 1: every score is equal
    # (Q = parent value 0.95, U = c * 0.95 / 12), so action 0 (U) is tried: child U R is 2 away,
    # value 0.95^2, backed up as 0.95^3. Simulation 2: Q(U) + U(U) = 0.857 + 0.95/24 < 0.95 +
    # 0.95/12 for the untried ones, so action 1 (U') comes next, and so on through the 12.
    stats = discounted_mcts(CUBE, state("R"), oracle(0.0), simulations=3, gamma=G, c_puct=1.0)
    assert stats.visits[0].tolist() == [1, 1, 1] + [0] * 9
    assert np.allclose(stats.q[0, :3], G**3) and (stats.q[0, 3:] == 0).all()
    stats = discounted_mcts(CUBE, state("R"), oracle(0.0), simulations=40, gamma=G, c_puct=1.0)
    solves = {CUBE.action_names.index("R'"), CUBE.action_names.index("L'")}
    assert set(np.flatnonzero(stats.visits[0] == stats.visits[0].max())) <= solves
    assert (stats.visits[0] >= 1).all()


def test_the_seeds_zero_first_play_value_locks_onto_the_first_move():
    # with Q = 0 for untried actions (the seed's code) the first child keeps every visit at a small
    # budget, the reason for the default "parent"
    stats = discounted_mcts(CUBE, state("R"), oracle(0.0), simulations=30, gamma=G, unvisited="zero")
    assert stats.visits[0, 0] == 30
    with pytest.raises(PuzzleError, match="unvisited"):
        discounted_mcts(CUBE, state("R"), oracle(0.0), simulations=3, unvisited="max")


def test_trees_in_a_batch_do_not_interact():
    rng = np.random.default_rng(0)
    roots = CUBE.scramble(rng, 5, (1, 6))
    together = discounted_mcts(CUBE, roots, oracle(0.5), simulations=25)
    for i in range(5):
        alone = discounted_mcts(CUBE, roots[i : i + 1], oracle(0.5), simulations=25)
        assert (alone.visits[0] == together.visits[i]).all()
        assert np.allclose(alone.q[0], together.q[i])


def test_a_solved_root_is_not_searched_and_bad_arguments_are_refused():
    stats = discounted_mcts(CUBE, CUBE.goals(2), oracle(), simulations=10)
    assert (stats.visits == 0).all() and (stats.root_value == 1).all() and stats.goal_found.all()
    with pytest.raises(PuzzleError, match="simulations"):
        discounted_mcts(CUBE, state("R"), oracle(), simulations=0)
    with pytest.raises(PuzzleError, match="gamma"):
        discounted_mcts(CUBE, state("R"), oracle(), simulations=1, gamma=1.5)


def test_each_node_sees_its_path_then_the_roots_history():
    seen: list[np.ndarray] = []

    def recording(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        seen.append(states.copy())
        return oracle(0.0)(states)

    root = state("R U F")
    before = np.stack([state("R U")[0], state("R")[0]])[None]  # [1, 2, 24]: newest first
    discounted_mcts(CUBE, root, recording, simulations=30, history=before)
    rows = np.concatenate(seen)  # [K, 3, 24]
    assert rows.shape[1:] == (3, 24)
    assert (rows[0] == np.concatenate([root, before[0]])).all()  # the root: itself, then its past
    for row in rows[1:]:
        # every other node: the state a move led to, then the state it came from (a neighbour)
        assert (CUBE.expand(row[1:2])[0] == row[0]).all(axis=1).any()
        if (row[1] == root[0]).all():
            assert (row[2] == before[0, 0]).all()
    assert any((row[2] == root[0]).all() for row in rows)  # some nodes two levels down


def test_history_gather_by_hand():
    # a chain root(0) -> 1 -> 2 in one tree; states are their index repeated
    state_arr = np.arange(4, dtype=np.uint8)[None, :, None].repeat(2, axis=2)  # [1, 4, 2]
    parent = np.array([[-1, 0, 1, -1]])
    pre = np.array([[[9, 9], [8, 8], [7, 7]]], dtype=np.uint8)  # before the root: 9, 8, 7
    out = _histories(state_arr, parent, pre, np.array([0, 0, 0]), np.array([2, 1, 0]), 4)
    assert out[0, :, 0].tolist() == [2, 1, 0, 9]
    assert out[1, :, 0].tolist() == [1, 0, 9, 8]
    assert out[2, :, 0].tolist() == [0, 9, 8, 7]  # the root: its own state, then the ones before it


def test_misshapen_roots_and_histories_are_refused():
    with pytest.raises(PuzzleError, match="roots"):
        discounted_mcts(CUBE, np.zeros((2, 54), np.uint8), oracle(), simulations=1)
    with pytest.raises(PuzzleError, match="history"):
        discounted_mcts(CUBE, state("R"), oracle(), simulations=1, history=np.zeros((1, 24), np.uint8))
