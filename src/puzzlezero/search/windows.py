"""Window re-solving: a solution made shorter a stretch at a time by an exact solver.

A search's solution ``s_0 -a_1-> s_1 ... -a_n-> s_n`` is cut into windows of ``length`` moves;
for each window ``s_i .. s_j`` an exact solver between two states (IDA* with an admissible
heuristic to ``s_j``, for instance) is asked for a way from ``s_i`` to ``s_j`` of fewer than
``j - i`` moves, and a shorter one replaces the window. A round walks the whole path; the next
round starts half a window later, so that a detour across two windows' border lies inside one;
rounds go on until two in a row (both offsets) shorten nothing; a window that found nothing is
not asked again with no more nodes than it had (IDA* would answer the same). Unlike the balls of
:mod:`puzzlezero.search.shortcut`, which find detours of a dozen moves anywhere on the path, a
window finds the shorter way through a stretch of 30 to 60 moves that goes somewhere else in
between (the 48-puzzle's beam paths have such stretches; the 35-puzzle's, measured, have none:
their windows of 40 moves are already as short as Manhattan distance with linear conflicts).

**The solver** is a function ``between(a, b, moves, *, bound, max_nodes) -> (actions, nodes)``:
a way from state ``a`` to state ``b`` of fewer than ``bound`` moves, or ``None`` when there is
none or ``max_nodes`` nodes did not find one, and the nodes it generated; ``moves`` are the
window's own (a solver that reads the puzzle as a group may use them, the cube's). Each answer is
replayed here and refused unless it leads from ``a`` to ``b``.

**Bounds.** Each window gets at most ``max_nodes`` nodes and no more than the nodes the seconds
left until ``deadline`` buy at the rate measured so far (first guess :data:`FIRST_RATE` a second);
no window starts after the deadline, so the pass overruns it by one window's error in that
estimate at most.

>>> import numpy as np
>>> from puzzlezero import make
>>> from puzzlezero.classic.optimal import window_solver
>>> p = make("puzzle8")
>>> start = p.apply_moves(p.goal(), p.parse_moves("D D"))  # solved by U U
>>> loop = p.parse_moves("U R D L U R D L U R D L")         # 12 moves that change nothing
>>> path = p.parse_moves("U") + loop + p.parse_moves("U")
>>> bool(p.is_goal(p.apply_moves(start, path)[None])[0])
True
>>> r = resolve_windows(p, start, path, window_solver(p), length=20)
>>> p.format_moves(r.actions), r.improved
(['U', 'U'], 1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import check_positive
from puzzlezero.search.shortcut import path_states

__all__ = ["FIRST_RATE", "MAX_NODES", "Between", "Resolved", "resolve_windows"]

#: ``between(a, b, moves, *, bound, max_nodes) -> (actions | None, nodes)`` (the module's docstring)
Between = Callable[..., "tuple[Sequence[int] | None, int]"]

#: default bound on the nodes of one window
MAX_NODES = 50_000_000
#: nodes a second assumed before a window has been timed
FIRST_RATE = 5_000_000.0
#: nodes of a window that make its time a measure of the rate (fewer: too short to time)
_TIMED = 1_000_000


@dataclass(frozen=True)
class Resolved:
    """What :func:`resolve_windows` did: the new ``actions``, the ``rounds`` run, the ``windows``
    solved, how many were ``improved`` (replaced by a shorter way), whether a window or the
    deadline was ``cut`` short (a bound hit: a shorter way may have been missed), and ``seconds``."""

    actions: tuple[int, ...]
    rounds: int
    windows: int
    improved: int
    cut: bool
    seconds: float


def resolve_windows(
    puzzle: Puzzle,
    start: np.ndarray,
    actions: Sequence[int],
    between: Between,
    *,
    length: int,
    max_nodes: int = MAX_NODES,
    deadline: float | None = None,
    time_limit: float | None = None,
) -> Resolved:
    """``actions`` (a way from ``start``) with each window of ``length`` moves replaced by a
    shorter way that ``between`` finds, round after round (see the module's docstring); stops at
    ``deadline`` (a reading of :func:`puzzlezero.search.clock.now`) or ``time_limit`` seconds from
    now, the earlier."""
    check_positive("length", length, integer=True)
    check_positive("max_nodes", max_nodes, integer=True)
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    acts = [int(a) for a in actions]
    rounds = windows = improved = 0
    cut = False
    rate = FIRST_RATE
    tried: dict[bytes, int] = {}  # a window that found nothing -> the nodes it was given
    quiet = 0  # rounds in a row that shortened nothing
    half = max(1, length // 2)
    while quiet < 2 and len(acts) > 1:
        offset = (rounds % 2) * half if len(acts) > length else 0
        rounds += 1
        states = path_states(puzzle, start, acts)
        out: list[int] = list(acts[:offset])
        i = offset
        changed = False
        while i < len(acts):
            j = min(i + length, len(acts))
            left = stop - clock.now()
            if left <= 0:
                out.extend(acts[i:])
                cut = True
                break
            budget = max_nodes if rate * left >= max_nodes else max(1, int(rate * left))
            key = states[i].tobytes() + states[j].tobytes()
            if tried.get(key, 0) >= budget:  # the same window found nothing with as many nodes
                out.extend(acts[i:j])
                i = j
                continue
            began = clock.now()
            way, nodes = between(states[i], states[j], acts[i:j], bound=j - i, max_nodes=budget)
            spent = clock.now() - began
            if nodes >= _TIMED and spent > 0:  # a window long enough to time: the solver's rate
                rate = nodes / spent
            if way is None and nodes >= budget:
                cut = True
            windows += 1
            if way is not None and len(way) < j - i and _leads(puzzle, states[i], states[j], way):
                out.extend(int(a) for a in way)
                improved += 1
                changed = True
            else:
                tried[key] = budget
                out.extend(acts[i:j])
            i = j
        acts = out
        if clock.passed(stop):
            break
        quiet = 0 if changed else quiet + 1
        if len(acts) <= length and not changed:  # one window holds the path: nothing to shift
            break
    return Resolved(tuple(acts), rounds, windows, improved, cut, clock.now() - t0)


def _leads(p: Puzzle, a: np.ndarray, b: np.ndarray, way: Sequence[int]) -> bool:
    """Whether ``way`` leads from ``a`` to ``b`` (an answer is checked, never trusted)."""
    return bool(np.array_equal(p.apply_moves(a, list(way)), b))
