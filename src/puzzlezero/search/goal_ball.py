"""Meeting the goal's ball: a search that stops as soon as it touches the states near the goal.

A beam ranks children by a network's estimate, and the estimate errs most where the labels are
noisiest; near the goal a search need not estimate at all. Every state within ``r`` moves of the
goal is found once, breadth first from the goal, and kept as its 64-bit hash and its depth (its
exact distance from the goal). A search that generates a child ``c`` of path cost ``g`` inside the
ball knows a solution of cost ``g + depth(c)`` at once: the moves down the ball from ``c`` to the
goal. It keeps the cheapest such solution of each instance and stops the instance as soon as no
later step can beat it (the next children would cost at least as much), so the beam's last ``r``
moves are exact and it ends up to ``r`` steps early. The same meet in the middle between a beam and
a breadth-first search from the goal is in CayleyPy's beam search (Chervov, Khoruzhii et al., "A
machine learning approach that beats Rubik's cubes", 2025).

**Which puzzles.** The depth of a state found from the goal is its distance *to* the goal only
where every move has an inverse and all moves cost the same (the cubes, the globes, the wreaths,
the sliding puzzles: :func:`~puzzlezero.search.shortcut.can_shortcut`); :func:`goal_ball` refuses
other puzzles. The ball grows from the puzzle's canonical goal; on a puzzle that counts other
states as solved too (wildcards), its depths are upper bounds and its solutions still reach a goal.

**The way home** (:func:`walk_home`): from a state at depth ``d``, one of its children is at depth
``d - 1``; the walk expands the state, takes the first such child and repeats. A hash collision
(two states, one hash) can only make the walk fail, which it says by returning ``None``: the
solution through that state is then not taken.

**Bounds.** The ball is grown a whole layer at a time and stops before the layer that would take it
past ``max_states`` (its :attr:`GoalBall.radius` is the last whole layer; a layer whose new states,
counted batch by batch before the repeats between batches are dropped, pass twice the room left is
not finished either), or at the ``deadline``;
it takes 9 bytes a state (hash and depth) once grown, and while it grows the states of the layer
it grows from and of the one it makes (three times ``max_states`` at most) and the children of one
batch besides (:func:`memory_estimate`). A process keeps the last two balls it grew
(:func:`cached_goal_ball`), so a bench grows its puzzle's once.

>>> from puzzlezero import make
>>> p = make("puzzle8")
>>> ball = goal_ball(p, 1_000)
>>> ball.radius, len(ball)  # every board within 10 moves of the goal
(10, 706)
>>> start = p.apply_moves(p.goal(), p.parse_moves("D R U"))
>>> int(ball.depth_of(p.hash64(start[None]))[0])
3
>>> p.format_moves(walk_home(p, ball, start))
['D', 'L', 'U']
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock

import numpy as np

from puzzlezero.budget import state_bytes
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.shortcut import can_shortcut

__all__ = ["MAX_STATES", "GoalBall", "cached_goal_ball", "goal_ball", "memory_estimate", "walk_home"]

#: the largest ball a solve may ask for (about 0.5 GB once grown, more while it grows)
MAX_STATES = 50_000_000
#: bytes a state of a grown ball takes: its hash and its depth
ENTRY_BYTES = 9
#: states expanded per batch while the ball grows
_BATCH = 20_000
#: balls kept by :func:`cached_goal_ball` (the most recently used)
_CACHED = 2


@dataclass(frozen=True)
class GoalBall:
    """The states within :attr:`radius` moves of ``puzzle``'s goal: their hashes (sorted) and their
    distances from the goal."""

    #: the puzzle's name
    puzzle: str
    #: ``uint64[M]``, sorted: the hashes of the states
    hashes: np.ndarray
    #: ``uint8[M]``: each state's distance from the goal, in the order of :attr:`hashes`
    depths: np.ndarray
    #: every state within this many moves of the goal is in the ball
    radius: int
    #: the bound on states it was grown under
    max_states: int

    def __len__(self) -> int:
        return int(self.hashes.size)

    def depth_of(self, hashes: np.ndarray) -> np.ndarray:
        """``int16[B]``: the depth of each hash's state, -1 for a state outside the ball."""
        hashes = np.asarray(hashes, dtype=np.uint64)
        if not self.hashes.size:
            return np.full(hashes.shape, -1, np.int16)
        pos = np.minimum(np.searchsorted(self.hashes, hashes), self.hashes.size - 1)
        found = self.hashes[pos] == hashes
        return np.where(found, self.depths[pos].astype(np.int16), np.int16(-1))


def check_puzzle(puzzle: Puzzle) -> None:
    """Refuse a puzzle whose moves do not all have an inverse of the same cost."""
    if not can_shortcut(puzzle):
        raise PuzzleError(
            f"a ball around {puzzle.name}'s goal needs moves that all have an inverse and cost the "
            "same; its moves do not"
        )


def memory_estimate(puzzle: Puzzle, max_states: int) -> int:
    """Peak bytes of :func:`goal_ball`: the ball (:data:`ENTRY_BYTES` a state, twice while a layer
    is merged in), the states of the layer grown from and of the one being made (three times the
    ball at most) and one batch's children."""
    state = state_bytes(puzzle)
    children = _BATCH * puzzle.num_actions * (state + 16)
    return int(max_states) * (2 * ENTRY_BYTES + 3 * state) + children


def goal_ball(puzzle: Puzzle, max_states: int, *, deadline: float | None = None) -> GoalBall:
    """Every state within as many moves of ``puzzle``'s goal as a ball of at most ``max_states``
    states holds, found breadth first (whole layers only; at the ``deadline``, a reading of
    :func:`.clock.now`, the layers grown so far)."""
    check_puzzle(puzzle)
    if int(max_states) < 1:
        raise PuzzleError(f"a goal ball needs room for at least one state, not {max_states}")
    goal = np.asarray(puzzle.goal(), dtype=puzzle.dtype)[None]
    hashes = puzzle.hash64(goal)
    depths = np.zeros(1, np.uint8)
    layer, radius = goal, 0
    while layer.shape[0] and radius < np.iinfo(np.uint8).max:
        if deadline is not None and clock.passed(deadline):
            break
        grown = _next_layer(puzzle, layer, hashes, int(max_states) - hashes.size, deadline)
        if grown is None:
            break
        layer, new = grown
        radius += 1
        hashes = np.concatenate([hashes, new])
        order = np.argsort(hashes, kind="stable")
        hashes = hashes[order]
        depths = np.concatenate([depths, np.full(new.size, radius, np.uint8)])[order]
    return GoalBall(puzzle.name, hashes, depths, radius, int(max_states))


def _next_layer(
    puzzle: Puzzle, layer: np.ndarray, seen: np.ndarray, room: int, deadline: float | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The states one move out from ``layer`` that are not in ``seen`` (sorted hashes), with
    their hashes; ``None`` when they are more than ``room`` or the deadline comes first."""
    states: list[np.ndarray] = []
    keys: list[np.ndarray] = []
    count = 0
    for lo in range(0, layer.shape[0], _BATCH):
        if deadline is not None and clock.passed(deadline):
            return None
        children = puzzle.expand(layer[lo : lo + _BATCH]).reshape(-1, *puzzle.state_shape)
        h = puzzle.hash64(children)
        pos = np.minimum(np.searchsorted(seen, h), seen.size - 1)
        fresh = seen[pos] != h
        h, children = h[fresh], children[fresh]
        h, first = np.unique(h, return_index=True)
        states.append(children[first])
        keys.append(h)
        count += h.size
        if count > 2 * room + _BATCH:  # repeats across batches are dropped below; far past it
            return None
    if not keys:
        return None
    h = np.concatenate(keys)
    h, first = np.unique(h, return_index=True)
    if h.size > room or h.size == 0:
        return None
    return np.concatenate(states)[first], h


def walk_home(puzzle: Puzzle, ball: GoalBall, state: np.ndarray) -> tuple[int, ...] | None:
    """The moves from ``state`` (inside ``ball``) down to the goal, one layer a move; ``None``
    where the state is not in the ball or the walk breaks (a hash collision)."""
    cur = np.asarray(state, dtype=puzzle.dtype)[None]
    depth = int(ball.depth_of(puzzle.hash64(cur))[0])
    if depth < 0:
        return None
    actions: list[int] = []
    while depth > 0:
        children = puzzle.expand(cur).reshape(-1, *puzzle.state_shape)
        down = np.flatnonzero(ball.depth_of(puzzle.hash64(children)) == depth - 1)
        if not down.size:
            return None
        actions.append(int(down[0]))
        cur, depth = children[down[0] : down[0] + 1], depth - 1
    return tuple(actions) if bool(puzzle.is_goal(cur)[0]) else None


_cache: OrderedDict[tuple[str, int], GoalBall] = OrderedDict()
_cache_lock = Lock()


def cached_goal_ball(puzzle: Puzzle, max_states: int, *, deadline: float | None = None) -> GoalBall:
    """:func:`goal_ball`, kept for the next call with the same puzzle and bound (the last
    :data:`_CACHED` balls); a ball cut short by its deadline is not kept."""
    key = (_fingerprint(puzzle), int(max_states))
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    ball = goal_ball(puzzle, max_states, deadline=deadline)
    if deadline is None or not clock.passed(deadline):
        with _cache_lock:
            _cache[key] = ball
            while len(_cache) > _CACHED:
                _cache.popitem(last=False)
    return ball


def _fingerprint(puzzle: Puzzle) -> str:
    """The puzzle's name, its goal and its moves' effect on the goal (two definitions of one
    name differ there)."""
    goal = np.asarray(puzzle.goal(), dtype=puzzle.dtype)[None]
    children = puzzle.expand(goal)
    return f"{puzzle.name}:{puzzle.hash64(goal)[0]}:{puzzle.hash64(children.reshape(-1, *puzzle.state_shape)).sum()}"
