"""The Rubik's cubes: ``cube3`` and ``cube2`` in the quarter-turn metric, ``cube3htm`` in the
half-turn metric. :mod:`.rules` holds the puzzles, :mod:`.notation` the move text, :mod:`.geometry`
the stickers' coordinates, :mod:`.symmetry` the 48 symmetries, :mod:`.table` the 2x2x2's exact
distances and :mod:`.viewer` the drawings."""

from puzzlezero.puzzles.cube import viewer
from puzzlezero.puzzles.cube.notation import (
    ACTION_NAMES,
    HTM_ACTION_NAMES,
    compact_moves,
    read_htm_moves,
    read_moves,
)
from puzzlezero.puzzles.cube.rules import (
    CORNER_NAMES,
    EDGE_NAMES,
    FACES,
    Cube2,
    Cube3,
    Cube3HTM,
    corner_cubies,
    corner_stickers,
    edge_cubies,
)
from puzzlezero.puzzles.pictures import grid_of

# the RGB pictures (puzzlezero.puzzles.pictures.draw): the viewer's net
grid_of.register(Cube2)(viewer.grid)
grid_of.register(Cube3)(viewer.grid)
grid_of.register(Cube3HTM)(viewer.grid)

__all__ = [
    "ACTION_NAMES",
    "CORNER_NAMES",
    "EDGE_NAMES",
    "FACES",
    "HTM_ACTION_NAMES",
    "Cube2",
    "Cube3",
    "Cube3HTM",
    "compact_moves",
    "corner_cubies",
    "corner_stickers",
    "edge_cubies",
    "read_htm_moves",
    "read_moves",
]
