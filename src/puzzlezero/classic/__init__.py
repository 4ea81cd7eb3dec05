"""The solvers that need no learned model:

* :mod:`.optimal`: optimal solutions and admissible heuristics: IDA* over pattern databases for
  the sliding puzzles and the 3x3x3 cube, descent in the exact 2x2x2 table, Lights Out over GF(2),
  the bridge to Kociemba's two-phase solver, and the building and caching of those tables;
* :mod:`.group`: the group-theory solver of permutation puzzles, sifting a state through a
  Schreier–Sims stabilizer chain of move words made short by Minkwitz's algorithm (group theory
  beside learning, as in A. Agarwal's look at the cube);
* :mod:`.reduction`: the sliding-puzzle reduction solver, placing a few tiles at a time by small
  breadth-first searches;
* :mod:`.two_phase`: Kociemba's two-phase algorithm for cube3 in the quarter-turn metric, anytime;
  :mod:`.two_phase_slice` runs it in the slice quarter-turn metric of the competition's 3x3x3.

They are the references the learned solvers are measured against and their fallbacks. Each takes
``(puzzle, state, *, time_limit=None, max_nodes=None, deadline=None)`` and returns a
:class:`~puzzlezero.search.result.SearchResult`; ``deadline`` is an absolute reading of
:func:`puzzlezero.search.clock.now`, and where both are given the earlier of it and
``time_limit`` (seconds from the solver's own start) ends the search. They import only the
puzzles, :mod:`puzzlezero.storage` and the search results and clock: never torch.
"""

import time
from collections.abc import Callable
from functools import partial
from types import ModuleType
from typing import Any

import numpy as np

from puzzlezero.classic.group import GroupTable, group_table, solve_group
from puzzlezero.classic.optimal import (
    HEURISTICS,
    SOLVERS,
    optimal_length,
    pdb_heuristic,
    pdb_within,
    solve_optimal,
)
from puzzlezero.classic.reduction import solve_reduction
from puzzlezero.errors import BudgetError, PuzzleError, UnknownNameError

__all__ = [
    "SOLVERS",
    "HEURISTICS",
    "solve_optimal",
    "optimal_length",
    "pdb_heuristic",
    "GroupTable",
    "group_table",
    "solve_group",
    "solve_reduction",
    "TABLE_KINDS",
    "build_tables",
    "reduction_of",
]

#: the kinds of table ``puzzlezero pdb build --kind KIND`` builds: the pattern databases of the
#: puzzle's ``pdb`` heuristic and optimal solver (sliding puzzles: the additive databases; cube3 and
#: cube3htm: Korf's corner and edge databases; cube2: the exact distance table), the group table of
#: ``--search group``, the centres' tables of the 4x4x4's and the 5x5x5's reductions (``--search cube-reduction``),
#: the two-phase searches' (cube3's, the competition's 3x3x3's); ``all``: every one a puzzle has
TABLE_KINDS = ("pdb", "group", "reduction", "two-phase", "all")


def reduction_of(puzzle: Any) -> ModuleType:
    """The reduction to the 3x3x3 of this cube (``--search cube-reduction``):
    :mod:`puzzlezero.classic.cube5_reduction` for a 5x5x5 (150 stickers), else
    :mod:`puzzlezero.classic.cube_reduction` (the 4x4x4's, which names what does not fit)."""
    from puzzlezero.classic import cube5_reduction, cube_reduction

    perms = getattr(puzzle, "perms", None)
    return cube5_reduction if perms is not None and np.shape(perms)[-1] == 150 else cube_reduction


def build_tables(puzzle: Any, kind: str = "pdb", *, deadline: float | None = None) -> list[str]:
    """Build (or load, where they are built already) the tables of ``kind`` (:data:`TABLE_KINDS`)
    that ``puzzle`` uses, under their locks; a line per table kind for people (the two-phase
    search's tables for cube3 and the competition's 3x3x3 too). A puzzle
    without such a table raises :class:`~puzzlezero.errors.PuzzleError`; ``kind="all"`` builds
    what the puzzle has and skips the rest (what ``serve --build-tables`` wants). ``deadline``
    bounds the builds of a group table and of pattern databases
    (:class:`~puzzlezero.errors.TableTimeoutError`)."""
    if kind not in TABLE_KINDS:
        raise UnknownNameError(f"unknown table kind {kind!r}; the kinds are {', '.join(TABLE_KINDS)}")
    prepare = _two_phase_tables(puzzle)
    if kind == "two-phase" and not prepare:
        raise PuzzleError(
            f"the two-phase tables are cube3's and the competition's 3x3x3's; {puzzle.name} has none"
        )
    lines = [] if kind == "two-phase" else _cached_tables(puzzle, kind, deadline)
    if kind in ("two-phase", "all"):
        lines += [build() for build in prepare]
    return lines


def _two_phase_tables(puzzle: Any) -> list[Callable[[], str]]:
    """What prepares ``puzzle``'s two-phase tables: cube3's (quarter turns); the competition
    3x3x3's (slice turns), with cube3's, which its solve's route runs too; none for the others."""
    from puzzlezero.classic import two_phase

    if puzzle.name == "cube3" and len(puzzle.action_names) == 12:
        return [partial(two_phase.prepare_tables, puzzle)]
    if len(puzzle.action_names) == 18:
        from puzzlezero.classic import two_phase_slice
        from puzzlezero.puzzles.cube.rules import Cube3

        try:
            two_phase_slice.slice_cube(puzzle)
        except PuzzleError:
            return []
        return [partial(two_phase_slice.prepare_tables, puzzle), partial(two_phase.prepare_tables, Cube3())]
    return []


def _cached_tables(puzzle: Any, kind: str, deadline: float | None) -> list[str]:
    """The lines of :func:`build_tables` for the kinds kept in the cache folder (all but
    two-phase): the pattern databases (:func:`.optimal.pdb_within` under a ``deadline``), the
    group table (:func:`.group.group_table`), the 4x4x4 reduction's tables."""
    lines = []
    if kind in ("pdb", "all"):
        t0 = time.perf_counter()
        try:
            h = pdb_within(puzzle, deadline)
        except UnknownNameError:
            if kind == "pdb":
                raise
        else:
            name, nbytes = getattr(h, "name", "pdb"), int(getattr(h, "nbytes", 0))
            lines.append(
                f"{puzzle.name}: pdb: {name}, {nbytes / 1e6:,.1f} MB, ready in {time.perf_counter() - t0:,.1f} s"
            )
    if kind in ("group", "all"):
        t0 = time.perf_counter()
        try:
            table = group_table(puzzle, deadline=deadline)
        except BudgetError:  # a bound hit (time, memory): said by name, never "none of that kind"
            raise
        except PuzzleError:
            if kind == "group":
                raise
        else:
            lines.append(
                f"{puzzle.name}: group table, order {table.order:,}, ready in {time.perf_counter() - t0:,.1f} s"
            )
    if kind in ("reduction", "all"):
        t0 = time.perf_counter()
        try:
            sizes = reduction_of(puzzle).build_reduction_tables(puzzle)
        except PuzzleError:
            if kind == "reduction":
                raise
        else:
            lines.append(
                f"{puzzle.name}: reduction tables, {len(sizes)} of {sum(sizes):,} arrangements in all, "
                f"ready in {time.perf_counter() - t0:,.1f} s"
            )
    return lines or [f"{puzzle.name}: no pattern database, group table or reduction table (nothing to build)"]
