"""Many episodes of one puzzle stepped at once: :class:`PuzzleVectorEnv`, a native Gymnasium vector
environment that moves all its states with one call of the puzzle's batched functions
(``apply``, ``is_goal``, ``encode``, ``legal_mask``) and draws its scrambles from one seeded
generator, instead of one Python environment per copy."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from puzzlezero.envs import episode
from puzzlezero.envs.pictures import draw
from puzzlezero.envs.single import observation_space
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle

__all__ = ["PuzzleVectorEnv"]

_RESET_OPTIONS = ("scramble_depth", "state", "reset_mask")


class PuzzleVectorEnv(VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """``num_envs`` episodes of one puzzle, each the episode of :class:`~puzzlezero.envs.PuzzleEnv`
    under ``TimeLimit(max_episode_steps)``, all stepped at once.

    Args:
        puzzle: a registered name (``"cube3"``) or a :class:`~puzzlezero.Puzzle` instance.
        num_envs: how many episodes run side by side (``N``).
        scramble_depth: scramble moves of each start, an int or a pair ``(lo, hi)``; default
            ``(1, puzzle.default_scramble_depth)``.
        encoding: the observation encoder, a key of ``puzzle.encoders`` (default ``"onehot"``).
        render_mode: ``None``, ``"ansi"`` or ``"rgb_array"``: :meth:`render` returns a tuple of
            ``N`` texts or ``uint8[H, W, 3]`` pictures.
        max_episode_steps: an episode is truncated after this many steps; default
            :func:`~puzzlezero.envs.default_step_limit` (``2 * K``), the registered limit.
        autoreset_mode: Gymnasium's :class:`~gymnasium.vector.AutoresetMode` (or its value):
            ``NEXT_STEP`` (default: the step after an episode ends starts the next one, ignoring
            that environment's action, with reward 0), ``SAME_STEP`` (the step that ends an episode
            returns the next one's first observation; the last ones are in ``info["final_obs"]``
            and ``info["final_info"]``) or ``DISABLED`` (call ``reset(options={"reset_mask": m})``).

    Spaces: ``single_observation_space`` is the single environment's ``Box``, ``observation_space``
    its batch (``float32[N, D]``); ``single_action_space`` is ``Discrete(A)``, ``action_space``
    ``MultiDiscrete([A] * N)``. :meth:`step` returns ``rewards float64[N]`` (minus each move's
    cost), ``terminations bool[N]`` (solved), ``truncations bool[N]`` (step limit reached).

    Infos follow Gymnasium's vector convention, a dict of arrays with a boolean mask ``_key`` for
    the environments that report ``key``: ``state`` (``puzzle.dtype[N, *state_shape]``),
    ``is_goal`` (``bool[N]``) and ``action_mask`` (``int8[N, A]``) every time, and
    ``scramble_depth`` (``int64[N]``, ``-1`` for a given start) for the environments that started
    an episode in this call.

    Example:
        >>> import numpy as np
        >>> env = PuzzleVectorEnv("puzzle8", num_envs=3)
        >>> obs, info = env.reset(options={"state": ["1 2 3 4 5 6 7 0 8"] * 3})
        >>> obs.shape, env.action_space
        ((3, 81), MultiDiscrete([4 4 4]))
        >>> L, R = env.puzzle.parse_moves("L R")  # tile 8 slides left (solved) or the 7 right
        >>> obs, rewards, terminated, truncated, info = env.step(np.array([L, R, R]))
        >>> rewards.tolist(), terminated.tolist(), info["is_goal"].tolist()
        ([-1.0, -1.0, -1.0], [True, False, False], [True, False, False])
        >>> obs, rewards, terminated, truncated, info = env.step(np.array([L, L, L]))  # 0 starts again
        >>> rewards.tolist(), info["_scramble_depth"].tolist(), bool(info["is_goal"][0])
        ([0.0, -1.0, -1.0], [True, False, False], False)
    """

    metadata = {
        "render_modes": list(episode.RENDER_MODES),
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        puzzle: str | Puzzle,
        num_envs: int = 1,
        scramble_depth: int | tuple[int, int] | None = None,
        encoding: str = "onehot",
        render_mode: str | None = None,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    ) -> None:
        self.puzzle = p = episode.checked_puzzle(puzzle)
        self.num_envs = _positive(num_envs, "num_envs")
        self.render_mode = episode.checked_render_mode(render_mode)
        self.encoding = encoding
        depth = (1, int(p.default_scramble_depth)) if scramble_depth is None else scramble_depth
        self.scramble_depth = episode.checked_depth(depth)
        limit = episode.default_step_limit(p) if max_episode_steps is None else max_episode_steps
        self.max_episode_steps = _positive(limit, "max_episode_steps")
        self.autoreset_mode = _checked_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space = observation_space(p, encoding)
        self.single_action_space = spaces.Discrete(p.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.action_costs = episode.move_costs(p)
        self._states: np.ndarray | None = None
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._ended = np.zeros(self.num_envs, dtype=bool)  # ended at the last step, not yet restarted

    # ---- Gymnasium API ----------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start episodes: every environment's, or those of ``options["reset_mask"]``
        (``bool[N]``). ``seed`` (an int) seeds the one generator all scrambles are drawn from.
        ``options`` may also hold ``scramble_depth`` (these episodes only) or ``state``: the
        starts themselves, one per environment reset (texts the puzzle parses, arrays it
        validates, or one array ``[k, *state_shape]``)."""
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0
        ):
            raise PuzzleError(f"seed must be a whole number >= 0 or None, got {seed!r}")
        super().reset(seed=None if seed is None else int(seed))
        options = dict(options or {})
        unknown = sorted(set(options) - set(_RESET_OPTIONS))
        if unknown:
            raise PuzzleError(
                f"unknown reset option(s) {unknown}; options are {', '.join(map(repr, _RESET_OPTIONS))}"
            )
        mask = self._checked_mask(options.get("reset_mask"))
        if self._states is None and not mask.all():
            raise gym.error.ResetNeeded(
                "the first reset() starts every environment: call it without reset_mask"
            )
        rows = np.flatnonzero(mask)
        if options.get("state") is not None:
            starts = episode.given_states(self.puzzle, options["state"], rows.size)
            depths = np.full(rows.size, -1, dtype=np.int64)
        else:
            chosen = options.get("scramble_depth")
            depth = self.scramble_depth if chosen is None else episode.checked_depth(chosen)
            starts, depths = episode.draw_starts(self.puzzle, self.np_random, rows.size, depth)
        if self._states is None:
            self._states = np.empty((self.num_envs, *self.puzzle.state_shape), dtype=self.puzzle.dtype)
        self._states[rows] = starts
        self._steps[rows] = 0
        self._ended[rows] = False
        info = self._info(self._states, mask)
        _add_depths(info, rows, depths, self.num_envs)
        return self._observations(self._states), info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one move per environment (``actions int[N]``). Under ``NEXT_STEP`` an environment
        whose episode ended at the last step starts a new one instead (its action is ignored,
        reward 0, neither terminated nor truncated)."""
        if self._states is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        p, n = self.puzzle, self.num_envs
        acts = episode.checked_actions(p, actions, n)
        if self.autoreset_mode == AutoresetMode.DISABLED and self._ended.any():
            raise gym.error.ResetNeeded(
                f"the episodes of environment(s) {np.flatnonzero(self._ended).tolist()} ended: start them "
                "again with reset(options={'reset_mask': ...}) before step()"
            )
        restart = self._ended if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(n, dtype=bool)
        moving = np.flatnonzero(~restart)
        states = self._states.copy()
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        if moving.size:
            states[moving] = p.apply(self._states[moving], acts[moving])
            self._steps[moving] += 1
            rewards[moving] = -self.action_costs[acts[moving]]
            terminated[moving] = p.is_goal(states[moving])
            truncated[moving] = self._steps[moving] >= self.max_episode_steps
        ended = terminated | truncated
        infos: dict[str, Any] = {}
        if self.autoreset_mode == AutoresetMode.SAME_STEP and ended.any():
            infos.update(self._finals(states, ended))
            starting = ended
        else:
            starting = restart
        rows = np.flatnonzero(starting)
        if rows.size:
            states[rows], depths = episode.draw_starts(p, self.np_random, rows.size, self.scramble_depth)
            self._steps[rows] = 0
        self._states = states
        self._ended = np.zeros(n, dtype=bool) if self.autoreset_mode == AutoresetMode.SAME_STEP else ended
        infos.update(self._info(states, np.ones(n, dtype=bool)))
        if rows.size:
            _add_depths(infos, rows, depths, n)
        return self._observations(states), rewards, terminated, truncated, infos

    def render(self) -> tuple[Any, ...] | None:
        """``"ansi"``: a tuple of ``N`` texts (``puzzle.render_text``); ``"rgb_array"``: a tuple of
        ``N`` pictures ``uint8[H, W, 3]``, drawn as one batch; no render mode: ``None``."""
        if self.render_mode is None:
            return None
        if self._states is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        if self.render_mode == "ansi":
            return tuple(self.puzzle.render_text(s) for s in self._states)
        return tuple(draw(self.puzzle, self._states))

    # ---- helpers ----------------------------------------------------------------------------------
    def _checked_mask(self, mask: Any) -> np.ndarray:
        if mask is None:
            return np.ones(self.num_envs, dtype=bool)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise PuzzleError(
                f"reset_mask must be a NumPy bool array of shape ({self.num_envs},), got {mask!r}"
            )
        if not mask.any():
            raise PuzzleError("reset_mask must select at least one environment")
        return mask

    def _observations(self, states: np.ndarray) -> np.ndarray:
        return self.puzzle.encode(states, self.encoding)

    def _info(self, states: np.ndarray, reporting: np.ndarray) -> dict[str, Any]:
        """The per-step info of ``states``, reported (``_key`` masks) by the environments of ``reporting``."""
        info: dict[str, Any] = {
            "state": states.copy(),
            "is_goal": self.puzzle.is_goal(states),
            "action_mask": self.puzzle.legal_mask(states).astype(np.int8),
        }
        for key in list(info):
            info[f"_{key}"] = reporting.copy()
        return info

    def _finals(self, states: np.ndarray, ended: np.ndarray) -> dict[str, Any]:
        """``final_obs`` (an object array, the last observation of each ended episode) and
        ``final_info`` (their infos), as Gymnasium's ``SAME_STEP`` autoreset reports them."""
        rows = np.flatnonzero(ended)
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i, obs in zip(rows, self._observations(states[rows]), strict=True):
            final_obs[i] = obs
        return {
            "final_obs": final_obs,
            "_final_obs": ended.copy(),
            "final_info": self._info(states, ended),
            "_final_info": ended.copy(),
        }


def _add_depths(info: dict[str, Any], rows: np.ndarray, depths: np.ndarray, n: int) -> None:
    """``info["scramble_depth"]``: the depth of each episode started now (``-1``: a given start)."""
    info["scramble_depth"] = np.full(n, -1, dtype=np.int64)
    info["scramble_depth"][rows] = depths
    info["_scramble_depth"] = np.zeros(n, dtype=bool)
    info["_scramble_depth"][rows] = True


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise PuzzleError(f"{what} must be a whole number >= 1, got {value!r}")
    return int(value)


def _checked_mode(mode: Any) -> AutoresetMode:
    try:
        return mode if isinstance(mode, AutoresetMode) else AutoresetMode(mode)
    except ValueError:
        modes = ", ".join(repr(m.value) for m in AutoresetMode)
        raise PuzzleError(
            f"autoreset_mode must be an AutoresetMode or one of {modes}, got {mode!r}"
        ) from None
