"""Lights Out on an ``n x n`` board: :mod:`.rules` holds the puzzle and :mod:`.viewer` its drawing."""

from puzzlezero.puzzles.lightsout.rules import LightsOut

__all__ = ["LightsOut"]
