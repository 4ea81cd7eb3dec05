"""Pictures of puzzle states as RGB arrays, drawn with NumPy alone: ``uint8[B, H, W, 3]``.

A picture is a grid of coloured cells (the cube's stickers in its unfolded net, sliding tiles with
their numbers, lights, Sokoban squares), each framed by a thin gap, so a whole batch of states is
drawn with a few array operations. Each puzzle says what its cells are with :func:`grid_of`, a
:func:`functools.singledispatch` function on the puzzle's class: a built-in puzzle's drawing is the
``grid`` function of its package's ``viewer.py`` (``puzzles/*/viewer.py``, in the colours of its SVG
drawing), registered by the package's ``__init__.py``; a puzzle with no drawing of its own gets its
text picture (``render_text``), one cell per character, each character its own colour and digits
written out. A puzzle from a plugin adds its own with ``grid_of.register(MyPuzzle)(my_grid)``.

This module knows no puzzle: it imports NumPy, :mod:`puzzlezero.errors` and
:mod:`puzzlezero.puzzles.base` alone, and the viewers import it.

Example:
    >>> import numpy as np
    >>> from puzzlezero import make
    >>> cube = make("cube3")
    >>> image = draw(cube, cube.goals(1))[0]
    >>> image.shape, image.dtype  # the 9 x 12 net of 20-pixel stickers
    ((180, 240, 3), dtype('uint8'))
    >>> image[90, 90].tolist()  # the centre of the F face: green
    [0, 158, 96]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache, singledispatch

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle

__all__ = ["MIN_CELL", "TARGET_SIDE", "Grid", "code_colours", "draw", "grid_of", "paint", "palette", "rgb"]

#: the long side of a picture drawn with the default cell size, in pixels (about)
TARGET_SIDE = 240
#: the smallest default cell, in pixels
MIN_CELL = 8

# 3 x 5 pixel digits, one string of rows per digit
_FONT = (
    "###,#.#,#.#,#.#,###",
    ".#.,##.,.#.,.#.,###",
    "###,..#,###,#..,###",
    "###,..#,.##,..#,###",
    "#.#,#.#,###,..#,..#",
    "###,#..,###,..#,###",
    "###,#..,###,#.#,###",
    "###,..#,.#.,.#.,.#.",
    "###,#.#,###,#.#,###",
    "###,#.#,###,..#,###",
)
_GLYPHS = np.array([[[c == "#" for c in row] for row in g.split(",")] for g in _FONT])  # bool[10, 5, 3]


def rgb(colour: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` as ``(r, g, b)``."""
    value = int(colour.lstrip("#")[:6], 16)
    return value >> 16, (value >> 8) & 255, value & 255


@dataclass(frozen=True)
class Grid:
    """What to draw for a batch of ``B`` states on an ``R x C`` grid of cells.

    Attributes:
        colours: ``uint8[B, R, C, 3]``, the colour of each cell.
        background: the colour of the gaps between cells (and of cells showing nothing).
        labels: ``int64[B, R, C]``, a number written in each cell, ``-1`` for none; ``None``: no
            numbers at all.
        ink: the colour of the numbers.
    """

    colours: np.ndarray
    background: tuple[int, int, int]
    labels: np.ndarray | None = None
    ink: tuple[int, int, int] = (43, 43, 43)


def draw(puzzle: Puzzle, states: np.ndarray, cell: int | None = None) -> np.ndarray:
    """``uint8[B, H, W, 3]``: pictures of ``states[B, *state_shape]``, ``cell`` pixels per cell
    (default: about :data:`TARGET_SIDE` pixels on the long side)."""
    return paint(grid_of(puzzle, np.asarray(states)), cell)


def paint(grid: Grid, cell: int | None = None) -> np.ndarray:
    """``uint8[B, R * cell, C * cell, 3]``: each cell of ``grid`` a ``cell x cell`` square in its
    colour, framed by a gap in the background colour, with its number (if any) in the middle."""
    colours = np.asarray(grid.colours, dtype=np.uint8)
    b, rows, cols, _ = colours.shape
    largest = -1 if grid.labels is None or not grid.labels.size else int(grid.labels.max())
    widest = len(str(largest)) if largest >= 0 else 0  # digits of the widest number, 0: no numbers
    least = _least_cell(widest)
    if cell is None:
        cell = max(MIN_CELL, least, TARGET_SIDE // max(rows, cols, 1))
    elif isinstance(cell, bool) or not isinstance(cell, int | np.integer) or cell < least:
        raise PuzzleError(
            f"cell must be a whole number of pixels >= {least} for these pictures, got {cell!r}"
        )
    cell = int(cell)
    image = colours.repeat(cell, axis=1).repeat(cell, axis=2)
    gap = max(1, cell // 16)
    edge = np.zeros(cell, dtype=bool)
    edge[:gap] = edge[cell - gap :] = True
    image[:, np.tile(edge, rows)[:, None] | np.tile(edge, cols)[None, :]] = grid.background
    if widest:
        assert grid.labels is not None
        labels = np.asarray(grid.labels, dtype=np.int64)
        stamps = _stamps(largest, cell)  # bool[L + 1, cell, cell]
        ink = stamps[np.maximum(labels, 0)] & (labels >= 0)[..., None, None]  # [B, R, C, cell, cell]
        image[ink.transpose(0, 1, 3, 2, 4).reshape(b, rows * cell, cols * cell)] = grid.ink
    return image


def _least_cell(digits: int) -> int:
    """The smallest cell that holds a number of ``digits`` digits at scale 1 inside its frame."""
    return max(MIN_CELL, 4 * digits + 3)


@lru_cache(maxsize=16)
def _stamps(largest: int, cell: int) -> np.ndarray:
    """``bool[largest + 1, cell, cell]``: the numbers ``0..largest`` written in the middle of a
    cell, all at one scale (the largest at which the widest fits in 60% of the cell)."""
    widest = len(str(largest))
    scale = max(1, min(int(cell * 0.6) // (4 * widest - 1), int(cell * 0.5) // 5))
    out = np.zeros((largest + 1, cell, cell), dtype=bool)
    for v in range(largest + 1):
        glyphs = [np.pad(_GLYPHS[int(d)], ((0, 0), (0, 1))) for d in str(v)]
        bitmap = np.concatenate(glyphs, axis=1)[:, :-1]  # a blank column between digits
        bitmap = bitmap.repeat(scale, axis=0).repeat(scale, axis=1)
        h, w = bitmap.shape
        top, left = (cell - h) // 2, (cell - w) // 2
        out[v, top : top + h, left : left + w] = bitmap
    out.flags.writeable = False
    return out


def palette(colours: Iterable[str]) -> np.ndarray:
    """``uint8[K, 3]``: the ``"#rrggbb"`` colours as rows, to index with cell codes."""
    return np.array([rgb(c) for c in colours], dtype=np.uint8)


@singledispatch
def grid_of(puzzle: Puzzle, states: np.ndarray) -> Grid:
    """The cells to draw for ``states[B, *state_shape]`` of ``puzzle``. Default: the text picture
    (``render_text``), one cell per character: a digit is written out on a light cell, a space
    shows the background, any other character is a cell of its own colour (a one-to-one function
    of its code point, so different texts give different pictures)."""
    texts = [puzzle.render_text(s).splitlines() or [""] for s in states]
    rows = max((len(lines) for lines in texts), default=1)
    cols = max((len(line) for lines in texts for line in lines), default=1) or 1
    codes = np.full((len(texts), rows, cols), ord(" "), dtype=np.int64)
    for i, lines in enumerate(texts):
        for r, line in enumerate(lines):
            codes[i, r, : len(line)] = [ord(ch) for ch in line]
    colours = code_colours(codes)
    digits = (codes >= ord("0")) & (codes <= ord("9"))
    colours[digits] = _DIGIT_CELL
    background = code_colours(np.array(ord(" ")))
    return Grid(
        colours=colours,
        background=(int(background[0]), int(background[1]), int(background[2])),
        labels=np.where(digits, codes - ord("0"), -1),
    )


_DIGIT_CELL = rgb("#e0e0e0")


def code_colours(codes: np.ndarray) -> np.ndarray:
    """``uint8[..., 3]``: a colour for each character code, one-to-one on codes below ``2**24``
    (an odd multiplier is a bijection modulo ``2**24``)."""
    mixed = (np.asarray(codes, dtype=np.int64) * 0x9E3779) & 0xFFFFFF
    return np.stack([mixed >> 16, (mixed >> 8) & 255, mixed & 255], axis=-1).astype(np.uint8)
