"""The group solver's greedy sift over a batch (the rollout's base) against the sift of the
arrangement the backtrack finds, and the rollout over it on the competition's cubes: every answer
replayed, never longer than the group solver's, bounded by nodes, refused by name where it does
not apply."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.classic.group import GroupTable, group_table, solve_group, solve_rollout
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.permutation import family_puzzle
from puzzlezero.search.rollout import NO_ANSWER


def replays(p: pz.Puzzle, state: np.ndarray, actions: Sequence[int]) -> bool:
    return bool(p.is_goal(p.apply_moves(state, actions)[None])[0])


def entry_lengths(table: GroupTable, q: np.ndarray) -> int:
    """The summed lengths of the entries the plain sift of ``q`` passes through (each level's
    point ``q(b_i)``, then ``q`` divided by that entry), computed without the kernel."""
    total = 0
    for beta, level in zip(table.base, table.words, strict=True):
        d = int(q[beta])
        total += len(level[d])
        inverse = table.element(table.reducer.inverse(level[d]))
        q = inverse[q]
    assert (q == np.arange(q.size)).all()
    return total


@pytest.mark.parametrize("kind", ["cube_2/2/2", "cube_3/3/3", "wreath_6/6", "globe_1/8"])
def test_greedy_lengths_are_the_sift_of_the_backtracks_first_arrangement(kind: str) -> None:
    p = family_puzzle(kind)
    table, goal = group_table(p), p.goal().ravel()
    states = p.scramble(np.random.default_rng(11), 6, 80)
    got = table.greedy_lengths(states, goal)
    for s, n in zip(states, got, strict=True):
        q = table.arrangement(s, goal)
        assert n == entry_lengths(table, q)
        word = table.greedy_word(s, goal)
        assert replays(p, s, word) and len(word) <= n  # the reduction only takes moves out


def test_greedy_lengths_of_the_goal_and_of_states_outside_the_group() -> None:
    p = family_puzzle("cube_2/2/2")
    table, goal = group_table(p), p.goal().ravel()
    twisted = goal.copy()
    corner = list(p.definition.pieces[0])
    twisted[corner] = twisted[corner[1:] + corner[:1]]  # one corner twisted in place
    one = p.apply_moves(goal, p.parse_moves("f0"))
    lengths = table.greedy_lengths(np.stack([goal, twisted, one]), goal)
    assert lengths[0] == 0 and lengths[1] == NO_ANSWER and 1 <= lengths[2] < NO_ANSWER


def test_the_rollout_shortens_the_4x4x4s_group_answers() -> None:
    """Two deep 4x4x4 states: each answer replays, is no longer than the group solver's, and
    over the two is shorter (a beam of 100: the group's 260-290 moves come down by about 60)."""
    p = pz.make("cube_4-4-4")
    states = p.scramble(np.random.default_rng(2), 2, 150)
    group, rolled = [], []
    for s in states:
        g = solve_group(p, s)
        r = solve_rollout(p, s, beam_width=100)
        assert r.solved and replays(p, s, r.actions) and len(r.actions) <= len(g.actions)
        assert [n for _, n in r.improvements] == sorted(n for _, n in r.improvements)[::-1]
        group.append(len(g.actions))
        rolled.append(len(r.actions))
    assert sum(rolled) < sum(group) - 40, (group, rolled)


def test_the_node_bound_leaves_the_group_answer() -> None:
    p = pz.make("cube_3-3-3")
    s = p.scramble(np.random.default_rng(5), 1, 60)[0]
    g = solve_group(p, s)
    r = solve_rollout(p, s, beam_width=50, max_nodes=g.nodes_generated)
    assert r.actions == g.actions and r.iterations == 0


def test_a_puzzle_not_made_from_a_definition_is_refused() -> None:
    cube = pz.make("cube3")
    with pytest.raises(PuzzleError, match="use --search group"):
        solve_rollout(cube, cube.scramble(np.random.default_rng(0), 1, 10)[0])


def test_the_rollout_is_the_default_of_the_families_without_a_model() -> None:
    # the 4x4x4 and the 5x5x5 have their reductions (tests/classic/test_cube_reduction.py,
    # test_cube5_reduction.py), the 6x6x6 and the 7x7x7 the commutator solver
    # (tests/classic/test_cube_commutators.py); the 21/21 wreath the rollout
    from puzzlezero.solver import defaults_for

    assert defaults_for("cube_4-4-4").search == defaults_for("cube_5-5-5").search == "cube-reduction"
    assert defaults_for("cube_6-6-6").search == defaults_for("cube_7-7-7").search == "cube-commutators"
    p = pz.make("wreath_21-21")
    s = p.scramble(np.random.default_rng(8), 1, 120)[0]
    r = pz.solve(p, s, time_limit=8, beam_width=(200,))
    assert r.solved and replays(p, s, r.actions) and r.search == "rollout"
