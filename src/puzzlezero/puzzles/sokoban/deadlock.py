"""Simple dead squares of Sokoban levels: cells from which a box can never reach any target.

A box can only be pushed, so a box on a square from which no sequence of pushes leads to a target
(a corner, a wall's side without targets) makes the level unsolvable. Such *dead squares* depend
only on the walls and targets: working backwards, a box on a target is fine, and a box on ``y``
could have come from ``x = y - d`` by a push in direction ``d`` when ``x`` is not a wall and the
agent's cell ``x - d`` behind it is not a wall either. The cells reached this way from the targets
(other boxes and the agent's access ignored) are the *live* squares; every other floor cell is
dead. This is the standard "simple deadlock" test of Sokoban solvers: it never calls a solvable
state dead, and it misses deadlocks made by several boxes together (two boxes side by side on a
wall, 2x2 blocks).

Used by :class:`~puzzlezero.puzzles.sokoban.Sokoban` with ``prune_dead_squares=True``, which treats
a push onto a dead square as impossible (off by default: the learned solver stands without it).

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("sokoban")
>>> s = p.parse("######\\n#@ $.#\\n#    #\\n######")
>>> dead = dead_squares(s[None], p.height, p.width)[0].reshape(p.height, p.width)
>>> [(int(r), int(c)) for r, c in np.argwhere(dead)]
[(1, 1), (2, 1), (2, 2), (2, 3), (2, 4)]
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from puzzlezero.puzzles.sokoban.cells import BOX, TARGET, WALL

__all__ = ["dead_squares", "has_dead_box"]

_STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def _at(a: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """``out[..., r, c] = a[..., r + dr, c + dc]`` (wrapping; only read where the border is wall)."""
    return np.roll(a, (-dr, -dc), axis=(-2, -1))


def _live(floor: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``bool[n, H, W]``: cells from which pushes can bring a box to a target (fixed point)."""
    live = targets & floor
    while True:
        grown = live.copy()
        for dr, dc in _STEPS:
            # a box pushed in direction (dr, dc) from x reaches x + d; x needs the agent at x - d
            grown |= floor & _at(floor, -dr, -dc) & _at(live, dr, dc)
        if np.array_equal(grown, live):
            return live
        live = grown


#: dead squares of recently seen layouts (walls and targets as bytes): a search asks for the same
#: level at every expansion
_CACHE: OrderedDict[bytes, np.ndarray] = OrderedDict()
_CACHE_SIZE = 4096


def dead_squares(states: np.ndarray, height: int, width: int) -> np.ndarray:
    """``bool[B, H*W]``: the floor cells of each level ``states[B, H*W]`` on which a box can never
    reach a target (never a target itself). Levels sharing walls and targets are computed once, and
    the last few thousand layouts are remembered."""
    states = np.asarray(states, dtype=np.uint8).reshape(-1, height * width)
    layout = np.where(states == WALL, WALL, states & TARGET).astype(np.uint8)
    first = layout[0].tobytes()
    if (layout == layout[:1]).all():  # one level (a search of one instance): look it up once
        keys, inverse = [first], np.zeros(len(layout), dtype=np.int64)
        unique = layout[:1]
    else:
        unique, inverse = np.unique(layout, axis=0, return_inverse=True)
        keys = [row.tobytes() for row in unique]
    out = np.empty(unique.shape, dtype=bool)
    todo = []
    for i, key in enumerate(keys):
        hit = _CACHE.get(key)
        if hit is None:
            todo.append(i)
        else:
            _CACHE.move_to_end(key)
            out[i] = hit
    if todo:
        grid = unique[todo].reshape(-1, height, width)
        floor = grid != WALL
        dead = (floor & ~_live(floor, (grid & TARGET) != 0)).reshape(len(todo), -1)
        for i, row in zip(todo, dead, strict=True):
            out[i] = row
            row.setflags(write=False)
            _CACHE[keys[i]] = row
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return out[inverse.reshape(-1)]


def has_dead_box(states: np.ndarray, height: int, width: int) -> np.ndarray:
    """``bool[B]``: a box stands on a dead square, so the level cannot be solved any more."""
    states = np.asarray(states, dtype=np.uint8).reshape(-1, height * width)
    return np.any(dead_squares(states, height, width) & ((states & BOX) != 0), axis=1)
