"""One conformance test suite run over every registered puzzle (Gymnasium's check_env idea), and
over the one-file example puzzle of docs/adding-a-puzzle.md, registered from outside the package."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import InvalidMoveError, UnknownNameError
from puzzlezero.plugins import ENV_VAR, load_plugin

NAMES = pz.names()
#: the example plugin (examples/pancake.py) and the puzzles it registers, loaded by the fixture
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pancake.py"
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


def test_constants(puzzle: pz.Puzzle) -> None:
    assert puzzle.name in pz.names()
    assert puzzle.num_actions == len(puzzle.action_names) == len(set(puzzle.action_names)) > 0
    inv = puzzle.inverse_action
    assert inv.shape == (puzzle.num_actions,)
    assert puzzle.default_scramble_depth >= 1
    assert puzzle.goal().shape == puzzle.state_shape
    assert puzzle.goal().dtype == puzzle.dtype


def test_goal_and_expand(puzzle: pz.Puzzle) -> None:
    rng = np.random.default_rng(0)
    g = puzzle.goals(3)
    assert puzzle.is_goal(g).all()
    assert puzzle.is_goal(g[:0]).shape == (0,)  # an empty batch (a search with nothing left)
    states = puzzle.scramble(rng, 64, (1, 20))
    assert states.shape == (64, *puzzle.state_shape) and states.dtype == puzzle.dtype
    children = puzzle.expand(states)
    assert children.shape == (64, puzzle.num_actions, *puzzle.state_shape)
    # apply agrees with expand for every action
    for a in range(puzzle.num_actions):
        np.testing.assert_array_equal(puzzle.apply(states, np.full(64, a)), children[:, a])
    # legal moves change the state, illegal ones return it
    mask = puzzle.legal_mask(states)
    same = np.all(children.reshape(64, puzzle.num_actions, -1) == states.reshape(64, 1, -1), axis=2)
    np.testing.assert_array_equal(mask, ~same)
    assert mask.any(axis=1).all()


def test_inverse_moves_undo(puzzle: pz.Puzzle) -> None:
    inv = puzzle.inverse_action
    if np.any(inv < 0):
        pytest.skip(f"{puzzle.name} has irreversible moves")
    rng = np.random.default_rng(1)
    states = puzzle.scramble(rng, 32, (0, 30))
    children = puzzle.expand(states)
    mask = puzzle.legal_mask(states)
    for a in range(puzzle.num_actions):
        back = puzzle.apply(children[:, a], np.full(32, inv[a]))
        ok = mask[:, a]
        np.testing.assert_array_equal(back[ok], states[ok])


def test_scramble_depths(puzzle: pz.Puzzle) -> None:
    rng = np.random.default_rng(2)
    assert puzzle.is_goal(puzzle.scramble(rng, 5, 0)).all()
    one = puzzle.scramble(rng, 200, 1)
    assert (~puzzle.is_goal(one)).mean() > 0.5  # a single move usually leaves the goal
    a = puzzle.scramble(np.random.default_rng(7), 10, (1, 30))
    b = puzzle.scramble(np.random.default_rng(7), 10, (1, 30))
    np.testing.assert_array_equal(a, b)  # seeded scrambles are reproducible


def test_encoding(puzzle: pz.Puzzle) -> None:
    states = puzzle.scramble(np.random.default_rng(3), 8, (1, 10))
    x = puzzle.encode(states)
    assert x.dtype == np.float32 and x.shape == (8, puzzle.input_dim())
    assert np.isin(x, [0.0, 1.0]).all()
    with pytest.raises(UnknownNameError):
        puzzle.encode(states, "nope")


def test_keys_hash_and_unique(puzzle: pz.Puzzle) -> None:
    states = puzzle.scramble(np.random.default_rng(4), 50, (1, 40))
    batch = np.concatenate([states, states[:10]])
    uniq, first = puzzle.unique(batch)
    n_distinct = len({s.tobytes() for s in states})
    assert len(uniq) == n_distinct
    np.testing.assert_array_equal(uniq, batch[first])
    h = puzzle.hash64(batch)
    assert h.dtype == np.uint64
    np.testing.assert_array_equal(h[:10], h[50:])
    assert len(set(h[:50].tolist())) == n_distinct


def test_text_round_trip(puzzle: pz.Puzzle) -> None:
    states = puzzle.scramble(np.random.default_rng(5), 10, (1, 40))
    for s in states:
        text = puzzle.format(s)
        np.testing.assert_array_equal(puzzle.parse(text), s)
        j = puzzle.to_json(s)
        assert puzzle.json_key in j
        assert isinstance(puzzle.render_text(s), str) and puzzle.render_text(s)
        svg = puzzle.to_svg(s)
        assert svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>")


def test_moves_text(puzzle: pz.Puzzle) -> None:
    names = puzzle.action_names
    assert puzzle.parse_moves(" ".join(names)) == list(range(len(names)))
    assert puzzle.format_moves(range(len(names))) == list(names)
    with pytest.raises(InvalidMoveError):
        puzzle.parse_moves("definitely-not-a-move")
