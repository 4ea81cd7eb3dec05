"""The package type-checks: ``mypy src/puzzlezero`` (settings in pyproject.toml) runs with the tests,
so annotations that stop saying what the code does fail CI instead of rotting unseen."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

mypy_api = pytest.importorskip("mypy.api", reason="mypy is in the test extras; install them to run this")


def test_the_package_type_checks() -> None:
    out, err, status = mypy_api.run(
        [str(ROOT / "src" / "puzzlezero"), "--cache-dir", str(ROOT / ".mypy_cache")]
    )
    assert status == 0, f"mypy found errors:\n{out}{err}"
