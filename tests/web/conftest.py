"""Fixtures of the browser tests (``-m browser``): headless Chromium, a page that records the
page's errors, an in-process server with the test solver, and the folder screenshots go to. Only
tests that ask for them start anything. Every web test may run ``serve --executor thread``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _allow_the_thread_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve --executor thread`` (refused outside the test suite) for the tests that start it."""
    monkeypatch.setenv("PUZZLEZERO_ALLOW_THREAD_EXECUTOR", "1")


@pytest.fixture(scope="module")
def fake_server() -> Iterator[str]:
    from tests.web.browser_support import ThreadServer, fake_app

    with ThreadServer(fake_app()) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    from tests.web.browser_support import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    path = Path(os.environ.get("PUZZLEZERO_ARTIFACTS", tmp_path))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    p = browser.new_page(viewport={"width": 1200, "height": 820})
    p.errors = []
    p.on("pageerror", lambda exc: p.errors.append(str(exc)))
    p.on("console", lambda msg: p.errors.append(msg.text) if msg.type == "error" else None)
    yield p
    p.close()
