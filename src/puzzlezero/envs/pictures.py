"""Pictures of puzzle states as RGB arrays, drawn with NumPy alone: ``uint8[B, H, W, 3]``.

A picture is a grid of coloured cells (the cube's stickers in its unfolded net, sliding tiles with
their numbers, lights, Sokoban squares), each framed by a thin gap, so a whole batch of states is
drawn with a few array operations. Each puzzle says what its cells are with :func:`grid_of`, a
:func:`functools.singledispatch` function on the puzzle's class, in the colours of its SVG viewer
(``puzzles/*/viewer.py``); a puzzle with no drawing of its own gets its text picture
(``render_text``), one cell per character, each character its own colour and digits written out.
A puzzle from a plugin adds its own with ``grid_of.register(MyPuzzle)(my_grid)``.

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

from dataclasses import dataclass
from functools import lru_cache, singledispatch

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube import FACES, Cube2, Cube3, Cube3HTM
from puzzlezero.puzzles.cube.viewer import COLOURS
from puzzlezero.puzzles.lightsout import LightsOut
from puzzlezero.puzzles.npuzzle import NPuzzle
from puzzlezero.puzzles.permutation import PermutationPuzzle
from puzzlezero.puzzles.sokoban import Sokoban
from puzzlezero.puzzles.sokoban.cells import AGENT, BOX, TARGET, WALL

__all__ = ["Grid", "draw", "grid_of", "paint", "rgb"]

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


def _palette(colours: list[str]) -> np.ndarray:
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
    colours = _code_colours(codes)
    digits = (codes >= ord("0")) & (codes <= ord("9"))
    colours[digits] = _DIGIT_CELL
    background = _code_colours(np.array(ord(" ")))
    return Grid(
        colours=colours,
        background=(int(background[0]), int(background[1]), int(background[2])),
        labels=np.where(digits, codes - ord("0"), -1),
    )


_DIGIT_CELL = rgb("#e0e0e0")


def _code_colours(codes: np.ndarray) -> np.ndarray:
    """``uint8[..., 3]``: a colour for each character code, one-to-one on codes below ``2**24``
    (an odd multiplier is a bijection modulo ``2**24``)."""
    mixed = (np.asarray(codes, dtype=np.int64) * 0x9E3779) & 0xFFFFFF
    return np.stack([mixed >> 16, (mixed >> 8) & 255, mixed & 255], axis=-1).astype(np.uint8)


#: the cubes' net: where each face sits, in face units (column, row): U on top, L F R B across, D below
_NET = {"U": (1, 0), "L": (0, 1), "F": (1, 1), "R": (2, 1), "B": (3, 1), "D": (1, 2)}
_CUBE_BACKGROUND = rgb("#222222")


@lru_cache(maxsize=8)
def _net_cells(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(row int[6 n n], col int[6 n n])``: each sticker's cell in the ``3n x 4n`` net."""
    rows, cols = np.empty(6 * n * n, np.int64), np.empty(6 * n * n, np.int64)
    k = np.arange(n * n)
    for f, face in enumerate(FACES):
        col, row = _NET[face]
        rows[f * n * n + k] = row * n + k // n
        cols[f * n * n + k] = col * n + k % n
    return rows, cols


@grid_of.register(Cube2)
@grid_of.register(Cube3)
@grid_of.register(Cube3HTM)
def _cube_grid(puzzle: Cube3, states: np.ndarray) -> Grid:
    """The unfolded net, each sticker in its face's standard colour (the SVG viewer's)."""
    n = puzzle.n
    palette = _palette([COLOURS[f] for f in FACES])
    colours = np.empty((states.shape[0], 3 * n, 4 * n, 3), dtype=np.uint8)
    colours[:] = _CUBE_BACKGROUND
    rows, cols = _net_cells(n)
    colours[:, rows, cols] = palette[states.reshape(states.shape[0], -1)]
    return Grid(colours=colours, background=_CUBE_BACKGROUND)


#: the most cells a row of a permutation puzzle's picture holds (a longer ring is folded)
_PERMUTATION_ROW = 30


@lru_cache(maxsize=32)
def _permutation_cells(puzzle: PermutationPuzzle) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``(row, col, rows, cols)``: each position's cell in the SVG viewer's layout
    (:func:`puzzlezero.puzzles.permutation.viewer.cells`), rows longer than
    :data:`_PERMUTATION_ROW` folded."""
    from puzzlezero.puzzles.permutation.viewer import cells

    layout = np.array(cells(puzzle, fold=_PERMUTATION_ROW), dtype=np.int64)
    rows, cols = np.empty(len(layout), np.int64), np.empty(len(layout), np.int64)
    rows[layout[:, 2]], cols[layout[:, 2]] = layout[:, 0], layout[:, 1]
    return rows, cols, int(rows.max()) + 1, int(cols.max()) + 1


@grid_of.register(PermutationPuzzle)
def _permutation_grid(puzzle: PermutationPuzzle, states: np.ndarray) -> Grid:
    """A cube's net or the rows of the positions, each label its own colour (the SVG viewer's
    colours for the first labels, one colour per label after them)."""
    from puzzlezero.puzzles.permutation.viewer import PALETTE

    rows, cols, height, width = _permutation_cells(puzzle)
    first = _palette(list(PALETTE[: puzzle.num_values]))
    more = _code_colours(np.arange(len(first), puzzle.num_values) + 0x100000)
    palette = np.concatenate([first, more.reshape(-1, 3)])
    colours = np.empty((states.shape[0], height, width, 3), dtype=np.uint8)
    colours[:] = _CUBE_BACKGROUND
    colours[:, rows, cols] = palette[states.reshape(states.shape[0], -1)]
    return Grid(colours=colours, background=_CUBE_BACKGROUND)


# the sliding-tile viewer's colours: board (the blank), tile, tile on its goal cell
_TILE_COLOURS = _palette(["#3b3f46", "#e8b04a", "#f6dca4"])


@grid_of.register(NPuzzle)
def _npuzzle_grid(puzzle: NPuzzle, states: np.ndarray) -> Grid:
    """The board: numbered tiles, lighter on their goal cell, the blank empty."""
    n = puzzle.size
    tiles = states.reshape(states.shape[0], n, n).astype(np.int64)
    home = tiles == np.arange(1, n * n + 1).reshape(n, n)
    kind = np.where(tiles == 0, 0, np.where(home, 2, 1))
    return Grid(
        colours=_TILE_COLOURS[kind],
        background=rgb("#3b3f46"),
        labels=np.where(tiles == 0, -1, tiles),
        ink=rgb("#2b2b2b"),
    )


# the Lights Out viewer's colours: board, light off, light on
_LIGHT_COLOURS = _palette(["#23262b", "#4a4f57", "#ffd84a"])


@grid_of.register(LightsOut)
def _lightsout_grid(puzzle: LightsOut, states: np.ndarray) -> Grid:
    """The board: lit cells yellow, dark cells grey."""
    n = puzzle.size
    on = states.reshape(states.shape[0], n, n).astype(bool)
    return Grid(colours=_LIGHT_COLOURS[1 + on], background=rgb("#23262b"))


def _sokoban_palette() -> np.ndarray:
    """``uint8[16, 3]``: the colour of each cell code (the Sokoban viewer's colours; a box or the
    agent on a target in a shade of its own)."""
    table = np.zeros((16, 3), dtype=np.uint8)
    table[:] = rgb("#ff00ff")  # codes no level holds
    for code, colour in {
        0: "#e9e3d5",  # floor
        WALL: "#5b4a3f",
        TARGET: "#d9534f",
        BOX: "#c98b3a",
        BOX | TARGET: "#5cae5c",
        AGENT: "#3a6fd8",
        AGENT | TARGET: "#7a4fd0",
    }.items():
        table[code] = rgb(colour)
    return table


_SOKOBAN_COLOURS = _sokoban_palette()


@grid_of.register(Sokoban)
def _sokoban_grid(puzzle: Sokoban, states: np.ndarray) -> Grid:
    """The level: walls, floor, targets, boxes (green on a target), the agent (blue; violet on a target)."""
    codes = states.reshape(states.shape[0], puzzle.height, puzzle.width) & 15
    return Grid(colours=_SOKOBAN_COLOURS[codes], background=rgb("#473a31"))
