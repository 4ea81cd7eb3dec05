"""The sliding puzzles (8-, 15-, 24-, 35-, 48-puzzle): :mod:`.rules` holds the puzzle, :mod:`.walk`
the numba kernel of its scrambles, :mod:`.linear_conflict` its network-free heuristic (Manhattan
distance plus linear conflicts) and :mod:`.viewer` its drawing."""

from puzzlezero.puzzles.npuzzle.rules import NPuzzle

__all__ = ["NPuzzle"]
