"""The 4x4x4 and the 5x5x5 by reduction: brought to a 3x3x3, then solved by cube3's own solve.

:func:`puzzlezero.classic.cube_reduction.reduce_cube` (the 4x4x4) and
:func:`puzzlezero.classic.cube5_reduction.reduce_cube` (the 5x5x5) bring every centre home, pair
the edges and fix the parity, with no model; what is left turns like the competition's 3x3x3
(``cube_3-3-3``) with its centres home, that is like cube3 (DeepCubeA's cube: the twelve face
quarter turns, centres fixed), whose own solve (its defaults: BWAS with its network) then answers
in the time left. Its face turns are the big cube's outer layers' turns, one move each (the
competition's 3x3x3 would also turn middle slices, two or three of the big cube's moves each). The
answer is replayed on the start state before it is returned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from puzzlezero.classic import reduction_of
from puzzlezero.classic.cube_reduction import Reduction
from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.frames import Cube3View
from puzzlezero.registry import make
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from puzzlezero.solver.options import SolveOptions
from puzzlezero.solver.result import SolveResult
from puzzlezero.solver.run import solve

__all__ = ["THREE", "memory_estimate", "solve_reduced"]

#: the puzzle a reduced 4x4x4 or 5x5x5 turns like, and the one that solves it (its centres home)
THREE = "cube_3-3-3"
FACES = "cube3"
#: the least time cube3's solve is given, seconds
MIN_THREE_SECONDS = 5.0
#: the time kept for cube3's solve while the edges are paired from more centre solutions: its
#: schedule's own time limit, seconds
THREE_SECONDS = 30.0
#: the most centre solutions the edges are paired from, one after another while the time allows
PAIR_STARTS = 8
#: seconds of the quick 3x3x3 solve (Kociemba's two-phase search) that makes each shorter
#: reduction an answer at once: about 22-30 quarter turns, where cube3's full solve gives about 22
QUICK_THREE_SECONDS = 0.5


def solve_reduced(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    max_nodes: int | None = None,
    deadline: float | None = None,
    on_solution: Callable[[SearchResult], None] | None = None,
) -> SearchResult:
    """Reduce ``state`` (:func:`~puzzlezero.classic.cube_reduction.reduce_cube`: the edges paired
    from up to :data:`PAIR_STARTS` centre solutions, a next one begun while it would leave
    :data:`THREE_SECONDS` before ``deadline``), solve the 3x3x3 it turns like with cube3's defaults
    in the time left (at least :data:`MIN_THREE_SECONDS`), and return the whole answer in the
    big cube's moves.

    Anytime: each shorter reduction is made an answer at once by a quick 3x3x3 solve (Kociemba's
    two-phase search for :data:`QUICK_THREE_SECONDS`), so the first answer comes as soon as the
    first start has paired its edges; each shorter answer goes to ``on_solution``, and the shortest
    is returned (cube3's full solve of the shortest reduction usually). A state the reduction
    leaves (its beam's steps or the deadline) comes back unsolved, for the fallback. Every answer
    is replayed on the start state first."""
    t0 = clock.now()
    start = np.asarray(state).reshape(-1)
    three3 = make(THREE)
    best: tuple[int, ...] | None = None  # the shortest answer so far
    improvements: list[tuple[float, int]] = []  # (seconds, length) of each shorter answer
    nodes = 0

    def offer(reduction: Reduction, three: SolveResult) -> None:
        nonlocal best, nodes
        nodes += three.nodes_generated
        if not three.solved:
            return
        actions = _answer(puzzle, three3, reduction, three.actions)
        end = puzzle.apply_moves(start, list(actions))
        if not bool(puzzle.is_goal(np.asarray(end)[None])[0]):  # a defect, never the fallback's to hide
            raise RuntimeError(f"the reduction's answer does not solve this {puzzle.name} state")
        if best is not None and len(actions) >= len(best):
            return
        best = actions
        improvements.append((clock.now() - t0, len(actions)))
        if on_solution is not None:
            on_solution(_result(puzzle, actions, nodes, improvements[-1][0]))

    def quick(reduction: Reduction) -> None:
        read = _reading(puzzle, three3, reduction)
        offer(
            reduction, solve(FACES, read, search="two-phase", time_limit=QUICK_THREE_SECONDS, fallback=False)
        )

    more_until = None if deadline is None else deadline - THREE_SECONDS
    try:
        reduction = reduction_of(puzzle).reduce_cube(
            puzzle, start, deadline=deadline, starts=PAIR_STARTS, more_until=more_until, on_reduction=quick
        )
    except TimeoutError:
        return SearchResult(False, (), nodes, 1, clock.now() - t0, "time limit")
    except InvalidStateError:  # the pairing beam gave up: the fallback answers
        return SearchResult(False, (), nodes, 1, clock.now() - t0, "exhausted")
    left = MIN_THREE_SECONDS if deadline is None else max(deadline - clock.now(), MIN_THREE_SECONDS)
    three = solve(FACES, _reading(puzzle, three3, reduction), time_limit=left)
    offer(reduction, three)
    if best is None:
        if three.status == "time limit":
            return SearchResult(False, (), nodes, 1, clock.now() - t0, "time limit")
        return SearchResult(False, (), nodes, 1, clock.now() - t0, "exhausted")
    return _result(puzzle, best, nodes, clock.now() - t0, improvements)


def _result(
    puzzle: Puzzle,
    actions: tuple[int, ...],
    nodes: int,
    seconds: float,
    improvements: Sequence[tuple[float, int]] = (),
) -> SearchResult:
    """A solved result; ``improvements``: each shorter answer's ``(seconds, length)``, the first
    first (the bench's first-answer time)."""
    cost = puzzle.path_cost(actions)
    return SearchResult(
        True, actions, nodes, 1, seconds, "solved", improvements=tuple(improvements), cost=cost
    )


def _reading(puzzle: Puzzle, three3: Puzzle, reduction: Reduction) -> np.ndarray:
    """The reduced cube as a cube3 state: the 3x3x3 it turns like, read in its centres' frame
    (which the reduction has brought home)."""
    read, frame = _view(three3).cube3(reduction_of(puzzle).to_3x3x3(puzzle, reduction.state)[None])
    if int(frame[0]) != 0:  # pragma: no cover - the reduction brings every centre home
        raise InvalidStateError("the reduced cube's centres are not home")
    return read[0]


def _answer(
    puzzle: Puzzle, three3: Puzzle, reduction: Reduction, three_actions: Sequence[int]
) -> tuple[int, ...]:
    """The reduction's moves, then cube3's answer as the big cube's moves (an outer layer each)."""
    moves = reduction_of(puzzle).moves_of_3x3x3(puzzle, three3)
    turn_of = {int(b): a for a, b in enumerate(_view(three3).face_turns[0]) if b >= 0}
    return (*reduction.actions, *(a for j in three_actions for a in moves[turn_of[int(j)]]))


@lru_cache(maxsize=1)
def _view(three: Puzzle) -> Cube3View:
    return Cube3View(three)


def inner_solves(puzzle: Puzzle) -> list[tuple[Puzzle, SolveOptions]]:
    """The solve a reduced solve runs inside: cube3's, with its defaults (whose tables a bench and a
    server prepare with the reduction's, :func:`puzzlezero.solver.tables.table_needs`)."""
    from puzzlezero.solver.resolve import resolve_options

    cube3 = make(FACES)
    return [(cube3, resolve_options(cube3))]


def memory_estimate(puzzle: Puzzle, options: object = None, instances: int = 1) -> int:
    """Peak bytes of a reduced solve, one state at a time: the larger of the reduction's
    (:func:`puzzlezero.classic.cube_reduction.memory_estimate`, its pairing beam freed when it ends)
    and cube3's solve after it (its defaults, its node cap lowered to the memory budget as that
    solve lowers it; the centres' tables it keeps besides take 26 MB)."""
    from dataclasses import replace

    from puzzlezero.solver.memory import cap_within_budget
    from puzzlezero.solver.memory import memory_estimate as search_memory
    from puzzlezero.solver.resolve import resolve_options

    cube3 = make(FACES)
    o = resolve_options(cube3)
    o = replace(o, max_nodes=cap_within_budget(cube3, o))
    return max(reduction_of(puzzle).memory_estimate(puzzle), search_memory(cube3, o.search, o))
