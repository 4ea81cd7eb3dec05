"""The paper's comparison tables: learned BWAS vs PDB BWAS vs optimal, memory, heuristic speed.

* comparison (DeepCubeA Tables 1, 4, 5): per puzzle and method, solved, mean length, % optimal
  (against the benchmark file's published optimal lengths), mean nodes generated, mean seconds and
  nodes per second, over the first ``cases`` benchmark states; every solution is verified by replay
  (:func:`puzzlezero.solver.solve_many`);
* memory (Table 2): pattern-database bytes vs network parameter bytes;
* speed (Table 3): seconds per state of each heuristic, one state per call and in one batch.

A method that cannot run (no trained model, say) gets a row saying why instead of numbers.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, cast

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.registry import make

__all__ = ["MethodRow", "METHODS", "compare", "memory_rows", "speed_rows", "render_report"]


class _SolveKw(TypedDict, total=False):
    """The :func:`~puzzlezero.solver.solve_many` keyword arguments of a method."""

    search: str
    heuristic: str


#: method name -> (label, solve_many keyword arguments)
METHODS: dict[str, tuple[str, _SolveKw]] = {
    "learned": ("BWAS + learned heuristic", {"search": "bwas", "heuristic": "learned"}),
    "pdb": ("BWAS + PDB heuristic", {"search": "bwas", "heuristic": "pdb"}),
    "optimal": ("optimal solver", {"search": "optimal"}),
}


@dataclass(frozen=True)
class MethodRow:
    """One line of the comparison table; numbers are over the solved cases (``None``: not run)."""

    puzzle: str
    method: str
    cases: int
    solved: int = 0
    mean_length: float | None = None
    pct_optimal: float | None = None
    mean_nodes: float | None = None
    mean_seconds: float | None = None
    nodes_per_second: float | None = None
    note: str = ""


def compare(
    puzzle_name: str,
    cases_file: Path,
    n_cases: int,
    method: str,
    *,
    model: str | None = None,
    time_limit: float | None = None,
    max_nodes: int | None = None,
) -> MethodRow:
    """Run one method on the first ``n_cases`` cases of ``cases_file``."""
    from puzzlezero.case_files import load_cases
    from puzzlezero.solver import solve_many

    label, kwargs = METHODS[method]
    p = make(puzzle_name)
    cases = load_cases(p, cases_file)[:n_cases]
    try:
        results = solve_many(p, np.stack([c.state for c in cases]), model=model, time_limit=time_limit,
                             max_nodes=max_nodes, **kwargs)  # fmt: skip
    except PuzzleError as exc:
        return MethodRow(puzzle_name, label, len(cases), note=f"not run: {_short(exc)}")
    ok = [(r, c) for r, c in zip(results, cases, strict=True) if r.solved]
    if not ok:
        return MethodRow(puzzle_name, label, len(cases), note=f"none solved ({results[0].status})")
    with_opt = [(r, c) for r, c in ok if c.optimal_length is not None]
    nodes = sum(r.nodes_generated for r, _ in ok)
    seconds = sum(r.seconds for r, _ in ok)
    statuses = sorted({r.status for r in results if not r.solved})
    return MethodRow(
        puzzle_name, label, len(cases), len(ok),
        mean_length=statistics.fmean(cast(int, r.length) for r, _ in ok),  # solved: a length
        pct_optimal=100.0 * sum(r.length == c.optimal_length for r, c in with_opt) / len(with_opt) if with_opt else None,
        mean_nodes=nodes / len(ok), mean_seconds=seconds / len(ok),
        nodes_per_second=nodes / seconds if seconds > 0 else None,
        note=f"unsolved: {', '.join(statuses)}" if statuses else "",
    )  # fmt: skip


def _short(exc: BaseException, limit: int = 70) -> str:
    """The first clause of an error message, for a table cell."""
    text = str(exc).splitlines()[0].split(". ")[0].split("; ")[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _model_bytes(puzzle_name: str, model: str | None) -> tuple[int | None, str]:
    try:
        from puzzlezero import nn

        net = nn.load_model(model or puzzle_name)
    except (PuzzleError, ImportError) as exc:
        return None, _short(exc)
    return int(sum(t.numel() * t.element_size() for t in net.state_dict().values())), ""


def memory_rows(puzzles: Sequence[str], model: str | None = None) -> list[tuple[str, str, str, str]]:
    """``(puzzle, PDB description, PDB MB, network MB)`` per puzzle (Table 2)."""
    from puzzlezero.classic.optimal import pdb_heuristic

    rows = []
    for name in puzzles:
        h = pdb_heuristic(make(name))
        net, why = _model_bytes(name, model)
        rows.append((name, getattr(h, "name", "pdb"), f"{getattr(h, 'nbytes', 0) / 1e6:,.1f}",
                     f"{net / 1e6:,.1f}" if net is not None else f"n/a ({why})"))  # fmt: skip
    return rows


def _per_state_seconds(h: Callable[[np.ndarray], np.ndarray], states: np.ndarray) -> tuple[float, float]:
    h(states[:1])  # warm up (numba, torch)
    t0 = time.perf_counter()
    for s in states:
        h(s[None])
    one = (time.perf_counter() - t0) / len(states)
    t0 = time.perf_counter()
    h(states)
    return one, (time.perf_counter() - t0) / len(states)


def speed_rows(
    puzzles: Sequence[str], n_states: int = 1000, model: str | None = None
) -> list[tuple[str, ...]]:
    """``(puzzle, heuristic, s/state one at a time, s/state batched)`` (Table 3), on random
    scrambles of the puzzle's default depth, CPU."""
    from puzzlezero.classic.optimal import pdb_heuristic
    from puzzlezero.solver import get_heuristic

    rows: list[tuple[str, ...]] = []
    for name in puzzles:
        p = make(name)
        states = p.scramble(np.random.default_rng(0), n_states, (1, p.default_scramble_depth))
        one, batch = _per_state_seconds(pdb_heuristic(p), states)
        rows.append((name, "PDB", f"{one:.2e}", f"{batch:.2e}"))
        try:
            net = get_heuristic(p, "learned", model)
        except (PuzzleError, ImportError) as exc:
            rows.append((name, "network", "n/a", f"n/a ({_short(exc)})"))
            continue
        one, batch = _per_state_seconds(net, states)
        rows.append((name, "network", f"{one:.2e}", f"{batch:.2e}"))
    return rows


def _fmt(x: float | None, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def render_report(
    rows: Sequence[MethodRow],
    memory: Sequence[tuple[str, ...]],
    speed: Sequence[tuple[str, ...]],
    header: str,
) -> str:
    """The three tables as Markdown."""
    out = [header, "", "## Solutions (cf. DeepCubeA Tables 1, 4, 5)", "",
           "| puzzle | method | solved | length | % optimal | nodes | seconds | nodes/s | note |",
           "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        out.append(
            f"| {r.puzzle} | {r.method} | {r.solved}/{r.cases} | {_fmt(r.mean_length, '.2f')} | "
            f"{_fmt(r.pct_optimal, '.1f')} | {_fmt(r.mean_nodes, ',.0f')} | {_fmt(r.mean_seconds, '.3f')} | "
            f"{_fmt(r.nodes_per_second, ',.0f')} | {r.note} |"
        )
    if memory:
        out += [
            "",
            "## Memory (cf. Table 2)",
            "",
            "| puzzle | PDB | PDB MB | network MB |",
            "|---|---|---|---|",
        ]
        out += [f"| {' | '.join(m)} |" for m in memory]
    if speed:
        out += ["", "## Heuristic speed, seconds per state (cf. Table 3)", "",
                "| puzzle | heuristic | one state per call | batch of all |", "|---|---|---|---|"]  # fmt: skip
        out += [f"| {' | '.join(s)} |" for s in speed]
    return "\n".join(out) + "\n"
