"""A goal whose labels all differ, read in a family's colours.

The Santa 2023 competition gives some of its 2x2x2 and 3x3x3 cubes a goal whose every sticker has a
label of its own (``N0;N1;...``). The family's six colours ask no less: they name every piece and
every sticker of it (:func:`colours_name_the_pieces`), so a state whose pieces move as wholes
(:func:`keeps_the_pieces`) shows the family's colours exactly when every sticker is home. Read in
those colours (each label the colour of its goal position), such a state is solved by the family's
registered puzzle, with its model and its defaults, and that puzzle's solution, in the same moves,
solves the state of distinct labels: where a definition of distinct labels has exactly the family's
moves (names and permutations), :func:`colour_reading` gives the reading. ``cases import-santa``
reads the competition's rows so; ``solve``, ``value``, ``bench`` and the web app read a definition
file's states likewise (:func:`puzzlezero.solver.in_family_colours`).

>>> import numpy as np
>>> from puzzlezero import make, registry
>>> from puzzlezero.puzzles.permutation.definition import Definition
>>> from puzzlezero.puzzles.permutation.families import cube
>>> from puzzlezero.puzzles.permutation.rules import PermutationPuzzle
>>> p = PermutationPuzzle(Definition.from_dict(cube(3, "distinct")))
>>> reading = colour_reading(p, registry.names())
>>> reading.family
'cube_3-3-3'
>>> state = p.apply_moves(p.goal(), p.parse_moves("f0 r1"))
>>> family = make(reading.family)
>>> shown = reading.read(state[None])[0]
>>> bool((shown == family.apply_moves(family.goal(), family.parse_moves("f0 r1"))).all())
True
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzlezero.errors import DefinitionError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.permutation.definition import Definition
from puzzlezero.puzzles.permutation.families import FAMILIES, family_definition

__all__ = ["ColourReading", "colour_reading", "colours_name_the_pieces", "keeps_the_pieces"]


def colours_name_the_pieces(family: Mapping[str, Any]) -> bool:
    """Whether a family's goal colours name every piece and every sticker of it: the pieces
    partition the positions, every move maps each piece onto a piece, no two pieces show the same
    colours and no piece shows a colour twice (the 2x2x2's and the 3x3x3's six colours; not the
    4x4x4's, whose centres share them).

    Then a state that moves pieces as wholes (:func:`keeps_the_pieces`) and shows the goal's colours
    has every piece home and turned as in the goal: it is the goal sticker for sticker, so a goal
    whose labels all differ is reached exactly when the family's colours are."""
    try:  # the definition's own check: pieces disjoint, every move carries each onto a piece
        checked = Definition.from_dict(family, where=str(family.get("name", "the family")))
    except DefinitionError:
        return False
    goal, pieces = checked.goal, checked.pieces
    if not pieces or sum(len(piece) for piece in pieces) != len(goal):  # and they cover it all
        return False
    shown = [tuple(sorted(goal[i] for i in piece)) for piece in pieces]
    return len(set(shown)) == len(shown) and all(len(set(c)) == len(c) for c in shown)


def keeps_the_pieces(family: Mapping[str, Any], labels: Sequence[str], state: Sequence[str]) -> bool:
    """Whether ``state`` (of a goal ``labels`` whose labels all differ) holds each piece's
    stickers at one piece's positions, as every state the moves reach does."""
    where = {label: i for i, label in enumerate(labels)}
    blocks = {frozenset(piece) for piece in family["pieces"]}
    return all(frozenset(where[state[i]] for i in piece) in blocks for piece in family["pieces"])


@dataclass(frozen=True)
class ColourReading:
    """States of a puzzle of distinct labels read as states of the registered ``family``."""

    #: the registered puzzle whose colours the states are read in (``cube_3-3-3``)
    family: str
    #: a value of the distinct puzzle's states -> the family's value (the colour of its home).
    #: The goal's labels all differ and are numbered as they come in it, so a value is its
    #: label's home, the position that holds it in the goal.
    colour: np.ndarray
    #: the family's pieces, each the sorted positions of its stickers
    pieces: tuple[tuple[int, ...], ...]

    def read(self, states: np.ndarray) -> np.ndarray | None:
        """``states`` (a batch) in the family's values, or ``None`` where one holds a piece's
        stickers apart (no move sequence reaches it: it is solved, or refused, as it is given)."""
        arr = np.asarray(states)
        homes = arr.reshape(arr.shape[0], -1)  # each value its label's home
        blocks = set(self.pieces)
        for row in homes:
            if any(tuple(sorted(int(h) for h in row[list(piece)])) not in blocks for piece in self.pieces):
                return None
        return self.colour[arr]


@functools.cache
def _colour_families(registered: frozenset[str]) -> tuple[tuple[str, Definition], ...]:
    """The generated families of the names ``registered`` whose colours name their pieces
    (:func:`colours_name_the_pieces`), each with its definition."""
    out = []
    for ptype in FAMILIES:
        name = ptype.replace("/", "-")
        if name in registered and colours_name_the_pieces(family := family_definition(ptype)):
            out.append((name, Definition.from_dict(family, where=name)))
    return tuple(out)


def colour_reading(puzzle: Puzzle, registered: Collection[str]) -> ColourReading | None:
    """The reading of ``puzzle``'s states in a family's colours, where ``puzzle`` is a permutation
    puzzle whose goal's labels all differ, with no wildcards, and whose moves are exactly those of a
    family whose colours name its pieces (the same names, the same permutations) and which is one
    of the puzzles ``registered`` (``puzzlezero.registry.names()``); else ``None``."""
    defn = getattr(puzzle, "definition", None)
    if not isinstance(defn, Definition) or defn.wildcards or len(set(defn.goal)) != len(defn.goal):
        return None
    for name, family in _colour_families(frozenset(registered)):
        if family.positions != defn.positions or set(family.move_names) != set(defn.move_names):
            continue
        mine = dict(zip(defn.move_names, defn.perms, strict=True))
        if any(
            not np.array_equal(mine[m], perm) for m, perm in zip(family.move_names, family.perms, strict=True)
        ):
            continue
        labels = list(dict.fromkeys(family.goal))  # the family puzzle's values, as it numbers them
        value = {label: i for i, label in enumerate(labels)}
        colour = np.array([value[label] for label in family.goal], dtype=np.uint8)
        pieces = tuple(tuple(sorted(piece)) for piece in family.pieces)
        return ColourReading(name, colour, pieces)
    return None
