"""End-to-end tests of the pages in real headless Chromium (Debian ``/usr/bin/chromium`` driven by
Python Playwright; never ``playwright install``). Each test scrambles, moves by keyboard or click,
solves, plays the solution and checks the page's own solved state, which the server computes from
the puzzle state (and, for the 3-D cube, cubing.js's own pattern check too).

The cube test uses ``puzzlezero serve`` with the shipped model when ``models/cube3`` exists (or the
model folder ``$PUZZLEZERO_TEST_CUBE3_MODEL``), else an in-process server whose solver is the breadth-first test double of ``test_web``. Screenshots go to
``$PUZZLEZERO_ARTIFACTS`` (else a pytest tmp folder). Skips cleanly without Chromium, Playwright or
(for the 3-D view) ``node_modules``; CI installs them with ``scripts/install_browser.sh`` and ``npm ci``.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import puzzlezero as pz
from tests.web.browser_support import (
    CUBE3_MODEL,
    HAS_CUBING,
    HAS_MODEL,
    PUZZLEZERO,
    ROOT,
    ThreadServer,
    fake_app,
    open_page,
    require_browser,
    snapshot,
    solve_and_play,
    wait_http,
)
from tests.web.live_server import free_port

pytestmark = pytest.mark.browser

require_browser()


@pytest.fixture(scope="module")
def cube_server(fake_server: str) -> Iterator[str]:
    """The real CLI server with the shipped model (or $PUZZLEZERO_TEST_CUBE3_MODEL), else the fake."""
    if not (HAS_MODEL or CUBE3_MODEL):
        yield fake_server
        return
    port = free_port()
    extra = ["--model", f"cube3={CUBE3_MODEL}"] if CUBE3_MODEL else []
    proc = subprocess.Popen(
        [*PUZZLEZERO, "serve", "--port", str(port), "--workers", "1", "--log-level", "warning", *extra],
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url, proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(15)


# ---- tests -----------------------------------------------------------------------------------
@pytest.mark.skipif(not HAS_CUBING, reason="node_modules with cubing.js missing (npm ci)")
def test_cube_3d_scramble_turn_solve_play(page: Any, cube_server: str, artifacts: Path) -> None:
    open_page(page, cube_server)
    assert snapshot(page)["mode"] == "3d" and page.locator("twisty-player").count() == 1
    page.fill("#depth", "3")
    page.click("#scramble")
    page.wait_for_function("() => window.pz.snapshot().alg.split(' ').length === 3", timeout=10_000)
    page.keyboard.press("Shift+KeyR")  # keyboard turn: R'
    page.wait_for_function('() => window.pz.snapshot().alg.endsWith(" R\'")', timeout=10_000)
    # the badge follows the page's solved check after the turn; in a full test run it has
    # taken more than 10 s to show
    page.wait_for_selector("#solved-badge[data-solved='false']", timeout=30_000)
    before = snapshot(page)
    assert len(before["alg"].split()) == 4 and not before["solved"]
    end = solve_and_play(page)
    assert end["solved"] and len(end["solution"]) >= 1 and end["alg"].startswith(before["alg"])
    page.wait_for_function("async () => await window.pz.cubingSolved() === true", timeout=20_000)
    # the cube's length in quarter turns, and in half turns beside it
    assert re.fullmatch(r"\d+ moves \(\d+ in half turns\)", page.inner_text("#stat-length"))
    page.screenshot(path=str(artifacts / "cube-3d.png"), full_page=True)
    assert page.errors == []


def test_cube_2d_fallback_without_cubing(page: Any, artifacts: Path, tmp_path: Path) -> None:
    with ThreadServer(fake_app(node_modules=tmp_path)) as url:
        open_page(page, url)
        assert snapshot(page)["mode"] == "2d"
        assert "npm ci" in page.inner_text("#notice") and page.is_visible("#cube-2d svg")
        page.click("#move-buttons button:text-is('F')")
        page.keyboard.press("KeyU")
        page.wait_for_function("() => window.pz.snapshot().alg === 'F U'", timeout=10_000)
        page.wait_for_selector("#solved-badge[data-solved='false']", timeout=10_000)
        end = solve_and_play(page)
        assert end["solution"] == ["U'", "F'"]
        page.screenshot(path=str(artifacts / "cube-2d.png"), full_page=True)
        cube = pz.make("cube3")
        facelets = cube.format(cube.parse("R U"))  # facelets: solved by the server, shown as its inverse
        page.fill("#input", facelets)
        page.click("#load")
        page.wait_for_function(
            "() => document.getElementById('status').textContent.includes('facelets loaded')", timeout=30_000
        )
        assert snapshot(page)["alg"] == "R U" and snapshot(page)["state"] == facelets
        page.fill("#input", "R U2 F'")  # a pasted scramble with a half turn
        page.click("#load")
        page.wait_for_function('() => window.pz.snapshot().alg === "R U2 F\'"', timeout=10_000)
        page.wait_for_function(
            f"() => window.pz.snapshot().state === '{cube.format(cube.parse('R U U F' + chr(39)))}'",
            timeout=10_000,
        )
    assert page.errors == []


def test_board_sliding_keys_click_solve_play(page: Any, fake_server: str, artifacts: Path) -> None:
    open_page(page, fake_server + "/board?puzzle=puzzle15")
    assert snapshot(page)["solved"]
    assert {"learned", "bwas", "greedy"} <= set(
        page.eval_on_selector_all("#method option", "os => os.map(o => o.value)")
    )
    page.keyboard.press("ArrowDown")  # tile above the blank slides down: blank to row 2
    page.keyboard.press("ArrowRight")  # tile left of the blank slides right: blank to (2, 2)
    page.wait_for_function("() => window.pz.snapshot().state.split(' ').indexOf('0') === 10", timeout=10_000)
    page.click("#board svg text:text-is('10')")  # tile 10 sits at (2, 1), left of the blank
    page.wait_for_function("() => window.pz.snapshot().state.split(' ').indexOf('0') === 9", timeout=10_000)
    assert not snapshot(page)["solved"]
    end = solve_and_play(page)
    assert end["solution"] == ["L", "L", "U"]
    page.screenshot(path=str(artifacts / "board-puzzle15.png"), full_page=True)
    assert page.errors == []


def test_board_says_when_the_fallback_found_the_solution(page: Any) -> None:
    """A solve answered by the model-free fallback (``fallback`` in the answer) says so beside
    its length."""
    from dataclasses import dataclass

    from puzzlezero.web import ServerConfig, create_app
    from tests.web.test_web import FakeResult, bfs_solve

    @dataclass
    class Rescued(FakeResult):
        def to_json(self) -> dict[str, Any]:
            return {**super().to_json(), "fallback": "reduction"}

    def rescued_solve(puzzle: Any, state: Any, opts: Any, on_solution: Any = None) -> Rescued:
        r = bfs_solve(puzzle, state, opts)
        return Rescued(r.puzzle, r.solved, r.solution, r.nodes_generated, r.seconds, r.opts)

    app = create_app(ServerConfig(executor="thread", workers=1), solve_fn=rescued_solve)
    with ThreadServer(app) as url:
        open_page(page, url + "/board?puzzle=puzzle15")
        page.keyboard.press("ArrowDown")
        page.wait_for_function("() => !window.pz.snapshot().solved", timeout=10_000)
        end = solve_and_play(page)
        assert end["solution"] == ["U"]
        assert (
            page.inner_text("#stat-length")
            == "1 moves (by the reduction fallback: the search found none in time)"
        )
    assert page.errors == []


def test_board_lights_out_click_solve_play(page: Any, fake_server: str) -> None:
    open_page(page, fake_server + "/board?puzzle=lightsout7")
    # the shipped model is a policy without a value: its beam (the learned default) and the optimal
    # solver are offered, the value searches are not
    methods = page.eval_on_selector_all("#method option", "os => os.map(o => o.value)")
    assert methods[0] == "learned" and "optimal" in methods and not {"bwas", "greedy"} & set(methods)
    page.click("#board rect[data-index='24']")
    page.wait_for_function(
        "() => window.pz.snapshot().state.split('').filter(c => c === '1').length === 5", timeout=10_000
    )
    page.click("#board rect[data-index='0']")
    page.wait_for_function(
        "() => window.pz.snapshot().state.split('').filter(c => c === '1').length === 8", timeout=10_000
    )
    end = solve_and_play(page)
    assert sorted(end["solution"]) == ["0", "24"]
    assert page.errors == []


def test_board_shows_its_place_in_the_line_while_the_server_is_busy(page: Any) -> None:
    """Two solves hold the only worker and the line's first place: the page's solve is queued
    2nd, says so with an expected wait, and is answered once they are done."""
    from puzzlezero.web import ServerConfig, create_app
    from tests.web.test_web import bfs_solve

    gate = threading.Event()

    def gated(puzzle: Any, state: Any, opts: Any, on_solution: Any = None) -> Any:
        assert gate.wait(60)
        return bfs_solve(puzzle, state, opts)

    app = create_app(ServerConfig(executor="thread", workers=1), solve_fn=gated)
    try:
        with ThreadServer(app) as url:
            open_page(page, url + "/board?puzzle=puzzle8")
            for moves in ("D", "R"):  # one runs, one waits
                p8 = pz.make("puzzle8")
                body = {
                    "puzzle": "puzzle8",
                    "state": p8.format(p8.apply_moves(p8.goal(), p8.parse_moves(moves))),
                }
                req = urllib.request.Request(
                    url + "/api/jobs",
                    data=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json"},
                )
                assert json.loads(urllib.request.urlopen(req, timeout=10).read())["status"] in (
                    "running",
                    "queued",
                )
            page.keyboard.press("ArrowDown")
            page.wait_for_selector("#solved-badge[data-solved='false']", timeout=10_000)
            page.click("#solve")
            page.wait_for_function(
                "() => /^queued: 2nd in line, about \\d+ s until it starts$/.test("
                "document.getElementById('status').textContent)",
                timeout=10_000,
            )
            gate.set()
            page.wait_for_function("() => window.pz.snapshot().solution.length > 0", timeout=20_000)
            assert snapshot(page)["solution"] == ["U"] and "found a 1-move solution" in page.inner_text(
                "#status"
            )
    finally:
        gate.set()
    assert page.errors == []


LEVEL = """##########
#        #
#  .     #
#  $     #
#  @     #
#        #
#    .$  #
#   . $  #
#    $.  #
##########"""


def test_board_sokoban_keys_and_click(page: Any, fake_server: str) -> None:
    sokoban = pz.make("sokoban")
    open_page(page, fake_server + "/board?puzzle=sokoban")
    page.fill("#input", LEVEL)
    page.click("#load")
    page.wait_for_function(
        f"() => window.pz.snapshot().state === {sokoban.format(sokoban.parse(LEVEL))!r}", timeout=10_000
    )
    pushed = sokoban.apply_moves(sokoban.parse(LEVEL), sokoban.parse_moves("U"))  # box onto its target
    page.keyboard.press("ArrowUp")
    page.wait_for_function(f"() => window.pz.snapshot().state === {sokoban.format(pushed)!r}", timeout=10_000)
    box = page.locator("#board svg").bounding_box()  # click the floor below the player (row 4, col 3)
    page.mouse.click(box["x"] + 3.5 * box["width"] / 10, box["y"] + 4.5 * box["height"] / 10)
    back = sokoban.apply_moves(pushed, sokoban.parse_moves("D"))
    page.wait_for_function(f"() => window.pz.snapshot().state === {sokoban.format(back)!r}", timeout=10_000)
    assert "*" in sokoban.format(back).splitlines()[2] and page.errors == []
