"""puzzlezero: learn to solve combinatorial puzzles with no human knowledge (DeepCubeA and kin).

>>> import puzzlezero as pz
>>> cube = pz.make("cube3")
>>> cube.is_goal(cube.goals(1))[0]
np.True_
"""

from puzzlezero.errors import (
    InvalidMoveError,
    InvalidStateError,
    ModelFileError,
    PuzzleError,
    UnknownNameError,
)
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make, names, register

__version__ = "0.1.0"

__all__ = [
    "InvalidMoveError",
    "InvalidStateError",
    "ModelFileError",
    "Puzzle",
    "PuzzleError",
    "UnknownNameError",
    "make",
    "names",
    "register",
    "__version__",
]
