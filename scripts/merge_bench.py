"""Join bench reports of one run made in parts (``--ids`` ranges, files of a level set) into one
report: the results in order, the summary recomputed over all of them, the settings checked equal.

    python scripts/merge_bench.py OUT.json PART.json [PART.json ...] [--cases-file NAME]
        [--date D] [--commit C]

A long run (a few thousand Boxoban levels at 60 s each) is made in parts so that a kill loses one
part, not the run; the parts must come from the same puzzle, search, heuristic, model and budget
(the settings of the summary that are not figures), and no case may appear twice. ``--date`` and
``--commit`` say when and from which commit the parts ran where their reports do not say it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from puzzlezero.bench import stage_summary, summarize
from puzzlezero.storage import atomic_write_text

#: summary fields that describe how a part ran (must agree across parts)
SETTINGS = (
    "puzzle",
    "search",
    "heuristic",
    "model",
    "models",
    "network",
    "weight",
    "batch",
    "stages",
    "beam_width",
    "options",
    "fallback",
    "shortcut",
    "max_nodes",
    "time_limit",
    "timing",
    "goal",
    "macros",
    "prune_dead_squares",
)


def merge(
    parts: list[dict[str, Any]], cases_file: str | None = None, given: dict[str, str | None] | None = None
) -> dict[str, Any]:
    """One report of ``parts`` (bench reports: ``{"summary", "results"}``); ``given``: the
    ``date`` and ``commit`` of the parts whose reports do not say them."""
    first = parts[0]["summary"]
    for part in parts[1:]:
        s = part["summary"]
        differ = [k for k in SETTINGS if s.get(k) != first.get(k)]
        if differ:
            raise SystemExit(f"the parts ran with different settings: {', '.join(differ)}")
    results = [r for part in parts for r in part["results"]]
    ids = [r["id"] for r in results]
    if len(set(map(str, ids))) != len(ids):
        raise SystemExit("a case appears in two parts")
    summary = summarize(results)
    summary.update({k: first.get(k) for k in SETTINGS if k in first})
    summary.update(stage_summary(results))
    summary["cases_file"] = cases_file or first.get("cases_file")
    machines = sorted({p["summary"].get("hardware") for p in parts} - {None})
    summary["hardware"] = machines[0] if len(machines) == 1 else machines
    summary["peak_rss_mib"] = max((p["summary"].get("peak_rss_mib") or 0) for p in parts) or None
    summary["parts"] = len(parts)
    for key in ("date", "version", "commit"):
        values = [p["summary"].get(key) or (given or {}).get(key) for p in parts]
        seen = sorted(set(values) - {None}, key=str)
        if key == "date" and len(seen) > 1:  # an ISO 8601 interval: the first part's to the last's
            summary[key] = f"{seen[0]}/{seen[-1]}"
        elif seen:
            summary[key] = seen if len(seen) > 1 else seen[0]
    return {"summary": summary, "results": results}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("parts", type=Path, nargs="+")
    ap.add_argument("--cases-file", help="what the joined cases are (a folder of level files, say)")
    ap.add_argument("--date", help="when the parts ran, where their reports do not say")
    ap.add_argument("--commit", help="the commit the parts ran from, where their reports do not say")
    args = ap.parse_args(argv)
    parts = [json.loads(p.read_text()) for p in args.parts]
    report = merge(parts, args.cases_file, {"date": args.date, "commit": args.commit})
    atomic_write_text(args.out, json.dumps(report, separators=(",", ":")) + "\n")
    s = report["summary"]
    print(
        f"{args.out}: {s['cases']} cases, {s['solved_pct']}% solved, mean length {s['mean_length']}, "
        f"median {s['median_seconds']} s, mean {s['mean_seconds']} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
