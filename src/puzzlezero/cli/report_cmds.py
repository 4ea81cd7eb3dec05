"""``puzzlezero report NAME``: the papers' tables and figures (:mod:`puzzlezero.reports`).

Examples::

    puzzlezero report tables --n 5 --out report.md                   # DeepCubeA Tables 1-5
    puzzlezero report analysis cube3 --solutions bench.json          # DeepCubeA's solution analysis
    puzzlezero report solve-rate --out docs/bench/solve_rate_by_depth   # Rute's plot
    puzzlezero report wcd --n 200 --out docs/bench/wcd_table1           # Yao's Table 1
    puzzlezero report layered --out docs/bench/layered_table1           # Dong et al.'s Table 1
    puzzlezero report merge part-0.json part-1.json --out run.json      # a run made in parts, joined
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from puzzlezero.cli.analyze_cmds import analyze_cmd
from puzzlezero.cli.main import BUDGET_PANEL, OUTPUT_PANEL, SEARCH_PANEL, app
from puzzlezero.errors import PuzzleError

_DEFAULT_BENCH = Path(os.environ.get("PUZZLEZERO_BENCHMARKS", "."))

#: ``--threads`` of the reports that run networks
ThreadsOpt = Annotated[
    int,
    typer.Option("--threads", min=1, help="Intra-op threads of the networks.", rich_help_panel=BUDGET_PANEL),
]

report_app = typer.Typer(
    name="report",
    help="The papers' tables and figures, reproduced: report tables | analysis | solve-rate | wcd | "
    "layered; and bench reports made in parts, joined: report merge.",
    no_args_is_help=True,
)
app.add_typer(report_app)

report_app.command("analysis")(analyze_cmd)


def _set_threads(threads: int) -> None:
    """The intra-op threads of the networks a report runs: onnxruntime's, and torch's where a report
    loads a torch network (torch is then imported already, or is imported by that load)."""
    from puzzlezero.nn.runtime import set_default_threads

    set_default_threads(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


def _write(out: Path, text: str, report: dict) -> None:
    """A report's Markdown as ``OUT.md`` and its figures as ``OUT.json``, each written atomically."""
    from puzzlezero.storage import atomic_write_text

    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out.with_suffix(".md"), text)
    atomic_write_text(out.with_suffix(".json"), json.dumps(report, indent=1) + "\n")


def _read_earlier(path: Path | None, what: str, check: Callable[[dict], object] = lambda r: r) -> dict | None:
    """An earlier report's JSON for ``--add-to`` (``None`` when not given); ``check`` reads the keys
    the report needs, so that another file is refused by name rather than with a traceback."""
    if path is None:
        return None
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
        check(earlier)
    except (OSError, ValueError, RecursionError, KeyError, TypeError) as exc:
        raise PuzzleError(f"{path}: not a {what} report ({exc})") from None
    return earlier


@report_app.command("tables")
def tables_cmd(
    puzzles: Annotated[
        list[str] | None,
        typer.Option(
            "--puzzle",
            rich_help_panel=SEARCH_PANEL,
            help="Puzzle to include (repeat); default cube3, puzzle15, puzzle24.",
        ),
    ] = None,
    n: Annotated[
        int,
        typer.Option("--n", rich_help_panel=SEARCH_PANEL, min=1, help="First N benchmark cases per puzzle."),
    ] = 5,
    methods: Annotated[
        str,
        typer.Option(
            "--methods", rich_help_panel=SEARCH_PANEL, help="Comma-separated: learned, pdb, optimal."
        ),
    ] = "learned,pdb,optimal",
    bench_dir: Annotated[
        Path,
        typer.Option(
            "--bench-dir",
            rich_help_panel=SEARCH_PANEL,
            help="Folder of the case files, <puzzle>_deepcubea.json as `puzzlezero cases import-deepcubea` writes them, or <puzzle>.json ($PUZZLEZERO_BENCHMARKS, else the working directory).",
        ),
    ] = _DEFAULT_BENCH,
    time_limit: Annotated[
        float,
        typer.Option("--time-limit", rich_help_panel=BUDGET_PANEL, min=0.001, help="BWAS seconds per state."),
    ] = 60.0,
    optimal_time_limit: Annotated[
        float,
        typer.Option(
            "--optimal-time-limit",
            rich_help_panel=BUDGET_PANEL,
            min=0.001,
            help="Optimal solver seconds per state.",
        ),
    ] = 60.0,
    max_nodes: Annotated[
        int,
        typer.Option(
            "--max-nodes", rich_help_panel=BUDGET_PANEL, min=1, help="Node cap per state, every method."
        ),
    ] = 10**12,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            rich_help_panel=SEARCH_PANEL,
            help="Model name or folder for the learned heuristic (default: the puzzle's).",
        ),
    ] = None,
    speed_states: Annotated[
        int,
        typer.Option(
            "--speed-states",
            rich_help_panel=OUTPUT_PANEL,
            min=0,
            help="States for the heuristic speed table (0: skip it).",
        ),
    ] = 1000,
    memory: Annotated[
        bool,
        typer.Option("--memory/--no-memory", rich_help_panel=OUTPUT_PANEL, help="Include the memory table."),
    ] = True,
    out: Annotated[
        Path | None, typer.Option("--out", rich_help_panel=OUTPUT_PANEL, help="Also write the Markdown here.")
    ] = None,
) -> None:
    """Learned BWAS vs PDB BWAS vs optimal on benchmark cases, PDB vs network memory, heuristic
    speed, as Markdown (like the DeepCubeA paper's Tables 1-5). Pattern databases are built on first
    use (the 15-puzzle's and the cube's take minutes, the 24-puzzle's longer)."""
    from puzzlezero.machine import hardware
    from puzzlezero.reports.deepcubea_tables import METHODS, compare, memory_rows, render_report, speed_rows
    from puzzlezero.storage import atomic_write_text

    names = puzzles or ["cube3", "puzzle15", "puzzle24"]
    chosen = [m.strip() for m in methods.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise PuzzleError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    rows = []
    for name in names:
        candidates = [bench_dir / f"{name}_deepcubea.json", bench_dir / f"{name}.json"]
        cases_file = next((c for c in candidates if c.exists()), candidates[0])
        if not cases_file.exists():
            raise PuzzleError(
                f"no case file for {name} in {bench_dir} ({name}_deepcubea.json or {name}.json; "
                "`puzzlezero cases import-deepcubea` makes one; --bench-dir or $PUZZLEZERO_BENCHMARKS names the folder)"
            )
        for m in chosen:
            limit = optimal_time_limit if m == "optimal" else time_limit
            typer.echo(f"{name}: {METHODS[m][0]} on {n} case(s), {limit:g} s each ...", err=True)
            rows.append(compare(name, cases_file, n, m, model=model, time_limit=limit, max_nodes=max_nodes))
    header = (f"# puzzlezero report\n\n{n} case(s) per puzzle from {bench_dir}; BWAS limit {time_limit:g} s, "
              f"optimal limit {optimal_time_limit:g} s per state; {hardware()}. "
              "Lengths, nodes and seconds are means over solved cases; "
              "% optimal is against the benchmark's published optimal lengths.")  # fmt: skip
    mem = memory_rows(names, model) if memory else []
    speed = speed_rows(names, speed_states, model) if speed_states else []
    text = render_report(rows, mem, speed, header)
    typer.echo(text)
    if out is not None:
        atomic_write_text(out, text)


@report_app.command("solve-rate")
def solve_rate_cmd(
    models: Annotated[
        str,
        typer.Option(
            "--models",
            rich_help_panel=SEARCH_PANEL,
            help="Model names or folders, comma-separated (one puzzle).",
        ),
    ] = "cube3-adi,cube3-selfplay,cube3",
    depths: Annotated[
        str,
        typer.Option(
            "--depths", rich_help_panel=SEARCH_PANEL, help="LO:HI (inclusive) or a comma-separated list."
        ),
    ] = "1:20",
    n: Annotated[
        int, typer.Option("--n", rich_help_panel=SEARCH_PANEL, min=1, help="Scrambles per depth.")
    ] = 100,
    greedy_moves: Annotated[
        int,
        typer.Option(
            "--greedy-moves", rich_help_panel=BUDGET_PANEL, min=1, help="Moves the policy may play."
        ),
    ] = 30,
    mcts_nodes: Annotated[
        int,
        typer.Option(
            "--mcts-nodes",
            rich_help_panel=BUDGET_PANEL,
            min=1,
            help="MCTS budget: nodes generated per scramble.",
        ),
    ] = 100_000,
    seed: Annotated[
        int, typer.Option("--seed", rich_help_panel=SEARCH_PANEL, help="Seed of the scrambles.")
    ] = 0,
    threads: ThreadsOpt = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            rich_help_panel=OUTPUT_PANEL,
            help="Write OUT.md, OUT.json and OUT.png (the plot).",
            show_default=False,
        ),
    ] = None,
    add_to: Annotated[
        Path | None,
        typer.Option(
            "--add-to",
            rich_help_panel=OUTPUT_PANEL,
            help="An earlier report's JSON (same settings): keep its models and add these, on the same cubes.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Rute's plot: the share of scrambles of each depth solved by the network's policy alone
    (greedy) and by MCTS at a fixed node budget, for each model (default: the ADI, self-play and
    DAVI cube networks). Every MCTS solution is replayed."""

    from puzzlezero.reports.solve_rate import markdown, plot, solve_rate_by_depth

    try:
        if ":" in depths:
            lo, hi = (int(x) for x in depths.split(":"))
            depth_list = list(range(lo, hi + 1))
        else:
            depth_list = [int(x) for x in depths.split(",")]
    except ValueError:
        raise PuzzleError(
            f"--depths: expected LO:HI or a comma-separated list of integers, got {depths!r}"
        ) from None
    # the report runs torch networks, whose threads _set_threads sets once torch is imported;
    # without torch, loading the first model names the train extra
    with contextlib.suppress(ImportError):
        import torch  # noqa: F401
    _set_threads(threads)
    names = [m.strip() for m in models.split(",") if m.strip()]
    earlier = _read_earlier(add_to, "solve-rate")
    report = solve_rate_by_depth(
        names,
        depth_list,
        cubes=n,
        greedy_moves=greedy_moves,
        mcts_nodes=mcts_nodes,
        seed=seed,
        progress=lambda line: typer.echo(line, err=True),
        add_to=earlier,
    )
    text = markdown(report)
    typer.echo(text)
    if out is not None:
        _write(out, text, report)
        plot(report, out.with_suffix(".png"))
        typer.echo(f"written {out.with_suffix('.md')}, .json, .png", err=True)


@report_app.command("wcd")
def wcd_cmd(
    n: Annotated[
        int,
        typer.Option(
            "--n", rich_help_panel=SEARCH_PANEL, min=1, help="Distinct random scrambles (the paper: 200)."
        ),
    ] = 200,
    seed: Annotated[
        int, typer.Option("--seed", rich_help_panel=SEARCH_PANEL, help="Seed of the scrambles.")
    ] = 0,
    min_depth: Annotated[
        int, typer.Option("--min-depth", rich_help_panel=SEARCH_PANEL, min=1, help="Fewest scramble moves.")
    ] = 5,
    max_depth: Annotated[
        int, typer.Option("--max-depth", rich_help_panel=SEARCH_PANEL, min=1, help="Most scramble moves.")
    ] = 12,
    levels: Annotated[
        str,
        typer.Option(
            "--levels",
            rich_help_panel=SEARCH_PANEL,
            help="WCD depths, comma-separated (0: the plain value heuristic).",
        ),
    ] = "0,1,2",
    mu: Annotated[
        float | None,
        typer.Option("--mu", rich_help_panel=SEARCH_PANEL, help="WCD's mu (default: the solver's)."),
    ] = None,
    temperature: Annotated[
        float | None,
        typer.Option(
            "--temperature", rich_help_panel=SEARCH_PANEL, help="Policy temperature (default: the solver's)."
        ),
    ] = None,
    max_nodes: Annotated[
        int,
        typer.Option(
            "--max-nodes", rich_help_panel=BUDGET_PANEL, min=1, help="Generated nodes per scramble."
        ),
    ] = 1_000_000,
    time_limit: Annotated[
        float,
        typer.Option(
            "--time-limit",
            rich_help_panel=BUDGET_PANEL,
            min=0.001,
            help="Seconds per heuristic (whole loop).",
        ),
    ] = 3600.0,
    together: Annotated[
        int | None,
        typer.Option(
            "--together",
            rich_help_panel=BUDGET_PANEL,
            min=1,
            help="Scrambles per search call (default: all).",
        ),
    ] = None,
    threads: ThreadsOpt = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", rich_help_panel=OUTPUT_PANEL, help="Write OUT.md and OUT.json.", show_default=False
        ),
    ] = None,
) -> None:
    """Yao and Lee's Table 1: A* (lambda 1, one node per iteration) with the plain value heuristic
    against 1- and 2-level weighted convolutional distance on distinct random cube3 scrambles, beside
    the paper's figures. Every solution is replayed."""

    from puzzlezero.reports.wcd_table1 import markdown, wcd_table1

    try:
        level_list = [int(x) for x in levels.split(",")]
    except ValueError:
        raise PuzzleError(f"--levels: expected comma-separated integers, got {levels!r}") from None
    _set_threads(threads)
    report = wcd_table1(
        n=n,
        seed=seed,
        min_depth=min_depth,
        max_depth=max_depth,
        levels=level_list,
        mu=mu,
        temperature=temperature,
        max_nodes=max_nodes,
        time_limit=time_limit,
        together=together,
        progress=lambda row: typer.echo(json.dumps(row), err=True),
    )
    text = markdown(report)
    typer.echo(text)
    if out is not None:
        _write(out, text, report)


@report_app.command("layered")
def layered_cmd(
    rows: Annotated[
        list[str] | None,
        typer.Option(
            "--row",
            rich_help_panel=SEARCH_PANEL,
            help="LABEL=MODEL (repeat): a layered row (MODEL as `solve --search layered --model` takes it), "
            "or a whole-cube BWAS row when LABEL starts with 'DeepCubeA'. Default: "
            "'SingleH=cube3-layered' and 'DeepCubeA Baseline=cube3'.",
        ),
    ] = None,
    n: Annotated[
        int, typer.Option("--n", rich_help_panel=SEARCH_PANEL, min=1, help="Random cubes (the paper: 100).")
    ] = 100,
    depth: Annotated[
        int,
        typer.Option("--depth", rich_help_panel=SEARCH_PANEL, min=1, help="Random quarter turns per cube."),
    ] = 100,
    seed: Annotated[int, typer.Option("--seed", rich_help_panel=SEARCH_PANEL, help="Seed of the cubes.")] = 0,
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            rich_help_panel=SEARCH_PANEL,
            help="Solve these cases (a benchmark file) instead of random cubes.",
        ),
    ] = None,
    ids: Annotated[
        str | None,
        typer.Option("--ids", rich_help_panel=SEARCH_PANEL, help="Only cases with ids A:B of --cases."),
    ] = None,
    settings: Annotated[
        str,
        typer.Option(
            "--settings", rich_help_panel=SEARCH_PANEL, help="(lambda, B) pairs as LAMBDA:B, comma-separated."
        ),
    ] = "0.2:100,0.6:1000",
    layer_nodes: Annotated[
        int,
        typer.Option(
            "--layer-nodes", rich_help_panel=BUDGET_PANEL, min=1, help="Nodes generated per layer search."
        ),
    ] = 600_000,
    whole_nodes: Annotated[
        int,
        typer.Option(
            "--whole-nodes", rich_help_panel=BUDGET_PANEL, min=1, help="Nodes generated for a whole-cube row."
        ),
    ] = 1_800_000,
    time_limit: Annotated[
        float,
        typer.Option(
            "--time-limit", rich_help_panel=BUDGET_PANEL, min=0.001, help="Seconds per cube at most."
        ),
    ] = 600.0,
    threads: ThreadsOpt = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", rich_help_panel=OUTPUT_PANEL, help="Write OUT.md and OUT.json.", show_default=False
        ),
    ] = None,
    add_to: Annotated[
        Path | None,
        typer.Option(
            "--add-to",
            rich_help_panel=OUTPUT_PANEL,
            help="An earlier report's JSON (same cubes and limits): keep its rows and add these.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Dong, Hao and Nakayama's Table 1: layer-by-layer solving with single- and multi-head networks against a
    whole-cube DeepCubeA baseline at (lambda, B) = (0.2, 100) and (0.6, 1000), on the same cubes,
    beside the paper's figures. Every solution is replayed, each stage against its goal."""
    import numpy as np

    from puzzlezero.case_files import load_cases, parse_ids
    from puzzlezero.registry import make
    from puzzlezero.reports.layered_table1 import layered_table1, markdown

    pairs = []
    for text in rows or ["SingleH=cube3-layered", "DeepCubeA Baseline=cube3"]:
        label, sep, model = text.partition("=")
        if not sep or not label.strip() or not model.strip():
            raise PuzzleError(f"--row: {text!r} is not LABEL=MODEL (e.g. 'MultiH 4+1=runs/mh41-model')")
        pairs.append((label.strip(), model.strip()))
    try:
        setting_list = [(float(w), int(b)) for w, b in (x.split(":") for x in settings.split(","))]
    except ValueError:
        raise PuzzleError(f"--settings: expected LAMBDA:B pairs, comma-separated, got {settings!r}") from None
    if any(not 0 <= w <= 1 or b < 1 for w, b in setting_list):
        raise PuzzleError(f"--settings: lambda must be in [0, 1] and B >= 1, got {settings!r}")
    states = None
    if cases is not None:
        states = np.stack([c.state for c in load_cases(make("cube3"), cases, parse_ids(ids))])
    earlier = _read_earlier(add_to, "layered Table 1", lambda r: (r["settings"]["settings"], r["rows"]))
    _set_threads(threads)
    report = layered_table1(
        pairs,
        states=states,
        n=n,
        depth=depth,
        seed=seed,
        settings=setting_list,
        layer_nodes=layer_nodes,
        whole_nodes=whole_nodes,
        time_limit=time_limit,
        progress=lambda line: typer.echo(json.dumps(line), err=True),
        add_to=earlier,
    )
    text = markdown(report)
    typer.echo(text)
    if out is not None:
        _write(out, text, report)


@report_app.command("merge")
def merge_cmd(
    parts: Annotated[
        list[Path],
        typer.Argument(
            help="Bench reports (`puzzlezero bench ... --out PART.json`) of one run made in parts, in order.",
            show_default=False,
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Write the joined report here.", show_default=False)],
    cases_file: Annotated[
        str | None,
        typer.Option(
            "--cases-file",
            help="What the joined cases are, for the summary (a folder of level files, say); "
            "default: the first part's.",
            show_default=False,
        ),
    ] = None,
    date: Annotated[
        str | None,
        typer.Option(
            "--date", help="When the parts ran, where their reports do not say.", show_default=False
        ),
    ] = None,
    commit: Annotated[
        str | None,
        typer.Option(
            "--commit",
            help="The commit the parts ran from, where their reports do not say.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Join bench reports of one run made in parts (--ids ranges, the files of a level set) into one
    report: the results in order, the summary recomputed over all of them, the settings checked equal."""
    from puzzlezero.reports.merge import merge_reports
    from puzzlezero.storage import atomic_write_text

    reports = []
    for path in parts:
        try:
            reports.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, RecursionError) as exc:
            raise PuzzleError(f"{path}: unreadable bench report ({exc})") from None
    report = merge_reports(reports, cases_file, {"date": date, "commit": commit})
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(report, separators=(",", ":")) + "\n")
    s = report["summary"]
    typer.echo(
        f"{out}: {s['cases']} cases from {len(parts)} parts, {s['solved_pct']}% solved, "
        f"mean length {s['mean_length']}, median {s['median_seconds']} s, mean {s['mean_seconds']} s"
    )
