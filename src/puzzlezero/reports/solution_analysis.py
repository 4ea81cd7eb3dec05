"""Analyses of solutions and heuristics, as the papers report them (Dong et al. §5;
DeepCubeA).

* :func:`move_patterns`: the most common 3- and 4-move subsequences of a set of solutions and
  which of them are **conjugates** ``a b a⁻¹`` (3 moves) or **commutators** ``a b a⁻¹ b⁻¹``
  (4 moves), and the share of all 3-move windows that are conjugates (DeepCubeA: 13.11% of the
  triplets in its cube solutions). ``a⁻¹`` is ``puzzle.inverse_action[a]``; ``b`` must be another
  move than ``a`` and ``a⁻¹`` (``R R R'`` is no conjugate, it is ``R``).
* :func:`overestimate_share`: on states of known optimal cost, the share where a heuristic does
  not overestimate it, ``h(s) <= C*(s)`` (DeepCubeA: 66.8% of its cube test states).

Solutions are lists of action ids (any solver's: read them with :func:`read_solutions` from a
``bench --json`` report, a ``solve --json`` answer, a JSON list, or a text file of one solution per
line). Subsequences are windows of consecutive moves within one solution.

>>> from puzzlezero import make
>>> cube = make("cube3")
>>> sols = [cube.parse_moves(t) for t in ("R U R' U'", "F R F'", "R R F")]
>>> m = move_patterns(cube, sols, top=3)
>>> m["conjugate_triplets_pct"], m["commutator_quadruplets_pct"], m["windows"]["3"]["top"][0]["moves"]
(75.0, 100.0, "R U R'")
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle

__all__ = [
    "is_commutator",
    "is_conjugate",
    "move_patterns",
    "overestimate_share",
    "read_solutions",
    "windows",
]


def is_conjugate(puzzle: Puzzle, moves: Sequence[int]) -> bool:
    """``a b a⁻¹`` with ``b`` neither ``a`` nor ``a⁻¹``; four moves ``a b b a⁻¹`` are the conjugate
    of ``b`` twice (a cube's half turn written as two quarter turns: ``D B' B' D'``)."""
    if len(moves) not in (3, 4):
        return False
    a, *mid, c = (int(x) for x in moves)
    inv = [int(x) for x in puzzle.inverse_action]
    b = mid[0]
    return inv[a] >= 0 and c == inv[a] and b not in (a, inv[a]) and all(m == b for m in mid)


def is_commutator(puzzle: Puzzle, moves: Sequence[int]) -> bool:
    """``a b a⁻¹ b⁻¹`` with ``b`` neither ``a`` nor ``a⁻¹``."""
    if len(moves) != 4:
        return False
    a, b, c, d = (int(x) for x in moves)
    inv = [int(x) for x in puzzle.inverse_action]
    return inv[a] >= 0 and inv[b] >= 0 and c == inv[a] and d == inv[b] and b not in (a, inv[a])


def windows(solutions: Sequence[Sequence[int]], k: int) -> Counter[tuple[int, ...]]:
    """How often each run of ``k`` consecutive moves occurs, over all solutions."""
    counts: Counter[tuple[int, ...]] = Counter()
    for sol in solutions:
        seq = tuple(int(a) for a in sol)
        counts.update(seq[i : i + k] for i in range(len(seq) - k + 1))
    return counts


def move_patterns(puzzle: Puzzle, solutions: Sequence[Sequence[int]], *, top: int = 10) -> dict[str, Any]:
    """The subsequence figures of ``solutions`` (action ids): ``{"solutions", "moves",
    "conjugate_triplets_pct", "commutator_quadruplets_pct", "windows": {"3": {...}, "4": {...}}}``
    where each window entry holds ``total`` (windows counted), ``distinct``, ``top`` (the ``top``
    most common, most frequent first, ties in order of first appearance: ``{"moves", "count",
    "pct", "conjugate"}`` and for 4 moves ``"commutator"`` too) and ``conjugates_in_top`` (and
    ``commutators_in_top``). The percentages of all windows: ``conjugate_triplets_pct`` (``a b
    a⁻¹``) and ``commutator_quadruplets_pct`` (``a b a⁻¹ b⁻¹``)."""
    if top < 1:
        raise PuzzleError(f"top must be >= 1, got {top}")
    out: dict[str, Any] = {
        "solutions": len(solutions),
        "moves": int(sum(len(s) for s in solutions)),
        "windows": {},
    }
    for k, kind, test in ((3, "conjugate", is_conjugate), (4, "commutator", is_commutator)):
        counts = windows(solutions, k)
        total = sum(counts.values())
        rows: list[dict[str, Any]] = [
            {
                "moves": " ".join(puzzle.format_moves(seq)),
                "count": n,
                "pct": round(100.0 * n / total, 2),
                kind: test(puzzle, seq),
            }
            | ({} if k == 3 else {"conjugate": is_conjugate(puzzle, seq)})
            for seq, n in counts.most_common(top)
        ]
        out["windows"][str(k)] = {
            "total": total,
            "distinct": len(counts),
            "top": rows,
            f"{kind}s_in_top": sum(r[kind] for r in rows),
        } | ({} if k == 3 else {"conjugates_in_top": sum(r["conjugate"] for r in rows)})
        matching = sum(n for seq, n in counts.items() if test(puzzle, seq))
        share = round(100.0 * matching / total, 2) if total else None
        out["conjugate_triplets_pct" if k == 3 else "commutator_quadruplets_pct"] = share
    return out


def overestimate_share(
    heuristic: Callable[[np.ndarray], np.ndarray], states: np.ndarray, optimal: Sequence[float]
) -> dict[str, Any]:
    """On ``states[B]`` with optimal costs ``optimal[B]``: ``{"states", "not_overestimating_pct"
    (h <= C*, DeepCubeA's 66.8%), "mean_error" (mean h - C*), "max_overestimate"}`` (``h`` may
    exceed ``C*`` by float rounding only when ``h - C* <= 1e-4``, counted as not overestimating)."""
    cost = np.asarray(optimal, dtype=np.float64).reshape(-1)
    if states.shape[0] != cost.shape[0]:
        raise PuzzleError(f"{states.shape[0]} states but {cost.shape[0]} optimal costs")
    if cost.size == 0:
        raise PuzzleError("no states with a known optimal cost to compare the heuristic with")
    h = np.asarray(heuristic(states), dtype=np.float64).reshape(-1)
    err = h - cost
    return {
        "states": int(cost.size),
        "not_overestimating_pct": round(100.0 * float(np.mean(err <= 1e-4)), 2),
        "mean_error": round(float(err.mean()), 4),
        "max_overestimate": round(float(max(err.max(), 0.0)), 4),
    }


def read_solutions(puzzle: Puzzle, path: str | os.PathLike[str]) -> list[list[int]]:
    """The solved solutions in a file, as action ids: a ``bench --json`` report (its solved
    ``results``), a ``solve --json`` answer, a JSON list of solutions (each a list of move names or
    one string), or text with one solution per line (``#`` starts a comment). Moves are read with
    ``puzzle.parse_moves`` (cubes: ``R2`` is two quarter turns). Raises :class:`PuzzleError` naming
    the file and the unreadable entry."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PuzzleError(f"cannot read solutions file {path}: {exc.strerror or exc}") from None
    entries: list[Any]
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON: one solution per line
        data = None
        entries = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
        entries = [e for e in entries if e]
    if data is not None:
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            entries = [r.get("solution") for r in data["results"] if isinstance(r, dict) and r.get("solved")]
        elif isinstance(data, dict) and "solution" in data:
            entries = [data["solution"]] if data.get("solved", True) else []
        elif isinstance(data, list):
            entries = data
        else:
            raise PuzzleError(
                f"{path}: expected a bench report, a solve answer, a list of solutions or one per line"
            )
    out = []
    for i, entry in enumerate(entries):
        if entry is None:
            continue
        if not isinstance(entry, str | list):
            raise PuzzleError(f"{path}: solution {i + 1} is neither move names nor a string: {entry!r}")
        try:
            out.append(puzzle.parse_moves(entry))
        except PuzzleError as exc:
            raise PuzzleError(f"{path}: solution {i + 1}: {exc}") from None
    if not out:
        raise PuzzleError(f"{path}: no solutions found")
    return out
