"""The machine a figure was measured on: its CPU model, a one-line description for reports and
benchmark files, and the process's peak memory. Standard library only, so that any module (the
benchmark runner, the trainer's model card, the Ray workers) can name its hardware."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``'s first ``model name``), else what :mod:`platform`
    knows (``platform.processor()`` or the machine type)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def hardware() -> str:
    """A short description of this machine (CPU model, cores, Python), for reports."""
    return f"{cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def peak_rss_mib() -> float | None:
    """Peak resident memory of this process so far, in MiB (``ru_maxrss``: KiB on Linux, bytes on
    macOS); ``None`` where the ``resource`` module is missing (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)
