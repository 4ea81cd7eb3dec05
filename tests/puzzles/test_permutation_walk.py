"""The permutation puzzles' training walks (numba kernel): every step changes the state, never
undoes the step before, and is drawn uniformly among the moves that qualify; labels and undo moves
agree with the states; the random stream is the one ``walks_with_cost`` reads."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

import puzzlezero as pz
from puzzlezero.puzzles import walks
from puzzlezero.puzzles.permutation import FORMAT, Definition, PermutationPuzzle
from puzzlezero.puzzles.permutation.walk import supports
from tests.puzzles.test_permutation_definition import brute_force_distances

RING_L = [3, 0, 1, 2, 4, 5]  # ring (0 1 2 3)
RING_R = [5, 1, 0, 3, 2, 4]  # ring (0 4 2 5)
SWAP_45 = [0, 1, 2, 3, 5, 4]


def puzzle(goal: str, **moves: list[int]) -> PermutationPuzzle:
    data: dict[str, Any] = {
        "format": FORMAT,
        "name": "walker",
        "positions": 6,
        "moves": moves or {"l": RING_L, "r": RING_R},
        "goal": goal,
    }
    return PermutationPuzzle(Definition.from_dict(data))


def test_supports_are_the_positions_each_move_changes() -> None:
    support, size = supports(np.array([RING_L, SWAP_45]))
    assert size.tolist() == [4, 2]
    assert support.tolist() == [[0, 1, 2, 3], [4, 5, -1, -1]]


def test_a_first_step_is_drawn_uniformly_among_the_moves_that_change_the_goal() -> None:
    # s swaps two B labels: it leaves the goal as it is, so no walk may take it first
    p = puzzle("C;A;C;A;B;B", l=RING_L, r=RING_R, s=SWAP_45)
    states, cost, undo = p.walks_with_undo(np.random.default_rng(0), 4000, 1)
    assert not p.is_goal(states).any()
    assert (cost == 1).all()
    np.testing.assert_array_equal(p.apply(states, undo), p.goals(4000))  # each undo leads back
    counts = Counter(p.action_names[u] for u in undo)
    assert set(counts) == {"l", "r", "l'", "r'"}  # the undo of l is l', of r' is r...
    assert all(850 <= c <= 1150 for c in counts.values()), counts  # 1000 each, sd 27


def test_no_step_undoes_the_one_before() -> None:
    # distinct labels: the only two-move words that return to the goal are a move and its inverse
    p = puzzle("A;B;C;D;E;F")
    rng = np.random.default_rng(1)
    assert not p.is_goal(p.random_walks(rng, 3000, 2)).any()
    assert p.is_goal(p.scramble(rng, 3000, 2)).mean() > 0.15  # plain scrambles do come back (1/4)


def test_a_walk_of_k_steps_ends_at_most_k_moves_out_and_reaches_every_distance() -> None:
    p = puzzle("C;A;C;A;B;B")
    dist = brute_force_distances(p)
    depths = np.arange(1, 9).repeat(300)
    states = p.random_walks(np.random.default_rng(2), depths.size, depths)
    d = np.array([dist[s.tobytes()] for s in states])
    assert (d <= depths).all()
    assert (d[depths == 1] == 1).all()
    assert set(d.tolist()) == set(range(max(dist.values()) + 1))


def test_only_the_undoing_move_changes_the_state_then_it_is_taken() -> None:
    # one involution: after a first swap, only the swap itself changes the state
    p = puzzle("A;B;C;D;E;F", s=[1, 0, 2, 3, 4, 5])
    rng = np.random.default_rng(3)
    assert p.format(p.random_walks(rng, 5, 3)[0]) == "B;A;C;D;E;F"
    assert p.is_goal(p.random_walks(rng, 5, 2)).all()


def test_walks_with_cost_reads_the_same_stream_over_more_walks_than_a_chunk() -> None:
    p = pz.make("globe_1-8")
    states, cost = walks.walks_with_cost(p, np.random.default_rng(4), 9000, (1, 40))
    assert (cost >= 1).all() and (cost <= 40).all()
    rng = np.random.default_rng(4)
    depths = walks.walk_depths(p, rng, 9000, (1, 40))
    np.testing.assert_array_equal(p.random_walks(rng, 9000, depths), states)
    assert states.shape == (9000, *p.state_shape)
    for s in states[::500]:  # the goal's labels, orbit by orbit
        p.validate(s)
    assert not p.is_goal(states[8192:][cost[8192:] == 1]).any()  # the last chunk walked too
    assert p.is_goal(states[8192:]).mean() < 0.05
