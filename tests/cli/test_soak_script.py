"""scripts/soak.py judges a server: against real uvicorn servers on a loopback port (set up as
``serve`` sets them up; the solvers in threads), a healthy server passes a short soak of students
with client keys, a flood and a slow client, and the soak fails, naming why, a server that refuses
everything and one whose solves fail with 500. The worker-finding half of its kills is checked on
a fake server process. A few seconds each."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from tests.clock import until
from tests.conftest import load_script

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402

from puzzlezero.puzzles.base import Puzzle  # noqa: E402
from puzzlezero.web import ServerConfig, create_app  # noqa: E402
from tests.web.live_server import served  # noqa: E402
from tests.web.test_web import bfs_solve  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"


@contextmanager
def server(app: Any) -> Iterator[str]:
    with served(app) as port:
        yield f"http://127.0.0.1:{port}"


def soak(url: str, out: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    cmd = [sys.executable, str(SCRIPT), url, "--clients", "2", "--depths", "1,2,3", "--seed", "0"]
    cmd += ["--timeout", "20", "--drain-seconds", "10", "--sample-seconds", "0.5", "--out", str(out), *args]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return run.returncode, json.loads(out.read_text()), run.stdout + run.stderr


def test_a_healthy_server_passes_a_soak_with_students_a_flood_and_a_slow_client(tmp_path: Path) -> None:
    config = ServerConfig(
        executor="thread",
        workers=2,
        header_timeout=1.0,
        forwarded_allow_ips=("127.0.0.1",),
        client_keys_per_minute=2,
    )
    with server(create_app(config)) as url:  # the real solver: optimal solves need no model
        rc, rep, output = soak(
            url, tmp_path / "r.json", "--minutes", "0.1", "--clients", "4", "--pid", str(os.getpid()),
            "--only", "solve-optimal", "--only", "validate", "--only", "render", "--only", "bad-state",
            "--only", "wrong-host", "--flood-every", "2", "--flood-size", "12", "--slow-clients", "1",
            "--strict", "--forwarded-addresses", "2",
        )  # fmt: skip
    assert rc == 0, output
    assert rep["ok"] and rep["failures"] == [] and "OK" in output
    assert rep["keyed"] == 4  # each a browser with a key of its own: two per address, from two addresses
    assert rep["shares"]["served"] >= 0.9 and rep["shares"]["failed"] == 0
    assert rep["solves"].get("solved", 0) >= 1 and rep["solves"].get("unsolved", 0) == 0
    lat = rep["latency_s"]
    assert lat["direct"]["n"] >= 1 and 0 < lat["direct"]["p50"] <= lat["direct"]["p99"]
    assert lat["solve_beyond_line"]["n"] >= 1 and lat["solve_beyond_line"]["p99"] is not None
    faults = rep["faults"]
    assert faults["floods"] >= 1 and "429" in faults["flood_status"]  # the flooder got its share only
    assert faults["slow_connections"] >= 1 and faults["slow_closed_by_server"] == faults["slow_connections"]
    mem = rep["memory_mib"]
    warmed = mem["warmup"]["t"] >= 0.1 * 60 / 5  # the growth's base: a sample after the soak's first fifth
    assert mem["total_mib"]["start"] > 0 and "growth_mib" in mem and warmed
    assert mem["server_growth_mib"] <= 128  # --max-rss-growth-mib's default
    assert rep["health_at_end"]["status"] == 200
    assert "served " in output and "latency of served" in output and "RSS MiB" in output


def test_each_bound_the_soak_falls_short_of_is_named(tmp_path: Path) -> None:
    with server(create_app(ServerConfig(executor="thread", workers=1))) as url:
        rc, rep, output = soak(
            url, tmp_path / "r.json", "--minutes", "0.03", "--only", "solve-optimal", "--pid", str(os.getpid()),
            "--max-p99", "0", "--max-solve-p99", "0", "--max-rss-growth-mib", "-1000", "--min-served", "1",
        )  # fmt: skip
    assert rc == 1, output
    assert rep["shares"]["served"] == 1 and not rep["ok"]  # all served, yet too slow and "too big"
    failures = "\n".join(rep["failures"])
    assert "p99 latency of served requests" in failures and "above --max-p99 0 s" in failures
    assert "above --max-solve-p99 0 s" in failures
    assert "RSS of the server process grew" in failures and "above --max-rss-growth-mib -1000" in failures
    assert "served share" not in failures and "FAILED: " in output


class RefuseAll:
    """Every page and API request answered 429 (``/healthz`` and the lifespan go through)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.state = app.state  # what serve's uvicorn settings read

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/healthz":
            await self.app(scope, receive, send)
            return
        body = b'{"detail": "busy: try again in about 1 s"}'
        headers = [(b"content-type", b"application/json"), (b"retry-after", b"1")]
        await send({"type": "http.response.start", "status": 429, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def test_a_server_refusing_everything_fails_the_soak_by_its_served_share(tmp_path: Path) -> None:
    app: ASGIApp = RefuseAll(create_app(ServerConfig(executor="thread", workers=1), solve_fn=bfs_solve))
    with server(app) as url:
        rc, rep, output = soak(
            url, tmp_path / "r.json", "--minutes", "0.05", "--only", "solve-optimal", "--only", "validate",
        )  # fmt: skip
    assert rc == 1, output
    assert rep["shares"]["served"] == 0 and rep["shares"]["refused"] == 1 and not rep["ok"]
    assert rep["failures"] and rep["failures"][0].startswith("served share 0.0% of ")
    assert "below --min-served 90%" in output and "FAILED: served share 0.0%" in output
    assert rep["errors_500"] == 0 and rep["connection_errors"] == {}  # refusing alone fails it


def test_a_clean_server_passes_the_soak_with_every_kind_of_traffic(tmp_path: Path) -> None:
    with server(create_app(ServerConfig(executor="thread", workers=1), solve_fn=bfs_solve)) as url:
        rc, rep, output = soak(
            url, tmp_path / "r.json", "--minutes", "0.05", "--skip", "value", "--skip", "value-optimal",
            "--skip", "solve-optimal", "--no-keys",
        )  # fmt: skip
    assert rc == 0, output
    assert rep["ok"] and rep["errors_500"] == 0 and rep["connection_errors"] == {}
    assert rep["unexpected"] == {}, rep["unexpected_samples"]
    assert rep["requests"] >= 10 and rep["keyed"] == 0
    assert rep["solves"].get("solved", 0) >= 1  # bfs solves depth-3 scrambles; answers replayed by /api/move
    refused = {ep: codes for ep, codes in rep["by_status"].items() if ep.startswith("POST")}
    assert any("422" in codes for codes in refused.values())  # invalid input was sent and refused
    assert rep["memory_mib"] is None and "RSS: not measured" in output  # no --pid
    assert {s["health_status"] for s in rep["samples"]} == {200}


def fails(puzzle: Puzzle, state: np.ndarray, opts: Any, on_solution: Any = None) -> Any:
    raise RuntimeError("a bug in the solver")


def test_a_server_answering_500_fails_the_soak(tmp_path: Path) -> None:
    with server(create_app(ServerConfig(executor="thread", workers=1), solve_fn=fails)) as url:
        rc, rep, output = soak(
            url, tmp_path / "r.json", "--minutes", "0.5", "--max-requests", "12", "--only", "solve-cube3",
            "--only", "job",
        )  # fmt: skip
    assert rc == 1, output
    assert rep["requests"] <= 12 and rep["errors_500"] >= 1 and not rep["ok"]
    assert any("answers 500" in f for f in rep["failures"]) and "FAILED" in output


def load_soak() -> ModuleType:
    return load_script("scripts/soak.py")


def test_the_workers_to_kill_are_the_servers_spawned_children() -> None:
    script = (
        "import subprocess, sys, time\n"
        "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)  # ' + what])\n"
        "        for what in ('spawn_main', 'resource_tracker')]\n"
        "time.sleep(60)\n"
    )
    fake = subprocess.Popen([sys.executable, "-c", script])  # a server, a worker and a resource tracker
    mod = load_soak()
    try:
        tree = until(lambda: (mod.process_tree_rss(fake.pid) or {}).get("processes") == 3, 30, "two children")
        assert tree
        rss = mod.process_tree_rss(fake.pid)
        assert rss["server_mib"] > 0 and rss["children_mib"] > 0
        (worker,) = mod.worker_pids(fake.pid)  # the spawned one, not the resource tracker
        assert b"spawn_main" in Path(f"/proc/{worker}/cmdline").read_bytes()
    finally:
        for child in mod._children()[fake.pid]:
            os.kill(child, signal.SIGKILL)
        fake.kill()
        fake.wait(10)
    assert mod.process_tree_rss(fake.pid) is None  # gone: no figure
