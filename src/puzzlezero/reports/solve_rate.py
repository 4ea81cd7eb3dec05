"""Solve rate by scramble depth (the plot of J. Rute, "Solving the puzzle cube with deep
reinforcement learning and tree search"): policy-greedy and MCTS at a fixed budget, for networks
trained by ADI (A. Agarwal, "Solving Rubik's cube using Reinforcement Learning"), by AlphaZero-style
self-play (Rute) and, for reference, by DAVI (the shipped ``cube3``).

    puzzlezero report solve-rate --out docs/bench/solve_rate_by_depth

For every depth (1-20), ``cubes`` (100) cubes are scrambled that many random moves (a
non-backtracking walk from the goal, :meth:`~puzzlezero.puzzles.base.Puzzle.random_walks`; repeats
allowed: depth 1 has 12 states; the cubes of a depth depend only on the seed and the depth, so every
network, including one added later with ``--add-to``, gets the same ones) and solved two ways:

* **policy-greedy**: play the network's favourite move (its policy head; for a value network such
  as ``cube3``, the child of least ``1 + J``: one step of look-ahead) until the cube is solved or
  ``greedy_moves`` (30) moves are played. No search: one network call per move.
* **MCTS** (``--search mcts``, :mod:`puzzlezero.search.mcts`: Agarwal's PUCT with the policy as
  prior and the value at the leaves; the solver's defaults c = 2, 32 leaves per iteration, virtual
  loss 1) with a fixed budget of ``mcts_nodes`` generated nodes per cube (100,000: about 8,300
  expansions), all cubes of one depth searched in one batched call.

Every MCTS solution is verified by replay. Seconds are the batched call's wall time divided by
the number of cubes (amortised over the shared network calls).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.machine import hardware
from puzzlezero.nn import load_model, make_policy, make_policy_value
from puzzlezero.plots import pyplot, save_figure
from puzzlezero.registry import make
from puzzlezero.search.mcts import mcts
from puzzlezero.solver import verify

__all__ = ["MODELS", "solve_rate_by_depth", "markdown", "plot"]

#: the networks compared by default: ADI, self-play, and DAVI for reference
MODELS = ("cube3-adi", "cube3-selfplay", "cube3")


def starts(puzzle, rng: np.random.Generator, n: int, depth: int) -> np.ndarray:  # noqa: ANN001
    """``n`` non-goal states of ``depth`` non-backtracking random moves each."""
    out = np.empty((0, *puzzle.state_shape), puzzle.dtype)
    while len(out) < n:
        batch = puzzle.random_walks(rng, n - len(out), depth)
        out = np.concatenate([out, batch[~puzzle.is_goal(batch)]])
    return out


def policy_greedy(puzzle, policy, starts: np.ndarray, moves: int) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """``(solved bool[B], length int[B])`` of always playing the favourite move."""
    cur, length = starts.copy(), np.zeros(len(starts), np.int64)
    for _ in range(moves):
        live = ~puzzle.is_goal(cur)
        if not live.any():
            break
        cur[live] = puzzle.apply(cur[live], policy(cur[live]).argmax(axis=1))
        length[live] += 1
    return puzzle.is_goal(cur), length


def searchers(puzzle, model) -> tuple[Callable, Callable]:  # noqa: ANN001
    """``(policy, policy_value)`` of a network: its favourite move for the greedy run (for a value
    network, one step of look-ahead on the value head) and the policy-value function MCTS calls."""
    if model.policy is not None:
        policy = make_policy(puzzle, model, source="policy")
    else:
        lookahead = make_policy_value(puzzle, model, source="value")
        policy = lambda states: lookahead(states)[1]  # noqa: E731
    return policy, make_policy_value(puzzle, model)


def measure(puzzle, policy, policy_value, starts: np.ndarray, greedy_moves: int, mcts_nodes: int) -> dict:  # noqa: ANN001
    solved, length = policy_greedy(puzzle, policy, starts, greedy_moves)
    t = time.perf_counter()
    results = mcts(puzzle, starts, policy_value, max_nodes=mcts_nodes)
    seconds = (time.perf_counter() - t) / len(starts)
    ok = np.array([r.solved for r in results])
    solutions = [r.actions for r in results]
    if not verify(puzzle, starts[ok], [s for s, k in zip(solutions, ok, strict=True) if k]).all():
        raise PuzzleError("an MCTS solution did not replay to the goal")
    lengths = [len(s) for s, k in zip(solutions, ok, strict=True) if k]
    return {
        "greedy_solved": float(solved.mean()),
        "greedy_length": float(length[solved].mean()) if solved.any() else None,
        "mcts_solved": float(ok.mean()),
        "mcts_length": float(np.mean(lengths)) if lengths else None,
        "mcts_nodes": float(np.mean([r.nodes_generated for r in results])),
        "mcts_seconds": seconds,
    }


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def markdown(report: dict) -> str:
    names = report["models"]
    head = "| depth | " + " | ".join(f"{m} greedy | {m} MCTS" for m in names) + " |"
    lines = [head, "|" + "---|" * (1 + 2 * len(names))]
    for d in report["depths"]:
        cells = []
        for m in names:
            r = report["rows"][m][str(d)]
            cells += [pct(r["greedy_solved"]), f"{pct(r['mcts_solved'])} ({r['mcts_seconds']:.2f} s)"]
        lines.append(f"| {d} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(report: dict, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    depths = report["depths"]
    for i, m in enumerate(report["models"]):
        rows = [report["rows"][m][str(d)] for d in depths]
        colour = f"C{i}"
        ax.plot(depths, [100 * r["mcts_solved"] for r in rows], "-o", color=colour, ms=3, label=f"{m}: MCTS")
        ax.plot(depths, [100 * r["greedy_solved"] for r in rows], "--", color=colour, label=f"{m}: policy")
    ax.set_xlabel("scramble depth (random moves)")
    ax.set_ylabel(f"solved (% of {report['cubes']} cubes)")
    ax.set_title(f"{report['puzzle']}: solve rate by depth (MCTS {report['mcts_nodes']:,} nodes per cube)")
    ax.set_xticks(depths)
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)


def solve_rate_by_depth(
    models: Sequence[str],
    depths: Sequence[int],
    *,
    cubes: int = 100,
    greedy_moves: int = 30,
    mcts_nodes: int = 100_000,
    seed: int = 0,
    progress: Callable[[str], Any] | None = None,
    add_to: dict | None = None,
) -> dict:
    """The report as a JSON-ready dict: per model and depth the greedy and MCTS solve rates,
    lengths, nodes and seconds. The cubes of depth ``d`` depend only on ``(seed, d)``, so a model
    measured later sees the same ones: ``add_to`` (an earlier report of the same puzzle, depths,
    cubes, budgets and seed) keeps that report's models and adds these."""
    if not models or not depths or min(depths) < 1 or min(cubes, greedy_moves, mcts_nodes) < 1:
        raise PuzzleError("need models, depths >= 1, and cubes, greedy moves and MCTS nodes >= 1")
    nets = {m: load_model(m) for m in models}
    puzzles = {nets[m].puzzle for m in models}
    if len(puzzles) != 1:
        raise PuzzleError(f"the models are for different puzzles ({', '.join(sorted(puzzles))})")
    puzzle = make(puzzles.pop())
    cases = {d: starts(puzzle, np.random.default_rng([seed, d]), cubes, d) for d in depths}
    report: dict[str, Any] = {
        "puzzle": puzzle.name,
        "models": list(models),
        "depths": list(depths),
        "cubes": cubes,
        "greedy_moves": greedy_moves,
        "mcts_nodes": mcts_nodes,
        "seed": seed,
        "hardware": hardware(),
        "cards": {
            m: {k: nets[m].card.get(k) for k in ("algorithm", "samples_seen_total", "wall_seconds_total")}
            for m in models
        },
        "rows": {m: {} for m in models},
    }
    if add_to is not None:
        report = _merged(add_to, report)
    fns = {m: searchers(puzzle, nets[m]) for m in models}
    for d in depths:
        for m in models:
            r = measure(puzzle, *fns[m], cases[d], greedy_moves, mcts_nodes)
            report["rows"][m][str(d)] = r
            if progress is not None:
                progress(
                    f"depth {d:2d}  {m:16s} greedy {pct(r['greedy_solved']):>4s}   MCTS "
                    f"{pct(r['mcts_solved']):>4s}  {r['mcts_nodes']:9,.0f} nodes  {r['mcts_seconds']:.2f} s/cube"
                )
    return report


def _merged(old: dict, new: dict) -> dict:
    """``new`` (no rows yet) with ``old``'s models first; the settings must agree."""
    keys = ("puzzle", "depths", "cubes", "greedy_moves", "mcts_nodes", "seed")
    differ = [k for k in keys if old.get(k) != new[k]]
    if differ:
        raise PuzzleError(
            "the earlier report was made with other settings ("
            + ", ".join(f"{k}: {old.get(k)!r} there, {new[k]!r} here" for k in differ)
            + ")"
        )
    again = [m for m in new["models"] if m in old.get("models", [])]
    if again:
        raise PuzzleError(f"already in the earlier report: {', '.join(again)}")
    hw = old.get("hardware")
    return {
        **new,
        "models": [*old["models"], *new["models"]],
        "hardware": new["hardware"] if hw in (None, new["hardware"]) else f"{hw}; then {new['hardware']}",
        "cards": {**old["cards"], **new["cards"]},
        "rows": {**old["rows"], **new["rows"]},
    }
