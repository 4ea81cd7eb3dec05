"""Training states on the paths of solutions already found (``TrainConfig.solution_paths``).

Bootstrap learning (Jabbari Arfaee, Zilles and Holte, "Learning heuristic functions for large
state spaces", Artificial Intelligence 2011) trains a heuristic on the states of the solutions its
searches found, each labelled with the cost of the rest of its solution. The states scrambled back
from the goal do not reach everywhere: Sokoban's reverse play, however long, leaves the boxes a few
pushes from their targets, where Boxoban's levels need 50 to 170 steps, and a network trained on
those states alone values a level of 114 steps at about 49. A solution replayed from its level
gives states at every distance up to the level's own, with a known path each.

A solution's rest is a path to the goal, so its cost bounds the state's cost-to-go from above (by
the solution's excess over optimal: +1.3 steps on average on Boxoban's hard levels). A
``path_share`` of every chunk's training rows is drawn from these states, labelled with that cost;
the rest are the objective's own.

:func:`path_states` replays solutions; :func:`paths_from_reports` replays the solved cases of
``bench`` reports; :func:`write_solution_paths` and :func:`read_solution_paths` keep them in an
``.npz`` file (``puzzle``, ``states``, ``costs``), which ``puzzlezero solution-paths`` writes from
``bench`` reports. :func:`with_path_states` adds the rows to a chunk.
"""

from __future__ import annotations

import functools
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.errors import InvalidStateError, ModelFileError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.storage import atomic_write

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = [
    "ReportPaths",
    "path_states",
    "paths_from_reports",
    "write_solution_paths",
    "read_solution_paths",
    "with_path_states",
]


def path_states(puzzle: Puzzle, start: np.ndarray, actions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The states of a solution from ``start`` (``start`` itself, then each state before the goal)
    and the cost of the rest of the solution from each: ``(states[L, ...], float32[L])``. A
    solution that does not end at the goal is refused (:class:`InvalidStateError`)."""
    state = np.asarray(start, dtype=puzzle.dtype)
    costs = puzzle.action_costs
    states = [state]
    for a in actions:
        state = puzzle.apply(state[None], np.array([a]))[0]
        states.append(state)
    if not puzzle.is_goal(states[-1][None])[0]:
        raise InvalidStateError(
            f"a solution of {len(actions)} moves does not reach the goal of {puzzle.name}"
        )
    if not actions:  # the start is the goal: no state before it
        return np.empty((0, *puzzle.state_shape), dtype=puzzle.dtype), np.empty(0, dtype=np.float32)
    steps = np.asarray([costs[a] for a in actions], dtype=np.float64)
    rest = np.cumsum(steps[::-1])[::-1]  # the cost from each state before the goal
    return np.stack(states[:-1]), rest.astype(np.float32)


@dataclass(frozen=True)
class ReportPaths:
    """What one case file and its ``bench`` report gave :func:`paths_from_reports`."""

    cases: str
    report: str
    #: the report's solved cases of the file, whose states were taken
    solutions: int
    #: the file's cases that the report did not solve (left out)
    unsolved: int
    #: the states they gave (each solution's start and every state before the goal)
    states: int


def paths_from_reports(
    puzzle: Puzzle, pairs: Sequence[tuple[str | os.PathLike[str], str | os.PathLike[str]]]
) -> tuple[np.ndarray, np.ndarray, list[ReportPaths]]:
    """``(states, costs, counts)``: for each ``(case file, bench report)`` pair, the states of the
    report's solutions of that file's cases (every solution replayed from its case's state with
    :func:`path_states`: it must reach the goal), each with the cost of the rest of its solution,
    and a :class:`ReportPaths` per pair. A report's cases outside its file are ignored; the file's
    cases the report did not solve are left out and counted. A report of another puzzle, or no
    solved case in all the pairs, is refused (:class:`PuzzleError`)."""
    from puzzlezero.case_files import load_cases

    all_states, all_costs, counts = [], [], []
    for cases_path, report_path in pairs:
        try:
            report = json.loads(Path(report_path).read_text(encoding="utf-8"))
            owner = report.get("summary", {}).get("puzzle")
            results = report.get("results", [])
        except (OSError, ValueError, RecursionError, AttributeError) as exc:
            raise PuzzleError(f"{report_path}: unreadable bench report ({exc})") from None
        if owner not in (None, puzzle.name):
            raise PuzzleError(f"{report_path} is a report of {owner!r}, not {puzzle.name!r}")
        solved = {str(r["id"]): r["solution"] for r in results if r.get("solved")}
        used = unsolved = n_states = 0
        for case in load_cases(puzzle, cases_path):
            solution = solved.get(str(case.id))
            if solution is None:
                unsolved += 1
                continue
            states, costs = path_states(puzzle, case.state, puzzle.parse_moves(solution))
            all_states.append(states)
            all_costs.append(costs)
            used += 1
            n_states += len(states)
        counts.append(ReportPaths(str(cases_path), str(report_path), used, unsolved, n_states))
    if not all_states:
        raise PuzzleError("no solved case in the reports matches the case files")
    return np.concatenate(all_states), np.concatenate(all_costs), counts


def write_solution_paths(
    path: str | os.PathLike[str], puzzle: Puzzle, states: np.ndarray, costs: np.ndarray
) -> Path:
    """Write ``states`` and their ``costs`` (a known path's cost each) for ``puzzle``, atomically."""
    states = np.asarray(states, dtype=puzzle.dtype)
    costs = np.asarray(costs, dtype=np.float32)
    if states.shape[1:] != tuple(puzzle.state_shape) or costs.shape != states.shape[:1]:
        raise PuzzleError(f"solution paths: {states.shape} states with {costs.shape} costs for {puzzle.name}")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, puzzle=np.array(puzzle.name), states=states, costs=costs)
    return atomic_write(path, lambda f: f.write(buffer.getvalue()))


def read_solution_paths(puzzle: Puzzle, path: str | os.PathLike[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(states, costs)`` of a file of :func:`write_solution_paths`, checked against ``puzzle``:
    its name, the states' shape and dtype, every state legal (``puzzle.validate``), every cost
    finite and positive. Read once per process and file."""
    return _read(puzzle.name, str(Path(path).resolve()), puzzle)


@functools.lru_cache(maxsize=4)
def _read(name: str, path: str, puzzle: Puzzle) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            if set(data.files) != {"puzzle", "states", "costs"}:
                raise ModelFileError(
                    f"{path}: a solution paths file holds puzzle, states and costs, not {data.files}"
                )
            owner, states, costs = str(data["puzzle"]), data["states"], data["costs"]
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such solution paths file") from None
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"{path}: unreadable solution paths file ({exc})") from None
    if owner != name:
        raise ModelFileError(f"{path} holds {owner!r} solution paths, not {name!r}")
    if states.dtype != puzzle.dtype or states.shape[1:] != tuple(puzzle.state_shape) or not len(states):
        raise ModelFileError(
            f"{path}: states must be {puzzle.dtype} [N, {', '.join(map(str, puzzle.state_shape))}] with N >= 1, "
            f"got {states.dtype} {list(states.shape)}"
        )
    if costs.shape != (len(states),) or not np.all(np.isfinite(costs)) or not np.all(costs > 0):
        raise ModelFileError(f"{path}: costs must be one finite positive number per state")
    for i, state in enumerate(states):
        try:
            puzzle.validate(state)
        except InvalidStateError as exc:
            raise ModelFileError(f"{path}: state {i}: {exc}") from None
    return states, costs.astype(np.float32)


def with_path_states(
    puzzle: Puzzle, rng: np.random.Generator, states: np.ndarray, targets: np.ndarray, config: TrainConfig
) -> tuple[np.ndarray, np.ndarray]:
    """``states`` and ``targets`` (a chunk's rows from the objective) with rows drawn from
    ``config.solution_paths`` added, so that they make ``config.path_share`` of the chunk, each
    labelled with its path's cost. Unchanged when there is no such file."""
    if config.solution_paths is None or config.path_share == 0:
        return states, targets
    known, costs = read_solution_paths(puzzle, config.solution_paths)
    k = int(round(len(states) * config.path_share / (1 - config.path_share)))
    rows = rng.integers(0, len(known), size=k)
    return np.concatenate([states, known[rows]]), np.concatenate([targets, costs[rows]]).astype(np.float32)
