"""Training states from greedy descents under the target network (``train/descents.py``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.cube.table import distance
from puzzlezero.train.descents import descent_states, training_states
from puzzlezero.train.objectives import get_objective
from tests.conftest import tiny_train_config

TINY = tiny_train_config()
CUBE2 = make("cube2")


def exact(states: np.ndarray) -> np.ndarray:
    return distance(states).astype(np.float32)


def test_a_greedy_descent_under_exact_values_walks_a_shortest_path_to_the_goal_and_restarts():
    """With the exact cost-to-go and no random steps every step lowers the distance by exactly one
    (the greedy child is a shortest-path successor); a walker at the goal starts again at a scramble."""
    steps = 30
    states = descent_states(CUBE2, np.random.default_rng(0), 8 * steps, 9, exact, steps=steps, epsilon=0.0)
    assert states.shape == (8 * steps, *CUBE2.state_shape)
    d = distance(states).reshape(8, steps)
    restarts = 0
    for walk in d:
        for a, b in zip(walk[:-1], walk[1:], strict=True):
            if a == 1:  # the next step reached the goal: the walker restarted at a fresh scramble
                restarts += 1
                assert b >= 1
            else:
                assert b == a - 1
    assert restarts >= 8  # 30 steps from scrambles of at most 9 moves: every walker restarts
    assert not CUBE2.is_goal(states).any()


def test_a_stride_records_every_kth_state_of_the_walk():
    steps, stride = 24, 4
    states = descent_states(
        CUBE2, np.random.default_rng(1), 30, 11, exact, steps=steps, epsilon=0.0, stride=stride
    )
    assert len(states) == 30  # 5 walkers of 6 recorded states, the first 30 kept
    d = distance(states).reshape(5, steps // stride)
    steady = d[:, :-1] > stride  # no restart can fall between these records
    assert steady.sum() >= 3
    assert ((d[:, :-1] - d[:, 1:])[steady] == stride).all()


def test_random_steps_never_undo_the_previous_move():
    puzzle = make("puzzle8")
    blind = lambda s: np.zeros(len(s), np.float32)  # noqa: E731
    states = descent_states(puzzle, np.random.default_rng(2), 400, 2000, blind, steps=40, epsilon=1.0)
    walks = states.reshape(10, 40, -1)
    assert not (walks[:, 2:] == walks[:, :-2]).all(axis=2).any()  # never back where it was two steps ago
    moved = (walks[:, 1:] != walks[:, :-1]).any(axis=2)
    assert moved.all()


def test_descents_find_the_states_a_network_undervalues():
    """The point of it: under a heuristic with holes (an eighth of the states, scattered, valued at
    half a move whatever their distance) the descents go into the holes and keep to them, where
    scrambles of the same depths meet them an eighth of the time."""

    def in_hole(states: np.ndarray) -> np.ndarray:
        return CUBE2.hash64(states) % np.uint64(8) == 0

    def holed(states: np.ndarray) -> np.ndarray:
        return np.where(in_hole(states), np.float32(0.5), exact(states))

    descents = descent_states(CUBE2, np.random.default_rng(4), 3000, 11, holed, steps=30, epsilon=0.0)
    scrambles = CUBE2.scramble(np.random.default_rng(4), 3000, (1, 11))
    assert abs(in_hole(scrambles).mean() - 1 / 8) < 0.03
    assert in_hole(descents).mean() > 0.5


def test_training_states_mix_scrambles_and_descents_and_share_zero_draws_as_before():
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    plain = training_states(CUBE2, rng_a, 100, 8, exact, TINY)
    assert np.array_equal(plain, CUBE2.scramble(rng_b, 100, (1, 8)))
    assert rng_a.bit_generator.state == rng_b.bit_generator.state
    cfg = replace(TINY, objective="lhbl", descent_share=0.25, descent_steps=10)
    mixed = training_states(CUBE2, np.random.default_rng(5), 100, 8, exact, cfg)
    assert mixed.shape == (100, *CUBE2.state_shape)
    assert np.array_equal(mixed[:75], CUBE2.scramble(np.random.default_rng(5), 75, (1, 8)))
    # the descents walk downhill: 10 steps of a walker, each one move nearer unless it restarted
    d = distance(mixed[75:85])
    assert (np.diff(d)[d[:-1] > 1] == -1).all()


def test_lhbl_and_davi_label_descent_states_exactly_with_exact_values():
    for objective in ("davi", "lhbl"):
        cfg = replace(TINY, objective=objective, lhbl_expansions=3, descent_share=0.5, descent_steps=8)
        states, targets = get_objective(objective).make(CUBE2, np.random.default_rng(6), 60, 9, exact, cfg)
        assert len(states) >= 60 if objective == "lhbl" else len(states) == 60
        assert np.array_equal(targets, exact(states))


@pytest.mark.parametrize(
    ("overrides", "said"),
    [
        ({"descent_share": 1.0}, "0 <= descent_share < 1"),
        ({"descent_share": -0.1}, "0 <= descent_share < 1"),
        ({"descent_steps": 4, "descent_stride": 5}, "1 <= descent_stride <= descent_steps"),
        ({"descent_epsilon": 1.5}, "0 <= descent_epsilon <= 1"),
        ({"descent_share": 0.5, "objective": "random_walk"}, "'random_walk' makes its own states"),
        ({"descent_share": 0.5, "goal": "layer1"}, "walk to the solved state"),
    ],
)
def test_descent_settings_are_checked(overrides, said):
    with pytest.raises(PuzzleError, match=said):
        replace(TINY, **overrides)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="stride"):
        descent_states(CUBE2, np.random.default_rng(0), 10, 5, exact, steps=3, epsilon=0.0, stride=4)
    assert descent_states(CUBE2, np.random.default_rng(0), 0, 5, exact, steps=3, epsilon=0.0).shape == (
        0,
        *CUBE2.state_shape,
    )
