"""The competition's 3x3x3 by two routes and a classical search beside them, the shortest answer
kept: a beam over its slice moves guided by cube3's network, then cube3's own solve of the cube
read in its centres' frame, its face turns made slice turns; and all the while Kociemba's
two-phase search in the competition's own metric.

``cube_3-3-3`` is cube3 seen another way (:mod:`puzzlezero.puzzles.cube.frames`): in the frame that
puts the centres home a face turn is a cube3 turn, and a middle slice two of them plus a quarter
turn of the whole cube. Three searches answer it, and each is the shortest on other cubes:

1. **The beam** (``--search beam`` with the ``cube3-view`` heuristic, the options' widths and
   goal's ball) moves the slices themselves and ranks each child by cube3's estimate of its
   reading plus the moves that turn its frame home. It answers within seconds.
2. **Cube3's route**: cube3's own solve of the reading (its defaults: Q\\* with the cube's images
   beside Kociemba's two-phase search, the shorter kept) in the time left, then
   :meth:`~puzzlezero.puzzles.cube.frames.Cube3View.slice_answer`, the fewest slice moves that pass
   through the same readings: a middle slice for each ``R L'``, the frame turned home within the
   runs of turns about one axis. Each answer cube3's anytime schedule found is made slice turns,
   and the fewest kept: a longer one may turn the frame home for less.
3. **The two-phase search in the slice metric**
   (:func:`~puzzlezero.classic.two_phase_slice.solve_two_phase_slice`, no network) on a thread of
   its own from the start to the deadline: its numba kernel releases the GIL, so it takes a core
   while the beam and the route share the other's network.

The beam runs until :func:`route_seconds` before the deadline (its later, wider beams fitted to
that time), the route in what is left; the shortest answer is returned, the beam's and the route's
passed on as they come.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

import numpy as np

from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.frames import Cube3View
from puzzlezero.registry import make
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from puzzlezero.solver.names import resolve_entry
from puzzlezero.solver.options import SolveOptions
from puzzlezero.solver.result import Improvement
from puzzlezero.solver.run import solve
from puzzlezero.solver.searches import SEARCHES, run_search

__all__ = [
    "BEAM",
    "FACES",
    "MIN_ROUTE_SECONDS",
    "ROUTE_SECONDS",
    "ROUTE_SHARE",
    "route_seconds",
    "memory_estimate",
    "solve_route",
    "solve_two_routes",
]

#: the puzzle whose solve answers the reading, and the search that runs first
FACES = "cube3"
BEAM = "beam"
#: the time kept for cube3's route, seconds: its solve's own schedule of 30 s (on ids 0-19 of the
#: benchmark states, 23.4 moves with 28 s, 23.9 with 15 s: its later stages need the time) ...
ROUTE_SECONDS = 28.0
#: ... or this share of the time left where that is less, so that the beam answers first
ROUTE_SHARE = 0.6
#: the least time cube3's solve is given, seconds
MIN_ROUTE_SECONDS = 2.0


@lru_cache(maxsize=4)
def _view(puzzle: Puzzle) -> Cube3View:
    return Cube3View(puzzle)


def solve_route(
    puzzle: Puzzle, state: np.ndarray, *, max_nodes: int | None = None, deadline: float | None = None
) -> SearchResult:
    """Cube3's route alone: ``state`` read as cube3 (:meth:`Cube3View.cube3`), solved by cube3's
    defaults until ``deadline`` (at least :data:`MIN_ROUTE_SECONDS`; ``max_nodes`` bounds its
    nodes where it is below cube3's own cap), the answer made slice moves
    (:meth:`Cube3View.slice_answer`) and replayed. A :class:`~puzzlezero.errors.PuzzleError` for a
    puzzle that is not the competition's 3x3x3."""
    t0 = clock.now()
    view = _view(puzzle)
    start = np.asarray(state).reshape(-1)
    read, _ = view.cube3(start[None])
    left = MIN_ROUTE_SECONDS if deadline is None else max(deadline - clock.now(), MIN_ROUTE_SECONDS)
    cap = _faces_cap()
    found: list[Improvement] = []
    faces = solve(
        FACES,
        read[0],
        time_limit=left,
        max_nodes=cap if max_nodes is None else min(max_nodes, cap),
        on_solution=found.append,
    )
    if not faces.solved:
        if faces.status == "time limit":
            return SearchResult(False, (), faces.nodes_generated, 1, clock.now() - t0, "time limit")
        return SearchResult(False, (), faces.nodes_generated, 1, clock.now() - t0, "node limit")
    # each of cube3's answers (its anytime schedule's, the last one the shortest) in slice turns:
    # one a quarter turn longer may take fewer slice turns
    cube3 = make(FACES)
    answers = [tuple(cube3.parse_moves(" ".join(i.solution))) for i in found if i.solution]
    actions = min((view.slice_answer(start, turns) for turns in (*answers, faces.actions)), key=len)
    end = puzzle.apply_moves(start, list(actions))
    if not bool(puzzle.is_goal(np.asarray(end)[None])[0]):  # pragma: no cover - slice_answer ends at the goal
        raise InvalidStateError(f"cube3's route does not solve this {puzzle.name} state")
    return SearchResult(
        True, actions, faces.nodes_generated, 1, clock.now() - t0, "solved", cost=puzzle.path_cost(actions)
    )


@lru_cache(maxsize=1)
def _faces_cap() -> int:
    """Cube3's solve's own node cap (its defaults, lowered to the memory budget)."""
    from puzzlezero.solver.memory import cap_within_budget
    from puzzlezero.solver.resolve import resolve_options

    cube3 = make(FACES)
    return int(cap_within_budget(cube3, resolve_options(cube3)))


def route_seconds(left: float) -> float:
    """The seconds of ``left`` that cube3's route is given: :data:`ROUTE_SECONDS`, or
    :data:`ROUTE_SHARE` of ``left`` where that is less.

    >>> route_seconds(45.0), route_seconds(20.0)
    (27.0, 12.0)
    """
    return min(ROUTE_SECONDS, ROUTE_SHARE * max(left, 0.0))


def solve_two_routes(
    puzzle: Puzzle,
    state: np.ndarray,
    h: Callable[[np.ndarray], np.ndarray],
    o: SolveOptions,
    *,
    deadline: float,
    on_solution: Callable[[SearchResult, int], None] | None = None,
) -> SearchResult:
    """The beam (:data:`BEAM` with ``h`` and ``o``'s widths and options) until
    :func:`route_seconds` before ``deadline``, then cube3's route (:func:`solve_route`) until
    ``deadline``, the two-phase search in the slice metric beside both; the shortest answer, with
    all three searches' nodes and the routes' improvements.
    ``on_solution(result, stage)``: each cheaper answer as it comes (the beam's stages, then the
    route as the stage after them)."""
    t0 = clock.now()
    _view(puzzle)  # another puzzle is refused before anything runs
    spec = SEARCHES[BEAM]
    beam_hook = None if on_solution is None else (lambda row, r, k: on_solution(r, k))
    until = deadline - route_seconds(deadline - clock.now())
    start = np.asarray(state).reshape(1, -1)
    beside = _Beside(puzzle, start[0], deadline, o.max_nodes)
    first = beside.first(FIRST_WAIT)
    if first is not None and on_solution is not None:
        on_solution(first, 0)
    beam_start = clock.now() - t0
    beam = run_search(
        spec, resolve_entry(spec.entry, f"search {BEAM!r}"), puzzle, start, h, o, until, beam_hook
    )[0]
    route = solve_route(puzzle, start[0], max_nodes=o.max_nodes, deadline=deadline)
    route_end = clock.now() - t0
    two_phase = beside.result()
    nodes = beam.nodes_generated + route.nodes_generated + two_phase.nodes_generated
    seconds = clock.now() - t0
    # each search's answers on one clock, and the shortest so far at each time
    events = [(t + beam_start, n) for t, n in beam.improvements]
    events += [(t + beside.offset, n) for t, n in two_phase.improvements]
    if route.solved:
        events.append((route_end, len(route.actions)))
    improvements: list[tuple[float, int]] = []
    for t, n in sorted(events):
        if not improvements or n < improvements[-1][1]:
            improvements.append((round(t, 6), n))
    best = min((r for r in (beam, route, two_phase) if r.solved), key=lambda r: len(r.actions), default=beam)
    if best is beam:
        return replace(beam, nodes_generated=nodes, seconds=seconds, improvements=tuple(improvements))
    answer = SearchResult(
        True,
        best.actions,
        nodes,
        beam.iterations + 1,
        seconds,
        "solved",
        cost=best.cost,
        improvements=tuple(improvements),
    )
    if on_solution is not None:
        n_stages = 1 if isinstance(o.beam_width, int) else len(o.beam_width)
        on_solution(answer, n_stages)
    return answer


#: how long a solve waits for the two-phase search's first answer (it comes within milliseconds)
#: before the beam starts, so that an answer is passed on at once
FIRST_WAIT = 1.0


class _Beside:
    """The two-phase search in the competition's own metric
    (:func:`~puzzlezero.classic.two_phase_slice.solve_two_phase_slice`) on a thread of its own
    (its kernel releases the GIL) until ``deadline`` or ``max_nodes``, beside the two routes."""

    def __init__(self, puzzle: Puzzle, state: np.ndarray, deadline: float, max_nodes: int | None) -> None:
        from puzzlezero.classic.two_phase_slice import solve_two_phase_slice

        self._out: list[SearchResult | BaseException] = []
        self._first: list[SearchResult] = []
        self._found = threading.Event()
        #: seconds from the caller's start to the search's own (its answers' times are its own)
        self.offset = 0.0
        t0 = clock.now()

        def found(r: SearchResult) -> None:
            if not self._first:
                self._first.append(r)
                self._found.set()

        def run() -> None:
            self.offset = clock.now() - t0
            try:
                r = solve_two_phase_slice(
                    puzzle, state, deadline=deadline, max_nodes=max_nodes, on_solution=found
                )
                self._out.append(r)
            except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
                self._out.append(e)
            self._found.set()

        self._thread = threading.Thread(target=run, name="two-phase-slice", daemon=True)
        self._thread.start()

    def first(self, timeout: float) -> SearchResult | None:
        """The search's first answer, waited for up to ``timeout`` seconds (``None``: none yet)."""
        self._found.wait(timeout)
        return self._first[0] if self._first else None

    def result(self) -> SearchResult:
        self._thread.join()
        out = self._out[0]
        if isinstance(out, BaseException):
            raise out
        return out


def memory_estimate(puzzle: Puzzle, options: SolveOptions, instances: int = 1) -> int:
    """Peak bytes, one state at a time: the larger of the beam's (:data:`BEAM`'s estimate with the
    same options) and cube3's solve after it (its defaults, its node cap lowered to the memory
    budget as that solve lowers it), and the two-phase search's tables beside them."""
    from puzzlezero.solver.memory import memory_estimate as search_memory
    from puzzlezero.solver.resolve import resolve_options

    beam = resolve_entry(SEARCHES[BEAM].memory, f"memory estimate of search {BEAM!r}")  # type: ignore[arg-type]
    cube3 = make(FACES)
    o = replace(resolve_options(cube3), max_nodes=_faces_cap())
    from puzzlezero.classic.two_phase_slice import memory_estimate as beside_memory

    route = max(int(beam(puzzle, options, 1)), search_memory(cube3, o.search, o))
    return route + beside_memory(puzzle, options)
