"""Searches side by side: mean excess over optimal against seconds per state, one process, one run.

Each SETTING is ``search:weight:batch`` (BWAS, Q*), ``search:w/n+w/n+...`` (an anytime schedule of
BWAS or Q* stages), ``beam:width``, ``qbeam:width`` or ``default`` (the solver's default for the puzzle: its own
search, anytime schedule and time limit). The cases are taken in
turn and every setting solves each case before the next case starts, so a change in the machine's
load touches all settings alike. Every solution is verified by replay (``solve_many``).

    python benchmarks/compare_searches.py cube3 --cases cube3_deepcubea.json --ids 0:10 \\
        --settings bwas:0.4:1000,bwas:0.5:3000,qstar:0.6:3000,beam:10000,default \\
        --time-limit 60 --out docs/bench/searches_cube3

Writes OUT.md (table), OUT.json (every case) and OUT.png (mean excess over optimal against median
seconds per state, one line per search).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero import make
from puzzlezero.case_files import load_cases, parse_ids
from puzzlezero.machine import hardware
from puzzlezero.solver import solve_many


def parse_setting(text: str) -> tuple[str, dict[str, Any]]:
    parts = text.split(":")
    if parts[0] == "default":
        return "default", {}
    if parts[0] in ("bwas", "qstar") and len(parts) == 2:  # search:w/n+w/n: an anytime schedule
        stages = [(float(w), int(n)) for w, n in (st.split("/") for st in parts[1].split("+"))]
        return f"{parts[0]}-anytime", {"search": parts[0], "stages": stages}
    if parts[0] in ("beam", "qbeam") and len(parts) == 2:
        return parts[0], {"search": parts[0], "beam_width": int(parts[1])}
    if len(parts) == 3:
        return parts[0], {"search": parts[0], "weight": float(parts[1]), "batch": int(parts[2])}
    raise SystemExit(
        f"bad setting {text!r}: use search:weight:batch, search:w/n+w/n, beam:width, qbeam:width or default"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("puzzle")
    ap.add_argument("--cases", required=True)
    ap.add_argument("--ids", default="0:10")
    ap.add_argument("--settings", required=True, help="comma-separated, see above")
    ap.add_argument("--model", default=None)
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per state and setting")
    ap.add_argument("--max-nodes", type=int, default=None)
    ap.add_argument("--out", type=Path, required=True, help="writes OUT.md, OUT.json and OUT.png")
    args = ap.parse_args()
    p = make(args.puzzle)
    cases = load_cases(p, args.cases, parse_ids(args.ids))
    settings = [(text, *parse_setting(text)) for text in args.settings.split(",")]
    runs: dict[str, list[dict[str, Any]]] = {text: [] for text, _, _ in settings}
    for case in cases:
        for text, _, opts in settings:
            (r,) = solve_many(
                p,
                [case.state],
                model=args.model,
                time_limit=args.time_limit,
                max_nodes=args.max_nodes,
                **opts,
            )
            runs[text].append(
                {
                    "id": case.id,
                    "solved": r.solved,
                    "length": r.length,
                    "optimal_length": case.optimal_length,
                    "nodes_generated": r.nodes_generated,
                    "seconds": round(r.seconds, 4),
                    "first_solution_seconds": r.first_solution_seconds,
                    "status": r.status,
                }
            )
            print(
                f"case {case.id} {text}: {r.length} (opt {case.optimal_length}) {r.seconds:.1f} s", flush=True
            )
    rows, summary = [], []
    for text, family, _ in settings:
        res = runs[text]
        solved = [x for x in res if x["solved"]]
        excess = [x["length"] - x["optimal_length"] for x in solved if x["optimal_length"] is not None]
        s = {
            "setting": text,
            "search": family,
            "solved_pct": 100.0 * len(solved) / len(res),
            "mean_excess": float(np.mean(excess)) if excess else None,
            "optimal_pct": 100.0 * sum(e == 0 for e in excess) / len(res),
            "median_seconds": statistics.median(x["seconds"] for x in res),
            "mean_nodes": float(np.mean([x["nodes_generated"] for x in res])),
        }
        summary.append(s)
        rows.append(
            f"| {text} | {s['solved_pct']:.0f}% | "
            + (f"+{s['mean_excess']:.2f}" if s["mean_excess"] is not None else "-")
            + f" | {s['optimal_pct']:.0f}% | {s['median_seconds']:.1f} | {s['mean_nodes']:,.0f} |"
        )
    head = (
        f"# Searches side by side: {args.puzzle}, cases {args.ids} of {args.cases}\n\n"
        f"Time limit {args.time_limit:g} s per state and setting; model {args.model or 'shipped'}; "
        f"{hardware()}. Excess = mean solution length minus the optimal length, over solved states.\n\n"
        "| setting | solved | excess over optimal | % optimal | median s | mean nodes |\n"
        "|---|---:|---:|---:|---:|---:|\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text(head + "\n".join(rows) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps({"summary": summary, "runs": runs}, indent=1))
    print(head + "\n".join(rows))
    _plot(summary, args.out.with_suffix(".png"), f"{args.puzzle}, cases {args.ids}")


def _plot(summary: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for family in dict.fromkeys(s["search"] for s in summary):
        done = [s for s in summary if s["search"] == family and s["mean_excess"] is not None]
        done.sort(key=lambda s: s["median_seconds"])
        if not done:
            continue
        ax.plot(
            [s["median_seconds"] for s in done], [s["mean_excess"] for s in done], marker="o", label=family
        )
        for s in done:  # each point names its setting, and what it left unsolved
            note = s["setting"].split(":", 1)[1] if ":" in s["setting"] else s["setting"]
            if s["solved_pct"] < 100:
                note += f" ({s['solved_pct']:g}% solved)"
            ax.annotate(
                note,
                (s["median_seconds"], s["mean_excess"]),
                textcoords="offset points",
                xytext=(5, 5),
                fontsize=7,
            )
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))  # 1, 2, 5, 10, 20, ... seconds
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("median seconds per state")
    ax.set_ylabel("mean moves above optimal (solved states)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
