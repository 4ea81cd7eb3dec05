"""Where a model's training is heading: mean solution length against training samples.

Reads a curves file (``docs/bench/floor_curves.json``: per puzzle its floor, DeepCubeA's figure and
series of models, each point a model's mean length, or mean moves over optimal where the puzzle
names that ``measure``, with one search on fixed benchmark ids, as measured when it was trained)
and draws one panel per puzzle: the points of each series
against the millions of samples behind the model (log scale), models whose last run was on a GPU as triangles, the
shipped model ringed, the floor and DeepCubeA's figure as lines. Points more than a tenth above the
floor, or above the puzzle's own ``ceiling`` (runs that made a model much worse) are named above the
panel instead of stretching it, as is a puzzle's ``note`` (how its benchmark ids compare with the
whole set).

    python benchmarks/plot_floor_curves.py docs/bench/floor_curves.json docs/bench/floor_curves.png
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

from puzzlezero.plots import pyplot, save_figure

#: how far above the floor a panel reaches, as a share of the floor (unless the puzzle sets ``ceiling``)
HEADROOM = 0.1
#: what a point's ``mean`` is, unless the puzzle names its ``measure``
MEASURE = "mean solution length (moves)"


def ceiling(spec: dict[str, Any]) -> float:
    """The highest mean a panel shows: the puzzle's ``ceiling``, else a tenth above the floor."""
    return float(spec.get("ceiling", float(spec["floor"]) * (1 + HEADROOM)))


def panel_title(name: str, spec: dict[str, Any]) -> str:
    """The puzzle, its note, and the points above :func:`ceiling` with the dates they were measured."""
    off_scale = [
        f"{p['mean']:g} ({p['date']})"
        for points in spec["series"].values()
        for p in points
        if p["mean"] > ceiling(spec)
    ]
    notes = [spec.get("note", "")] + (["off the scale: " + ", ".join(off_scale)] if off_scale else [])
    return "\n".join([name] + [textwrap.fill(n, 90) for n in notes if n])


def draw(curves: dict[str, Any], out: Path) -> Path:
    plt = pyplot()
    puzzles = curves["puzzles"]
    fig, axes = plt.subplots(1, len(puzzles), figsize=(6.4 * len(puzzles), 5.0), squeeze=False)
    for ax, (name, spec) in zip(axes[0], puzzles.items(), strict=True):
        top = spec["floor"]
        for k, (label, points) in enumerate(spec["series"].items()):
            color = f"C{k}"
            for p in (p for p in points if p["mean"] <= ceiling(spec)):
                top = max(top, p["mean"])
                marker = "^" if p.get("last_run_on_gpu") else "o"
                ax.scatter(p["samples_m"], p["mean"], color=color, marker=marker, zorder=3)
                if p.get("shipped"):
                    ax.scatter(
                        p["samples_m"], p["mean"], s=180, facecolors="none", edgecolors=color, zorder=3
                    )
            ax.plot([], [], color=color, marker="o", linestyle="", label=label)
        ax.axhline(
            spec["floor"], color="black", linestyle="--", linewidth=1, label=f"floor {spec['floor']:g}"
        )
        ax.axhline(
            spec["deepcubea"],
            color="grey",
            linestyle=":",
            linewidth=1,
            label=f"DeepCubeA {spec['deepcubea']:g}",
        )
        ax.set_xscale("log")
        margin = (ceiling(spec) - spec["floor"]) / 6
        ax.set_ylim(max(0.0, spec["deepcubea"] - margin), top + margin)
        ax.set_xlabel("training samples behind the model (millions; triangles: last run on a GPU)")
        ax.set_ylabel(spec.get("measure", MEASURE))
        ax.set_title(panel_title(name, spec), fontsize=8)
        ax.legend(fontsize=8, loc="lower left")
    fig.suptitle("Shipped lineages: quality against training (shipped models ringed)")
    fig.tight_layout()
    return save_figure(fig, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("curves", type=Path)
    ap.add_argument("out", type=Path, help="a .png or .svg")
    args = ap.parse_args(argv)
    print(draw(json.loads(args.curves.read_text()), args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
