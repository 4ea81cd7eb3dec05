"""States from their callers: text read by the puzzle's own parser, arrays checked by its own
validator. The one reader of states: the Python API, the command line, the web server, bench and
Ray all read them here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles.base import Puzzle


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
