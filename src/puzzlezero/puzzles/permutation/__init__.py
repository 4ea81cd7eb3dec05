"""Permutation puzzles given as data: any puzzle whose moves permute the positions of its state.

:mod:`.definition` holds the native format and its checks, :mod:`.rules` the puzzle made from a
definition, :mod:`.families` the generated cubes, globes and wreaths (the Santa 2023 competition's
puzzles), :mod:`.viewer` the drawings; :mod:`.cayleypy`, :mod:`.gap` and :mod:`.kpuzzle` read and
write the field's other formats, :mod:`.santa` imports the competition's files."""

from puzzlezero.puzzles.permutation import viewer
from puzzlezero.puzzles.permutation.definition import FORMAT, Definition
from puzzlezero.puzzles.permutation.files import load_definition, read_definition
from puzzlezero.puzzles.permutation.rules import PermutationPuzzle
from puzzlezero.puzzles.pictures import grid_of

# the RGB pictures (puzzlezero.puzzles.pictures.draw): the viewer's net or rows of positions
grid_of.register(PermutationPuzzle)(viewer.grid)


def family_puzzle(puzzle_type: str, goal: str = "standard", scramble_depth: int = 30) -> PermutationPuzzle:
    """The generated puzzle of a competition type (``"cube_4/4/4"``, ``"globe_1/8"``), its training
    scrambles ``scramble_depth`` moves deep at most."""
    from puzzlezero.puzzles.permutation.families import family_definition

    data = {**family_definition(puzzle_type, goal), "scramble_depth": scramble_depth}
    return PermutationPuzzle(Definition.from_dict(data, where=puzzle_type))


__all__ = ["FORMAT", "Definition", "PermutationPuzzle", "family_puzzle", "load_definition", "read_definition"]
