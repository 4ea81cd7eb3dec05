"""Pattern-database heuristics as plain functions ``states[B, *state_shape] -> float32[B]``.

One factory per puzzle family (looked up through :data:`puzzlezero.classic.optimal.HEURISTICS`); each
returns a callable object that also reports the memory it holds (``nbytes``) for the report's
memory table.

The databases count moves. A puzzle whose moves cost other than 1 gets the count times its
cheapest move (:func:`cost_scaled`): a path of ``k`` moves costs at least ``k`` times that, so the
heuristic stays admissible. ``cube3htm`` gets the quarter-turn databases divided per quarter turn
(:func:`cube3htm_heuristic`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from puzzlezero.puzzles.base import Puzzle

__all__ = [
    "PDBHeuristic",
    "cost_scaled",
    "cube2_heuristic",
    "cube3_heuristic",
    "cube3htm_heuristic",
    "lightsout_heuristic",
    "sliding_heuristic",
]


@dataclass(frozen=True, eq=False)
class PDBHeuristic:
    """``values(states) -> int-like[B]`` wrapped to return ``float32[B]``; ``nbytes`` = table memory;
    ``lazy``: its table is loaded (or built) by the first call, not by the factory (cube2's)."""

    name: str
    values: Callable[[np.ndarray], np.ndarray]
    nbytes: int
    lazy: bool = False

    def __call__(self, states: np.ndarray) -> np.ndarray:
        return np.asarray(self.values(np.asarray(states)), dtype=np.float32)


def cost_scaled(puzzle: Puzzle, pdb: PDBHeuristic, per_move: float | None = None) -> PDBHeuristic:
    """``pdb`` (a count of moves) as a lower bound of cost: times ``per_move`` (default: the
    cheapest of ``puzzle.action_costs``), rounded up when every cost is a whole number (a path's
    cost is then whole too). Unchanged where that factor is 1 and the costs are whole."""
    costs = puzzle.action_costs
    factor = float(costs.min()) if per_move is None else float(per_move)
    whole = bool(np.all(costs == np.round(costs)))
    if factor == 1.0 and whole:
        return pdb

    def values(states: np.ndarray) -> np.ndarray:
        out = np.asarray(pdb(states), dtype=np.float64) * factor
        return np.ceil(out - 1e-9) if whole else out

    return PDBHeuristic(f"{pdb.name} x {factor:g}", values, pdb.nbytes, pdb.lazy)


def sliding_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """The default additive partition with its reflection (:func:`.sliding_pdb.load_sliding_pdb`)."""
    from puzzlezero.classic.optimal.sliding_ida import board_size
    from puzzlezero.classic.optimal.sliding_pdb import load_sliding_pdb

    pdb = load_sliding_pdb(board_size(puzzle))
    sizes = "-".join(str(len(g)) for g in pdb.partition)
    return cost_scaled(puzzle, PDBHeuristic(f"additive {sizes} + reflection", pdb.values, pdb.nbytes))


def cube3_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """Korf's max(corners, 6 edges, 6 edges) with the parity correction."""
    from puzzlezero.classic.optimal.cube_ida import cube_pieces
    from puzzlezero.classic.optimal.cube_pdb import KORF, load_cube_pdb

    pdb = load_cube_pdb(KORF)
    return cost_scaled(
        puzzle,
        PDBHeuristic("Korf corners + 2x6 edges", lambda s: pdb.values(cube_pieces(puzzle, s)), pdb.nbytes),
    )


def cube3htm_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """Korf's quarter-turn databases for the half-turn-metric cube: a move turns at most two
    quarter turns, so ``h_qtm * min_a cost(a) / quarter_turns(a)`` is a lower bound of the cost
    (``ceil(h_qtm / 2)`` in the plain half-turn metric). Admissible but weak: it guides A* on short
    scrambles, not on random cubes."""
    from puzzlezero.classic.optimal.cube_ida import cube_pieces
    from puzzlezero.classic.optimal.cube_pdb import KORF, load_cube_pdb

    pdb = load_cube_pdb(KORF)
    qtm = PDBHeuristic(
        "Korf corners + 2x6 edges (quarter turns)", lambda s: pdb.values(cube_pieces(puzzle, s)), pdb.nbytes
    )
    per_quarter_turn = float(np.min(puzzle.action_costs / puzzle.quarter_turns))  # type: ignore[attr-defined]
    return cost_scaled(puzzle, qtm, per_quarter_turn)


def cube2_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """The exact distance table (a pattern database of the whole puzzle)."""
    from puzzlezero.classic.optimal.cube2 import cube2_distance
    from puzzlezero.puzzles.cube.table import NUM_STATES

    return cost_scaled(puzzle, PDBHeuristic("exact table", cube2_distance, NUM_STATES, lazy=True))


def lightsout_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """The exact minimum number of presses (GF(2) elimination)."""
    from puzzlezero.classic.optimal.lightsout import gf2_system, min_presses

    system = gf2_system(puzzle)
    return cost_scaled(puzzle, PDBHeuristic("exact GF(2)", lambda s: min_presses(puzzle, s).sum(axis=1),
                       system.particular.nbytes + system.check.nbytes + system.combos.nbytes))  # fmt: skip
