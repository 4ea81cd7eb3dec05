"""Drawings of a sliding-tile board, SVG and the RGB picture (:func:`grid`, for
:func:`puzzlezero.puzzles.pictures.draw`): numbered tiles, tiles already at home in a lighter shade."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from puzzlezero.puzzles.pictures import Grid, palette, rgb

__all__ = ["grid", "npuzzle_svg"]

_BOARD = "#3b3f46"
_TILE = "#e8b04a"
_TILE_HOME = "#f6dca4"
_TEXT = "#2b2b2b"


def npuzzle_svg(tiles: np.ndarray, n: int, size: int = 300) -> str:
    """A standalone ``<svg>`` of ``tiles`` (``int[n*n]``, row-major, 0 = blank), ``size`` pixels wide.

    Each tile is a rounded square with its number; a tile on its goal cell is drawn lighter, so the
    solved part of the board stands out. The blank is left empty.
    """
    tiles = np.asarray(tiles).reshape(-1)
    cell = 100.0
    pad = 6.0
    total = n * cell + 2 * pad
    font = cell * (0.46 if n * n - 1 < 100 else 0.36)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total:g} {total:g}" width="{size}" '
        f'height="{size}" role="img" aria-label="{n * n - 1}-puzzle">',
        f'<rect x="0" y="0" width="{total:g}" height="{total:g}" rx="10" fill="{_BOARD}"/>',
    ]
    for i, v in enumerate(int(t) for t in tiles):
        if v == 0:
            continue
        r, c = divmod(i, n)
        x, y = pad + c * cell, pad + r * cell
        fill = _TILE_HOME if v == i + 1 else _TILE
        parts.append(
            f'<rect x="{x + 3:g}" y="{y + 3:g}" width="{cell - 6:g}" height="{cell - 6:g}" rx="9" '
            f'fill="{fill}"/>'
            f'<text x="{x + cell / 2:g}" y="{y + cell / 2:g}" font-family="sans-serif" font-weight="bold" '
            f'font-size="{font:g}" fill="{_TEXT}" text-anchor="middle" dominant-baseline="central">{v}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


class Board(Protocol):
    """What :func:`grid` reads of a sliding puzzle (:class:`.rules.NPuzzle` has it)."""

    size: int


# the picture's cell colours: board (the blank), tile, tile on its goal cell
_CELL_COLOURS = palette([_BOARD, _TILE, _TILE_HOME])


def grid(puzzle: Board, states: np.ndarray) -> Grid:
    """The cells of the RGB pictures of ``states[B, n*n]``: numbered tiles, lighter on their goal
    cell, the blank empty."""
    n = puzzle.size
    tiles = states.reshape(states.shape[0], n, n).astype(np.int64)
    home = tiles == np.arange(1, n * n + 1).reshape(n, n)
    kind = np.where(tiles == 0, 0, np.where(home, 2, 1))
    return Grid(
        colours=_CELL_COLOURS[kind],
        background=rgb(_BOARD),
        labels=np.where(tiles == 0, -1, tiles),
        ink=rgb(_TEXT),
    )
