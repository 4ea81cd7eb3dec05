"""The web server's front door: no request chooses code, a worker's ``SystemExit`` fails only its
job, admission per client comes before any parsing, a client that disconnects or stops polling
gives up its place, requests for other host names are refused, every named error has its status,
and ``puzzlezero serve`` documents and applies every limit. Fake solvers in threads, and one real
uvicorn server on a loopback port; the file runs in a few seconds."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

import puzzlezero as pz  # noqa: E402
from puzzlezero import errors  # noqa: E402
from puzzlezero.puzzles.base import Puzzle  # noqa: E402
from puzzlezero.solver import HEURISTICS, SEARCHES, SolveOptions, resolve_options  # noqa: E402
from puzzlezero.web import ServerConfig, api, create_app  # noqa: E402
from puzzlezero.web.config import LOOPBACK_HOSTS  # noqa: E402
from puzzlezero.web.errors import INTERNAL, worker_error  # noqa: E402
from puzzlezero.web.jobs import JobStore  # noqa: E402
from puzzlezero.web.line import Ticket  # noqa: E402
from puzzlezero.web.pool import SolvePool  # noqa: E402
from puzzlezero.web.worker import SolveJob  # noqa: E402
from tests.clock import FakeClock  # noqa: E402
from tests.clock import until as wait_until  # noqa: E402
from tests.web.live_server import PeerFromHeader, served  # noqa: E402
from tests.web.test_web import FakeResult, bfs_solve, client_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BODY = {"puzzle": "cube3", "state": "R"}


class Gate:
    """A fake solver that records every call and blocks the calls whose ``batch`` is ``BLOCK``
    until :meth:`open` (the others are solved at once by breadth-first search)."""

    BLOCK = 7

    def __init__(self) -> None:
        self.calls: list[SolveOptions] = []
        self.event = threading.Event()

    def __call__(
        self, puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None
    ) -> FakeResult:
        self.calls.append(opts)
        if opts.batch == self.BLOCK:
            assert self.event.wait(20)
        return bfs_solve(puzzle, state)

    def open(self) -> None:
        self.event.set()


BLOCKING = {**BODY, "batch": Gate.BLOCK}


def two_clients(solve_fn: Any, **config: Any) -> TestClient:
    c = client_for(solve_fn, **config)
    c.app.add_middleware(PeerFromHeader)  # type: ignore[attr-defined]
    return c


OTHER = {"x-test-peer": "10.0.0.2"}


def until(check: Callable[[], bool], seconds: float = 30.0) -> None:
    wait_until(check, seconds)


# ---- no request chooses code ---------------------------------------------------------------------
@pytest.fixture
def probe_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An importable module ``pz_probe_code`` whose import leaves a marker file behind."""
    marker = tmp_path / "imported"
    (tmp_path / "pz_probe_code.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).touch()\ndef factory(*args, **kw):\n    return None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield marker
    sys.modules.pop("pz_probe_code", None)


@pytest.mark.parametrize(
    ("path", "field", "name"),
    [
        ("/api/solve", "heuristic", "pz_probe_code:factory"),
        ("/api/solve", "search", "pz_probe_code:factory"),
        ("/api/jobs", "heuristic", "pz_probe_code:factory"),
        ("/api/jobs", "search", "pz_probe_code:factory"),
        ("/api/value", "heuristic", "pz_probe_code:factory"),
        ("/api/jobs", "heuristic", "sys:exit"),
        ("/api/solve", "heuristic", "this:s"),
    ],
)
def test_a_request_naming_code_is_refused_and_nothing_is_imported(
    probe_module: Path, path: str, field: str, name: str
) -> None:
    fake = Gate()
    with client_for(fake) as c:
        r = c.post(path, json={**BODY, field: name})
        assert r.status_code == 422, r.text
        detail = r.json()["detail"]
        valid = [n for n in (SEARCHES if field == "search" else HEURISTICS) if ":" not in n]
        assert f"{field} {name!r} names Python code" in detail and "module:factory" in detail
        assert "choose one of: " + ", ".join(valid) in detail
        assert c.get("/api/info").json()["pool"]["completed"] == 0  # no worker ran anything
        assert c.post("/api/solve", json=BODY).status_code == 200  # the server carries on
    # only the last solve ran, with the server's limits and the puzzle's own settings
    assert fake.calls == [resolve_options(pz.make("cube3"), time_limit=20.0, max_nodes=2_000_000)]
    assert not probe_module.exists() and "pz_probe_code" not in sys.modules


def test_with_the_real_solver_a_code_name_is_never_imported(probe_module: Path) -> None:
    """The real solver would import ``module:factory`` (the Python API and CLI feature): through
    the server it never gets the name."""
    with client_for(None) as c:
        for path in ("/api/solve", "/api/jobs", "/api/value"):
            r = c.post(path, json={**BODY, "heuristic": "pz_probe_code:factory"})
            assert r.status_code == 422 and "names Python code" in r.json()["detail"]
    assert not probe_module.exists() and "pz_probe_code" not in sys.modules


def test_only_registered_names_are_accepted_and_info_lists_them() -> None:
    fake = Gate()
    with client_for(fake) as c:
        info = c.get("/api/info").json()
        assert list(info["searches"]) == list(SEARCHES) and list(info["heuristics"]) == list(HEURISTICS)
        r = c.post("/api/solve", json={**BODY, "search": "astar"})
        assert r.status_code == 422
        assert "unknown search 'astar'; choose one of: " + ", ".join(SEARCHES) in r.json()["detail"]
        ok = c.post("/api/solve", json={**BODY, "search": "bwas", "heuristic": "misplaced"})
        assert ok.status_code == 200
        schema = c.get("/openapi.json").json()["components"]["schemas"]["SolveRequest"]["properties"]
        assert schema["heuristic"]["anyOf"][0]["enum"] == list(HEURISTICS)
    assert fake.calls[-1].search == "bwas" and fake.calls[-1].heuristic == "misplaced"


def test_the_pages_ask_only_for_registered_names() -> None:
    """Every solving method the pages offer (static/js/api.js) sends and needs registered names."""
    source = (ROOT / "src/puzzlezero/web/static/js/api.js").read_text(encoding="utf-8")
    sent = re.findall(r"\b(search|heuristic): \"([^\"]+)\"", source)
    needs = [
        n for group in re.findall(r"needs: \[([^\]]*)\]", source) for n in re.findall(r"\"([^\"]+)\"", group)
    ]
    assert {field for field, _ in sent} == {"search", "heuristic"} and needs
    for field, name in sent:
        assert name in (SEARCHES if field == "search" else HEURISTICS), name
    assert set(needs) <= set(SEARCHES) | set(HEURISTICS)


# ---- a worker's SystemExit fails one job, not the server -----------------------------------------
def test_a_system_exit_in_a_job_fails_that_job_and_the_server_carries_on() -> None:
    def exits(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        if opts.batch == 13:
            raise SystemExit(3)
        return bfs_solve(puzzle, state)

    with client_for(exits) as c:
        job = c.post("/api/jobs", json={**BODY, "batch": 13}).json()
        until(lambda: c.get(f"/api/jobs/{job['id']}").json()["status"] != "queued")
        until(lambda: c.get(f"/api/jobs/{job['id']}").json()["status"] == "failed")
        failed = c.get(f"/api/jobs/{job['id']}").json()
        assert failed["error"] == {"status": 500, "detail": INTERNAL}
        r = c.post("/api/solve", json={**BODY, "batch": 13})
        assert r.status_code == 500 and r.json()["detail"] == INTERNAL
        r = c.post("/api/solve", json=BODY)
        assert r.status_code == 200 and r.json()["solved"]


def test_the_job_store_settles_a_system_exit_as_a_failed_job() -> None:
    """The outcome itself carries the ``SystemExit`` (as a pool that passed it on would): the
    done-callback records a 500 where it used to let the exception end the event loop."""

    async def main() -> dict[str, Any]:
        pool = SolvePool(ServerConfig(executor="thread", workers=1))
        store = JobStore(pool, result_ttl=60.0, max_results=4)
        outcome: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        ticket = Ticket(SolveJob("cube3", pz.make("cube3").goal()), 1.0, outcome)
        job = store.add(ticket, lambda out: out)
        outcome.set_exception(SystemExit(2))
        await asyncio.sleep(0.01)
        assert job.status == "failed" and job.expires is not None
        return job.error or {}

    assert asyncio.run(main()) == {"status": 500, "detail": INTERNAL}


# ---- fair admission ------------------------------------------------------------------------------
def test_a_flooding_client_gets_429_while_another_is_admitted_and_served() -> None:
    fake = Gate()
    with two_clients(fake, workers=2, client_waiting=2, client_running=1) as c:
        try:
            flood = [c.post("/api/jobs", json=BLOCKING) for _ in range(3)]
            assert [r.status_code for r in flood] == [202, 202, 202]
            # no worker idles while work waits: with nobody else in line the flood takes both
            assert [r.json()["status"] for r in flood] == ["running", "running", "queued"]
            refused = c.post("/api/jobs", json=BLOCKING)  # 3 held: client_waiting + client_running
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
            assert "client_waiting + client_running = 3" in refused.json()["detail"]
            assert c.post("/api/solve", json=BODY).status_code == 429  # every heavy endpoint
            # the other client: admitted, and served before the flood's waiting job
            job = c.post("/api/jobs", json=BODY, headers=OTHER)
            assert job.status_code == 202 and job.json()["status"] == "queued"
            assert c.get("/api/info").json()["pool"]["waiting"] == 2
        finally:
            fake.open()
        until(lambda: c.get(f"/api/jobs/{job.json()['id']}").json()["status"] == "done")
        for r in flood:
            until(lambda r=r: c.get(f"/api/jobs/{r.json()['id']}").json()["status"] == "done")
        assert [o.batch == Gate.BLOCK for o in fake.calls] == [True, True, False, True]  # the other's 3rd


def test_admission_comes_before_the_state_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[int] = []
    real = api.read_state
    monkeypatch.setattr(api, "read_state", lambda p, text: parsed.append(len(text or "")) or real(p, text))
    fake = Gate()
    with two_clients(fake, workers=1, client_waiting=1, client_running=1) as c:
        try:
            assert c.post("/api/jobs", json=BLOCKING).json()["status"] == "running"
            assert c.post("/api/jobs", json=BLOCKING).json()["status"] == "queued"
            assert parsed == [1, 1]
            huge = {"puzzle": "cube3", "state": "Q" * 20_000}  # unreadable, and slow to read
            for path in ("/api/jobs", "/api/solve", "/api/value"):
                r = c.post(path, json=huge)
                assert r.status_code == 429 and "client_waiting 1" in r.json()["detail"], (path, r.text)
            assert parsed == [1, 1]  # refused unread
            r = c.post("/api/value", json=huge, headers=OTHER)  # another client's is read, and refused
            assert r.status_code == 400 and parsed == [1, 1, 20_000]
        finally:
            fake.open()


def test_value_goes_through_the_pool() -> None:
    with client_for(Gate()) as c:
        r = c.post(
            "/api/value", json={"puzzle": "puzzle8", "state": "1 2 3 4 5 6 7 0 8", "heuristic": "misplaced"}
        )
        assert r.status_code == 200, r.text
        assert r.json()["value"] >= 1.0 and r.json()["best_move"] is not None
        assert c.get("/api/info").json()["pool"]["completed"] == 1  # a worker answered it


# ---- a client that goes away gives up its place ----------------------------------------------------
def test_a_client_that_disconnects_leaves_the_line() -> None:
    fake = Gate()
    app = create_app(ServerConfig(executor="thread", workers=1), solve_fn=fake)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        try:
            assert httpx.post(f"{url}/api/jobs", json=BLOCKING).json()["status"] == "running"
            send_and_close(
                port, "/api/solve", BODY, lambda: httpx.get(f"{url}/api/info").json()["pool"]["waiting"] == 1
            )
            until(lambda: httpx.get(f"{url}/api/info").json()["pool"]["waiting"] == 0)  # closed: it left
            assert httpx.get(f"{url}/api/info").json()["pool"]["running"] == 1
            assert len(fake.calls) == 1  # the solve never ran
        finally:
            fake.open()


def sleeps_its_time_limit(
    puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None
) -> FakeResult:
    """A search that uses its whole time limit (module level: worker processes import it)."""
    time.sleep(opts.time_limit)
    return bfs_solve(puzzle, state)


def send_and_close(port: int, path: str, body: dict[str, Any], sent: Callable[[], bool]) -> None:
    """POST ``body`` on a raw connection, wait until ``sent()`` says the server has it, close."""
    data = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        until(sent, 30)


def test_a_client_that_disconnects_while_its_solve_runs_frees_the_worker() -> None:
    """A real worker process: the running search of a client that went away is stopped and its
    worker replaced, instead of searching for its whole minute."""
    app = create_app(ServerConfig(workers=1, queue=4), solve_fn=sleeps_its_time_limit)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        until(lambda: httpx.get(f"{url}/healthz").json()["ready"] == 1, 60)
        first = app.state.pool.health()["pids"]  # /healthz shows no process ids
        busy = lambda: httpx.get(f"{url}/healthz").json()["busy"] == 1  # noqa: E731
        send_and_close(port, "/api/solve", {**BODY, "time_limit": 60}, busy)
        until(lambda: httpx.get(f"{url}/healthz").json()["restarts"] == 1)  # stopped, replaced
        health = httpx.get(f"{url}/healthz").json()
        assert health["busy"] == 0 and not set(first) & set(app.state.pool.health()["pids"])


def test_a_waiting_job_nobody_polls_leaves_the_line() -> None:
    fake = Gate()
    now = [0.0]
    with client_for(fake, workers=1, job_idle_timeout=60.0) as c:
        c.app.state.jobs.clock = lambda: now[0]  # type: ignore[attr-defined]
        try:
            running = c.post("/api/jobs", json=BLOCKING).json()
            kept = c.post("/api/jobs", json=BODY).json()
            now[0] = 50.0
            assert c.get(f"/api/jobs/{kept['id']}").json()["status"] == "queued"  # polled at 50
            now[0] = 100.0
            later = c.post("/api/jobs", json=BODY).json()  # admission sweeps: 50 s idle is kept
            assert c.get("/api/info").json()["pool"]["waiting"] == 2
            now[0] = 111.0
            assert c.post("/api/jobs", json=BODY).status_code == 202  # 61 s idle: it leaves
            gone = c.get(f"/api/jobs/{kept['id']}").json()
            assert gone["status"] == "cancelled"
            assert gone["error"] == {
                "status": 408,
                "detail": "left the line: its client did not poll it for 60 s",
            }
            assert c.get(f"/api/jobs/{later['id']}").json()["status"] == "queued"
            assert c.get(f"/api/jobs/{running['id']}").json()["status"] == "running"  # never swept
        finally:
            fake.open()


# ---- the Host header -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("localhost", 200),
        ("localhost:8000", 200),
        ("LOCALHOST:8000", 200),
        ("127.0.0.1:8000", 200),
        ("[::1]:8000", 200),
        ("evil.example", 400),
        ("evil.example:8000", 400),
        ("localhost.evil.example", 400),
        ("127.0.0.1.nip.io", 400),
        ("localhost:80:80", 400),
    ],
)
def test_requests_for_other_host_names_are_refused(host: str, status: int) -> None:
    fake = Gate()
    with client_for(fake, allowed_hosts=LOOPBACK_HOSTS) as c:
        r = c.get("/api/info", headers={"host": host})
        assert r.status_code == status
        s = c.post("/api/solve", json=BODY, headers={"host": host})
        assert s.status_code == status
        if status == 400:
            assert "invalid Host header" in r.json()["detail"] and "--allowed-host" in r.json()["detail"]
            assert c.get("/docs", headers={"host": host}).status_code == 400
            assert c.get("/healthz", headers={"host": host}).status_code == 200  # probes name no host
    assert len(fake.calls) == (1 if status == 200 else 0)


def test_allowed_hosts_default_to_loopback_and_take_subdomain_patterns() -> None:
    assert ServerConfig().allowed_hosts == LOOPBACK_HOSTS
    with client_for(allowed_hosts=("*.example.org",)) as c:
        assert c.get("/api/info", headers={"host": "pz.example.org"}).status_code == 200
        assert c.get("/api/info", headers={"host": "example.org"}).status_code == 400
        assert c.get("/api/info", headers={"host": "evilexample.org"}).status_code == 400
    with client_for(allowed_hosts=("*",)) as c:  # the check off (a proxy in front checks)
        assert c.get("/api/info", headers={"host": "evil.example"}).status_code == 200
    with pytest.raises(pz.PuzzleError, match="allowed host 'a\\*b'"):
        ServerConfig(allowed_hosts=("a*b",))


# ---- named errors and health -----------------------------------------------------------------------
def raising(exc: BaseException) -> Callable[..., FakeResult]:
    def solve(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        raise exc

    return solve


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (
            errors.MissingTableError(
                "the cube3 tables are not built; build it with: puzzlezero pdb build cube3"
            ),
            503,
        ),
        (
            errors.MemoryBudgetError(
                "the search needs about 40 GiB, the budget is 4 GiB; lower --beam-width"
            ),
            422,
        ),
        (errors.BudgetError("max_nodes 1e11 exceeds the budget"), 422),
        (errors.ModelFileError("no model file"), 503),
        (errors.CheckpointMismatchError("written for another config"), 503),
        (errors.InvalidStateError("twisted corner"), 400),
    ],
)
def test_worker_errors_get_the_status_of_their_class(exc: Exception, status: int) -> None:
    with client_for(raising(exc)) as c:
        r = c.post("/api/solve", json=BODY)
        assert r.status_code == status and r.json()["detail"] == str(exc)
        job = c.post("/api/jobs", json=BODY).json()
        until(lambda: c.get(f"/api/jobs/{job['id']}").json()["status"] == "failed")
        assert c.get(f"/api/jobs/{job['id']}").json()["error"] == {"status": status, "detail": str(exc)}
    assert worker_error("from a plugin", "PancakeError").status == 400  # another class: bad input


def test_healthz_reports_the_pool_and_fails_when_no_worker_can_run() -> None:
    with client_for(Gate()) as c:
        r = c.get("/healthz")
        assert r.status_code == 200 and r.json()["ok"] is True and r.json()["waiting"] == 0
        assert r.json()["workers_alive"] == 1
        pool = c.app.state.pool  # type: ignore[attr-defined]
        pool.health = lambda: {"ok": False, "workers_alive": 0, "last_error": "ImportError: no torch"}
        r = c.get("/healthz")
        assert r.status_code == 503 and r.json()["last_error"] == "ImportError: no torch"


# ---- puzzlezero serve ------------------------------------------------------------------------------
LIMITS = (
    "--time-limit",
    "--max-nodes",
    "--queue",
    "--workers",
    "--client-waiting",
    "--client-running",
    "--grace-seconds",
    "--overrun-margin",
    "--shutdown-timeout",
    "--worker-memory-mib",
    "--respawn-backoff",
    "--start-timeout",
    "--max-body-bytes",
    "--allowed-host",
    "--job-idle-timeout",
)


def test_serve_help_documents_every_limit(capsys: pytest.CaptureFixture[str]) -> None:
    from puzzlezero.cli.main import main

    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    missing = [opt for opt in LIMITS if opt not in out]
    assert not missing and "module:factory" in out
    assert "[default" not in out.replace("[default: ", "")  # no default lost to rich markup


def test_serve_applies_the_limits_and_the_host_names(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal

    import uvicorn

    from puzzlezero.cli.main import main

    ran: list[Any] = []

    def run(server: Any, sockets: Any = None) -> None:  # started, then stopped by SIGTERM
        server.started = True
        ran.append(server.config)
        server.handle_exit(signal.SIGTERM, None)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    args = ["serve", "--executor", "thread", "--client-waiting", "3", "--client-running", "2"]
    args += ["--shutdown-timeout", "7", "--job-idle-timeout", "30", "--allowed-host", "pz.example.org"]
    assert main(args) == 0
    app = ran[0].app
    config = app.state.config
    assert ran[0].timeout_graceful_shutdown == 4 and ran[0].host == "127.0.0.1"  # 3 s kept for the pool
    assert app.state.stopping_since is not None  # the pool's share of the 7 s counts from here
    assert (config.client_waiting, config.client_running, config.job_idle_timeout) == (3, 2, 30.0)
    assert config.allowed_hosts == (*LOOPBACK_HOSTS, "pz.example.org")
    assert "answering to Host: localhost, 127.0.0.1, ::1, [::1], pz.example.org" in capsys.readouterr().out
    assert main(["serve", "--host", "0.0.0.0", "--executor", "thread"]) == 0
    config = ran[1].app.state.config
    assert socket.gethostname().lower() in config.allowed_hosts
    assert "answers to this machine's names and addresses" in capsys.readouterr().out


def test_the_pool_gets_what_is_left_of_the_shutdown_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from puzzlezero.web import app as app_module

    clock = FakeClock()  # the app's clock: no time passes between the signal and the shutdown
    monkeypatch.setattr(app_module, "time", clock)
    waited: list[float] = []
    for stopping_for in (None, 3.0, 60.0):
        c = client_for(Gate(), shutdown_timeout=10.0)
        pool = c.app.state.pool  # type: ignore[attr-defined]
        aclose = pool.aclose

        async def spy(timeout: float, aclose: Any = aclose) -> None:
            waited.append(timeout)
            await aclose(timeout)

        pool.aclose = spy
        with c:
            if stopping_for is not None:  # as the server notes it on SIGTERM
                c.app.state.stopping_since = clock.monotonic() - stopping_for  # type: ignore[attr-defined]
    assert waited == [10.0, 7.0, 0.0]


def test_served_hosts_follow_the_bind_address() -> None:
    from puzzlezero.cli.serve_cmds import served_hosts

    assert served_hosts("127.0.0.1", []) == (LOOPBACK_HOSTS, "")
    assert served_hosts("::1", ["Pz.Example.org"]) == ((*LOOPBACK_HOSTS, "pz.example.org"), "")
    assert served_hosts("192.168.1.5", []) == ((*LOOPBACK_HOSTS, "192.168.1.5"), "")
    assert served_hosts("fd00::5", [])[0][-1] == "[fd00::5]"
    named, _ = served_hosts("0.0.0.0", ["class.example.org"])  # names given: only those
    assert named == (*LOOPBACK_HOSTS, "class.example.org")
    every, note = served_hosts("0.0.0.0", [])
    assert socket.gethostname().lower() in every and "no --allowed-host" in note


def test_serve_prepares_the_default_solves_tables_and_those_asked_for_before_the_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Workers never build a table, so ``serve`` builds the group tables the cubes' default solves
    fall back to, and with ``--build-tables`` every table of the puzzles named; an unknown name is
    refused before anything is built."""
    import puzzlezero.classic as tables
    from puzzlezero.cli.serve_cmds import prepare_tables
    from puzzlezero.errors import UnknownNameError
    from puzzlezero.web.config import ServerConfig

    built: list[tuple[str, str]] = []
    monkeypatch.setattr(
        tables, "build_tables", lambda p, kind, **bounds: built.append((p.name, kind)) or [p.name]
    )
    config = ServerConfig(executor="thread")
    with pytest.raises(UnknownNameError):
        prepare_tables(config, ["puzzle15", "nope"])
    assert built == []
    prepare_tables(config, ["puzzle15", "cube2", "puzzle15"])
    groups = {name for name, kind in built if kind == "group"}
    assert "cube3" in groups and "puzzle15" not in groups
    assert [(n, k) for n, k in built if k == "all"] == [("puzzle15", "all"), ("cube2", "all")]
    assert ("cube2", "group") not in built  # its "all" build includes the group table
    assert ("cube3", "two-phase") in built  # its default solve runs the two-phase search beside its network


def test_a_refused_body_is_not_sent_back() -> None:
    app = create_app(ServerConfig(executor="thread", workers=1, allowed_hosts=("testserver",)))
    with TestClient(app) as c:
        r = c.post("/api/validate", json={"puzzle": "cube3", "state": "R" * 20_001})
    assert r.status_code == 422 and "state" in r.json()["detail"]
    assert "RRRRRRRRRR" not in r.text and len(r.content) < 2_000


def test_serve_keeps_one_client_from_holding_a_short_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    import uvicorn

    from puzzlezero.cli.main import main

    ran: list[Any] = []

    def run(server: Any, sockets: Any = None) -> None:
        server.started = True
        ran.append(server.config.app.state.config)
        server.handle_exit(signal.SIGTERM, None)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    for args, waiting in (
        ([], 4),
        (["--queue", "4"], 2),
        (["--queue", "1"], 1),
        (["--queue", "4", "--client-waiting", "4"], 4),
    ):
        assert main(["serve", "--executor", "thread", *args]) == 0
        assert ran[-1].client_waiting == waiting, args
