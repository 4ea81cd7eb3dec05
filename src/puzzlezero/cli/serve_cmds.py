"""``puzzlezero serve``: the web app (JSON API, cube page, board page) on uvicorn.

Every limit the server enforces is an option here (``serve --help``), with the default of its
:class:`~puzzlezero.web.config.ServerConfig` field, which documents it: an option's default is
the field's (``ServerConfig.max_time_limit``), or ``None`` where the config decides (an option not
given leaves its field's default), and then its help names the field's default (:func:`_default`).

The server runs on uvicorn as :func:`uvicorn_config` sets it up: proxy headers trusted only from
``--forwarded-allow-ips`` (the app reads them; uvicorn's own handling, which trusts loopback, is
off), at most ``--limit-concurrency`` connections, idle keep-alive connections closed after
``--keep-alive-timeout`` seconds, and a request head due within ``--header-timeout`` seconds
(:mod:`puzzlezero.web.connections`); the process's open-files limit is raised to its hard limit.
"""

from __future__ import annotations

import ipaddress
import math
import os
import socket
import time
from dataclasses import MISSING, fields
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from puzzlezero.cli.main import app, fail
from puzzlezero.errors import PuzzleError
from puzzlezero.registry import spec
from puzzlezero.web.config import LOOPBACK_HOSTS, ServerConfig

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

#: bind addresses that mean "every interface"
WILDCARD_HOSTS = ("0.0.0.0", "::", "")

#: the environment variable (``=1``) that lets ``serve --executor thread`` run: the test suite's
ALLOW_THREAD_EXECUTOR = "PUZZLEZERO_ALLOW_THREAD_EXECUTOR"


def check_executor(executor: str) -> None:
    """Refuse ``--executor thread`` unless :data:`ALLOW_THREAD_EXECUTOR` is ``1``: solves in
    threads of the server run with no memory limit, cannot be killed when they overrun, may build
    tables in the server (a worker process never does), and a crash in one takes the server with
    it. It exists for the test suite."""
    if executor == "thread" and os.environ.get(ALLOW_THREAD_EXECUTOR) != "1":
        raise PuzzleError(
            "--executor thread is refused: it runs solves in threads of the server, with no memory limit, "
            "no kill of a runaway solve and no crash isolation, and exists for the test suite; serve with "
            f"--executor process (the default), or set {ALLOW_THREAD_EXECUTOR}=1 to run it anyway"
        )


def model_folders(items: list[str]) -> dict[str, str]:
    """``["cube3=runs/cube3/model"]`` -> ``{"cube3": "runs/cube3/model"}``, checked."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, folder = item.partition("=")
        if not sep or not name or not folder:
            raise PuzzleError(f"--model takes PUZZLE=DIR, got {item!r}")
        spec(name)  # an unknown puzzle lists the registered ones
        path = Path(folder).expanduser().resolve()
        from puzzlezero.nn.io import weights_path

        if not weights_path(path).is_file() or not (path / "config.json").is_file():
            raise PuzzleError(
                f"--model {item}: {path} is not a model folder (needs model.npz and config.json)"
            )
        out[name] = str(path)
    return out


def read_puzzle_files(paths: list[Path]) -> tuple[dict[str, Any], ...]:
    """The definitions of ``--puzzle-file``: each file read as data (JSON or GAP text, never code)
    in any format :func:`~puzzlezero.puzzles.permutation.definition.read_definition` reads, checked
    and registered in this process under its puzzle's name; returned as the native JSON objects the
    workers register. A file that cannot be read, fails a check or names a puzzle registered
    already with other moves raises :class:`~puzzlezero.errors.DefinitionError` naming the file."""
    from puzzlezero.errors import DefinitionError
    from puzzlezero.puzzles.permutation.files import read_definition
    from puzzlezero.web.worker import register_definitions

    out: list[dict[str, Any]] = []
    for path in paths:
        try:
            data = read_definition(path)
            register_definitions([data])
        except DefinitionError as exc:
            text = str(exc)
            raise DefinitionError(text if str(path) in text else f"{path}: {text}") from None
        out.append(data)
    return tuple(out)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _as_host(address: str) -> str:
    """An address as a ``Host`` header names it (IPv6 in brackets)."""
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def machine_names() -> list[str]:
    """This machine's host name, its fully qualified name and the addresses they resolve to."""
    names = [socket.gethostname(), socket.getfqdn()]
    for name in list(names):
        try:
            infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
        except OSError:
            continue
        names += [_as_host(str(info[4][0]).split("%")[0]) for info in infos]
    return names


def served_hosts(bind: str, extra: list[str]) -> tuple[tuple[str, ...], str]:
    """The ``Host`` names a server bound to ``bind`` answers to, and a note for its start-up line.

    Always the loopback names; a specific address or name it is bound to; the ``extra`` names
    (``--allowed-host``). Bound to every interface with no ``extra``: this machine's host name and
    its addresses as well (the note says so)."""
    hosts = list(LOOPBACK_HOSTS)
    note = ""
    if bind in WILDCARD_HOSTS:
        if not extra:
            hosts += machine_names()
            note = (
                "; bound to every interface with no --allowed-host, so it answers to this machine's "
                "names and addresses"
            )
    elif not _is_loopback(bind):
        hosts.append(_as_host(bind))
    hosts += extra
    allowed = tuple(dict.fromkeys(h.lower() for h in hosts if h))
    return allowed, note


def prepare_tables(config: ServerConfig, build: list[str]) -> list[str]:
    """Before the workers start (they never build a table): the tables the served puzzles' default
    solves read (:func:`~puzzlezero.solver.tables.prepare_solve_tables`, required: their searches'
    and search members', the group solver's where it is the fallback, and those of the solves a
    search runs inside, such as the 4x4x4 reduction's cube3 solve), and every table of the puzzles in
    ``build`` (``--build-tables``), all within :data:`~puzzlezero.solver.tables.PREPARE_SECONDS`
    (a table not built by then stops the start, naming the command that builds it). Returns
    a line per table for the start-up log."""
    from puzzlezero.classic import build_tables
    from puzzlezero.registry import make
    from puzzlezero.search import clock
    from puzzlezero.solver.tables import PREPARE_SECONDS, prepare_solve_tables
    from puzzlezero.web.worker import warm_options

    wanted = [make(name) for name in dict.fromkeys(build)]  # an unknown name fails before any build
    deadline = clock.deadline_after(PREPARE_SECONDS)  # a table that takes longer stops the start
    lines: list[str] = []
    for name, opts in warm_options(config):  # what the workers load, the fallback's table included
        if name not in build:  # the fallback's, a member's, an inner solve's
            lines += prepare_solve_tables(make(name), opts, deadline=deadline, required=True)
    for p in wanted:
        lines += build_tables(p, "all", deadline=deadline)
    return lines


#: seconds of ``shutdown_timeout`` kept for the pool to stop its workers once open requests are done
SHUTDOWN_RESERVE = 3.0


def uvicorn_config(app: FastAPI, host: str, port: int, log_level: str) -> uvicorn.Config:
    """How uvicorn serves ``app`` (its ``app.state.config``): no proxy headers read by uvicorn (the
    app reads them from ``forwarded_allow_ips`` only; uvicorn's default trusts loopback), the
    connection cap (``limit_concurrency``), the keep-alive timeout, a deadline for each request head
    (:func:`~puzzlezero.web.connections.guarded_protocol`, ``header_timeout``) and the graceful stop
    (open requests get ``shutdown_timeout`` less what the pool needs to stop its workers
    afterwards, so the whole stop stays within it)."""
    import uvicorn

    from puzzlezero.web.connections import guarded_protocol

    config: ServerConfig = app.state.config
    total = config.shutdown_timeout
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=max(0, math.floor(total - min(total / 2, SHUTDOWN_RESERVE))),
        proxy_headers=False,
        forwarded_allow_ips=[],
        limit_concurrency=config.limit_concurrency or None,
        timeout_keep_alive=config.keep_alive_timeout,
        http=guarded_protocol(config.header_timeout),
    )


def run_server(app: FastAPI, host: str, port: int, log_level: str) -> None:
    """Run ``app`` on uvicorn (:func:`uvicorn_config`) until SIGTERM or Ctrl-C, with the open-files
    limit raised to its hard limit. Open requests get the app's ``shutdown_timeout`` to end, and
    the app notes when the stop began (``app.state.stopping_since``), so its pool gets only what is
    left of the same timeout."""
    import uvicorn

    from puzzlezero.web.connections import quiet_cap_warnings, raise_open_files_limit

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if app.state.stopping_since is None:
                app.state.stopping_since = time.monotonic()
            super().handle_exit(sig, frame)

    files = raise_open_files_limit()
    if files is not None:
        raised = f" (raised from {files[0]})" if files[1] != files[0] else ""
        typer.echo(f"open files: at most {files[1]}{raised}")
    server = Server(uvicorn_config(app, host, port, log_level))
    quiet_cap_warnings()
    try:
        server.run()
    except KeyboardInterrupt:  # a second Ctrl-C
        pass
    if not server.started:
        raise fail("the web server did not start (see the log above)", 1)


def _default(name: str) -> object:
    """The default of a :class:`ServerConfig` field, for the help text (``None`` for a field whose
    default is computed: ``workers``)."""
    f = next(f for f in fields(ServerConfig) if f.name == name)
    return f.default if f.default is not MISSING else None


@app.command("serve")
def serve(
    host: Annotated[
        str,
        typer.Option(rich_help_panel="Network", help="Interface to listen on (0.0.0.0 = every interface)."),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(rich_help_panel="Network", min=0, max=65535, help="TCP port (0 = any free port).")
    ] = 8000,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            rich_help_panel="Network",
            help="A host name (or address) the server is reached under, as browsers send it in the Host "
            "header (repeatable; '*.example.org' for subdomains, '*' for any). Requests addressed to "
            "another name get HTTP 400, so no web page can reach the server by rebinding a DNS name of "
            "its own. Always allowed: localhost, 127.0.0.1, [::1]; needed to reach a server bound to "
            "0.0.0.0 by name (without it: this machine's host name and addresses).",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        list[str] | None,
        typer.Option(
            rich_help_panel="Network",
            help="Address (or network, 10.0.0.0/8) of a reverse proxy whose X-Forwarded-For header names "
            "the client (repeatable, or comma-separated); from any other peer the header is ignored, "
            "loopback included (default: none, the client is the connection's address). Behind nginx "
            "on the same machine: 127.0.0.1.",
        ),
    ] = None,
    limit_concurrency: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Network",
            min=0,
            help="Connections (and requests in progress) held at most; beyond them requests get HTTP 503 "
            f"until some close, logged once (0 = no limit; default: {_default('limit_concurrency')}).",
        ),
    ] = None,
    keep_alive_timeout: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Network",
            min=1,
            help=f"Seconds an idle keep-alive connection stays open (default: {_default('keep_alive_timeout')}).",
        ),
    ] = None,
    header_timeout: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Network",
            min=0.1,
            help="Seconds a connection has to send a whole request head, from when it opens or its previous "
            "response ended (else it is closed), and then its body (else HTTP 408) "
            f"(default: {_default('header_timeout')}).",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Workers", min=1, help="Solver worker processes (default: min(2, CPU cores))."
        ),
    ] = None,
    queue: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0,
            help="Solves (and /api/value requests) that may wait in line for a worker, first come first "
            "served (time in line does not count against a solve's time limit); more get HTTP 429 "
            f"(default: {_default('queue')}).",
        ),
    ] = None,
    client_waiting: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0,
            help="Requests one client (its browser's key, else its address) may have waiting in line; more get HTTP 429 "
            f"(0 = no limit beyond --queue; default: {_default('client_waiting')}, and at most half of "
            "a shorter --queue, so that one client never holds the whole line).",
        ),
    ] = None,
    client_running: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0,
            help="Requests one client may have running on workers while other clients' requests wait: "
            "those pass its others in line; with nobody else waiting its next one takes a free worker "
            f"(0 = no limit beyond --workers; default: {_default('client_running')}).",
        ),
    ] = None,
    address_limit: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0,
            help="Requests one network address may have waiting and running together, whatever client keys "
            "its browsers hold; more get HTTP 429 (an IPv6 address counts by its /64; 0 = no limit; "
            f"default: {_default('address_limit')}). A class behind one address: about its size.",
        ),
    ] = None,
    client_keys_per_minute: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0,
            help="Client keys (a signed cookie that makes each browser a client of its own, so a class behind "
            "one address is many clients) issued per minute to one address; beyond them the address is the "
            f"client (0 = clients by address only; default: {_default('client_keys_per_minute')}).",
        ),
    ] = None,
    client_secret: Annotated[
        str | None,
        typer.Option(
            rich_help_panel="Limits",
            envvar="PUZZLEZERO_CLIENT_SECRET",
            show_envvar=True,
            help="Secret that signs the client keys; the same in every process serving one site, and keys "
            "last across restarts (default: a random one per process). Prefer the environment variable: "
            "a command line is visible to every user of the machine.",
        ),
    ] = None,
    rate_limit: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0.0,
            help="Requests a second one client may make on average to the quick endpoints (validate, move, "
            "render, scramble, puzzles); more get HTTP 429 with Retry-After "
            f"(0 = no limit; default: {_default('rate_limit')}).",
        ),
    ] = None,
    rate_burst: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Limits",
            min=1,
            help=f"Quick requests one client may make at once before --rate-limit applies (default: {_default('rate_burst')}).",
        ),
    ] = None,
    job_idle_timeout: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0.1,
            help="Seconds a queued job (POST /api/jobs) keeps its place without its client polling "
            f"GET /api/jobs/ID; then it leaves the line (default: {_default('job_idle_timeout')}).",
        ),
    ] = None,
    time_limit: Annotated[
        float,
        typer.Option(
            rich_help_panel="Limits",
            min=0.1,
            help="Largest time_limit (seconds) a request may ask for (422 above; a request naming none "
            f"gets min(this, {ServerConfig.default_time_limit:g})).",
        ),
    ] = ServerConfig.max_time_limit,
    max_nodes: Annotated[
        int,
        typer.Option(
            rich_help_panel="Limits",
            min=1,
            help="Largest max_nodes a request may ask for (422 above; a request naming none gets "
            f"min(this, {ServerConfig.default_max_nodes})).",
        ),
    ] = ServerConfig.max_max_nodes,
    grace_seconds: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0.0,
            help="Seconds a running solve gets beyond its time_limit (model loading) before it is "
            f"answered 504: its wall limit (default: {_default('grace_seconds')}).",
        ),
    ] = None,
    overrun_margin: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Limits",
            min=0.0,
            help="Seconds a running solve may overrun its wall limit (time limit plus start-up grace) "
            "before its worker is terminated and replaced; it is answered 504 "
            f"(default: {_default('overrun_margin')}).",
        ),
    ] = None,
    worker_memory_mib: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Workers",
            min=0,
            help="Memory limit of each worker process in MiB (its address space: a search that needs "
            "more fails by name instead of the machine swapping); 0 = no limit (default: half of the "
            "machine's memory, or of its cgroup's limit where lower, shared among the workers, at least 4096).",
        ),
    ] = None,
    max_body_bytes: Annotated[
        int | None,
        typer.Option(
            rich_help_panel="Network",
            min=1,
            help=f"Largest request body in bytes; larger ones get HTTP 413 (default: {_default('max_body_bytes')}).",
        ),
    ] = None,
    shutdown_timeout: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Workers",
            min=0.0,
            help="Seconds a shutdown (Ctrl-C, SIGTERM) waits for open requests and then for running "
            f"solves before it ends them (default: {_default('shutdown_timeout')}).",
        ),
    ] = None,
    start_timeout: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Workers",
            min=0.1,
            help="Seconds a worker may take to start up (imports, the served networks); one not ready "
            f"by then is stopped and counted as a failed start (default: {_default('start_timeout')}).",
        ),
    ] = None,
    respawn_backoff: Annotated[
        float | None,
        typer.Option(
            rich_help_panel="Workers",
            min=0.0,
            help="Seconds before a worker that failed to start is tried again, doubled after each "
            f"further failure (at most 5 minutes; default: {_default('respawn_backoff')}).",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            rich_help_panel="Workers",
            help="'process': supervised worker processes, each with a memory limit, killed and replaced "
            "when a solve overruns or crashes. 'thread' (for the test suite: no memory limit, no kill, "
            f"no crash isolation) is refused unless {ALLOW_THREAD_EXECUTOR}=1.",
        ),
    ] = ServerConfig.executor,
    model: Annotated[
        list[str] | None,
        typer.Option(
            rich_help_panel="Models and tables",
            help="Serve a model folder for a puzzle instead of the shipped one: PUZZLE=DIR (repeatable).",
        ),
    ] = None,
    puzzle_file: Annotated[
        list[Path] | None,
        typer.Option(
            "--puzzle-file",
            rich_help_panel="Models and tables",
            metavar="FILE",
            help="Serve a permutation puzzle defined by FILE (this project's JSON, a CayleyPy or cubing.js "
            "KPuzzle JSON file, or GAP generators; see `puzzlezero definition check`), repeatable. Each "
            "file is read as data, never run, and checked before the server starts (a bad one stops it, "
            "naming the file and the reason); its puzzle is served under its name, in the server and "
            "every worker. Requests name puzzles, never files.",
        ),
    ] = None,
    node_modules: Annotated[
        Path | None,
        typer.Option(
            rich_help_panel="Models and tables",
            help="Folder holding cubing.js (default: beside the repository or cwd).",
        ),
    ] = ServerConfig.node_modules,
    build_tables: Annotated[
        list[str] | None,
        typer.Option(
            "--build-tables",
            rich_help_panel="Models and tables",
            metavar="PUZZLE",
            help="Build (or load) PUZZLE's pattern databases and group table before serving, so that "
            "requests for the optimal solver or the pdb heuristic can be answered (repeatable; minutes "
            "and gigabytes for the big ones, see `puzzlezero pdb build`). Requests never build tables: "
            "one that needs a missing table is answered 503 with the command that builds it. The small "
            "tables the served puzzles' default solves need (the cubes' group tables, cube3's two-phase "
            "tables) are always prepared at start.",
        ),
    ] = None,
    log_level: Annotated[str, typer.Option(rich_help_panel="Network", help="uvicorn log level.")] = "info",
) -> None:
    """Serve the web app: cube page at /, other puzzles at /board, API docs at /docs.

    Requests name only the server's registered searches and heuristics (GET /api/info lists them);
    the module:factory form is for one's own code in the Python API and the CLI, and the server
    refuses it (422). Likewise requests name registered puzzles, never definition files:
    --puzzle-file serves a puzzle defined as data. The limits below are per request, per client (a
    browser's key, else its address), per address, per connection and per worker.
    """
    check_executor(executor)
    try:
        import uvicorn  # noqa: F401 - run_server's

        from puzzlezero.web import create_app
    except ImportError as exc:
        raise fail(
            f"the web app needs FastAPI and uvicorn: pip install 'puzzlezero[web]' ({exc.name} missing)"
        ) from None
    allowed, note = served_hosts(host, allowed_host or [])
    definitions = read_puzzle_files(puzzle_file or [])  # before --model, which may name one
    kwargs: dict[str, object] = {
        "models": model_folders(model or []),
        "executor": executor,
        "max_time_limit": time_limit,
        "default_time_limit": min(time_limit, ServerConfig.default_time_limit),
        "max_max_nodes": max_nodes,
        "default_max_nodes": min(max_nodes, ServerConfig.default_max_nodes),
        "node_modules": node_modules,
        "allowed_hosts": allowed,
        "puzzle_definitions": definitions,
        "forwarded_allow_ips": tuple(
            ip.strip() for item in forwarded_allow_ips or [] for ip in item.split(",") if ip.strip()
        ),
    }
    given = {
        "workers": workers,
        "queue": queue,
        "client_waiting": client_waiting,
        "client_running": client_running,
        "address_limit": address_limit,
        "client_keys_per_minute": client_keys_per_minute,
        "client_secret": client_secret,
        "rate_limit": rate_limit,
        "rate_burst": rate_burst,
        "limit_concurrency": limit_concurrency,
        "keep_alive_timeout": keep_alive_timeout,
        "header_timeout": header_timeout,
        "job_idle_timeout": job_idle_timeout,
        "grace_seconds": grace_seconds,
        "overrun_margin": overrun_margin,
        "worker_memory_mib": worker_memory_mib,
        "max_body_bytes": max_body_bytes,
        "shutdown_timeout": shutdown_timeout,
        "start_timeout": start_timeout,
        "respawn_backoff": respawn_backoff,
    }
    if client_waiting is None and queue is not None:  # one client never holds a short line alone
        given["client_waiting"] = max(1, min(ServerConfig.client_waiting, queue // 2))
    kwargs.update({name: value for name, value in given.items() if value is not None})
    config = ServerConfig(**kwargs)  # type: ignore[arg-type]
    for line in prepare_tables(config, build_tables or []):
        typer.echo(line)
    for data in definitions:
        typer.echo(f"serving the puzzle {data['name']} defined by --puzzle-file")
    typer.echo(
        f"puzzlezero web app on http://{_as_host(host)}:{port}/ ({config.workers} {config.executor} "
        f"workers, up to {config.queue} solves waiting in line, {config.client_waiting} waiting and "
        f"{config.client_running} running per client, {config.address_limit or 'no limit'} per address); "
        f"answering to Host: {', '.join(allowed)}{note}"
    )
    proxies = ", ".join(config.forwarded_allow_ips)
    typer.echo(
        f"clients: X-Forwarded-For trusted from {proxies or 'no proxy'}; "
        + (
            f"a client key per browser, at most {config.client_keys_per_minute} new ones a minute per address"
            if config.client_keys_per_minute
            else "clients by address only"
        )
        + f"; at most {config.limit_concurrency or 'unlimited'} connections, request heads due within "
        f"{config.header_timeout:g} s"
    )
    run_server(create_app(config), host, port, log_level)
