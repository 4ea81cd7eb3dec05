"""Symmetries of a permutation puzzle: the same problem in other guises, for the searches' images.

A symmetry is a relabelling of the positions ``sigma`` (``int[N]``) with a recolouring ``pi`` of
the labels that carries the moves onto the moves and the goal onto itself. Its image of a state
``x`` is ``y[p] = pi[x[sigma[p]]]``. Where, for every move ``m``, ``sigma[perm_m[sigma^-1]]`` is
the permutation of a move ``m*`` of the same cost, a move ``m`` on the image is the move ``m*`` on
the state: ``image(x . m*) = image(x) . m`` (the images of ``x`` and of its child match position by
position). Where also ``pi[goal[sigma]] == goal``, the image of the goal is the goal. So a solution
``m1 .. mk`` of the image read move by move as ``m1* .. mk*`` solves the state, as long and as
costly, and the image is exactly as far from the goal (with wildcards too: ``sigma`` and ``pi``
are one-to-one, so as many positions differ).

A learned heuristic errs on each image in its own way, so a search of a state together with its
images (:mod:`puzzlezero.search.images`) keeps the best of several answers, as the cube's mirror
images and the sliding puzzles' transpose do.

Candidates come from the geometry a definition's ``drawing`` names; every candidate is checked as
above and kept only if it holds, so a drawing (data) can never make a wrong image:

* a globe of ``rows`` cuts and ``columns`` great circles: the whole sphere turned by ``k`` sectors,
  turned upside down (ring ``i`` to ring ``rows - i``), mirrored (sector ``c`` to ``-c``), and
  their combinations. On the standard goals, turns by a colour band's width keep the goal up to
  colours (a mirror image with a turn that puts the bands back): ``globe_6-4`` and
  ``globe_2-6`` have 15 images each, ``globe_1-8`` 31.
* a cube of ``size`` (the competition's stickers): the 23 other whole-cube rotations, named by
  cube notation (``y2``, ``x-y'``: ``x`` first, both as the hand turns the cube), the left-right
  mirror (``mirror``) and the 23 mirrors turned (``mirror-x2``): 47 images of every cube with six
  colours or with every sticker distinct. A rotation carries ``f0`` onto another face's outer
  slice (``y2``: ``f0`` becomes ``f2'``); the left-right mirror turns the front and top slices the
  other way and keeps the ``r`` slices' turns, the outer two swapped (``f0`` becomes ``f0'``,
  ``r0`` becomes ``r2``).

>>> from puzzlezero import make
>>> p = make("globe_2-6")
>>> p.image_names[:4]
('upside-down', 'mirror-turn2', 'upside-down-mirror-turn2', 'upside-down-turn3')
>>> p.format_moves(p.from_image("mirror-turn2", p.parse_moves("r0 f3 r2'")))
["r0'", 'f6', 'r2']
>>> s = p.apply_moves(p.goal(), p.parse_moves("f6 r2'"))  # solved by r2 f6
>>> y = p.image("mirror-turn2", s, [])  # solved by the moves that stand for r2 f6
>>> p.format_moves(p.from_image("mirror-turn2", p.parse_moves("r2' f3")))
['r2', 'f6']
>>> bool(p.is_goal(p.apply_moves(y, p.parse_moves("r2' f3"))[None])[0])
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from puzzlezero.puzzles.permutation.families import CubeGeometry

__all__ = ["Symmetry", "candidates", "symmetries"]


@dataclass(frozen=True)
class Symmetry:
    """One checked symmetry: its ``name``, the positions ``sigma`` (``y[p] = labels[x[sigma[p]]]``),
    the recolouring ``labels`` (``int[V]``) and ``moves`` (``int[A]``): a move ``a`` on the image is
    the move ``moves[a]`` on the state."""

    name: str
    sigma: np.ndarray
    labels: np.ndarray
    moves: np.ndarray

    def image(self, states: np.ndarray) -> np.ndarray:
        """The images of a batch ``[B, N]`` of states."""
        return self.labels[states[:, self.sigma]].astype(states.dtype, copy=False)

    def solution(self, actions: Sequence[int]) -> list[int]:
        """The moves of the state that a solution of its image stands for."""
        return [int(self.moves[int(a)]) for a in actions]


def candidates(drawing: Mapping[str, Any] | None, positions: int) -> list[tuple[str, np.ndarray]]:
    """``(name, sigma)`` pairs the geometry of ``drawing`` suggests (unchecked; none without one)."""
    if not drawing:
        return []
    if drawing.get("kind") == "cube":
        return _cube_candidates(drawing, positions)
    if drawing.get("kind") != "globe":
        return []
    rows, columns = int(drawing["rows"]), int(drawing["columns"])
    rings, sectors = rows + 1, 2 * columns
    if rings * sectors != positions:
        return []
    ring = np.arange(rings)[:, None]
    sector = np.arange(sectors)[None, :]
    found: list[tuple[tuple[bool, int, bool, bool], str, np.ndarray]] = []
    for turn in range(sectors):
        for upside_down in (False, True):
            for mirror in (False, True):
                if not (turn or upside_down or mirror):
                    continue
                to_ring = rows - ring if upside_down else ring
                to_sector = ((-sector if mirror else sector) + turn) % sectors
                sigma = (to_ring * sectors + to_sector).reshape(-1).astype(np.intp)
                words = ["upside-down"] * upside_down + ["mirror"] * mirror + [f"turn{turn}"] * bool(turn)
                # upside down or mirrored first (every ring or every sector's order changes), then
                # the plain turns; the searches take the first ``--images N``
                key = (not (upside_down or mirror), turn, mirror, upside_down)
                found.append((key, "-".join(words), sigma))
    found.sort(key=lambda c: c[0])
    return [(name, sigma) for _, name, sigma in found]


#: whole-cube quarter turns, clockwise seen from outside along +x (R), +y (U) and +z (F), as
#: matrices on a sticker's centre (coordinates as :class:`.families.CubeGeometry`'s)
_CUBE_TURNS: dict[str, np.ndarray] = {
    "x": np.array([[1, 0, 0], [0, 0, 1], [0, -1, 0]]),
    "y": np.array([[0, 0, -1], [0, 1, 0], [1, 0, 0]]),
    "z": np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]]),
}
#: which face goes up (none, x, x2, x', z, z'), then a turn about the vertical (none, y, y2, y'):
#: the 24 rotations once each; "mirror" is the left-right mirror (``x -> -x``) before them
_CUBE_UP = ("", "x", "x2", "x'", "z", "z'")
_CUBE_ABOUT = ("", "y", "y2", "y'")
#: the images a search takes first (``--images N`` takes the first N): the mirror, as cube3's
#: images begin, then half turns; the others follow in generation order. Under cube3's network
#: (``cube3-view``) the mirror answered one of twelve states shorter, ``y2`` none, and ``mirror-x2``
#: gave every state's own answer (docs/permutation-puzzles.md)
_CUBE_FIRST = ("mirror", "y2", "x2")


def _turn(word: str) -> np.ndarray:
    base = _CUBE_TURNS[word[0]]
    times = {"": 1, "2": 2, "'": 3}[word[1:]]
    return np.linalg.matrix_power(base, times)


def _cube_candidates(drawing: Mapping[str, Any], positions: int) -> list[tuple[str, np.ndarray]]:
    """The cube's 47 other symmetries: 23 whole-cube rotations, the left-right mirror and the 23
    mirrors turned (a rotation's image is the cube turned in the hand, recoloured so that the goal
    stays the goal; a mirror image is its reflection, likewise recoloured)."""
    size = drawing.get("size")
    if (
        isinstance(size, bool)
        or not isinstance(size, int)
        or not 2 <= size <= 64
        or 6 * size * size != positions
    ):
        return []
    geometry = CubeGeometry(size)
    found: dict[str, np.ndarray] = {}
    for mirrored, up, about in product((False, True), _CUBE_UP, _CUBE_ABOUT):
        words = ["mirror"] * mirrored + [w for w in (up, about) if w]
        if not words:
            continue
        matrix = np.diag([-1, 1, 1]) if mirrored else np.eye(3, dtype=np.int64)
        for word in (up, about):
            if word:
                matrix = _turn(word) @ matrix
        # the image's sticker at point q is the state's at matrix^-1 q = matrix^T q (orthogonal),
        # which is row q of points @ matrix
        found["-".join(words)] = geometry.stickers_at(geometry.points @ matrix)
    first = [name for name in _CUBE_FIRST if name in found]
    return [(name, found[name].astype(np.intp)) for name in first + [n for n in found if n not in first]]


def check(
    sigma: np.ndarray, perms: np.ndarray, costs: np.ndarray, goal: np.ndarray, num_labels: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """``(labels, moves)`` of a symmetry ``sigma`` (see the module), or ``None`` where it is not one."""
    n = perms.shape[1]
    if sigma.shape != (n,) or not np.array_equal(np.sort(sigma), np.arange(n)):
        return None
    labels = np.full(num_labels, -1, dtype=np.int64)
    for before, after in zip(goal[sigma], goal, strict=True):
        if labels[before] == -1:
            labels[before] = after
        elif labels[before] != after:
            return None
    if len(set(labels.tolist())) != num_labels:
        return None
    inverse = np.argsort(sigma)
    by_perm = {p.tobytes(): a for a, p in enumerate(perms)}
    moves = np.empty(perms.shape[0], dtype=np.int64)
    for a, perm in enumerate(perms):
        other = by_perm.get(np.ascontiguousarray(sigma[perm[inverse]]).tobytes())
        if other is None or costs[other] != costs[a]:
            return None
        moves[a] = other
    return labels, moves


def symmetries(
    drawing: Mapping[str, Any] | None, perms: np.ndarray, costs: np.ndarray, goal: np.ndarray, num_labels: int
) -> tuple[Symmetry, ...]:
    """The checked symmetries among the :func:`candidates` of ``drawing`` (each a different
    ``sigma``: no turn, reversal and mirror give the same positions twice)."""
    out: list[Symmetry] = []
    for name, sigma in candidates(drawing, perms.shape[1]):
        found = check(sigma, perms, costs, goal, num_labels)
        if found is not None:
            labels, moves = found
            out.append(Symmetry(name, sigma, labels.astype(np.intp), moves))
    return tuple(out)
