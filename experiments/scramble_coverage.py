"""Do the training states reach as far from the goal as the states a model will be asked to solve?

DAVI and LHBL train on the goal scrambled ``k ~ U[1, K]`` times (``max_scramble`` = K; the puzzle's
``default_scramble_depth`` when not set). A network is asked to extrapolate to states farther out
than any it was trained on. This script measures both sides with one cheap distance proxy that needs
no model: the puzzle's own ``manhattan`` method (the sliding puzzles), or a registered heuristic
(``misplaced`` for any puzzle with a cell goal, ``pdb`` where pattern databases exist):

* the proxy over a benchmark file's states (mean, 10th/50th/90th percentile, maximum);
* its mean and spread at a few fixed scramble depths, as the trainer scrambles (``Puzzle.scramble``);
* for ``U[1, K]`` with each ``--max-scramble`` K (or ``k = ceil(K u^p)`` with ``--scramble-power p``,
  the trainer's ``scramble_power``): the same percentiles, and the share of training states at least
  as far out as the benchmark's median state.

Example (the figures in docs/training-research.md, "How far out the training states reach")::

    python experiments/scramble_coverage.py puzzle48 --cases puzzle48.json \\
        --heuristic manhattan --max-scramble 1000,6000
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np

from puzzlezero import make
from puzzlezero.case_files import load_cases
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver import get_heuristic
from puzzlezero.train import TrainConfig
from puzzlezero.train.descents import scramble_depths

PERCENTILES = (10, 50, 90)


def describe(values: np.ndarray) -> str:
    p = np.percentile(values, PERCENTILES)
    parts = [f"mean {values.mean():7.1f}"] + [f"p{q} {v:6.1f}" for q, v in zip(PERCENTILES, p, strict=True)]
    return "  ".join(parts + [f"max {values.max():6.1f}"])


def proxy(puzzle: Puzzle, name: str) -> Callable[[np.ndarray], np.ndarray]:
    """``states -> values``: the puzzle's ``manhattan`` method, else the registered heuristic."""
    if name == "manhattan":
        if not callable(getattr(puzzle, "manhattan", None)):
            raise PuzzleError(f"{puzzle.name} has no manhattan method; try --heuristic misplaced")
        return puzzle.manhattan  # type: ignore[no-any-return]
    return get_heuristic(puzzle, name)


def ints(text: str) -> list[int]:
    try:
        out = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected positive whole numbers, got {text!r}")
    return out


def positive(text: str) -> int:
    n = ints(text)
    if len(n) != 1:
        raise argparse.ArgumentTypeError(f"expected one positive whole number, got {text!r}")
    return n[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("puzzle")
    ap.add_argument("--cases", required=True, help="a benchmark file (JSON cases)")
    ap.add_argument(
        "--heuristic",
        default="manhattan",
        help="the puzzle's manhattan method, or a registered heuristic that needs no model",
    )
    ap.add_argument("--max-scramble", type=ints, default=None, help="K values, comma-separated")
    ap.add_argument(
        "--depths", type=ints, default=None, help="fixed depths (default: a ladder up to the largest K)"
    )
    ap.add_argument("--scramble-power", type=float, default=1.0, help="p of k = ceil(K u^p) (1: uniform)")
    ap.add_argument("--n", type=positive, default=20_000, help="scrambled states per depth or K")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        config = TrainConfig(args.puzzle, scramble_power=args.scramble_power)
        puzzle = make(args.puzzle)
        h = proxy(puzzle, args.heuristic)
        cases = load_cases(puzzle, args.cases)
    except (PuzzleError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    default_k = int(puzzle.default_scramble_depth)
    ks = args.max_scramble or [default_k]
    depths = args.depths or sorted({max(1, round(max(ks) * f)) for f in (0.05, 0.1, 0.25, 0.5, 1.0)})
    rng = np.random.default_rng(args.seed)

    bench = np.asarray(h(np.stack([c.state for c in cases])), dtype=np.float64)
    median = float(np.median(bench))
    print(f"{args.puzzle}, heuristic {args.heuristic!r}; the trainer's default K is {default_k}")
    print(f"benchmark ({len(cases)} states)        {describe(bench)}")
    for d in depths:
        v = np.asarray(h(puzzle.scramble(rng, args.n, d)), dtype=np.float64)
        print(f"scrambled {d:>6} times            mean {v.mean():7.1f}  sd {v.std():5.1f}")
    for k in ks:
        states = puzzle.scramble(rng, args.n, scramble_depths(rng, args.n, k, config))
        v = np.asarray(h(states), dtype=np.float64)
        share = float((v >= median).mean())
        print(
            f"training, K = {k:<6} p = {config.scramble_power:<4g}    {describe(v)}  at or past the benchmark median: {share:6.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
