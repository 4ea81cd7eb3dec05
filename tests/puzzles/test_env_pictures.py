"""The environments' ``rgb_array`` pictures (puzzlezero.envs.pictures): shape and dtype for every
puzzle, a move that changes the state changes the picture, batches drawn row by row alike, the
cube's colours where its text net has its letters, the numbers on the tiles, the text picture of
a puzzle without a drawing of its own, the cell size's check, and where the drawings live (each
puzzle's in its own package's viewer, the shared drawing free of any puzzle package)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.viewer import COLOURS
from puzzlezero.puzzles.macros import MacroPuzzle

pytest.importorskip("gymnasium")
pictures = importlib.import_module("puzzlezero.envs.pictures")
envs = importlib.import_module("puzzlezero.envs")
draw, grid_of, paint, Grid, rgb = pictures.draw, pictures.grid_of, pictures.paint, pictures.Grid, pictures.rgb

NAMES = pz.names()


def cell_centre(image: np.ndarray, row: int, col: int, cell: int) -> list[int]:
    return image[row * cell + cell // 2, col * cell + cell // 2].tolist()


@pytest.mark.parametrize("name", NAMES)
def test_every_move_that_changes_the_state_changes_the_picture(name: str) -> None:
    puzzle = pz.make(name)
    states = puzzle.scramble(np.random.default_rng(4), 3, 6)
    images = draw(puzzle, states)
    assert images.dtype == np.uint8 and images.ndim == 4 and images.shape[0] == 3 and images.shape[3] == 3
    assert 100 <= max(images.shape[1:3]) <= 300  # about 240 pixels on the long side
    for i, state in enumerate(states):  # a batch is drawn as its rows one at a time
        np.testing.assert_array_equal(images[i], draw(puzzle, state[None])[0])
    children = puzzle.expand(states)
    moved = puzzle.moved(states, children)
    for i in range(3):
        drawn = draw(puzzle, children[i])
        for a in range(puzzle.num_actions):
            assert np.array_equal(drawn[a], images[i]) != moved[i, a], (i, puzzle.action_names[a])
    np.testing.assert_array_equal(
        draw(puzzle, states[:1].copy()), images[:1]
    )  # the same state, the same picture


@pytest.mark.parametrize("name", ["cube2", "cube3", "cube3htm"])
def test_the_cube_shows_its_text_net_in_the_standard_colours(name: str) -> None:
    cube = pz.make(name)
    state = cube.scramble(np.random.default_rng(1), 1, 12)[0]
    image = draw(cube, state[None], cell=10)[0]
    n = cube.n
    assert image.shape == (3 * n * 10, 4 * n * 10, 3)
    lines = cube.render_text(state).splitlines()  # one sticker per two columns
    for r, line in enumerate(lines):
        for c in range(4 * n):
            letter = line[2 * c : 2 * c + 1].strip()
            expected = list(rgb(COLOURS[letter])) if letter else list(rgb("#222222"))
            assert cell_centre(image, r, c, 10) == expected, (r, c, letter)


def test_tiles_carry_their_numbers() -> None:
    puzzle = pz.make("puzzle15")
    state = puzzle.parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15")
    image = draw(puzzle, state[None], cell=40)[0]

    def tile(k: int) -> np.ndarray:
        return image[(k // 4) * 40 : (k // 4 + 1) * 40, (k % 4) * 40 : (k % 4 + 1) * 40]

    ink = np.array(rgb("#2b2b2b"))
    inked = [int(np.all(tile(k) == ink, axis=-1).sum()) for k in range(16)]
    assert inked[14] == 0  # the blank has no number
    assert all(v > 0 for k, v in enumerate(inked) if k != 14)
    assert inked[10] > inked[0]  # "11" takes more ink than "1"
    assert not np.array_equal(tile(0), tile(6))  # 1 and 7 differ by their numbers alone
    assert cell_centre(image, 0, 0, 40) != cell_centre(image, 3, 3, 40)  # home and away tiles differ
    assert tile(14)[20, 20].tolist() == list(rgb("#3b3f46"))  # the blank shows the board


def test_lights_and_sokoban_cells_have_their_colours() -> None:
    lights = pz.make("lightsout7")
    on = np.zeros(49, dtype=np.uint8)
    on[8] = 1
    image = draw(lights, on[None], cell=10)[0]
    assert cell_centre(image, 1, 1, 10) == list(rgb("#ffd84a"))
    assert cell_centre(image, 0, 0, 10) == list(rgb("#4a4f57"))
    soko = pz.make("sokoban")
    image = draw(soko, soko.parse("#####\n#@$.#\n#####")[None], cell=10)[0]
    assert [cell_centre(image, 1, c, 10) for c in range(5)] == [
        list(rgb(c)) for c in ("#5b4a3f", "#3a6fd8", "#c98b3a", "#d9534f", "#5b4a3f")
    ]


def test_a_puzzle_without_a_drawing_gets_its_text_picture() -> None:
    base = pz.make("puzzle8")
    macro = MacroPuzzle(base, [base.parse_moves("L L")])  # no grid_of of its own
    a, b = base.parse("1 2 3 4 5 6 7 0 8"), base.parse("1 2 3 4 5 6 0 7 8")
    assert macro.render_text(a) == "1 2 3 4 5 6 7 0 8"
    grid = grid_of(macro, np.stack([a, b]))
    assert grid.colours.shape[1:3] == (1, 17)  # one line of 17 characters
    assert grid.labels is not None and grid.labels[0, 0, :5].tolist() == [1, -1, 2, -1, 3]
    assert grid.colours[0, 0, 1].tolist() == list(grid.background)  # a space shows the background
    assert grid.colours[0, 0, 0].tolist() != list(grid.background)
    images = paint(grid)
    assert not np.array_equal(images[0], images[1])
    env = envs.PuzzleEnv(macro, render_mode="rgb_array")
    env.reset(options={"state": a})
    np.testing.assert_array_equal(env.render(), images[0])
    soko = pz.make("sokoban")
    text = grid_of.dispatch(Puzzle)(soko, soko.parse("#####\n#@$.#\n#####")[None])  # the default drawing
    assert len({tuple(c) for c in text.colours[0, 1, :5].tolist()}) == 4  # "#@$.#": one colour per character
    assert text.labels is not None and (text.labels == -1).all()  # no digits: nothing to write
    assert paint(text, cell=8).shape == (1, 80, 80, 3)


def test_a_plugin_puzzle_registers_its_own_drawing() -> None:
    class Lamps(type(pz.make("lightsout7"))):  # a puzzle class of its own
        pass

    lamps = Lamps(size=2)
    assert draw(lamps, lamps.goals(1)).shape == (1, 240, 240, 3)  # the Lights Out drawing, inherited

    @grid_of.register(Lamps)
    def _lamps(puzzle: Lamps, states: np.ndarray) -> object:
        return Grid(colours=np.zeros((states.shape[0], 1, 1, 3), np.uint8), background=(9, 9, 9))

    assert draw(lamps, lamps.goals(2), cell=8).shape == (2, 8, 8, 3)


def test_the_cell_size_is_checked() -> None:
    puzzle = pz.make("puzzle48")  # two-digit numbers need at least 11 pixels
    state = puzzle.goals(1)
    assert draw(puzzle, state, cell=11).shape == (1, 77, 77, 3)
    for bad in (10, 0, True, 12.0):
        with pytest.raises(PuzzleError, match=r"cell must be a whole number of pixels >= 11"):
            draw(puzzle, state, cell=bad)
    assert draw(pz.make("cube3"), pz.make("cube3").goals(1), cell=8).shape == (1, 72, 96, 3)
    with pytest.raises(PuzzleError, match=r"cell must be a whole number of pixels >= 8 .*got 7"):
        draw(pz.make("cube3"), pz.make("cube3").goals(1), cell=7)


#: a built-in puzzle of each puzzle package, by the package
OWNERS = {
    "cube3": "cube",
    "cube2": "cube",
    "cube3htm": "cube",
    "puzzle15": "npuzzle",
    "lightsout7": "lightsout",
    "sokoban": "sokoban",
    "cube_2-2-2": "permutation",
    "wreath_6-6": "permutation",
}


def test_each_puzzle_is_drawn_by_its_own_packages_viewer() -> None:
    for name, package in OWNERS.items():
        drawing = grid_of.dispatch(type(pz.make(name)))
        viewer = f"puzzlezero.puzzles.{package}.viewer"
        assert drawing.__module__ == viewer, name
        assert drawing is importlib.import_module(viewer).grid, name
    assert grid_of is importlib.import_module("puzzlezero.puzzles.pictures").grid_of  # re-exported


def test_the_shared_drawing_imports_no_puzzle_package() -> None:
    code = (
        "import sys, puzzlezero.puzzles.pictures\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('puzzlezero.'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "puzzlezero.puzzles.pictures" in loaded
    parts = {m.split(".")[2] for m in loaded if m.startswith("puzzlezero.puzzles.")}
    assert not parts & set(OWNERS.values()), parts  # no puzzle package, no viewer
    assert not [m for m in loaded if m == "puzzlezero.envs" or m.startswith("puzzlezero.envs.")]
