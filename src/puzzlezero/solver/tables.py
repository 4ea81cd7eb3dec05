"""The tables a solve reads, built (or loaded) before its clock starts.

Some searches read tables that are built once and cached (:func:`puzzlezero.classic.build_tables`):
the two-phase searches' (about 10 s each), the group solver's that the fallback runs, the
pattern databases of the optimal solver and of the ``pdb`` heuristic. A solve builds what it
lacks while it runs, inside its time limit: the other searches answer meanwhile, so a first
solve on a fresh machine still answers in time, with less; a group table or a pattern database
is built in a process stopped at the solve's deadline, and one not built by then ends the solve
("time limit") naming the command that builds it once. Two kinds are built off the clock,
once a state is left that the breadth-first pass did not answer: those of a search that
answers nothing without them, ``SearchSpec.tables_first``, and those of the solves it runs
inside (:func:`search_table_needs`); and an ensemble's search member's (cube3's two-phase
table), which its warm-up builds with the members' networks and kernels. A measurement or a
server wants every solve alike: ``bench`` builds them before its first case
(:func:`prepare_solve_tables`), ``serve`` before its workers start (the same, ``required``:
there a table that does not build stops the start). A search that runs
another puzzle's solve inside (the 4x4x4's reduction, cube3's solve) names it, and that solve's
tables are prepared too.
"""

from __future__ import annotations

import math
import sys

from puzzlezero.defaults import member_search
from puzzlezero.errors import MemoryBudgetError, PuzzleError, TableTimeoutError, UnknownNameError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.solver.names import resolve_entry
from puzzlezero.solver.options import SolveOptions
from puzzlezero.solver.searches import SEARCHES

__all__ = [
    "PREPARE_SECONDS",
    "table_kinds",
    "table_needs",
    "window_needs",
    "search_table_needs",
    "prepare_solve_tables",
]

#: seconds a bench or a server gives the tables before its first solve: a table that takes longer
#: (the Schreier-Sims chain of the 10x10x10 ran more than 10 minutes) is built once with
#: ``puzzlezero pdb build ...``, which has no limit
PREPARE_SECONDS = 600.0


def _searches(opts: SolveOptions) -> list[str]:
    """The search of ``opts`` and its members' (``search:two-phase``); resolved options name
    registered searches only."""
    return [opts.search, *(s for s in map(member_search, opts.models) if s)]


def table_kinds(opts: SolveOptions) -> list[str]:
    """The kinds of table (``puzzlezero pdb build --kind KIND``) a solve with ``opts`` reads: its
    search's and its search members' (``search:two-phase``), the pattern databases of the ``pdb``
    heuristic, and the group solver's where it is the fallback; each once, in that order."""
    kinds = [SEARCHES[s].tables for s in _searches(opts)]
    if opts.heuristic == "pdb":
        kinds.append("pdb")
    if opts.fallback == "group":
        kinds.append("group")
    return list(dict.fromkeys(k for k in kinds if k is not None))


def table_needs(puzzle: Puzzle, opts: SolveOptions, *, windows: bool = True) -> list[tuple[Puzzle, str]]:
    """Every ``(puzzle, kind)`` a solve of ``puzzle`` with ``opts`` reads: its own
    (:func:`table_kinds`), then those of the solves its searches run inside
    (:attr:`~puzzlezero.solver.searches.SearchSpec.inner`: the 4x4x4 reduction ends in cube3's
    solve, which reads cube3's two-phase tables), then, with ``windows``, its window re-solving
    pass's (:func:`window_needs`); each once, in that order."""
    needs = [(puzzle, kind) for kind in table_kinds(opts)]
    for search in _searches(opts):
        needs += _inner_needs(puzzle, search)
    if windows and opts.windows:
        needs += window_needs(puzzle)
    return _once(needs)


def window_needs(puzzle: Puzzle) -> list[tuple[Puzzle, str]]:
    """The table the window re-solving pass (``--windows``) reads on ``puzzle``: cube3's pattern
    databases (:data:`puzzlezero.classic.optimal.WINDOW_TABLES`), or none."""
    from puzzlezero.classic.optimal import window_tables

    kind = window_tables(puzzle)
    return [] if kind is None else [(puzzle, kind)]


def search_table_needs(puzzle: Puzzle, search: str) -> list[tuple[Puzzle, str]]:
    """The tables the registered ``search`` itself reads on ``puzzle``, and those of the solves it
    runs inside (its answers' tables, built before the clock for a ``SearchSpec.tables_first``
    search); not its fallback's."""
    own = SEARCHES[search].tables
    return _once([*(((puzzle, own),) if own is not None else ()), *_inner_needs(puzzle, search)])


def _inner_needs(puzzle: Puzzle, search: str) -> list[tuple[Puzzle, str]]:
    inner = SEARCHES[search].inner
    if inner is None:
        return []
    needs: list[tuple[Puzzle, str]] = []
    for p, o in resolve_entry(inner, f"the inner solves of search {search!r}")(puzzle):
        needs += table_needs(p, o)
    return needs


def _once(needs: list[tuple[Puzzle, str]]) -> list[tuple[Puzzle, str]]:
    seen: dict[tuple[str, str], tuple[Puzzle, str]] = {}
    for p, kind in needs:
        seen.setdefault((p.name, kind), (p, kind))
    return list(seen.values())


def prepare_solve_tables(
    puzzle: Puzzle,
    opts: SolveOptions,
    seconds: float | None = PREPARE_SECONDS,
    *,
    deadline: float | None = None,
    required: bool = False,
) -> list[str]:
    """Build (or load) every table a solve of ``puzzle`` with ``opts`` reads (:func:`table_needs`),
    under their locks, within ``seconds`` (``None``: no limit) or by ``deadline`` (a reading of
    :func:`puzzlezero.search.clock.now`, which several puzzles share: a server's start); a line per
    table for people. A kind the puzzle has no table of is skipped (the search then reads none).
    A table not built in time, or whose build would pass the memory budget, is left to each solve
    (which answers "time limit" where it has not 1.25 times as long:
    :data:`puzzlezero.storage.RETRY_MORE`), and said so on stderr; where it is ``required`` (a
    server's workers never build one) that error, and any other but a missing kind, is raised."""
    from puzzlezero.classic import build_tables

    if deadline is None:
        deadline = clock.deadline_after(seconds)
    until = None if math.isinf(deadline) else deadline
    lines: list[str] = []
    for p, kind in table_needs(puzzle, opts):
        try:
            lines += build_tables(p, kind, deadline=until)
        except (TableTimeoutError, MemoryBudgetError) as exc:
            if required:
                raise
            line = f"{exc} (a solve with a longer time limit tries again)"
            if isinstance(exc, MemoryBudgetError):
                line = f"{exc} (each solve that reads it says so)"
            print(line, file=sys.stderr, flush=True)
            lines.append(line)
        except UnknownNameError:  # none of that kind for this puzzle (the optimal solver of a
            continue  # puzzle given as data reads no pattern database)
        except PuzzleError:
            if required:
                raise
            continue
    return lines
