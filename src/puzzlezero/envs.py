"""Gymnasium environments for every registered puzzle: ``puzzlezero/<name>-v0``.

Importing this module registers one environment per name in :func:`puzzlezero.names` (the ids are
``puzzlezero/cube3-v0``, ``puzzlezero/puzzle15-v0``, ...; :func:`register_envs` adds puzzles
registered afterwards). Gymnasium 1.x has no plugin entry points (they were removed in 1.0), so
either import this module or name it in the id, which makes Gymnasium import it:
``gymnasium.make("puzzlezero.envs:puzzlezero/cube3-v0")``. It needs the ``gym`` extra
(``pip install "puzzlezero[gym]"``); without Gymnasium the import raises an ``ImportError`` saying so.

One episode of :class:`PuzzleEnv`:

* **start**: a scramble of the goal by :meth:`Puzzle.scramble <puzzlezero.Puzzle.scramble>`
  (Sokoban: a generated room played backwards), drawn with the env's ``np_random``, so a seed fixes
  it. ``scramble_depth`` is an int or a ``(lo, hi)`` pair (uniform in ``[lo, hi]``); the default is
  the training distribution ``(1, K)``, ``K = puzzle.default_scramble_depth`` (the paper's). A
  scramble that lands on a solved state is drawn again, so an episode never starts solved.
* **observation**: the puzzle's network input, ``puzzle.encode(state)``: ``float32[D]`` (``[C, H, W]``
  for the ``grid`` encoding of Lights Out and Sokoban) in
  ``Box(0, 1)`` for the one-hot encoding (every puzzle's default).
* **action**: ``Discrete(puzzle.num_actions)``, the puzzle's moves in its order
  (``puzzle.action_names``). A move that is impossible in the state (a sliding tile at the edge, a
  Sokoban wall) leaves the state unchanged and still costs its move; ``info["action_mask"]`` says
  which moves change the state.
* **reward**: minus the cost of the move: ``puzzle.action_costs[a]`` where a puzzle has per-action
  costs, else ``puzzle.move_cost`` (1 by default).
* **terminated** when the state is solved (``puzzle.is_goal``); **truncated** after
  ``max_episode_steps`` steps (Gymnasium's ``TimeLimit``; default ``2 * K``, change it with
  ``gymnasium.make(..., max_episode_steps=N)``).
* **info** (reset and step): ``state`` (the raw state, ``puzzle.dtype[*state_shape]``; ``puzzle.format``
  writes it as text), ``is_goal``, ``action_mask`` (``int8[A]``, 1 where the move changes the
  state, the form ``action_space.sample(mask=...)`` takes); reset adds ``scramble_depth`` (the depth
  drawn, ``None`` for a given start state).
* ``render_mode="ansi"``: :meth:`PuzzleEnv.render` returns the puzzle's text picture
  (``puzzle.render_text``: the cube's unfolded net, the tile board, the Sokoban level).

Example (the step that undoes a one-move scramble solves the cube):

    >>> import gymnasium as gym
    >>> import numpy as np
    >>> import puzzlezero.envs
    >>> env = gym.make("puzzlezero/cube3-v0", scramble_depth=1)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, obs.dtype, env.action_space
    ((324,), dtype('float32'), Discrete(12))
    >>> cube = env.unwrapped.puzzle
    >>> undo = next(a for a in range(12) if cube.is_goal(cube.apply(info["state"][None], np.array([a])))[0])
    >>> obs, reward, terminated, truncated, info = env.step(undo)
    >>> reward, terminated, truncated, env.spec.max_episode_steps
    (-1.0, True, False, 60)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, SupportsFloat

import numpy as np

try:
    import gymnasium as gym
    from gymnasium import spaces
except ImportError as exc:
    raise ImportError(
        f'puzzlezero.envs needs Gymnasium: pip install "puzzlezero[gym]" ({exc})', name="gymnasium"
    ) from exc

from puzzlezero.errors import InvalidMoveError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make, names

__all__ = ["PuzzleEnv", "env_id", "register_envs", "default_step_limit"]

#: namespace of the environment ids
NAMESPACE = "puzzlezero"
#: one batch of scrambles per round, four times larger each round: 1 + 4 + ... + 4**6 = 5461 draws
_DRAW_ROUNDS = 7


def env_id(name: str) -> str:
    """The Gymnasium id of puzzle ``name``: ``"puzzlezero/<name>-v0"``."""
    return f"{NAMESPACE}/{name}-v0"


def default_step_limit(puzzle: Puzzle) -> int:
    """The registered ``max_episode_steps``: twice the deepest default scramble (``2 * K``). A start
    scrambled by ``d <= K`` moves is at most ``d`` moves from solved (Sokoban: ``d`` reverse moves),
    so the limit leaves room for ``K`` wasted steps."""
    return 2 * int(puzzle.default_scramble_depth)


def _checked_depth(depth: Any) -> int | tuple[int, int]:
    """``depth`` as an int >= 1 or a pair ``(lo, hi)`` with ``1 <= lo <= hi``; else ``PuzzleError``."""

    def whole(v: Any) -> bool:
        return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)

    if whole(depth) and depth >= 1:
        return int(depth)
    if isinstance(depth, Sequence | np.ndarray) and not isinstance(depth, str) and len(depth) == 2:
        lo, hi = depth
        if whole(lo) and whole(hi) and 1 <= lo <= hi:
            return int(lo), int(hi)
    raise PuzzleError(
        f"scramble_depth must be a whole number of moves >= 1 or a pair (lo, hi) with 1 <= lo <= hi, got {depth!r}"
    )


class PuzzleEnv(gym.Env[np.ndarray, np.int64]):
    """One puzzle as a Gymnasium environment: solve a scrambled state, paying each move's cost.
    The module docstring states the episode (start, observation, action, reward, ends, info).

    Args:
        puzzle: a registered name (``"cube3"``) or a :class:`~puzzlezero.Puzzle` instance.
        scramble_depth: scramble moves of each start, an int or a pair ``(lo, hi)`` (uniform in
            ``[lo, hi]``); default ``(1, puzzle.default_scramble_depth)``.
            ``reset(options={"scramble_depth": k})`` overrides it for one episode.
        encoding: the observation encoder, a key of ``puzzle.encoders`` (default ``"onehot"``).
        render_mode: ``None`` or ``"ansi"`` (:meth:`render` returns text).

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
    """

    #: ``render_fps`` only tells viewers how fast to replay the text frames (Gymnasium asks for one)
    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        puzzle: str | Puzzle,
        scramble_depth: int | tuple[int, int] | None = None,
        encoding: str = "onehot",
        render_mode: str | None = None,
    ) -> None:
        self.puzzle = make(puzzle) if isinstance(puzzle, str) else puzzle
        if not isinstance(self.puzzle, Puzzle):
            raise PuzzleError(f"puzzle must be a registered name or a Puzzle, got {type(puzzle).__name__}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise PuzzleError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self.encoding = encoding
        p = self.puzzle
        depth = (1, int(p.default_scramble_depth)) if scramble_depth is None else scramble_depth
        self.scramble_depth = _checked_depth(depth)
        shape = p.encode(p.goals(1), encoding).shape[1:]  # also rejects an unknown encoding by name
        low, high = (0.0, 1.0) if encoding in ("onehot", "grid") else (-np.inf, np.inf)  # binary planes
        self.observation_space = spaces.Box(low, high, shape=tuple(shape), dtype=np.float32)
        self.action_space = spaces.Discrete(p.num_actions)
        self.action_costs = self._costs(p)
        self._state: np.ndarray | None = None

    @staticmethod
    def _costs(p: Puzzle) -> np.ndarray:
        """``float64[A]``: the puzzle's ``action_costs`` if it has them, else ``move_cost`` each."""
        costs = getattr(p, "action_costs", None)
        costs = np.asarray(p.move_cost if costs is None else costs, dtype=np.float64)
        if costs.ndim > 1 or (costs.ndim == 1 and costs.shape != (p.num_actions,)):
            raise PuzzleError(f"{p.name}: action_costs has shape {costs.shape}, expected ({p.num_actions},)")
        return np.broadcast_to(costs, (p.num_actions,)).copy()

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
        if options.get("state") is not None:
            self._state = self._given_state(options["state"])
            depth = None
        else:
            chosen = options.get("scramble_depth")
            self._state, depth = self._draw_start(
                self.scramble_depth if chosen is None else _checked_depth(chosen)
            )
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

    def render(self) -> str | None:
        """``"ansi"``: the state as the puzzle's text picture (``puzzle.render_text``); else ``None``."""
        if self.render_mode != "ansi":
            return None
        if self._state is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        return self.puzzle.render_text(self._state)

    # ---- helpers ----------------------------------------------------------------------------------
    def _draw_start(self, depth: int | tuple[int, int]) -> tuple[np.ndarray, int]:
        """A scramble that is not solved and its depth, drawn with ``self.np_random``: batches of
        1, 4, 16, ... scrambles, the first unsolved one wins."""
        p, rng, n = self.puzzle, self.np_random, 1
        for _ in range(_DRAW_ROUNDS):
            depths = p.draw_depths(rng, n, depth)
            states = p.scramble(rng, n, depths)
            fresh = np.flatnonzero(~p.is_goal(states))
            if fresh.size:
                return states[fresh[0]].copy(), int(depths[fresh[0]])
            n *= 4
        raise PuzzleError(
            f"{(4**_DRAW_ROUNDS - 1) // 3} scrambles of depth {depth} all left {p.name} solved: "
            "use a larger scramble_depth"
        )

    def _given_state(self, state: Any) -> np.ndarray:
        p = self.puzzle
        s = p.parse(state) if isinstance(state, str) else np.asarray(state)
        if s.shape != p.state_shape:
            raise PuzzleError(f"a {p.name} state has shape {p.state_shape}, got {s.shape}")
        p.validate(s)
        return s.astype(p.dtype, copy=True)

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


def register_envs() -> list[str]:
    """Register ``puzzlezero/<name>-v0`` for every puzzle in :func:`puzzlezero.names` that has no
    environment yet (run at import; call it again after registering a puzzle). Each id makes a
    :class:`PuzzleEnv` with ``max_episode_steps = default_step_limit(puzzle)``. Returns all the ids."""
    ids = []
    for name in names():
        eid = env_id(name)
        if eid not in gym.registry:
            gym.register(
                id=eid,
                entry_point="puzzlezero.envs:PuzzleEnv",
                kwargs={"puzzle": name},
                max_episode_steps=default_step_limit(make(name)),
            )
        ids.append(eid)
    return ids


register_envs()
