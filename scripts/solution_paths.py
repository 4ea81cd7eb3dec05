"""Write the states of the solutions in ``bench`` reports, with the cost of each one's rest, as a
training file (``puzzlezero train --set solution_paths=FILE --set path_share=S``; see
``puzzlezero.train.solution_paths``).

Each ``--cases`` goes with the ``--report`` given in the same position: the report's solved cases
whose ids are in that case file are replayed from their states (every solution must reach the
goal), and all of their states before the goal are written, each with the cost of the rest of its
solution. Cases of the file that the report did not solve are left out and counted.

    python scripts/solution_paths.py sokoban \\
        --cases ../shared/boxoban/hard/002.txt --report docs/bench/boxoban_hard.json \\
        --cases ../shared/boxoban/medium/valid/000.txt --report docs/bench/boxoban_medium.json \\
        --out runs/boxoban_paths.npz
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from puzzlezero import make
from puzzlezero.bench import load_cases
from puzzlezero.errors import PuzzleError
from puzzlezero.train.solution_paths import path_states, write_solution_paths


def collect(puzzle_name: str, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(states, costs, lines)``: the states of the reports' solutions of each case file, and a
    line per pair saying how many cases and states it gave."""
    puzzle = make(puzzle_name)
    all_states, all_costs, lines = [], [], []
    for cases_path, report_path in pairs:
        try:
            report = json.loads(Path(report_path).read_text())
        except (OSError, ValueError) as exc:
            raise PuzzleError(f"{report_path}: unreadable bench report ({exc})") from None
        if report.get("summary", {}).get("puzzle") not in (None, puzzle.name):
            raise PuzzleError(
                f"{report_path} is a report of {report['summary']['puzzle']!r}, not {puzzle.name!r}"
            )
        solved = {str(r["id"]): r["solution"] for r in report.get("results", []) if r.get("solved")}
        used = unsolved = n_states = 0
        for case in load_cases(puzzle, cases_path):
            solution = solved.get(str(case.id))
            if solution is None:
                unsolved += 1
                continue
            states, costs = path_states(puzzle, case.state, puzzle.parse_moves(solution))
            all_states.append(states)
            all_costs.append(costs)
            used += 1
            n_states += len(states)
        lines.append(
            f"{cases_path}: {used} solutions from {report_path} ({unsolved} not solved there), {n_states} states"
        )
    if not all_states:
        raise PuzzleError("no solved case in the reports matches the case files")
    return np.concatenate(all_states), np.concatenate(all_costs), lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("puzzle")
    ap.add_argument("--cases", action="append", required=True, help="a case file or level file (repeatable)")
    ap.add_argument(
        "--report", action="append", required=True, help="the bench report of the --cases in its position"
    )
    ap.add_argument("--out", type=Path, required=True, help="the .npz file to write")
    args = ap.parse_args(argv)
    if len(args.cases) != len(args.report):
        ap.error(f"give one --report per --cases ({len(args.cases)} cases, {len(args.report)} reports)")
    try:
        states, costs, lines = collect(args.puzzle, list(zip(args.cases, args.report, strict=True)))
        write_solution_paths(args.out, make(args.puzzle), states, costs)
    except PuzzleError as exc:
        print(f"error: {exc}")
        return 2
    print("\n".join(lines))
    print(
        f"{args.out}: {len(states)} states, path costs {costs.min():g}-{costs.max():g} (mean {costs.mean():.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
