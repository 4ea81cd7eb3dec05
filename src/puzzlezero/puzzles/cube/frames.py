"""The Santa 2023 competition's 3x3x3 (``cube_3-3-3``: every slice quarter turn one move, no
centre fixed) read as ``cube3`` (face quarter turns, centres fixed), so that cube3's network can
guide a search in the competition's metric.

**Stickers.** Both cubes place sticker ``(row, column)`` of a face at the same 3-D point (x right,
y up, z front); only the order of the faces differs (the competition's ``U F R B L D``, cube3's
Kociemba ``U R F D L B``). :attr:`Cube3View.stickers` is the gather from one to the other, found
by matching the points, and a competition face turn reads as the cube3 turn of the same face.

**Rotations.** With no centre fixed, a competition state is a cube3 state seen in one of the 24
orientations of the whole cube. :meth:`Cube3View.frame` finds, from two centres, the rotation that
puts the centres home, and :meth:`Cube3View.cube3` reads the state in that frame, its labels
recoloured to cube3's colours. Turning the whole cube a quarter turn takes 3 moves (all three
slices), so :attr:`Cube3View.rotation_moves` is 3 times the fewest quarter turns that make each
rotation: a state solved up to a rotation is at most that many moves from the goal.

**Cube3's answers in slice turns** (:meth:`Cube3View.slice_answer`). A middle slice's quarter turn
reads, in the frame, as the two outer faces of its axis turned the other way and the frame turned
a quarter: ``R L'`` is one slice move and a quarter turn of the whole cube. A cube3 answer groups
into runs of turns about one axis (they commute); each run can be made by the axis's three slices
turned ``(t0, t1, t2)`` quarter turns, at ``|t0| + |t1| + |t2|`` moves (a half turn counts 2), the
middle one turning the frame by ``t1``. A dynamic programme over the runs and the 24 frames finds
the fewest moves that pass through every view of cube3's answer and end with the frame home: a run
``R L'`` costs one move instead of two, and the frame the scramble left is turned home inside the
runs at one or two moves a quarter turn rather than three.

>>> import numpy as np
>>> from puzzlezero import make
>>> comp, cube = make("cube_3-3-3"), make("cube3")
>>> view = Cube3View(comp)
>>> s = comp.apply_moves(comp.goal(), comp.parse_moves("f0 r0 d1"))
>>> states, rotation = view.cube3(s[None])
>>> float(view.rotation_moves[rotation[0]])     # d1 turned the centres a quarter turn
3.0
>>> bool((states == cube.goal()).all())          # ...but the cube3 reading is not solved
False
>>> s = comp.apply_moves(comp.goal(), comp.parse_moves("r1"))
>>> turns = cube.parse_moves("R L'")                # cube3's answer to its reading
>>> comp.format_moves(view.slice_answer(s, turns))  # one middle-slice turn back
["r1'"]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cached_property, lru_cache

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.geometry import sticker_points
from puzzlezero.puzzles.cube.rules import Cube3

__all__ = ["Cube3View"]

#: cube3's centre facelets, face by face in cube3's colour order ``"URFDLB"``
_CENTRES = np.arange(6) * 9 + 4
#: the axis of each of cube3's faces (the competition's slices about it: ``d``, ``r``, ``f``)
_FACE_AXIS = {"U": "d", "D": "d", "R": "r", "L": "r", "F": "f", "B": "f"}


@lru_cache(maxsize=1)
def _cube3_turns() -> np.ndarray:
    """``int64[12, 54]``: cube3's twelve quarter turns as gathers, in its action order."""
    return np.asarray(Cube3().perms, dtype=np.int64)


class Cube3View:
    """Reads states of the competition's 3x3x3 (``puzzle``: its 54 stickers and 18 slice moves
    ``f0 .. d2'`` as :func:`puzzlezero.puzzles.permutation.families.cube` makes them, a goal of six
    one-colour faces) as cube3 states. :class:`~puzzlezero.errors.PuzzleError` says why another
    puzzle cannot be read."""

    def __init__(self, puzzle: Puzzle) -> None:
        from puzzlezero.puzzles.permutation.families import cube, cube_sticker_points
        from puzzlezero.puzzles.permutation.rules import PermutationPuzzle

        reference = cube(3)
        if not isinstance(puzzle, PermutationPuzzle) or puzzle.definition.positions != 54:
            raise PuzzleError(
                f"{puzzle.name} is not the competition's 3x3x3 (54 stickers, slice moves f0 .. d2'): "
                "cube3's network reads that cube only"
            )
        names = list(puzzle.action_names)
        #: ``int64[A, 54]``: the puzzle's moves as gathers (``child = state[moves[a]]``)
        self.moves = np.asarray(puzzle.move_permutations(), dtype=np.int64)
        self._names = names
        self._inverse = np.asarray(puzzle.inverse_action, dtype=np.int64)
        #: the competition's axis (``f``, ``r``, ``d``) of each of cube3's turns
        self._turn_axis = "".join(_FACE_AXIS[name[0]] for name in Cube3().action_names)
        for move, perm in reference["moves"].items():
            if move not in names or list(self.moves[names.index(move)]) != perm:
                raise PuzzleError(
                    f"{puzzle.name}: move {move} is not the competition's 3x3x3 move of that name, so "
                    "cube3's network cannot read its states"
                )
        comp_index = {tuple(p): i for i, p in enumerate(cube_sticker_points(3).tolist())}
        #: ``int64[54]``: cube3 facelet ``j`` is competition sticker ``stickers[j]``
        self.stickers = np.array([comp_index[tuple(p)] for p in sticker_points(3).tolist()], dtype=np.int64)
        goal = np.asarray(puzzle.goal()).reshape(-1)
        faces = goal[self.stickers].reshape(6, 9)
        if not (faces == faces[:, :1]).all() or len(set(faces[:, 0].tolist())) != 6:
            raise PuzzleError(
                f"{puzzle.name}: cube3's network reads a goal of six one-colour faces; this goal is not one"
            )
        #: a competition label's cube3 colour (the index in ``"URFDLB"`` of the face it is the goal of)
        self.colours = np.zeros(max(int(goal.max()) + 1, 6), dtype=np.uint8)
        self.colours[faces[:, 0]] = np.arange(6, dtype=np.uint8)
        perms = self.moves
        whole = []  # the whole cube a quarter turn about each axis: its three slices in turn
        for axis in "frd":
            p = np.arange(54)
            for layer in range(3):
                p = p[perms[names.index(f"{axis}{layer}")]]
            whole.append(p)
        rotations, turns = [np.arange(54)], [0]
        seen = {tuple(rotations[0])}
        i = 0
        while i < len(rotations):  # breadth first: fewest quarter turns first
            r, t = rotations[i], turns[i]
            i += 1
            for g in whole:
                for q in (r[g], r[np.argsort(g)]):
                    if tuple(q) not in seen:
                        seen.add(tuple(q))
                        rotations.append(q)
                        turns.append(t + 1)
        if len(rotations) != 24:
            raise PuzzleError(f"{puzzle.name}: its whole-cube turns make {len(rotations)} rotations, not 24")
        #: ``int64[24, 54]``: rotation ``k`` followed by the reading as cube3 facelets, one gather
        self.gathers = np.stack(rotations)[:, self.stickers]
        #: ``float32[24]``: the moves that turn the whole cube by rotation ``k`` (3 a quarter turn)
        self.rotation_moves = 3.0 * np.asarray(turns, dtype=np.float32)
        # a move that keeps the frame is a cube3 turn in it: move a on a state of frame k reads as
        # cube3 turn b where gathering by the move then reading equals reading then turning
        cube3_turns = _cube3_turns()
        #: ``int64[24, A]``: the cube3 turn each of the puzzle's moves is, in each frame; -1 for the
        #: middle-slice turns, which move the frame (two cube3 turns and a quarter turn of the cube)
        self.face_turns = np.full((24, len(perms)), -1, dtype=np.int64)
        for k, g in enumerate(self.gathers):
            for a, perm in enumerate(perms):
                found = np.flatnonzero((perm[g][None, :] == g[cube3_turns]).all(axis=1))
                if len(found):
                    self.face_turns[k, a] = found[0]
        if not ((self.face_turns >= 0).sum(axis=1) == 12).all():
            raise PuzzleError(f"{puzzle.name}: its face turns are not cube3's twelve in every frame")
        # the frame is known from where the goal's U and F centre labels are: (centre, centre) -> k
        self._centres = self.stickers[_CENTRES]
        self._goal_u, self._goal_f = int(goal[self._centres[0]]), int(goal[self._centres[2]])
        where = {int(c): i for i, c in enumerate(self._centres)}
        self._frames = np.full(36, -1, dtype=np.int64)
        for k, rot in enumerate(rotations):
            # the rotated state (state[rot]) has its U centre from position rot[U centre]
            self._frames[where[int(rot[self._centres[0]])] * 6 + where[int(rot[self._centres[2]])]] = k

    def frame(self, states: np.ndarray) -> np.ndarray:
        """``int64[B]``: for each state the rotation ``k`` that puts its centres home."""
        centres = np.asarray(states).reshape(len(states), -1)[:, self._centres]
        u, f = centres == self._goal_u, centres == self._goal_f
        found = self._frames[u.argmax(axis=1) * 6 + f.argmax(axis=1)]
        if (found < 0).any() or not (u.sum(axis=1) == 1).all() or not (f.sum(axis=1) == 1).all():
            raise PuzzleError("a state whose centres no rotation puts home is not a 3x3x3 position")
        return found

    def cube3(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(uint8[B, 54], int64[B])``: each state read as cube3 facelets in the frame that puts its
        centres home, and that frame's rotation (its cost: :attr:`rotation_moves`)."""
        states = np.asarray(states).reshape(len(states), -1)
        k = self.frame(states)
        read = np.take_along_axis(states, self.gathers[k], axis=1)
        return self.colours[read], k

    @cached_property
    def _slice_runs(self) -> tuple[np.ndarray, np.ndarray, list[tuple[int, ...]]]:
        """Every way to turn one axis's three slices, ``(t0, t1, t2)`` quarter turns (not all 0):
        ``(int64[189, 54] gathers, int64[189] moves, the moves of each)``."""
        quarter = (0, 1, 2, 1)
        gathers, costs, words = [], [], []
        for axis in "frd":
            for turns in itertools.product(range(4), repeat=3):
                if not any(turns):
                    continue
                word: list[int] = []
                for layer, t in enumerate(turns):
                    move = self._names.index(f"{axis}{layer}")
                    word += [int(self._inverse[move])] if t == 3 else [move] * t
                g = np.arange(54)
                for a in word:
                    g = g[self.moves[a]]
                gathers.append(g)
                costs.append(sum(quarter[t] for t in turns))
                words.append(tuple(word))
        return np.stack(gathers), np.asarray(costs, dtype=np.int64), words

    def slice_answer(self, state: np.ndarray, turns: Sequence[int]) -> tuple[int, ...]:
        """The fewest of the puzzle's moves that take ``state`` through the readings that cube3's
        ``turns`` (an answer to :meth:`cube3`'s reading of ``state``) pass through and end at the
        goal: each run of turns about one axis made by that axis's three slices, the frame turned
        home within the runs or, where that costs less, after them (the module's docstring). A
        :class:`~puzzlezero.errors.PuzzleError` if ``turns`` do not solve the reading."""
        state = np.asarray(state).reshape(-1)
        read, frame = self.cube3(state[None])
        axis = self._turn_axis
        runs: list[list[int]] = []
        for t in turns:
            if runs and axis[runs[-1][-1]] == axis[int(t)]:
                runs[-1].append(int(t))
            else:
                runs.append([int(t)])
        view, targets = read[0], []
        for run in runs:
            for t in run:
                view = view[_cube3_turns()[t]]
            targets.append(view)
        goal = np.repeat(np.arange(6, dtype=np.uint8), 9)
        if not (view == goal).all():
            raise PuzzleError("these cube3 turns do not solve the state's cube3 reading")
        gathers, costs, words = self._slice_runs
        # frame -> (moves so far, the state, the way there); one state per frame and reading
        layer: dict[int, tuple[int, np.ndarray, tuple[int, ...]]] = {int(frame[0]): (0, state, ())}
        for target in [*targets, goal, goal]:  # then up to two turns of the whole cube, frame home
            step = dict(layer) if target is goal else {}
            for cost, s, way in layer.values():
                children = s[gathers]
                seen, frames = self.cube3(children)
                for i in np.flatnonzero((seen == target[None]).all(axis=1)):
                    k, c = int(frames[i]), cost + int(costs[i])
                    if k not in step or c < step[k][0]:
                        step[k] = (c, children[i], way + words[i])
            layer = step
        return layer[0][2]
