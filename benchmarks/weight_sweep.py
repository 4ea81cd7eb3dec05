"""BWAS over a grid of weights and heuristics (the paper's Fig. 2: PDB vs learned on the cube,
N = 10,000, lambda in {0, 0.1, 0.2}), written as a Markdown table and the raw bench reports.

    python benchmarks/weight_sweep.py cube3 --cases cube3_deepcubea.json --ids 0:3 \\
        --weights 0,0.1,0.2 --heuristics pdb,learned --batch 10000 --time-limit 120 \\
        --out docs/bench/fig2_cube3

Every solution is verified by replay (``run_bench``); a case that hits a limit counts as unsolved.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from puzzlezero import make
from puzzlezero.bench import run_bench
from puzzlezero.case_files import load_cases, parse_ids
from puzzlezero.machine import hardware


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("puzzle")
    ap.add_argument("--cases", required=True)
    ap.add_argument("--ids", default="0:3")
    ap.add_argument("--weights", default="0,0.1,0.2")
    ap.add_argument("--heuristics", default="pdb,learned")
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--max-nodes", type=int, default=100_000_000)
    ap.add_argument("--out", type=Path, required=True, help="writes OUT.md and OUT.json")
    args = ap.parse_args()
    p = make(args.puzzle)
    cases = load_cases(p, args.cases, parse_ids(args.ids))
    rows, raw = [], []
    for heuristic in args.heuristics.split(","):
        for weight in (float(w) for w in args.weights.split(",")):
            rep = run_bench(p, cases, cases_file=args.cases, search="bwas", heuristic=heuristic, weight=weight,
                            batch=args.batch, time_limit=args.time_limit, max_nodes=args.max_nodes)  # fmt: skip
            s = rep.summary
            raw.append({"summary": s, "results": rep.results})
            rows.append(
                f"| {heuristic} | {weight:g} | {s['solved_pct']:.0f}% | {s['mean_length'] or '-'} | "
                f"{s['mean_optimal_length'] or '-'} | {s['optimal_pct']:.0f}% | {s['mean_nodes']:,.0f} | "
                f"{s['mean_seconds']:.1f} | {s['nodes_per_second']:,.0f} |"
            )
            print(rows[-1], flush=True)
    head = (
        f"# BWAS weight sweep: {args.puzzle}, cases {args.ids} of {args.cases}\n\n"
        f"N = {args.batch:,}; limits {args.time_limit:g} s and {args.max_nodes:,} nodes per state; "
        f"{hardware()}.\n\n"
        "| heuristic | lambda | solved | mean length | mean optimal | % optimal | mean nodes | mean s | nodes/s |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text(head + "\n".join(rows) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
