#!/usr/bin/env python
"""Write a benchmark case file of random states (same format as ../shared/benchmarks).

Example (the cube2 set used for the shipped model's card):
    python scripts/make_cases.py cube2 --n 1000 --depth 100 200 --seed 2026 --out benchmarks/cube2_random1000.json

States are the goal scrambled k ~ U[lo, hi] random moves (deep enough to be practically uniform on
small puzzles). For cube2 the exact optimal length of every state is added from the distance table.
"""

from __future__ import annotations

import argparse

import numpy as np

import puzzlezero as pz
from puzzlezero.storage import atomic_write_json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("puzzle")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--depth", type=int, nargs=2, default=(100, 200), metavar=("LO", "HI"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    p = pz.make(args.puzzle)
    states = p.scramble(np.random.default_rng(args.seed), args.n, tuple(args.depth))
    optimal = None
    if args.puzzle == "cube2":
        from puzzlezero.puzzles.cube.table import distance

        optimal = distance(states)
    cases = []
    for i, s in enumerate(states):
        case = {"id": i, **p.to_json(s)}
        if optimal is not None:
            case["optimal_length"] = int(optimal[i])
        cases.append(case)
    atomic_write_json(
        args.out,
        {
            "puzzle": args.puzzle,
            "source": f"scripts/make_cases.py {args.puzzle} --n {args.n} --depth {args.depth[0]} {args.depth[1]} "
            f"--seed {args.seed}",
            "cases": cases,
        },
    )
    print(f"wrote {len(cases)} cases to {args.out}")


if __name__ == "__main__":
    main()
