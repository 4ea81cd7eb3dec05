"""Optimal solutions by bidirectional breadth-first search: small permutation puzzles, and any
puzzle's states a few moves from its goal.

A puzzle whose every move has its inverse among the moves (a permutation puzzle, the cubes, the
sliding puzzles, Lights Out) has an undirected graph of states. Breadth-first search from the start and
from the goal, one whole layer at a time, always growing the side whose last layer is smaller,
meets in the middle (I. Pohl, *Bi-directional search*, Machine Intelligence 6, 1971): when a new
layer of one side at depth ``d + 1`` first holds a state of the other side's last layer, at depth
``e``, no path of ``d + e`` moves or fewer exists (a state on it would sit in both sides' layers
already), so ``d + 1 + e`` moves is optimal. Each side then keeps about ``b^(L/2)`` states for a
solution of ``L`` moves and branching factor ``b``, where one search from the start keeps
``b^L``.

Everything is batched in NumPy: a layer is an array of states and their sorted 64-bit hashes
(:meth:`~puzzlezero.puzzles.base.Puzzle.hash64`), its children one gather ``states[:, perms]`` per
chunk for a permutation puzzle (``puzzle.expand`` for the others), and a child is new when its hash is in neither of the side's last two layers (in an
undirected graph a child of layer ``d`` lies in layer ``d - 1``, ``d`` or ``d + 1``). Earlier
layers keep only their hashes (8 bytes a state), which is all the path needs: it is read back
from the meeting state one move at a time, each step to a neighbour whose hash is in the layer
before, and checked state by state down to the start and the goal, so a solution is always a real
path; the meeting itself is checked on the states. Two different states sharing a hash could only
drop a state from a layer (a chance of about ``n^2 / 2^65`` among ``n`` states).

A puzzle with ``wildcards`` (solved within that many differing positions) has many goal states,
so the search goes forward only, testing each new layer with ``is_goal``. Moves of other costs
than 1 are refused by name (a least-cost search would need bidirectional Dijkstra).

The search stops by name on the first bound reached, like the other optimal solvers: ``"node
limit"`` (``max_nodes`` states generated, the roots counted; default :data:`MAX_NODES`), ``"time
limit"`` (``time_limit`` or ``deadline``), ``"memory limit"`` (its layers would pass
``max_memory`` bytes; default: the process's memory budget,
:func:`puzzlezero.budget.memory_budget`); ``"exhausted"``: no sequence of moves reaches the goal.
On the 2x2x2 competition cube (12 slice turns, 88,179,840 states, the farthest 14 turns from the
goal) a random state takes about 0.1-0.2 s and 200 MiB, a farthest one 6 million states and 1.5 s
(2-core CPU).

:func:`solve_bfs` is the same search for any puzzle whose moves have inverses and cost 1; the
solver runs it, with a small node bound, before the search under a puzzle's own settings, so that
a state a few moves from the goal gets its shortest answer at once, whatever the search would
have made of it (:func:`puzzlezero.solver.solve_many`).

>>> from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle
>>> p = PermutationPuzzle(Definition.from_dict({"format": "puzzlezero-permutation/1", "name": "tri",
...     "positions": 3, "moves": {"t": [1, 2, 0], "s": [1, 0, 2]}, "goal": "A;B;C"}))
>>> r = solve_permutation(p, p.parse("C;A;B"))
>>> r.status, [p.action_names[a] for a in r.actions]
('solved', ['t'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from puzzlezero.budget import memory_budget
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, Status, check_positive

__all__ = ["CHUNK_BYTES", "MAX_NODES", "can_bfs", "solve_bfs", "solve_permutation"]

#: the most states a search generates when no ``max_nodes`` is given (the 2x2x2 competition cube's
#: farthest states, 14 slice turns from its goal, take about 6 million)
MAX_NODES = 1_000_000_000
#: the children generated at once: one gather of about this many bytes
CHUNK_BYTES = 16 << 20


@dataclass
class _Side:
    """One direction of the search: every layer's sorted hashes, the last layer's states (in the
    order of its hashes) and its depth."""

    root: np.ndarray
    hashes: list[np.ndarray] = field(default_factory=list)
    states: np.ndarray = field(default_factory=lambda: np.empty((0, 0), np.uint8))

    @property
    def depth(self) -> int:
        return len(self.hashes) - 1

    def nbytes(self) -> int:
        return sum(h.nbytes for h in self.hashes) + self.states.nbytes


class _Stop(Exception):
    """A bound was reached while a layer grew."""

    def __init__(self, status: Status) -> None:
        super().__init__(status)
        self.status = status


def _member(sorted_hashes: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``bool``: which of ``h`` are in the sorted array."""
    if sorted_hashes.size == 0:
        return np.zeros(h.shape, dtype=bool)
    i = np.minimum(np.searchsorted(sorted_hashes, h), sorted_hashes.size - 1)
    return sorted_hashes[i] == h


class _Search:
    """The layers of both sides, the counters and the bounds."""

    def __init__(
        self, puzzle: Puzzle, perms: np.ndarray | None, max_nodes: int, max_memory: int, stop: float
    ) -> None:
        self.puzzle, self.perms = puzzle, perms
        self.max_nodes, self.max_memory, self.stop = max_nodes, max_memory, stop
        self.nodes = 0
        self.layers = 0
        self.actions = puzzle.num_actions
        n = int(np.prod(puzzle.state_shape))
        self.chunk = max(1, CHUNK_BYTES // max(1, self.actions * n * np.dtype(puzzle.dtype).itemsize))

    def neighbours(self, states: np.ndarray) -> np.ndarray:
        """``[B, A, n]``: each flat state's children by every move (a gather for a permutation
        puzzle, ``puzzle.expand`` otherwise)."""
        if self.perms is not None:
            return np.take(states, self.perms, axis=1)  # C-contiguous, so reshapes are views
        shape = tuple(self.puzzle.state_shape)
        kids = self.puzzle.expand(states.reshape(-1, *shape))
        return kids.reshape(states.shape[0], self.actions, -1)

    def side(self, root: np.ndarray) -> _Side:
        s = _Side(root=root.copy())
        flat = root.reshape(1, -1)
        s.hashes.append(self.puzzle.hash64(flat))
        s.states = flat.copy()
        self.nodes += 1
        return s

    def grow(self, side: _Side, held: int) -> tuple[np.ndarray, np.ndarray]:
        """The side's next layer ``(sorted hashes, states)``: the children of its last layer that
        are in neither of its last two layers. ``held``: bytes the other side holds."""
        last = side.hashes[-1]
        before = side.hashes[-2] if len(side.hashes) > 1 else np.empty(0, np.uint64)
        parts_h: list[np.ndarray] = []
        parts_s: list[np.ndarray] = []
        kept = 0
        a = self.actions
        for lo in range(0, side.states.shape[0], self.chunk):
            block = side.states[lo : lo + self.chunk]
            if self.nodes + block.shape[0] * a > self.max_nodes:
                raise _Stop("node limit")
            if clock.passed(self.stop):
                raise _Stop("time limit")
            kids = self.neighbours(block).reshape(-1, block.shape[1])
            self.nodes += kids.shape[0]
            h, first = np.unique(self.puzzle.hash64(kids), return_index=True)
            new = ~(_member(last, h) | _member(before, h))  # sorted needles: cache-friendly lookups
            h, kids = h[new], kids[first[new]]
            parts_h.append(h)
            parts_s.append(kids)
            kept += h.nbytes + kids.nbytes
            if side.nbytes() + held + 2 * kept > self.max_memory:
                raise _Stop("memory limit")
        if not parts_h:
            return np.empty(0, np.uint64), side.states[:0]
        h = np.concatenate(parts_h)
        h, first = np.unique(h, return_index=True)
        states = np.concatenate(parts_s)[first]
        self.layers += 1
        return h, states

    def path(self, side: _Side, state: np.ndarray, depth: int) -> list[int] | None:
        """Moves from the side's root to ``state`` (a state of its layer ``depth``), read back one
        move at a time through the layers' hashes and checked on the states; ``None`` if the
        hashes lead nowhere (a collision)."""
        if depth == 0:
            return [] if np.array_equal(state, side.root.reshape(-1)) else None
        prev = self.neighbours(state[None])[0]  # every neighbour: one move from state
        hits = np.flatnonzero(_member(side.hashes[depth - 1], self.puzzle.hash64(prev)))
        inverse = self.puzzle.inverse_action
        for a in hits.tolist():
            rest = self.path(side, prev[a], depth - 1)
            if rest is not None:
                return [*rest, int(inverse[a])]  # prev[a] --inverse(a)--> state
        return None


def _result(status: Status, actions: tuple[int, ...], search: _Search | None, t0: float) -> SearchResult:
    solved = status == "solved"
    return SearchResult(
        solved=solved,
        actions=actions if solved else (),
        nodes_generated=1 if search is None else search.nodes,
        iterations=0 if search is None else search.layers,
        seconds=clock.now() - t0,
        status=status,
        cost=float(len(actions)) if solved else None,
    )


def _permutations(puzzle: Puzzle) -> np.ndarray:
    fn = getattr(puzzle, "move_permutations", None)
    if fn is None:
        raise PuzzleError(
            f"{puzzle.name}: the breadth-first solver needs a permutation puzzle (move_permutations)"
        )
    perms = np.asarray(fn(), dtype=np.intp)
    inverse = np.asarray(puzzle.inverse_action)
    if (inverse < 0).any():
        raise PuzzleError(
            f"{puzzle.name}: the bidirectional search needs every move's inverse among the moves"
        )
    return perms


def can_bfs(puzzle: Puzzle) -> bool:
    """Can :func:`solve_bfs` search this puzzle: every move has its inverse among the moves and
    costs 1?"""
    return bool(puzzle.unit_costs) and bool((np.asarray(puzzle.inverse_action) >= 0).all())


def solve_permutation(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    max_memory: int | None = None,
) -> SearchResult:
    """A shortest solution of one state of a permutation puzzle (module docstring): bidirectional
    breadth-first search, or forward search for a puzzle with wildcards, or the bound that stopped
    it by name (``"node limit"`` after ``max_nodes`` states generated, default :data:`MAX_NODES`;
    ``"time limit"`` at ``deadline`` or ``time_limit`` seconds after the start; ``"memory limit"``
    when its layers would pass ``max_memory`` bytes, default the memory budget). ``iterations``
    counts the layers grown. Raises :class:`~puzzlezero.errors.PuzzleError` for moves that do not
    all cost 1 and :class:`~puzzlezero.errors.InvalidStateError` for a state the puzzle's own
    check refuses (labels the goal's orbits cannot hold)."""
    if not puzzle.unit_costs:
        raise PuzzleError(
            f"no breadth-first optimal solver for {puzzle.name} with these move costs: it counts moves "
            f"(every move costing 1); use --search bwas --weight 1 --batch 1 with an admissible heuristic"
        )
    return _solve(puzzle, state, _permutations(puzzle), time_limit, max_nodes, deadline, max_memory)


def solve_bfs(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    max_memory: int | None = None,
) -> SearchResult:
    """:func:`solve_permutation` for any puzzle whose moves have inverses and cost 1
    (:func:`can_bfs`; another is a :class:`~puzzlezero.errors.PuzzleError`): children by
    ``puzzle.expand``, or by the gather where the puzzle is a permutation puzzle."""
    if not can_bfs(puzzle):
        raise PuzzleError(
            f"{puzzle.name}: the bidirectional search needs moves that all cost 1 and have an inverse"
        )
    fn = getattr(puzzle, "move_permutations", None)
    perms = None if fn is None else np.asarray(fn(), dtype=np.intp)
    return _solve(puzzle, state, perms, time_limit, max_nodes, deadline, max_memory)


def _solve(
    puzzle: Puzzle,
    state: np.ndarray,
    perms: np.ndarray | None,
    time_limit: float | None,
    max_nodes: int | None,
    deadline: float | None,
    max_memory: int | None,
) -> SearchResult:
    check_positive("time_limit", time_limit)
    check_positive("max_nodes", max_nodes, integer=True)
    check_positive("max_memory", max_memory, integer=True)
    t0 = clock.now()
    start = np.asarray(state, dtype=puzzle.dtype).reshape(-1)
    validate = getattr(puzzle, "validate", None)
    if validate is not None:
        validate(start.reshape(puzzle.state_shape))
    if puzzle.is_goal(start.reshape(1, *puzzle.state_shape))[0]:
        return _result("solved", (), None, t0)
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    budget = memory_budget() if max_memory is None else int(max_memory)
    search = _Search(puzzle, perms, MAX_NODES if max_nodes is None else int(max_nodes), budget, stop)
    try:
        if int(getattr(puzzle, "wildcards", 0) or 0):
            actions = _forward(search, start)
        else:
            actions = _meet(search, start, np.asarray(puzzle.goal(), dtype=puzzle.dtype).reshape(-1))
    except _Stop as why:
        return _result(why.status, (), search, t0)
    if actions is None:
        return _result("exhausted", (), search, t0)
    return _result("solved", tuple(actions), search, t0)


def _meet(search: _Search, start: np.ndarray, goal: np.ndarray) -> list[int] | None:
    """Bidirectional breadth-first search: the moves from ``start`` to ``goal``, ``None`` when a
    side runs out of states first."""
    sides = (search.side(start), search.side(goal))
    inverse = search.puzzle.inverse_action
    while True:
        k = 0 if sides[0].states.shape[0] <= sides[1].states.shape[0] else 1
        me, other = sides[k], sides[1 - k]
        h, states = search.grow(me, other.nbytes())
        if h.size == 0:
            return None
        me.hashes.append(h)
        me.states = states
        hit = np.flatnonzero(_member(other.hashes[-1], h))
        for i in hit.tolist():
            j = int(np.searchsorted(other.hashes[-1], h[i]))
            if not np.array_equal(states[i], other.states[j]):
                continue  # two states sharing a hash
            there = search.path(me, states[i], me.depth)
            back = search.path(other, other.states[j], other.depth)
            if there is None or back is None:
                continue
            to_start, to_goal = (there, back) if k == 0 else (back, there)
            return to_start + [int(inverse[a]) for a in reversed(to_goal)]


def _forward(search: _Search, start: np.ndarray) -> list[int] | None:
    """Breadth-first search from ``start`` to the first layer holding a state ``is_goal`` accepts
    (a puzzle with wildcards has many goal states)."""
    puzzle = search.puzzle
    side = search.side(start)
    while True:
        h, states = search.grow(side, 0)
        if h.size == 0:
            return None
        side.hashes.append(h)
        side.states = states
        done = np.flatnonzero(puzzle.is_goal(states.reshape(-1, *puzzle.state_shape)))
        for i in done.tolist():
            path = search.path(side, states[i], side.depth)
            if path is not None:
                return path
