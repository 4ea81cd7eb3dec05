"""Pattern databases of the Rubik's cube (Korf 1997), quarter-turn metric.

A pattern is a set of ``k`` corners or ``k`` edges; its database holds, for every placement and
orientation of those pieces, the fewest quarter turns that solve them (the other pieces ignored).
Index = ``rank(positions) * no**m + orientation digits`` with ``no`` = 3 (corners) or 2 (edges) and
``m = k`` orientations stored, or ``k - 1`` when the pattern holds every piece of its kind (the last
orientation follows from the others). Korf's heuristic is the maximum of the corner database
(``8! * 3^7 = 88,179,840`` entries) and two 6-edge databases (``12!/6! * 2^6 = 42,577,920`` each).

Every quarter turn is an odd permutation of the corners, so the true distance has the parity of the
corner permutation: a pattern value of the wrong parity is raised by one (still admissible).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numba as nb
import numpy as np

from puzzlezero.classic.optimal.cube_model import CORNER_MOVE, EDGE_MOVE
from puzzlezero.classic.optimal.perm import num_ranks, rank, unrank
from puzzlezero.classic.optimal.tables import concat_huge, level_progress, load_or_build
from puzzlezero.errors import PuzzleError

__all__ = ["CubePattern", "CubePDB", "KORF", "build_bytes", "build_pattern", "load_cube_pdb"]


@dataclass(frozen=True)
class CubePattern:
    """``kind`` is ``"corner"`` or ``"edge"``; ``pieces`` are cubie ids (corners 0-7, edges 0-11)."""

    kind: str
    pieces: tuple[int, ...]

    def __post_init__(self) -> None:
        npos = {"corner": 8, "edge": 12}.get(self.kind)
        if npos is None or not self.pieces or len(set(self.pieces)) != len(self.pieces) \
                or not all(0 <= p < npos for p in self.pieces):  # fmt: skip
            raise PuzzleError(f"a cube pattern is 'corner' or 'edge' with distinct piece ids; got {self}")

    @property
    def npos(self) -> int:
        return 8 if self.kind == "corner" else 12

    @property
    def no(self) -> int:
        return 3 if self.kind == "corner" else 2

    @property
    def m(self) -> int:
        k = len(self.pieces)
        return k - 1 if k == self.npos else k

    @property
    def size(self) -> int:
        return num_ranks(self.npos, len(self.pieces)) * self.no**self.m

    @property
    def name(self) -> str:
        return f"cube3_{self.kind}_{'-'.join(map(str, self.pieces))}"


#: Korf's heuristic: all corners, and the edges split 6 + 6
KORF = (
    CubePattern("corner", tuple(range(8))),
    CubePattern("edge", (0, 1, 2, 3, 4, 5)),
    CubePattern("edge", (6, 7, 8, 9, 10, 11)),
)


# --------------------------------------------------------------------------- index arithmetic
@nb.njit(cache=True, inline="always")
def _encode(q, o, k, npos, no, m, omul):  # fmt: skip
    code = np.int64(0)
    for i in range(m):
        code = code * no + o[i]
    return rank(q, k, npos) * omul + code


@nb.njit(cache=True, inline="always")
def _decode(idx, k, npos, no, m, omul, q, o):  # fmt: skip
    code = idx % omul
    unrank(idx // omul, k, npos, q)
    total = 0
    for i in range(m - 1, -1, -1):
        o[i] = code % no
        code //= no
        total += o[i]
    if m < k:
        o[k - 1] = (no - total % no) % no


@nb.njit(cache=True, inline="always")
def pattern_index(v, pieces, k, npos, no, m, omul, q, o):  # fmt: skip
    """Index of the pattern in piece values ``v[20]``; ``pieces`` are global ids (edges + 8)."""
    for i in range(k):
        x = v[pieces[i]]
        q[i] = x // no
        o[i] = x % no
    return _encode(q, o, k, npos, no, m, omul)


@nb.njit(cache=True)
def _bfs_level(dist, level, k, npos, no, m, omul, move):  # fmt: skip
    """Give ``level + 1`` to every unseen child of an entry at ``level``; returns how many."""
    q = np.empty(k, dtype=np.int64)
    o = np.empty(k, dtype=np.int64)
    q2 = np.empty(k, dtype=np.int64)
    o2 = np.empty(k, dtype=np.int64)
    new = 0
    for idx in range(dist.shape[0]):
        if dist[idx] != level:
            continue
        _decode(np.int64(idx), k, npos, no, m, omul, q, o)
        for mv in range(12):
            for i in range(k):
                x = move[q[i] * no + o[i], mv]
                q2[i] = x // no
                o2[i] = x % no
            j = _encode(q2, o2, k, npos, no, m, omul)
            if dist[j] == 255:
                dist[j] = level + 1
                new += 1
    return new


def build_pattern(pattern: CubePattern) -> np.ndarray:
    """Breadth-first search of the pattern's space from the solved cube: ``uint8[pattern.size]``."""
    k, npos, no, m = len(pattern.pieces), pattern.npos, pattern.no, pattern.m
    omul = no**m
    move = CORNER_MOVE if pattern.kind == "corner" else EDGE_MOVE
    dist = np.full(pattern.size, 255, dtype=np.uint8)
    q = np.array(pattern.pieces, dtype=np.int64)  # solved: piece p at position p, orientation 0
    dist[_encode(q, np.zeros(k, dtype=np.int64), k, npos, no, m, omul)] = 0
    level = 0
    with level_progress(pattern.name, pattern.size) as update:
        update(0, 1)
        while (new := _bfs_level(dist, level, k, npos, no, m, omul, move)) > 0:
            level += 1
            update(level, new)
    if (dist == 255).any():
        raise AssertionError("pattern database has unreached entries")  # the pattern space is connected
    return dist


# --------------------------------------------------------------------------- the heuristic
@dataclass(frozen=True, eq=False)
class CubePDB:
    """Several cube pattern databases combined by ``max`` with the parity correction.

    ``table`` is every database concatenated (``uint8``); row ``p`` of the ``int64`` arrays
    describes pattern ``p``: ``off`` into ``table``, global piece ids ``pieces[p, :k[p]]`` (edges
    offset by 8), ``npos``, ``no``, ``m`` and ``omul = no**m``.
    """

    patterns: tuple[CubePattern, ...]
    table: np.ndarray
    off: np.ndarray
    pieces: np.ndarray
    k: np.ndarray
    npos: np.ndarray
    no: np.ndarray
    m: np.ndarray
    omul: np.ndarray

    @property
    def args(self) -> tuple[np.ndarray, ...]:
        """The arrays the numba kernels take, in order."""
        return (self.table, self.off, self.pieces, self.k, self.npos, self.no, self.m, self.omul)

    def values(self, pieces: np.ndarray) -> np.ndarray:
        """Heuristic ``int64[B]`` of piece values ``int64[B, 20]`` (see :mod:`.cube_model`)."""
        out = np.empty(pieces.shape[0], dtype=np.int64)
        _batch_values(np.ascontiguousarray(pieces, dtype=np.int64), *self.args, out)  # type: ignore[call-arg]  # numba Dispatcher stub
        return out

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes)


@nb.njit(cache=True)
def corner_parity(v):  # fmt: skip
    """Parity of the corner permutation of piece values ``v[20]`` (= distance parity in QTM)."""
    s = 0
    for i in range(8):
        for j in range(i):
            if v[j] // 3 > v[i] // 3:
                s += 1
    return s & 1


@nb.njit(cache=True)
def _batch_values(states, table, off, pieces, k, npos, no, m, omul, out):  # fmt: skip
    """Max over the patterns of their values, each raised by one where its parity differs from
    the corner permutation's (the true distance's). Per chunk of states, all indices are computed
    first and then read, so that the random table reads overlap."""
    q = np.empty(12, dtype=np.int64)
    o = np.empty(12, dtype=np.int64)
    n_pat = off.shape[0]
    chunk = 64
    idx = np.empty((chunk, n_pat), dtype=np.int64)
    for lo in range(0, states.shape[0], chunk):
        hi = min(lo + chunk, states.shape[0])
        for b in range(lo, hi):
            for p in range(n_pat):
                idx[b - lo, p] = off[p] + pattern_index(
                    states[b], pieces[p], k[p], npos[p], no[p], m[p], omul[p], q, o
                )
        for b in range(lo, hi):
            parity = corner_parity(states[b])
            best = parity
            for p in range(n_pat):
                h = np.int64(table[idx[b - lo, p]])
                if (h ^ parity) & 1:
                    h += 1
                best = max(best, h)
            out[b] = best


def build_bytes(patterns: tuple[CubePattern, ...] = KORF) -> int:
    """Peak bytes of building the databases of ``patterns``: a byte an entry (:func:`build_pattern`
    keeps nothing else that grows), the tables built before beside each, then joined into one
    (Korf's three: 330.6 MiB)."""
    return 2 * sum(p.size for p in patterns)


@cache
def load_cube_pdb(patterns: tuple[CubePattern, ...] = KORF) -> CubePDB:
    """The databases of ``patterns`` (built and cached on first use; Korf's set takes minutes)."""
    tables = []
    for pat in patterns:
        meta = {"kind": "cube3-pattern", "metric": "quarter-turn", "piece_kind": pat.kind,
                "pieces": list(pat.pieces)}  # fmt: skip

        def build(pat: CubePattern = pat) -> dict[str, np.ndarray]:
            return {"table": build_pattern(pat)}

        command = "puzzlezero pdb build cube3" if pat in KORF else None
        peak = build_bytes(patterns)
        tables.append(load_or_build(pat.name, meta, build, command=command, peak_bytes=peak)["table"])
        if tables[-1].shape != (pat.size,) or tables[-1].dtype != np.uint8:
            raise PuzzleError(
                f"pattern database {pat.name} has shape {tables[-1].shape}, expected ({pat.size},)"
            )
    off = np.cumsum([0] + [t.size for t in tables])[:-1].astype(np.int64)
    table = concat_huge(tables)
    pieces = np.zeros((len(patterns), 12), dtype=np.int64)
    for p, pat in enumerate(patterns):
        pieces[p, : len(pat.pieces)] = np.array(pat.pieces) + (8 if pat.kind == "edge" else 0)

    def ints(f: Callable[[CubePattern], int]) -> np.ndarray:
        return np.array([f(p) for p in patterns], dtype=np.int64)

    return CubePDB(patterns, table, off, pieces, ints(lambda p: len(p.pieces)), ints(lambda p: p.npos),
                   ints(lambda p: p.no), ints(lambda p: p.m), ints(lambda p: p.no**p.m))  # fmt: skip
