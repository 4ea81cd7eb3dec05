"""Labels capped by known paths in LHBL trees and on greedy descents (``TrainConfig.cap_labels``):
the caps computed by hand on small puzzles, the same draws as an uncapped run, the settings."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.train.descents import (
    descent_states,
    descent_states_with_path_cost,
    scrambles_with_path_cost,
    training_states,
)
from puzzlezero.train.objectives import LabelJob, capping_objectives, get_objective, make_labels
from puzzlezero.train.objectives.lhbl import _paths_back, lhbl_labels
from puzzlezero.train.objectives.path_costs import training_states_with_path_cost
from tests.conftest import tiny_train_config

PUZZLE8 = make("puzzle8")
CUBE2 = make("cube2")


def inflated(states: np.ndarray) -> np.ndarray:
    """A target network that over-estimates by far: ten times the Manhattan distance."""
    return 10.0 * PUZZLE8.manhattan(states).astype(np.float32)


def bfs_from(puzzle, root: np.ndarray, depth: int) -> dict[bytes, int]:
    """Exact move counts from ``root`` to every state within ``depth`` moves of it."""
    seen = {root.tobytes(): 0}
    frontier = root[None]
    for d in range(1, depth + 1):
        nxt = []
        for c in puzzle.expand(frontier).reshape(-1, *puzzle.state_shape):
            if c.tobytes() not in seen:
                seen[c.tobytes()] = d
                nxt.append(c)
        frontier = np.array(nxt)
    return seen


def far_root() -> tuple[np.ndarray, float]:
    """The 8-puzzle board of largest Manhattan distance among 50 scrambles of 30 moves, with its
    scramble's cost back (30: every move of a sliding scramble is a real move)."""
    roots, cost = scrambles_with_path_cost(PUZZLE8, np.random.default_rng(1), 50, (30, 30))
    i = int(np.argmax(PUZZLE8.manhattan(roots)))
    assert cost[i] == 30.0 and PUZZLE8.manhattan(roots[i : i + 1])[0] >= 12
    return roots[i : i + 1], float(cost[i])


# ---- LHBL ---------------------------------------------------------------------------------------
def test_lhbl_labels_under_an_inflated_network_are_capped_exactly_at_g_plus_the_roots_path():
    """A root 30 moves from the goal by its scramble (c = 30), h = 10 * Manhattan: every uncapped label
    is far above the known path, so the capped labels are exactly g(n) + 8, g(n) the node's move count
    from the root (the 8-puzzle has no cycle shorter than 12 moves, so the tree's path is the shortest)."""
    root, c = far_root()
    states, plain = lhbl_labels(PUZZLE8, root, inflated, 5)
    states2, capped = lhbl_labels(PUZZLE8, root, inflated, 5, path_cost=np.array([c]))
    assert np.array_equal(states, states2) and len(states) == 5
    g = bfs_from(PUZZLE8, root[0], 5)
    expected = np.array([g[s.tobytes()] + c for s in states], dtype=np.float32)
    assert np.all(plain > expected)  # the network's labels are all above the known paths
    np.testing.assert_array_equal(capped, expected)
    assert capped[0] == c and sorted(set(expected - c)) == sorted(set(g[s.tobytes()] for s in states))


def test_two_expansions_by_hand():
    """Expanding the root then its best child: labels [c, c + 1] under the inflated network (the root
    is 30 moves from the goal by its scramble, Manhattan 14: every uncapped label is above 100)."""
    root, c = far_root()
    _, plain = lhbl_labels(PUZZLE8, root, inflated, 2)
    _, capped = lhbl_labels(PUZZLE8, root, inflated, 2, path_cost=np.array([c]))
    assert np.all(plain > 100)
    np.testing.assert_array_equal(capped, [30.0, 31.0])


def test_the_cap_lowers_only_labels_above_the_known_path_and_an_infinite_cap_changes_nothing():
    roots = PUZZLE8.scramble(np.random.default_rng(3), 40, depth=(4, 20))
    manhattan = lambda s: PUZZLE8.manhattan(s).astype(np.float32)  # noqa: E731 (admissible)
    _, plain = lhbl_labels(PUZZLE8, roots, inflated, 6)
    _, same = lhbl_labels(PUZZLE8, roots, inflated, 6, path_cost=np.full(40, np.inf))
    np.testing.assert_array_equal(plain, same)
    _, low = lhbl_labels(PUZZLE8, roots, manhattan, 6)
    _, cost = scrambles_with_path_cost(PUZZLE8, np.random.default_rng(3), 40, (4, 20))
    _, low_capped = lhbl_labels(PUZZLE8, roots, manhattan, 6, path_cost=cost)
    np.testing.assert_array_equal(low, low_capped)  # Manhattan never passes a real path's length
    _, capped = lhbl_labels(PUZZLE8, roots, inflated, 6, path_cost=cost)
    assert np.all(capped <= plain) and np.any(capped < plain)
    np.testing.assert_array_equal(capped[:40], np.minimum(plain[:40], cost))  # the roots: c(root)


def test_the_path_back_is_the_cheapest_through_the_trees_edges():
    """A hand-made tree: root 0 expanded to 1 and 2, node 1 expanded to 3, node 2 expanded to 3
    again (a second way) and 4. Unit costs, moves that undo each other: g_back = [0, 1, 1, 2, 2]."""
    expanded = np.array([[0, 1, 2]])
    edges = np.full((1, 3, 4), -1)
    edges[0, 0, :2] = [1, 2]
    edges[0, 1, :2] = [0, 3]
    edges[0, 2, :3] = [0, 3, 4]
    back = _paths_back(PUZZLE8, expanded, edges, 6, 5)
    np.testing.assert_array_equal(back[0, :5], [0, 1, 1, 2, 2])
    assert np.isinf(back[0, 5])  # no such node
    sokoban = make("sokoban")  # no move can be undone: only the edges 1 -> 0 and 2 -> 0 lead back
    back_s = _paths_back(sokoban, expanded, edges, 6, 5)
    np.testing.assert_array_equal(back_s[0, :5], [0, 1, 1, np.inf, np.inf])


def test_puzzles_whose_moves_cannot_be_undone_cap_the_root_and_nodes_with_a_forward_path_back():
    """Sokoban: no move has an inverse, but the agent's steps without a push often lead back to the
    root by a move of their own, which is a known path too."""
    puzzle = make("sokoban")
    roots, cost = scrambles_with_path_cost(puzzle, np.random.default_rng(0), 6, (4, 10))
    h = lambda s: np.full(len(s), 50.0, dtype=np.float32)  # noqa: E731
    states, plain = lhbl_labels(puzzle, roots, h, 4)
    _, capped = lhbl_labels(puzzle, roots, h, 4, path_cost=cost)
    np.testing.assert_array_equal(capped[:6], np.minimum(plain[:6], cost))
    assert np.all(capped <= plain) and np.any(capped[6:] == plain[6:])


# ---- greedy descents ----------------------------------------------------------------------------
def exact(states: np.ndarray) -> np.ndarray:
    return distance(states).astype(np.float32)


def test_a_descent_that_reaches_the_goal_gives_its_states_their_remaining_steps():
    """Exact values, no random steps: each walker walks a shortest path to the goal and restarts.
    A state on a walk that got there is capped at its remaining steps, which the replay confirms
    (greedy moves from it reach the goal in exactly that many steps); a state of the last, unfinished
    walk at its start's path plus the steps walked so far."""
    steps = 25
    rng = np.random.default_rng(5)
    states, cost = descent_states_with_path_cost(CUBE2, rng, 6 * steps, 9, exact, steps=steps, epsilon=0.0)
    plain = descent_states(CUBE2, np.random.default_rng(5), 6 * steps, 9, exact, steps=steps, epsilon=0.0)
    assert np.array_equal(states, plain)
    d = distance(states).reshape(6, steps)
    cost = cost.reshape(6, steps)
    finished = 0
    for walk, c, rows in zip(d, cost, states.reshape(6, steps, -1), strict=True):
        # the next step reaches the goal (after its last record a walker takes no step)
        ends = [i for i in range(steps - 1) if walk[i] == 1]
        start = 0
        for end in ends:
            for i in range(start, end + 1):
                assert c[i] == end - i + 1
            state = rows[start][None]  # replay the greedy moves from the walk's start
            for _ in range(int(c[start])):
                children = CUBE2.expand(state)[0]
                state = children[np.argmin(distance(children))][None]
            assert CUBE2.is_goal(state)[0]
            finished += 1
            start = end + 1
        for i in range(start, steps):  # unfinished: the walk undone, then the start's scramble
            assert c[i] == c[start] + (i - start) and c[i] >= walk[i]
    assert finished >= 6


def test_descent_caps_are_the_smaller_of_the_two_known_paths():
    """Random steps: a walk wanders, so some of its states are nearer its start (walked back, then
    the start's scramble) than the goal along the rest of the walk, and others the other way round."""
    steps = 40
    states, cost = descent_states_with_path_cost(
        CUBE2, np.random.default_rng(7), 10 * steps, 6, exact, steps=steps, epsilon=0.5
    )
    d = distance(states).reshape(10, steps)
    cost = cost.reshape(10, steps)
    assert np.all(cost >= d) and np.all(np.isfinite(cost))
    walks = states.reshape(10, steps, *CUBE2.state_shape)
    kinds = set()
    for walk, c in zip(walks, cost, strict=True):
        children = CUBE2.expand(walk[:-1])  # [steps - 1, A, ...]
        same_walk = np.any(np.all(children == walk[1:, None], axis=2), axis=1)  # no restart between
        # min(rest - 1, back + 1) - min(rest, back): -1 (the goal nearer), +1 (the start nearer) or 0
        diff = (c[1:] - c[:-1])[same_walk]
        assert set(diff.tolist()) <= {-1.0, 0.0, 1.0}
        kinds |= set(diff.tolist())
    assert kinds >= {-1.0, 1.0}  # both caps bind somewhere


@pytest.mark.parametrize("name", ["puzzle8", "cube2", "lightsout7"])
def test_the_draws_are_those_of_an_uncapped_descent(name):
    puzzle = make(name)
    h = lambda s: np.zeros(len(s), np.float32)  # noqa: E731
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    plain = descent_states(puzzle, a, 60, 12, h, steps=20, epsilon=0.3, stride=2)
    states, cost = descent_states_with_path_cost(puzzle, b, 60, 12, h, steps=20, epsilon=0.3, stride=2)
    assert np.array_equal(plain, states) and cost.shape == (60,)
    assert a.random() == b.random()  # the generators stand at the same place afterwards


def test_training_states_with_path_cost_give_descent_states_a_finite_cap():
    cfg = tiny_train_config(descent_share=0.5, descent_steps=8, descent_stride=2, max_scramble=6)
    h = lambda s: np.full(len(s), 9.0, dtype=np.float32)  # noqa: E731
    a, b = np.random.default_rng(4), np.random.default_rng(4)
    states, cost = training_states_with_path_cost(CUBE2, a, 200, 6, h, cfg)
    assert np.array_equal(states, training_states(CUBE2, b, 200, 6, h, cfg))
    assert a.random() == b.random()
    assert np.all(np.isfinite(cost)) and np.all(cost >= distance(states))


def test_capped_lhbl_labels_keep_the_states_of_an_uncapped_run_and_lower_some_labels():
    cfg = tiny_train_config(
        objective="lhbl", lhbl_expansions=4, descent_share=0.25, descent_steps=8, descent_stride=2
    )
    h = lambda s: np.full(len(s), 9.0, dtype=np.float32)  # noqa: E731
    job = LabelJob(chunk=0, objective="lhbl", n=400, max_scramble=6, seed=(2, 2), target_version=0)
    s_plain, plain = make_labels(CUBE2, job, h, cfg)
    s_capped, capped = make_labels(CUBE2, job, h, replace(cfg, cap_labels=True))
    assert np.array_equal(s_plain, s_capped)
    assert np.all(capped <= plain) and np.any(capped < plain)
    assert np.all(capped >= distance(s_capped))  # a cap is a real path: never below the truth here


def test_lhbl_honours_cap_labels_and_names_it_in_its_recipe():
    cfg = tiny_train_config(objective="lhbl", cap_labels=True)
    assert "lhbl" in capping_objectives()
    assert get_objective("lhbl").describe(cfg) == "LHBL (10 expansions), capped by known paths"
    assert get_objective("lhbl").describe(replace(cfg, cap_labels=False)) == "LHBL (10 expansions)"
