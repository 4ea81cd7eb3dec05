"""The goal's ball: its depths are exact distances (the 8-puzzle's whole space, layer by layer),
it grows whole layers within its bound and stops at its deadline, the way home is shortest, and a
beam that meets it is solved by replay, never longer than the same beam without it, and ends
early."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.search.beam import beam, qbeam
from puzzlezero.search.goal_ball import cached_goal_ball, goal_ball, memory_estimate, walk_home
from puzzlezero.search.qstar import q_from_value
from tests.clock import FakeClock

#: the 8-puzzle's states by distance from a goal with the blank in a corner (Reinefeld 1993)
EIGHT_PUZZLE_LAYERS = [1, 2, 4, 8, 16, 20, 39, 62, 116, 152, 286, 396, 748, 1024, 1893, 2512, 4485, 5638,
                       9529, 10878, 16993, 17110, 23952, 20224, 24047, 15578, 14560, 6274, 3910, 760, 221, 2]  # fmt: skip


def hashed(seed: int) -> object:
    """A heuristic that knows nothing: a state's hash, folded to a few values."""

    def h(s: np.ndarray) -> np.ndarray:
        return np.asarray(make("puzzle8").hash64(s) % np.uint64(seed), dtype=np.float32)

    return h


def test_the_whole_eight_puzzle_layer_by_layer() -> None:
    p = make("puzzle8")
    assert p.goal()[-1] == 0 or p.goal()[0] == 0  # the blank in a corner
    ball = goal_ball(p, 181_440)
    assert ball.radius == 31 and len(ball) == 181_440
    assert np.bincount(ball.depths).tolist() == EIGHT_PUZZLE_LAYERS
    assert (np.diff(ball.hashes.astype(np.float64)) >= 0).all()


def test_whole_layers_within_the_bound() -> None:
    p = make("puzzle8")
    room = sum(EIGHT_PUZZLE_LAYERS[:11]) + 100  # layer 11 would not fit whole
    ball = goal_ball(p, room)
    assert ball.radius == 10 and len(ball) == sum(EIGHT_PUZZLE_LAYERS[:11])
    assert goal_ball(p, 1).radius == 0 and len(goal_ball(p, 1)) == 1
    with pytest.raises(PuzzleError, match="at least one state"):
        goal_ball(p, 0)
    assert memory_estimate(p, 1_000_000) > 1_000_000 * 9


def test_the_deadline_stops_the_growth(fake: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    p = make("puzzle8")
    ball = goal_ball(p, 181_440, deadline=fake.now)  # already come: the goal alone
    assert ball.radius == 0 and len(ball) == 1
    expand = p.expand

    def slow(states: np.ndarray) -> np.ndarray:  # a second of the fake clock a batch
        fake.sleep(1.0)
        return expand(states)

    monkeypatch.setattr(p, "expand", slow)
    ball = goal_ball(p, 181_440, deadline=fake.now + 3.5)  # layers 1-3 by 3 s, layer 4 begun before 3.5 s
    assert ball.radius == 4 and len(ball) == sum(EIGHT_PUZZLE_LAYERS[:5])


def test_the_way_home_is_shortest_and_replays() -> None:
    p = make("puzzle8")
    ball = goal_ball(p, 10_000)
    rng = np.random.default_rng(0)
    for s in p.scramble(rng, 40, depth=(1, 30)):
        d = int(ball.depth_of(p.hash64(s[None]))[0])
        home = walk_home(p, ball, s)
        if d < 0:
            assert home is None
            continue
        assert home is not None and len(home) == d
        assert p.is_goal(p.apply_moves(s, home)[None])[0]
    # a ball whose depths lie (as a hash collision would make them) gives no way home
    liar = dataclasses.replace(ball, depths=np.where(ball.depths == 3, 2, ball.depths).astype(np.uint8))
    three = next(s for s in p.scramble(rng, 200, depth=3) if ball.depth_of(p.hash64(s[None]))[0] == 3)
    assert walk_home(p, liar, three) is None


def test_a_start_inside_the_ball_is_solved_at_once_and_optimally() -> None:
    p = make("puzzle8")
    ball = goal_ball(p, 181_440)
    starts = p.scramble(np.random.default_rng(1), 5, depth=(20, 60))
    for s, r in zip(starts, beam(p, starts, hashed(3), beam_width=10, ball=ball), strict=True):
        assert r.solved and r.iterations == 0
        assert r.length == ball.depth_of(p.hash64(s[None]))[0]
        assert p.is_goal(p.apply_moves(s, r.actions)[None])[0]


@pytest.mark.parametrize("width", [5, 50])
def test_a_beam_that_meets_the_ball_is_never_longer_and_ends_earlier(width: int) -> None:
    p = make("puzzle8")
    ball = goal_ball(p, 2_000)  # 9 moves around the goal
    starts = p.scramble(np.random.default_rng(2), 30, depth=(40, 80))
    plain = beam(p, starts, hashed(5), beam_width=width, max_steps=400)
    met = beam(p, starts, hashed(5), beam_width=width, max_steps=400, ball=ball)
    shorter = 0
    for s, a, b in zip(starts, plain, met, strict=True):
        assert b.solved and p.is_goal(p.apply_moves(s, b.actions)[None])[0]
        if a.solved:
            assert b.length <= a.length and b.iterations <= a.iterations - min(a.length, ball.radius)
            shorter += b.length < a.length
    assert shorter > 0  # the heuristic is blind near the goal; the ball is not


def test_the_q_beam_and_the_bound() -> None:
    p = make("puzzle8")
    ball = goal_ball(p, 2_000)
    starts = p.scramble(np.random.default_rng(3), 10, depth=(40, 80))
    q = q_from_value(p, hashed(7))
    free = qbeam(p, starts, q, beam_width=20, max_steps=400, ball=ball)
    assert all(r.solved for r in free)
    # bounded below every answer found: none may come down the ball
    bound = np.array([r.length - 1 for r in free], dtype=np.float32)
    for r in qbeam(p, starts, q, beam_width=20, max_steps=400, ball=ball, max_cost=bound):
        assert not r.solved or r.length <= bound.max()


def test_refused_where_the_depths_are_not_distances() -> None:
    with pytest.raises(PuzzleError, match="inverse and cost the same"):
        goal_ball(make("sokoban"), 100)
    p8 = make("puzzle8")
    with pytest.raises(PuzzleError, match="cannot guide a search of puzzle15"):
        p15 = make("puzzle15")
        beam(p15, p15.goal(), hashed(2), ball=goal_ball(p8, 10))


def test_the_cache_keeps_the_ball() -> None:
    p = make("puzzle8")
    assert cached_goal_ball(p, 500) is cached_goal_ball(p, 500)
    assert cached_goal_ball(p, 600) is not cached_goal_ball(p, 500)


def test_the_solver_takes_the_option_and_counts_its_memory() -> None:
    from puzzlezero import solver
    from puzzlezero.search.beam import memory_estimate as beam_bytes
    from puzzlezero.search.goal_ball import memory_estimate as ball_bytes

    p = make("puzzle15")
    plain = solver.resolve_options(p, search="beam", heuristic="manhattan", beam_width=(5, 20))
    met = solver.resolve_options(
        p, search="beam", heuristic="manhattan", beam_width=(5, 20), options={"goal_ball": 20_000}
    )
    assert met.option("goal_ball") == 20_000 and plain.option("goal_ball") == 0
    assert beam_bytes(p, met) - beam_bytes(p, plain) == ball_bytes(p, 20_000)
    for s in p.scramble(np.random.default_rng(4), 4, depth=(60, 100)):
        a = solver.solve(p, s, search="beam", heuristic="manhattan", beam_width=(5, 20))
        b = solver.solve(
            p, s, search="beam", heuristic="manhattan", beam_width=(5, 20), options={"goal_ball": 20_000}
        )
        assert b.solved and b.length <= a.length
        assert p.is_goal(p.apply_moves(s, b.actions)[None])[0]
    with pytest.raises(PuzzleError, match="--goal-ball must be >= 0"):
        solver.resolve_options(p, search="beam", options={"goal_ball": -1})
    with pytest.raises(PuzzleError, match="inverse and cost the same"):
        solver.solve(
            "sokoban", make("sokoban").goal(), search="beam", heuristic="misplaced", options={"goal_ball": 10}
        )
