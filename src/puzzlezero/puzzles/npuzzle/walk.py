"""The numba kernel of :meth:`.NPuzzle.scramble`, apart so that parsing and showing sliding puzzles
does not import numba."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["random_walks"]


@numba.njit(cache=True, nogil=True)
def random_walks(
    states: np.ndarray,
    blank: np.ndarray,
    depths: np.ndarray,
    words: np.ndarray,
    swap: np.ndarray,
    nonbacktracking: bool,
    came_from: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """In place: walk the blank of ``states[i]`` (at ``blank[i]``) ``depths[i]`` random legal steps;
    ``words[i, t]`` (uint32) picks step ``t`` among the legal ones, ``swap`` is ``NPuzzle._swap``.
    With ``nonbacktracking`` a step never moves the blank straight back to where it just was.
    ``came_from[i]``: where the blank was before the last step (``-1`` after none)."""
    legal = np.empty(4, dtype=np.int64)
    for i in range(states.shape[0]):
        b = blank[i]
        prev = -1
        for t in range(depths[i]):
            k = 0
            for a in range(4):
                to = swap[b, a]
                if to != b and not (nonbacktracking and to == prev):
                    legal[k] = to
                    k += 1
            src = legal[(words[i, t] >> 8) % k]
            states[i, b] = states[i, src]
            states[i, src] = 0
            prev = b
            b = src
        blank[i] = b
        came_from[i] = prev
