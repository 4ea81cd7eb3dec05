"""The conformance checks (puzzlezero.testing.check_puzzle, Gymnasium's check_env idea) over every
registered puzzle and over the one-file example puzzle of docs/adding-a-puzzle.md, registered from
outside the package; and that a broken puzzle fails them with a message naming the puzzle and the
property."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import UnknownNameError
from puzzlezero.plugins import ENV_VAR, load_plugin
from puzzlezero.testing import CHECKS, PuzzleCheckError, check_puzzle

NAMES = pz.names()
#: the example plugin (examples/pancake.py) and the puzzles it registers, loaded by the fixture
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pancake.py"
EXAMPLE_NAMES = ["pancake8"]


@pytest.fixture(params=NAMES + [n for n in EXAMPLE_NAMES if n not in NAMES])
def puzzle(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> pz.Puzzle:
    if request.param in EXAMPLE_NAMES:
        monkeypatch.setenv(ENV_VAR, os.environ.get(ENV_VAR, ""))  # load_plugin adds to it: undone after
        load_plugin(EXAMPLE)
    return pz.make(request.param)


def test_registry_names_and_unknown() -> None:
    for required in [
        "cube3",
        "cube2",
        "puzzle15",
        "puzzle24",
        "puzzle35",
        "puzzle48",
        "lightsout7",
        "sokoban",
    ]:
        assert required in NAMES
    with pytest.raises(UnknownNameError, match="registered puzzles: cube3"):
        pz.make("cube4")


@pytest.mark.parametrize("check", list(CHECKS))
def test_conformance(puzzle: pz.Puzzle, check: str) -> None:
    """One check on one puzzle (each reported on its own); Sokoban's pushes have no inverse."""
    outcome = check_puzzle(puzzle, checks=[check])[check]
    if outcome != "passed":
        assert check == "inverse_moves" and np.any(puzzle.inverse_action < 0), outcome
        pytest.skip(outcome.removeprefix("skipped: "))


def test_check_puzzle_runs_every_check_by_name_or_instance() -> None:
    report = check_puzzle("puzzle8", rng=3, n=16)
    assert report == dict.fromkeys(CHECKS, "passed")
    assert check_puzzle(pz.make("sokoban"), checks=["inverse_moves"]) == {
        "inverse_moves": "skipped: sokoban has irreversible moves"
    }
    with pytest.raises(UnknownNameError, match="unknown checks \\['nope'\\]; the checks: constants"):
        check_puzzle("puzzle8", checks=["nope"])


def test_the_checks_import_neither_pytest_nor_torch() -> None:
    """A plugin author's own tests may run under any runner, and the core install has no torch."""
    code = (
        "import sys; from puzzlezero.testing import check_puzzle; check_puzzle('puzzle8', n=8); "
        "print([m for m in ('pytest', 'torch') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]"]


def test_a_broken_puzzle_fails_naming_itself_and_the_property() -> None:
    import copy

    p = copy.copy(pz.make("puzzle8"))  # not the registry's instance: changed here only
    p.hash64 = lambda states: np.arange(len(states), dtype=np.uint64)  # type: ignore[method-assign]
    with pytest.raises(PuzzleCheckError, match="puzzle 'puzzle8' fails the 'hashing' check: ") as e:
        check_puzzle(p)
    assert (e.value.puzzle, e.value.check) == ("puzzle8", "hashing") and isinstance(e.value, AssertionError)
    assert "hash64 gives equal states different hashes" in str(e.value)
    p = copy.copy(pz.make("puzzle8"))
    p.format = lambda state: "not a board"  # type: ignore[method-assign]
    with pytest.raises(PuzzleCheckError, match="'text_round_trip' check: raised InvalidStateError"):
        check_puzzle(p, checks=["text_round_trip"])
