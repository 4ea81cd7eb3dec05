"""Solving commands: ``solve`` (one state) and ``bench`` (a benchmark file of cases); their
flags are declared in :mod:`puzzlezero.cli.solve_flags`.

Examples::

    puzzlezero solve cube3 "R U R' U' F2" --json
    puzzlezero solve puzzle15 "1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15" --search gbfs
    puzzlezero bench cube3 --cases benchmarks/cube3.json --ids 0:20 --out out.json
    puzzlezero bench cube3 --cases hard --search kociemba   # shipped: superflip, superflip * four-spot
    puzzlezero solve cube3 "R U R' U' F2 D" --search mcts --mcts-c 2 --time-limit 60
    puzzlezero solve cube3 "R U R' U' F2 D" --search bwas --heuristic wcd --wcd-depth 1 --weight 1 --batch 1
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer

from puzzlezero.cli.main import BUDGET_PANEL, EXPERT_PANEL, OUTPUT_PANEL, SEARCH_PANEL, app
from puzzlezero.cli.puzzle_cmds import PuzzleArg, StateArg, read_state_text
from puzzlezero.cli.solve_flags import (
    MemoryBudgetOpt,
    SolveFlags,
    use_memory_budget,
    with_solve_flags,
)
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make

if TYPE_CHECKING:
    from puzzlezero.solver import Improvement, SolveResult, States


QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="Print only the answer's moves, nothing while it searches.",
        rich_help_panel=OUTPUT_PANEL,
    ),
]


@app.command("solve")
@with_solve_flags
def solve_cmd(
    puzzle: PuzzleArg,
    state: StateArg,
    flags: SolveFlags,
    memory_budget: MemoryBudgetOpt = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print only the result, as JSON.", rich_help_panel=OUTPUT_PANEL),
    ] = False,
    quiet: QuietOpt = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Also write the result as JSON to this file.",
            show_default=False,
            rich_help_panel=OUTPUT_PANEL,
        ),
    ] = None,
) -> None:
    """Solve one STATE; the solution is verified by replay. Each solution is shown as soon as the
    search has it (the first, then each shorter one), then the answer. Exit code 1 when not solved."""
    from puzzlezero.cli.progress import SolutionFeed
    from puzzlezero.solver import read_states, solve_many

    use_memory_budget(memory_budget)
    given = make(puzzle)
    start = read_states(given, [read_state_text(state)])  # read and checked here, once
    as_given = start.array[0]
    p, read = given, _family_reading(given, start.array, flags)
    if read is not None:  # a goal of distinct labels in the family's colours
        p, start = read
    opts = flags.options(p)  # resolved here, once
    what = (
        f"{p.name}, {opts.search}" + (", anytime" if opts.stages else "") + f", up to {opts.time_limit:g} s"
    )
    feed = SolutionFeed(p, what, show=not (as_json or quiet))
    try:
        with feed:
            r = solve_many(p, start, opts, on_solution=feed)[0]
    except KeyboardInterrupt:
        if feed.best is None:
            raise
        _interrupted(p, feed.best, as_json, quiet)
        raise typer.Exit(130) from None
    shown = r.to_json()
    if p is not given:  # solved in the family's colours: the answer checked on the state as given
        _check_on(given, as_given, p, r.solution if r.solved else None)
        shown |= {"puzzle": given.name, "read_as": p.name}
    if out is not None:
        from puzzlezero.storage import atomic_write_json

        try:
            atomic_write_json(out, shown)
        except OSError as exc:
            raise PuzzleError(f"cannot write {out}: {exc.strerror or exc}") from None
    if as_json:
        typer.echo(json.dumps(shown))
    elif quiet:
        if r.solved:
            typer.echo(" ".join(p.format_compact(r.actions)))
        else:
            typer.echo(f"not solved within budget ({r.status})", err=True)
    else:
        _print_answer(p, r)
        if p is not given:
            typer.echo(f"read as:  {p.name}, each label in the colour of its home (the same goal)")
    if not r.solved:
        raise typer.Exit(1)


def _family_reading(p: Puzzle, states: np.ndarray, flags: SolveFlags) -> tuple[Puzzle, States] | None:
    """``states`` read in the colours of ``p``'s family (:func:`~puzzlezero.solver.in_family_colours`)
    unless a model, goal or macros of the definition's own are named."""
    if flags.model or flags.models or flags.goal or flags.macros:
        return None
    from puzzlezero.solver import in_family_colours

    return in_family_colours(p, states)


def _check_on(given: Puzzle, state: np.ndarray, family: Puzzle, solution: Sequence[str] | None) -> None:
    """An answer found in the family's colours, replayed move by move (by name) on the
    definition's own state."""
    if solution is not None:
        moves = given.parse_moves(list(solution))
        if not bool(given.is_goal(given.apply_moves(state, moves)[None])[0]):  # pragma: no cover
            raise PuzzleError(f"the answer in {family.name}'s colours does not solve the {given.name} state")


def _interrupted(p: Puzzle, best: Improvement, as_json: bool, quiet: bool) -> None:
    """The answer of a solve stopped by Ctrl-C: the best solution found so far (verified)."""
    from puzzlezero.cli.progress import compact

    if as_json:
        typer.echo(json.dumps({"puzzle": p.name, "interrupted": True} | best.to_json()))
    elif quiet:
        typer.echo(compact(p, best.solution))
    else:
        typer.echo(f"solution: {compact(p, best.solution)}")
        typer.echo(f"length:   {best.length} moves (interrupted: the best found in {best.seconds:.1f} s)")


def _print_answer(p: Puzzle, r: SolveResult) -> None:
    """The answer and its summary, as people read them."""
    if r.solved:  # as people write it (cubes: R R -> R2); the JSON keeps the quarter turns
        typer.echo(f"solution: {' '.join(p.format_compact(r.actions)) or '(already solved)'}")
        htm = "" if r.half_turn_length is None else f" (QTM), {r.half_turn_length} half-turn moves"
        searched = (
            ""
            if r.search_length is None
            else f" (the search's path had {r.search_length}: cancelling moves or detours taken out)"
        )
        typer.echo(f"length:   {r.length} moves{htm}{searched}")
        if not p.unit_costs:  # moves of unequal cost (a cube whose half turns cost more)
            typer.echo(f"cost:     {r.cost:g}")
    else:
        typer.echo(f"not solved within budget ({r.status})")
    for st in r.stages:
        if st["status"] == "solved":
            shown = " ".join(p.format_compact(p.parse_moves(st["solution"]))) or "(already met)"
        else:
            shown = f"not reached ({st['status']})"
        typer.echo(f"  {st['goal']:<8} {shown}")
    if r.fallback:
        typer.echo(f"fallback: found by {r.fallback} (the search left it unsolved)")
    if len(r.improvements) > 1:
        steps = ", then ".join(f"{n} at {t:.1f} s" for t, n in r.improvements)
        typer.echo(f"found:    {steps}")
    typer.echo(f"nodes:    {r.nodes_generated:,} generated")
    waited = (
        f" (and {r.prepared_seconds:.1f} s before its clock began: the search built and warmed up)"
        if r.prepared_seconds >= 0.05
        else ""
    )
    typer.echo(f"time:     {r.seconds:.3f} s{waited}")


@app.command("bench")
@with_solve_flags
def bench_cmd(
    puzzle: PuzzleArg,
    cases: Annotated[
        Path,
        typer.Option(
            "--cases",
            help="Benchmark JSON file (`puzzlezero cases make` makes one), a shipped set by name "
            "(cube3: 'hard', the superflip and superflip * four-spot), or for sokoban a Boxoban "
            "level file ('; N' headers, 10 rows per level) or a directory of them.",
            show_default=False,
        ),
    ],
    ids: Annotated[
        str | None,
        typer.Option(
            "--ids",
            help="Only ids A..B-1, written A:B (level files: the levels numbered A..B-1 in each file).",
            show_default=False,
        ),
    ] = None,
    *,
    flags: SolveFlags,
    memory_budget: MemoryBudgetOpt = None,
    together: Annotated[
        int | None,
        typer.Option(
            "--together",
            help="Instances per search call (default 1 for bwas: exact per-case "
            "times; more share network calls and report amortised times).",
            show_default=False,
            rich_help_panel=SEARCH_PANEL,
        ),
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option(
            "--reference",
            help="'optimal': compute missing optimal lengths.",
            show_default=False,
            rich_help_panel=OUTPUT_PANEL,
        ),
    ] = None,
    reference_time_limit: Annotated[
        float,
        typer.Option(
            "--reference-time-limit",
            help="Seconds per case for --reference optimal.",
            rich_help_panel=BUDGET_PANEL,
        ),
    ] = 60.0,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print only the report, as JSON.", rich_help_panel=OUTPUT_PANEL),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write the report to this JSON file (`plot-bench` and `report analysis --solutions` read it).",
            show_default=False,
            rich_help_panel=OUTPUT_PANEL,
        ),
    ] = None,
    ray: Annotated[
        bool,
        typer.Option(
            "--ray",
            help="Run the cases as Ray tasks (the ray extra): on the cluster named by $RAY_ADDRESS, "
            "else on a local Ray instance.",
            rich_help_panel=EXPERT_PANEL,
        ),
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="Ray cluster to run on (implies --ray): auto, HOST:6379 or ray://HOST:10001.",
            show_default=False,
            rich_help_panel=EXPERT_PANEL,
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Draw length against optimal and seconds per instance into this .png or .svg file.",
            show_default=False,
            rich_help_panel=OUTPUT_PANEL,
        ),
    ] = None,
    prune_dead_squares: Annotated[
        bool,
        typer.Option(
            "--prune-dead-squares",
            help="Sokoban: a push onto a dead square (no target reachable from it) is no move, so "
            "searches skip those dead ends; off by default, noted in the report's summary.",
            rich_help_panel=SEARCH_PANEL,
        ),
    ] = False,
) -> None:
    """Solve the cases of a benchmark file, verify every solution, and summarise."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from puzzlezero.bench import run_bench
    from puzzlezero.case_files import cases_path, load_cases, parse_ids

    use_memory_budget(memory_budget)
    p = make(puzzle)
    if prune_dead_squares:
        from puzzlezero.puzzles.sokoban import Sokoban

        if not isinstance(p, Sokoban):
            raise PuzzleError(f"--prune-dead-squares is for sokoban, not {puzzle}")
        p = p.pruned()
    if plot is not None:
        from puzzlezero.plots import figure_format

        figure_format(plot)  # a bad suffix fails before the bench, not after it
    cases = cases_path(p, cases)
    chosen = load_cases(p, cases, parse_ids(ids))
    given, as_given = p, chosen
    if not any(c.wildcards for c in chosen):  # fewer colours off is not fewer labels off
        read = _family_reading(p, np.stack([c.state for c in chosen]), flags)
        if read is not None:  # a goal of distinct labels in the family's colours
            p = read[0]
            chosen = [dataclasses.replace(c, state=s) for c, s in zip(chosen, read[1].array, strict=True)]
    opts = flags.options(p)
    err = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("solved {task.fields[solved]}"),
    )
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task(f"{puzzle} {opts.search}", total=len(chosen), solved=0)
        done = {"solved": 0}

        def advance(results: list[Any]) -> None:
            done["solved"] += sum(r.solved for r in results)
            progress.update(task, advance=len(results), solved=done["solved"])

        report = run_bench(
            p,
            chosen,
            reference=reference,
            reference_time_limit=reference_time_limit,
            together=together,
            on_results=advance,
            cases_file=str(cases),
            opts=opts,
            ray=ray,
            ray_address=ray_address,
        )
    if p is not given:
        for c, row in zip(as_given, report.results, strict=True):
            _check_on(given, c.state, p, row["solution"])
        report.summary.update(puzzle=given.name, read_as=p.name)
    if out is not None:
        report.write(out)
    if as_json:
        typer.echo(json.dumps(report.to_json()))
    else:
        Console().print(_table(report.summary, report.results))
    if out is not None:
        typer.echo(f"report written to {out}", err=as_json)
    if plot is not None:
        from puzzlezero.plots import plot_bench

        typer.echo(f"plot written to {plot_bench([report.to_json()], plot)}", err=as_json)


@app.command("plot-bench")
def plot_bench_cmd(
    reports: Annotated[
        list[Path], typer.Argument(help="Reports written by `bench --out`.", show_default=False)
    ],
    out: Annotated[Path, typer.Option("--out", help="The .png or .svg file to write.", show_default=False)],
    label: Annotated[
        list[str] | None,
        typer.Option(
            "--label",
            help="Legend label of each report, in order (default: its settings).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Draw saved bench reports side by side: length against optimal, seconds per instance."""
    from puzzlezero.plots import figure_format, plot_bench

    figure_format(out)
    loaded = []
    for path in reports:
        try:
            loaded.append(json.loads(path.read_text(encoding="utf-8")))
        except OSError as exc:
            raise PuzzleError(f"cannot read bench report {path}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise PuzzleError(
                f"{path} is not a bench report (bad JSON: {exc.msg}, line {exc.lineno})"
            ) from None
        except (ValueError, RecursionError) as exc:  # not UTF-8, or a number of 4,300+ digits
            raise PuzzleError(f"{path} is not a bench report ({exc})") from None
    typer.echo(f"plot written to {plot_bench(loaded, out, labels=label or None)}")


def _table(summary: dict[str, Any], results: list[dict[str, Any]], max_rows: int = 40) -> Any:
    """A rich renderable: the per-case rows (first ``max_rows``) and the summary."""
    from rich.console import Group
    from rich.table import Table

    cases = Table(title=f"{summary['puzzle']}: {summary['search']}", show_lines=False)
    for col in ("id", "solved", "length", "optimal", "nodes", "seconds"):
        cases.add_column(col, justify="right")
    for r in results[:max_rows]:
        opt = r["optimal_length"]
        mark = (
            ""
            if opt is None or r["length"] is None
            else (" =" if r["length"] == opt else f" +{r['length'] - opt}")
        )
        cases.add_row(
            str(r["id"]),
            "yes" if r["solved"] else f"[red]{r['status']}[/red]",
            "-"
            if r["length"] is None
            else f"{r['length']}{mark}"
            + (f" (HTM {r['half_turn_length']})" if "half_turn_length" in r else ""),
            "-" if opt is None else str(opt),
            f"{r['nodes_generated']:,}",
            f"{r['seconds']:.3f}",
        )
    if len(results) > max_rows:
        cases.caption = f"... {len(results) - max_rows} more cases in the JSON report"
    summ = Table(title="summary", show_header=False)
    summ.add_column("key")
    summ.add_column("value", justify="right")
    for key, value in summary.items():
        if value is not None and key != "by_seconds":
            summ.add_row(
                key,
                f"{value:,}"
                if isinstance(value, int | float) and not isinstance(value, bool)
                else str(value),
            )
    if not summary.get("by_seconds"):
        return Group(cases, summ)
    return Group(cases, summ, _by_seconds_table(summary["by_seconds"]))


def _by_seconds_table(rows: list[dict[str, Any]]) -> Any:
    """The anytime profile (``summary["by_seconds"]``): what the run had found by each instant."""
    from rich.table import Table

    table = Table(title="anytime: the shortest found by")
    cols = [("seconds", "by s"), ("solved_pct", "solved %"), ("mean_length", "mean length")]
    if "mean_excess" in rows[0]:
        cols += [("mean_excess", "excess"), ("optimal_pct", "optimal %")]
    for _, title in cols:
        table.add_column(title, justify="right")
    for row in rows:
        table.add_row(*("-" if row[key] is None else f"{row[key]:g}" for key, _ in cols))
    return table
