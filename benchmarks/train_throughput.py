"""Training throughput (samples/s) of a recipe with one core and with two, side by side.

Each setting trains the same recipe for ``--chunks`` chunks in a fresh run folder; the first chunk
(worker start-up, first labels) is not timed. Settings, in rounds A B C A B C ... so that drift in
the machine's speed hits them alike; the median over rounds is printed.

    python benchmarks/train_throughput.py puzzle15 --init-from puzzle15 --set int8_targets=true
    python benchmarks/train_throughput.py puzzle15 --init-from puzzle15 --set objective=lhbl --set lhbl_expansions=10
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from puzzlezero.train import TrainConfig, Trainer

#: name -> (torch threads of the trainer, label worker processes)
SETTINGS = {
    "1 core": (1, 0),
    "2 cores: 2 threads": (2, 0),
    "2 cores: 1 thread + label worker": (1, 1),
    "2 cores: 2 threads + label worker": (2, 1),
}


def measure(cfg: TrainConfig, chunks: int, root: Path) -> float:
    trainer = Trainer(cfg, root)
    try:
        trainer.train_chunk()
        t0, s0 = time.perf_counter(), trainer.counters.samples
        for _ in range(chunks):
            trainer.train_chunk()
        return (trainer.counters.samples - s0) / (time.perf_counter() - t0)
    finally:
        trainer.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("puzzle")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="TrainConfig key=value")
    ap.add_argument("--init-from", default=None)
    ap.add_argument("--chunks", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    base = TrainConfig(puzzle=args.puzzle, progress=False, eval_every=0, init_from=args.init_from)
    base = base.with_overrides(args.sets)
    rates: dict[str, list[float]] = {name: [] for name in SETTINGS}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name, (threads, workers) in SETTINGS.items():
                cfg = replace(base, threads=threads, label_workers=workers)
                rate = measure(cfg, args.chunks, Path(tmp) / f"{r}-{threads}-{workers}")
                rates[name].append(rate)
                print(f"round {r + 1}: {name:<34} {rate:10,.0f} samples/s", flush=True)
    one = statistics.median(rates["1 core"])
    print(f"\n{args.puzzle}, {', '.join(args.sets) or 'defaults'}; median of {args.rounds} rounds:")
    for name, values in rates.items():
        med = statistics.median(values)
        print(f"  {name:<34} {med:10,.0f} samples/s  ({med / one:.2f}x one core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
