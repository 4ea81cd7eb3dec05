"""The solver pool always recovers, and cancels cost nothing, on real worker processes: a worker
process that cannot be started (``EMFILE``) is retried with a backoff while admission answers 503
saying why; workers that keep crashing back off too; a cancelled search stops at its next look at
the clock and its worker takes the next job (a storm of cancels restarts nothing), while one that
never looks is killed after the grace period; workers are recycled cleanly; a SIGTERM from outside
does not stop a worker, and a worker dies with its parent. Fake solvers from ``web_fakes`` stand
in for the solver except where the real search is the point."""

from __future__ import annotations

import asyncio
import errno
import os
import select
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.search import clock
from puzzlezero.solver import resolve_options
from puzzlezero.web import ServerConfig, create_app
from puzzlezero.web import pool as pool_module
from puzzlezero.web.errors import http_error
from puzzlezero.web.line import NoWorkerError, WorkerCrashedError
from puzzlezero.web.pool import SolvePool
from puzzlezero.web.worker import SolveJob, solve_one
from tests.clock import FakeClock
from tests.clock import until as wait_until
from tests.conftest import load_script
from tests.web.live_server import free_port
from tests.web.test_web_supervision import (
    START,
    _call,
    _health,
    gone,
    job,
    ready,
    run_pool,
    until,
)
from tests.web.web_fakes import heeds_cancel, ignores_cancel

ROOT = Path(__file__).resolve().parents[2]
EMFILE = OSError(errno.EMFILE, os.strerror(errno.EMFILE))


def failing_starts(monkeypatch: pytest.MonkeyPatch, errors: list[BaseException]) -> list[float]:
    """Make the next ``len(errors)`` worker process starts raise those errors; returns the list
    of when each start was tried (``time.monotonic()``)."""
    real, tried = SpawnProcess.start, []

    def start(self: SpawnProcess) -> None:
        tried.append(time.monotonic())
        if errors:
            raise errors.pop(0)
        real(self)

    monkeypatch.setattr(SpawnProcess, "start", start)
    return tried


def dead(pid: int) -> bool:
    """Has process ``pid`` ended (reaped, or a zombie nobody has reaped yet)?"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return gone(pid)
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def workers_of(pid: int) -> list[int]:
    """The worker processes of the server ``pid``, as the soak script finds them."""
    return load_script("scripts/soak.py").worker_pids(pid)


def _with_root_on_path() -> dict[str, str]:
    """The environment of a child Python that imports this repository's ``tests`` package."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def real_search(seconds: float = 30.0) -> SolveJob:
    """A real batch weighted A* search on a 500-move puzzle24 scramble that runs its whole time
    limit (no fallback): it looks at the clock between its batches."""
    p = pz.make("puzzle24")
    state = p.scramble(np.random.default_rng(1), 1, 500)[0]
    return SolveJob(
        "puzzle24", state, resolve_options(p, heuristic="misplaced", time_limit=seconds, fallback=False)
    )


# ---- the clock's stop check, in-process ----------------------------------------------------------
def test_a_stop_check_makes_every_deadline_come_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeClock(start=100.0)
    monkeypatch.setattr(clock, "time", fake)
    asked = [False]
    assert clock.stop_when(lambda: asked[0]) is None
    try:
        before = clock.deadline_after(30.0)  # made before the stop: it comes when the stop is asked
        assert before == 130.0 and not clock.passed(before) and clock.seconds_left(before) == 30.0
        asked[0] = True
        assert clock.passed(before) and clock.seconds_left(before) == 0.0
        after = clock.deadline_after(30.0)  # made while stopping: it is the present
        assert clock.passed(after) and clock.passed(clock.deadline_after(None))
        assert clock.time_limit_until(after) == clock.MIN_TIME_LIMIT
        asked[0] = False  # the next job: the clock reads true again
        assert clock.now() == 100.0 and not clock.passed(before)
    finally:
        clock.stop_when(None)
    assert clock.now() == 100.0 and clock.deadline_after(5.0) == 105.0


# ---- a worker process that cannot be started ----------------------------------------------------
def test_a_failed_spawn_backs_off_and_retries_while_admission_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tried = failing_starts(monkeypatch, [EMFILE, OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))])

    async def body(pool: SolvePool) -> None:
        assert len(tried) == 1 and pool.spawned == 0  # start() did not raise: the failure was counted
        health = pool.health()
        assert not health["ok"] and health["start_failures"] == 1 and health["retry_in"] is not None
        assert health["last_error"] == "Too many open files" and health["workers_alive"] == 0
        with pytest.raises(NoWorkerError) as refused:
            pool.admit("someone")
        assert str(refused.value) == (
            "no solver worker is running: starting failed (Too many open files); retrying in 1 s"
        )
        assert refused.value.retry_after == 1 and http_error(refused.value)[0] == 503
        await until(lambda: len(tried) >= 2)
        with pytest.raises(NoWorkerError, match=r"starting failed \(Resource temporarily unavailable\)"):
            pool.admit("someone")
        await ready(pool, 1)  # the third try starts a worker
        # each try waited at least its backoff, which doubled (0.3 s, then 0.6 s); lower bounds only,
        # since a loaded machine can only make the measured waits longer (the loop may fire a timer a
        # clock tick early)
        assert len(tried) == 3 and tried[1] - tried[0] >= 0.29 and tried[2] - tried[1] >= 0.59
        out = await pool.solve(job(0.0, "served"), 60.0)
        assert out["ok"]["tag"] == "served"
        health = pool.health()
        assert health["ok"] and health["start_failures"] == 0 and health["restarts"] == 0
        assert pool.spawned == 1

    run_pool(body, respawn_backoff=0.3)


def test_a_server_whose_worker_cannot_be_started_answers_503_then_serves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fastapi.testclient import TestClient

    failing_starts(monkeypatch, [EMFILE])
    p8 = pz.make("puzzle8")
    body = {"puzzle": "puzzle8", "state": p8.format(p8.apply_moves(p8.goal(), p8.parse_moves("D R"))),
            "heuristic": "misplaced"}  # fmt: skip
    config = ServerConfig(executor="process", workers=1, respawn_backoff=1.0, allowed_hosts=("testserver",))
    with TestClient(create_app(config, solve_fn=solve_one), raise_server_exceptions=False) as c:
        refused = c.post("/api/solve", json=body)
        assert refused.status_code == 503, refused.text
        assert refused.json()["detail"] == (
            "no solver worker is running: starting failed (Too many open files); retrying in 1 s"
        )
        assert refused.headers["Retry-After"] == "1"
        assert c.get("/healthz").status_code == 503
        wait_until(lambda: c.get("/healthz").json()["ready"] == 1, START, "a worker after the backoff")
        solved = c.post("/api/solve", json=body)
        assert solved.status_code == 200 and solved.json()["solved"] and solved.json()["length"] == 2


def test_workers_that_keep_crashing_are_replaced_after_a_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "CRASH_BUDGET", 1)

    async def body(pool: SolvePool) -> None:
        for crash in (1, 2):
            await ready(pool, 1)
            doomed = pool.submit(job(60.0, "doomed"), 120.0)
            await until(lambda t=doomed: t.status == "running")  # type: ignore[misc]
            os.kill(doomed.worker_pid, signal.SIGKILL)  # type: ignore[arg-type]
            with pytest.raises(WorkerCrashedError, match="killed by SIGKILL"):
                await pool.result(doomed)
            if crash == 1:  # within the budget: replaced at once
                assert pool.spawned == 2 and pool.health()["crashes"] == 1
        health = pool.health()  # beyond the budget: the replacement waits for the backoff
        assert not health["ok"] and health["crashes"] == 2 and health["retry_in"] is not None
        assert pool.spawned == 2 and health["workers_alive"] == 0
        with pytest.raises(
            NoWorkerError, match=r"^no solver worker is running: 2 workers crashed within 60 s"
        ):
            pool.admit("someone")
        await ready(pool, 1)
        assert pool.spawned == 3 and (await pool.solve(job(0.0, "after"), 60.0))["ok"]["tag"] == "after"

    run_pool(body, respawn_backoff=0.5)


# ---- cancels --------------------------------------------------------------------------------------
def test_a_storm_of_cancels_of_real_searches_restarts_no_worker() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        pid = pool.health()["pids"][0]
        for _ in range(20):
            ticket = pool.submit(real_search(), 60.0)
            await until(lambda t=ticket: t.status == "running")  # type: ignore[misc]
            assert pool.cancel(ticket) and ticket.status == "cancelled"  # settled for the client at once
            assert ticket.worker_pid == pid
        p8 = pz.make("puzzle8")
        state = p8.apply_moves(p8.goal(), p8.parse_moves("D R"))
        out = await pool.solve(SolveJob("puzzle8", state, resolve_options(p8, heuristic="misplaced")), 60.0)
        assert out["ok"]["solved"] and out["ok"]["length"] == 2
        health = pool.health()
        assert health["restarts"] == 0 and health["kills"] == 0 and health["cancels"] == 20
        assert pool.spawned == 1 and health["pids"] == [pid] and pool.completed == 21

    run_pool(body, solve_fn=solve_one, cancel_grace=5.0)


def test_a_cancelled_search_stops_and_its_worker_takes_the_next_job_at_once() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        long = pool.submit(job(60.0, "long"), 120.0)
        following = pool.submit(job(0.0, "next"), 60.0)
        await until(lambda: long.status == "running")
        asked = time.monotonic()
        assert pool.cancel(long)
        out = await pool.result(following)
        # the grace period is 30 s: only a cooperative stop answers the next job sooner
        assert out["ok"]["pid"] == long.worker_pid and time.monotonic() - asked < 10.0
        assert pool.health()["kills"] == 0 and pool.spawned == 1

    run_pool(body, solve_fn=heeds_cancel, cancel_grace=30.0)


def test_a_search_that_ignores_a_cancel_is_killed_after_the_grace_period_and_replaced() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        stuck = pool.submit(job(60.0, "stuck"), 120.0)
        await until(lambda: stuck.status == "running")
        pid = stuck.worker_pid
        assert pid is not None
        assert pool.cancel(stuck) and stuck.status == "cancelled"
        assert not gone(pid) and pool.health()["busy"] == 1  # not killed before the grace period
        await until(lambda: gone(pid))
        assert pool.health()["kills"] == 1
        out = await pool.solve(job(0.0, "after"), 60.0)
        assert out["ok"]["tag"] == "after" and out["ok"]["pid"] != pid
        assert pool.health()["restarts"] == 1

    run_pool(body, solve_fn=ignores_cancel, cancel_grace=1.0)


def test_a_worker_killed_after_its_job_was_answered_is_a_kill_not_a_failed_start() -> None:
    """A cancel or an overrun can be answered in the moment the pool kills the worker: the pool then
    sees an idle worker it stopped exit. That is one kill and one replacement, not a worker that
    could not start (no failed start counted, no backoff, admission open)."""

    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        (worker,) = [w for w in pool._workers if w.ready]
        pid = worker.pid
        assert pid is not None and worker.ticket is None
        pool._stop(worker, "cancelled")  # as _unheeded does, its job's answer already read
        await until(lambda: gone(pid))
        await ready(pool, 1)
        health = pool.health()
        assert health["kills"] == 1 and health["start_failures"] == 0 and pool.last_error is None
        out = await pool.solve(job(0.0, "after"), 60.0)
        assert out["ok"]["tag"] == "after" and out["ok"]["pid"] != pid

    run_pool(body, solve_fn=heeds_cancel)


# ---- recycling ------------------------------------------------------------------------------------
def test_a_worker_is_recycled_cleanly_after_its_jobs() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        first = [(await pool.solve(job(0.0, f"j{i}"), 60.0))["ok"]["pid"] for i in range(2)]
        assert first[0] == first[1]
        third = (await pool.solve(job(0.0, "j2"), 60.0))["ok"]["pid"]
        assert third != first[0]
        await until(lambda: gone(first[0]), 5.0)  # it exited on its own: the kill comes after 10 s
        health = pool.health()
        assert health["recycled"] == 1 and health["restarts"] == 0 and health["kills"] == 0

    run_pool(body, recycle_after=2)


# ---- signals ----------------------------------------------------------------------------------------
def test_a_sigterm_from_outside_does_not_stop_a_worker() -> None:
    async def body(pool: SolvePool) -> None:
        await ready(pool, 1)
        ticket = pool.submit(job(1.0, "busy"), 60.0)
        await until(lambda: ticket.status == "running")
        pid = ticket.worker_pid
        assert pid is not None
        os.kill(pid, signal.SIGTERM)  # as a service manager signals the whole process group
        out = await pool.result(ticket)
        assert out["ok"]["tag"] == "busy" and out["ok"]["pid"] == pid
        os.kill(pid, signal.SIGTERM)  # idle
        await asyncio.sleep(0.5)
        assert not gone(pid) and (await pool.solve(job(0.0, "idle"), 60.0))["ok"]["pid"] == pid
        assert pool.health()["restarts"] == 0 and pool.spawned == 1

    run_pool(body)


PARENT = """
import asyncio
import puzzlezero as pz
from puzzlezero.web import ServerConfig
from puzzlezero.web.pool import SolvePool
from puzzlezero.web.worker import SolveJob
from tests.web.web_fakes import sleepy

async def main():
    pool = SolvePool(ServerConfig(executor="process", workers=1), sleepy)
    pool.start()
    job = SolveJob("cube3", pz.make("cube3").parse("R"), {"seconds": 120.0})
    ticket = pool.submit(job, 300.0)
    while ticket.status != "running":
        await asyncio.sleep(0.02)
    print(ticket.worker_pid, flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_worker_dies_with_its_parent() -> None:
    """A server killed with SIGKILL leaves no worker behind, even one in the middle of a search
    (which does not read its pipe, so it would not see the parent go)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    pid = None
    try:
        assert parent.stdout is not None
        ready_to_read, _, _ = select.select([parent.stdout], [], [], START)
        assert ready_to_read, "the parent's worker did not start a job"
        pid = int(parent.stdout.readline())
        assert not dead(pid)
        parent.kill()
        parent.wait(10)
        wait_until(lambda: dead(pid), 10.0, "the orphaned worker's death")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        if pid is not None and not dead(pid):
            os.kill(pid, signal.SIGKILL)


SERVER = """
import sys
from puzzlezero.cli.serve_cmds import run_server
from puzzlezero.web import ServerConfig, create_app
from tests.web.web_fakes import undoes_slowly

app = create_app(ServerConfig(workers=1, shutdown_timeout=10.0), solve_fn=undoes_slowly)
run_server(app, "127.0.0.1", int(sys.argv[1]), "warning")
"""


def test_a_server_signalled_as_a_process_group_drains_its_running_solve() -> None:
    """SIGTERM to the server's whole process group (as systemd stops a service): the worker goes
    on, the running solve is answered in full, and then the server and its worker exit."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port)], cwd=ROOT, env=_with_root_on_path(),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    answers: list[tuple[int, Any]] = []
    try:
        wait_until(lambda: _health(port).get("ready") == 1, START, "a ready worker")
        (pid,) = workers_of(server.pid)  # /healthz names no process ids
        asking = threading.Thread(
            target=lambda: answers.append(
                _call(port, "POST", "/api/solve", {"puzzle": "cube3", "state": "R"})
            )
        )
        asking.start()
        wait_until(lambda: _health(port).get("busy") == 1, 30, "the solve running")
        os.killpg(server.pid, signal.SIGTERM)  # the server, its worker, everything in the group
        asking.join(30)
        assert answers and answers[0][0] == 200, answers
        assert answers[0][1]["solution"] == ["R'"] and answers[0][1]["seconds"] >= 1.4
        assert server.wait(20) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once stopped
        wait_until(lambda: dead(pid), 10.0, "the worker's exit")
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


# ---- shutdown ---------------------------------------------------------------------------------------
def test_close_stops_a_cooperative_search_cleanly_and_starts_no_replacement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A graceful close of 8 s with two 60-s searches running: the first worker crashes while the
    pool drains (no replacement is started), the second is asked to stop after the drain and exits
    cleanly in the seconds kept for it (2 s, with KILL_AFTER 3 s and cancel_grace 5 s: a loaded
    machine's slow process exit is not taken for a hang), all within the timeout plus KILL_AFTER."""
    monkeypatch.setattr(pool_module, "KILL_AFTER", 3.0)

    async def body(pool: SolvePool) -> None:
        await ready(pool, 2)
        a = pool.submit(job(60.0, "a"), 120.0, "a")
        b = pool.submit(job(60.0, "b"), 120.0, "b")
        await until(lambda: a.status == b.status == "running")
        procs = {w.pid: w.process for w in pool._workers}
        began = time.monotonic()
        closing = asyncio.ensure_future(pool.aclose(8.0))
        await asyncio.sleep(0.2)
        os.kill(a.worker_pid, signal.SIGKILL)  # type: ignore[arg-type]  # a crash while draining
        await asyncio.sleep(0.5)
        assert pool.spawned == 2  # no replacement once closing has begun
        await closing
        assert b.worker_pid is not None and procs[b.worker_pid] is not None
        assert procs[b.worker_pid].exitcode == 0  # type: ignore[union-attr]  # asked to stop: it exited
        assert time.monotonic() - began < 8.0 + 3.0 and pool.spawned == 2  # within its timeout
        with pytest.raises(WorkerCrashedError, match="shut down"):
            await b.outcome

    run_pool(body, solve_fn=heeds_cancel, workers=2, cancel_grace=5.0)
