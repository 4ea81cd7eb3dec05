"""Sokoban training states: random rooms, then reverse play that pulls boxes off their targets.

The paper trains on states generated from goal configurations by moving backwards, the goal
configurations of the Boxoban training levels. Where those level files are at hand,
:func:`goal_configurations` makes their goal configurations (``TrainConfig.rooms``,
``Sokoban.with_rooms``); otherwise rooms are generated here, in the spirit of the Boxoban
generator (Weber et al. 2017, Guez et al. 2018):

1. **Topology**: a random walk inside the walled ``H x W`` grid (start in the interior, turn with
   probability ``p_turn`` per step, ``2.5 * (H + W)`` steps) stamps a random 3x3 pattern of floor
   around each position it visits, so the floor is one connected region. With 50 steps on 10x10
   the floor covers 33 cells on average (median 33, 5%-95%: 18-47), close to Boxoban's levels.
2. **Goal configuration**: ``num_boxes`` targets on random floor cells with a box on each; the agent
   next to a box with free floor behind it (where the last push of a solution leaves it), else on
   any floor cell with a free neighbour. Rooms too small for that are drawn again.
3. **Reverse play** (:func:`reverse_play`): ``depth`` random agent steps to free neighbouring cells;
   a step away from an adjacent box pulls it along (always on the first step, which undoes the
   last push of a solution; with probability ``pull_prob`` afterwards). Each reverse step undoes
   one forward move, so a state made with depth ``d`` is solvable in at most ``d`` moves.

Room generation is vectorised over the batch; the reverse play is a small numba kernel. All the
randomness comes from the caller's ``numpy.random.Generator``, so seeded runs are reproducible.
"""

from __future__ import annotations

from typing import Literal, overload

import numba
import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.sokoban.cells import AGENT, BOX, TARGET, WALL

__all__ = ["generate_rooms", "reverse_play", "forward_solution", "carve_floor", "goal_configurations"]

_STEPS = np.array([(-1, 0), (1, 0), (0, -1), (0, 1)], dtype=np.int64)  # U D L R as (drow, dcol)
#: floor patterns stamped around the walker (centre always included, so the floor stays connected)
_STAMPS = np.array(
    [
        [[0, 0, 0], [1, 1, 1], [0, 0, 0]],
        [[0, 1, 0], [0, 1, 0], [0, 1, 0]],
        [[0, 0, 0], [1, 1, 0], [0, 1, 0]],
        [[0, 0, 0], [1, 1, 0], [1, 1, 0]],
        [[0, 0, 0], [0, 1, 1], [0, 1, 0]],
    ],
    dtype=bool,
).reshape(5, 9)
_STAMP_DR, _STAMP_DC = (a.reshape(-1) - 1 for a in np.divmod(np.arange(9), 3))


def carve_floor(
    rng: np.random.Generator, n: int, height: int, width: int, steps: int | None = None, p_turn: float = 0.35
) -> np.ndarray:
    """``bool[n, height, width]`` floor masks carved by random walks (border cells stay wall)."""
    steps = int(2.5 * (height + width)) if steps is None else steps
    floor = np.zeros((n, height, width), dtype=bool)
    rows = np.arange(n)[:, None]
    r = rng.integers(1, height - 1, size=n)
    c = rng.integers(1, width - 1, size=n)
    d = rng.integers(0, 4, size=n)
    for _ in range(steps):
        d = np.where(rng.random(n) < p_turn, rng.integers(0, 4, size=n), d)
        r = np.clip(r + _STEPS[d, 0], 1, height - 2)
        c = np.clip(c + _STEPS[d, 1], 1, width - 2)
        cells = (rows, r[:, None] + _STAMP_DR, c[:, None] + _STAMP_DC)
        floor[cells] |= _STAMPS[rng.integers(0, 5, size=n)]
    floor[:, [0, -1], :] = False
    floor[:, :, [0, -1]] = False
    return floor


def _shift(a: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """``out[..., r, c] = a[..., r + dr, c + dc]`` (wrapping; only read at interior cells)."""
    return np.roll(a, (-dr, -dc), axis=(-2, -1))


def _place(rng: np.random.Generator, floor: np.ndarray, num_boxes: int) -> tuple[np.ndarray, np.ndarray]:
    """Boxes on targets and an agent on each floor mask: ``(uint8[n, H*W] states, bool[n] ok)``."""
    n, h, w = floor.shape
    flat = floor.reshape(n, -1)
    key = rng.random(flat.shape)
    key[~flat] = 2.0
    boxes_at = np.argsort(key, axis=1)[:, :num_boxes]
    box = np.zeros_like(flat)
    np.put_along_axis(box, boxes_at, True, axis=1)
    agent, ok = _agent_cells(rng, floor, box.reshape(n, h, w))
    ok &= flat.sum(axis=1) >= num_boxes + 2
    states = np.where(flat, 0, WALL).astype(np.uint8)
    np.put_along_axis(states, boxes_at, BOX | TARGET, axis=1)
    states[np.arange(n), agent] = AGENT
    return states, ok


def _agent_cells(
    rng: np.random.Generator, floor: np.ndarray, box: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """An agent cell for each board ``bool[n, H, W]`` of floor and boxes: preferably one from which
    a box can be pulled (where the last push of a solution leaves the agent), else any free cell
    with a free neighbour. Returns ``(int64[n] cell index, bool[n] found)``."""
    n = floor.shape[0]
    free = floor & ~box
    has_free_nbr = np.zeros_like(free)
    pullable = np.zeros_like(free)
    for dr, dc in _STEPS:
        has_free_nbr |= _shift(free, dr, dc)
        pullable |= _shift(box, dr, dc) & _shift(free, -dr, -dc)
    key = rng.random(free.shape) + 2.0 * ~(pullable & free) + 4.0 * ~(free & has_free_nbr)
    agent = np.argmin(key.reshape(n, -1), axis=1)
    return agent, key.reshape(n, -1)[np.arange(n), agent] < 4.0


def goal_configurations(levels: np.ndarray, rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """The goal configurations of given levels ``uint8[n, H*W]`` (Boxoban training levels, say): the
    same walls and targets, a box on every target, the agent on a free cell chosen as in room
    generation (next to a box it can pull where there is one). Reverse play from these
    (``Sokoban.scramble_from``) gives training states of those very rooms, as DeepCubeA trained on
    the Boxoban training levels. A level whose boxes on their targets leave the agent no free cell
    with a free neighbour raises :class:`~puzzlezero.errors.InvalidStateError`."""
    levels = np.asarray(levels, dtype=np.uint8).reshape(-1, height * width)
    n = levels.shape[0]
    floor = (levels != WALL).reshape(n, height, width)
    box = ((levels & TARGET) != 0).reshape(n, height, width)
    agent, ok = _agent_cells(rng, floor, box)
    if not ok.all():
        raise InvalidStateError(
            f"level {int(np.flatnonzero(~ok)[0])}: no free cell for the agent once every box is on a target"
        )
    out = np.where(levels == WALL, WALL, levels & TARGET).astype(np.uint8)
    out[(out & TARGET) != 0] |= BOX
    out[np.arange(n), agent] |= AGENT
    return out


#: rounds of :func:`generate_rooms` (each draws again every room still missing) before it gives up
MAX_ROUNDS = 100


def generate_rooms(
    rng: np.random.Generator,
    n: int,
    height: int = 10,
    width: int = 10,
    num_boxes: int = 4,
    max_rounds: int = MAX_ROUNDS,
) -> np.ndarray:
    """``uint8[n, height*width]`` goal configurations of random rooms (every box on a target).

    A room too small for the boxes is drawn again, at most ``max_rounds`` times in all; rooms that
    still do not fit then raise :class:`PuzzleError` saying to lower ``num_boxes`` (a 10x10 room
    has about 33 floor cells; 4 boxes fit in all but a few rooms in a thousand)."""
    out = np.empty((n, height * width), dtype=np.uint8)
    todo = np.arange(n)
    for _ in range(max_rounds):
        if not todo.size:
            return out
        states, ok = _place(rng, carve_floor(rng, todo.size, height, width), num_boxes)
        out[todo[ok]] = states[ok]
        todo = todo[~ok]
    if todo.size:
        raise PuzzleError(
            f"{todo.size} of {n} random {height}x{width} rooms still had no space for {num_boxes} boxes "
            f"and the agent after {max_rounds} draws: lower num_boxes (or use a larger board)"
        )
    return out


@overload
def reverse_play(
    states: np.ndarray,
    rng: np.random.Generator,
    depths: np.ndarray,
    width: int,
    pull_prob: float = ...,
    chunk: int = ...,
    return_steps: Literal[False] = ...,
) -> np.ndarray: ...
@overload
def reverse_play(
    states: np.ndarray,
    rng: np.random.Generator,
    depths: np.ndarray,
    width: int,
    pull_prob: float = ...,
    chunk: int = ...,
    *,
    return_steps: Literal[True],
) -> tuple[np.ndarray, np.ndarray]: ...
def reverse_play(
    states: np.ndarray,
    rng: np.random.Generator,
    depths: np.ndarray,
    width: int,
    pull_prob: float = 0.5,
    chunk: int = 4096,
    return_steps: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Walk each state ``[n, H*W]`` backwards for ``depths[i]`` steps (see the module docstring).

    A step goes to a uniformly chosen free neighbour (floor or target without a box); an agent with
    none stays. Returns a new ``uint8[n, H*W]`` array; ``states`` is not modified. The walk runs in
    a numba kernel fed with random words drawn from ``rng`` (``chunk`` states at a time).

    With ``return_steps`` also ``int8[n, max(depths)]``: the direction (``U D L R`` = 0..3) of each
    reverse step, ``-1`` after the walk ended (its depth, or an agent boxed in). The forward moves
    ``1 0 3 2`` (the opposite directions) of these steps, last step first, solve the state: each
    pull is undone by a push, each walk by a walk back (:func:`forward_solution`).
    """
    s = np.array(states, dtype=np.uint8, copy=True)
    depths = np.asarray(depths, dtype=np.int64)
    offsets = np.array([-width, width, -1, 1], dtype=np.int64)
    agent = np.argmax((s & AGENT) != 0, axis=1)
    threshold = int(round(min(max(pull_prob, 0.0), 1.0) * 256))
    steps = np.full((s.shape[0], int(depths.max(initial=0))), -1, dtype=np.int8)
    for lo in range(0, s.shape[0], chunk):
        hi = min(lo + chunk, s.shape[0])
        words = rng.integers(0, 2**32, size=(hi - lo, int(depths[lo:hi].max(initial=0))), dtype=np.uint32)
        _walk_back(s[lo:hi], agent[lo:hi], depths[lo:hi], words, offsets, threshold, steps[lo:hi])
    return (s, steps) if return_steps else s


def forward_solution(steps: np.ndarray) -> list[int]:
    """The forward moves that undo one walk's reverse ``steps`` (a row of :func:`reverse_play`'s
    ``return_steps``): the opposite direction of each step, last step first."""
    row = np.asarray(steps)
    row = row[row >= 0]
    return [int(_OPPOSITE[d]) for d in row[::-1]]


_OPPOSITE = np.array([1, 0, 3, 2], dtype=np.int64)  # U<->D, L<->R


@numba.njit(cache=True, nogil=True)
def _walk_back(
    s: np.ndarray,
    agent: np.ndarray,
    depths: np.ndarray,
    words: np.ndarray,
    offsets: np.ndarray,
    threshold: int,
    steps: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """In place: for each state, ``depths[i]`` reverse steps; ``words[i, t]`` is the step's randomness
    (high bits choose the direction, the low byte decides a pull: ``< threshold`` of 256); the
    direction of step ``t`` goes to ``steps[i, t]``."""
    free = np.empty(4, dtype=np.int64)
    pulls = np.empty(4, dtype=np.int64)
    for i in range(s.shape[0]):
        p = agent[i]
        for t in range(depths[i]):
            n_free = 0
            n_pull = 0
            for d in range(4):
                if s[i, p + offsets[d]] & (WALL | BOX) == 0:
                    free[n_free] = d
                    n_free += 1
                    if s[i, p - offsets[d]] & BOX:
                        pulls[n_pull] = d
                        n_pull += 1
            if n_free == 0:
                break
            u = words[i, t]
            if t == 0 and n_pull > 0:  # undo the final push of a solution
                d = pulls[(u >> 8) % n_pull]
                pull = True
            else:
                d = free[(u >> 8) % n_free]
                pull = (s[i, p - offsets[d]] & BOX) != 0 and (u & 0xFF) < threshold
            a = p + offsets[d]
            steps[i, t] = d
            s[i, p] &= ~np.uint8(AGENT)
            s[i, a] |= np.uint8(AGENT)
            if pull:
                s[i, p - offsets[d]] &= ~np.uint8(BOX)
                s[i, p] |= np.uint8(BOX)
            p = a
