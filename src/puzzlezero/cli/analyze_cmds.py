"""The commands that read solutions: ``report analysis`` (the papers' analyses of any solver's
solutions and of a heuristic; registered under ``report`` by :mod:`.report_cmds`) and ``macros``
(options mined from solutions).

Examples::

    puzzlezero bench cube3 --cases benchmarks/cube3.json --ids 0:20 --out bench.json
    puzzlezero report analysis cube3 --solutions bench.json                      # 3- and 4-move patterns
    puzzlezero report analysis cube3 --cases benchmarks/cube3.json --ids 0:100   # h <= optimal share
    puzzlezero macros cube3 --solutions bench.json --out cube3.macros
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from puzzlezero.cli.main import app
from puzzlezero.cli.puzzle_cmds import PuzzleArg
from puzzlezero.cli.solve_flags import ModelOpt
from puzzlezero.errors import PuzzleError
from puzzlezero.registry import make
from puzzlezero.storage import atomic_write_text


def analyze_cmd(
    puzzle: PuzzleArg,
    solutions: Annotated[
        Path | None,
        typer.Option(
            "--solutions",
            help="Solutions to analyse: a `bench --out` report, a `solve --json` answer, a JSON list "
            "of solutions, or text with one solution per line.",
            show_default=False,
        ),
    ] = None,
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            help="Benchmark file whose cases have optimal lengths: the share of them the heuristic "
            "does not overestimate.",
            show_default=False,
        ),
    ] = None,
    ids: Annotated[
        str | None, typer.Option("--ids", help="Only case ids A..B-1, written A:B.", show_default=False)
    ] = None,
    heuristic: Annotated[
        str, typer.Option("--heuristic", help="The heuristic compared with the optimal costs.")
    ] = "learned",
    model: ModelOpt = None,
    top: Annotated[int, typer.Option("--top", help="How many of the most common subsequences to list.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the figures, as JSON.")] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Also write the figures to this JSON file.", show_default=False),
    ] = None,
) -> None:
    """The most common 3- and 4-move subsequences of solutions, how many are conjugates (a b a')
    or commutators (a b a' b'), the share of a b a' triplets (DeepCubeA: 13.11%), and on cases
    with optimal lengths the share where the heuristic does not overestimate (DeepCubeA: 66.8%)."""
    from puzzlezero.reports.solution_analysis import move_patterns, overestimate_share, read_solutions

    if solutions is None and cases is None:
        raise PuzzleError("give --solutions FILE (move patterns) and/or --cases FILE (heuristic vs optimal)")
    p = make(puzzle)
    report: dict[str, Any] = {"puzzle": p.name}
    if solutions is not None:
        patterns = move_patterns(p, read_solutions(p, solutions), top=top)
        report["solutions_file"] = str(solutions)
        report["patterns"] = patterns
        if not as_json:
            _print_patterns(patterns)
    if cases is not None:
        import numpy as np

        from puzzlezero.case_files import cases_path, load_cases, parse_ids
        from puzzlezero.solver import get_heuristic

        path = cases_path(p, cases)
        known = [c for c in load_cases(p, path, parse_ids(ids)) if c.optimal_length is not None]
        if not known:
            raise PuzzleError(f"{path}: no case has an optimal length to compare the heuristic with")
        h = get_heuristic(p, heuristic, model, "value")
        # known: the cases with an optimal length
        share = overestimate_share(
            h, np.stack([c.state for c in known]), [cast(int, c.optimal_length) for c in known]
        )
        report["heuristic"] = {"name": heuristic, "model": model, "cases_file": str(path), **share}
        if not as_json:
            typer.echo(
                f"heuristic {heuristic}: does not overestimate on {share['not_overestimating_pct']}% of "
                f"{share['states']} states with optimal lengths (DeepCubeA: 66.8%); mean h - optimal "
                f"{share['mean_error']:+}, largest overestimate {share['max_overestimate']}"
            )
    if out is not None:
        atomic_write_text(out, json.dumps(report, indent=2) + "\n")
        typer.echo(f"figures written to {out}", err=as_json)
    if as_json:
        typer.echo(json.dumps(report))


def _print_patterns(m: dict[str, Any]) -> None:
    typer.echo(f"{m['solutions']} solutions, {m['moves']} moves")
    typer.echo(
        f"a b a' triplets: {m['conjugate_triplets_pct']}% of all 3-move windows (DeepCubeA: 13.11%); "
        f"a b a' b' quadruplets: {m['commutator_quadruplets_pct']}% of all 4-move windows"
    )
    for k, kind in (("3", "conjugate"), ("4", "commutator")):
        w = m["windows"][k]
        also = "" if k == "3" else f", {w['conjugates_in_top']} conjugates a b b a'"
        typer.echo(
            f"most common {k}-move subsequences ({w['total']} windows, {w['distinct']} distinct; "
            f"{w[kind + 's_in_top']} of the top {len(w['top'])} are {kind}s{also}):"
        )
        for row in w["top"]:
            marks = [name for name in ("conjugate", "commutator") if row.get(name)]
            mark = f"  [{', '.join(marks)}]" if marks else ""
            typer.echo(f"  {row['moves']:<16} {row['count']:>6}  {row['pct']:>6.2f}%{mark}")


@app.command("macros")
def macros_cmd(
    puzzle: PuzzleArg,
    solutions: Annotated[
        Path,
        typer.Option(
            "--solutions",
            help="Solutions to mine: a `bench --out` report, a `solve --json` answer, a JSON list of "
            "solutions, or text with one solution per line.",
        ),
    ],
    lengths: Annotated[
        str, typer.Option("--lengths", help="Option lengths LO:HI, inclusive (Dong et al.: 4:12).")
    ] = "4:12",
    top: Annotated[int, typer.Option("--top", min=1, help="Options of each length (Dong et al.: 10).")] = 10,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the options file here (else print it).", show_default=False),
    ] = None,
) -> None:
    """Dong, Hao and Nakayama's options "by rollout": the TOP most common move sequences of each length in a
    solver's solutions, as an options file for `solve/bench --macros` (sequences seen once are
    left out)."""
    from puzzlezero.puzzles.macros import format_macros, mine_macros
    from puzzlezero.reports.solution_analysis import read_solutions

    try:
        lo, hi = (int(x) for x in lengths.split(":"))
    except ValueError:
        raise PuzzleError(f"--lengths: expected LO:HI (e.g. 4:12), got {lengths!r}") from None
    p = make(puzzle)
    sols = read_solutions(p, solutions)
    found = mine_macros(sols, range(lo, hi + 1), top)
    if not found:
        raise PuzzleError(
            f"{solutions}: no move sequence of {lengths} moves occurs twice in {len(sols)} solutions"
        )
    text = format_macros(p, found, f"{len(found)} options mined from {len(sols)} solutions in {solutions}\n"
                         f"(the {top} most common sequences of each length {lo}-{hi}; puzzlezero macros)")  # fmt: skip
    if out is None:
        typer.echo(text, nl=False)
    else:
        atomic_write_text(out, text)
        typer.echo(f"{len(found)} options written to {out}")
