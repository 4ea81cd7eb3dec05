"""Benches and batch solves spread over a Ray cluster (the optional ``ray`` extra).

:func:`solve_on_ray` is :func:`~puzzlezero.solver.solve_many` with its search calls run as Ray tasks:
the states are cut into the same chunks of ``together`` instances that a local run makes, each chunk
is one task (one CPU, so PyTorch in the task uses one thread: Ray sets ``OMP_NUM_THREADS``), and
the results come back in input order, verified by replay where they were solved. A search that is
deterministic (no time limit hit) gives exactly the local run's solutions; ``seconds`` is measured
inside each task, so per-instance times stay honest.

Where it runs is Ray's choice: ``address=None`` connects to the cluster named by ``$RAY_ADDRESS``
or else starts a local Ray instance on this machine; ``"auto"`` joins the cluster this machine is
part of (``ray start --head`` / ``ray start --address=HEAD:6379``), and ``"ray://HEAD:10001"``
connects a remote client. Workers import ``puzzlezero`` by name, so every node needs it installed
(and the models it solves with, which ship in the package); a puzzle registered from a plugin must
be loadable there too (each task gets the driver's loaded plugins as an argument and loads them).

>>> from puzzlezero.ray_solve import solve_on_ray  # doctest: +SKIP
>>> [r.length for r in solve_on_ray("cube2", ["R U", "F"], heuristic="pdb")]  # doctest: +SKIP
[2, 1]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, Unpack

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.plugins import loaded_plugins
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make
from puzzlezero.solver import (
    SEARCHES,
    SolveOptions,
    SolveResult,
    SolveSettings,
    States,
    options_for,
    read_states,
)

__all__ = ["solve_on_ray", "ray_available"]

#: environment variables a worker needs to see the same puzzles, models and caches as the driver
FORWARDED_ENV = ("PUZZLEZERO_CACHE",)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise PuzzleError(
            'running on Ray needs the ray extra: pip install -c constraints.txt "puzzlezero[ray]"'
        ) from None
    return ray


def ray_available() -> bool:
    """Is Ray installed?"""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _connect(ray: Any, address: str | None) -> None:
    if ray.is_initialized():
        return
    env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
    try:
        ray.init(
            address=address,
            runtime_env={"env_vars": env} if env else None,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = address or os.environ.get("RAY_ADDRESS") or "a local instance"
        raise PuzzleError(f"cannot start or reach Ray at {where}: {exc}") from None


def _solve_chunk(
    puzzle: str, states: States, opts: SolveOptions, plugins: tuple[str, ...] = ()
) -> tuple[list[SolveResult], str]:
    """One Ray task: solve a chunk on this worker with the driver's resolved options (heuristics
    load once per worker process), after loading the driver's ``plugins`` (once per worker process)."""
    from puzzlezero.machine import hardware
    from puzzlezero.plugins import load_plugins
    from puzzlezero.solver import solve_many

    load_plugins(plugins)

    return solve_many(puzzle, states, opts, together=len(states)), hardware()


def solve_on_ray(
    puzzle: str | Puzzle,
    states: States | Iterable[Any] | np.ndarray,
    *,
    address: str | None = None,
    together: int | None = None,
    cpus_per_task: float = 1.0,
    on_results: Callable[[list[SolveResult]], None] | None = None,
    hardware: list[str] | None = None,
    opts: SolveOptions | None = None,
    **given: Unpack[SolveSettings],
) -> list[SolveResult]:
    """Solve ``states`` like :func:`~puzzlezero.solver.solve_many` (the same ``opts``, or settings
    ``given`` resolved here once, before any task; the same chunks of ``together``), one Ray task
    per chunk, each running the driver's resolved options as they are; ``on_results`` is called as
    chunks finish (in finishing order), the returned list is in input order. ``hardware``, if
    given, receives the description of each distinct machine that ran a task."""
    p = make(puzzle) if isinstance(puzzle, str) else puzzle
    opts = options_for(p, opts, given)  # names and numbers checked here, before any task
    if not cpus_per_task > 0:
        raise PuzzleError(f"cpus_per_task must be positive, got {cpus_per_task}")
    checked = read_states(p, states)  # read once here; each task takes its chunk as it is
    if not len(checked):
        return []
    k = together or SEARCHES[opts.search].together
    ray = _import_ray()
    _connect(ray, address)
    task = ray.remote(num_cpus=cpus_per_task, max_retries=0)(_solve_chunk)
    plugins = tuple(loaded_plugins())
    pending = {
        task.remote(p.name, checked.chunk(lo, lo + k), opts, plugins): lo for lo in range(0, len(checked), k)
    }
    done: dict[int, list[SolveResult]] = {}
    machines: dict[str, None] = {}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            lo = pending.pop(ref)
            try:
                results, machine = ray.get(ref)
            except ray.exceptions.RayTaskError as exc:  # the task's own error, e.g. a missing model
                cause = exc.as_instanceof_cause()
                if isinstance(cause, PuzzleError):
                    raise type(cause)(str(cause).splitlines()[-1]) from None
                raise
            done[lo] = results
            machines[machine] = None
            if on_results is not None:
                on_results(results)
    if hardware is not None:
        hardware.extend(machines)
    return [r for lo in sorted(done) for r in done[lo]]
