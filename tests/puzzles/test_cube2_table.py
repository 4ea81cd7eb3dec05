"""The exact 2x2x2 distance table: its size and shape, agreement with breadth-first search on
stickers, consistency with the moves, and the cache (built once per test session, about 1 s)."""

from __future__ import annotations

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import InvalidStateError
from puzzlezero.puzzles.cube import table as cube2_table
from puzzlezero.puzzles.cube.table import MAX_DISTANCE, NUM_STATES, coordinates, distance, load_or_build

CUBE = pz.make("cube2")
# positions at each quarter-turn distance (Wikipedia, "Pocket Cube"; computed by many since 1981)
QTM_COUNTS = [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276]


@pytest.fixture(scope="module")
def table() -> np.ndarray:
    return load_or_build(progress=False)


def test_table_size_diameter_and_distribution(table: np.ndarray) -> None:
    assert table.shape == (NUM_STATES,) == (3_674_160,) and table.dtype == np.uint8
    assert int(table.max()) == MAX_DISTANCE == 14
    np.testing.assert_array_equal(np.bincount(table), QTM_COUNTS)


def test_distance_equals_sticker_bfs_to_depth_six(table: np.ndarray) -> None:
    """Breadth-first search on sticker states with all 12 moves, deduplicated up to rotation."""
    seen = {CUBE.goal().tobytes()}
    frontier = CUBE.goals(1)
    for depth in range(1, 7):
        children = CUBE.canonical(CUBE.expand(frontier).reshape(-1, 24))
        children, _ = CUBE.unique(children)
        fresh = np.array([c.tobytes() not in seen for c in children])
        frontier = children[fresh]
        seen.update(c.tobytes() for c in frontier)
        assert len(frontier) == QTM_COUNTS[depth]
        assert (distance(frontier) == depth).all()


def test_distance_consistent_with_every_move(table: np.ndarray) -> None:
    rng = np.random.default_rng(0)
    states = CUBE.scramble(rng, 2000, (1, 40))
    d = distance(states)
    dc = distance(CUBE.expand(states).reshape(-1, 24)).reshape(-1, 12)
    assert (np.abs(dc - d[:, None]) == 1).all()  # a quarter turn changes the distance by exactly one
    assert (dc.min(axis=1) == d - 1)[d > 0].all()
    assert (d[CUBE.is_goal(states)] == 0).all()


def test_scrambles_are_no_farther_than_their_length() -> None:
    rng = np.random.default_rng(1)
    for k in range(0, 12):
        d = distance(CUBE.scramble(rng, 200, k))
        assert (d <= k).all() and (d % 2 == k % 2).all()  # each quarter turn is an odd corner cycle


def test_distance_ignores_whole_cube_orientation() -> None:
    states = CUBE.scramble(np.random.default_rng(2), 50, 12)
    d = distance(states)
    for rot in CUBE.rotations:
        np.testing.assert_array_equal(distance(states[:, rot]), d)
    assert (distance(CUBE.goal()[CUBE.rotations]) == 0).all()


def test_coordinates_are_a_bijection_on_samples() -> None:
    states = CUBE.canonical(CUBE.scramble(np.random.default_rng(3), 3000, 30))
    keys, first = CUBE.unique(states)
    coords = coordinates(keys)
    assert len(np.unique(coords)) == len(keys) and coords.min() >= 0 and coords.max() < NUM_STATES


def test_illegal_states_are_refused() -> None:
    twisted = CUBE.goal().copy()
    twisted[[3, 4, 9]] = twisted[[9, 3, 4]]  # turn the UFR corner in place
    with pytest.raises(InvalidStateError, match="state 1 .*corner at UFR is twisted"):
        distance(np.stack([CUBE.goal(), twisted]))
    with pytest.raises(InvalidStateError, match=r"\[B, 24\]"):
        distance(np.zeros((2, 54), np.uint8))


def test_cache_is_reused_and_rebuilt_when_corrupt(table: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    path = cube2_table.table_path()
    assert path.exists()

    def no_build(progress: bool = False) -> np.ndarray:
        raise AssertionError("the cached table should have been read")

    with monkeypatch.context() as m:
        m.setattr(cube2_table, "_TABLE", None)
        m.setattr(cube2_table, "build", no_build)
        np.testing.assert_array_equal(load_or_build(progress=False), table)  # read back from the file
    path.write_bytes(b"not an npz file")
    monkeypatch.setattr(cube2_table, "_TABLE", None)
    np.testing.assert_array_equal(load_or_build(progress=False), table)  # rebuilt
    monkeypatch.setattr(cube2_table, "_TABLE", None)
    assert path.read_bytes()[:2] == b"PK" and load_or_build(progress=False).max() == MAX_DISTANCE
