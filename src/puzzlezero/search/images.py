"""Searching a state together with its images: the same problem in other guises, one batch.

A learned heuristic is not symmetric: the network sees a cube, its mirror image and its inverse as
three unrelated inputs and errs on each in its own way, though all three are exactly as far from
solved and their solutions map onto each other (``Puzzle.image``, ``Puzzle.from_image``; cubes:
the inverse, the mirror image, the mirror image of the inverse). Optimal cube solvers have long
searched a position and its inverse side by side (Kociemba's Cube Explorer runs the three axes and
the inverse); for a weighted search with an inadmissible heuristic the images act as an ensemble
for free: each search wanders off in a different place, and the shortest solution of any of them
is a solution of the state.

Within an anytime schedule (:mod:`.anytime`: weighted A* restarted, or beams ever wider):

1. The first, cheap stage runs on the states alone; its solution ``P`` is what the inverse is made
   from (a cube ``goal * g`` solved by ``P = g⁻¹`` has the inverse ``goal * P``).
2. Each solved state is joined by its images (an image equal to the state or to an earlier image,
   as for the superflip, which is its own inverse, is left out) and the later stages run on all
   of them as instances of one batched search, a state and its images as one group: each stage
   looks only for solutions shorter than the best any member of the group has found.
3. Each image's solutions are mapped back; each state returns its cheapest, with every
   improvement's time and length and the nodes of its whole group.

A search without a schedule (one BWAS or Q* setting, one beam) takes the images made from the
state alone (``Puzzle.solution_images`` are not: the cube's inverse needs a solution first):
:func:`with_images` searches each state and those images as instances of one batched call and
keeps the cheapest solution of each group (the sliding puzzles' ``transpose``).

The images share the time of the later stages (the instances of a batched search share every
iteration; every stage runs to the schedule's one deadline), so each gets part of the budget; it pays where the schedule's last stages buy little
on one state (docs/results.md). The node cap applies per instance and stage, so the peak memory
grows with the number of images.

With ``threads`` (``k > 1``), the later stages run as ``k`` searches side by side, a group's members
dealt out among them (the state and its mirror in one, the two inverses in the other), which
share one :class:`~.anytime.GroupLedger`: a member's solution bounds the others in either thread.
A batched search leaves a core idle while it files children in its table and heap (about a third
of its time on the cube); two searches, each with one core for its network, keep both busy. The
caller's ``thread_context`` is entered in each of their threads (the solver's: one network thread
per search).

Progress: ``on_solution`` (:data:`~.anytime.SolutionHook`) gets each state's cheaper solutions as
the stages that found them end, an image's mapped back to its state, always in the caller's
thread (the searches side by side hand theirs over; the caller's thread passes them on).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.anytime import GroupLedger, SolutionHook, anytime, check_stages
from puzzlezero.search.handover import pass_on
from puzzlezero.search.result import SearchResult, Status, as_batch, check_positive, improving

__all__ = ["anytime_images", "with_images"]


def anytime_images(
    search: Callable[..., list[SearchResult]],
    puzzle: Puzzle,
    starts: np.ndarray,
    heuristic: Callable[[np.ndarray], np.ndarray],
    stages: Sequence[Any],
    *,
    images: Sequence[str],
    time_limit: float | None = None,
    max_nodes: int | None = 10_000_000,
    threads: int = 1,
    thread_context: Callable[[], AbstractContextManager[Any]] = nullcontext,
    deadline: float | None = None,
    on_solution: SolutionHook | None = None,
    schedule: Callable[..., list[SearchResult]] | None = None,
) -> list[SearchResult]:
    """:func:`~.anytime.anytime` on ``starts`` whose stages after the first also search each
    state's ``images`` (names of ``puzzle.image_names``); one :class:`SearchResult` per state,
    solutions of images mapped back to it. Solves to the puzzle's own goal only (an image is as
    far from *that* goal as its state). ``threads``: the later stages as that many searches side
    by side, within ``thread_context()`` (see the module docstring). ``time_limit``: seconds for
    the whole call; ``deadline``: when it must stop, a reading of :func:`.clock.now`, for a caller
    whose own time limit it shares (each ``None``: none; both: the earlier); the first stage and
    the later ones all run to that one deadline. ``schedule``: another schedule in
    :func:`~.anytime.anytime`'s place, called as it is (``stages`` a slice of its own stages, which
    it checks; ``groups`` and ``incumbent`` for the later stages), in one thread: the beams' widths
    (:func:`~.anytime.anytime_beam`)."""
    starts = as_batch(puzzle, starts)
    if schedule is None:
        stages = check_stages(stages)
    elif threads > 1:
        raise PuzzleError("a schedule of one's own runs its images in one search (threads=1)")
    run = anytime if schedule is None else schedule
    _check_names(puzzle, images)
    check_positive("time_limit", time_limit)
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    first = run(
        search,
        puzzle,
        starts,
        heuristic,
        stages[:1],
        deadline=stop,
        max_nodes=max_nodes,
        on_solution=on_solution,
    )
    if len(stages) == 1 or clock.passed(stop) or not images:
        return first
    rows, group_arr, guise = _groups(puzzle, starts, images, [r.actions if r.solved else None for r in first])
    first_cost = np.array([puzzle.path_cost(r.actions) if r.solved else np.inf for r in first])
    known = first_cost[group_arr]
    offset = clock.now() - t0
    reported = first_cost.copy()

    def member_solved(m: int, r: SearchResult, stage: int) -> None:
        """Member ``m``'s solution as its state's, passed on where it is the state's cheapest yet."""
        assert on_solution is not None
        cost, actions = _mapped_back(puzzle, guise[m], r)
        i = int(group_arr[m])
        if cost < reported[i]:
            reported[i] = cost
            nodes = first[i].nodes_generated + r.nodes_generated
            on_solution(i, replace(r, actions=actions, nodes_generated=nodes, path_states=None), stage + 1)

    def later_stages(part: np.ndarray, ledger: GroupLedger, hook: SolutionHook | None) -> list[SearchResult]:
        """The stages after the first on the members ``part``; one search in one thread keeps a
        ledger of its own (a schedule of one's own takes none)."""
        shared: dict[str, Any] = {} if threads <= 1 else {"ledger": ledger}
        return run(
            search,
            puzzle,
            np.stack([rows[j] for j in part]),
            heuristic,
            stages[1:],
            deadline=stop,
            max_nodes=max_nodes,
            groups=group_arr[part],
            incumbent=known[part],
            on_solution=None if hook is None else lambda j, r, k: hook(int(part[j]), r, k),
            **shared,
        )

    later = _side_by_side(
        later_stages,
        group_arr,
        threads,
        thread_context,
        None if on_solution is None else member_solved,
    )
    total = clock.now() - t0
    out = []
    for i, r in enumerate(first):
        members = np.flatnonzero(group_arr == i)
        best: tuple[float, tuple[int, ...]] | None = None
        if r.solved:
            best = (float(first_cost[i]), tuple(r.actions))
        found = list(r.improvements)
        for m in members:
            got = later[m]
            if got.solved:
                best = _cheaper(best, _mapped_back(puzzle, guise[m], got))
                found += [(round(offset + t, 6), n) for t, n in got.improvements]
        out.append(_merged(r, [later[m] for m in members], best, found, total))
    return out


def with_images(
    run: Callable[[np.ndarray, np.ndarray], list[SearchResult]],
    puzzle: Puzzle,
    starts: np.ndarray,
    images: Sequence[str],
) -> list[SearchResult]:
    """``run`` (one batched search call, ``(states, groups) -> results``; ``groups[j]``: the state
    row ``j`` is a guise of) on ``starts`` and each state's ``images`` together, the images made
    from the state alone (none of ``puzzle.solution_images``); one :class:`SearchResult` per state:
    the cheapest solution of the state and its images, mapped back, with the group's nodes and
    iterations, the call's seconds, and as ``improvements`` each member's (its own improvements,
    else its solution at the time it finished) that were shorter than those before. An image
    equal to the state or to an earlier image is not searched twice."""
    starts = as_batch(puzzle, starts)
    _check_names(puzzle, images)
    for name in images:
        if name in puzzle.solution_images:
            raise PuzzleError(
                f"the {name} image of {puzzle.name} is made from a solution of the state: search it "
                f"in an anytime schedule, whose first stage finds one"
            )
    rows, group_arr, guise = _groups(puzzle, starts, images, [()] * starts.shape[0])
    t0 = clock.now()
    got = run(np.stack(rows), group_arr)
    total = clock.now() - t0
    out = []
    for i in range(starts.shape[0]):
        members = np.flatnonzero(group_arr == i)
        best: tuple[float, tuple[int, ...]] | None = None
        found = []
        for m in members:
            if got[m].solved:
                best = _cheaper(best, mine := _mapped_back(puzzle, guise[m], got[m]))
                found += list(got[m].improvements) or [(round(got[m].seconds, 6), len(mine[1]))]
        own = got[members[0]]
        out.append(_merged(own, [got[m] for m in members[1:]], best, found, total, status=own.status))
    return out


def _check_names(puzzle: Puzzle, images: Sequence[str]) -> None:
    """:class:`PuzzleError` for a name that is not one of ``puzzle.image_names``, naming them."""
    for name in images:
        if name not in puzzle.image_names:
            puzzle.image(name, puzzle.goal(), ())  # raises, naming the puzzle's images


def _groups(
    puzzle: Puzzle, starts: np.ndarray, images: Sequence[str], solutions: Sequence[Sequence[int] | None]
) -> tuple[list[np.ndarray], np.ndarray, list[str | None]]:
    """The instances of a search of ``starts`` with their ``images``: the rows (each state, then each
    of its images made with ``solutions[i]``; none where that is ``None``, and an image equal to the
    state or to an earlier image is left out), the state each row belongs to (``int64``), and the
    image each row is (``None``: the state itself)."""
    rows, group, guise = [], [], []
    for i, state in enumerate(starts):
        seen: set[bytes] = set()
        solution = solutions[i]
        made = [] if solution is None else [(name, puzzle.image(name, state, solution)) for name in images]
        for name, row in [(None, state), *made]:
            if row.tobytes() not in seen:
                seen.add(row.tobytes())
                rows.append(row)
                group.append(i)
                guise.append(name)
    return rows, np.asarray(group, dtype=np.int64), guise


def _mapped_back(puzzle: Puzzle, guise: str | None, r: SearchResult) -> tuple[float, tuple[int, ...]]:
    """The cost and the moves of a solved member's path as a solution of its state (``guise``: the
    image it searched, ``None`` for the state itself)."""
    actions = tuple(r.actions if guise is None else puzzle.from_image(guise, r.actions))
    return puzzle.path_cost(actions), actions


def _cheaper(
    best: tuple[float, tuple[int, ...]] | None, other: tuple[float, tuple[int, ...]]
) -> tuple[float, tuple[int, ...]]:
    """The cheaper of two ``(cost, actions)`` (the first on a tie)."""
    return other if best is None or other[0] < best[0] else best


def _side_by_side(
    run: Callable[[np.ndarray, GroupLedger, SolutionHook | None], list[SearchResult]],
    groups: np.ndarray,
    threads: int,
    thread_context: Callable[[], AbstractContextManager[Any]],
    on_solution: SolutionHook | None = None,
) -> list[SearchResult]:
    """``run(part, ledger, hook)`` on the instances of ``groups``, the ``k``-th member of each group
    in part ``k % threads``; the parts run in threads sharing one ledger (one part: in this
    thread). The results in the instances' order; a thread's error is raised here. ``hook``
    (``None`` without ``on_solution``): what a part calls with an instance's solution; the threads'
    calls are handed to this thread, which calls ``on_solution`` with them while it waits; if that
    raises, the ledger is abandoned (:meth:`GroupLedger.abandon`) and the error raised once the
    threads have ended; so is an interrupt (Ctrl-C) that comes while this thread waits, so that
    no search runs on while the process exits."""
    ledger = GroupLedger(int(groups.max()) + 1)
    rank = np.zeros(groups.size, np.int64)  # each instance's place within its group
    for g in np.unique(groups):
        members = np.flatnonzero(groups == g)
        rank[members] = np.arange(members.size)
    parts = [
        part for k in range(max(1, threads)) if (part := np.flatnonzero(rank % max(1, threads) == k)).size
    ]
    if len(parts) == 1:
        return run(parts[0], ledger, on_solution)
    done: list[list[SearchResult] | BaseException | None] = [None] * len(parts)
    solutions: queue.SimpleQueue[tuple[int, SearchResult, int]] = queue.SimpleQueue()

    def hand_over(j: int, r: SearchResult, stage: int) -> None:
        solutions.put((j, r, stage))

    def work(k: int) -> None:
        try:
            with thread_context():  # this thread's own: its network's thread count
                done[k] = run(parts[k], ledger, None if on_solution is None else hand_over)
        except BaseException as exc:  # noqa: BLE001  raised again in the caller's thread
            done[k] = exc

    # daemon threads: an interrupt (Ctrl-C) in the caller ends the process without waiting for them
    pool = [
        threading.Thread(target=work, args=(k,), name=f"images-{k}", daemon=True) for k in range(len(parts))
    ]
    for t in pool:
        t.start()
    try:
        failed = pass_on(solutions, pool, on_solution, ledger.abandon)
    except BaseException:  # an interrupt (Ctrl-C) while waiting: the threads end first
        ledger.abandon()
        for t in pool:
            t.join()
        raise
    if failed is not None:
        raise failed
    out: list[SearchResult | None] = [None] * groups.size
    for part, got in zip(parts, done, strict=True):
        if isinstance(got, BaseException):
            raise got
        assert got is not None
        for j, r in zip(part, got, strict=True):
            out[j] = r
    return out  # type: ignore[return-value]


def _merged(
    first: SearchResult,
    members: list[SearchResult],
    best: tuple[float, tuple[int, ...]] | None,
    found: list[tuple[float, int]],
    total: float,
    *,
    status: Status | None = None,
) -> SearchResult:
    """One state's result: its group's cheapest solution, the improvements in time order (each
    shorter than the one before), the nodes and iterations of the whole group. ``members`` are
    the group's later-stage results, the state's own first; unsolved, the result has ``status``
    (default: that of the state's own later-stage result)."""
    runs = [first, *members]
    return SearchResult(
        solved=best is not None,
        actions=best[1] if best is not None else (),
        nodes_generated=sum(r.nodes_generated for r in runs),
        iterations=sum(r.iterations for r in runs),
        seconds=total,
        status="solved" if best is not None else (status or members[0].status),
        improvements=improving(found),
        cost=best[0] if best is not None else None,
    )
