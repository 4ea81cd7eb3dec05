"""``puzzlezero report`` (the paper's comparison tables) and ``puzzlezero pdb`` (build tables)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from puzzlezero.cli.main import app
from puzzlezero.errors import PuzzleError

_DEFAULT_BENCH = Path(os.environ.get("PUZZLEZERO_BENCHMARKS", "../shared/benchmarks"))


@app.command("report")
def report_cmd(
    puzzles: Annotated[
        list[str] | None,
        typer.Option("--puzzle", help="Puzzle to include (repeat); default cube3, puzzle15, puzzle24."),
    ] = None,
    cases: Annotated[int, typer.Option("--cases", min=1, help="First N benchmark cases per puzzle.")] = 5,
    methods: Annotated[
        str, typer.Option("--methods", help="Comma-separated: learned, pdb, optimal.")
    ] = "learned,pdb,optimal",
    bench_dir: Annotated[
        Path, typer.Option("--bench-dir", help="Folder of <puzzle>.json case files ($PUZZLEZERO_BENCHMARKS).")
    ] = _DEFAULT_BENCH,
    time_limit: Annotated[
        float, typer.Option("--time-limit", min=0.001, help="BWAS seconds per state.")
    ] = 60.0,
    optimal_time_limit: Annotated[
        float, typer.Option("--optimal-time-limit", min=0.001, help="Optimal solver seconds per state.")
    ] = 60.0,
    max_nodes: Annotated[
        int, typer.Option("--max-nodes", min=1, help="Node cap per state, every method.")
    ] = 10**12,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="Model name or folder for the learned heuristic (default: the puzzle's)."
        ),
    ] = None,
    speed_states: Annotated[
        int, typer.Option("--speed-states", min=0, help="States for the heuristic speed table (0: skip it).")
    ] = 1000,
    memory: Annotated[bool, typer.Option("--memory/--no-memory", help="Include the memory table.")] = True,
    out: Annotated[Path | None, typer.Option("--out", help="Also write the Markdown here.")] = None,
) -> None:
    """Learned BWAS vs PDB BWAS vs optimal on benchmark cases, PDB vs network memory, heuristic
    speed, as Markdown (like the DeepCubeA paper's Tables 1-5). Pattern databases are built on first
    use (the 15-puzzle's and the cube's take minutes, the 24-puzzle's longer)."""
    from puzzlezero.bench import hardware
    from puzzlezero.optimal.report import METHODS, compare, memory_rows, render_report, speed_rows
    from puzzlezero.storage import atomic_write_text

    names = puzzles or ["cube3", "puzzle15", "puzzle24"]
    chosen = [m.strip() for m in methods.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise PuzzleError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    rows = []
    for name in names:
        cases_file = bench_dir / f"{name}.json"
        if not cases_file.exists():
            raise PuzzleError(f"{cases_file}: no such cases file (set --bench-dir or $PUZZLEZERO_BENCHMARKS)")
        for m in chosen:
            limit = optimal_time_limit if m == "optimal" else time_limit
            typer.echo(f"{name}: {METHODS[m][0]} on {cases} case(s), {limit:g} s each ...", err=True)
            rows.append(
                compare(name, cases_file, cases, m, model=model, time_limit=limit, max_nodes=max_nodes)
            )
    header = (f"# puzzlezero report\n\n{cases} case(s) per puzzle from {bench_dir}; BWAS limit {time_limit:g} s, "
              f"optimal limit {optimal_time_limit:g} s per state; {hardware()}. "
              "Lengths, nodes and seconds are means over solved cases; "
              "% optimal is against the benchmark's published optimal lengths.")  # fmt: skip
    mem = memory_rows(names, model) if memory else []
    speed = speed_rows(names, speed_states, model) if speed_states else []
    text = render_report(rows, mem, speed, header)
    typer.echo(text)
    if out is not None:
        atomic_write_text(out, text)


@app.command("pdb")
def pdb_cmd(
    puzzles: Annotated[list[str], typer.Argument(help="Puzzles whose pattern databases to build or check.")],
) -> None:
    """Build (once) or load the pattern databases of PUZZLES and print their sizes."""
    from puzzlezero.optimal import pdb_heuristic
    from puzzlezero.registry import make

    for name in puzzles:
        h = pdb_heuristic(make(name))
        typer.echo(f"{name}: {getattr(h, 'name', 'pdb')}, {getattr(h, 'nbytes', 0) / 1e6:,.1f} MB")
