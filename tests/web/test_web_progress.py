"""A running solve's first solution, and each shorter one, carried from the worker to the client:
the worker reports what the solver's ``on_solution`` hands it (``("progress", seq, improvement)``
over a process's pipe, or straight to the event loop from a thread), the pool's ticket keeps them
(bounded), and ``GET /api/jobs/{id}`` shows them, each replayed on the job's state first."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import puzzlezero as pz  # noqa: E402
from puzzlezero.solver import Improvement  # noqa: E402
from puzzlezero.web import ServerConfig  # noqa: E402
from puzzlezero.web.line import MAX_IMPROVEMENTS  # noqa: E402
from puzzlezero.web.pool import SolvePool  # noqa: E402
from puzzlezero.web.worker import SolveJob, run_job  # noqa: E402
from tests.clock import until, until_async  # noqa: E402
from tests.web.test_web import FakeResult, bfs_solve, client_for  # noqa: E402
from tests.web.web_fakes import reporting  # noqa: E402

CUBE = pz.make("cube3")
DETOUR = ["U'", "R'", "F", "F'"]  # solves R U, two moves longer than it need be


class Gated:
    """A solve that reports ``reports`` (move lists) one by one, each after its gate opens, then
    answers with the shortest solution (breadth-first)."""

    def __init__(self, *reports: list[str]) -> None:
        self.reports = reports
        self.gates = [threading.Event() for _ in reports]

    def __call__(
        self, puzzle: Any, state: np.ndarray, opts: Any = None, *, on_solution: Any = None
    ) -> FakeResult:
        for i, (moves, gate) in enumerate(zip(self.reports, self.gates, strict=True)):
            assert gate.wait(30)
            on_solution(
                Improvement(0, tuple(moves), len(moves), float(len(moves)), 0.5 * i, 100 * i, "stage 1")
            )
        return bfs_solve(puzzle, state, opts)


def poll(client: Any, job_id: str, until_done: bool = False, **want: Any) -> dict[str, Any]:
    """Poll the job until it has ended (``until_done``) or shows ``want["count"]`` improvements."""
    seen: dict[str, Any] = {}

    def check() -> bool:
        seen.update(client.get(f"/api/jobs/{job_id}").json())
        if until_done:
            return seen["status"] not in ("queued", "running")
        return len(seen["improvements"]) >= want["count"]

    until(check, 30, "the job's progress", every=0.02)
    return seen


def test_a_polled_job_shows_its_first_solution_before_the_answer() -> None:
    solve = Gated(DETOUR, ["U'", "R'"])
    with client_for(solve) as client:
        job = client.post("/api/jobs", json={"puzzle": "cube3", "state": "R U"}).json()
        assert job["improvements"] == []
        solve.gates[0].set()
        first = poll(client, job["id"], count=1)
        assert first["status"] == "running" and first["result"] is None
        assert first["improvements"] == [
            {
                "solution": DETOUR,
                "notation": DETOUR,
                "length": 4,
                "cost": 4.0,
                "seconds": 0.0,
                "nodes_generated": 0,
                "stage": "stage 1",
            }
        ]
        solve.gates[1].set()
        done = poll(client, job["id"], until_done=True)
    assert done["status"] == "done" and done["result"]["solution"] == ["U'", "R'"]
    assert [i["length"] for i in done["improvements"]] == [4, 2]
    assert done["improvements"][-1]["solution"] == done["result"]["solution"]


def test_half_turns_are_written_r2_and_a_wrong_solution_is_left_out() -> None:
    solve = Gated(["F"], ["U'", "R", "R"], ["U'", "R'", "R'"])  # F does not solve R2 U
    for gate in solve.gates:
        gate.set()
    with client_for(solve) as client:
        job = client.post("/api/jobs", json={"puzzle": "cube3", "state": "R2 U"}).json()
        done = poll(client, job["id"], until_done=True)
    assert [i["solution"] for i in done["improvements"]] == [["U'", "R", "R"], ["U'", "R'", "R'"]]
    assert [i["notation"] for i in done["improvements"]] == [["U'", "R2"], ["U'", "R2"]]


def test_a_solve_function_without_the_hook_still_answers() -> None:
    with client_for(bfs_solve) as client:
        job = client.post("/api/jobs", json={"puzzle": "cube3", "state": "R U"}).json()
        done = poll(client, job["id"], until_done=True)
    assert done["result"]["solution"] == ["U'", "R'"] and done["improvements"] == []


def test_the_ticket_keeps_at_most_the_bound_the_newest_last() -> None:
    reports = [["U'", "R'"] + ["F", "F'"] * k for k in range(40, 0, -1)] + [["U'", "R'"]]

    async def main() -> None:
        pool = SolvePool(ServerConfig(executor="thread", workers=1), reporting)
        pool.start()
        try:
            ticket = pool.submit(SolveJob("cube3", CUBE.parse("R U"), {"reports": reports}), 30.0)
            await ticket.outcome
            await asyncio.sleep(0)  # progress handed over from the worker thread before the answer
        finally:
            pool.close(5.0)
        kept = ticket.improvements
        assert len(kept) == MAX_IMPROVEMENTS == 32
        assert [i["length"] for i in kept[:-1]] == [2 + 2 * k for k in range(40, 9, -1)]
        assert kept[-1]["solution"] == ["U'", "R'"] and kept[-1]["notation"] == ["U'", "R'"]

    asyncio.run(main())


def test_run_job_hands_improvements_on_as_plain_data() -> None:
    seen: list[dict[str, Any]] = []
    out = run_job(SolveJob("cube3", CUBE.parse("R2"), {"reports": [["R", "R"]]}), reporting, seen.append)
    assert out["ok"]["solution"] == ["R", "R"]
    assert seen == [
        {
            "index": 0,
            "solution": ["R", "R"],
            "length": 2,
            "cost": 2.0,
            "seconds": 0.0,
            "nodes_generated": 10,
            "stage": "stage 1",
            "notation": ["R2"],
        }
    ]

    def failing(data: dict[str, Any]) -> None:
        raise OSError("the pipe is gone")

    # a report that cannot be sent never ends the solve
    out = run_job(SolveJob("cube3", CUBE.parse("R2"), {"reports": [["R", "R"]]}), reporting, failing)
    assert out["ok"]["solution"] == ["R", "R"]


def test_improvements_cross_a_worker_process_pipe() -> None:
    reports = [DETOUR, ["U'", "R'"]]

    async def main() -> None:
        pool = SolvePool(ServerConfig(executor="process", workers=1), reporting)
        pool.start()
        try:
            job = SolveJob("cube3", CUBE.parse("R U"), {"reports": reports, "pause": 1.0})
            ticket = pool.submit(job, 30.0)
            await until_async(lambda: len(ticket.improvements) == 1, 60, every=0.02)
            assert not ticket.outcome.done()  # the first solution came while the solve still ran
            out = await ticket.outcome
        finally:
            pool.close(5.0)
        assert out["ok"]["solution"] == ["U'", "R'"]
        assert [i["solution"] for i in ticket.improvements] == reports
        assert ticket.improvements[0]["notation"] == DETOUR and ticket.improvements[0]["stage"] == "stage 1"

    asyncio.run(main())
