"""Are a bench report's cube solutions locally optimal? Every window of k moves, solved optimally.

Each solution of a ``puzzlezero bench cube3 ... --json FILE`` report is cut into every window of
``k`` consecutive moves (fewer at the end). The window's moves applied to the solved cube make a
cube whose optimal solution, inverted, is a shortest way between the window's two ends (the cube
is a group); :func:`puzzlezero.classic.optimal.cube_ida.solve_cube` (Korf's pattern databases, built and
cached on first use: minutes) finds it within ``--max-nodes``. A shorter way is spliced in and the
scan goes back half a window. Printed: the mean length before and after, the windows solved, those
that ran into the node cap (undecided), and every solution that got shorter (each new window is
replayed: it must make the same cube as the moves it replaces).

Example (docs/results.md)::

    python experiments/window_check.py docs/bench/cube3_default_ids0-19.json --window 14
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

import numpy as np

from puzzlezero import make
from puzzlezero.classic.optimal.cube_ida import solve_cube
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle


def shorter_window(puzzle: Puzzle, moves: list[int], max_nodes: int, tally: Counter[str]) -> list[int] | None:
    """A shortest move sequence with the same effect as ``moves``, if shorter; else ``None``."""
    cube = puzzle.apply_moves(puzzle.goal(), moves)
    r = solve_cube(puzzle, cube, max_nodes=max_nodes)
    tally[r.status] += 1
    if r.status != "solved" or len(r.actions) >= len(moves):
        return None
    inverse = puzzle.inverse_action
    better = [int(inverse[a]) for a in reversed(r.actions)]
    if not np.array_equal(puzzle.apply_moves(puzzle.goal(), better), cube):  # the replay check
        raise AssertionError(f"the shortened window {better} does not do what {moves} does")
    return better


def shorten(puzzle: Puzzle, moves: list[int], k: int, max_nodes: int, tally: Counter[str]) -> list[int]:
    i = 0
    while i + 2 <= len(moves):
        j = min(i + k, len(moves))
        better = shorter_window(puzzle, moves[i:j], max_nodes, tally)
        if better is None:
            i += 1
        else:
            moves = moves[:i] + better + moves[j:]
            i = max(0, i - k // 2)
    return moves


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", help="a cube3 bench report (--json)")
    ap.add_argument("--window", type=int, default=14, help="k, moves per window (default 14)")
    ap.add_argument("--max-nodes", type=int, default=2_000_000, help="per window (default 2,000,000)")
    args = ap.parse_args(argv)
    if args.window < 2 or args.max_nodes < 1:
        ap.error("--window must be at least 2 and --max-nodes at least 1")
    puzzle = make("cube3")
    try:
        with open(args.report, encoding="utf-8") as f:
            report = json.load(f)
        if report.get("summary", {}).get("puzzle") != "cube3":
            raise PuzzleError(f"{args.report} is not a cube3 bench report")
        solutions = [
            (r["id"], puzzle.parse_moves(r["solution"])) for r in report["results"] if r.get("solution")
        ]
    except (OSError, ValueError, AttributeError, KeyError, TypeError, PuzzleError) as exc:
        print(f"error: {args.report}: {exc}", file=sys.stderr)
        return 2
    tally: Counter[str] = Counter()
    before = after = count = 0
    for case_id, moves in solutions:
        new = shorten(puzzle, moves, args.window, args.max_nodes, tally)
        before, after, count = before + len(moves), after + len(new), count + 1
        if len(new) < len(moves):
            print(f"id {case_id}: {len(moves)} -> {len(new)} moves")
    if not count:
        print("error: the report holds no solutions", file=sys.stderr)
        return 2
    print(
        f"{count} solutions, k = {args.window}: mean {before / count:.3f} -> {after / count:.3f} moves; "
        f"windows solved {tally['solved']}, undecided at the node cap {sum(tally.values()) - tally['solved']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
