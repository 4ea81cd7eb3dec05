"""Permutation puzzles defined as data on the board page, in headless Chromium: the puzzle list, a
button per move (beside its inverse, grouped by name), scramble, solve and play; and the 3-D view of
cubes, whose every move is checked against cubing.js's own picture of the same moves.

The picture check: for each cube cubing.js has (2x2x2 .. 7x7x7) a random sequence of every kind of
move is applied by our puzzle (the net the server draws) and, as the server maps each move, by
cubing.js's own puzzle and 2-D renderer; the two nets must show the same colour on every sticker.
Screenshots (a 4x4x4 in 3-D with its net, a wreath) go to ``$PUZZLEZERO_ARTIFACTS`` (else a pytest
tmp folder). Skips cleanly without Chromium, Playwright or (for the 3-D view) ``node_modules``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.puzzles.permutation.families import family_definition
from tests.web.browser_support import (
    HAS_CUBING,
    ThreadServer,
    open_page,
    require_browser,
    screenshot,
    snapshot,
    solve_and_play,
)

pytestmark = pytest.mark.browser
require_browser()

SIZES = range(2, 8)
CUBES = {n: {**family_definition(f"cube_{n}/{n}/{n}"), "name": f"webtest-cube{n}"} for n in SIZES}
WREATH = {**family_definition("wreath_12/12"), "name": "webtest-wreath12"}
GLOBE = {**family_definition("globe_1/8"), "name": "webtest-globe"}

#: cubing.js's own net of a cube after an alg: each sticker's colour and where it is drawn
CUBING_NET = """
async ({ puzzle, alg }) => {
  const { ExperimentalSVGAnimator } = await import("cubing/twisty");
  const { puzzles } = await import("cubing/puzzles");
  const loader = puzzles[puzzle];
  const kpuzzle = await loader.kpuzzle();
  const anim = new ExperimentalSVGAnimator(kpuzzle, await loader.svg());
  anim.wrapperElement.style.width = "800px";
  document.body.append(anim.wrapperElement);
  const read = (pattern) => {
    anim.drawPattern(pattern);
    const svg = anim.svgElement;
    return Array.from(svg.querySelectorAll("[id]"))
      .filter((node) => /^[A-Z0-9]+-l\\d+-o\\d+$/.test(node.id))
      .map((node) => {
        const gradient = node.getAttribute("style").match(/url\\(#(.*)\\)/)[1];
        const box = node.getBoundingClientRect();
        return {
          x: box.x + box.width / 2, y: box.y + box.height / 2,
          colour: svg.querySelector(`[id="${gradient}"]`).children[0].getAttribute("stop-color"),
        };
      });
  };
  const solved = read(kpuzzle.defaultPattern());
  const after = read(kpuzzle.defaultPattern().applyAlg(alg));
  anim.wrapperElement.remove();
  return { solved, after };
}
"""


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    from puzzlezero import registry
    from puzzlezero.web import ServerConfig, create_app
    from tests.web.test_web import bfs_solve

    saved = dict(registry._REGISTRY), dict(registry._INSTANCES)
    config = ServerConfig(executor="thread", workers=1, puzzle_definitions=(*CUBES.values(), WREATH, GLOBE))
    try:
        with ThreadServer(create_app(config, solve_fn=bfs_solve)) as url:
            yield url
    finally:  # the puzzles this module served are forgotten after it
        registry._REGISTRY.clear()
        registry._REGISTRY.update(saved[0])
        registry._INSTANCES.clear()
        registry._INSTANCES.update(saved[1])


def cubing_net(n: int, reading: dict[str, list[dict[str, Any]]]) -> dict[int, set[str]]:
    """cubing.js's net as our positions: each sticker's face letters (U F R B L D) by its colour.

    The faces are found in cubing.js's solved picture (the stickers of one colour), placed by where
    they are drawn (U on top, D below, L F R B across), and each face's stickers by row and column
    in its box (an odd cube's centre may be drawn as several pieces: all must agree)."""
    solved, after = reading["solved"], reading["after"]
    colours = sorted({s["colour"] for s in solved})
    assert len(colours) == 6, colours
    boxes = {}
    for colour in colours:
        xs = [s["x"] for s in solved if s["colour"] == colour]
        ys = [s["y"] for s in solved if s["colour"] == colour]
        boxes[colour] = (min(xs), max(xs), min(ys), max(ys))
    by_y = sorted(colours, key=lambda c: boxes[c][2])
    up, down, middle = by_y[0], by_y[-1], sorted(by_y[1:5], key=lambda c: boxes[c][0])
    face_of = {up: "U", down: "D", **dict(zip(middle, ["L", "F", "R", "B"], strict=True))}
    order = "UFRBLD"
    net: dict[int, set[str]] = {}
    for sticker, now in zip(solved, after, strict=True):
        left, right, top, bottom = boxes[sticker["colour"]]
        cell_x = (right - left) / max(n - 1, 1)  # centres of the first and last columns
        cell_y = (bottom - top) / max(n - 1, 1)
        col = round((sticker["x"] - left) / cell_x) if n > 1 else 0
        row = round((sticker["y"] - top) / cell_y) if n > 1 else 0
        position = order.index(face_of[sticker["colour"]]) * n * n + row * n + col
        net.setdefault(position, set()).add(face_of[now["colour"]])
    return net


def our_net(n: int, moves: list[str]) -> dict[int, str]:
    """Our puzzle's state after ``moves`` as each position's face letter (the goal's face colours)."""
    p = pz.make(f"webtest-cube{n}")
    state = p.apply_moves(p.goal(), p.parse_moves(moves))
    face = {p.labels.index(p.definition.goal[f * n * n]): "UFRBLD"[f] for f in range(6)}
    return {i: face[int(v)] for i, v in enumerate(state)}


# ---- tests -----------------------------------------------------------------------------------
@pytest.mark.skipif(not HAS_CUBING, reason="node_modules with cubing.js missing (npm ci)")
def test_the_3d_view_shows_what_the_net_shows_move_for_move(page: Any, server: str) -> None:
    """Every size cubing.js has, every kind of move (each slice, both directions): cubing.js's
    picture after the server's cubing.js moves is our puzzle's picture, sticker by sticker."""
    open_page(page, server + "/board?puzzle=webtest-cube4")
    infos = {p["name"]: p for p in page.evaluate("async () => (await fetch('/api/puzzles')).json()")}
    rng = np.random.default_rng(7)
    for n in SIZES:
        info = infos[f"webtest-cube{n}"]
        assert info["cubing"]["puzzle"] == f"{n}x{n}x{n}"
        names = info["action_names"]
        for trial in range(3):
            # each move once as the first move of its trial (one move alone shows its effect), then a mix
            moves = [names[(trial * len(names) // 3 + k) % len(names)] for k in range(len(names) // 3)]
            moves += [names[int(a)] for a in rng.integers(0, len(names), 10)]
            alg = " ".join(info["cubing"]["moves"][m] for m in moves)
            reading = page.evaluate(CUBING_NET, {"puzzle": info["cubing"]["puzzle"], "alg": alg})
            theirs, ours = cubing_net(n, reading), our_net(n, moves)
            assert sorted(theirs) == list(range(6 * n * n))
            wrong = [i for i in ours if theirs[i] != {ours[i]}]
            assert not wrong, f"{n}x{n}x{n} after {moves} ({alg}): stickers {wrong[:8]} differ"
    assert page.errors == []


@pytest.mark.skipif(not HAS_CUBING, reason="node_modules with cubing.js missing (npm ci)")
def test_a_cube_defined_as_data_turns_scrambles_solves_and_plays_in_3d(
    page: Any, server: str, artifacts: Path
) -> None:
    open_page(page, server + "/board?puzzle=webtest-cube4")
    assert snapshot(page)["mode"] == "3d" and page.locator("#board-3d twisty-player").count() == 1
    assert page.is_visible("#board svg")  # the net stays beside the 3-D view
    # a button per move, beside its inverse, grouped by the letters of the names
    groups = page.eval_on_selector_all("#moves .move-group", "gs => gs.map(g => g.dataset.group)")
    assert groups == ["f", "r", "d"]
    pairs = page.eval_on_selector_all(
        "#moves .move-group[data-group='r'] .move-pair", "ps => ps.map(p => p.textContent)"
    )
    assert pairs == ["r0r0'", "r1r1'", "r2r2'", "r3r3'"]
    page.click("#moves button[data-move='f0']")
    page.click('#moves button[data-move="r2\'"]')
    page.wait_for_function('() => window.pz.snapshot().alg === "f0 r2\'"', timeout=10_000)
    shown = page.evaluate("async () => await window.pz.cubing()")
    assert shown == {"puzzle": "4x4x4", "setup": "", "alg": "F 2L"}
    p = pz.make("webtest-cube4")
    turned = p.format(p.apply_moves(p.goal(), p.parse_moves(["f0", "r2'"])))
    page.wait_for_function(f"() => window.pz.snapshot().state === {turned!r}", timeout=10_000)
    page.fill("#depth", "3")
    page.click("#scramble")
    page.wait_for_function("() => window.pz.snapshot().alg.split(' ').length === 3", timeout=10_000)
    scrambled = snapshot(page)["alg"].split()
    end = solve_and_play(page)
    assert end["solved"] and end["alg"].split()[:3] == scrambled
    shown = page.evaluate("async () => await window.pz.cubing()")
    moves = {m: c for m, c in zip(p.action_names, CUBING_MOVES_4, strict=True)}
    assert shown["setup"] == " ".join(moves[m] for m in scrambled)
    assert shown["alg"] == " ".join(moves[m] for m in end["solution"])
    screenshot(page, artifacts / "board-cube4-3d.png")
    # a state given as labels has no moves from the goal: only its net shows, and the page says why
    page.fill("#input", p.format(p.apply_moves(p.goal(), p.parse_moves("d1"))))
    page.click("#load")
    page.wait_for_function("() => window.pz.snapshot().mode === '2d'", timeout=10_000)
    assert "given as labels" in page.inner_text("#notice") and not page.is_visible("#board-3d")
    page.fill("#input", "d1.-f3")  # moves from the goal, as the competition writes them
    page.click("#load")
    page.wait_for_function("() => window.pz.snapshot().mode === '3d'", timeout=10_000)
    assert snapshot(page)["alg"] == "d1 f3'"
    assert page.errors == []


#: the cubing.js move of each of the 4x4x4's moves, in the order of its moves
CUBING_MOVES_4 = [
    "F", "2F", "2B'", "B'", "R", "2R", "2L'", "L'", "D", "2D", "2U'", "U'",
    "F'", "2F'", "2B", "B", "R'", "2R'", "2L", "L", "D'", "2D'", "2U", "U",
]  # fmt: skip


def test_a_wreath_defined_as_data_plays_solves_and_shows_its_rings(
    page: Any, server: str, artifacts: Path
) -> None:
    open_page(page, server + "/board?puzzle=webtest-wreath12")
    listed = page.eval_on_selector_all("#puzzle option", "os => os.map(o => o.value)")
    assert {"webtest-wreath12", "webtest-globe", "webtest-cube2"} <= set(listed) and "cube3" not in listed
    assert snapshot(page)["solved"] and snapshot(page)["mode"] == "2d"
    assert page.locator("#board svg circle[data-position]").count() == 22  # two rings of 12 sharing 2
    # few moves: one row of pairs, each move beside its inverse
    pairs = page.eval_on_selector_all("#moves .move-pair", "ps => ps.map(p => p.textContent)")
    assert pairs == ["ll'", "rr'"]
    methods = page.eval_on_selector_all("#method option", "os => os.map(o => o.value)")
    assert page.eval_on_selector("#method", "s => s.value") == "misplaced" and "group" in methods
    for move in ("l", "r", "l"):
        page.click(f"#moves button[data-move='{move}']")
    page.wait_for_function("() => window.pz.snapshot().alg === 'l r l'", timeout=10_000)
    w = pz.make("webtest-wreath12")
    assert snapshot(page)["state"] == w.format(w.apply_moves(w.goal(), w.parse_moves("l r l")))
    end = solve_and_play(page)
    assert end["solution"] == ["l'", "r'", "l'"]
    screenshot(page, artifacts / "board-wreath12.png")
    # a globe: its rings as rows of labelled cells, many moves grouped by name
    page.select_option("#puzzle", "webtest-globe")
    page.wait_for_function("() => window.pz.snapshot().puzzle === 'webtest-globe'", timeout=10_000)
    # the board is drawn after the snapshot names the puzzle: wait for its cells, then count them
    page.wait_for_function(
        "() => document.querySelectorAll('#board svg rect[data-position]').length > 0", timeout=10_000
    )
    assert page.eval_on_selector_all("#moves .move-group", "gs => gs.map(g => g.dataset.group)") == ["r", "f"]
    assert page.locator("#board svg rect[data-position]").count() == 32
    assert page.errors == []
