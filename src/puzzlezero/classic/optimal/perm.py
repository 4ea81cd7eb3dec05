"""Ranking of partial permutations: the index of a pattern inside its pattern database.

A pattern of ``k`` distinct pieces placed in ``n`` cells is the tuple of their positions
``q[0..k-1]`` (distinct values in ``[0, n)``). Its rank is the mixed-radix number whose ``i``-th
digit is ``q[i]`` minus the number of earlier pieces on smaller cells (a Lehmer code), in radix
``n - i``; the ranks fill ``[0, n! / (n - k)!)`` exactly, so a table indexed by rank has no holes
(the "compact" mapping of Felner et al. 2004). The sum of the digits is the number of inversions,
so when ``k == n`` its parity is the parity of the permutation.

All functions are numba kernels on one pattern (``q`` is ``int64[k]``); callers loop over batches.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["num_ranks", "rank", "rank_parity", "unrank"]


def num_ranks(n: int, k: int) -> int:
    """``n! / (n - k)!``: the number of placements of ``k`` distinct pieces in ``n`` cells."""
    out = 1
    for i in range(k):
        out *= n - i
    return out


@nb.njit(cache=True, inline="always")
def rank(q: np.ndarray, k: int, n: int) -> np.int64:
    """Rank of the positions ``q[:k]`` (distinct, in ``[0, n)``) in ``[0, n!/(n-k)!)``."""
    r = np.int64(0)
    for i in range(k):
        d = q[i]
        for j in range(i):
            if q[j] < q[i]:
                d -= 1
        r = r * (n - i) + d
    return r


@nb.njit(cache=True, inline="always")
def rank_parity(q: np.ndarray, k: int, n: int) -> tuple[np.int64, np.int64]:
    """``(rank, inversion parity)`` of ``q[:k]``; the parity is the permutation's when ``k == n``."""
    r = np.int64(0)
    s = np.int64(0)
    for i in range(k):
        d = q[i]
        for j in range(i):
            if q[j] < q[i]:
                d -= 1
        r = r * (n - i) + d
        s += d
    return r, s & 1


@nb.njit(cache=True, inline="always")
def unrank(r: np.int64, k: int, n: int, q: np.ndarray) -> None:
    """Inverse of :func:`rank`: write the positions of rank ``r`` into ``q[:k]``."""
    # peel the mixed-radix digits, last one first
    for i in range(k - 1, -1, -1):
        base = n - i
        q[i] = r % base
        r //= base
    # digit i counts the free cells below q[i]: turn it into a cell, left to right
    used = np.int64(0)
    for i in range(k):
        d = q[i]
        c = 0
        while True:
            if not (used >> c) & 1:
                if d == 0:
                    break
                d -= 1
            c += 1
        q[i] = c
        used |= np.int64(1) << c
