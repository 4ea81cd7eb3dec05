"""Pictures of permutation puzzles: a cube as its net, a wreath as its two rings, anything else as a
labelled grid; and, for cubes, the cubing.js move of each move (the web page's 3-D view).

A definition's ``drawing`` says how to lay the positions out. A cube (``{"kind": "cube", "size":
n}``) has ``6 n^2`` stickers, face after face in the order U, F, R, B, L, D (the Santa 2023
competition's), each face row by row as it appears in the net::

        U
    L   F   R   B
        D

(U above F with its back edge on top, L F R B in a row seen from outside, D below F with its front
edge on top). A wreath (``{"kind": "wreath", "left": a, "right": b}``) is drawn as two rings of
``a`` and ``b`` positions crossing at two positions, each ring in the order its move turns it (the
rings are read off the moves: the moves that turn ``a`` and ``b`` positions in one cycle). Globes
(``rows`` + 1 rings of ``2 columns`` positions, one ring a row) and grids are drawn as rows of
labelled cells, and so is a wreath whose rings the moves do not show. Labels get colours in the
order they first appear in the goal (a cube's six faces: white, green, red, blue, orange, yellow,
as cubing.js colours them). Pure text and SVG strings: no drawing library.

:func:`cubing_view` maps a cube's moves to cubing.js moves (``f0`` -> ``F``, ``f1`` -> ``2F``,
``r3'`` -> ``L`` on a 4x4x4): each move must turn one slice, a block of outer slices or the whole
cube about an axis of the net's geometry, and the goal must colour each face alike. A move sequence
then shows the same picture in cubing.js's ``NxNxN`` puzzle as in the net.
"""

from __future__ import annotations

import html
import math
from collections.abc import Hashable
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from puzzlezero.puzzles.permutation.definition import Definition
from puzzlezero.puzzles.pictures import Grid, code_colours, palette, rgb


class DrawnPuzzle(Protocol):
    """What a drawing reads of a permutation puzzle (:class:`.rules.PermutationPuzzle` has it)."""

    name: str
    definition: Definition
    labels: tuple[str, ...]
    num_values: int
    action_names: tuple[str, ...]
    perms: np.ndarray


__all__ = [
    "CUBING_SIZES",
    "FACE_ORDER",
    "PALETTE",
    "cube_stickers",
    "cubing_move",
    "cubing_view",
    "grid",
    "grid_rows",
    "cells",
    "net_cells",
    "render_text",
    "to_svg",
    "wreath_rings",
]

#: the faces of a cube's stickers, in the order they are stored
FACE_ORDER = ("U", "F", "R", "B", "L", "D")
#: where each face sits in the net, as (row, column) in face units
_NET = {"U": (0, 1), "L": (1, 0), "F": (1, 1), "R": (1, 2), "B": (1, 3), "D": (2, 1)}
#: each face's (outward normal, direction of its columns, direction of its rows) with x to the
#: right, y up and z towards the viewer: the net above folded into a cube
_FACE_AXES: dict[str, tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]] = {
    "U": ((0, 1, 0), (1, 0, 0), (0, 0, 1)),
    "F": ((0, 0, 1), (1, 0, 0), (0, -1, 0)),
    "R": ((1, 0, 0), (0, 0, -1), (0, -1, 0)),
    "B": ((0, 0, -1), (-1, 0, 0), (0, -1, 0)),
    "L": ((-1, 0, 0), (0, 0, 1), (0, -1, 0)),
    "D": ((0, -1, 0), (1, 0, 0), (0, 0, -1)),
}
#: the three turning axes by the face a turn is named from, the opposite face, the whole-cube
#: rotation that turns as that face does (cubing.js: x as R, y as U, z as F)
_AXES = (("R", "L", "x"), ("U", "D", "y"), ("F", "B", "z"))
#: the cubes cubing.js has by name ("2x2x2" .. "7x7x7")
CUBING_SIZES = range(2, 8)
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


def _drawing(puzzle: DrawnPuzzle) -> dict[str, Any]:
    return dict(puzzle.definition.drawing or {})


def _cube_size(puzzle: DrawnPuzzle) -> int | None:
    """The size of a cube drawn as a net (its drawing says cube and the positions fit), else None."""
    drawing = _drawing(puzzle)
    if drawing.get("kind") != "cube":
        return None
    n = int(drawing["size"])
    return n if puzzle.definition.positions == 6 * n * n else None


# ---- layouts -------------------------------------------------------------------------------------
def net_cells(size: int) -> list[tuple[int, int, int]]:
    """``(row, column, position)`` of every sticker of a cube of ``size`` in its net."""
    out = []
    for f, face in enumerate(FACE_ORDER):
        fr, fc = _NET[face]
        for k in range(size * size):
            r, c = divmod(k, size)
            out.append((fr * size + r, fc * size + c, f * size * size + k))
    return out


def grid_rows(puzzle: DrawnPuzzle) -> list[list[int]]:
    """The positions in rows: a globe's rings, a wreath's two rings, or a grid of ``columns``."""
    n = puzzle.definition.positions
    drawing = _drawing(puzzle)
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


def cells(puzzle: DrawnPuzzle, fold: int | None = None) -> list[tuple[int, int, int]]:
    """``(row, column, position)`` of every position: a cube's in its net, the others in the rows
    of :func:`grid_rows`, each row longer than ``fold`` cells (``None``: no limit) folded onto the
    next lines."""
    size = _cube_size(puzzle)
    if size is not None:
        return net_cells(size)
    out: list[tuple[int, int, int]] = []
    line = 0
    for row in grid_rows(puzzle):
        width = fold or len(row)
        out += [(line + k // width, k % width, p) for k, p in enumerate(row)]
        line += -(-len(row) // width)
    return out


def _cycle(perm: np.ndarray) -> list[int] | None:
    """The positions ``perm`` moves, in the order it carries them, when they form one cycle."""
    moved = np.flatnonzero(perm != np.arange(perm.size))
    if moved.size == 0:
        return None
    order = [int(moved[0])]
    while True:
        nxt = int(perm[order[-1]])
        if nxt == order[0]:
            break
        order.append(nxt)
    return order if len(order) == moved.size else None


def wreath_rings(puzzle: DrawnPuzzle) -> tuple[list[int], list[int]] | None:
    """A wreath's two rings, each in the order its move carries the positions, both starting at the
    same crossing: read off the moves that turn ``left`` and ``right`` positions in one cycle each,
    which together cover every position and share two. ``None`` when the moves show no such rings."""
    drawing = _drawing(puzzle)
    if drawing.get("kind") != "wreath":
        return None
    a, b = int(drawing["left"]), int(drawing["right"])
    cycles = [c for c in (_cycle(np.asarray(p)) for p in puzzle.perms) if c is not None]
    left = next((c for c in cycles if len(c) == a), None)
    if left is None:
        return None
    right = next((c for c in cycles if len(c) == b and set(c) != set(left)), None)
    if right is None:
        return None
    shared = set(left) & set(right)
    if len(shared) != 2 or len(set(left) | set(right)) != puzzle.definition.positions:
        return None
    start = min(shared)
    i, j = left.index(start), right.index(start)
    return left[i:] + left[:i], right[j:] + right[:j]


def _ring_points(puzzle: DrawnPuzzle) -> list[tuple[float, float, int]] | None:
    """``(x, y, position)`` of a wreath's positions (y down): two circles of radius 1 overlapping in
    a lens, the crossings where they meet, each ring's positions evenly spread over the arc inside
    the other ring and over the arc outside it; ``None`` when the rings are not known."""
    rings = wreath_rings(puzzle)
    if rings is None:
        return None
    left, right = rings
    a, b = len(left), len(right)
    other = next(p for p in left[1:] if p in right)
    # each ring's steps from the first crossing to the other along the arc inside the other ring
    k_left, k_right = left.index(other), right.index(other)
    m_left, m_right = min(k_left, a - k_left), min(k_right, b - k_right)
    if k_left != m_left:  # walk the ring the other way round, so that the first arc is the inner one
        left = [left[0], *reversed(left[1:])]
    if k_right != m_right:
        right = [right[0], *reversed(right[1:])]
    # half the angle of the lens's arcs, seen from their centres: about the rings' inner shares
    alpha = min(max(math.pi * (m_left / a + m_right / b) / 2, math.pi / 6), math.pi / 3)
    centre = math.cos(alpha)

    def arc(count: int, inner: int, start: float, sign: float) -> list[float]:
        out = []
        for j in range(count):
            if j <= inner:
                out.append(start + sign * 2 * alpha * j / inner)
            else:
                out.append(
                    start + sign * (2 * alpha + (2 * math.pi - 2 * alpha) * (j - inner) / (count - inner))
                )
        return out

    points: dict[int, tuple[float, float]] = {}
    for p, t in zip(left, arc(a, m_left, alpha, -1.0), strict=True):  # clockwise from the upper crossing
        points[p] = (-centre + math.cos(t), -math.sin(t))
    for p, t in zip(right, arc(b, m_right, math.pi - alpha, 1.0), strict=True):  # counter-clockwise
        points.setdefault(p, (centre + math.cos(t), -math.sin(t)))
    return [(x, y, p) for p, (x, y) in points.items()]


def _ring_centres(points: list[tuple[float, float, int]]) -> tuple[float, float]:
    """The x of the two rings' centres (unit circles on y = 0), from the crossing points' x = 0
    lens: the circles meet where x = 0, at y = -+sin(alpha), so the centres are at -+cos(alpha)."""
    top = min(y for x, y, _ in points if abs(x) < 1e-9)
    c = math.sqrt(max(0.0, 1.0 - top * top))
    return -c, c


# ---- pictures ------------------------------------------------------------------------------------
def render_text(puzzle: DrawnPuzzle, state: np.ndarray) -> str:
    """A terminal picture: the labels in the net or the rows, aligned."""
    flat = np.asarray(state).reshape(-1)
    layout = cells(puzzle)
    width = max(len(lab) for lab in puzzle.labels)
    rows = max(r for r, _, _ in layout) + 1
    cols = max(c for _, c, _ in layout) + 1
    grid = [[" " * width] * cols for _ in range(rows)]
    for r, c, p in layout:
        grid[r][c] = puzzle.labels[int(flat[p])].rjust(width)
    return "\n".join(" ".join(row).rstrip() for row in grid)


def _label(puzzle: DrawnPuzzle, value: int, x: float, y: float, font: float) -> str:
    return (
        f'<text x="{x:.1f}" y="{y + font * 0.35:.1f}" font-size="{font:.1f}" text-anchor="middle" '
        f'font-family="monospace" pointer-events="none">{html.escape(puzzle.labels[value])}</text>'
    )


def _svg_open(puzzle: DrawnPuzzle, w: float, h: float) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.1f} {h:.1f}" role="img" aria-label="{html.escape(puzzle.name)}">'
    )


def _rings_svg(
    puzzle: DrawnPuzzle, flat: np.ndarray, points: list[tuple[float, float, int]], size: int
) -> str:
    """A wreath's positions as discs on its two rings, each with its label."""
    xy = np.array([(x, y) for x, y, _ in points])
    gaps = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(gaps, np.inf)
    radius = min(0.45 * float(gaps.min()), 0.2)
    c_left, c_right = _ring_centres(points)
    lo = np.minimum(xy.min(0) - radius * 1.15, [c_left - 1.05, -1.05])
    hi = np.maximum(xy.max(0) + radius * 1.15, [c_right + 1.05, 1.05])
    scale = size / float(max(hi - lo))
    w, h = (hi - lo) * scale
    parts = [_svg_open(puzzle, w, h)]
    r = radius * scale
    font = min(r * 0.9, r * 2.4 / max(1, max(len(lab) for lab in puzzle.labels)))
    for cx in (c_left, c_right):  # the rings themselves, thin, behind the positions
        parts.append(
            f'<circle cx="{(cx - lo[0]) * scale:.1f}" cy="{-lo[1] * scale:.1f}" r="{scale:.1f}" fill="none" '
            f'stroke="#9aa3b5" stroke-width="{max(1.0, r / 6):.1f}"/>'
        )
    for x, y, p in points:
        v = int(flat[p])
        cx, cy = (x - lo[0]) * scale, (y - lo[1]) * scale
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="{_colour(v)}" stroke="#222" '
            f'stroke-width="{max(0.5, r / 15):.1f}" data-position="{p}"/>'
        )
        if r >= 5:
            parts.append(_label(puzzle, v, cx, cy, font))
    parts.append("</svg>")
    return "".join(parts)


def to_svg(puzzle: DrawnPuzzle, state: np.ndarray, size: int = 300) -> str:
    """An SVG of the state (one ``<svg>`` element): a cube's net of coloured stickers, a wreath's two
    rings, or rows of cells; each cell carries its label where labels are not colours alone, and
    its position as ``data-position``."""
    flat = np.asarray(state).reshape(-1)
    points = _ring_points(puzzle)
    if points is not None:
        return _rings_svg(puzzle, flat, points, size)
    layout = cells(puzzle)
    rows = max(r for r, _, _ in layout) + 1
    cols = max(c for _, c, _ in layout) + 1
    cell = max(4.0, min(size / cols, size / rows))
    w, h = cols * cell, rows * cell
    show_labels = puzzle.num_values > 6 or _cube_size(puzzle) is None
    parts = [_svg_open(puzzle, w, h)]
    font = cell * 0.38
    for r, c, p in layout:
        v = int(flat[p])
        x, y = c * cell, r * cell
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" height="{cell:.1f}" fill="{_colour(v)}" '
            f'stroke="#222" stroke-width="{max(0.5, cell / 30):.1f}" data-position="{p}"/>'
        )
        if show_labels and cell >= 10:
            parts.append(_label(puzzle, v, x + cell / 2, y + cell / 2, font))
    parts.append("</svg>")
    return "".join(parts)


# ---- cubing.js -----------------------------------------------------------------------------------
def cube_stickers(size: int) -> np.ndarray:
    """``int64[6 size^2, 3]``: each sticker's centre in sticker order, coordinates ``-size .. size``
    (x right, y up, z towards the viewer; a face's stickers at ``size`` times its normal)."""
    from puzzlezero.puzzles.permutation.families import cube_sticker_points

    return cube_sticker_points(size)


def _turned(points: np.ndarray, normal: np.ndarray, quarters: int) -> np.ndarray:
    """``points`` turned ``quarters`` quarter turns clockwise as seen from outside along ``normal``."""
    for _ in range(quarters % 4):
        points = (points @ normal)[:, None] * normal[None, :] - np.cross(normal[None, :], points)
    return points


def _suffix(quarters: int) -> str:
    return {1: "", 2: "2", 3: "'"}[quarters % 4]


def cubing_move(perm: np.ndarray, size: int, points: np.ndarray | None = None) -> str | None:
    """The cubing.js move that permutes a cube's stickers as ``perm`` does (``child = parent[perm]``):
    one slice (``R``, ``2R``), the outer slices of one side (``Rw``, ``3Rw``) or the whole cube
    (``x``), a quarter or half turn; ``None`` for anything else."""
    pts = cube_stickers(size) if points is None else points
    perm = np.asarray(perm)
    moved = np.flatnonzero(perm != np.arange(perm.size))
    if moved.size == 0:
        return None
    key = {tuple(p): i for i, p in enumerate(pts.tolist())}
    for face, opposite, rotation in _AXES:
        normal = np.array(_FACE_AXES[face][0], dtype=np.int64)
        along = np.clip(pts @ normal, -(size - 1), size - 1)
        depth = (size - 1 - along) // 2  # each sticker's slice counted from `face`
        layers = sorted({int(d) for d in depth[moved]})
        turning = np.flatnonzero(np.isin(depth, layers))
        for quarters in (1, 2, 3):
            dest = [key.get(tuple(q)) for q in _turned(pts[turning], normal, quarters).tolist()]
            if any(d is None for d in dest):
                return None
            want = np.arange(perm.size)
            want[np.array(dest)] = turning
            if not np.array_equal(want, perm):
                continue
            k = len(layers)
            if k == size:
                return rotation + _suffix(quarters)
            if k == 1 and 0 < layers[0] < size - 1:  # one inner slice, named from the nearer face
                d = layers[0]
                if size - 1 - d < d:
                    return f"{size - d}{opposite}{_suffix(4 - quarters)}"
                return f"{d + 1}{face}{_suffix(quarters)}"
            if layers == list(range(k)):  # the outer slices of `face`
                name = face
            elif layers == list(range(size - k, size)):  # of the opposite face, turning the other way
                name, quarters = opposite, 4 - quarters
            else:
                return None
            block = name if k == 1 else f"{name}w" if k == 2 else f"{k}{name}w"
            return block + _suffix(quarters)
    return None


def cubing_view(puzzle: DrawnPuzzle) -> dict[str, Any] | None:
    """How cubing.js shows this cube in 3-D: ``{"puzzle": "4x4x4", "moves": {move: cubing.js move}}``
    where the drawing is a cube cubing.js has (2x2x2 .. 7x7x7), the goal colours each face with a
    label of its own (so that cubing.js's face colours are the net's) and every move turns slices
    (:func:`cubing_move`); else ``None``."""
    size = _cube_size(puzzle)
    if size is None or size not in CUBING_SIZES:
        return None
    goal = puzzle.definition.goal
    faces = [goal[f * size * size : (f + 1) * size * size] for f in range(6)]
    if any(len(set(face)) != 1 for face in faces) or len({face[0] for face in faces}) != 6:
        return None
    pts = cube_stickers(size)
    moves: dict[str, str] = {}
    for name, perm in zip(puzzle.action_names, puzzle.perms, strict=True):
        move = cubing_move(perm, size, pts)
        if move is None:
            return None
        moves[name] = move
    return {"puzzle": f"{size}x{size}x{size}", "moves": moves}


# ---- RGB pictures --------------------------------------------------------------------------------
#: the most cells a row of a picture holds (a longer row is folded)
_PICTURE_ROW = 30
_BACKGROUND = rgb("#222222")


class _CachedPuzzle(DrawnPuzzle, Hashable, Protocol):
    """A :class:`DrawnPuzzle` that keys a cache (:class:`.rules.PermutationPuzzle` does)."""


@lru_cache(maxsize=32)
def _picture_cells(puzzle: _CachedPuzzle) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``(row, col, rows, cols)``: each position's cell in the layout of :func:`cells`, rows
    longer than :data:`_PICTURE_ROW` folded."""
    layout = np.array(cells(puzzle, fold=_PICTURE_ROW), dtype=np.int64)
    rows, cols = np.empty(len(layout), np.int64), np.empty(len(layout), np.int64)
    rows[layout[:, 2]], cols[layout[:, 2]] = layout[:, 0], layout[:, 1]
    return rows, cols, int(rows.max()) + 1, int(cols.max()) + 1


def grid(puzzle: _CachedPuzzle, states: np.ndarray) -> Grid:
    """The cells of the RGB pictures of ``states[B, positions]``: a cube's net or the rows of the
    positions (:func:`cells`), each label its own colour (:data:`PALETTE` for the first labels,
    one colour per label after them), on a dark background."""
    rows, cols, height, width = _picture_cells(puzzle)
    first = palette(list(PALETTE[: puzzle.num_values]))
    more = code_colours(np.arange(len(first), puzzle.num_values) + 0x100000)
    table = np.concatenate([first, more.reshape(-1, 3)])
    colours = np.empty((states.shape[0], height, width, 3), dtype=np.uint8)
    colours[:] = _BACKGROUND
    colours[:, rows, cols] = table[states.reshape(states.shape[0], -1)]
    return Grid(colours=colours, background=_BACKGROUND)
