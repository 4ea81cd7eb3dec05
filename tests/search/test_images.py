"""A state's images (the cube's inverse and mirror images): exactly as far from solved, their
solutions map back to solutions of the state; the anytime search over a state and its images keeps
the shortest, mapped back and verified; the solver's ``images`` option is checked."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.search import bwas
from puzzlezero.search.images import anytime_images, with_images
from puzzlezero.search.result import SearchResult
from puzzlezero.solver import resolve_options, solve, solve_many, verify
from tests.clock import FakeClock


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


@pytest.mark.parametrize("name", ["puzzle8", "puzzle15"])
def test_a_sliding_puzzles_transpose_is_as_far_from_the_goal_and_its_solutions_map_back(name: str) -> None:
    p = make(name)
    dist = ball(p, 8)
    assert p.image_names == ("transpose",)
    assert (p.image("transpose", p.goal(), ()) == p.goal()).all()
    rng = np.random.default_rng(2)
    for state in p.scramble(rng, 30, (1, 8)):
        image = p.image("transpose", state, ())
        p.validate(image)
        assert (p.image("transpose", image, ()) == state).all()  # a mirror, twice, is nothing
        assert dist[image.tobytes()] == dist[state.tobytes()]
        back = p.from_image("transpose", descend(p, image, dist))
        assert len(back) == dist[state.tobytes()] and verify(p, state[None], [back]).all()


def test_the_transpose_mirrors_the_board_in_its_diagonal_and_renames_the_tiles() -> None:
    p = make("puzzle8")
    state = p.parse("1 2 3 4 5 6 7 0 8")  # tile 8 slid right: L solves it
    # the blank at (2, 1) goes to (1, 2); tile 8, at home in (2, 1), is renamed 6, at home in (1, 2):
    # the goal with tile 6 slid down, which U solves
    assert p.image("transpose", state, ()).tolist() == [1, 2, 3, 4, 5, 0, 7, 8, 6]
    assert p.format_moves(p.from_image("transpose", p.parse_moves("U"))) == ["L"]
    tiles = p.parse("8 6 7 2 5 4 3 0 1")
    # row r of the image is column r of the state, renamed (2 <-> 4, 3 <-> 7, 6 <-> 8)
    assert p.image("transpose", tiles, ()).tolist() == [6, 4, 7, 8, 5, 0, 3, 2, 1]


def test_the_mirror_turns_R_into_L_prime_and_the_inverse_reverses_the_moves() -> None:
    p = make("cube3")
    state = p.parse("R U")
    inverse = p.image("inverse", state, p.parse_moves("U' R'"))
    assert (inverse == p.parse("U' R'")).all()  # (R U)⁻¹ = U' R'
    assert p.format_moves(p.from_image("inverse", p.parse_moves("R U"))) == ["U'", "R'"]
    assert (p.image("mirror", state, ()) == p.parse("L' U'")).all()
    assert p.format_moves(p.from_image("mirror", p.parse_moves("U L"))) == ["U'", "R'"]


def test_puzzles_without_images_say_so() -> None:
    p = make("lightsout7")
    assert p.image_names == ()
    with pytest.raises(PuzzleError, match=r"lightsout7 has no image 'inverse' \(its images: none\)"):
        p.image("inverse", p.goal(), ())
    with pytest.raises(PuzzleError, match=r"puzzle8 has no image 'inverse' \(its images: transpose\)"):
        make("puzzle8").image("inverse", make("puzzle8").goal(), ())
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


def test_a_shorter_solution_of_the_inverse_is_mapped_back_and_kept(fake: FakeClock) -> None:
    fake.tick = 0.001  # each reading a millisecond later: the two answers come at two moments
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


def test_images_solve_real_cubes_with_bwas_and_every_solution_replays(fake: FakeClock) -> None:
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
    assert (
        resolve_options(tiles, stages=[(0.3, 100), (0.8, 1000)], options={"images": 1}).option("images") == 1
    )
    with pytest.raises(PuzzleError, match=r"needs at most 1 on puzzle15 \(its images: transpose\)"):
        resolve_options(tiles, stages=[(0.3, 100), (0.8, 1000)], options={"images": 2})
    with pytest.raises(PuzzleError, match="needs at most 0 on lightsout7"):
        resolve_options(
            make("lightsout7"), search="bwas", stages=[(0.3, 100), (0.8, 1000)], options={"images": 1}
        )
    with pytest.raises(PuzzleError, match="--images is an option of search bwas"):
        resolve_options(cube, search="gbfs", options={"images": 1})
    # without a schedule: as more instances of one search, the images made from the state alone
    assert resolve_options(tiles, search="beam", options={"images": 1}).option("images") == 1
    assert resolve_options(tiles, weight=0.8, batch=100, options={"images": 1}).option("images") == 1
    with pytest.raises(
        PuzzleError, match="with beam needs an anytime .* the inverse image is made from its solution"
    ):
        resolve_options(cube, search="beam", options={"images": 1})
    assert resolve_options(cube, search="beam").option("images") == 0  # cube3's default dropped
    with pytest.raises(PuzzleError, match="with bwas needs an anytime schedule of two or more"):
        resolve_options(tiles, stages=[(0.8, 100)], options={"images": 1})
    p35 = resolve_options(make("puzzle35"))  # its default: beam search over the board and its transpose
    assert (p35.search, p35.option("images")) == ("beam", 1)
    assert resolve_options(make("puzzle35"), search="bwas").option("images") == 0  # measured for beam
    assert resolve_options(make("puzzle35"), search="bwas", options={"images": 1}).option("images") == 1
    with pytest.raises(PuzzleError, match="needs the puzzle's own moves"):
        resolve_options(tiles, search="beam", options={"images": 1}, macros=[[0, 2]])


@pytest.mark.parametrize("search", ["beam", "bwas"])
def test_one_search_of_a_state_and_its_transpose_keeps_the_shorter(search: str) -> None:
    p = make("puzzle15")
    starts = p.scramble(np.random.default_rng(3), 6, depth=(60, 100))
    # greedy settings of a heuristic that does not depend on the batch (int8 networks do), so that
    # the guises' paths differ and each instance searches as it would alone
    kw = {"beam_width": 20} if search == "beam" else {"weight": 0.0, "batch": 5}
    kw |= {"search": search, "heuristic": "misplaced"}
    own = solve_many("puzzle15", starts, **kw)
    both = solve_many("puzzle15", starts, options={"images": 1}, **kw)
    transposes = np.stack([p.image("transpose", s, ()) for s in starts])
    alone = solve_many("puzzle15", transposes, **kw)
    assert any(a.length != t.length for a, t in zip(own, alone, strict=True))  # the guises differ
    for s, a, b, t in zip(starts, own, both, alone, strict=True):
        assert a.solved and b.solved and t.solved
        assert b.length == min(a.length, t.length)  # the shorter guise's path, mapped back
        assert p.is_goal(p.apply_moves(s, list(b.actions))[None])[0]  # (solve_many replays it too)
        assert b.nodes_generated == a.nodes_generated + t.nodes_generated  # the group's nodes
        lengths = [n for _, n in b.improvements]  # each guise's solution as it finished, if shorter
        assert lengths[-1] == b.length and lengths == sorted(set(lengths), reverse=True)
        assert set(lengths) <= {a.length, t.length}


def test_images_made_from_a_solution_need_a_schedule() -> None:
    cube = make("cube3")
    with pytest.raises(PuzzleError, match="made from a solution of the state"):
        with_images(lambda rows, groups: [], cube, cube.goals(1), ["inverse"])
    with pytest.raises(PuzzleError, match="has no image 'flip'"):
        with_images(lambda rows, groups: [], cube, cube.goals(1), ["flip"])


def test_a_beam_schedule_searches_the_state_alone_then_its_images_below_the_first_answer(
    fake: FakeClock,
) -> None:
    """As every schedule's: the first beam on the state alone, the image from the second beam,
    bounded by the first answer; the shortest comes back, an image's mapped back."""
    from puzzlezero.search.anytime import anytime_beam

    p = make("globe_3-4")
    state = p.scramble(np.random.default_rng(4), 1, 12)
    calls: list[tuple[int, int, list[float]]] = []
    found = {10: 5, 20: 3}  # each beam's answer length by its width

    def search(puzzle, starts, heuristic, *, beam_width, max_cost, **_):
        calls.append((beam_width, len(starts), np.broadcast_to(max_cost, len(starts)).tolist()))
        fake.sleep(1.0)
        return [SearchResult(True, (0,) * found[beam_width], 5, 1, 0.0, "solved") for _ in starts]

    out = anytime_images(
        search, p, state, None, (10, 20), images=["upside-down"], time_limit=10, schedule=anytime_beam
    )
    big = float(np.finfo(np.float32).max)
    assert calls == [(10, 1, [big]), (20, 2, [4.0, 4.0])]
    assert out[0].solved and len(out[0].actions) == 3
    assert [n for _, n in out[0].improvements] == [5, 3]
    with pytest.raises(PuzzleError, match="in one search"):  # its searches share no ledger
        anytime_images(
            search, p, state, None, (10, 20), images=["upside-down"], threads=2, schedule=anytime_beam
        )


def test_a_beam_over_a_globe_and_its_image_shows_its_first_answer_before_it_ends() -> None:
    """Through the solver: an anytime beam schedule over a globe and its image (``images``) passes
    each shorter answer on as its beam ends, each replayed, the last the answer."""
    from puzzlezero.solver import solve

    p = make("globe_3-4")
    state = p.scramble(np.random.default_rng(3), 1, 20)[0]
    shown = []
    r = solve(
        p, state, search="beam", beam_width=(50, 200), heuristic="learned-fp32", shortcut=0,
        fallback=False, time_limit=60, options={"images": 1}, on_solution=shown.append,
    )  # fmt: skip
    assert r.solved and shown and shown[0].seconds < r.seconds
    lengths = [s.length for s in shown]
    assert lengths == sorted(set(lengths), reverse=True) and lengths[-1] == r.length
    for s in shown:
        assert p.is_goal(p.apply_moves(state, p.parse_moves(list(s.solution)))[None])[0]


def test_solve_with_images_on_a_real_cube_replays(fake: FakeClock) -> None:
    # ten quarter turns, images by default; the fake clock stands still, so every stage of the
    # schedule runs to its node cap whatever the machine's speed (the default's 10 million: minutes)
    r = solve("cube3", "R U F' L D2 B R' U2", time_limit=4, max_nodes=300_000)
    assert r.solved and r.length <= 10 and r.improvements and r.search == "qstar"


def test_a_group_shares_its_bound_and_an_incumbent_bounds_the_first_stage(fake: FakeClock) -> None:
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


@pytest.mark.parametrize("name", ["bwas", "qstar"])
def test_a_members_solution_bounds_the_rest_of_its_group_within_the_search(name: str) -> None:
    """Two guises of one problem in one search: once the short one is solved, the other looks only
    for cheaper solutions (none exist), so it ends at once instead of solving 8 moves; a shared
    ledger carries the bound in and out."""
    from puzzlezero.search.anytime import GroupLedger
    from puzzlezero.search.qstar import q_from_value, qstar

    p = make("cube3")
    short, far = p.parse("R U"), p.parse("R U F' L D B R' U")
    h = lambda s: (s != p.goal()[None]).sum(axis=1).astype(np.float32) / 12  # noqa: E731
    search, fn = (bwas, h) if name == "bwas" else (qstar, q_from_value(p, h))
    both = np.stack([short, far])
    alone = search(p, both, fn, weight=0.5, batch_size=10, max_nodes=300_000)
    assert [r.status for r in alone] == ["solved", "solved"] and alone[1].length <= 8
    ledger = GroupLedger(2)
    ledger.cost[1] = 5.0
    kw = {"weight": 0.5, "batch_size": 10, "max_nodes": 300_000, "ledger": ledger}
    grouped = search(p, both, fn, groups=np.array([0, 0]), **kw)
    assert grouped[0].length == 2 and grouped[1].status == "exhausted"
    assert grouped[1].nodes_generated < alone[1].nodes_generated / 5
    assert ledger.cost.tolist() == [2.0, 5.0]  # lowered by the solution; the other group's entry untouched
    # a bound that comes in from outside: nothing of 5 moves or more is looked for
    (r,) = search(p, far[None], fn, groups=np.array([1]), **kw)
    assert r.status == "exhausted"
    with pytest.raises(PuzzleError, match="the ledger needs an entry for each of the 3 groups"):
        search(p, both, fn, groups=np.array([0, 2]), ledger=ledger)
    with pytest.raises(PuzzleError, match=r"groups needs one group number >= 0 per start \(2\)"):
        search(p, both, fn, groups=np.array([0]))
    with pytest.raises(PuzzleError, match="group_stop needs groups"):
        search(p, both, fn, group_stop=True)


@pytest.mark.parametrize("stop", [False, True])
def test_a_stage_ends_for_the_group_once_the_others_have_searched_as_long_again(stop: bool) -> None:
    """A solution of another member (a search in another thread, here reported from inside the
    heuristic) ends this member with ``group_stop`` once its time is up, and not without it; a
    solution found before this search began does not."""
    from puzzlezero.search import clock
    from puzzlezero.search.anytime import GroupLedger

    p = make("cube3")
    far = p.parse("R U F' L D B R' U")
    ledger = GroupLedger(1)
    ledger.solved(0, 100.0, started=clock.now(), now=clock.now())  # before: ignored
    calls = []

    def h(s: np.ndarray) -> np.ndarray:
        calls.append(len(s))
        if len(calls) == 3:  # the other member is solved two iterations in, at once: no time left
            now = clock.now()
            ledger.solved(0, 100.0, started=now, now=now)
        return (s != p.goal()[None]).sum(axis=1).astype(np.float32) / 12

    (r,) = bwas(
        p, far[None], h, weight=0.5, batch_size=10, groups=np.array([0]), ledger=ledger, group_stop=stop
    )
    assert r.status == ("exhausted" if stop else "solved")
    assert (r.iterations == 3) if stop else r.length <= 8


def test_images_in_two_threads_deal_out_the_members_and_raise_a_threads_error(fake: FakeClock) -> None:
    import threading
    from contextlib import contextmanager

    p = make("cube3")
    starts = p.scramble(np.random.default_rng(3), 2, (6, 9))
    h = lambda s: (s != p.goal()[None]).sum(axis=1).astype(np.float32) / 8  # noqa: E731  misplaced stickers
    calls: list[tuple[str, int]] = []
    entered: list[int] = []

    def logged(*args, **kw):
        calls.append((threading.current_thread().name, len(args[1])))
        return bwas(*args, **kw)

    @contextmanager
    def context():
        entered.append(1)
        yield

    stages = [(0.0, 10), (0.5, 100)]
    results = anytime_images(
        logged,
        p,
        starts,
        h,
        stages,
        images=p.image_names,
        time_limit=60.0,
        max_nodes=200_000,
        threads=2,
        thread_context=context,
    )
    assert all(r.solved for r in results) and verify(p, starts, [r.actions for r in results]).all()
    # the first stage on the two cubes here (the greedy one leaves the first unsolved, so it gets no
    # images); then one thread the cubes and the second's mirror image, the other its two inverses
    assert calls[0] == ("MainThread", 2) and sorted(calls[1:]) == [("images-0", 3), ("images-1", 2)]
    assert entered == [1, 1]  # entered in each of the two threads (a network count is per thread)

    def failing(*args, **kw):
        if threading.current_thread().name == "images-1":
            raise PuzzleError("the search in the second thread failed")
        return bwas(*args, **kw)

    with pytest.raises(PuzzleError, match="second thread failed"):
        anytime_images(
            failing, p, starts, h, stages, images=p.image_names, time_limit=60.0, max_nodes=200_000, threads=2
        )
