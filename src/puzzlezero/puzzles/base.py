"""The puzzle contract: constants plus pure functions over batched NumPy arrays.

A state is a fixed-size ``uint8`` (or small integer) array of shape ``state_shape``; a batch of
states has a leading batch dimension ``[B, *state_shape]``. There is never a Python object per
state on a hot path. Every puzzle implements:

* ``goal()``                      -> ``[*state_shape]``, the canonical solved state.
* ``is_goal(states[B])``          -> ``bool[B]``.
* ``expand(states[B])``           -> ``[B, A, *state_shape]``: all children at once; a move that is
  impossible in a state (a tile at the border, a Sokoban wall) returns the parent unchanged, so every
  state has exactly ``num_actions`` children. ``legal_mask(states)`` says which moves really move.
* ``apply(states[B], actions[B])`` -> ``[B, *state_shape]``: one move per state.
* ``inverse_action[a]``            the move undoing ``a`` (``-1`` where there is none, Sokoban).
* ``scramble(rng, n, depth)``      backward scrambles from the goal (training states, test states).
* ``encode(states[B])``            -> ``float32[B, D]`` for networks, by the encoders the puzzle
  names in ``encoders`` (``"onehot"``, by default the plain one-hot over ``num_values`` values;
  boards add ``"grid"``, ``float32[B, C, H, W]`` planes for convolutional networks). The input's
  shape and size are functions beside the puzzle (:mod:`puzzlezero.puzzles.inputs`).
* ``keys(states[B])``              -> exact hashable keys (``np.void`` rows) for deduplication;
  ``hash64(states[B])`` -> ``uint64[B]`` a fast 64-bit hash.
* human text: ``parse(text) -> state`` (raises :class:`~puzzlezero.errors.InvalidStateError` with a
  specific message), ``format(state) -> str``, ``to_json(state) -> dict``, ``render_text(state)``,
  ``to_svg(state)``; moves: ``parse_moves(text) -> list[int]``, ``format_moves(actions) -> list[str]``,
  ``format_compact(actions)`` (as people write them: cubes join ``R R`` into ``R2``).

A new puzzle must write ``state_shape``, ``inverse_action``, ``goal``, ``expand``, ``parse`` and
``format``, and set ``action_names`` and ``num_values``; every other method has a default that is
right for it (``apply`` selects from ``expand``, ``to_svg`` draws ``render_text``, ...), which it may
replace with a faster or nicer one. ``docs/adding-a-puzzle.md`` walks through one in one file.

Costs: action ``a`` costs ``action_costs[a]`` (``float64[A]``, all positive); by default every
action costs ``move_cost`` (1), and ``uniform_cost`` is that one number (``None`` when the costs
differ), which the searches and training objectives use as their fast path. A path's cost is
``path_cost(actions)``, the sum of its actions' costs. Later parts of the project (policy/Q heads,
MCTS, symmetry augmentation, pattern databases) use these same functions; symmetries are
``symmetries(states) -> [S, B, *state_shape]`` where a puzzle offers them.

Goals as data: besides its goal a puzzle may name **sub-goals** (cube3: ``layer1``, ``layer2``; the
sliding puzzles: ``row1``, ``rows2``). Each is a :class:`Goal`, a batched predicate
``states[B] -> bool[B]`` with a name; ``goal_predicates()`` lists them in the order a layer-by-layer
solve meets them, ``"solved"`` (= ``is_goal``) last, and ``goal_named(name)`` looks one up.
Searches, DAVI and the benchmark take a goal (a name or any ``is_goal``-shaped function) and
default to ``is_goal``; :meth:`Puzzle.goal_test` turns either into the function. A puzzle adds
sub-goals by returning them from ``_subgoals()``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidMoveError, PuzzleError, UnknownNameError
from puzzlezero.puzzles import walks
from puzzlezero.puzzles.inputs import OneHot
from puzzlezero.puzzles.walks import Depth

__all__ = ["Goal", "GoalTest", "Puzzle", "SOLVED"]

#: a goal test: ``states[B, *state_shape] -> bool[B]``
GoalTest = Callable[[np.ndarray], np.ndarray]
#: the name of every puzzle's own goal (``Puzzle.is_goal``)
SOLVED = "solved"

_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class Goal:
    """A named goal: a batched predicate ``goal(states[B, *state_shape]) -> bool[B]``.

    Either ``positions`` (flat indices into a state) with ``values`` (what they must hold: the
    goal is met where ``states.reshape(B, -1)[:, positions] == values``), or ``test``, any
    ``is_goal``-shaped function (the puzzle's own goal, tests no fixed cells describe). A goal made
    of positions also tells a cheap heuristic what to count (``misplaced``, see
    :meth:`misplaced`).

    Example:
        >>> import numpy as np
        >>> from puzzlezero import make
        >>> cube = make("cube3")
        >>> layer1 = cube.goal_named("layer1")
        >>> layer1(cube.goals(1)).tolist(), layer1(cube.parse("D R' D'")[None]).tolist()
        ([True], [False])
    """

    name: str
    description: str
    positions: np.ndarray | None = field(default=None, repr=False, compare=False)
    values: np.ndarray | None = field(default=None, repr=False, compare=False)
    test: GoalTest | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.test is None) == (self.positions is None):
            raise PuzzleError(f"goal {self.name!r}: give either a test or positions with values")
        if self.positions is not None:
            pos = np.asarray(self.positions, dtype=np.intp).reshape(-1)
            vals = np.asarray(self.values).reshape(-1)
            if self.values is None or vals.shape != pos.shape:
                raise PuzzleError(f"goal {self.name!r}: needs one value per position")
            object.__setattr__(self, "positions", pos)
            object.__setattr__(self, "values", vals)

    def __call__(self, states: np.ndarray) -> np.ndarray:
        """``bool[B]``: which of ``states[B, *state_shape]`` meet the goal."""
        if self.test is not None:
            return np.asarray(self.test(states), dtype=bool)
        flat = states.reshape(states.shape[0], -1)
        assert self.values is not None  # __post_init__: a goal without a test has positions and values
        return np.all(flat[:, self.positions] == self.values[None, :], axis=1)

    def misplaced(self, states: np.ndarray) -> np.ndarray:
        """``float32[B]``: how many of the goal's positions do not hold their value (0 exactly at
        the goal). Only for goals made of positions (:class:`PuzzleError` otherwise)."""
        if self.positions is None:
            raise PuzzleError(f"goal {self.name!r} is a test, not a set of positions: nothing to count")
        flat = states.reshape(states.shape[0], -1)
        assert self.values is not None  # __post_init__: positions come with values
        return np.count_nonzero(flat[:, self.positions] != self.values[None, :], axis=1).astype(np.float32)


#: how a registered puzzle pickles: ``(make, (name,))`` for the instance the registry's ``make``
#: returns, else ``None``; set by :mod:`puzzlezero.registry` (which sits above this module) when
#: it is imported, so that the rules never import the registry
REBUILD_BY_NAME: Callable[[Puzzle], tuple[Any, ...] | None] | None = None
#: how a puzzle defined by a file (a permutation puzzle's definition, read as data) is rebuilt in
#: another process: ``f(native definition dict) -> the registry's instance``, registering it
#: there first; set by :mod:`puzzlezero.registry` like :data:`REBUILD_BY_NAME`
REBUILD_FROM_DEFINITION: Callable[[dict[str, Any]], Puzzle] | None = None


class Puzzle(ABC):
    """Base class of every puzzle. Subclasses set the class constants and implement the abstract
    methods; all methods take and return batched NumPy arrays unless they deal in human text.

    Example:
        >>> import numpy as np
        >>> from puzzlezero import make
        >>> p = make("cube3")
        >>> s = p.scramble(np.random.default_rng(0), 4, depth=3)
        >>> p.expand(s).shape
        (4, 12, 54)
    """

    #: registry name, e.g. ``"cube3"``
    name: str = ""
    #: names of the actions in the benchmarks' notation, index = action id
    action_names: tuple[str, ...] = ()
    #: cost of every move (the default of :attr:`action_costs`)
    move_cost: float = 1.0
    #: paper's maximum scramble depth K for training states (DeepCubeA Methods)
    default_scramble_depth: int = 30
    #: dtype of a state
    dtype: np.dtype = np.dtype(np.uint8)
    #: key in ``to_json`` that holds the state (``facelets``, ``tiles``, ``lights``, ``grid``)
    json_key: str = "state"
    #: the most steps a non-backtracking walk can take (Lights Out: every cell pressed once);
    #: ``None``: no bound (see :func:`.walks.walk_depths`)
    max_walk_length: int | None = None

    # ---- shape -------------------------------------------------------------------------------
    @property
    def num_actions(self) -> int:
        return len(self.action_names)

    @cached_property
    def action_costs(self) -> np.ndarray:
        """``float64[A]`` (read-only): the cost of each action, ``move_cost`` for all by default.
        Subclasses with unequal costs override :meth:`_action_costs`; costs must be finite and
        positive (:class:`PuzzleError` otherwise)."""
        costs = np.array(self._action_costs(), dtype=np.float64).reshape(-1)
        if costs.shape != (self.num_actions,) or not np.all(np.isfinite(costs) & (costs > 0)):
            raise PuzzleError(
                f"{self.name or type(self).__name__}: action costs must be {self.num_actions} finite "
                f"positive numbers, got {costs.tolist()}"
            )
        costs.flags.writeable = False
        return costs

    def _action_costs(self) -> Sequence[float] | np.ndarray:
        """The costs :attr:`action_costs` checks and freezes (default: ``move_cost`` for every action)."""
        return np.full(self.num_actions, self.move_cost)

    @cached_property
    def uniform_cost(self) -> float | None:
        """The cost of every action when they all cost the same (the searches' fast path: one
        number added to ``g``), ``None`` when the costs differ."""
        costs = self.action_costs
        return float(costs[0]) if np.all(costs == costs[0]) else None

    @property
    def unit_costs(self) -> bool:
        """Every action costs exactly 1, so a path's cost is its number of moves."""
        return self.uniform_cost == 1.0

    def path_cost(self, actions: Sequence[int] | np.ndarray) -> float:
        """The cost of an action sequence: the sum of its actions' costs (0 for no action)."""
        acts = np.asarray(actions, dtype=np.int64).reshape(-1)
        if self.uniform_cost is not None:
            return float(acts.size * self.uniform_cost)
        return float(self.action_costs[acts].sum())

    @property
    @abstractmethod
    def state_shape(self) -> tuple[int, ...]:
        """Shape of one state."""

    @property
    @abstractmethod
    def inverse_action(self) -> np.ndarray:
        """``int64[A]``: the action undoing each action, ``-1`` where none exists."""

    # ---- rules ---------------------------------------------------------------------------------
    @abstractmethod
    def goal(self) -> np.ndarray:
        """The canonical solved state ``[*state_shape]``."""

    def goals(self, n: int) -> np.ndarray:
        """``n`` copies of the goal, ``[n, *state_shape]``."""
        return np.broadcast_to(self.goal(), (n, *self.state_shape)).copy()

    def is_goal(self, states: np.ndarray) -> np.ndarray:
        """``bool[B]``: which states are solved (default: equal to ``goal()``)."""
        goal = self.goal().reshape(1, -1)
        return np.all(states.reshape(states.shape[0], goal.shape[1]) == goal, axis=1)

    # ---- goals as data -------------------------------------------------------------------------
    def _subgoals(self) -> Sequence[Goal]:
        """The puzzle's sub-goals, in the order a layer-by-layer solve meets them (default: none).
        Each should hold at the goal, and a later one should imply an earlier one (cube3: two
        layers solved include the first)."""
        return ()

    def goal_predicates(self) -> dict[str, Goal]:
        """Every goal by name: the sub-goals in solving order, then ``"solved"`` (:meth:`is_goal`)."""
        own = Goal(SOLVED, f"{self.name or type(self).__name__} solved", test=self.is_goal)
        table = {g.name: g for g in self._subgoals()}
        if SOLVED in table:
            raise PuzzleError(f"{self.name}: a sub-goal may not be called {SOLVED!r}")
        table[SOLVED] = own
        return table

    def goal_named(self, name: str) -> Goal:
        """The goal called ``name``; an unknown name raises :class:`UnknownNameError` listing them."""
        table = self.goal_predicates()
        try:
            return table[name]
        except (KeyError, TypeError):
            raise UnknownNameError(
                f"unknown goal {name!r} for {self.name or type(self).__name__}; "
                f"choose one of {', '.join(table)}"
            ) from None

    def goal_test(self, goal: str | GoalTest | None = None) -> GoalTest:
        """The function a search or objective calls: :meth:`is_goal` for ``None``, the goal of
        that name for a string, ``goal`` itself for a callable."""
        if goal is None or goal == SOLVED:
            return self.is_goal
        if isinstance(goal, str):
            return self.goal_named(goal)
        if not callable(goal):
            raise PuzzleError(f"a goal is a name or a function states[B] -> bool[B], got {goal!r}")
        return goal

    @abstractmethod
    def expand(self, states: np.ndarray) -> np.ndarray:
        """All children ``[B, A, *state_shape]``; an impossible move gives the parent back."""

    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Apply one action per state: ``[B, *state_shape]``, ``int[B]`` -> ``[B, *state_shape]``.

        Subclasses override with a direct gather; this default expands and selects.
        """
        children = self.expand(states)
        return children[np.arange(states.shape[0]), np.asarray(actions, dtype=np.int64)]

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        """``bool[B, A]``: which moves change the state."""
        return self.moved(states, self.expand(states))

    def moved(self, states: np.ndarray, children: np.ndarray) -> np.ndarray:
        """``bool[B, A]``: which of the states' ``children`` (:meth:`expand`'s ``[B, A, ...]``, or
        flattened to ``[B * A, ...]``) differ from their parent, for callers that have expanded
        anyway (an impossible move gives the parent back)."""
        b = states.shape[0]
        return np.any(children.reshape(b, self.num_actions, -1) != states.reshape(b, 1, -1), axis=2)

    def apply_moves(self, state: np.ndarray, actions: Sequence[int]) -> np.ndarray:
        """Apply a sequence of actions to one state; returns the new state."""
        s = np.asarray(state, dtype=self.dtype)[None]
        for a in actions:
            s = self.apply(s, np.array([a]))
        return s[0]

    # ---- training walks (the functions of :mod:`puzzlezero.puzzles.walks`; a puzzle with a walk
    # of its own replaces the method, and the other walks go through it) ------------------------
    def scramble(self, rng: np.random.Generator, n: int, depth: Depth) -> np.ndarray:
        """``n`` states made by applying random moves backwards from the goal.

        ``depth`` is an int (every state gets that many moves), an ``int[n]`` array, or a
        ``(lo, hi)`` pair meaning uniform in ``[lo, hi]`` (DeepCubeA: ``(1, K)``). Batched: all states
        are moved together, each stopping at its own depth. Puzzles with irreversible moves
        (Sokoban) override this. See :func:`.walks.scramble`.
        """
        return walks.scramble(self, rng, n, depth)

    def random_walks(self, rng: np.random.Generator, n: int, depth: Depth) -> np.ndarray:
        """``n`` non-backtracking random walks from the goal (:func:`.walks.random_walks`). Puzzles
        whose moves cannot be undone (Sokoban) override this with their own scramble."""
        return walks.random_walks(self, rng, n, depth)

    def walks_with_undo(
        self, rng: np.random.Generator, n: int, depth: Depth
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(states, cost float64[n], undo int64[n])``: the walks and the move undoing each one's
        last step (:func:`.walks.walks_with_undo`)."""
        return walks.walks_with_undo(self, rng, n, depth)

    def walks_with_undo_sets(
        self, rng: np.random.Generator, n: int, depth: Depth
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(states, undo float32[n, A])``: the undo labels as distributions over the actions
        (:func:`.walks.walks_with_undo_sets`)."""
        return walks.walks_with_undo_sets(self, rng, n, depth)

    # ---- networks (:mod:`puzzlezero.puzzles.inputs` derives the input's shape and size) ---------
    #: number of distinct values per state element for the default one-hot encoding
    num_values: int = 2

    @property
    def encoders(self) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
        """Named encoders ``states[B] -> float32[B, D]`` (or ``[B, C, H, W]`` for ``"grid"``);
        ``"onehot"`` is the paper's, by default the plain one-hot over :attr:`num_values` values
        (:class:`~puzzlezero.puzzles.inputs.OneHot`). A puzzle with other inputs returns its own."""
        return {"onehot": OneHot(self.num_values)}

    def encode(self, states: np.ndarray, encoding: str = "onehot") -> np.ndarray:
        """``states[B]`` as the network's input, by the encoder named ``encoding``; an unknown
        name raises :class:`~puzzlezero.errors.UnknownNameError` naming the puzzle's encodings."""
        encoders = self.encoders
        try:
            fn = encoders[encoding]
        except KeyError:
            raise UnknownNameError(
                f"unknown encoding {encoding!r} for {self.name}; choose one of {sorted(encoders)}"
            ) from None
        return fn(states)

    # ---- hashing ------------------------------------------------------------------------------
    def keys(self, states: np.ndarray) -> np.ndarray:
        """Exact keys, one ``np.void`` row per state (usable with ``np.unique`` and dicts)."""
        flat = np.ascontiguousarray(states.reshape(states.shape[0], -1))
        return flat.view(np.dtype((np.void, flat.shape[1] * flat.itemsize))).ravel()

    def hash64(self, states: np.ndarray) -> np.ndarray:
        """A fast 64-bit hash ``uint64[B]`` (collisions are possible but very rare)."""
        flat = np.ascontiguousarray(states.reshape(states.shape[0], -1))
        nbytes = flat.shape[1] * flat.itemsize
        pad = (-nbytes) % 8
        raw = flat.view(np.uint8).reshape(flat.shape[0], nbytes)
        if pad:
            raw = np.concatenate([raw, np.zeros((raw.shape[0], pad), np.uint8)], axis=1)
        words = raw.view(np.uint64)
        h = np.full(words.shape[0], 0xCBF29CE484222325, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for j in range(words.shape[1]):
                h = (h ^ words[:, j]) * _HASH_MUL
                h ^= h >> np.uint64(29)
        return h

    def unique(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Deduplicate a batch: returns ``(unique_states, index_of_first_occurrence)``."""
        _, first = np.unique(self.keys(states), return_index=True)
        first.sort()
        return states[first], first

    # ---- human text ---------------------------------------------------------------------------
    @abstractmethod
    def parse(self, text: str) -> np.ndarray:
        """Read a state from human text; raise ``InvalidStateError`` with a specific reason."""

    @abstractmethod
    def format(self, state: np.ndarray) -> str:
        """The text ``parse`` reads back."""

    def to_json(self, state: np.ndarray) -> dict[str, Any]:
        """JSON-able description, always with the key ``json_key``. Default: ``{json_key:
        format(state)}``, which is also what a benchmark case under that key holds."""
        return {self.json_key: self.format(state)}

    def render_text(self, state: np.ndarray) -> str:
        """A multi-line picture for a terminal."""
        return self.format(state)

    def to_svg(self, state: np.ndarray, size: int = 300) -> str:
        """An SVG drawing (a standalone ``<svg>`` element). Implementations import their drawing
        code from a viewer module beside the puzzle (``cube/viewer.py``...), lazily. Default:
        :meth:`render_text` in a monospaced box (``text_viewer.py``), so that every puzzle has a
        board on the web page."""
        from puzzlezero.puzzles.text_viewer import text_svg

        return text_svg(self.render_text(state), size, label=self.name or type(self).__name__)

    def validate(self, state: np.ndarray) -> None:  # noqa: B027 (optional hook: default accepts)
        """Raise ``InvalidStateError`` if ``state`` is not a legal position (default: accept)."""

    def parse_moves(self, text: str | Sequence[str]) -> list[int]:
        """Read a move sequence (space separated names or a list of names) into action ids."""
        tokens = text.split() if isinstance(text, str) else list(text)
        lookup = {n: i for i, n in enumerate(self.action_names)}
        out: list[int] = []
        for tok in tokens:
            if tok not in lookup:
                raise InvalidMoveError(
                    f"unknown move {tok!r} for {self.name}; moves are {' '.join(self.action_names)}"
                )
            out.append(lookup[tok])
        return out

    def format_moves(self, actions: Sequence[int]) -> list[str]:
        """Action ids -> move names in the benchmarks' notation."""
        return [self.action_names[int(a)] for a in actions]

    def format_compact(self, actions: Sequence[int]) -> list[str]:
        """Move names as people write them, which :meth:`parse_moves` reads back to a sequence
        reaching the same state. Default: :meth:`format_moves`; the cubes write two equal quarter
        turns as one half turn (``R R`` -> ``R2``)."""
        return self.format_moves(actions)

    def reduce_moves(self, actions: Sequence[int]) -> list[int]:
        """A sequence that acts on every state as ``actions`` does, never longer nor costlier, found
        by the puzzle's algebra alone (no search, no solver): the solver returns it in place of a
        search's path. Default: ``actions`` as they are; Lights Out drops presses made twice."""
        return [int(a) for a in actions]

    #: names of :meth:`image`: the same problem in other guises, whose solutions map back to
    #: solutions of the state (cubes: ``"inverse"``, ``"mirror"``, ``"inverse-mirror"``); none here
    image_names: tuple[str, ...] = ()
    #: the images of :attr:`image_names` made from a solution of the state (the cube's inverse);
    #: the others are made from the state alone, so a search without a first stage can take them
    solution_images: tuple[str, ...] = ()

    def image(self, name: str, state: np.ndarray, solution: Sequence[int]) -> np.ndarray:
        """The image ``name`` (one of :attr:`image_names`) of one ``state``, exactly as far from
        the goal, given any ``solution`` of it; :meth:`from_image` maps the image's solutions back
        (searched together by :mod:`puzzlezero.search.images`). Puzzles without images raise."""
        raise PuzzleError(self._no_image(name))

    def from_image(self, name: str, actions: Sequence[int]) -> list[int]:
        """A solution of the state, as long and as costly, from a solution ``actions`` of its
        :meth:`image` ``name``."""
        raise PuzzleError(self._no_image(name))

    def _no_image(self, name: str) -> str:
        have = ", ".join(self.image_names) or "none"
        return f"{self.name} has no image {name!r} (its images: {have})"

    def half_turn_length(self, actions: Sequence[int]) -> int | None:
        """The number of moves of :meth:`format_compact` for puzzles that have half turns (the
        cubes' half-turn metric), ``None`` for the others."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    def __reduce_ex__(self, protocol: Any) -> Any:
        """A registered puzzle (the instance ``make(name)`` returns) pickles as its name, so that a
        spawned process (label workers, web solver workers) rebuilds it from the registry, loading
        the plugin that registered it (:mod:`puzzlezero.plugins`); any other instance pickles as usual."""
        by_name = REBUILD_BY_NAME(self) if REBUILD_BY_NAME is not None else None
        return by_name if by_name is not None else super().__reduce_ex__(protocol)

    def __copy__(self) -> Puzzle:
        """A new instance with the same attributes (cached ones included), never the registered
        instance itself: ``copy.copy(make(name))`` may then be changed (a test replaces its
        ``hash64``) without changing what ``make(name)`` returns."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new
