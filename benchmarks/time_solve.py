"""Wall time of one-shot ``puzzlezero solve`` calls, process start included.

Each state is solved by a fresh ``puzzlezero solve PUZZLE STATE --search SEARCH --json`` process,
as a user at a terminal would; the wall time from spawning the process to its exit is recorded, and
every solution is replayed (and compared with the known optimum when the case has one).

    python benchmarks/time_solve.py puzzle15 --cases puzzle15_deepcubea.json --ids 0:20
    python benchmarks/time_solve.py puzzle15 --random 20 --seed 7      # uniformly random states

The databases must exist already (the first solve builds them); ``--warm 1`` runs one untimed solve
first so that the page cache holds the files, like any later call on the same machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from puzzlezero import Puzzle, make
from puzzlezero.case_files import load_cases, parse_ids
from puzzlezero.machine import hardware


def _cases(args: argparse.Namespace, p: Puzzle) -> list[tuple[int, np.ndarray, int | None]]:
    """``(id, state, optimal length or None)`` of each case."""
    if args.random:
        if not hasattr(p, "solvable"):
            sys.exit(f"--random is for the sliding puzzles; give --cases for {args.puzzle}")
        rng = np.random.default_rng(args.seed)
        out = []
        for i in range(args.random):  # uniform over solvable boards: a random permutation, parity fixed
            s = rng.permutation(p.num_cells).astype(p.dtype)
            if not p.solvable(s[None])[0]:
                a, b = np.flatnonzero(s)[:2]
                s[[a, b]] = s[[b, a]]
            out.append((i, s, None))
        return out
    return [(c.id, c.state, c.optimal_length) for c in load_cases(p, args.cases, parse_ids(args.ids))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("puzzle")
    ap.add_argument("--cases", help="a case file (`puzzlezero bench --cases` format)")
    ap.add_argument("--ids", default="0:20", help="slice A:B of the cases")
    ap.add_argument("--random", type=int, default=0, help="N uniformly random states instead of --cases")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--search", default="optimal")
    ap.add_argument("--warm", type=int, default=1, help="untimed solves first (page cache)")
    ap.add_argument("--json", type=Path, help="write the per-state times here")
    args = ap.parse_args()
    if not args.cases and not args.random:
        ap.error("give --cases FILE or --random N")
    exe = shutil.which("puzzlezero") or sys.exit("the puzzlezero command is not on PATH")
    p = make(args.puzzle)
    cases = _cases(args, p)
    rows = []
    for i, (cid, state, opt) in enumerate(cases[: args.warm] + cases):
        text = p.format(state)
        t0 = time.perf_counter()
        proc = subprocess.run([exe, "solve", args.puzzle, text, "--search", args.search, "--json"],
                              capture_output=True, text=True)  # fmt: skip
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            sys.exit(f"case {cid}: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
        out = json.loads(proc.stdout)
        moves = p.parse_moves(out["solution"]) if out["solution"] else []
        replayed = bool(p.is_goal(p.apply_moves(state, moves)[None])[0]) if out["solved"] else False
        if i < args.warm:
            continue
        rows.append({"id": cid, "solved": out["solved"] and replayed, "length": out["length"],
                     "optimal_length": opt, "search_seconds": out["seconds"], "wall_seconds": round(wall, 4)})  # fmt: skip
        mark = "" if opt is None else ("=" if out["length"] == opt else f"(optimal {opt})")
        print(f"{cid:>5}  length {out['length']} {mark:<14} search {out['seconds']:.3f} s  wall {wall:.3f} s")
    walls = [r["wall_seconds"] for r in rows]
    known = [r for r in rows if r["optimal_length"] is not None]
    summary = {
        "puzzle": args.puzzle,
        "search": args.search,
        "states": len(rows),
        "solved": sum(r["solved"] for r in rows),
        "optimal": sum(r["length"] == r["optimal_length"] for r in known) if known else None,
        "median_wall_seconds": round(statistics.median(walls), 4),
        "p90_wall_seconds": round(float(np.percentile(walls, 90)), 4),
        "max_wall_seconds": round(max(walls), 4),
        "median_search_seconds": round(statistics.median(r["search_seconds"] for r in rows), 4),
        "hardware": hardware(),
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "results": rows}, indent=1))


if __name__ == "__main__":
    main()
