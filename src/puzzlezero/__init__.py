"""puzzlezero: learn to solve combinatorial puzzles with no human knowledge (DeepCubeA and kin).

>>> import puzzlezero as pz
>>> cube = pz.make("cube3")
>>> cube.is_goal(cube.goals(1))[0]
np.True_

Two lines from import to answer (the shipped network, the puzzle's default search):

>>> pz.solve("cube3", "R U R' F2").solved
True
>>> round(pz.value("cube3", "R U R' F2", optimal=False).value)
5
"""

from puzzlezero._version import __version__
from puzzlezero.cost_to_go import ValueResult, value
from puzzlezero.errors import (
    InvalidMoveError,
    InvalidStateError,
    LevelFileError,
    ModelFileError,
    PuzzleError,
    UnknownNameError,
)
from puzzlezero.puzzles.base import Goal, Puzzle
from puzzlezero.registry import make, names, register
from puzzlezero.solver import SolveResult, solve

__all__ = [
    "Goal",
    "InvalidMoveError",
    "InvalidStateError",
    "LevelFileError",
    "ModelFileError",
    "Puzzle",
    "PuzzleError",
    "SolveResult",
    "UnknownNameError",
    "ValueResult",
    "make",
    "names",
    "register",
    "solve",
    "value",
    "__version__",
]
