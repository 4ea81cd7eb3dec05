"""The competition's 3x3x3 by two routes (:mod:`puzzlezero.solver.cube3_route`): the beam, then
cube3's solve of the reading made slice turns; the shorter answer kept and passed on, the time
shared as the module says, every answer replayed, other puzzles refused."""

from __future__ import annotations

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.errors import PuzzleError
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult
from puzzlezero.solver import cube3_route, resolve_options, solve


@pytest.fixture(scope="module")
def comp() -> pz.Puzzle:
    return pz.make("cube_3-3-3")


def _deep(p: pz.Puzzle, seed: int) -> np.ndarray:
    return p.scramble(np.random.default_rng(seed), 1, 60)[0]


def test_it_is_the_competition_cubes_default(comp):
    o = resolve_options(comp)
    assert (o.search, o.heuristic, o.fallback) == ("cube3-route", "cube3-view", "group")
    assert o.beam_width == (1000, 20_000) and o.option("goal_ball") and o.shortcut == 0


def test_cube3s_route_answers_in_slice_turns(comp):
    start = _deep(comp, 4)
    r = cube3_route.solve_route(comp, start, deadline=clock.now() + 8.0)
    assert r.solved and r.status == "solved"
    end = comp.apply_moves(start, list(r.actions))
    assert bool(comp.is_goal(np.asarray(end)[None])[0])  # replayed
    assert len(r.actions) <= 30  # cube3's network, not a group solver's 70-move answers


def _fake_routes(monkeypatch, comp, beam_length, route_length, fake, slice_length=None):
    """The beam, cube3's route and the two-phase search beside them replaced by answers of the
    given lengths (``None``: no answer), each recording the deadline it was given."""
    given = {}

    class Beside:
        offset = 0.0

        def __init__(self, puzzle, state, deadline, max_nodes):
            given["slice"] = (deadline, max_nodes)

        def first(self, timeout):
            return None if slice_length is None else self.result()

        def result(self):
            if slice_length is None:
                return SearchResult(False, (), 10, 0, 12.0, "time limit")
            return SearchResult(
                True, (2,) * slice_length, 10, 1, 12.0, "solved", improvements=((0.5, slice_length),)
            )

    def beam(spec, fn, puzzle, states, h, o, deadline, on_solution=None):
        given["beam"] = deadline
        fake.sleep(5.0)
        r = SearchResult(True, (0,) * beam_length, 100, 3, 5.0, "solved", improvements=((1.0, beam_length),))
        if on_solution is not None:
            on_solution(0, r, 0)
        return [r]

    def route(puzzle, state, *, max_nodes=None, deadline=None):
        given["route"] = deadline
        fake.sleep(7.0)
        if route_length is None:
            return SearchResult(False, (), 50, 1, 7.0, "time limit")
        return SearchResult(True, (1,) * route_length, 50, 1, 7.0, "solved")

    monkeypatch.setattr(cube3_route, "run_search", beam)
    monkeypatch.setattr(cube3_route, "solve_route", route)
    monkeypatch.setattr(cube3_route, "_Beside", Beside)
    return given


@pytest.mark.parametrize(
    ("beam_length", "route_length", "winner"),
    [(24, 22, "route"), (22, 24, "beam"), (22, 22, "beam"), (23, None, "beam")],
)
def test_the_shorter_answer_is_kept_and_passed_on(comp, monkeypatch, fake, beam_length, route_length, winner):
    given = _fake_routes(monkeypatch, comp, beam_length, route_length, fake)
    o = resolve_options(comp)
    told = []
    deadline = clock.now() + 45.0
    r = cube3_route.solve_two_routes(
        comp,
        comp.goal(),
        None,
        o,
        deadline=deadline,
        on_solution=lambda res, stage: told.append((len(res.actions), stage)),
    )
    # the beam ends the route's seconds before the deadline (27 s of 45); the route has the rest
    assert given["beam"] == pytest.approx(deadline - 27.0)
    assert given["route"] == deadline and given["slice"] == (deadline, o.max_nodes)
    assert r.nodes_generated == 160 and r.seconds == pytest.approx(12.0)
    if winner == "route":
        assert len(r.actions) == route_length and r.actions == (1,) * route_length
        assert told == [(beam_length, 0), (route_length, 2)]  # the route is the stage after the beam's two
        assert r.improvements == ((1.0, beam_length), (12.0, route_length))
    else:
        assert len(r.actions) == beam_length and told == [(beam_length, 0)]


def test_the_two_phase_search_beside_answers_first_and_wins_where_shorter(comp, monkeypatch, fake):
    _fake_routes(monkeypatch, comp, 24, 23, fake, slice_length=22)
    told = []
    r = cube3_route.solve_two_routes(
        comp,
        comp.goal(),
        None,
        resolve_options(comp),
        deadline=clock.now() + 45.0,
        on_solution=lambda res, stage: told.append((len(res.actions), stage)),
    )
    assert r.actions == (2,) * 22 and r.nodes_generated == 160
    # its first answer passed on before the beam's, then the shortest as the stage after the beam's
    assert told == [(22, 0), (24, 0), (22, 2)]
    # one clock for all: the two-phase answer at 0.5 s is the shortest from then on
    assert r.improvements == ((0.5, 22),)


def test_other_puzzles_are_refused(monkeypatch):
    with pytest.raises(PuzzleError, match="competition's 3x3x3"):
        solve(
            pz.make("cube_2-2-2"),
            pz.make("cube_2-2-2").goal(),
            search="cube3-route",
            heuristic="learned",
            time_limit=5,
        )


def test_the_memory_estimate_covers_cube3s_solve(comp):
    from puzzlezero.solver.memory import memory_estimate

    o = resolve_options(comp)
    cube3 = pz.make("cube3")
    o3 = resolve_options(cube3)
    estimate = memory_estimate(comp, o.search, o)
    assert estimate >= memory_estimate(comp, "beam", o) - (1 << 20)
    assert estimate >= min(memory_estimate(cube3, o3.search, o3), 1 << 30)
