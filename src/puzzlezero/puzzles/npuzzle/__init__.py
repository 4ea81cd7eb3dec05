"""The sliding puzzles (8-, 15-, 24-, 35-, 48-puzzle): :mod:`.rules` holds the puzzle, :mod:`.walk`
the numba kernel of its scrambles, :mod:`.linear_conflict` its network-free heuristic (Manhattan
distance plus linear conflicts) and :mod:`.viewer` its drawing."""

from puzzlezero.puzzles.npuzzle import viewer
from puzzlezero.puzzles.npuzzle.rules import NPuzzle
from puzzlezero.puzzles.pictures import grid_of

# the RGB pictures (puzzlezero.puzzles.pictures.draw): the viewer's board
grid_of.register(NPuzzle)(viewer.grid)

__all__ = ["NPuzzle"]
