"""Permutation puzzles defined as data in the web app: ``puzzlezero serve --puzzle-file`` reads and
checks definition files at start (a bad one refused with the file and the reason), the server and
its worker processes register them as data, the API lists, moves, scrambles, draws and solves
them, and no request ever names a file."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

import puzzlezero as pz  # noqa: E402
from puzzlezero.puzzles.permutation import FORMAT  # noqa: E402
from puzzlezero.puzzles.permutation.families import family_definition  # noqa: E402
from tests.web.test_web import client_for  # noqa: E402

# two rings of four positions sharing positions 0 and 2 (child[i] = parent[perm[i]])
RINGS: dict[str, Any] = {
    "format": FORMAT,
    "name": "webtest-rings",
    "description": "two rings of four sharing two positions",
    "positions": 6,
    "moves": {"l": [3, 0, 1, 2, 4, 5], "r": [5, 1, 0, 3, 2, 4]},
    "goal": "C;A;C;A;B;B",
    "drawing": {"kind": "wreath", "left": 4, "right": 4},
}


def renamed(kind: str, name: str) -> dict[str, Any]:
    return {**family_definition(kind), "name": name}


CUBE2 = renamed("cube_2/2/2", "webtest-cube2")
WREATH = renamed("wreath_6/6", "webtest-wreath")
DEFINITIONS = (RINGS, CUBE2, WREATH)


@pytest.fixture(autouse=True)
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The puzzles a test registers are forgotten after it."""
    from puzzlezero import registry

    for attr in ("_REGISTRY", "_INSTANCES"):
        monkeypatch.setattr(registry, attr, dict(getattr(registry, attr)))


@pytest.fixture
def client() -> Iterator[TestClient]:
    with client_for(puzzle_definitions=DEFINITIONS) as c:
        yield c


def write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# ---- puzzlezero serve --puzzle-file ----------------------------------------------------------
@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """uvicorn's configs of the servers ``serve`` would run (started, then stopped at once)."""
    import uvicorn

    ran: list[Any] = []

    def run(server: Any, sockets: Any = None) -> None:
        server.started = True
        ran.append(server.config)
        server.handle_exit(signal.SIGTERM, None)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    return ran


def test_serve_reads_checks_and_serves_definition_files(
    tmp_path: Path, served: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from puzzlezero.cli.main import main

    rings = write(tmp_path / "rings.json", RINGS)
    cube = write(tmp_path / "cube.json", CUBE2)
    args = ["serve", "--executor", "thread", "--puzzle-file", str(rings), "--puzzle-file", str(cube)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "serving the puzzle webtest-rings defined by --puzzle-file" in out and "webtest-cube2" in out
    app = served[0].app
    config = app.state.config
    # the workers get the definitions as data, with their start-up arguments
    assert [d["name"] for d in config.puzzle_definitions] == ["webtest-rings", "webtest-cube2"]
    assert config.puzzle_definitions[0]["moves"] == RINGS["moves"]
    with TestClient(app, base_url="http://localhost") as c:
        names = [p["name"] for p in c.get("/api/puzzles").json()]
        limits = c.get("/api/info").json()["limits"]
    assert {"webtest-rings", "webtest-cube2"} <= set(names)
    assert limits["puzzle_definitions"] == ["webtest-rings", "webtest-cube2"]  # names, not every move


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not valid JSON"),
        ({**RINGS, "moves": {"l": [0, 0, 1, 2, 4, 5]}}, "move 'l' is not a permutation"),
        ({**RINGS, "goal": "A;B"}, "goal has 2 labels for 6 positions"),
        ({**RINGS, "name": "cube3"}, "registered already"),
        (None, "cannot read the definition"),
    ],
)
def test_serve_refuses_a_bad_definition_file_with_the_file_and_the_reason(
    tmp_path: Path, served: list[Any], capsys: pytest.CaptureFixture[str], content: Any, reason: str
) -> None:
    from puzzlezero.cli.main import main

    path = tmp_path / "bad.json"
    if content is not None:
        write(path, content)
    rc = main(["serve", "--executor", "thread", "--puzzle-file", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and served == []  # no server started
    assert err.startswith("error: ") and "bad.json" in err and reason in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_create_app_refuses_a_definition_that_fails_its_checks() -> None:
    from puzzlezero.errors import DefinitionError

    with pytest.raises(DefinitionError, match="webtest-rings: move 'r' names position 9"):
        client_for(puzzle_definitions=({**RINGS, "moves": {"r": [9, 1, 0, 3, 2, 4]}},))


# ---- the API -----------------------------------------------------------------------------------
def test_the_api_lists_defined_puzzles_with_their_moves_and_drawings(client: TestClient) -> None:
    infos = {p["name"]: p for p in client.get("/api/puzzles").json()}
    rings, cube, wreath = infos["webtest-rings"], infos["webtest-cube2"], infos["webtest-wreath"]
    assert rings["kind"] == "permutation" and rings["action_names"] == ["l", "r", "l'", "r'"]
    assert rings["inverses"] == [2, 3, 0, 1] and rings["reversible"] and not rings["model"]
    assert rings["description"] == RINGS["description"] and rings["drawing"] == RINGS["drawing"]
    assert rings["cubing"] is None and wreath["cubing"] is None
    # a cube cubing.js has: its 3-D view plays each move as a cubing.js move
    assert cube["drawing"] == {"kind": "cube", "size": 2} and cube["cubing"]["puzzle"] == "2x2x2"
    assert cube["cubing"]["moves"]["f0"] == "F" and cube["cubing"]["moves"]["r1'"] == "L"
    assert infos["cube3"]["kind"] == "cube" and infos["cube3"]["cubing"] is None  # not a definition


def test_move_scramble_render_and_validate_a_defined_puzzle(client: TestClient) -> None:
    p = pz.make("webtest-rings")
    body = {"puzzle": "webtest-rings", "moves": ["l", "r'"], "trajectory": True}
    moved = client.post("/api/move", json=body)
    data = moved.json()
    assert moved.status_code == 200 and not data["solved"]
    assert data["state"] == p.format(p.apply_moves(p.goal(), p.parse_moves("l r'")))
    assert [f["state"] for f in data["frames"]][0] == "C;A;C;A;B;B" and len(data["frames"]) == 3
    back = client.post("/api/move", json={"puzzle": "webtest-rings", "state": data["state"], "moves": "r -l"})
    assert back.json()["solved"]  # the competition's -m for the inverse
    scrambled = client.get("/api/scramble", params={"puzzle": "webtest-wreath", "depth": 5, "seed": 3}).json()
    w = pz.make("webtest-wreath")
    assert len(scrambled["moves"]) == 5 and scrambled["svg"].startswith("<svg")
    assert scrambled["state"] == w.format(w.apply_moves(w.goal(), w.parse_moves(scrambled["moves"])))
    drawn = client.get("/api/render", params={"puzzle": "webtest-cube2", "state": "f0 r1"})
    assert drawn.status_code == 200 and drawn.headers["content-type"].startswith("image/svg+xml")
    assert drawn.text.count("data-position=") == 24
    ok = client.post("/api/validate", json={"puzzle": "webtest-rings", "state": "A;C;C;A;B;B"}).json()
    assert ok["valid"] and ok["state"] == "A;C;C;A;B;B"
    bad = client.post("/api/validate", json={"puzzle": "webtest-rings", "state": "A;A;C;A;B;B"}).json()
    assert not bad["valid"] and "no sequence of moves reaches the goal" in bad["message"]


def test_solve_a_defined_puzzle(client: TestClient) -> None:
    p = pz.make("webtest-rings")
    state = p.format(p.apply_moves(p.goal(), p.parse_moves("l r l")))
    data = client.post("/api/solve", json={"puzzle": "webtest-rings", "state": state}).json()
    assert data["solved"] and data["length"] <= 3
    assert p.is_goal(p.apply_moves(p.parse(state), p.parse_moves(data["solution"]))[None])[0]


def test_a_goal_of_distinct_labels_on_the_2x2x2s_moves_is_solved_in_its_colours() -> None:
    """A served definition of the 2x2x2's moves whose every sticker has its own label: the real
    solver answers it as ``cube_2-2-2`` (its model), the response says so and names the puzzle
    as requested, and the answer, at most the scramble's length, replays on the state as given;
    its value is the 2x2x2's of the state in its colours."""
    distinct = {**family_definition("cube_2/2/2", "distinct"), "name": "webtest-cube2-distinct"}
    family = pz.make("cube_2-2-2")
    with client_for(None, puzzle_definitions=(distinct,)) as c:
        p = pz.make("webtest-cube2-distinct")
        state = p.format(p.apply_moves(p.goal(), p.parse_moves("f0 r1' d0 f1")))
        answer = c.post("/api/solve", json={"puzzle": p.name, "state": state, "time_limit": 10})
        valued = c.post("/api/value", json={"puzzle": p.name, "state": state, "optimal": False}).json()
        shown = family.format(family.apply_moves(family.goal(), family.parse_moves("f0 r1' d0 f1")))
        theirs = c.post("/api/value", json={"puzzle": family.name, "state": shown, "optimal": False}).json()
    data = answer.json()
    assert answer.status_code == 200, data
    assert data["puzzle"] == p.name and data["read_as"] == "cube_2-2-2" and data["solved"]
    assert data["length"] <= 4
    assert p.is_goal(p.apply_moves(p.parse(state), p.parse_moves(data["solution"]))[None])[0]
    assert valued["puzzle"] == p.name and valued["state"] == state and valued["read_as"] == "cube_2-2-2"
    assert valued["value"] == theirs["value"] and valued["after_move"] == theirs["after_move"]


def test_a_served_big_cube_is_answered_by_the_commutator_solver() -> None:
    """A served definition of the 8x8x8's moves and colours, with no model: ``/api/puzzles`` lists
    it, and the web app's answer, with the real solver, comes from the commutator solver (its
    default) and replays on the state."""
    big = {**family_definition("cube_8/8/8"), "name": "webtest-cube8"}
    with client_for(None, puzzle_definitions=(big,)) as c:
        p = pz.make("webtest-cube8")
        rng = np.random.default_rng(1)
        state = p.format(p.apply_moves(p.goal(), rng.integers(0, p.num_actions, size=300).tolist()))
        answer = c.post("/api/solve", json={"puzzle": p.name, "state": state, "time_limit": 30})
        listed = [x for x in c.get("/api/puzzles").json() if x["name"] == p.name]
    data = answer.json()
    assert answer.status_code == 200, data
    assert data["solved"] and data["search"] == "cube-commutators"
    assert p.is_goal(p.apply_moves(p.parse(state), p.parse_moves(data["solution"]))[None])[0]
    assert len(listed) == 1


def test_requests_name_registered_puzzles_never_files(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A puzzle name that is a definition file's path (which the Python API and the CLI would read)
    is refused by every endpoint, and the file is never read: its puzzle stays unregistered."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "evil.json", {**RINGS, "name": "webtest-evil"})
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "x.json", {**RINGS, "name": "webtest-evil2"})
    for name in ("evil.json", "./evil.json", "sub/x.json", str(tmp_path / "evil.json")[:64], "webtest-evil"):
        body = {"puzzle": name, "state": "C;A;C;A;B;B"}
        answers = [
            client.get("/api/scramble", params={"puzzle": name}),
            client.get("/api/render", params={"puzzle": name}),
            client.post("/api/render", json={"puzzle": name}),
            client.post("/api/validate", json=body),
            client.post("/api/move", json={"puzzle": name, "moves": []}),
            client.post("/api/solve", json=body),
            client.post("/api/jobs", json=body),
            client.post("/api/value", json=body),
        ]
        for r in answers:
            assert r.status_code == 400, (name, r.request.url, r.status_code, r.text)
            assert "a request names a registered puzzle, never a file" in r.json()["detail"]
            assert "registered puzzles: cube3" in r.json()["detail"]
    assert not {"webtest-evil", "webtest-evil2"} & set(pz.names())


def test_a_worker_process_registers_the_definitions_it_was_given_and_solves(tmp_path: Path) -> None:
    """A spawned worker never sees the file: it registers the definition from its start-up
    arguments (data), then runs the real solver (batch weighted A* with the misplaced-cells
    heuristic: no model needed); the server replays the answer on the request's state."""
    from puzzlezero.cli.serve_cmds import read_puzzle_files

    path = write(tmp_path / "rings.json", RINGS)
    definitions = read_puzzle_files([path])
    path.unlink()  # the worker gets data, not a path
    p = pz.make("webtest-rings")
    state = p.format(p.apply_moves(p.goal(), p.parse_moves("l r' l")))
    body = {"puzzle": "webtest-rings", "state": state, "search": "bwas", "heuristic": "misplaced"}
    with client_for(None, executor="process", workers=1, puzzle_definitions=definitions) as c:
        answer = c.post("/api/solve", json=body)
    data = answer.json()
    assert answer.status_code == 200, data
    assert data["solved"] and data["search"] == "bwas" and data["length"] == len(data["solution"]) <= 3
    assert p.is_goal(p.apply_moves(p.parse(state), p.parse_moves(data["solution"]))[None])[0]


def test_the_big_cubes_reduction_gets_its_own_time_within_the_servers_cap() -> None:
    """The 4x4x4's and 5x5x5's reduction needs about 20 s for its first answer on 2 cores: a
    request that names no time limit gets the search's own (120 s) cut to the server's cap, not the
    server's quick 20 s, which would leave the 5x5x5 to the group solver's 500-move answers; a
    limit the request names is kept, and the other puzzles keep the quick default."""
    from puzzlezero.web.api import solve_options
    from puzzlezero.web.config import ServerConfig
    from puzzlezero.web.schemas import SolveRequest

    cfg = ServerConfig()
    assert (cfg.default_time_limit, cfg.max_time_limit) == (20.0, 60.0)
    for name in ("cube_4-4-4", "cube_5-5-5", "cube_3-3-3"):
        p = pz.make(name)
        request = SolveRequest(puzzle=name, state=p.format(p.goal()))
        own = solve_options(cfg, p, request).time_limit
        assert own == (20.0 if name == "cube_3-3-3" else 60.0)
        named = SolveRequest(puzzle=name, state=p.format(p.goal()), time_limit=5.0)
        assert solve_options(cfg, p, named).time_limit == 5.0
