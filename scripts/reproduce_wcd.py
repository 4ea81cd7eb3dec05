"""Seed 003's Table 1 (Yao and Lee 2024): A* (lambda = 1, one node per iteration) on distinct random
cube3 scrambles of 5-12 moves with the plain value heuristic against 1- and 2-level weighted
convolutional distance (``--heuristic wcd``), printed beside the seed's figures and written to
``OUT.md`` and ``OUT.json``.

    OMP_NUM_THREADS=1 python scripts/reproduce_wcd.py --n 200 --out docs/bench/wcd_table1

(the seed's 200 scrambles; ``--n 60`` takes a few minutes of one core for depths 0-1 and about as
long again for depth 2). Every solution is verified by replay. The heuristics are the solver's own
(``get_heuristic``: int8 inference of the shipped model; WCD's policy is ``softmax(-Q / T)`` of its
Q head). All scrambles of one heuristic are searched in one batched loop (``--together``): node
counts are each instance's own, and the time column is the loop's wall time divided by the
number of scrambles (amortised; the seed's times are per solve). "Searched" nodes are the
expanded ones (the seed's A* closes one node per step); generated nodes are ``1 + 12 *
expanded``. The last rows repeat the means on the scrambles of 8-12 moves (issue 14's floor: WCD
depth 1 searches fewer nodes than the plain heuristic there).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from puzzlezero import make
from puzzlezero.bench import hardware
from puzzlezero.search import bwas
from puzzlezero.solver import OPTIONS, get_heuristic, verify

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mcts import scrambles  # noqa: E402  (a sibling script)

#: the seed's Table 1: length, seconds, searched nodes (200 scrambles of 5-12 moves, its hardware)
SEED = {0: (6.875, 11.467, 2938.885), 1: (6.525, 51.757, 1097.345), 2: (6.455, 326.613, 535.000)}


def distinct_scrambles(puzzle, rng: np.random.Generator, n: int, lo: int, hi: int):  # noqa: ANN001, ANN201
    """``n`` distinct states of ``lo``-``hi`` random moves (no move undoing the one before)."""
    states, depths, seen = [], [], set()
    while len(states) < n:
        depth = int(rng.integers(lo, hi + 1))
        (state,), _ = scrambles(puzzle, rng, 1, depth)
        key = state.tobytes()
        if key in seen or puzzle.is_goal(state[None])[0]:
            continue
        seen.add(key)
        states.append(state)
        depths.append(depth)
    return np.stack(states), np.array(depths)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-depth", type=int, default=5)
    ap.add_argument("--max-depth", type=int, default=12)
    ap.add_argument("--levels", default="0,1,2", help="WCD depths to run (0: the plain value heuristic)")
    ap.add_argument("--mu", type=float, default=OPTIONS["wcd_mu"].default)
    ap.add_argument("--temperature", type=float, default=OPTIONS["policy_temperature"].default)
    ap.add_argument("--max-nodes", type=int, default=1_000_000, help="per scramble (generated nodes)")
    ap.add_argument("--time-limit", type=float, default=3600.0, help="seconds per heuristic (whole loop)")
    ap.add_argument("--together", type=int, default=None, help="scrambles per search call (default: all)")
    ap.add_argument("--out", type=Path, default=Path("docs/bench/wcd_table1"))
    args = ap.parse_args()
    p = make("cube3")
    states, depths = distinct_scrambles(
        p, np.random.default_rng(args.seed), args.n, args.min_depth, args.max_depth
    )
    together = args.together or args.n
    warm = get_heuristic(p, "learned")
    bwas(
        p, states[:1], warm, weight=1.0, batch_size=1, max_nodes=1 + 2 * p.num_actions
    )  # numba kernels loaded
    mid = depths >= 8
    rows = []
    for level in (int(x) for x in args.levels.split(",")):
        if level == 0:
            h = get_heuristic(p, "learned")
            name = "plain value (learned)"
        else:
            opts = (("policy_temperature", args.temperature), ("wcd_depth", level), ("wcd_mu", args.mu))
            h = get_heuristic(p, "wcd", None, "value", opts)
            name = f"{level}-level WCD (mu {args.mu:g})"
        h(states[:2])  # load the network before timing
        results, t0 = [], time.perf_counter()
        for lo in range(0, args.n, together):
            results += bwas(p, states[lo : lo + together], h, weight=1.0, batch_size=1,
                            max_nodes=args.max_nodes, time_limit=args.time_limit)  # fmt: skip
        wall = time.perf_counter() - t0
        ok = verify(p, states, [r.actions for r in results]) & np.array([r.solved for r in results])
        gen = np.array([r.nodes_generated for r in results], dtype=np.float64)
        expanded = (gen - 1) / p.num_actions
        lengths = np.array([r.length if r.solved else np.nan for r in results], dtype=np.float64)
        row = {
            "level": level,
            "heuristic": name,
            "solved": int(ok.sum()),
            "n": args.n,
            "mean_length": float(np.nanmean(lengths)),
            "seconds_per_scramble": wall / args.n,
            "mean_expanded": float(expanded.mean()),
            "mean_generated": float(gen.mean()),
            "median_expanded": float(np.median(expanded)),
            "n_8_12": int(mid.sum()),
            "mean_length_8_12": float(np.nanmean(lengths[mid])) if mid.any() else None,
            "mean_expanded_8_12": float(expanded[mid].mean()) if mid.any() else None,
            "mean_generated_8_12": float(gen[mid].mean()) if mid.any() else None,
            "statuses": sorted({r.status for r in results}),
            "wall_seconds": round(wall, 1),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    lines = [
        f"A* (lambda 1, batch 1) on {args.n} distinct random cube3 scrambles of {args.min_depth}-"
        f"{args.max_depth} moves (seed {args.seed}), shipped cube3 model (int8), WCD policy softmax(-Q / "
        f"{args.temperature:g}) of its Q head; {hardware()}.",
        "",
        "| heuristic | solved | length | s / scramble | expanded (searched) | generated | seed: length | seed: s "
        "| seed: searched |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s_len, s_sec, s_nodes = SEED.get(r["level"], (None, None, None))
        seed_cols = f"{s_len} | {s_sec} | {s_nodes}" if s_len is not None else "- | - | -"
        lines.append(
            f"| {r['heuristic']} | {r['solved']}/{r['n']} | {r['mean_length']:.3f} | "
            f"{r['seconds_per_scramble']:.3f} | {r['mean_expanded']:.1f} | {r['mean_generated']:.1f} | {seed_cols} |"
        )
    lines += ["", f"On the {int(mid.sum())} scrambles of 8-12 moves:", ""]
    lines += ["| heuristic | length | expanded | generated |", "|---|---|---|---|"]
    for r in rows:
        if r["n_8_12"]:
            lines.append(
                f"| {r['heuristic']} | {r['mean_length_8_12']:.3f} | {r['mean_expanded_8_12']:.1f} | "
                f"{r['mean_generated_8_12']:.1f} |"
            )
    table = "\n".join(lines) + "\n"
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text(table)
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    args.out.with_suffix(".json").write_text(
        json.dumps({"settings": settings, "hardware": hardware(), "rows": rows}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
