"""Step-optimal Sokoban solutions: A* over pushes, each costing the agent's walk to it plus one step.

A Sokoban solution is walks between pushes, and between two pushes the agent takes a shortest
walk, so a shortest solution is found by searching over *pushes* only: a node is the boxes and the
agent's cell right after a push (the cell the pushed box left; the start's agent cell at the root),
and an edge is a push, whose cost is the breadth-first walking distance from the agent to the cell
behind the box, plus the push step itself. That search has a few states per box arrangement
instead of one per free cell, and its costs are the steps of the puzzle, so the least-cost path it
finds is a step-optimal solution. The agent's cell is kept exactly, not as the room it can reach:
two agents in the same room are a different number of steps from the next push.

The heuristic (:func:`push_lower_bound`, also :func:`sokoban_heuristic` for the batched searches)
is admissible and consistent:

* **push distances**: for each target, the least number of pushes that brings a box from each cell
  to it with the other boxes ignored, by a breadth-first search of pulls from the target over the
  room's floor (a pull needs the cell beyond free of walls for the agent);
* **matching**: the least sum of push distances over the one-to-one assignments of boxes to
  targets (the Hungarian method), since each target ends up with its own box and each push is a
  step;
* **walk to the first push**: the agent's walk to the nearest legal push (with the boxes in
  place) is added, since no push happens before it. It is computed when a node is first taken
  from the open list, which puts the node back if its estimate rose.

Dead ends are cut, which keeps optimality since none of them can be solved: a push onto a dead
square (:func:`~puzzlezero.puzzles.sokoban.deadlock.dead_squares`), a push that closes a 2x2 square
of walls and boxes with a box off its target (none of those boxes can move again), and an
arrangement with no assignment of boxes to targets at finite push distances.

The search runs in a compiled loop that pauses every few thousand expansions, when the time on
:mod:`puzzlezero.search.clock` is read. It stops by name on the first bound reached: ``"node
limit"`` (``max_nodes`` pushes generated), ``"time limit"`` (``time_limit`` or ``deadline``) or
``"memory limit"`` (its node table, index and open list would pass ``max_memory`` bytes; default:
the process's memory budget, :func:`puzzlezero.budget.memory_budget`); ``"exhausted"`` means no
solution exists.

>>> from puzzlezero import make
>>> p = make("sokoban")
>>> r = solve_sokoban(p, p.parse("######\\n#@ $.#\\n######"))
>>> r.status, [p.action_names[a] for a in r.actions]
('solved', ['R', 'R'])

Why one file: it is one algorithm; the push graph, its heuristic and the A* loop share compiled
kernels and their data layout.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numba as nb
import numpy as np

from puzzlezero.budget import format_size, memory_budget
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.sokoban.cells import AGENT, BOX, TARGET, WALL
from puzzlezero.puzzles.sokoban.deadlock import dead_squares
from puzzlezero.puzzles.sokoban.rules import Sokoban
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, Status, check_positive

__all__ = ["solve_sokoban", "sokoban_heuristic", "push_lower_bound", "push_distances", "DEAD_END"]

#: the heuristic's value for a state that can no longer be solved (above any solvable state's cost)
DEAD_END = 1 << 20
#: what the solver reports when its memory bound stopped it
MEMORY_LIMIT: Status = "memory limit"

_FOUND, _EXHAUSTED, _PAUSED, _FULL, _NODE_LIMIT = 1, 0, -1, 2, 3
_GBITS = 24
_GMASK = (1 << _GBITS) - 1
_NEVER = np.iinfo(np.int32).max
#: expansions per call of the compiled loop between two readings of the clock (about 50 ms)
_CHUNK = 5_000
#: nodes of the first node table (it doubles while the memory bound allows)
_FIRST_CAPACITY = 1 << 12


# ---- the level ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Level:
    """What the search reads of a level besides its boxes and agent (walls and targets only)."""

    width: int
    wall: np.ndarray  # uint8[HW], 1 on walls
    target: np.ndarray  # uint8[HW], 1 on targets
    dead: np.ndarray  # uint8[HW], 1 on dead squares
    pdist: np.ndarray  # int64[K, HW]: pushes from each cell to each target, DEAD_END if none
    offsets: np.ndarray  # int64[4]: cell steps of U D L R


@nb.njit(cache=True)
def _pull_distances(wall: np.ndarray, targets: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``int64[K, HW]``: least pushes from each cell to each target, other boxes ignored."""
    hw = wall.shape[0]
    out = np.full((targets.shape[0], hw), DEAD_END, dtype=np.int64)
    queue = np.empty(hw, dtype=np.int64)
    for k in range(targets.shape[0]):
        out[k, targets[k]] = 0
        queue[0] = targets[k]
        head, tail = 0, 1
        while head < tail:
            y = queue[head]
            head += 1
            for d in range(4):
                x = y - offsets[d]  # a push in direction d took the box from x to y
                behind = x - offsets[d]  # the agent's cell for that push
                if 0 <= behind < hw and wall[x] == 0 and wall[behind] == 0 and out[k, x] == DEAD_END:
                    out[k, x] = out[k, y] + 1
                    queue[tail] = x
                    tail += 1
    return out


def push_distances(state: np.ndarray, height: int, width: int) -> np.ndarray:
    """``int64[K, H*W]``: for each target of the level ``state[H*W]`` (row-major order), the least
    number of pushes that brings a box from each cell onto it with no other box in the room
    (:data:`DEAD_END` where none does, walls included)."""
    state = np.asarray(state, dtype=np.uint8).reshape(height * width)
    wall = (state == WALL).astype(np.uint8)
    targets = np.flatnonzero(state & TARGET).astype(np.int64)
    offsets = np.array([-width, width, -1, 1], dtype=np.int64)
    return _pull_distances(wall, targets, offsets)  # type: ignore[no-any-return]


#: levels seen lately (walls and targets as bytes): a batched heuristic meets the same level again
_LEVELS: OrderedDict[tuple[bytes, int], _Level] = OrderedDict()
_LEVELS_SIZE = 256


def _level(state: np.ndarray, height: int, width: int) -> _Level:
    layout = np.where(state == WALL, WALL, state & TARGET).astype(np.uint8)
    key = (layout.tobytes(), width)
    hit = _LEVELS.get(key)
    if hit is not None:
        _LEVELS.move_to_end(key)
        return hit
    level = _Level(
        width=width,
        wall=(layout == WALL).astype(np.uint8),
        target=(layout == TARGET).astype(np.uint8),
        dead=dead_squares(layout[None], height, width)[0].astype(np.uint8),
        pdist=push_distances(layout, height, width),
        offsets=np.array([-width, width, -1, 1], dtype=np.int64),
    )
    _LEVELS[key] = level
    while len(_LEVELS) > _LEVELS_SIZE:
        _LEVELS.popitem(last=False)
    return level


# ---- the compiled parts: matching, walks, pushes ---------------------------------------------------
@nb.njit(cache=True)
def _matching(pdist: np.ndarray, boxes: np.ndarray, work: np.ndarray) -> int:
    """Least sum of push distances over the assignments of ``boxes[K]`` to the ``K`` targets
    (Hungarian method, O(K^3)); :data:`DEAD_END` or more when every assignment has a dead pair.
    ``work``: ``int64[6, K + 1]`` scratch."""
    n = boxes.shape[0]
    big = np.int64(1) << 50
    u, v, p, way, minv, used = work[0], work[1], work[2], work[3], work[4], work[5]
    u[:] = 0
    v[:] = 0
    p[:] = 0
    way[:] = 0
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv[:] = big
        used[:] = 0
        while True:
            used[j0] = 1
            i0 = p[j0]
            delta = big
            j1 = 0
            for j in range(1, n + 1):
                if used[j] == 0:
                    cur = pdist[j - 1, boxes[i0 - 1]] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(n + 1):
                if used[j] == 1:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    total = 0
    for j in range(1, n + 1):
        total += pdist[j - 1, boxes[p[j] - 1]]
    return total


@nb.njit(cache=True)
def _walk(wall, boxmark, stamp, start, offsets, seen, dist, queue) -> None:  # noqa: ANN001
    """Breadth-first walking distances from ``start`` around walls and the boxes marked
    ``boxmark == stamp``: ``dist[c]`` is valid where ``seen[c] == stamp``."""
    seen[start] = stamp
    dist[start] = 0
    queue[0] = start
    head, tail = 0, 1
    while head < tail:
        c = queue[head]
        head += 1
        for d in range(4):
            n = c + offsets[d]
            if seen[n] != stamp and wall[n] == 0 and boxmark[n] != stamp:
                seen[n] = stamp
                dist[n] = dist[c] + 1
                queue[tail] = n
                tail += 1


@nb.njit(cache=True)
def _frozen(wall, target, boxmark, stamp, cell, width) -> bool:  # noqa: ANN001
    """A 2x2 square holding ``cell`` is all walls and boxes with a box off its target."""
    for corner in range(4):  # the square's top-left cell: up-left of `cell`, up, left, `cell`
        top = cell - (width if corner < 2 else 0) - (1 - corner % 2)
        blocked = True
        off_target = False
        for part in range(4):
            c = top + (width if part >= 2 else 0) + part % 2
            is_box = boxmark[c] == stamp
            if wall[c] == 0 and not is_box:
                blocked = False
                break
            if is_box and target[c] == 0:
                off_target = True
        if blocked and off_target:
            return True
    return False


@nb.njit(cache=True)
def _pushes(lv_wall, lv_target, lv_dead, pdist, offsets, width, boxes, agent, stamp, scratch,
            kid_boxes, kid_cost, kid_h, work):  # fmt: skip  # noqa: ANN001
    """The legal pushes of one node that do not end in a dead end: fills ``kid_boxes[m, K]`` (sorted),
    ``kid_cost[m]`` (walk + 1) and ``kid_h[m]`` (the matching); the pushed box's old cell is the
    child's agent, ``kid_boxes``' row ``m`` column ``K``. Returns ``(m, pushes generated)``."""
    seen, dist, queue, boxmark = scratch[0], scratch[1], scratch[2], scratch[3]
    k = boxes.shape[0]
    for i in range(k):
        boxmark[boxes[i]] = stamp
    _walk(lv_wall, boxmark, stamp, agent, offsets, seen, dist, queue)
    m = 0
    generated = 0
    for i in range(k):
        b = boxes[i]
        for d in range(4):
            frm, to = b - offsets[d], b + offsets[d]
            if seen[frm] != stamp or lv_wall[to] != 0 or boxmark[to] == stamp:
                continue
            generated += 1
            if lv_dead[to] != 0:
                continue
            boxmark[b] = stamp - 1
            boxmark[to] = stamp
            frozen = _frozen(lv_wall, lv_target, boxmark, stamp, to, width)
            boxmark[to] = stamp - 1
            boxmark[b] = stamp
            if frozen:
                continue
            row = kid_boxes[m]
            pos = 0
            for j in range(k):  # the boxes with b moved to `to`, kept sorted
                if j != i:
                    row[pos] = boxes[j]
                    pos += 1
            row[k - 1] = to
            j = k - 1
            while j > 0 and row[j - 1] > row[j]:
                row[j - 1], row[j] = row[j], row[j - 1]
                j -= 1
            h = _matching(pdist, row[:k], work)
            if h >= DEAD_END:
                continue
            row[k] = b
            kid_cost[m] = dist[frm] + 1
            kid_h[m] = h
            m += 1
    for i in range(k):
        boxmark[boxes[i]] = stamp - 1
    return m, generated


@nb.njit(cache=True)
def _state_bound(lv_wall, lv_target, lv_dead, pdist, offsets, width, boxes, agent, scratch,
                 kid_boxes, kid_cost, kid_h, work) -> int:  # fmt: skip  # noqa: ANN001
    """The heuristic of one state: 0 solved, :data:`DEAD_END` for a dead end, else the matching
    plus the walk to the nearest push that does not end in one."""
    k = boxes.shape[0]
    for i in range(k):
        if lv_dead[boxes[i]] != 0:
            return DEAD_END
    h = _matching(pdist, boxes, work)
    if h == 0 or h >= DEAD_END:
        return h
    scratch[4, 0] += 2
    stamp = scratch[4, 0]
    boxmark = scratch[3]
    for i in range(k):
        boxmark[boxes[i]] = stamp
    for i in range(k):
        if _frozen(lv_wall, lv_target, boxmark, stamp, boxes[i], width):
            return DEAD_END
    m, _ = _pushes(lv_wall, lv_target, lv_dead, pdist, offsets, width, boxes, agent, stamp, scratch,
                   kid_boxes, kid_cost, kid_h, work)  # fmt: skip
    if m == 0:
        return DEAD_END
    return h + kid_cost[:m].min() - 1


# ---- the open list and the node table -------------------------------------------------------------
@nb.njit(cache=True, inline="always")
def _hash(boxes: np.ndarray, agent: int) -> np.uint64:
    z = np.uint64(agent + 1)
    for i in range(boxes.shape[0]):
        z = (z ^ np.uint64(boxes[i])) * np.uint64(0x9E3779B97F4A7C15)
        z ^= z >> np.uint64(29)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True)
def _find(index, node_boxes, node_agent, boxes, agent) -> int:  # noqa: ANN001
    """The index slot of ``(boxes, agent)``: its node is ``index[slot] - 1``, or the slot is free."""
    mask = index.shape[0] - 1
    slot = np.int64(_hash(boxes, agent) & np.uint64(mask))
    k = boxes.shape[0]
    while index[slot] != 0:
        j = index[slot] - 1
        if node_agent[j] == agent:
            same = True
            for i in range(k):
                if node_boxes[j, i] != boxes[i]:
                    same = False
                    break
            if same:
                return int(slot)
        slot = (slot + 1) & mask
    return int(slot)


@nb.njit(cache=True)
def _reindex(index, node_boxes, node_agent, n) -> None:  # noqa: ANN001
    index[:] = 0
    for j in range(n):
        index[_find(index, node_boxes, node_agent, node_boxes[j], node_agent[j])] = j + 1


@nb.njit(cache=True)
def _heap_push(keys, items, size, key, item) -> int:  # noqa: ANN001
    i = size
    while i > 0:
        up = (i - 1) >> 1
        if keys[up] <= key:
            break
        keys[i], items[i] = keys[up], items[up]
        i = up
    keys[i], items[i] = key, item
    return size + 1


@nb.njit(cache=True)
def _heap_pop(keys, items, size) -> int:  # noqa: ANN001
    """Remove the least key (read it at ``keys[0]`` first); returns the new size."""
    size -= 1
    key, item = keys[size], items[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and keys[c + 1] < keys[c]:
            c += 1
        if keys[c] >= key:
            break
        keys[i], items[i] = keys[c], items[c]
        i = c
    if size > 0:
        keys[i], items[i] = key, item
    return size


@nb.njit(cache=True, inline="always")
def _key(f: int, g: int) -> np.int64:
    """Open-list order: least ``f``, then greatest ``g``."""
    return (np.int64(f) << _GBITS) | np.int64(_GMASK - g)


@nb.njit(cache=True)
def _run(lv_wall, lv_target, lv_dead, pdist, offsets, width, node_boxes, node_agent, node_g, node_h,
         parent, closed, full, index, heap_keys, heap_items, ctx, budget, max_nodes, scratch,
         kid_boxes, kid_cost, kid_h, work) -> int:  # fmt: skip  # noqa: ANN001
    """A* until a goal is taken from the open list (:data:`_FOUND`, ``ctx[4]`` its node), the list
    is empty, ``budget`` expansions are done (:data:`_PAUSED`), ``max_nodes`` pushes are generated
    (``-1``: no cap) or the node table or open list is too full to expand (:data:`_FULL`).
    ``ctx``: ``[nodes, open entries, pushes generated, expansions, goal node]``."""
    k = node_boxes.shape[1]
    cap, hcap = node_boxes.shape[0], heap_keys.shape[0]
    while budget > 0:
        if ctx[1] == 0:
            return _EXHAUSTED
        if max_nodes >= 0 and ctx[2] >= max_nodes:
            return _NODE_LIMIT
        if ctx[0] + 4 * k > cap or ctx[1] + 4 * k + 1 > hcap:
            return _FULL
        key, u = heap_keys[0], heap_items[0]
        ctx[1] = _heap_pop(heap_keys, heap_items, ctx[1])
        g = _GMASK - (key & _GMASK)
        if g != node_g[u] or closed[u] <= g:
            continue  # an entry left behind by a shorter path, or a node expanded already
        if node_h[u] == 0:
            ctx[4] = u
            return _FOUND
        scratch[4, 0] += 2
        m, generated = _pushes(lv_wall, lv_target, lv_dead, pdist, offsets, width, node_boxes[u, :],
                               node_agent[u], scratch[4, 0], scratch, kid_boxes, kid_cost, kid_h,
                               work)  # fmt: skip
        if full[u] == 0:
            full[u] = 1
            if m == 0:
                closed[u] = g
                continue
            walk = kid_cost[:m].min() - 1
            if walk > 0:  # the estimate rose: back to the open list
                node_h[u] += walk
                ctx[1] = _heap_push(heap_keys, heap_items, ctx[1], _key(g + node_h[u], g), u)
                continue
        budget -= 1
        ctx[3] += 1
        ctx[2] += generated
        closed[u] = g
        for c in range(m):
            row = kid_boxes[c]
            cg = g + kid_cost[c]
            slot = _find(index, node_boxes, node_agent, row[:k], row[k])
            j = index[slot] - 1
            if j >= 0:
                if cg >= node_g[j]:
                    continue
            else:
                j = ctx[0]
                ctx[0] += 1
                node_boxes[j, :] = row[:k]
                node_agent[j] = row[k]
                node_h[j] = kid_h[c]
                closed[j] = _NEVER
                full[j] = 0
                index[slot] = j + 1
            node_g[j] = cg
            parent[j] = u
            ctx[1] = _heap_push(heap_keys, heap_items, ctx[1], _key(cg + node_h[j], cg), j)
    return _PAUSED


# ---- the driver --------------------------------------------------------------------------------
class _Search:
    """The arrays of one search: node table, index and open list, grown by doubling (capacities
    are powers of two: the index is twice the capacity, and its slot is the hash's low bits)."""

    def __init__(self, num_boxes: int, capacity: int) -> None:
        self.k = num_boxes
        self.capacity = 0
        self.node_boxes = np.empty((0, num_boxes), dtype=np.int16)
        self.node_agent = np.empty(0, dtype=np.int16)
        self.node_g = np.empty(0, dtype=np.int32)
        self.node_h = np.empty(0, dtype=np.int32)
        self.parent = np.empty(0, dtype=np.int32)
        self.closed = np.empty(0, dtype=np.int32)
        self.full = np.empty(0, dtype=np.uint8)
        self.heap_keys = np.empty(0, dtype=np.int64)
        self.heap_items = np.empty(0, dtype=np.int32)
        self.index = np.zeros(2, dtype=np.int64)
        self.ctx = np.zeros(5, dtype=np.int64)
        self.grow(capacity)

    @staticmethod
    def bytes_for(num_boxes: int, capacity: int) -> int:
        """Bytes of the arrays at ``capacity`` nodes: the nodes (boxes, agent, g, h, parent,
        closed, flag), an index of twice as many slots and an open list of twice as many entries."""
        return capacity * (2 * num_boxes + 2 + 4 * 4 + 1) + 2 * capacity * 8 + 2 * capacity * 12

    def add_root(self, boxes: np.ndarray, agent: int, h: int) -> None:
        self.node_boxes[0], self.node_agent[0] = boxes, agent
        self.node_g[0], self.node_h[0], self.parent[0] = 0, h, -1
        self.closed[0], self.full[0] = _NEVER, 1  # the root's estimate has its walk already
        self.index[_find(self.index, self.node_boxes, self.node_agent, boxes, agent)] = 1
        self.heap_keys[0], self.heap_items[0] = int(_key(h, 0)), 0
        self.ctx[:] = (1, 1, 1, 0, -1)

    def run(self, level: _Level, budget: int, max_nodes: int, work: tuple[np.ndarray, ...]) -> int:
        """At most ``budget`` expansions of the compiled loop (:func:`_run`); returns its code."""
        arrays = (self.node_boxes, self.node_agent, self.node_g, self.node_h, self.parent, self.closed,
                  self.full, self.index, self.heap_keys, self.heap_items, self.ctx)  # fmt: skip
        return int(_run(*_level_args(level), *arrays, budget, max_nodes, *work))  # type: ignore[call-arg]  # numba Dispatcher stub

    def grow(self, capacity: int) -> None:
        n = int(self.ctx[0])
        for name in ("node_boxes", "node_agent", "node_g", "node_h", "parent", "closed", "full"):
            old = getattr(self, name)
            new = np.empty((capacity, *old.shape[1:]), dtype=old.dtype)
            new[:n] = old[:n]
            setattr(self, name, new)
        for name in ("heap_keys", "heap_items"):
            old = getattr(self, name)
            new = np.empty(2 * capacity, dtype=old.dtype)
            new[: self.ctx[1]] = old[: self.ctx[1]]
            setattr(self, name, new)
        self.index = np.zeros(2 * capacity, dtype=np.int64)
        _reindex(self.index, self.node_boxes, self.node_agent, n)
        self.capacity = capacity


def _board(puzzle: Puzzle) -> tuple[int, int]:
    """``(height, width)`` of a Sokoban puzzle; any other puzzle is refused by name."""
    if not isinstance(puzzle, Sokoban):
        raise PuzzleError(
            f"the Sokoban solver takes Sokoban levels, not {puzzle.name or type(puzzle).__name__}"
        )
    return puzzle.height, puzzle.width


def _read(puzzle: Puzzle, state: np.ndarray) -> tuple[np.ndarray, int]:
    """The checked level: ``(sorted box cells int16[K], agent cell)``."""
    if not isinstance(puzzle, Sokoban):
        raise PuzzleError(
            f"the Sokoban solver takes Sokoban levels, not {puzzle.name or type(puzzle).__name__}"
        )
    puzzle.validate(state)
    boxes = np.flatnonzero(state & BOX).astype(np.int16)
    agent = int(np.flatnonzero(state & AGENT)[0])
    return boxes, agent


def _scratch(hw: int, k: int) -> tuple[np.ndarray, ...]:
    scratch = np.zeros((5, hw), dtype=np.int64)
    return (
        scratch,
        np.zeros((4 * k, k + 1), dtype=np.int16),
        np.zeros(4 * k, dtype=np.int64),
        np.zeros(4 * k, dtype=np.int64),
        np.zeros((6, k + 1), dtype=np.int64),
    )


def _level_args(level: _Level) -> tuple[object, ...]:
    return level.wall, level.target, level.dead, level.pdist, level.offsets, level.width


def _dead_end_reason(state: np.ndarray, level: _Level) -> str:
    dead = np.flatnonzero((state & BOX).astype(bool) & (level.dead != 0))
    if dead.size:
        r, c = divmod(int(dead[0]), level.width)
        return f"the box at row {r} col {c} stands where no push brings it to a target"
    return (
        "its boxes are stuck: a box off its target in a 2x2 square of walls and boxes, or no way to "
        "bring every box to a target of its own"
    )


def push_lower_bound(puzzle: Puzzle, state: np.ndarray) -> int:
    """The heuristic of one level ``state[H*W]`` in steps: the least sum of push distances over the
    assignments of boxes to targets plus the agent's walk to its nearest push (0 when solved,
    :data:`DEAD_END` when no solution exists any more)."""
    state = np.asarray(state, dtype=np.uint8).reshape(-1)
    boxes, agent = _read(puzzle, state)
    height, width = _board(puzzle)
    level = _level(state, height, width)
    return int(_state_bound(*_level_args(level), boxes, agent, *_scratch(state.size, boxes.size)))  # type: ignore[call-arg]  # numba Dispatcher stub


def sokoban_heuristic(puzzle: Puzzle) -> Callable[[np.ndarray], np.ndarray]:
    """An admissible heuristic ``states[B, H*W] -> float32[B]`` (:func:`push_lower_bound` of each
    state; :data:`DEAD_END` for a dead end) for :func:`puzzlezero.search.bwas` and ``--heuristic
    pdb``. The states may be of different levels; each level's push distances are computed once
    and the last few hundred levels are remembered."""
    height, width = _board(puzzle)
    hw = height * width

    def heuristic(states: np.ndarray) -> np.ndarray:
        states = np.asarray(states, dtype=np.uint8).reshape(-1, hw)
        out = np.empty(states.shape[0], dtype=np.float32)
        scratch: dict[int, tuple[np.ndarray, ...]] = {}
        for i, s in enumerate(states):
            boxes = np.flatnonzero(s & BOX).astype(np.int16)
            agent = int(np.argmax((s & AGENT) != 0))
            level = _level(s, height, width)
            if level.pdist.shape[0] != boxes.size:
                raise InvalidStateError(
                    f"state {i} has {boxes.size} boxes and {level.pdist.shape[0]} targets: a level needs "
                    "as many boxes as targets"
                )
            work = scratch.setdefault(boxes.size, _scratch(hw, boxes.size))
            out[i] = _state_bound(*_level_args(level), boxes, agent, *work)  # type: ignore[call-arg]  # numba Dispatcher stub
        return out

    heuristic.name = "push-distance matching"  # type: ignore[attr-defined]
    heuristic.nbytes = 0  # type: ignore[attr-defined]
    return heuristic


def solve_sokoban(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    max_memory: int | None = None,
) -> SearchResult:
    """A step-optimal solution of one Sokoban level ``state[H*W]`` by A* over pushes (module
    docstring), or the bound that stopped the search first, by name: ``"node limit"`` after
    ``max_nodes`` generated pushes (``nodes_generated`` counts pushes, the root included),
    ``"time limit"`` at ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`) or
    ``time_limit`` seconds after the start, whichever comes first, ``"memory limit"`` when the
    search's arrays would pass ``max_memory`` bytes (default: :func:`~puzzlezero.budget.memory_budget`).
    ``"exhausted"``: the level has no solution. ``iterations`` counts expansions.

    Raises :class:`~puzzlezero.errors.InvalidStateError` for an illegal level or one that is a dead
    end from the start (a box on a dead square, boxes frozen off their targets)."""
    check_positive("time_limit", time_limit)
    check_positive("max_nodes", max_nodes, integer=True)
    check_positive("max_memory", max_memory, integer=True)
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    state = np.asarray(state, dtype=np.uint8).reshape(-1)
    boxes, agent = _read(puzzle, state)
    height, width = _board(puzzle)
    level = _level(state, height, width)
    work = _scratch(state.size, boxes.size)
    h0 = int(_state_bound(*_level_args(level), boxes, agent, *work))  # type: ignore[call-arg]  # numba Dispatcher stub
    if h0 == 0:
        return _result("solved", (), 1, 0, t0)
    if h0 >= DEAD_END:
        raise InvalidStateError(f"this level cannot be solved: {_dead_end_reason(state, level)}")

    budget_bytes = memory_budget() if max_memory is None else int(max_memory)
    per_node = _Search.bytes_for(boxes.size, 1)
    least = 1 << int(4 * boxes.size + 1).bit_length()  # room for the root's pushes
    if budget_bytes < per_node * least:
        raise PuzzleError(
            f"max_memory of {format_size(budget_bytes)} holds no search: it needs at least "
            f"{format_size(per_node * least)}"
        )
    limit = 1 << (budget_bytes // per_node).bit_length() - 1  # capacities are powers of two
    search = _Search(boxes.size, min(_FIRST_CAPACITY, limit))
    search.add_root(boxes, agent, h0)
    cap = -1 if max_nodes is None else int(max_nodes)
    while True:
        code = search.run(level, _CHUNK, cap, work)
        nodes, expansions = int(search.ctx[2]), int(search.ctx[3])
        if code == _FOUND:
            actions = _path(search, int(search.ctx[4]), level, state.size)
            return _result("solved", actions, nodes, expansions, t0)
        if code == _EXHAUSTED:
            return _result("exhausted", (), nodes, expansions, t0)
        if code == _NODE_LIMIT:
            return _result("node limit", (), nodes, expansions, t0)
        if clock.passed(stop):
            return _result("time limit", (), nodes, expansions, t0)
        if code == _FULL:
            if search.capacity >= limit:
                return _result(MEMORY_LIMIT, (), nodes, expansions, t0)
            search.grow(min(2 * search.capacity, limit))


def _result(status: Status, actions: tuple[int, ...], nodes: int, expansions: int, t0: float) -> SearchResult:
    solved = status == "solved"
    return SearchResult(
        solved=solved,
        actions=actions if solved else (),
        nodes_generated=nodes,
        iterations=expansions,
        seconds=clock.now() - t0,
        status=status,
    )


def _path(search: _Search, goal: int, level: _Level, hw: int) -> tuple[int, ...]:
    """The agent's steps from the root to node ``goal``: each push preceded by a shortest walk."""
    chain = [goal]
    while search.parent[chain[-1]] >= 0:
        chain.append(int(search.parent[chain[-1]]))
    chain.reverse()
    seen, dist, queue = (np.full(hw, -1, dtype=np.int64), np.zeros(hw, dtype=np.int64),
                         np.zeros(hw, dtype=np.int64))  # fmt: skip
    boxmark = np.full(hw, -1, dtype=np.int64)
    actions: list[int] = []
    off = level.offsets
    for stamp, (u, v) in enumerate(zip(chain, chain[1:], strict=False)):
        before = set(search.node_boxes[u].tolist())
        old = int(search.node_agent[v])  # the pushed box's cell before the push
        (new,) = set(search.node_boxes[v].tolist()) - before
        d = int(np.flatnonzero(off == new - old)[0])
        boxmark[list(before)] = stamp
        _walk(level.wall, boxmark, stamp, int(search.node_agent[u]), off, seen, dist, queue)
        actions.extend(_steps_to(old - off[d], seen, stamp, dist, off))
        actions.append(d)
    return tuple(actions)


def _steps_to(cell: int, seen: np.ndarray, stamp: int, dist: np.ndarray, off: np.ndarray) -> list[int]:
    """A shortest walk to ``cell`` read back from the walking distances of walk ``stamp``."""
    steps: list[int] = []
    while dist[cell] > 0:
        for d in range(4):
            prev = cell - off[d]
            if seen[prev] == stamp and dist[prev] == dist[cell] - 1:
                steps.append(d)
                cell = prev
                break
    return steps[::-1]
