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
``max_states`` (the radius it reached is reported), so memory is bounded: 23 bytes an entry (twice
that while they are matched), plus the states of the level grown from and of the level being made
(a last level, whose children could not fit, keeps none). Time is bounded the same way: no round
starts after the deadline (``time_limit`` seconds after the start, or the ``deadline`` of the
solve it shortens a path for, the earlier), and a round's balls stop growing at that moment (the level
being made is dropped; the levels grown so far are matched), so a pass overruns its limit by one
batch of children, the joining of a level completed just before the deadline and one sort of the
entries at most, not by a whole round; on ``globe_6-4``'s rounds of 12 million entries that was
measured at up to 4.4 s (a solve of 64.4 s under a limit of 60 on a 2-vCPU AMD EPYC; the last
batch and the joining of its level take about 4 s after the last look at the clock, the matching
about 2 s).

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

__all__ = ["MAX_STATES", "Shortened", "can_shortcut", "memory_estimate", "path_states", "shortcut"]

#: default bound on the entries of one round's balls (23 bytes each, twice that while matched)
MAX_STATES = 2_000_000
#: states expanded per batch while the balls grow, at most; fewer where their children would
#: pass :data:`_CHUNK_BYTES` (the 8/25 globe's 450 stickers and 68 moves: 2,193)
_CHUNK = 65_536
#: bytes of one batch's children: bounds the memory of a batch and the time between two readings
#: of the clock (65,536 of the 8/25 globe's states have 4.5 million children: 2 GB, 10 s to hash)
_CHUNK_BYTES = 64 << 20


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
    balls of the last round reached, the ``states`` (ball entries) of all rounds, and ``seconds``."""

    actions: tuple[int, ...]
    rounds: int
    radius: int
    states: int
    seconds: float


#: bytes of a ball entry at the round's peak beyond its state: the entry (23 bytes) while its
#: level's lists are joined (twice) and while the entries are sorted and grouped by hash (48)
ENTRY_BYTES = 2 * 23 + 48


def memory_estimate(puzzle: Puzzle, max_states: int) -> int:
    """Peak bytes of a shortcut pass whose rounds hold at most ``max_states`` ball entries:
    :data:`ENTRY_BYTES` and one state each, and a batch of children. Calibrated with tracemalloc
    on a 374-move puzzle48 path: 2,000,000 states: estimated 286 MB, measured 188 MB; 6,000,000:
    estimated 871 MB, measured 649 MB (see tests/solver/test_budget.py)."""
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

    def moves_from_root(self, e: int) -> list[int]:
        """The moves from the entry's path state out to it."""
        out = []
        while self.parent[e] >= 0:
            out.append(int(self.move[e]))
            e = int(self.parent[e])
        return out[::-1]


def _grow(puzzle: Puzzle, path: np.ndarray, max_states: int, deadline: float = np.inf) -> _Balls:
    """Non-backtracking balls around every path state, level by level, within ``max_states`` and
    until ``deadline`` (a reading of :func:`.clock.now`): the level that would pass either is dropped."""
    n = path.shape[0]
    inverse = puzzle.inverse_action
    arange_a = np.arange(puzzle.num_actions)
    hashes = [puzzle.hash64(path)]
    pos = [np.arange(n, dtype=np.int32)]
    depth = [np.zeros(n, np.int16)]
    parent = [np.full(n, -1, np.int64)]
    move = [np.full(n, -1, np.int8)]
    front, front_idx, front_move = path, np.arange(n, dtype=np.int64), np.full(n, -1, np.int64)
    total, radius, rows = n, 0, _chunk(puzzle)
    while front.shape[0]:
        lvl_states, lvl_hash, lvl_parent, lvl_move = [], [], [], []
        count, late = 0, False
        for lo in range(0, front.shape[0], rows):
            if clock.now() > deadline:
                late = True
                break
            f = front[lo : lo + rows]
            children = puzzle.expand(f).reshape(f.shape[0] * puzzle.num_actions, *f.shape[1:])
            child_hash = puzzle.hash64(children)
            # the front is the last level grown (its hashes are hashes[-1]); a child whose hash is
            # its parent's is the parent (a move that changes nothing, or a collision, which at
            # worst loses a shortcut); nor is the move undoing the last one kept
            changed = child_hash.reshape(f.shape[0], -1) != hashes[-1][lo : lo + rows, None]
            back = front_move[lo : lo + rows]
            undo = np.where(back >= 0, inverse[np.maximum(back, 0)], -1)
            flat = np.flatnonzero(changed & (arange_a[None, :] != undo[:, None]))
            count += flat.size
            if total + count > max_states:
                break
            fi, ai = np.divmod(flat, puzzle.num_actions)
            lvl_states.append(children.take(flat, axis=0))
            lvl_hash.append(child_hash[flat])
            lvl_parent.append(front_idx[lo + fi])
            lvl_move.append(ai)
        if late or total + count > max_states or count == 0:
            break
        par = np.concatenate(lvl_parent)
        mv = np.concatenate(lvl_move)
        radius += 1
        hashes.append(np.concatenate(lvl_hash))
        pos.append(_gather(pos, par))
        depth.append(np.full(count, radius, np.int16))
        parent.append(par)
        move.append(mv.astype(np.int8))
        front_idx, front_move = np.arange(total, total + count, dtype=np.int64), mv
        total += count
        # a next level of at least one child each cannot fit: its parents' states are not kept
        front = np.concatenate(lvl_states) if total + count <= max_states else path[:0]
        del lvl_states
    return _Balls(
        np.concatenate(hashes),
        np.concatenate(pos),
        np.concatenate(depth),
        np.concatenate(parent),
        np.concatenate(move),
        radius,
    )


def _gather(chunks: list[np.ndarray], idx: np.ndarray) -> np.ndarray:
    """``np.concatenate(chunks)[idx]`` without copying the earlier chunks each level: ``idx`` all
    point into the last chunk (a level's parents are the level before)."""
    offset = sum(c.shape[0] for c in chunks[:-1])
    return chunks[-1][idx - offset]


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
    while clock.now() < stop:
        path = path_states(puzzle, start, acts)
        balls = _grow(puzzle, path, max_states, stop)
        rounds, states, radius = rounds + 1, states + balls.hashes.size, balls.radius
        taken: list[tuple[int, int, list[int]]] = []
        for _gain, i, j, near_i, near_j in sorted(_found(balls), reverse=True):
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
