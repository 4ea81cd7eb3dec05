"""Puzzle rules: pure batched NumPy functions (see :mod:`puzzlezero.puzzles.base`)."""

from puzzlezero.puzzles.base import Goal, Puzzle, onehot

__all__ = ["Goal", "Puzzle", "onehot"]
