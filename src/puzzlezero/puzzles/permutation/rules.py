"""A permutation puzzle made from its definition: every move one gather, goals of labels.

A state is ``N`` small integers, the indices of the goal's labels (``A;A;B;...`` reads as
``0 0 1 ...`` in the order the labels first appear in the goal). A move ``a`` maps a batch of
states ``s[B, N]`` to ``s[:, perms[a]]``; :meth:`PermutationPuzzle.expand` makes all ``A`` children
of ``B`` states as one gather ``s[:, perms]`` (``[B, A, N]``). A state is solved when at most
``wildcards`` positions differ from the goal.

Text: a state is its labels joined by ``;`` (``A;B;A;...``, as the Santa 2023 competition's files
write them), or separated by spaces, or a move sequence applied to the goal (``f0 r1' d0``).
Moves are separated by spaces or ``.`` (the competition's ``f0.-r1.d0``); ``-m`` and ``m'`` both
name the inverse of ``m``. A state is checked against the goal orbit by orbit: every orbit of the
moves (the positions a piece can reach) must hold the goal's labels, as many of each, or no
sequence of moves solves it (:class:`~puzzlezero.errors.InvalidStateError` says which labels and
where).

>>> from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle
>>> p = PermutationPuzzle(Definition.from_dict({"format": "puzzlezero-permutation/1", "name": "tri",
...     "positions": 3, "moves": {"t": [1, 2, 0]}, "goal": "A;B;C"}))
>>> p.format(p.apply_moves(p.goal(), p.parse_moves("t")))
'B;C;A'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidMoveError, InvalidStateError, PuzzleError
from puzzlezero.puzzles import base, walks
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.permutation.definition import Definition
from puzzlezero.puzzles.permutation.symmetry import Symmetry, symmetries
from puzzlezero.puzzles.words import MoveWords, move_images

__all__ = ["PermutationPuzzle"]

_SEPARATORS = re.compile(r"[\s.]+")


class PermutationPuzzle(Puzzle):
    """A puzzle whose moves are fixed permutations of its positions, made from a
    :class:`~puzzlezero.puzzles.permutation.definition.Definition`."""

    json_key = "state"

    def __init__(self, definition: Definition, *, from_file: bool = False) -> None:
        self.definition = definition
        self.name = definition.name
        #: defined by a file (pickled as its definition) rather than registered with the package
        self.from_file = from_file
        self.action_names = definition.move_names
        self.default_scramble_depth = definition.scramble_depth
        self.wildcards = definition.wildcards
        labels: dict[str, int] = {}
        for lab in definition.goal:
            labels.setdefault(lab, len(labels))
        #: the goal's labels, index = value in a state
        self.labels: tuple[str, ...] = tuple(labels)
        self._label_index = labels
        self.num_values = len(labels)
        self.dtype = np.dtype(np.uint8 if len(labels) <= 256 else np.uint16)
        self._goal = np.array([labels[x] for x in definition.goal], dtype=self.dtype)
        self._goal.flags.writeable = False
        self.perms = np.ascontiguousarray(definition.perms, dtype=np.intp)
        self.perms.flags.writeable = False
        self._inverse = np.array(definition.inverse, dtype=np.int64)
        self._inverse.flags.writeable = False
        #: the symmetries its drawing's geometry suggests and its moves and goal bear out
        self._symmetries: dict[str, Symmetry] = {
            sym.name: sym
            for sym in symmetries(
                definition.drawing, self.perms, np.asarray(definition.costs), self._goal, self.num_values
            )
        }
        #: its images (:mod:`.symmetry`): the globes' turned, upside down and mirrored
        self.image_names: tuple[str, ...] = tuple(self._symmetries)

    # ---- the contract --------------------------------------------------------------------------
    @property
    def state_shape(self) -> tuple[int, ...]:
        return (self.definition.positions,)

    @property
    def inverse_action(self) -> np.ndarray:
        return self._inverse

    def _action_costs(self) -> Sequence[float]:
        return self.definition.costs

    def goal(self) -> np.ndarray:
        return self._goal.copy()

    def is_goal(self, states: np.ndarray) -> np.ndarray:
        flat = states.reshape(states.shape[0], self.definition.positions)
        if not self.wildcards:
            return np.all(flat == self._goal[None, :], axis=1)
        return np.count_nonzero(flat != self._goal[None, :], axis=1) <= self.wildcards

    def expand(self, states: np.ndarray) -> np.ndarray:
        # np.take gives the children C-contiguous ([:, perms] would lay them out strided, and
        # every reshape of them would copy)
        return np.take(states.reshape(states.shape[0], self.definition.positions), self.perms, axis=1)

    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        flat = states.reshape(states.shape[0], self.definition.positions)
        rows = np.arange(flat.shape[0])[:, None]
        return flat[rows, self.perms[np.asarray(actions, dtype=np.intp)]]

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        # a permutation may leave a state unchanged where its moved positions hold equal labels
        return self.moved(states, self.expand(states))

    # ---- training walks ---------------------------------------------------------------------
    def random_walks(self, rng: np.random.Generator, n: int, depth: walks.Depth) -> np.ndarray:
        """Non-backtracking walks (see :meth:`Puzzle.random_walks`) in a numba kernel that checks
        only the positions each move changes, a step at a time, instead of making every child."""
        return self._walks(rng, n, depth)[0]

    def walks_with_undo(
        self, rng: np.random.Generator, n: int, depth: walks.Depth
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`random_walks` with their costs and the move undoing each one's last step (see
        :meth:`Puzzle.walks_with_undo`), from the same kernel."""
        if self.uniform_cost is None:  # unequal costs: the generic walk adds them up
            return super().walks_with_undo(rng, n, depth)
        states, depths, last = self._walks(rng, n, depth)
        undo = np.where(last >= 0, self._inverse[np.maximum(last, 0)], -1)
        return states, depths * self.uniform_cost, undo

    def _walks(
        self, rng: np.random.Generator, n: int, depth: walks.Depth, chunk: int = 8192
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(states, depths, last)``: the walks, their lengths and each one's last move (``-1``:
        none); one uint32 word of ``rng`` a step, ``chunk`` walks at a time."""
        from puzzlezero.puzzles.permutation.walk import random_walks  # numba: only when needed

        depths = walks.walk_depths(self, rng, n, depth)
        states = self.goals(n).reshape(n, self.definition.positions)
        last = np.full(n, -1, dtype=np.int64)
        support, size = self._supports
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            longest = int(depths[lo:hi].max(initial=0))
            words = rng.integers(0, 2**32, size=(hi - lo, longest), dtype=np.uint32)
            random_walks(
                states[lo:hi], depths[lo:hi], words, self.perms, support, size, self._inverse, last[lo:hi]
            )
        return states.reshape((n, *self.state_shape)), depths, last

    @cached_property
    def _supports(self) -> tuple[np.ndarray, np.ndarray]:
        from puzzlezero.puzzles.permutation.walk import supports

        return supports(self.perms)

    def move_permutations(self) -> np.ndarray:
        """``intp[A, N]``: ``child = parent[perm[a]]`` (the group solver's view of the moves)."""
        return self.perms

    # ---- orbits and validity -------------------------------------------------------------------
    @cached_property
    def orbits(self) -> tuple[np.ndarray, ...]:
        """The orbits of the moves on the positions: the places each piece can reach."""
        n = self.definition.positions
        parent = np.arange(n)

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = int(parent[x])
            return x

        for perm in self.perms:
            for i in np.flatnonzero(perm != np.arange(n)):
                a, b = find(int(i)), find(int(perm[i]))
                if a != b:
                    parent[max(a, b)] = min(a, b)
        roots = np.array([find(i) for i in range(n)])
        return tuple(np.flatnonzero(roots == r) for r in np.unique(roots))

    def validate(self, state: np.ndarray) -> None:
        flat = np.asarray(state).reshape(-1)
        if flat.shape != (self.definition.positions,):
            raise InvalidStateError(
                f"{self.name}: a state has {self.definition.positions} positions, got {flat.size}"
            )
        if flat.size and int(flat.max()) >= self.num_values:
            raise InvalidStateError(f"{self.name}: a state holds a value outside 0..{self.num_values - 1}")
        for orbit in self.orbits:
            have = np.bincount(flat[orbit], minlength=self.num_values)
            want = np.bincount(self._goal[orbit], minlength=self.num_values)
            if (have != want).any():
                lab = int(np.flatnonzero(have != want)[0])
                where = (
                    orbit.tolist()
                    if orbit.size <= 12
                    else f"{orbit[:12].tolist()[:-1]}... ({orbit.size} positions)"
                )
                raise InvalidStateError(
                    f"{self.name}: positions {where} hold {int(have[lab])} of label {self.labels[lab]!r} "
                    f"where the goal has {int(want[lab])}: no sequence of moves reaches the goal"
                )

    # ---- text ----------------------------------------------------------------------------------
    def parse(self, text: str) -> np.ndarray:
        if not isinstance(text, str):
            raise InvalidStateError(f"{self.name}: a state is text, got {type(text).__name__}")
        body = text.strip()
        n = self.definition.positions
        if ";" in body or n == 1:
            tokens = [t.strip() for t in body.split(";")]
        else:
            tokens = body.split()
            if len(tokens) != n or any(t not in self._label_index for t in tokens):
                try:
                    moves = self.parse_moves(body)
                except InvalidMoveError as exc:
                    raise InvalidStateError(
                        f"{self.name}: a state is {n} labels joined by ';' (labels: "
                        f"{', '.join(self.labels[:20])}{', ...' if len(self.labels) > 20 else ''}) "
                        f"or moves from the goal; {exc}"
                    ) from None
                return self.apply_moves(self.goal(), moves)
        if len(tokens) != n:
            raise InvalidStateError(f"{self.name}: a state has {n} labels, got {len(tokens)}")
        out = np.empty(n, dtype=self.dtype)
        for i, tok in enumerate(tokens):
            v = self._label_index.get(tok)
            if v is None:
                raise InvalidStateError(
                    f"{self.name}: unknown label {tok!r} at position {i}; the goal's labels are "
                    f"{', '.join(self.labels[:20])}{', ...' if len(self.labels) > 20 else ''}"
                )
            out[i] = v
        self.validate(out)
        return out

    def format(self, state: np.ndarray) -> str:
        return ";".join(self.labels[int(v)] for v in np.asarray(state).reshape(-1))

    def render_text(self, state: np.ndarray) -> str:
        from puzzlezero.puzzles.permutation.viewer import render_text

        return render_text(self, state)

    def to_svg(self, state: np.ndarray, size: int = 300) -> str:
        from puzzlezero.puzzles.permutation.viewer import to_svg

        return to_svg(self, state, size)

    @cached_property
    def _move_index(self) -> dict[str, int]:
        return {m: a for a, m in enumerate(self.action_names)}

    def parse_moves(self, text: str | Sequence[str]) -> list[int]:
        """Moves by name, separated by spaces or ``.``; ``-m`` or ``m'`` for the inverse of ``m``."""
        tokens = [t for t in _SEPARATORS.split(text) if t] if isinstance(text, str) else list(text)
        index = self._move_index
        out: list[int] = []
        for tok in tokens:
            a = index.get(tok)
            if a is None and tok.startswith("-") and tok[1:] in index:
                a = int(self._inverse[index[tok[1:]]])
            if a is None and tok.endswith("'") and tok[:-1] in index:
                a = int(self._inverse[index[tok[:-1]]])
            if a is None:
                shown = " ".join(self.action_names[:40]) + (" ..." if len(self.action_names) > 40 else "")
                raise InvalidMoveError(f"unknown move {tok!r} for {self.name}; moves are {shown}")
            out.append(a)
        return out

    def santa_moves(self, actions: Sequence[int]) -> str:
        """The moves as the Santa 2023 competition writes a solution: names joined by ``.``, the
        inverse of an earlier move ``m`` written ``-m`` (``f0'`` -> ``-f0``)."""
        out = []
        for a in actions:
            a, inv = int(a), int(self._inverse[int(a)])
            out.append(f"-{self.action_names[inv]}" if inv < a else self.action_names[a])
        return ".".join(out)

    def solved_prefix(
        self, state: np.ndarray, actions: Sequence[int], wildcards: int | None = None
    ) -> list[int]:
        """``actions`` up to the first state along them (``state`` itself first) that differs from
        the goal in at most ``wildcards`` positions (default: the puzzle's own); all of them where
        no state does. A solution to the exact goal becomes one to a goal with wildcards."""
        w = self.wildcards if wildcards is None else int(wildcards)
        acts = [int(a) for a in actions]
        path = np.empty((len(acts) + 1, self.definition.positions), dtype=self.dtype)
        path[0] = np.asarray(state).reshape(-1)
        for t, a in enumerate(acts):
            path[t + 1] = path[t][self.perms[a]]
        hit = np.flatnonzero(np.count_nonzero(path != self._goal[None, :], axis=1) <= w)
        return acts[: int(hit[0])] if hit.size else acts

    # ---- algebra -------------------------------------------------------------------------------
    @cached_property
    def words(self) -> MoveWords:
        """The moves' algebra (:class:`~puzzlezero.puzzles.words.MoveWords`)."""
        return MoveWords(move_images(self.perms), range(self.num_actions), self.action_costs)

    def reduce_moves(self, actions: Sequence[int]) -> list[int]:
        """Inverse moves cancelled, powers of a move merged, commuting moves gathered (``f0 f2
        f0'`` -> ``f2``): the same permutation, never longer nor costlier."""
        return list(self.words.reduce([int(a) for a in actions]))

    # ---- images -------------------------------------------------------------------------------
    def image(self, name: str, state: np.ndarray, solution: Sequence[int]) -> np.ndarray:
        """The image ``name`` of ``state`` under one of its symmetries (:mod:`.symmetry`): its
        positions moved and its labels recoloured so that the goal stays the goal; exactly as far
        from it, ``solution`` not needed."""
        sym = self._symmetry(name)
        flat = np.asarray(state).reshape(1, self.definition.positions)
        return sym.image(flat).reshape(np.shape(state))

    def from_image(self, name: str, actions: Sequence[int]) -> list[int]:
        """A solution of the state from one of its image ``name``: each move read as the move it
        stands for (a ring turned the other way on a mirror image, another flip on a turned one)."""
        return self._symmetry(name).solution(actions)

    def _symmetry(self, name: str) -> Symmetry:
        try:
            return self._symmetries[name]
        except KeyError:
            raise PuzzleError(self._no_image(name)) from None

    def __reduce_ex__(self, protocol: Any) -> Any:
        """A puzzle defined by a file pickles as its definition (data), so that a process that
        never read the file rebuilds it; a puzzle registered with the package, as its name."""
        if self.from_file and base.REBUILD_FROM_DEFINITION is not None:
            return (base.REBUILD_FROM_DEFINITION, (self.definition.to_dict(),))
        return super().__reduce_ex__(protocol)
