"""Shortcuts: a solution path made shorter by meeting in the middle around it.

A search's path ``s_0 ... s_n`` (``s_0`` the start, ``s_n`` a goal) may take a detour: two of its
states ``s_i`` and ``s_j`` (``i < j``) can be fewer than ``j - i`` moves apart. Balls grown around
every state of the path at once find each such pair whose shorter way has at most ``2r`` moves
(``r`` the balls' radius): a state ``x`` at ``a`` moves from ``s_i`` and ``b`` moves from ``s_j``
with ``a + b < j - i``. The moves ``i .. j`` of the path are replaced by the ``a`` moves from ``s_i``
to ``x`` and the ``b`` moves from ``x`` to ``s_j``, which are the inverses, in reverse order, of the
moves that led out of ``s_j`` to ``x``. That needs puzzles whose moves all have inverses and cost
the same (the sliding puzzles and the cubes); others are left as they are.

**One round**, vectorised over all the path's states: the balls grow a level at a time, each state
of a level expanded by every move that changes it except the one undoing the move that made it
(non-backtracking walks: on a sliding puzzle no other walk of fewer than 12 moves returns to where
it began, so the balls hold few repeats). Every state of every ball is an entry (its 64-bit hash,
the path position it grew from, its depth, its parent entry and the move from the parent); grouped
by hash, a group whose largest ``position - depth`` exceeds its smallest ``position + depth`` is a
shortcut of that gain. Shortcuts on disjoint stretches of the path are taken, largest gain first;
each new stretch is replayed (it must lead from ``s_i`` to ``s_j``: a hash collision is caught
there and skipped), and rounds repeat on the shorter path until one finds nothing.

**Bounds.** A round stops growing the balls at the level that would take their entries past
``max_states`` (the radius it reached is reported), so memory is bounded: 23 bytes an entry,
written in place into arrays of ``max_states`` entries (their pages taken as they are written;
48 bytes more an entry while they are matched), plus the states of the level grown from and of
the level being made (a last level, whose children could not fit, keeps none). Time is bounded the
same way: no round starts after the deadline (``time_limit`` seconds after the start, or the
``deadline`` of the solve it shortens a path for, the earlier), and a round's balls stop growing
before it, early enough for the matching to end by it as well: no batch of children is made unless
the deadline leaves room for one more batch (the longest the pass has made) and for matching every
entry there would then be, at the seconds an entry took in the round before (:data:`FINISH_SECONDS`
an entry in the first). The level being made is then kept as far as it grew: its entries are as
good as any (a state, the path position it grew from, its depth); the round only does not see all
of that level. A pass can still overrun by its first batch (made before any was timed) and, in its
first round, where matching is slower than :data:`FINISH_SECONDS`. The matching is not small:
2.4-4.9 s for ``globe_6-4``'s rounds of 10-15 million entries on a 2-vCPU AMD EPYC.

Measured: there are no such detours in the 35-puzzle's and the cube's paths; the 48-puzzle's and
the globes' beam paths have some (docs/results.md).

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("puzzle8")
>>> start = p.apply_moves(p.goal(), p.parse_moves("D D"))  # solved by U U
>>> detour = p.parse_moves("U L D L U L D L U L D L U U")  # a loop of 12 moves first
>>> bool(p.is_goal(p.apply_moves(start, detour)[None])[0])
True
>>> p.format_moves(shortcut(p, start, detour, max_states=10_000).actions)
['U', 'U']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock

__all__ = [
    "FINISH_SECONDS",
    "MAX_STATES",
    "Shortened",
    "can_shortcut",
    "memory_estimate",
    "path_states",
    "shortcut",
]

#: default bound on the entries of one round's balls (23 bytes each, 48 more while matched)
MAX_STATES = 2_000_000
#: states expanded per batch while the balls grow, at most; fewer where their children would
#: pass :data:`_CHUNK_BYTES` (the 8/25 globe's 450 stickers and 68 moves: 2,193)
_CHUNK = 65_536
#: bytes of one batch's children: bounds the memory of a batch and the time between two readings
#: of the clock (65,536 of the 8/25 globe's states have 4.5 million children: 2 GB, 10 s to hash)
_CHUNK_BYTES = 64 << 20
#: seconds a ball entry takes to match once the balls stop growing, assumed where a pass has not
#: measured it yet (its first round): 0.25-0.33 microseconds measured on a 2-vCPU AMD EPYC (rounds
#: of 10-15 million ``globe_6-4`` entries), a little more kept for slower or busier machines
FINISH_SECONDS = 4e-7
#: a round's matching is timed for the next round's rate from this many entries on (fewer: the
#: time is mostly not the entries')
_MEASURED = 100_000


def _chunk(puzzle: Puzzle) -> int:
    """States expanded per batch while the balls grow (:data:`_CHUNK`, :data:`_CHUNK_BYTES`)."""
    children = (
        puzzle.num_actions
        * int(np.prod(puzzle.state_shape, dtype=np.int64))
        * np.dtype(puzzle.dtype).itemsize
    )
    return max(1, min(_CHUNK, _CHUNK_BYTES // max(1, children)))


@dataclass(frozen=True)
class Shortened:
    """What :func:`shortcut` did: the new ``actions``, the ``rounds`` run, the ``radius`` the
    balls of the last round reached (a level the deadline cut short counts), the ``states`` (ball
    entries) of all rounds, and ``seconds``."""

    actions: tuple[int, ...]
    rounds: int
    radius: int
    states: int
    seconds: float


#: bytes of a ball entry at the round's peak beyond its state: the entry (23 bytes) and what
#: sorting and grouping the entries by hash takes (48)
ENTRY_BYTES = 23 + 48


def memory_estimate(puzzle: Puzzle, max_states: int) -> int:
    """Peak bytes of a shortcut pass whose rounds hold at most ``max_states`` ball entries:
    :data:`ENTRY_BYTES` and one state each, and a batch of children. Calibrated with tracemalloc
    on a 344-move puzzle48 path: 2,000,000 states: estimated 253 MB, measured 198 MB; 6,000,000:
    estimated 733 MB, measured 507 MB (see tests/solver/test_budget.py)."""
    shape = int(np.prod(puzzle.state_shape, dtype=np.int64)) * np.dtype(puzzle.dtype).itemsize
    return int(max_states) * (ENTRY_BYTES + shape) + _chunk(puzzle) * puzzle.num_actions * (shape + 1)


def can_shortcut(puzzle: Puzzle) -> bool:
    """Does :func:`shortcut` apply: every move has an inverse and all moves cost the same?"""
    try:
        inverse = puzzle.inverse_action
    except (NotImplementedError, PuzzleError):
        return False
    return bool(np.all(inverse >= 0)) and puzzle.uniform_cost is not None


def path_states(puzzle: Puzzle, start: np.ndarray, actions: Sequence[int]) -> np.ndarray:
    """The states ``s_0 .. s_n`` that ``actions`` pass through from ``start`` (``s_0``)."""
    states = np.empty((len(actions) + 1, *puzzle.state_shape), dtype=puzzle.dtype)
    states[0] = start
    cur = np.asarray(start, dtype=puzzle.dtype)[None]
    for k, a in enumerate(actions):
        cur = puzzle.apply(cur, np.array([a], dtype=np.int64))
        states[k + 1] = cur[0]
    return states


@dataclass
class _Balls:
    """The entries of the balls around a path: hash, path position, depth, parent entry, move."""

    hashes: np.ndarray
    pos: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    move: np.ndarray
    radius: int
    #: the reading of :func:`.clock.now` at which the balls stopped growing (matched after)
    grown_at: float

    def moves_from_root(self, e: int) -> list[int]:
        """The moves from the entry's path state out to it."""
        out = []
        while self.parent[e] >= 0:
            out.append(int(self.move[e]))
            e = int(self.parent[e])
        return out[::-1]


@dataclass
class _Pace:
    """What a pass has measured of its rounds: the seconds a ball entry takes to match once the
    balls stop growing (``finish``), the longest batch of children and the most entries one added."""

    finish: float
    batch_seconds: float = 0.0
    batch_entries: int = 0


def _grow(
    puzzle: Puzzle, path: np.ndarray, max_states: int, deadline: float = np.inf, pace: _Pace | None = None
) -> _Balls:
    """Non-backtracking balls around every path state, level by level, within ``max_states`` (the
    level that would pass it is dropped) and ending before ``deadline`` (a reading of
    :func:`.clock.now`) with time left to match the entries: no batch starts unless the
    deadline leaves room for it and for the entries after it, at the ``pace`` measured so far
    (which each batch updates); the level being made is kept as far as it grew."""
    pace = _Pace(FINISH_SECONDS) if pace is None else pace
    n = path.shape[0]
    inverse = puzzle.inverse_action
    arange_a = np.arange(puzzle.num_actions)
    # every entry's fields, written in place batch by batch (the pages are taken as they are
    # written), so that nothing is joined once the balls stop growing
    size = max(n, max_states)
    try:
        hashes, pos = np.empty(size, np.uint64), np.empty(size, np.int32)
        depth, parent, move = np.empty(size, np.int16), np.empty(size, np.int64), np.empty(size, np.int8)
    except MemoryError as e:
        raise PuzzleError(
            f"shortcut: max_states={max_states:,} ball entries (23 bytes each) do not fit in memory; lower it"
        ) from e
    hashes[:n], pos[:n], depth[:n], parent[:n], move[:n] = puzzle.hash64(path), np.arange(n), 0, -1, -1
    # the front: the last level grown (entries ``first`` to ``total``) and its states
    front, first, total, radius, rows = path, 0, n, 0, _chunk(puzzle)
    grown_at = -np.inf  # read before each batch and after it (the path's level has a batch at least)
    while front.shape[0]:
        lvl_states: list[np.ndarray] = []
        count, late = 0, False
        for lo in range(0, front.shape[0], rows):
            began = grown_at = clock.now()
            after = total + count + pace.batch_entries
            if began + pace.batch_seconds + pace.finish * after > deadline:
                late = True
                break
            f = front[lo : lo + rows]
            children = puzzle.expand(f).reshape(f.shape[0] * puzzle.num_actions, *f.shape[1:])
            child_hash = puzzle.hash64(children)
            # a child whose hash is its parent's is the parent (a move that changes nothing, or a
            # collision, which at worst loses a shortcut); nor is the move undoing the last one kept
            at = slice(first + lo, first + lo + f.shape[0])  # the batch's own entries
            changed = child_hash.reshape(f.shape[0], -1) != hashes[at, None]
            back = move[at].astype(np.int64)
            undo = np.where(back >= 0, inverse[np.maximum(back, 0)], -1)
            flat = np.flatnonzero(changed & (arange_a[None, :] != undo[:, None]))
            if total + count + flat.size <= max_states:
                fi, ai = np.divmod(flat, puzzle.num_actions)
                out = slice(total + count, total + count + flat.size)
                lvl_states.append(children.take(flat, axis=0))
                hashes[out], pos[out], depth[out] = child_hash[flat], pos[at][fi], radius + 1
                parent[out], move[out] = first + lo + fi, ai
            count += flat.size
            grown_at = clock.now()
            pace.batch_seconds = max(pace.batch_seconds, grown_at - began)
            pace.batch_entries = max(pace.batch_entries, int(flat.size))
            if total + count > max_states:
                break
        if total + count > max_states or count == 0:
            break  # the level that could not fit is not counted
        radius, first, total = radius + 1, total, total + count
        if late or total + count > max_states:
            break  # a level the deadline cut short, or one whose next level cannot fit: the last
        front = np.concatenate(lvl_states)
        del lvl_states
    return _Balls(hashes[:total], pos[:total], depth[:total], parent[:total], move[:total], radius, grown_at)


def _found(balls: _Balls) -> list[tuple[int, int, int, int, int]]:
    """Every shortcut as ``(gain, i, j, entry near s_i, entry near s_j)``, one per group of equal
    hashes that has one."""
    order = np.argsort(balls.hashes, kind="stable")
    h = balls.hashes[order]
    p = balls.pos[order].astype(np.int64)
    d = balls.depth[order].astype(np.int64)
    starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
    gain = np.maximum.reduceat(p - d, starts) - np.minimum.reduceat(p + d, starts)
    ends = np.r_[starts[1:], h.size]
    out = []
    for g in np.flatnonzero(gain > 0):
        lo, hi = starts[g], ends[g]
        near_i = lo + int(np.argmin(p[lo:hi] + d[lo:hi]))
        near_j = lo + int(np.argmax(p[lo:hi] - d[lo:hi]))
        out.append((int(gain[g]), int(p[near_i]), int(p[near_j]), int(order[near_i]), int(order[near_j])))
    return out


def shortcut(
    puzzle: Puzzle,
    start: np.ndarray,
    actions: Sequence[int],
    *,
    max_states: int = MAX_STATES,
    time_limit: float | None = None,
    deadline: float | None = None,
) -> Shortened:
    """``actions`` (a path from ``start``) with its detours replaced by shorter ways between the
    same two path states, found by meeting in the middle (see the module); never longer, and
    reaching the same final state. ``max_states`` bounds one round's balls; no round starts, and no
    ball grows, after ``time_limit`` seconds or after ``deadline`` (a reading of
    :func:`.clock.now`: the deadline of the solve whose path this shortens), the earlier (each
    ``None``: none). Puzzles that :func:`can_shortcut` rejects get the path back as it is."""
    t0 = clock.now()
    acts = [int(a) for a in actions]
    if max_states < 1:
        raise PuzzleError(f"shortcut: max_states must be >= 1, got {max_states}")
    rounds = states = radius = 0
    if not can_shortcut(puzzle) or len(acts) < 2:
        return Shortened(tuple(acts), 0, 0, 0, clock.now() - t0)
    inverse = puzzle.inverse_action
    start = np.asarray(start, dtype=puzzle.dtype)
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    pace = _Pace(FINISH_SECONDS)
    while clock.now() < stop:
        path = path_states(puzzle, start, acts)
        balls = _grow(puzzle, path, max_states, stop, pace)
        rounds, states, radius = rounds + 1, states + balls.hashes.size, balls.radius
        found = _found(balls)
        if balls.hashes.size >= _MEASURED:  # the next round's rate: this one's matching
            pace.finish = (clock.now() - balls.grown_at) / balls.hashes.size
        taken: list[tuple[int, int, list[int]]] = []
        for _gain, i, j, near_i, near_j in sorted(found, reverse=True):
            if any(i < tj and ti < j for ti, tj, _ in taken):
                continue
            out_of_j = balls.moves_from_root(near_j)
            way = balls.moves_from_root(near_i) + [int(inverse[a]) for a in reversed(out_of_j)]
            if len(way) >= j - i or not np.array_equal(puzzle.apply_moves(path[i], way), path[j]):
                continue  # a hash collision: not a way between the two
            taken.append((i, j, way))
        if not taken:
            break
        for i, j, way in sorted(taken, reverse=True):  # from the end, so positions stay valid
            acts[i:j] = way
    return Shortened(tuple(acts), rounds, radius, states, clock.now() - t0)
