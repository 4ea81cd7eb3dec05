"""The FastAPI application: pages, static files, cubing.js from ``node_modules``, the JSON API.

>>> from puzzlezero.web import create_app, ServerConfig
>>> app = create_app(ServerConfig(workers=1, queue=4))        # doctest: +SKIP
>>> # uvicorn.run(app, host="127.0.0.1", port=8000)

Errors never leak a traceback: a :class:`~puzzlezero.errors.PuzzleError` is answered 400 with its
message (a missing model or table 503, a memory or node budget 422), a malformed request 422 with
the fields named, an oversized body 413, a full queue or a client over its share 429 (with
``Retry-After``), an overrunning solve 504, a worker that died 503, and anything unexpected 500
with a short message (the traceback goes to the server log only); :mod:`puzzlezero.web.errors`
holds the table. Every error body is ``{"detail": "<message>"}``.

A request whose ``Host`` header is not one of ``config.allowed_hosts`` is answered 400 before
anything else (:class:`ServedHosts`): a page on another site that rebinds its DNS name to this
machine's loopback address cannot talk to the server. ``/healthz`` answers whatever the ``Host``
(a load balancer's or an orchestrator's probe names none of them) and reports the worker pool
(:meth:`SolvePool.health <puzzlezero.web.pool.SolvePool.health>`, without process ids or paths),
503 when no worker can run. No error message names a path of the server
(:func:`~puzzlezero.web.api.without_paths`).

Who a request is: the address it comes from, or, from a proxy named in
``config.forwarded_allow_ips``, the address its ``X-Forwarded-For`` names (from any other peer
that header is ignored); and a browser's client key, a signed cookie :class:`ClientCookies` hands
out (:mod:`puzzlezero.web.clients`). A request body must arrive within ``config.header_timeout``
seconds of its head (else 408, :class:`BodySizeLimit`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import puzzlezero
from puzzlezero.web import api
from puzzlezero.web.clients import COOKIE, Buckets, ClientKeys, Holdings, address_key
from puzzlezero.web.config import VENDOR_DIRS, ServerConfig, find_node_modules
from puzzlezero.web.errors import INTERNAL, STATUS, ApiError, http_error
from puzzlezero.web.jobs import JobStore
from puzzlezero.web.pool import SolvePool
from puzzlezero.web.worker import SolveFn, register_definitions

__all__ = ["create_app", "ClientCookies", "STATIC_DIR", "ServedHosts"]

log = logging.getLogger("puzzlezero.web")
STATIC_DIR = Path(__file__).resolve().parent / "static"


class BodySizeLimit:
    """ASGI middleware: refuse bodies over ``max_bytes`` with 413, by header or while streaming, and
    bodies that have not arrived ``timeout`` seconds after the request's head with 408 (``None``: no
    limit)."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout: float | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope["headers"]:
            if key == b"content-length":
                try:
                    too_big = int(value) > self.max_bytes
                except ValueError:
                    too_big = False
                if too_big:
                    await _error(413, self._message())(scope, receive, send)
                    return
        seen = 0
        done = False  # the whole body (or the disconnect) has come: no more deadline
        deadline = None if self.timeout is None else asyncio.get_running_loop().time() + self.timeout

        async def limited() -> Message:  # chunked bodies carry no length: count as they come
            nonlocal seen, done
            if done or deadline is None:
                message = await receive()
            else:
                try:
                    message = await asyncio.wait_for(
                        receive(), max(0.0, deadline - asyncio.get_running_loop().time())
                    )
                except TimeoutError:
                    raise HTTPException(
                        408, f"request body too slow: it must arrive within {self.timeout:g} s"
                    ) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(413, self._message())
                done = done or not message.get("more_body", False)
            else:
                done = True
            return message

        await self.app(scope, limited, send)

    def _message(self) -> str:
        return f"request body too large: this server accepts at most {self.max_bytes} bytes"


class ServedHosts(TrustedHostMiddleware):
    """Starlette's ``TrustedHostMiddleware`` answering in the API's own words: a request whose
    ``Host`` (without its port) matches none of ``allowed_hosts`` gets 400 ``{"detail": ...}``
    naming the host and the ``--allowed-host`` option; ``"*.example.org"`` matches subdomains.
    ``/healthz`` (:data:`ANY_HOST`) answers whatever the ``Host``: it reads nothing and tells no
    secret, and probes address the server by names of their own."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...]) -> None:
        super().__init__(app, allowed_hosts=list(allowed_hosts), www_redirect=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allow_any or scope["type"] != "http" or scope["path"] in ANY_HOST:
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("host", "")
        host = host_name(header)
        if host is not None and any(
            host == pattern or (pattern.startswith("*.") and host.endswith(pattern[1:]))
            for pattern in self.allowed_hosts
        ):
            await self.app(scope, receive, send)
            return
        message = (
            f"invalid Host header {header[:100]!r}: this server answers only to the names it is served "
            "under (puzzlezero serve --allowed-host NAME adds one)"
        )
        await _error(400, message)(scope, receive, send)


#: paths answered whatever the ``Host`` header names
ANY_HOST = frozenset({"/healthz"})

#: the pages a browser loads first: loading one without a client key gets one
PAGES = frozenset({"/", "/board"})


class ClientCookies:
    """ASGI middleware: hands a browser its client key (:data:`~puzzlezero.web.clients.COOKIE`,
    ``HttpOnly``, ``SameSite=Lax``, ``Secure`` over HTTPS) when it loads a page (:data:`PAGES`), or
    calls the API from the page (``Sec-Fetch-Site: same-origin``, as browsers send it), without a
    valid one, as far as its address's rate of new keys allows (:meth:`ClientKeys.issue
    <puzzlezero.web.clients.ClientKeys.issue>`). The request itself is still its address's."""

    def __init__(self, app: ASGIApp, keys: ClientKeys) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._wants_key(scope):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = address_key(client[0]) if client else ""

        async def with_key(message: Message) -> None:
            if message["type"] == "http.response.start":
                value = self.keys.issue(address)
                if value is not None:
                    secure = "; Secure" if scope.get("scheme") == "https" else ""
                    cookie = f"{COOKIE}={value}; Max-Age={self.keys.lifetime}; Path=/; HttpOnly; SameSite=Lax{secure}"
                    message = {
                        **message,
                        "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())],
                    }
            await send(message)

        await self.app(scope, receive, with_key)

    def _wants_key(self, scope: Scope) -> bool:
        if self.keys.per_minute <= 0:
            return False
        headers = Headers(scope=scope)
        path = scope["path"]
        if not (
            (scope["method"] == "GET" and path in PAGES)
            or (path.startswith("/api/") and headers.get("sec-fetch-site") == "same-origin")
        ):
            return False
        cookies = headers.get("cookie", "")
        values = [v for k, _, v in (c.strip().partition("=") for c in cookies.split(";")) if k == COOKIE]
        return not any(self.keys.verify(v) is not None for v in values)


def host_name(header: str) -> str | None:
    """The host of a ``Host`` header, lower case, without its port (``"[::1]:8000"`` ->
    ``"[::1]"``); ``None`` when the header is malformed."""
    if header.startswith("["):
        end = header.find("]")
        host, rest = header[: end + 1], header[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    else:
        host, _, port = header.partition(":")
    if not host or (port and not port.isdigit()):
        return None
    return host.lower()


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query"))
        parts.append(f"{loc}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid")))
    return "invalid request: " + "; ".join(parts)


def _errors_without_input(exc: RequestValidationError) -> list[dict[str, Any]]:
    """The fields' errors as JSON, without the input they refused (a 20,000-character state is not
    sent back) or pydantic's documentation links."""
    errors = [{k: v for k, v in err.items() if k not in ("input", "url")} for err in exc.errors()]
    return json.loads(json.dumps(errors, default=str))


def _install_error_handlers(app: FastAPI) -> None:
    async def known(_: Request, exc: Exception) -> JSONResponse:
        status, message = http_error(exc)
        after = getattr(exc, "retry_after", None)
        retry = {"Retry-After": str(after)} if isinstance(after, int) and status in (429, 503) else None
        return _error(status, api.without_paths(message), retry)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return JSONResponse(
            {"detail": _validation_message(exc), "errors": _errors_without_input(exc)},
            status_code=422,
        )

    async def internal(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
        return _error(500, INTERNAL)

    kinds: tuple[type[Exception], ...] = (ApiError, *(k for k, _ in STATUS))
    for kind in kinds:
        app.add_exception_handler(kind, known)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, internal)


def _mount_vendor(app: FastAPI, node_modules: Path | None) -> None:
    """Serve only the three cubing.js folders the import map names (see ``static/index.html``)."""
    if node_modules is None:
        log.warning("node_modules with cubing.js not found (run `npm ci`): the cube page will draw SVG")
        return
    for url, sub in VENDOR_DIRS.items():
        app.mount(f"/vendor/{url}", StaticFiles(directory=node_modules / sub), name=f"vendor-{url}")


def create_app(config: ServerConfig | None = None, *, solve_fn: SolveFn | None = None) -> FastAPI:
    """Build the web application.

    ``solve_fn`` replaces the workers' solve (tests): it is called ``solve_fn(puzzle, state,
    opts=SolveOptions)`` with the request's options, resolved by the server, as
    :func:`puzzlezero.solver.solve` takes them; with the process executor it must be a picklable
    module-level function. The worker pool starts with the app (lifespan) and stops
    with it: running jobs may end within ``config.shutdown_timeout``, counted from when the server
    began to stop (``app.state.stopping_since``, which ``puzzlezero serve`` sets on SIGTERM or
    Ctrl-C, before uvicorn waits for the open requests), so the whole stop takes no longer. While
    it runs, waiting jobs nobody polls leave the line (``config.job_idle_timeout``). The permutation
    puzzles of ``config.puzzle_definitions`` are checked and registered here (a bad one raises
    :class:`~puzzlezero.errors.DefinitionError`) and by each worker process as it starts.
    """
    config = config or ServerConfig()
    register_definitions(config.puzzle_definitions)  # the workers register the same data when they start
    pool = SolvePool(config, solve_fn)
    jobs = JobStore(pool, config.result_ttl, config.max_results, config.job_idle_timeout)
    keys = ClientKeys.from_secret(config.client_secret, config.client_keys_per_minute)
    per_client = (
        config.client_waiting + config.client_running
        if config.client_waiting and config.client_running
        else 0
    )
    holdings = Holdings(per_client, config.address_limit, lambda t: pool.estimate(t).answer_seconds)

    async def sweep_idle_jobs() -> None:
        every = min(5.0, max(0.5, config.job_idle_timeout / 4))
        while True:
            await asyncio.sleep(every)
            jobs.sweep()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool.start()
        sweeper = asyncio.create_task(sweep_idle_jobs())
        try:
            yield
        finally:
            sweeper.cancel()
            since = app.state.stopping_since
            spent = 0.0 if since is None else time.monotonic() - since
            await pool.aclose(max(0.0, config.shutdown_timeout - spent))

    app = FastAPI(
        title="puzzlezero",
        version=puzzlezero.__version__,
        description="Solve Rubik's cubes, sliding puzzles, Lights Out, Sokoban and permutation puzzles defined "
        "as data with DeepCubeA-style learned heuristics and batch weighted A*. Pages: `/` (cube), `/board` "
        "(other puzzles).",
        lifespan=lifespan,
        docs_url=None,  # served below from the swagger-ui-bundle package: no CDN, works offline
    )
    app.state.config = config
    app.state.pool = pool
    app.state.jobs = jobs
    app.state.client_keys = keys
    app.state.holdings = holdings
    app.state.rates = Buckets(config.rate_limit, float(config.rate_burst))
    app.state.stopping_since = None  # time.monotonic() when a shutdown began, set by the server
    app.state.node_modules = find_node_modules(config.node_modules)
    app.add_middleware(ClientCookies, keys=keys)
    app.add_middleware(BodySizeLimit, max_bytes=config.max_body_bytes, timeout=config.header_timeout)
    app.add_middleware(ServedHosts, allowed_hosts=config.allowed_hosts)  # checked first
    if config.forwarded_allow_ips:  # outermost: the client a trusted proxy names, for all the rest
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(config.forwarded_allow_ips))
    _install_error_handlers(app)
    app.include_router(api.router)

    @app.get("/", include_in_schema=False)
    def cube_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html")

    @app.get("/board", include_in_schema=False)
    def board_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "board.html")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> JSONResponse:
        """The pool's health: workers alive, busy and overrun, solves waiting, restarts; 503 when
        no worker can run. No process ids, and no paths in the last start-up error."""
        health = {k: v for k, v in pool.health().items() if k != "pids"}
        if isinstance(health.get("last_error"), str):
            health["last_error"] = api.without_paths(health["last_error"])
        return JSONResponse(health, status_code=200 if health.get("ok") else 503)

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    _mount_vendor(app, app.state.node_modules)
    _mount_docs(app)
    return app


def _mount_docs(app: FastAPI) -> None:
    """OpenAPI docs at ``/docs`` with Swagger UI served locally (FastAPI's default loads it from a
    CDN, which leaves the page blank on a machine without internet access)."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/vendor/swagger-ui", StaticFiles(directory=swagger_ui_path), name="vendor-swagger-ui")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="puzzlezero API",
            swagger_js_url="/vendor/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url="/vendor/swagger-ui/swagger-ui.css",
            swagger_favicon_url="/vendor/swagger-ui/favicon-32x32.png",
        )
