"""Puzzle rules: pure batched NumPy functions (see :mod:`puzzlezero.puzzles.base`).

One package per puzzle with the same file names (:mod:`.cube`, :mod:`.npuzzle`, :mod:`.lightsout`,
:mod:`.sokoban`: ``rules.py`` the puzzle, ``viewer.py`` its drawing, and where they apply
``notation.py``, ``generator.py``, ``levels.py``...); shared by all: :mod:`.base` (the contract),
:mod:`.walks` (the training walks), :mod:`.macros`, :mod:`.text_viewer` and :mod:`.pictures`
(the RGB pictures, each puzzle's own ``grid`` in its ``viewer.py``)."""

from puzzlezero.puzzles.base import Goal, Puzzle
from puzzlezero.puzzles.inputs import onehot

__all__ = ["Goal", "Puzzle", "onehot"]
