"""States from their callers: text read by the puzzle's own parser, arrays checked by its own
validator. The one reader of states: the Python API, the command line, the web server, bench and
Ray all read them here, once, where they come in (:func:`read_states`), and hand the solver the
:class:`States` it makes, which nothing downstream reads or checks again. States of a goal whose
labels all differ on the 2x2x2's or the 3x3x3's moves are read in the family's colours here too
(:func:`in_family_colours`), for the command line and the web server alike."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle


@dataclass(frozen=True, eq=False)
class States:
    """States of one puzzle, read and checked: ``array`` is ``[n, *state_shape]`` of the puzzle's
    dtype, read-only. :func:`read_states` makes them; the solver (:func:`~puzzlezero.solver.solve_many`,
    bench, Ray) takes them as they are. Making one directly asserts that its rows were read by
    :func:`read_state` (a web worker does, for the state its server read)."""

    puzzle: str
    array: np.ndarray

    def __post_init__(self) -> None:
        self.array.setflags(write=False)

    def __len__(self) -> int:
        return int(self.array.shape[0])

    def chunk(self, lo: int, hi: int) -> States:
        """Rows ``[lo, hi)``, checked like these."""
        return States(self.puzzle, self.array[lo:hi])


def read_states(puzzle: Puzzle, states: States | Iterable[Any] | np.ndarray) -> States:
    """``states`` read and checked once (:func:`read_state` on each: text, arrays, sequences of
    numbers); :class:`States` of this puzzle are returned as they are, of another puzzle refused."""
    if isinstance(states, States):
        if states.puzzle != puzzle.name:
            raise PuzzleError(f"these are {states.puzzle} states, not {puzzle.name} states")
        return states
    rows = [read_state(puzzle, s) for s in states]
    arr = np.stack(rows) if rows else np.empty((0, *puzzle.state_shape), dtype=puzzle.dtype)
    return States(puzzle.name, arr)


def read_state(puzzle: Puzzle, state: str | np.ndarray | Sequence[int]) -> np.ndarray:
    """A checked state ``[*state_shape]``: text goes through ``puzzle.parse``, arrays through
    ``puzzle.validate`` (and parsed text too, for a puzzle whose parser does not check all that
    its validator does). Raises :class:`InvalidStateError` with the puzzle's reason."""
    if isinstance(state, str):
        parsed = np.asarray(puzzle.parse(state), dtype=puzzle.dtype)
        puzzle.validate(parsed)
        return parsed
    try:
        raw = np.asarray(state)
        if (
            raw.dtype.kind not in "biu"
            or raw.size
            and (raw.min() < 0 or raw.max() > np.iinfo(puzzle.dtype).max)
        ):
            raise ValueError
    except (ValueError, TypeError):
        raise InvalidStateError(
            f"a {puzzle.name} state must be small non-negative integers, got {state!r}"
        ) from None
    if raw.shape != tuple(puzzle.state_shape):
        raise InvalidStateError(
            f"a {puzzle.name} state has shape {tuple(puzzle.state_shape)}, got {raw.shape}"
        )
    arr = raw.astype(puzzle.dtype)
    puzzle.validate(arr)
    return arr


def in_family_colours(puzzle: Puzzle, states: np.ndarray) -> tuple[Puzzle, States] | None:
    """``states`` (checked rows of ``puzzle``, a definition whose goal's labels all differ) read
    in the colours of the registered family whose moves it has, where that asks no less
    (:mod:`puzzlezero.puzzles.permutation.colours`: the 2x2x2's and the 3x3x3's), so that the
    family's model and defaults solve them in the same moves: the family's puzzle and the states
    so read; ``None`` where there is no such family or a state holds a piece's stickers apart. The
    caller keeps the definition's own solve where a model, goal or macros of its own are named,
    and replays each answer, by its moves' names, on the state as given."""
    from puzzlezero.puzzles.permutation.colours import colour_reading
    from puzzlezero.registry import make, names

    reading = colour_reading(puzzle, names())
    read = None if reading is None else reading.read(states)
    if reading is None or read is None:
        return None
    family = make(reading.family)
    return family, States(family.name, read)
