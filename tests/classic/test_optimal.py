"""Optimal solvers and pattern databases: admissibility against exhaustive BFS, optimality against
known costs, GF(2) minimality against brute force, and table files that are checked, not trusted.

Small tables only (8-puzzle, 5-5-5 15-puzzle, 4-piece cube patterns); the big ones (15-puzzle 7-8,
Korf's cube set) are in the ``slow`` tests, which reuse an existing cache when PUZZLEZERO_CACHE
points at it.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.classic.optimal import cube_model as cm
from puzzlezero.classic.optimal import optimal_length, pdb_heuristic, sliding_ida, solve_optimal
from puzzlezero.classic.optimal.cube_ida import solve_cube
from puzzlezero.classic.optimal.cube_pdb import KORF, CubePattern, load_cube_pdb
from puzzlezero.classic.optimal.lightsout import gf2_system, min_presses, toggle_matrix
from puzzlezero.classic.optimal.perm import num_ranks, rank, unrank
from puzzlezero.classic.optimal.sliding_ida import solve_sliding
from puzzlezero.classic.optimal.sliding_pdb import build_pattern, load_sliding_pdb, partition_name
from puzzlezero.classic.optimal.tables import table_path
from puzzlezero.errors import InvalidStateError, PuzzleError, UnknownNameError
from puzzlezero.puzzles.lightsout import LightsOut
from puzzlezero.storage import save_npz
from tests.conftest import BENCH_DIR, load_bench, needs

P555 = ((1, 2, 3, 4, 5), (6, 7, 8, 9, 10), (11, 12, 13, 14, 15))
SMALL_CUBE = (CubePattern("corner", (0, 1, 2, 3)), CubePattern("edge", (0, 1, 2, 3)),
              CubePattern("edge", (4, 5, 6, 7)))  # fmt: skip


def replays(puzzle, state, actions) -> bool:  # noqa: ANN001
    return bool(puzzle.is_goal(puzzle.apply_moves(state, actions)[None])[0])


# --------------------------------------------------------------------------- ranking
def test_rank_is_a_bijection_onto_its_range() -> None:
    n, k = 7, 4
    seen = set()
    q = np.empty(k, dtype=np.int64)
    for perm in itertools.permutations(range(n), k):
        r = int(rank(np.array(perm, dtype=np.int64), k, n))
        unrank(np.int64(r), k, n, q)
        assert tuple(q) == perm
        seen.add(r)
    assert seen == set(range(num_ranks(n, k)))


# --------------------------------------------------------------------------- sliding puzzles
@pytest.fixture(scope="module")
def puzzle8_distances() -> tuple[np.ndarray, np.ndarray]:
    """Every 8-puzzle state with its exact distance, by breadth-first search from the goal."""
    p = make("puzzle8")
    base = 9 ** np.arange(9, dtype=np.int64)
    frontier = p.goals(1)
    seen = frontier.astype(np.int64) @ base
    states, dists = [frontier], [np.zeros(1, dtype=np.int64)]
    while len(frontier):
        keys = np.unique(p.expand(frontier).reshape(-1, 9).astype(np.int64) @ base)
        keys = keys[~np.isin(keys, seen, assume_unique=True)]
        seen = np.concatenate([seen, keys])
        frontier = ((keys[:, None] // base) % 9).astype(np.uint8)
        states.append(frontier)
        dists.append(np.full(len(keys), len(dists)))
    return np.concatenate(states), np.concatenate(dists)


def test_bfs_fixture_covers_the_8_puzzle(puzzle8_distances) -> None:  # noqa: ANN001
    states, dist = puzzle8_distances
    assert len(states) == 181_440 and dist.max() == 31  # half of 9!, diameter 31


def test_8_puzzle_pdb_is_admissible_everywhere(puzzle8_distances) -> None:  # noqa: ANN001
    states, dist = puzzle8_distances
    h = load_sliding_pdb(3).values(states)  # default 4-4 with reflection
    assert (h <= dist).all()
    assert h.mean() > 0.7 * dist.mean()  # informative, not zero
    assert (h[dist == 0] == 0).all()


def test_a_pattern_of_all_tiles_is_the_exact_distance(puzzle8_distances) -> None:  # noqa: ANN001
    states, dist = puzzle8_distances
    exact = load_sliding_pdb(3, ((1, 2, 3, 4, 5, 6, 7, 8),), reflect=False)
    np.testing.assert_array_equal(exact.values(states), dist)


def _pattern_by_definition(size: int, tiles: tuple[int, ...]) -> np.ndarray:
    """An additive pattern database by its definition, in plain Python: a 0-1 breadth-first
    search over (cells of the pattern tiles, blank cell) from the goal, where sliding a pattern
    tile costs 1 and any other tile 0; an entry is the least cost over the blank's cells."""
    n, k = size * size, len(tiles)
    start = (tuple(t - 1 for t in tiles), n - 1)
    dist = {start: 0}
    queue = collections.deque([start])
    while queue:
        cells, blank = state = queue.popleft()
        r, c = divmod(blank, size)
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if not (0 <= rr < size and 0 <= cc < size):
                continue
            b = rr * size + cc
            cost = int(b in cells)
            child = (tuple(blank if x == b else x for x in cells), b)
            if dist.get(child, 1 << 30) > dist[state] + cost:
                dist[child] = dist[state] + cost
                (queue.append if cost else queue.appendleft)(child)
    table = np.full(num_ranks(n, k), 255, dtype=np.uint8)
    for (cells, _), d in dist.items():
        r = rank(np.array(cells, dtype=np.int64), k, n)
        table[r] = min(table[r], d)
    return table


@pytest.mark.parametrize(
    ("size", "tiles", "specialized"),
    [(3, (1, 2, 3, 4), False), (3, (8, 4, 6), False), (4, (6, 7, 10), False), (4, (15, 1, 13), False),
     (5, (7, 1), True), (6, (8, 15), True)],
)  # fmt: skip
def test_pattern_database_build_matches_its_definition(
    size: int, tiles: tuple[int, ...], specialized: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The multi-threaded breadth-first build (bit planes, odometer ranks, atomic updates) gives
    exactly the table of the definition, on one thread and on several, with the kernel for any
    shape and with one compiled for the shape (as big tables get); 6x6 boards take two words a
    placement."""
    from puzzlezero.classic.optimal import sliding_pdb_build

    if specialized:
        monkeypatch.setattr(sliding_pdb_build, "_SPECIALIZE_FROM", 0)
    expected = _pattern_by_definition(size, tiles)
    assert (expected < 255).all() and expected.max() >= 4  # connected, and not trivial
    for threads in (1, 3):
        np.testing.assert_array_equal(build_pattern(size, tiles, threads=threads), expected)


def test_reflection_shares_the_mirror_pattern_table() -> None:
    mirror = ((2, 3, 6), (4, 7, 8), (1, 5))  # (4, 7, 8) is the mirror image of (2, 3, 6)
    pdb = load_sliding_pdb(3, mirror)
    assert pdb.table.size == num_ranks(9, 3) + num_ranks(9, 2)  # two tables for three patterns
    p = make("puzzle8")
    s = p.scramble(np.random.default_rng(3), 50, 30)
    ref = load_sliding_pdb(3, mirror, reflect=False).values(s)
    assert (pdb.values(s) >= ref).all()


def test_ida_matches_bfs_on_random_8_puzzle_states(puzzle8_distances) -> None:  # noqa: ANN001
    states, dist = puzzle8_distances
    p = make("puzzle8")
    rng = np.random.default_rng(0)
    for i in rng.choice(len(states), 40, replace=False):
        r = solve_optimal(p, states[i])
        assert r.solved and r.length == dist[i] and replays(p, states[i], r.actions)


def test_ida_finds_the_known_optimum_on_15_puzzle_benchmarks() -> None:
    p = make("puzzle15")
    cases = sorted(load_bench("puzzle15")["cases"], key=lambda c: c["optimal_length"])[:4]
    pdb = load_sliding_pdb(4, P555)
    for c in cases:
        s = np.array(c["tiles"], dtype=np.uint8)
        r = solve_sliding(p, s, pdb=pdb, time_limit=60)
        assert r.length == c["optimal_length"] and replays(p, s, r.actions)


def test_ida_agrees_with_bfs_at_small_depth_on_the_15_puzzle() -> None:
    p = make("puzzle15")
    pdb = load_sliding_pdb(4, P555)
    start = p.scramble(np.random.default_rng(5), 1, 14)[0]
    # breadth-first search from the start up to depth 14
    frontier, seen, depth = start[None], {start.tobytes()}, 0
    while not p.is_goal(frontier).any():
        depth += 1
        kids = p.expand(frontier).reshape(-1, 16)
        fresh = [k for k in np.unique(kids, axis=0) if k.tobytes() not in seen]
        seen.update(k.tobytes() for k in fresh)
        frontier = np.array(fresh)
    assert solve_sliding(p, start, pdb=pdb).length == depth
    assert (pdb.values(start[None]) <= depth).all()


def _kernel_runs(p, pdb, states):  # noqa: ANN001, ANN202
    runs = (solve_sliding(p, s, pdb=pdb, max_nodes=300_000) for s in states)
    return [(r.status, r.actions, r.nodes_generated, r.iterations) for r in runs]


def test_c_and_numba_kernels_search_identically(monkeypatch) -> None:  # noqa: ANN001
    """Same algorithm, same protocol: the same path, node count and iterations, also when the node
    limit stops a search in the middle of an iteration."""
    if sliding_ida.kernel_name() != "c":
        pytest.skip("the C kernel was not compiled in this install")
    p = make("puzzle15")
    pdb = load_sliding_pdb(4, P555)
    states = [np.array(c["tiles"], dtype=np.uint8) for c in load_bench("puzzle15")["cases"][:3]]
    compiled = _kernel_runs(p, pdb, states)
    monkeypatch.setenv(sliding_ida.NO_C_KERNEL_ENV, "1")
    sliding_ida._c_kernel.cache_clear()
    try:
        assert sliding_ida.kernel_name() == "numba"
        assert _kernel_runs(p, pdb, states) == compiled
    finally:
        monkeypatch.delenv(sliding_ida.NO_C_KERNEL_ENV)
        sliding_ida._c_kernel.cache_clear()
    statuses = {status for status, *_ in compiled}
    assert statuses == {"solved", "node limit"}


def test_an_optimal_sliding_solve_does_not_import_numba_or_torch() -> None:
    """A one-shot ``solve puzzle15 ... --search optimal`` must start fast: with the C kernel it
    imports neither numba (about 0.8 s with its first-call set-up) nor torch."""
    if sliding_ida.kernel_name() != "c":
        pytest.skip("the C kernel was not compiled in this install")
    load_sliding_pdb(3)  # the default 8-puzzle tables exist (built in seconds if not)
    code = (
        "import sys, numpy as np\n"
        "from puzzlezero.cli.main import main\n"
        "sys.argv = ['puzzlezero', 'solve', 'puzzle8', '8 6 7 2 5 4 3 0 1', '--search', 'optimal', '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('numba', 'torch') if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    solution = json.loads(out.splitlines()[0])
    assert solution["solved"] and solution["length"] == 31  # the 8-puzzle's hardest state
    assert out.splitlines()[-1] == "[]"


def test_limits_and_bad_states() -> None:
    p = make("puzzle15")
    pdb = load_sliding_pdb(4, P555)
    hard = np.array(load_bench("puzzle15")["cases"][1]["tiles"], dtype=np.uint8)  # 55 moves
    r = solve_sliding(p, hard, pdb=pdb, max_nodes=1000)
    assert r.status == "node limit" and not r.solved and r.actions == () and r.nodes_generated <= 1001
    swapped = p.goal().copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    with pytest.raises(InvalidStateError, match="parity"):
        solve_optimal(p, swapped)
    with pytest.raises(PuzzleError):
        solve_optimal(p, np.zeros(16, dtype=np.uint8))
    assert solve_optimal(p, p.goal()).actions == () and optimal_length(p, p.goal()) == 0


def test_pdb_heuristic_is_batched_and_zero_at_the_goal() -> None:
    p = make("puzzle8")
    h = pdb_heuristic(p)
    s = p.scramble(np.random.default_rng(1), 64, 25)
    out = h(s)
    assert out.dtype == np.float32 and out.shape == (64,)
    np.testing.assert_array_equal(out, np.concatenate([h(x[None]) for x in s]))
    assert h(p.goals(2)).tolist() == [0.0, 0.0]


# --------------------------------------------------------------------------- table files
def test_corrupt_or_other_version_tables_are_rebuilt(capsys) -> None:  # noqa: ANN001
    part = ((1, 2, 3), (4, 5, 6), (7, 8))
    good = load_sliding_pdb(3, part).table.copy()
    path = table_path(partition_name(3, part))
    for spoil in ("garbage", "version"):
        if spoil == "garbage":
            path.write_bytes(b"not a zip file at all")
        else:
            save_npz(path, {"kind": "sliding-additive-pdb", "version": 0}, table=np.zeros(3, np.uint8))
        load_sliding_pdb.cache_clear()
        capsys.readouterr()
        np.testing.assert_array_equal(load_sliding_pdb(3, part).table, good)
        assert "rebuilding" in capsys.readouterr().err
    load_sliding_pdb.cache_clear()
    mapped = load_sliding_pdb(3, part).table
    assert "rebuilding" not in capsys.readouterr().err  # the rebuilt file is used as it is,
    assert not mapped.flags.writeable  # memory-mapped now that it has been verified
    np.testing.assert_array_equal(mapped, good)


# --------------------------------------------------------------------------- cube
def test_cubie_moves_match_the_puzzle() -> None:
    p = make("cube3")
    for m, name in enumerate(cm.MOVE_NAMES):
        ours = cm.pieces_to_facelets(cm.apply_moves(cm.SOLVED, [m]))[0]
        theirs = p.apply(p.goals(1), np.array([p.action_names.index(name)]))[0]
        np.testing.assert_array_equal(ours, theirs)
    s = p.scramble(np.random.default_rng(2), 20, 30)
    np.testing.assert_array_equal(cm.pieces_to_facelets(cm.facelets_to_pieces(s)), s)


def test_cubie_model_reproduces_the_benchmark_facelets() -> None:
    for c in load_bench("cube3")["cases"][:100]:
        pieces = cm.apply_moves(cm.SOLVED, [cm.MOVE_NAMES.index(t) for t in c["scramble"].split()])
        assert cm.format_facelets(cm.pieces_to_facelets(pieces)[0]) == c["facelets"]


def test_illegal_cubes_are_rejected() -> None:
    p = make("cube3")
    twisted = p.goal().copy()
    twisted[[8, 9, 20]] = twisted[[9, 20, 8]]  # twist the URF corner in place
    with pytest.raises(InvalidStateError, match="twist"):
        solve_optimal(p, twisted)


def _cube2_check(fraction: float) -> None:
    """With DBL held, a 2x2x2 position is the corners of a cube3 and its exact distance bounds every
    corner pattern (with the parity correction): check a ``fraction`` of the 3,674,160 positions."""
    from puzzlezero.puzzles.cube import corner_stickers
    from puzzlezero.puzzles.cube.table import distance

    pdb = load_cube_pdb((CubePattern("corner", (0, 1, 2, 3)), CubePattern("corner", (4, 5, 7, 6))))
    free = np.array([0, 1, 2, 3, 4, 5, 7])
    perms = np.array(list(itertools.permutations(free)))  # [5040, 7]
    perms = perms[np.random.default_rng(8).permutation(len(perms))[: int(round(fraction * len(perms)))]]
    twists = np.array(list(itertools.product(range(3), repeat=6)))  # [729, 6]
    twists = np.concatenate([twists, (-twists.sum(1, keepdims=True)) % 3], axis=1)
    hmax = 0
    for chunk in np.array_split(perms, max(1, len(perms) // 512)):
        piece = np.full((len(chunk), 729, 8), 6, dtype=np.int64)
        piece[:, :, free] = chunk[:, None, :]
        twist = np.zeros_like(piece)
        twist[:, :, free] = twists[None]
        piece, twist = piece.reshape(-1, 8), twist.reshape(-1, 8)
        exact = distance(corner_stickers(piece, twist))
        values = np.tile(cm.SOLVED, (len(piece), 1))
        values[np.arange(len(piece))[:, None], piece] = np.arange(8) * 3 + twist
        h = pdb.values(values)
        assert (h <= exact).all()
        hmax = max(hmax, int(h.max()))
    assert hmax >= 8  # the patterns are informative


def test_cube_patterns_are_admissible_on_cube2_positions() -> None:
    _cube2_check(1 / 20)


@pytest.mark.slow
def test_cube_patterns_are_admissible_on_every_cube2_position() -> None:
    _cube2_check(1.0)


def test_cube_ida_is_optimal_at_small_depth() -> None:
    """Against plain iterative deepening (zero heuristic, same canonical move pruning)."""
    p = make("cube3")
    for s in p.scramble(np.random.default_rng(4), 6, 5):
        blind = solve_cube(p, s, patterns=())
        informed = solve_cube(p, s, patterns=SMALL_CUBE)
        assert informed.length == blind.length and replays(p, s, informed.actions)
        assert informed.nodes_generated <= blind.nodes_generated
    assert solve_cube(p, p.goal(), patterns=SMALL_CUBE).actions == ()


def test_cube2_optimal_by_table_descent() -> None:
    from puzzlezero.puzzles.cube.table import distance

    p = make("cube2")
    for s in p.scramble(np.random.default_rng(6), 5, 20):
        r = solve_optimal(p, s)
        assert r.length == distance(s[None])[0] and replays(p, s, r.actions)


# --------------------------------------------------------------------------- Lights Out
@pytest.mark.parametrize("size", [3, 4])
def test_gf2_solution_is_minimal_by_brute_force(size: int) -> None:
    p = LightsOut(size)
    t = toggle_matrix(p).astype(np.int64)
    n = size * size
    subsets = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.int64)
    states = (subsets @ t.T) & 1
    keys = states @ (1 << np.arange(n))
    best = np.full(2**n, 99)
    np.minimum.at(best, keys, subsets.sum(1))
    reachable = np.flatnonzero(best < 99)
    assert len(reachable) == 2 ** (n - gf2_system(p).nullity)
    lights = ((reachable[:, None] >> np.arange(n)) & 1).astype(np.uint8)
    x = min_presses(p, lights)
    np.testing.assert_array_equal(x.sum(1), best[reachable])
    np.testing.assert_array_equal((x.astype(np.int64) @ t.T) & 1, lights)  # presses replay to the state


def test_gf2_singular_5x5_board() -> None:
    p = LightsOut(5)
    system = gf2_system(p)
    t = toggle_matrix(p).astype(np.int64)
    assert system.nullity == 2 and not ((t @ system.null.T) & 1).any()
    rng = np.random.default_rng(7)
    presses = rng.integers(0, 2, size=(200, 25))
    lights = ((presses @ t.T) & 1).astype(np.uint8)
    x = min_presses(p, lights)
    assert (x.sum(1) <= presses.sum(1)).all()
    for s, xi in zip(lights[:20], x[:20], strict=True):
        r = solve_optimal(p, s)
        assert len(r.actions) == xi.sum() and replays(p, s, r.actions)
        others = (xi[None] ^ system.combos).sum(1)  # every solution of this state
        assert xi.sum() == others.min()
    lone = np.zeros(25, dtype=np.uint8)
    lone[0] = 1  # one corner light: not in the span on 5x5
    with pytest.raises(InvalidStateError, match="cannot be switched off"):
        solve_optimal(p, lone)


def test_lightsout7_matches_the_benchmark_optima() -> None:
    p = make("lightsout7")
    cases = load_bench("lightsout7")["cases"]
    lights = np.array([c["lights"] for c in cases], dtype=np.uint8)
    x = min_presses(p, lights)
    assert [np.flatnonzero(r).tolist() for r in x] == [c["optimal_presses"] for c in cases]
    np.testing.assert_array_equal(pdb_heuristic(p)(lights), [c["optimal_length"] for c in cases])


# --------------------------------------------------------------------------- dispatch, Kociemba
def test_a_puzzle_without_an_optimal_solver_is_refused_by_name(monkeypatch) -> None:
    from puzzlezero.classic import optimal

    monkeypatch.delitem(optimal.SOLVERS, "Sokoban")
    p = make("sokoban")
    with pytest.raises(UnknownNameError, match="no optimal solver"):
        solve_optimal(p, p.goal())


def test_kociemba_bridge_reports_both_metrics() -> None:
    pytest.importorskip(
        "kociemba", reason="needs the kociemba package (pip install 'puzzlezero[kociemba]'): not installed"
    )
    from puzzlezero.classic.optimal.kociemba_bridge import half_to_quarter_turns, solve_kociemba

    assert half_to_quarter_turns("R U2 F'") == ["R", "U", "U", "F'"]
    p = make("cube3")
    for c in load_bench("cube3")["cases"][:5]:
        s = p.parse(c["facelets"])
        r = solve_kociemba(p, s)
        assert replays(p, s, r.actions) and r.quarter_turn_length >= c["optimal_length"]
        assert r.quarter_turn_length == r.half_turn_length + r.half_turn_solution.count("2")


def test_kociemba_bench_reports_the_half_turn_length_too(tmp_path) -> None:  # noqa: ANN001
    pytest.importorskip(
        "kociemba", reason="needs the kociemba package (pip install 'puzzlezero[kociemba]'): not installed"
    )
    from puzzlezero.bench import run_bench
    from puzzlezero.case_files import load_cases

    p = make("cube3")
    cases = load_cases(p, needs(BENCH_DIR / "cube3.json", "the shared benchmark sets"), (0, 3))
    rep = run_bench(p, cases, search="kociemba")
    for r in rep.results:
        qtm, htm = r["length"], r["half_turn_length"]
        assert r["solved"] and htm <= qtm <= 2 * htm and qtm >= r["optimal_length"]
    assert rep.summary["mean_half_turn_length"] == pytest.approx(
        np.mean([r["half_turn_length"] for r in rep.results]), abs=1e-4
    )


def test_kociemba_missing_gives_an_install_hint(monkeypatch) -> None:  # noqa: ANN001
    from puzzlezero.classic.optimal.kociemba_bridge import solve_kociemba

    monkeypatch.setitem(sys.modules, "kociemba", None)
    p = make("cube3")
    with pytest.raises(PuzzleError, match=r"puzzlezero\[kociemba\]"):
        solve_kociemba(p, p.goal())


# --------------------------------------------------------------------------- big tables (slow)
@pytest.mark.slow
def test_korf_heuristic_is_admissible_on_the_cube_benchmarks() -> None:
    p = make("cube3")
    cases = load_bench("cube3")["cases"]
    h = pdb_heuristic(p)(np.array([p.parse(c["facelets"]) for c in cases]))
    opt = np.array([c["optimal_length"] for c in cases])
    assert (h <= opt).all() and ((opt - h) % 2 == 0).all()
    assert load_cube_pdb(KORF).table.size == 88_179_840 + 2 * 42_577_920


@pytest.mark.slow
def test_15_puzzle_7_8_database_is_the_one_the_serial_builder_made() -> None:
    """The 7-8 tables (576,576,000 entries) are byte for byte those of the earlier one-thread
    builder (SHA-256 of its output)."""
    table = np.asarray(load_sliding_pdb(4).table)
    assert table.size == num_ranks(16, 8) + num_ranks(16, 7)
    digest = hashlib.sha256(table.tobytes()).hexdigest()
    assert digest == "6efe02a202276028ae4782727699b8e8d32d26ccca98a6d42529db630adcb053"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tiles", "digest"),
    [
        ((1, 2, 3, 6, 7, 11), "aaf6635037888476fffe6fd035851451ef83e6a60584258230f8cb614ebb4d44"),
        ((13, 15, 19, 20, 23, 24), "e5dbe7465907b96079d86e1d9ec2f755f650e65c023909ae4587f3b61976e05e"),
    ],
)
def test_24_puzzle_6_tile_patterns_are_those_the_serial_builder_made(tiles, digest) -> None:  # noqa: ANN001
    """Two of the 6-6-6-6 patterns (127,512,000 entries each; the blank's home cell lies in the
    second) byte for byte as the earlier one-thread builder made them."""
    table = build_pattern(5, tiles)
    assert hashlib.sha256(table.tobytes()).hexdigest() == digest


@pytest.mark.slow
def test_15_puzzle_default_pdb_solves_benchmarks_optimally() -> None:
    p = make("puzzle15")
    for c in load_bench("puzzle15")["cases"][:10]:
        s = np.array(c["tiles"], dtype=np.uint8)
        r = solve_optimal(p, s, time_limit=120)
        assert r.length == c["optimal_length"] and replays(p, s, r.actions)


def test_report_command_writes_the_comparison_table(tmp_path) -> None:  # noqa: ANN001
    import json

    from puzzlezero.cli.main import main

    p = make("puzzle8")
    states = p.scramble(np.random.default_rng(9), 3, 30)
    cases = [
        {"id": i, "tiles": s.tolist(), "optimal_length": int(optimal_length(p, s))}
        for i, s in enumerate(states)
    ]
    (tmp_path / "puzzle8.json").write_text(json.dumps({"puzzle": "puzzle8", "cases": cases}))
    out = tmp_path / "report.md"
    argv = ["report", "tables", "--puzzle", "puzzle8", "--n", "3", "--methods", "pdb,optimal", "--bench-dir",
            str(tmp_path), "--no-memory", "--speed-states", "0", "--out", str(out),
            "--time-limit", "300", "--optimal-time-limit", "300"]  # fmt: skip  # cold numba caches on a loaded CI box
    assert main(argv) == 0
    text = out.read_text()
    assert "| puzzle8 | optimal solver | 3/3 |" in text and "| 100.0 |" in text
    assert (
        main(["report", "tables", "--puzzle", "puzzle8", "--methods", "magic", "--bench-dir", str(tmp_path)])
        == 2
    )
