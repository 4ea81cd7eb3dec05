"""The memory budget: how many bytes a search or a model may take, and the check that refuses more.

A search's peak memory follows from its options before it allocates anything (a beam's width, a
best-first search's node cap, the states of a shortcut round), and so does a network's from its
``config.json``. Each is estimated first (``memory_estimate`` beside each search, :mod:`.search`)
and compared with :func:`memory_budget`; above it, :func:`check` raises
:class:`~puzzlezero.errors.MemoryBudgetError` naming the estimate, the budget and the option to
lower, instead of the process being killed by the operating system half-way through.

The budget, first found of:

1. a value set in this process: :func:`set_memory_budget`, or ``with use_memory_budget(...)``
   (the command line's ``--memory-budget``);
2. ``$PUZZLEZERO_MEMORY_BUDGET``: ``"4GiB"``, ``"512MiB"``, ``"1.5G"``, plain bytes, or ``"off"``;
3. :data:`SHARE` of the machine's memory (of the cgroup's limit where lower), never more than the
   memory available now, nor more than the address space left under ``RLIMIT_AS`` (a web
   worker's limit).

An estimate is of the memory a search writes at its peak, the bound its options set (every node
its cap allows, every step its width and ``max_steps`` allow), not what a time limit usually leaves
of it: a 30-second cube3 solve with the default schedule, estimated at 9.7 GiB for four guises of
10M nodes, peaked at 0.9 GiB on a 2-core CPU. Arrays that double reserve up to half as much
address space again before they are written, which a limit on address space (``RLIMIT_AS``)
counts; its headroom, not the estimate, covers that.

Sizes are read with binary units for ``K``, ``M``, ``G``, ``T`` and ``KiB`` ... ``TiB``, decimal
ones for ``kB``, ``MB``, ``GB``, ``TB``.

>>> parse_size("4GiB"), parse_size("512 MiB"), parse_size("1000")
(4294967296, 536870912, 1000)
>>> format_size(11.5 * 2**30), format_size(1.2 * 2**40), format_size(300)
('11.5 GiB', '1.2 TiB', '300 bytes')
>>> with use_memory_budget("1GiB"):
...     check(3 * 2**30, "beam search of width 1,000,000 on cube3", "--beam-width")
Traceback (most recent call last):
...
puzzlezero.errors.MemoryBudgetError: beam search of width 1,000,000 on cube3 needs about 3.0 GiB (estimated), above the memory budget of 1.0 GiB; lower --beam-width (or raise --memory-budget)
"""

from __future__ import annotations

import math
import os
import re
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from puzzlezero.errors import MemoryBudgetError, PuzzleError

__all__ = [
    "CGROUP_ROOT",
    "ENV",
    "NETWORK_BATCH_BYTES",
    "SHARE",
    "SearchSettings",
    "UNLIMITED",
    "cgroup_memory_limit",
    "check",
    "check_build",
    "default_budget",
    "format_size",
    "guises",
    "machine_memory",
    "memory_budget",
    "parse_size",
    "set_memory_budget",
    "state_bytes",
    "total_memory",
    "use_memory_budget",
    "widest",
]

#: the environment variable that sets the budget
ENV = "PUZZLEZERO_MEMORY_BUDGET"
#: the share of the machine's memory a process may plan to use when no budget is set
SHARE = 0.5
#: the budget ``"off"`` stands for: no limit
UNLIMITED = 1 << 62

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "kb": 10**3,
    "m": 1 << 20,
    "mib": 1 << 20,
    "mb": 10**6,
    "g": 1 << 30,
    "gib": 1 << 30,
    "gb": 10**9,
    "t": 1 << 40,
    "tib": 1 << 40,
    "tb": 10**12,
}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-zA-Z]*)\s*")
_BINARY = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")

_explicit: int | None = None


def parse_size(text: str | int, what: str = "a memory size") -> int:
    """Bytes of ``"4GiB"``, ``"512MiB"``, ``"1.5G"``, ``"2 GB"``, ``"1000"`` (or an int); ``"off"``,
    ``"none"``, ``"unlimited"``: :data:`UNLIMITED`. Anything else, zero or a negative size raise
    :class:`PuzzleError` naming ``what`` and the text."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text <= 0:
            raise PuzzleError(f"{what} must be a positive number of bytes, got {text}")
        return text
    raw = str(text)
    if raw.strip().lower() in ("off", "none", "unlimited"):
        return UNLIMITED
    m = _SIZE.fullmatch(raw)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNITS:
        raise PuzzleError(
            f"{what}: cannot read {raw!r} as a size; write e.g. 4GiB, 512MiB, 1.5G or a number of bytes"
        )
    value = float(m.group(1)) * _UNITS[unit]
    if not math.isfinite(value) or value < 1:
        raise PuzzleError(f"{what} must be at least one byte, got {raw!r}")
    return min(int(value), UNLIMITED)


def format_size(nbytes: float) -> str:
    """``"11.5 GiB"``: binary units, one decimal (bytes as a whole number)."""
    value, unit = float(nbytes), 0
    while abs(value) >= 1024 and unit < len(_BINARY) - 1:
        value, unit = value / 1024, unit + 1
    return f"{int(value)} bytes" if unit == 0 else f"{value:.1f} {_BINARY[unit]}"


def _meminfo() -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[name] = int(parts[0]) * (1024 if parts[1:2] == ["kB"] else 1)
    return out


#: where the cgroup file systems are mounted (v2: ``memory.max`` here; v1: under ``memory/``)
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: a cgroup v1 limit at or above this is no limit (the kernel writes 2**63 less a page for none)
CGROUP_V1_UNLIMITED = 1 << 60


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def cgroup_memory_limit(root: Path = CGROUP_ROOT) -> int | None:
    """Bytes of memory this process's cgroup may use, where a limit is set, else ``None``.

    cgroup v2: ``root/memory.max``, a number of bytes or ``max`` (no limit). cgroup v1 (where
    there is no ``memory.max``): ``root/memory/memory.limit_in_bytes``, in which a huge number
    (:data:`CGROUP_V1_UNLIMITED` or more) means no limit. A container sees its own cgroup at the
    root; on a machine without cgroups (or without read access) neither file is there: ``None``."""
    v2 = root / "memory.max"
    if v2.exists():
        return _read_int(v2)
    limit = _read_int(root / "memory" / "memory.limit_in_bytes")
    return limit if limit is not None and limit < CGROUP_V1_UNLIMITED else None


def _stat(path: Path, key: str) -> int | None:
    """The value of ``key`` in a cgroup ``memory.stat`` file (``key value`` lines), where present."""
    try:
        text = path.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return None


def _cgroup_usage(root: Path = CGROUP_ROOT) -> int | None:
    """Bytes the cgroup uses now and cannot give back at once: v2 ``memory.current``, v1
    ``memory/memory.usage_in_bytes``, less the inactive file cache its ``memory.stat`` lists
    (v2 ``inactive_file``, v1 ``total_inactive_file``), which the kernel reclaims before it
    refuses memory (the working set, as container runtimes count it). Without this, a process
    that has read or written many files would see its cgroup nearly full and refuse searches."""
    used = _read_int(root / "memory.current")
    if used is not None:
        cache = _stat(root / "memory.stat", "inactive_file")
    else:
        used = _read_int(root / "memory" / "memory.usage_in_bytes")
        cache = _stat(root / "memory" / "memory.stat", "total_inactive_file")
    return None if used is None else max(0, used - (cache or 0))


def _physical_memory(info: dict[str, int] | None = None) -> int | None:
    """Bytes of the machine's memory (``MemTotal``, else ``os.sysconf``); ``None`` where unknown."""
    total = (info if info is not None else _meminfo()).get("MemTotal")
    if total is not None:
        return total
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def total_memory(root: Path = CGROUP_ROOT) -> int | None:
    """Bytes of memory this process may count on: the machine's, or its cgroup's limit where that
    is lower (:func:`cgroup_memory_limit`); ``None`` where neither is known. Every budget derived
    from the total memory starts here (:func:`machine_memory`, the web workers' default limit)."""
    machine, limit = _physical_memory(), cgroup_memory_limit(root)
    if machine is None or limit is None:
        return machine if limit is None else limit
    return min(machine, limit)


def machine_memory() -> tuple[int, int]:
    """``(total, available)`` bytes of memory: ``/proc/meminfo``'s ``MemTotal`` and
    ``MemAvailable`` (else ``os.sysconf``), each lowered to the cgroup's limit where one is set
    (:func:`cgroup_memory_limit`; available: the limit less the cgroup's usage)."""
    info = _meminfo()
    total, avail = _physical_memory(info), info.get("MemAvailable")
    if total is None or avail is None:
        page = os.sysconf("SC_PAGE_SIZE")
        total = os.sysconf("SC_PHYS_PAGES") * page
        avail = os.sysconf("SC_AVPHYS_PAGES") * page
    limit = cgroup_memory_limit(CGROUP_ROOT)
    if limit is not None:
        used = _cgroup_usage(CGROUP_ROOT)
        total = min(total, limit)
        if used is not None:
            avail = min(avail, max(0, limit - used))
    return int(total), int(avail)


def _address_space_left() -> int | None:
    """Bytes of address space left under ``RLIMIT_AS`` (its soft limit less ``VmSize``), where set."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    size = 0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return max(0, soft - size)


def default_budget() -> int:
    """:data:`SHARE` of the machine's memory, at most what is available now and what is left of
    the address space under ``RLIMIT_AS``."""
    total, avail = machine_memory()
    budget = min(int(SHARE * total), avail)
    left = _address_space_left()
    return budget if left is None else min(budget, left)


def set_memory_budget(nbytes: int | str | None) -> None:
    """Set this process's budget (an int of bytes or a size text, see :func:`parse_size`);
    ``None``: back to ``$PUZZLEZERO_MEMORY_BUDGET`` or the default."""
    global _explicit
    _explicit = None if nbytes is None else parse_size(nbytes, "the memory budget")


@contextmanager
def use_memory_budget(nbytes: int | str | None) -> Iterator[int]:
    """``with use_memory_budget("2GiB"): ...``: the budget within the block (the one before it
    after); yields it in bytes."""
    global _explicit
    before = _explicit
    set_memory_budget(nbytes)
    try:
        yield memory_budget()
    finally:
        _explicit = before


def memory_budget() -> int:
    """The budget in bytes: set in this process, else ``$PUZZLEZERO_MEMORY_BUDGET``, else
    :func:`default_budget` (see the module docstring)."""
    if _explicit is not None:
        return _explicit
    env = os.environ.get(ENV)
    if env is not None and env.strip():
        return parse_size(env, f"${ENV}")
    return default_budget()


def check(estimate: int, what: str, lower: str) -> None:
    """Raise :class:`MemoryBudgetError` when ``estimate`` bytes are above :func:`memory_budget`:
    ``"{what} needs about 1.2 TiB (estimated), above the memory budget of 11.5 GiB; lower {lower}
    (or raise --memory-budget)"``."""
    budget = memory_budget()
    if estimate > budget:
        raise MemoryBudgetError(
            f"{what} needs about {format_size(estimate)} (estimated), above the memory budget of "
            f"{format_size(budget)}; lower {lower} (or raise --memory-budget)"
        )


def check_build(estimate: int, what: str) -> None:
    """Raise :class:`MemoryBudgetError` when building the table ``what`` would take ``estimate``
    bytes at its peak, above :func:`memory_budget`, before the build starts (a table's size is
    fixed by its puzzle: there is nothing to lower): ``"building the pattern database of puzzle15
    needs about 4.3 GiB (estimated), above the memory budget of 2.0 GiB; raise --memory-budget
    (or $PUZZLEZERO_MEMORY_BUDGET) where the machine has that much free"``."""
    budget = memory_budget()
    if estimate > budget:
        raise MemoryBudgetError(
            f"building {what} needs about {format_size(estimate)} (estimated), above the memory "
            f"budget of {format_size(budget)}; raise --memory-budget (or ${ENV}) where the machine "
            f"has that much free"
        )


# ---- what the searches' estimates share ---------------------------------------------------------
#: what a search's heuristic calls add at their peak: a network is fed a chunk of at most a few
#: thousand states at a time (:func:`puzzlezero.nn.predict`), whose encoded input and activations
#: take tens of MiB (the network's own weights are checked when it is loaded)
NETWORK_BATCH_BYTES = 64 << 20


class SearchSettings(Protocol):
    """The options a memory estimate reads (the solver's resolved options)."""

    @property
    def beam_width(self) -> int | tuple[int, ...]: ...
    @property
    def batch(self) -> int: ...
    @property
    def max_nodes(self) -> int | None: ...
    @property
    def max_steps(self) -> int: ...
    @property
    def stages(self) -> tuple[tuple[float, int], ...]: ...
    def option(self, name: str) -> Any: ...


def state_bytes(puzzle: Any) -> int:
    """Bytes of one state of ``puzzle`` (its ``state_shape`` in its ``dtype``)."""
    return int(np.prod(puzzle.state_shape, dtype=np.int64)) * np.dtype(puzzle.dtype).itemsize


def guises(puzzle: Any, options: SearchSettings) -> int:
    """Instances a state is searched as: itself and its ``images`` (the option; 0 where the
    search takes none), as many at most as the puzzle has."""
    try:
        n = int(options.option("images") or 0)
    except (KeyError, AttributeError):
        n = 0
    return 1 + min(n, len(getattr(puzzle, "image_names", ())))


def widest(beam_width: int | tuple[int, ...]) -> int:
    """The widest beam of one width or of an anytime schedule of widths."""
    return beam_width if isinstance(beam_width, int) else max(beam_width)
