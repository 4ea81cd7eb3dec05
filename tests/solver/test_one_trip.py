"""One trip per solve: states are read and checked once, where they come in (the CLI, the web, bench,
the Python API), and the solver takes the :class:`States` it is handed as they are; ``--models`` is
read by one reader; a schedule of stages is checked once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.bench import run_bench
from puzzlezero.case_files import Case
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.search.anytime import Stages, check_stages
from puzzlezero.solver import States, read_states, resolve_options, solve_many, verify
from puzzlezero.solver.members import read_models


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Each call of the 8-puzzle's validator, as it happens."""
    seen: list[Any] = []
    cls = type(pz.make("puzzle8"))
    check = cls.validate

    def counted(self: Any, state: np.ndarray) -> None:
        seen.append(state.copy())
        check(self, state)

    monkeypatch.setattr(cls, "validate", counted)
    return seen


def test_states_read_once_are_not_checked_again(validations: list[Any]) -> None:
    p = pz.make("puzzle8")
    texts = ["1 2 3 4 5 6 7 0 8", "1 2 3 4 5 6 0 7 8"]
    checked = read_states(p, texts)
    read = len(validations)  # what reading two texts checks (the parser may check as it reads)
    assert read >= 2 and len(checked) == 2 and not checked.array.flags.writeable
    assert read_states(p, checked) is checked  # taken as it is
    opts = resolve_options(p, search="optimal")
    results = solve_many(p, checked, opts)
    assert len(validations) == read  # the solver read nothing again
    assert [r.length for r in results] == [1, 2]
    assert verify(p, checked.array, [r.actions for r in results]).all()
    solve_many(p, texts, opts)  # texts are read by the solver, as read_states reads them
    assert len(validations) == 2 * read


def test_bench_hands_its_checked_cases_to_the_solver(validations: list[Any]) -> None:
    p = pz.make("puzzle8")
    cases = [
        Case(i, s) for i, s in enumerate(read_states(p, ["1 2 3 4 5 6 7 0 8", "1 2 3 4 0 6 7 5 8"]).array)
    ]
    read = len(validations)
    report = run_bench(p, cases, search="optimal")
    assert len(validations) == read
    assert [r["length"] for r in report.results] == [1, 2]


def test_states_of_another_puzzle_or_unreadable_ones_are_refused() -> None:
    p8, p15 = pz.make("puzzle8"), pz.make("puzzle15")
    with pytest.raises(PuzzleError, match="puzzle8 states, not puzzle15 states"):
        solve_many(p15, read_states(p8, ["1 2 3 4 5 6 7 8 0"]), search="optimal")
    with pytest.raises(InvalidStateError):
        read_states(p8, ["1 2 3 4 5 6 7 8 8"])
    assert read_states(p8, []).array.shape == (0, *p8.state_shape)
    assert solve_many(p8, States(p8.name, np.empty((0, *p8.state_shape), p8.dtype)), search="optimal") == []


def test_models_have_one_reader() -> None:
    assert read_models("puzzle48, heuristic:manhattan") == ("puzzle48", "heuristic:manhattan")
    with pytest.raises(PuzzleError, match="is not a list of models"):
        read_models("puzzle48,,heuristic:manhattan")
    with pytest.raises(PuzzleError, match="is not a list of models"):
        resolve_options(pz.make("puzzle48"), models="puzzle48,")
    o = resolve_options(pz.make("puzzle48"), models="puzzle48,heuristic:manhattan")
    assert o.models == ("puzzle48", "heuristic:manhattan")


def test_a_schedule_is_checked_once() -> None:
    stages = check_stages([(0.2, 100), (0.6, 1000)])
    assert isinstance(stages, Stages) and stages == ((0.2, 100), (0.6, 1000))
    assert check_stages(stages) is stages
    o = resolve_options(pz.make("cube3"), stages=[(0.2, 100)])
    assert isinstance(o.stages, Stages)
    with pytest.raises(PuzzleError, match="batch"):
        check_stages([(0.2, 0)])
