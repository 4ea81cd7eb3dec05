"""Never longer than the scramble: under its own settings, every registered puzzle answers a
state a few moves from its goal with at most that many moves, its first answer included (a
bidirectional breadth-first pass runs before the search and answers such states optimally)."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import registry
from puzzlezero.registry import make
from puzzlezero.solver import Improvement, resolve_options, solve, solve_many, verify

#: the cubes in the quarter-turn metric are checked up to six moves, the others up to four
DEPTHS = {"cube3": 6, "cube3htm": 6, "cube2": 6}


@pytest.mark.parametrize("name", registry.names())
def test_a_short_scramble_comes_back_no_longer(name: str) -> None:
    p = make(name)
    rng = np.random.default_rng(2026)
    for k in range(1, DEPTHS.get(name, 4) + 1):
        start = p.scramble(rng, 1, k)[0]
        firsts: list[Improvement] = []
        r = solve(p, start, time_limit=30.0, on_solution=firsts.append)
        assert r.solved, (name, k, r.status)
        assert verify(p, start[None], [r.actions])[0]
        assert r.length <= k, (name, k, r.solution)
        assert not firsts or firsts[0].length <= k, (name, k, firsts[0].solution)


def test_the_pass_answers_optimally_and_leaves_far_states_to_the_search() -> None:
    p = make("cube3")
    near = p.apply_moves(p.goal(), p.parse_moves("R U F' D R2 B L'"))
    far = p.scramble(np.random.default_rng(1), 1, 40)[0]
    assert resolve_options(p).breadth_first > 0
    seen: list[Improvement] = []
    a, b = solve_many(p, [near, far], time_limit=5.0, on_solution=seen.append)
    assert a.length == 8 and seen[0].index == 0 and seen[0].stage == "breadth-first"
    assert b.solved and b.length > 8 and {s.stage for s in seen if s.index == 1} != {"breadth-first"}


def test_a_named_search_runs_as_it_is_named() -> None:
    """The pass belongs to the puzzle's own settings: a search one names is measured alone."""
    p = make("cube2")
    assert resolve_options(p, search="beam", heuristic="misplaced").breadth_first == 0
    r = solve(p, "R U", search="gbfs", heuristic="misplaced", time_limit=10.0)
    assert r.search == "gbfs" and r.solved
