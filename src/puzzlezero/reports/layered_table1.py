"""Dong, Hao and Nakayama's Table 1: layer-by-layer solving with single-head (SingleH) and
multi-head (MultiH Baseline, 3+2, 4+1, 4+2) networks against a whole-cube DeepCubeA baseline, each
at (lambda, B) = (0.2, 100) and (0.6, 1000), on the same random cubes, printed beside the paper's
figures and written to ``OUT.md`` and ``OUT.json``.

    puzzlezero report layered --row SingleH=cube3-layered --row "MultiH 4+1=runs/mh41" \\
        --n 100 --out docs/bench/layered_table1

As in the paper:

* a layered row runs BWAS goal by goal (``layer1``, ``layer2``, ``solved``: :mod:`puzzlezero.search.layered`),
  at most ``layer_nodes`` (600,000) nodes generated per layer search;
* the DeepCubeA row runs BWAS to ``solved`` with at most ``whole_nodes`` (1,800,000): "we fairly allow
  every complete solver to explore a max of 1,800,000 nodes";
* the cubes are random (``depth`` random quarter turns from the solved cube, 100 by default: far
  past the cube's diameter of 26, so of "random difficulty"), the same for every row; or the cases
  of a file (``cases``).

Every solution is replayed, stage by stage for layered rows (each stage's end state must meet its
goal). Length, seconds and nodes are means over the solved cubes (the paper's DeepCubeA row at (0.6,
1000) solves 19% with 1,046,799 nodes on average, below its cap: solved cubes only). There is no
fallback search and no time limit beyond ``time_limit`` per cube (the paper had none: the node caps
bound every search).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.machine import hardware, peak_rss_mib
from puzzlezero.registry import make
from puzzlezero.solver import solve_many

__all__ = ["SEED", "SETTINGS", "WHOLE", "random_cubes", "layered_table1", "markdown"]

#: the (lambda, B) pairs of the paper's table
SETTINGS: tuple[tuple[float, int], ...] = ((0.2, 100), (0.6, 1000))

#: the label that marks a whole-cube (not layered) row
WHOLE = "DeepCubeA"

#: the paper's Table 1: (model, lambda, B) -> (solving rate %, seconds, nodes, length); 100 random
#: cubes, networks trained 14k iterations of 1000 states (about 8 h each on the authors' GPU)
SEED: dict[tuple[str, float, int], tuple[float, float, int, float]] = {
    ("DeepCubeA Original", 0.2, 100): (100, 2.37, 60684, 27),
    ("DeepCubeA Baseline", 0.2, 100): (100, 2.76, 70104, 30),
    ("SingleH", 0.2, 100): (100, 4.48, 115757, 45),
    ("MultiH Baseline", 0.2, 100): (77, 9.9, 243184, 40),
    ("MultiH 3+2", 0.2, 100): (94, 8.37, 179773, 41),
    ("MultiH 4+1", 0.2, 100): (96, 6.01, 137364, 41),
    ("MultiH 4+2", 0.2, 100): (97, 7.01, 142991, 43),
    ("DeepCubeA Original", 0.6, 1000): (19, 44.74, 1046799, 20),
    ("DeepCubeA Baseline", 0.6, 1000): (20, 39.68, 950136, 22),
    ("SingleH", 0.6, 1000): (32, 25.43, 623911, 35),
    ("MultiH Baseline", 0.6, 1000): (17, 18.87, 476319, 29),
    ("MultiH 3+2", 0.6, 1000): (19, 27.35, 624181, 30),
    ("MultiH 4+1", 0.6, 1000): (27, 29.24, 680558, 32),
    ("MultiH 4+2", 0.6, 1000): (23, 31.49, 658680, 33),
}


def random_cubes(n: int, depth: int = 100, seed: int = 0) -> np.ndarray:
    """``n`` cube3 states, each ``depth`` uniformly random quarter turns from the solved cube."""
    if n < 1 or depth < 1:
        raise PuzzleError(f"need n >= 1 and depth >= 1, got n={n}, depth={depth}")
    return make("cube3").scramble(np.random.default_rng(seed), n, depth)


def _row(
    label: str, model: str, search: str, weight: float, batch: int, results: Sequence[Any]
) -> dict[str, Any]:
    solved = [r for r in results if r.solved]

    def mean(xs: Sequence[float]) -> float | None:
        return round(float(np.mean(xs)), 4) if xs else None

    row: dict[str, Any] = {
        "model": label,
        "spec": model,
        "search": search,
        "lambda": weight,
        "B": batch,
        "n": len(results),
        "solved": len(solved),
        "solved_pct": round(100.0 * len(solved) / len(results), 2),
        "mean_seconds": mean([r.seconds for r in solved]),
        "mean_nodes": mean([r.nodes_generated for r in solved]),
        "mean_length": mean([r.length for r in solved]),
        "median_seconds_all": round(float(np.median([r.seconds for r in results])), 4),
        "statuses": {s: sum(r.status == s for r in results) for s in sorted({r.status for r in results})},
    }
    if solved and solved[0].stages:
        goals = [st["goal"] for st in solved[0].stages]
        row["stage_mean_lengths"] = {
            g: mean([st["length"] for r in solved for st in r.stages if st["goal"] == g]) for g in goals
        }
    return row


def _per_cube(progress: Callable[[dict], Any], label: str, weight: float, batch: int) -> Callable:
    """``solve_many``'s ``on_results``: one progress line per solved or failed cube."""

    def report(results: Sequence[Any]) -> None:
        for r in results:
            progress({"model": label, "lambda": weight, "B": batch, "solved": r.solved, "length": r.length,
                      "nodes": r.nodes_generated, "seconds": round(r.seconds, 2)})  # fmt: skip

    return report


def layered_table1(
    rows: Sequence[tuple[str, str]],
    *,
    states: np.ndarray | None = None,
    n: int = 100,
    depth: int = 100,
    seed: int = 0,
    settings: Sequence[tuple[float, int]] = SETTINGS,
    layer_nodes: int = 600_000,
    whole_nodes: int = 1_800_000,
    time_limit: float = 600.0,
    progress: Callable[[dict], Any] | None = None,
    add_to: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The table (JSON-ready). ``rows``: ``(label, model)`` pairs; a label starting with
    ``"DeepCubeA"`` is a whole-cube BWAS row with a solved model, any other a layered row whose
    model is what ``solve --search layered --model`` takes (a multi-head model, a folder of one
    model per goal, or ``layer1=M,layer2=M,solved=M``). ``states`` (else ``n`` random cubes of
    ``depth`` moves from ``seed``) are solved by every row at every setting. ``add_to``: an earlier
    report of the same cubes and limits whose rows are kept (a row of the same label and setting is
    replaced), so that rows can be run one at a time."""
    if not rows:
        raise PuzzleError("no rows: give at least one LABEL=MODEL")
    p = make("cube3")
    cubes = random_cubes(n, depth, seed) if states is None else np.asarray(states)
    fixed = {
        "n": int(cubes.shape[0]),
        "depth": depth if states is None else None,
        "seed": seed if states is None else None,
        "cubes_sha256": hashlib.sha256(np.ascontiguousarray(cubes).tobytes()).hexdigest(),
        "layer_nodes": layer_nodes,
        "whole_nodes": whole_nodes,
        "time_limit": time_limit,
    }
    out: list[dict[str, Any]] = []
    shown = [tuple(x) for x in settings]  # the report's settings: these and an earlier report's
    if add_to is not None:
        earlier = add_to.get("settings", {})
        differ = sorted(k for k, v in fixed.items() if earlier.get(k) != v)
        if differ:
            raise PuzzleError(
                f"the earlier report was made with other {', '.join(differ)}; "
                "rows can only be added on the same cubes and limits"
            )
        redo = {(label, w, b) for label, _ in rows for w, b in settings}
        out = [r for r in add_to["rows"] if (r["model"], r["lambda"], r["B"]) not in redo]
        shown = [*[tuple(x) for x in earlier["settings"] if tuple(x) not in shown], *shown]
    for weight, batch in settings:
        for label, model in rows:
            whole = label.startswith(WHOLE)
            search = "bwas" if whole else "layered"
            results = solve_many(
                p,
                cubes,
                model=model,
                search=search,
                weight=weight,
                batch=batch,
                max_nodes=whole_nodes if whole else layer_nodes,
                time_limit=time_limit,
                fallback=False,
                on_results=None if progress is None else _per_cube(progress, label, weight, batch),
            )
            row = _row(label, model, search, weight, batch, results)
            out.append(row)
            if progress is not None:
                progress(row)
    return {
        "settings": {**fixed, "settings": [list(x) for x in shown]},
        "hardware": hardware(),
        "peak_rss_mib": peak_rss_mib(),
        "rows": out,
    }


def _seed_key(label: str, weight: float, batch: int) -> tuple[str, float, int]:
    """The paper's row a label compares with: ``DeepCubeA ...`` rows with its DeepCubeA Baseline
    (trained by the paper's authors for as long as their other models), others by name."""
    name = "DeepCubeA Baseline" if label.startswith(WHOLE) else label
    return name, weight, batch


def _num(x: float | None, fmt: str) -> str:
    """A mean for the table, ``-`` where no cube was solved."""
    return "-" if x is None else format(x, fmt)


def markdown(report: dict[str, Any]) -> str:
    """Our rows beside the paper's, one table per (lambda, B)."""
    s = report["settings"]
    where = (
        f"{s['n']} random cubes ({s['depth']} random quarter turns each, seed {s['seed']})"
        if s["depth"] is not None
        else f"{s['n']} cubes from a cases file"
    )
    lines = [
        f"{where}; at most {s['layer_nodes']:,} nodes generated per layer search and {s['whole_nodes']:,} "
        f"for the whole-cube row, {s['time_limit']:g} s per cube at most; every solution replayed, each "
        f"stage against its goal; no fallback. {report['hardware']}.",
        "",
        "Solving rate over all cubes; seconds, nodes and length are means over the solved ones (quarter "
        "turns). Seed: 100 random cubes, its own GPU machine.",
    ]
    for weight, batch in s["settings"]:
        lines += [
            "",
            f"**(λ, B) = ({weight:g}, {batch})**",
            "",
            "| model | solved | seconds | nodes | length | layer1 + layer2 + solved | "
            "paper: solved | paper: seconds | paper: nodes | paper: length |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in report["rows"]:
            if (r["lambda"], r["B"]) != (weight, batch):
                continue
            seed = SEED.get(_seed_key(r["model"], weight, batch))
            seed_cols = f"{seed[0]:g}% | {seed[1]:g} | {seed[2]:,} | {seed[3]:g}" if seed else "- | - | - | -"
            stages = r.get("stage_mean_lengths")
            split = " + ".join(f"{v:.1f}" for v in stages.values()) if stages else "-"
            lines.append(
                f"| {r['model']} | {r['solved']}/{r['n']} ({r['solved_pct']:g}%) | "
                f"{_num(r['mean_seconds'], '.2f')} | {_num(r['mean_nodes'], ',.0f')} | "
                f"{_num(r['mean_length'], '.1f')} | {split} | {seed_cols} |"
            )
    return "\n".join(lines) + "\n"
