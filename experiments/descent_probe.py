"""Probe a sliding-puzzle network for holes along its own greedy descents.

A search over a network goes where the network is lowest. Greedy descents under it (the walks of
``train/descents.py``: from scrambles of up to K moves, each step to the child of least
``1 + value``, never undoing the last move, one step in ten at random) follow the same pull, so
where they end up is where a search ends up. Printed at a few steps of the walks: the mean value,
the mean Manhattan distance (an admissible bound) and the share of states valued below it, which
are undervalued for certain; then the same share for plain scrambles of the same depths, the
states the network was trained on.

Example::

    python experiments/descent_probe.py puzzle48 --model runs/p48_model --max-scramble 6000 --steps 1000
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver import Heuristic, get_heuristic
from puzzlezero.train.descents import descent_states


def sliding_puzzle_and_network(name: str, model: str | None) -> tuple[Puzzle, Heuristic]:
    """The sliding puzzle ``name`` and its learned heuristic (``model``: a folder, or ``None`` for
    the shipped one); :class:`PuzzleError` for a puzzle without a Manhattan distance."""
    puzzle = make(name)
    if not callable(getattr(puzzle, "manhattan", None)):
        raise PuzzleError(f"{name} is not a sliding puzzle (it has no Manhattan distance)")
    return puzzle, get_heuristic(puzzle, "learned", model)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("puzzle", help="a sliding puzzle: puzzle8, puzzle15, puzzle24, puzzle35, puzzle48")
    ap.add_argument("--model", default=None, help="a model folder (default: the shipped one)")
    ap.add_argument("--max-scramble", type=int, default=None, help="K of the starts (default: the puzzle's)")
    ap.add_argument("--steps", type=int, default=500, help="steps of each walk (default 500)")
    ap.add_argument("--walkers", type=int, default=100, help="walks (default 100)")
    ap.add_argument("--epsilon", type=float, default=0.1, help="chance of a random step (default 0.1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.steps < 1 or args.walkers < 1 or not 0 <= args.epsilon <= 1:
        ap.error("--steps and --walkers must be at least 1 and --epsilon in [0, 1]")
    try:
        puzzle, h = sliding_puzzle_and_network(args.puzzle, args.model)
    except (PuzzleError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    k = args.max_scramble or puzzle.default_scramble_depth
    if k < 1:
        ap.error(f"--max-scramble must be at least 1, got {k}")
    rng = np.random.default_rng(args.seed)
    n = args.walkers * args.steps
    walks = descent_states(puzzle, rng, n, k, h, steps=args.steps, epsilon=args.epsilon)
    value = np.asarray(h(walks), dtype=np.float64).reshape(args.walkers, args.steps)
    md = np.asarray(puzzle.manhattan(walks), dtype=np.float64).reshape(args.walkers, args.steps)
    print(
        f"{args.puzzle}, {args.model or 'shipped model'}: {args.walkers} greedy descents of {args.steps} "
        f"steps from scrambles of 1-{k} moves"
    )
    print("step | value | Manhattan | valued below Manhattan")
    for t in sorted({0, args.steps // 4, args.steps // 2, 3 * args.steps // 4, args.steps - 1}):
        below = (value[:, t] < md[:, t]).mean()
        print(f"{t:4d} | {value[:, t].mean():6.1f} | {md[:, t].mean():6.1f} | {below:.0%}")
    scrambles = puzzle.scramble(rng, min(n, 20_000), (1, k))
    below_scrambles = (np.asarray(h(scrambles)) < puzzle.manhattan(scrambles)).mean()
    print(
        f"all descent states valued below Manhattan: {(value < md).mean():.1%}; "
        f"plain scrambles of 1-{k} moves: {below_scrambles:.1%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
