"""The web tests' own helpers for servers they start: a connection to a port where nothing listens
yet can join itself, and polling must see that as "not yet", not as an answer."""

from __future__ import annotations

import http.client
import socket

import pytest

from tests.web.live_server import free_port, refuse_self_connection
from tests.web.test_web_supervision import _call, _health


def test_a_socket_joined_to_itself_is_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.connect(sock.getsockname())  # TCP's simultaneous open, with itself
        assert sock.getsockname() == sock.getpeername()
        with pytest.raises(ConnectionRefusedError, match="connected to itself"):
            refuse_self_connection(sock)


def test_a_socket_to_a_listener_is_not_refused() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname()) as sock:
            refuse_self_connection(sock)


def test_a_health_poll_that_joins_itself_is_not_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The poll's connection is made to join itself, as the kernel may make it when it picks the
    free port as the connection's source: unchecked, it reads its own request back as an answer's
    status line (``http.client.BadStatusLine``); checked, it is "nothing listens yet"."""
    ports = iter([free_port(), free_port()])  # each joined socket leaves its port in TIME_WAIT
    connect = http.client.HTTPConnection.connect

    def joined_to_itself(self: http.client.HTTPConnection) -> None:
        self.source_address = (self.host, self.port)
        connect(self)

    monkeypatch.setattr(http.client.HTTPConnection, "connect", joined_to_itself)
    with pytest.raises(ConnectionRefusedError, match="connected to itself"):
        _call(next(ports), "GET", "/healthz")
    assert _health(next(ports)) == {}
