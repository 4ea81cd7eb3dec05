"""Symmetries of permutation puzzles (the globes' and the cubes' images): every image is exactly as far from the
goal as its state (checked against breadth-first distances over whole small globes), a solution of
an image maps back to one of the state, candidates that are not symmetries are refused, and a
search over a globe and its images answers with replayed solutions."""

from __future__ import annotations

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle
from puzzlezero.puzzles.permutation.families import cube, globe
from puzzlezero.puzzles.permutation.symmetry import candidates, check
from tests.puzzles.test_permutation_definition import brute_force_distances


def small_globe(band_width: int, **changes: object) -> PermutationPuzzle:
    data = globe(1, 2, band_width=band_width)  # 2 rings of 4 sectors, 8 moves
    data.update(changes)
    return PermutationPuzzle(Definition.from_dict(data))


@pytest.mark.parametrize("band_width", [1, 2])
def test_every_image_of_every_state_is_exactly_as_far_from_the_goal(band_width: int) -> None:
    p = small_globe(band_width)
    dist = brute_force_distances(p)
    states = np.frombuffer(b"".join(dist), dtype=p.dtype).reshape(len(dist), -1)
    assert len(p.image_names) == (15 if band_width == 1 else 7)
    for name in p.image_names:
        sym = p._symmetry(name)
        images = sym.image(states)
        assert [dist[y.tobytes()] for y in images] == list(dist.values()), name
        assert len(np.unique(images, axis=0)) == len(states)  # one-to-one


#: images of each: the globes' turns, flips and mirrors; the cubes' 23 rotations and 24 mirrors
IMAGES = {"globe_6-4": 15, "globe_2-6": 15, "globe_1-8": 31, "globe_3-4": 15}
IMAGES |= {"cube_2-2-2": 47, "cube_3-3-3": 47, "cube_4-4-4": 47}


@pytest.mark.parametrize("name", list(IMAGES))
def test_a_move_on_the_image_is_the_mapped_move_on_the_state(name: str) -> None:
    p = pz.make(name)
    rng = np.random.default_rng(0)
    assert len(p.image_names) == IMAGES[name]
    assert len({p._symmetry(n).sigma.tobytes() for n in p.image_names}) == IMAGES[name]  # all different
    for image in p.image_names:
        assert p.is_goal(p.image(image, p.goal(), [])[None])[0]
        s = p.scramble(rng, 1, 50)[0]
        w = [int(a) for a in rng.integers(0, p.num_actions, 25)]
        on_state = p.image(image, p.apply_moves(s, p.from_image(image, w)), [])
        np.testing.assert_array_equal(on_state, p.apply_moves(p.image(image, s, []), w))


def test_a_scramble_is_undone_through_its_image() -> None:
    p = pz.make("globe_6-4")
    scramble = p.parse_moves("r0 f3 r5' f0 r6 f7 r2")
    s = p.apply_moves(p.goal(), scramble)
    undo = [int(p.inverse_action[a]) for a in reversed(scramble)]
    for image in p.image_names:
        sym = p._symmetry(image)
        on_image = [int(np.flatnonzero(sym.moves == a)[0]) for a in undo]  # what undo is there
        assert p.is_goal(p.apply_moves(p.image(image, s, []), on_image)[None])[0]
        assert p.is_goal(p.apply_moves(s, p.from_image(image, on_image))[None])[0]


def test_candidates_that_are_not_symmetries_are_refused() -> None:
    p = small_globe(1)
    perms, costs = p.perms, np.asarray(p.action_costs)
    swap = np.arange(8)
    swap[[0, 1]] = [1, 0]  # two positions exchanged: r0 is no move once conjugated
    assert check(swap, perms, costs, p._goal, p.num_values) is None
    assert check(np.zeros(8, dtype=np.intp), perms, costs, p._goal, p.num_values) is None  # no permutation
    # a goal no turn recolours (ring 0 A A A B turned is A A B A) nor upside down (A would be C
    # and D): only the mirror that keeps sector 3 in place is left
    lopsided = small_globe(1, goal=["A", "A", "A", "B", "C", "D", "E", "F"])
    assert lopsided.image_names == ("mirror-turn2",)
    # a mirror turns r0 into r0': with r0 dearer than r0', no mirror image keeps the costs
    dear = small_globe(1, costs={"r0": 2})
    assert not [n for n in dear.image_names if "mirror" in n]
    assert "upside-down" not in dear.image_names  # nor upside down: r0 becomes r1, which costs 1
    assert "turn1" in dear.image_names  # a turn keeps every ring's moves
    assert not candidates({"kind": "globe", "rows": 1, "columns": 2}, 9)  # a drawing of other positions
    with pytest.raises(PuzzleError, match="no image 'inverse'"):
        p.image("inverse", p.goal(), [])


def test_a_puzzle_whose_drawing_names_no_symmetry_has_no_images() -> None:
    assert pz.make("wreath_6-6").image_names == ()
    alternating = PermutationPuzzle(Definition.from_dict(cube(3, "alternating")))
    assert alternating.image_names == ()  # no turn keeps its two-colour pattern up to colours
    assert not candidates({"kind": "cube", "size": 3}, 6 * 4 * 4)  # a drawing of other positions
    assert not candidates({"kind": "cube", "size": True}, 6)


def test_a_cube_image_turns_the_moves_as_the_hand_turns_the_cube() -> None:
    p = pz.make("cube_3-3-3")
    assert p.image_names[:3] == ("mirror", "y2", "x2")  # what --images 1..3 take
    # the left-right mirror keeps the front face and turns it the other way; a half turn about the
    # vertical puts the back face in front (f2 seen from the back is f0 the other way round)
    assert p.format_moves(p.from_image("mirror", p.parse_moves("f0 r1 d2"))) == ["f0'", "r1", "d2'"]
    assert p.format_moves(p.from_image("mirror", p.parse_moves("r0 r2"))) == ["r2", "r0"]  # sides swap
    assert p.format_moves(p.from_image("y2", p.parse_moves("f0 r1 d2"))) == ["f2'", "r1'", "d2"]


def test_every_image_of_a_ball_around_the_2x2x2_goal_is_that_ball() -> None:
    p = pz.make("cube_2-2-2")
    layers = [{p.goal().tobytes()}]
    seen = set(layers[0])
    for _ in range(3):  # the states 1, 2 and 3 quarter turns from the goal, by breadth-first search
        frontier = np.frombuffer(b"".join(layers[-1]), dtype=p.dtype).reshape(len(layers[-1]), -1)
        children = {c.tobytes() for c in p.expand(frontier).reshape(-1, frontier.shape[1])} - seen
        seen |= children
        layers.append(children)
    for name in p.image_names:
        sym = p._symmetry(name)
        for layer in layers[1:]:
            states = np.frombuffer(b"".join(layer), dtype=p.dtype).reshape(len(layer), -1)
            assert {y.tobytes() for y in sym.image(states)} == layer, name


def test_one_beam_over_a_globe_and_its_image_keeps_the_shorter_and_replays() -> None:
    from puzzlezero.solver import solve_many

    p = pz.make("globe_3-4")
    starts = p.scramble(np.random.default_rng(7), 3, depth=(30, 60))
    # the fp32 network, which does not depend on the batch (int8 does), so that each instance
    # searches as it would alone; a narrow beam, whose answers differ most between the guises
    kw = {"search": "beam", "beam_width": 50, "heuristic": "learned-fp32", "shortcut": 0, "fallback": False}
    own = solve_many("globe_3-4", starts, **kw)
    both = solve_many("globe_3-4", starts, options={"images": 1}, **kw)
    images = np.stack([p.image("upside-down", s, ()) for s in starts])
    alone = solve_many("globe_3-4", images, **kw)
    assert any(a.length != t.length for a, t in zip(own, alone, strict=True))  # the guises differ
    for s, a, b, t in zip(starts, own, both, alone, strict=True):
        assert a.solved and b.solved and t.solved
        assert b.length == min(a.length, t.length)
        assert p.is_goal(p.apply_moves(s, list(b.actions))[None])[0]


def test_globe_6_4_searches_its_upside_down_image_and_ends_at_the_goals_ball_by_default() -> None:
    from puzzlezero.solver.resolve import resolve_options

    o = resolve_options(pz.make("globe_6-4"))
    assert (o.search, o.beam_width, o.option("images")) == ("beam", (1000, 3000), 1)
    assert o.option("goal_ball") == 2_000_000  # the beams end at the goal's ball
    assert pz.make("globe_6-4").image_names[0] == "upside-down"
    assert resolve_options(pz.make("globe_2-6")).option("images") == 0
