"""OPEN lists: one binary min-heap per search instance, with batched push and pop in numba.

An entry is ``(f float64, seq int64, node int64, g float32)``; entries are ordered by ``f`` and then
by ``seq`` (push order: first in, first out among equal ``f``, as DeepCubeA's heapq counter).
Nodes are never removed from the middle of a heap: when a node gets a lower ``g`` it is pushed
again and the old entry goes stale. :meth:`OpenList.pop` skips stale entries (``g`` no longer the
node's best) and entries of nodes already expanded at their current ``g``, and marks every node it
returns as expanded (``closed_g = g``): that is the CLOSED set of the paper.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["OpenList", "heap_bytes"]

#: bytes of one entry: ``f`` float64, ``seq`` int64, ``node`` int64, ``g`` float32
ENTRY_BYTES = 8 + 8 + 8 + 4


def heap_bytes(entries: int) -> int:
    """Peak bytes of an :class:`OpenList` that grows to ``entries`` entries a few at a time: the
    arrays double from 1024 entries, twice a full array's entries while it is copied (pages of the
    new one are committed as they are written)."""
    cap, peak = 1024, 1024
    while cap < entries:
        peak, cap = max(entries, 2 * cap), 2 * cap
    return ENTRY_BYTES * peak


@nb.njit(cache=True, inline="always")
def _less(hf, hs, i, j) -> bool:
    return hf[i] < hf[j] or (hf[i] == hf[j] and hs[i] < hs[j])


@nb.njit(cache=True, inline="always")
def _swap(hf, hs, hn, hg, i, j) -> None:
    hf[i], hf[j] = hf[j], hf[i]
    hs[i], hs[j] = hs[j], hs[i]
    hn[i], hn[j] = hn[j], hn[i]
    hg[i], hg[j] = hg[j], hg[i]


@nb.njit(cache=True, nogil=True)
def _push_kernel(hf, hs, hn, hg, size, f, seq0, nodes, g):
    for t in range(f.shape[0]):
        i = size
        hf[i] = f[t]
        hs[i] = seq0 + t
        hn[i] = nodes[t]
        hg[i] = g[t]
        size += 1
        while i > 0:
            p = (i - 1) >> 1
            if _less(hf, hs, i, p):
                _swap(hf, hs, hn, hg, i, p)
                i = p
            else:
                break
    return size


@nb.njit(cache=True, nogil=True)
def _pop_kernel(hf, hs, hn, hg, size, k, node_g, closed_g, out):
    count = 0
    while count < k and size > 0:
        node = hn[0]
        gp = hg[0]
        size -= 1
        if size > 0:
            hf[0] = hf[size]
            hs[0] = hs[size]
            hn[0] = hn[size]
            hg[0] = hg[size]
            i = 0
            while True:
                left = 2 * i + 1
                if left >= size:
                    break
                c = left
                if left + 1 < size and _less(hf, hs, left + 1, left):
                    c = left + 1
                if _less(hf, hs, c, i):
                    _swap(hf, hs, hn, hg, c, i)
                    i = c
                else:
                    break
        if gp == node_g[node] and closed_g[node] > gp:
            closed_g[node] = gp
            out[count] = node
            count += 1
    return size, count


class OpenList:
    """The OPEN list of one instance (a binary heap in four growable NumPy arrays)."""

    __slots__ = ("f", "seq", "node", "g", "size")

    def __init__(self, capacity: int = 1024) -> None:
        self.f = np.empty(capacity, np.float64)
        self.seq = np.empty(capacity, np.int64)
        self.node = np.empty(capacity, np.int64)
        self.g = np.empty(capacity, np.float32)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def push(self, f: np.ndarray, nodes: np.ndarray, g: np.ndarray, seq0: int) -> None:
        """Push entries ``f float64[M]``, ``nodes int64[M]``, ``g float32[M]``; ``seq0`` numbers them."""
        m = f.shape[0]
        if self.size + m > self.f.shape[0]:
            cap = max(self.size + m, 2 * self.f.shape[0])
            for name in ("f", "seq", "node", "g"):
                old = getattr(self, name)
                arr = np.empty(cap, old.dtype)
                arr[: self.size] = old[: self.size]
                setattr(self, name, arr)
        self.size = _push_kernel(self.f, self.seq, self.node, self.g, self.size, f, seq0, nodes, g)

    def pop(self, k: int, node_g: np.ndarray, closed_g: np.ndarray) -> np.ndarray:
        """Pop up to ``k`` valid nodes (lowest ``f`` first) and mark them CLOSED; ``int64[<=k]``."""
        out = np.empty(k, np.int64)
        self.size, count = _pop_kernel(
            self.f, self.seq, self.node, self.g, self.size, k, node_g, closed_g, out
        )
        return out[:count]
