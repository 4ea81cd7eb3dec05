"""The rollout over a base solver: its answer is never longer than the base's from the start
(sequential improvement), a detour of the base is cut out, every answer replays to the goal, and
each bound stops it by name with the best answer so far."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlezero as pz
from puzzlezero.classic.optimal import solve_optimal
from puzzlezero.errors import PuzzleError
from puzzlezero.search import clock
from puzzlezero.search import rollout as rollout_module
from puzzlezero.search.rollout import NO_ANSWER, rollout
from tests.clock import FakeClock

P = pz.make("puzzle8")


def loop(state: np.ndarray) -> tuple[int, ...]:
    """12 moves that lead back to ``state``: its first possible move and the move undoing it, 6
    times."""
    children = P.expand(state[None])[0]
    a = next(a for a in range(P.num_actions) if (children[a] != state).any())
    back = next(b for b in range(P.num_actions) if (P.expand(children[a][None])[0][b] == state).all())
    return (a, back) * 6


def replays(state: np.ndarray, actions: Sequence[int]) -> bool:
    return bool(P.is_goal(P.apply_moves(state, actions)[None])[0])


def wanderer(state: np.ndarray) -> tuple[int, ...]:
    """A base solver that goes round the loop before taking the shortest way home."""
    if P.is_goal(state[None])[0]:
        return ()
    return (*loop(state), *solve_optimal(P, state).actions)


def lengths(states: np.ndarray) -> np.ndarray:
    return np.array([len(wanderer(s)) for s in states])


def test_the_loop_really_is_one() -> None:
    for s in [P.goal(), *P.scramble(np.random.default_rng(1), 5, 9)]:
        assert len(loop(s)) == 12 and (P.apply_moves(s, loop(s)) == s).all()


def test_a_detour_of_the_base_is_cut_out() -> None:
    """Two moves from the goal: the base answers 14 (the loop, then 2); the rollout finds the
    goal among the children of its second step and answers 2."""
    start = P.apply_moves(P.goal(), P.parse_moves("D D"))
    r = rollout(P, start, lengths, wanderer, beam_width=4)
    assert P.format_moves(r.actions) == ["U", "U"]
    assert r.stopped == "goal" and r.first_length == 14
    assert [n for _, n in r.improvements] == [14, 2]  # a child one move away still wanders: 1 + 13


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(3, 12), width=st.sampled_from([1, 3, 20]))
def test_never_longer_than_the_base_and_always_replayed(seed: int, depth: int, width: int) -> None:
    start = P.scramble(np.random.default_rng(seed), 1, depth)[0]
    base = wanderer(start)
    r = rollout(P, start, lengths, wanderer, beam_width=width)
    assert r.solved and replays(start, r.actions)
    assert len(r.actions) <= len(base)
    assert [n for _, n in r.improvements] == sorted({n for _, n in r.improvements}, reverse=True)
    if base:  # the base always wanders 12 moves; the rollout reaches the goal itself
        assert len(r.actions) < len(base)


def test_an_incumbent_is_kept_unless_something_shorter_turns_up() -> None:
    start = P.apply_moves(P.goal(), P.parse_moves("D D R"))
    optimal = solve_optimal(P, start).actions
    r = rollout(P, start, lengths, wanderer, beam_width=2, incumbent=optimal)
    assert r.actions == tuple(optimal) and r.first_length == len(optimal)


@pytest.mark.parametrize(
    ("bound", "stopped"),
    [({"max_nodes": 3}, "node limit"), ({"max_steps": 0}, "step limit"), ({"patience": 1}, "patience")],
)
def test_each_bound_stops_it_by_name_with_an_answer(bound: dict, stopped: str) -> None:
    start = P.scramble(np.random.default_rng(3), 1, 20)[0]

    def flat(states: np.ndarray) -> np.ndarray:  # no child ever looks better than the start
        return np.full(len(states), 10_000)

    r = rollout(P, start, flat if stopped == "patience" else lengths, wanderer, beam_width=5, **bound)
    assert r.stopped == stopped and r.solved and replays(start, r.actions)
    assert r.actions == wanderer(start)


def test_a_passed_deadline_stops_it_before_its_first_step() -> None:
    start = P.scramble(np.random.default_rng(4), 1, 20)[0]
    r = rollout(P, start, lengths, wanderer, deadline=clock.now() - 1.0)
    assert r.stopped == "time limit" and r.iterations == 0 and r.actions == wanderer(start)


def test_the_deadline_cuts_a_step_between_two_chunks_of_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """A base that takes a second a call (a fake clock) and chunks of 2 children: from a board
    with the blank in the centre (4 children), the first step scores one chunk, finds its
    deadline passed, keeps the 2 children it scored and is the last; the answer is the best so
    far and replays. Without a deadline the step scores both chunks."""
    fake = FakeClock(start=0.0)
    calls: list[int] = []

    def slow(states: np.ndarray) -> np.ndarray:
        fake.sleep(1.0)
        calls.append(len(states))
        return lengths(states)

    monkeypatch.setattr(clock, "time", fake)
    monkeypatch.setattr(rollout_module, "CHUNK", 2)
    start = next(s for s in P.scramble(np.random.default_rng(6), 50, 20) if s.ravel()[4] == 0)
    r = rollout(P, start, slow, wanderer, beam_width=4, deadline=1.5)
    assert calls == [1, 2]  # the start's own length (t = 1), then one chunk of the step (t = 2)
    assert r.stopped == "time limit" and r.iterations == 1 and r.nodes_generated == 1 + 2
    assert replays(start, r.actions) and len(r.actions) <= len(wanderer(start))
    calls.clear()
    r = rollout(P, start, slow, wanderer, beam_width=4, max_steps=1)
    assert calls == [1, 2, 2] and r.stopped == "step limit" and r.nodes_generated == 1 + 4


def test_children_without_a_base_answer_are_ranked_last() -> None:
    """A base that answers only states with the blank in the top row: the others score
    NO_ANSWER and are never chosen while an answered child is there."""
    start = P.apply_moves(P.goal(), P.parse_moves("D D"))

    def top_row(states: np.ndarray) -> np.ndarray:
        out = lengths(states)
        blank = np.array([int(np.flatnonzero(s.ravel() == 0)[0]) for s in states])
        return np.where(blank < 3, out, NO_ANSWER)

    r = rollout(P, start, top_row, wanderer, beam_width=1)
    assert replays(start, r.actions) and len(r.actions) <= 14


def test_refusals() -> None:
    start = P.scramble(np.random.default_rng(5), 1, 10)[0]
    with pytest.raises(PuzzleError, match="beam_width >= 1"):
        rollout(P, start, lengths, wanderer, beam_width=0)
    with pytest.raises(PuzzleError, match="no answer from this puzzle8 state"):
        rollout(P, start, lambda s: np.full(len(s), NO_ANSWER), wanderer)
    assert rollout(P, P.goal(), lengths, wanderer).actions == ()


def test_moves_of_different_costs_are_refused() -> None:
    from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle

    p = PermutationPuzzle(
        Definition.from_dict(
            {
                "format": "puzzlezero-permutation/1",
                "name": "costly",
                "positions": 3,
                "moves": {"a": [1, 2, 0], "b": [1, 0, 2]},
                "costs": {"a": 1, "b": 2},
                "goal": "A;B;C",
            }
        )
    )
    with pytest.raises(PuzzleError, match="moves cost differently"):
        rollout(p, p.parse("B;A;C"), lambda s: np.zeros(len(s), int), lambda s: ())
