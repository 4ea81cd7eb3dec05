"""``puzzlezero serve``: the web app (JSON API, cube page, board page) on uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from puzzlezero.cli.main import app, fail
from puzzlezero.errors import PuzzleError
from puzzlezero.registry import spec


def parse_models(items: list[str]) -> dict[str, str]:
    """``["cube3=runs/cube3/model"]`` -> ``{"cube3": "runs/cube3/model"}``, checked."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, folder = item.partition("=")
        if not sep or not name or not folder:
            raise PuzzleError(f"--model takes PUZZLE=DIR, got {item!r}")
        spec(name)  # an unknown puzzle lists the registered ones
        path = Path(folder).expanduser().resolve()
        if not (path / "model.pt").is_file() or not (path / "config.json").is_file():
            raise PuzzleError(
                f"--model {item}: {path} is not a model folder (needs model.pt and config.json)"
            )
        out[name] = str(path)
    return out


@app.command("serve")
def serve(
    host: Annotated[
        str, typer.Option(help="Interface to listen on (0.0.0.0 = every interface).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0 = any free port).")] = 8000,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Solver worker processes [default: min(2, CPU cores)].")
    ] = None,
    queue: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Solves that may wait in line for a worker, first come first served (time in line does "
            "not count against a solve's time limit); more get HTTP 429 [default: 64].",
        ),
    ] = None,
    time_limit: Annotated[
        float, typer.Option(min=0.1, help="Largest time_limit (seconds) a request may ask for.")
    ] = 60.0,
    max_nodes: Annotated[
        int, typer.Option(min=1, help="Largest max_nodes a request may ask for.")
    ] = 10_000_000,
    executor: Annotated[
        str, typer.Option(help="'process' (default) or 'thread' solver workers.")
    ] = "process",
    model: Annotated[
        list[str] | None,
        typer.Option(
            help="Serve a model folder for a puzzle instead of the shipped one: PUZZLE=DIR (repeatable)."
        ),
    ] = None,
    node_modules: Annotated[
        Path | None, typer.Option(help="Folder holding cubing.js [default: beside the repository or cwd].")
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve the web app: cube page at /, other puzzles at /board, API docs at /docs."""
    try:
        import uvicorn

        from puzzlezero.web import ServerConfig, create_app
    except ImportError as exc:
        raise fail(
            f"the web app needs FastAPI and uvicorn: pip install 'puzzlezero[web]' ({exc.name} missing)"
        ) from None
    kwargs: dict[str, object] = {
        "models": parse_models(model or []),
        "executor": executor,
        "max_time_limit": time_limit,
        "default_time_limit": min(time_limit, 20.0),
        "max_max_nodes": max_nodes,
        "default_max_nodes": min(max_nodes, 2_000_000),
        "node_modules": node_modules,
    }
    if workers is not None:
        kwargs["workers"] = workers
    if queue is not None:
        kwargs["queue"] = queue
    config = ServerConfig(**kwargs)  # type: ignore[arg-type]
    typer.echo(
        f"puzzlezero web app on http://{host}:{port}/ ({config.workers} {config.executor} workers, "
        f"up to {config.queue} solves waiting in line)"
    )
    uvicorn.run(create_app(config), host=host, port=port, log_level=log_level)
