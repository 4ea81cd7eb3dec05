"""The group solver on goals with identical pieces (repeated labels) and wildcards: the backtrack
for an arrangement of the goal's pieces, the piece order of the base, refusals and bounds, the
table's key, and solutions replayed on small hand-made puzzles and the competition's puzzles."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.classic import group
from puzzlezero.classic.group import group_table, piece_base, solve_group, state_permutation
from puzzlezero.errors import BudgetError, InvalidStateError
from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle, family_puzzle


def puzzle(
    name: str, moves: dict[str, list[int]], goal: str, wildcards: int = 0, n: int | None = None
) -> PermutationPuzzle:
    size = n if n is not None else len(next(iter(moves.values())))
    return PermutationPuzzle(
        Definition.from_dict(
            {
                "format": "puzzlezero-permutation/1",
                "name": name,
                "positions": size,
                "moves": moves,
                "goal": goal,
                "wildcards": wildcards,
            }
        )
    )


def dominoes() -> PermutationPuzzle:
    """Three dominoes (positions 0-1, 2-3, 4-5): ``c`` cycles them, ``f`` flips the first two
    together (an even number of flips, like a cube's edges); the first two are identical."""
    return puzzle("dominoes", {"c": [4, 5, 0, 1, 2, 3], "f": [1, 0, 3, 2, 4, 5]}, "A;B;A;B;C;D")


def replays(p: PermutationPuzzle, state: np.ndarray, actions: Sequence[int]) -> bool:
    return bool(p.is_goal(p.apply_moves(state, list(actions))[None])[0])


def test_pieces_come_whole_in_the_base() -> None:
    """Fixing one end of a domino fixes the other: the piece order lists both ends together, and
    the chain keeps one base point per domino (the other end's orbit is a single point)."""
    p = dominoes()
    images = group._images(p.perms)
    assert piece_base(images, range(p.num_actions)) == (0, 1, 2, 3, 4, 5)
    table = group_table(p)
    assert table.order == 12  # 3 cyclic orders of the dominoes x 4 even flips
    assert table.base == (0, 2) and table.orbit_sizes == (6, 2)


def test_piece_base_puts_bigger_pieces_first() -> None:
    """On the 2x2x2 competition cube every position is a corner sticker (pieces of 3); on the
    4x4x4 the corners come first, then the wing edges, then the centres (single positions)."""
    c4 = family_puzzle("cube_4/4/4")
    base = piece_base(group._images(c4.perms), range(c4.num_actions))
    size = {x: len(piece) for piece in c4.definition.pieces for x in piece}
    sizes = [size[x] for x in base]
    assert sorted(base) == list(range(96)) and sizes == sorted(sizes, reverse=True)
    assert sizes.count(3) == 24 and sizes.count(2) == 48 and sizes.count(1) == 24


def test_an_arrangement_carries_the_goal_onto_the_state() -> None:
    p = family_puzzle("wreath_6/6")
    table = group_table(p)
    goal = p.goal()
    for s in p.scramble(np.random.default_rng(1), 30, 40):
        q = table.arrangement(s, goal)
        assert (s[q] == goal).all() and table._sift(q) is not None  # in the group
        perm = state_permutation(p, s)  # state == goal[p], the inverse of q
        assert (goal[perm] == s).all()


def test_a_state_no_arrangement_reaches_is_refused() -> None:
    """One domino flipped alone: every orbit holds the goal's labels, yet the flips come in pairs,
    and the identical dominoes do not help (the backtrack tries both)."""
    p = dominoes()
    state = p.parse("B;A;A;B;C;D")
    with pytest.raises(InvalidStateError, match="no arrangement of the goal's identical pieces"):
        solve_group(p, state)
    # swapped and flipped together it is legal: the first two dominoes are identical
    assert replays(p, p.parse("B;A;B;A;C;D"), solve_group(p, p.parse("B;A;B;A;C;D")).actions)


def test_a_twisted_corner_of_the_2x2x2_is_refused() -> None:
    p = family_puzzle("cube_2/2/2")
    state = p.goal()
    corner = list(p.definition.pieces[0])
    state[corner] = state[corner[1:] + corner[:1]]  # one corner twisted in place
    p.validate(state)  # the labels per orbit are fine, but no move sequence twists one corner
    with pytest.raises(InvalidStateError, match="no arrangement"):
        solve_group(p, state)


def test_the_backtrack_is_bounded() -> None:
    p = family_puzzle("wreath_6/6")
    s = p.scramble(np.random.default_rng(0), 1, 30)[0]
    with pytest.raises(BudgetError, match="within 2 nodes"):
        group_table(p).arrangement(s, p.goal(), max_nodes=2)
    with pytest.raises(BudgetError):
        state_permutation(p, s, max_nodes=2)


@pytest.mark.parametrize("kind", ["cube_2/2/2", "wreath_6/6", "cube_3/3/3"])
def test_competition_puzzles_with_standard_goals_are_solved(kind: str) -> None:
    """Standard goals repeat labels (a cube's six colours, a wreath's rings): random deep states are
    solved and the solutions replay to the goal."""
    p = family_puzzle(kind)
    lengths = []
    for s in p.scramble(np.random.default_rng(7), 5, 60):
        r = solve_group(p, s, max_nodes=200)
        assert r.solved and replays(p, s, r.actions)
        lengths.append(len(r.actions))
    print(f"{kind}: best of 200 sifts, mean {np.mean(lengths):.1f} moves")
    assert max(lengths) < {"cube_2/2/2": 30, "wreath_6/6": 30, "cube_3/3/3": 150}[kind]


def test_a_state_already_in_place_is_one_sift_of_short_words() -> None:
    """A piece in place stays (the identity, the shortest entry, is tried first): a state one move
    from the goal sifts to a short word."""
    p = family_puzzle("cube_3/3/3")
    s = p.apply_moves(p.goal(), p.parse_moves("r0"))
    r = solve_group(p, s, max_nodes=1)
    assert replays(p, s, r.actions) and len(r.actions) <= 8


def test_wildcards_cut_the_solution_at_the_first_state_within_them() -> None:
    """The wreath with 2 wildcards: solved once at most 2 positions differ from the goal, and no
    shorter prefix of the solution is solved."""
    exact = family_puzzle("wreath_6/6")
    loose = puzzle(
        "wreath-2wild", exact.definition.to_dict()["moves"], ";".join(exact.definition.goal), wildcards=2
    )
    for s in loose.scramble(np.random.default_rng(3), 20, 30):
        r = solve_group(loose, s, max_nodes=50)
        path = [s]
        for a in r.actions:
            path.append(loose.apply_moves(path[-1], [a]))
        solved = loose.is_goal(np.stack(path))
        assert solved[-1] and not solved[:-1].any()
        assert len(r.actions) <= len(solve_group(exact, s, max_nodes=50).actions)


def test_tables_are_keyed_by_the_moves_not_the_name() -> None:
    """Two definitions with the same name and other moves get tables of their own."""
    three = puzzle("same-name", {"t": [1, 2, 0, 3], "s": [0, 1, 3, 2]}, "A;A;B;B")
    four = puzzle("same-name", {"t": [1, 2, 3, 0]}, "A;A;B;B")
    assert group_table(three).order == 24 and group_table(four).order == 4
    for p in (three, four):
        for s in p.scramble(np.random.default_rng(2), 5, 10):
            assert replays(p, s, solve_group(p, s).actions)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["cube_4/4/4", "globe_1/8"])
def test_bigger_competition_puzzles_are_solved(kind: str) -> None:
    """The 4x4x4 (identical centres, table in seconds) and the 1/8 globe (the whole symmetric group
    on 32 positions, labels in pairs)."""
    p = family_puzzle(kind)
    for s in p.scramble(np.random.default_rng(11), 3, 100):
        r = solve_group(p, s, max_nodes=100)
        assert r.solved and replays(p, s, r.actions)


def test_a_large_node_limit_makes_at_most_max_tries_sifts() -> None:
    from puzzlezero.classic.group import MAX_TRIES, solve_group

    wreath = pz.make("wreath_6-6")
    state = wreath.parse("l r l' r r")
    result = solve_group(wreath, state, max_nodes=2_000_000, time_limit=60)
    assert result.nodes_generated <= MAX_TRIES < 2_000_000
    assert wreath.is_goal(wreath.apply_moves(state, result.actions)[None])[0]
