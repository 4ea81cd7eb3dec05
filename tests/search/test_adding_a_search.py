"""The worked example of docs/adding-a-search.md: IDA* in one file (examples/ida_star.py), declared
by one ``register_search`` call, solves through every route a built-in search does."""

from __future__ import annotations

import runpy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import solver
from puzzlezero.cli.main import leading_plugins
from puzzlezero.errors import PuzzleError
from puzzlezero.registry import make
from puzzlezero.solver import OPTIONS, SEARCHES, OptionSpec, SearchSpec, register_option, register_search

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ida_star.py"


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The searches, knobs and loaded plugins as they were, after the test."""
    from puzzlezero import plugins

    monkeypatch.delenv(plugins.ENV_VAR, raising=False)
    searches, options, loaded = dict(SEARCHES), dict(OPTIONS), dict(plugins._LOADED)
    yield
    for table, before in ((SEARCHES, searches), (OPTIONS, options), (plugins._LOADED, loaded)):
        table.clear()
        table.update(before)  # type: ignore[arg-type]


@pytest.fixture
def ida(restored: None) -> dict:
    """The example run afresh (its names for the tests)."""
    return runpy.run_path(str(EXAMPLE))


def test_one_registration_declares_the_search_and_its_knob(ida: dict) -> None:
    spec = SEARCHES["ida"]
    assert spec.entry is ida["ida_star"] and spec.options == ("ida_weight",) and not spec.node_cap
    assert OPTIONS["ida_weight"].default == 1.0
    with pytest.raises(PuzzleError, match="already registered"):
        register_search("ida", spec)
    with pytest.raises(PuzzleError, match="unknown: no_such_knob"):
        register_search(
            "ida2",
            SearchSpec(
                entry=ida["ida_star"], run=ida["run_ida"], needs_heuristic=True, options=("no_such_knob",)
            ),
        )
    with pytest.raises(PuzzleError, match="settings are among"):
        register_search(
            "ida2",
            SearchSpec(entry=ida["ida_star"], run=ida["run_ida"], needs_heuristic=True, settings=("width",)),
        )
    with pytest.raises(PuzzleError, match="name is letters"):
        register_search("my:ida", spec)
    with pytest.raises(PuzzleError, match="already registered"):
        register_option("ida_weight", OptionSpec(2.0, float, "again"))
    assert "ida2" not in SEARCHES


@pytest.mark.parametrize("scramble", ["R U F' D R2 F U'", "F R U R' U' F'", "U"])
def test_with_an_exact_heuristic_it_is_optimal(ida: dict, scramble: str) -> None:
    p = make("cube2")
    got = solver.solve(p, scramble, search="ida", heuristic="pdb")
    best = solver.solve(p, scramble, search="optimal")
    assert got.solved and got.length == best.length
    assert solver.verify(p, solver.read_state(p, scramble)[None], [got.actions])[0]


def test_the_learned_heuristic_guides_it_and_every_answer_replays(ida: dict) -> None:
    p = make("cube2")
    rng = np.random.default_rng(3)
    states = p.scramble(rng, 4, 6)
    results = solver.solve_many(p, states, search="ida", options={"ida_weight": 1.5}, time_limit=30.0)
    assert all(r.solved for r in results)
    assert solver.verify(p, states, [r.actions for r in results]).all()


def test_its_bounds_are_named_when_hit(ida: dict) -> None:
    p = make("cube2")
    r = solver.solve(
        p, "R U F' D R2 F U' R", search="ida", heuristic="misplaced", max_nodes=20, fallback=False
    )
    assert not r.solved and r.status == "node limit"
    with pytest.raises(PuzzleError, match="--ida-weight must be >= 1"):
        solver.solve(p, "R U", search="ida", options={"ida_weight": 0.5})


def test_the_command_line_loads_it_before_building_its_flags() -> None:
    """A command of its own process, as a user runs it: the plugin's search is a choice of
    ``--search`` and its knob a flag."""
    assert leading_plugins(["--plugin", "a.py", "--plugin=b", "solve", "--plugin", "c"]) == ["a.py", "b"]
    args = [
        "--plugin",
        str(EXAMPLE),
        "solve",
        "cube2",
        "R U F'",
        "--search",
        "ida",
        "--ida-weight",
        "1",
        "-q",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "puzzlezero", *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.split()
    p = make("cube2")
    assert len(out) == 3
    assert solver.verify(p, solver.read_state(p, "R U F'")[None], [[p.action_names.index(m) for m in out]])[0]
