"""The tables a solve reads, built (or loaded) before its clock starts.

Some searches read tables that are built once and cached (:func:`puzzlezero.classic.build_tables`):
the two-phase searches' (about 10 s each), the group solver's that the fallback runs. A solve
builds what it lacks while it runs, inside its time limit: the other searches answer meanwhile,
so a first solve on a fresh machine still answers in time, with less. A measurement or a server
wants every solve alike: ``bench`` builds them before its first case
(:func:`prepare_solve_tables`), ``serve`` before its workers start (the same
:func:`table_kinds`; there a table that does not build stops the start).
"""

from __future__ import annotations

from puzzlezero.defaults import member_search
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver.options import SolveOptions
from puzzlezero.solver.searches import SEARCHES

__all__ = ["table_kinds", "prepare_solve_tables"]


def table_kinds(opts: SolveOptions) -> list[str]:
    """The kinds of table (``puzzlezero pdb build --kind KIND``) a solve with ``opts`` reads: its
    search's and its search members' (``search:two-phase``), and the group solver's where it is the
    fallback; each once, in that order."""
    searches = [opts.search, *(s for s in map(member_search, opts.models) if s)]
    kinds = [SEARCHES[s].tables for s in searches]  # resolved options name registered searches
    if opts.fallback == "group":
        kinds.append("group")
    return list(dict.fromkeys(k for k in kinds if k is not None))


def prepare_solve_tables(puzzle: Puzzle, opts: SolveOptions) -> list[str]:
    """Build (or load) every table a solve of ``puzzle`` with ``opts`` reads (:func:`table_kinds`),
    under their locks; a line per table for people. A kind the puzzle has no table of is skipped
    (the search then reads none)."""
    from puzzlezero.classic import build_tables

    lines: list[str] = []
    for kind in table_kinds(opts):
        try:
            lines += build_tables(puzzle, kind)
        except PuzzleError:
            continue
    return lines
