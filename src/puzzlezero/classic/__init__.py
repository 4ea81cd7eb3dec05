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

from collections.abc import Callable
from functools import partial
from typing import Any

from puzzlezero.classic.group import GroupTable, group_table, solve_group
from puzzlezero.classic.optimal import HEURISTICS, SOLVERS, optimal_length, pdb_heuristic, solve_optimal
from puzzlezero.classic.optimal import tables as _tables
from puzzlezero.classic.reduction import solve_reduction
from puzzlezero.errors import PuzzleError, UnknownNameError

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
]

#: the kinds of table ``puzzlezero pdb build --kind KIND`` builds: the optimal solvers', the group
#: solver's and the 4x4x4 reduction's (:data:`.optimal.tables.TABLE_KINDS`), and the two-phase
#: searches' (cube3's, the competition 3x3x3's); ``all``: every one a puzzle has
TABLE_KINDS = (*(k for k in _tables.TABLE_KINDS if k != "all"), "two-phase", "all")


def build_tables(puzzle: Any, kind: str = "pdb", *, deadline: float | None = None) -> list[str]:
    """Build (or load, where they are built already) the tables of ``kind`` (:data:`TABLE_KINDS`)
    that ``puzzle`` uses, under their locks; a line per table kind for people
    (:func:`.optimal.tables.build_tables`, and the two-phase search's tables for cube3 and the
    competition's 3x3x3). A puzzle
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
    lines = [] if kind == "two-phase" else _tables.build_tables(puzzle, kind, deadline=deadline)
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
