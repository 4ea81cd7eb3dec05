"""The geometry of the sticker cubes (:mod:`.rules`, :mod:`.symmetry`, the cube network):
stickers as integer points on a cube of side ``2n``, face by face in facelet order ``URFDLB``."""

from __future__ import annotations

import numpy as np

__all__ = ["FACES", "FRAMES", "StickerCube", "perm_of", "sticker_points"]

#: the faces in facelet order
FACES = "URFDLB"
# per face: outward normal, then "right" and "down" as seen looking at the face (reading order)
FRAMES = {
    "U": ((0, 1, 0), (1, 0, 0), (0, 0, 1)),
    "R": ((1, 0, 0), (0, 0, -1), (0, -1, 0)),
    "F": ((0, 0, 1), (1, 0, 0), (0, -1, 0)),
    "D": ((0, -1, 0), (1, 0, 0), (0, 0, -1)),
    "L": ((-1, 0, 0), (0, 0, 1), (0, -1, 0)),
    "B": ((0, 0, -1), (-1, 0, 0), (0, -1, 0)),
}


def sticker_points(n: int) -> np.ndarray:
    """``int64[6n², 3]``: the centre of every sticker (x right, y up, z front), facelet order."""
    pts = []
    for face in FACES:
        nrm, right, down = (np.array(v) for v in FRAMES[face])
        for i in range(n):
            for j in range(n):
                pts.append(n * nrm + (2 * j - n + 1) * right + (2 * i - n + 1) * down)
    return np.array(pts, dtype=np.int64)


def perm_of(points: np.ndarray, moved: np.ndarray) -> np.ndarray:
    """The gather permutation (``new_state = state[perm]``) that carries the sticker at
    ``points[i]`` to ``moved[i]`` for every ``i``."""
    index = {tuple(p): i for i, p in enumerate(points.tolist())}
    perm = np.empty(len(points), dtype=np.intp)
    for i, q in enumerate(moved.tolist()):
        perm[index[tuple(q)]] = i
    return perm


class StickerCube:
    """What the cube puzzles share (:mod:`.rules`: ``n`` stickers a side, a state of ``6 n²``
    stickers, moves as sticker permutations ``perms``), so that code below them (the 48
    symmetries) can tell a cube without importing its class."""
