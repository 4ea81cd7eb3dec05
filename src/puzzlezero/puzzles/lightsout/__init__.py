"""Lights Out on an ``n x n`` board: :mod:`.rules` holds the puzzle and :mod:`.viewer` its drawing."""

from puzzlezero.puzzles.lightsout import viewer
from puzzlezero.puzzles.lightsout.rules import LightsOut
from puzzlezero.puzzles.pictures import grid_of

# the RGB pictures (puzzlezero.puzzles.pictures.draw): the viewer's board
grid_of.register(LightsOut)(viewer.grid)

__all__ = ["LightsOut"]
