"""Dead-square pruning on Sokoban, reported apart from the learned solver (which does without it).

Solves the same states with BWAS twice, on ``Sokoban()`` and on ``Sokoban(prune_dead_squares=True)``
(a push onto a dead square is no move), and prints solved share, mean length, mean nodes generated
and mean seconds of each, plus the share of floor cells that are dead squares in those levels.

    python experiments/sokoban_pruning.py --cases boxoban-levels/unfiltered/test --model runs/sokoban-model
    python experiments/sokoban_pruning.py --generated 40 --depth 4:14     # pulled states, breadth-first

Without ``--model`` the heuristic is 0 (breadth-first with ``--weight 1``): only short pulled states
are then within reach.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from puzzlezero import make
from puzzlezero.case_files import load_cases
from puzzlezero.machine import hardware
from puzzlezero.puzzles.sokoban import BOX, WALL, Sokoban
from puzzlezero.puzzles.sokoban.deadlock import dead_squares
from puzzlezero.search import bwas


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", help="level file, directory of level files, or JSON case file")
    ap.add_argument("--generated", type=int, default=0, help="this many pulled training states instead")
    ap.add_argument("--depth", default="4:14", help="reverse-play depths lo:hi of --generated states")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", help="model folder for the learned heuristic (default: h = 0)")
    ap.add_argument("--weight", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--max-nodes", type=int, default=200_000)
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per state")
    args = ap.parse_args()

    plain = make("sokoban")
    assert isinstance(plain, Sokoban)
    pruned = Sokoban(plain.height, plain.width, plain.num_boxes, prune_dead_squares=True)
    if args.cases:
        states = np.stack([c.state for c in load_cases(plain, args.cases)])
    else:
        lo, hi = (int(v) for v in args.depth.split(":"))
        states = plain.scramble(np.random.default_rng(args.seed), args.generated, (lo, hi))
    floor = states != WALL
    dead = dead_squares(states, plain.height, plain.width)
    print(
        f"{len(states)} levels; dead squares: {100 * dead.sum() / floor.sum():.1f}% of floor cells; "
        f"boxes on them at the start: {int(np.any(dead & ((states & BOX) != 0), axis=1).sum())}"
    )

    if args.model:
        from puzzlezero.nn import load_model, make_heuristic

        heuristic = make_heuristic(plain, load_model(args.model))
    else:

        def heuristic(s: np.ndarray) -> np.ndarray:
            return np.zeros(len(s), np.float32)

    print(
        f"BWAS weight {args.weight}, batch {args.batch}, max nodes {args.max_nodes:,}, "
        f"{args.time_limit:g} s each; {hardware()}"
    )
    print(f"{'puzzle':<26} {'solved':>7} {'mean length':>12} {'mean nodes':>11} {'mean s':>8}")
    for name, puzzle in (("sokoban", plain), ("sokoban, dead squares cut", pruned)):
        runs = []
        for s in states:
            t0 = time.perf_counter()
            r = bwas(
                puzzle,
                s[None],
                heuristic,
                weight=args.weight,
                batch_size=args.batch,
                max_nodes=args.max_nodes,
                time_limit=args.time_limit,
            )[0]
            if r.solved:  # replay on the plain rules: pruning must never change what a move does
                assert plain.is_goal(plain.apply_moves(s, list(r.actions))[None])[0]
            runs.append((r, time.perf_counter() - t0))
        solved = [r for r, _ in runs if r.solved]
        print(
            f"{name:<26} {100 * len(solved) / len(runs):6.1f}% "
            f"{statistics.mean(len(r.actions) for r in solved) if solved else float('nan'):12.2f} "
            f"{statistics.mean(r.nodes_generated for r, _ in runs):11,.0f} "
            f"{statistics.mean(t for _, t in runs):8.3f}"
        )


if __name__ == "__main__":
    main()
