"""Benchmark runner behind ``puzzlezero bench``: solve the cases of a benchmark file, verify every
solution by replay, compare with optimal lengths, and summarise.

The cases are read and checked by :mod:`puzzlezero.case_files` (JSON case files, Sokoban level
files, the shipped ones).

Timing: instances are solved one per search call by default for BWAS, so ``seconds`` is each
instance's own wall time and the median is honest. With ``together > 1`` (default for greedy
search) each instance gets its call's wall time divided by the instances in it (amortised); the
summary's ``timing`` field says which.

Network: the summary's ``network`` says what ran a learned heuristic's network (``"onnxruntime int8
(CPU with AVX-512 VNNI)"``, ``"onnxruntime float32"``), so that runs on different machines compare.

Memory: the summary's ``max_nodes_generated`` is the most nodes any one case generated, and
``peak_rss_mib`` the process's peak resident memory (``getrusage``'s ``ru_maxrss``) after the run:
a high-water mark of the whole process (model, tables, the largest search), not of one case.

Competition cases: where any case has a ``best_known`` length, every such case's result gets
its ``best_known`` and the summary ``best_known_cases``, ``mean_best_known``,
``mean_length_on_best_known`` (over those solved), ``at_or_below_best_known_pct`` and the totals
``total_length`` and ``total_best_known`` (the competition scores the sum of the solution lengths;
``total_length`` is ``None`` while any case with a best-known length is unsolved). A permutation
puzzle's solved cases also get ``santa_moves``, the solution as the competition writes it
(``f0.-r1.d0``).

Costs: where a puzzle's moves do not all cost 1, every solved case also gets its ``cost`` and the
summary ``mean_cost``.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack

import numpy as np

from puzzlezero.case_files import Case
from puzzlezero.errors import PuzzleError
from puzzlezero.machine import hardware, peak_rss_mib, provenance
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver import (
    HEURISTICS,
    SEARCHES,
    SolveOptions,
    SolveResult,
    SolveSettings,
    States,
    options_for,
    resolve_entry,
    solve_many,
)
from puzzlezero.solver.memory import call_instances, check_memory
from puzzlezero.solver.tables import prepare_solve_tables
from puzzlezero.storage import atomic_write_json

__all__ = [
    "BY_SECONDS",
    "BenchReport",
    "best_known_summary",
    "by_seconds",
    "hardware",
    "network_description",
    "peak_rss_mib",
    "run_bench",
]


@dataclass
class BenchReport:
    """``summary`` and per-case ``results`` as written to the ``--json`` file."""

    summary: dict[str, Any]
    results: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary, "results": self.results}

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the report as JSON, atomically."""
        return atomic_write_json(path, self.to_json())


def _within_wildcards(puzzle: Puzzle, case: Case, result: Any) -> Any:
    """``result`` with its solution cut at the first state that differs from the goal in at most
    the case's wildcards (a Santa 2023 case may allow more than its puzzle's definition: the search
    solves to the goal, and the moves after such a state are not needed)."""
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle

    if not result.solved or not isinstance(puzzle, PermutationPuzzle) or case.wildcards <= puzzle.wildcards:
        return result
    cut = puzzle.solved_prefix(case.state, result.actions, case.wildcards)
    if len(cut) == len(result.actions):
        return result
    return dataclasses.replace(
        result,
        actions=tuple(cut),
        solution=tuple(puzzle.format_moves(cut)),
        cost=puzzle.path_cost(cut),
    )


def run_bench(
    puzzle: Puzzle,
    cases: Sequence[Case],
    *,
    reference: str | None = None,
    reference_time_limit: float = 60.0,
    together: int | None = None,
    on_results: Callable[[list[SolveResult]], None] | None = None,
    cases_file: str | None = None,
    ray: bool = False,
    ray_address: str | None = None,
    opts: SolveOptions | None = None,
    **given: Unpack[SolveSettings],
) -> BenchReport:
    """Solve ``cases`` with :func:`~puzzlezero.solver.solve_many`, with ``opts`` resolved by the
    caller or else the settings ``given`` (:class:`~puzzlezero.solver.SolveSettings`: ``search``,
    ``heuristic``, ``model``, ``weight``, ``batch``, ``max_nodes``, ``time_limit``, ...), resolved
    here once and passed down as they are.

    ``reference="optimal"`` fills in missing optimal lengths with
    ``puzzlezero.classic.optimal:optimal_length(puzzle, state, time_limit)``.

    ``ray`` (or a ``ray_address``) runs the search calls as Ray tasks
    (:func:`puzzlezero.ray_solve.solve_on_ray`): the same chunks, the same results where the search
    is deterministic; the summary's ``hardware`` then lists the machines that ran them.
    """
    if reference not in (None, "optimal"):
        raise PuzzleError(f"--reference must be 'optimal', got {reference!r}")
    opts = options_for(puzzle, opts, given)
    optimal = [c.optimal_length for c in cases]
    if opts.goal != "solved":  # the cases' optimal lengths are to the solved state, not to this goal
        if reference == "optimal":
            raise PuzzleError(f"--reference optimal measures the cost to solved, not to {opts.goal!r}")
        optimal = [None] * len(cases)
    if reference == "optimal" and any(o is None for o in optimal):
        length_fn = resolve_entry("puzzlezero.classic.optimal:optimal_length", "--reference optimal")
        optimal = [
            o if o is not None else length_fn(puzzle, c.state, reference_time_limit)
            for o, c in zip(optimal, cases, strict=True)
        ]
    states = States(puzzle.name, np.stack([c.state for c in cases]))  # each checked as its case was read
    santa: Callable[[Sequence[int]], str] | None = getattr(puzzle, "santa_moves", None)
    machines: list[str] = []
    if ray or ray_address is not None:
        from puzzlezero.ray_solve import solve_on_ray

        solved = solve_on_ray(
            puzzle,
            states,
            address=ray_address,
            together=together,
            on_results=on_results,
            hardware=machines,
            opts=opts,
        )
    else:
        check_memory(puzzle, opts, call_instances(opts, len(cases), together))  # before any table
        prepare_solve_tables(puzzle, opts)  # built before the first case's clock, not inside it
        solved = solve_many(puzzle, states, opts, together=together, on_results=on_results)
    solved = [_within_wildcards(puzzle, c, r) for c, r in zip(cases, solved, strict=True)]
    results = [
        {
            "id": c.id,
            "solved": r.solved,
            "solution": list(r.solution) if r.solved else None,
            "length": r.length,
            "optimal_length": opt,
            "nodes_generated": r.nodes_generated,
            "seconds": round(r.seconds, 6),
            "status": r.status,
        }
        | ({"half_turn_length": r.half_turn_length} if r.half_turn_length is not None else {})
        | ({"cost": r.cost} if r.solved and not puzzle.unit_costs else {})
        | (
            {
                "first_solution_seconds": round(r.improvements[0][0], 6),
                "improvements": [{"seconds": round(t, 6), "length": n} for t, n in r.improvements],
            }
            if r.improvements
            else {}
        )
        | ({"fallback": r.fallback} if r.fallback else {})
        | ({"stages": [dict(st) for st in r.stages]} if r.stages else {})
        | ({"search_length": r.search_length} if r.search_length is not None else {})
        | ({"model": r.model} if r.model is not None else {})
        | ({"best_known": c.best_known} if c.best_known is not None else {})
        | ({"santa_moves": santa(r.actions)} if santa is not None and r.solved else {})
        for c, r, opt in zip(cases, solved, optimal, strict=True)
    ]
    k = together or SEARCHES[opts.search].together
    summary = summarize(results)
    summary.update(
        puzzle=puzzle.name,
        cases_file=cases_file,
        search=opts.search,
        heuristic=opts.heuristic,
        model=opts.model or (_default_model(puzzle, opts) if _loads_model(opts.heuristic) else None),
        models=list(opts.models) or None,  # an ensemble's members, side by side
        model_wins=_wins(results, opts.models),
        member_beam_widths=_member_widths(opts),
        network=None if machines else network_description(puzzle, opts),
        weight=opts.weight if _weighted(opts.search) else None,
        batch=opts.batch if _weighted(opts.search) else None,
        stages=[list(stage) for stage in opts.stages] or None,
        beam_width=opts.beam_width if SEARCHES[opts.search].reads("beam_width") else None,
        options=dict(opts.options) or None,  # the search's and heuristic's (mcts_c, wcd_depth, ...)
        fallback=opts.fallback,
        shortcut=opts.shortcut or None,
        windows=opts.windows or None,
        max_nodes=opts.max_nodes,
        time_limit=opts.time_limit,
        timing="per instance (one search call each)"
        if k == 1
        else f"amortised: {k} instances per search call, each gets the call's wall time / instances",
        peak_rss_mib=None if machines else peak_rss_mib(),  # on Ray: the driver's is not the solvers'
        hardware="; ".join(machines) if machines else hardware(),
        **provenance(),
        ray=(ray_address or "default") if machines else None,
        goal=None if opts.goal == "solved" else opts.goal,
        macros=[" ".join(puzzle.format_moves(m)) for m in opts.macros] or None,
    )
    summary.update(stage_summary(results))
    if getattr(puzzle, "prune_dead_squares", False):
        summary["prune_dead_squares"] = True  # Sokoban searched without its dead-square pushes
    return BenchReport(summary, results)


def _wins(results: Sequence[dict[str, Any]], models: Sequence[str]) -> dict[str, int] | None:
    """An ensemble: how many cases each member's solution won (was the shortest, or the first
    member's among the shortest); ``None`` for one model."""
    if not models:
        return None
    return {m: sum(1 for r in results if r.get("model") == m) for m in models}


def _member_widths(opts: SolveOptions) -> dict[str, int | list[int]] | None:
    """An ensemble's members that search other beam widths than the solve's (a network-free
    member's wider beam), with theirs; ``None`` where none does."""
    from puzzlezero.solver.members import member_options

    out: dict[str, int | list[int]] = {}
    for m in opts.models:
        widths = member_options(opts, m).beam_width
        if widths != opts.beam_width and SEARCHES[opts.search].reads("beam_width"):
            out[m] = widths if isinstance(widths, int) else list(widths)
    return out or None


def _weighted(search: str) -> bool:
    """Does the search take ``weight`` and ``batch`` (BWAS, Q*, and layered BWAS per stage)?"""
    return SEARCHES[search].reads("weight")


def _loads_model(heuristic: str | None) -> bool:
    """Does this heuristic (a resolved name: ``learned``, ``learned-q``, ``learned-policy``...)
    load a model?"""
    spec = HEURISTICS.get(heuristic) if heuristic else None
    return spec is not None and spec.uses_model


def network_description(puzzle: Puzzle, opts: SolveOptions) -> str | None:
    """What ran the network of a run's learned heuristic, in words (``"onnxruntime int8 (CPU with
    AVX-512 VNNI)"``; a layered solve's networks by goal where they differ), from the networks the
    solver loaded (:func:`puzzlezero.nn.runtime.load_network`, cached: nothing is loaded again);
    ``None`` for a heuristic without a network."""
    name = opts.heuristic or ""
    if not _loads_model(name):
        return None
    if name.startswith("learned-onnx"):
        return "onnxruntime float32"
    from puzzlezero.nn.runtime import load_network
    from puzzlezero.solver import stage_models

    precision = "float32" if name == "learned-fp32" else str(dict(opts.options).get("precision", "auto"))
    if SEARCHES[opts.search].per_goal:
        goals = tuple(puzzle.goal_predicates())
        models = stage_models(puzzle, opts.model, goals)
    elif opts.models:  # the members that are models (heuristic:NAME runs no network)
        from puzzlezero.solver.members import model_members

        models = {m: m for m in model_members(opts.models)}
        if not models:
            return None
    else:
        models = {"": opts.model or _default_model(puzzle, opts)}
    described = {goal: load_network(m, precision=precision).describe() for goal, m in models.items()}
    if len(set(described.values())) == 1:
        return next(iter(described.values()))
    return "; ".join(f"{goal}: {words}" for goal, words in described.items())


def _default_model(puzzle: Puzzle, opts: SolveOptions) -> str:
    """The model a learned heuristic loads when none is named: the puzzle's own (or the one the
    heuristic reads, ``HeuristicSpec.default_model``), or for layered solving its
    ``<puzzle>-layered`` models."""
    from puzzlezero.solver import LAYERED_MODEL

    if SEARCHES[opts.search].per_goal:
        return LAYERED_MODEL.format(puzzle=puzzle.name)
    spec = HEURISTICS.get(opts.heuristic or "")
    return (spec.default_model if spec else None) or puzzle.name


def stage_summary(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Layered solving: ``{"stage_mean_lengths": {goal: mean length}, "stage_mean_seconds":
    {goal: mean seconds}}`` over the solved cases (each goal's stage); ``{}`` for other searches."""
    solved = [r for r in results if r["solved"] and r.get("stages")]
    if not solved:
        return {}
    goals = [st["goal"] for st in solved[0]["stages"]]
    return {
        "stage_mean_lengths": {
            g: round(float(np.mean([r["stages"][k]["length"] for r in solved])), 4)
            for k, g in enumerate(goals)
        },
        "stage_mean_seconds": {
            g: round(float(np.mean([r["stages"][k]["seconds"] for r in solved])), 4)
            for k, g in enumerate(goals)
        },
    }


def summarize(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The summary block of a report from its per-case results (``None`` where undefined).
    ``mean_excess`` is over the solved cases with an optimal length; ``length_stderr`` and
    ``excess_stderr`` are the standard errors of those means (sample deviation over the square
    root of the count), which say whether two runs differ by more than their states' spread."""
    n = len(results)
    solved = [r for r in results if r["solved"]]
    with_opt = [r for r in results if r["optimal_length"] is not None]
    seconds = [r["seconds"] for r in results]
    total_s = sum(seconds)
    nodes = [r["nodes_generated"] for r in results]

    def mean(xs: Sequence[float]) -> float | None:
        return round(float(np.mean(xs)), 4) if xs else None

    def stderr(xs: Sequence[float]) -> float | None:  # of the mean: how far another draw may put it
        return round(float(np.std(xs, ddof=1) / np.sqrt(len(xs))), 4) if len(xs) > 1 else None

    lengths = [r["length"] for r in solved]
    excess = [r["length"] - r["optimal_length"] for r in with_opt if r["solved"]]

    extra: dict[str, Any] = {}
    htm = [r["half_turn_length"] for r in solved if "half_turn_length" in r]
    if htm:  # cubes: the half-turn metric beside the quarter turns
        extra["mean_half_turn_length"] = mean(htm)
    costs = [r["cost"] for r in solved if "cost" in r]
    if costs:  # moves of unequal cost: the cost beside the length
        extra["mean_cost"] = mean(costs)
    rescued = [r for r in solved if r.get("fallback")]
    if rescued:  # solved by the fallback search after the puzzle's own search left them unsolved
        extra["fallback_pct"] = round(100.0 * len(rescued) / n, 2)
    reduced = [r for r in solved if "search_length" in r]
    if reduced:  # paths shortened after the search (reduce_moves, shortcuts), and their own length
        extra["reduced_pct"] = round(100.0 * len(reduced) / n, 2)
        extra["mean_search_length"] = mean([r.get("search_length", r["length"]) for r in solved])
    extra.update(best_known_summary(results))
    first = [r["first_solution_seconds"] for r in solved if "first_solution_seconds" in r]
    if first:  # anytime solving: when the first solution came, and how good it was by when
        extra["median_first_solution_seconds"] = round(statistics.median(first), 4)
        extra["by_seconds"] = by_seconds(results)
    return {
        "cases": n,
        "solved_pct": round(100.0 * len(solved) / n, 2) if n else None,
        "mean_length": mean(lengths),
        "length_stderr": stderr(lengths),
        "mean_optimal_length": mean([r["optimal_length"] for r in with_opt]),
        "mean_excess": mean(excess),
        "excess_stderr": stderr(excess),
        "optimal_pct": round(
            100.0 * sum(r["solved"] and r["length"] == r["optimal_length"] for r in with_opt) / len(with_opt),
            2,
        )
        if with_opt
        else None,
        "mean_nodes": mean(nodes),
        "max_nodes_generated": max(nodes) if nodes else None,
        "nodes_per_second": round(sum(nodes) / total_s, 1) if total_s > 0 else None,
        "median_seconds": round(statistics.median(seconds), 4) if seconds else None,
        "mean_seconds": mean(seconds),
    } | extra


def best_known_summary(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The comparison with best known lengths, over the cases that have one (``{}`` where none
    does): ``best_known_cases``; ``mean_best_known``; ``mean_length_on_best_known``, the mean found
    length over those solved; ``at_or_below_best_known_pct``, the share of them solved in at most
    their best known length; ``total_length`` and ``total_best_known``, the sums of the found and
    the best known lengths (a competition's score is the sum of its solutions' lengths;
    ``total_length`` is ``None`` while any of these cases is unsolved)."""
    known = [r for r in results if r.get("best_known") is not None]
    if not known:
        return {}
    solved = [r for r in known if r["solved"]]
    return {
        "best_known_cases": len(known),
        "mean_best_known": round(float(np.mean([r["best_known"] for r in known])), 4),
        "mean_length_on_best_known": round(float(np.mean([r["length"] for r in solved])), 4)
        if solved
        else None,
        "at_or_below_best_known_pct": round(
            100.0 * sum(r["length"] <= r["best_known"] for r in solved) / len(known), 2
        ),
        "total_length": sum(r["length"] for r in solved) if len(solved) == len(known) else None,
        "total_best_known": sum(r["best_known"] for r in known),
    }


#: the instants of :func:`by_seconds` (those up to the longest case's time are reported)
BY_SECONDS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)


def by_seconds(
    results: Sequence[dict[str, Any]], instants: Sequence[float] = BY_SECONDS
) -> list[dict[str, Any]]:
    """The anytime profile of a run: for each instant ``t`` of ``instants`` up to the longest case's
    time, what the searches had found by ``t`` seconds into each case (its ``improvements``, the
    time and length of each shorter solution; a case without them counts as found at its
    ``seconds``): ``{"seconds", "solved_pct", "mean_length", "mean_excess", "optimal_pct"}``, the
    mean length over the cases solved by then, and where every case has an optimal length, its
    excess over optimal on those cases and the share solved optimally.

    This reads one run at its own time limit: an anytime schedule given ``t`` seconds divides them
    otherwise, so the figure at ``t`` tells what the run had by then, not what a run limited to
    ``t`` would return."""
    if not results:
        return []
    longest = max(r["seconds"] for r in results)
    known = all(r["optimal_length"] is not None for r in results)
    rows = []
    for t in [x for x in instants if x < longest] + [longest]:
        best: list[tuple[int, int | None]] = []  # (length by t, optimal) of the cases solved by t
        for r in results:
            if not r["solved"]:
                continue
            steps = r.get("improvements") or [{"seconds": r["seconds"], "length": r["length"]}]
            found = [s["length"] for s in steps if s["seconds"] <= t]
            if found:
                best.append((min(found), r["optimal_length"]))
        row: dict[str, Any] = {
            "seconds": t,
            "solved_pct": round(100.0 * len(best) / len(results), 2),
            "mean_length": round(float(np.mean([b for b, _ in best])), 4) if best else None,
        }
        if known:
            excess = [b - o for b, o in best if o is not None]  # every optimum is known here
            row["mean_excess"] = round(float(np.mean(excess)), 4) if excess else None
            row["optimal_pct"] = round(100.0 * sum(b == o for b, o in best) / len(results), 2)
        rows.append(row)
    return rows
