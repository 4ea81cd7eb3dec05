"""Ensembles of heuristics: the same search run with several networks, the shortest answer kept.

A learned cost-to-go errs in its own way on each state, and two networks trained apart err in
different places: a weighted search led astray by one is often led well by another. Keeping the
shortest solution of several searches, each guided by its own network, is the cheapest gain a
learned solver has once its training has flattened (Chervov et al., "CayleyPy: a
machine-learning-based framework for Cayley graphs", NeurIPS 2025: from one agent to 26 took the
cube from 97.3% to 98.4% optimal solutions). The price is time: every member searches, so the
members share the call's one time limit.

:func:`ensemble` runs the members' searches:

1. Side by side, ``threads`` at a time, each on the call's one deadline (a member that starts
   late, when there are more members than threads, has only what is left of it). Each member's
   network runs on one intra-op thread (the caller's ``thread_context``, entered in each member's
   thread): a batched search leaves a
   core idle while it files children in its table and heap, and a second search fills it.
2. Each member searches every state; a state's answer is the cheapest solution any member found
   (the first member's on a tie), with every member's nodes and iterations added up, the time
   until the last member ended, and the improvements of all of them in time order (each one
   cheaper than the one before).

The members are independent: none bounds another's search with its solutions. Progress:
``on_solution(member, row, result, stage)`` is called in the caller's thread with each
solution a member's search reports (its anytime stages'); a caller keeps the cheaper ones.

>>> found, winners = ensemble([run_a, run_b], puzzle=p, threads=2)   # doctest: +SKIP
>>> found[0].length, winners[0]                                      # doctest: +SKIP
(270, 1)
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.anytime import SolutionHook
from puzzlezero.search.handover import pass_on
from puzzlezero.search.result import SearchResult, improving

__all__ = ["EnsembleHook", "Member", "ensemble", "merge"]

#: one member's search: called with the hook its solutions go to (``None``: no progress wanted),
#: returns one :class:`SearchResult` per state, in order
Member = Callable[[SolutionHook | None], list[SearchResult]]
#: ``on_solution(member, row, result, stage)``: a member's solution as its search reports it
EnsembleHook = Callable[[int, int, SearchResult, int], None]


def ensemble(
    members: Sequence[Member],
    *,
    puzzle: Puzzle,
    threads: int = 1,
    thread_context: Callable[[], AbstractContextManager[Any]] = nullcontext,
    on_solution: EnsembleHook | None = None,
) -> tuple[list[SearchResult], list[int | None]]:
    """Run every member's search (at most ``threads`` at once, in threads) and :func:`merge` their
    results: each state's cheapest solution, and the index of the member that found it (``None``
    where none did). A member's error is raised here once every member has ended; so is one
    ``on_solution`` raised (no more solutions are passed on after it; the members run on to their
    deadline). An interrupt (Ctrl-C) while the members run ends the process without waiting for
    them (daemon threads)."""
    if not members:
        raise PuzzleError("an ensemble needs at least one member")
    k = len(members)
    workers = max(1, min(int(threads), k))
    done: list[list[SearchResult] | BaseException | None] = [None] * k
    if workers == 1 and k == 1:
        return merge(puzzle, [members[0](_hook(0, on_solution))])
    t0 = clock.now()
    began = [0.0] * k  # when each member began, seconds after t0
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in range(k):
        todo.put(i)
    solutions: queue.SimpleQueue[tuple[int, int, SearchResult, int]] = queue.SimpleQueue()

    def hand_over(i: int) -> SolutionHook | None:
        if on_solution is None:
            return None
        return lambda row, r, stage: solutions.put((i, row, r, stage))

    def work() -> None:
        while True:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            began[i] = clock.now() - t0
            try:
                with thread_context():  # this thread's own: its network's thread count
                    done[i] = members[i](hand_over(i))
            except BaseException as exc:  # noqa: BLE001  raised again in the caller's thread
                done[i] = exc

    pool = [threading.Thread(target=work, name=f"ensemble-{j}", daemon=True) for j in range(workers)]
    for t in pool:
        t.start()
    failed = pass_on(solutions, pool, on_solution)
    for got in done:
        if isinstance(got, BaseException):
            raise got
    if failed is not None:
        raise failed
    return merge(puzzle, [got for got in done if isinstance(got, list)], began)


def _hook(member: int, on_solution: EnsembleHook | None) -> SolutionHook | None:
    """A member's :data:`SolutionHook` that calls ``on_solution`` directly (one member, no threads)."""
    if on_solution is None:
        return None
    return lambda row, r, stage: on_solution(member, row, r, stage)


def merge(
    puzzle: Puzzle, results: Sequence[Sequence[SearchResult]], began: Sequence[float] | None = None
) -> tuple[list[SearchResult], list[int | None]]:
    """``results[m][i]``: member ``m``'s result on state ``i``; ``began[m]``: when member ``m``
    began, in seconds after the first began (default: all at once). Each state's merged result
    (its cheapest solution, the first member's on a tie; nodes and iterations of every member
    added up; the seconds until the last member ended; the improvements of all in time order,
    each cheaper than the one before; unsolved: the first member's status) and the member whose
    solution it is."""
    if len({len(r) for r in results}) != 1:
        raise PuzzleError("the members of an ensemble returned different numbers of results")
    began = [0.0] * len(results) if began is None else list(began)
    out: list[SearchResult] = []
    winners: list[int | None] = []
    for rows in zip(*results, strict=True):
        costs = [_cost(puzzle, r) for r in rows]
        best = int(np.argmin(costs))
        solved = bool(np.isfinite(costs[best]))
        found = ((b + t, n) for b, r in zip(began, rows, strict=True) for t, n in r.improvements)
        win = rows[best]
        out.append(
            SearchResult(
                solved=solved,
                actions=tuple(win.actions) if solved else (),
                nodes_generated=sum(r.nodes_generated for r in rows),
                iterations=sum(r.iterations for r in rows),
                seconds=max(b + r.seconds for b, r in zip(began, rows, strict=True)),
                status="solved" if solved else rows[0].status,
                path_states=win.path_states if solved else None,
                improvements=improving(found) if solved else (),
                cost=costs[best] if solved else None,
                stages=win.stages if solved else (),
            )
        )
        winners.append(best if solved else None)
    return out, winners


def _cost(puzzle: Puzzle, r: SearchResult) -> float:
    """A result's solution cost (``inf`` when not solved)."""
    if not r.solved:
        return float("inf")
    return float(r.cost) if r.cost is not None else float(puzzle.path_cost(r.actions))
