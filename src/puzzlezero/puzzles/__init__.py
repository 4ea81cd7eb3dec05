"""Puzzle rules: pure batched NumPy functions (see :mod:`puzzlezero.puzzles.base`)."""

from puzzlezero.puzzles.base import Puzzle, onehot

__all__ = ["Puzzle", "onehot"]
