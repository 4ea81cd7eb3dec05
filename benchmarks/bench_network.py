"""States/s of a shipped network as the searches evaluate it: the first layer in the graph (the
one-hot multiplied out) against the first layer as a sum of rows (:mod:`puzzlezero.nn.onehot_rows`),
float32 and int8, on 1 and 2 threads.

Each figure is the best of ``--repeats`` calls of ``nn.predict``, the searches' evaluator (encoding included), on
``--n`` scrambled states in chunks of 2,048, after one warm-up call; the mean and largest difference
of the two forms' outputs are printed beside them. The 1-minute load average before and after is
printed: read the figures with it.

    python benchmarks/bench_network.py --puzzles puzzle24,puzzle35,puzzle48 --out network.json
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from puzzlezero import make
from puzzlezero.machine import hardware, provenance
from puzzlezero.nn.heuristic import predict
from puzzlezero.nn.io import read_model
from puzzlezero.nn.runtime import network_from_weights
from puzzlezero.puzzles import inputs
from puzzlezero.storage import atomic_write_json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", default="puzzle48")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    rows = []
    print(
        "| puzzle | precision | threads | in the graph, states/s | sum of rows, states/s | ratio | mean / max diff |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    for name in args.puzzles.split(","):
        p = make(name)
        files = read_model(name)
        states = p.scramble(np.random.default_rng(0), args.n, (1, p.default_scramble_depth))
        for precision in ("float32", "int8"):
            for threads in (int(t) for t in args.threads.split(",")):
                rate, out = {}, {}
                for form, values in (("graph", None), ("rows", inputs.onehot_values(p))):
                    net = network_from_weights(
                        files.config,
                        files.weights,
                        puzzle=name,
                        num_actions=files.config.num_actions or p.num_actions,
                        precision=precision,
                        threads=threads,
                        onehot_values=values,
                    )
                    predict(p, net, states[:2048])  # warm-up: sessions, the first call's allocations
                    best = float("inf")
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        out[form] = predict(p, net, states, batch_size=2048)
                        best = min(best, time.perf_counter() - t0)
                    rate[form] = len(states) / best
                diff = np.abs(out["graph"] - out["rows"])
                rows.append(
                    {
                        "puzzle": name,
                        "precision": precision,
                        "threads": threads,
                        "graph_states_per_s": round(rate["graph"]),
                        "rows_states_per_s": round(rate["rows"]),
                        "mean_diff": float(diff.mean()),
                        "max_diff": float(diff.max()),
                    }
                )
                print(
                    f"| {name} | {precision} | {threads} | {rate['graph']:,.0f} | {rate['rows']:,.0f} | "
                    f"{rate['rows'] / rate['graph']:.2f} | {diff.mean():.3f} / {diff.max():.3f} |",
                    flush=True,
                )
    load_after = os.getloadavg()[0]
    print(f"load average (1 min): {load_before:.1f} before, {load_after:.1f} after; {hardware()}")
    if args.out:
        atomic_write_json(
            args.out,
            {
                "n": args.n,
                "repeats": args.repeats,
                "hardware": hardware(),
                **provenance(),
                "load_average_before_after": [load_before, load_after],
                "rows": rows,
            },
        )


if __name__ == "__main__":
    main()
