"""Pictures of permutation puzzles (:mod:`puzzlezero.puzzles.permutation.viewer`): a cube's net, a
wreath's two rings read off its moves, rows for the rest; and the cubing.js move of each of a
cube's moves, which the web page's 3-D view plays (the browser test compares the two pictures)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from puzzlezero.puzzles.permutation import FORMAT, Definition, PermutationPuzzle, family_puzzle
from puzzlezero.puzzles.permutation.families import cubers_cube
from puzzlezero.puzzles.permutation.viewer import (
    FACE_ORDER,
    cube_stickers,
    cubing_move,
    cubing_view,
    net_cells,
    render_text,
    to_svg,
    wreath_rings,
)
from puzzlezero.testing import check_puzzle


def positions_drawn(svg: str) -> list[int]:
    return [int(p) for p in re.findall(r'data-position="(\d+)"', svg)]


# ---- pictures ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["cube_3/3/3", "wreath_6/6", "wreath_21/21", "globe_2/6"])
def test_every_position_is_drawn_once_in_one_svg_element(kind: str) -> None:
    p = family_puzzle(kind)
    state = p.apply_moves(p.goal(), p.parse_moves(" ".join(p.action_names[:3])))
    svg = to_svg(p, state)
    assert svg.startswith("<svg") and svg.endswith("</svg>") and svg.count("<svg") == 1
    assert sorted(positions_drawn(svg)) == list(range(p.definition.positions))
    assert render_text(p, state).strip()


def test_a_cube_is_drawn_as_its_net_coloured_by_face() -> None:
    p = family_puzzle("cube_2/2/2")
    svg = to_svg(p, p.goal())
    # U above F, L F R B across, D below: the net's cells in face units
    cells = {pos: (r // 2, c // 2) for r, c, pos in net_cells(2)}
    places = {face: cells[4 * f] for f, face in enumerate(FACE_ORDER)}
    assert places == {"U": (0, 1), "F": (1, 1), "R": (1, 2), "B": (1, 3), "L": (1, 0), "D": (2, 1)}
    fills = re.findall(r'fill="(#[0-9a-f]{6})"', svg)
    # white, green, red, blue, orange, yellow: the faces' colours as cubing.js draws them
    faces = ["#ffffff", "#22aa44", "#dd2222", "#2255dd", "#ff8811", "#ffdd00"]
    assert [fills[4 * f] for f in range(6)] == faces
    assert "<text" not in svg  # six colours say it all


def test_a_wreath_is_drawn_as_two_rings_that_meet_at_its_two_shared_positions() -> None:
    p = family_puzzle("wreath_7/7")
    rings = wreath_rings(p)
    assert rings is not None
    left, right = rings
    assert (len(left), len(right)) == (7, 7) and left[0] == right[0]
    assert set(left) | set(right) == set(range(12)) and len(set(left) & set(right)) == 2
    svg = to_svg(p, p.goal())
    assert svg.count('fill="none"') == 2  # the two rings, behind the positions
    assert svg.count("<circle") == 2 + 12 and svg.count("<text") == 12  # each position with its label


def test_a_wreath_whose_moves_show_no_rings_is_drawn_as_rows() -> None:
    data = {
        "format": FORMAT,
        "name": "not-a-wreath",
        "positions": 4,
        "moves": {"s": [1, 0, 2, 3], "t": [0, 1, 3, 2]},
        "goal": "A;B;C;D",
        "drawing": {"kind": "wreath", "left": 3, "right": 3},
    }
    p = PermutationPuzzle(Definition.from_dict(data))
    assert wreath_rings(p) is None
    svg = to_svg(p, p.goal())
    assert svg.count("<rect") == 4 and sorted(positions_drawn(svg)) == [0, 1, 2, 3]


def test_the_pictures_pass_the_conformance_checks() -> None:
    for kind in ("wreath_6/6", "cube_2/2/2"):
        check_puzzle(family_puzzle(kind), n=24, checks=["text_round_trip"])


# ---- cubing.js ---------------------------------------------------------------------------------
def test_the_competition_cube_moves_are_slice_turns_in_cubing_notation() -> None:
    view = cubing_view(family_puzzle("cube_4/4/4"))
    assert view is not None and view["puzzle"] == "4x4x4"
    moves = view["moves"]
    # f from F, r from R, d from D, clockwise as seen from that face; the far slices named from
    # the opposite face, turning the other way
    assert [moves[f"f{k}"] for k in range(4)] == ["F", "2F", "2B'", "B'"]
    assert [moves[f"r{k}"] for k in range(4)] == ["R", "2R", "2L'", "L'"]
    assert [moves[f"d{k}"] for k in range(4)] == ["D", "2D", "2U'", "U'"]
    assert moves["f0'"] == "F'" and moves["r3'"] == "L" and moves["d1'"] == "2D'"
    small = cubing_view(family_puzzle("cube_2/2/2"))
    assert small is not None and small["moves"]["f1"] == "B'" and small["puzzle"] == "2x2x2"
    three = cubing_view(family_puzzle("cube_3/3/3"))
    assert three is not None and three["moves"]["r1"] == "2R"


def test_block_turns_and_rotations_have_their_cubing_names() -> None:
    p = PermutationPuzzle(Definition.from_dict(cubers_cube(5)))
    view = cubing_view(p)
    assert view is not None
    for move in ("U", "Rw", "Dw'", "R'"):  # cubers' names are cubing.js's
        assert view["moves"][move] == move
    n = 4
    pts = cube_stickers(n)
    turn_all = np.array(family_puzzle("cube_4/4/4").perms[0])  # f0, then every slice of F's axis
    for k in range(1, n):
        turn_all = turn_all[family_puzzle("cube_4/4/4").perms[k]]
    assert cubing_move(turn_all, n, pts) == "z"
    block = family_puzzle("cube_4/4/4").perms[4][family_puzzle("cube_4/4/4").perms[5]][
        family_puzzle("cube_4/4/4").perms[6]
    ]
    assert cubing_move(block, n, pts) == "3Rw"


def test_no_3d_view_where_cubing_cannot_show_the_puzzle() -> None:
    # every sticker its own label: cubing.js draws faces in six colours
    assert cubing_view(family_puzzle("cube_3/3/3", "distinct")) is None
    assert cubing_view(family_puzzle("cube_8/8/8")) is None  # cubing.js has cubes up to 7x7x7
    assert cubing_view(family_puzzle("wreath_6/6")) is None
    p = family_puzzle("cube_2/2/2")
    f0, r0 = p.perms[0], p.perms[2]
    assert cubing_move(f0[r0], 2) is None  # two turns at once are no one cubing.js move
