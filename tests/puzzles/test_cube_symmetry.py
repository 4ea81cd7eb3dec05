"""The cube's 48 symmetries: a group, the goal fixed, moves conjugated, distances kept."""

from __future__ import annotations

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.cube.symmetry import cube_symmetries, symmetries_for, symmetry_matrices
from puzzlezero.puzzles.cube.table import distance

CUBES = pytest.mark.parametrize("name", ["cube3", "cube2", "cube3htm"])
ALL = np.arange(48)


def states(cube: pz.Puzzle, n: int = 16, seed: int = 0) -> np.ndarray:
    return cube.scramble(np.random.default_rng(seed), n, 30)


def test_matrices_are_the_48_signed_permutations() -> None:
    mats = symmetry_matrices()
    assert mats.shape == (48, 3, 3)
    assert (mats[0] == np.eye(3)).all()
    assert len({m.tobytes() for m in mats}) == 48
    dets = np.round(np.linalg.det(mats)).astype(int)
    assert (dets[:24] == 1).all() and (dets[24:] == -1).all()
    for m in mats:
        assert (m @ m.T == np.eye(3)).all()


@CUBES
def test_the_48_are_distinct_and_form_a_group(name: str) -> None:
    cube = pz.make(name)
    sym = cube_symmetries(cube)
    s = states(cube, 4)
    images = np.stack([sym.apply(s, k) for k in ALL])  # [48, 4, S]
    # distinct as maps of states (a random state tells all 48 apart)
    assert len({images[k].tobytes() for k in ALL}) == 48
    assert (images[0] == s).all()  # symmetry 0 is the identity
    for k in ALL:
        assert (sym.apply(images[k], sym.inverse[k]) == s).all()
        for j in (0, 5, 24, 31, 47):
            assert (sym.apply(images[j], k) == images[sym.compose[k, j]]).all()
    # closure: every row of the table is a permutation of the 48
    assert all(sorted(row) == list(range(48)) for row in sym.compose.tolist())
    assert (sym.compose[ALL, sym.inverse] == 0).all()


@CUBES
def test_the_goal_maps_to_the_goal_and_centres_keep_their_colours(name: str) -> None:
    cube = pz.make(name)
    sym = cube_symmetries(cube)
    goals = sym.apply(np.repeat(cube.goal()[None], 48, axis=0), ALL)
    assert (goals == cube.goal()).all()
    if cube.n == 3:
        s = states(cube)
        for k in ALL:
            assert (sym.apply(s, k)[:, 4::9] == np.arange(6)).all()


@CUBES
def test_symmetry_commutes_with_moves(name: str) -> None:
    cube = pz.make(name)
    sym = cube_symmetries(cube)
    s = states(cube, 8, seed=1)
    for k in ALL:
        for a in range(cube.num_actions):
            act = np.full(len(s), a)
            left = sym.apply(cube.apply(s, act), k)
            right = cube.apply(sym.apply(s, k), np.full(len(s), sym.moves[k, a]))
            assert (left == right).all(), (k, a)
        assert sorted(sym.moves[k].tolist()) == list(range(cube.num_actions))
        # inverse moves map to inverse moves
        assert (sym.moves[k, cube.inverse_action] == cube.inverse_action[sym.moves[k]]).all()


def test_a_mirror_turns_clockwise_into_counter_clockwise() -> None:
    cube = pz.make("cube3")
    sym = cube_symmetries(cube)
    names = cube.action_names
    for k in ALL:
        for a in range(12):
            b = sym.moves[k, a]
            assert names[b].endswith("'") == (names[a].endswith("'") != bool(sym.mirrored[k]))
    mirror = 24  # x -> -x
    assert [names[b] for b in sym.moves[mirror]] == [
        "U'", "U", "D'", "D", "R'", "R", "L'", "L", "F'", "F", "B'", "B"
    ]  # fmt: skip


def test_batched_indices_match_one_at_a_time() -> None:
    cube = pz.make("cube3")
    sym = cube_symmetries(cube)
    s = states(cube, 48, seed=2)
    batched = sym.apply(s, ALL)
    for k in ALL:
        assert (batched[k] == sym.apply(s[k : k + 1], int(k))[0]).all()
    hist = np.stack([s, s[::-1]], axis=1)  # [48, 2, 54]: one symmetry per row, over its history
    out = sym.apply(hist, ALL)
    assert (out[:, 0] == batched).all() and (out[:, 1] == sym.apply(s[::-1], ALL)).all()


def test_policies_follow_the_moves() -> None:
    cube = pz.make("cube3")
    sym = cube_symmetries(cube)
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(12), size=48)
    mapped = sym.map_policy(p, ALL)
    for k in ALL:
        for a in range(12):
            assert mapped[k, sym.moves[k, a]] == p[k, a]
    assert np.allclose(sym.unmap_policy(mapped, ALL), p)


def test_cube2_distances_are_kept_by_every_symmetry() -> None:
    cube = pz.make("cube2")
    sym = cube_symmetries(cube)
    s = cube.scramble(np.random.default_rng(4), 64, (1, 16))
    d = distance(s)
    assert len(set(d.tolist())) > 5  # a spread of distances, not only easy ones
    for k in ALL:
        assert (distance(sym.apply(s, k)) == d).all(), k


def test_other_puzzles_and_bad_indices_are_refused() -> None:
    with pytest.raises(PuzzleError, match="cube puzzles"):
        cube_symmetries(pz.make("puzzle15"))
    assert symmetries_for(pz.make("puzzle15")) is None
    sym = cube_symmetries(pz.make("cube3"))
    with pytest.raises(PuzzleError, match="0..47"):
        sym.apply(pz.make("cube3").goal()[None], 48)
    with pytest.raises(PuzzleError, match="0..47"):
        sym.map_actions([0], -1)
    with pytest.raises(PuzzleError, match="54 stickers"):
        sym.apply(np.zeros((2, 24), np.uint8), 0)
