"""Sokoban is irreversible: training states by pulling boxes, targets from forward moves only,
dead squares, and searches that end cleanly on levels that cannot be solved."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from puzzlezero import make, solve
from puzzlezero.nn import build_model, save_model
from puzzlezero.nn.config import NetConfig
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.sokoban import BOX, TARGET, WALL, Sokoban
from puzzlezero.puzzles.sokoban.deadlock import dead_squares, has_dead_box
from puzzlezero.puzzles.sokoban.generator import (
    forward_solution,
    generate_rooms,
    goal_configurations,
    reverse_play,
)
from puzzlezero.search import bwas, gbfs
from puzzlezero.search.beam import beam
from puzzlezero.train.objectives.davi import one_step_targets
from puzzlezero.train.objectives.lhbl import lhbl_labels
from tests.clock import FakeClock

U, D, L, R = range(4)


@pytest.fixture(scope="module")
def p() -> Sokoban:
    return make("sokoban")


@pytest.fixture(scope="module")
def pruned() -> Sokoban:
    return Sokoban(10, 10, 4, prune_dead_squares=True)


def level(p: Sokoban, *rows: str) -> np.ndarray:
    return p.parse("\n".join(rows))


def zeros(states: np.ndarray) -> np.ndarray:
    return np.zeros(len(states), np.float32)


# ---- training states: pulled from goal configurations, solved by pushing back ----------------------
def replay(p: Sokoban, state: np.ndarray, moves: list[int]) -> np.ndarray:
    """Apply ``moves`` one at a time; every one of them must really move (a legal push or walk)."""
    for a in moves:
        assert p.legal_mask(state[None])[0, a], (
            f"move {p.action_names[a]} is not possible in\n{p.format(state)}"
        )
        state = p.apply(state[None], np.array([a]))[0]
    return state


def test_pulls_replayed_inverted_as_pushes_solve_every_training_state(p):
    rng = np.random.default_rng(11)
    goals = generate_rooms(rng, 150)
    depths = rng.integers(1, 120, size=150)
    states, steps = reverse_play(goals, rng, depths, p.width, return_steps=True)
    assert steps.shape == (150, depths.max()) and (np.count_nonzero(steps >= 0, axis=1) <= depths).all()
    pulled = 0
    for goal, state, row in zip(goals, states, steps, strict=True):
        moves = forward_solution(row)
        assert len(moves) == np.count_nonzero(row >= 0)  # one forward move per reverse step
        end = replay(p, state, moves)
        np.testing.assert_array_equal(end, goal)  # back to the very goal configuration
        assert p.is_goal(end[None])[0]
        pulled += not np.array_equal(state & BOX, goal & BOX)
    assert pulled > 100  # most walks moved boxes off their targets


def test_goal_configurations_of_given_levels(p):
    lev = level(
        p,
        "##########",
        "#        #",
        "# $  .   #",
        "#   ##   #",
        "# $ .  $ #",
        "#  .     #",
        "#    @ $ #",
        "#  .     #",
        "#        #",
        "##########",
    )
    goals = goal_configurations(np.stack([lev, lev]), np.random.default_rng(0), p.height, p.width)
    for g in goals:
        p.validate(g)
        assert p.is_goal(g[None])[0]
        np.testing.assert_array_equal(g & (WALL | TARGET), lev & (WALL | TARGET))
        np.testing.assert_array_equal((g & BOX) != 0, (lev & TARGET) != 0)
    states, steps = reverse_play(
        goals, np.random.default_rng(1), np.array([60, 60]), p.width, return_steps=True
    )
    for g, s, row in zip(goals, states, steps, strict=True):
        np.testing.assert_array_equal(replay(p, s, forward_solution(row)), g)


# ---- Bellman targets look at forward moves only ----------------------------------------------------
def test_bellman_targets_come_from_forward_children(p):
    # the agent can walk right or push the box left; pulling the box right is no move of Sokoban
    s = level(p, "######", "# $@.#", "######")
    pulled = level(p, "######", "#  $+#", "######")  # what a pull to the right would give

    def value(states: np.ndarray) -> np.ndarray:
        return np.where(np.all(states == pulled, axis=1), 0.0, 10.0).astype(np.float32)

    assert one_step_targets(p, value, s[None]).tolist() == [11.0]  # 1 + J(forward child), never 1
    _, labels = lhbl_labels(p, s[None], value, 1)
    assert labels[0] == 11.0
    one_push = level(p, "######", "#@$.##", "######")
    assert one_step_targets(p, value, one_push[None]).tolist() == [1.0]  # the push reaches the goal


# ---- dead squares ---------------------------------------------------------------------------------
def test_dead_squares_of_hand_made_boards(p):
    s = level(p, "########", "#.   $ #", "#      #", "#  @   #", "########")
    dead = dead_squares(s[None], p.height, p.width)[0].reshape(p.height, p.width)
    assert sorted((int(r), int(c)) for r, c in np.argwhere(dead)) == [
        (1, 6),  # the corner beside the box
        (2, 6),  # the right wall has no target
        (3, 1), (3, 2), (3, 3), (3, 4), (3, 5), (3, 6),  # the bottom wall has none either
    ]  # fmt: skip
    assert not dead[1, 1] and not dead[2, 1]  # a box along the left wall can be pushed up to the target
    assert not has_dead_box(s[None], p.height, p.width)[0]
    corner = level(p, "#####", "#$ .#", "# @ #", "#####")
    assert has_dead_box(corner[None], p.height, p.width)[0]
    on_target = level(p, "#####", "#* @#", "#####")  # a box on a target in a corner is fine
    assert not has_dead_box(on_target[None], p.height, p.width)[0]
    # no state of a solvable training walk is ever called dead
    states = p.scramble(np.random.default_rng(3), 300, (1, 200))
    assert not has_dead_box(states, p.height, p.width).any()


def test_dead_squares_of_a_mixed_batch_are_each_levels_own(p):
    from puzzlezero.puzzles.sokoban import deadlock as sokoban_deadlock

    states = p.scramble(np.random.default_rng(8), 40, (1, 50))
    mixed = np.concatenate([states, states[::-1], states[:3]])
    sokoban_deadlock._CACHE.clear()
    together = dead_squares(mixed, p.height, p.width)  # computed, then cached
    again = dead_squares(mixed, p.height, p.width)  # from the cache
    sokoban_deadlock._CACHE.clear()
    alone = np.stack([dead_squares(s[None], p.height, p.width)[0] for s in mixed])
    np.testing.assert_array_equal(together, alone)
    np.testing.assert_array_equal(again, alone)
    assert not (together & ((mixed & TARGET) != 0)).any() and not (together & (mixed == WALL)).any()


def test_pruning_keeps_every_solution_and_cuts_nodes(p, pruned):
    push_into_corner = level(p, "########", "#.  @$ #", "#      #", "#      #", "########")
    assert p.legal_mask(push_into_corner[None])[0].tolist() == [False, True, True, True]
    assert pruned.legal_mask(push_into_corner[None])[0].tolist() == [False, True, True, False]
    np.testing.assert_array_equal(pruned.apply(push_into_corner[None], np.array([R]))[0], push_into_corner)
    starts = p.scramble(np.random.default_rng(5), 12, (2, 8))
    plain = bwas(p, starts, zeros, weight=1.0, batch_size=50, max_nodes=200_000)
    cut = bwas(pruned, starts, zeros, weight=1.0, batch_size=50, max_nodes=200_000)
    for a, b in zip(plain, cut, strict=True):
        assert a.solved and b.solved and len(a.actions) == len(b.actions)  # breadth-first: optimal
    assert sum(r.nodes_generated for r in cut) < sum(r.nodes_generated for r in plain)


# ---- searches on levels that cannot be solved end cleanly -----------------------------------------
UNSOLVABLE = (
    "#######",
    "#.    #",
    "#     #",
    "#  $@ #",
    "#######",
)  # the box can only slide on the bottom wall


def test_every_search_exhausts_an_unsolvable_level_quickly(p, pruned):
    """Quickly in work done, not in seconds: few states generated and few states evaluated."""
    s = level(p, *UNSOLVABLE)
    evaluated = []

    def counted(states):
        evaluated.append(len(states))
        return zeros(states)

    for search in (
        lambda q: bwas(q, s[None], counted, weight=0.8, batch_size=10, max_nodes=1_000_000),
        lambda q: gbfs(q, s[None], counted, max_steps=10_000),
        lambda q: beam(q, s[None], counted, beam_width=100, max_steps=10_000),
    ):
        evaluated.clear()
        r = search(p)[0]
        assert (r.solved, r.status, r.actions) == (False, "exhausted", ())
        assert r.nodes_generated < 1000  # 5 box cells x 14 agent cells, each expanded once at most
        assert sum(evaluated) <= r.nodes_generated and len(evaluated) < 1000
        rp = search(pruned)[0]  # the box stands on a dead square: no move is left at all
        assert (rp.solved, rp.status) == (False, "exhausted") and rp.nodes_generated <= 5


def test_budgets_end_with_their_status(p, monkeypatch):
    big = level(  # an open room: far too many states to exhaust; one box is stuck in a corner
        p,
        "##########",
        "#$       #",
        "#   $  . #",
        "#  .  $  #",
        "#    @   #",
        "#  .   $ #",
        "#      . #",
        "#        #",
        "#        #",
        "##########",
    )
    r = bwas(p, big[None], zeros, weight=1.0, batch_size=100, max_nodes=20_000)[0]
    assert (r.solved, r.status) == (False, "node limit") and r.nodes_generated <= 20_000
    clock = FakeClock()  # 50 ms a heuristic call: the limit of 1 s is reached in about 20 steps
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", clock)

    def slow(states):
        clock.sleep(0.05)
        return zeros(states)

    r = bwas(p, big[None], slow, weight=1.0, batch_size=100, max_nodes=None, time_limit=1.0)[0]
    assert (r.solved, r.status) == (False, "time limit") and 1.0 <= r.seconds < 1.0 + 0.05 + 1e-9
    assert r.iterations <= 21


def test_the_solver_reports_an_unsolvable_level(p, tmp_path, monkeypatch):
    cfg = NetConfig.from_preset("conv-tiny", inputs.dim(p, "grid"), input_shape=inputs.shape(p, "grid"))
    save_model(tmp_path / "m", build_model(cfg, seed=0), puzzle="sokoban")
    # the searches' clock stands still: the search ends because no state is left, never on its limit
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", FakeClock())
    out = solve("sokoban", "\n".join(UNSOLVABLE), model=str(tmp_path / "m"), time_limit=30)
    assert (out.solved, out.status, tuple(out.solution)) == (False, "exhausted", ())
    assert out.to_json()["status"] == "exhausted"
