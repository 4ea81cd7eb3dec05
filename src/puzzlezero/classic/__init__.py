"""The solvers that need no learned model:

* :mod:`.optimal`: optimal solutions and admissible heuristics: IDA* over pattern databases for
  the sliding puzzles and the 3x3x3 cube, descent in the exact 2x2x2 table, Lights Out over GF(2),
  the bridge to Kociemba's two-phase solver, and the building and caching of those tables;
* :mod:`.group`: the group-theory solver of permutation puzzles, sifting a state through a
  Schreier–Sims stabilizer chain of move words made short by Minkwitz's algorithm (group theory
  beside learning, as in A. Agarwal's look at the cube);
* :mod:`.reduction`: the sliding-puzzle reduction solver, placing a few tiles at a time by small
  breadth-first searches.

They are the references the learned solvers are measured against and their fallbacks. Each takes
``(puzzle, state, *, time_limit=None, max_nodes=None, deadline=None)`` and returns a
:class:`~puzzlezero.search.result.SearchResult`; ``deadline`` is an absolute reading of
:func:`puzzlezero.search.clock.now`, and where both are given the earlier of it and
``time_limit`` (seconds from the solver's own start) ends the search. They import only the
puzzles, :mod:`puzzlezero.storage` and the search results and clock: never torch.
"""

from puzzlezero.classic.group import GroupTable, group_table, solve_group
from puzzlezero.classic.optimal import HEURISTICS, SOLVERS, optimal_length, pdb_heuristic, solve_optimal
from puzzlezero.classic.reduction import solve_reduction

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
]
