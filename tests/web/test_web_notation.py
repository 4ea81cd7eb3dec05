"""The API's parts of the cube page for teaching, through the TestClient: solutions written as
people write them (``notation``: the CLI's ``R R`` -> ``R2``), trajectories one frame per move as
the request writes it, and ``/api/value``'s estimate after each move (the hint view)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import puzzlezero as pz  # noqa: E402
from tests.web.test_web import client_for  # noqa: E402


@pytest.fixture(scope="module")
def client() -> Any:
    with client_for() as c:
        yield c


def test_a_cube_solution_comes_in_quarter_turns_and_as_written(client: Any) -> None:
    cube = pz.make("cube3")
    r = client.post("/api/solve", json={"puzzle": "cube3", "state": "R2 U"})
    body = r.json()
    assert r.status_code == 200 and body["solved"]
    assert body["solution"] in (["U'", "R", "R"], ["U'", "R'", "R'"])  # the breadth-first double's
    assert body["notation"] == ["U'", "R2"] == cube.format_compact(cube.parse_moves(body["solution"]))
    job = client.post("/api/jobs", json={"puzzle": "cube3", "state": "F U2"}).json()
    done = client.get(f"/api/jobs/{job['id']}").json()
    while done["status"] in ("queued", "running"):
        done = client.get(f"/api/jobs/{job['id']}").json()
    assert done["result"]["notation"] == ["U2", "F'"]


def test_other_puzzles_write_their_moves_as_they_are(client: Any) -> None:
    p8 = pz.make("puzzle8")
    state = p8.format(p8.apply_moves(p8.goal(), p8.parse_moves("D D R")))
    body = client.post("/api/solve", json={"puzzle": "puzzle8", "state": state}).json()
    assert body["solution"] == body["notation"] == ["L", "U", "U"]
    htm = client.post("/api/solve", json={"puzzle": "cube3htm", "state": "R2 U"}).json()
    assert htm["solution"] == htm["notation"] == ["U'", "R2"]  # a half turn is one move already


def test_a_trajectory_has_one_frame_per_move_as_written(client: Any) -> None:
    cube = pz.make("cube3")
    listed = client.post(
        "/api/move", json={"puzzle": "cube3", "moves": ["R2", "U'"], "trajectory": True}
    ).json()
    assert [f["state"] for f in listed["frames"]] == [
        cube.format(cube.apply_moves(cube.goal(), cube.parse_moves(m))) for m in ("", "R R", "R R U'")
    ]
    text = client.post("/api/move", json={"puzzle": "cube3", "moves": "R2 U'", "trajectory": True}).json()
    assert len(text["frames"]) == 4 and text["state"] == listed["state"]  # a string: one frame per turn
    r = client.post("/api/move", json={"puzzle": "cube3", "moves": ["R", ""]})
    assert r.status_code == 400 and "an empty move" in r.json()["detail"]
    r = client.post("/api/move", json={"puzzle": "cube3", "moves": ["R", "Q"]})
    assert r.status_code == 400 and "'Q'" in r.json()["detail"]


def test_the_frame_limit_counts_written_moves(client: Any) -> None:
    with client_for(max_svg_frames=3) as small:
        ok = small.post(
            "/api/move",
            json={"puzzle": "cube3", "moves": ["R2", "U2", "F2"], "trajectory": True, "svg": True},
        )
        assert ok.status_code == 200 and len(ok.json()["frames"]) == 4
        over = small.post(
            "/api/move", json={"puzzle": "cube3", "moves": "R2 U2", "trajectory": True, "svg": True}
        )
        assert over.status_code == 422 and "4 SVG frames exceed" in over.json()["detail"]


def test_value_gives_each_moves_estimate_after_it(client: Any) -> None:
    r = client.post("/api/value", json={"puzzle": "cube2", "state": "R U F'", "heuristic": "pdb"})
    body = r.json()
    assert r.status_code == 200, r.text
    assert body["after_move"]["F"] == 2.0  # undoing the last turn leaves R U: two moves
    assert body["after_move"].keys() == body["action_values"].keys()
    assert all(body["after_move"][m] == body["action_values"][m] - 1.0 for m in body["after_move"])
    solved = client.post("/api/value", json={"puzzle": "cube2", "state": "R", "heuristic": "pdb"}).json()
    assert solved["after_move"]["R'"] == 0.0 and min(solved["after_move"].values()) == 0.0
