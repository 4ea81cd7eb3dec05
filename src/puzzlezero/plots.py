"""Figures of bench reports, drawn headless with matplotlib (no display needed), written atomically
as PNG or SVG by the file's suffix; the training plot (:func:`puzzlezero.train.report.plot_run`)
is saved the same way.

:func:`plot_bench` draws one or more ``puzzlezero bench --json`` reports side by side: each
instance's solution length against its optimal length (the diagonal is optimal; unsolved cases sit
on the top edge as crosses), and each instance's seconds (with its median, and when the anytime
solver found its first solution). ``puzzlezero bench ... --plot FILE`` draws the run it just made,
``puzzlezero plot-bench A.json B.json --out FILE`` compares saved reports.

Drawing needs matplotlib, in the ``train`` extra: without it, :func:`pyplot` and
:func:`save_figure` raise :class:`~puzzlezero.errors.MissingExtraError` saying how to install it.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from puzzlezero.errors import MissingExtraError, PuzzleError
from puzzlezero.storage import atomic_write

__all__ = ["FORMATS", "bench_series", "figure_format", "plot_bench", "pyplot", "save_figure"]

#: file suffix -> matplotlib format
FORMATS = {".png": "png", ".svg": "svg"}
#: raster resolution of PNG figures
DPI = 100


def figure_format(path: str | os.PathLike[str]) -> str:
    """The format of ``path`` by its suffix; another suffix is a :class:`PuzzleError`."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise PuzzleError(f"a figure is written as {' or '.join(FORMATS)}, not {str(path)!r}")
    return FORMATS[suffix]


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Write a matplotlib figure atomically as PNG or SVG (by suffix) and close it."""
    plt = _pyplot()
    fmt = figure_format(path)
    try:
        return atomic_write(path, lambda f: fig.savefig(f, format=fmt, dpi=DPI))
    finally:
        plt.close(fig)


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the headless Agg backend."""
    return _pyplot(backend="Agg")


def _pyplot(backend: str | None = None) -> Any:
    """``matplotlib.pyplot`` (on ``backend`` if given), or a :class:`MissingExtraError` naming the
    train extra where matplotlib is not installed."""
    try:
        import matplotlib

        if backend is not None:
            matplotlib.use(backend)
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "matplotlib":
            raise
        raise MissingExtraError(
            'figures need matplotlib, in the train extra: pip install "puzzlezero[train]"', "train"
        ) from exc
    return plt


def _label(summary: dict[str, Any]) -> str:
    search = summary.get("search") or "?"
    if summary.get("stages"):
        setting = " then ".join(f"{w:g}/{b}" for w, b in summary["stages"])
        search += f" {setting}"
    elif summary.get("weight") is not None:
        search += f" {summary['weight']:g}/{summary.get('batch')}"
    elif summary.get("beam_width") is not None:
        widths = summary["beam_width"]
        search += " W " + (" then ".join(map(str, widths)) if isinstance(widths, list) else str(widths))
    if summary.get("heuristic"):
        search += f", {summary['heuristic']}"
    return search


def bench_series(report: dict[str, Any], by_optimal: bool = True) -> dict[str, list[tuple[float, float]]]:
    """The points :func:`plot_bench` draws for one report: ``"solved"`` ``(x, length)`` with x the
    optimal length (``by_optimal``; cases without one are left out) or the case id, ``"failed"``
    ``(x, 0)`` of unsolved cases, ``"seconds"`` and ``"unsolved_seconds"`` ``(id, seconds)``, and
    ``"first"`` ``(id, first_solution_seconds)`` of anytime solves."""
    results = report["results"]
    # a case's place on the x axis: its id, or its position where ids are names ("000:17")
    ids = [r["id"] if isinstance(r["id"], int | float) else i for i, r in enumerate(results)]
    xs = [r["optimal_length"] if by_optimal else x for x, r in zip(ids, results, strict=True)]
    pairs = list(zip(xs, ids, results, strict=True))
    return {
        "solved": [(x, r["length"]) for x, _, r in pairs if r["solved"] and x is not None],
        "failed": [(x, 0) for x, _, r in pairs if not r["solved"] and x is not None],
        "seconds": [(i, r["seconds"]) for _, i, r in pairs],
        "unsolved_seconds": [(i, r["seconds"]) for _, i, r in pairs if not r["solved"]],
        "first": [(i, r["first_solution_seconds"]) for _, i, r in pairs if "first_solution_seconds" in r],
    }


def plot_bench(
    reports: Sequence[dict[str, Any]],
    out: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
    title: str | None = None,
) -> Path:
    """Draw bench reports (``{"summary", "results"}`` dicts, as ``bench --json`` writes them) into
    ``out`` (``.png`` or ``.svg``): length against optimal, and seconds per instance. ``labels``
    name the reports in the legend (default: their search settings). Returns ``out``."""
    figure_format(out)
    if not reports:
        raise PuzzleError("plot_bench needs at least one report")
    for rep in reports:
        if not isinstance(rep, dict) or "summary" not in rep or not rep.get("results"):
            raise PuzzleError(
                "a bench report is a dict with 'summary' and non-empty 'results' (bench --json)"
            )
    labels = list(labels) if labels is not None else [_label(r["summary"]) for r in reports]
    if len(labels) != len(reports):
        raise PuzzleError(f"{len(labels)} labels for {len(reports)} reports")
    plt = pyplot()
    fig, (ax_len, ax_time) = plt.subplots(1, 2, figsize=(12, 5))
    colors = plt.get_cmap("tab10")
    lengths = [r["length"] for rep in reports for r in rep["results"] if r["length"] is not None]
    optima = [
        r["optimal_length"] for rep in reports for r in rep["results"] if r["optimal_length"] is not None
    ]
    has_optimal = bool(optima)
    top = max(lengths + optima, default=1) * 1.05 + 1
    for i, (rep, label) in enumerate(zip(reports, labels, strict=True)):
        color = colors(i % 10)
        s = rep["summary"]
        pts = bench_series(rep, by_optimal=has_optimal)
        excess = ""
        if has_optimal and pts["solved"]:  # over the solved cases with a known optimum
            excess = f", +{statistics.mean(y - x for x, y in pts['solved']):.2f} over optimal"
        if pts["solved"]:
            ax_len.scatter(
                *zip(*pts["solved"], strict=True),
                s=18,
                alpha=0.75,
                color=color,
                label=f"{label}\n{s.get('solved_pct', 0):g}% solved{excess}",
            )
        if pts["failed"]:
            ax_len.scatter(
                [x for x, _ in pts["failed"]], [top] * len(pts["failed"]), marker="x", color=color, s=30
            )
        secs = [t for _, t in pts["seconds"]]
        ax_time.scatter(
            *zip(*pts["seconds"], strict=True),
            s=18,
            alpha=0.75,
            color=color,
            label=f"{label}\nmedian {statistics.median(secs):.2f} s",
        )
        ax_time.axhline(statistics.median(secs), color=color, lw=0.8, ls="--")
        if pts["unsolved_seconds"]:
            ax_time.scatter(*zip(*pts["unsolved_seconds"], strict=True), marker="x", color=color, s=40)
        if pts["first"]:
            ax_time.scatter(*zip(*pts["first"], strict=True), marker="v", s=16, color=color, alpha=0.5)
    if has_optimal:
        lo, hi = min(optima) - 1, max(optima) + 1
        ax_len.plot([lo, hi], [lo, hi], "k--", lw=1, label="optimal")
        ax_len.set_xlim(lo, hi)
        ax_len.set_ylim(lo, top + 1)
        ax_len.set_xlabel("optimal length")
    else:
        ax_len.set_xlabel("case id")
    ax_len.set_ylabel("solution length (x: not solved)")
    ax_len.set_title("solution length" + (" against optimal" if has_optimal else ""))
    ax_len.legend(fontsize=7, loc="best")
    ax_time.set_xlabel("case id")
    ax_time.set_ylabel("seconds (x: not solved, v: first solution)")
    ax_time.set_title("time per instance")
    ax_time.set_ylim(bottom=0)
    ax_time.legend(fontsize=7, loc="best")
    first = reports[0]["summary"]
    fig.suptitle(
        title
        or f"{first.get('puzzle', '?')}: {len(reports[0]['results'])} cases, {first.get('hardware', '')}",
        fontsize=10,
    )
    fig.tight_layout()
    return save_figure(fig, out)
