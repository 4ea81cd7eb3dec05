"""Two searches side by side against one: nodes a second of the same Q* searches, run as one
batched search on all torch threads, then as one search per thread with one torch thread each
(how the cube's images run, :mod:`puzzlezero.search.images`). Each instance is searched to the
same node cap with no time limit, so both ways do the same work and find the same solutions
(checked); repeats alternate the two ways (A B A B ...) and the medians and their ratio are printed.

    python benchmarks/bench_search_threads.py --ids 0:4 --max-nodes 2000000 6000000 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import numpy as np

from puzzlezero import make
from puzzlezero.case_files import load_cases, parse_ids
from puzzlezero.machine import hardware
from puzzlezero.nn import intra_op_threads, torch_threads
from puzzlezero.search.qstar import qstar
from puzzlezero.solver import learned_q_function


def one_search(p, starts, q, kw) -> tuple[float, list]:  # noqa: ANN001
    t = time.perf_counter()
    results = qstar(p, starts, q, **kw)
    return time.perf_counter() - t, results


def side_by_side(p, starts, q, kw, k: int) -> tuple[float, list]:  # noqa: ANN001
    parts = np.array_split(np.arange(len(starts)), k)
    out: list = [None] * k

    def run(j: int) -> None:
        out[j] = qstar(p, starts[parts[j]], q, **kw)

    with torch_threads(1):
        t = time.perf_counter()
        pool = [threading.Thread(target=run, args=(j,)) for j in range(k)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        seconds = time.perf_counter() - t
    return seconds, [r for rs in out for r in rs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--puzzle", default="cube3")
    ap.add_argument(
        "--cases", default="cube3_deepcubea.json", help="a cube3 case file (default: cube3_deepcubea.json)"
    )
    ap.add_argument("--ids", default="0:4", help="benchmark ids (an even number of states)")
    ap.add_argument("--weight", type=float, default=0.4)
    ap.add_argument("--batch", type=int, default=3000)
    ap.add_argument("--max-nodes", type=int, nargs="+", default=[2_000_000, 6_000_000])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    p = make(args.puzzle)
    starts = np.stack([c.state for c in load_cases(p, args.cases, parse_ids(args.ids))])
    q = learned_q_function(p, None)
    k = intra_op_threads()
    q(starts)  # load and warm up
    print(f"{p.name}, {len(starts)} states, Q* {args.weight}/{args.batch}; {hardware()}; {k} torch threads")
    for cap in args.max_nodes:
        kw = {"weight": args.weight, "batch_size": args.batch, "max_nodes": cap}
        side_by_side(p, starts, q, kw, k)  # warm-up (numba kernels, allocator)
        a, b = [], []
        for _ in range(args.repeats):
            ta, ra = one_search(p, starts, q, kw)
            tb, rb = side_by_side(p, starts, q, kw, k)
            assert [r.actions for r in ra] == [r.actions for r in rb], (
                "the two ways found different solutions"
            )
            nodes = sum(r.nodes_generated for r in ra)
            a.append(nodes / ta)
            b.append(nodes / tb)
        ma, mb = statistics.median(a), statistics.median(b)
        print(
            f"node cap {cap:,}: one search {ma:,.0f} nodes/s, {k} side by side {mb:,.0f} nodes/s, "
            f"ratio {mb / ma:.2f} (medians of {args.repeats})"
        )


if __name__ == "__main__":
    main()
