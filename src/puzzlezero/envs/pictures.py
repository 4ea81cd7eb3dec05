"""The environments' ``rgb_array`` pictures: ``uint8[B, H, W, 3]``, drawn with NumPy alone.

The drawing is :mod:`puzzlezero.puzzles.pictures` (:func:`draw`, :func:`paint`, :class:`Grid`,
:func:`rgb` and the per-class :func:`grid_of`), re-exported here; each built-in puzzle's picture is
the ``grid`` function of its package's ``viewer.py`` (``puzzles/*/viewer.py``). A puzzle from a
plugin adds its own with ``grid_of.register(MyPuzzle)(my_grid)``.
"""

from __future__ import annotations

from puzzlezero.puzzles.pictures import Grid, draw, grid_of, paint, rgb

__all__ = ["Grid", "draw", "grid_of", "paint", "rgb"]
