"""Shared test fixtures. The benchmark files live in ../shared/benchmarks beside the checkout; a
test that needs data this checkout lacks skips, saying what it needs (:func:`needs`)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.clock import FakeClock

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(os.environ.get("PUZZLEZERO_BENCHMARKS", ROOT.parent / "shared" / "benchmarks"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--puzzle-plugin",
        action="append",
        default=[],
        metavar="FILE|MODULE",
        help="load a puzzle plugin before collection, so that the conformance suite checks its puzzles",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--puzzle-plugin"):
        from puzzlezero.plugins import load_plugins

        load_plugins(config.getoption("--puzzle-plugin"))


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tables built by tests go to a cache of this run unless PUZZLEZERO_CACHE is set already: one
    for all of a parallel run's workers (each worker's base folder lies in the run's), so that a
    table is built once, by whichever worker needs it first, the others waiting on its lock and
    loading it (:func:`puzzlezero.storage.build_once`). A test that needs a cache without some
    table takes ``empty_cache``."""
    if "PUZZLEZERO_CACHE" not in os.environ:
        base = tmp_path_factory.getbasetemp()
        run = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        (run / "pz-cache").mkdir(exist_ok=True)
        os.environ["PUZZLEZERO_CACHE"] = str(run / "pz-cache")
    # cube3's default solve runs the two-phase search beside its network, cube_3-3-3's its own
    # beside its routes: their tables (about 10 s each to build, once) are built here, so that no
    # timed solve pays for them, whatever the test order; every other worker builds them in the
    # other order, so that two workers build the two side by side
    from puzzlezero.classic.two_phase import two_phase_tables
    from puzzlezero.classic.two_phase_slice import slice_tables
    from puzzlezero.registry import make

    builds = [two_phase_tables, lambda: slice_tables(make("cube_3-3-3"))]
    if int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")) % 2:
        builds.reverse()
    for build in builds:
        build()


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A table cache of its own (a spawned build inherits it), no memory of loaded or stopped
    builds, and the memory budget the default (the environment's, which the CLI's
    ``--memory-budget`` sets, and this process's restored after)."""
    from puzzlezero import budget, storage
    from puzzlezero.classic.optimal.sliding_pdb import load_sliding_pdb

    monkeypatch.setenv("PUZZLEZERO_CACHE", str(tmp_path))
    monkeypatch.setenv(budget.ENV, "")  # read as unset
    monkeypatch.setattr(budget, "_explicit", None)
    monkeypatch.setattr(storage, "_STOPPED", {})
    load_sliding_pdb.cache_clear()
    yield tmp_path
    load_sliding_pdb.cache_clear()  # the other tests load from their own cache again


def needs(path: Path, what: str) -> Path:
    """``path`` where this checkout has it; else the test is skipped, the pytest summary saying
    what it needs and why it is absent (never a silent pass)."""
    if not path.exists():
        shown = os.path.relpath(path, ROOT) if ROOT.parent in path.absolute().parents else str(path)
        pytest.skip(f"needs {shown} ({what}): not in this checkout")
    return path


def load_bench(name: str) -> dict:
    """A shared benchmark set (``../shared/benchmarks/<name>.json``, or ``$PUZZLEZERO_BENCHMARKS``)."""
    path = needs(BENCH_DIR / f"{name}.json", "the shared benchmark sets")
    return json.loads(path.read_text())


def load_script(path: str) -> ModuleType:
    """A script of the checkout (``benchmarks/plot_floor_curves.py``, ``experiments/three_cycles.py``,
    ...), imported from its file as a module of its own name (the script folders are not packages,
    and nothing is added to ``sys.path``: a script imports only the installed package)."""
    file = ROOT / path
    spec = importlib.util.spec_from_file_location(file.stem, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a script's dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The one clock of the searches and the solver (:mod:`puzzlezero.search.clock`), stopped at
    1000 s: it moves only when the test moves it (``fake.sleep(seconds)``)."""
    from puzzlezero.search import clock

    c = FakeClock()
    monkeypatch.setattr(clock, "time", c)
    return c


@pytest.fixture
def one_torch_thread():
    """Tests share two cores with other jobs: one torch thread avoids OpenMP oversubscription."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tiny_train_config(**overrides):
    """A training config that runs in a second: cube2, the tiny net, B = 100, chunks of 10, the
    paper's DAVI with loss-threshold target updates (tests choose other objectives explicitly)."""
    from dataclasses import replace

    from puzzlezero.train import TrainConfig

    base = TrainConfig(
        puzzle="cube2",
        preset="tiny",
        max_scramble=8,
        batch_size=100,
        chunk_iterations=10,
        check_every=20,
        objective="davi",
        target_update="loss",
        eval_every=0,
        threads=1,
        progress=False,
    )
    return replace(base, **overrides)
