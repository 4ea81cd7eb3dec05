"""Shared test fixtures. The benchmark files live in ../shared/benchmarks beside the checkout."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(os.environ.get("PUZZLEZERO_BENCHMARKS", ROOT.parent / "shared" / "benchmarks"))


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tables built by tests go to a per-session cache unless PUZZLEZERO_CACHE is set already."""
    if "PUZZLEZERO_CACHE" not in os.environ:
        os.environ["PUZZLEZERO_CACHE"] = str(tmp_path_factory.mktemp("pz-cache"))


def load_bench(name: str) -> dict:
    path = BENCH_DIR / f"{name}.json"
    if not path.exists():
        pytest.skip(f"benchmark file {path} not found")
    return json.loads(path.read_text())
