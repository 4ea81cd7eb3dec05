"""Any NxNxN cube orbit by orbit with commutators: an answer where no group table can be built.

The group solver (:mod:`puzzlezero.classic.group`) needs a table of the cube's whole group, which
the 19x19x19 and the 33x33x33 (2,166 and 6,534 stickers) would take days of a CPU to build. This
solver needs no table but the 2x2x2's or the 3x3x3's (shipped), and solves the cube the way people
solve big cubes by hand, a set of like pieces at a time:

1. **The small cube inside.** The stickers in rows and columns ``0`` and ``N-1`` of each face (and
   the middle row and column when ``N`` is odd: corners, middle edges, face centres) turn under
   the turns of slices ``0`` and ``N-1`` (and the middle slice) exactly as the 2x2x2's (the
   3x3x3's) stickers turn under its moves. That cube's group solver answers them, each of its
   moves made the big cube's slice turn.
2. **The wings**, then **the centres**, one *orbit* at a time: the 24 pieces that the moves can
   carry into one another (the wings ``k`` slices from a corner; the centres at row ``i`` and
   column ``j`` of a face and the places a turn takes them). Each is solved by 3-cycles: the
   commutators ``[A, S B S'] = A S B S' A' S B' S'`` of a turn ``A`` of one of the orbit's inner
   slices with a turn ``B`` (an inner slice or a face) set up by a face turn ``S``, tried until
   one moves exactly three of the orbit's pieces and nothing else (checked on every sticker);
   then their conjugates ``T C T'`` by every set-up word ``T`` of up to three moves (the face
   turns and the orbit's slices), each again three pieces of that orbit and nothing else. A beam
   over them, each step keeping the states with the most stickers right for the fewest moves,
   solves the orbit. A wing orbit may also take a single turn of one of its slices, which moves
   the centres too (solved after), not the corners, middle edges or other wings: so its pieces'
   odd permutations are solved as well.
3. **Shared 3-cycles.** A centre 3-cycle ``[A, X]`` of slice ``j``'s turn ``A`` becomes
   ``[A a2, X]`` with ``a2`` the same turn of a parallel slice ``j2``: two moves more, and the
   same 3-cycle, read with ``j2`` for ``j``, in another centre orbit. Where that puts stickers
   right in orbits not solved yet, the word takes those turns (each one checked by replaying
   the word on the whole cube), choosing among the 3-cycle's shortest words the one that shares
   best: on the 19x19x19 about an eighth fewer moves.

Before the centre orbits' own 3-cycles, a rough pass: the commutators ``[X, Y] = X Y X' Y'`` of
two inner slices' turns on different axes (four moves, two 3-cycles of centres where the slices
cross), greedily, each the one that puts the most centre stickers right while that is two or
more (the 19x19x19, one state: 7,214 moves without, 6,612 with).

What is solved stays solved: each step moves only the orbit being solved and the orbits after
it. The answer is the concatenation, reduced (a move and its inverse side by side cancel, turns
of one axis commute) and replayed on the state before it is returned. Answers are long (about
6,600 moves on the 19x19x19, 18,600 on the 33x33x33), far from the competition's best, but
every state gets one in seconds, whatever the goal's labels (the
competition's six colours, its two-colour pattern, or every sticker its own: the small cube's
group solver reads any, and the 3-cycles of an orbit of distinct pieces come out even).

>>> import numpy as np
>>> from puzzlezero.puzzles.permutation import family_puzzle
>>> p = family_puzzle("cube_6/6/6")
>>> rng = np.random.default_rng(0)
>>> state = p.apply_moves(p.goal(), rng.integers(0, p.num_actions, size=200).tolist())
>>> r = solve_commutators(p, state)
>>> r.status, bool(p.is_goal(p.apply_moves(state, r.actions)[None])[0])
('solved', True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.permutation.definition import Definition
from puzzlezero.puzzles.permutation.families import MAX_CUBE, CubeGeometry, cube
from puzzlezero.puzzles.permutation.rules import PermutationPuzzle
from puzzlezero.puzzles.words import MoveWords
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult

__all__ = ["BEAM_WIDTHS", "cube_size", "memory_estimate", "solve_commutators"]

#: states kept by the beam that solves one orbit: the first try, then the second where the first
#: stalls (its most stickers right unchanged for :data:`STALL` steps)
BEAM_WIDTHS = (8, 64)
STALL = 6
#: the moves a sticker right is worth in the beam's ranking (most stickers right for fewest
#: moves; the 19x19x19, one state: 7,306 moves ranked by stickers right, then moves, 7,214 so)
RIGHT_MOVES = 8
#: the most 3-cycles (commutators) found for one orbit before their conjugates are formed
TEMPLATES = 3
#: centre stickers a commutator of two slice turns (four moves) must put right to be taken before
#: the orbits' own 3-cycles (0: none); the 19x19x19, one state: 7,214 moves without, 6,806 at 3,
#: 6,612 at 2
ROUGH_GAIN = 2
#: stickers put right in an orbit not solved yet for which a 3-cycle is shared with it (two moves)
SHARED_GAIN = 1
#: the words of each 3-cycle of a centre orbit kept (the shortest first): the one whose turns
#: share it with the most other orbits is taken
ALTERNATIVES = 8
#: moves a sticker put right in another orbit is worth, in choosing among the alternatives
STICKER_MOVES = 4
#: the longest set-up word of a conjugate ``T C T'``; a centre orbit's :data:`SHORT_SETUP` where
#: the time left would not do so for every centre orbit left (and where a beam over those fails,
#: those of three) (a centre orbit's library of the 33x33x33: 2,640 3-cycles
#: in 0.10 s against 712 in 0.008 s; answers about a sixth longer)
SETUP_LENGTH, SHORT_SETUP = 3, 2


#: bytes a solve takes beside the cube's moves: the small cube's table, the orbits' libraries (a
#: centre orbit's 3-cycles and their set-ups, a few MiB), numpy's temporaries
FIXED_BYTES = 64 << 20
#: bytes per move and sticker: the moves' permutations, their images, the move words' reducer and
#: the definition's own lists (measured peak beside the interpreter: the 33x33x33's 198 moves of
#: 6,534 stickers about 230 MiB, the 19x19x19's about 75 MiB)
MOVE_STICKER_BYTES = 160
#: moves of an answer per sticker, at most (the 33x33x33: about 3.2)
ANSWER_PER_STICKER = 4


def memory_estimate(puzzle: Puzzle, options: Any = None, instances: int = 1) -> int:
    """Peak bytes of :func:`solve_commutators` on ``puzzle`` (the states are solved one at a
    time): :data:`FIXED_BYTES`, :data:`MOVE_STICKER_BYTES` a move and sticker and, with wildcards,
    the answer's states (:data:`ANSWER_PER_STICKER` moves a sticker, a byte a sticker each) to
    find the first within them."""
    stickers = int(np.prod(puzzle.state_shape))
    out = FIXED_BYTES + MOVE_STICKER_BYTES * puzzle.num_actions * stickers
    if getattr(puzzle, "wildcards", 0):
        out += ANSWER_PER_STICKER * stickers * stickers
    return out


def cube_size(puzzle: Puzzle | Definition) -> int | None:
    """``n`` where the moves of ``puzzle`` (or of a definition) are the NxNxN cube's in the
    competition's order and names (:func:`puzzlezero.puzzles.permutation.families.cube`): ``f0 ..
    f{n-1}``, ``r0 ..``, ``d0 ..``, then their inverses, each the same permutation; else ``None``."""
    perms = getattr(puzzle, "perms", None)
    names = tuple(getattr(puzzle, "move_names", None) or getattr(puzzle, "action_names", None) or ())
    if perms is None or np.ndim(perms) != 2:
        return None
    perms = np.asarray(perms)
    n = round((perms.shape[1] / 6) ** 0.5)
    if not 2 <= n <= MAX_CUBE or 6 * n * n != perms.shape[1] or perms.shape[0] != 6 * n:
        return None
    ref_names, ref_perms = _cube_moves(n)
    if names != ref_names or not np.array_equal(perms, ref_perms):
        return None
    return n


@lru_cache(maxsize=8)
def _small_cube(size: int, goal: tuple[str, ...]) -> PermutationPuzzle:
    """The 2x2x2 or 3x3x3 (``size``) with the competition's moves and ``goal``, the labels of the
    big cube's goal on the stickers it shares with it; its group table is the one shipped for its
    moves, whatever the goal."""
    data = {**cube(size), "goal": list(goal)}
    return PermutationPuzzle(Definition.from_dict(data, where=f"the {size}x{size}x{size} inside a cube"))


@lru_cache(maxsize=4)
def _cube_moves(n: int) -> tuple[tuple[str, ...], np.ndarray]:
    moves = cube(n)["moves"]
    perms = np.array(list(moves.values()), dtype=np.intp)
    perms.flags.writeable = False
    return tuple(moves), perms


@dataclass(frozen=True)
class _Orbit:
    """One orbit's stickers (``positions``, in sticker order), its pieces' size in stickers, and
    each move's permutation of the orbit alone (``local[a]``: ``child[q] = parent[local[a][q]]``
    for the orbit's ``q``-th sticker)."""

    positions: np.ndarray
    piece_size: int
    local: np.ndarray


class _Cube:
    """What the solver knows of the NxNxN cube: its moves, the small cube inside, its orbits."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.names, self.perms = _cube_moves(n)
        self.count = len(self.names)
        forward = 3 * n
        #: each move's inverse, and its slice (0 .. n-1) and axis (0, 1, 2)
        self.inverse = np.array([(a + forward) % (2 * forward) for a in range(self.count)])
        self.slice = np.array([(a % forward) % n for a in range(self.count)])
        self.axis = np.array([(a % forward) // n for a in range(self.count)])
        self.faces = [a for a in range(self.count) if self.slice[a] in (0, n - 1)]
        middle = [n // 2] if n % 2 else []
        self.small = 3 if n % 2 else 2
        #: the small cube's slice ``i`` is this cube's slice ``layers[i]``
        self.layers = [0, *middle, n - 1]
        rows = np.array(self.layers)
        self.core = (
            np.arange(6)[:, None, None] * n * n + rows[None, :, None] * n + rows[None, None, :]
        ).reshape(-1)
        pieces = CubeGeometry(n).pieces()
        piece_size = np.empty(6 * n * n, dtype=np.int64)
        for piece in pieces:
            piece_size[piece] = len(piece)
        orbit_of = _orbits(self.perms, pieces)
        in_core = np.zeros(6 * n * n, dtype=bool)
        in_core[self.core] = True
        core_orbits = set(orbit_of[self.core].tolist())
        if not in_core[np.isin(orbit_of, list(core_orbits))].all():  # pragma: no cover - geometry
            raise PuzzleError(f"cube_{n}-{n}-{n}: the small cube inside is not a union of orbits")
        rest = sorted(set(orbit_of.tolist()) - core_orbits)
        orbits = []
        for o in rest:
            pos = np.flatnonzero(orbit_of == o)
            index = np.full(6 * n * n, -1, dtype=np.int64)
            index[pos] = np.arange(len(pos))
            local = index[self.perms[:, pos]]
            orbits.append(_Orbit(pos, int(piece_size[pos[0]]), local))
        #: the wings first (edges: two stickers a piece), then the centres
        self.orbits = sorted(orbits, key=lambda o: (-o.piece_size, int(o.positions[0])))
        #: each sticker's orbit, its index in :attr:`orbits` (-1: the small cube inside)
        self.orbit_index = np.full(6 * n * n, -1, dtype=np.int64)
        for i, o in enumerate(self.orbits):
            self.orbit_index[o.positions] = i
        from puzzlezero.classic.group import _images

        self.reducer = MoveWords(_images(self.perms), range(self.count), np.ones(self.count))


@lru_cache(maxsize=2)
def _cube(n: int) -> _Cube:
    return _Cube(n)


def _orbits(perms: np.ndarray, pieces: Sequence[Sequence[int]]) -> np.ndarray:
    """Each position's orbit of pieces, named by its least position: the stickers the moves carry
    into one another, with those on the same pieces (a wing's two stickers lie in two orbits of
    stickers, as a wing never turns over in its place)."""
    label = np.arange(perms.shape[1])
    links = [np.asarray(p) for p in pieces if len(p) > 1]
    while True:
        new = label.copy()
        for p in perms:
            np.minimum(new, new[p], out=new)
        for piece in links:
            new[piece] = new[piece].min()
        if np.array_equal(new, label):
            return label
        label = new


def _word_perm(perms: np.ndarray, word: Sequence[int]) -> np.ndarray:
    """The permutation of a word: ``state[perm]`` is the state after its moves."""
    out = np.arange(perms.shape[1])
    for a in word:
        out = out[perms[a]]
    return out


def _commutator(a: int, b: int, s: int, inverse: np.ndarray) -> tuple[int, ...]:
    """``[A, S B S'] = A S B S' A' S B' S'``."""
    return (a, s, b, int(inverse[s]), int(inverse[a]), s, int(inverse[b]), int(inverse[s]))


def _templates(cube: _Cube, orbit: _Orbit) -> list[tuple[int, ...]]:
    """Up to :data:`TEMPLATES` commutators that move exactly three of ``orbit``'s pieces and no
    other sticker of the cube."""
    ident = np.arange(len(orbit.positions))
    moving = [a for a in range(cube.count) if not np.array_equal(orbit.local[a], ident)]
    inner = [a for a in moving if a not in cube.faces]
    found: list[tuple[int, ...]] = []
    cycles: set[bytes] = set()
    for a in inner:
        for b in [*inner, *cube.faces]:
            if b in (a, cube.inverse[a]):
                continue
            for s in cube.faces:
                if cube.axis[s] == cube.axis[b]:  # S B S' would be B
                    continue
                word = _commutator(a, b, s, cube.inverse)
                local = _word_perm(orbit.local, word)
                if int((local != ident).sum()) != 3 * orbit.piece_size or local.tobytes() in cycles:
                    continue
                full = _word_perm(cube.perms, word)
                moved = np.flatnonzero(full != np.arange(len(full)))
                if len(moved) != 3 * orbit.piece_size:  # it moves other orbits' stickers too
                    continue
                cycles.add(local.tobytes())
                found.append(word)
                if len(found) == TEMPLATES:
                    return found
    return found


class _Library:
    """An orbit's 3-cycles for its beam: ``perms[i]`` permutes the orbit's stickers as
    :meth:`word` ``i`` does, in ``lengths[i]`` moves; its single ``turns`` change the parity of
    its pieces' permutation. Each 3-cycle is kept as up to :data:`ALTERNATIVES` words, the
    shortest first (:meth:`parts`), written out only when asked for."""

    def __init__(
        self,
        perms: np.ndarray,
        lengths: np.ndarray,
        turns: list[int],
        setups: tuple[list[int], list[int]],
        made: list[tuple[tuple[int, ...], int, int]],
        alternatives: list[list[int]],
        inverse: np.ndarray,
    ) -> None:
        self.perms, self.lengths, self.turns = perms, lengths, turns
        self._last, self._parent = setups
        self._made, self._alternatives, self._inverse = made, alternatives, inverse

    def __len__(self) -> int:
        return len(self.lengths)

    def parts(self, i: int) -> list[tuple[tuple[int, ...], tuple[int, ...], int, int]]:
        """3-cycle ``i``'s words, the shortest first, each as ``(T, C, A, B)``: its set-up ``T``,
        its commutator ``C`` (``[A, S B S']`` or the inverse) and ``C``'s moves ``A`` (a turn of
        one of the orbit's slices) and ``B``."""
        out = []
        for k in self._alternatives[i]:
            c, s = divmod(k, len(self._last))
            setup: list[int] = []
            while s > 0:
                setup.append(self._last[s])
                s = self._parent[s]
            core, a, b = self._made[c]
            out.append((tuple(reversed(setup)), core, a, b))
        return out

    def word(self, i: int) -> tuple[int, ...]:
        """3-cycle ``i``'s shortest word, ``T C T'``."""
        t, core, _, _ = self.parts(i)[0]
        return t + core + _inverse_word(t, self._inverse)


def _library(cube: _Cube, orbit: _Orbit, solved: np.ndarray, setup_length: int = SETUP_LENGTH) -> _Library:
    """The conjugates ``T C T'`` of the orbit's 3-cycles by the set-up words ``T`` of up to
    ``setup_length`` moves (face turns and the orbit's slices), the shortest words of each
    permutation; for a wing orbit, its slices' single turns that move no ``solved`` sticker.

    ``T C T'`` moves the sticker at ``T(x)`` to ``T(C(x))`` for each ``x`` that ``C`` moves (as a
    gather, ``state[perm]``: position ``perm_T[q]`` takes from ``perm_T[perm_C[q]]``), so each
    conjugate is read off the set-up's permutation at the three (six) positions ``C`` moves."""
    templates = _templates(cube, orbit)
    if not templates:  # pragma: no cover - every orbit of a cube has them
        raise PuzzleError(
            f"cube_{cube.n}-{cube.n}-{cube.n}: no 3-cycle found for the orbit of sticker {orbit.positions[0]}"
        )
    m = len(orbit.positions)
    ident = np.arange(m)
    moving = [a for a in range(cube.count) if not np.array_equal(orbit.local[a], ident)]
    setup_moves = sorted(set(cube.faces) | set(moving))
    # the set-up words, breadth first, level by level: each one's last move, the index of the word
    # before it, its permutation of the orbit, its length
    levels = [(np.array([-1]), np.array([-1]), ident[None, :], np.array([0]))]
    start = 0
    for d in range(1, setup_length + 1):
        before_last, _, before, _ = levels[-1]
        index = start + np.arange(len(before))
        start += len(before)
        grown = []
        for a in setup_moves:
            keep = before_last != cube.inverse[a]
            k = int(keep.sum())
            grown.append((np.full(k, a), index[keep], before[keep][:, orbit.local[a]], np.full(k, d)))
        levels.append(tuple(np.concatenate(column) for column in zip(*grown, strict=True)))  # type: ignore[arg-type]
    last_move, parent_of = (np.concatenate([lv[i] for lv in levels]).tolist() for i in (0, 1))
    setup, depth = (np.concatenate([lv[i] for lv in levels]) for i in (2, 3))
    made: list[tuple[tuple[int, ...], int, int]] = []
    dsts, srcs, lengths = [], [], []
    for c in templates:
        for word in (c, _inverse_word(c, cube.inverse)):
            local = _word_perm(orbit.local, word)
            q = np.flatnonzero(local != ident)
            dst, src = setup[:, q], setup[:, local[q]]
            order = np.argsort(dst, axis=1)  # one 3-cycle, one key: its moves in order of place
            dsts.append(np.take_along_axis(dst, order, axis=1))
            srcs.append(np.take_along_axis(src, order, axis=1))
            lengths.append(2 * depth + len(word))
            made.append((word, c[0], c[2]))
    dst, src, length = np.concatenate(dsts), np.concatenate(srcs), np.concatenate(lengths)
    order = np.argsort(length, kind="stable")  # the shortest words of each permutation first
    weights = np.random.default_rng(0).integers(1, 2**62, size=2 * dst.shape[1])
    key = np.concatenate([dst, src], axis=1)[order] @ weights
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    by_length = np.argsort(length[order[first]], kind="stable")
    rank = np.argsort(by_length, kind="stable")  # each permutation's place, shortest first
    chosen = order[first][by_length]
    # each permutation's (key's) shortest words, in order of length
    by_group = np.argsort(group, kind="stable")
    sorted_group = group[by_group]
    within = np.arange(len(by_group)) - np.searchsorted(sorted_group, np.arange(len(first)))[sorted_group]
    keep = within < ALTERNATIVES
    alternatives: list[list[int]] = [[] for _ in first]
    for g, at in zip(sorted_group[keep].tolist(), by_group[keep].tolist(), strict=True):
        alternatives[rank[g]].append(int(order[at]))
    perms = np.tile(ident, (len(chosen), 1))
    np.put_along_axis(perms, dst[chosen], src[chosen], axis=1)
    turns: list[int] = []
    if orbit.piece_size == 2:  # a wing orbit: a turn of one of its slices that keeps the rest
        in_solved = np.zeros(cube.perms.shape[1], dtype=bool)
        in_solved[solved] = True
        ident_all = np.arange(cube.perms.shape[1])
        turns = [a for a in moving if a not in cube.faces and not in_solved[cube.perms[a] != ident_all].any()]
    return _Library(
        perms, length[chosen], turns[:1], (last_move, parent_of), made, alternatives, cube.inverse
    )


def _shared(
    cube: _Cube, k: int, lib: _Library, i: int, state: np.ndarray, goal: np.ndarray
) -> tuple[int, ...]:
    """Of word ``i``'s alternatives (the same 3-cycle of orbit ``k``), each shared with the orbits
    it can be through its turn ``A``, else its turn ``B`` (:func:`_shared_turn`), the one of
    fewest moves less :data:`STICKER_MOVES` for each sticker put right elsewhere."""
    best: tuple[float, tuple[int, ...]] | None = None
    for part in lib.parts(i):
        t, core, a, b = part
        word, gain = t + core + _inverse_word(t, cube.inverse), 0
        for turn in (a, b):
            if turn not in cube.faces:
                word, gain = _shared_turn(cube, k, lib, i, part, state, goal, turn)
                if gain:
                    break
        score = len(word) - STICKER_MOVES * gain
        if best is None or score < best[0]:
            best = (score, word)
    assert best is not None
    return best[1]


def _shared_turn(
    cube: _Cube,
    k: int,
    lib: _Library,
    i: int,
    part: tuple[tuple[int, ...], tuple[int, ...], int, int],
    state: np.ndarray,
    goal: np.ndarray,
    a: int,
) -> tuple[tuple[int, ...], int]:
    """Word ``i`` of orbit ``k``'s library as ``part``, its turn ``a`` (``A`` or ``B``, an inner
    slice's) joined by parallel turns that 3-cycle centre orbits not solved yet, where that puts
    at least :data:`SHARED_GAIN` more of their stickers right (``state``: before the word).

    ``[A a2, X]`` (``a2`` a turn of slice ``j2`` parallel to ``A``'s slice ``j``, commuting with it)
    3-cycles the stickers of orbit ``k`` that ``[A, X]`` does and, in the orbit that holds them
    with ``j`` read as ``j2`` (row or column ``j`` of a face as ``j2``, ``N-1-j`` as ``N-1-j2``),
    the stickers so read, where no move of the set-up or of ``X`` turns a slice ``j``, ``j2`` or
    their mirrors. Two moves a shared orbit, where its own 3-cycle costs about ten. The word is
    replayed on ``state`` and kept only where every sticker ends as foreseen; else the word alone.
    Returns the word and the stickers it puts right in the other orbits."""
    t, core, _, _ = part
    base = t + core + _inverse_word(t, cube.inverse)
    n, orbit = cube.n, cube.orbits[k]
    j = int(cube.slice[a])
    mirror = {j, n - 1 - j}
    others = {int(cube.slice[m]) for m in (*t, *core) if m not in (a, cube.inverse[a])}
    if others & mirror:
        return base, 0
    local = lib.perms[i]
    q = np.flatnonzero(local != np.arange(len(local)))
    dst, src = orbit.positions[q], orbit.positions[local[q]]
    j2 = np.array(
        [
            x
            for x in range(1, n - 1)
            if x not in mirror and not {x, n - 1 - x} & (others | {n // 2} if n % 2 else others)
        ]
    )
    if not len(j2):
        return base, 0

    def read(p: np.ndarray) -> np.ndarray:  # [3] -> [len(j2), 3]: p with j read as each j2
        face, r, c = p // (n * n), (p % (n * n)) // n, p % n

        def sub(x: np.ndarray) -> np.ndarray:
            return np.where(x == j, j2[:, None], np.where(x == n - 1 - j, n - 1 - j2[:, None], x[None, :]))

        return face[None, :] * n * n + sub(r) * n + sub(c)

    dst2, src2 = read(dst), read(src)
    target = cube.orbit_index[dst2]
    ok = (
        (target == target[:, :1]).all(axis=1)
        & (target[:, 0] > k)
        & (cube.orbit_index[src2] == target).all(axis=1)
    )
    gain = (state[src2] == goal[dst2]).sum(axis=1) - (state[dst2] == goal[dst2]).sum(axis=1)
    picked: dict[int, int] = {}
    for row in np.flatnonzero(ok & (gain >= SHARED_GAIN)).tolist():
        picked.setdefault(int(target[row, 0]), row)
    if not picked:
        return base, 0
    rows = list(picked.values())
    extras = [a - j + int(j2[r]) for r in rows]  # the same axis and turn as A, slice j2
    joined: list[int] = []
    for m in core:
        joined.append(m)
        if m == a:
            joined += extras
        elif m == cube.inverse[a]:
            joined += [int(cube.inverse[e]) for e in extras]
    word = t + tuple(joined) + _inverse_word(t, cube.inverse)
    foreseen = state.copy()
    foreseen[dst] = state[src]
    for r in rows:
        foreseen[dst2[r]] = state[src2[r]]
    if not np.array_equal(state[_word_perm(cube.perms, word)], foreseen):  # pragma: no cover
        return base, 0
    return word, int(gain[rows].sum())


@lru_cache(maxsize=2)
def _pairs(n: int) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """The commutators ``[X, Y] = X Y X' Y'`` of two inner slices' turns on different axes that
    move centre stickers alone (not the middle slices, whose turns move middle edges): each
    one's turns and the stickers it moves, ``dst`` taking from ``src`` (``[pairs, 6]``: two
    3-cycles, each with one sticker where the two slices cross). Each is worked out on the two
    slices' stickers alone: nothing else moves."""
    cube = _cube(n)
    inner = [a for a in range(cube.count) if a not in cube.faces and not (n % 2 and cube.slice[a] == n // 2)]
    centre = np.zeros(6 * n * n, dtype=bool)
    for o in cube.orbits:
        centre[o.positions] = o.piece_size == 1
    ident = np.arange(6 * n * n)
    ring = {a: np.flatnonzero(cube.perms[a] != ident) for a in inner}
    index = np.full(6 * n * n, -1, dtype=np.int64)
    pairs, dsts, srcs = [], [], []
    for x in inner:
        for y in inner:
            if cube.axis[x] == cube.axis[y]:
                continue
            both = np.union1d(ring[x], ring[y])
            index[both] = np.arange(len(both))
            perm = np.arange(len(both))
            for a in (x, y, int(cube.inverse[x]), int(cube.inverse[y])):
                perm = perm[index[cube.perms[a][both]]]
            moved = np.flatnonzero(perm != np.arange(len(both)))
            if len(moved) != 6 or not centre[both[moved]].all():
                continue
            pairs.append((x, y))
            dsts.append(both[moved])
            srcs.append(both[perm[moved]])
    return pairs, np.array(dsts).reshape(-1, 6), np.array(srcs).reshape(-1, 6)


def _rough_centres(
    cube: _Cube, state: np.ndarray, goal: np.ndarray, stop: float
) -> tuple[list[int], np.ndarray]:
    """Commutators of two slice turns (:func:`_pairs`: four moves, two 3-cycles of centres),
    greedily, each the one that puts the most centre stickers right, while that is at least
    :data:`ROUGH_GAIN`: the centres brought near before their orbits' 3-cycles, at a move for
    every :data:`ROUGH_GAIN` / 4 stickers where a 3-cycle of an orbit takes about three moves a
    sticker. Returns the moves and the state after them."""
    pairs, dst, src = _pairs(cube.n)
    word: list[int] = []
    if not pairs:
        return word, state
    while clock.now() < stop:
        gain = (state[src] == goal[dst]).sum(axis=1) - (state[dst] == goal[dst]).sum(axis=1)
        best = int(np.argmax(gain))
        if gain[best] < ROUGH_GAIN:
            break
        x, y = pairs[best]
        new = state.copy()
        new[dst[best]] = state[src[best]]
        state = new
        word += [x, y, int(cube.inverse[x]), int(cube.inverse[y])]
    return word, state


def _inverse_word(word: Sequence[int], inverse: np.ndarray) -> tuple[int, ...]:
    return tuple(int(inverse[a]) for a in reversed(word))


def _solve_orbit(
    labels: np.ndarray, goal: np.ndarray, lib: _Library, width: int
) -> tuple[list[int] | None, int]:
    """A beam over the library's 3-cycles: from the orbit's ``labels`` to its ``goal``, each step
    the ``width`` states with the most stickers right for the fewest moves (:data:`RIGHT_MOVES`
    a sticker; ties: fewer moves). The word indices of the
    shortest way found at the first step that reaches the goal, or ``None`` where the most
    stickers right has not grown for :data:`STALL` steps (an odd permutation of distinct pieces
    never ends), and the steps taken."""
    m = len(goal)
    if np.array_equal(labels, goal):
        return [], 0
    states = labels[None, :]
    lengths = np.zeros(1, dtype=np.int64)
    paths: list[list[int]] = [[]]
    best, since = -1, 0
    for step in range(4 * m):
        children = states[:, lib.perms]  # [beam, words, m]
        right = (children == goal).sum(axis=2)
        best, since = (int(right.max()), 0) if right.max() > best else (best, since + 1)
        if since >= STALL:
            return None, step + 1
        total = lengths[:, None] + lib.lengths[None, :]
        done = np.argwhere(right == m)
        if len(done):
            i, j = min(done.tolist(), key=lambda ij: total[ij[0], ij[1]])
            return [*paths[i], j], step + 1
        order = np.lexsort((total.ravel(), -(RIGHT_MOVES * right - total).ravel()))
        kept: list[int] = []
        seen: set[bytes] = set()
        flat = children.reshape(-1, m)
        for k in order:
            key = flat[k].tobytes()
            if key in seen:
                continue
            seen.add(key)
            kept.append(int(k))
            if len(kept) == width:
                break
        rows, cols = np.divmod(np.array(kept), lib.perms.shape[0])
        states = flat[kept]
        lengths = total.ravel()[kept]
        paths = [[*paths[r], int(c)] for r, c in zip(rows.tolist(), cols.tolist(), strict=True)]
    return None, 4 * m


def solve_commutators(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    max_nodes: int | None = None,
    deadline: float | None = None,
    time_limit: float | None = None,
) -> SearchResult:
    """Solve one state of an NxNxN cube with the competition's moves (:func:`cube_size`), any
    goal: the small cube inside by its group solver, then every
    wing and centre orbit by 3-cycles (the module's docstring). Stops with ``"time limit"``
    where ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`) or ``time_limit``
    seconds pass first (checked between orbits); ``max_nodes`` bounds the small cube's sifts.
    ``nodes_generated`` counts the beams' children; an orbit no beam solves (its pieces as no
    moves leave them: a wing turned over) ends with ``"exhausted"``. Raises :class:`PuzzleError`
    for another puzzle and :class:`InvalidStateError` for labels the goal has not on the small
    cube's stickers, or a small cube its moves cannot reach."""
    from puzzlezero.classic.group import solve_group

    started = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=started)
    n = cube_size(puzzle)
    if n is None:
        raise PuzzleError(
            f"{puzzle.name}: the commutator solver takes an NxNxN cube with the competition's moves "
            "(f0.., r0.., d0.., then their inverses: puzzlezero definition family cube_N/N/N)"
        )
    state = np.asarray(state, dtype=puzzle.dtype).reshape(-1)
    labels = np.asarray(getattr(puzzle, "labels", ()))  # a cube's: a PermutationPuzzle's
    goal = np.asarray(puzzle.goal()).reshape(-1)
    cube = _cube(n)
    small = _small_cube(cube.small, tuple(labels[goal[cube.core]].tolist()))
    if puzzle.is_goal(state[None])[0]:
        return SearchResult(True, (), 1, 0, clock.now() - started, "solved", cost=0.0)
    missing = sorted(set(labels[state[cube.core]].tolist()) - set(small.labels))
    if missing:
        raise InvalidStateError(f"{puzzle.name}: labels {missing} on the corners or middle edges")
    sub = np.array([small.labels.index(x) for x in labels[state[cube.core]]], dtype=small.dtype)
    first = solve_group(small, sub, max_nodes=max_nodes, deadline=None if np.isinf(stop) else stop)
    if not first.solved:
        return SearchResult(False, (), first.nodes_generated, 0, clock.now() - started, first.status)
    word: list[int] = []
    for a in first.actions:  # the small cube's f{i}, r{i}, d{i} and inverses: this cube's slices
        name = small.action_names[a]
        base, prime = name.rstrip("'"), name.endswith("'")
        big = f"{base[0]}{cube.layers[int(base[1:])]}" + ("'" if prime else "")
        word.append(cube.names.index(big))
    current = state[_word_perm(cube.perms, word)]
    nodes, solved = first.nodes_generated, cube.core
    spent: list[float] = []  # seconds of each centre orbit solved with set-ups of SETUP_LENGTH
    centres = sum(o.piece_size == 1 for o in cube.orbits)
    for k, orbit in enumerate(cube.orbits):
        if ROUGH_GAIN and orbit.piece_size == 1 and (k == 0 or cube.orbits[k - 1].piece_size == 2):
            rough, current = _rough_centres(cube, current, goal, stop)  # before the centres' clock
            word += rough
        now = clock.now()
        if now > stop:
            return SearchResult(False, (), nodes, 0, now - started, "time limit")
        left = centres - max(0, k - (len(cube.orbits) - centres))  # centre orbits left
        # the wings always (they need the set-ups of three moves); the centres while they fit
        long = orbit.piece_size == 2 or not spent or now + 1.5 * left * float(np.mean(spent)) < stop
        found: tuple[_Library, list[int], list[int]] | None = None
        for setup_length in [SETUP_LENGTH] if long else [SHORT_SETUP, SETUP_LENGTH]:
            lib = _library(cube, orbit, solved, setup_length)
            here, there = current[orbit.positions], goal[orbit.positions]
            tries = [(w, t) for w in BEAM_WIDTHS for t in [[], *([t] for t in lib.turns)]]
            for width, turn in tries:  # an odd permutation of wings: one turn of a slice first
                path, steps = _solve_orbit(here[_word_perm(orbit.local, turn)], there, lib, width)
                nodes += steps * len(lib) * width
                if path is not None:
                    found = (lib, turn, path)
                    break
            if found is not None:
                break
        if found is None:
            return SearchResult(False, (), nodes, 0, clock.now() - started, "exhausted")
        lib, turn, path = found
        step: list[int] = []
        if orbit.piece_size == 1 and SHARED_GAIN:  # centres: each 3-cycle shared where it pays
            for i in path:
                shared = _shared(cube, k, lib, i, current, goal)
                current = current[_word_perm(cube.perms, shared)]
                step += shared
        else:
            step = turn + [a for i in path for a in lib.word(i)]
            current = current[_word_perm(cube.perms, step)]
        word += step
        solved = np.concatenate([solved, orbit.positions])
        if long and orbit.piece_size == 1:
            spent.append(clock.now() - now)
    actions = cube.reducer.reduce(word)
    after = state[_word_perm(cube.perms, actions)]
    if not puzzle.is_goal(after[None])[0]:  # pragma: no cover - every step is checked above
        raise RuntimeError(f"{puzzle.name}: the commutator solver's answer does not solve the state")
    if isinstance(puzzle, PermutationPuzzle) and puzzle.wildcards:  # up to the first state within them
        actions = tuple(puzzle.solved_prefix(state, actions))
    cost = float(puzzle.path_cost(actions))
    return SearchResult(
        True, tuple(actions), nodes, len(cube.orbits), clock.now() - started, "solved", cost=cost
    )
