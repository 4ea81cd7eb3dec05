"""The numba kernel of :meth:`.NPuzzle.scramble`, apart so that parsing and showing sliding puzzles
does not import numba."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["random_walks"]


@numba.njit(cache=True, nogil=True)
def random_walks(
    states: np.ndarray, blank: np.ndarray, depths: np.ndarray, words: np.ndarray, swap: np.ndarray
) -> None:  # pragma: no cover - compiled
    """In place: walk the blank of ``states[i]`` (at ``blank[i]``) ``depths[i]`` random legal steps;
    ``words[i, t]`` (uint32) picks step ``t`` among the legal ones, ``swap`` is ``NPuzzle._swap``."""
    legal = np.empty(4, dtype=np.int64)
    for i in range(states.shape[0]):
        b = blank[i]
        for t in range(depths[i]):
            k = 0
            for a in range(4):
                if swap[b, a] != b:
                    legal[k] = swap[b, a]
                    k += 1
            src = legal[(words[i, t] >> 8) % k]
            states[i, b] = states[i, src]
            states[i, src] = 0
            b = src
        blank[i] = b
