"""A real uvicorn server for the web tests, set up as ``puzzlezero serve`` sets it up
(:func:`puzzlezero.cli.serve_cmds.uvicorn_config`: proxy headers, connection cap, keep-alive and
request-head timeouts), on a free loopback port in a thread of the test process."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from tests.clock import until


def free_port() -> int:
    """A loopback port free now, for a server started in another process."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def refuse_self_connection(sock: socket.socket) -> None:
    """Raise ``ConnectionRefusedError`` when ``sock`` is connected to itself.

    A free port (:func:`free_port`) lies in the kernel's range of source ports, so a connection to
    it made before the server listens can be given that same port as its source and join itself
    (TCP's simultaneous open): the request then reads back as its own answer, and the socket holds
    the port the server is about to bind. Polling a server that is starting must treat this as
    "nothing listens yet" and close the socket at once."""
    if sock.getsockname() == sock.getpeername():
        raise ConnectionRefusedError(f"{sock.getsockname()} connected to itself: nothing listens there yet")


def connect_checked(conn: http.client.HTTPConnection) -> None:
    """Connect ``conn``, refusing a connection that joined itself (:func:`refuse_self_connection`)."""
    conn.connect()
    assert conn.sock is not None
    refuse_self_connection(conn.sock)


@contextmanager
def served(app: Any) -> Iterator[int]:
    """Serve ``app`` (from ``create_app``) as ``serve`` would; yields the port."""
    import uvicorn

    from puzzlezero.cli.serve_cmds import uvicorn_config

    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", 0, "warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until(lambda: server.started and bool(server.servers), 30)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(15)


def closed_after(sock: socket.socket, most: float) -> float | None:
    """Seconds until the server closed ``sock`` (reading and dropping what it sends), or ``None``
    when it is still open ``most`` seconds on."""
    start = time.monotonic()
    sock.settimeout(0.1)
    while time.monotonic() - start < most:
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - start
        except TimeoutError:
            continue
        except ConnectionResetError:
            return time.monotonic() - start
    return None


def read_response(sock: socket.socket, most: float = 5.0) -> bytes:
    """What the server sends on ``sock`` until it closes it or ``most`` seconds pass."""
    sock.settimeout(0.2)
    data = b""
    end = time.monotonic() + most
    while time.monotonic() < end:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            if b"\r\n\r\n" in data:
                break
            continue
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


class PeerFromHeader:
    """Test middleware: the peer address from an ``x-test-peer`` header, so one TestClient (one
    event loop) can speak for several clients."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            peer = dict(scope["headers"]).get(b"x-test-peer")
            if peer is not None:
                scope = {**scope, "client": (peer.decode(), 40000)}
        await self.app(scope, receive, send)
