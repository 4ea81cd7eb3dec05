"""The cube page for real cubes and for teaching, in headless Chromium: a cube entered by its
colours on the sticker net (the server's own messages beside it for impossible ones, then solved),
solutions written as people write them (``R2``), the position and its solution in the page's URL
(and the board page's), and the hint view (the network's estimate after each move).

Screenshots go to ``$PUZZLEZERO_ARTIFACTS`` (else a pytest tmp folder): the net being filled in, the
entered cube solved with its solution, and the hint view.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

import pytest

import puzzlezero as pz
from puzzlezero.errors import InvalidStateError
from tests.web.browser_support import (
    HAS_MODEL,
    open_page,
    require_browser,
    screenshot,
    snapshot,
    solve_and_play,
)

pytestmark = pytest.mark.browser
require_browser()

CUBE = pz.make("cube3")
SOLVED = CUBE.format(CUBE.goal())


def facelets_after(moves: str) -> str:
    return CUBE.format(CUBE.apply_moves(CUBE.goal(), CUBE.parse_moves(moves)))


def swapped(text: str, *pairs: tuple[int, int]) -> str:
    """``text`` with the stickers of each pair of indices exchanged."""
    chars = list(text)
    for i, j in pairs:
        chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


def parser_message(facelets: str) -> str:
    """What the puzzle's own parser (the CLI's) says of an impossible cube."""
    with pytest.raises(InvalidStateError) as exc:
        CUBE.parse(facelets)
    return str(exc.value)


def paint_net(page: Any, facelets: str) -> None:
    """Start the net from solved, then click the palette and every sticker that differs."""
    page.click("#net-clear")
    page.wait_for_function(f"() => window.pz.snapshot().net === {SOLVED!r}", timeout=10_000)
    for i, (now, want) in enumerate(zip(SOLVED, facelets, strict=True)):
        if now != want:
            page.click(f"#palette .swatch[data-colour='{want}']")
            page.click(f"#net .sticker[data-index='{i}']")
    page.wait_for_function(f"() => window.pz.snapshot().net === {facelets!r}", timeout=10_000)


def net_message(page: Any) -> str:
    return page.inner_text("#net-message")


def wait_net_message(page: Any, text: str) -> None:
    page.wait_for_function(
        "(text) => document.getElementById('net-message').textContent === text", arg=text, timeout=10_000
    )


def link_params(page: Any) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(page.url).query))


# ---- the sticker net -------------------------------------------------------------------------
def test_impossible_cubes_on_the_net_get_the_parsers_messages(page: Any, fake_server: str) -> None:
    open_page(page, fake_server)
    # the centres name the faces: they cannot be recoloured
    centres = page.eval_on_selector_all(
        "#net .sticker.centre", "bs => bs.map(b => [b.dataset.index, b.disabled])"
    )
    assert centres == [[str(9 * f + 4), True] for f in range(6)]
    cases = {
        "colour counts": SOLVED[:7] + "F" + SOLVED[8:],  # a tenth green sticker, eight white ones
        "flipped edge": swapped(SOLVED, (7, 19)),  # the UF edge's two stickers exchanged
        "twisted corner": swapped(SOLVED, (8, 9), (9, 20)),  # the UFR corner turned in place
        "parity": swapped(SOLVED, (19, 10)),  # the UF and UR edges exchanged, nothing else
    }
    seen = set()
    for what, facelets in cases.items():
        expected = parser_message(facelets)
        paint_net(page, facelets)
        wait_net_message(page, expected)
        assert page.get_attribute("#net-message", "data-kind") == "error", what
        seen.add(expected)
    assert len(seen) == 4  # four different messages
    assert any("appear 9 times" in m for m in seen) and any("flipped" in m for m in seen)
    assert any("twisted" in m for m in seen) and any("parities differ" in m for m in seen)
    page.click("#net-solve")  # an impossible cube is not sent to the solver
    page.wait_for_function("() => document.getElementById('status').dataset.kind === 'error'", timeout=10_000)
    assert "not a cube one can reach by turning" in page.inner_text("#status")
    assert snapshot(page)["solution"] == [] and page.errors == []


def test_a_cube_entered_by_colours_is_solved_with_half_turns_written_r2(
    page: Any, fake_server: str, artifacts: Path
) -> None:
    open_page(page, fake_server)
    target = facelets_after("R U2")
    paint_net(page, target[:3] + "D" + target[4:])  # on the way: one sticker still wrong
    page.wait_for_selector("#net-message[data-kind='error']", timeout=10_000)
    screenshot(page, artifacts / "cube-net-entry.png")
    paint_net(page, target)
    wait_net_message(page, "a cube one can reach by turning: ready to solve")
    page.click("#net-solve")
    page.wait_for_function("() => window.pz.snapshot().solution.length > 0", timeout=60_000)
    start = snapshot(page)
    # the breadth-first double finds U' U' R' (or U U R'); the page writes it as people do
    assert start["solution"] == ["U2", "R'"] and start["state"] == target
    assert page.eval_on_selector_all("#solution .chip", "cs => cs.map(c => c.textContent)") == ["U2", "R'"]
    assert start["alg"] == "R U2"  # the entered cube, shown as the inverse of its solution
    assert link_params(page) == {"alg": "R U2", "solution": "U2 R'"}
    page.fill("#speed", page.get_attribute("#speed", "max"))
    page.dispatch_event("#speed", "input")
    page.click("#play")
    page.wait_for_function(
        "() => { const s = window.pz.snapshot(); return s.pos === 2 && !s.playing; }", timeout=30_000
    )
    page.wait_for_selector("#solved-badge[data-solved='true']", timeout=10_000)
    end = snapshot(page)
    assert end["solved"] and end["state"] == SOLVED
    screenshot(page, artifacts / "cube-net-solved.png")
    assert page.errors == []


# ---- links -----------------------------------------------------------------------------------
def test_a_link_opens_the_position_and_its_solution(page: Any, fake_server: str) -> None:
    open_page(
        page, fake_server + "/?alg=" + urllib.parse.quote("R U2") + "&solution=" + urllib.parse.quote("U2 R'")
    )
    page.wait_for_function("() => window.pz.snapshot().solution.length === 2", timeout=10_000)
    opened = snapshot(page)
    assert opened["alg"] == "R U2" and opened["state"] == facelets_after("R U2") and not opened["solved"]
    assert "opened the link's position" in page.inner_text("#status")
    page.click("#to-end")
    page.wait_for_selector("#solved-badge[data-solved='true']", timeout=10_000)
    # a solution that does not solve the position is refused, the position still shown
    page.goto(fake_server + "/?alg=R&solution=R")
    page.wait_for_function(
        "() => window.pz && document.getElementById('status').dataset.kind === 'error'", timeout=30_000
    )
    assert "the link's solution was not loaded: R does not solve this position" in page.inner_text("#status")
    assert snapshot(page)["alg"] == "R" and snapshot(page)["solution"] == []
    # a 2x2x2's net: four stickers a face, none of them a centre
    open_page(page, fake_server + "/?puzzle=cube2&alg=R")
    page.wait_for_function("() => window.pz.snapshot().alg === 'R'", timeout=10_000)
    # the status line is written after the position: wait for it rather than read it at once
    page.wait_for_function(
        "() => document.querySelector('#status').innerText.includes(\"opened the link's\")", timeout=10_000
    )
    assert snapshot(page)["puzzle"] == "cube2" and "opened the link's 1-move position" in page.inner_text(
        "#status"
    )
    assert page.locator("#net .sticker").count() == 24 and page.locator("#net .sticker.centre").count() == 0
    # facelets in a link go to the sticker net, ready to solve
    open_page(page, fake_server + "/?state=" + facelets_after("F"))
    page.wait_for_function(f"() => window.pz.snapshot().net === {facelets_after('F')!r}", timeout=10_000)
    wait_net_message(page, "a cube one can reach by turning: ready to solve")
    assert page.errors == []


def test_turns_and_solutions_update_the_link(page: Any, fake_server: str) -> None:
    open_page(page, fake_server)
    assert link_params(page) == {}
    page.keyboard.press("KeyR")
    page.keyboard.press("KeyR")
    page.keyboard.press("KeyU")
    page.wait_for_function("() => window.pz.snapshot().alg === 'R R U'", timeout=10_000)
    assert link_params(page) == {"alg": "R R U"}
    end = solve_and_play(page)
    assert end["solution"] == ["U'", "R2"]
    assert link_params(page) == {"alg": "R R U", "solution": "U' R2"}
    assert page.errors == []


def test_a_board_link_opens_the_state_and_its_solution(page: Any, fake_server: str) -> None:
    p8 = pz.make("puzzle8")
    state = p8.format(p8.apply_moves(p8.goal(), p8.parse_moves("D R")))
    query = urllib.parse.urlencode({"puzzle": "puzzle8", "state": state, "solution": "L U"})
    open_page(page, f"{fake_server}/board?{query}")
    opened = snapshot(page)
    assert opened["puzzle"] == "puzzle8" and opened["state"] == state and opened["solution"] == ["L", "U"]
    page.click("#to-end")
    page.wait_for_selector("#solved-badge[data-solved='true']", timeout=10_000)
    page.keyboard.press("ArrowDown")  # a move drops the solution and the link follows the board
    page.wait_for_function("() => !window.pz.snapshot().solved", timeout=10_000)
    moved = p8.format(p8.apply_moves(p8.goal(), p8.parse_moves("D")))
    page.wait_for_function(f"() => window.pz.snapshot().state === {moved!r}", timeout=10_000)
    assert link_params(page) == {"puzzle": "puzzle8", "state": moved}
    solve_and_play(page)
    assert link_params(page) == {"puzzle": "puzzle8", "state": moved, "solution": "U"}
    assert page.errors == []


# ---- hints -----------------------------------------------------------------------------------
@pytest.mark.skipif(not HAS_MODEL, reason="the shipped cube3 model is missing")
def test_the_hint_view_shows_the_networks_estimate_after_each_move(
    page: Any, fake_server: str, artifacts: Path
) -> None:
    open_page(page, fake_server)
    page.keyboard.press("KeyF")
    page.keyboard.press("KeyR")
    page.wait_for_function("() => window.pz.snapshot().alg === 'F R'", timeout=10_000)
    page.check("#show-hints")
    page.wait_for_selector("#hints[data-state='ready']", timeout=120_000)
    rows = page.eval_on_selector_all(
        "#hint-list .hint-row",
        "rs => rs.map(r => [r.dataset.move, Number(r.dataset.after), r.classList.contains('best')])",
    )
    assert len(rows) == 12 and [after for _, after, _ in rows] == sorted(after for _, after, _ in rows)
    assert rows[0][0] == "R'" and rows[0][2]  # undoing the last turn: the network's choice, one move left
    assert rows[0][1] < rows[-1][1]
    assert "moves from solved" in page.inner_text("#hint-summary")
    screenshot(page, artifacts / "cube-hints.png")
    page.click('#hint-list .hint-row[data-move="R\'"]')  # a click plays the move; the hints follow
    page.wait_for_function('() => window.pz.snapshot().alg === "F R R\'"', timeout=10_000)
    page.wait_for_function(
        "() => document.querySelector('#hint-list .hint-row')?.dataset.move === \"F'\"", timeout=120_000
    )
    assert page.errors == []


# ---- the first solution before the answer ------------------------------------------------------
def test_the_first_solution_shows_while_the_solver_looks_for_a_shorter_one(
    page: Any, artifacts: Path
) -> None:
    from puzzlezero.web import ServerConfig, create_app
    from tests.web.browser_support import ThreadServer
    from tests.web.test_web_progress import DETOUR, Gated

    solve = Gated(DETOUR, ["U'", "R'"])
    app = create_app(ServerConfig(executor="thread", workers=1), solve_fn=solve)
    try:
        with ThreadServer(app) as url:
            open_page(page, url)
            page.keyboard.press("KeyR")
            page.keyboard.press("KeyU")
            page.wait_for_function("() => window.pz.snapshot().alg === 'R U'", timeout=10_000)
            page.click("#solve")
            solve.gates[0].set()
            page.wait_for_function("() => window.pz.snapshot().solution.length === 4", timeout=10_000)
            assert snapshot(page)["solution"] == DETOUR and snapshot(page)["pos"] == 0
            page.wait_for_function(
                "() => document.getElementById('status').textContent.startsWith("
                "'found a 4-move solution after 0.0 s; looking for a shorter one')",
                timeout=10_000,
            )
            assert page.inner_text("#found") == "4 moves after 0.0 s (stage 1)"
            assert page.inner_text("#stat-length") == "4 moves so far (looking for a shorter one)"
            assert snapshot(page)["solving"]
            screenshot(page, artifacts / "cube-first-solution.png")
            solve.gates[1].set()
            page.wait_for_function("() => window.pz.snapshot().solution.length === 2", timeout=10_000)
            page.wait_for_function(
                "() => document.getElementById('status').textContent === 'found a 2-move solution: press Play'",
                timeout=10_000,
            )
            assert not snapshot(page)["solving"] and page.inner_text("#stat-length") == "2 moves"
            rows = page.eval_on_selector_all("#found .found-row", "rs => rs.map(r => r.dataset.length)")
            assert rows == ["4", "2"]
            page.click("#found .found-row[data-length='4'] button")  # an earlier one, shown again
            page.wait_for_function("() => window.pz.snapshot().solution.length === 4", timeout=10_000)
            page.click("#to-end")
            page.wait_for_selector("#solved-badge[data-solved='true']", timeout=10_000)
    finally:
        for gate in solve.gates:
            gate.set()
    assert page.errors == []
