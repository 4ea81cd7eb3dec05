"""Exact quarter-turn distances of every 2x2x2 position (3,674,160 states, diameter 14).

Up to whole-cube rotation a 2x2x2 position is fixed by its corners once the DBL corner is held in
place (:meth:`Cube2.canonical`): the other seven corners have ``7!`` arrangements and ``3^6``
twists (the seventh twist follows), 3,674,160 in all. With DBL held, turning D, L or B is the same
as turning U, R or F and rotating the cube, so breadth-first search over the six turns
``U U' R R' F F'`` on the coordinates ``index = perm_rank * 729 + twist_code`` gives the exact
distance in our 12-move quarter-turn metric. The search runs on NumPy move tables over the
coordinates (about a second) and the table is cached as ``tables/cube2_qtm.npz``.

>>> import numpy as np
>>> from puzzlezero import make
>>> from puzzlezero.puzzles.cube.table import distance
>>> cube = make("cube2")
>>> int(distance(cube.parse("R U R' U'")[None])[0])
4
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np

from puzzlezero.errors import InvalidStateError, ModelFileError
from puzzlezero.puzzles.cube.rules import Cube2, corner_cubies, corner_stickers
from puzzlezero.storage import build_once, cache_dir, load_npz, save_npz

__all__ = ["NUM_STATES", "MAX_DISTANCE", "coordinates", "build", "load_or_build", "distance", "table_path"]

NUM_PERMS = 5040  # 7!
NUM_TWISTS = 729  # 3^6
NUM_STATES = NUM_PERMS * NUM_TWISTS  # 3,674,160
MAX_DISTANCE = 14  # God's number of the 2x2x2 in the quarter-turn metric
_UNSEEN = 255
_META = {"kind": "cube2-distance", "metric": "quarter-turn", "version": 1, "states": NUM_STATES}
_FREE = np.array([0, 1, 2, 3, 4, 5, 7])  # corner slots other than DBL (Kociemba order)
_MOVES = ("U", "U'", "R", "R'", "F", "F'")  # the turns that leave DBL in place
_FACTORIALS = np.array([720, 120, 24, 6, 2, 1, 1])
_CUBE = Cube2()


def _rank(cubies: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Coordinates of corner states with DBL solved: ``(piece, twist) int64[B, 8]`` -> ``int64[B]``."""
    piece, twist = cubies
    perm = piece[:, _FREE]
    perm = np.where(perm == 7, 6, perm)  # piece ids 0..5, 7 -> 0..6
    lehmer = np.zeros(perm.shape[0], dtype=np.int64)
    for i in range(6):  # lexicographic rank: smaller pieces to the right of each position
        smaller = (perm[:, i + 1 :] < perm[:, i : i + 1]).sum(axis=1)
        lehmer += smaller * _FACTORIALS[i]
    code = twist[:, _FREE[:6]] @ (3 ** np.arange(5, -1, -1))
    return lehmer * NUM_TWISTS + code


def coordinates(states: np.ndarray) -> np.ndarray:
    """Table index ``int64[B]`` of cube2 states ``uint8[B, 24]`` (any whole-cube orientation).

    Raises :class:`InvalidStateError` if a state is not a legal 2x2x2 position.
    """
    states = np.asarray(states)
    if states.ndim != 2 or states.shape[1] != 24:
        raise InvalidStateError(f"cube2 states must have shape [B, 24], got {states.shape}")
    piece, twist = corner_cubies(_CUBE.canonical(states), 2)
    legal = (np.sort(piece, axis=1) == np.arange(8)).all(axis=1) & (twist.sum(axis=1) % 3 == 0)
    legal &= piece[:, 6] == 6
    if not legal.all():
        bad = int(np.argmin(legal))
        try:
            _CUBE.validate(states[bad])
        except InvalidStateError as exc:
            raise InvalidStateError(f"state {bad} is not a legal cube2 position: {exc}") from None
        raise InvalidStateError(f"state {bad} is not a legal cube2 position")
    return _rank((piece, twist))


def _move_tables() -> tuple[np.ndarray, np.ndarray]:
    """``perm_move int64[5040, 6]`` and ``twist_move int64[729, 6]``: the coordinate after each of
    ``U U' R R' F F'``, built by moving sticker states of every coordinate value once."""
    actions = _CUBE.parse_moves(" ".join(_MOVES))
    perms = np.array(list(itertools.permutations(range(7))))  # lexicographic = rank order
    pieces = np.full((NUM_PERMS, 8), 6)
    pieces[:, _FREE] = np.where(perms == 6, 7, perms)
    digits = (np.arange(NUM_TWISTS)[:, None] // 3 ** np.arange(5, -1, -1)) % 3
    twists = np.zeros((NUM_TWISTS, 8), dtype=np.int64)
    twists[:, _FREE[:6]] = digits
    twists[:, 7] = -digits.sum(axis=1) % 3
    tables = []
    for piece, twist in ((pieces, np.zeros_like(pieces)), (np.tile(np.arange(8), (NUM_TWISTS, 1)), twists)):
        states = corner_stickers(piece, twist)
        cols = [_rank(corner_cubies(_CUBE.apply(states, np.full(len(states), a)), 2)) for a in actions]
        tables.append(np.stack(cols, axis=1))
    perm_move = tables[0] // NUM_TWISTS
    twist_move = tables[1] % NUM_TWISTS
    return perm_move, twist_move


def build(progress: bool = False) -> np.ndarray:
    """Breadth-first search from the solved cube: ``uint8[NUM_STATES]`` distances."""
    t0 = time.perf_counter()
    perm_move, twist_move = _move_tables()
    dist = np.full(NUM_STATES, _UNSEEN, dtype=np.uint8)
    dist[0] = 0
    frontier = np.array([0], dtype=np.int64)
    depth = 0
    while frontier.size:
        perm, twist = np.divmod(frontier, NUM_TWISTS)
        children = (perm_move[perm] * NUM_TWISTS + twist_move[twist]).ravel()
        children = children[dist[children] == _UNSEEN]
        depth += 1
        dist[children] = depth
        frontier = np.flatnonzero(dist == depth) if children.size else children
        if progress and frontier.size:
            print(
                f"cube2 table: depth {depth:2d}: {frontier.size:>9,} states "
                f"({time.perf_counter() - t0:.1f} s)",
                file=sys.stderr,
            )
    if (dist == _UNSEEN).any():  # every coordinate is reachable; anything else is a bug
        raise RuntimeError("cube2 table: some states were not reached")
    return dist


def table_path() -> Path:
    """Where the cached table lives: ``cache_dir("tables") / "cube2_qtm.npz"``."""
    return cache_dir("tables") / "cube2_qtm.npz"


_TABLE: np.ndarray | None = None


def load_or_build(progress: bool = True) -> np.ndarray:
    """The distance table ``uint8[3674160]`` (read-only), loaded from the cache, or built and
    saved when it is missing, corrupt or from another version (under the table's lock: a second
    process waits and loads it; where builds are forbidden, :class:`~puzzlezero.errors.MissingTableError`
    names ``puzzlezero pdb build cube2``). Kept in memory after the first call."""
    global _TABLE
    if _TABLE is not None:
        return _TABLE
    path = table_path()

    def load() -> np.ndarray:
        try:
            table = load_npz(path, _META)["distance"]
        except KeyError:
            raise ModelFileError(f"{path}: no distance array") from None
        if (
            table.shape != (NUM_STATES,)
            or table.dtype != np.uint8
            or table[0] != 0
            or table.max() != MAX_DISTANCE
        ):
            raise ModelFileError(f"{path}: wrong contents")
        return table

    def build_and_save() -> np.ndarray:
        table = build(progress=progress)
        save_npz(path, _META, distance=table)
        return table

    table = build_once(
        path, load, build_and_save, what="the cube2 distance table", command="puzzlezero pdb build cube2"
    )
    table.flags.writeable = False
    _TABLE = table
    return table


def distance(states: np.ndarray) -> np.ndarray:
    """Exact optimal cost ``int64[B]`` (12-move quarter-turn metric) of legal cube2 states
    ``uint8[B, 24]`` in any whole-cube orientation; builds or loads the table on first use."""
    return load_or_build(progress=False)[coordinates(states)].astype(np.int64)
