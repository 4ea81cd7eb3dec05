"""The commutator solver of NxNxN cubes (puzzlezero.classic.cube_commutators): its orbits counted
by hand, every 3-cycle it uses moving three pieces of one orbit and nothing else (on every sticker
of the cube), every answer replayed (the competition's three goals, wildcards), odd wing
permutations, its refusals, its bound in time on a fake clock, and the default it is of a
definition file's big cube (CLI bench; the web app's in tests/web/test_web_permutation.py)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from puzzlezero.classic import cube_commutators as cc
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.permutation import PermutationPuzzle, family_puzzle
from puzzlezero.puzzles.permutation.definition import Definition
from puzzlezero.puzzles.permutation.families import cube, cubers_cube
from puzzlezero.search import clock
from tests.clock import FakeClock


def _solves(p, state, actions) -> bool:
    return bool(p.is_goal(p.apply_moves(state, list(actions))[None])[0])


@pytest.fixture(autouse=True)
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The definitions a test registers (a file named where a puzzle name goes) are forgotten
    after it."""
    from puzzlezero import registry

    for attr in ("_REGISTRY", "_INSTANCES"):
        monkeypatch.setattr(registry, attr, dict(getattr(registry, attr)))


def _defined(data: dict) -> PermutationPuzzle:
    return PermutationPuzzle(Definition.from_dict(data, where="test"))


def _scramble(p, seed: int, length: int = 1000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return p.apply_moves(p.goal(), rng.integers(0, p.num_actions, size=length).tolist())


@pytest.mark.parametrize(
    "n, wings, centres",
    [
        (4, 1, 1),  # one wing orbit (24 wings), the 24 centres
        (5, 1, 2),  # wings 1 from a corner; x-centres and t-centres (the middle ones: the 3x3x3's)
        (6, 2, 4),  # wings 1 and 2; centres (1,1), (2,2), (1,2), (2,1)
        (7, 2, 6),  # wings 1 and 2; (1,1), (2,2), (1,2), (2,1), (1,3), (2,3)
    ],
)
def test_orbits_counted_by_hand(n: int, wings: int, centres: int) -> None:
    c = cc._cube(n)
    sizes = [(len(o.positions), o.piece_size) for o in c.orbits]
    assert sizes == [(48, 2)] * wings + [(24, 1)] * centres
    core = len(c.core)
    assert core == 6 * (9 if n % 2 else 4)
    assert core + sum(len(o.positions) for o in c.orbits) == 6 * n * n
    every = np.concatenate([c.core, *(o.positions for o in c.orbits)])
    assert len(set(every.tolist())) == 6 * n * n


@pytest.mark.parametrize("n", [6, 7])
def test_every_three_cycle_moves_three_pieces_of_its_orbit_alone(n: int) -> None:
    c = cc._cube(n)
    rng = np.random.default_rng(n)
    ident = np.arange(6 * n * n)
    for orbit in c.orbits:
        lib = cc._library(c, orbit, c.core, setup_length=2)
        assert len(lib) > 100
        for i in rng.choice(len(lib), size=20, replace=False):
            full = cc._word_perm(c.perms, lib.word(i))
            moved = np.flatnonzero(full != ident)
            assert len(moved) == 3 * orbit.piece_size
            assert set(moved.tolist()) <= set(orbit.positions.tolist())
            # the orbit's own permutation of the word is the library's
            assert np.array_equal(cc._word_perm(orbit.local, lib.word(i)), lib.perms[i])
            for t, core, _, _ in lib.parts(i):  # every alternative: the same 3-cycle
                alt = t + core + cc._inverse_word(t, c.inverse)
                assert np.array_equal(cc._word_perm(c.perms, alt), full)


@pytest.mark.parametrize("n", [5, 6])
def test_the_slice_pairs_move_two_three_cycles_of_centres_alone(n: int) -> None:
    """Each ``[X, Y]`` of two slice turns the rough pass may take moves six centre stickers and
    nothing else, as replaying its four moves on the whole cube shows."""
    c = cc._cube(n)
    pairs, dst, src = cc._pairs(n)
    assert len(pairs) == len(dst) == len(src) > 0
    centres = set(np.concatenate([o.positions for o in c.orbits if o.piece_size == 1]).tolist())
    for (x, y), d, s in zip(pairs, dst, src, strict=True):
        full = cc._word_perm(c.perms, (x, y, c.inverse[x], c.inverse[y]))
        moved = np.flatnonzero(full != np.arange(len(full)))
        assert sorted(moved.tolist()) == sorted(d.tolist()) and set(d.tolist()) <= centres
        assert np.array_equal(full[d], s)


@pytest.mark.parametrize("n, seeds", [(4, (0, 1)), (5, (0, 1)), (6, (0,)), (7, (0,))])
def test_deep_scrambles_are_solved_and_replayed(n: int, seeds: tuple[int, ...]) -> None:
    p = family_puzzle(f"cube_{n}/{n}/{n}")
    for seed in seeds:
        state = _scramble(p, seed)
        r = cc.solve_commutators(p, state)
        assert r.status == "solved" and r.solved
        assert _solves(p, state, r.actions)
        assert r.cost == len(r.actions)


def test_odd_wing_permutations_and_the_goal() -> None:
    """One inner slice turn is an odd permutation of its wings (a 4-cycle), which no 3-cycle
    undoes: the orbit takes one turn of its own slice first."""
    p = family_puzzle("cube_4/4/4")
    assert cc.solve_commutators(p, p.goal()).actions == ()
    for name in ("r1", "f2'", "d1"):
        state = p.apply_moves(p.goal(), p.parse_moves(name))
        r = cc.solve_commutators(p, state)
        assert r.solved and _solves(p, state, r.actions)
    p6 = family_puzzle("cube_6/6/6")
    state = p6.apply_moves(p6.goal(), p6.parse_moves("r1 f2 d1'"))
    r = cc.solve_commutators(p6, state)
    assert r.solved and _solves(p6, state, r.actions)


@pytest.mark.parametrize(
    "n, goal", [(4, "alternating"), (5, "alternating"), (4, "distinct"), (5, "distinct"), (6, "distinct")]
)
def test_the_competitions_other_goals(n: int, goal: str) -> None:
    """The two-colour pattern and every sticker its own: the small cube inside is solved to its
    part of the goal, and an orbit of distinct pieces comes out even once the rest is solved."""
    p = _defined(cube(n, goal))
    for seed in (0, 1):
        state = _scramble(p, seed)
        r = cc.solve_commutators(p, state)
        assert r.solved and _solves(p, state, r.actions)


def test_wildcards_end_the_answer_at_its_first_state_within_them() -> None:
    p = _defined({**cube(4), "wildcards": 10})
    state = _scramble(p, 2)
    r = cc.solve_commutators(p, state)
    full = cc.solve_commutators(_defined(cube(4)), state)
    assert r.solved and _solves(p, state, r.actions) and len(r.actions) <= len(full.actions)
    before = p.apply_moves(state, list(r.actions[:-1]))
    assert not p.is_goal(before[None])[0]  # the answer ends at the first state within them


def test_only_the_competitions_cubes() -> None:
    for other in ("wreath_6/6", "globe_1/8"):
        with pytest.raises(PuzzleError, match="NxNxN cube"):
            cc.solve_commutators(family_puzzle(other), family_puzzle(other).goal())
    blocks = _defined(cubers_cube(4))
    with pytest.raises(PuzzleError, match="NxNxN cube"):
        cc.solve_commutators(blocks, blocks.goal())
    assert cc.cube_size(family_puzzle("cube_5/5/5")) == 5 and cc.cube_size(blocks) is None


def test_a_deadline_passed_answers_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeClock()
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", fake)
    p = family_puzzle("cube_4/4/4")
    state = _scramble(p, 3)
    r = cc.solve_commutators(p, state, deadline=clock.now() - 1.0)
    assert (r.solved, r.status, r.actions) == (False, "time limit", ())


def test_short_set_ups_where_the_time_left_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a fake clock where a library of set-ups of three moves takes 10 s and one of two 1 s,
    60 s for the 6x6x6's two wing orbits and four centre orbits. The wings always take three-move
    set-ups (20 s); a centre orbit takes them while 1.5 times their mean time for every centre
    orbit left fits the time left: the first (no mean yet), at 30 s not for three (75 s), at 31 s
    not for two (61 s), at 32 s for the last (47 s); the answer solves. With no bound, all take
    three. Where a beam over the short set-ups fails, the orbit takes those of three."""
    fake = FakeClock()
    monkeypatch.setattr(sys.modules["puzzlezero.search.clock"], "time", fake)
    lengths: list[int] = []
    real = cc._library

    def spy(cube, orbit, solved, setup_length=cc.SETUP_LENGTH):
        lengths.append(setup_length)
        fake.advance(10.0 if setup_length == cc.SETUP_LENGTH else 1.0)
        return real(cube, orbit, solved, setup_length)

    monkeypatch.setattr(cc, "_library", spy)
    p = family_puzzle("cube_6/6/6")
    state = _scramble(p, 4)
    r = cc.solve_commutators(p, state, time_limit=60.0)
    assert r.solved and _solves(p, state, r.actions)
    assert lengths == [3, 3, 3, 2, 2, 3] and (cc.SETUP_LENGTH, cc.SHORT_SETUP) == (3, 2)
    lengths.clear()
    r = cc.solve_commutators(p, state)
    assert r.solved and lengths == [cc.SETUP_LENGTH] * 6

    beam = cc._solve_orbit

    def fails_short(labels, goal, lib, width):
        return (None, 1) if lengths[-1] == cc.SHORT_SETUP else beam(labels, goal, lib, width)

    monkeypatch.setattr(cc, "_solve_orbit", fails_short)
    lengths.clear()
    fake.now = 1000.0
    r = cc.solve_commutators(p, state, time_limit=60.0)
    assert r.solved and _solves(p, state, r.actions)
    assert lengths == [3, 3, 3, 2, 3, 2, 3, 2, 3]  # each short library failed, then a long one


def test_its_memory_estimate_and_the_budget() -> None:
    """The estimate grows with the moves and stickers and, with wildcards, with the answer's
    states; a solve whose estimate passes the memory budget is refused by name before it starts."""
    from puzzlezero.budget import use_memory_budget
    from puzzlezero.errors import MemoryBudgetError
    from puzzlezero.solver import solve

    small, big = family_puzzle("cube_4/4/4"), _defined(cube(12))
    assert cc.memory_estimate(small) < cc.memory_estimate(big)
    assert cc.memory_estimate(big) == cc.FIXED_BYTES + cc.MOVE_STICKER_BYTES * 72 * 864
    wild = _defined({**cube(12), "wildcards": 4})
    assert cc.memory_estimate(wild) == cc.memory_estimate(big) + cc.ANSWER_PER_STICKER * 864 * 864
    state = _scramble(small, 0)
    with use_memory_budget("32MiB"), pytest.raises(MemoryBudgetError, match="the cube's size"):
        solve(small, state, search="cube-commutators")
    with use_memory_budget("1GiB"):
        r = solve(small, state, search="cube-commutators")
    assert r.solved and _solves(small, state, r.actions)


def test_the_default_of_a_big_cubes_definition_file(tmp_path) -> None:
    from puzzlezero.cli.main import main
    from puzzlezero.defaults import COMMUTATOR_DEFAULTS, MODEL_FREE_DEFAULTS
    from puzzlezero.registry import make
    from puzzlezero.solver import defaults_for

    big = tmp_path / "cube_8-8-8.json"
    big.write_text(json.dumps(cube(8)))
    other = dict(cube(8, "alternating"), name="cube_8-8-8-two-colours")
    (tmp_path / "two.json").write_text(json.dumps(other))
    small = dict(cube(5), name="my_5")
    (tmp_path / "my5.json").write_text(json.dumps(small))
    blocks = dict(cubers_cube(8), name="my_8_blocks")
    (tmp_path / "blocks.json").write_text(json.dumps(blocks))
    assert defaults_for(make(str(big))) is COMMUTATOR_DEFAULTS
    assert defaults_for(make(str(tmp_path / "two.json"))) is COMMUTATOR_DEFAULTS
    assert defaults_for(make(str(tmp_path / "my5.json"))) is MODEL_FREE_DEFAULTS  # below 6 layers
    registered = defaults_for(make("cube_7-7-7"))  # the registered family: its table ships
    assert (registered.search, registered.fallback) == ("cube-commutators", "group")
    assert defaults_for(make(str(tmp_path / "blocks.json"))) is MODEL_FREE_DEFAULTS

    cases = tmp_path / "cases.json"
    assert main(["cases", "make", str(big), "--n", "2", "--seed", "5", "--out", str(cases)]) == 0
    report = tmp_path / "report.json"
    assert main(["bench", str(big), "--cases", str(cases), "--out", str(report)]) == 0
    summary = json.loads(report.read_text())["summary"]
    assert summary["search"] == "cube-commutators" and summary["solved_pct"] == 100.0
    p = make(str(big))
    rows = json.loads(report.read_text())["results"]
    for case, row in zip(json.loads(cases.read_text())["cases"], rows, strict=True):
        assert _solves(p, p.parse(case["state"]), p.parse_moves(row["solution"]))
