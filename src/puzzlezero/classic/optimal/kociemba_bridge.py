"""Kociemba's two-phase solver (the optional ``kociemba`` package) as a puzzlezero search.

Two-phase solutions are short (about 21 half-turn-metric moves for a random cube) but not optimal.
``kociemba`` counts a half turn ``X2`` as one move; our moves are quarter turns, so ``X2`` becomes
``X X`` and the result reports both lengths. On ``cube3htm`` (half-turn metric) ``X2`` is one move
and the solution is taken as it comes (its length is the half-turn length). The package is GPLv2
and compiled, hence an optional extra: ``pip install 'puzzlezero[kociemba]'``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult

__all__ = ["KociembaResult", "solve_kociemba", "half_to_quarter_turns"]


@dataclass(frozen=True)
class KociembaResult(SearchResult):
    """A :class:`SearchResult` (``actions`` in quarter turns) plus the solver's own answer.

    Attributes:
        half_turn_solution: the two-phase solution as returned, e.g. ``"R U2 F'"``.
        half_turn_length: its length in the half-turn metric (``X2`` counts 1).
    """

    half_turn_solution: str = ""
    half_turn_length: int = 0

    @property
    def quarter_turn_length(self) -> int:
        return len(self.actions)


def half_to_quarter_turns(solution: str) -> list[str]:
    """``"R U2 F'"`` -> ``["R", "U", "U", "F'"]`` (a half turn is two clockwise quarter turns)."""
    out: list[str] = []
    for tok in solution.split():
        face, mark = tok[0], tok[1:]
        if face not in "URFDLB" or mark not in ("", "'", "2"):
            raise PuzzleError(f"unexpected move {tok!r} in the two-phase solution {solution!r}")
        out.extend([face, face] if mark == "2" else [tok])
    return out


def _kociemba():  # noqa: ANN202 (module)
    try:
        import kociemba
    except ImportError:
        raise PuzzleError(
            "the Kociemba two-phase solver is an optional extra: install puzzlezero[kociemba] "
            "(pip install 'puzzlezero[kociemba]')"
        ) from None
    return kociemba


def solve_kociemba(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    max_depth: int = 24,
    deadline: float | None = None,
) -> SearchResult:
    """Solve one cube3 (or cube3htm) state with the two-phase algorithm (``max_depth`` in half
    turns; the C solver has no time or node limit, so ``time_limit``, ``deadline`` and
    ``max_nodes`` are not used). The two-phase search counts half turns as one move whatever the
    puzzle's costs are. Returns a :class:`KociembaResult` for cube3 (both lengths), a plain result
    for cube3htm."""
    kociemba = _kociemba()
    if puzzle.json_key != "facelets" or tuple(puzzle.state_shape) != (54,):
        raise PuzzleError(f"the Kociemba solver is for the 3x3x3 cube, not {puzzle.name}")
    state = np.asarray(state, dtype=puzzle.dtype).reshape(54)
    puzzle.validate(state)
    t0 = clock.now()
    if puzzle.is_goal(state[None])[0]:
        return KociembaResult(True, (), 1, 0, clock.now() - t0, "solved")
    facelets = puzzle.to_json(state)["facelets"]
    try:
        solution = kociemba.solve(facelets, max_depth=max_depth).strip()
    except ValueError as exc:  # the C code only says "Error ..."
        raise InvalidStateError(f"the two-phase solver rejected the cube {facelets}: {exc}") from None
    if puzzle.half_turn_length(()) is None:  # the half-turn metric: X2 is one of the puzzle's moves
        actions = tuple(puzzle.parse_moves(solution))
        return SearchResult(True, actions, 1, 0, clock.now() - t0, "solved", cost=puzzle.path_cost(actions))
    actions = tuple(puzzle.parse_moves(half_to_quarter_turns(solution)))
    return KociembaResult(True, actions, 1, 0, clock.now() - t0, "solved",
                          half_turn_solution=solution, half_turn_length=len(solution.split()))  # fmt: skip
