"""Drawings of cubes as an unfolded net: text (letters, optional ANSI colours), SVG and the RGB
picture (:func:`grid`, for :func:`puzzlezero.puzzles.pictures.draw`).

The text and the SVG take the facelet string (``"URFDLB"`` letters in Kociemba order, ``6 * n * n`` of them) and
lay the faces out the classic way, each face as seen looking at it::

          U
        L F R B
          D

Standard colours: U white, R red, F green, D yellow, L orange, B blue.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from typing import Protocol

import numpy as np

from puzzlezero.puzzles.pictures import Grid, palette, rgb

__all__ = ["COLOURS", "grid", "net_text", "to_svg"]

#: fill colour of each face letter (the standard Western colour scheme)
COLOURS = {"U": "#ffffff", "R": "#c41e3a", "F": "#009e60", "D": "#ffd500", "L": "#ff5800", "B": "#0051ba"}
_ANSI = {"U": "97;107", "R": "97;41", "F": "97;42", "D": "30;103", "L": "30;48;5;208", "B": "97;44"}
#: where each face sits in the net, in face units (column, row)
_NET = {"U": (1, 0), "L": (0, 1), "F": (1, 1), "R": (2, 1), "B": (3, 1), "D": (1, 2)}
_FACES = "URFDLB"


def _grid(facelets: str, n: int) -> list[list[str]]:
    """The net as ``3n`` rows of ``4n`` cells (a letter, or ``""`` where no face lies)."""
    grid = [[""] * (4 * n) for _ in range(3 * n)]
    for f, face in enumerate(_FACES):
        col, row = _NET[face]
        for k in range(n * n):
            grid[row * n + k // n][col * n + k % n] = facelets[f * n * n + k]
    return grid


def net_text(facelets: str, n: int, color: bool = False) -> str:
    """The net in letters, one sticker per two columns; ``color=True`` paints each sticker with an
    ANSI background colour (for terminals)."""
    lines = []
    for row in _grid(facelets, n):
        cells = []
        for letter in row:
            if not letter:
                cells.append("  ")
            elif color:
                cells.append(f"\x1b[{_ANSI.get(letter, '0')}m{letter} \x1b[0m")
            else:
                cells.append(f"{letter} ")
        lines.append("".join(cells).rstrip())
    return "\n".join(lines)


def to_svg(facelets: str, n: int, size: int = 300) -> str:
    """A standalone ``<svg>`` of the net, ``size`` pixels wide and ``3/4 * size`` high; each sticker
    is a ``<rect>`` with ``data-facelet`` set to its name (``U1`` ...)."""
    cell = size / (4 * n)
    pad = max(cell * 0.06, 0.5)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size * 3 / 4:g}" '
        f'viewBox="0 0 {size} {size * 3 / 4:g}" role="img" aria-label="cube net {escape(facelets)}">'
    ]
    for f, face in enumerate(_FACES):
        col, row = _NET[face]
        for k in range(n * n):
            letter = facelets[f * n * n + k]
            x = (col * n + k % n) * cell + pad
            y = (row * n + k // n) * cell + pad
            parts.append(
                f'<rect x="{x:.2f}" y="{y:.2f}" width="{cell - 2 * pad:.2f}" height="{cell - 2 * pad:.2f}" '
                f'rx="{pad * 1.5:.2f}" fill="{COLOURS.get(letter, "#808080")}" stroke="#222" '
                f'stroke-width="{pad:.2f}" data-facelet="{face}{k + 1}"/>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


class NetPuzzle(Protocol):
    """What :func:`grid` reads of a cube (:class:`.rules.Cube3` and the others have it)."""

    @property
    def n(self) -> int: ...


_BACKGROUND = rgb("#222222")
#: the picture's colour of each face's stickers, in face order
_STICKER_COLOURS = palette([COLOURS[f] for f in _FACES])


@lru_cache(maxsize=8)
def _net_cells(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(row int[6 n n], col int[6 n n])``: each sticker's cell in the ``3n x 4n`` net."""
    rows, cols = np.empty(6 * n * n, np.int64), np.empty(6 * n * n, np.int64)
    k = np.arange(n * n)
    for f, face in enumerate(_FACES):
        col, row = _NET[face]
        rows[f * n * n + k] = row * n + k // n
        cols[f * n * n + k] = col * n + k % n
    return rows, cols


def grid(puzzle: NetPuzzle, states: np.ndarray) -> Grid:
    """The cells of the RGB pictures of ``states[B, 6 n n]``: the unfolded net (U on top, L F R B
    across, D below), each sticker in its face's colour (:data:`COLOURS`), on a dark background."""
    n = puzzle.n
    colours = np.empty((states.shape[0], 3 * n, 4 * n, 3), dtype=np.uint8)
    colours[:] = _BACKGROUND
    rows, cols = _net_cells(n)
    colours[:, rows, cols] = _STICKER_COLOURS[states.reshape(states.shape[0], -1)]
    return Grid(colours=colours, background=_BACKGROUND)
