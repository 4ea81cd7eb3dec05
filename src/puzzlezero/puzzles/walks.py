"""Training walks: random moves from the goal, as pure functions over a puzzle.

Every function takes the puzzle first and uses only the part of its public contract that
:class:`WalkablePuzzle` names (``goals``, ``apply``, ``legal_mask``, ``inverse_action``,
``action_costs``, ``uniform_cost``, ``max_walk_length``, and the walk methods below). The
:class:`~puzzlezero.puzzles.base.Puzzle` methods ``scramble``, ``random_walks``,
``walks_with_undo`` and ``walks_with_undo_sets`` call these by default; a puzzle with a faster or
better walk of its own replaces the method (the sliding puzzles' numba kernel, Lights Out's press
sets, Sokoban's reverse play), and :func:`walks_with_cost` and :func:`walks_with_undo_sets` go
through those methods, so they use it. The others are functions only: ``walks.walks_with_cost(puzzle,
rng, n, depth)``.

* :func:`scramble`: uniformly random moves (DeepCubeA's scrambles).
* :func:`random_walks`: non-backtracking walks (CayleyPy, arXiv 2502.13266): each step changes the
  state and does not undo the step before.
* :func:`walks_with_cost`: the walks with the cost of walking each state back to the goal.
* :func:`walks_with_undo`, :func:`walks_with_undo_sets`: the walks with the move undoing the last
  step (EfficientCube's policy label), one-hot or as a distribution.
* :func:`draw_depths`, :func:`walk_depths`: the ``depth`` argument normalised to ``int64[n]``.
* :func:`walk`: the kernel under all of them.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from puzzlezero.errors import PuzzleError

__all__ = [
    "Depth",
    "WalkablePuzzle",
    "draw_depths",
    "random_walks",
    "scramble",
    "walk",
    "walk_depths",
    "walks_with_cost",
    "walks_with_undo",
    "walks_with_undo_sets",
]

#: a walk length: one for all, one per walk (``int[n]``), or ``(lo, hi)``: uniform in ``[lo, hi]``
Depth = int | np.ndarray | tuple[int, int]


class WalkablePuzzle(Protocol):
    """What the walks use of a puzzle: every :class:`~puzzlezero.puzzles.base.Puzzle` is one (the
    walks are written against this, so that this module needs nothing of ``base``)."""

    @property
    def name(self) -> str: ...

    @property
    def num_actions(self) -> int: ...

    @property
    def action_costs(self) -> np.ndarray: ...

    @property
    def uniform_cost(self) -> float | None: ...

    @property
    def inverse_action(self) -> np.ndarray: ...

    @property
    def max_walk_length(self) -> int | None: ...

    def goals(self, n: int) -> np.ndarray: ...

    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray: ...

    def legal_mask(self, states: np.ndarray) -> np.ndarray: ...

    def scramble(self, rng: np.random.Generator, n: int, depth: Depth) -> np.ndarray: ...

    def random_walks(self, rng: np.random.Generator, n: int, depth: Depth) -> np.ndarray: ...

    def walks_with_undo(
        self, rng: np.random.Generator, n: int, depth: Depth
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


def draw_depths(rng: np.random.Generator, n: int, depth: Depth) -> np.ndarray:
    """Normalise a ``depth`` argument to ``int64[n]``: an int (every walk that long), an ``int[n]``
    array, or a ``(lo, hi)`` pair meaning uniform in ``[lo, hi]`` (DeepCubeA: ``(1, K)``)."""
    if isinstance(depth, tuple):
        lo, hi = depth
        return rng.integers(lo, hi + 1, size=n)
    d = np.asarray(depth, dtype=np.int64)
    return np.broadcast_to(d, (n,)).copy() if d.ndim == 0 else d


def walk_depths(puzzle: WalkablePuzzle, rng: np.random.Generator, n: int, depth: Depth) -> np.ndarray:
    """:func:`draw_depths` for non-backtracking walks: with a ``max_walk_length`` ``L``, a range
    ``(lo, hi)`` is drawn as ``(min(lo, L), min(hi, L))`` (uniform over the lengths a walk can
    have) and longer depths are cut at ``L``."""
    bound = puzzle.max_walk_length
    if bound is None:
        return draw_depths(rng, n, depth)
    if isinstance(depth, tuple):
        depth = (min(depth[0], bound), min(depth[1], bound))
    return np.minimum(draw_depths(rng, n, depth), bound)


def walk(
    puzzle: WalkablePuzzle,
    rng: np.random.Generator,
    depths: np.ndarray,
    *,
    nonbacktracking: bool,
    with_cost: bool = False,
    reduced: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random moves from the goal, ``depths[i]`` for state ``i``, all states moved together:
    uniformly random actions (:func:`scramble`), or, ``nonbacktracking``, uniformly random among
    those that change the state and do not undo the step before. Returns the states, ``with_cost``
    the cost of walking each back (else zeros), and each walk's last move (``-1`` for none).

    ``reduced`` (with ``with_cost``): the cost of the shortest walk back that the moves themselves
    show, the walk with its steps back taken out: a move that leaves the state unchanged is no
    step, and a move undoing the step before (``inverse_action``) cancels it, again and again as
    the steps before come up (``R U U' R'`` is no walk at all). The same random draws and states."""
    n = depths.shape[0]
    states = puzzle.goals(n)
    cost = np.zeros(n)
    inverse = np.asarray(puzzle.inverse_action, dtype=np.int64)
    undo_cost = puzzle.action_costs[inverse] if with_cost else None
    last = np.full(n, -1, dtype=np.int64)
    idx = np.arange(n)
    longest = int(depths.max(initial=0))
    kept = np.zeros((n, longest if reduced else 0), dtype=np.int64)  # the moves not cancelled, in order
    height = np.zeros(n, dtype=np.int64)  # how many of them
    for step in range(longest):
        active = idx[depths > step]
        if active.size == 0:
            break
        if nonbacktracking:
            legal = puzzle.legal_mask(states[active])
            prev = last[active]
            rows = np.flatnonzero(prev >= 0)
            undo = inverse[prev[rows]]
            ok = undo >= 0
            legal[rows[ok], undo[ok]] = False
            keys = rng.random(legal.shape)
            keys[~legal] = -1.0
            acts = np.argmax(keys, axis=1)
        else:
            acts = rng.integers(0, puzzle.num_actions, size=active.size)
        before = states[active]
        states[active] = puzzle.apply(before, acts)
        last[active] = acts
        if reduced:
            moved = np.any((states[active] != before).reshape(active.size, -1), axis=1)
            h = height[active]
            top = kept[active, np.maximum(h - 1, 0)]
            cancels = moved & (h > 0) & (inverse[top] == acts)
            height[active[cancels]] -= 1
            push = active[moved & ~cancels]
            kept[push, height[push]] = acts[moved & ~cancels]
            height[push] += 1
        elif undo_cost is not None:
            cost[active] += undo_cost[acts]
    if reduced and undo_cost is not None:
        mask = np.arange(longest)[None, :] < height[:, None]
        cost = np.where(mask, undo_cost[kept], 0.0).sum(axis=1)
    return states, cost, last


def scramble(puzzle: WalkablePuzzle, rng: np.random.Generator, n: int, depth: Depth) -> np.ndarray:
    """``n`` states made by applying uniformly random moves backwards from the goal, ``depth`` as
    in :func:`draw_depths`; each state stops at its own depth."""
    return walk(puzzle, rng, draw_depths(rng, n, depth), nonbacktracking=False)[0]


def random_walks(puzzle: WalkablePuzzle, rng: np.random.Generator, n: int, depth: Depth) -> np.ndarray:
    """``n`` non-backtracking random walks from the goal, ``depth`` as in :func:`walk_depths`: each
    step is a uniformly random move that changes the state and does not undo the step before it
    (``inverse_action``). A walk of ``k`` steps is at most ``k`` moves from the goal, and usually
    closer to ``k`` than a plain scramble of ``k``."""
    return walk(puzzle, rng, walk_depths(puzzle, rng, n, depth), nonbacktracking=True)[0]


def walks_with_cost(
    puzzle: WalkablePuzzle,
    rng: np.random.Generator,
    n: int,
    depth: Depth,
    *,
    nonbacktracking: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """``(states, cost float64[n])``: the puzzle's ``random_walks`` (or its ``scramble`` with
    ``nonbacktracking=False``) together with the cost of walking each state back to the goal, the
    sum of ``action_costs[inverse_action[a]]`` over its steps ``a``: an upper bound of its
    cost-to-go (the random-walk training label). With uniform costs it is ``uniform_cost`` times
    the number of steps and the puzzle's own walk is used (the same states and random stream as its
    ``random_walks``); unequal costs need moves that can be undone."""
    depths = walk_depths(puzzle, rng, n, depth) if nonbacktracking else draw_depths(rng, n, depth)
    if puzzle.uniform_cost is not None:
        own = puzzle.random_walks if nonbacktracking else puzzle.scramble
        return own(rng, n, depths), depths * puzzle.uniform_cost
    if np.any(np.asarray(puzzle.inverse_action) < 0):
        raise PuzzleError(
            f"{puzzle.name}: walks with unequal action costs need every move to have an inverse"
        )
    return walk(puzzle, rng, depths, nonbacktracking=nonbacktracking, with_cost=True)[:2]


def walks_with_undo(
    puzzle: WalkablePuzzle, rng: np.random.Generator, n: int, depth: Depth
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(states, cost float64[n], undo int64[n])``: non-backtracking walks as in
    :func:`walks_with_cost`, and for each the move that undoes its last step (``inverse_action`` of
    it; ``-1`` for a walk of no step): the training label of EfficientCube's policy
    (:mod:`puzzlezero.train.objectives.efficientcube`). Needs moves that can be undone."""
    inverse = np.asarray(puzzle.inverse_action, dtype=np.int64)
    if np.any(inverse < 0):
        raise PuzzleError(f"{puzzle.name}: its moves cannot all be undone, so a walk has no undo move")
    depths = walk_depths(puzzle, rng, n, depth)
    states, cost, last = walk(
        puzzle, rng, depths, nonbacktracking=True, with_cost=puzzle.uniform_cost is None
    )
    if puzzle.uniform_cost is not None:
        cost = depths * puzzle.uniform_cost
    return states, cost, np.where(last >= 0, inverse[np.maximum(last, 0)], -1)


def walks_with_undo_sets(
    puzzle: WalkablePuzzle, rng: np.random.Generator, n: int, depth: Depth
) -> tuple[np.ndarray, np.ndarray]:
    """``(states, undo float32[n, A])``: the puzzle's ``walks_with_undo``, each undo label as a
    distribution over the actions. Here it is one-hot: the move that undoes the walk's last step,
    one sample of the moves that could have been last. A puzzle whose moves commute knows them all
    and replaces its ``walks_with_undo_sets`` with their uniform distribution (Lights Out: every
    cell of the press set), the expected label of the walk, as informative and less noisy. A walk
    of no step gets a row of zeros."""
    states, _, undo = puzzle.walks_with_undo(rng, n, depth)
    dist = np.zeros((undo.shape[0], puzzle.num_actions), dtype=np.float32)
    has = np.flatnonzero(undo >= 0)
    dist[has, undo[has]] = 1.0
    return states, dist
