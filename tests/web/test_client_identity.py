"""Who a request is, and how much it may hold: proxy headers trusted only from the proxies the
operator names, a signed client key per browser (so a class behind one address is many clients,
with a cap on the address as a whole), admission and reservation in one step (a flood of
concurrent requests is parsed only as far as its share), no worker idle while work waits, a rate
limit on the quick endpoints, no path of the server in any answer, and ``/healthz`` for any Host.
Real uvicorn servers set up as ``puzzlezero serve`` sets them up, and TestClients; fake solvers."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from fastapi import FastAPI, Request  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from puzzlezero.errors import ModelFileError  # noqa: E402
from puzzlezero.puzzles.base import Puzzle  # noqa: E402
from puzzlezero.solver import SolveOptions  # noqa: E402
from puzzlezero.web import ServerConfig, api, create_app  # noqa: E402
from puzzlezero.web.clients import COOKIE, ClientKeys, Holdings, address_key  # noqa: E402
from puzzlezero.web.line import ClientLimitError  # noqa: E402
from tests.clock import until  # noqa: E402
from tests.web.live_server import PeerFromHeader, served  # noqa: E402
from tests.web.test_web import FakeResult, bfs_solve  # noqa: E402

BLOCK = 7
JOB = {"puzzle": "cube3", "state": "R", "batch": BLOCK}


class Gate:
    """A fake solver that holds every call whose ``batch`` is :data:`BLOCK` until :meth:`open`."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.calls = 0

    def __call__(
        self, puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None
    ) -> FakeResult:
        self.calls += 1
        if opts.batch == BLOCK:
            assert self.event.wait(30)
        return bfs_solve(puzzle, state)

    def open(self) -> None:
        self.event.set()


def app_for(solve_fn: Any = bfs_solve, **config: Any) -> FastAPI:
    """The app with a thread pool, and ``GET /whoami``: the client key and address it sees."""
    config.setdefault("executor", "thread")
    config.setdefault("workers", 1)
    app = create_app(ServerConfig(**config), solve_fn=solve_fn)

    @app.get("/whoami")
    def whoami(request: Request) -> dict[str, str]:
        return {"key": api.client_key(request), "address": api.client_address(request)}

    return app


def client_of(solve_fn: Any = bfs_solve, **config: Any) -> TestClient:
    """A TestClient of :func:`app_for`'s app, the peer address settable by ``x-test-peer``."""
    config.setdefault("allowed_hosts", ("testserver",))
    app = app_for(solve_fn, **config)
    app.add_middleware(PeerFromHeader)
    return TestClient(app, raise_server_exceptions=False)


# ---- proxy headers -------------------------------------------------------------------------------
FORGED = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}


def test_a_forged_forwarded_for_from_loopback_is_ignored_by_default() -> None:
    """uvicorn trusts X-Forwarded-For from loopback unless told otherwise: anyone on the machine
    could pick a new identity per request. ``serve`` trusts no proxy unless one is named."""
    with served(app_for()) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
        seen = {
            c.get("/whoami", headers={"X-Forwarded-For": f"203.0.113.{i}"}).json()["key"] for i in range(5)
        }
        assert seen == {"127.0.0.1"}
        r = c.get("/whoami", headers=FORGED)
        assert r.json() == {"key": "127.0.0.1", "address": "127.0.0.1"}


@pytest.mark.parametrize("proxy", ["127.0.0.1", "127.0.0.0/8"])
def test_forwarded_for_is_honoured_from_a_named_proxy(proxy: str) -> None:
    with (
        served(app_for(forwarded_allow_ips=(proxy,))) as port,
        httpx.Client(base_url=f"http://127.0.0.1:{port}") as c,
    ):
        assert c.get("/whoami", headers=FORGED).json()["address"] == "203.0.113.9"
        # a chain: the right-most address that is not a trusted proxy is the client
        chain = {"X-Forwarded-For": "198.51.100.1, 203.0.113.9, 127.0.0.1"}
        assert c.get("/whoami", headers=chain).json()["address"] == "203.0.113.9"
        assert c.get("/whoami").json()["address"] == "127.0.0.1"  # no header: the proxy itself


def test_forwarded_for_from_a_peer_not_named_is_ignored() -> None:
    with served(app_for(forwarded_allow_ips=("10.9.9.9",))) as port:
        r = httpx.get(f"http://127.0.0.1:{port}/whoami", headers=FORGED)
        assert r.json()["address"] == "127.0.0.1"


def test_forwarded_allow_ips_must_be_addresses() -> None:
    from puzzlezero.errors import PuzzleError

    with pytest.raises(PuzzleError, match="forwarded_allow_ips 'proxy.example'"):
        ServerConfig(forwarded_allow_ips=("proxy.example",))


# ---- client keys ---------------------------------------------------------------------------------
def test_thirty_students_behind_one_address_are_distinct_clients_and_the_address_cap_holds() -> None:
    """30 browsers on one address (a classroom behind NAT), one solve each, at once: each page
    load gives a browser its own client key, so one client's limits (1 waiting, 1 running) do not
    hold the class to one solve; the address as a whole holds at most ``address_limit`` (20)."""
    gate = Gate()
    app = app_for(
        gate,
        workers=2,
        queue=64,
        client_waiting=1,
        client_running=1,
        address_limit=20,
        client_keys_per_minute=30,
    )
    app.state.client_keys.issued.clock = lambda: 0.0  # no new keys come with time in this test
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        students = [httpx.Client(base_url=url, timeout=30) for _ in range(30)]
        try:
            pages = [s.get("/") for s in students]
            assert all(p.status_code == 200 and COOKIE in p.headers.get("set-cookie", "") for p in pages)
            cookie = pages[0].headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
            keys = {s.get("/whoami").json()["key"] for s in students}
            assert len(keys) == 30 and all(k.startswith("key:") for k in keys)
            start = threading.Barrier(30)

            def post(s: httpx.Client) -> httpx.Response:
                start.wait()
                return s.post("/api/jobs", json=JOB)

            with ThreadPoolExecutor(30) as ex:
                answers = list(ex.map(post, students))
            codes = Counter(r.status_code for r in answers)
            assert codes == {202: 20, 429: 10}, codes
            refused = next(r for r in answers if r.status_code == 429)
            assert "address_limit 20" in refused.json()["detail"] and int(refused.headers["retry-after"]) >= 1
            holdings = app.state.holdings
            assert holdings.by_address == {"127.0.0.1": 20} and set(holdings.by_key.values()) == {1}
            assert app.state.pool.stats()["running"] == 2  # and 18 waiting, one per student
            # the 31st browser: the address has had its 30 new keys this minute; its address is its key
            late = httpx.Client(base_url=url)
            assert COOKIE not in late.get("/").headers.get("set-cookie", "")
            assert late.get("/whoami").json()["key"] == "127.0.0.1"
            late.close()
        finally:
            gate.open()

        def done(job_id: str) -> bool:
            return bool(students[0].get(f"/api/jobs/{job_id}").json()["status"] == "done")

        for job_id in [r.json()["id"] for r in answers if r.status_code == 202]:
            until(partial(done, job_id), 30)
        until(lambda: not app.state.holdings.by_address, 10, "every place given back")
        for s in students:
            s.close()


def test_a_forged_or_expired_key_is_the_address_and_gets_a_new_key() -> None:
    with client_of() as c:
        r = c.get("/")
        value = r.cookies[COOKIE]
        assert c.get("/whoami").json()["key"].startswith("key:")
        key, expires, signature = value.split(".")
        forged = [
            f"{key}.{expires}.{signature[:-2]}xx",  # a signature of its own
            f"{key}x.{expires}.{signature}",  # another id under the same signature
            f"{key}.{int(expires) + 1}.{signature}",  # a longer life
            "a.1.b",
            "x" * 5000,
        ]
        for bad in forged:
            c.cookies.clear()
            c.cookies.set(COOKIE, bad)
            assert c.get("/whoami").json()["key"] == "testclient", bad
            assert COOKIE in c.get("/").headers.get("set-cookie", "")  # a page load replaces it
        keys = ClientKeys(b"secret", 10, clock=lambda: 0.0, lifetime=60)
        old = keys.issue("10.0.0.1")
        assert keys.verify(old) is not None
        keys.clock = lambda: 61.0
        assert keys.verify(old) is None  # expired


def test_keys_go_to_pages_and_same_origin_calls_only() -> None:
    with client_of() as c:
        assert COOKIE not in c.get("/api/info").headers.get("set-cookie", "")  # a script: no key
        r = c.get("/api/info", headers={"Sec-Fetch-Site": "same-origin"})  # the page's own call
        assert COOKIE in r.headers.get("set-cookie", "")
        assert COOKIE not in c.get("/").headers.get("set-cookie", "")  # it has a valid one
        c.cookies.clear()
        assert COOKIE in c.get("/board").headers.get("set-cookie", "")
        assert COOKIE not in c.get("/api/info", headers={"Sec-Fetch-Site": "cross-site"}).headers.get(
            "set-cookie", ""
        )
    with client_of(client_keys_per_minute=0) as c:  # keys off: clients by address only
        assert "set-cookie" not in c.get("/").headers


def test_a_shared_secret_makes_keys_valid_in_every_process() -> None:
    a, b = ClientKeys.from_secret("class-secret", 5), ClientKeys.from_secret("class-secret", 5)
    value = a.issue("10.0.0.1")
    assert value is not None and b.verify(value) == a.verify(value) is not None
    assert ClientKeys.from_secret("", 5).verify(value) is None  # a random secret per process
    with client_of(client_secret="class-secret") as c:
        assert "client_secret" not in c.get("/api/info").json()["limits"]
        c.cookies.set(COOKIE, value)
        assert c.get("/whoami").json()["key"] == f"key:{a.verify(value)}"


def test_keys_are_issued_at_a_bounded_rate_per_address() -> None:
    keys = ClientKeys(b"s", 3)
    assert [keys.issue("10.0.0.1") is not None for _ in range(5)] == [True, True, True, False, False]
    assert keys.issue("10.0.0.2") is not None  # another address has its own
    assert keys.issue("2001:db8::1") is not None


def test_ipv6_clients_are_keyed_by_their_64() -> None:
    assert address_key("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:2::1") == address_key("[2001:db8:1:2::ffff]")
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7" and address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("fe80::1%eth0") == "fe80::/64"
    held = Holdings(0, 2, lambda t: 1.0)
    held.reserve("a", address_key("2001:db8::1"), 10)
    held.reserve("b", address_key("2001:db8::2:3"), 10)
    with pytest.raises(ClientLimitError, match="address_limit 2"):  # one /64, one address
        held.reserve("c", address_key("2001:db8::ffff"), 10)
    held.reserve("d", address_key("2001:db8:0:1::1"), 10)  # another /64
    with client_of() as c:
        one = c.get("/whoami", headers={"x-test-peer": "2001:db8:5:6::1"}).json()
        two = c.get("/whoami", headers={"x-test-peer": "2001:db8:5:6:ffff::9"}).json()
        assert one["key"] == two["key"] == "2001:db8:5:6::/64"


# ---- admission ----------------------------------------------------------------------------------
def test_concurrent_floods_are_parsed_only_as_far_as_each_clients_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three browsers each send 10 solves at once while the state takes 0.5 s to read: a client's
    place is taken before the parse, so each client's flood is read at most as many times as it may
    hold (client_waiting + client_running = 3), not ten, and the rest are refused unread."""
    parsed: Counter[str] = Counter()
    real = api.read_state
    lock = threading.Lock()

    def slow_read(p: Any, text: str | None) -> Any:
        with lock:
            parsed[text or ""] += 1
        time.sleep(0.5)
        return real(p, text)

    monkeypatch.setattr(api, "read_state", slow_read)
    gate = Gate()
    app = app_for(gate, workers=2, queue=64, client_waiting=2, client_running=1, address_limit=0)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        browsers = {move: httpx.Client(base_url=url, timeout=30) for move in ("R", "U", "F")}
        try:
            for b in browsers.values():
                b.get("/")
            barrier = threading.Barrier(30)

            def post(move: str) -> tuple[str, int]:
                barrier.wait()
                return move, browsers[move].post("/api/jobs", json={**JOB, "state": move}).status_code

            with ThreadPoolExecutor(30) as ex:
                answers = list(ex.map(post, [m for m in browsers for _ in range(10)]))
        finally:
            gate.open()
        assert {code for _, code in answers} == {202, 429}
        admitted = Counter(move for move, code in answers if code == 202)
        assert all(2 <= admitted[m] <= 3 for m in browsers), admitted
        assert all(parsed[m] <= 3 for m in browsers), parsed  # not 10 each
        until(lambda: app.state.pool.stats()["waiting"] + app.state.pool.stats()["running"] == 0, 30)
        until(lambda: not app.state.holdings.by_key and app.state.holdings.pending == 0, 10)
        for b in browsers.values():
            b.close()


def test_a_refused_or_failed_request_gives_its_place_back() -> None:
    with client_of(client_waiting=1, client_running=1) as c:
        for _ in range(5):  # unreadable states: 400, and the place is free again
            assert c.post("/api/solve", json={"puzzle": "cube3", "state": "Q"}).status_code == 400
        holdings = c.app.state.holdings  # type: ignore[attr-defined]
        assert not holdings.by_key and holdings.pending == 0
        assert c.post("/api/solve", json={"puzzle": "cube3", "state": "R"}).status_code == 200
        until(lambda: not holdings.by_key, 10)


def test_no_worker_idles_while_a_clients_second_solve_waits() -> None:
    gate = Gate()
    with client_of(gate, workers=2, client_waiting=2, client_running=1) as c:
        try:
            jobs = [c.post("/api/jobs", json=JOB).json() for _ in range(2)]
            assert [j["status"] for j in jobs] == ["running", "running"]
        finally:
            gate.open()


# ---- the quick endpoints ---------------------------------------------------------------------------
def test_the_quick_endpoints_have_a_rate_limit_per_client() -> None:
    with client_of(rate_limit=0.2, rate_burst=6) as c:
        calls = [
            lambda h: c.post("/api/validate", json={"puzzle": "cube3", "state": "R"}, headers=h),
            lambda h: c.get("/api/scramble?puzzle=puzzle8&depth=3", headers=h),
            lambda h: c.get("/api/render?puzzle=puzzle8", headers=h),
            lambda h: c.post("/api/render", json={"puzzle": "puzzle8"}, headers=h),
            lambda h: c.post("/api/move", json={"puzzle": "cube3", "moves": "R"}, headers=h),
            lambda h: c.get("/api/puzzles", headers=h),
        ]
        assert [call({}).status_code for call in calls] == [200] * 6
        refused = [call({}) for call in calls]
        assert {r.status_code for r in refused} == {429}
        assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
        assert "rate_limit" in refused[0].json()["detail"]
        other = {"x-test-peer": "10.0.0.2"}
        assert (
            c.post("/api/validate", json={"puzzle": "cube3", "state": "R"}, headers=other).status_code == 200
        )
        assert c.get("/api/info").status_code == 200  # not a quick endpoint
        # a trajectory drawn as SVG costs a request per 50 frames more
        third = {"x-test-peer": "10.0.0.3"}
        move = {"puzzle": "cube3", "moves": ["R", "R'"] * 100, "trajectory": True, "svg": True}
        assert c.post("/api/move", json=move, headers=third).status_code == 200  # 1 + 200 / 50 = 5
        codes = [c.post("/api/validate", json={"puzzle": "cube3", "state": "R"}, headers=third).status_code]
        codes.append(
            c.post("/api/validate", json={"puzzle": "cube3", "state": "R"}, headers=third).status_code
        )
        assert codes == [200, 429]


# ---- answers name no path ------------------------------------------------------------------------
SECRET_PATH = "/srv/secret-place/models/cube3/model.npz"


def missing_model(
    puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None
) -> FakeResult:
    raise ModelFileError(f"{SECRET_PATH}: no such file")


def test_no_answer_names_a_path_of_the_server() -> None:
    with client_of(missing_model) as c:
        r = c.post("/api/solve", json={"puzzle": "cube3", "state": "R"})
        assert r.status_code == 503 and r.json()["detail"] == "cube3/model.npz: no such file"
        job = c.post("/api/jobs", json={"puzzle": "cube3", "state": "R"}).json()
        until(lambda: c.get(f"/api/jobs/{job['id']}").json()["status"] == "failed", 10)
        error = c.get(f"/api/jobs/{job['id']}").json()["error"]
        assert error == {"status": 503, "detail": "cube3/model.npz: no such file"}
        pool = c.app.state.pool  # type: ignore[attr-defined]
        health = pool.health()
        pool.health = lambda: {**health, "ok": False, "last_error": f"ModelFileError: {SECRET_PATH}: bad"}
        r = c.get("/healthz")
        assert r.status_code == 503 and "/srv" not in r.text and "cube3/model.npz" in r.text


def test_healthz_answers_any_host_and_shows_no_process_ids() -> None:
    with client_of(allowed_hosts=("class.example.org",)) as c:
        r = c.get("/healthz", headers={"host": "10.1.2.3:8000"})  # a probe by the pod's address
        assert r.status_code == 200 and r.json()["ok"] is True
        assert "pids" not in r.json() and "pid" not in r.text
        assert c.get("/api/info", headers={"host": "10.1.2.3:8000"}).status_code == 400
        assert c.get("/healthzz", headers={"host": "10.1.2.3"}).status_code == 400
        assert c.get("/healthz/", headers={"host": "10.1.2.3"}).status_code == 400
