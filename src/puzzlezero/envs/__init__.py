"""Gymnasium environments for every registered puzzle: ``puzzlezero/<name>-v0``.

Importing this package registers one environment per name in :func:`puzzlezero.names` (the ids are
``puzzlezero/cube3-v0``, ``puzzlezero/puzzle15-v0``, ...; :func:`register_envs` adds puzzles
registered afterwards). Gymnasium 1.x has no plugin entry points (they were removed in 1.0), so
either import this package or name it in the id, which makes Gymnasium import it:
``gymnasium.make("puzzlezero.envs:puzzlezero/cube3-v0")``. Each id has two entry points:
:func:`gymnasium.make` builds a :class:`PuzzleEnv` (one episode), :func:`gymnasium.make_vec`
builds a :class:`PuzzleVectorEnv` (``num_envs`` episodes stepped at once with the puzzle's
batched functions; ``vectorization_mode="sync"`` or ``"async"`` still give Gymnasium's own vector
environments over :class:`PuzzleEnv`). It needs the ``gym`` extra
(``pip install "puzzlezero[gym]"``); without Gymnasium the import raises an ``ImportError`` saying so.

One episode:

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
  ``max_episode_steps`` steps (default ``2 * K``, change it with
  ``gymnasium.make(..., max_episode_steps=N)``; the single env gets it from Gymnasium's
  ``TimeLimit``, the vector env counts itself).
* **info** (reset and step): ``state`` (the raw state, ``puzzle.dtype[*state_shape]``; ``puzzle.format``
  writes it as text), ``is_goal``, ``action_mask`` (``int8[A]``, 1 where the move changes the
  state, the form ``action_space.sample(mask=...)`` takes); reset adds ``scramble_depth`` (the depth
  drawn, ``None`` for a given start state).
* **render**: ``render_mode="ansi"`` gives the puzzle's text picture (``puzzle.render_text``: the
  cube's unfolded net, the tile board, the Sokoban level); ``render_mode="rgb_array"`` a picture
  ``uint8[H, W, 3]`` drawn with NumPy (:mod:`puzzlezero.envs.pictures`).

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

The same puzzle, 64 episodes at once:

    >>> envs = gym.make_vec("puzzlezero/cube3-v0", num_envs=64)
    >>> type(envs).__name__, envs.observation_space.shape, envs.metadata["autoreset_mode"].value
    ('PuzzleVectorEnv', (64, 324), 'NextStep')
    >>> obs, info = envs.reset(seed=0)
    >>> obs, rewards, terminated, truncated, info = envs.step(envs.action_space.sample())
    >>> rewards.shape, terminated.dtype, info["action_mask"].shape
    ((64,), dtype('bool'), (64, 12))
"""

from __future__ import annotations

try:
    import gymnasium as gym
except ImportError as exc:
    raise ImportError(
        f'puzzlezero.envs needs Gymnasium: pip install "puzzlezero[gym]" ({exc})', name="gymnasium"
    ) from exc

from puzzlezero.envs.episode import NAMESPACE, default_step_limit, env_id
from puzzlezero.envs.single import PuzzleEnv
from puzzlezero.envs.vector import PuzzleVectorEnv
from puzzlezero.registry import make, names

__all__ = ["NAMESPACE", "PuzzleEnv", "PuzzleVectorEnv", "default_step_limit", "env_id", "register_envs"]


def register_envs() -> list[str]:
    """Register ``puzzlezero/<name>-v0`` for every puzzle in :func:`puzzlezero.names` that has no
    environment yet (run at import; call it again after registering a puzzle). Each id makes a
    :class:`PuzzleEnv` (``gymnasium.make``) or a :class:`PuzzleVectorEnv` (``gymnasium.make_vec``)
    with ``max_episode_steps = default_step_limit(puzzle)``. Returns all the ids."""
    ids = []
    for name in names():
        eid = env_id(name)
        if eid not in gym.registry:
            gym.register(
                id=eid,
                entry_point="puzzlezero.envs:PuzzleEnv",
                vector_entry_point="puzzlezero.envs:PuzzleVectorEnv",
                kwargs={"puzzle": name},
                max_episode_steps=default_step_limit(make(name)),
            )
        ids.append(eid)
    return ids


register_envs()
