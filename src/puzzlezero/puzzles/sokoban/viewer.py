"""Drawings of a Sokoban level, SVG and the RGB picture (:func:`grid`, for
:func:`puzzlezero.puzzles.pictures.draw`): walls, floor, targets, boxes (green when on a target),
agent."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from puzzlezero.puzzles.pictures import Grid, rgb
from puzzlezero.puzzles.sokoban.cells import AGENT, BOX, TARGET, WALL

__all__ = ["grid", "sokoban_svg"]

_WALL = "#5b4a3f"
_WALL_EDGE = "#473a31"
_FLOOR = "#e9e3d5"
_TARGET = "#d9534f"
_BOX = "#c98b3a"
_BOX_DONE = "#5cae5c"
_AGENT = "#3a6fd8"


def sokoban_svg(grid: np.ndarray, size: int = 300) -> str:
    """A standalone ``<svg>`` of a level ``grid`` (``uint8[H, W]`` cell codes), ``size`` pixels wide
    (the height follows the aspect ratio)."""
    grid = np.asarray(grid)
    h, w = grid.shape
    cell = 40
    boxes = int(np.count_nonzero(grid & BOX))
    done = int(np.count_nonzero((grid & (BOX | TARGET)) == (BOX | TARGET)))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w * cell} {h * cell}" width="{size}" '
        f'height="{round(size * h / w)}" role="img" aria-label="Sokoban level, {done} of {boxes} boxes on targets">',
        f'<rect x="0" y="0" width="{w * cell}" height="{h * cell}" fill="{_FLOOR}"/>',
    ]
    for (r, c), v in np.ndenumerate(grid):
        x, y = c * cell, r * cell
        v = int(v)
        if v & WALL:
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{_WALL}" stroke="{_WALL_EDGE}"/>'
            )
            continue
        if v & TARGET:
            parts.append(
                f'<circle cx="{x + cell / 2:g}" cy="{y + cell / 2:g}" r="{cell * 0.16:g}" fill="{_TARGET}"/>'
            )
        if v & BOX:
            fill = _BOX_DONE if v & TARGET else _BOX
            parts.append(
                f'<rect x="{x + 4}" y="{y + 4}" width="{cell - 8}" height="{cell - 8}" rx="4" fill="{fill}" '
                'stroke="#00000055" stroke-width="2"/>'
            )
        if v & AGENT:
            parts.append(
                f'<circle cx="{x + cell / 2:g}" cy="{y + cell / 2:g}" r="{cell * 0.32:g}" fill="{_AGENT}" '
                'stroke="#ffffff" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


class Level(Protocol):
    """What :func:`grid` reads of a Sokoban puzzle (:class:`.rules.Sokoban` has it)."""

    height: int
    width: int


def _cell_colours() -> np.ndarray:
    """``uint8[16, 3]``: the picture's colour of each cell code (the SVG drawing's colours; a box or
    the agent on a target in a shade of its own)."""
    table = np.zeros((16, 3), dtype=np.uint8)
    table[:] = rgb("#ff00ff")  # codes no level holds
    for code, colour in {
        0: _FLOOR,
        WALL: _WALL,
        TARGET: _TARGET,
        BOX: _BOX,
        BOX | TARGET: _BOX_DONE,
        AGENT: _AGENT,
        AGENT | TARGET: "#7a4fd0",
    }.items():
        table[code] = rgb(colour)
    return table


_CELL_COLOURS = _cell_colours()


def grid(puzzle: Level, states: np.ndarray) -> Grid:
    """The cells of the RGB pictures of ``states[B, height * width]``: walls, floor, targets,
    boxes (green on a target), the agent (blue; violet on a target)."""
    codes = states.reshape(states.shape[0], puzzle.height, puzzle.width) & 15
    return Grid(colours=_CELL_COLOURS[codes], background=rgb(_WALL_EDGE))
