"""MCTS on random scrambles: the solve rate within a time limit (the target: >= 90% of random
12-move cube3 scrambles within 60 s each), every solution verified by replay.

    OMP_NUM_THREADS=1 python benchmarks/bench_mcts.py cube3 --n 30 --depth 12 --seed 0 --time-limit 60

Scrambles are ``depth`` random moves from the goal, none undoing the one before (a scramble of 12
moves is then rarely shorter than 10). Options of the search go as ``--set name=value``
(``--set mcts_c=1 --set mcts_max_value=false``). Prints one row per scramble and a summary; with
``--json FILE`` writes them too.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from puzzlezero import make
from puzzlezero.machine import hardware
from puzzlezero.reports.wcd_table1 import random_moves
from puzzlezero.solver import solve_many


def scrambles(puzzle, rng: np.random.Generator, n: int, depth: int) -> tuple[np.ndarray, list[list[int]]]:  # noqa: ANN001
    """``n`` states of ``depth`` random moves each, no move followed by its inverse."""
    moves = [random_moves(puzzle, rng, depth) for _ in range(n)]
    return np.stack([puzzle.apply_moves(puzzle.goal(), m) for m in moves]), moves


def parse_value(text: str) -> object:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        return float(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("puzzle")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--max-nodes", type=int, default=None)
    ap.add_argument("--heuristic", default="learned")
    ap.add_argument("--set", action="append", default=[], help="search option name=value")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    p = make(args.puzzle)
    states, moves = scrambles(p, np.random.default_rng(args.seed), args.n, args.depth)
    options = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    rows = []
    t0 = time.perf_counter()
    for i, (state, seq) in enumerate(zip(states, moves, strict=True)):
        (r,) = solve_many(
            p,
            state[None],
            search="mcts",
            heuristic=args.heuristic,
            time_limit=args.time_limit,
            max_nodes=args.max_nodes,
            options=options,
        )
        rows.append(
            {
                "id": i,
                "scramble": " ".join(p.format_moves(seq)),
                "solved": r.solved,
                "status": r.status,
                "length": r.length,
                "nodes_generated": r.nodes_generated,
                "seconds": round(r.seconds, 3),
            }
        )
        print(
            f"{i:3d} {r.status:11s} length {r.length if r.solved else '-':>3} "
            f"nodes {r.nodes_generated:>10,} {r.seconds:7.2f} s   {rows[-1]['scramble']}",
            flush=True,
        )
    solved = [r for r in rows if r["solved"]]
    secs = np.array([r["seconds"] for r in rows])
    summary = {
        "puzzle": p.name,
        "search": "mcts",
        "heuristic": args.heuristic,
        "options": options,
        "scramble_depth": args.depth,
        "seed": args.seed,
        "n": args.n,
        "time_limit": args.time_limit,
        "solved": len(solved),
        "solve_rate": len(solved) / args.n,
        "mean_length": float(np.mean([r["length"] for r in solved])) if solved else None,
        "mean_nodes": float(np.mean([r["nodes_generated"] for r in rows])),
        "median_seconds": float(np.median(secs)),
        "max_seconds": float(secs.max()),
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "hardware": hardware(),
    }
    print(json.dumps(summary, indent=1))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"summary": summary, "results": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
