"""Connections ``puzzlezero serve`` holds: a request head (and then its body) has a deadline, so a
client that sends it a byte at a time cannot keep its socket (a slowloris); the connection cap
answers 503 and is logged once; keep-alive clients are served as before; ``serve`` hands uvicorn
these settings and raises the open-files limit. Real uvicorn servers on loopback ports, raw
sockets; each test takes a few seconds."""

from __future__ import annotations

import logging
import socket
import time
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402

from puzzlezero.web import ServerConfig, create_app  # noqa: E402
from puzzlezero.web.connections import GuardedH11Protocol, raise_open_files_limit  # noqa: E402
from tests.clock import until  # noqa: E402
from tests.web.live_server import closed_after, read_response, served  # noqa: E402

HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def app_with(**config: Any) -> Any:
    config.setdefault("executor", "thread")
    config.setdefault("workers", 1)
    return create_app(ServerConfig(**config))


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def test_a_request_head_sent_slowly_is_closed_after_the_header_timeout() -> None:
    with served(app_with(header_timeout=0.5)) as port:
        silent, partial, trickle = connect(port), connect(port), connect(port)
        partial.sendall(HEAD[:20])
        sent = 0
        for byte in HEAD:  # a byte every 0.2 s (8 s for the head), until the server hangs up
            try:
                trickle.sendall(bytes([byte]))
            except OSError:
                break
            sent += 1
            time.sleep(0.2)
        assert sent < len(HEAD), "the server let a byte-a-time client send its whole head"
        for sock in (silent, partial, trickle):
            after = closed_after(sock, 10.0)
            assert after is not None, "the server kept a connection with no complete request head"
            sock.close()


def test_the_next_request_head_on_a_kept_alive_connection_has_the_deadline_too() -> None:
    """After a response the keep-alive timer runs; one byte of a next request stopped it, and the
    connection was then held for ever. Now the head is due ``header_timeout`` after the response."""
    with served(app_with(header_timeout=0.5, keep_alive_timeout=60)) as port:
        sock = connect(port)
        sock.sendall(HEAD + b"\r\n")
        assert read_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(b"G")
        assert closed_after(sock, 5.0) is not None
        sock.close()


def test_a_request_body_sent_slowly_is_answered_408() -> None:
    with served(app_with(header_timeout=0.5)) as port:
        sock = connect(port)
        body = b'{"puzzle": "cube3", "state": "R"}'
        head = b"POST /api/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
        answer = read_response(sock, 5.0)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"request body too slow" in answer
        sock.close()


def test_keep_alive_clients_and_slow_but_steady_ones_are_served() -> None:
    with served(app_with(header_timeout=2.0)) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
        for _ in range(8):  # one connection, requests 0.3 s apart: longer in all than the deadline,
            assert c.get("/healthz").status_code == 200  # which each request's head meets
            time.sleep(0.3)
        sock = connect(port)
        for chunk in (HEAD[:10], HEAD[10:], b"\r\n"):  # a head in three parts well within the deadline
            sock.sendall(chunk)
            time.sleep(0.2)
        assert read_response(sock).startswith(b"HTTP/1.1 200")
        sock.close()


def test_the_connection_cap_answers_503_and_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="puzzlezero.web")
    with served(app_with(limit_concurrency=3, header_timeout=30)) as port:
        url = f"http://127.0.0.1:{port}/healthz"
        assert httpx.get(url).status_code == 200
        idle = [connect(port) for _ in range(3)]
        until(lambda: httpx.get(url).status_code == 503, 10, "the cap reached once the server took them")
        assert [httpx.get(url).status_code for _ in range(3)] == [503, 503, 503]
        reached = [r for r in caplog.records if "connection limit reached" in r.getMessage()]
        assert len(reached) == 1 and "--limit-concurrency 3" in reached[0].getMessage()
        for sock in idle:
            sock.close()
        deadline = time.monotonic() + 5
        while httpx.get(url).status_code != 200:
            assert time.monotonic() < deadline, "the server did not serve again once connections closed"
            time.sleep(0.05)
    assert any("connections back to" in r.getMessage() for r in caplog.records)


def test_the_open_files_limit_is_raised_to_the_hard_limit() -> None:
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 512:
        pytest.skip(f"a hard limit of {hard} open files leaves nothing to raise")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        before, after = raise_open_files_limit()  # type: ignore[misc]
        assert before == 256 and after > 256
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == (
            hard if hard != resource.RLIM_INFINITY else after
        )
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_serve_hands_uvicorn_the_connection_settings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import signal

    import uvicorn

    from puzzlezero.cli import serve_cmds
    from puzzlezero.cli.main import main

    ran: list[Any] = []
    monkeypatch.setattr(serve_cmds, "prepare_tables", lambda config, build: [])  # not this test's

    def run(server: Any, sockets: Any = None) -> None:
        server.started = True
        ran.append(server.config)
        server.handle_exit(signal.SIGTERM, None)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    monkeypatch.setenv("PUZZLEZERO_CLIENT_SECRET", "from-the-environment")
    assert main(["serve", "--executor", "thread"]) == 0
    default = ran[-1]
    assert default.proxy_headers is False and default.limit_concurrency == 200
    assert default.timeout_keep_alive == 5 and issubclass(default.http, GuardedH11Protocol)
    assert default.http.header_timeout == 10.0
    assert default.app.state.config.client_secret == "from-the-environment"
    assert "X-Forwarded-For trusted from no proxy" in capsys.readouterr().out
    args = ["serve", "--executor", "thread", "--forwarded-allow-ips", "127.0.0.1,10.0.0.0/8"]
    args += ["--forwarded-allow-ips", "::1", "--limit-concurrency", "50", "--keep-alive-timeout", "7"]
    args += ["--header-timeout", "3", "--address-limit", "40", "--rate-limit", "5", "--rate-burst", "20"]
    args += ["--client-keys-per-minute", "60"]
    assert main(args) == 0
    config = ran[-1]
    assert config.proxy_headers is False and config.limit_concurrency == 50 and config.timeout_keep_alive == 7
    assert config.http.header_timeout == 3.0 and config.http.cap is not default.http.cap
    served = config.app.state.config
    assert served.forwarded_allow_ips == ("127.0.0.1", "10.0.0.0/8", "::1")
    assert (served.address_limit, served.rate_limit, served.rate_burst) == (40, 5.0, 20)
    assert served.client_keys_per_minute == 60
    assert "X-Forwarded-For trusted from 127.0.0.1, 10.0.0.0/8, ::1" in capsys.readouterr().out
