"""Cost-to-go values themselves, not only solutions: what a heuristic (by default the shipped
network) estimates a state costs, the cost it gives each move, and the optimum beside them where
an optimal solver exists.

>>> import puzzlezero as pz
>>> v = pz.value("cube2", "R U", heuristic="pdb")
>>> v.value, v.optimal, v.best_move
(2.0, 2.0, "U'")

The estimate is the heuristic the searches use (``"learned"``: the network with int8 inference).
``action_values[a]`` is ``Q(s, a)``: the cost of move ``a`` plus the cost-to-go after it — the
network's Q head where the model has one, else ``cost + h(A(s, a))`` from the value head (and 0
for a move that reaches the goal). :func:`values` evaluates a batch.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzlezero.errors import ModelFileError, PuzzleError, UnknownNameError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make

__all__ = ["ValueResult", "value", "values"]

#: seconds the optimal solver may take beside a value (it builds its tables first, once)
OPTIMAL_TIME_LIMIT = 10.0


@dataclass(frozen=True)
class ValueResult:
    """One state's estimated cost-to-go. ``action_values[i]`` belongs to ``moves[i]``; ``optimal``
    is the optimal cost (``None`` unless ``optimal_status == "solved"``)."""

    puzzle: str
    state: str
    is_goal: bool
    value: float
    heuristic: str
    model: str | None
    moves: tuple[str, ...]
    action_values: tuple[float, ...]
    optimal: float | None
    #: ``"solved"``, ``"time limit"``, ``"node limit"``, ``"not asked"`` or ``"no optimal solver"``
    optimal_status: str
    optimal_seconds: float | None
    seconds: float

    @property
    def best_move(self) -> str | None:
        """The move with the smallest ``Q(s, a)`` (``None`` at a goal)."""
        if self.is_goal or not self.action_values:
            return None
        return self.moves[int(np.argmin(self.action_values))]

    @property
    def error(self) -> float | None:
        """``value - optimal`` where the optimum is known (negative: the estimate is admissible)."""
        return None if self.optimal is None else self.value - self.optimal

    def to_json(self) -> dict[str, Any]:
        """``{"puzzle", "state", "is_goal", "value", "heuristic", "model", "best_move",
        "action_values": {move: Q}, "optimal", "optimal_status", "optimal_seconds", "error",
        "seconds"}``."""
        return {
            "puzzle": self.puzzle,
            "state": self.state,
            "is_goal": self.is_goal,
            "value": round(self.value, 4),
            "heuristic": self.heuristic,
            "model": self.model,
            "best_move": self.best_move,
            "action_values": {m: round(q, 4) for m, q in zip(self.moves, self.action_values, strict=True)},
            "optimal": self.optimal,
            "optimal_status": self.optimal_status,
            "optimal_seconds": None if self.optimal_seconds is None else round(self.optimal_seconds, 4),
            "error": None if self.error is None else round(self.error, 4),
            "seconds": round(self.seconds, 4),
        }


def _functions(
    puzzle: Puzzle, heuristic: str, model: str | None, options: Mapping[str, Any] | None = None
) -> tuple[Any, Any]:
    """The value heuristic and the Q function of ``heuristic``: for ``"learned"`` (and
    ``"learned-onnx"``) the Q function is the model's Q head where it has one. ``options``: the
    heuristics' options by name (:data:`puzzlezero.solver.search_options.OPTIONS`, e.g.
    ``{"precision": "float32"}``); an unknown name is refused."""
    from puzzlezero.solver import BY_KIND, HEURISTICS, get_heuristic
    from puzzlezero.solver.resolve import own_heuristic
    from puzzlezero.solver.search_options import OPTIONS

    heuristic = own_heuristic(puzzle, heuristic, model)
    if heuristic not in HEURISTICS and ":" not in heuristic:
        raise UnknownNameError(f"unknown heuristic {heuristic!r}; choose one of {', '.join(HEURISTICS)}")
    unknown = sorted(set(options or ()) - set(OPTIONS))
    if unknown:
        raise UnknownNameError(f"unknown option {unknown[0]!r}; the options are {', '.join(OPTIONS)}")
    opts = tuple(sorted((options or {}).items()))
    h = get_heuristic(
        puzzle, BY_KIND.get(heuristic, {}).get("value", heuristic), model, "value", options=opts
    )
    q = None
    if heuristic in BY_KIND:
        try:
            q = get_heuristic(puzzle, BY_KIND[heuristic]["q"], model, "q", options=opts)
        except ModelFileError:  # a model without a Q head: cost + h(child) from the value head
            q = None
    if q is None:
        q = get_heuristic(puzzle, heuristic, model, "q", options=opts)
    return h, q


def values(
    puzzle: str | Puzzle,
    states: np.ndarray | Sequence[str],
    *,
    heuristic: str = "learned",
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """``float32[B]``: the estimated cost-to-go of ``states[B, *state_shape]`` (or of a list of
    texts, each read by ``puzzle.parse``), 0 at goals, from one batched call of the heuristic ``heuristic`` (see :data:`puzzlezero.solver.HEURISTICS`; ``options``: its options by name, e.g. ``{"precision": "float32"}``)."""
    from puzzlezero.solver import read_state

    p = make(puzzle) if isinstance(puzzle, str) else puzzle
    if not isinstance(states, np.ndarray) and all(isinstance(s, str) for s in states):
        rows = [read_state(p, s) for s in states]  # texts, each read by puzzle.parse
    else:
        arr = np.asarray(states)
        if arr.ndim != len(p.state_shape) + 1:
            shape = ", ".join(map(str, p.state_shape))
            raise PuzzleError(f"values takes a batch of {p.name} states [B, {shape}], got shape {arr.shape}")
        rows = [read_state(p, s) for s in arr]
    if not rows:
        return np.zeros(0, dtype=np.float32)
    batch = np.stack(rows)
    h, _ = _functions(p, heuristic, model, options)
    out = np.asarray(h(batch), dtype=np.float32).copy()
    out[p.is_goal(batch)] = 0.0
    return out


def value(
    puzzle: str | Puzzle,
    state: str | np.ndarray | Sequence[int],
    *,
    heuristic: str = "learned",
    model: str | None = None,
    optimal: bool = True,
    optimal_time_limit: float = OPTIMAL_TIME_LIMIT,
    options: Mapping[str, Any] | None = None,
) -> ValueResult:
    """The estimated cost-to-go of one ``state`` (text read by ``puzzle.parse`` — a cube scramble
    such as ``"R U R' F2"`` — or an array), each move's ``Q(s, a)``, and, with ``optimal`` and where
    the puzzle has an optimal solver, the optimal cost found within ``optimal_time_limit`` seconds.
    The first optimal query of a puzzle builds its pattern databases (cached afterwards).
    ``options``: the heuristic's options by name (e.g. ``{"precision": "float32"}``)."""
    from puzzlezero.solver import read_state

    p = make(puzzle) if isinstance(puzzle, str) else puzzle
    if not optimal_time_limit > 0:
        raise PuzzleError(f"optimal_time_limit must be positive, got {optimal_time_limit}")
    start = read_state(p, state)
    t0 = time.perf_counter()
    h, q = _functions(p, heuristic, model, options)
    goal = bool(p.is_goal(start[None])[0])
    estimate = 0.0 if goal else float(np.asarray(h(start[None]), dtype=np.float32)[0])
    qs = np.asarray(q(start[None]), dtype=np.float64)[0]
    seconds = time.perf_counter() - t0
    opt, status, opt_seconds = None, "not asked", None
    if optimal:
        opt, status, opt_seconds = _optimal(p, start, optimal_time_limit)
    return ValueResult(
        puzzle=p.name,
        state=p.format(start),
        is_goal=goal,
        value=estimate,
        heuristic=heuristic,
        model=model if model is not None else _default_model(p, heuristic),
        moves=tuple(p.format_moves(range(p.num_actions))),
        action_values=tuple(float(x) for x in qs),
        optimal=opt,
        optimal_status=status,
        optimal_seconds=opt_seconds,
        seconds=seconds,
    )


def _default_model(p: Puzzle, heuristic: str) -> str | None:
    """The model ``heuristic`` loads on ``p`` when none is named (``None``: it loads none)."""
    from puzzlezero.solver import HEURISTICS
    from puzzlezero.solver.resolve import own_heuristic

    spec = HEURISTICS.get(own_heuristic(p, heuristic))
    if spec is None or not spec.uses_model:
        return p.name if heuristic.startswith("learned") else None
    return spec.default_model or p.name


def _optimal(p: Puzzle, start: np.ndarray, time_limit: float) -> tuple[float | None, str, float | None]:
    from puzzlezero.classic.optimal import solve_optimal

    t0 = time.perf_counter()
    try:
        r = solve_optimal(p, start, time_limit=time_limit)
    except UnknownNameError:
        return None, "no optimal solver", None
    seconds = time.perf_counter() - t0
    if not r.solved:
        return None, r.status, seconds
    costs = getattr(p, "action_costs", None)
    cost = float(np.sum(costs[list(r.actions)])) if costs is not None else len(r.actions) * p.move_cost
    return cost, "solved", seconds
