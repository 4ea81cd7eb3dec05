"""States/s of the learned heuristics: onnxruntime (``learned-onnx``) against torch eager, float32
(``learned-fp32``) and int8 (``learned``, the default), on the same scrambled states.

Each heuristic is the function the searches call (encode, network, clip, goal test), evaluated on
batches of ``--batches`` states with ``--threads`` intra-op threads (torch.set_num_threads and
onnxruntime's intra_op_num_threads); the figures are medians of ``--repeats`` timed calls after
one warm-up call, per wall second and per CPU second of the process. All three evaluate in chunks
of 2048 states (their default). The ONNX file is exported to a temporary folder first (a few
seconds). The 1-minute load average before and after is printed: on a shared machine, read the
figures with it.

    python benchmarks/bench_onnx.py                     # cube3, batches 1000 and 10000, 1 and 2 threads
    python benchmarks/bench_onnx.py --puzzle puzzle15 --json onnx.json
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from puzzlezero import make, nn
from puzzlezero.onnx import export_onnx, onnx_heuristic
from puzzlezero.storage import atomic_write_json


def median_states_per_second(
    h: Callable[[np.ndarray], np.ndarray], states: np.ndarray, repeats: int
) -> tuple[float, float]:
    """``(states per wall second, states per CPU second of this process)``, medians of ``repeats``
    calls. On a shared machine the second is the steadier figure with one thread (it does not count
    time spent waiting for a core); with more threads it also counts their spin-waiting."""
    h(states)  # warm-up: allocations, onnxruntime's first run, oneDNN/fbgemm kernel choice
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        h(states)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    n = states.shape[0]
    return n / statistics.median(wall), n / statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzle", default="cube3")
    ap.add_argument(
        "--model", default=None, help="shipped model name or model folder (default: the puzzle's)"
    )
    ap.add_argument("--batches", default="1000,10000")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    puzzle = make(args.puzzle)
    model = args.model or args.puzzle
    net = nn.load_model(model)
    batches = [int(b) for b in args.batches.split(",")]
    states = puzzle.scramble(np.random.default_rng(0), max(batches), (1, puzzle.default_scramble_depth))
    load_before = os.getloadavg()[0]
    rows = []
    print("| heuristic | threads | batch | states/s | states per CPU-s |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        onnx_file = export_onnx(model, Path(tmp) / "model.onnx")
        for threads in (int(t) for t in args.threads.split(",")):
            torch.set_num_threads(threads)
            heuristics = {
                "torch fp32 (learned-fp32)": nn.make_heuristic(puzzle, net, int8=False),
                "torch int8 (learned)": nn.make_heuristic(puzzle, net, int8=True),
                "onnxruntime fp32 (learned-onnx)": onnx_heuristic(puzzle, str(onnx_file), threads=threads),
            }
            for batch in batches:
                for name, h in heuristics.items():
                    rate, cpu_rate = median_states_per_second(h, states[:batch], args.repeats)
                    rows.append(
                        {
                            "heuristic": name,
                            "threads": threads,
                            "batch": batch,
                            "states_per_s": rate,
                            "states_per_cpu_s": cpu_rate,
                        }
                    )
                    print(f"| {name} | {threads} | {batch:,} | {rate:,.0f} | {cpu_rate:,.0f} |", flush=True)
    load_after = os.getloadavg()[0]
    print(f"load average (1 min): {load_before:.1f} before, {load_after:.1f} after")
    if args.json:
        atomic_write_json(
            args.json,
            {
                "puzzle": args.puzzle,
                "model": model,
                "repeats": args.repeats,
                "hardware": f"{platform.machine()}, {os.cpu_count()} CPUs",
                "torch": torch.__version__,
                "onnxruntime": __import__("onnxruntime").__version__,
                "load_average_before_after": [load_before, load_after],
                "rows": rows,
            },
        )


if __name__ == "__main__":
    main()
