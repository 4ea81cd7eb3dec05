"""Sokoban: :mod:`.rules` holds the puzzle, :mod:`.cells` the cell codes, :mod:`.generator` the
training levels (random rooms, reverse play that pulls boxes), :mod:`.levels` the Boxoban level
files, :mod:`.deadlock` the dead squares and :mod:`.viewer` the drawing."""

from puzzlezero.puzzles.pictures import grid_of
from puzzlezero.puzzles.sokoban import viewer
from puzzlezero.puzzles.sokoban.cells import AGENT, BOX, TARGET, WALL, cell_name
from puzzlezero.puzzles.sokoban.rules import Sokoban

# the RGB pictures (puzzlezero.puzzles.pictures.draw): the viewer's level
grid_of.register(Sokoban)(viewer.grid)

__all__ = ["AGENT", "BOX", "TARGET", "WALL", "Sokoban", "cell_name"]
