"""Yao and Lee's Table 1 (2024): A* (lambda = 1, one node per iteration) on distinct random
cube3 scrambles of 5-12 moves with the plain value heuristic against 1- and 2-level weighted
convolutional distance (``--heuristic wcd``), printed beside the paper's figures and written to
``OUT.md`` and ``OUT.json``.

    puzzlezero report wcd --n 200 --out docs/bench/wcd_table1

(the paper's 200 scrambles; ``--n 60`` takes a few minutes of one core for depths 0-1 and about as
long again for depth 2). Every solution is verified by replay. The heuristics are the solver's own
(``get_heuristic``: int8 inference of the shipped model; WCD's policy is ``softmax(-Q / T)`` of its
Q head). All scrambles of one heuristic are searched in one batched loop (``together``): node
counts are each instance's own, and the time column is the loop's wall time divided by the
number of scrambles (amortised; the paper's times are per solve). "Searched" nodes are the
expanded ones (the paper's A* closes one node per step); generated nodes are ``1 + 12 *
expanded``. The last rows repeat the means on the scrambles of 8-12 moves (the claim checked: WCD
depth 1 searches fewer nodes than the plain heuristic there).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.machine import hardware
from puzzlezero.registry import make
from puzzlezero.search import bwas
from puzzlezero.solver import OPTIONS, get_heuristic, verify

__all__ = ["SEED", "random_moves", "distinct_scrambles", "wcd_table1", "markdown"]

#: the paper's Table 1: length, seconds, searched nodes (200 scrambles of 5-12 moves, its hardware)
SEED = {0: (6.875, 11.467, 2938.885), 1: (6.525, 51.757, 1097.345), 2: (6.455, 326.613, 535.000)}


def random_moves(puzzle, rng: np.random.Generator, depth: int) -> list[int]:  # noqa: ANN001
    """``depth`` random moves, none followed by its inverse."""
    inverse = puzzle.inverse_action
    seq: list[int] = []
    while len(seq) < depth:
        a = int(rng.integers(puzzle.num_actions))
        if seq and inverse[seq[-1]] == a:
            continue
        seq.append(a)
    return seq


def distinct_scrambles(puzzle, rng: np.random.Generator, n: int, lo: int, hi: int):  # noqa: ANN001, ANN201
    """``n`` distinct non-goal states of ``lo``-``hi`` random moves, and their depths."""
    states: list[np.ndarray] = []
    depths: list[int] = []
    seen: set[bytes] = set()
    while len(states) < n:
        depth = int(rng.integers(lo, hi + 1))
        state = puzzle.apply_moves(puzzle.goal(), random_moves(puzzle, rng, depth))
        key = state.tobytes()
        if key in seen or puzzle.is_goal(state[None])[0]:
            continue
        seen.add(key)
        states.append(state)
        depths.append(depth)
    return np.stack(states), np.array(depths)


def wcd_table1(
    *,
    n: int = 200,
    seed: int = 0,
    min_depth: int = 5,
    max_depth: int = 12,
    levels: Sequence[int] = (0, 1, 2),
    mu: float | None = None,
    temperature: float | None = None,
    max_nodes: int = 1_000_000,
    time_limit: float = 3600.0,
    together: int | None = None,
    progress: Callable[[dict], Any] | None = None,
) -> dict:
    """The table's rows (JSON-ready): one per WCD level (0: the plain value heuristic)."""
    if n < 1 or not 1 <= min_depth <= max_depth or min(levels, default=-1) < 0:
        raise PuzzleError("need n >= 1, 1 <= min_depth <= max_depth and levels >= 0")
    mu = OPTIONS["wcd_mu"].default if mu is None else mu
    temperature = OPTIONS["policy_temperature"].default if temperature is None else temperature
    p = make("cube3")
    states, depths = distinct_scrambles(p, np.random.default_rng(seed), n, min_depth, max_depth)
    together = together or n
    warm = get_heuristic(p, "learned")
    bwas(
        p, states[:1], warm, weight=1.0, batch_size=1, max_nodes=1 + 2 * p.num_actions
    )  # numba kernels loaded
    mid = depths >= 8
    rows = []
    for level in levels:
        if level == 0:
            h = get_heuristic(p, "learned")
            name = "plain value (learned)"
        else:
            opts = (("policy_temperature", temperature), ("wcd_depth", level), ("wcd_mu", mu))
            h = get_heuristic(p, "wcd", None, "value", opts)
            name = f"{level}-level WCD (mu {mu:g})"
        h(states[:2])  # load the network before timing
        results, t0 = [], time.perf_counter()
        for lo in range(0, n, together):
            results += bwas(p, states[lo : lo + together], h, weight=1.0, batch_size=1,
                            max_nodes=max_nodes, time_limit=time_limit)  # fmt: skip
        wall = time.perf_counter() - t0
        ok = verify(p, states, [r.actions for r in results]) & np.array([r.solved for r in results])
        gen = np.array([r.nodes_generated for r in results], dtype=np.float64)
        expanded = (gen - 1) / p.num_actions
        lengths = np.array([r.length if r.solved else np.nan for r in results], dtype=np.float64)
        row = {
            "level": level,
            "heuristic": name,
            "solved": int(ok.sum()),
            "n": n,
            "mean_length": float(np.nanmean(lengths)),
            "seconds_per_scramble": wall / n,
            "mean_expanded": float(expanded.mean()),
            "mean_generated": float(gen.mean()),
            "median_expanded": float(np.median(expanded)),
            "n_8_12": int(mid.sum()),
            "mean_length_8_12": float(np.nanmean(lengths[mid])) if mid.any() else None,
            "mean_expanded_8_12": float(expanded[mid].mean()) if mid.any() else None,
            "mean_generated_8_12": float(gen[mid].mean()) if mid.any() else None,
            "statuses": sorted({r.status for r in results}),
            "wall_seconds": round(wall, 1),
        }
        rows.append(row)
        if progress is not None:
            progress(row)
    settings = {
        "n": n, "seed": seed, "min_depth": min_depth, "max_depth": max_depth, "levels": list(levels),
        "mu": mu, "temperature": temperature, "max_nodes": max_nodes, "time_limit": time_limit,
        "together": together,
    }  # fmt: skip
    return {"settings": settings, "hardware": hardware(), "rows": rows}


def markdown(report: dict) -> str:
    """The table beside the paper's figures, and the means on the scrambles of 8-12 moves."""
    s, rows = report["settings"], report["rows"]
    lines = [
        f"A* (lambda 1, batch 1) on {s['n']} distinct random cube3 scrambles of {s['min_depth']}-"
        f"{s['max_depth']} moves (seed {s['seed']}), shipped cube3 model (int8), WCD policy softmax(-Q / "
        f"{s['temperature']:g}) of its Q head; {report['hardware']}.",
        "",
        "| heuristic | solved | length | s / scramble | expanded (searched) | generated | paper: length | paper: s "
        "| paper: searched |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s_len, s_sec, s_nodes = SEED.get(r["level"], (None, None, None))
        seed_cols = f"{s_len} | {s_sec} | {s_nodes}" if s_len is not None else "- | - | -"
        lines.append(
            f"| {r['heuristic']} | {r['solved']}/{r['n']} | {r['mean_length']:.3f} | "
            f"{r['seconds_per_scramble']:.3f} | {r['mean_expanded']:.1f} | {r['mean_generated']:.1f} | {seed_cols} |"
        )
    mid = rows[0]["n_8_12"] if rows else 0
    lines += ["", f"On the {mid} scrambles of 8-12 moves:", ""]
    lines += ["| heuristic | length | expanded | generated |", "|---|---|---|---|"]
    for r in rows:
        if r["n_8_12"]:
            lines.append(
                f"| {r['heuristic']} | {r['mean_length_8_12']:.3f} | {r['mean_expanded_8_12']:.1f} | "
                f"{r['mean_generated_8_12']:.1f} |"
            )
    return "\n".join(lines) + "\n"
