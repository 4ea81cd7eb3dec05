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
  state ``g`` (the cube reads it from its pieces; the default needs a goal whose values are all
  distinct and looks each value up);
* ``group_base`` (optional): positions to fix first, in order (the cube's: layer by layer, so that
  a solution places the pieces of the bottom layer, then the middle, then the top).

**The chain.** The moves generate a group ``G`` acting on the ``N`` positions. sympy's
Schreier–Sims (``PermutationGroup.schreier_sims_incremental``) gives a base ``b_1..b_k``
(``group_base`` first) and strong generators, hence the basic orbits ``D_i``: the positions
``b_i`` can reach under ``G_(i-1)``, the moves that fix ``b_1..b_(i-1)``; ``|G| = prod |D_i|``
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

>>> from puzzlezero import make
>>> cube = make("cube2")
>>> group_table(cube).order  # doctest: +SKIP
3674160
>>> start = cube.parse("R U F' U2 R'")
>>> r = solve_group(cube, start)  # doctest: +SKIP
>>> bool(cube.is_goal(cube.apply_moves(start, r.actions)[None])[0])  # doctest: +SKIP
True
"""

from __future__ import annotations

import hashlib
import math
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidStateError, ModelFileError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.words import MoveWords
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from puzzlezero.storage import build_once, cache_dir, load_npz, save_npz

__all__ = [
    "GROUP_TABLE_VERSION",
    "GroupTable",
    "MoveWords",
    "group_table",
    "move_permutations",
    "solve_group",
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


def state_permutation(puzzle: Puzzle, state: np.ndarray) -> np.ndarray:
    """``intp[N]``: ``p`` with ``state == g[p]`` for a goal ``g`` (the puzzle's own
    ``state_permutation``, else the goal's values looked up, which must all be distinct)."""
    own = getattr(puzzle, "state_permutation", None)
    if own is not None:
        return np.asarray(own(state), dtype=np.intp)
    goal = np.asarray(puzzle.goal()).ravel()
    flat = np.asarray(state).ravel()
    if np.unique(goal).size != goal.size:
        raise PuzzleError(
            f"{puzzle.name} repeats values in its goal state, so a state does not tell which piece is "
            f"where: the group solver needs the puzzle's state_permutation(state)"
        )
    order = np.argsort(goal, kind="stable")
    pos = np.searchsorted(goal[order], flat)
    pos = np.minimum(pos, goal.size - 1)
    if flat.shape != goal.shape or not (goal[order][pos] == flat).all() or np.unique(flat).size != flat.size:
        raise InvalidStateError(f"the state is not an arrangement of the goal's values: {flat.tolist()}")
    return order[pos].astype(np.intp)


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


def _invert(img: np.ndarray) -> np.ndarray:
    out = np.empty_like(img)
    out[img] = np.arange(img.size, dtype=img.dtype)
    return out


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
        word = self._sift(_invert(np.asarray(p, dtype=np.intp)))
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
        q = _invert(np.asarray(p, dtype=np.intp))
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


class _Builder:
    """Minkwitz's algorithm over a known chain: fills ``levels[i][d] = (word, inverse word, img,
    inverse img)``."""

    def __init__(self, images: np.ndarray, reducer: MoveWords, base: Sequence[int], limit: int) -> None:
        self.images, self.red, self.base, self.limit = images, reducer, tuple(base), limit
        ident = np.arange(images.shape[1])
        self.levels: list[dict[int, _Entry]] = [{b: ((), (), ident, ident)} for b in self.base]

    def insert(self, word: tuple[int, ...], img: np.ndarray, level: int = 0) -> None:
        """Sift ``word`` (element ``img``) from ``level``, keeping every shorter word it meets."""
        while level < len(self.base) and word and len(word) <= self.limit:
            d = int(img[self.base[level]])
            slot = self.levels[level]
            old = slot.get(d)
            if old is None or len(word) < len(old[0]):
                inv, inv_word = _invert(img), self.red.inverse(word)
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
        for i, slot in enumerate(self.levels):
            entries = [e for e in slot.values() if e[0]]
            for u in entries:
                for v in entries:
                    self.insert(self.red.join(u[0], v[0]), v[2][u[2]], i)

    def filled(self) -> int:
        return sum(len(s) for s in self.levels)


#: a table entry while building: word, inverse word, element, inverse element
_Entry = tuple[tuple[int, ...], tuple[int, ...], np.ndarray, np.ndarray]


def _chain(images: np.ndarray, actions: Sequence[int], base: Sequence[int]) -> tuple[list[int], list[int]]:
    """sympy's Schreier–Sims: the base (``base`` first, extended as needed) and each basic orbit's
    size."""
    try:
        from sympy.combinatorics import Permutation, PermutationGroup
    except ImportError:  # pragma: no cover - sympy comes with torch
        raise PuzzleError("the group solver needs sympy (pip install sympy)") from None
    group = PermutationGroup([Permutation(images[a].tolist()) for a in actions])
    full_base, strong = group.schreier_sims_incremental(base=list(base))
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
    keep = [i for i, s in enumerate(sizes) if s > 1]
    return [int(full_base[i]) for i in keep], [sizes[i] for i in keep]


#: the Minkwitz schedule: random words of 1..``_WORD`` moves, ``_ROUNDS`` of them between two
#: improvements, ``_IMPROVE`` improvements after the table is full, word length limit ``_LIMIT``
#: (raised by a quarter whenever a round leaves the table as it was and not yet full)
_ROUNDS, _WORD, _IMPROVE, _LIMIT, _SEED = 2000, 16, 3, 48, 20260514


def _build(puzzle: Puzzle, images: np.ndarray, actions: tuple[int, ...], reducer: MoveWords) -> _Builder:
    base, sizes = _chain(images, actions, tuple(int(b) for b in getattr(puzzle, "group_base", ())))
    b = _Builder(images, reducer, base, _LIMIT)
    total = sum(sizes)
    rng = np.random.default_rng(_SEED)
    for a in actions:
        b.insert((a,), images[a])
    improved, rounds = 0, 0
    while improved < _IMPROVE:
        before = b.filled()
        for _ in range(_ROUNDS):
            word = reducer.reduce(rng.choice(actions, size=int(rng.integers(1, _WORD + 1))).tolist())
            b.insert(word, _element(images, word))
        b.improve()
        rounds += 1
        full = b.filled() == total
        improved += full
        if not full and b.filled() == before:
            b.limit = b.limit * 5 // 4
        _log(f"  round {rounds}: {b.filled()}/{total} entries, longest word {_longest(b)}")
    if [len(s) for s in b.levels] != sizes:  # pragma: no cover - a full table has these sizes
        raise RuntimeError(f"group table of {puzzle.name}: orbits {[len(s) for s in b.levels]} != {sizes}")
    return b


def _longest(b: _Builder) -> int:
    return max(len(e[0]) for s in b.levels for e in s.values())


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


_TABLES: dict[tuple[str, str], GroupTable] = {}


def group_table(puzzle: Puzzle) -> GroupTable:
    """The puzzle's :class:`GroupTable`: from memory, else from ``cache_dir("group")``, else built
    (a line per round on stderr; seconds) and saved atomically, under the table's lock (a second
    process waits and loads it; where builds are forbidden, :class:`MissingTableError` names
    ``puzzlezero pdb build NAME --kind group``). A cached file is checked entry by
    entry and rebuilt if it is off. Raises :class:`PuzzleError` for a puzzle that is not a
    permutation puzzle."""
    perms = move_permutations(puzzle)
    actions = _group_actions(puzzle)
    costs = np.asarray(puzzle.action_costs, dtype=np.float64)
    h = hashlib.sha256(np.ascontiguousarray(perms, dtype=np.int64).tobytes())
    h.update(repr((actions, tuple(getattr(puzzle, "group_base", ())), costs.tolist())).encode())
    key = h.hexdigest()[:16]
    if (puzzle.name, key) in _TABLES:
        return _TABLES[(puzzle.name, key)]
    images = _images(perms)
    reducer = MoveWords(images, actions, costs)
    path = cache_dir("group") / f"{puzzle.name}-{key}.npz"
    meta: dict[str, Any] = {"kind": "group table", "version": GROUP_TABLE_VERSION, "key": key}

    def load() -> GroupTable:
        return _from_arrays(puzzle.name, actions, images, reducer, load_npz(path, meta))

    def build_and_save() -> GroupTable:
        _log(
            f"building the group table of {puzzle.name} (Schreier-Sims chain, words by Minkwitz's "
            f"algorithm; once, cached in {path.parent})"
        )
        t0 = time.perf_counter()
        built = _build(puzzle, images, actions, reducer)
        seconds = time.perf_counter() - t0
        words = [{d: e[0] for d, e in sorted(s.items())} for s in built.levels]
        table = GroupTable(puzzle.name, actions, built.base, words, images, reducer, seconds)
        save_npz(path, {**meta, "build_seconds": round(seconds, 2)}, **_to_arrays(table))
        _log(f"built the group table of {puzzle.name} in {seconds:.1f} s (order {table.order:,}) -> {path}")
        return table

    table = build_once(
        path,
        load,
        build_and_save,
        what=f"the group table of {puzzle.name}",
        command=f"puzzlezero pdb build {puzzle.name} --kind group",
    )
    _TABLES[(puzzle.name, key)] = table
    return table


def _to_arrays(table: GroupTable) -> dict[str, np.ndarray]:
    rows = [(i, d, w) for i, lv in enumerate(table.words) for d, w in lv.items()]
    lengths = np.array([len(w) for _, _, w in rows], dtype=np.int64)
    return {
        "base": np.array(table.base, dtype=np.int64),
        "level": np.array([i for i, _, _ in rows], dtype=np.int64),
        "point": np.array([d for _, d, _ in rows], dtype=np.int64),
        "offsets": np.concatenate([[0], np.cumsum(lengths)]),
        "moves": np.array([a for _, _, w in rows for a in w], dtype=np.int64),
    }


def _from_arrays(
    name: str, actions: tuple[int, ...], images: np.ndarray, reducer: MoveWords, arrays: dict
) -> GroupTable:
    """The table saved by :func:`_to_arrays`, every word checked (its element fixes the earlier
    base points and carries its own to its slot); :class:`ModelFileError` if one is off."""
    try:
        base = tuple(int(b) for b in arrays["base"])
        words: list[dict[int, tuple[int, ...]]] = [{} for _ in base]
        off, moves = arrays["offsets"].tolist(), arrays["moves"].tolist()
        for k, (i, d) in enumerate(zip(arrays["level"].tolist(), arrays["point"].tolist(), strict=True)):
            word = tuple(moves[off[k] : off[k + 1]])
            if not set(word) <= set(actions):
                raise ValueError(f"a word has moves outside {actions}")
            img = _element(images, word)
            if int(img[base[i]]) != d or any(int(img[b]) != b for b in base[:i]):
                raise ValueError(f"the word at level {i}, point {d} does not go there")
            words[i][d] = word
    except (KeyError, IndexError, ValueError) as exc:
        raise ModelFileError(f"group table of {name}: malformed ({exc})") from None
    return GroupTable(name, actions, base, words, images, reducer)


#: sifts :func:`solve_group` tries by default, one after each of the shortest premoves (cube3: all
#: 1,201 premoves of up to 3 quarter turns, 0.25 s; the mean solution of random cubes drops from
#: about 111 moves for one sift to about 65)
TRIES = 1000


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
    Always solves a legal state, in milliseconds for one sift. Returns a :class:`SearchResult`
    whose ``nodes_generated`` and ``iterations`` are the number of sifts done. Raises
    :class:`InvalidStateError` for a state the moves cannot reach."""
    table = group_table(puzzle)
    t0 = clock.now()
    state = np.asarray(state, dtype=puzzle.dtype).reshape(puzzle.state_shape)
    if puzzle.is_goal(state[None])[0]:
        return SearchResult(True, (), 1, 0, clock.now() - t0, "solved")
    tries = TRIES if max_nodes is None else max(1, int(max_nodes))
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    actions, sifts = table.solve(state_permutation(puzzle, state), tries, None if math.isinf(stop) else stop)
    return SearchResult(
        True, actions, sifts, sifts, clock.now() - t0, "solved", cost=puzzle.path_cost(actions)
    )
