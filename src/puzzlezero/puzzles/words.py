"""Words in a permutation puzzle's moves, reduced by the algebra of the moves alone.

A move of a permutation puzzle is a fixed permutation of the state's positions; its *images*
``img[a, x]`` say where the piece at ``x`` goes. :class:`MoveWords` groups the moves into families
(the powers of one move), learns which families commute, and rewrites any word as the same group
element, never longer nor costlier: runs of commuting families are gathered and each family's
exponent is summed modulo its order. The group solver builds its tables on it, and permutation
puzzles use it to shorten a search's path (``Puzzle.reduce_moves``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from puzzlezero.errors import PuzzleError

__all__ = ["MoveWords", "move_images"]

#: the most seams :meth:`MoveWords.join` keeps reduced (words of at most twice its window), all
#: forgotten at once when full: a group table's build joins the same ones again and again (a third
#: of its time goes to them without this), at some 60 MiB at most (``globe_6-8``'s build peaks at
#: 105 MiB with them, 45 MiB without)
SEAMS = 1 << 18


def move_images(perms: np.ndarray) -> np.ndarray:
    """The moves ``child = parent[perms[a]]`` as maps of positions: ``img[a, x]`` = where the piece
    at ``x`` goes."""
    img = np.empty_like(perms)
    rows = np.arange(perms.shape[0])[:, None]
    img[rows, perms] = np.arange(perms.shape[1])
    return img


class MoveWords:
    """Words in the generating moves (tuples of action ids), reduced in the group they generate.

    The moves fall into *families*, the powers of one move (``R``, ``R'`` and, on cube3htm, ``R2``
    are powers of ``R``). :meth:`reduce` gathers runs of moves whose families commute pairwise
    (``U`` and ``D``), adds up each family's exponent modulo its order and writes each sum as the
    cheapest word of that family's moves: ``R R R`` -> ``R'``, ``R R'`` -> nothing, ``U D U'`` ->
    ``D``; on the half-turn cube ``R R`` -> ``R2``. The result is the same group element.
    """

    def __init__(self, images: np.ndarray, actions: Sequence[int], costs: np.ndarray) -> None:
        self.actions = tuple(actions)
        self._seams: dict[tuple[int, ...], tuple[int, ...]] = {}  # :meth:`join`'s, reduced
        n = images.shape[1]
        ident = np.arange(n)
        order: dict[int, int] = {}
        for a in self.actions:
            cur, k = images[a], 1
            while not (cur == ident).all():
                cur, k = images[a][cur], k + 1
            order[a] = k
        if any(k == 1 for k in order.values()):
            raise PuzzleError("a generating move does nothing; leave it out of group_actions")
        self.family: dict[int, int] = {}  # action -> family id
        self.exponent: dict[int, int] = {}  # action -> its power of the family's generator
        gens: list[int] = []
        for a in sorted(self.actions, key=lambda x: (-order[x], x)):
            if a in self.family:
                continue
            f = len(gens)
            gens.append(a)
            powers = {images[a].tobytes(): 1}
            cur = images[a]
            for e in range(2, order[a]):
                cur = images[a][cur]
                powers[cur.tobytes()] = e
            for b in self.actions:
                power = powers.get(images[b].tobytes())
                if b not in self.family and power is not None:
                    self.family[b], self.exponent[b] = f, power
        self.order = [order[g] for g in gens]
        self.commute = [
            [bool((images[g][images[h]] == images[h][images[g]]).all()) for h in gens] for g in gens
        ]
        # per action: (family, exponent, the family's bit, the bits of the families it does not commute with)
        clash = [sum(1 << h for h in range(len(gens)) if not self.commute[f][h]) for f in range(len(gens))]
        self._syllable = {
            a: (self.family[a], self.exponent[a], 1 << self.family[a], clash[self.family[a]])
            for a in self.actions
        }
        # cheapest word of each exponent of each family (a shortest path on the cycle Z_order)
        self.emit: list[list[tuple[int, ...]]] = []
        for f, k in enumerate(self.order):
            members = sorted((a for a in self.actions if self.family[a] == f), key=lambda a: (costs[a], a))
            best: list[tuple[float, tuple[int, ...]] | None] = [None] * k
            best[0] = (0.0, ())
            changed = True
            while changed:
                changed = False
                for e in range(k):
                    if best[e] is None:
                        continue
                    c, w = best[e]  # type: ignore[misc]
                    for a in members:
                        t = (e + self.exponent[a]) % k
                        cand = (c + float(costs[a]), (*w, a))
                        old = best[t]
                        if old is None or (cand[0], len(cand[1])) < (old[0], len(old[1])):
                            best[t], changed = cand, True
            self.emit.append([w for _, w in best])  # type: ignore[misc]

    def reduce(self, word: Sequence[int]) -> tuple[int, ...]:
        """The word reduced (see the class docstring): the same element, never longer."""
        syllable, order, emit = self._syllable, self.order, self.emit
        blocks: list[dict[int, int]] = []  # runs of pairwise commuting families: family -> exponent
        masks: list[int] = []  # the families of each run, as bits
        for a in word:
            f, e, bit, others = syllable[a]
            if masks and not masks[-1] & others:  # f commutes with the whole last run
                top = blocks[-1]
                v = (top.get(f, 0) + e) % order[f]
                if v:
                    top[f] = v
                    masks[-1] |= bit
                else:
                    del top[f]
                    masks[-1] &= ~bit
                    if not top:
                        blocks.pop()
                        masks.pop()
            else:
                blocks.append({f: e})
                masks.append(bit)
        out: list[int] = []
        for block in blocks:
            for f in sorted(block) if len(block) > 1 else block:
                out.extend(emit[f][block[f]])
        return tuple(out)

    def join(self, left: tuple[int, ...], right: tuple[int, ...], window: int = 4) -> tuple[int, ...]:
        """``left + right`` for reduced words, reduced where they meet: inverse moves at the seam
        cancel (``... R U`` + ``U' R' ...``), then the ``window`` moves either side are reduced.
        The same element as :meth:`reduce` of the concatenation, in time independent of length."""
        i, j = len(left), 0
        syl = self._syllable
        while i and j < len(right):
            (f, e, _, _), (g, h, _, _) = syl[left[i - 1]], syl[right[j]]
            if f != g or (e + h) % self.order[f]:
                break
            i, j = i - 1, j + 1
        cut, end = max(0, i - window), min(len(right), j + window)
        seam = left[cut:i] + right[j:end]
        reduced = self._seams.get(seam)
        if reduced is None:
            reduced = self.reduce(seam)
            if len(self._seams) >= SEAMS:
                self._seams.clear()
            self._seams[seam] = reduced
        return left[:cut] + reduced + right[end:]

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_seams": {}}  # a copy (to a worker process) starts without them

    def inverse(self, word: Sequence[int]) -> tuple[int, ...]:
        """The inverse word (reversed, each move inverted), reduced."""
        out: list[int] = []
        for a in reversed(word):
            f = self.family[a]
            out.extend(self.emit[f][-self.exponent[a] % self.order[f]])
        return self.reduce(out)
