"""The solver pool's supervision, on real worker processes: a worker killed (SIGKILL) fails only
its own job and is replaced; a frozen one (SIGSTOP) is answered 504, stopped and replaced; a
client that floods the line waits behind itself while another is served; a worker that cannot
start is retried with a backoff, not in a loop; shutdown stops running searches (the fakes here never
look at the searches' clock, so their workers are killed: ``test_pool_recovery`` has the cooperative
stops).
Fake solvers from ``web_fakes`` (picklable, module level) stand in for the solver; the last test
drives a real ``puzzlezero serve`` with the shipped models."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.solver import resolve as solver_resolve
from puzzlezero.solver import resolve_options
from puzzlezero.web import ServerConfig
from puzzlezero.web.config import has_shipped_model
from puzzlezero.web.line import (
    ClientLimitError,
    NoWorkerError,
    QueueFullError,
    SolveTimeoutError,
    WorkerCrashedError,
)
from puzzlezero.web.pool import MAX_BACKOFF, SolvePool
from puzzlezero.web.worker import SolveJob, run_job, solve_one, warm_options
from tests.clock import until as wait_until
from tests.clock import until_async
from tests.web.live_server import connect_checked, free_port
from tests.web.web_fakes import address_limit, exit_at_start, forbid_resolving, hang_at_start, raising, sleepy

ROOT = Path(__file__).resolve().parents[2]
CUBE = pz.make("cube3")
ONE_TURN = CUBE.parse("R")
#: seconds a test waits for worker processes to start (spawn + imports on a busy 2-core machine)
START = 60.0


def job(seconds: float = 0.0, tag: str = "", **options: Any) -> SolveJob:
    return SolveJob("cube3", ONE_TURN, {"seconds": seconds, "tag": tag, **options})


def run_pool(
    body: Callable[[SolvePool], Awaitable[None]],
    solve_fn: Any = sleepy,
    initializer: Any = None,
    **config: Any,
) -> None:
    """Run ``body(pool)`` on a fresh event loop with started worker processes around ``solve_fn``."""
    config.setdefault("executor", "process")
    config.setdefault("workers", 1)

    async def main() -> None:
        pool = SolvePool(ServerConfig(**config), solve_fn, initializer)
        pool.start()
        try:
            await body(pool)
        finally:
            pool.close(5.0)

    asyncio.run(main())


async def until(check: Callable[[], bool], seconds: float = START) -> None:
    await until_async(check, seconds, every=0.02)


async def ready(pool: SolvePool, n: int) -> None:
    await until(lambda: pool.health()["ready"] >= n)


def gone(pid: int) -> bool:
    """Has process ``pid`` ended (and been reaped)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# ---- in-process: what a worker runs ------------------------------------------------------------
def test_run_job_reports_errors_by_name_and_never_lets_base_exceptions_through() -> None:
    out = run_job(SolveJob("cube3", ONE_TURN, {"tag": "x"}), sleepy)
    assert out["ok"]["tag"] == "x" and out["ok"]["pid"] == os.getpid()
    with pytest.raises(RuntimeError, match="the solve raised SystemExit"):
        run_job(job(error="SystemExit"), raising)
    oom = run_job(job(error="MemoryError"), raising)
    assert oom["kind"] == "MemoryBudgetError" and "ran out of memory" in oom["error"]
    p8 = pz.make("puzzle8")
    state = p8.apply_moves(p8.goal(), p8.parse_moves("D R"))
    value = run_job(SolveJob("puzzle8", state, {"heuristic": "misplaced", "optimal": False}, kind="value"))
    assert value["ok"]["heuristic"] == "misplaced" and value["ok"]["value"] > 0 and not value["ok"]["is_goal"]
    unknown = run_job(SolveJob("puzzle8", state, {"heuristic": "nope"}, kind="value"))
    assert unknown["kind"] == "UnknownNameError" and "unknown heuristic 'nope'" in unknown["error"]
    with pytest.raises(ValueError, match="job kind must be one of solve, value"):
        SolveJob("cube3", ONE_TURN, kind="train")  # type: ignore[arg-type]


def test_a_solve_job_carries_resolved_options_that_the_worker_runs_as_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    p8 = pz.make("puzzle8")
    state = p8.apply_moves(p8.goal(), p8.parse_moves("D R"))
    opts = resolve_options(p8, heuristic="misplaced", time_limit=5.0)
    job = SolveJob("puzzle8", state, opts)
    assert pickle.loads(pickle.dumps(job)).options == opts  # what a worker process receives
    assert job.time_limit == 5.0
    monkeypatch.setattr(solver_resolve, "resolve_options", lambda *a, **kw: pytest.fail("resolved again"))
    out = run_job(job)["ok"]
    assert out["solved"] and out["length"] == 2 and out["search"] == opts.search
    with pytest.raises(TypeError, match="a solve job carries resolved SolveOptions, got dict"):
        run_job(SolveJob("puzzle8", state, {"heuristic": "misplaced"}))
    with pytest.raises(TypeError, match="a value job carries the keywords of value"):
        SolveJob("puzzle8", state, opts, kind="value")


def test_the_workers_warm_up_with_options_the_server_resolved() -> None:
    warm = dict(warm_options(ServerConfig(models={"lightsout7": "/srv/models/lo7"})))
    assert warm["lightsout7"] == resolve_options(pz.make("lightsout7"), model="/srv/models/lo7")
    assert warm["cube3"] == resolve_options(CUBE) and warm["cube3"].fallback == "group"


def test_the_pool_settings_are_checked() -> None:
    from puzzlezero.errors import PuzzleError

    with pytest.raises(PuzzleError, match="client_waiting must be 0"):
        ServerConfig(client_waiting=-1)
    with pytest.raises(PuzzleError, match="overrun_margin must be 0 or more"):
        ServerConfig(overrun_margin=-1.0)
    assert ServerConfig(worker_memory_mib=0).worker_memory_limit == 0
    assert ServerConfig(workers=2).worker_memory_limit >= 4096  # half the machine, at least 4 GiB


# ---- real worker processes -----------------------------------------------------------------------
def test_a_killed_worker_fails_only_its_own_job_and_is_replaced() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 2)
        first_pids = set(pool.health()["pids"])
        fds = len(os.listdir("/proc/self/fd"))
        doomed = pool.submit(job(60.0, "doomed"), 120.0, "a")
        survivor = pool.submit(job(3.0, "survivor"), 120.0, "b")
        await until(lambda: doomed.status == survivor.status == "running")
        assert {doomed.worker_pid, survivor.worker_pid} == first_pids
        os.kill(doomed.worker_pid, signal.SIGKILL)  # type: ignore[arg-type]
        with pytest.raises(WorkerCrashedError, match="died \\(killed by SIGKILL"):
            await pool.result(doomed)
        survived = await pool.result(survivor)  # the other worker's job finishes
        assert survived["ok"]["tag"] == "survivor" and survived["ok"]["pid"] == survivor.worker_pid
        await ready(pool, 2)  # a new worker took the dead one's place
        health = pool.health()
        assert health["ok"] and health["restarts"] == 1 and health["workers_alive"] == 2
        assert doomed.worker_pid not in health["pids"] and gone(doomed.worker_pid)  # type: ignore[arg-type]
        after = [pool.submit(job(0.0, f"after{i}"), 60.0, f"c{i}") for i in range(2)]
        pids = {(await pool.result(t))["ok"]["pid"] for t in after}
        assert pids <= set(health["pids"]) and pool.completed == 4
        assert len(os.listdir("/proc/self/fd")) == fds  # the dead worker's pipe and handle were freed

    run_pool(body, workers=2)


def test_a_frozen_worker_is_answered_504_then_stopped_and_replaced() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        frozen = pool.submit(job(60.0, "frozen"), 1.0)
        await until(lambda: frozen.status == "running")
        pid = frozen.worker_pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        with pytest.raises(SolveTimeoutError, match="did not finish within 1 s of solving"):
            await pool.result(frozen)
        health = pool.health()  # answered, but it still holds the only worker for the margin
        assert health["overrun"] == 1 and health["busy"] == 1 and not health["ok"]
        queued = pool.submit(job(0.0, "next"), 60.0)  # waits for the replacement
        out = await pool.result(queued)
        assert out["ok"]["tag"] == "next" and out["ok"]["pid"] != pid
        assert gone(pid) and pool.health()["ok"] and pool.health()["restarts"] == 1

    run_pool(body, overrun_margin=2.0)


def test_a_flooding_client_waits_behind_itself_while_another_is_served() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 2)
        flood = [pool.submit(job(60.0, f"a{i}"), 120.0, "10.0.0.1") for i in range(5)]
        # no worker idles while work waits: with nobody else in line the flood takes both
        assert [t.status for t in flood] == ["running", "running", "queued", "queued", "queued"]
        with pytest.raises(ClientLimitError) as refused:  # 3 waiting: its share
            pool.submit(job(0.0, "a5"), 120.0, "10.0.0.1")
        assert isinstance(refused.value, QueueFullError) and refused.value.retry_after >= 1
        assert "3 solves waiting" in str(refused.value) and "--client-waiting" in str(refused.value)
        with pytest.raises(ClientLimitError):
            pool.admit("10.0.0.1")
        pool.admit("10.0.0.2")  # another client is admitted ...
        other = pool.submit(job(0.0, "b"), 60.0, "10.0.0.2")
        pool.admit("")  # no client: only the line's own bound
        # the fake never looks at the clock: its worker is killed after the grace period
        assert pool.cancel(flood[0]) and flood[0].status == "cancelled"
        out = await pool.result(other)  # ... and served first on the worker that frees
        assert out["ok"]["tag"] == "b" and other.started is not None
        assert flood[2].started is None or flood[2].started >= other.started
        await until(lambda: flood[2].status == "running")  # then the client's next job takes it
        assert [pool.estimate(t).position for t in flood[3:]] == [1, 2]  # they kept their places
        assert pool.health()["restarts"] == 1

    run_pool(body, workers=2, client_waiting=3, client_running=1, queue=10)


def test_a_worker_that_cannot_start_is_retried_with_a_backoff_not_in_a_loop() -> None:
    async def body(pool: SolvePool) -> None:
        loop, probes = asyncio.get_running_loop(), []  # the delay of every probe the pool schedules
        call_later = loop.call_later

        def noting(delay: float, callback: Callable[..., Any], *args: Any) -> asyncio.TimerHandle:
            if getattr(callback, "__name__", "") == "_probe":
                probes.append(delay)
            return call_later(delay, callback, *args)

        loop.call_later = noting  # type: ignore[method-assign]
        waiting = pool.submit(job(0.0, "early"), 60.0)  # admitted while the workers start up
        with pytest.raises(
            NoWorkerError, match="no solver worker is running: starting failed \\(SystemExit: 7\\)"
        ):
            await pool.result(waiting)
        health = pool.health()
        assert not health["ok"] and health["ready"] == 0 and health["start_failures"] >= 1
        assert health["last_error"] == "SystemExit: 7" and health["retry_in"] is not None
        with pytest.raises(NoWorkerError, match="; retrying in [0-9]+ s$"):
            pool.admit("someone")
        await asyncio.sleep(3.0)
        # backoff 0.25 s doubling per failure: each probe starts one worker, after twice the
        # delay of the one before; never a respawn loop
        assert probes and probes[0] >= 0.25
        assert all(b == min(MAX_BACKOFF, 2 * a) for a, b in zip(probes, probes[1:], strict=False))
        assert 2 <= pool.spawned <= 2 + len(probes)
        assert pool.health()["workers_alive"] <= 1

    run_pool(body, initializer=exit_at_start, workers=2, respawn_backoff=0.25)


def test_a_worker_whose_start_up_hangs_is_stopped_and_counted_as_a_failed_start() -> None:
    async def body(pool: SolvePool) -> None:
        first = pool.health()["pids"]
        await until(lambda: pool.health()["start_failures"] >= 1)
        health = pool.health()
        assert not health["ok"] and health["ready"] == 0
        assert health["last_error"] == "it was not ready 1 s after it was started"
        await until(lambda: all(gone(pid) for pid in first))  # stopped, not left hanging
        with pytest.raises(NoWorkerError, match="no solver worker is running: starting failed"):
            pool.admit("someone")

    run_pool(body, initializer=hang_at_start, start_timeout=1.0, respawn_backoff=30.0)


def test_close_stops_a_running_search_within_its_timeout() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        long = pool.submit(job(60.0, "long"), 120.0)
        queued = pool.submit(job(0.0, "queued"), 120.0)
        await until(lambda: long.status == "running")
        pid = long.worker_pid
        assert pid is not None
        worker = next(w.process for w in pool._workers if w.pid == pid)
        pool.close(3.0)
        # its 60 s search (which never looks at the clock) was killed, not waited for
        assert worker is not None and worker.exitcode == -signal.SIGKILL
        assert queued.status == "cancelled" and gone(pid)
        with pytest.raises(WorkerCrashedError, match="shut down"):
            await long.outcome

    run_pool(body)


def test_a_graceful_close_answers_what_ends_in_time() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 2)
        short = pool.submit(job(0.5, "short"), 60.0, "a")
        long = pool.submit(job(60.0, "long"), 60.0, "b")
        await until(lambda: short.status == long.status == "running")
        worker = next(w.process for w in pool._workers if w.pid == long.worker_pid)
        closing = asyncio.ensure_future(pool.aclose(4.0))
        await asyncio.sleep(0)
        with pytest.raises(WorkerCrashedError, match="shutting down"):
            pool.admit("c")  # admission ends at once
        await closing
        # the long search was killed once the short one had ended, not waited for
        assert worker is not None and worker.exitcode == -signal.SIGKILL
        assert (await short.outcome)["ok"]["tag"] == "short"
        with pytest.raises(WorkerCrashedError, match="shut down"):
            await long.outcome
        assert gone(long.worker_pid)  # type: ignore[arg-type]

    run_pool(body, workers=2)


def test_a_job_that_raises_system_exit_leaves_its_worker_serving_and_one_out_of_memory_recycles_it() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        limit = (await pool.solve(job(), 60.0))["ok"]
        assert limit["seconds"] == 1024.0  # RLIMIT_AS in MiB, as configured
        with pytest.raises(RuntimeError, match="the solve raised SystemExit"):
            await pool.solve(job(error="SystemExit"), 60.0)
        same = (await pool.solve(job(), 60.0))["ok"]
        assert same["pid"] == limit["pid"] and pool.spawned == 1  # the same worker, never replaced
        oom = await pool.solve(job(error="allocate"), 60.0)
        assert oom["kind"] == "MemoryBudgetError" and "each worker may map 1024 MiB" in oom["error"]
        again = (await pool.solve(job(), 60.0))["ok"]  # a fresh worker: the old one stopped cleanly
        assert again["pid"] != limit["pid"] and again["seconds"] == 1024.0
        health = pool.health()
        assert health["recycled"] == 1 and health["restarts"] == 0 and health["kills"] == 0
        p8 = pz.make("puzzle8")
        state = p8.apply_moves(p8.goal(), p8.parse_moves("D R"))
        value = await pool.solve(
            SolveJob("puzzle8", state, {"heuristic": "misplaced", "optimal": False}, "value"), 60
        )
        assert (
            value["ok"]["puzzle"] == "puzzle8" and value["ok"]["value"] > 0
        )  # cost_to_go.value in the worker

    run_pool(body, solve_fn=address_limit, worker_memory_mib=1024)


def test_a_worker_process_solves_without_resolving_options() -> None:
    """The real solve of a worker process (where resolving options raises) runs the job's options
    as the server resolved them; a job carrying settings instead fails as a server bug."""
    p8 = pz.make("puzzle8")
    state = p8.apply_moves(p8.goal(), p8.parse_moves("D R"))
    opts = resolve_options(p8, heuristic="misplaced", time_limit=5.0)

    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        out = (await pool.solve(SolveJob("puzzle8", state, opts), 60.0))["ok"]
        assert out["solved"] and out["length"] == 2
        with pytest.raises(RuntimeError, match="a solve job carries resolved SolveOptions"):
            await pool.solve(SolveJob("puzzle8", state, {"heuristic": "misplaced"}), 60.0)

    run_pool(body, solve_fn=solve_one, initializer=forbid_resolving)


# ---- a real server -------------------------------------------------------------------------------
def _call(port: int, method: str, path: str, body: Any = None, source: str = "127.0.0.1") -> tuple[int, Any]:
    """One request from the loopback address ``source`` (so two sources are two clients)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120, source_address=(source, 0))
    try:
        connect_checked(conn)
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


def _health(port: int) -> dict[str, Any]:
    try:
        return _call(port, "GET", "/healthz")[1] or {}
    except OSError:
        return {}


def _wait(check: Callable[[], bool], seconds: float, what: str) -> None:
    wait_until(check, seconds, what, every=0.05)


@pytest.mark.slow
@pytest.mark.skipif(
    not all(has_shipped_model(n) for n in ("cube3", "puzzle15")),
    reason="the shipped cube3 and puzzle15 models are needed",
)
def test_a_real_server_survives_a_killed_and_a_frozen_worker(tmp_path: Path) -> None:
    """``puzzlezero serve`` with its real pool and solver: while a cube3 and a puzzle15 solve run,
    one worker is killed (SIGKILL) and the other frozen (SIGSTOP). The first request gets 503
    naming the signal, the second 504 once its limit passes, both workers are replaced, the
    server then solves a new cube, and it stops within its shutdown timeout, workers and all."""
    port = free_port()
    exe = Path(sys.executable).with_name("puzzlezero")
    server = subprocess.Popen(
        [str(exe), "serve", "--port", str(port), "--workers", "2", "--grace-seconds", "2",
         "--overrun-margin", "2", "--shutdown-timeout", "5", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "server.log", "wb"),
    )  # fmt: skip
    try:
        _wait(lambda: _health(port).get("ready") == 2, 180, "two ready workers")
        first_pids = _worker_pids(server.pid)  # /healthz shows no process ids
        cube = {"puzzle": "cube3", "state": "R U2 F' L D2 B R' U F2 L' D B2 R U' F L2 D' B' R2 U F' L D'"}
        p15 = pz.make("puzzle15")
        tiles = {"puzzle": "puzzle15", "state": p15.format(p15.scramble(np.random.default_rng(5), 1, 400)[0])}
        answers: dict[str, tuple[int, Any]] = {}
        threads = [
            threading.Thread(
                target=lambda k=k, b=b, s=s: answers.__setitem__(
                    k, _call(port, "POST", "/api/solve", {**b, "time_limit": 6}, s)
                )
            )
            for k, b, s in (("cube3", cube, "127.0.0.1"), ("puzzle15", tiles, "127.0.0.2"))
        ]
        for t in threads:
            t.start()
        _wait(lambda: _health(port).get("busy") == 2, 30, "both solves running")
        killed, frozen = first_pids
        os.kill(killed, signal.SIGKILL)
        os.kill(frozen, signal.SIGSTOP)
        for t in threads:
            t.join(120)
        statuses = sorted((status, body["detail"]) for status, body in answers.values())
        assert [s for s, _ in statuses] == [503, 504], statuses
        assert "died (killed by SIGKILL" in statuses[0][1] and "did not finish within 8 s" in statuses[1][1]
        _wait(
            lambda: (lambda h: h.get("restarts") == h.get("ready") == 2)(_health(port)),
            180,
            "two new workers",
        )
        health, pids = _health(port), _worker_pids(server.pid)
        assert health["ok"] and health["restarts"] == 2 and len(pids) == 2
        assert not set(pids) & {killed, frozen}
        assert gone(killed) and gone(frozen)
        status, solved = _call(
            port, "POST", "/api/solve", {"puzzle": "cube3", "state": "R U F' L", "time_limit": 30}
        )
        assert status == 200 and solved["solved"] and solved["length"] == 4
        server.send_signal(signal.SIGTERM)
        server.wait(30)  # a generous wait: its shutdown timeout (5 s) stops the workers
        assert all(gone(pid) for pid in pids)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
        for pid in _children_of(server.pid):
            os.kill(pid, signal.SIGKILL)


def _worker_pids(pid: int) -> list[int]:
    """The live worker processes of server ``pid``: its children started by ``multiprocessing``'s
    spawn (not its resource tracker), from ``/proc``."""
    out = []
    for child in _children_of(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"spawn_main" in cmdline and state != "Z":
            out.append(child)
    return sorted(out)


def _children_of(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from ``/proc``)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out
