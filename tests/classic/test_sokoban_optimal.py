"""Sokoban's optimal solver against breadth-first search over every state of small levels: the
same lengths, solutions that replay to the goal, a heuristic never above the true distance, and
bounds that stop the search by name (the time on a fake clock)."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic.optimal import optimal_length, pdb_heuristic, solve_optimal
from puzzlezero.classic.optimal import sokoban as opt
from puzzlezero.errors import InvalidStateError, PuzzleError
from puzzlezero.puzzles.sokoban import BOX, TARGET, WALL
from puzzlezero.puzzles.sokoban.deadlock import dead_squares
from puzzlezero.search import bwas, clock
from tests.clock import FakeClock

LEVELS = {
    "open room, two boxes": """
        #######
        #     #
        # $$  #
        #@ .. #
        #     #
        #######""",
    "three boxes, walk round": """
        ######
        #.  .#
        # $$ #
        #@$ .#
        #    #
        ######""",
    "pillars and a corridor": """
        ########
        #   #  #
        # $    #
        # #$## #
        #@  . .#
        ########""",
    "two targets in a column": """
        #######
        #.    #
        #.#$# #
        #  $  #
        #@    #
        #######""",
}


@pytest.fixture(scope="module")
def puzzle():  # noqa: ANN201
    return make("sokoban")


def state_space(p, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """Every state reachable from ``start`` and its distance to the nearest goal (``-1``: none),
    by breadth-first search forward over the puzzle's moves and then backward from the goals."""
    ids = {start.tobytes(): 0}
    states, edges = [start], []
    frontier = [0]
    while frontier:
        children = p.expand(np.stack([states[i] for i in frontier]))
        nxt = []
        for i, kids in zip(frontier, children, strict=True):
            for kid in kids:
                key = kid.tobytes()
                if key not in ids:
                    ids[key] = len(states)
                    states.append(kid.copy())
                    nxt.append(ids[key])
                edges.append((i, ids[key]))
        frontier = nxt
    all_states = np.stack(states)
    parents: list[list[int]] = [[] for _ in states]
    for a, b in edges:
        parents[b].append(a)
    dist = np.full(len(states), -1, dtype=np.int64)
    layer = np.flatnonzero(p.is_goal(all_states)).tolist()
    dist[layer] = 0
    while layer:
        nxt = []
        for b in layer:
            for a in parents[b]:
                if dist[a] < 0:
                    dist[a] = dist[b] + 1
                    nxt.append(a)
        layer = nxt
    return all_states, dist


@pytest.fixture(scope="module")
def spaces(puzzle) -> dict[str, tuple[np.ndarray, np.ndarray]]:  # noqa: ANN001
    return {name: state_space(puzzle, puzzle.parse(text)) for name, text in LEVELS.items()}


def replays(p, state: np.ndarray, actions) -> bool:  # noqa: ANN001
    return bool(p.is_goal(p.apply_moves(state, list(actions))[None])[0])


def test_the_state_spaces_hold_solvable_and_dead_states(spaces) -> None:  # noqa: ANN001
    for name, (states, dist) in spaces.items():
        assert dist[0] > 0 and (dist < 0).any() and len(states) > 100, name


@pytest.mark.parametrize("name", list(LEVELS))
def test_lengths_equal_breadth_first_search(puzzle, spaces, name: str) -> None:  # noqa: ANN001
    states, dist = spaces[name]
    rng = np.random.default_rng(0)
    solvable = np.flatnonzero(dist > 0)
    picks = {0, int(solvable[np.argmax(dist[solvable])])} | set(rng.choice(solvable, 25).tolist())
    for i in sorted(picks):
        r = opt.solve_sokoban(puzzle, states[i])
        assert r.status == "solved" and r.length == dist[i], (name, i)
        assert replays(puzzle, states[i], r.actions)


@pytest.mark.parametrize("name", list(LEVELS))
def test_unsolvable_states_are_never_solved(puzzle, spaces, name: str) -> None:  # noqa: ANN001
    states, dist = spaces[name]
    for i in np.random.default_rng(1).choice(np.flatnonzero(dist < 0), 15):
        try:
            r = opt.solve_sokoban(puzzle, states[i])
        except InvalidStateError as e:
            assert "cannot be solved" in str(e)
        else:
            assert r.status == "exhausted" and r.actions == ()


@pytest.mark.parametrize("name", list(LEVELS))
def test_the_heuristic_is_admissible_on_every_state(puzzle, spaces, name: str) -> None:  # noqa: ANN001
    states, dist = spaces[name]
    h = pdb_heuristic(puzzle)(states)
    assert h.dtype == np.float32
    live = dist >= 0
    assert (h[live] <= dist[live]).all()
    assert (h[dist == 0] == 0).all() and (h[dist > 0] > 0).all()
    assert (dist[h >= opt.DEAD_END] < 0).all()  # only unsolvable states are called dead ends
    assert (h[~live] >= opt.DEAD_END).mean() > 0.5  # and most of those are seen
    one = [opt.push_lower_bound(puzzle, s) for s in states[:50]]
    np.testing.assert_array_equal(one, h[:50])


def test_the_heuristic_takes_states_of_several_levels_in_one_batch(puzzle, spaces) -> None:  # noqa: ANN001
    h = pdb_heuristic(puzzle)
    parts = [states[:40] for states, _ in spaces.values()]
    mixed = np.concatenate(parts)[np.random.default_rng(3).permutation(40 * len(parts))]
    np.testing.assert_array_equal(h(mixed), [opt.push_lower_bound(puzzle, s) for s in mixed])
    bad = spaces["three boxes, walk round"][0][:2].copy()
    bad[1, np.flatnonzero(bad[1] & BOX)[0]] &= ~np.uint8(BOX)
    with pytest.raises(InvalidStateError, match="state 1 has 2 boxes and 3 targets"):
        h(bad)


def test_push_distances_are_zero_on_targets_and_dead_where_no_target_is_reached(puzzle) -> None:  # noqa: ANN001
    for text in LEVELS.values():
        s = puzzle.parse(text)
        pdist = opt.push_distances(s, puzzle.height, puzzle.width)
        targets = np.flatnonzero(s & TARGET)
        assert (pdist[np.arange(len(targets)), targets] == 0).all()
        floor = s != WALL
        unreached = (pdist >= opt.DEAD_END).all(axis=0)
        dead = dead_squares(s[None], puzzle.height, puzzle.width)[0]
        np.testing.assert_array_equal(unreached & floor, dead)


def test_the_walk_to_the_first_push_counts(puzzle) -> None:  # noqa: ANN001
    s = puzzle.parse("#######\n#.  $@#\n#######")
    r = opt.solve_sokoban(puzzle, s)
    assert [puzzle.action_names[a] for a in r.actions] == ["L", "L", "L"]
    # the box must go left, so the agent first walks round it: down, right, right, up
    s = puzzle.parse("#######\n#. @$ #\n#     #\n#######")
    r = opt.solve_sokoban(puzzle, s)
    assert "".join(puzzle.action_names[a] for a in r.actions) == "DRRULLL"
    assert opt.push_lower_bound(puzzle, s) == 7  # 3 pushes + a walk of 4 (pushing right is a dead end)


def test_the_registry_uses_it(puzzle) -> None:  # noqa: ANN001
    s = puzzle.parse(LEVELS["open room, two boxes"])
    r = solve_optimal(puzzle, s)
    assert r == opt.solve_sokoban(puzzle, s) and optimal_length(puzzle, s) == r.length
    assert solve_optimal(puzzle.pruned(), s).length == r.length
    assert optimal_length(puzzle, puzzle.goal()) == 0


def test_a_star_with_the_heuristic_finds_the_same_lengths(puzzle, spaces) -> None:  # noqa: ANN001
    """The project's BWAS with weight 1 and batch 1 is A*: with this heuristic it finds the same
    optimal lengths, step by step instead of push by push."""
    h = pdb_heuristic(puzzle)
    for name, (states, dist) in spaces.items():
        picks = np.random.default_rng(2).choice(np.flatnonzero(dist > 0), 5)
        results = bwas(puzzle, states[picks], h, weight=1.0, batch_size=1, max_nodes=None)
        assert [r.length for r in results] == dist[picks].tolist(), name


# --------------------------------------------------------------------------- bounds
BIG = """
    ##########
    #   #    #
    # $  $ . #
    #  ##  . #
    # $  #   #
    #  $   . #
    ##   ##. #
    #@       #
    ##########"""


def test_node_limit_stops_it_by_name(puzzle) -> None:  # noqa: ANN001
    r = opt.solve_sokoban(puzzle, puzzle.parse(BIG), max_nodes=50)
    assert r.status == "node limit" and not r.solved and r.actions == () and r.length is None
    assert 50 <= r.nodes_generated < 50 + 16  # the last expansion adds at most 4 pushes a box


def test_memory_limit_stops_it_by_name(puzzle) -> None:  # noqa: ANN001
    s = puzzle.parse(BIG)
    full = opt.solve_sokoban(puzzle, s)
    assert full.solved and full.iterations > 200
    r = opt.solve_sokoban(puzzle, s, max_memory=opt._Search.bytes_for(4, 128))
    assert r.status == "memory limit" and not r.solved
    assert r.iterations < full.iterations
    with pytest.raises(PuzzleError, match="max_memory of 100 bytes holds no search"):
        opt.solve_sokoban(puzzle, s, max_memory=100)


def test_the_node_table_grows_within_the_memory_bound(puzzle, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    s = puzzle.parse(BIG)
    want = opt.solve_sokoban(puzzle, s)
    monkeypatch.setattr(opt, "_FIRST_CAPACITY", 16)
    r = opt.solve_sokoban(puzzle, s)
    assert r == want and r.length == want.length


@pytest.fixture
def fake(fake: FakeClock, monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The fake clock, read by the compiled loop after every expansion."""
    monkeypatch.setattr(opt, "_CHUNK", 1)
    return fake


def test_time_limit_and_deadline_stop_it_by_name(puzzle, fake: FakeClock) -> None:  # noqa: ANN001
    s = puzzle.parse(BIG)
    fake.tick = 1.0  # every reading of the clock one second later
    r = opt.solve_sokoban(puzzle, s, time_limit=5.0)
    assert r.status == "time limit" and not r.solved and r.seconds >= 5.0
    assert r.iterations == 5  # the clock read at the start (0 s), then after each expansion (1 s, ...)
    fake.tick = 0.0
    r = solve_optimal(puzzle, s, deadline=clock.now() - 1.0)
    assert r.status == "time limit" and r.iterations == 1
    r = opt.solve_sokoban(puzzle, s, time_limit=1.0)  # time that never passes does not stop it
    assert (
        r.solved and r.length == opt.solve_sokoban(puzzle, s, time_limit=1.0, deadline=clock.now() + 1).length
    )


# --------------------------------------------------------------------------- bad input
def test_bad_input_gets_named_errors(puzzle) -> None:  # noqa: ANN001
    s = puzzle.parse(LEVELS["open room, two boxes"])
    with pytest.raises(PuzzleError, match="max_nodes must be positive"):
        opt.solve_sokoban(puzzle, s, max_nodes=0)
    with pytest.raises(PuzzleError, match="time_limit must be positive"):
        opt.solve_sokoban(puzzle, s, time_limit=-1.0)
    with pytest.raises(InvalidStateError, match="the box at row 1 col 1 stands where no push brings it"):
        opt.solve_sokoban(puzzle, puzzle.parse("#####\n#$ .#\n# @ #\n#####"))
    with pytest.raises(InvalidStateError, match="its boxes are stuck"):
        opt.solve_sokoban(puzzle, puzzle.parse("######\n#    #\n# $$ #\n# $$ #\n#@...#\n#   .#\n######"))
    bad = s.copy()
    bad[np.flatnonzero(bad & BOX)[0]] &= ~np.uint8(BOX)
    with pytest.raises(InvalidStateError, match="the level has 1 box but 2 targets"):
        opt.solve_sokoban(puzzle, bad)
    with pytest.raises(PuzzleError, match="takes Sokoban levels, not lightsout7"):
        opt.solve_sokoban(make("lightsout7"), np.zeros(49, dtype=np.uint8))
