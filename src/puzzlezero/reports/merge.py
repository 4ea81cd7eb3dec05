"""Bench reports of one run made in parts, joined into one (``puzzlezero report merge``).

A long run (a few thousand Boxoban levels at 60 s each) is made in parts (``--ids`` ranges, the
files of a level set) so that a kill loses one part, not the run. :func:`merge_reports` joins the
parts' reports: the results in order, the summary recomputed over all of them
(:func:`puzzlezero.bench.summarize`), the settings checked equal. The parts must come from the same
puzzle, search, heuristic, model and budget (:data:`SETTINGS`), and no case may appear twice.

    puzzlezero report merge part-000.json part-001.json part-002.json --out boxoban_hard.json
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from puzzlezero.bench import stage_summary, summarize
from puzzlezero.errors import PuzzleError

__all__ = ["SETTINGS", "merge_reports"]

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
    "windows",
    "max_nodes",
    "time_limit",
    "timing",
    "goal",
    "macros",
    "prune_dead_squares",
)


def merge_reports(
    parts: Sequence[Mapping[str, Any]],
    cases_file: str | None = None,
    given: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """One report of ``parts`` (bench reports: ``{"summary", "results"}``), in their order.

    ``cases_file`` names what the joined cases are (a folder of level files, say; default: the
    first part's); ``given`` holds the ``date`` and ``commit`` of the parts whose reports do not say
    them. The summary gets ``parts`` (how many), the parts' ``hardware`` (one, or the list where
    they differ), the largest ``peak_rss_mib``, and their ``date`` (an ISO 8601 interval from the
    first part's to the last's where they differ), ``version`` and ``commit``. Parts that ran with
    different settings, or that share a case, are refused (:class:`PuzzleError`)."""
    if not parts:
        raise PuzzleError("no reports to merge")
    try:
        first = parts[0]["summary"]
        for part in parts[1:]:
            s = part["summary"]
            differ = [k for k in SETTINGS if s.get(k) != first.get(k)]
            if differ:
                raise PuzzleError(f"the parts ran with different settings: {', '.join(differ)}")
        results = [r for part in parts for r in part["results"]]
        ids = [str(r["id"]) for r in results]
    except (KeyError, TypeError, AttributeError) as exc:
        raise PuzzleError(f"not a bench report (no {exc})") from None
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise PuzzleError(f"a case appears in two parts: {', '.join(twice[:5])}")
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
