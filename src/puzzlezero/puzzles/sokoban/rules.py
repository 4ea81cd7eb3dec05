"""Sokoban on an ``H x W`` grid (10x10 with 4 boxes in the Boxoban benchmarks), batched NumPy.

Every level differs, so a state carries its own walls and targets: ``uint8[H*W]``, row-major
(index ``row*W + col``, row 0 at the top), each cell a set of bit flags

=========  =====  ====================================================================
flag       value  text characters (standard Sokoban notation)
=========  =====  ====================================================================
``WALL``   1      ``#`` (nothing else may share a wall cell)
``TARGET`` 2      ``.`` target, ``*`` box on target, ``+`` agent on target
``BOX``    4      ``$`` box, ``*``
``AGENT``  8      ``@`` agent, ``+``
=========  =====  ====================================================================

and ``0`` is empty floor (`` ``). Actions ``U D L R`` (= DeepCubeA 0..3) step the agent one cell
up/down/left/right; stepping into a box pushes it when the cell beyond is free floor or a target,
otherwise (wall, box behind a box, box against a wall) the state is returned unchanged. Pushes
cannot be undone, so ``inverse_action`` is all ``-1``. A state is solved when every box stands on a
target (the agent may be anywhere): :meth:`Sokoban.is_goal`. Levels are closed: every border cell
is a wall, which keeps all neighbour indices of the agent on the board.

The network input (:meth:`Sokoban.encode_planes`) is the paper's four binary planes of ``H*W``:
agent, boxes, targets, walls; ``encode(states, "grid")`` gives the same planes as
``float32[B, 4, H, W]`` for the convolutional network. Training states come from :mod:`puzzlezero.puzzles.sokoban.generator`.

Example:
    >>> import numpy as np
    >>> from puzzlezero import make
    >>> p = make("sokoban")
    >>> s = p.parse("#####\\n#@$.#\\n#####")  # a 3x5 level, padded with walls to 10x10
    >>> bool(p.is_goal(p.apply(s[None], np.array([3])))[0])  # R pushes the box onto the target
    True
"""

from __future__ import annotations

import copy
import json
import textwrap
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles import walks
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.sokoban.cells import AGENT, BOX, TARGET, WALL, cell_name

__all__ = ["Sokoban", "WALL", "TARGET", "BOX", "AGENT", "cell_name"]

_BLOCKED = WALL | BOX
_NOT_AGENT, _NOT_BOX = np.uint8(0xFF ^ AGENT), np.uint8(0xFF ^ BOX)
_VALID_CODES = (0, WALL, TARGET, BOX, BOX | TARGET, AGENT, AGENT | TARGET)
#: plane order of the network input: agent, boxes, targets, walls (the paper's four vectors)
_PLANES = np.array([AGENT, BOX, TARGET, WALL], dtype=np.uint8)


class Sokoban(Puzzle):
    """Sokoban levels of at most ``height x width`` cells. See the module docstring.

    Args:
        height, width: the board size of every state (smaller levels are padded with walls).
        num_boxes: boxes in generated training levels (:meth:`scramble`); parsed levels may have any
            number of boxes as long as it equals their number of targets.
        prune_dead_squares: treat a push that puts a box on a dead square (a cell from which no
            pushes lead it to a target, :mod:`.deadlock`) as impossible, so searches never
            enter those dead ends. Off by default (the learned solver does without it); a start
            state with a box on a dead square then has no moves at all.
    """

    action_names = ("U", "D", "L", "R")
    json_key = "grid"
    default_scramble_depth = 1000  # DeepCubeA's back_max for Sokoban

    def __init__(
        self, height: int = 10, width: int = 10, num_boxes: int = 4, prune_dead_squares: bool = False
    ) -> None:
        for label, v in (("height", height), ("width", width)):
            if not isinstance(v, int | np.integer) or not 3 <= int(v) <= 64:
                raise ValueError(f"{label} must be an integer from 3 to 64, got {v!r}")
        interior = (int(height) - 2) * (int(width) - 2)
        if not isinstance(num_boxes, int | np.integer) or not 1 <= int(num_boxes) < interior:
            raise ValueError(
                f"num_boxes must be from 1 to {interior - 1} for a {height}x{width} board, got {num_boxes!r}"
            )
        self.height, self.width, self.num_boxes = int(height), int(width), int(num_boxes)
        self.prune_dead_squares = bool(prune_dead_squares)
        #: goal configurations :meth:`scramble` starts from (:meth:`with_rooms`); ``None``: generated rooms
        self.rooms: np.ndarray | None = None
        self.name = "sokoban"
        self.num_cells = self.height * self.width
        self._offsets = np.array([-self.width, self.width, -1, 1], dtype=np.int64)

    # ---- constants ------------------------------------------------------------------------------
    @property
    def state_shape(self) -> tuple[int, ...]:
        return (self.num_cells,)

    @property
    def inverse_action(self) -> np.ndarray:
        return np.full(4, -1, dtype=np.int64)

    def goal(self) -> np.ndarray:
        """A solved example level (goals depend on the level, so use :meth:`is_goal` to test states):
        an open room walled on the border, ``num_boxes`` boxes on targets in the first interior
        cells (row-major), the agent in the bottom-right interior cell."""
        h, w = self.height, self.width
        inner = np.zeros((h - 2) * (w - 2), dtype=np.uint8)
        inner[: self.num_boxes] = BOX | TARGET
        inner[-1] = AGENT
        grid = np.full((h, w), WALL, dtype=np.uint8)
        grid[1:-1, 1:-1] = inner.reshape(h - 2, w - 2)
        return grid.reshape(-1)

    # ---- rules ----------------------------------------------------------------------------------
    @staticmethod
    def agent_positions(states: np.ndarray) -> np.ndarray:
        """``int64[B]``: the cell index of the agent in each state ``[B, H*W]``."""
        return np.argmax((np.asarray(states) & AGENT) != 0, axis=1)

    def is_goal(self, states: np.ndarray) -> np.ndarray:
        """``bool[B]``: no box stands off a target."""
        return ~np.any((np.asarray(states) & (BOX | TARGET)) == BOX, axis=1)

    def _moves(self, states: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        """Cells and new contents for actions ``int[B, K]``: returns ``(cells[3, B, K],
        values[3, B, K], moved bool[B, K])`` for the agent's cell, the next one and the one beyond."""
        hw = self.num_cells
        off = self._offsets[actions]
        p = np.broadcast_to(self.agent_positions(states)[:, None], off.shape)
        n1 = np.clip(p + off, 0, hw - 1)
        n2 = np.clip(p + 2 * off, 0, hw - 1)  # only read when n1 holds a box, never on the border
        rows = np.arange(states.shape[0])[:, None]
        c0, c1, c2 = states[rows, p], states[rows, n1], states[rows, n2]
        push = ((c1 & BOX) != 0) & ((c2 & _BLOCKED) == 0)
        moved = ((c1 & _BLOCKED) == 0) | push
        v0 = np.where(moved, c0 & _NOT_AGENT, c0)
        v1 = np.where(moved, (c1 | AGENT) & _NOT_BOX, c1)
        v2 = np.where(push, c2 | BOX, c2)
        return np.stack([n2, n1, p]), np.stack([v2, v1, v0]).astype(states.dtype), moved

    def _children(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        b, k = actions.shape
        cells, values, _ = self._moves(states, actions)
        children = np.repeat(states[:, None, :], k, axis=1)
        flat = children.reshape(-1)
        base = np.arange(0, b * k * self.num_cells, self.num_cells, dtype=np.int64).reshape(b, k)
        for c, v in zip(cells, values, strict=True):  # beyond, next, agent cell: later writes win
            flat[(base + c).reshape(-1)] = v.reshape(-1)
        if self.prune_dead_squares:
            from puzzlezero.puzzles.sokoban.deadlock import dead_squares

            dead = dead_squares(states, self.height, self.width)  # walls and targets: the parent's
            stuck = np.any((children & BOX).astype(bool) & dead[:, None, :], axis=2)
            children[stuck] = np.broadcast_to(states[:, None, :], children.shape)[stuck]
        return children

    def expand(self, states: np.ndarray) -> np.ndarray:
        """All four children ``[B, 4, H*W]`` (order ``U D L R``); a blocked step copies the parent."""
        b = np.asarray(states).shape[0]
        return self._children(states, np.broadcast_to(np.arange(4), (b, 4)))

    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return self._children(states, np.asarray(actions, dtype=np.int64)[:, None])[:, 0]

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        if self.prune_dead_squares:
            return np.any(self.expand(states) != states[:, None, :], axis=2)
        return self._moves(states, np.broadcast_to(np.arange(4), (states.shape[0], 4)))[2]

    @property
    def encoders(self) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
        """``"onehot"`` (:meth:`encode_planes`, flat) and ``"grid"`` (:meth:`encode_grid`)."""
        return {"onehot": self.encode_planes, "grid": self.encode_grid}

    def encode_planes(self, states: np.ndarray) -> np.ndarray:
        """``float32[B, 4*H*W]``: binary planes agent, boxes, targets, walls (the paper's input)."""
        states = np.asarray(states)
        return self.encode_grid(states).reshape(states.shape[0], -1)

    def encode_grid(self, states: np.ndarray) -> np.ndarray:
        """``float32[B, 4, H, W]``: the same four binary planes as :meth:`encode_planes` (agent,
        boxes, targets, walls), as a grid for convolutional networks."""
        states = np.asarray(states)
        planes = (states[:, None, :] & _PLANES[None, :, None]) != 0
        return planes.reshape(states.shape[0], 4, self.height, self.width).astype(np.float32)

    # ---- training states ------------------------------------------------------------------------
    def scramble(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> np.ndarray:
        """``n`` training states: the goal configuration of a freshly generated room each (boxes on
        targets), or of a room drawn from :attr:`rooms` (:meth:`with_rooms`), then ``depth`` reverse
        moves that may pull boxes (:mod:`.generator`; DeepCubeA, Methods: "we start from the goal
        state and allow boxes to be pulled instead of pushed"). Every state is solvable in at most
        ``depth`` moves."""
        from puzzlezero.puzzles.sokoban.generator import generate_rooms, reverse_play

        depths = walks.draw_depths(rng, n, depth)
        if self.rooms is not None:
            goals = self.rooms[rng.integers(0, self.rooms.shape[0], size=n)]
        else:
            goals = generate_rooms(rng, n, self.height, self.width, self.num_boxes)
        return reverse_play(goals, rng, depths, self.width)

    def pruned(self) -> Sokoban:
        """A copy of this puzzle with ``prune_dead_squares`` on (same name, models and rooms)."""
        new = copy.copy(self)
        new.prune_dead_squares = True
        return new

    def with_rooms(self, goal_states: np.ndarray) -> Sokoban:
        """A copy of this puzzle whose :meth:`scramble` (training and evaluation states) starts from
        the given goal configurations ``[M, H*W]`` (every box on a target), e.g. those of the
        Boxoban training levels (:func:`.generator.goal_configurations`), instead of generated
        rooms. Same name and rules, so its models are this puzzle's."""
        goals = np.array(goal_states, dtype=np.uint8).reshape(-1, self.num_cells)
        if goals.shape[0] == 0:
            raise InvalidStateError("with_rooms needs at least one goal configuration")
        for g in goals[: min(len(goals), 1000)]:  # a sample: the full check costs ~0.1 ms a level
            self.validate(g)
        if not self.is_goal(goals).all():
            i = int(np.flatnonzero(~self.is_goal(goals))[0])
            raise InvalidStateError(f"room {i} is not a goal configuration: a box stands off its targets")
        new = copy.copy(self)
        goals.setflags(write=False)
        new.rooms = goals
        return new

    def random_walks(
        self, rng: np.random.Generator, n: int, depth: int | np.ndarray | tuple[int, int]
    ) -> np.ndarray:
        """Sokoban's moves cannot be undone: its walks are the reverse play of :meth:`scramble`."""
        return self.scramble(rng, n, depth)

    def scramble_from(
        self,
        goal_states: np.ndarray,
        rng: np.random.Generator,
        depth: int | np.ndarray | tuple[int, int],
        n: int | None = None,
    ) -> np.ndarray:
        """Reverse-play from given goal configurations ``[M, H*W]`` (or one ``[H*W]``): one state per
        row, or ``n`` states from rows drawn uniformly with replacement."""
        from puzzlezero.puzzles.sokoban.generator import reverse_play

        goal_states = np.asarray(goal_states, dtype=np.uint8).reshape(-1, self.num_cells)
        if n is not None:
            goal_states = goal_states[rng.integers(0, goal_states.shape[0], size=n)]
        depths = walks.draw_depths(rng, goal_states.shape[0], depth)
        return reverse_play(goal_states, rng, depths, self.width)

    # ---- text -----------------------------------------------------------------------------------
    def parse_moves(self, text: str | Sequence[str]) -> list[int]:
        """Moves ``U D L R`` separated by spaces, or the standard compact LURD string (``"rrUUl"``:
        lower case walks, upper case pushes; the case is ignored here since the rules decide)."""
        if isinstance(text, str) and text.strip() and set(text.strip()) <= set("udlrUDLR"):
            text = list(text.strip())
        tokens = text.split() if isinstance(text, str) else list(text)
        return super().parse_moves([t.upper() if t in ("u", "d", "l", "r") else t for t in tokens])

    def parse(self, text: str) -> np.ndarray:
        """Read a level in standard text (rows of ``# $.*@+`` and space; ``-`` and ``_`` are also
        floor), or a JSON list of row strings, or a JSON object with a ``"grid"`` list.

        Floor outside the walls (the indentation of a level, short rows) is turned into wall as
        long as the agent cannot reach it; short rows are padded with such outside space, and a
        level smaller than the board is padded with walls on the right and bottom."""
        grid = _read_level(text, self.height, self.width)
        state = grid.reshape(-1)
        self.validate(state)
        return state

    def validate(self, state: np.ndarray) -> None:
        """Raise ``InvalidStateError`` unless ``state`` is a closed level with one agent and as many
        boxes (at least one) as targets."""
        state = np.asarray(state)
        h, w = self.height, self.width
        if state.shape != (h * w,):
            raise InvalidStateError(f"expected {h * w} cells ({h}x{w}), got shape {state.shape}")
        grid = state.reshape(h, w)
        bad = ~np.isin(grid, _VALID_CODES)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise InvalidStateError(f"row {r} col {c} holds {cell_name(grid[r, c])}: not a Sokoban cell")
        border = np.ones((h, w), dtype=bool)
        border[1:-1, 1:-1] = False
        open_cells = np.argwhere(border & (grid != WALL))
        if open_cells.size:
            r, c = open_cells[0]
            what = cell_name(grid[r, c])
            raise InvalidStateError(
                f"row {r} col {c} is {what} on the border: the level must be closed by walls"
            )
        agents = np.argwhere(grid & AGENT)
        if len(agents) == 0:
            raise InvalidStateError("the level has no agent: mark its cell with '@' (or '+' on a target)")
        if len(agents) > 1:
            where = ", ".join(f"row {r} col {c}" for r, c in agents[:4])
            raise InvalidStateError(f"the level has {len(agents)} agents ({where}): it needs exactly one")
        boxes, targets = int(np.count_nonzero(grid & BOX)), int(np.count_nonzero(grid & TARGET))
        if boxes != targets:
            raise InvalidStateError(
                f"the level has {boxes} box{'es' if boxes != 1 else ''} but {targets} "
                f"target{'s' if targets != 1 else ''}: it needs as many boxes as targets"
            )
        if boxes == 0:
            raise InvalidStateError("the level has no boxes: place at least one '$' and one '.'")

    def rows(self, state: np.ndarray) -> list[str]:
        """The level as ``H`` strings of standard Sokoban text."""
        return ["".join(_CODE_CHAR[row]) for row in np.asarray(state).reshape(self.height, self.width)]

    def format(self, state: np.ndarray) -> str:
        """``H`` lines of standard Sokoban text (what :meth:`parse` reads)."""
        return "\n".join(self.rows(state))

    def to_json(self, state: np.ndarray) -> dict[str, Any]:
        """``{"grid": [H row strings], "agent": [row, col]}`` as in the benchmark file."""
        a = int(self.agent_positions(np.asarray(state)[None])[0])
        return {self.json_key: self.rows(state), "agent": [a // self.width, a % self.width]}

    def to_svg(self, state: np.ndarray, size: int = 300) -> str:
        from puzzlezero.puzzles.sokoban.viewer import sokoban_svg

        return sokoban_svg(np.asarray(state).reshape(self.height, self.width), size)


# ---- level text ---------------------------------------------------------------------------------
_CHAR_CODE = {
    "#": WALL,
    " ": 0,
    "-": 0,
    "_": 0,
    "$": BOX,
    ".": TARGET,
    "*": BOX | TARGET,
    "@": AGENT,
    "+": AGENT | TARGET,
}
_CODE_CHAR = np.array(["?"] * 256)
for _ch in "# $.*@+":
    _CODE_CHAR[_CHAR_CODE[_ch]] = _ch
_LEGEND = "'#' wall, ' ' floor, '$' box, '.' target, '*' box on target, '@' agent, '+' agent on target"


def _read_level(text: str, height: int, width: int) -> np.ndarray:
    """Level text (or JSON rows) -> ``uint8[height, width]`` cell codes, closed and padded.
    Checks characters, size and closure; the counts are left to ``Sokoban.validate``."""
    rows = _split_rows(text)
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch not in _CHAR_CODE:
                raise InvalidStateError(f"unknown character {ch!r} at row {r} col {c}: use {_LEGEND}")
    h, w = len(rows), max(len(row) for row in rows)
    if h > height or w > width:
        raise InvalidStateError(
            f"the level is {h} rows x {w} columns; this board holds at most {height} x {width}"
        )
    grid = np.zeros((h, w), dtype=np.uint8)  # short rows are padded with (outside) floor
    for r, row in enumerate(rows):
        grid[r, : len(row)] = [_CHAR_CODE[ch] for ch in row]
    _close_outside(grid, rows)
    out = np.full((height, width), WALL, dtype=np.uint8)
    out[:h, :w] = grid
    return out


def _split_rows(text: str) -> list[str]:
    if not isinstance(text, str):
        raise InvalidStateError(f"expected level text, got {type(text).__name__}")
    stripped = text.strip()
    if stripped[:1] in ("[", "{") and stripped:
        try:
            obj = json.loads(stripped)
        except (ValueError, RecursionError) as e:
            raise InvalidStateError(f"cannot read the level as JSON: {e}") from None
        if isinstance(obj, dict):
            obj = obj.get("grid")
        if not (isinstance(obj, list) and all(isinstance(row, str) for row in obj)):
            raise InvalidStateError(
                'a JSON level must be a list of row strings (or an object with a "grid" list)'
            )
        rows = list(obj)
    else:
        rows = textwrap.dedent(text.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
    while rows and not rows[0].strip():
        rows.pop(0)
    while rows and not rows[-1].strip():
        rows.pop()
    if not rows:
        raise InvalidStateError(f"the level is empty: write its rows with {_LEGEND}")
    return rows


def _flood(passable: np.ndarray, seeds: list[tuple[int, int]]) -> np.ndarray:
    """``bool[h, w]``: cells reachable from ``seeds`` through 4-connected ``passable`` cells."""
    h, w = passable.shape
    seen = np.zeros_like(passable)
    queue = deque(s for s in seeds if passable[s])
    for s in queue:
        seen[s] = True
    while queue:
        r, c = queue.popleft()
        for r2, c2 in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= r2 < h and 0 <= c2 < w and passable[r2, c2] and not seen[r2, c2]:
                seen[r2, c2] = True
                queue.append((r2, c2))
    return seen


def _close_outside(grid: np.ndarray, rows: list[str]) -> None:
    """Turn floor outside the walls into wall (in place); raise if the agent can reach the border
    or a box, target or agent lies outside."""
    h, w = grid.shape
    passable = grid != WALL
    border = [(r, c) for r in range(h) for c in range(w) if r in (0, h - 1) or c in (0, w - 1)]
    agents = np.argwhere(grid & AGENT)
    if len(agents):
        reach = _flood(passable, [tuple(agents[0])])
        leak = next(((r, c) for r, c in border if reach[r, c]), None)
        if leak is not None:
            r, c = leak
            if c >= len(rows[r]):
                raise InvalidStateError(
                    f"row {r} has {len(rows[r])} characters, fewer than the widest row ({w}), and the agent "
                    "can walk off its end: close the row with '#'"
                )
            raise InvalidStateError(
                f"row {r} col {c} is {cell_name(grid[r, c])} on the border and the agent can reach it: "
                "the level must be closed by walls"
            )
    outside = _flood(passable, border)
    stray = np.argwhere(outside & (grid != 0))
    if len(stray):
        r, c = stray[0]
        raise InvalidStateError(
            f"{cell_name(grid[r, c])} at row {r} col {c} is outside the walls: the level must be closed by walls"
        )
    grid[outside] = WALL
