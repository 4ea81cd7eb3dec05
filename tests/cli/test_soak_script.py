"""scripts/soak.py against a real uvicorn server on a loopback port (fake solver in a thread): a clean
server passes with its mixed valid and invalid traffic, and a server whose solves fail with 500 makes
it exit 1. A few seconds each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.clock import until

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from puzzlezero.puzzles.base import Puzzle  # noqa: E402
from puzzlezero.web import ServerConfig, create_app  # noqa: E402
from tests.web.test_web import bfs_solve  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"


@contextmanager
def served(solve_fn: Any) -> Iterator[str]:
    """The app with ``solve_fn`` in a thread pool, on uvicorn on a free loopback port; yields its URL."""
    import uvicorn

    app = create_app(ServerConfig(executor="thread", workers=1), solve_fn=solve_fn)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until(lambda: server.started and server.servers, 30, "uvicorn listening", every=0.05)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)


def soak(url: str, out: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    cmd = [sys.executable, str(SCRIPT), url, "--clients", "2", "--depths", "1,2,3", "--seed", "0"]
    cmd += ["--timeout", "20", "--drain-seconds", "10", "--sample-seconds", "0.5", "--out", str(out), *args]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return run.returncode, json.loads(out.read_text()), run.stdout + run.stderr


def test_a_clean_server_passes_the_soak_with_every_kind_of_traffic(tmp_path: Path) -> None:
    with served(bfs_solve) as url:
        rc, rep, output = soak(
            url, tmp_path / "r.json", "--minutes", "0.05", "--pid", str(os.getpid()), "--skip", "value",
            "--skip", "value-optimal",
        )  # fmt: skip
    assert rc == 0, output
    assert rep["ok"] and rep["errors_500"] == 0 and rep["connection_errors"] == {}
    assert rep["unexpected"] == {}, rep["unexpected_samples"]
    assert rep["requests"] >= 10
    assert rep["solves"].get("solved", 0) >= 1  # bfs solves depth-3 scrambles; answers replayed by /api/move
    refused = {ep: codes for ep, codes in rep["by_status"].items() if ep.startswith("POST")}
    assert any("422" in codes for codes in refused.values())  # invalid input was sent and refused
    assert rep["memory_mib"]["total_mib"]["max"] > 0  # this process's RSS, read from /proc
    assert {s["health_status"] for s in rep["samples"]} == {200}
    assert "OK" in output


def fails(puzzle: Puzzle, state: np.ndarray, opts: Any) -> Any:
    raise RuntimeError("a bug in the solver")


def test_a_server_answering_500_fails_the_soak(tmp_path: Path) -> None:
    with served(fails) as url:
        rc, rep, output = soak(
            url, tmp_path / "r.json", "--minutes", "0.5", "--max-requests", "12", "--only", "solve-cube3",
            "--only", "job",
        )  # fmt: skip
    assert rc == 1, output
    assert rep["requests"] <= 12 and rep["errors_500"] >= 1 and not rep["ok"]
    assert rep["memory_mib"] is None  # no --pid
    assert "FAILED" in output
