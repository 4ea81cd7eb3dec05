"""The tables a solve reads, built (or loaded) before its clock starts.

Some searches read tables that are built once and cached (:func:`puzzlezero.classic.build_tables`):
the two-phase searches' (about 10 s each), the group solver's that the fallback runs. A solve
builds what it lacks while it runs, inside its time limit: the other searches answer meanwhile,
so a first solve on a fresh machine still answers in time, with less (a search that answers
nothing without its tables, ``SearchSpec.tables_first``, has them built before its clock
starts). A measurement or a server wants every solve alike: ``bench`` builds them before its first case
(:func:`prepare_solve_tables`), ``serve`` before its workers start (the same
:func:`table_needs`; there a table that does not build stops the start). A search that runs
another puzzle's solve inside (the 4x4x4's reduction, cube3's solve) names it, and that solve's
tables are prepared too.
"""

from __future__ import annotations

from puzzlezero.defaults import member_search
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver.names import resolve_entry
from puzzlezero.solver.options import SolveOptions
from puzzlezero.solver.searches import SEARCHES

__all__ = ["table_kinds", "table_needs", "prepare_solve_tables"]


def _searches(opts: SolveOptions) -> list[str]:
    """The search of ``opts`` and its members' (``search:two-phase``); resolved options name
    registered searches only."""
    return [opts.search, *(s for s in map(member_search, opts.models) if s)]


def table_kinds(opts: SolveOptions) -> list[str]:
    """The kinds of table (``puzzlezero pdb build --kind KIND``) a solve with ``opts`` reads: its
    search's and its search members' (``search:two-phase``), and the group solver's where it is the
    fallback; each once, in that order."""
    kinds = [SEARCHES[s].tables for s in _searches(opts)]
    if opts.fallback == "group":
        kinds.append("group")
    return list(dict.fromkeys(k for k in kinds if k is not None))


def table_needs(puzzle: Puzzle, opts: SolveOptions) -> list[tuple[Puzzle, str]]:
    """Every ``(puzzle, kind)`` a solve of ``puzzle`` with ``opts`` reads: its own
    (:func:`table_kinds`), then those of the solves its searches run inside
    (:attr:`~puzzlezero.solver.searches.SearchSpec.inner`: the 4x4x4 reduction ends in cube3's
    solve, which reads cube3's two-phase tables); each once, in that order."""
    needs = [(puzzle, kind) for kind in table_kinds(opts)]
    for search in _searches(opts):
        inner = SEARCHES[search].inner
        if inner is not None:
            for p, o in resolve_entry(inner, f"the inner solves of search {search!r}")(puzzle):
                needs += table_needs(p, o)
    seen: dict[tuple[str, str], tuple[Puzzle, str]] = {}
    for p, kind in needs:
        seen.setdefault((p.name, kind), (p, kind))
    return list(seen.values())


def prepare_solve_tables(puzzle: Puzzle, opts: SolveOptions) -> list[str]:
    """Build (or load) every table a solve of ``puzzle`` with ``opts`` reads (:func:`table_needs`),
    under their locks; a line per table for people. A kind the puzzle has no table of is skipped
    (the search then reads none)."""
    from puzzlezero.classic import build_tables

    lines: list[str] = []
    for p, kind in table_needs(puzzle, opts):
        try:
            lines += build_tables(p, kind)
        except PuzzleError:
            continue
    return lines
