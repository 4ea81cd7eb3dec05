"""The 4x4x4 by reduction: brought to a 3x3x3, then solved by cube3's own solve.

:func:`puzzlezero.classic.cube_reduction.reduce_cube` brings every centre home, pairs the edges and
fixes the parity, with no model; what is left turns like the competition's 3x3x3
(``cube_3-3-3``) with its centres home, that is like cube3 (DeepCubeA's cube: the twelve face
quarter turns, centres fixed), whose own solve (its defaults: BWAS with its network) then answers
in the time left. Its face turns are the 4x4x4's outer layers' turns, one move each (the
competition's 3x3x3 would also turn middle slices, two of the 4x4x4's moves each). The answer is
replayed on the start state before it is returned.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from puzzlezero.classic import cube_reduction
from puzzlezero.classic.cube_reduction import moves_of_3x3x3, reduce_cube, to_3x3x3
from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.frames import Cube3View
from puzzlezero.registry import make
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from puzzlezero.solver.options import SolveOptions
from puzzlezero.solver.run import solve

__all__ = ["THREE", "memory_estimate", "solve_reduced"]

#: the puzzle a reduced 4x4x4 turns like, and the one that solves it (its centres home)
THREE = "cube_3-3-3"
FACES = "cube3"
#: the least time cube3's solve is given, seconds
MIN_THREE_SECONDS = 5.0
#: the time kept for cube3's solve while the edges are paired from more centre solutions: its
#: schedule's own time limit, seconds
THREE_SECONDS = 30.0
#: the most centre solutions the edges are paired from, one after another while the time allows
PAIR_STARTS = 8


def solve_reduced(
    puzzle: Puzzle, state: np.ndarray, *, max_nodes: int | None = None, deadline: float | None = None
) -> SearchResult:
    """Reduce ``state`` (:func:`~puzzlezero.classic.cube_reduction.reduce_cube`: the edges paired
    from up to :data:`PAIR_STARTS` centre solutions, a next one begun while it would leave
    :data:`THREE_SECONDS` before ``deadline``), solve the 3x3x3 it turns like with cube3's defaults
    in the time left (at least :data:`MIN_THREE_SECONDS`), and return the whole answer in the
    4x4x4's moves. A state the reduction leaves (its beam's steps or the deadline) comes back
    unsolved, for the fallback."""
    t0 = clock.now()
    start = np.asarray(state).reshape(-1)
    more_until = None if deadline is None else deadline - THREE_SECONDS
    try:
        reduction = reduce_cube(puzzle, start, deadline=deadline, starts=PAIR_STARTS, more_until=more_until)
    except TimeoutError:
        return SearchResult(False, (), 0, 1, clock.now() - t0, "time limit")
    except InvalidStateError:  # the pairing beam gave up: the fallback answers
        return SearchResult(False, (), 0, 1, clock.now() - t0, "exhausted")
    three3 = make(THREE)
    view = _view(three3)
    read, frame = view.cube3(to_3x3x3(puzzle, reduction.state)[None])
    if int(frame[0]) != 0:  # pragma: no cover - the reduction brings every centre home
        raise InvalidStateError("the reduced 4x4x4's centres are not home")
    left = MIN_THREE_SECONDS if deadline is None else max(deadline - clock.now(), MIN_THREE_SECONDS)
    three = solve(FACES, read[0], time_limit=left)
    if not three.solved:
        if three.status == "time limit":
            return SearchResult(False, (), three.nodes_generated, 1, clock.now() - t0, "time limit")
        return SearchResult(False, (), three.nodes_generated, 1, clock.now() - t0, "exhausted")
    moves = moves_of_3x3x3(puzzle, three3)
    turn_of = {int(b): a for a, b in enumerate(view.face_turns[0]) if b >= 0}
    actions = (*reduction.actions, *(a for j in three.actions for a in moves[turn_of[int(j)]]))
    end = puzzle.apply_moves(start, list(actions))
    if not bool(puzzle.is_goal(np.asarray(end)[None])[0]):
        raise InvalidStateError(f"the reduction's answer does not solve this {puzzle.name} state")
    return SearchResult(
        True,
        actions,
        three.nodes_generated,
        1,
        clock.now() - t0,
        "solved",
        cost=puzzle.path_cost(actions),
    )


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
    return max(cube_reduction.memory_estimate(puzzle), search_memory(cube3, o.search, o))
