"""Optimal solvers and pattern databases: the reference every learned solver is measured against.

* sliding puzzles: IDA* over additive disjoint pattern databases with their reflection (15-puzzle
  7-8, 24-puzzle 6-6-6-6; Korf & Felner 2002);
* Rubik's cube: Korf's IDA* over the corner and two 6-edge databases (quarter-turn metric);
* 2x2x2 cube: descent in the exact distance table;
* Lights Out (any board): minimum press set over GF(2);
* Sokoban: A* over pushes, each costing the walk to it plus one step, with a push-distance matching
  heuristic (step-optimal; it also stops with status ``"memory limit"``);
* permutation puzzles given as data (small ones: the 2x2x2 competition cube, wreaths): bidirectional
  breadth-first search, forward only for a goal with wildcards (it also stops with status
  ``"memory limit"``).

Every solver counts moves: a puzzle whose moves do not all cost 1 (``Puzzle.unit_costs``) is
refused with the reason, and so is the half-turn-metric cube ``cube3htm`` (the cube's databases
count quarter turns). The pattern-database heuristics stay admissible under costs: they are scaled
by the cheapest move (per quarter turn on ``cube3htm``), so ``--heuristic pdb`` with A* (weight 1,
batch 1) still finds least-cost solutions there.

The solver for a puzzle is looked up by its class in :data:`SOLVERS` (lazy ``"module:function"``
entry points, like the puzzle registry, or the function itself: a plugin's puzzle adds its own,
``docs/adding-a-puzzle.md``), the heuristic in :data:`HEURISTICS`. Pattern databases
are built on first use (minutes for the big ones) and cached in ``cache_dir("pdb")``; a solve
with a time limit builds them within it, in a process stopped at its deadline (:func:`pdb_within`).

>>> import numpy as np
>>> from puzzlezero import make
>>> from puzzlezero.classic.optimal import solve_optimal
>>> p = make("lightsout7")
>>> s = p.apply(p.goals(1), np.array([24]))[0]
>>> solve_optimal(p, s).actions
(24,)
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

from puzzlezero.errors import MissingTableError, PuzzleError, TableTimeoutError, UnknownNameError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, as_batch
from puzzlezero.search.windows import Between
from puzzlezero.storage import build_in_process, table_builds_deferred, table_builds_forbidden

__all__ = [
    "SOLVERS",
    "HEURISTICS",
    "WINDOW_SOLVERS",
    "WINDOW_TABLES",
    "SOLVER_TABLES",
    "solve_optimal",
    "optimal_length",
    "pdb_heuristic",
    "pdb_ready",
    "pdb_within",
    "has_window_solver",
    "window_solver",
    "window_tables",
    "table_entries",
    "IN_PLACE_ENTRIES",
    "table_build_bytes",
]

#: puzzle class name -> optimal solver ``f(puzzle, state, *, time_limit, max_nodes[, deadline]) ->
#: SearchResult`` (``"module:function"`` or the function; one without ``deadline`` is given the
#: seconds left as its ``time_limit``)
SOLVERS: dict[str, str | Callable[..., SearchResult]] = {
    "NPuzzle": "puzzlezero.classic.optimal.sliding_ida:solve_sliding",
    "Cube3": "puzzlezero.classic.optimal.cube_ida:solve_cube",
    "Cube2": "puzzlezero.classic.optimal.cube2:solve_cube2",
    "LightsOut": "puzzlezero.classic.optimal.lightsout:solve_lightsout",
    "Sokoban": "puzzlezero.classic.optimal.sokoban:solve_sokoban",
    "PermutationPuzzle": "puzzlezero.classic.optimal.bidirectional_bfs:solve_permutation",
}

#: puzzle class name -> factory ``f(puzzle) -> heuristic(states[B]) -> float32[B]`` (an admissible
#: one: ``"module:function"`` or the function)
HEURISTICS: dict[str, str | Callable[..., Callable[[np.ndarray], np.ndarray]]] = {
    "NPuzzle": "puzzlezero.classic.optimal.heuristics:sliding_heuristic",
    "Cube3": "puzzlezero.classic.optimal.heuristics:cube3_heuristic",
    "Cube2": "puzzlezero.classic.optimal.heuristics:cube2_heuristic",
    "LightsOut": "puzzlezero.classic.optimal.heuristics:lightsout_heuristic",
    "Cube3HTM": "puzzlezero.classic.optimal.heuristics:cube3htm_heuristic",
    "Sokoban": "puzzlezero.classic.optimal.sokoban:sokoban_heuristic",
}

#: puzzle class names whose optimal solver reads the cached tables of their ``pdb`` heuristic
#: (:data:`HEURISTICS`), which :func:`solve_optimal` builds within its time limit
SOLVER_TABLES = frozenset({"NPuzzle", "Cube3", "Cube2"})

#: tables of at most this many entries are built in place, not in a process of their own: the
#: 8-puzzle's (6,048) in 0.4 s and cube2's distance table (3.7 million) in 0.8 s, so a solve
#: overruns its limit by a second at most, where a process of their own first has to start and
#: import (0.25 s more for the 8-puzzle's on an idle 2-core CPU, over 3 s under a loaded test run,
#: where 17 of 32 solves of 1-3 s were left unsolved)
IN_PLACE_ENTRIES = 10_000_000

#: puzzle class name -> factory ``f(puzzle) -> between`` of the window re-solving pass
#: (:data:`puzzlezero.search.windows.Between`: a way between two states shorter than a bound)
WINDOW_SOLVERS: dict[str, str | Callable[..., Between]] = {
    "NPuzzle": "puzzlezero.classic.optimal.sliding_between:sliding_between",
    "Cube3": "puzzlezero.classic.optimal.cube_ida:cube_between",
}

#: puzzle class name -> the kind of cached table its window solver reads (``puzzlezero pdb build
#: --kind KIND``), where it reads one: cube3's IDA* reads Korf's databases; the sliding puzzles'
#: measures Manhattan distance with linear conflicts and reads none
WINDOW_TABLES: dict[str, str] = {"Cube3": "pdb"}

#: puzzle class name -> why it has no optimal solver, and what to use instead
NO_SOLVER: dict[str, str] = {
    "Cube3HTM": (
        "the cube's optimal solver and pattern databases count quarter turns, and there are no "
        "half-turn-metric databases yet; use --search kociemba (two-phase: short, not always "
        "optimal) or --search bwas --heuristic pdb --weight 1 --batch 1 (A* with an admissible "
        "heuristic: optimal, for short scrambles)"
    ),
}


def _has(table: Collection[str], puzzle: Puzzle) -> bool:
    return any(cls.__name__ in table for cls in type(puzzle).__mro__)


def _lookup(table: dict[str, Any], puzzle: Puzzle, what: str) -> Callable[..., Any]:
    for cls in type(puzzle).__mro__:
        if cls.__name__ in table:
            entry = table[cls.__name__]
            if callable(entry):
                return entry
            module, _, name = entry.partition(":")
            return getattr(importlib.import_module(module), name)
    supported = ", ".join(sorted(table))
    raise UnknownNameError(f"no {what} for {puzzle.name or type(puzzle).__name__}; it exists for {supported}")


def solve_optimal(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
) -> SearchResult:
    """A shortest solution of one ``state`` (``[*state_shape]``), or a :class:`SearchResult` with
    status ``"time limit"`` / ``"node limit"`` when the limit came first. ``deadline`` is an
    absolute reading of :func:`puzzlezero.search.clock.now`; with ``time_limit`` too, the earlier
    one ends the search. The pattern databases the solver reads (:data:`SOLVER_TABLES`) are built
    within that limit where missing (:func:`pdb_within`); when they are not built by then, the
    result is ``"time limit"`` and stderr names the command that builds them.

    Raises :class:`~puzzlezero.errors.InvalidStateError` for an illegal or unsolvable state,
    :class:`~puzzlezero.errors.PuzzleError` naming what to use instead for ``cube3htm`` or a puzzle
    whose moves do not all cost 1, and :class:`~puzzlezero.errors.UnknownNameError` for a puzzle
    without an optimal solver (a plugin's puzzle that registers none in :data:`SOLVERS`).
    """
    for cls in type(puzzle).__mro__:
        if cls.__name__ in SOLVERS:
            break
        if cls.__name__ in NO_SOLVER:
            raise PuzzleError(f"no optimal solver for {puzzle.name}: {NO_SOLVER[cls.__name__]}")
    if not puzzle.unit_costs:
        raise PuzzleError(
            f"no optimal solver for {puzzle.name} with these move costs: the optimal solvers count "
            f"moves (every move costing 1), and its moves cost {_cost_text(puzzle)}; use --search "
            f"bwas --heuristic pdb --weight 1 --batch 1 (A* with an admissible heuristic: least cost)"
        )
    solver = _lookup(SOLVERS, puzzle, "optimal solver")
    start = as_batch(puzzle, state)
    if start.shape[0] != 1:
        raise PuzzleError(f"solve_optimal takes one state; got a batch of {start.shape[0]}")
    t0 = clock.now()
    until = clock.deadline_after(time_limit, deadline, start=t0)
    if not math.isinf(until) and _has(SOLVER_TABLES, puzzle):  # its databases, within the limit
        try:
            pdb_within(puzzle, until)
        except TableTimeoutError as exc:
            print(exc, file=sys.stderr, flush=True)
            return SearchResult(False, (), 0, 0, clock.now() - t0, "time limit")
        deadline, time_limit = until, None  # what the build took is the search's no more
    if deadline is None:
        return solver(puzzle, start[0], time_limit=time_limit, max_nodes=max_nodes)
    if clock.takes_deadline(solver):
        return solver(puzzle, start[0], time_limit=time_limit, max_nodes=max_nodes, deadline=deadline)
    # a solver registered without ``deadline`` (a plugin's): the seconds left are its time limit
    left = clock.time_limit_until(clock.deadline_after(time_limit, deadline))
    return solver(puzzle, start[0], time_limit=left, max_nodes=max_nodes)


def _cost_text(puzzle: Puzzle) -> str:
    """``"U 1, U' 1, U2 1.5, ..."``: each move with its cost (at most 12 shown)."""
    pairs = [f"{n} {c:g}" for n, c in zip(puzzle.action_names, puzzle.action_costs.tolist(), strict=True)]
    return ", ".join(pairs[:12]) + (", ..." if len(pairs) > 12 else "")


def optimal_length(
    puzzle: Puzzle, state: np.ndarray, time_limit: float | None = None, *, deadline: float | None = None
) -> int | None:
    """The optimal solution length of ``state``, or ``None`` if not found within ``time_limit``
    (or by ``deadline``)."""
    return solve_optimal(puzzle, state, time_limit=time_limit, deadline=deadline).length


def pdb_heuristic(puzzle: Puzzle) -> Callable[[np.ndarray], np.ndarray]:
    """An admissible heuristic ``states[B, *state_shape] -> float32[B]`` from pattern databases
    (exact for cube2 and Lights Out with unit costs), for :func:`puzzlezero.search.bwas` and the
    solver's ``"pdb"``. With move costs other than 1 the values are scaled by the cheapest move, so
    they stay admissible (a lower bound of the least cost)."""
    return _lookup(HEURISTICS, puzzle, "pattern-database heuristic")(puzzle)


def pdb_ready(puzzle: Puzzle) -> Callable[[np.ndarray], np.ndarray]:
    """:func:`pdb_heuristic` with every table it reads loaded (built where missing, and cached);
    :class:`~puzzlezero.errors.UnknownNameError` for a puzzle that has none."""
    h = pdb_heuristic(puzzle)
    if getattr(h, "lazy", True):  # its table comes with the first call (cube2's, a plugin's)
        h(puzzle.goals(1))
    return h


def _build_pdb(puzzle: Puzzle) -> None:
    """A bounded build's process (:func:`pdb_within`): the tables built and saved."""
    pdb_ready(puzzle)


def pdb_within(puzzle: Puzzle, deadline: float | None) -> Callable[[np.ndarray], np.ndarray]:
    """:func:`pdb_ready`, the missing tables built in a process of their own that is stopped at
    ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`; ``None``: here, unbounded;
    :func:`puzzlezero.storage.build_in_process`), then loaded here: one not built by then raises
    :class:`~puzzlezero.errors.TableTimeoutError` naming ``puzzlezero pdb build PUZZLE``, which
    builds it without a limit (the 24-puzzle's take 40 s and 1.5 GB). Where builds are forbidden
    (web workers), a missing table raises :class:`~puzzlezero.errors.MissingTableError` as ever.
    A plugin's puzzle (:mod:`puzzlezero.plugins`: its class is not importable in a new process)
    builds its own heuristic's tables here, as before, and so do tables of at most
    :data:`IN_PLACE_ENTRIES` entries (:func:`table_entries`) and those of unknown size."""
    entries = table_entries(puzzle)
    small = (entries or 0) <= IN_PLACE_ENTRIES
    if deadline is None or small or not type(puzzle).__module__.startswith("puzzlezero."):
        return pdb_ready(puzzle)
    try:
        with table_builds_deferred():  # what is there loads; what is missing raises
            return pdb_ready(puzzle)
    except MissingTableError:
        if table_builds_forbidden():
            raise
    build_in_process(
        _build_pdb,
        (puzzle,),
        seconds=clock.seconds_left(deadline),
        key=f"pdb:{puzzle.name}",
        what=f"the pattern database of {puzzle.name}",
        command=f"puzzlezero pdb build {puzzle.name}",
        peak_bytes=table_build_bytes(puzzle),
    )
    return pdb_ready(puzzle)


def table_build_bytes(puzzle: Puzzle) -> int | None:
    """Peak bytes of building the big tables :func:`pdb_ready` builds for ``puzzle``, which
    :func:`pdb_within` checks against the memory budget before it starts a process: the sliding
    puzzles' additive databases (the 15-puzzle's 4.3 GiB), Korf's cube databases (330.6 MiB);
    ``None`` for the others (cube2's table is built in place in under a second)."""
    sizes = _pdb_sizes(puzzle)
    return None if sizes is None else sizes[1]


def table_entries(puzzle: Puzzle) -> int | None:
    """Entries of the tables :func:`pdb_ready` builds for ``puzzle`` (a byte each): the sliding
    puzzles' additive databases (before a mirrored pattern shares its table), cube2's distance
    table, Korf's three cube databases; ``None`` for a puzzle whose tables are not known here
    (their builds are not bounded)."""
    sizes = _pdb_sizes(puzzle)
    return None if sizes is None else sizes[0]


def _pdb_sizes(puzzle: Puzzle) -> tuple[int, int | None] | None:
    """``(entries, peak bytes of their build)`` of the tables :func:`pdb_ready` builds for
    ``puzzle`` (the peak ``None`` where it is not worked out: cube2's), or ``None`` where they are
    not known here."""
    names = {cls.__name__ for cls in type(puzzle).__mro__}
    if "NPuzzle" in names:
        from puzzlezero.classic.optimal.sliding_pdb import build_bytes, default_partition

        n = math.isqrt(int(np.prod(puzzle.state_shape)))  # the side of the square board
        return sum(math.perm(n * n, len(g)) for g in default_partition(n)), build_bytes(n)
    if "Cube2" in names:
        from puzzlezero.puzzles.cube.table import NUM_STATES

        return int(NUM_STATES), None
    if names & {"Cube3", "Cube3HTM"}:
        from puzzlezero.classic.optimal.cube_pdb import KORF
        from puzzlezero.classic.optimal.cube_pdb import build_bytes as cube_build_bytes

        return sum(p.size for p in KORF), cube_build_bytes()  # 8 corners; two sets of 6 edges
    return None


def has_window_solver(puzzle: Puzzle) -> bool:
    """Whether :func:`window_solver` has one for ``puzzle``."""
    return _has(WINDOW_SOLVERS, puzzle)


def window_tables(puzzle: Puzzle) -> str | None:
    """The kind of table :func:`window_solver`'s solver of ``puzzle`` reads (:data:`WINDOW_TABLES`),
    or ``None``."""
    return next(
        (WINDOW_TABLES[c.__name__] for c in type(puzzle).__mro__ if c.__name__ in WINDOW_TABLES), None
    )


def window_solver(puzzle: Puzzle) -> Between:
    """The exact solver between two states that :mod:`puzzlezero.search.windows` re-solves the
    windows of ``puzzle``'s solutions with (:data:`WINDOW_SOLVERS`)."""
    return _lookup(WINDOW_SOLVERS, puzzle, "window solver")(puzzle)
