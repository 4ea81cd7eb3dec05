#!/usr/bin/env python
"""Children generated per second by each puzzle's batched ``expand`` (a benchmark, not a test).

Usage: python benchmarks/bench_puzzles.py [--batches 10000 100000] [--repeats 7] [--puzzles cube3 puzzle15 ...]

Prints a Markdown table: median over repeats of (batch * num_actions) / seconds for one
``expand`` call on freshly scrambled states, plus hashing (``hash64``) and dedup (``unique``)
throughput, with the machine named.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from functools import partial

import numpy as np

import puzzlezero as pz
from puzzlezero.machine import cpu_model


def median_rate(fn, items: int, repeats: int) -> float:
    fn()  # warm up (numba compilation, caches)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return items / statistics.median(times)


def machine() -> str:
    return f"{cpu_model()}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, NumPy {np.__version__}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--puzzles", nargs="+", default=pz.names())
    args = ap.parse_args()

    print(f"machine: {machine()}\n")
    print("| puzzle | batch | actions | children/s (expand) | states/s (hash64) | states/s (unique) |")
    print("|---|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for name in args.puzzles:
        p = pz.make(name)
        for b in args.batches:
            states = p.scramble(rng, b, (1, min(p.default_scramble_depth, 100)))
            exp = median_rate(partial(p.expand, states), b * p.num_actions, args.repeats)
            hsh = median_rate(partial(p.hash64, states), b, args.repeats)
            unq = median_rate(partial(p.unique, states), b, args.repeats)
            print(
                f"| {name} | {b:,} | {p.num_actions} | {exp / 1e6:.1f} M | {hsh / 1e6:.1f} M | {unq / 1e6:.2f} M |"
            )


if __name__ == "__main__":
    main()
