"""The Gymnasium environments (puzzlezero.envs): Gymnasium's check_env over every registered puzzle,
scripted episodes with known answers, seeding, costs, truncation, registration and the
missing-extra error. The vector environment and the pictures have test files of their own."""

from __future__ import annotations

import doctest
import importlib
import sys
import warnings

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero import registry
from puzzlezero.errors import InvalidMoveError, PuzzleError, UnknownNameError
from puzzlezero.puzzles.cube import Cube2
from puzzlezero.puzzles.lightsout import LightsOut
from puzzlezero.puzzles.npuzzle import NPuzzle

gym = pytest.importorskip("gymnasium")
envs = importlib.import_module("puzzlezero.envs")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from puzzlezero.envs.pictures import draw  # noqa: E402
from puzzlezero.puzzles import inputs  # noqa: E402

NAMES = pz.names()


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    """Gymnasium reports API problems as warnings: here they fail the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array"])
@pytest.mark.parametrize("name", NAMES)
def test_check_env_passes_for_every_puzzle(name: str, render_mode: str) -> None:
    env = gym.make(envs.env_id(name), render_mode=render_mode)
    check_env(env.unwrapped)  # renders in every mode of the metadata as well
    puzzle = pz.make(name)
    assert env.action_space == gym.spaces.Discrete(puzzle.num_actions)
    assert env.observation_space.shape == (inputs.dim(puzzle),)
    assert env.observation_space.dtype == np.float32
    assert env.spec.max_episode_steps == 2 * puzzle.default_scramble_depth
    obs, info = env.reset(seed=3)
    np.testing.assert_array_equal(obs, puzzle.encode(info["state"][None])[0])
    if render_mode == "ansi":
        assert env.render() == puzzle.render_text(info["state"])
    else:
        np.testing.assert_array_equal(env.render(), draw(puzzle, info["state"][None])[0])
    np.testing.assert_array_equal(info["action_mask"], puzzle.legal_mask(info["state"][None])[0])
    lo, hi = 1, puzzle.default_scramble_depth  # the default: DeepCubeA's training distribution
    assert lo <= info["scramble_depth"] <= hi and not info["is_goal"]


def move_cost(puzzle: pz.Puzzle, action: int) -> float:
    """What a move costs by the puzzle's own numbers: its per-action costs, else ``move_cost``."""
    costs = getattr(puzzle, "action_costs", None)
    return float(puzzle.move_cost if costs is None else np.asarray(costs)[action])


@pytest.mark.parametrize("name", NAMES)
def test_undoing_a_one_move_scramble_solves(name: str) -> None:
    env = gym.make(envs.env_id(name))
    puzzle = env.unwrapped.puzzle
    obs, info = env.reset(seed=11, options={"scramble_depth": 1})
    start = info["state"]
    assert info["scramble_depth"] == 1 and not info["is_goal"] and not puzzle.is_goal(start[None])[0]
    children = puzzle.expand(start[None])[0]
    solving = np.flatnonzero(puzzle.is_goal(children))
    assert solving.size >= 1, "a one-move scramble is one move from solved"
    others = np.setdiff1d(np.arange(puzzle.num_actions), solving)
    if others.size:  # a move that does not solve: the episode goes on
        env.reset(seed=11, options={"scramble_depth": 1})
        obs, reward, terminated, truncated, info = env.step(int(others[0]))
        assert (reward, terminated, truncated) == (-move_cost(puzzle, others[0]), False, False)
        np.testing.assert_array_equal(info["state"], children[others[0]])
        env.reset(seed=11, options={"scramble_depth": 1})
    obs, reward, terminated, truncated, info = env.step(int(solving[0]))
    assert (reward, terminated, truncated) == (-move_cost(puzzle, solving[0]), True, False)
    assert info["is_goal"]
    np.testing.assert_array_equal(obs, puzzle.encode(children[solving[0]][None])[0])


def test_make_time_scramble_depth_and_pairs() -> None:
    env = gym.make(envs.env_id("cube3"), scramble_depth=1)
    cube = pz.make("cube3")
    for seed in range(5):  # every one-move start is one quarter turn away from the goal
        _, info = env.reset(seed=seed)
        assert info["scramble_depth"] == 1
        assert cube.is_goal(cube.expand(info["state"][None])[0]).sum() == 1
    env = gym.make(envs.env_id("cube3"), scramble_depth=2)
    for seed in range(30):  # about 1 in 12 two-move scrambles undoes itself: those are drawn again
        _, info = env.reset(seed=seed)
        assert not info["is_goal"] and info["scramble_depth"] == 2
    env = gym.make(envs.env_id("puzzle15"), scramble_depth=(3, 4))
    depths = {env.reset(seed=s)[1]["scramble_depth"] for s in range(20)}
    assert depths == {3, 4}
    _, info = env.reset(options={"scramble_depth": [7, 7]})  # a JSON-style list works as well
    assert info["scramble_depth"] == 7


def test_truncated_at_the_step_limit() -> None:
    env = gym.make(envs.env_id("cube3"), max_episode_steps=3)
    _, info = env.reset(options={"state": "R U R' U' F2 D"})
    assert info["scramble_depth"] is None
    u = pz.make("cube3").action_names.index("U")
    ends = [env.step(u)[2:4] for _ in range(3)]  # U U U from this state never solves it
    assert ends == [(False, False), (False, False), (False, True)]


def test_same_seed_same_episode() -> None:
    def episode(seed: int) -> list[np.ndarray]:
        env = gym.make(envs.env_id("sokoban"), scramble_depth=(5, 40))
        obs = [env.reset(seed=seed)[0], env.step(3)[0]]
        obs.append(env.reset()[0])  # the next episode continues the seeded generator
        return obs

    a, b, c = episode(7), episode(7), episode(8)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    assert not np.array_equal(a[0], a[2])


def test_reward_is_minus_the_move_cost() -> None:
    env = envs.PuzzleEnv("cube2")
    env.reset(seed=0)
    assert [env.step(a)[1] for a in range(12)] == [-1.0] * 12
    dear = Cube2()  # a fresh instance: nothing derived from move_cost is cached yet
    dear.move_cost = 2.5
    env = envs.PuzzleEnv(dear)
    env.reset(seed=0)
    assert env.step(4)[1] == -2.5
    per_action = Cube2()
    per_action.action_costs = np.arange(1.0, 13.0)  # read when a puzzle has per-action costs
    env = envs.PuzzleEnv(per_action)
    env.reset(seed=0)
    assert [env.step(a)[1] for a in range(12)] == [-(a + 1.0) for a in range(12)]
    per_action.action_costs = np.ones(5)
    with pytest.raises(PuzzleError, match=r"action_costs has shape \(5,\), expected \(12,\)"):
        envs.PuzzleEnv(per_action)


def test_blocked_moves_are_masked_and_cost_a_move() -> None:
    env = gym.make(envs.env_id("sokoban"), render_mode="ansi")
    _, info = env.reset(options={"state": "#####\n#@$.#\n#####"})
    assert info["action_mask"].tolist() == [0, 0, 0, 1]  # U D L into walls; R pushes the box
    assert info["action_mask"].dtype == np.int8
    obs, reward, terminated, _, info = env.step(0)  # U: into the wall, nothing moves
    assert (reward, terminated) == (-1.0, False)
    assert env.render().splitlines()[:3] == ["##########", "#@$.######", "##########"]
    obs, reward, terminated, _, info = env.step(3)
    assert (reward, terminated) == (-1.0, True)
    assert env.render().splitlines()[1] == "# @*######"


def test_render_is_the_puzzles_text() -> None:
    env = envs.PuzzleEnv("puzzle8", render_mode="ansi")
    env.reset(options={"state": "1 2 3 4 5 6 7 0 8"})
    assert env.render() == "1 2 3\n4 5 6\n7 . 8"
    assert envs.PuzzleEnv("puzzle8").render() is None


def test_bad_input_gets_a_specific_error() -> None:
    for bad in (0, -3, True, 2.5, "5", (4, 2), (0, 3), (1, 2, 3)):
        with pytest.raises(PuzzleError, match="scramble_depth must be"):
            envs.PuzzleEnv("cube2", scramble_depth=bad)
    env = envs.PuzzleEnv("cube2")
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    assert env.step(np.array(3))[1] == -1.0  # a 0-d array is a move too
    for bad_action in (12, -1, 1.5, True, np.array([3])):
        with pytest.raises(InvalidMoveError, match=r"use 0\.\.11"):
            env.step(bad_action)
    with pytest.raises(PuzzleError, match=r"unknown reset option\(s\) \['depth'\]"):
        env.reset(options={"depth": 3})
    with pytest.raises(PuzzleError, match="scramble_depth must be"):
        env.reset(options={"scramble_depth": 0})
    with pytest.raises(UnknownNameError, match="unknown encoding 'pixels'"):
        envs.PuzzleEnv("cube2", encoding="pixels")
    with pytest.raises(UnknownNameError, match="unknown puzzle 'cube4'"):
        envs.PuzzleEnv("cube4")
    with pytest.raises(PuzzleError, match="render_mode must be None, 'ansi' or 'rgb_array', got 'human'"):
        envs.PuzzleEnv("cube2", render_mode="human")
    with pytest.raises(gym.error.ResetNeeded):
        envs.PuzzleEnv("cube2", render_mode="rgb_array").render()
    with pytest.raises(PuzzleError, match=r"a puzzle8 state has shape \(9,\), got \(8,\)"):
        envs.PuzzleEnv("puzzle8").reset(options={"state": np.arange(8)})


def test_a_depth_that_cannot_leave_the_goal_is_refused() -> None:
    one_light = LightsOut(size=1)  # pressing the only light twice always turns it off again
    assert envs.PuzzleEnv(one_light, scramble_depth=1).reset(seed=0)[1]["state"].tolist() == [1]
    with pytest.raises(PuzzleError, match="5461 scrambles of depth 2 all left .* solved"):
        envs.PuzzleEnv(one_light, scramble_depth=2).reset(seed=0)


def test_a_puzzle_registered_later_gets_an_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # undone after the test
    if hasattr(registry, "_INSTANCES"):  # the registry's cache of built puzzles
        monkeypatch.setattr(registry, "_INSTANCES", dict(registry._INSTANCES))
    pz.register("puzzle3", "puzzlezero.puzzles.npuzzle:NPuzzle", "3-puzzle (2x2)", size=2)
    eid = envs.env_id("puzzle3")
    assert eid not in gym.registry
    try:
        assert eid in envs.register_envs()
        env = gym.make(eid)
        assert env.action_space.n == 4 and env.spec.max_episode_steps == 40
        vec = gym.make_vec(eid, num_envs=2)
        assert isinstance(vec, envs.PuzzleVectorEnv) and vec.max_episode_steps == 40
    finally:
        gym.registry.pop(eid, None)


def test_the_module_name_in_the_id_registers_without_an_import() -> None:
    env = gym.make("puzzlezero.envs:puzzlezero/lightsout7-v0", scramble_depth=2)
    assert env.observation_space.shape == (98,)
    vec = gym.make_vec("puzzlezero.envs:puzzlezero/lightsout7-v0", num_envs=3, scramble_depth=2)
    assert isinstance(vec, envs.PuzzleVectorEnv) and vec.observation_space.shape == (3, 98)


@pytest.mark.parametrize("name", NAMES)
def test_every_id_has_both_entry_points(name: str) -> None:
    spec = gym.spec(envs.env_id(name))
    assert spec.entry_point == "puzzlezero.envs:PuzzleEnv"
    assert spec.vector_entry_point == "puzzlezero.envs:PuzzleVectorEnv"
    assert spec.kwargs == {"puzzle": name}
    assert spec.max_episode_steps == envs.default_step_limit(pz.make(name))


def test_make_vec_gives_the_native_vector_env_unless_told_otherwise() -> None:
    eid = envs.env_id("puzzle15")
    for mode in (None, "vector_entry_point"):
        vec = gym.make_vec(eid, num_envs=4, vectorization_mode=mode, scramble_depth=3, max_episode_steps=7)
        assert type(vec) is envs.PuzzleVectorEnv
        assert (vec.num_envs, vec.scramble_depth, vec.max_episode_steps) == (4, 3, 7)
        assert vec.spec is not None and vec.spec.id == eid
    vec = gym.make_vec(eid, num_envs=4)
    assert vec.max_episode_steps == 2 * pz.make("puzzle15").default_scramble_depth  # the registered limit
    sync = gym.make_vec(eid, num_envs=2, vectorization_mode="sync", scramble_depth=3)
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    assert sync.single_observation_space == vec.single_observation_space
    assert sync.single_action_space == vec.single_action_space


def test_a_puzzle_instance_makes_an_env_too() -> None:
    small = NPuzzle(size=2)  # not registered: the env takes the instance itself
    env = envs.PuzzleEnv(small, scramble_depth=2, render_mode="rgb_array")
    _, info = env.reset(seed=1)
    assert env.action_space.n == 4 and not info["is_goal"]
    assert env.render().shape == draw(small, info["state"][None]).shape[1:]
    with pytest.raises(PuzzleError, match="puzzle must be a registered name or a Puzzle, got int"):
        envs.PuzzleEnv(7)


@pytest.mark.parametrize(
    ("module", "examples"),
    [
        ("puzzlezero.envs", 10),
        ("puzzlezero.envs.single", 8),
        ("puzzlezero.envs.vector", 8),
        ("puzzlezero.puzzles.pictures", 5),  # the environments' pictures (envs.pictures re-exports it)
    ],
)
def test_docstring_examples_run(module: str, examples: int) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted >= examples


def test_without_gymnasium_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # what Python does for a missing package
    monkeypatch.delitem(sys.modules, "puzzlezero.envs")  # restored after the test
    with pytest.raises(ImportError, match=r'pip install "puzzlezero\[gym\]"'):
        importlib.import_module("puzzlezero.envs")
