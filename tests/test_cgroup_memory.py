"""The memory a process may count on honours its cgroup's limit (a container's): cgroup v2's
``memory.max`` (a number or ``max``) and cgroup v1's ``memory.limit_in_bytes`` (a huge number is no
limit), read from a fake cgroup root; the web workers' default memory limit follows it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from puzzlezero import budget
from puzzlezero.budget import cgroup_memory_limit, total_memory

GiB = 1 << 30


def v2(root: Path, limit: str, current: str = "1048576") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "memory.max").write_text(limit + "\n")
    (root / "memory.current").write_text(current + "\n")
    return root


def v1(root: Path, limit: str, usage: str = "1048576") -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memory" / "memory.limit_in_bytes").write_text(limit + "\n")
    (root / "memory" / "memory.usage_in_bytes").write_text(usage + "\n")
    return root


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda root: v2(root, str(3 * GiB)), 3 * GiB),  # v2, a number of bytes
        (lambda root: v2(root, "max"), None),  # v2, no limit
        (lambda root: v1(root, str(2 * GiB)), 2 * GiB),  # v1, a number of bytes
        (lambda root: v1(root, "9223372036854771712"), None),  # v1's "no limit": 2**63 less a page
        (lambda root: root, None),  # neither file: no cgroup to honour
        (lambda root: v2(root, "garbage"), None),  # unreadable: no limit read
    ],
    ids=["v2-number", "v2-max", "v1-number", "v1-unlimited", "absent", "v2-unreadable"],
)
def test_cgroup_memory_limit(tmp_path: Path, make: Callable[[Path], Path], expected: int | None) -> None:
    root = make(tmp_path)
    assert cgroup_memory_limit(root) == expected


def test_v2_wins_over_v1_where_both_are_mounted(tmp_path: Path) -> None:
    v1(v2(tmp_path, "max"), str(GiB))  # a hybrid host: the v2 file is this process's cgroup
    assert cgroup_memory_limit(tmp_path) is None
    v2(tmp_path, str(5 * GiB))
    assert cgroup_memory_limit(tmp_path) == 5 * GiB


def test_total_memory_is_the_lower_of_the_machine_and_the_cgroup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget, "_physical_memory", lambda info=None: 64 * GiB)
    assert total_memory(v2(tmp_path / "a", str(3 * GiB))) == 3 * GiB  # a container of 3 GiB
    assert total_memory(v2(tmp_path / "b", str(128 * GiB))) == 64 * GiB  # a limit above the machine
    assert total_memory(v2(tmp_path / "c", "max")) == 64 * GiB
    assert total_memory(v1(tmp_path / "d", str(6 * GiB))) == 6 * GiB
    assert total_memory(v1(tmp_path / "e", "9223372036854771712")) == 64 * GiB
    assert total_memory(tmp_path / "none") == 64 * GiB


def test_the_real_total_memory_is_known_and_at_most_the_machines() -> None:
    total = total_memory()
    assert total is not None and 0 < total <= budget._physical_memory()  # type: ignore[operator]
    assert budget.machine_memory()[0] == total


def test_the_web_workers_default_memory_limit_honours_the_cgroup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from puzzlezero.web.config import ServerConfig

    monkeypatch.setattr(budget, "_physical_memory", lambda info=None: 256 * GiB)
    real = budget.total_memory
    monkeypatch.setattr(budget, "total_memory", lambda root=tmp_path: real(root))
    assert ServerConfig(workers=2).worker_memory_limit == 64 * 1024  # half of 256 GiB over 2 workers
    v2(tmp_path, str(32 * GiB))
    assert ServerConfig(workers=2).worker_memory_limit == 8 * 1024  # half of the container's 32 GiB
    v2(tmp_path, str(2 * GiB))
    assert ServerConfig(workers=2).worker_memory_limit == 4096  # never below 4 GiB of address space
    assert ServerConfig(workers=2, worker_memory_mib=1000).worker_memory_limit == 1000


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_available_memory_leaves_out_the_reclaimable_file_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    """A cgroup's usage counts the page cache of the files its processes read and wrote; its
    inactive part is given back before memory is refused, so it is not counted as used."""
    used, inactive = 7 * GiB, 5 * GiB
    if version == "v2":
        v2(tmp_path, str(8 * GiB), current=str(used))
        (tmp_path / "memory.stat").write_text(f"anon 1000\nfile {6 * GiB}\ninactive_file {inactive}\n")
    else:
        v1(tmp_path, str(8 * GiB), usage=str(used))
        (tmp_path / "memory" / "memory.stat").write_text(
            f"cache 100\ninactive_file 7\ntotal_cache {6 * GiB}\ntotal_inactive_file {inactive}\n"
        )
    monkeypatch.setattr(budget, "CGROUP_ROOT", tmp_path)
    monkeypatch.setattr(budget, "_meminfo", lambda: {"MemTotal": 64 * GiB, "MemAvailable": 60 * GiB})
    assert budget._cgroup_usage(tmp_path) == used - inactive
    assert budget.machine_memory() == (8 * GiB, 8 * GiB - (used - inactive))
    (tmp_path / ("memory.stat" if version == "v2" else "memory/memory.stat")).unlink()
    assert budget._cgroup_usage(tmp_path) == used  # no stat file: the usage as it is
