"""What the browser tests share: Chromium's path and flags, an in-process server on a free port
(uvicorn in a thread, the breadth-first solver double of ``test_web``), and the page helpers. The
fixtures built from them (``browser``, ``page``, ``fake_server``, ``artifacts``) are in ``conftest.py``."""

from __future__ import annotations

import http.client
import os
import shutil
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from puzzlezero.web.config import has_shipped_model
from tests.clock import until
from tests.web.live_server import connect_checked

ROOT = Path(__file__).resolve().parents[2]
#: the console script, run by this interpreter (``python -m puzzlezero.cli.main`` would register no commands)
PUZZLEZERO = [
    sys.executable,
    "-c",
    "import sys; from puzzlezero.cli.main import main; sys.exit(main(sys.argv[1:]))",
]
CHROMIUM = os.environ.get("PUZZLEZERO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HAS_MODEL = has_shipped_model("cube3")
#: a model folder to serve for cube3 instead of the shipped one (e.g. a fresh `puzzlezero export`)
CUBE3_MODEL = os.environ.get("PUZZLEZERO_TEST_CUBE3_MODEL")
HAS_CUBING = (ROOT / "node_modules/cubing/dist/lib/cubing/twisty/index.js").is_file()


def require_browser() -> None:
    """Skip the calling test module without Playwright, Chromium or uvicorn (call at module level)."""
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (no browser download)")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"Chromium not found at {CHROMIUM} (scripts/install_browser.sh)", allow_module_level=True)
    pytest.importorskip("uvicorn")


# ---- servers ---------------------------------------------------------------------------------
class ThreadServer:
    """uvicorn on a free loopback port in a background thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        until(lambda: self.server.started and self.server.servers, 30, "uvicorn listening", every=0.05)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def fake_app(**config: Any) -> Any:
    from puzzlezero.web import ServerConfig, create_app
    from tests.web.test_web import bfs_solve

    return create_app(ServerConfig(executor="thread", workers=1, **config), solve_fn=bfs_solve)


def wait_http(url: str, proc: subprocess.Popen[bytes], seconds: float = 90) -> None:
    def answers() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"puzzlezero serve exited with {proc.returncode}")
        conn = http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=1)
        try:
            connect_checked(conn)
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            response.read()
        except OSError:
            return False
        finally:
            conn.close()
        return response.status == 200  # 503 while no worker can run yet

    until(answers, seconds, "puzzlezero serve answering /healthz", every=0.25)


# ---- pages ---------------------------------------------------------------------------------
def snapshot(page: Any) -> dict[str, Any]:
    return page.evaluate("() => window.pz.snapshot()")


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function(
        "() => window.pz && document.getElementById('status').dataset.kind === 'ok'", timeout=60_000
    )


def solve_and_play(page: Any, timeout_ms: int = 180_000) -> dict[str, Any]:
    """Click Solve, wait for the answer (a first solution shows before it: the page's ``solving``
    says when the solve has ended), then Play at top speed; return the snapshot once playback has
    ended. A solve that ends in an error fails at once with the page's status line."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    def status() -> str:
        return page.evaluate("() => document.getElementById('status').textContent")

    before = status()
    page.click("#solve")
    try:
        page.wait_for_function(
            "(before) => { const s = window.pz.snapshot(); return (s.solution.length > 0 && !s.solving) || "
            "(document.getElementById('status').dataset.kind === 'error' && "
            "document.getElementById('status').textContent !== before); }",
            arg=before,
            timeout=timeout_ms,
        )
    except PlaywrightTimeout:
        raise AssertionError(
            f"no solution after {timeout_ms / 1000:.0f} s; the page says: {status()}"
        ) from None
    assert snapshot(page)["solution"], f"no solution; the page says: {status()}"
    page.fill("#speed", page.get_attribute("#speed", "max"))
    page.dispatch_event("#speed", "input")
    page.click("#play")
    page.wait_for_function(
        "() => { const s = window.pz.snapshot(); return s.pos === s.solution.length && !s.playing; }",
        timeout=60_000,
    )
    page.wait_for_selector("#solved-badge[data-solved='true']", timeout=10_000)
    return snapshot(page)


def screenshot(page: Any, path: Path) -> None:
    """Save a picture of the whole page once cubing.js has finished its turn animations (a picture
    only: nothing is checked against it)."""
    page.wait_for_timeout(1500)
    page.screenshot(path=str(path), full_page=True)
