"""Pictures of permutation puzzles: a cube as its net, anything else as a labelled grid.

A definition's ``drawing`` says how to lay the positions out. A cube (``{"kind": "cube", "size":
n}``) has ``6 n^2`` stickers, face after face in the order U, F, R, B, L, D (the Santa 2023
competition's), each face row by row; it is drawn as the net::

        U
    L   F   R   B
        D

Globes (``rows`` + 1 rings of ``2 columns`` positions), wreaths (two rings) and grids are drawn as
rows of labelled cells; labels get colours in the order they first appear in the goal (six colours
of a cube's faces first). Pure text and SVG strings: no drawing library.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle

__all__ = ["FACE_ORDER", "PALETTE", "grid_rows", "net_cells", "render_text", "to_svg"]

#: the faces of a cube's stickers, in the order they are stored
FACE_ORDER = ("U", "F", "R", "B", "L", "D")
#: where each face sits in the net, as (row, column) in face units
_NET = {"U": (0, 1), "L": (1, 0), "F": (1, 1), "R": (1, 2), "B": (1, 3), "D": (2, 1)}
#: colours of labels by their order in the goal (a cube: white, green, red, blue, orange, yellow)
PALETTE = (
    "#ffffff", "#22aa44", "#dd2222", "#2255dd", "#ff8811", "#ffdd00",
    "#aa44cc", "#44cccc", "#cc4488", "#888888", "#99cc33", "#664422",
)  # fmt: skip


def _colour(value: int) -> str:
    if value < len(PALETTE):
        return PALETTE[value]
    hue = (value * 137.508) % 360  # the golden angle: distinct hues for many labels
    return f"hsl({hue:.0f},65%,60%)"


def net_cells(size: int) -> list[tuple[int, int, int]]:
    """``(row, column, position)`` of every sticker of a cube of ``size`` in its net."""
    cells = []
    for f, face in enumerate(FACE_ORDER):
        fr, fc = _NET[face]
        for k in range(size * size):
            r, c = divmod(k, size)
            cells.append((fr * size + r, fc * size + c, f * size * size + k))
    return cells


def grid_rows(puzzle: PermutationPuzzle) -> list[list[int]]:
    """The positions in rows: a globe's rings, a wreath's two rings, or a grid of ``columns``."""
    n = puzzle.definition.positions
    drawing = dict(puzzle.definition.drawing or {})
    kind = drawing.get("kind")
    if kind == "globe":
        width = 2 * int(drawing["columns"])
    elif kind == "grid":
        width = int(drawing["columns"])
    elif kind == "wreath":
        width = max(int(drawing["left"]), 1)
    else:
        width = max(1, math.ceil(math.sqrt(n)))
    return [list(range(i, min(n, i + width))) for i in range(0, n, width)]


def _cells(puzzle: PermutationPuzzle) -> list[tuple[int, int, int]]:
    drawing = puzzle.definition.drawing or {}
    if drawing.get("kind") == "cube" and puzzle.definition.positions == 6 * int(drawing["size"]) ** 2:
        return net_cells(int(drawing["size"]))
    return [(r, c, p) for r, row in enumerate(grid_rows(puzzle)) for c, p in enumerate(row)]


def render_text(puzzle: PermutationPuzzle, state: np.ndarray) -> str:
    """A terminal picture: the labels in the net or the rows, aligned."""
    flat = np.asarray(state).reshape(-1)
    cells = _cells(puzzle)
    width = max(len(lab) for lab in puzzle.labels)
    rows = max(r for r, _, _ in cells) + 1
    cols = max(c for _, c, _ in cells) + 1
    grid = [[" " * width] * cols for _ in range(rows)]
    for r, c, p in cells:
        grid[r][c] = puzzle.labels[int(flat[p])].rjust(width)
    return "\n".join(" ".join(row).rstrip() for row in grid)


def to_svg(puzzle: PermutationPuzzle, state: np.ndarray, size: int = 300) -> str:
    """An SVG of the state: coloured cells, each with its label where labels are not colours alone."""
    flat = np.asarray(state).reshape(-1)
    cells = _cells(puzzle)
    rows = max(r for r, _, _ in cells) + 1
    cols = max(c for _, c, _ in cells) + 1
    cell = max(4.0, min(size / cols, size / rows))
    w, h = cols * cell, rows * cell
    show_labels = puzzle.num_values > 6 or (puzzle.definition.drawing or {}).get("kind") != "cube"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.1f} {h:.1f}" role="img" aria-label="{html.escape(puzzle.name)}">'
    ]
    font = cell * 0.38
    for r, c, p in cells:
        v = int(flat[p])
        x, y = c * cell, r * cell
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" height="{cell:.1f}" fill="{_colour(v)}" '
            f'stroke="#222" stroke-width="{max(0.5, cell / 30):.1f}" data-position="{p}"/>'
        )
        if show_labels and cell >= 10:
            parts.append(
                f'<text x="{x + cell / 2:.1f}" y="{y + cell * 0.62:.1f}" font-size="{font:.1f}" '
                f'text-anchor="middle" font-family="monospace">{html.escape(puzzle.labels[v])}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
