"""Rollout: a base solver's answers made shorter by a beam that looks one move ahead of it.

D. Bertsekas, J. Tsitsiklis and C. Wu, *Rollout algorithms for combinatorial optimization*,
Journal of Heuristics 3 (1997): given a **base heuristic** that completes any partial solution
(here: a solver that answers every state, however long its answer), a rollout tries every next
move, completes each child with the base heuristic, and moves to the child whose completion is the
shortest. Its answer is never longer than the base heuristic's from the start ("sequential
improvement"): the best complete answer seen, ``g + L`` (``g`` moves taken, ``L`` the base's
answer from there), is kept, and the start's own is the first.

**With a beam** (the "fortified" rollout of the paper, widened as in Voß, Fink and Duin's pilot
method): each step expands the ``W`` states kept, scores every new child by ``L`` (its base
answer's length; the children of one step all have the same ``g``) and keeps the ``W`` lowest,
ties broken by the state's hash so that a run is repeatable. A child already kept at an earlier
step is dropped (it was completed then, with fewer moves). The best ``g + L`` found is the answer:
the moves to that state, then the base solver's answer from it.

**When it stops**: a child is a goal (``L = 0``: nothing later is shorter); ``g`` reaches the best
answer's length (every later answer has at least ``g + 1`` moves); ``patience`` steps in a row
found nothing shorter; or a bound: ``max_nodes`` children scored, the deadline, ``max_steps``
steps. Every way, the state is solved (status ``"solved"``, as the anytime searches report an
answer cut short by their time limit) and :attr:`Rollout.stopped` says why it stopped:
``"goal"``, ``"bound"`` (nothing shorter can follow), ``"patience"``, ``"node limit"``,
``"time limit"``, ``"step limit"`` or ``"exhausted"``.

It counts moves: a puzzle whose moves cost differently is refused.

**The functions** it takes (it knows nothing of the puzzle beyond ``expand`` and ``hash64``):
``base_length(states[M, ...]) -> int[M]`` (the base answer's length from each state; a value of
:data:`NO_ANSWER` or more where it has none, those children ranked last) and
``base_solution(state) -> actions`` (the base answer itself, asked once, for the best state).

>>> import numpy as np
>>> from puzzlezero import make
>>> p = make("puzzle8")
>>> start = p.apply_moves(p.goal(), p.parse_moves("D D"))
>>> from puzzlezero.classic.optimal import solve_optimal
>>> loop = p.parse_moves("U L D L U L D L U L D L")  # 12 moves that change nothing
>>> def detour(s):  # a base solver that wanders round a loop before it goes home
...     return () if p.is_goal(s[None])[0] else (*loop, *solve_optimal(p, s).actions)
>>> r = rollout(p, start, lambda states: np.array([len(detour(s)) for s in states]), detour, beam_width=4)
>>> p.format_moves(r.actions), len(detour(start))
(['U', 'U'], 14)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult

__all__ = ["NO_ANSWER", "PATIENCE", "Rollout", "memory_estimate", "rollout"]

#: a base length at or above this means "no answer from this state"
NO_ANSWER = 1 << 30
#: steps in a row without a shorter answer before the rollout stops
PATIENCE = 30
#: children scored per call of ``base_length``: bounds the memory of one call and the time between
#: two readings of the clock (the 8/25 globe's greedy sift: about 1.2 s for 8,192 states, where a
#: step of its beam of 1,000 scores 68,000)
CHUNK = 8192

BaseLength = Callable[[np.ndarray], np.ndarray]
BaseSolution = Callable[[np.ndarray], Sequence[int]]


@dataclass(frozen=True)
class Rollout(SearchResult):
    """A :class:`SearchResult` plus why the rollout stopped (module docstring) and the length of
    the answer it started from (the base solver's or the incumbent's)."""

    stopped: str = field(default="goal", compare=False)
    first_length: int = field(default=0, compare=False)


def memory_estimate(puzzle: Puzzle, beam_width: int, max_steps: int = 1000) -> int:
    """Peak bytes of :func:`rollout` beyond the puzzle: one step's children and their hashes and
    scores (``W * A`` of them), the beam, and per step the kept states' parents, moves and hashes."""
    state = int(np.prod(puzzle.state_shape)) * np.dtype(puzzle.dtype).itemsize
    children = beam_width * puzzle.num_actions
    return children * (2 * state + 40) + beam_width * state + max_steps * beam_width * 16


def rollout(
    puzzle: Puzzle,
    start: np.ndarray,
    base_length: BaseLength,
    base_solution: BaseSolution,
    *,
    beam_width: int = 1000,
    patience: int = PATIENCE,
    max_steps: int = 1000,
    max_nodes: int | None = None,
    deadline: float | None = None,
    incumbent: Sequence[int] | None = None,
) -> Rollout:
    """Rollout with a beam from ``start`` (module docstring).

    Args:
        puzzle: the puzzle (its ``expand``, ``hash64``, ``is_goal`` and ``path_cost``).
        start: one state.
        base_length: ``states[M, *state_shape] -> int[M]``, the base answer's length from each.
        base_solution: ``state -> actions``, the base answer from one state.
        beam_width: ``W``, the states kept a step.
        patience: steps in a row without a shorter answer before it stops.
        max_steps: steps before ``"step limit"``.
        max_nodes: children scored before ``"node limit"`` (``None``: no bound).
        deadline: a reading of :func:`.clock.now` after which no step starts (``"time limit"``)
            and a step scores no more children (it keeps those it has scored).
        incumbent: an answer from ``start`` already known (another solver's); the rollout returns
            it unless it finds a shorter one.

    Returns:
        A :class:`Rollout`, solved whenever the base solver answers ``start`` or an
        ``incumbent`` is given; ``nodes_generated`` counts the children scored and ``iterations``
        the steps; ``improvements`` the ``(seconds, length)`` of each shorter answer.
    """
    if beam_width < 1 or patience < 1 or max_steps < 0:
        raise PuzzleError(
            f"a rollout needs beam_width >= 1, patience >= 1 and max_steps >= 0; got {beam_width}, "
            f"{patience}, {max_steps}"
        )
    costs = np.asarray(puzzle.action_costs, dtype=np.float64)
    if costs.size and not np.all(costs == costs[0]):
        raise PuzzleError(
            f"the rollout counts moves, and {puzzle.name}'s moves cost differently: use a search that "
            f"weighs their costs (bwas, beam)"
        )
    t0 = clock.now()
    start = np.asarray(start, dtype=puzzle.dtype).reshape(puzzle.state_shape)
    if puzzle.is_goal(start[None])[0]:
        return Rollout(True, (), 1, 0, clock.now() - t0, "solved", cost=0.0)
    improvements: list[tuple[float, int]] = []
    best: tuple[int, ...] | None = None
    if incumbent is not None:
        best = tuple(int(a) for a in incumbent)
    first = int(base_length(start[None])[0])
    if first < NO_ANSWER and (best is None or first < len(best)):
        best = tuple(int(a) for a in base_solution(start))
    if best is None:
        raise PuzzleError(f"the rollout's base solver has no answer from this {puzzle.name} state")
    improvements.append((clock.now() - t0, len(best)))
    first_length = len(best)
    beam = start[None]
    visited = np.sort(puzzle.hash64(beam))
    parents: list[np.ndarray] = []  # per step: each kept state's parent in the step before
    moves: list[np.ndarray] = []  # per step: the move that made it
    nodes, steps, stall = 1, 0, 0
    stopped = "bound"
    best_total = len(best)
    a = puzzle.num_actions
    while True:
        if steps >= best_total - 1:  # no later answer can be shorter
            break
        if stall >= patience:
            stopped = "patience"
            break
        if steps >= max_steps:
            stopped = "step limit"
            break
        if max_nodes is not None and nodes + beam.shape[0] * a > max_nodes:
            stopped = "node limit"
            break
        if deadline is not None and clock.passed(deadline):
            stopped = "time limit"
            break
        children = puzzle.expand(beam).reshape(beam.shape[0] * a, *puzzle.state_shape)
        parent = np.repeat(np.arange(beam.shape[0]), a)
        move = np.tile(np.arange(a), beam.shape[0])
        nodes += children.shape[0]
        steps += 1
        hashes = puzzle.hash64(children)
        distinct, first_of = np.unique(hashes, return_index=True)  # one child per state
        # in the children's order, the best parents' first (a step the deadline cuts keeps those)
        keep = np.sort(first_of[~np.isin(distinct, visited, assume_unique=True)])
        children, parent, move, hashes = children[keep], parent[keep], move[keep], hashes[keep]
        if children.shape[0] == 0:
            stopped = "exhausted"
            break
        scored: list[np.ndarray] = []
        for i in range(0, children.shape[0], CHUNK):
            if scored and deadline is not None and clock.passed(deadline):
                break  # the step keeps the children scored so far; the next one does not start
            scored.append(np.asarray(base_length(children[i : i + CHUNK]), dtype=np.int64))
        lengths = np.concatenate(scored)
        if lengths.size < children.shape[0]:
            nodes -= children.shape[0] - lengths.size
            children, parent, move, hashes = (x[: lengths.size] for x in (children, parent, move, hashes))
        order = np.lexsort((hashes, lengths))[:beam_width]
        beam, lengths = children[order], lengths[order]
        parents.append(parent[order].astype(np.int32))
        moves.append(move[order].astype(np.int32))
        visited = np.sort(np.concatenate([visited, hashes[order]]), kind="stable")  # a merge of runs
        found = None
        if lengths[0] < NO_ANSWER and steps + int(lengths[0]) < best_total:
            found = _answer(puzzle, moves, parents, (steps, 0), beam[0], base_solution)
        if found is not None and len(found) < best_total:  # the base's answer may differ from its length
            best, best_total, stall = found, len(found), 0
            improvements.append((clock.now() - t0, best_total))
            if lengths[0] == 0:
                stopped = "goal"
                break
        else:
            stall += 1
    return Rollout(
        True,
        best,
        nodes,
        steps,
        clock.now() - t0,
        "solved",
        improvements=tuple(improvements),
        cost=float(puzzle.path_cost(best)),
        stopped=stopped,
        first_length=first_length,
    )


def _answer(
    puzzle: Puzzle,
    moves: list[np.ndarray],
    parents: list[np.ndarray],
    at: tuple[int, int],
    state: np.ndarray,
    base_solution: BaseSolution,
) -> tuple[int, ...]:
    """The moves from the start to the kept state ``at`` (step, index), then the base's answer."""
    step, i = at
    path: list[int] = []
    for t in range(step - 1, -1, -1):
        path.append(int(moves[t][i]))
        i = int(parents[t][i])
    path.reverse()
    return (*path, *(int(x) for x in base_solution(state)))
