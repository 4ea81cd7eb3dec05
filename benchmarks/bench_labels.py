#!/usr/bin/env python
"""Can NumPy make DAVI labels as fast as a GPU evaluates them? (a benchmark, not a test)

Usage: python benchmarks/bench_labels.py [--puzzle cube3] [--states 20000] [--device cuda] [--preset paper]

On one CPU thread, the stages of a DAVI chunk that run in NumPy: ``puzzle.scramble`` (depths
1..K), the child expansion of ``one_step_targets`` (expand, no-op and goal masks; the target
network replaced by zeros) and the one-hot encoding of the children for the network. With
``--device`` it also times the network's forward pass on random encoded children (bf16 autocast
on CUDA), the rate at which that device consumes what NumPy makes. Prints children per second.
Children are encoded ``--batch`` at a time, as the target network gets them (``inference_batch``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import puzzlezero as pz
from puzzlezero.nn.config import NetConfig
from puzzlezero.nn.models import build_model
from puzzlezero.puzzles import inputs
from puzzlezero.train.objectives.davi import one_step_targets


def seconds(fn, repeats: int = 3) -> float:
    """Best time of ``repeats`` calls after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        tick = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - tick)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--puzzle", default="cube3")
    ap.add_argument("--states", type=int, default=20_000, help="training states per timed call")
    ap.add_argument("--device", default=None, help="also time the network's forward pass here (cuda, cpu)")
    ap.add_argument("--preset", default="paper", help="network preset for --device")
    ap.add_argument("--batch", type=int, default=65_536, help="children per network call (encoded at once)")
    args = ap.parse_args()

    torch.set_num_threads(1)
    p, n = pz.make(args.puzzle), args.states
    a = p.num_actions
    rng = np.random.default_rng(0)
    states = p.scramble(rng, n, (1, p.default_scramble_depth))
    children = p.expand(states[: -(-args.batch // a)]).reshape(-1, *p.state_shape)[: args.batch]

    def zero(c: np.ndarray) -> np.ndarray:
        return np.zeros(len(c), np.float32)

    t_scramble = seconds(lambda: p.scramble(rng, n, (1, p.default_scramble_depth)))
    t_expand = seconds(lambda: one_step_targets(p, zero, states, chunk=65_536))
    t_encode = seconds(lambda: p.encode(children)) * n * a / len(children)  # as one network batch
    total = t_scramble + t_expand + t_encode
    print(
        f"{args.puzzle}, {n:,} training states ({n * a:,} children), one CPU thread, NumPy {np.__version__}"
    )
    print("| stage | training states/s | children/s |")
    print("|---|---:|---:|")
    for name, t in [
        ("scramble", t_scramble),
        ("child expansion (one_step_targets, no network)", t_expand),
        ("one-hot encoding of the children", t_encode),
        ("all three", total),
    ]:
        print(f"| {name} | {n / t:,.0f} | {n * a / t:,.0f} |")
    if args.device:
        dev = torch.device(args.device)
        net = build_model(NetConfig.from_preset(args.preset, inputs.dim(p))).to(dev).eval()
        x = torch.rand(args.batch, inputs.dim(p), device=dev).round()
        amp = torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda")

        def forward() -> None:
            with torch.inference_mode(), amp:
                net(x)
            if dev.type == "cuda":
                torch.cuda.synchronize()

        rate = args.batch / seconds(forward)
        print(f"\nnetwork forward ({args.preset}, {dev}, batch {args.batch:,}): {rate:,.0f} children/s")


if __name__ == "__main__":
    main()
