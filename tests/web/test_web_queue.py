"""The solver pool's waiting line and the job API: FIFO order and places, refusal only beyond the
bound, time in line not counted against a solve's budget, estimates from measured durations,
bounded memory for ended jobs. Fake solvers in threads, on a fake clock where a test measures or
waits out time; every test takes a second or two."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import pytest

from tests.clock import FakeClock, until_async
from tests.clock import until as poll_until

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import puzzlezero as pz  # noqa: E402
from puzzlezero.puzzles.base import Puzzle  # noqa: E402
from puzzlezero.solver import SolveOptions  # noqa: E402
from puzzlezero.web import ServerConfig  # noqa: E402
from puzzlezero.web import line as line_module  # noqa: E402
from puzzlezero.web import pool as pool_module  # noqa: E402
from puzzlezero.web.jobs import JobStore  # noqa: E402
from puzzlezero.web.line import QueueFullError, SolveTimeoutError, Ticket  # noqa: E402
from puzzlezero.web.pool import SolvePool  # noqa: E402
from puzzlezero.web.wait_estimate import RecentDurations, start_times  # noqa: E402
from puzzlezero.web.worker import SolveJob  # noqa: E402
from tests.web.test_web import FakeResult, bfs_solve, client_for  # noqa: E402

CUBE = pz.make("cube3")
ONE_TURN = CUBE.parse("R")


class Gated:
    """A fake solver that notes the order jobs start in (their ``tag`` option) and runs each until
    its gate opens, or for ``seconds`` when the job names them (the jobs of these tests carry a
    dict of their own, which the pool hands to its solver as it is). With a fake ``clock`` a timed
    solve moves it by its ``seconds`` and returns at once; without one it really sleeps them. With
    ``hold`` a timed solve first waits for its gate."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.clock = clock
        self.started: list[str] = []
        self.options: list[dict[str, Any]] = []
        self.gates: dict[str, threading.Event] = {}
        self.lock = threading.Lock()

    def gate(self, tag: str) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(tag, threading.Event())

    def __call__(
        self, puzzle: Puzzle, state: np.ndarray, opts: dict[str, Any] | SolveOptions, on_solution: Any = None
    ) -> FakeResult:
        mine = opts if isinstance(opts, dict) else {}  # a request's job carries SolveOptions: no tag
        tag, seconds = mine.get("tag", ""), mine.get("seconds")
        with self.lock:
            self.started.append(tag)
            self.options.append(opts)
        if seconds is None or mine.get("hold"):
            assert self.gate(tag).wait(20)
        if seconds is not None:
            (self.clock or time).sleep(seconds)
        return bfs_solve(puzzle, state)


def job(tag: str, time_limit: float = 20.0, **options: Any) -> SolveJob:
    return SolveJob("cube3", ONE_TURN, {"time_limit": time_limit, "tag": tag, **options})


def run_pool(fake: Gated, body: Callable[[SolvePool], Awaitable[None]], **config: Any) -> None:
    """Run ``body(pool)`` on a fresh event loop with a started thread pool around ``fake``. Where
    ``fake`` moves a fake clock, the loop's own time is that clock too: the pool's timers (a solve's
    wall limit) fall due only when the test's solves move it, however slow the machine."""
    config.setdefault("executor", "thread")
    config.setdefault("workers", 1)

    async def main() -> None:
        if fake.clock is not None:
            asyncio.get_running_loop().time = fake.clock.monotonic  # type: ignore[method-assign]
        pool = SolvePool(ServerConfig(**config), fake)
        pool.start()
        try:
            await body(pool)
        finally:
            for gate in fake.gates.values():
                gate.set()
            pool.close()

    asyncio.run(main())


def use_clock(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    """Put ``clock`` in place of ``time`` where the pool reads it: the supervisor, and the line's
    tickets (when each was submitted)."""
    monkeypatch.setattr(pool_module, "time", clock)
    monkeypatch.setattr(line_module, "time", clock)


async def until(check: Callable[[], bool], seconds: float = 30.0) -> None:
    await until_async(check, seconds)


# ---- the estimate, by hand -------------------------------------------------------------------
def test_start_times_serve_the_line_in_order_on_the_first_free_worker() -> None:
    assert start_times([0.0], [5.0, 5.0, 5.0]) == [0.0, 5.0, 10.0]
    # workers free in 4 s and 10 s; jobs of 6 s: 4 (worker A), 10 (B), 10 (A again at 4+6)
    assert start_times([10.0, 4.0], [6.0, 6.0, 6.0, 6.0]) == [4.0, 10.0, 10.0, 16.0]
    assert start_times([-3.0, 0.0], [2.0]) == [0.0]  # an overrun worker is expected free now
    with pytest.raises(ValueError):
        start_times([], [1.0])


def test_recent_durations_average_a_window_capped_by_the_time_limit() -> None:
    d = RecentDurations(window=3)
    assert d.expected("cube3", 20.0) == 20.0 and d.count("cube3") == 0  # nothing measured yet
    for s in (2.0, 4.0, 6.0, 8.0):  # the window keeps 4, 6, 8
        d.record("cube3", s)
    assert d.count("cube3") == 3 and d.expected("cube3", 20.0) == 6.0
    assert d.expected("cube3", 5.0) == 5.0  # a solve cannot search longer than its limit
    assert d.expected("puzzle15", 30.0) == 30.0  # other puzzles are measured apart


# ---- the pool's line ---------------------------------------------------------------------------
def test_line_is_first_come_first_served_and_refuses_only_beyond_its_bound() -> None:
    fake = Gated()

    async def body(pool: SolvePool) -> None:
        tickets = [pool.submit(job(tag), 30.0) for tag in "ABCD"]
        assert [t.status for t in tickets] == ["running", "queued", "queued", "queued"]
        assert [pool.estimate(t).position for t in tickets] == [None, 1, 2, 3]
        with pytest.raises(QueueFullError) as refused:
            pool.submit(job("E"), 30.0)
        assert "1 solve running and 3 waiting" in str(refused.value) and "at most 3" in str(refused.value)
        assert refused.value.retry_after >= 1
        fake.gate("A").set()
        assert (await pool.result(tickets[0]))["ok"]["solved"]
        assert [pool.estimate(t).position for t in tickets[1:]] == [None, 1, 2]
        pool.submit(job("F"), 30.0)  # a place freed: admitted at the end of the line
        for tag, t in zip("BCD", tickets[1:], strict=True):
            fake.gate(tag).set()
            await pool.result(t)
        fake.gate("F").set()
        await until(lambda: pool.completed == 5)
        assert fake.started == ["A", "B", "C", "D", "F"]
        assert pool.stats() == {"workers": 1, "queue": 3, "running": 0, "waiting": 0, "completed": 5}

    run_pool(fake, body, queue=3)


def test_two_workers_take_the_line_in_order() -> None:
    fake = Gated()

    async def body(pool: SolvePool) -> None:
        tickets = {tag: pool.submit(job(tag), 30.0) for tag in "ABCDE"}
        assert pool.running == 2 and pool.waiting == 3
        fake.gate("B").set()  # the second worker frees first: the head of the line takes it
        await pool.result(tickets["B"])
        assert tickets["C"].status == "running" and pool.estimate(tickets["E"]).position == 2
        for tag in "ACDE":
            fake.gate(tag).set()
        await asyncio.gather(*(pool.result(t) for t in tickets.values()))
        assert fake.started[:2] in (["A", "B"], ["B", "A"]) and fake.started[2:] == ["C", "D", "E"]

    run_pool(fake, body, workers=2, queue=3)


def test_time_in_line_does_not_count_against_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four 0.3 s solves on one worker with a 0.5 s wall limit each: the last waits 0.9 s, longer
    than its whole budget, and is still answered (not 504), with its full time limit; a timer
    started at submission would have fired 0.5 s in. A solve that runs past its own limit gets its
    504 while its worker still runs it. Every time here is the fake clock's (the pool's and its
    event loop's), which only the solves move."""
    clock = FakeClock()
    use_clock(monkeypatch, clock)
    fake = Gated(clock)

    async def body(pool: SolvePool) -> None:
        tickets = [pool.submit(job(str(i), time_limit=0.4, seconds=0.3, hold=i == 0), 0.5) for i in range(4)]
        fake.gate("0").set()  # all four are in line: the first may end
        outs = await asyncio.gather(*(pool.result(t) for t in tickets))
        assert all(o["ok"]["solved"] for o in outs)
        assert tickets[-1].waited() == pytest.approx(0.9) and tickets[-1].waited() > tickets[-1].wall_limit
        assert [o["time_limit"] for o in fake.options] == [0.4] * 4  # never shortened by the wait
        slow = pool.submit(job("slow", time_limit=0.1), 0.3)  # runs until the test ends
        assert slow.started == clock.now  # it went straight to the free worker
        clock.sleep(1.0)  # past its wall limit
        with pytest.raises(SolveTimeoutError, match="time in line not counted"):
            await pool.result(slow)
        assert pool.running == 1  # the overrun solve keeps its worker until it really ends

    run_pool(fake, body, queue=8)


def test_estimate_comes_from_measured_durations(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()  # the pool's clock: a solve takes as long as the test says
    use_clock(monkeypatch, clock)
    fake = Gated(clock)

    async def body(pool: SolvePool) -> None:
        measured = pool.submit(job("m", seconds=0.2), 30.0)
        await pool.result(measured)
        assert pool.durations.count("cube3") == 1
        assert pool.durations.expected("cube3", 20.0) == pytest.approx(0.2)
        pool.durations = RecentDurations()  # from here on: as if the solves so far took 10 s
        pool.durations.record("cube3", 10.0)
        running = [pool.submit(job(t), 30.0) for t in "AB"]
        line = [pool.submit(job(t), 30.0) for t in "CDE"]
        est = [pool.estimate(t) for t in line]
        # two workers free in about 10 s; C and D start then, E after another 10 s
        assert [e.position for e in est] == [1, 2, 3] and all(e.recent_solves == 1 for e in est)
        assert [e.start_seconds for e in est] == pytest.approx([10.0, 10.0, 20.0])
        assert [e.answer_seconds for e in est] == pytest.approx([20.0, 20.0, 30.0])
        short = pool.submit(job("F", time_limit=2.0), 30.0)  # its own limit caps its duration
        assert pool.estimate(short).answer_seconds == pytest.approx(22.0)
        assert pool.estimate(running[0]).answer_seconds == pytest.approx(10.0)
        clock.sleep(4.0)  # four seconds on: A and B are expected in six, C and D start then
        assert pool.estimate(running[0]).answer_seconds == pytest.approx(6.0)
        assert [pool.estimate(t).start_seconds for t in line] == pytest.approx([6.0, 6.0, 16.0])

    run_pool(fake, body, workers=2, queue=8)


def test_cancel_leaves_the_line_and_a_departed_caller_gives_up_its_place() -> None:
    fake = Gated()

    async def body(pool: SolvePool) -> None:
        first = pool.submit(job("A"), 30.0)
        b, c = pool.submit(job("B"), 30.0), pool.submit(job("C"), 30.0)
        assert pool.cancel(b) and b.status == "cancelled" and pool.estimate(c).position == 1
        assert not pool.cancel(first)  # a running search cannot be stopped early
        caller = asyncio.create_task(pool.solve(job("D"), 30.0))
        await until(lambda: pool.waiting == 2)
        caller.cancel()  # e.g. the HTTP client went away
        with pytest.raises(asyncio.CancelledError):
            await caller
        assert pool.waiting == 1
        fake.gate("A").set()
        fake.gate("C").set()
        await pool.result(c)
        assert fake.started == ["A", "C"]

    run_pool(fake, body, queue=8)


def test_ended_jobs_are_kept_a_bounded_time_and_number() -> None:
    fake = Gated()

    async def body(pool: SolvePool) -> None:
        clock = FakeClock()  # the store's clock: its results expire when the test says so
        store = JobStore(pool, result_ttl=0.5, max_results=3, clock=clock)
        tickets: list[Ticket] = []
        for i in range(5):
            t = pool.submit(job(str(i), seconds=0.0), 30.0)
            store.add(t, lambda out: {"solved": out["ok"]["solved"]})
            tickets.append(t)
        await asyncio.gather(*(pool.result(t) for t in tickets))
        await asyncio.sleep(0)  # the store's callbacks run
        kept = [t.id for t in tickets if store.get(t.id) is not None]
        assert kept == [t.id for t in tickets[2:]]  # the oldest two went first
        view = store.view(store.get(tickets[-1].id))  # type: ignore[arg-type]
        assert (
            view["status"] == "done" and view["result"] == {"solved": True} and 0 < view["expires_in"] <= 0.5
        )
        clock.sleep(0.6)
        assert store.get(tickets[-1].id) is None and len(store) == 0

    run_pool(fake, body, queue=8)


def test_a_job_polled_as_its_outcome_comes_in_shows_its_answer() -> None:
    """The outcome's callbacks run on a later turn of the event loop: a poll in between sees the
    answer (or the error), never a job that ended without one ("failed" with no error)."""

    async def body(pool: SolvePool) -> None:
        store = JobStore(pool, result_ttl=5.0, max_results=4)
        loop = asyncio.get_running_loop()
        done, bad = (Ticket(job(tag, seconds=0.0), 30.0, loop.create_future()) for tag in ("done", "bad"))
        finish = lambda out: {"solved": out["ok"]["solved"]}  # noqa: E731
        for t in (done, bad):
            store.add(t, finish)
        done.outcome.set_result({"ok": {"solved": True}})
        bad.outcome.set_exception(SolveTimeoutError("too slow"))
        # no await: the outcomes' callbacks have not run
        view = store.view(store.get(done.id))  # type: ignore[arg-type]
        assert (view["status"], view["result"], view["error"]) == ("done", {"solved": True}, None)
        view = store.view(store.get(bad.id))  # type: ignore[arg-type]
        assert view["status"] == "failed" and view["error"] == {"status": 504, "detail": "too slow"}
        await asyncio.sleep(0)  # the callbacks run now, and change nothing
        assert store.view(store.get(done.id))["result"] == {"solved": True}  # type: ignore[arg-type]
        assert store.get(bad.id).error["status"] == 504  # type: ignore[union-attr,index]

    run_pool(Gated(), body)


def job_in(c: Any, job_id: str, status: str) -> dict[str, Any] | None:
    """The job's view where it has ``status`` now, else ``None`` (for :func:`poll_until`)."""
    view = c.get(f"/api/jobs/{job_id}").json()
    return view if view["status"] == status else None


# ---- through HTTP --------------------------------------------------------------------------------
def test_job_api_reports_place_and_wait_then_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()  # the pool's clock: the jobs wait in line as long as the test says
    use_clock(monkeypatch, clock)
    fake = Gated()
    with client_for(fake, workers=1, queue=2) as c:
        c.app.state.pool.durations.record("cube3", 8.0)  # as if one cube took 8 s
        made = [c.post("/api/jobs", json={"puzzle": "cube3", "state": s}) for s in ("R", "R U", "F")]
        assert [r.status_code for r in made] == [202, 202, 202]
        first, second, third = (r.json() for r in made)
        assert made[1].headers["location"] == f"/api/jobs/{second['id']}"
        assert first["status"] == "running" and first["position"] is None
        assert (second["status"], second["position"], third["position"]) == ("queued", 1, 2)
        assert second["estimated_start_seconds"] == pytest.approx(8.0, abs=0.5)
        assert third["estimated_seconds"] == pytest.approx(24.0, abs=0.5) and third["recent_solves"] == 1
        full = c.post("/api/jobs", json={"puzzle": "cube3", "state": "U"})
        assert full.status_code == 429 and "the line holds at most 2" in full.json()["detail"]
        assert int(full.headers["retry-after"]) >= 1
        assert c.delete(f"/api/jobs/{first['id']}").status_code == 409  # running: cannot stop it
        gone = c.delete(f"/api/jobs/{second['id']}").json()
        assert gone["status"] == "cancelled" and c.get(f"/api/jobs/{third['id']}").json()["position"] == 1
        clock.sleep(2.0)  # the third job has waited two seconds when the first ends
        for gate in fake.gates.values():
            gate.set()
        fake.gate("").set()
        view = poll_until(lambda: job_in(c, third["id"], "done"), 30, "the third job done")
        assert (
            view["result"]["solved"]
            and view["result"]["solution"] == ["F'"]
            and view["waited_seconds"] == 2.0
        )
        assert view["position"] is None and view["estimated_seconds"] is None and view["expires_in"] > 0
        missing = c.get("/api/jobs/nope")
        assert missing.status_code == 404 and "unknown or its answer has expired" in missing.json()["detail"]


def test_a_failed_job_reports_the_status_the_blocking_call_gives() -> None:
    def refuses_mcts(
        puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None
    ) -> FakeResult:
        if opts.search == "mcts":
            raise pz.UnknownNameError("unknown search 'mcts' for this test's solver; it runs bwas")
        return bfs_solve(puzzle, state, opts)

    with client_for(refuses_mcts) as c:
        body = {"puzzle": "cube3", "state": "R", "search": "mcts"}  # registered; the fake refuses it
        job_id = c.post("/api/jobs", json=body).json()["id"]
        view = poll_until(lambda: job_in(c, job_id, "failed"), 10, "the job failed")
        blocking = c.post("/api/solve", json=body)
        assert (
            view["error"] == {"status": 400, "detail": blocking.json()["detail"]}
            and blocking.status_code == 400
        )
        assert "unknown search 'mcts'" in view["error"]["detail"]
        bad = c.post("/api/jobs", json={"puzzle": "cube3", "state": "UUUU"})  # refused before it queues
        assert bad.status_code == 400 and c.get("/api/info").json()["pool"]["completed"] == 2


def test_concurrent_blocking_solves_wait_their_turn_at_default_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Eight simultaneous POST /api/solve from one client on one worker at the default queue (the
    client's own waiting limit raised to let them all in): every one answered 200 with a
    replayable solution, none refused; each says how long it waited: 0.1 s (on the pool's clock)
    for every solve ahead of it."""
    p = pz.make("puzzle8")
    clock = FakeClock()
    use_clock(monkeypatch, clock)
    all_in = threading.Event()

    def slow(puzzle: Puzzle, state: np.ndarray, opts: SolveOptions, on_solution: Any = None) -> FakeResult:
        assert all_in.wait(60)  # the first solve holds the worker until all eight are in line
        clock.sleep(0.1)  # each solve takes 0.1 s of the pool's clock
        return bfs_solve(puzzle, state, opts)

    states = [
        p.format(p.apply_moves(p.goal(), p.parse_moves(m)))
        for m in ("D", "R", "D R", "R D", "D D", "R R", "D R U", "R D L")
    ]
    with client_for(slow, client_waiting=len(states)) as c:
        results: list[Any] = [None] * len(states)

        def post(i: int) -> None:
            results[i] = c.post(
                "/api/solve", json={"puzzle": "puzzle8", "state": states[i], "time_limit": 30}
            )

        threads = [threading.Thread(target=post, args=(i,)) for i in range(len(states))]
        for t in threads:
            t.start()
        in_line = len(states) - 1  # one runs, the others wait
        poll_until(lambda: c.get("/api/info").json()["pool"]["waiting"] == in_line, 60, "all in line")
        all_in.set()
        for t in threads:
            t.join(60)
        assert [r.status_code for r in results] == [200] * len(states)
        for state, r in zip(states, results, strict=True):
            end = p.apply_moves(p.parse(state), p.parse_moves(r.json()["solution"]))
            assert p.is_goal(end[None])[0]
        waits = sorted(r.json()["waited_seconds"] for r in results)
        assert waits == pytest.approx([0.1 * k for k in range(len(states))])
        assert c.get("/api/info").json()["pool"]["completed"] == len(states)
