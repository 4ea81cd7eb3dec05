"""The greedy sift of :mod:`.group` over a batch of states as a numba kernel (a sift is a loop over
the chain's levels and each level's few candidates: in NumPy a batch would gather every
candidate's positions at every level, several times the work)."""

from __future__ import annotations

import numba as nb
import numpy as np

from puzzlezero.search.rollout import NO_ANSWER


@nb.njit(cache=True, parallel=True)
def greedy_sift_lengths(states, goal, level_start, elements, lengths, fresh_start, fresh):  # fmt: skip
    """``int64[B]``: for each row of ``states[B, N]`` (labels), the length of the greedy sift.

    Level ``i``'s entries are rows ``level_start[i] .. level_start[i + 1]`` of ``elements``
    (shortest word first, their lengths in ``lengths``); the positions that level fixes are
    ``fresh[fresh_start[i] .. fresh_start[i + 1]]``. With ``r`` the product of the entries chosen
    so far (the identity at first), level ``i`` takes the first entry ``u`` with
    ``states[b, r[u[x]]] == goal[x]`` on every position ``x`` it fixes and sets ``r <- r u``. A
    state is answered when every level finds one and ``states[b, r] == goal`` at the end; else
    :data:`NO_ANSWER`."""
    n_states, n = states.shape
    k = level_start.size - 1
    out = np.empty(n_states, np.int64)
    for b in nb.prange(n_states):
        r = np.arange(n)
        nxt = np.empty(n, np.int64)
        total = 0
        ok = True
        for i in range(k):
            found = -1
            for j in range(level_start[i], level_start[i + 1]):
                good = True
                for f in range(fresh_start[i], fresh_start[i + 1]):
                    x = fresh[f]
                    if states[b, r[elements[j, x]]] != goal[x]:
                        good = False
                        break
                if good:
                    found = j
                    break
            if found < 0:
                ok = False
                break
            total += lengths[found]
            for x in range(n):
                nxt[x] = r[elements[found, x]]
            for x in range(n):
                r[x] = nxt[x]
        if ok:
            for x in range(n):
                if states[b, r[x]] != goal[x]:
                    ok = False
                    break
        out[b] = total if ok else NO_ANSWER
    return out
