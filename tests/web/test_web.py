"""The web API through FastAPI's TestClient: real puzzles, a breadth-first test double for the solver
(or the real solver where noted), and every error path (400, 413, 422, 429, 500, 504)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.clock import until

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

import puzzlezero as pz  # noqa: E402
from puzzlezero.puzzles.base import Puzzle  # noqa: E402
from puzzlezero.solver import SolveOptions, resolve_options  # noqa: E402
from puzzlezero.web import ServerConfig, create_app  # noqa: E402
from puzzlezero.web.api import random_walk  # noqa: E402
from puzzlezero.web.config import has_shipped_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


# ---- a solver test double: exact breadth-first search over short distances ------------------
@dataclass
class FakeResult:
    puzzle: str
    solved: bool
    solution: list[str]
    nodes_generated: int
    seconds: float
    opts: SolveOptions | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "puzzle": self.puzzle,
            "solved": self.solved,
            "solution": self.solution,
            "length": len(self.solution),
            "nodes_generated": self.nodes_generated,
            "seconds": self.seconds,
        }


def bfs_solve(
    puzzle: Puzzle,
    state: np.ndarray,
    opts: SolveOptions | None = None,
    *,
    max_depth: int = 4,
    on_solution: Any = None,
) -> FakeResult:
    """Shortest solution by layered breadth-first search (no duplicate detection): exact and fast
    for the few-move scrambles the tests and the browser test use. Called as the workers call the
    solver, with the request's options resolved by the server (kept in the result)."""
    t0 = time.perf_counter()
    frontier = state[None]
    paths = np.zeros((1, 0), dtype=np.int64)
    nodes = 1
    for _ in range(max_depth + 1):
        goal = puzzle.is_goal(frontier)
        if goal.any():
            i = int(np.argmax(goal))
            return FakeResult(
                puzzle.name, True, puzzle.format_moves(paths[i]), nodes, time.perf_counter() - t0, opts
            )
        if frontier.shape[0] * puzzle.num_actions > 2_000_000:  # memory guard: give up, like a node limit
            break
        children = puzzle.expand(frontier)
        n, a = children.shape[:2]
        frontier = children.reshape(n * a, *puzzle.state_shape)
        paths = np.concatenate([np.repeat(paths, a, axis=0), np.tile(np.arange(a), n)[:, None]], axis=1)
        nodes += n * a
    return FakeResult(puzzle.name, False, [], nodes, time.perf_counter() - t0, opts)


def client_for(solve_fn: Any = bfs_solve, **config: Any) -> TestClient:
    config.setdefault("executor", "thread")
    config.setdefault("workers", 1)
    config.setdefault("allowed_hosts", ("testserver",))  # TestClient's Host
    return TestClient(create_app(ServerConfig(**config), solve_fn=solve_fn), raise_server_exceptions=False)


@pytest.fixture(scope="module")
def client() -> Any:
    with client_for() as c:
        yield c


# ---- read-only endpoints ---------------------------------------------------------------------
def test_puzzles_lists_every_registered_puzzle(client: TestClient) -> None:
    infos = {p["name"]: p for p in client.get("/api/puzzles").json()}
    assert list(infos) == pz.names()
    assert infos["cube3"]["kind"] == "cube" and infos["cube3"]["action_names"][:2] == ["U", "U'"]
    assert infos["puzzle15"]["kind"] == "sliding" and infos["lightsout7"]["kind"] == "lightsout"
    assert infos["sokoban"]["kind"] == "sokoban" and infos["sokoban"]["reversible"] is False
    assert infos["cube3"]["model"] == has_shipped_model("cube3")
    # the shipped Lights Out model is EfficientCube's policy: the page offers its beam, not BWAS
    assert infos["lightsout7"]["policy_only"] is True and infos["cube3"]["policy_only"] is False


def test_a_cards_policy_only_is_read_once_per_version_of_the_card(tmp_path: Path, monkeypatch) -> None:
    import os

    from puzzlezero.web.config import policy_only

    card = tmp_path / "card.json"
    assert policy_only(tmp_path) is False  # no card
    card.write_text(json.dumps({"policy_only": True}))
    assert policy_only(tmp_path) is True
    reads: list[Path] = []
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: reads.append(self) or real(self, *a, **k))
    assert policy_only(tmp_path) is True and reads == []  # the same card: not read again
    card.write_text(json.dumps({"policy_only": False, "note": "retrained with a value head"}))
    os.utime(card, ns=(card.stat().st_atime_ns, card.stat().st_mtime_ns + 1_000_000))
    assert policy_only(tmp_path) is False and reads == [card]  # a new version is read
    card.write_text("{not json")
    assert policy_only(tmp_path) is False


def test_info_reports_limits_and_cubing(client: TestClient) -> None:
    info = client.get("/api/info").json()
    assert info["limits"]["max_time_limit"] == 60.0 and "node_modules" not in info["limits"]
    assert info["pool"] == {"workers": 1, "queue": 64, "running": 0, "waiting": 0, "completed": 0}
    assert info["cubing"] == (ROOT / "node_modules/cubing/dist/lib/cubing").is_dir()


@pytest.mark.parametrize("name", ["cube3", "puzzle15", "lightsout7"])
def test_scramble_is_reproducible_and_its_moves_give_its_state(client: TestClient, name: str) -> None:
    p = pz.make(name)
    a = client.get(f"/api/scramble?puzzle={name}&depth=12&seed=7").json()
    b = client.get(f"/api/scramble?puzzle={name}&depth=12&seed=7").json()
    assert a == b and a["seed"] == 7 and a["depth"] == 12 and len(a["moves"]) == 12
    state = p.apply_moves(p.goal(), p.parse_moves(a["moves"]))
    assert p.format(state) == a["state"] and a["view"] == p.to_json(state)
    inverse = p.inverse_action
    actions = p.parse_moves(a["moves"])
    assert all(inverse[x] != y for x, y in zip(actions, actions[1:], strict=False))  # no move undone at once
    assert (a["svg"] is None) == (name == "cube3")
    other = client.get(f"/api/scramble?puzzle={name}&depth=12&seed=8").json()
    assert other["state"] != a["state"]


def test_random_walk_never_wastes_a_sliding_move() -> None:
    p = pz.make("puzzle15")
    state, actions = random_walk(p, np.random.default_rng(3), 200)
    replay = p.goal()[None]
    for a in actions:  # every move really moves a tile
        nxt = p.apply(replay, np.array([a]))
        assert not np.array_equal(nxt, replay)
        replay = nxt
    assert np.array_equal(replay[0], state) and len(actions) == 200


def test_lights_out_scramble_presses_distinct_cells(client: TestClient) -> None:
    moves = client.get("/api/scramble?puzzle=lightsout7&depth=12&seed=5").json()["moves"]
    assert len(set(moves)) == 12  # so its optimal solution has exactly 12 presses
    many = client.get("/api/scramble?puzzle=lightsout7&depth=60&seed=5").json()["moves"]
    assert len(set(many)) == 49 and len(many) == 60


def test_scramble_sokoban_generates_a_level(client: TestClient) -> None:
    data = client.get("/api/scramble?puzzle=sokoban&depth=30&seed=1").json()
    p = pz.make("sokoban")
    assert data["moves"] is None and data["svg"].startswith("<svg")
    assert p.format(p.parse(data["state"])) == data["state"] and not data["solved"]


def test_validate_gives_the_puzzles_own_message(client: TestClient) -> None:
    p = pz.make("cube3")
    good = client.post("/api/validate", json={"puzzle": "cube3", "state": "R U R' U'"}).json()
    assert good["valid"] and good["state"] == p.format(p.parse("R U R' U'"))
    solved = "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9
    twisted = "R" + solved[1:9] + "F" + solved[10:18] + "U" + solved[19:]  # one corner turned in place
    with pytest.raises(pz.PuzzleError) as exc:
        p.parse(twisted)
    bad = client.post("/api/validate", json={"puzzle": "cube3", "state": twisted}).json()
    assert bad == {"valid": False, "message": str(exc.value), "state": None, "view": None}


def test_move_returns_the_trajectory(client: TestClient) -> None:
    p = pz.make("puzzle8")
    data = client.post("/api/move", json={"puzzle": "puzzle8", "moves": "D R", "trajectory": True}).json()
    assert [f["state"] for f in data["frames"]] == [
        p.format(p.goal()),
        p.format(p.apply_moves(p.goal(), p.parse_moves("D"))),
        p.format(p.apply_moves(p.goal(), p.parse_moves("D R"))),
    ]
    assert [f["solved"] for f in data["frames"]] == [True, False, False] and data["state"] == data["frames"][
        -1
    ]["state"]
    back = client.post(
        "/api/move", json={"puzzle": "puzzle8", "state": data["state"], "moves": ["L", "U"]}
    ).json()
    assert back["solved"] and "frames" not in back


def test_render_get_and_post_give_svg(client: TestClient) -> None:
    r = client.get("/api/render", params={"puzzle": "lightsout7", "state": "1" + "0" * 48, "size": 200})
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text == pz.make("lightsout7").to_svg(pz.make("lightsout7").parse("1" + "0" * 48), size=200)
    r = client.post("/api/render", json={"puzzle": "cube3"})
    assert r.status_code == 200 and r.text.startswith("<svg")


# ---- solving ---------------------------------------------------------------------------------
def test_solve_returns_a_replayable_solution_and_applies_server_limits() -> None:
    seen: list[SolveOptions] = []

    def spy(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        seen.append(opts)
        return bfs_solve(puzzle, state, opts)

    with client_for(spy, default_time_limit=5.0, default_max_nodes=1000) as c:
        data = c.post("/api/solve", json={"puzzle": "cube3", "state": "R U F'", "batch": 100}).json()
    p = pz.make("cube3")
    assert data["solved"] and data["length"] == 3 == len(data["solution"])
    end = p.apply_moves(p.parse("R U F'"), p.parse_moves(data["solution"]))
    assert p.is_goal(end[None])[0]
    # the worker gets the one resolved SolveOptions: the request's settings, the server's limits
    # and the puzzle's defaults for the rest
    assert seen == [resolve_options(p, time_limit=5.0, max_nodes=1000, batch=100)]
    assert data["time_limit"] == 5.0 and data["max_nodes"] == 1000
    with client_for(spy, quick_search={"cube3": {"weight": 0.4, "batch": 1000}}) as c:
        c.post("/api/solve", json={"puzzle": "cube3", "state": "R", "weight": 0.7})
        c.post("/api/solve", json={"puzzle": "cube3", "state": "R", "search": "optimal"})
        c.post("/api/solve", json={"puzzle": "puzzle8", "state": "1 2 3 4 5 6 7 0 8"})
    with client_for(spy) as c:  # by default a request naming nothing gets the anytime schedule
        c.post("/api/solve", json={"puzzle": "cube3", "state": "R"})
    own = resolve_options(p)
    assert (seen[1].weight, seen[1].batch) == (0.7, 1000)  # an operator's quick setting
    assert seen[1].stages == ()  # one search of that setting
    assert seen[2].search == "optimal"  # not a weighted search: no quick setting
    puzzle8 = resolve_options(pz.make("puzzle8"))
    assert (seen[3].weight, seen[3].batch) == (puzzle8.weight, puzzle8.batch)  # only the puzzles listed
    assert seen[4].stages == own.stages != ()  # the anytime schedule
    assert (seen[4].weight, seen[4].batch) == (own.weight, own.batch)


def test_a_setting_the_solver_refuses_is_a_422_before_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server resolves a request's options once, before the request takes a place in line: a
    setting the solver refuses is a 422 with the solver's own message (``POST /api/solve`` and
    ``/api/jobs`` alike), nothing waits or runs, and the line is as it was."""
    from puzzlezero import solver

    real = solver.resolve_options
    refusal = "weight 7.5 is more than search qstar takes on cube3"

    def strict(p: Puzzle, **given: Any) -> SolveOptions:
        if given.get("weight") == 7.5:
            raise pz.PuzzleError(refusal)
        return real(p, **given)

    monkeypatch.setattr(solver, "resolve_options", strict)
    calls: list[SolveOptions] = []

    def spy(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        calls.append(opts)
        return bfs_solve(puzzle, state, opts)

    with client_for(spy) as c:
        before = c.get("/api/info").json()["pool"]
        for path in ("/api/solve", "/api/jobs"):
            r = c.post(path, json={"puzzle": "cube3", "state": "R", "weight": 7.5})
            assert r.status_code == 422 and r.json()["detail"] == refusal
        assert c.get("/api/info").json()["pool"] == before and calls == []
        assert c.post("/api/solve", json={"puzzle": "cube3", "state": "R", "weight": 0.5}).status_code == 200
    assert [o.weight for o in calls] == [0.5]


def test_quick_search_sets_weight_and_batch_only() -> None:
    with pytest.raises(
        pz.PuzzleError, match=r"quick_search of cube3 sets weight and batch, not \['beam_width'\]"
    ):
        ServerConfig(quick_search={"cube3": {"weight": 0.4, "beam_width": 100}})


def test_operator_model_is_used_and_its_path_stays_private() -> None:
    seen: list[SolveOptions] = []

    def spy(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        seen.append(opts)
        return bfs_solve(puzzle, state)

    with client_for(spy, models={"lightsout7": "/srv/models/lo7"}) as c:
        lights = pz.make("lightsout7")
        one_press = lights.format(lights.apply_moves(lights.goal(), [24]))
        assert c.post("/api/solve", json={"puzzle": "lightsout7", "state": one_press}).json()["solution"] == [
            "24"
        ]
        assert c.post("/api/solve", json={"puzzle": "cube3", "state": "R"}).status_code == 200
        infos = {p["name"]: p for p in c.get("/api/puzzles").json()}
        info = c.get("/api/info").text
    # cube3's own: its shipped network (beside the two-phase search), never an operator's folder
    assert seen[0].model == "/srv/models/lo7" and seen[1].model in (None, "cube3")
    assert infos["lightsout7"]["model"] is True and "/srv/models" not in info
    assert infos["lightsout7"]["policy_only"] is False  # the operator's folder has no card saying so


def test_serve_rejects_a_bad_model_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from puzzlezero.cli.main import main

    assert main(["serve", "--model", f"cube3={tmp_path}"]) == 2
    assert "is not a model folder (needs model.npz and config.json)" in capsys.readouterr().err
    assert main(["serve", "--model", "cube9=x"]) == 2
    assert "registered puzzles: cube3" in capsys.readouterr().err
    assert main(["serve", "--model", "cube3"]) == 2
    assert "--model takes PUZZLE=DIR" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"puzzle": "cube3", "state": "UUUU"}, 400, None),
        ({"puzzle": "cube9", "state": "R"}, 400, "registered puzzles: cube3"),
        ({"puzzle": "cube3", "state": "R", "time_limit": 61}, 422, "exceeds this server's limit of 60.0 s"),
        ({"puzzle": "cube3", "state": "R", "max_nodes": 10**9}, 422, "max_nodes 1000000000 exceeds"),
        (
            {"puzzle": "cube3", "state": "R", "time_limit": -1},
            422,
            "time_limit: Input should be greater than 0",
        ),
        (
            {"puzzle": "cube3", "state": "R", "model": "/etc/passwd"},
            422,
            "model: Extra inputs are not permitted",
        ),
        ({"puzzle": "cube3"}, 422, "state: Field required"),
    ],
)
def test_bad_requests_get_4xx_with_a_message(
    client: TestClient, body: dict, status: int, needle: str | None
) -> None:
    r = client.post("/api/solve", json=body)
    assert r.status_code == status
    detail = r.json()["detail"]
    if needle is None:  # the puzzle's own message, word for word
        with pytest.raises(pz.PuzzleError) as exc:
            pz.make("cube3").parse(body["state"])
        needle = str(exc.value)
    assert needle in detail and "Traceback" not in r.text


def test_bad_json_and_bad_moves(client: TestClient) -> None:
    r = client.post("/api/solve", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "invalid request" in r.json()["detail"]
    r = client.post("/api/move", json={"puzzle": "cube3", "moves": "R Q"})
    assert r.status_code == 400 and "'Q'" in r.json()["detail"]
    r = client.post(
        "/api/move", json={"puzzle": "cube3", "moves": ["R", "R'"] * 501, "trajectory": True, "svg": True}
    )
    assert r.status_code == 422 and "1002 SVG frames exceed" in r.json()["detail"]
    r = client.post("/api/move", json={"puzzle": "cube3", "moves": ["R"] * 5001})
    assert r.status_code == 422 and "5001 moves exceed" in r.json()["detail"]
    r = client.get("/api/scramble?puzzle=cube3&depth=5000")
    assert r.status_code == 422 and "limit of 1000" in r.json()["detail"]


def test_oversized_bodies_get_413() -> None:
    with client_for(max_body_bytes=2000) as c:
        r = c.post("/api/solve", json={"puzzle": "cube3", "state": "R " * 2000})
        assert r.status_code == 413 and "at most 2000 bytes" in r.json()["detail"]
        chunks = (b'{"puzzle": "cube3", "state": "' + b"R " * 300 for _ in range(5))  # no Content-Length
        r = c.post("/api/solve", content=chunks, headers={"Content-Type": "application/json"})
        assert r.status_code == 413
        assert c.post("/api/solve", json={"puzzle": "cube3", "state": "R"}).status_code == 200


def test_full_queue_gets_429_and_the_admitted_requests_finish() -> None:
    gate = threading.Event()
    started = threading.Semaphore(0)

    def blocking(
        puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None
    ) -> FakeResult:
        started.release()
        assert gate.wait(30)
        return bfs_solve(puzzle, state, opts)

    with client_for(blocking, workers=1, queue=1) as c:
        results: list[int] = []
        body = {"puzzle": "cube3", "state": "R"}
        threads = [
            threading.Thread(target=lambda: results.append(c.post("/api/solve", json=body).status_code))
            for _ in range(2)
        ]
        for t in threads:
            t.start()
        assert started.acquire(timeout=10)  # one running ...
        until(lambda: c.get("/api/info").json()["pool"]["waiting"] >= 1, 10, "a second solve waiting")
        r = c.post("/api/solve", json=body)
        assert r.status_code == 429 and "busy" in r.json()["detail"] and r.headers["retry-after"]
        gate.set()
        for t in threads:
            t.join(30)
        assert results == [200, 200]
        assert c.get("/api/info").json()["pool"] == {
            "workers": 1,
            "queue": 1,
            "running": 0,
            "waiting": 0,
            "completed": 2,
        }


def test_overrunning_solve_gets_504_and_keeps_its_slot() -> None:
    release = threading.Event()

    def stuck(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        release.wait(30)
        return bfs_solve(puzzle, state)

    with client_for(stuck, grace_seconds=0.2, queue=0) as c:
        r = c.post("/api/solve", json={"puzzle": "cube3", "state": "R", "time_limit": 0.1})
        assert r.status_code == 504 and "did not finish" in r.json()["detail"]
        assert c.post("/api/solve", json={"puzzle": "cube3", "state": "R"}).status_code == 429
        release.set()
        until(lambda: not c.get("/api/info").json()["pool"]["running"], 10, "the stuck solve's slot freed")
        assert c.post("/api/solve", json={"puzzle": "cube3", "state": "R"}).status_code == 200  # slot freed


def test_solver_bugs_become_a_short_500() -> None:
    def broken(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        raise RuntimeError("secret internal detail")

    def wrong(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        return FakeResult(puzzle.name, True, ["U"], 1, 0.0)

    for fn in (broken, wrong):
        with client_for(fn) as c:
            r = c.post("/api/solve", json={"puzzle": "cube3", "state": "R"})
            assert r.status_code == 500 and "internal server error" in r.json()["detail"]
            assert "secret" not in r.text and "Traceback" not in r.text


def test_real_solver_in_worker_processes() -> None:
    """The real solver in spawned worker processes: an optimal Lights Out solve, an unknown search
    (422, the valid ones named), the solver's own message for a missing model (503), and the
    shipped cube model."""
    pytest.importorskip("puzzlezero.solver")
    lights = pz.make("lightsout7")
    state = lights.format(lights.apply_moves(lights.goal(), lights.parse_moves("3 24 40")))
    no_model = next(n for n in pz.names() if not has_shipped_model(n))
    p = pz.make(no_model)
    far = p.format(p.apply_moves(p.goal(), [int(np.flatnonzero(p.legal_mask(p.goals(1))[0])[0])]))
    with client_for(None, executor="process", workers=1) as c:
        ok = c.post("/api/solve", json={"puzzle": "lightsout7", "state": state, "search": "optimal"})
        bad = c.post("/api/solve", json={"puzzle": "lightsout7", "state": state, "search": "astar"})
        missing = c.post("/api/solve", json={"puzzle": no_model, "state": far, "search": "bwas"})
        cube = c.post("/api/solve", json={"puzzle": "cube3", "state": "R U F' L", "time_limit": 30})
    data = ok.json()
    assert ok.status_code == 200 and data["solved"] and data["status"] == "solved"
    assert sorted(data["solution"], key=int) == ["3", "24", "40"] and data["length"] == 3
    # a name the solver does not register is refused by the schema, before anything runs
    assert bad.status_code == 422 and "unknown search 'astar'; choose one of: bwas" in bad.json()["detail"]
    assert missing.status_code == 503 and "model" in missing.json()["detail"]
    assert cube.status_code == 200 and cube.json()["solved"] and cube.json()["length"] == 4


# ---- pages, docs, static files ---------------------------------------------------------------
def test_docs_and_openapi(client: TestClient) -> None:
    docs = client.get("/docs")
    assert docs.status_code == 200 and "cdn" not in docs.text.lower()  # Swagger UI served locally (offline)
    assert client.get("/vendor/swagger-ui/swagger-ui-bundle.js").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/api/solve", "/api/scramble", "/api/validate", "/api/puzzles", "/api/move", "/api/render"):
        assert path in paths


def test_pages_and_vendor_files(client: TestClient) -> None:
    page = client.get("/").text
    assert "twisty" in page and '"importmap"' in page.replace("'", '"')
    imports = json.loads(page.split('<script type="importmap">')[1].split("</script>")[0])["imports"]
    assert "board.js" in client.get("/board").text
    for name in ("cube.js", "board.js", "api.js", "playback.js"):
        assert client.get(f"/static/js/{name}").status_code == 200
    assert client.get("/vendor/../package.json").status_code == 404
    assert client.get("/vendor/cubing/%2e%2e/%2e%2e/package.json").status_code == 404
    assert client.get("/static/%2e%2e/app.py").status_code == 404
    if client.get("/api/info").json()["cubing"]:
        for url in imports.values():
            target = url + ("Three.js" if url.endswith("/") else "")
            assert client.get(target).status_code == 200, target
        assert client.get("/vendor/three/package.json").status_code == 404  # only three/src is served


def test_missing_node_modules_turns_the_3d_view_off(tmp_path: Path) -> None:
    with client_for(node_modules=tmp_path) as c:
        assert c.get("/api/info").json()["cubing"] is False
        assert c.get("/vendor/cubing/twisty/index.js").status_code == 404
        assert c.get("/").status_code == 200


def test_serve_command_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    from puzzlezero.cli.main import main

    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--workers" in out and "--queue" in out and "--port" in out


# ---- /api/value ----------------------------------------------------------------------------------
def test_value_is_the_heuristics_estimate_beside_the_optimum(client: TestClient) -> None:
    ask = {"puzzle": "cube2", "state": "R U F'", "heuristic": "pdb", "optimal": True}
    r = client.post("/api/value", json=ask)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["value"] == body["optimal"] == 3.0 and body["optimal_status"] == "solved"
    assert body["best_move"] == "F" and body["action_values"]["F"] == 3.0  # undo the last move: 1 + 2
    assert len(body["action_values"]) == 12 and body["error"] == 0.0
    r = client.post("/api/value", json={"puzzle": "cube2", "state": "R U F'"})  # the shipped network
    body = r.json()
    assert r.status_code == 200 and body["model"] == "cube2" and body["optimal_status"] == "not asked"
    assert abs(body["value"] - 3.0) < 1.0


def test_value_refuses_bad_input(client: TestClient) -> None:
    assert client.post("/api/value", json={"puzzle": "cube2", "state": "R Q"}).status_code == 400
    r = client.post("/api/value", json={"puzzle": "cube2", "state": "R", "heuristic": "nope"})
    assert r.status_code == 422 and "unknown heuristic 'nope'; choose one of: learned" in r.json()["detail"]
    board = "1 2 3 4 5 6 7 0 8"
    r = client.post("/api/value", json={"puzzle": "puzzle8", "state": board})
    assert r.status_code == 503 and "no model" in r.json()["detail"]  # no shipped 8-puzzle model
    level = "#####\n#@$.#\n#####"  # one push from the goal, valued by the shipped Sokoban model
    r = client.post("/api/value", json={"puzzle": "sokoban", "state": level})
    assert r.status_code == 200 and r.json()["model"] == "sokoban" and 0.0 < r.json()["value"] < 3.0
    assert (
        client.post("/api/value", json={"puzzle": "cube2", "state": "R", "model": "/etc"}).status_code == 422
    )
