"""The connections ``puzzlezero serve`` holds: a deadline for each request head, the connection
cap logged once, and enough file descriptors.

uvicorn's HTTP/1.1 protocol (h11) arms no timer until a first response has been sent, and its
keep-alive timer is cancelled by the first byte of the next request: a client that sends a request
head a byte at a time, or never finishes it, holds its socket for as long as it likes, and a
thousand such clients use up the process's file descriptors. :func:`guarded_protocol` makes the
protocol class ``serve`` hands uvicorn (``http=``): a connection whose request head is not complete
``header_timeout`` seconds after it opened, or after its previous response ended, is closed. Once
the head is complete the request is the app's (its body has a deadline of its own there:
:class:`~puzzlezero.web.app.BodySizeLimit`).

uvicorn answers each request beyond ``limit_concurrency`` open connections 503 and logs a warning
for each; the guard logs one line when the cap is reached and one when the connections have
fallen well below it again, and :func:`quiet_cap_warnings` drops uvicorn's repeated ones.
:func:`raise_open_files_limit` raises the soft limit of open files to the hard limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "ConnectionCap",
    "GuardedH11Protocol",
    "guarded_protocol",
    "quiet_cap_warnings",
    "raise_open_files_limit",
]

log = logging.getLogger("puzzlezero.web")

#: the warning uvicorn logs for every request beyond its ``limit_concurrency``
UVICORN_CAP_WARNING = "Exceeded concurrency limit."


class ConnectionCap:
    """Whether the server holds its most connections, told once each way in the log."""

    def __init__(self) -> None:
        self.reached = False

    def opened(self, count: int, limit: int | None) -> None:
        """A connection opened; ``count`` are open now (this one too)."""
        if limit and count >= limit and not self.reached:
            self.reached = True
            log.warning(
                "connection limit reached: %d connections open, the most this server holds "
                "(serve --limit-concurrency %d); new requests are answered 503 until some close",
                count,
                limit,
            )

    def closed(self, count: int, limit: int | None) -> None:
        """A connection closed; ``count`` are open now."""
        if self.reached and limit and count <= limit * 3 // 4:
            self.reached = False
            log.info("connections back to %d of at most %d: requests are served again", count, limit)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head (``header_timeout`` seconds
    from the connection's start or its previous response's end) and the connection cap logged
    once (``cap``); use :func:`guarded_protocol` for a class with its own settings."""

    header_timeout: float = 10.0
    cap: ConnectionCap = ConnectionCap()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()
        self.cap.opened(len(self.connections), self.limit_concurrency)

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)
        self.cap.closed(len(self.connections), self.limit_concurrency)

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # a whole request head came: the request is the app's now
            self._head_arrived()

    def on_response_complete(self) -> None:
        cycle = self.cycle
        super().on_response_complete()
        if self.cycle is cycle and not self.transport.is_closing():  # no pipelined request started
            self._await_head()

    def _await_head(self) -> None:
        self._head_arrived()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_overdue)

    def _head_arrived(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_overdue(self) -> None:
        """No complete request head in time: close the connection without an answer (a browser's
        idle preconnected socket is closed the same way, and it opens another)."""
        self._head_timer = None
        if self.transport.is_closing():
            return
        log.debug(
            "closing a connection from %s: no complete request head in %g s", self.client, self.header_timeout
        )
        with contextlib.suppress(h11.LocalProtocolError):
            self.conn.send(h11.ConnectionClosed())
        self.transport.close()


def guarded_protocol(header_timeout: float) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` class for one server: its ``header_timeout`` and its own
    :class:`ConnectionCap`. Hand it to uvicorn as ``uvicorn.Config(http=...)``."""
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {"header_timeout": float(header_timeout), "cap": ConnectionCap(), "__module__": __name__},
    )


class _NotCapWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != UVICORN_CAP_WARNING


def quiet_cap_warnings() -> None:
    """Drop uvicorn's warning for every request beyond ``limit_concurrency`` from its log (the
    guard tells the cap once); its other lines stay."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _NotCapWarnings) for f in logger.filters):
        logger.addFilter(_NotCapWarnings())


def raise_open_files_limit() -> tuple[int, int] | None:
    """Raise this process's soft limit of open files (``RLIMIT_NOFILE``) to its hard limit (where
    that is unlimited, to the most the system takes of 1,048,576, 65,536 and 10,240); returns
    ``(before, after)``, or ``None`` where there are no such limits (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    targets = [hard] if hard != resource.RLIM_INFINITY else [1 << 20, 65_536, 10_240]
    for target in targets:
        if soft != resource.RLIM_INFINITY and soft >= target:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            continue
        break
    return soft, resource.getrlimit(resource.RLIMIT_NOFILE)[0]
