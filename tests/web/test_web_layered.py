"""The web API's side of goals and layered solving: puzzle infos name the goals, and a layered
solve answers with its stages (the page shows them as boundaries in the move list)."""

from __future__ import annotations

from fastapi.testclient import TestClient

import puzzlezero as pz
from puzzlezero.solver import solve
from puzzlezero.web.app import create_app
from puzzlezero.web.config import ServerConfig


def client() -> TestClient:
    app = create_app(
        ServerConfig(executor="thread", workers=1, allowed_hosts=("testserver",)), solve_fn=solve
    )
    return TestClient(app, raise_server_exceptions=False)


def test_puzzle_infos_list_goals_in_solving_order_and_layered_models():
    with client() as c:
        infos = {p["name"]: p for p in c.get("/api/puzzles").json()}
    assert infos["cube3"]["goals"] == ["layer1", "layer2", "solved"]
    assert infos["puzzle15"]["goals"] == ["row1", "rows2", "solved"]
    assert infos["lightsout7"]["goals"] == ["solved"] and infos["lightsout7"]["layered_model"] is False
    assert infos["cube3"]["layered_model"] is True  # cube3-layered: stages.json names each goal's model
    assert infos["puzzle15"]["layered_model"] is False


def test_a_layered_solve_answers_with_its_stages():
    body = {"puzzle": "cube3", "state": "D R", "search": "layered", "heuristic": "misplaced", "weight": 1.0}
    with client() as c:
        data = c.post("/api/solve", json=body).json()
    assert data["solved"] and data["search"] == "layered"
    assert [st["goal"] for st in data["stages"]] == ["layer1", "layer2", "solved"]
    assert [st["solution"] for st in data["stages"]] == [["R'"], [], ["D'"]]
    assert sum((st["solution"] for st in data["stages"]), []) == data["solution"]
    cube = pz.make("cube3")
    end = cube.apply_moves(cube.parse("D R"), cube.parse_moves(data["solution"]))
    assert cube.is_goal(end[None])[0]


def test_a_layered_solve_gets_the_layered_limits_within_the_server_caps():
    """With no limits in the request, a layered solve runs under the layered search's own limits
    (5M nodes per stage, 120 s) cut to the server's caps (60 s), not the quick 20 s / 2M nodes of
    the other searches; limits the request names are kept."""
    body = {"puzzle": "cube3", "state": "D R", "search": "layered", "heuristic": "misplaced", "weight": 1.0}
    with client() as c:
        data = c.post("/api/solve", json=body).json()
        assert (data["time_limit"], data["max_nodes"]) == (60.0, 5_000_000)
        named = c.post("/api/solve", json={**body, "time_limit": 5.0, "max_nodes": 1000}).json()
        assert (named["time_limit"], named["max_nodes"]) == (5.0, 1000)
        plain = c.post("/api/solve", json={**body, "search": "bwas"}).json()
        assert (plain["time_limit"], plain["max_nodes"]) == (20.0, 2_000_000)
