"""Search throughput: network states/s and BWAS nodes/s, with the time split of the search.

For each puzzle, BWAS runs from a hard scrambled state until ``--nodes`` nodes are generated,
once with a cheap NumPy heuristic (misplaced stickers/tiles: shows the cost of the search
machinery itself) and once with a network (a trained model given by ``--model``, else an untrained
net of ``--preset``, whose speed is the same). The split comes from :class:`SearchStats`:
heuristic (network), expansion, deduplication (hash + node table), open list, goal tests, other.

    python benchmarks/perf.py                       # cube3 and puzzle15, preset "small"
    python benchmarks/perf.py --puzzles cube3 --preset paper --nodes 100000 --json perf.json

``--beam-width W`` runs a beam search with the cheap heuristic as well, ``W`` states wide for
``--beam-steps`` steps (no goal is in reach that soon): what a long beam's own bookkeeping costs
(its visited set grows by ``W`` states a step), without a network to hide it.

    python benchmarks/perf.py --puzzles puzzle48 --beam-width 15000 --beam-steps 300 --no-network
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from puzzlezero import make
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import SearchStats, beam, bwas
from puzzlezero.storage import atomic_write_json

SCRAMBLE_DEPTH = {"cube3": 100, "puzzle15": 500}


def cheap_heuristic(puzzle: Puzzle) -> Callable[[np.ndarray], np.ndarray]:
    """Number of elements out of place (a fast, vectorised, not very informed heuristic)."""
    goal = puzzle.goal().reshape(1, -1)
    return lambda s: (s.reshape(s.shape[0], -1) != goal).sum(axis=1).astype(np.float32)


def network_heuristic(puzzle: Puzzle, model: str | None, preset: str) -> tuple[Callable, str]:
    from puzzlezero import nn

    if model:
        net = nn.load_model(model)
        return nn.make_heuristic(puzzle, net), f"model {model}"
    net = nn.build_model(nn.NetConfig.from_preset(preset, input_dim=inputs.dim(puzzle)), seed=0)
    return nn.make_heuristic(
        puzzle, net
    ), f"untrained preset {preset!r} ({nn.count_parameters(net):,} params)"


def states_per_second(h: Callable, states: np.ndarray, repeats: int = 3) -> float:
    h(states[:16])  # warm-up
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        h(states)
        best = min(best, time.perf_counter() - t0)
    return states.shape[0] / best


def run_bwas(
    puzzle: Puzzle, h: Callable, start: np.ndarray, args: argparse.Namespace, nodes: int
) -> SearchStats:
    bwas(
        puzzle, start, h, weight=args.weight, batch_size=args.batch, max_nodes=1 + 2 * puzzle.num_actions
    )  # warm-up
    stats = SearchStats()
    bwas(puzzle, start, h, weight=args.weight, batch_size=args.batch, max_nodes=nodes, stats=stats)
    return stats


def run_beam(puzzle: Puzzle, h: Callable, start: np.ndarray, width: int, steps: int) -> SearchStats:
    stats = SearchStats()
    beam(puzzle, start, h, beam_width=width, max_steps=steps, max_nodes=None, stats=stats)
    return stats


def split(stats: SearchStats) -> dict[str, Any]:
    t = stats.total or 1.0
    parts = ("heuristic", "expand", "dedup", "open_list", "goal_test", "other")
    return {
        "nodes": stats.nodes_generated,
        "seconds": round(stats.total, 3),
        "nodes_per_second": round(stats.nodes_per_second),
        "share_pct": {p: round(100 * getattr(stats, p) / t, 1) for p in parts},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--puzzles", nargs="+", default=["cube3", "puzzle15"])
    ap.add_argument("--model", help="model name or folder (default: an untrained --preset net)")
    ap.add_argument(
        "--preset", default="small", help="network preset when no --model (tiny/small/medium/paper)"
    )
    ap.add_argument("--batch", type=int, default=1000, help="BWAS batch size N")
    ap.add_argument("--weight", type=float, default=0.6)
    ap.add_argument("--nodes", type=int, default=300_000, help="nodes per run with the network")
    ap.add_argument(
        "--cheap-nodes", type=int, default=2_000_000, help="nodes per run with the cheap heuristic"
    )
    ap.add_argument("--beam-width", type=int, default=0, help="also a beam this wide (0: none)")
    ap.add_argument("--beam-steps", type=int, default=300, help="the beam's steps")
    ap.add_argument("--no-network", action="store_true", help="the cheap heuristic only")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave as is)")
    ap.add_argument("--json", dest="json_out", help="also write the numbers to this file")
    args = ap.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    report: dict[str, Any] = {}
    for name in args.puzzles:
        p = make(name)
        start = p.scramble(rng, 1, depth=SCRAMBLE_DEPTH.get(name, 1000))
        cheap = run_bwas(p, cheap_heuristic(p), start, args, args.cheap_nodes)
        print(f"{name} BWAS, cheap heuristic: {cheap.summary()}")
        entry: dict[str, Any] = {"bwas_cheap": split(cheap)}
        if args.beam_width:
            wide = run_beam(p, cheap_heuristic(p), start, args.beam_width, args.beam_steps)
            print(
                f"{name} beam {args.beam_width:,}, {args.beam_steps} steps, cheap heuristic: {wide.summary()}"
            )
            entry["beam_cheap"] = {"width": args.beam_width, "steps": args.beam_steps, **split(wide)}
        if args.no_network:
            report[name] = entry
            continue
        try:
            h, what = network_heuristic(p, args.model, args.preset)
        except ImportError as exc:  # torch or puzzlezero.nn not available
            print(f"{name}: no network ({exc})")
        else:
            sample = p.scramble(rng, args.batch * p.num_actions, depth=(1, SCRAMBLE_DEPTH.get(name, 1000)))
            sps = states_per_second(h, sample)
            net = run_bwas(p, h, start, args, args.nodes)
            print(f"{name} network ({what}): {sps:,.0f} states/s at batch {sample.shape[0]:,}")
            print(f"{name} BWAS, network: {net.summary()}")
            entry.update(network=what, network_states_per_second=round(sps), bwas_network=split(net))
        report[name] = entry
    if args.json_out:
        atomic_write_json(args.json_out, report)


if __name__ == "__main__":
    main()
