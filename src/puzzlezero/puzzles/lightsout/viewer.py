"""Drawings of a Lights Out board, SVG and the RGB picture (:func:`grid`, for
:func:`puzzlezero.puzzles.pictures.draw`): lit cells glow yellow, dark cells are grey."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from puzzlezero.puzzles.pictures import Grid, palette, rgb

__all__ = ["grid", "lightsout_svg"]

_BOARD = "#23262b"
_ON = "#ffd84a"
_ON_EDGE = "#fff3b0"
_OFF = "#4a4f57"


def lightsout_svg(lights: np.ndarray, n: int, size: int = 300) -> str:
    """A standalone ``<svg>`` of ``lights`` (``0/1[n*n]``, row-major), ``size`` pixels wide.

    Each cell carries ``data-index`` (the press index ``row*n + col``) so a web page can make the
    cells clickable without recomputing the layout.
    """
    lights = np.asarray(lights).reshape(-1)
    cell = 100.0
    pad = 8.0
    total = n * cell + 2 * pad
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total:g} {total:g}" width="{size}" '
        f'height="{size}" role="img" aria-label="Lights Out {n}x{n}, {int(lights.sum())} lights on">',
        f'<rect x="0" y="0" width="{total:g}" height="{total:g}" rx="10" fill="{_BOARD}"/>',
    ]
    for i, on in enumerate(bool(v) for v in lights):
        r, c = divmod(i, n)
        x, y = pad + c * cell + 5, pad + r * cell + 5
        style = f'fill="{_ON}" stroke="{_ON_EDGE}" stroke-width="4"' if on else f'fill="{_OFF}"'
        parts.append(
            f'<rect data-index="{i}" x="{x:g}" y="{y:g}" width="{cell - 10:g}" height="{cell - 10:g}" '
            f'rx="12" {style}/>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


class Board(Protocol):
    """What :func:`grid` reads of a Lights Out puzzle (:class:`.rules.LightsOut` has it)."""

    size: int


# the picture's cell colours: board, light off, light on
_CELL_COLOURS = palette([_BOARD, _OFF, _ON])


def grid(puzzle: Board, states: np.ndarray) -> Grid:
    """The cells of the RGB pictures of ``states[B, n*n]``: lit cells yellow, dark cells grey."""
    n = puzzle.size
    on = states.reshape(states.shape[0], n, n).astype(bool)
    return Grid(colours=_CELL_COLOURS[1 + on], background=rgb(_BOARD))
