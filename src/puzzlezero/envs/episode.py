"""What the single and the vector environment share: the ids, the step limit, the checks of their
arguments, the move costs, and the starts of episodes (scrambles drawn many at once, or states
given by the caller). NumPy, the puzzles and their registry only: no Gymnasium here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidMoveError, PuzzleError
from puzzlezero.puzzles import walks
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make

__all__ = [
    "NAMESPACE",
    "RENDER_MODES",
    "checked_actions",
    "checked_depth",
    "checked_puzzle",
    "checked_render_mode",
    "default_step_limit",
    "draw_starts",
    "env_id",
    "given_state",
    "given_states",
    "move_costs",
]

#: namespace of the environment ids
NAMESPACE = "puzzlezero"
#: what ``render()`` returns: ``"ansi"`` the puzzle's text picture, ``"rgb_array"`` ``uint8[H, W, 3]``
RENDER_MODES = ("ansi", "rgb_array")
#: one batch of scrambles per round, four times larger each round: 1 + 4 + ... + 4**6 = 5461 draws
#: for each start that is still solved
_DRAW_ROUNDS = 7

#: a scramble depth: moves per start, or a pair ``(lo, hi)``, uniform in ``[lo, hi]``
Depth = int | tuple[int, int]


def env_id(name: str) -> str:
    """The Gymnasium id of puzzle ``name``: ``"puzzlezero/<name>-v0"``."""
    return f"{NAMESPACE}/{name}-v0"


def default_step_limit(puzzle: Puzzle) -> int:
    """The registered ``max_episode_steps``: twice the deepest default scramble (``2 * K``). A start
    scrambled by ``d <= K`` moves is at most ``d`` moves from solved (Sokoban: ``d`` reverse moves),
    so the limit leaves room for ``K`` wasted steps."""
    return 2 * int(puzzle.default_scramble_depth)


def _whole(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def checked_depth(depth: Any) -> Depth:
    """``depth`` as an int >= 1 or a pair ``(lo, hi)`` with ``1 <= lo <= hi``; else ``PuzzleError``."""
    if _whole(depth) and depth >= 1:
        return int(depth)
    if isinstance(depth, Sequence | np.ndarray) and not isinstance(depth, str) and len(depth) == 2:
        lo, hi = depth
        if _whole(lo) and _whole(hi) and 1 <= lo <= hi:
            return int(lo), int(hi)
    raise PuzzleError(
        f"scramble_depth must be a whole number of moves >= 1 or a pair (lo, hi) with 1 <= lo <= hi, got {depth!r}"
    )


def checked_render_mode(render_mode: Any) -> str | None:
    """``render_mode`` if it is ``None`` or one of :data:`RENDER_MODES`; else ``PuzzleError``."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise PuzzleError(f"render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r}")
    return render_mode


def checked_puzzle(puzzle: Any) -> Puzzle:
    """A registered name made into its puzzle, or a :class:`Puzzle` as it is; else ``PuzzleError``."""
    p = make(puzzle) if isinstance(puzzle, str) else puzzle
    if not isinstance(p, Puzzle):
        raise PuzzleError(f"puzzle must be a registered name or a Puzzle, got {type(puzzle).__name__}")
    return p


def move_costs(p: Puzzle) -> np.ndarray:
    """``float64[A]``: the puzzle's ``action_costs`` if it has them, else ``move_cost`` each."""
    costs = getattr(p, "action_costs", None)
    costs = np.asarray(p.move_cost if costs is None else costs, dtype=np.float64)
    if costs.ndim > 1 or (costs.ndim == 1 and costs.shape != (p.num_actions,)):
        raise PuzzleError(f"{p.name}: action_costs has shape {costs.shape}, expected ({p.num_actions},)")
    return np.broadcast_to(costs, (p.num_actions,)).copy()


def checked_actions(p: Puzzle, actions: Any, n: int) -> np.ndarray:
    """``actions`` as ``int64[n]``, one move ``0 <= a < num_actions`` per environment; anything else
    (a float, a bool, the wrong length, a move out of range) raises :class:`InvalidMoveError`."""
    arr = np.asarray(actions)
    if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer):
        raise InvalidMoveError(
            f"actions must be {n} whole numbers, one move of {p.name} (0..{p.num_actions - 1}) per "
            f"environment, got {actions!r}"
        )
    bad = np.flatnonzero((arr < 0) | (arr >= p.num_actions))
    if bad.size:
        raise InvalidMoveError(
            f"action {int(arr[bad[0]])} of environment {int(bad[0])} is not a move of {p.name}: use 0..{p.num_actions - 1}"
        )
    return arr.astype(np.int64)


def draw_starts(p: Puzzle, rng: np.random.Generator, n: int, depth: Depth) -> tuple[np.ndarray, np.ndarray]:
    """``(states [n, *state_shape], depths int64[n])``: ``n`` scrambles that are not solved, drawn
    with ``rng`` all at once; the solved ones are drawn again, ``4**k`` candidates each in round
    ``k``, the first unsolved candidate wins. ``PuzzleError`` when all :data:`_DRAW_ROUNDS` rounds
    leave a start solved (a depth that cannot leave the goal)."""
    states = np.empty((n, *p.state_shape), dtype=p.dtype)
    depths = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    per = 1
    for _ in range(_DRAW_ROUNDS):
        drawn_depths = walks.draw_depths(rng, todo.size * per, depth)
        drawn = p.scramble(rng, todo.size * per, drawn_depths)
        fresh = ~p.is_goal(drawn).reshape(todo.size, per)
        won = fresh.any(axis=1)
        first = np.argmax(fresh, axis=1)[won] + np.flatnonzero(won) * per  # flat index of each winner
        states[todo[won]] = drawn[first]
        depths[todo[won]] = drawn_depths[first]
        todo = todo[~won]
        if not todo.size:
            return states, depths
        per *= 4
    raise PuzzleError(
        f"{(4**_DRAW_ROUNDS - 1) // 3} scrambles of depth {depth} all left {p.name} solved: "
        "use a larger scramble_depth"
    )


def given_states(p: Puzzle, states: Any, n: int) -> np.ndarray:
    """``n`` start states given by the caller, ``[n, *state_shape]``: an array of that shape, or a
    sequence of ``n`` states, each text the puzzle parses or an array; each is validated by the
    puzzle (``InvalidStateError``), a wrong count or shape raises ``PuzzleError``."""
    if isinstance(states, np.ndarray) and states.ndim == len(p.state_shape) + 1:
        rows: list[Any] = list(states)
    elif isinstance(states, Sequence) and not isinstance(states, str):
        rows = list(states)
    else:
        raise PuzzleError(
            f"give {n} start state(s) of {p.name} as a sequence or a batch, got {type(states).__name__}"
        )
    if len(rows) != n:
        raise PuzzleError(f"give one start state per environment reset: {n}, got {len(rows)}")
    return np.stack([given_state(p, s) for s in rows]) if n else np.empty((0, *p.state_shape), p.dtype)


def given_state(p: Puzzle, state: Any) -> np.ndarray:
    """One start state: text the puzzle parses or an array it validates."""
    s = p.parse(state) if isinstance(state, str) else np.asarray(state)
    if s.shape != p.state_shape:
        raise PuzzleError(f"a {p.name} state has shape {p.state_shape}, got {s.shape}")
    p.validate(s)
    return s.astype(p.dtype, copy=True)
