"""How networks value benchmark states against their optimal lengths.

For the cases of a case file or level file whose optimal lengths are known (from the file, or from
a ``bench`` report made with ``--reference optimal``), the states are grouped by optimal length and
each model's mean value per group is printed beside the group's mean optimal length: a network
that values far states well below their cost (trained on states that never reach that far) shows
it at once, and a search over it needs more nodes there.

    python experiments/value_by_length.py sokoban --cases boxoban-levels/hard/001.txt \\
        --report docs/bench/boxoban_hard.json --models sokoban,runs/sok_model --bins 0,40,60,80,100
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from puzzlezero import cost_to_go, make
from puzzlezero.case_files import load_cases
from puzzlezero.errors import PuzzleError


def optimal_lengths(cases: list, report: Path | None) -> np.ndarray:
    """``float[N]``: each case's optimal length, from the case or else from the report (``nan``
    where neither knows it)."""
    known: dict[str, int] = {}
    if report is not None:
        try:
            results = json.loads(report.read_text()).get("results", [])
        except (OSError, ValueError) as exc:
            raise PuzzleError(f"{report}: unreadable bench report ({exc})") from None
        known = {str(r["id"]): r["optimal_length"] for r in results if r.get("optimal_length") is not None}
    out = [c.optimal_length if c.optimal_length is not None else known.get(str(c.id)) for c in cases]
    return np.array([np.nan if v is None else float(v) for v in out])


def table(
    puzzle_name: str, cases_path: str, report: Path | None, models: list[str], bins: list[float]
) -> str:
    """The Markdown table: a row per group of optimal lengths, a column per model."""
    puzzle = make(puzzle_name)
    cases = load_cases(puzzle, cases_path)
    opt = optimal_lengths(cases, report)
    if np.isnan(opt).all():
        raise PuzzleError(f"{cases_path}: no optimal lengths in the file or the report")
    states = np.stack([c.state for c in cases])
    values = {m: cost_to_go.values(puzzle, states, model=m) for m in models}
    edges = [*bins, float("inf")]
    lines = [
        "| optimal length | states | mean optimal | " + " | ".join(f"`{m}`" for m in models) + " |",
        "|---" * (3 + len(models)) + "|",
    ]
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        rows = (opt >= lo) & (opt < hi)
        if rows.any():
            name = f"{lo:g}-{hi - 1:g}" if np.isfinite(hi) else f"{lo:g}+"
            cells = " | ".join(f"{values[m][rows].mean():.1f}" for m in models)
            lines.append(f"| {name} | {int(rows.sum())} | {opt[rows].mean():.1f} | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("puzzle")
    ap.add_argument("--cases", required=True, help="a case file or level file")
    ap.add_argument("--report", type=Path, help="a bench report with the cases' optimal lengths")
    ap.add_argument("--models", required=True, help="model names or folders, A,B")
    ap.add_argument("--bins", default="0,40,60,80,100", help="the lower ends of the groups, A,B,C")
    args = ap.parse_args(argv)
    try:
        bins = sorted(float(b) for b in args.bins.split(","))
    except ValueError:
        print(f"error: --bins must be numbers separated by commas, got {args.bins!r}")
        return 2
    try:
        print(table(args.puzzle, args.cases, args.report, args.models.split(","), bins))
    except PuzzleError as exc:
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
