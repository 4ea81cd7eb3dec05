"""The machine a figure was measured on: its CPU model, a one-line description for reports and
benchmark files, the process's peak memory, and when and with which code (:func:`provenance`).
Standard library only, so that any module (the benchmark runner, the trainer's model card, the Ray
workers) can name its hardware."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
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


def provenance() -> dict[str, str | None]:
    """``{"date", "version", "commit"}`` of a figure measured now: the UTC time (ISO 8601, to the
    second), the package's version, and the git commit of its source where the package runs from
    a git checkout (an editable install; ``"+"`` after it when the checkout has changes), else
    ``None``."""
    from puzzlezero._version import __version__

    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "version": __version__,
        "commit": _commit(Path(__file__).resolve().parent),
    }


def _commit(folder: Path) -> str | None:
    """The short commit of the git checkout holding ``folder`` where this file is tracked in it
    (``"+"`` appended when tracked files of ``folder`` differ from it), else ``None`` (no git, not a
    checkout, an installed wheel)."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, text=True, timeout=5, check=True
        )
        return done.stdout.strip()

    try:
        git("ls-files", "--error-unmatch", Path(__file__).name)  # tracked: not a copy inside a checkout
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", ".")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+" if dirty else "") if head else None
