"""Pattern-database heuristics as plain functions ``states[B, *state_shape] -> float32[B]``.

One factory per puzzle family (looked up through :data:`puzzlezero.optimal.HEURISTICS`); each
returns a callable object that also reports the memory it holds (``nbytes``) for the report's
memory table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from puzzlezero.puzzles.base import Puzzle

__all__ = ["PDBHeuristic", "sliding_heuristic", "cube3_heuristic", "cube2_heuristic", "lightsout_heuristic"]


@dataclass(frozen=True, eq=False)
class PDBHeuristic:
    """``values(states) -> int-like[B]`` wrapped to return ``float32[B]``; ``nbytes`` = table memory."""

    name: str
    values: Callable[[np.ndarray], np.ndarray]
    nbytes: int

    def __call__(self, states: np.ndarray) -> np.ndarray:
        return np.asarray(self.values(np.asarray(states)), dtype=np.float32)


def sliding_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """The default additive partition with its reflection (:func:`.sliding_pdb.load_sliding_pdb`)."""
    from puzzlezero.optimal.sliding_ida import board_size
    from puzzlezero.optimal.sliding_pdb import load_sliding_pdb

    pdb = load_sliding_pdb(board_size(puzzle))
    sizes = "-".join(str(len(g)) for g in pdb.partition)
    return PDBHeuristic(f"additive {sizes} + reflection", pdb.values, pdb.nbytes)


def cube3_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """Korf's max(corners, 6 edges, 6 edges) with the parity correction."""
    from puzzlezero.optimal.cube_ida import cube_pieces
    from puzzlezero.optimal.cube_pdb import KORF, load_cube_pdb

    pdb = load_cube_pdb(KORF)
    return PDBHeuristic("Korf corners + 2x6 edges", lambda s: pdb.values(cube_pieces(puzzle, s)), pdb.nbytes)


def cube2_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """The exact distance table (a pattern database of the whole puzzle)."""
    from puzzlezero.optimal.cube2 import cube2_distance
    from puzzlezero.puzzles.cube2_table import NUM_STATES

    return PDBHeuristic("exact table", cube2_distance, NUM_STATES)


def lightsout_heuristic(puzzle: Puzzle) -> PDBHeuristic:
    """The exact minimum number of presses (GF(2) elimination)."""
    from puzzlezero.optimal.lightsout import gf2_system, min_presses

    system = gf2_system(puzzle)
    return PDBHeuristic("exact GF(2)", lambda s: min_presses(puzzle, s).sum(axis=1),
                        system.particular.nbytes + system.check.nbytes + system.combos.nbytes)  # fmt: skip
