"""Reduction: any sliding-puzzle board, solved by placing its tiles a pair at a time, no model.

The classic way to solve an ``n x n`` sliding puzzle by hand: put the top row home, then the left
column, and go on with the ``(n-1) x (n-1)`` board that is left, never touching a home tile again,
until a 2x2 corner remains (Parberry, *A real-time algorithm for the (n^2 - 1)-puzzle*, Information
Processing Letters 56, 1995, does the same with hand-made move sequences and proves its solutions
stay within a constant factor of optimal). Here no sequence is hand-made: each step is a
**breadth-first search** in a small space, and its answer is the shortest one for what that step
asks.

**A step** places one, two or three tiles: the state of its search is where the blank and those
tiles stand among the cells not yet frozen (``m`` cells: ``m^3`` states for a pair, 117,649 on the
48-puzzle's first step; ``m^4`` for three, taken where that is at most :data:`MAX_STEP_STATES`),
every other free tile being free to move anywhere. A row of the board is placed a group of tiles at
a time from its left end, so that the last two cells of the row, which cannot be filled one after
the other without undoing the first, are always placed together; a column likewise from its top
(:func:`placement_order`). The frozen cells form the top-left corner, and the free region stays a
rectangle of at least two rows and three columns (or three rows and two), in which the step's tiles
can be brought home whatever the others do. The final 2x2 corner is a search over its three tiles.

**What it gives.** Every solvable board is solved, in milliseconds to a second (48-puzzle: a median
of 0.66 s on a 2-core CPU), with solutions 1.6-1.8 times the optimum where it is known and about
twice a learned search's on the 48-puzzle (docs/results.md). It is the sliding puzzles' fallback
(:attr:`puzzlezero.solver.Defaults.fallback`): a board the puzzle's own search leaves unsolved
within its time limit still gets a solution, marked as the fallback's. ``puzzlezero solve puzzle48
"..." --search reduction``.

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("puzzle15")
>>> start = p.scramble(np.random.default_rng(0), 1, 200)[0]
>>> r = solve_reduction(p, start)
>>> bool(p.is_goal(p.apply_moves(start, r.actions)[None])[0])
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult

__all__ = ["memory_estimate", "placement_order", "solve_reduction"]


#: the most states a step's search may have (``m^(k+1)`` for ``k`` tiles among ``m`` free cells):
#: steps place three tiles where this allows, else two (48-puzzle: pairs until 36 cells are free)
MAX_STEP_STATES = 1 << 21


def placement_order(n: int, max_states: int = MAX_STEP_STATES) -> list[tuple[int, ...]]:
    """The cells placed by each step on an ``n x n`` board, in order: the rows and columns of the
    free rectangle in turn (the longer side first), each from its start in groups of three cells
    where ``m^4 <= max_states`` for the ``m`` cells still free, else of two, the line's last two cells
    always in one group; then the three tile cells of the final 2x2 corner. Every cell but the
    blank's home (``n*n - 1``) appears once.

    >>> placement_order(3)
    [(0, 1, 2), (3, 6), (4, 5, 7)]
    >>> placement_order(3, max_states=1000)
    [(0,), (1, 2), (3, 6), (4, 5, 7)]
    """
    if n < 2:
        raise PuzzleError(f"reduction needs a board of at least 2x2, got {n}x{n}")
    steps: list[tuple[int, ...]] = []
    r0 = c0 = 0
    while n - r0 > 2 or n - c0 > 2:
        group = 3 if ((n - r0) * (n - c0)) ** 4 <= max_states else 2
        if n - r0 >= n - c0:  # the top row of the free rectangle
            line = [r0 * n + c for c in range(c0, n)]
            r0 += 1
        else:  # its left column
            line = [r * n + c0 for r in range(r0, n)]
            c0 += 1
        while line:  # groups from the start; never a single cell last
            take = len(line) if len(line) <= group else group - (len(line) - group == 1)
            steps.append(tuple(line[:take]))
            line = line[take:]
    corner = [r * n + c for r in range(r0, n) for c in range(c0, n)]
    steps.append(tuple(corner[:-1]))  # the blank's home, the last cell, fills itself
    return steps


def _free_moves(swap: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The free cells (board indices) and ``moves[i, a]``: the local index of the cell the blank
    goes to from free cell ``i`` under action ``a``, ``-1`` where the move leaves the free region or
    the board."""
    cells = np.flatnonzero(free)
    local = np.full(free.size, -1, dtype=np.int64)
    local[cells] = np.arange(cells.size)
    to = swap[cells]  # [m, 4] board cells; a blocked move stays on its cell
    moves = np.where(to == cells[:, None], -1, local[to])
    return cells, moves


def _place(
    board: np.ndarray, swap: np.ndarray, free: np.ndarray, targets: Sequence[int]
) -> tuple[list[int], int]:
    """The shortest move sequence that brings the tiles whose home is ``targets`` (``tile = cell +
    1``) to their homes, the blank moving over ``free`` cells only: a breadth-first search over the
    positions of the blank and those tiles, level by level in NumPy. Returns the actions and the
    number of states generated; raises :class:`InvalidStateError` when no sequence exists (a board
    of the wrong parity: the final corner cannot be solved)."""
    cells, moves = _free_moves(swap, free)
    m, k = cells.size, len(targets)
    where = {int(c): i for i, c in enumerate(cells)}
    blank = where[int(np.flatnonzero(board == 0)[0])]
    start = [blank] + [where[int(np.flatnonzero(board == t + 1)[0])] for t in targets]
    goal = np.array([where[int(t)] for t in targets], dtype=np.int64)
    radix = m ** np.arange(k, -1, -1, dtype=np.int64)  # code = blank*m^k + p1*m^(k-1) + ...
    size = m ** (k + 1)
    parent = np.full(size, -1, dtype=np.int64)
    action = np.zeros(size, dtype=np.int8)
    frontier = np.array([start], dtype=np.int64)  # [F, k + 1]
    first = int(frontier[0] @ radix)
    parent[first] = first
    generated = 1
    found = first if (frontier[0, 1:] == goal).all() else -1
    while found < 0 and frontier.size:
        codes, news, acts = [], [], []
        for a in range(moves.shape[1]):
            to = moves[frontier[:, 0], a]
            ok = to >= 0
            pos, to = frontier[ok], to[ok]
            child = pos.copy()
            child[:, 0] = to
            child[:, 1:] = np.where(pos[:, 1:] == to[:, None], pos[:, :1], pos[:, 1:])
            generated += child.shape[0]
            codes.append(pos @ radix)
            news.append(child)
            acts.append(np.full(child.shape[0], a, dtype=np.int8))
        child = np.concatenate(news)
        code = child @ radix
        fresh = parent[code] < 0
        code, uniq = np.unique(code[fresh], return_index=True)
        parent[code] = np.concatenate(codes)[fresh][uniq]
        action[code] = np.concatenate(acts)[fresh][uniq]
        frontier = child[fresh][uniq]
        done = np.flatnonzero((frontier[:, 1:] == goal).all(axis=1))
        if done.size:
            found = int(code[done[0]])
    if found < 0:
        raise InvalidStateError(
            "this board cannot be solved: its tiles are an odd permutation away from the goal's "
            "(swap two tiles to make it solvable)"
        )
    path: list[int] = []
    while parent[found] != found:
        path.append(int(action[found]))
        found = int(parent[found])
    return path[::-1], generated


def _cut_loops(boards: Sequence[np.ndarray], actions: Sequence[int]) -> list[int]:
    """``actions`` (``boards``: the path's boards, start first, one more than the moves) without the
    stretches that come back to a board already passed: where two steps meet at one board, the
    moves between them are dropped."""
    seen: dict[bytes, int] = {}  # board -> its place in ``kept``
    kept: list[tuple[bytes, int]] = []  # the boards along the cut path, each with the move into it
    for i, b in enumerate(boards):
        key = b.tobytes()
        if key in seen:  # back at a board of the path: forget the moves since
            for gone, _ in kept[seen[key] + 1 :]:
                del seen[gone]
            del kept[seen[key] + 1 :]
        else:
            seen[key] = len(kept)
            kept.append((key, actions[i - 1] if i else -1))
    return [a for _, a in kept[1:]]


def memory_estimate(puzzle: Puzzle, options: object = None, instances: int = 1) -> int:
    """Peak bytes of a reduction solve (one board at a time): a step's breadth-first search over
    at most :data:`MAX_STEP_STATES` states, 16 bytes each. Measured with tracemalloc on a
    puzzle48 board: 16 MB, against the estimate's 34 MB (see tests/test_budget.py)."""
    return 16 * MAX_STEP_STATES


def solve_reduction(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
) -> SearchResult:
    """Solve one sliding-puzzle board by reduction (module docstring): the steps of
    :func:`placement_order`, each the shortest for its tiles, the loops of the joined path cut.
    Always solves a solvable board; ``time_limit``, ``deadline`` and ``max_nodes`` are taken for
    the solvers' common signature and not needed (a 48-puzzle board takes well under a second and some
    millions of generated states). ``nodes_generated`` counts the states the steps' searches made;
    ``iterations`` the steps. Raises :class:`PuzzleError` for a puzzle that is not a square
    sliding puzzle solved to its own goal, :class:`InvalidStateError` for an unsolvable board."""
    from puzzlezero.puzzles.npuzzle import NPuzzle

    if not isinstance(puzzle, NPuzzle):
        raise PuzzleError(f"reduction solves sliding puzzles (puzzle8 ... puzzle48), not {puzzle.name}")
    t0 = clock.now()
    n = puzzle.size
    boards = [np.asarray(state, dtype=puzzle.dtype).reshape(puzzle.state_shape)]  # the path, start first
    free = np.ones(n * n, dtype=bool)
    actions: list[int] = []
    generated = 0
    steps = placement_order(n)
    for cells in steps:
        moves, made = _place(boards[-1], puzzle.swap, free, cells)
        generated += made
        for a in moves:
            boards.append(puzzle.apply(boards[-1][None], np.array([a]))[0])
        actions.extend(moves)
        free[list(cells)] = False
    if not puzzle.is_goal(boards[-1][None])[0]:  # a goal other than the standard one (a subclass)
        raise PuzzleError(f"reduction solves to the standard goal, which is not {puzzle.name}'s")
    actions = _cut_loops(boards, actions)
    return SearchResult(
        True,
        tuple(actions),
        generated,
        len(steps),
        clock.now() - t0,
        "solved",
        cost=puzzle.path_cost(actions),
    )
