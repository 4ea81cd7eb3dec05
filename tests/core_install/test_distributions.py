"""The two distributions of the repository carry one version, written once in
``src/puzzlezero/_version.py``, one license, and every model file (``scripts/build_dists.sh``
builds and checks the wheels themselves)."""

from __future__ import annotations

import importlib.metadata
import re
import runpy
import tomllib
from pathlib import Path

import pytest

import puzzlezero
from tests.conftest import ROOT

COMPANION = ROOT / "packages" / "puzzlezero-research-models"
VERSION = runpy.run_path(str(ROOT / "src" / "puzzlezero" / "_version.py"))["__version__"]


def test_the_version_is_written_once_and_exported() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    assert puzzlezero.__version__ == VERSION
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in core["project"] and "version" in core["project"]["dynamic"]
    assert core["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "puzzlezero._version.__version__"}
    companion = tomllib.loads((COMPANION / "pyproject.toml").read_text())
    assert "version" not in companion["project"]
    assert {"version", "dependencies"} <= set(companion["project"]["dynamic"])
    assert "src/puzzlezero/_version.py" in (COMPANION / "setup.py").read_text()


def test_the_changelog_heads_with_this_version() -> None:
    first = next(line for line in (ROOT / "CHANGELOG.md").read_text().splitlines() if line.startswith("## "))
    assert first.split()[1] == VERSION


def test_both_distributions_carry_the_license() -> None:
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "the puzzlezero authors" in license_text
    assert (COMPANION / "LICENSE").read_text() == license_text
    for project in (ROOT, COMPANION):
        assert tomllib.loads((project / "pyproject.toml").read_text())["project"]["license-files"] == [
            "LICENSE"
        ]


def test_the_installed_companion_requires_this_core() -> None:
    try:
        installed = importlib.metadata.version("puzzlezero-research-models")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("puzzlezero-research-models is not installed")
    assert installed == VERSION
    assert f"puzzlezero=={VERSION}" in (importlib.metadata.requires("puzzlezero-research-models") or [])


@pytest.mark.parametrize("project", [ROOT / "src" / "puzzlezero" / "models", COMPANION / "src"])
def test_model_folders_hold_only_packaged_files(project: Path) -> None:
    """Every file of a model folder is one the package data globs take (json, npz), so a wheel
    holds the whole folder; no PyTorch weights are left behind."""
    files = [p for p in project.rglob("*") if p.is_file() and "egg-info" not in p.as_posix()]
    model_files = [p for p in files if p.suffix not in (".py", ".pyc")]
    assert model_files
    assert [p for p in model_files if p.suffix not in (".json", ".npz")] == []
