"""Schreier–Sims group solver: any legal state of a permutation puzzle, by sifting it through a
stabilizer chain whose coset representatives are words in the puzzle's own moves.

No learning and no heuristic: every legal state is solved, with long solutions, fast. On the
3x3x3 cube one sift gives about 111 quarter turns in about 2 ms; the best of 1000 sifts after
different premoves (the default) about 65, in about 0.2 s (2-core CPU). ``puzzlezero solve cube3
"..." --search group``.

**Which puzzles.** A *permutation puzzle* exposes its moves as fixed permutations of its state
array, whatever the state (the cubes do; sliding puzzles do not: a tile move depends on where the
blank is; Lights Out presses are not permutations; Sokoban pushes depend on the walls). It opts in
with

* ``move_permutations() -> intp[A, N]`` (required): ``child = parent[perm[a]]`` for every action
  ``a`` and every state;
* ``group_actions`` (optional, default every action): the actions that generate the group the
  states lie in (the 2x2x2 cube: ``U R F`` and their inverses, which keep corner DBL in place);
* ``state_permutation(state) -> intp[N]`` (optional): the ``p`` with ``state == g[p]`` for a goal
  state ``g`` (the cube reads it from its pieces; by default each value is looked up in a goal
  whose values are all distinct, and a goal that repeats values is searched for an arrangement of
  its identical pieces, see below);
* ``group_base`` (optional): positions to fix first, in order (the cube's: layer by layer, so that
  a solution places the pieces of the bottom layer, then the middle, then the top). Without one,
  the base follows the pieces, found from the group itself: the piece of a position ``x`` is the
  set of positions that every move sequence fixing ``x`` also fixes (the fixed points of the
  stabilizer ``G_x``, read off its Schreier generators ``t_(s y)^-1 s t_y``: a corner's three
  stickers, an edge's two, a big cube's centre alone). Orbits of bigger pieces come first, smaller
  orbits first among pieces of one size, so that a corner or an edge is fixed whole by one base
  point and single identical pieces (a big cube's centres) are placed last.

**The chain.** The moves generate a group ``G`` acting on the ``N`` positions. The random
Schreier–Sims algorithm (:mod:`puzzlezero.classic.schreier_sims`) gives a base ``b_1..b_k``
(``group_base`` first) and the basic orbits ``D_i``: the positions ``b_i`` can reach under
``G_(i-1)``, the moves that fix ``b_1..b_(i-1)``; ``|G| = prod |D_i|``
(the cube's 43,252,003,274,489,856,000). The table keeps, for every level ``i`` and every ``d`` in
``D_i``, a **word** in the moves whose element lies in ``G_(i-1)`` and carries ``b_i`` to ``d``.

**Short words (Minkwitz).** Representatives made from Schreier generators grow exponentially
long, so the table is filled and shortened as in T. Minkwitz, *An algorithm for solving the
factorization problem in permutation groups*, J. Symbolic Computation 26 (1998): random words and
products of two entries of one level are sifted through the table, and a word shorter than the
entry at the slot it reaches takes its place (its inverse likewise); what is left after dividing by
the entry fixes one more base point and is sifted on. Every word is reduced in the group of the
moves: runs of a face's powers are merged (``R R R R`` -> nothing, ``R R R`` -> ``R'``), moves of
faces that commute are gathered (``U D U'`` -> ``D``). The build is seeded, so the table is the
same on every machine; it takes some seconds and is cached in ``cache_dir("group")``.

**Solving.** A state is the element ``q = p^-1`` (where each goal sticker went). At level ``i``,
``d = q(b_i)`` picks the entry ``u``; ``q <- q u^-1`` puts ``b_i`` back and keeps ``b_1..b_(i-1)``.
The solution is ``u_1^-1 u_2^-1 ... u_k^-1``, reduced. A state whose ``d`` is in no orbit, or that
is not the identity after the last level, is not in the group: :class:`InvalidStateError`. Sift
lengths vary a lot from state to state, so :func:`solve_group` also sifts the state after each of
the shortest premoves ``m`` (every word of up to 3 quarter turns on the cube) and keeps the
shortest ``m + sift``.

**Identical pieces.** A goal may repeat labels (the competition cubes' six sticker colours, a
wreath's rings): a state then says which label is where, not which piece, so any ``q`` of the
group with ``state[q(x)] == goal[x]`` for every ``x`` solves it. ``q`` is found by a backtrack
through the chain, as in the search for an element with a property over a base (C. Sims, 1971;
Á. Seress, *Permutation Group Algorithms*, 2003, ch. 9): ``q = u_1 ... u_k`` with ``u_i`` an entry
of level ``i``, so once ``u_1..u_i`` are chosen, ``r_i = u_1 ... u_i`` already gives ``q`` on
every position the stabilizer ``G_i`` fixes. Level ``i`` tries the entries ``d`` of ``D_i`` whose
image ``r_(i-1)(d)`` holds the label the goal has at ``b_i``, shortest word first (the identity
first: a piece already in place stays), and a choice is dropped as soon as a position it fixes
holds the wrong label (fixing one sticker of a corner fixes its other two) or an orbit of ``G_i``
holds the wrong number of some label. Parity-like constraints show only near the last levels,
where the base puts single identical pieces, so the backtrack stays shallow. It is bounded in
nodes (:class:`BudgetError`); a state with no such ``q`` is refused (:class:`InvalidStateError`).
Each premove's state is searched again with a few nodes (else the first ``q`` is carried over).
With the competition's standard goals (2-core CPU, the best of 1000 sifts): the 2x2x2 cube about
13 moves in 0.1 s, the 3x3x3 72 in 0.3 s, the 4x4x4 (table built in 8 s) 267 in 0.8 s, the 6/6
wreath 10 in 0.1 s, the 1/8 globe 154 in 0.4 s; a state takes one backtrack node per level or
a few more.

**Wildcards.** A puzzle solved within ``wildcards`` differing positions is solved to its exact
goal, then the solution is cut at the first state that counts as solved.

>>> from puzzlezero import make
>>> cube = make("cube2")
>>> group_table(cube).order  # doctest: +SKIP
3674160
>>> start = cube.parse("R U F' U2 R'")
>>> r = solve_group(cube, start)  # doctest: +SKIP
>>> bool(cube.is_goal(cube.apply_moves(start, r.actions)[None])[0])  # doctest: +SKIP
True

Why one file: it is one algorithm; the chain, its words and the sift share the same tables, and
split they would reach into each other's internals.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.classic.schreier_sims import inverse, random_schreier_sims
from puzzlezero.errors import (
    BudgetError,
    InvalidStateError,
    MemoryBudgetError,
    ModelFileError,
    PuzzleError,
    TableTimeoutError,
)
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.permutation.rules import PermutationPuzzle
from puzzlezero.puzzles.words import MoveWords
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from puzzlezero.storage import build_in_process, build_once, cache_dir, load_npz, save_npz

__all__ = [
    "ARRANGEMENT_NODES",
    "GROUP_TABLE_VERSION",
    "GroupTable",
    "MoveWords",
    "ROLLOUT_WIDTHS",
    "group_table",
    "rollout_memory",
    "move_permutations",
    "piece_base",
    "solve_group",
    "solve_rollout",
    "state_permutation",
]

#: bump when the table's layout or its build changes: cached files of another version are rebuilt
GROUP_TABLE_VERSION = 1


# ---- the puzzle as a permutation group -------------------------------------------------------
def move_permutations(puzzle: Puzzle) -> np.ndarray:
    """``intp[A, N]``: the puzzle's moves as permutations of its state array (``child =
    parent[perm[a]]``). Raises :class:`PuzzleError` for a puzzle that is not a permutation puzzle."""
    fn = getattr(puzzle, "move_permutations", None)
    if fn is None:
        raise PuzzleError(
            f"the group solver needs a permutation puzzle, whose moves permute the state array the "
            f"same way whatever the state; {puzzle.name} is not one (a sliding puzzle's moves depend "
            f"on the blank, Lights Out presses toggle lights, Sokoban pushes depend on the walls): "
            f"use another --search"
        )
    perms = np.asarray(fn(), dtype=np.intp)
    n = int(np.prod(puzzle.state_shape))
    if perms.shape != (puzzle.num_actions, n) or not (np.sort(perms, axis=1) == np.arange(n)).all():
        raise PuzzleError(
            f"{puzzle.name}.move_permutations() must give one permutation of 0..{n - 1} per action "
            f"(shape ({puzzle.num_actions}, {n})), got shape {perms.shape}"
        )
    return perms


def state_permutation(puzzle: Puzzle, state: np.ndarray, *, max_nodes: int | None = None) -> np.ndarray:
    """``intp[N]``: ``p`` with ``state == g[p]`` for a goal ``g``: the puzzle's own
    ``state_permutation``, else the goal's values looked up where they are all distinct, else an
    arrangement of the goal's identical pieces found by the backtrack of
    :meth:`GroupTable.arrangement` (at most ``max_nodes`` nodes, default
    :data:`ARRANGEMENT_NODES`; the puzzle's group table is built or loaded first)."""
    own = getattr(puzzle, "state_permutation", None)
    if own is not None:
        return np.asarray(own(state), dtype=np.intp)
    goal = np.asarray(puzzle.goal()).ravel()
    flat = np.asarray(state).ravel()
    if flat.shape != goal.shape:
        raise InvalidStateError(f"the state has {flat.size} values, the goal {goal.size}")
    if np.unique(goal).size != goal.size:
        q = group_table(puzzle).arrangement(flat, goal, max_nodes)
        return inverse(q)
    order = np.argsort(goal, kind="stable")
    pos = np.searchsorted(goal[order], flat)
    pos = np.minimum(pos, goal.size - 1)
    if not (goal[order][pos] == flat).all() or np.unique(flat).size != flat.size:
        raise InvalidStateError(f"the state is not an arrangement of the goal's values: {flat.tolist()}")
    return order[pos].astype(np.intp)


def _distinct_goal(puzzle: Puzzle) -> bool:
    """The puzzle reads its own permutations, or its goal's values are all distinct."""
    if getattr(puzzle, "state_permutation", None) is not None:
        return True
    goal = np.asarray(puzzle.goal()).ravel()
    return bool(np.unique(goal).size == goal.size)


def _group_actions(puzzle: Puzzle) -> tuple[int, ...]:
    actions = tuple(int(a) for a in getattr(puzzle, "group_actions", range(puzzle.num_actions)))
    if not actions or any(not 0 <= a < puzzle.num_actions for a in actions):
        raise PuzzleError(f"{puzzle.name}.group_actions must name some of its {puzzle.num_actions} actions")
    return actions


def _images(perms: np.ndarray) -> np.ndarray:
    """The moves as maps of positions, ``img[a, x]`` = where the piece at ``x`` goes."""
    img = np.empty_like(perms)
    rows = np.arange(perms.shape[0])[:, None]
    img[rows, perms] = np.arange(perms.shape[1])
    return img


def _element(images: np.ndarray, word: Sequence[int]) -> np.ndarray:
    img = np.arange(images.shape[1])
    for a in word:
        img = images[a][img]
    return img


def piece_base(images: np.ndarray, actions: Sequence[int]) -> tuple[int, ...]:
    """The positions the moves move, ordered for the chain: orbit by orbit, orbits of bigger pieces
    first, then smaller orbits first, each orbit's positions a piece at a time (see the module
    docstring). The piece of an orbit's first position ``x`` is the set of positions fixed by all
    Schreier generators ``t_(s y)^-1 s t_y`` of its stabilizer (``t_y`` carries ``x`` to ``y``,
    ``s`` a move); every other position's piece is its transversal's image of that one."""
    gens = images[list(actions)]
    n = images.shape[1]
    ident = np.arange(n)
    seen = np.zeros(n, dtype=bool)
    orbits: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for x in np.flatnonzero((gens != ident).any(axis=0)):
        if seen[x]:
            continue
        trans: dict[int, np.ndarray] = {int(x): ident}
        order = [int(x)]
        for y in order:  # breadth first: the orbit of x and a transversal element for each point
            for g in gens:
                z = int(g[y])
                if z not in trans:
                    trans[z] = g[trans[y]]
                    order.append(z)
        orbit = np.array(order)
        seen[orbit] = True
        cosets = np.stack([trans[y] for y in order])
        where = np.full(n, -1)
        where[orbit] = np.arange(orbit.size)
        fixed = np.ones(n, dtype=bool)
        for g in gens:  # t_(g y)^-1 g t_y fixes z exactly where g t_y and t_(g y) agree on z
            fixed &= (g[cosets] == cosets[where[g[orbit]]]).all(axis=0)
        orbits.append((np.flatnonzero(fixed), orbit, cosets))
    out: list[int] = []
    taken = np.zeros(n, dtype=bool)
    for piece, orbit, cosets in sorted(orbits, key=lambda o: (-o[0].size, o[1].size, int(o[1].min()))):
        inside = np.zeros(n, dtype=bool)
        inside[orbit] = True
        for j in np.argsort(orbit, kind="stable"):
            for z in cosets[j][piece].tolist():
                if inside[z] and not taken[z]:
                    taken[z] = True
                    out.append(int(z))
    return tuple(out)


# ---- the table -------------------------------------------------------------------------------
class GroupTable:
    """A stabilizer chain of a puzzle's move group with its transversals as move words.

    Attributes:
        puzzle: the puzzle's name.
        actions: the generating actions (``group_actions``).
        base: the base points ``b_1..b_k`` (positions of the state array).
        words: per level, ``{d: word}``: a word (action ids) of an element fixing
            ``b_1..b_(i-1)`` that carries ``b_i`` to ``d``; the keys are the basic orbit ``D_i``.
        reducer: the :class:`MoveWords` of the generating moves.
        build_seconds: how long the table took to build (0 when it was loaded).
    """

    def __init__(
        self,
        puzzle: str,
        actions: tuple[int, ...],
        base: tuple[int, ...],
        words: Sequence[dict[int, tuple[int, ...]]],
        images: np.ndarray,
        reducer: MoveWords,
        build_seconds: float = 0.0,
    ) -> None:
        self.puzzle, self.actions, self.base, self.images = puzzle, actions, base, images
        self.words = tuple(words)
        self.reducer, self.build_seconds = reducer, build_seconds
        # what sifting uses: each entry's inverse word and that word's element
        self._undo = tuple(
            {d: (inv := reducer.inverse(w), self.element(inv)) for d, w in level.items()}
            for level in self.words
        )
        self._premoves: list[tuple[tuple[int, ...], np.ndarray]] | None = None
        self._search: _Arrangements | None = None
        self._greedy: tuple[np.ndarray, ...] | None = None

    @property
    def order(self) -> int:
        """The order of the group: the product of the basic orbits' sizes (exact, a Python int)."""
        out = 1
        for level in self.words:
            out *= len(level)
        return out

    @property
    def orbit_sizes(self) -> tuple[int, ...]:
        return tuple(len(level) for level in self.words)

    def word_lengths(self) -> tuple[tuple[float, int], ...]:
        """``(mean, max)`` length of each level's words (the identity included)."""
        return tuple(
            (round(float(np.mean([len(w) for w in lv.values()])), 1), max(len(w) for w in lv.values()))
            for lv in self.words
        )

    def element(self, word: Sequence[int]) -> np.ndarray:
        """``intp[N]``: where the moves of ``word``, in turn, carry the piece at each position."""
        return _element(self.images, word)

    def sift(self, p: np.ndarray) -> tuple[int, ...]:
        """The word that solves the state ``g[p]``: sift ``q = p^-1`` through the chain (see the
        module docstring). Raises :class:`InvalidStateError` if ``p`` is not in the group."""
        word = self._sift(inverse(np.asarray(p, dtype=np.intp)))
        if word is None:
            raise InvalidStateError(
                f"this {self.puzzle} state cannot be reached by the moves from a solved one: its "
                f"permutation is not in the group they generate (order {self.order:,})"
            )
        return self.reducer.reduce(word)

    def _sift(self, q: np.ndarray) -> list[int] | None:
        """``q[x]``: where the piece of goal position ``x`` is now; ``None``: not in the group."""
        out: list[int] = []
        for beta, level in zip(self.base, self._undo, strict=True):
            hit = level.get(int(q[beta]))
            if hit is None:
                return None
            out.extend(hit[0])
            q = hit[1][q]
        return out if (q == np.arange(q.size)).all() else None

    def solve(
        self, p: np.ndarray, tries: int = 1, deadline: float | None = None
    ) -> tuple[tuple[int, ...], int]:
        """``(word, sifts)``: the shortest of the words ``m + sift(state after m)`` over the first
        ``tries`` premoves ``m`` (the reduced words of the moves with distinct elements, shortest
        first: the empty word, then each move, ...), stopping early at ``deadline`` (a reading of
        :func:`puzzlezero.search.clock.now`; the plain sift is always done). Sifts are long and
        their lengths vary a lot from state to state, so the best of many is much shorter than one
        (cube3: about 111 moves for one sift, 65 for the best of 1000)."""
        best = self.sift(p)  # raises for a state outside the group
        q = inverse(np.asarray(p, dtype=np.intp))
        done = 1
        for m, img in self._premove_words(tries)[1:]:
            if deadline is not None and clock.passed(deadline):
                break
            word = self._sift(img[q])
            done += 1
            if word is not None:
                cand = self.reducer.join(m, self.reducer.reduce(word))
                if len(cand) < len(best):
                    best = cand
        return best, done

    @property
    def arrangements(self) -> _Arrangements:
        """The backtrack over the chain for goals with identical pieces (made on first use)."""
        if self._search is None:
            self._search = _Arrangements(self)
        return self._search

    def arrangement(self, state: np.ndarray, goal: np.ndarray, max_nodes: int | None = None) -> np.ndarray:
        """``q`` (``intp[N]``, an element of the group) with ``state[q[x]] == goal[x]`` for every
        position ``x``: where each of the goal's pieces is now, for a goal that may repeat labels
        (module docstring, *Identical pieces*). Raises :class:`InvalidStateError` when the group
        has no such element and :class:`BudgetError` after ``max_nodes`` (default
        :data:`ARRANGEMENT_NODES`) nodes without one."""
        budget = ARRANGEMENT_NODES if max_nodes is None else max(1, int(max_nodes))
        state, goal = np.asarray(state).ravel(), np.asarray(goal).ravel()
        q, nodes = self.arrangements.find(state, goal, budget)
        if q is None and nodes > budget:
            raise BudgetError(
                f"no arrangement of the goal's identical pieces found for this {self.puzzle} state within "
                f"{budget:,} nodes of the backtrack over the group's stabilizer chain; raise the node limit"
            )
        if q is None:
            raise InvalidStateError(
                f"no arrangement of the goal's identical pieces reaches this {self.puzzle} state: no "
                f"element of the group the moves generate (order {self.order:,}) carries the goal's "
                f"labels onto it"
            )
        return q

    def solve_labels(
        self,
        state: np.ndarray,
        goal: np.ndarray,
        tries: int = 1,
        deadline: float | None = None,
        max_nodes: int | None = None,
        is_goal: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> tuple[tuple[int, ...], int]:
        """:meth:`solve` for a goal that may repeat labels: ``(word, sifts)``, the shortest of
        ``m + sift(q_m)`` over the first ``tries`` premoves ``m``, where ``q_m`` is an arrangement
        (:meth:`arrangement`) of the state after ``m``: searched again with a few nodes, else the
        first one carried over (``img(m) q``). ``is_goal`` (``bool[B]`` of states ``[B, N]``, a
        puzzle's with wildcards) cuts each word at the first state it accepts."""
        state, goal = np.asarray(state).ravel(), np.asarray(goal).ravel()
        q0 = self.arrangement(state, goal, max_nodes)
        best = self._cut(state, self.reducer.reduce(self._checked_sift(q0)), is_goal)
        done = 1
        search = self.arrangements
        quick = 4 * len(self.base) + 16
        for m, img in self._premove_words(tries)[1:]:
            if deadline is not None and clock.passed(deadline):
                break
            moved = state[inverse(img)]  # the state after the premove m
            q, _ = search.find(moved, goal, quick)
            word = self._sift(img[q0] if q is None else q)
            done += 1
            if word is not None:
                cand = self._cut(state, self.reducer.join(m, self.reducer.reduce(word)), is_goal)
                if len(cand) < len(best):
                    best = cand
        return best, done

    def greedy_lengths(self, states: np.ndarray, goal: np.ndarray) -> np.ndarray:
        """``int64[B]``: for each of ``states[B, N]`` (labels, as the goal's), the length of the
        greedy sift's word: the backtrack of :meth:`arrangement` without its backtracking, each
        level taking its shortest entry that puts the goal's labels on the positions it fixes;
        :data:`~puzzlezero.search.rollout.NO_ANSWER` where that first descent fails (a state that needs the backtrack, or one
        outside the group). The lengths are of the entries' words as stored, before the reduction
        at their joins, so the word of :meth:`greedy_word` may be shorter. A numba kernel over the
        batch (:mod:`._group_kernels`): the rollout's base (:func:`solve_rollout`)."""
        if self._greedy is None:
            s = self.arrangements
            lengths = [len(self.words[i][int(d)]) for i in range(len(s.points)) for d in s.points[i]]
            self._greedy = (
                np.cumsum([0] + [len(x) for x in s.points]).astype(np.int64),
                np.concatenate(s.elements).astype(np.int64),
                np.asarray(lengths, dtype=np.int64),
                np.cumsum([0] + [len(f) for f in s.fresh]).astype(np.int64),
                np.concatenate(s.fresh).astype(np.int64),
            )
        from puzzlezero.classic._group_kernels import greedy_sift_lengths  # numba: on first use

        states = np.ascontiguousarray(np.asarray(states).reshape(len(states), -1))
        goal = np.ascontiguousarray(np.asarray(goal, dtype=states.dtype).ravel())
        return greedy_sift_lengths(states, goal, *self._greedy)

    def greedy_word(self, state: np.ndarray, goal: np.ndarray) -> tuple[int, ...]:
        """The reduced word of the greedy sift of ``state`` (:meth:`greedy_lengths`), or of the
        backtrack's first arrangement where the greedy descent fails."""
        state, goal = np.asarray(state).ravel(), np.asarray(goal).ravel()
        return self.reducer.reduce(self._checked_sift(self.arrangement(state, goal)))

    def _checked_sift(self, q: np.ndarray) -> list[int]:
        word = self._sift(q)
        if word is None:  # pragma: no cover - an arrangement is a product of the table's entries
            raise InvalidStateError(f"this {self.puzzle} state is not in the group the moves generate")
        return word

    def _cut(
        self, state: np.ndarray, word: tuple[int, ...], is_goal: Callable[[np.ndarray], np.ndarray] | None
    ) -> tuple[int, ...]:
        """``word`` up to the first state along it that ``is_goal`` accepts (all of it without one)."""
        if is_goal is None or not word:
            return word
        perms = _invert_rows(self.images[list(word)])
        path = np.empty((len(word) + 1, state.size), dtype=state.dtype)
        path[0] = state
        for t, perm in enumerate(perms):
            path[t + 1] = path[t][perm]
        hit = np.flatnonzero(is_goal(path))
        return word[: int(hit[0])] if hit.size else word

    def _premove_words(self, count: int) -> list[tuple[tuple[int, ...], np.ndarray]]:
        """The first ``count`` reduced words with distinct elements, shortest first, with their
        elements (made once, then extended as needed)."""
        if self._premoves is None:
            ident = np.arange(self.images.shape[1])
            self._premoves = [((), ident)]
            self._seen = {ident.tobytes()}
            self._frontier: list[tuple[int, ...]] = [()]
        while len(self._premoves) < count and self._frontier:
            nxt = []
            for w in self._frontier:
                for a in self.actions:
                    cand = self.reducer.reduce((*w, a))
                    img = self.element(cand)
                    if len(cand) == len(w) + 1 and img.tobytes() not in self._seen:
                        self._seen.add(img.tobytes())
                        self._premoves.append((cand, img))
                        nxt.append(cand)
            self._frontier = nxt
        return self._premoves[:count]


class _Arrangements:
    """The backtrack that finds an element ``q`` of the group with ``state[q[x]] == goal[x]``
    (module docstring, *Identical pieces*), over a :class:`GroupTable`'s chain.

    Per level ``i``: the entries' points ``D_i`` and elements, shortest word first; the positions
    that become fixed once ``u_i`` is chosen (``Fix(G_i)`` less ``Fix(G_(i-1))``, ``G_i`` fixing
    ``b_1..b_i``), and, where the orbits of ``G_i`` split more than by those, the orbits to
    count labels in."""

    def __init__(self, table: GroupTable) -> None:
        n = table.images.shape[1]
        ident = np.arange(n)
        self.base = np.array(table.base, dtype=np.intp)
        self.points: list[np.ndarray] = []
        self.elements: list[np.ndarray] = []
        moved: list[np.ndarray] = []
        for level in table.words:
            pts = sorted(level, key=lambda d: (len(level[d]), d))
            elems = np.stack([table.element(level[d]) for d in pts]) if pts else np.empty((0, n), np.intp)
            self.points.append(np.array(pts, dtype=np.intp))
            self.elements.append(elems)
            moved.append((elems != ident).any(axis=0))
        k = len(table.words)
        # fixed[i]: Fix(G_i), the positions every entry of levels i.. (which generate G_i) fixes
        fixed = [np.ones(n, dtype=bool) for _ in range(k + 1)]
        orbit_of = [ident.copy() for _ in range(k + 1)]
        acc = np.zeros(n, dtype=bool)
        for i in reversed(range(k)):
            acc |= moved[i]
            fixed[i] = ~acc
            orbit_of[i] = _merge_orbits(orbit_of[i + 1], self.elements[i])
        self.fresh = [np.flatnonzero(fixed[i + 1] & ~fixed[i]) for i in range(k)]
        # label counts per orbit of G_(i+1), where that partition is finer than G_i's on its points
        self.count_at: list[tuple[np.ndarray, np.ndarray] | None] = []
        for i in range(k):
            rest = np.flatnonzero(~fixed[i + 1])
            finer = np.unique(orbit_of[i + 1][rest]).size > np.unique(orbit_of[i][rest]).size
            if rest.size and finer:
                _, ids = np.unique(orbit_of[i + 1][rest], return_inverse=True)
                self.count_at.append((rest, ids.astype(np.int64)))
            else:
                self.count_at.append(None)

    def find(self, state: np.ndarray, goal: np.ndarray, budget: int) -> tuple[np.ndarray | None, int]:
        """``(q, nodes)``: the first arrangement, depth first, shortest entries first; ``q`` is
        ``None`` when there is none (``nodes <= budget``) or the budget ran out (``nodes > budget``)."""
        n = state.size
        k = len(self.points)
        labels = int(max(int(state.max(initial=0)), int(goal.max(initial=0)))) + 1
        want = [
            None
            if c is None
            else np.bincount(c[1] * labels + goal[c[0]], minlength=(int(c[1].max()) + 1) * labels)
            for c in self.count_at
        ]
        ident = np.arange(n)
        if k == 0:
            return (ident, 0) if (state == goal).all() else (None, 0)
        chosen = [ident]  # r_0 .. r_i
        todo = [self._candidates(0, ident, state, goal)]
        nodes = 0
        while todo:
            i = len(todo) - 1
            if not todo[i]:
                todo.pop()
                chosen.pop()
                continue
            c = todo[i].pop()
            nodes += 1
            if nodes > budget:
                return None, nodes
            r = chosen[i][self.elements[i][c]]
            fresh = self.fresh[i]
            if not (state[r[fresh]] == goal[fresh]).all():
                continue
            counts = self.count_at[i]
            if counts is not None:
                rest, ids = counts
                have = np.bincount(ids * labels + state[r[rest]], minlength=want[i].size)  # type: ignore[union-attr]
                if not (have == want[i]).all():
                    continue
            if i + 1 == k:
                if (state[r] == goal).all():
                    return r, nodes
                continue  # pragma: no cover - every position is fixed after the last level
            chosen.append(r)
            todo.append(self._candidates(i + 1, r, state, goal))
        return None, nodes

    def _candidates(self, i: int, r: np.ndarray, state: np.ndarray, goal: np.ndarray) -> list[int]:
        """The entries of level ``i`` whose point ``r`` carries onto the goal's label at ``b_i``,
        last to try first (so that ``pop`` takes the shortest word)."""
        ok = np.flatnonzero(state[r[self.points[i]]] == goal[self.base[i]])
        return ok[::-1].tolist()


def _merge_orbits(orbit_of: np.ndarray, elements: np.ndarray) -> np.ndarray:
    """The orbit labels (each position's least orbit mate; ``orbit_of`` gives them before) after
    joining each ``x`` with ``u(x)`` for every element ``u`` given: union by the least label,
    pointers followed to their ends, until no pair is left apart."""
    lab = orbit_of.copy()
    if elements.size == 0:
        return lab
    xs = np.tile(np.arange(lab.size), elements.shape[0])
    ys = elements.ravel()
    while True:
        a, b = lab[xs], lab[ys]
        apart = a != b
        if not apart.any():
            return lab
        roots = lab.copy()
        np.minimum.at(roots, np.maximum(a[apart], b[apart]), np.minimum(a[apart], b[apart]))
        while True:
            nxt = roots[roots]
            if (nxt == roots).all():
                break
            roots = nxt
        lab = roots[lab]


def _invert_rows(images: np.ndarray) -> np.ndarray:
    out = np.empty_like(images)
    out[np.arange(images.shape[0])[:, None], images] = np.arange(images.shape[1])
    return out


class _Builder:
    """Minkwitz's algorithm over a known chain: fills ``levels[i][d] = (word, inverse word, img,
    inverse img)``."""

    def __init__(self, images: np.ndarray, reducer: MoveWords, base: Sequence[int], limit: int) -> None:
        self.images, self.red, self.base, self.limit = images, reducer, tuple(base), limit
        ident = np.arange(images.shape[1])
        self.levels: list[dict[int, _Entry]] = [{b: ((), (), ident, ident)} for b in self.base]

    def insert(
        self, word: tuple[int, ...], img: np.ndarray, level: int = 0, limit: float | None = None
    ) -> None:
        """Sift ``word`` (element ``img``) from ``level``, keeping every shorter word it meets, as
        long as the word is at most ``limit`` moves (the table's length limit unless given)."""
        limit = self.limit if limit is None else limit
        while level < len(self.base) and word and len(word) <= limit:
            d = int(img[self.base[level]])
            slot = self.levels[level]
            old = slot.get(d)
            if old is None or len(word) < len(old[0]):
                inv, inv_word = inverse(img), self.red.inverse(word)
                slot[d] = (word, inv_word, img, inv)
                d_inv = int(inv[self.base[level]])  # the inverse, at its own slot, if shorter there
                there = slot.get(d_inv)
                if there is None or len(inv_word) < len(there[0]):
                    slot[d_inv] = (inv_word, word, inv, img)
                if old is None:
                    return
                word, img = old[0], old[2]  # sift on what the old entry adds
            entry = slot[d]
            word = self.red.join(word, entry[1])
            img = entry[3][img]
            level += 1

    def improve(self) -> None:
        """Sift the product of every two entries of each level from that level on."""
        for i in range(len(self.levels)):
            self._products(i)

    def _products(self, i: int, limit: float | None = None) -> None:
        """Sift the product of every two entries of level ``i`` from that level on, words of at
        most ``limit`` moves (the table's length limit unless given)."""
        entries = [e for e in self.levels[i].values() if e[0]]
        for u in entries:
            for v in entries:
                self.insert(self.red.join(u[0], v[0]), v[2][u[2]], i, limit)

    def close(self, sizes: Sequence[int]) -> None:
        """Fill the empty slots a round could not, whatever their words' length: at level ``i``,
        an entry ``u_e`` (``b_i`` to ``e``) followed by an entry ``x`` of level ``i`` or deeper
        (it fixes ``b_1..b_(i-1)``) carries ``b_i`` to ``x(e)``; where that slot is empty, the product
        fills it (and its inverse the inverse's slot, where empty), breadth first until no
        product reaches an empty slot. Later rounds replace such words by shorter ones. Without
        it, a big puzzle's last slots (the 10x10x10's last centre stickers) wait for the length
        limit to grow round after round.

        Those products stay in the subgroup the entries of level ``i`` and deeper generate; a slot
        outside its orbit (the globes' last ones: an odd permutation of the stickers of a ring and
        its mirror ring that fixes all of them but two) is reached from the levels above, nearest
        first: the product ``uv`` of two entries of level ``j < i``, less the entry of the slot it
        reaches, fixes ``b_j`` too (a Schreier generator of the next stabilizer), and sifts on
        with words of up to :data:`_REACH` times the length limit until it fills an empty slot or
        ends as the identity (a level's products once a pass)."""
        sifted: set[int] = set()  # the levels whose products this pass has sifted
        for i, slot in enumerate(self.levels):
            self._spread(i, sizes[i])
            j = i - 1
            while len(slot) < sizes[i] and j >= 0:
                if j not in sifted:
                    sifted.add(j)
                    self._products(j, limit=_REACH * self.limit)
                    self._spread(i, sizes[i])
                j -= 1
            if j < i - 1:
                _log(f"  level {i}: {len(slot)}/{sizes[i]} entries, with products of levels {j + 1}..{i - 1}")

    def fill_last(self, words: Iterable[tuple[int, ...]], total: int) -> None:
        """Sift ``words`` with no bound on their length until the table holds ``total`` entries.

        For the few slots that neither a round nor :meth:`close` reaches: the 100/100 wreath's
        group is every permutation of its 198 positions, and its chain's last level holds the
        swap of the last two; a random word sifted through the full levels above ends there as
        that swap half the time, but with the inverses of 196 entries joined to it, far over any
        length limit. Called with only a few slots empty, so that only those few long words are
        kept: a long word replaces no shorter entry on its way, and it stops at the first empty
        slot it fills. Later rounds replace such a word by a shorter one where they find it."""
        for word in words:
            if self.filled() >= total:
                return
            self.insert(word, _element(self.images, word), limit=math.inf)

    def _spread(self, i: int, size: int) -> None:
        """Fill the empty slots of level ``i`` (of ``size`` slots) reached by an entry of that level
        followed by an entry of that level or deeper (:meth:`close`)."""
        slot = self.levels[i]
        if len(slot) == size:
            return
        movers = [e for level in self.levels[i:] for e in level.values() if e[0]]
        todo = list(slot)
        while todo:
            e = slot[todo.pop()]
            for x in movers:
                d = int(x[2][e[2][self.base[i]]])
                if d in slot:
                    continue
                word, img = self.red.join(e[0], x[0]), x[2][e[2]]
                inv, inv_word = inverse(img), self.red.inverse(word)
                slot[d] = (word, inv_word, img, inv)
                todo.append(d)
                d_inv = int(inv[self.base[i]])
                if d_inv not in slot:
                    slot[d_inv] = (inv_word, word, inv, img)
                    todo.append(d_inv)

    def filled(self) -> int:
        return sum(len(s) for s in self.levels)


#: a table entry while building: word, inverse word, element, inverse element
_Entry = tuple[tuple[int, ...], tuple[int, ...], np.ndarray, np.ndarray]


def _chain(images: np.ndarray, actions: Sequence[int], base: Sequence[int]) -> tuple[list[int], list[int]]:
    """The base (``base`` first, extended as needed) and each basic orbit's size, by the random
    Schreier–Sims algorithm (:mod:`puzzlezero.classic.schreier_sims`)."""
    chain = random_schreier_sims(images[list(actions)], base, seed=_SEED)
    return list(chain.base), list(chain.orbit_sizes)


#: the Minkwitz schedule: random words of 1..``_WORD`` moves, ``_ROUNDS`` of them between two
#: improvements, ``_IMPROVE`` improvements after the table is full, word length limit ``_LIMIT``
#: (raised by a quarter whenever a round leaves the table as it was and not yet full)
_ROUNDS, _WORD, _IMPROVE, _LIMIT, _SEED = 2000, 16, 3, 48, 20260514
#: the words of the pass that reaches a level's last slots from the levels above
#: (:meth:`_Builder.close`): at most this many times the length limit. The globes' last entries
#: take 2.1-3.4 times theirs (440 moves); unbounded, the pass after an early stall (the 100/100
#: wreath's at round 6, limit 60) grows the build to gigabytes of words within minutes
_REACH = 8
#: at most this many empty slots after :meth:`_Builder.close` are filled by up to ``_LAST_WORDS``
#: random words sifted with no bound on their length (:meth:`_Builder.fill_last`)
_LAST, _LAST_WORDS = 8, 256
#: seconds between two saves of a build's progress (after a round): a build stopped at a solve's
#: deadline or killed goes on from its last save the next time, to the table it would have made
PROGRESS_SECONDS = 30.0


def _build(
    name: str,
    images: np.ndarray,
    actions: tuple[int, ...],
    reducer: MoveWords,
    first: tuple[int, ...],
    progress: Path | None = None,
    every: float = PROGRESS_SECONDS,
) -> _Builder:
    """Minkwitz's algorithm over the chain, round after round; with a ``progress`` file, the state
    after a round is saved there every ``every`` seconds, and a build that finds one (of the same
    moves and base) goes on from it: the random words, the limit and the table's entries (in
    their order) as they were, so the table is the one an unbroken build makes."""
    base, sizes = _chain(images, actions, first)
    b = _Builder(images, reducer, base, _LIMIT)
    total = sum(sizes)
    rng = np.random.default_rng(_SEED)
    resumed = None if progress is None else _resume(progress, b, rng)
    if resumed is None:
        for a in actions:
            b.insert((a,), images[a])
        improved, rounds = 0, 0
    else:
        improved, rounds = resumed
        _log(f"  going on after round {rounds} ({b.filled()}/{total} entries), saved in {progress}")
    saved = time.monotonic()
    while improved < _IMPROVE:
        before = b.filled()
        for _ in range(_ROUNDS):
            word = _random_word(rng, actions, reducer)
            b.insert(word, _element(images, word))
        b.improve()
        rounds += 1
        full = b.filled() == total
        improved += full
        if not full and b.filled() == before:
            b.limit = b.limit * 5 // 4
            b.close(sizes)
            if total - b.filled() <= _LAST:
                b.fill_last((_random_word(rng, actions, reducer) for _ in range(_LAST_WORDS)), total)
                if b.filled() == total:
                    _log(f"  the last slots filled by {_LAST_WORDS} random words at most, unbounded")
        _log(f"  round {rounds}: {b.filled()}/{total} entries, longest word {_longest(b)}")
        if progress is not None and improved < _IMPROVE and time.monotonic() - saved >= every:
            _save_progress(progress, b, rng, improved, rounds)
            saved = time.monotonic()
    if [len(s) for s in b.levels] != sizes:  # pragma: no cover - a full table has these sizes
        raise RuntimeError(f"group table of {name}: orbits {[len(s) for s in b.levels]} != {sizes}")
    return b


def _random_word(rng: np.random.Generator, actions: Sequence[int], reducer: MoveWords) -> tuple[int, ...]:
    """A random word of 1 to ``_WORD`` moves, reduced."""
    return reducer.reduce(rng.choice(actions, size=int(rng.integers(1, _WORD + 1))).tolist())


def _save_progress(path: Path, b: _Builder, rng: np.random.Generator, improved: int, rounds: int) -> None:
    """Save a build's state after a round, atomically: each level's entries in their order (word
    and inverse word; the elements follow from the words), the length limit, the rounds and the
    random generator's state."""
    entries = [(i, d, e) for i, slot in enumerate(b.levels) for d, e in slot.items()]
    arrays: dict[str, np.ndarray] = {
        "base": np.array(b.base, dtype=np.int64),
        "counts": np.array([b.limit, improved, rounds], dtype=np.int64),
        "rng": np.frombuffer(json.dumps(rng.bit_generator.state).encode(), dtype=np.uint8),
        "level": np.array([i for i, _, _ in entries], dtype=np.int64),
        "point": np.array([d for _, d, _ in entries], dtype=np.int64),
    }
    arrays["words_offsets"], arrays["words_moves"] = _packed([e[0] for _, _, e in entries])
    arrays["inverses_offsets"], arrays["inverses_moves"] = _packed([e[1] for _, _, e in entries])
    save_npz(path, _PROGRESS, **arrays)


def _resume(path: Path, b: _Builder, rng: np.random.Generator) -> tuple[int, int] | None:
    """Put the state :func:`_save_progress` saved at ``path`` into ``b`` and ``rng``: ``(improved,
    rounds)``, or ``None`` (``b`` and ``rng`` untouched) where there is none or it is not this
    build's (another base, a damaged file: a line on stderr, and the build starts over)."""
    if not path.is_file():
        return None
    try:
        arrays = load_npz(path, _PROGRESS)
        if tuple(arrays["base"].tolist()) != b.base:
            raise ValueError("it is another build's (another base)")
        levels: list[dict[int, _Entry]] = [{} for _ in b.base]
        words, inv_words = (
            _unpacked(arrays[f"{p}_offsets"], arrays[f"{p}_moves"], b.red.actions)
            for p in ("words", "inverses")
        )
        rows = zip(arrays["level"].tolist(), arrays["point"].tolist(), words, inv_words, strict=True)
        for i, d, word, inv_word in rows:
            img = _placed(b.images, b.base, i, d, word)
            inv = inverse(img)
            if not np.array_equal(_element(b.images, inv_word), inv):
                raise ValueError(f"the inverse word at level {i}, point {d} is not the inverse")
            levels[i][d] = (word, inv_word, img, inv)
        limit, improved, rounds = (int(x) for x in arrays["counts"].tolist())
        state = json.loads(arrays["rng"].tobytes().decode())
        np.random.default_rng().bit_generator.state = state  # a state this generator takes
    except (ModelFileError, KeyError, IndexError, TypeError, ValueError) as exc:
        _log(f"the saved progress {path} is not usable, so the build starts over: {exc}")
        return None
    b.levels, b.limit = levels, limit
    rng.bit_generator.state = state
    return improved, rounds


def progress_path(table: Path) -> Path:
    """Where the build of the table saved at ``table`` keeps its progress (:func:`_build`)."""
    return table.with_name(table.name + ".progress")


#: what marks a file of :func:`_save_progress`
_PROGRESS = {"kind": "group table build", "version": GROUP_TABLE_VERSION}


def _longest(b: _Builder) -> int:
    return max(len(e[0]) for s in b.levels for e in s.values())


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


_TABLES: dict[tuple[str, str], GroupTable] = {}
#: the table of a puzzle of at most this many positions is built in place, also under a deadline:
#: in about a second at most (the 2x2x2's 24 stickers: 0.3 s; the 12/12 wreath's 22 positions:
#: 1.1 s), so a solve overruns its limit by a second at most, where a process of its own first has
#: to start (:data:`puzzlezero.classic.optimal.IN_PLACE_ENTRIES`)
IN_PLACE_POSITIONS = 24
#: the tables shipped with the package (the registered puzzles', and the competition's cubes of 8 to
#: 10 layers as ``puzzlezero definition family`` writes them: seconds to minutes to build), named as
#: in the cache and found by their key (the moves'), whatever the name of the puzzle that has those
#: moves; read first, checked word by word like a cached one
SHIPPED_TABLES = Path(__file__).resolve().parent.parent / "data" / "group"
#: the piece order of each set of moves (:func:`piece_base`), by the moves' digest
_BASES: dict[str, tuple[int, ...]] = {}


def group_table(puzzle: Puzzle, *, deadline: float | None = None) -> GroupTable:
    """The puzzle's :class:`GroupTable`: from memory, else from ``cache_dir("group")``, else built
    (a line per round on stderr; seconds) and saved atomically, under the table's lock (a second
    process waits and loads it; where builds are forbidden, :class:`MissingTableError` names
    ``puzzlezero pdb build NAME --kind group``). A cached file is checked entry by
    entry and rebuilt if it is off. Raises :class:`PuzzleError` for a puzzle that is not a
    permutation puzzle.

    With a ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`) a build runs in a
    process of its own, stopped at the deadline: the Schreier-Sims chain of a large puzzle (the
    10x10x10's 600 stickers) takes far longer than any solve's time limit, and cannot be
    interrupted where it runs. A build the deadline stops raises :class:`TableTimeoutError`, which
    names the command that builds the table without a limit; what it had built by its last save of
    progress (every :data:`PROGRESS_SECONDS`) is where the next build goes on. A puzzle of at most
    :data:`IN_PLACE_POSITIONS` positions builds its table in place, in about a second at most."""
    perms = move_permutations(puzzle)
    actions = _group_actions(puzzle)
    costs = np.asarray(puzzle.action_costs, dtype=np.float64)
    images = _images(perms)
    # the moves themselves, not the name, key the table: two definitions that share a name but not
    # their moves never share one (the goal does not enter: the group is the moves')
    h = hashlib.sha256(np.ascontiguousarray(perms, dtype=np.int64).tobytes())
    first = tuple(int(b) for b in getattr(puzzle, "group_base", ()))
    if not first:
        moves = h.copy()
        moves.update(repr(actions).encode())
        digest = moves.hexdigest()
        if digest not in _BASES:
            _BASES[digest] = piece_base(images, actions)
        first = _BASES[digest]
    h.update(repr((actions, first, costs.tolist())).encode())
    key = h.hexdigest()[:16]
    if (puzzle.name, key) in _TABLES:
        return _TABLES[(puzzle.name, key)]
    reducer = MoveWords(images, actions, costs)
    path = cache_dir("group") / f"{puzzle.name}-{key}.npz"
    meta: dict[str, Any] = {"kind": "group table", "version": GROUP_TABLE_VERSION, "key": key}

    def load() -> GroupTable:
        shipped = SHIPPED_TABLES / path.name
        if not shipped.is_file():  # the same moves under another name: another goal, a user's file
            shipped = next(iter(sorted(SHIPPED_TABLES.glob(f"*-{key}.npz"))), shipped)
        if shipped.is_file():
            try:
                return _from_arrays(puzzle.name, actions, images, reducer, load_npz(shipped, meta))
            except ModelFileError as exc:  # a damaged install: the cache, else a build, as without it
                _log(f"the shipped group table of {puzzle.name} is not usable, so it is not used: {exc}")
        return _from_arrays(puzzle.name, actions, images, reducer, load_npz(path, meta))

    command = f"puzzlezero pdb build {puzzle.name} --kind group"
    if getattr(puzzle, "from_file", False):  # not a registered name: the file the user has
        command = f"puzzlezero pdb build FILE --kind group (FILE: the definition file of {puzzle.name})"

    def build_and_save() -> GroupTable:
        job = (puzzle.name, images, actions, costs, first, str(path), meta, PROGRESS_SECONDS)
        if deadline is None or perms.shape[1] <= IN_PLACE_POSITIONS:
            return _build_and_save(*job)
        build_in_process(
            _build_and_save,
            job,
            seconds=clock.seconds_left(deadline),
            key=str(path),
            what=f"the group table of {puzzle.name}",
            command=command,
        )
        return load()

    table = build_once(path, load, build_and_save, what=f"the group table of {puzzle.name}", command=command)
    _TABLES[(puzzle.name, key)] = table
    return table


def _build_and_save(
    name: str,
    images: np.ndarray,
    actions: tuple[int, ...],
    costs: np.ndarray,
    first: tuple[int, ...],
    path: str,
    meta: dict[str, Any],
    every: float = PROGRESS_SECONDS,
) -> GroupTable:
    """Build a group table (:func:`_build`) and save it atomically at ``path``, its progress kept
    beside it every ``every`` seconds (:func:`progress_path`) until it is done."""
    _log(
        f"building the group table of {name} (Schreier-Sims chain, words by Minkwitz's "
        f"algorithm; once, cached in {Path(path).parent})"
    )
    reducer = MoveWords(images, actions, costs)
    progress = progress_path(Path(path))
    t0 = time.perf_counter()
    built = _build(name, images, actions, reducer, first, progress, every)
    seconds = time.perf_counter() - t0
    words = [{d: e[0] for d, e in sorted(s.items())} for s in built.levels]
    table = GroupTable(name, actions, built.base, words, images, reducer, seconds)
    save_npz(Path(path), {**meta, "build_seconds": round(seconds, 2)}, **_to_arrays(table))
    progress.unlink(missing_ok=True)
    _log(f"built the group table of {name} in {seconds:.1f} s (order {table.order:,}) -> {path}")
    return table


def _to_arrays(table: GroupTable) -> dict[str, np.ndarray]:
    rows = [(i, d, w) for i, lv in enumerate(table.words) for d, w in lv.items()]
    offsets, moves = _packed([w for _, _, w in rows])
    return {
        "base": np.array(table.base, dtype=np.int64),
        "level": _smallest(np.array([i for i, _, _ in rows], dtype=np.int64)),
        "point": _smallest(np.array([d for _, d, _ in rows], dtype=np.int64)),
        "offsets": offsets,
        "moves": moves,
    }


def _from_arrays(
    name: str, actions: tuple[int, ...], images: np.ndarray, reducer: MoveWords, arrays: dict
) -> GroupTable:
    """The table saved by :func:`_to_arrays`, every word checked (its element fixes the earlier
    base points and carries its own to its slot); :class:`ModelFileError` if one is off."""
    try:
        base = tuple(int(b) for b in arrays["base"])
        words: list[dict[int, tuple[int, ...]]] = [{} for _ in base]
        unpacked = _unpacked(arrays["offsets"], arrays["moves"], actions)
        for i, d, word in zip(arrays["level"].tolist(), arrays["point"].tolist(), unpacked, strict=True):
            _placed(images, base, i, d, word)
            words[i][d] = word
    except (KeyError, IndexError, ValueError) as exc:
        raise ModelFileError(f"group table of {name}: malformed ({exc})") from None
    return GroupTable(name, actions, base, words, images, reducer)


def _packed(words: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Words saved as two arrays: where each begins (and, last, where the last ends) and their
    moves one after another (:func:`_unpacked` reads them), each in the smallest unsigned type
    that holds it (a move one byte: the 100/100 wreath's 2.2 million moves take 2.2 MB, not 18)."""
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    moves = np.array([a for w in words for a in w], dtype=np.int64)
    return _smallest(offsets), _smallest(moves)


def _smallest(values: np.ndarray) -> np.ndarray:
    """Non-negative integers in the smallest unsigned type that holds them all."""
    return values.astype(np.min_scalar_type(int(values.max(initial=0))))


def _unpacked(offsets: np.ndarray, moves: np.ndarray, actions: Sequence[int]) -> list[tuple[int, ...]]:
    """The words :func:`_packed` saved; :class:`ValueError` where one has a move outside ``actions``."""
    off, flat = offsets.tolist(), moves.tolist()
    if not set(flat) <= set(actions):
        raise ValueError(f"a word has moves outside {tuple(actions)}")
    return [tuple(flat[off[k] : off[k + 1]]) for k in range(len(off) - 1)]


def _placed(
    images: np.ndarray, base: Sequence[int], level: int, point: int, word: tuple[int, ...]
) -> np.ndarray:
    """The element of a table entry's ``word``, checked to fix the base points before ``level`` and
    to carry that level's to ``point``; :class:`ValueError` where it does not."""
    img = _element(images, word)
    if int(img[base[level]]) != point or any(int(img[b]) != b for b in base[:level]):
        raise ValueError(f"the word at level {level}, point {point} does not go there")
    return img


#: sifts :func:`solve_group` tries by default, one after each of the shortest premoves (cube3: all
#: 1,201 premoves of up to 3 quarter turns, 0.25 s; the mean solution of random cubes drops from
#: about 111 moves for one sift to about 65)
TRIES = 1000
#: the most sifts one solve makes, whatever its node limit (each premove word is kept in memory)
MAX_TRIES = 20_000
#: seconds of sifts a solve gets after building its table, where the build used up its time: the
#: first answer is then about as short as the next ones', not a single sift's
AFTER_BUILD_SECONDS = 1.0

#: nodes the backtrack for an arrangement of a goal's identical pieces may take before it gives up
#: (:meth:`GroupTable.arrangement`; about 7 microseconds each on the 4x4x4, whose states take one
#: node per level or a few more)
ARRANGEMENT_NODES = 200_000


# ---- the search --------------------------------------------------------------------------------
def solve_group(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
) -> SearchResult:
    """Solve one state of a permutation puzzle by sifting it through the puzzle's group table
    (built or loaded first, see :func:`group_table`): the shortest solution of ``max_nodes``
    sifts (default :data:`TRIES`), each after another short premove (:meth:`GroupTable.solve`),
    within ``time_limit`` seconds of the table being ready and before ``deadline`` (a reading of
    :func:`puzzlezero.search.clock.now`), whichever comes first (the first sift is always done).
    Always solves a legal state, in milliseconds for one sift, once the table is there; a table
    that is not built by the deadline (:func:`group_table`) leaves the state unsolved (status
    ``"time limit"``, the reason on stderr), and so does one whose build ran out of memory at the
    memory budget (``"memory limit"``). A goal that repeats labels is
    solved through an arrangement of its identical pieces (:meth:`GroupTable.solve_labels`), and
    a puzzle with wildcards gets the solution up to the first state within them. Returns a
    :class:`SearchResult` whose ``nodes_generated`` and ``iterations`` are the number of sifts
    done. Raises :class:`InvalidStateError` for a state the moves cannot reach and
    :class:`BudgetError` where the backtrack for an arrangement runs out of nodes."""
    started = clock.now()
    build_until = clock.deadline_after(time_limit, deadline, start=started)
    try:
        table = group_table(puzzle, deadline=None if math.isinf(build_until) else build_until)
    except TableTimeoutError as exc:  # no table, no answer: the bound, by name
        _log(str(exc))
        return SearchResult(False, (), 0, 0, clock.now() - started, "time limit")
    except MemoryBudgetError as exc:  # its build's process ran out at the memory budget
        _log(str(exc))
        return SearchResult(False, (), 0, 0, clock.now() - started, "memory limit")
    t0 = clock.now()
    state = np.asarray(state, dtype=puzzle.dtype).reshape(puzzle.state_shape)
    if puzzle.is_goal(state[None])[0]:
        return SearchResult(True, (), 1, 0, clock.now() - t0, "solved")
    tries = TRIES if max_nodes is None else max(1, min(int(max_nodes), MAX_TRIES))
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    if t0 - started > AFTER_BUILD_SECONDS:  # the table was built in this call
        stop = max(stop, t0 + AFTER_BUILD_SECONDS)
    until = None if math.isinf(stop) else stop
    wildcards = int(getattr(puzzle, "wildcards", 0) or 0)
    if _distinct_goal(puzzle):
        actions, sifts = table.solve(state_permutation(puzzle, state), tries, until)
    else:
        flat = state.reshape(1, -1)
        n = flat.shape[1]

        def is_goal(states: np.ndarray) -> np.ndarray:
            return np.asarray(puzzle.is_goal(states.reshape(-1, *puzzle.state_shape)), dtype=bool)

        actions, sifts = table.solve_labels(
            flat[0],
            np.asarray(puzzle.goal()).reshape(n),
            tries,
            until,
            is_goal=is_goal if wildcards else None,
        )
    if wildcards and isinstance(puzzle, PermutationPuzzle):  # the puzzles with wildcards
        actions = tuple(puzzle.solved_prefix(state, actions))
    return SearchResult(
        True, actions, sifts, sifts, clock.now() - t0, "solved", cost=puzzle.path_cost(actions)
    )


#: the rollout's beam widths by default, one rollout after the other, each from the best answer
#: so far (:func:`solve_rollout`)
ROLLOUT_WIDTHS = (1000, 10_000)


def rollout_memory(puzzle: Puzzle, options: Any, instances: int = 1) -> int:
    """Peak bytes of :func:`solve_rollout` beyond the group table: its widest rollout's
    (:func:`puzzlezero.search.rollout.memory_estimate`; the states are solved one at a time)."""
    from puzzlezero.budget import widest
    from puzzlezero.search.rollout import memory_estimate

    return memory_estimate(puzzle, widest(options.beam_width))


def solve_rollout(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    beam_width: int | Sequence[int] = ROLLOUT_WIDTHS,
    patience: int | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    time_limit: float | None = None,
    on_improvement: Callable[[tuple[int, ...]], None] | None = None,
) -> SearchResult:
    """The group solver's answer (:func:`solve_group`), then made shorter by rollouts
    (:func:`puzzlezero.search.rollout.rollout`) whose base is the greedy sift
    (:meth:`GroupTable.greedy_lengths`): a beam of ``beam_width`` states over the puzzle's moves,
    each child scored by the length of its sift, the best ``moves so far + sift`` kept. With
    several widths, one rollout after the other, each from the best answer so far (an anytime
    schedule: a narrow beam answers in seconds, a wide one gains a little more). Bounded by
    ``max_nodes`` children scored over all the rollouts and by the deadline (``deadline``, or
    ``time_limit`` seconds from the call, the earlier); every legal state is answered, the group
    solver's answer at the least. Needs a puzzle whose states are its stickers' labels (those made
    from a definition: :class:`~puzzlezero.puzzles.permutation.rules.PermutationPuzzle`).

    Measured on 10 random states 100-200 slice turns from the goal, 60 s each with the shortcut
    pass after (2-core CPU; docs/permutation-puzzles.md): the 4x4x4 from 269.9 moves to 172.5, the
    5x5x5 from 507.1 to 364.7."""
    from puzzlezero.search.rollout import PATIENCE, Rollout, rollout

    if not isinstance(puzzle, PermutationPuzzle):
        raise PuzzleError(
            f"the rollout over the group solver needs a puzzle whose states are its stickers' labels "
            f"(one made from a definition, such as cube_4-4-4); {puzzle.name} is not one: use --search group"
        )
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    until = None if math.isinf(stop) else stop
    state = np.asarray(state, dtype=puzzle.dtype).reshape(puzzle.state_shape)
    first = solve_group(puzzle, state, deadline=until)
    if not first.actions:
        return first
    table = group_table(puzzle)
    goal = np.asarray(puzzle.goal()).ravel()
    widths = (beam_width,) if isinstance(beam_width, int) else tuple(int(w) for w in beam_width)
    best = first.actions
    improvements = [(clock.now() - t0, len(best))]
    nodes, steps = first.nodes_generated, 0
    for width in widths:
        if until is not None and clock.passed(until):
            break
        left = None if max_nodes is None else max_nodes - nodes
        if left is not None and left <= 0:
            break
        r: Rollout = rollout(
            puzzle,
            state,
            lambda states: table.greedy_lengths(states, goal),
            lambda s: table.greedy_word(s, goal),
            beam_width=width,
            patience=PATIENCE if patience is None else patience,
            max_nodes=left,
            deadline=until,
            incumbent=best,
        )
        nodes, steps = nodes + r.nodes_generated, steps + r.iterations
        if len(r.actions) < len(best):
            best = table.reducer.reduce(r.actions)
            improvements.append((clock.now() - t0, len(best)))
            if on_improvement is not None:
                on_improvement(best)
    if int(getattr(puzzle, "wildcards", 0) or 0):
        best = tuple(puzzle.solved_prefix(state, best))
    if not puzzle.is_goal(puzzle.apply_moves(state, best)[None])[0]:  # pragma: no cover - replayed
        raise InvalidStateError(f"the rollout's answer does not solve this {puzzle.name} state")
    return SearchResult(
        True,
        tuple(best),
        nodes,
        steps,
        clock.now() - t0,
        "solved",
        improvements=tuple(improvements),
        cost=puzzle.path_cost(best),
    )
