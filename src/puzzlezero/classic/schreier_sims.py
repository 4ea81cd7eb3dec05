"""Random Schreier–Sims: a base of the group a puzzle's moves generate, and its basic orbits.

The group solver (:mod:`puzzlezero.classic.group`) fills a stabilizer chain with short words in
the moves (Minkwitz's algorithm). What it needs first is the chain's shape: a **base**
``b_1..b_k`` (positions such that only the identity fixes them all) and the **basic orbits**
``D_i``, the positions ``b_i`` reaches under ``G_(i-1)``, the elements fixing ``b_1..b_(i-1)``.
Then ``|G| = prod |D_i|``, and the words table is full when it holds a word for every point of
every ``D_i``.

**The algorithm** (Á. Seress, *Permutation Group Algorithms*, Cambridge 2003, section 4.3). A
partial chain keeps, at each level ``i``, strong generators ``S_i`` (elements fixing
``b_1..b_(i-1)``) and the orbit of ``b_i`` under them, each point ``d`` with the inverse of an
element that carries ``b_i`` to ``d``. An element ``g`` is **sifted**: at level ``i``,
``d = g(b_i)``; if ``d`` is in the orbit, ``g`` is divided by that element (``b_i`` goes back home,
``b_1..b_(i-1)`` stay) and goes on to the next level; if not, what is left of ``g`` is a new strong
generator of levels ``1..i`` and their orbits grow. An element that passes every level yet is not
the identity moves a position outside the base: the first one it moves is appended to the base.
The generators are sifted first, then random elements of ``G``; the chain is taken as complete
when ``certainty`` random elements in a row sift to the identity. Were it not, the group its
levels describe would be a proper subgroup ``H`` of ``G``, of index at least 2, and a uniformly
random element of ``G`` lies in ``H`` with probability at most 1/2: the chance of a wrong chain is
at most ``2**-certainty``. Every element that does not sift adds a point to an orbit or to the base,
so the work is bounded by the chain's size.

**Random elements** by product replacement (F. Celler, C. R. Leedham-Green, S. H. Murray,
A. C. Niemeyer, E. A. O'Brien, *Generating random elements of a finite group*, Comm. Algebra 23
(1995)): ten slots seeded with the generators; a step replaces one slot by its product with
another or its inverse, and the element returned is a running product of the slots replaced
(C. R. Leedham-Green and S. H. Murray's "rattle" accumulator), after a warm-up of 60 steps. The
generator is seeded, so a chain is the same on every machine.

Where the deterministic Schreier–Sims algorithm (sympy's ``schreier_sims_incremental``) takes 59 s
for the 7x7x7 cube's 294 stickers, this takes 0.13 s, the 10x10x10's 600 stickers 0.85 s and the
19x19x19's 2,166 stickers 22 s (2-vCPU Intel Xeon), with the same base and orbits wherever both
were run (tests/classic/test_schreier_sims.py).

>>> import numpy as np
>>> a = np.array([1, 2, 3, 4, 0, 5, 6])  # a 5-cycle and a 3-cycle sharing a position
>>> b = np.array([0, 1, 2, 3, 5, 6, 4])
>>> chain = random_schreier_sims(np.stack([a, b]), seed=1)
>>> chain.order  # the alternating group of 7 points
2520
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: random elements in a row that must sift to the identity: a wrong chain has a chance of at most
#: 2**-CERTAINTY
CERTAINTY = 64
#: product replacement's slots and its warm-up steps
_SLOTS, _WARM_UP = 10, 60


@dataclass(frozen=True)
class Chain:
    """The shape of a stabilizer chain: ``base[i]`` and the size of its basic orbit
    ``orbit_sizes[i]`` (every size at least 2: base points that every element fixing the earlier ones
    fixes too are left out)."""

    base: tuple[int, ...]
    orbit_sizes: tuple[int, ...]
    #: elements sifted: the generators and the random ones
    sifted: int

    @property
    def order(self) -> int:
        """The group's order, ``prod |D_i|``."""
        return math.prod(self.orbit_sizes)


def inverse(g: np.ndarray) -> np.ndarray:
    """The inverse of a permutation in array form (``inverse(g)[g[x]] == x``)."""
    out = np.empty_like(g)
    out[g] = np.arange(g.size, dtype=g.dtype)
    return out


class _Level:
    """One level of the partial chain: its base point, strong generators (each with its inverse)
    and the orbit of the base point, each point ``d`` with ``u_d^-1``, ``u_d(b) = d``."""

    def __init__(self, point: int, identity: np.ndarray) -> None:
        self.point = point
        self.generators: list[tuple[np.ndarray, np.ndarray]] = []
        self.orbit: dict[int, np.ndarray] = {point: identity}

    def add(self, g: np.ndarray, g_inv: np.ndarray) -> None:
        """Add a strong generator and grow the orbit breadth first: ``u_(g y) = g u_y``, so
        ``u_(g y)^-1 = u_y^-1 g^-1``."""
        self.generators.append((g, g_inv))
        new = []
        for y, u_inv in list(self.orbit.items()):
            z = int(g[y])
            if z not in self.orbit:
                self.orbit[z] = u_inv[g_inv]
                new.append(z)
        while new:
            y = new.pop()
            u_inv = self.orbit[y]
            for s, s_inv in self.generators:
                z = int(s[y])
                if z not in self.orbit:
                    self.orbit[z] = u_inv[s_inv]
                    new.append(z)


class _ProductReplacement:
    """Random elements of the group the generators make (module docstring)."""

    def __init__(self, generators: np.ndarray, rng: np.random.Generator) -> None:
        self.rng = rng
        self.slots = [generators[i % len(generators)].copy() for i in range(max(_SLOTS, len(generators)))]
        self.accumulator = np.arange(generators.shape[1], dtype=generators.dtype)
        for _ in range(_WARM_UP):
            self.next()

    def next(self) -> np.ndarray:
        i, j = self.rng.choice(len(self.slots), size=2, replace=False)
        other = self.slots[j] if self.rng.random() < 0.5 else inverse(self.slots[j])
        # x -> other(slot(x)) or slot(other(x)): a product on either side
        self.slots[i] = other[self.slots[i]] if self.rng.random() < 0.5 else self.slots[i][other]
        self.accumulator = self.slots[i][self.accumulator]
        return self.accumulator


def random_schreier_sims(
    generators: np.ndarray,
    base: Sequence[int] = (),
    *,
    seed: int,
    certainty: int = CERTAINTY,
) -> Chain:
    """The base (``base`` first, extended by the first position an element moves where it is not
    enough) and the basic orbits' sizes of the group generated by ``generators`` (``intp[G, N]``,
    ``g[x]`` the position ``x`` goes to; the identity of an empty set)."""
    gens = np.asarray(generators)
    if gens.ndim != 2 or gens.shape[0] == 0:
        return Chain((), (), 0)
    n = gens.shape[1]
    gens = gens.astype(np.int32 if n < 2**31 else np.int64)
    identity = np.arange(n, dtype=gens.dtype)
    levels = [_Level(int(b), identity) for b in dict.fromkeys(int(b) for b in base)]

    def sift(g: np.ndarray) -> tuple[np.ndarray, int]:
        for i, level in enumerate(levels):
            u_inv = level.orbit.get(int(g[level.point]))
            if u_inv is None:
                return g, i
            g = u_inv[g]
        return g, len(levels)

    def strong(g: np.ndarray, depth: int) -> None:
        """``g`` fixes the first ``depth`` base points and is not the identity: a strong generator
        of levels ``0..depth`` (a new base point where ``depth`` is past the last level)."""
        if depth == len(levels):
            levels.append(_Level(int(np.flatnonzero(g != identity)[0]), identity))
        g_inv = inverse(g)
        for level in levels[: depth + 1]:
            level.add(g, g_inv)

    sifted = 0
    for g in gens:
        sifted += 1
        h, depth = sift(g)
        if depth < len(levels) or (h != identity).any():
            strong(h, depth)
    randoms = _ProductReplacement(gens, np.random.default_rng(seed))
    in_a_row = 0
    while in_a_row < certainty:
        sifted += 1
        h, depth = sift(randoms.next())
        if depth == len(levels) and not (h != identity).any():
            in_a_row += 1
        else:
            in_a_row = 0
            strong(h, depth)
    kept = [level for level in levels if len(level.orbit) > 1]
    return Chain(tuple(lv.point for lv in kept), tuple(len(lv.orbit) for lv in kept), sifted)
