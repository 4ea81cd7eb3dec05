"""The native vector environment (puzzlezero.envs.PuzzleVectorEnv): the vector API checked over every
registered puzzle (Gymnasium has no vector checker of its own), transitions equal to Gymnasium's
SyncVectorEnv over the single environments in all three autoreset modes, one-move scrambles,
truncation, seeding and bad input."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import InvalidMoveError, PuzzleError

gym = pytest.importorskip("gymnasium")
envs = importlib.import_module("puzzlezero.envs")
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402

from puzzlezero.envs.pictures import draw  # noqa: E402

NAMES = pz.names()
MODES = list(AutoresetMode)


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    """Gymnasium reports API problems as warnings: here they fail the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def mask_of(n: int, *rows: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[list(rows)] = True
    return mask


@pytest.mark.parametrize("name", NAMES)
def test_the_vector_api_holds_for_every_puzzle(name: str) -> None:
    n = 5
    vec = gym.make_vec(envs.env_id(name), num_envs=n, render_mode="rgb_array")
    single = gym.make(envs.env_id(name))
    puzzle = vec.puzzle
    assert isinstance(vec, gym.vector.VectorEnv) and vec.num_envs == n
    assert isinstance(vec.metadata["autoreset_mode"], AutoresetMode)
    assert vec.single_observation_space == single.observation_space
    assert vec.single_action_space == single.action_space == gym.spaces.Discrete(puzzle.num_actions)
    assert vec.observation_space == batch_space(single.observation_space, n)
    assert vec.action_space == gym.spaces.MultiDiscrete([puzzle.num_actions] * n)

    obs, info = vec.reset(seed=5)
    assert obs.dtype == np.float32 and obs in vec.observation_space
    np.testing.assert_array_equal(obs, puzzle.encode(info["state"]))
    assert info["_state"].all() and info["_scramble_depth"].all()
    lo, hi = 1, puzzle.default_scramble_depth
    assert ((lo <= info["scramble_depth"]) & (info["scramble_depth"] <= hi)).all()
    assert not info["is_goal"].any()
    np.testing.assert_array_equal(info["action_mask"], puzzle.legal_mask(info["state"]).astype(np.int8))

    vec.action_space.seed(0)
    actions = vec.action_space.sample()
    out = vec.step(actions)
    obs2, rewards, terminated, truncated, info2 = out
    assert obs2 in vec.observation_space and obs2 is not obs
    assert rewards.dtype == np.float64 and rewards.shape == (n,)
    assert terminated.dtype == truncated.dtype == np.bool_ and terminated.shape == truncated.shape == (n,)
    np.testing.assert_array_equal(info2["state"], puzzle.apply(info["state"], actions))
    np.testing.assert_array_equal(terminated, puzzle.is_goal(info2["state"]))
    assert "scramble_depth" not in info2  # nothing ended at reset, so nothing starts again
    info2["state"][:] = 0  # the env keeps its own copy
    assert not np.array_equal(vec.step(actions)[4]["state"], info2["state"])

    frames = vec.render()
    assert isinstance(frames, tuple) and len(frames) == n
    assert all(f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3 for f in frames)
    vec.close()
    vec.close()  # closing twice is allowed
    assert vec.closed


@pytest.mark.parametrize("name", ["cube2", "puzzle8", "lightsout7", "sokoban"])
def test_the_same_seed_gives_the_same_episodes(name: str) -> None:
    def run(seed: int) -> list[np.ndarray]:
        vec = envs.PuzzleVectorEnv(name, num_envs=4, scramble_depth=(1, 3), max_episode_steps=2)
        out = [vec.reset(seed=seed)[0]]
        for a in range(4):  # every episode ends within two steps, so new ones are drawn
            out.append(vec.step(np.full(4, a % vec.puzzle.num_actions))[0])
        out.append(vec.reset()[0])  # a reset without a seed continues the generator
        return out

    a, b, c = run(3), run(3), run(4)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    assert not np.array_equal(a[0], a[-1])


def sync_of(name: str, n: int, mode: AutoresetMode, **kwargs: object) -> SyncVectorEnv:
    """Gymnasium's own vector env over ``n`` single environments (each with its TimeLimit)."""
    return gym.make_vec(
        envs.env_id(name),
        num_envs=n,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        **kwargs,
    )


def copy_starts(sync: SyncVectorEnv, states: np.ndarray, rows: np.ndarray) -> dict[int, np.ndarray]:
    """Start ``sync``'s episodes of ``rows`` from the native env's ``states`` (its draws are its
    own); returns each row's first observation."""
    first = {}
    for i in rows:
        obs, _ = sync.reset(options={"state": states[i], "reset_mask": mask_of(sync.num_envs, int(i))})
        first[int(i)] = obs[i].copy()
    return first


def assert_same_step_info(native: dict, ref: dict, rows: np.ndarray) -> None:
    for key in ("state", "is_goal", "action_mask"):
        np.testing.assert_array_equal(native[key][rows], ref[key][rows], err_msg=key)


@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
@pytest.mark.parametrize("name", NAMES)
def test_transitions_equal_gymnasiums_sync_vector_env(name: str, mode: AutoresetMode) -> None:
    """Random moves from one-move and two-move scrambles with a step limit of 3: episodes end by
    solving and by truncation, and every transition is the one Gymnasium's SyncVectorEnv makes with
    the single environments (starts drawn by the native env are copied over, as the two draw
    their scrambles differently)."""
    n, limit = 6, 3
    native = envs.PuzzleVectorEnv(
        name, num_envs=n, scramble_depth=(1, 2), max_episode_steps=limit, autoreset_mode=mode
    )
    sync = sync_of(name, n, mode, scramble_depth=(1, 2), max_episode_steps=limit)
    puzzle = native.puzzle
    rng = np.random.default_rng(0)
    obs, info = native.reset(seed=1)
    sync.reset(seed=1)
    first = copy_starts(sync, info["state"], np.arange(n))
    np.testing.assert_array_equal(obs, np.stack([first[i] for i in range(n)]))
    ended_seen = {"terminated": 0, "truncated": 0, "restarted": 0}
    for _ in range(25):
        # solve where possible half of the time, so that episodes end by solving as well
        children = puzzle.expand(info["state"])
        solving = np.argmax(puzzle.is_goal(children.reshape(-1, *puzzle.state_shape)).reshape(n, -1), axis=1)
        actions = np.where(rng.random(n) < 0.5, solving, rng.integers(0, puzzle.num_actions, n))
        obs, rewards, terminated, truncated, info = native.step(actions)
        r_obs, r_rewards, r_terminated, r_truncated, r_info = sync.step(actions)
        np.testing.assert_array_equal(rewards, r_rewards)
        np.testing.assert_array_equal(terminated, r_terminated)
        np.testing.assert_array_equal(truncated, r_truncated)
        started = info.get("_scramble_depth", np.zeros(n, dtype=bool))
        np.testing.assert_array_equal(started, r_info.get("_scramble_depth", np.zeros(n, dtype=bool)))
        kept = np.flatnonzero(~started)
        np.testing.assert_array_equal(obs[kept], r_obs[kept])
        assert_same_step_info(info, r_info, kept)
        if mode == AutoresetMode.SAME_STEP:
            ended = terminated | truncated
            np.testing.assert_array_equal(started, ended)
            if ended.any():
                np.testing.assert_array_equal(info["_final_obs"], r_info["_final_obs"])
                for i in np.flatnonzero(ended):
                    np.testing.assert_array_equal(info["final_obs"][i], r_info["final_obs"][i])
                assert_same_step_info(info["final_info"], r_info["final_info"], np.flatnonzero(ended))
                np.testing.assert_array_equal(info["final_info"]["_state"], ended)
        if mode == AutoresetMode.NEXT_STEP:
            np.testing.assert_array_equal(rewards[started], 0.0)
        if mode == AutoresetMode.DISABLED and (terminated | truncated).any():
            ended = terminated | truncated
            with pytest.raises(gym.error.ResetNeeded, match="reset_mask"):
                native.step(actions)
            obs, info = native.reset(options={"reset_mask": ended.copy()})
            assert not info["_state"][~ended].any() and info["_scramble_depth"].tolist() == ended.tolist()
            started = ended
        first = copy_starts(sync, info["state"], np.flatnonzero(started))
        for i, o in first.items():
            np.testing.assert_array_equal(obs[i], o)
        ended_seen["terminated"] += int(terminated.sum())
        ended_seen["truncated"] += int(truncated.sum())
        ended_seen["restarted"] += int(started.sum())
    assert min(ended_seen.values()) > 0, ended_seen  # both ends and the restarts were exercised


@pytest.mark.parametrize("name", NAMES)
def test_one_move_scrambles_reward_and_terminate(name: str) -> None:
    n = 4
    vec = envs.PuzzleVectorEnv(name, num_envs=n, scramble_depth=1)
    puzzle = vec.puzzle
    _, info = vec.reset(seed=11)
    assert info["scramble_depth"].tolist() == [1] * n and not info["is_goal"].any()
    children = puzzle.expand(info["state"])
    solves = puzzle.is_goal(children.reshape(-1, *puzzle.state_shape)).reshape(n, -1)
    assert solves.any(axis=1).all(), "a one-move scramble is one move from solved"
    costs = np.asarray(puzzle.action_costs)
    wrong = np.argmin(solves, axis=1)  # a move that does not solve, where the row has one
    starts = info["state"].copy()
    if not solves[np.arange(n), wrong].any():
        _, rewards, terminated, truncated, info = vec.step(wrong)
        assert rewards.tolist() == (-costs[wrong]).tolist()
        assert not terminated.any() and not truncated.any()
        vec.reset(options={"state": starts})
    right = np.argmax(solves, axis=1)
    _, rewards, terminated, truncated, info = vec.step(right)
    assert rewards.tolist() == (-costs[right]).tolist()
    assert terminated.all() and not truncated.any() and info["is_goal"].all()
    np.testing.assert_array_equal(info["state"], children[np.arange(n), right])
    _, rewards, terminated, _, info = vec.step(right)  # NEXT_STEP: all start again
    assert rewards.tolist() == [0.0] * n and not terminated.any() and info["_scramble_depth"].all()
    assert not info["is_goal"].any()


def test_truncated_at_the_step_limit_then_started_again() -> None:
    vec = envs.PuzzleVectorEnv("cube3", num_envs=2, max_episode_steps=3)
    vec.reset(options={"state": ["R U R' U' F2 D", "R"]})
    cube = vec.puzzle
    u, r_inv = cube.parse_moves("U R'")
    ends = [vec.step(np.array([u, u]))[2:4] for _ in range(3)]  # U U U never solves either
    assert [(t.tolist(), c.tolist()) for t, c in ends] == [
        ([False, False], [False, False]),
        ([False, False], [False, False]),
        ([False, False], [True, True]),
    ]
    vec.reset(options={"state": ["R"], "reset_mask": mask_of(2, 1)})
    _, _, terminated, truncated, info = vec.step(np.array([u, r_inv]))  # env 0 starts again
    assert terminated.tolist() == [False, True] and truncated.tolist() == [False, False]
    assert info["_scramble_depth"].tolist() == [True, False]


def test_given_starts_and_their_errors() -> None:
    vec = envs.PuzzleVectorEnv("puzzle8", num_envs=3, render_mode="ansi")
    batch = np.stack([vec.puzzle.parse("1 2 3 4 5 6 7 0 8")] * 3)
    _, info = vec.reset(options={"state": batch})  # one array [N, *state_shape]
    assert info["scramble_depth"].tolist() == [-1] * 3 and info["_scramble_depth"].all()
    assert vec.render() == ("1 2 3\n4 5 6\n7 . 8",) * 3
    _, info = vec.reset(options={"state": ["0 1 2 3 4 5 6 7 8"], "reset_mask": mask_of(3, 2)})
    assert info["state"][2].tolist() == list(range(9)) and info["_state"].tolist() == [False, False, True]
    with pytest.raises(PuzzleError, match="one start state per environment reset: 3, got 2"):
        vec.reset(options={"state": batch[:2]})
    with pytest.raises(pz.errors.InvalidStateError):
        vec.reset(options={"state": ["1 2 3 4 5 6 7 8 8"] * 3})
    with pytest.raises(PuzzleError, match="give 3 start state"):
        vec.reset(options={"state": 5})


def test_bad_input_gets_a_specific_error() -> None:
    for kwargs, message in [
        ({"num_envs": 0}, "num_envs must be a whole number >= 1, got 0"),
        ({"num_envs": 2.0}, "num_envs must be"),
        ({"max_episode_steps": 0}, "max_episode_steps must be a whole number >= 1, got 0"),
        ({"scramble_depth": (3, 1)}, "scramble_depth must be"),
        ({"render_mode": "human"}, "render_mode must be None, 'ansi' or 'rgb_array'"),
        ({"autoreset_mode": "Later"}, "autoreset_mode must be an AutoresetMode or one of 'NextStep'"),
    ]:
        with pytest.raises(PuzzleError, match=message):
            envs.PuzzleVectorEnv("cube2", **kwargs)
    with pytest.raises(pz.errors.UnknownNameError, match="unknown puzzle 'cube4'"):
        envs.PuzzleVectorEnv("cube4")
    vec = envs.PuzzleVectorEnv("cube2", num_envs=3, autoreset_mode="SameStep")
    assert vec.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert envs.PuzzleVectorEnv.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP  # the class's unchanged
    with pytest.raises(gym.error.ResetNeeded):
        vec.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(gym.error.ResetNeeded, match="without reset_mask"):
        vec.reset(options={"reset_mask": mask_of(3, 0)})
    vec.reset(seed=0)
    for bad in ([0, 1], np.zeros(3), np.array([True, False, True]), [[0, 1, 2]], 3):
        with pytest.raises(InvalidMoveError, match="actions must be 3 whole numbers"):
            vec.step(bad)
    with pytest.raises(
        InvalidMoveError, match=r"action 12 of environment 1 is not a move of cube2: use 0\.\.11"
    ):
        vec.step(np.array([0, 12, -1]))
    for mask, message in [
        ([True, False, True], "reset_mask must be a NumPy bool array of shape"),
        (np.ones(2, dtype=bool), r"shape \(3,\)"),
        (np.zeros(3, dtype=bool), "at least one environment"),
    ]:
        with pytest.raises(PuzzleError, match=message):
            vec.reset(options={"reset_mask": mask})
    with pytest.raises(PuzzleError, match=r"unknown reset option\(s\) \['depth'\]"):
        vec.reset(options={"depth": 3})
    for seed in ([1, 2, 3], -1, 2.0):
        with pytest.raises(PuzzleError, match="seed must be a whole number >= 0 or None"):
            vec.reset(seed=seed)
    np.testing.assert_array_equal(
        vec.reset(seed=np.int64(4))[0], vec.reset(seed=4)[0]
    )  # a NumPy int seeds too


def test_render_gives_one_picture_per_env() -> None:
    vec = envs.PuzzleVectorEnv("sokoban", num_envs=3, render_mode="rgb_array")
    assert envs.PuzzleVectorEnv("sokoban").render() is None
    with pytest.raises(gym.error.ResetNeeded):
        vec.render()
    _, info = vec.reset(seed=2)
    frames = vec.render()
    for frame, state in zip(frames, info["state"], strict=True):
        np.testing.assert_array_equal(frame, draw(vec.puzzle, state[None])[0])


def test_gymnasiums_vector_wrappers_read_the_autoreset_mode() -> None:
    vec = gym.wrappers.vector.RecordEpisodeStatistics(
        envs.PuzzleVectorEnv("puzzle8", num_envs=2, scramble_depth=1, max_episode_steps=1)
    )
    vec.reset(seed=0)
    _, _, terminated, truncated, info = vec.step(np.array([0, 0]))
    assert (terminated | truncated).all()  # the limit of one step ends both episodes
    assert info["episode"]["l"].tolist() == [1, 1] and info["episode"]["r"].tolist() == [-1.0, -1.0]
