"""Probe a sliding-puzzle network for holes: its values of boards one 3-cycle of tiles from the goal.

A beam keeps the lowest values of thousands of children, so it finds the states a network
undervalues most. On the sliding puzzles these are boards with nearly every tile at home and a few
tiles swapped between far-apart cells: a random scramble never makes them (a short one moves the
tiles near the blank's path, a long one moves every tile), so a network learns them only by
generalising. Solving one takes several moves per cell of displacement, so a network that has
learnt them values them well above their Manhattan distance; one that has not values them near the
goal, and a beam that falls into such a hole does not climb out (docs/training-research.md, "How far out the
training states reach").

Each probe board is the goal with three tiles cycled among three random tile cells (an even
permutation with the blank in place: always solvable). Printed: the mean value, the mean ratio of
value to Manhattan distance, and the share valued below the Manhattan distance (an admissible
bound, so every such value is too low).

Example::

    python experiments/three_cycles.py puzzle35                      # the shipped model
    python experiments/three_cycles.py puzzle48 --model runs/p48_model
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver import Heuristic, get_heuristic


def sliding_puzzle_and_network(name: str, model: str | None) -> tuple[Puzzle, Heuristic]:
    """The sliding puzzle ``name`` and its learned heuristic (``model``: a folder, or ``None`` for
    the shipped one); :class:`PuzzleError` for a puzzle without a Manhattan distance."""
    puzzle = make(name)
    if not callable(getattr(puzzle, "manhattan", None)):
        raise PuzzleError(f"{name} is not a sliding puzzle (it has no Manhattan distance)")
    return puzzle, get_heuristic(puzzle, "learned", model)


def three_cycle_boards(goal: np.ndarray, blank_cell: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` copies of ``goal`` (flat), each with the tiles of three random cells other than the
    blank's cycled: cell a takes b's tile, b takes c's and c takes a's."""
    cells = np.array([c for c in range(goal.size) if c != blank_cell])
    out = np.repeat(goal[None], n, axis=0)
    for row in out:
        a, b, c = rng.choice(cells, 3, replace=False)
        row[a], row[b], row[c] = goal[b], goal[c], goal[a]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("puzzle", help="a sliding puzzle: puzzle8, puzzle15, puzzle24, puzzle35, puzzle48")
    ap.add_argument("--model", default=None, help="a model folder (default: the shipped one)")
    ap.add_argument("--n", type=int, default=300, help="probe boards (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error(f"--n must be at least 1, got {args.n}")
    try:
        puzzle, h = sliding_puzzle_and_network(args.puzzle, args.model)
    except (PuzzleError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    goal = puzzle.goal().reshape(-1)
    blank = int(np.flatnonzero(goal == 0)[0])
    boards = three_cycle_boards(goal, blank, args.n, np.random.default_rng(args.seed))
    values = np.asarray(h(boards), dtype=np.float64)
    md = np.asarray(puzzle.manhattan(boards), dtype=np.float64)
    print(
        f"{args.puzzle}, {args.model or 'shipped model'}: {args.n} boards one 3-cycle from the goal, "
        f"Manhattan distance {md.mean():.1f} (min {md.min():.0f}, max {md.max():.0f})"
    )
    print(
        f"value {values.mean():.1f} (min {values.min():.1f}), value / Manhattan {(values / md).mean():.2f}, "
        f"valued below the Manhattan distance: {(values < md).mean():.0%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
