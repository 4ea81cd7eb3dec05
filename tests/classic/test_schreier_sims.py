"""The random Schreier–Sims algorithm (puzzlezero.classic.schreier_sims): group orders known by
hand, the same base and basic orbits as sympy's deterministic algorithm on the registered
permutation puzzles, the base extended where the one given is not enough, and the big cubes'
chains in about a second."""

from __future__ import annotations

import math

import numpy as np
import pytest

from puzzlezero import make, registry
from puzzlezero.classic import group
from puzzlezero.classic.schreier_sims import random_schreier_sims
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.permutation import family_puzzle


def _cycle(n: int, *points: int) -> np.ndarray:
    g = np.arange(n)
    g[list(points)] = np.roll(points, -1)  # points[0] -> points[1] -> ... -> points[0]
    return g


def _generators(name_or_puzzle: str | Puzzle) -> tuple[np.ndarray, tuple[int, ...]]:
    p = make(name_or_puzzle) if isinstance(name_or_puzzle, str) else name_or_puzzle
    images = group._images(group.move_permutations(p))
    actions = group._group_actions(p)
    base = tuple(int(b) for b in getattr(p, "group_base", ())) or group.piece_base(images, actions)
    return images[list(actions)], base


def test_orders_known_by_hand() -> None:
    n = 7
    a, b = _cycle(n, 0, 1, 2, 3, 4), _cycle(n, 4, 5, 6)
    assert random_schreier_sims(np.stack([a, b]), seed=1).order == math.factorial(7) // 2  # A7
    s = np.stack([_cycle(9, 0, 1), _cycle(9, *range(9))])  # a transposition and a 9-cycle: S9
    assert random_schreier_sims(s, seed=1).order == math.factorial(9)
    # two disjoint 3-cycles: the group of order 9, whose base needs a point of each
    c = random_schreier_sims(np.stack([_cycle(6, 0, 1, 2), _cycle(6, 3, 4, 5)]), seed=1)
    assert c.order == 9 and c.base == (0, 3) and c.orbit_sizes == (3, 3)
    assert random_schreier_sims(np.stack([np.arange(5)]), seed=1).order == 1
    gens, base = _generators("cube3")
    assert random_schreier_sims(gens, base, seed=1).order == 43_252_003_274_489_856_000
    gens, base = _generators("cube2")
    assert random_schreier_sims(gens, base, seed=1).order == 3_674_160  # 7! * 3^6


def test_a_base_that_is_not_enough_is_extended_by_the_first_point_moved() -> None:
    gens, _ = _generators("cube3")
    chain = random_schreier_sims(gens, (0,), seed=3)
    assert chain.base[0] == 0 and chain.order == 43_252_003_274_489_856_000
    full = random_schreier_sims(gens, seed=3)  # no base at all
    assert full.order == chain.order and len(set(full.base)) == len(full.base)


def test_the_chain_does_not_depend_on_the_seed_once_complete() -> None:
    gens, base = _generators("globe_2-6")
    chains = {(c.base, c.orbit_sizes) for c in (random_schreier_sims(gens, base, seed=s) for s in range(4))}
    assert len(chains) == 1  # base and basic orbits are the group's, the random elements are not


def test_certainty_is_what_makes_the_chain_complete() -> None:
    """Without random elements, only the generators are sifted: the chain may describe a
    subgroup (here it does); with them, the whole group."""
    gens, base = _generators("cube_3-3-3")
    partial = random_schreier_sims(gens, base, seed=1, certainty=0)
    whole = random_schreier_sims(gens, base, seed=1)
    assert whole.order % partial.order == 0 and partial.order < whole.order
    assert whole.sifted > partial.sifted == len(gens)


#: sympy's deterministic algorithm takes seconds to a minute on these (the 7x7x7: 59 s)
_SLOW = ("cube_5-5-5", "cube_6-6-6", "cube_7-7-7", "wreath_33-33", "globe_1-16", "globe_6-8", "globe_6-10")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[pytest.mark.slow] if n in _SLOW else [])
        for n in registry.names()
        if n.startswith(("cube", "globe", "wreath")) and n not in ("globe_3-33", "globe_8-25")
    ],
)
def test_same_base_and_orbits_as_sympys_deterministic_algorithm(name: str) -> None:
    combinatorics = pytest.importorskip("sympy.combinatorics")
    gens, base = _generators(name)
    group_ = combinatorics.PermutationGroup([combinatorics.Permutation(g.tolist()) for g in gens])
    full_base, strong = group_.schreier_sims_incremental(base=list(base))
    sizes = []
    for i, beta in enumerate(full_base):
        fixing = [g.array_form for g in strong if all(g.array_form[b] == b for b in full_base[:i])]
        orbit, todo = {beta}, [beta]
        while todo:
            x = todo.pop()
            for g in fixing:
                if g[x] not in orbit:
                    orbit.add(g[x])
                    todo.append(g[x])
        sizes.append(len(orbit))
    chain = random_schreier_sims(gens, base, seed=group._SEED)
    assert chain.base == tuple(int(b) for b, s in zip(full_base, sizes, strict=True) if s > 1)
    assert chain.orbit_sizes == tuple(s for s in sizes if s > 1)
    assert chain.order == group_.order()


@pytest.mark.parametrize("n", [4, 6, 10])
def test_even_cubes_orders_by_their_pieces(n: int) -> None:
    """An even cube in the slice-turn metric, every sticker told apart (the 10x10x10: 600 stickers,
    60 moves, the chain whose deterministic build did not end in ten minutes): the corners' 8! * 3^7
    (whole-cube turns included), 24! for each of the (n - 2) / 2 orbits of wings and each of the
    ((n - 2) / 2)^2 orbits of centres, halved once per centre orbit (its parity follows from the
    slice turns that move it: the 4x4x4's "supercube" order, 8! 3^7 24!^2 / 2)."""
    gens, base = _generators(family_puzzle(f"cube_{n}/{n}/{n}"))
    chain = random_schreier_sims(gens, base, seed=group._SEED)
    wings, centres = (n - 2) // 2, ((n - 2) // 2) ** 2
    corners = math.factorial(8) * 3**7
    assert chain.order == corners * math.factorial(24) ** (wings + centres) // 2**centres
    assert max(chain.orbit_sizes) == 24
