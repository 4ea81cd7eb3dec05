"""One puzzle as a Gymnasium environment (:class:`PuzzleEnv`); the episode it plays is described in
:mod:`puzzlezero.envs`."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from puzzlezero.envs import episode
from puzzlezero.envs.pictures import draw
from puzzlezero.errors import InvalidMoveError, PuzzleError
from puzzlezero.puzzles.base import Puzzle

__all__ = ["PuzzleEnv", "observation_space"]


def observation_space(p: Puzzle, encoding: str) -> spaces.Box:
    """``Box`` of one encoded state: ``float32``, in ``[0, 1]`` for the binary encodings
    (``onehot``, ``grid``), unbounded for others; an unknown encoding raises ``UnknownNameError``."""
    shape = p.encode(p.goals(1), encoding).shape[1:]
    low, high = (0.0, 1.0) if encoding in ("onehot", "grid") else (-np.inf, np.inf)
    return spaces.Box(low, high, shape=tuple(shape), dtype=np.float32)


class PuzzleEnv(gym.Env[np.ndarray, np.int64]):
    """One puzzle as a Gymnasium environment: solve a scrambled state, paying each move's cost.
    :mod:`puzzlezero.envs` states the episode (start, observation, action, reward, ends, info).

    Args:
        puzzle: a registered name (``"cube3"``) or a :class:`~puzzlezero.Puzzle` instance.
        scramble_depth: scramble moves of each start, an int or a pair ``(lo, hi)`` (uniform in
            ``[lo, hi]``); default ``(1, puzzle.default_scramble_depth)``.
            ``reset(options={"scramble_depth": k})`` overrides it for one episode.
        encoding: the observation encoder, a key of ``puzzle.encoders`` (default ``"onehot"``).
        render_mode: ``None``, ``"ansi"`` (:meth:`render` returns text) or ``"rgb_array"``
            (:meth:`render` returns ``uint8[H, W, 3]``, see :mod:`puzzlezero.envs.pictures`).

    The class itself has no step limit: :func:`gymnasium.make` adds one (``TimeLimit``), or wrap it
    with ``gymnasium.wrappers.TimeLimit`` yourself.

    Example:
        >>> env = PuzzleEnv("puzzle8", render_mode="ansi")
        >>> obs, info = env.reset(options={"state": "1 2 3 4 5 6 7 0 8"})
        >>> print(env.render())
        1 2 3
        4 5 6
        7 . 8
        >>> info["action_mask"].tolist()  # U D L R: no tile below the blank can slide up
        [0, 1, 1, 1]
        >>> env.step(env.puzzle.action_names.index("L"))[1:4]  # tile 8 slides left: solved
        (-1.0, True, False)
        >>> env = PuzzleEnv("puzzle8", render_mode="rgb_array")
        >>> _ = env.reset(seed=0)
        >>> env.render().shape  # 3 x 3 tiles of 80 pixels
        (240, 240, 3)
    """

    #: ``render_fps`` only tells viewers how fast to replay the frames (Gymnasium asks for one)
    metadata = {"render_modes": list(episode.RENDER_MODES), "render_fps": 4}

    def __init__(
        self,
        puzzle: str | Puzzle,
        scramble_depth: int | tuple[int, int] | None = None,
        encoding: str = "onehot",
        render_mode: str | None = None,
    ) -> None:
        self.puzzle = p = episode.checked_puzzle(puzzle)
        self.render_mode = episode.checked_render_mode(render_mode)
        self.encoding = encoding
        depth = (1, int(p.default_scramble_depth)) if scramble_depth is None else scramble_depth
        self.scramble_depth = episode.checked_depth(depth)
        self.observation_space = observation_space(p, encoding)
        self.action_space = spaces.Discrete(p.num_actions)
        self.action_costs = episode.move_costs(p)
        self._state: np.ndarray | None = None

    # ---- Gymnasium API ----------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode from a fresh scramble. ``options`` may hold ``scramble_depth`` (this
        episode only) or ``state`` (start from this state instead: text the puzzle parses, or an
        array it validates; it may be solved)."""
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - {"scramble_depth", "state"})
        if unknown:
            raise PuzzleError(f"unknown reset option(s) {unknown}; options are 'scramble_depth' and 'state'")
        depth: int | None
        if options.get("state") is not None:
            self._state = episode.given_state(self.puzzle, options["state"])
            depth = None
        else:
            chosen = options.get("scramble_depth")
            scramble = self.scramble_depth if chosen is None else episode.checked_depth(chosen)
            states, depths = episode.draw_starts(self.puzzle, self.np_random, 1, scramble)
            self._state, depth = states[0], int(depths[0])
        return self._observation(), {**self._info(), "scramble_depth": depth}

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply move ``action`` (``0 <= action < num_actions``); reward = minus its cost,
        ``terminated`` when the new state is solved, ``truncated`` always ``False`` here (the step
        limit is ``TimeLimit``'s)."""
        if self._state is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        arr = np.asarray(action)
        whole = arr.shape == () and np.issubdtype(arr.dtype, np.integer)  # int, np.int64, 0-d array
        a = int(arr) if whole else -1
        if not 0 <= a < self.puzzle.num_actions:
            raise InvalidMoveError(
                f"action {action!r} is not a move of {self.puzzle.name}: use 0..{self.puzzle.num_actions - 1}"
            )
        self._state = self.puzzle.apply(self._state[None], np.array([a]))[0]
        info = self._info()
        return self._observation(), -float(self.action_costs[a]), info["is_goal"], False, info

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the state as the puzzle's text picture (``puzzle.render_text``);
        ``"rgb_array"``: its picture, ``uint8[H, W, 3]``; no render mode: ``None``."""
        if self.render_mode is None:
            return None
        if self._state is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        if self.render_mode == "ansi":
            return self.puzzle.render_text(self._state)
        return draw(self.puzzle, self._state[None])[0]

    # ---- helpers ----------------------------------------------------------------------------------
    def _observation(self) -> np.ndarray:
        assert self._state is not None
        return self.puzzle.encode(self._state[None], self.encoding)[0]

    def _info(self) -> dict[str, Any]:
        assert self._state is not None
        s = self._state[None]
        return {
            "state": self._state.copy(),
            "is_goal": bool(self.puzzle.is_goal(s)[0]),
            "action_mask": self.puzzle.legal_mask(s)[0].astype(np.int8),
        }
