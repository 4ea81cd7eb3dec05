"""Cache tables out of the request path: built by ``puzzlezero pdb build`` under a lock file (two
real processes that miss one table build it once; the second waits and loads the first one's file),
and refused by name where builds are forbidden (web workers)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import make, storage
from puzzlezero.classic.optimal.tables import load_or_build, table_path
from puzzlezero.cli.main import main
from puzzlezero.errors import MissingTableError
from tests.clock import until


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty cache for this test (and for the processes it starts)."""
    monkeypatch.setenv("PUZZLEZERO_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def forbidden(monkeypatch):
    monkeypatch.setattr(storage, "_BUILDS_FORBIDDEN", False)
    storage.forbid_table_builds()
    assert storage.table_builds_forbidden()
    yield
    storage.forbid_table_builds(False)


# A table whose build holds until the test says go: the first process is then certainly inside its
# build when the second misses the table. Each build appends its pid to builds.txt.
BUILDER = """
import hashlib, os, sys, time
from pathlib import Path
import numpy as np
from puzzlezero.classic.optimal.tables import load_or_build
work = Path(sys.argv[1])
def build():
    with open(work / "builds.txt", "a") as f:
        f.write(f"{os.getpid()}\\n")
    (work / "building").touch()
    while not (work / "go").exists():
        time.sleep(0.02)
    return {"table": np.arange(100_000, dtype=np.int64) % 251}
arrays = load_or_build("locktest", {"kind": "test"}, build)
print(hashlib.sha256(arrays["table"].tobytes()).hexdigest())
"""


def _wait_for(predicate, proc: subprocess.Popen, what: str, seconds: float = 120.0) -> None:
    """Wait for ``predicate`` while ``proc`` runs (a generous limit; its duration is not checked)."""

    def ready() -> bool:
        if predicate():
            return True
        assert proc.poll() is None, f"the process ended before {what}"
        return False

    until(ready, seconds, what)


def test_two_processes_missing_one_table_build_it_once(tmp_path, cache):
    script = tmp_path / "builder.py"
    script.write_text(BUILDER)
    run = [sys.executable, str(script), str(tmp_path)]
    first = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for((tmp_path / "building").exists, first, "build start")
    second_err = tmp_path / "second.err"
    with open(second_err, "w") as err:
        second = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=err, text=True)
        _wait_for(lambda: "waiting for another process" in second_err.read_text(), second, "wait")
    (tmp_path / "go").touch()
    outs = [p.communicate(timeout=120) for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], [o[1] for o in outs]
    builds = (tmp_path / "builds.txt").read_text().split()
    assert builds == [str(first.pid)]  # exactly one build, by the first
    expected = hashlib.sha256((np.arange(100_000, dtype=np.int64) % 251).tobytes()).hexdigest()
    assert outs[0][0].strip() == outs[1][0].strip() == expected  # both hold the same arrays
    assert "building pattern database locktest" in outs[0][1]
    assert "building pattern database" not in second_err.read_text()


def test_two_pdb_build_commands_at_once_build_the_puzzle8_tables_once(cache):
    cmd = [sys.executable, "-m", "puzzlezero", "pdb", "build", "puzzle8"]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    assert sum(o[1].count("building pattern database puzzle8") for o in outs) == 1
    assert all(o[0].startswith("puzzle8: pdb: additive 4-4 + reflection") for o in outs)
    assert [p.name for p in (cache / "pdb").iterdir() if ".pz-" in p.name] == []


def test_a_forbidden_build_names_the_command_that_builds_the_table(cache, forbidden, monkeypatch):
    from puzzlezero.classic import group
    from puzzlezero.classic.optimal.cube_pdb import load_cube_pdb
    from puzzlezero.classic.optimal.sliding_pdb import load_sliding_pdb
    from puzzlezero.puzzles.cube import table as cube2_table

    def fail() -> dict[str, np.ndarray]:
        raise AssertionError("a forbidden build ran")

    with pytest.raises(MissingTableError, match="locktest is not built; build it with: the Python call"):
        load_or_build("locktest", {"kind": "test"}, fail)
    with pytest.raises(MissingTableError, match=r"build it with: puzzlezero pdb build puzzle15$"):
        load_sliding_pdb.__wrapped__(4)
    with pytest.raises(MissingTableError, match=r"build it with: puzzlezero pdb build cube3$"):
        load_cube_pdb.__wrapped__()
    monkeypatch.setattr(cube2_table, "_TABLE", None)
    with pytest.raises(MissingTableError, match=r"cube2 distance table is not built; .*pdb build cube2$"):
        cube2_table.distance(make("cube2").goals(1))
    monkeypatch.setattr(group, "_TABLES", {})
    monkeypatch.setattr(group, "SHIPPED_TABLES", cache / "none-shipped")  # as an install without them
    with pytest.raises(
        MissingTableError, match=r"group table of cube3 is not built; .*build cube3 --kind group$"
    ):
        group.group_table(make("cube3"))
    # a corrupt file is not built over either
    path = table_path("locktest")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a zip")
    with pytest.raises(MissingTableError, match="locktest is not usable .*unreadable or corrupt"):
        load_or_build("locktest", {"kind": "test"}, fail)
    assert os.listdir(path.parent) == ["locktest.npz"]  # nothing written, no lock file either


def test_pdb_build_command_builds_loads_and_refuses_by_name(cache, capsys, monkeypatch):
    from puzzlezero.classic import group
    from puzzlezero.puzzles.cube import table as cube2_table

    monkeypatch.setattr(cube2_table, "_TABLE", None)  # tables an earlier test left in this process
    monkeypatch.setattr(group, "_TABLES", {})
    assert main(["pdb", "build", "cube2", "--kind", "all"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("cube2: pdb: exact table, 3.7 MB") and out[1].startswith("cube2: group table")
    assert (cache / "tables" / "cube2_qtm.npz").is_file()
    assert not list((cache / "group").glob("cube2-*.npz"))  # its group table ships with the package
    assert main(["pdb", "build", "cube2", "--kind", "nosuch"]) == 2
    assert (
        "error: unknown --kind 'nosuch'; the kinds are pdb, group, reduction, two-phase, all"
        in capsys.readouterr().err
    )
    assert main(["pdb", "build", "cube2", "--kind", "two-phase"]) == 2
    assert (
        "error: the two-phase tables are cube3's and the competition's 3x3x3's; cube2 has none"
        in capsys.readouterr().err
    )
    assert main(["pdb", "build", "lightsout7", "--kind", "group"]) == 2
    assert "error: the group solver needs a permutation puzzle" in capsys.readouterr().err
    assert main(["pdb", "build", "sokoban", "--kind", "all"]) == 0  # what serve --build-tables asks
    assert capsys.readouterr().out.startswith("sokoban: pdb: push-distance matching, 0.0 MB, ready in ")
    assert main(["pdb", "build", "nosuch"]) == 2
    assert "unknown puzzle 'nosuch'" in capsys.readouterr().err
