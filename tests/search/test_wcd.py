"""Weighted convolutional distance (search/wcd.py): values hand-checked against the formula at
depth 1 and a plain recursive definition at depth 2, goals kept at 0, mu = 1 gives d0, one value
call per level on deduplicated states, rows independent, bad settings, and ``--heuristic wcd``."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.search import bwas
from puzzlezero.search.wcd import wcd
from puzzlezero.solver import solve_many, verify

P8 = make("puzzle8")


def misplaced(states: np.ndarray) -> np.ndarray:
    """Tiles out of place, blank included (nonzero at no goal: a heuristic d0 with no goal test)."""
    flat = states.reshape(states.shape[0], -1)
    return (flat != P8.goal().reshape(1, -1)).sum(axis=1).astype(np.float32) + 0.5


def fixed_policy(states: np.ndarray) -> np.ndarray:
    """A policy that depends on the state (the blank's position), rows summing to 1."""
    blank = np.argmax(states.reshape(states.shape[0], -1) == 0, axis=1)
    raw = np.stack(
        [blank + 1.0, 2.0 * np.ones_like(blank), (blank % 3) + 0.5, np.ones_like(blank) * 0.25], axis=1
    )
    return (raw / raw.sum(axis=1, keepdims=True)).astype(np.float32)


def d0(states: np.ndarray) -> np.ndarray:
    out = misplaced(states).astype(np.float64)
    out[P8.is_goal(states)] = 0.0
    return out


def reference(states: np.ndarray, k: int, mu: float, policy=fixed_policy) -> np.ndarray:  # noqa: ANN001
    """The formula, recursively, state by state (no batching, no deduplication)."""
    if k == 0:
        return d0(states)
    out = []
    for s in states:
        if P8.is_goal(s[None])[0]:
            out.append(0.0)
            continue
        kids = P8.expand(s[None])[0]
        moved = np.any(kids.reshape(4, -1) != s.reshape(1, -1), axis=1)
        p = np.where(moved, policy(s[None])[0], 0.0)
        p = p / p.sum()
        own = reference(s[None], k - 1, mu, policy)[0]
        out.append(mu * own + (1 - mu) * float(p @ reference(kids, k - 1, mu, policy)))
    return np.array(out)


def starts(n: int = 12, seed: int = 0) -> np.ndarray:
    return P8.scramble(np.random.default_rng(seed), n, (1, 8))


def test_depth_one_is_the_formula_by_hand():
    s = P8.apply_moves(P8.goal(), P8.parse_moves("D R D"))
    kids = P8.expand(s[None])[0]
    moved = np.any(kids.reshape(4, -1) != s.reshape(1, -1), axis=1)
    p = np.where(moved, fixed_policy(s[None])[0], 0.0)
    p /= p.sum()
    want = 0.3 * d0(s[None])[0] + 0.7 * float(p @ d0(kids))
    got = wcd(P8, misplaced, depth=1, mu=0.3, policy=fixed_policy)(s[None])
    assert got.dtype == np.float32 and got[0] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_deeper_levels_match_the_recursive_definition(depth):
    states = starts()
    got = wcd(P8, misplaced, depth=depth, mu=0.4, policy=fixed_policy)(states)
    assert np.allclose(got, reference(states, depth, 0.4), atol=1e-5)


def test_without_a_policy_the_weights_come_from_the_childrens_values():
    def value_policy(states: np.ndarray) -> np.ndarray:
        out = []
        for s in states:
            kids = P8.expand(s[None])[0]
            moved = np.any(kids.reshape(4, -1) != s.reshape(1, -1), axis=1)
            z = np.where(moved, -(1.0 + d0(kids)) / 2.0, -np.inf)
            e = np.exp(z - z.max())
            out.append(e / e.sum())
        return np.array(out)

    states = starts()
    got = wcd(P8, misplaced, depth=2, mu=0.5, temperature=2.0)(states)
    assert np.allclose(got, reference(states, 2, 0.5, value_policy), atol=1e-5)


def test_goals_stay_zero_and_mu_one_is_d0():
    states = np.concatenate([P8.goals(2), starts(6, seed=1)])
    for depth in (0, 1, 2):
        out = wcd(P8, misplaced, depth=depth, mu=0.5, policy=fixed_policy)(states)
        assert out[0] == out[1] == 0.0
        assert np.allclose(wcd(P8, misplaced, depth=depth, mu=1.0, policy=fixed_policy)(states), d0(states))


def test_step_cost_adds_each_moves_cost():
    states = starts()
    plain = wcd(P8, misplaced, depth=1, mu=0.25, policy=fixed_policy)(states)
    with_cost = wcd(P8, misplaced, depth=1, mu=0.25, policy=fixed_policy, step_cost=True)(states)
    goal = P8.is_goal(states)
    assert np.allclose(with_cost[~goal] - plain[~goal], 0.75, atol=1e-5)


def test_one_value_call_per_level_on_distinct_states_and_rows_independent():
    calls: list[int] = []

    def counted(states: np.ndarray) -> np.ndarray:
        calls.append(states.shape[0])
        assert P8.unique(states)[0].shape[0] == states.shape[0]  # nothing evaluated twice
        return misplaced(states)

    states = np.concatenate([starts(), starts()])  # every state twice
    together = wcd(P8, counted, depth=2, mu=0.5, policy=fixed_policy)(states)
    assert len(calls) == 3  # levels 0, 1, 2
    assert calls[0] == P8.unique(states)[0].shape[0]
    # the whole 2-move neighbourhood, each state once (a move and its inverse lead back)
    assert sum(calls) < states.shape[0] // 2 * (1 + 4 + 16)
    alone = np.concatenate(
        [wcd(P8, misplaced, depth=2, mu=0.5, policy=fixed_policy)(s[None]) for s in states]
    )
    assert np.allclose(together, alone, atol=1e-6)
    assert wcd(P8, counted, depth=1)(states[:0]).shape == (0,)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"depth": -1}, "depth must be an integer from 0 to 4"),
        ({"depth": 1.5}, "depth must be an integer"),
        ({"depth": 9}, "from 0 to 4"),
        ({"mu": 1.5}, r"mu must be a number in \[0, 1\]"),
        ({"mu": float("nan")}, "mu must be"),
        ({"temperature": 0}, "temperature must be positive"),
    ],
)
def test_bad_settings_are_puzzle_errors(kwargs, message):
    with pytest.raises(PuzzleError, match=message):
        wcd(P8, misplaced, **kwargs)


def test_a_bad_policy_is_a_puzzle_error():
    bad = wcd(P8, misplaced, depth=1, policy=lambda s: np.full((s.shape[0], 3), 1 / 3))
    with pytest.raises(PuzzleError, match="expected"):
        bad(starts(2))
    negative = wcd(P8, misplaced, depth=1, policy=lambda s: np.full((s.shape[0], 4), -1.0))
    with pytest.raises(PuzzleError, match="negative"):
        negative(starts(2))


def test_astar_with_wcd_of_an_admissible_heuristic_still_solves_and_replays():
    """A* (lambda 1, one node per iteration) on the 8-puzzle with a 1-level WCD of the misplaced
    tiles: every instance solved, solutions verified."""
    states = P8.scramble(np.random.default_rng(2), 6, 14)
    h = wcd(P8, lambda s: misplaced(s) - 0.5, depth=1, mu=0.5)
    results = bwas(P8, states, h, weight=1.0, batch_size=1)
    assert all(r.solved for r in results)
    assert verify(P8, states, [r.actions for r in results]).all()


def test_solver_heuristic_wcd_with_the_shipped_cube2_model(one_torch_thread):
    p = make("cube2")
    states = p.scramble(np.random.default_rng(11), 3, 5)
    results = solve_many(
        p,
        states,
        search="bwas",
        heuristic="wcd",
        weight=1.0,
        batch=1,
        options={"wcd_depth": 1, "wcd_mu": 0.5},
    )
    assert all(r.solved for r in results)
    assert verify(p, states, [r.actions for r in results]).all()
    with pytest.raises(PuzzleError, match=r"--wcd-mu must be >= 0 and <= 1, got 2"):
        solve_many(p, states, heuristic="wcd", options={"wcd_mu": 2.0})
