"""A state's images (the cube's inverse and mirror images): exactly as far from solved, their
solutions map back to solutions of the state; the anytime search over a state and its images keeps
the shortest, mapped back and verified; the solver's ``images`` option is checked."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.search import bwas
from puzzlezero.search.images import anytime_images
from puzzlezero.search.result import SearchResult
from puzzlezero.solver import resolve_options, solve, verify


def ball(p, depth: int) -> dict[bytes, int]:
    """Every state within ``depth`` moves of the goal, with its distance (breadth-first search)."""
    dist = {p.goal().tobytes(): 0}
    frontier = p.goal()[None]
    for d in range(1, depth + 1):
        children = p.expand(frontier).reshape(-1, *p.state_shape)
        children, _ = p.unique(children)
        fresh = np.array([c.tobytes() not in dist for c in children])
        frontier = children[fresh]
        dist.update((c.tobytes(), d) for c in frontier)
    return dist


def descend(p, state: np.ndarray, dist: dict[bytes, int]) -> list[int]:
    """A shortest solution of ``state`` read off the distance table."""
    path = []
    while dist[state.tobytes()] > 0:
        children = p.expand(state[None])[0]
        a = next(a for a, c in enumerate(children) if dist.get(c.tobytes(), 99) < dist[state.tobytes()])
        path.append(a)
        state = children[a]
    return path


@pytest.mark.parametrize("name", ["cube3", "cube2", "cube3htm"])
def test_an_image_is_as_far_from_solved_and_its_shortest_solutions_map_back(name: str) -> None:
    p = make(name)
    dist = ball(p, 4)
    rng = np.random.default_rng(5)
    states = p.scramble(rng, 40, (1, 4))
    assert p.image_names == ("inverse", "mirror", "inverse-mirror")
    for state in states:
        known = descend(p, state, dist)
        # any solution makes the inverse, also a longer one: pad the shortest with a move and its undo
        padded = [0, int(p.inverse_action[0]), *known]
        for image_name in p.image_names:
            image = p.image(image_name, state, padded)
            assert dist.get(image.tobytes()) == len(known), image_name
            back = p.from_image(image_name, descend(p, image, dist))
            assert len(back) == len(known) and verify(p, state[None], [back]).all(), image_name


def test_the_mirror_turns_R_into_L_prime_and_the_inverse_reverses_the_moves() -> None:
    p = make("cube3")
    state = p.parse("R U")
    inverse = p.image("inverse", state, p.parse_moves("U' R'"))
    assert (inverse == p.parse("U' R'")).all()  # (R U)⁻¹ = U' R'
    assert p.format_moves(p.from_image("inverse", p.parse_moves("R U"))) == ["U'", "R'"]
    assert (p.image("mirror", state, ()) == p.parse("L' U'")).all()
    assert p.format_moves(p.from_image("mirror", p.parse_moves("U L"))) == ["U'", "R'"]


def test_puzzles_without_images_say_so() -> None:
    p = make("puzzle8")
    assert p.image_names == ()
    with pytest.raises(PuzzleError, match=r"puzzle8 has no image 'inverse' \(its images: none\)"):
        p.image("inverse", p.goal(), ())
    with pytest.raises(PuzzleError, match="cube3 has no image 'flip'"):
        make("cube3").from_image("flip", [0])


def _scripted(p, answers: dict[bytes, list[int]], calls: list[int]):
    """A search that 'finds' the solution scripted for each start, if it is cheaper than the bound."""

    def search(puzzle, starts, heuristic, *, max_cost, time_limit, **_):
        calls.append(len(starts))
        out = []
        for s, bound in zip(starts, np.broadcast_to(max_cost, len(starts)), strict=True):
            actions = answers.get(s.tobytes())
            ok = actions is not None and len(actions) <= bound
            out.append(
                SearchResult(ok, tuple(actions) if ok else (), 12, 1, 0.01, "solved" if ok else "no solution")
            )
        return out

    return search


def test_a_shorter_solution_of_the_inverse_is_mapped_back_and_kept() -> None:
    p = make("cube3")
    scramble = p.parse_moves("R U F' L D2")
    state = p.apply_moves(p.goal(), scramble)
    short = [int(a) for a in p.inverse_action[np.asarray(scramble)[::-1]]]
    long = [0, 1, 0, 1, *short]  # R R' R R' and then the short one: 10 moves
    inverse = p.image("inverse", state, long)
    calls: list[int] = []
    search = _scripted(p, {state.tobytes(): long, inverse.tobytes(): scramble}, calls)
    stages = [(0.1, 10), (0.5, 10)]
    (r,) = anytime_images(search, p, state[None], None, stages, images=("inverse", "mirror"), time_limit=10)
    assert calls == [1, 3]  # the state alone, then with its two images
    assert r.solved and list(r.actions) == short and verify(p, state[None], [r.actions]).all()
    assert [n for _, n in r.improvements] == [10, 6]
    assert r.nodes_generated == 4 * 12 and r.cost == 6
    # the superflip is its own inverse and its own mirror image: no image is searched twice
    flip = p.parse("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2")
    calls.clear()
    flip_path = list(
        p.inverse_action[
            np.asarray(p.parse_moves("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"))[::-1]
        ]
    )
    search = _scripted(p, {flip.tobytes(): flip_path}, calls)
    anytime_images(search, p, flip[None], None, stages, images=p.image_names, time_limit=10)
    assert calls == [1, 1]


def test_images_solve_real_cubes_with_bwas_and_every_solution_replays() -> None:
    p = make("cube3")
    starts = p.scramble(np.random.default_rng(3), 3, (6, 9))
    h = lambda s: (s != p.goal()[None]).sum(axis=1).astype(np.float32) / 8  # noqa: E731  misplaced stickers
    results = anytime_images(
        bwas, p, starts, h, [(0.0, 10), (0.5, 100)], images=p.image_names, time_limit=60.0, max_nodes=200_000
    )
    assert all(r.solved for r in results) and verify(p, starts, [r.actions for r in results]).all()
    lengths = [[n for _, n in r.improvements] for r in results]
    assert all(
        ls == sorted(ls, reverse=True) and len(r.actions) == ls[-1]
        for ls, r in zip(lengths, results, strict=True)
    )


def test_the_images_option_is_checked_and_a_default_is_dropped_where_it_cannot_apply() -> None:
    cube, tiles = make("cube3"), make("puzzle15")
    own = resolve_options(cube)
    assert own.option("images") == 3 and own.search == "qstar" and len(own.stages) > 1
    assert resolve_options(cube, weight=0.5, batch=1000).option("images") == 0  # one setting: no schedule
    assert resolve_options(cube, options={"images": 3}).option("images") == 3
    assert resolve_options(cube, options={"images": 0}).option("images") == 0
    with pytest.raises(
        PuzzleError, match=r"--images 4 with qstar needs at most 3 on cube3 \(its images: inverse"
    ):
        resolve_options(cube, options={"images": 4})
    with pytest.raises(PuzzleError, match="--images 1 with qstar needs an anytime schedule of two or more"):
        resolve_options(cube, weight=0.5, options={"images": 1})
    with pytest.raises(PuzzleError, match="needs at most 0 on puzzle15"):
        resolve_options(tiles, stages=[(0.3, 100), (0.8, 1000)], options={"images": 1})
    with pytest.raises(PuzzleError, match="--images is an option of search bwas and search qstar"):
        resolve_options(cube, search="beam", options={"images": 1})


def test_solve_with_images_on_a_real_cube_replays() -> None:
    r = solve("cube3", "R U F' L D2 B R' U2", time_limit=4)  # ten quarter turns; images by default
    assert r.solved and r.length <= 10 and r.improvements and r.search == "qstar"


def test_a_group_shares_its_bound_and_an_incumbent_bounds_the_first_stage() -> None:
    """Each stage of a group looks only below the cheapest solution any member has."""
    from puzzlezero.search.anytime import anytime

    p = make("cube3")
    a, b = p.parse("R U"), p.parse("F D")
    bounds: list[list[float]] = []

    def search(puzzle, starts, heuristic, *, max_cost, **_):
        bounds.append(np.broadcast_to(max_cost, len(starts)).tolist())
        lengths = {a.tobytes(): 10, b.tobytes(): 12}
        out = []
        for s, bound in zip(starts, bounds[-1], strict=True):
            n = lengths[s.tobytes()]
            ok = n <= bound
            out.append(SearchResult(ok, (0,) * n if ok else (), 5, 1, 0.0, "solved" if ok else "no solution"))
        return out

    both = np.stack([a, b])
    big = float(np.finfo(np.float32).max)
    anytime(search, p, both, None, [(0.1, 1), (0.5, 1)], time_limit=10, groups=np.array([0, 0]))
    assert bounds == [[big, big], [9.0, 9.0]]  # b's 12 moves do not bound the group: a's 10 do
    bounds.clear()
    anytime(search, p, both, None, [(0.1, 1)], time_limit=10, incumbent=np.array([8.0, np.inf]))
    assert bounds == [[7.0, big]]
    with pytest.raises(PuzzleError, match="one entry per start"):
        anytime(search, p, both, None, [(0.1, 1)], time_limit=10, groups=np.array([0]))
