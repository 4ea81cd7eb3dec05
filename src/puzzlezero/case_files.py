"""Benchmark case files: reading and checking the cases ``puzzlezero bench`` solves.

Case files are JSON: ``{"puzzle": ..., "cases": [{"id": ..., <state>, "optimal_length": ...},
...]}`` where the state is under the puzzle's ``json_key`` (``facelets``, ``tiles``, ``lights``,
``grid``, ``state``) or, for cubes, a ``scramble``. A file without
``"puzzle"`` (or a bare list of cases) holds cases of the puzzle being benched, optimal lengths
included; a file of another puzzle is refused by name. A case file may name its puzzle by a definition
file beside it (``"puzzle": "cube_3-3-3-distinct.json"``): the puzzle benched must be that definition.

Sokoban level files as published by the Boxoban sets (``; N`` header lines, 10 rows per level,
:mod:`puzzlezero.puzzles.sokoban.levels`) are read too: a file (``.txt``, or any file whose first
line is a ``;`` header) or a directory of them (``boxoban-levels/unfiltered/test``); a level's id
is ``"<file>:<number>"`` (``"000:17"``), and ``--ids A:B`` keeps the levels numbered ``A`` to
``B - 1`` of every file.

Shipped case files: ``puzzlezero bench cube3 --cases hard`` reads ``puzzlezero/data/cube3_hard.json``
(superflip, 24 quarter turns from solved, and superflip composed with four-spot, 26): see
:func:`cases_path`.

Permutation puzzles and competition cases: a case of a permutation puzzle (a definition file given
as the puzzle) is its labels under ``state``; it may carry the ``goal`` and ``wildcards`` it is to
be solved to, which must be the definition's own (one definition per goal: a case of another goal
is refused, naming the case), and a ``best_known`` length to compare with (the Santa 2023
competition's best published solutions).

A puzzle with the states of another (``cube3htm``, the cube in the
half-turn metric, :data:`SAME_STATES`) reads that puzzle's case files, shipped ones included,
without their optimal lengths (they count another metric), so ``optimal_pct`` is left out.

"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver import read_state

__all__ = [
    "DATA_DIR",
    "SAME_STATES",
    "Case",
    "case_state",
    "cases_path",
    "load_cases",
    "parse_ids",
    "shipped_cases",
]

#: case files shipped with the package: ``{puzzle}_{name}.json`` is ``--cases name`` for ``puzzle``
DATA_DIR = Path(__file__).resolve().parent / "data"

#: puzzle -> the puzzle whose states (and case files) it shares, in another metric
SAME_STATES: dict[str, str] = {"cube3htm": "cube3"}


@dataclass(frozen=True)
class Case:
    """One benchmark case: its ``id`` (a number; ``"file:number"`` for a level of a level file),
    the state, checked as the case was read (:func:`load_cases`: the solver takes it as it is), the known optimal length and the best known length (if any)."""

    id: int | str
    state: np.ndarray = field(repr=False)
    optimal_length: int | None = None
    #: the shortest solution length known (a competition's best), to compare with
    best_known: int | None = None
    #: positions that may differ from the goal when solved, where the case allows more than the
    #: puzzle (a solution is cut at its first state within them)
    wildcards: int = 0


def parse_ids(text: str | None) -> tuple[int | None, int | None] | None:
    """``"A:B"`` -> ``(A, B)``: cases with ``A <= id < B``; either side may be empty."""
    if text is None:
        return None
    lo, sep, hi = text.partition(":")
    try:
        bounds = (int(lo) if lo.strip() else None, int(hi) if hi.strip() else None)
    except ValueError:
        bounds = None
    if not sep or bounds is None:
        raise PuzzleError(f"--ids must look like A:B (ids A to B-1, either may be left out), got {text!r}")
    return bounds


def shipped_cases(puzzle: Puzzle) -> dict[str, Path]:
    """The case files shipped for ``puzzle`` (or for the puzzle it shares its states with,
    :data:`SAME_STATES`), by short name (cube3: ``{"hard": .../cube3_hard.json}``)."""
    out: dict[str, Path] = {}
    for name in (SAME_STATES.get(puzzle.name), puzzle.name):
        if name is not None:
            prefix = f"{name}_"
            out.update({f.stem[len(prefix) :]: f for f in sorted(DATA_DIR.glob(f"{prefix}*.json"))})
    return out


def cases_path(puzzle: Puzzle, cases: str | os.PathLike[str]) -> Path:
    """``cases`` as a path: an existing file as it is, else the name of a shipped case file
    (:func:`shipped_cases`, e.g. ``hard``), else the path unchanged (:func:`load_cases` then says
    it does not exist)."""
    path = Path(cases)
    if path.exists():
        return path
    return shipped_cases(puzzle).get(str(cases), path)


def case_state(puzzle: Puzzle, case: dict[str, Any]) -> np.ndarray:
    """The state of one case: ``case[puzzle.json_key]`` (text, row strings or numbers) read with
    ``puzzle.parse``, else a ``scramble`` applied to the goal."""
    value = case.get(puzzle.json_key)
    if value is None and "scramble" in case:
        value = case["scramble"]
    if value is None:
        raise InvalidStateError(f"case {case.get('id')!r} has no {puzzle.json_key!r} (or 'scramble') field")
    if isinstance(value, list):
        joiner = "\n" if all(isinstance(v, str) for v in value) else " "
        value = joiner.join(str(v) for v in value)
    if not isinstance(value, str):
        raise InvalidStateError(f"case {case.get('id')!r}: cannot read {puzzle.json_key!r} = {value!r}")
    try:
        return read_state(puzzle, value)
    except InvalidStateError as exc:
        raise InvalidStateError(f"case {case.get('id')!r}: {exc}") from None


def load_cases(
    puzzle: Puzzle, path: str | os.PathLike[str], ids: tuple[int | None, int | None] | None = None
) -> list[Case]:
    """Read and check the cases of a benchmark file, optionally only ids in ``[A, B)``: a JSON case
    file, a Sokoban level file or a directory of level files (see the module docstring)."""
    path = Path(path)
    if path.is_dir():
        return _level_cases(puzzle, path, ids, None)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        names = ", ".join(shipped_cases(puzzle))
        shipped = f" (shipped case files for {puzzle.name}: {names})" if names else ""
        raise PuzzleError(f"{path}: no such cases file{shipped}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PuzzleError(f"{path}: unreadable cases file ({exc})") from None
    from puzzlezero.puzzles.sokoban.levels import looks_like_level_file

    if path.suffix.lower() == ".txt" or looks_like_level_file(text):
        return _level_cases(puzzle, path, ids, text)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # a JSONDecodeError, or a number of 4,300+ digits
        raise PuzzleError(f"{path}: unreadable cases file ({exc})") from None
    raw = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(raw, list) or not all(isinstance(c, dict) for c in raw):
        raise PuzzleError(f"{path}: expected {{'cases': [{{...}}, ...]}} or a list of case objects")
    named = data.get("puzzle") if isinstance(data, dict) else None
    if named is not None and not isinstance(named, str):
        raise PuzzleError(f"{path}: 'puzzle' must be a puzzle name, got {named!r}")
    # a file without "puzzle" holds cases of the puzzle named on the command line, lengths included
    other_metric = named is not None and named == SAME_STATES.get(puzzle.name)
    if named not in (None, puzzle.name) and not other_metric and not _same_definition(puzzle, path, named):
        raise PuzzleError(f"{path} holds {named!r} cases, not {puzzle.name!r}")
    lo, hi = ids if ids is not None else (None, None)
    cases = []
    for pos, c in enumerate(raw):
        cid = _whole_number(c.get("id", pos), f"{path}: case {pos}: 'id'")
        if (lo is None or cid >= lo) and (hi is None or cid < hi):
            opt = None if other_metric else c.get("optimal_length")
            length = None if opt is None else _whole_number(opt, f"{path}: case {cid}: 'optimal_length'")
            _check_goal(puzzle, c, f"{path}: case {cid}")
            best = c.get("best_known")
            best_known = None if best is None else _whole_number(best, f"{path}: case {cid}: 'best_known'")
            if best_known is not None and best_known < 0:
                raise PuzzleError(f"{path}: case {cid}: 'best_known' must be 0 or more, got {best_known}")
            wild = _whole_number(c.get("wildcards", 0), f"{path}: case {cid}: 'wildcards'")
            cases.append(Case(cid, case_state(puzzle, c), length, best_known, wild))
    if not cases:
        raise PuzzleError(f"{path}: no cases{'' if ids is None else f' with ids in {lo}:{hi}'}")
    return cases


def _same_definition(puzzle: Puzzle, path: Path, named: str) -> bool:
    """Does a case file name the puzzle by a definition file beside it (``"puzzle":
    "cube_3-3-3-distinct.json"``) whose definition is ``puzzle``'s own?"""
    from puzzlezero.puzzles.permutation.files import load_definition
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle
    from puzzlezero.registry import looks_like_definition

    if not isinstance(puzzle, PermutationPuzzle) or not looks_like_definition(named):
        return False
    beside = path.parent / named
    if not beside.is_file():
        return False
    return bool(load_definition(beside) == puzzle.definition)


def _check_goal(puzzle: Puzzle, case: dict[str, Any], where: str) -> None:
    """A case's own ``goal`` and ``wildcards``, where it gives them, must be the puzzle's: a
    :class:`PuzzleError` naming the case (``where``) and the first difference otherwise."""
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle

    if "wildcards" in case:
        given = _whole_number(case["wildcards"], f"{where}: 'wildcards'")
        own = int(getattr(puzzle, "wildcards", 0) or 0)
        if given < own:
            raise PuzzleError(
                f"{where}: {given} wildcards, but {puzzle.name} allows {own}: "
                "bench it with a definition of fewer wildcards"
            )
    goal = case.get("goal")
    if goal is None:
        return
    if isinstance(puzzle, PermutationPuzzle):
        if isinstance(goal, str):
            labels = [t.strip() for t in goal.split(";")]
        elif isinstance(goal, list):
            labels = [str(v) for v in goal]
        else:
            raise PuzzleError(f"{where}: 'goal' must be labels joined by ';' or a list, got {goal!r:.40}")
        own_labels = list(puzzle.definition.goal)
        if labels == own_labels:
            return
        if len(labels) != len(own_labels):
            differs = f"it has {len(labels)} labels for {len(own_labels)} positions"
        else:
            i = next(k for k, (a, b) in enumerate(zip(labels, own_labels, strict=True)) if a != b)
            differs = f"position {i} is {labels[i]!r} where {puzzle.name}'s goal has {own_labels[i]!r}"
        raise PuzzleError(
            f"{where}: its goal is not {puzzle.name}'s ({differs}): "
            "bench it with the definition made for its goal"
        )
    text = " ".join(str(v) for v in goal) if isinstance(goal, list) else goal
    try:
        target = puzzle.parse(str(text))
    except PuzzleError as exc:
        raise PuzzleError(f"{where}: cannot read its 'goal': {exc}") from None
    if not np.array_equal(target, puzzle.goal()):
        raise PuzzleError(f"{where}: its goal is not {puzzle.name}'s")


def _whole_number(value: Any, what: str) -> int:
    """``value`` as an ``int`` when it is a whole number (``3``, ``3.0``, ``"3"``), else a
    :class:`PuzzleError` naming ``what``."""
    if isinstance(value, bool):
        raise PuzzleError(f"{what} must be a whole number, got {value!r}")
    try:
        number = int(value)
        if number != value and not isinstance(value, str):
            raise ValueError(value)
    except (TypeError, ValueError, OverflowError):
        raise PuzzleError(f"{what} must be a whole number, got {str(value)[:40]!r}") from None
    return number


def _level_cases(
    puzzle: Puzzle, path: Path, ids: tuple[int | None, int | None] | None, text: str | None
) -> list[Case]:
    """The levels of a level file (``text`` is its content) or of a directory of them (``text``
    ``None``), as cases ``"file:number"``; ``ids`` keeps the level numbers in ``[A, B)``."""
    from puzzlezero.puzzles.sokoban import Sokoban
    from puzzlezero.puzzles.sokoban.levels import read_level_dir, read_levels

    if not isinstance(puzzle, Sokoban):
        raise PuzzleError(
            f"{path} holds Sokoban levels (a level file): bench them as sokoban, not {puzzle.name!r}"
        )
    if text is None:
        levels = read_level_dir(puzzle, path)
    else:
        levels = [(path.stem, number, state) for number, state in read_levels(puzzle, text, str(path))]
    lo, hi = ids if ids is not None else (None, None)
    cases = [
        Case(f"{name}:{number}", state)
        for name, number, state in levels
        if (lo is None or number >= lo) and (hi is None or number < hi)
    ]
    if not cases:
        raise PuzzleError(f"{path}: no levels with numbers in {lo}:{hi}")
    return cases
