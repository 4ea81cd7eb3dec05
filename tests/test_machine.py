"""The machine description written into benchmark files, reports and model cards."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from puzzlezero import machine


def test_cpu_model_reads_proc_cpuinfo_where_there_is_one():
    info = Path("/proc/cpuinfo")
    if not info.exists():
        pytest.skip("no /proc/cpuinfo here")
    names = [
        line.split(":", 1)[1].strip()
        for line in info.read_text().splitlines()
        if line.startswith("model name")
    ]
    if not names:
        pytest.skip("/proc/cpuinfo names no model here")
    assert machine.cpu_model() == names[0]


def test_cpu_model_falls_back_to_platform_without_proc(monkeypatch):
    def unreadable(self, *args, **kwargs):
        raise OSError("no such file")

    monkeypatch.setattr(Path, "read_text", unreadable)
    assert machine.cpu_model() == (platform.processor() or platform.machine())


def test_hardware_names_the_cpu_the_cores_and_python():
    line = machine.hardware()
    assert line == f"{machine.cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def test_peak_rss_is_at_least_the_current_resident_memory():
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("no /proc/self/status here")
    rss_kib = next(
        int(line.split()[1]) for line in status.read_text().splitlines() if line.startswith("VmRSS")
    )
    peak = machine.peak_rss_mib()
    assert peak is not None and peak >= rss_kib / 1024 - 1  # the peak so far covers what is resident now


def test_provenance_names_the_date_version_and_commit(tmp_path: Path) -> None:
    import re

    from puzzlezero import __version__
    from puzzlezero.machine import _commit, provenance

    got = provenance()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", got["date"] or "")
    assert got["version"] == __version__
    assert got["commit"] is None or re.fullmatch(r"[0-9a-f]{7,40}\+?", got["commit"])
    assert _commit(tmp_path) is None  # a folder outside any checkout: no commit claimed
