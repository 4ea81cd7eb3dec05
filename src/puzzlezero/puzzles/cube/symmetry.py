"""The 48 symmetries of the cube (24 rotations, each with or without a mirror) as batched NumPy.

A symmetry ``k`` is an orthogonal 3x3 matrix ``M_k`` with entries in ``{-1, 0, 1}`` acting on the
sticker coordinates of :mod:`puzzlezero.puzzles.cube.rules` (x right, y up, z front). It moves the sticker
at point ``p`` to ``M_k p`` and then **recolours** so that the centres keep their colours (as in J.
Rute, "Solving the puzzle cube with deep reinforcement learning and tree search"): colour ``c`` (the
colour of face ``c``'s centre) becomes the colour of the face whose normal is ``M_k n_c``. So the
solved cube maps to the solved cube, and a state's image is a position of the same cube that is
exactly as far from solved::

    sym(s) = recolour[k][s[:, perms[k]]]        (gather form, batched over states)

Moves map by conjugation: ``sym(apply(s, m)) == apply(sym(s), moves[k][m])``. A rotation maps a
face turn to the turn of the face it carries that face onto; a mirror also turns clockwise into
counter-clockwise (``R`` into ``L'`` for the left-right mirror). The move map is derived from the
puzzle's own move permutations, so it holds for ``cube3``, ``cube2`` and ``cube3htm`` alike.

Symmetry 0 is the identity, 1-23 the other rotations, 24-47 the rotations composed with the mirror
``x -> -x``. :attr:`CubeSymmetries.compose` and :attr:`CubeSymmetries.inverse` give the group table.

>>> from puzzlezero import make
>>> sym = cube_symmetries(make("cube3"))
>>> cube = sym.puzzle
>>> s = cube.parse("R U")
>>> t = sym.apply(s[None], 24)[0]                    # the left-right mirror image
>>> cube.format_moves(sym.map_actions([6, 0], 24))   # R U  ->  L' U'
["L'", "U'"]
>>> bool((t == cube.apply_moves(cube.goal(), [5, 1])).all())
True
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.geometry import FACES, FRAMES, StickerCube, perm_of, sticker_points

__all__ = ["NUM_SYMMETRIES", "CubeSymmetries", "cube_symmetries", "symmetries_for", "symmetry_matrices"]

NUM_SYMMETRIES = 48


@cache
def symmetry_matrices() -> np.ndarray:
    """``int64[48, 3, 3]``: the identity, the 23 other rotations (det +1), then each rotation times
    the mirror ``diag(-1, 1, 1)`` (det -1), in that order."""
    rotations = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = np.zeros((3, 3), dtype=np.int64)
            m[np.arange(3), perm] = signs
            if round(np.linalg.det(m)) == 1:
                rotations.append(m)
    rotations.sort(key=lambda m: (not (m == np.eye(3)).all(), m.tolist()))
    mirror = np.diag([-1, 1, 1])
    mats = np.stack(rotations + [r @ mirror for r in rotations])
    mats.flags.writeable = False
    return mats


def _face_of(normal: np.ndarray) -> int:
    for i, face in enumerate(FACES):
        if tuple(normal.tolist()) == FRAMES[face][0]:
            return i
    raise AssertionError(normal)  # pragma: no cover - every M n_c is a face normal


@dataclass(frozen=True, eq=False)
class CubeSymmetries:
    """The symmetry tables of one cube puzzle (see the module docstring).

    Attributes (all read-only arrays, ``k`` = symmetry index in ``0..47``):
        puzzle: the cube these tables are for.
        perms: ``intp[48, S]``: gather permutation of the stickers, ``moved = s[:, perms[k]]``.
        recolour: ``uint8[48, 256]``: colour ``c`` becomes ``recolour[k, c]`` (values 6..255 are
            kept: the marker of a missing history state stays one).
        moves: ``int64[48, A]``: action ``a`` becomes ``moves[k, a]``.
        compose: ``int64[48, 48]``: ``apply(apply(s, j), k) == apply(s, compose[k, j])``.
        inverse: ``int64[48]``: ``apply(apply(s, k), inverse[k]) == s``.
        mirrored: ``bool[48]``: whether symmetry ``k`` reverses handedness.
    """

    puzzle: Puzzle
    perms: np.ndarray
    recolour: np.ndarray
    moves: np.ndarray
    compose: np.ndarray
    inverse: np.ndarray
    mirrored: np.ndarray

    def apply(self, states: np.ndarray, k: int | np.ndarray) -> np.ndarray:
        """The images ``uint8[..., S]`` of ``states[..., S]`` under symmetry ``k``: one int for all,
        or an int array broadcast against the leading dimensions of ``states`` (``int[B]`` for
        ``states[B, S]``, ``int[B]`` or ``int[B, H]`` for ``states[B, H, S]``)."""
        states = np.asarray(states)
        if states.shape[-1:] != self.perms.shape[1:]:
            raise PuzzleError(
                f"{self.puzzle.name} states have {self.perms.shape[1]} stickers; got an array of shape {states.shape}"
            )
        k = _check_index(k)
        if k.ndim == 0:
            return self.recolour[int(k)][states[..., self.perms[int(k)]]]
        lead = states.shape[:-1]
        k = np.broadcast_to(k.reshape(k.shape + (1,) * (len(lead) - k.ndim)), lead)
        moved = np.take_along_axis(states, self.perms[k], axis=-1)
        return np.take_along_axis(self.recolour[k], moved.astype(np.intp), axis=-1)

    def map_actions(self, actions: np.ndarray | list[int], k: int | np.ndarray) -> np.ndarray:
        """The actions ``int64[...]`` that play, on the image under ``k``, the role of ``actions``."""
        k = _check_index(k)
        return self.moves[k, np.asarray(actions, dtype=np.int64)]

    def map_policy(self, policy: np.ndarray, k: int | np.ndarray) -> np.ndarray:
        """A distribution over actions ``[B, A]`` of states moved to the distribution of their images
        under ``k`` (``int`` or ``int[B]``): ``out[b, moves[k, a]] = policy[b, a]``."""
        policy = np.asarray(policy)
        k = np.broadcast_to(_check_index(k), policy.shape[:1])
        out = np.empty_like(policy)
        np.put_along_axis(out, self.moves[k], policy, axis=1)
        return out

    def unmap_policy(self, policy: np.ndarray, k: int | np.ndarray) -> np.ndarray:
        """The inverse of :meth:`map_policy`: a distribution over the images' actions ``[B, A]``
        read back for the original states, ``out[b, a] = policy[b, moves[k, a]]``."""
        policy = np.asarray(policy)
        k = np.broadcast_to(_check_index(k), policy.shape[:1])
        return np.take_along_axis(policy, self.moves[k], axis=1)


def _check_index(k: int | np.ndarray) -> np.ndarray:
    arr = np.asarray(k)
    if arr.dtype.kind not in "iu" or (arr.size and (arr.min() < 0 or arr.max() >= NUM_SYMMETRIES)):
        raise PuzzleError(f"symmetry index must be an integer in 0..47, got {k!r}")
    return arr.astype(np.int64)


def cube_symmetries(puzzle: Puzzle) -> CubeSymmetries:
    """The 48 symmetries of a cube puzzle (``cube3``, ``cube2``, ``cube3htm``); any other puzzle
    raises :class:`PuzzleError`."""
    if not isinstance(puzzle, StickerCube):
        raise PuzzleError(
            f"the 48 cube symmetries apply to the cube puzzles (cube3, cube2, cube3htm), not to "
            f"{puzzle.name or type(puzzle).__name__!r}"
        )
    cube: Any = puzzle  # a cube puzzle: ``n`` and ``perms`` (:class:`StickerCube`)
    key = (type(cube).__name__, cube.n, np.asarray(cube.perms).tobytes())
    if key not in _CACHE:
        _CACHE[key] = _tables(cube)
    return _CACHE[key]


_CACHE: dict[tuple[str, int, bytes], CubeSymmetries] = {}


def _tables(puzzle: Any) -> CubeSymmetries:
    mats = symmetry_matrices()
    pts = sticker_points(puzzle.n)
    perms = np.stack([perm_of(pts, pts @ m.T) for m in mats])  # the sticker at p goes to M p
    normals = np.array([FRAMES[f][0] for f in FACES])
    recolour = np.tile(np.arange(256, dtype=np.uint8), (NUM_SYMMETRIES, 1))
    recolour[:, :6] = [[_face_of(m @ nrm) for nrm in normals] for m in mats]
    move_perms = np.asarray(puzzle.perms)
    index = {tuple(p): a for a, p in enumerate(move_perms.tolist())}
    moves = np.empty((NUM_SYMMETRIES, len(move_perms)), dtype=np.int64)
    for k, p in enumerate(perms):
        inv = np.argsort(p)
        for a, mp in enumerate(move_perms):
            # sym(apply(s, a)) = r[s[mp[p]]] must equal apply(sym(s), a') = r[s[p[mp']]]
            moves[k, a] = index[tuple(inv[mp[p]].tolist())]
    flat = mats.reshape(NUM_SYMMETRIES, 9)
    lookup = {tuple(f.tolist()): i for i, f in enumerate(flat)}
    compose = np.array([[lookup[tuple((mk @ mj).reshape(-1).tolist())] for mj in mats] for mk in mats])
    inverse = np.array([lookup[tuple(m.T.reshape(-1).tolist())] for m in mats])
    mirrored = np.array([round(np.linalg.det(m)) < 0 for m in mats])
    out = CubeSymmetries(puzzle, perms, recolour, moves, compose, inverse, mirrored)
    for arr in (perms, recolour, moves, compose, inverse, mirrored):
        arr.flags.writeable = False
    return out


def symmetries_for(puzzle: Puzzle) -> CubeSymmetries | None:
    """The cube symmetries of ``puzzle`` where it is a cube, else ``None`` (training then skips
    symmetry augmentation)."""
    return cube_symmetries(puzzle) if isinstance(puzzle, StickerCube) else None
