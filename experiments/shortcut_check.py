"""How much do shortcuts shorten a bench report's paths? The pass at several bounds, side by side.

Each solution of a ``puzzlezero bench PUZZLE ... --json FILE`` report, as the report gives it, is
given to :func:`puzzlezero.search.shortcut.shortcut` at each ``--states`` bound; printed per bound: the mean length before and after, the radius the
balls reached, the rounds, and the median and largest seconds a path took. Every shortened path is
replayed from its case's state: it must reach the same goal.

Example (docs/results.md)::

    python experiments/shortcut_check.py docs/bench/puzzle48_default-no-shortcut_ids0-19.json --states 2e6,6e6,16e6
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from puzzlezero import make
from puzzlezero.case_files import case_state
from puzzlezero.errors import PuzzleError
from puzzlezero.machine import hardware
from puzzlezero.search.shortcut import can_shortcut, shortcut


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", help="a bench report (--json) with solutions")
    ap.add_argument("--states", default="2e6,6e6", help="bounds on states a round, comma-separated")
    ap.add_argument("--cases", help="the cases file (default: the report's own cases_file)")
    args = ap.parse_args(argv)
    try:
        with open(args.report) as f:
            report = json.load(f)
        p = make(report["summary"]["puzzle"])
        if not can_shortcut(p):
            raise PuzzleError(f"{p.name}: shortcuts need moves that all have an inverse and cost the same")
        with open(args.cases or report["summary"]["cases_file"]) as f:
            cases = {c["id"]: c for c in json.load(f)["cases"]}
        bounds = [int(float(b)) for b in args.states.split(",")]
    except (OSError, KeyError, ValueError, PuzzleError) as e:
        print(f"shortcut_check: {e}", file=sys.stderr)
        return 2
    solved = [r for r in report["results"] if r["solved"]]
    print(f"{p.name}: {len(solved)} solved paths of {args.report}; {hardware()}")
    print(
        f"{'states':>12} {'before':>8} {'after':>8} {'radius':>7} {'rounds':>7} {'median s':>9} {'max s':>7}"
    )
    for bound in bounds:
        before, after, radii, rounds, seconds = [], [], [], [], []
        for r in solved:
            start = case_state(p, cases[r["id"]])
            moves = p.parse_moves(r["solution"])
            cut = shortcut(p, start, moves, max_states=bound)
            if not p.is_goal(p.apply_moves(start, list(cut.actions))[None])[0]:
                raise AssertionError(f"id {r['id']}: the shortened path does not solve the state")
            before.append(len(moves))
            after.append(len(cut.actions))
            radii.append(cut.radius)
            rounds.append(cut.rounds)
            seconds.append(cut.seconds)
        print(
            f"{bound:>12,} {statistics.mean(before):>8.2f} {statistics.mean(after):>8.2f} "
            f"{min(radii):>3}-{max(radii):<3} {statistics.mean(rounds):>7.2f} "
            f"{statistics.median(seconds):>9.2f} {max(seconds):>7.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
