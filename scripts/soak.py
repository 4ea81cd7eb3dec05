"""Soak test of a running web server: mixed valid and invalid traffic for a bounded time.

Drives ``puzzlezero serve`` at URL (default http://127.0.0.1:8000) from ``--clients`` concurrent
simulated clients for ``--minutes`` minutes (or until ``--max-requests`` requests), then reports:
requests by endpoint and status class, p50/p99 latency by kind of request, the jobs' outcomes,
500s, unexpected statuses, connection errors, and the memory of the server over time.

Traffic, each client picking at random, weighted (``--skip KIND`` leaves a kind out, ``--only KIND`` keeps
only the kinds named; a wrong name lists them all):

- valid: cube3 solves of fresh scrambles (``GET /api/scramble``) with short time limits, puzzle15
  solves, queued jobs (``POST /api/jobs``, polled every second, some cancelled), ``/api/value`` (and
  with ``optimal`` or the ``pdb`` heuristic, 503 while its table is not built), ``/api/validate``,
  ``/api/render``; every solved answer is replayed with ``/api/move`` now and then;
- invalid: bad states, unknown puzzles, heuristics and searches naming code (``sys:exit``,
  ``os:system``), oversized bodies, absurd limits (beam width, batch, nodes, time), malformed JSON,
  a foreign ``Host`` header, unknown job ids.

Every kind has its expected statuses (429 wherever admission can refuse; 4xx for invalid input);
anything else is counted as unexpected, with the first bodies kept. By default all the clients come
from one address, so the server sees one client: its per-client limits answer many requests 429,
which is expected. With ``--own-addresses`` (a loopback server only) client i sends from 127.0.0.(2+i),
so the server sees that many clients and its per-client limits apply to each. Latency of a solve
includes its time in line.

Memory: with ``--pid`` (the ``serve`` process), the resident memory of that process and of all its
descendants (the solver workers) is sampled every ``--sample-seconds`` from ``/proc`` (psutil when
installed), together with ``/healthz``.

Exit status: 1 when any 500 (a failed job whose error says 500 included) or connection error
happened (``--strict``: also any unexpected status), else 0.

    puzzlezero serve --port 8702 & python scripts/soak.py http://127.0.0.1:8702 --minutes 1 --pid $!
    python scripts/soak.py --minutes 30 --pid 12345 --clients 6 --out soak.json
    python scripts/soak.py http://127.0.0.1:8702 --minutes 0.2 --max-requests 200 --skip value-optimal
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import math
import os
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

#: the connection pool of the simulated client running in this task (``--own-addresses``)
_CLIENT: contextvars.ContextVar[httpx.AsyncClient | None] = contextvars.ContextVar("client", default=None)

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MIB = 1024 * 1024
TERMINAL = ("done", "failed", "cancelled")
CODE_NAMES = ("sys:exit", "os:system", "this:s", "builtins:exec", "puzzlezero.solver:solve", "os:_exit")
BAD_STATES = {
    "cube3": ["R U X9", "UUUUUUUUU", "U" * 54, "R" * 20_001, "", "R U (", "R4 U"],
    "puzzle15": ["1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", "0 1 2", "a b c", "99 " * 16, "-1 " * 16],
}


class Stop(Exception):
    """The request budget (``--max-requests``) is spent."""


@dataclass
class Kind:
    """One kind of traffic: its share of the mix and the client flow that sends it."""

    weight: float
    flow: Callable[[], Awaitable[None]]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of ``values`` (``q`` in [0, 100]); NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def status_class(status: int) -> str:
    return "429" if status == 429 else f"{status // 100}xx"


# ---- memory of the server and its workers ------------------------------------------------------
def process_tree_rss(pid: int) -> dict[str, Any] | None:
    """Resident MiB of ``pid`` and of all its descendants; ``None`` when ``pid`` is gone."""
    try:
        import psutil  # type: ignore[import-untyped]
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            root = psutil.Process(pid)
            server = root.memory_info().rss
            kids = root.children(recursive=True)
        except psutil.Error:
            return None
        child_rss = 0
        for k in kids:
            try:
                child_rss += k.memory_info().rss
            except psutil.Error:
                pass
        return _rss_sample(server, child_rss, len(kids))
    server_rss = _statm_rss(pid)
    if server_rss is None:
        return None
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children[ppid].append(int(entry))
    todo, kids_rss, count = list(children[pid]), 0, 0
    while todo:
        p = todo.pop()
        rss = _statm_rss(p)
        if rss is not None:
            kids_rss += rss
            count += 1
        todo.extend(children[p])
    return _rss_sample(server_rss, kids_rss, count)


def _statm_rss(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return None


def _rss_sample(server: int, children: int, count: int) -> dict[str, Any]:
    return {
        "server_mib": round(server / MIB, 1),
        "children_mib": round(children / MIB, 1),
        "total_mib": round((server + children) / MIB, 1),
        "processes": 1 + count,
    }


# ---- the soak ----------------------------------------------------------------------------------
class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.url = args.url.rstrip("/")
        self.rng = random.Random(args.seed)
        self.started = time.monotonic()
        self.deadline = self.started + args.minutes * 60
        self.stopping = False
        self.requests = 0
        self.by_endpoint: dict[str, Counter[str]] = defaultdict(Counter)
        self.by_status: dict[str, Counter[int]] = defaultdict(Counter)
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors_500 = 0
        self.unexpected: Counter[str] = Counter()
        self.unexpected_samples: list[dict[str, Any]] = []
        self.conn_errors: Counter[str] = Counter()
        self.conn_samples: list[dict[str, Any]] = []
        self.jobs: Counter[str] = Counter()
        self.solved: Counter[str] = Counter()
        self.samples: list[dict[str, Any]] = []
        self.abandoned = 0
        self.client = self._http_client(None)
        #: with --own-addresses, each simulated client's own connection pool (by its source address)
        self.own: list[httpx.AsyncClient] = (
            [self._http_client(f"127.0.0.{2 + i}") for i in range(args.clients)] if args.own_addresses else []
        )
        self.kinds: dict[str, Kind] = {
            "solve-cube3": Kind(4, self.solve_cube3),
            "solve-puzzle15": Kind(2, self.solve_puzzle15),
            "job": Kind(3, self.job),
            "value": Kind(1, self.value),
            "value-optimal": Kind(0.5, self.value_optimal),
            "validate": Kind(2, self.validate),
            "render": Kind(2, self.render),
            "bad-state": Kind(2, self.bad_state),
            "unknown-puzzle": Kind(1, self.unknown_puzzle),
            "code-name": Kind(1, self.code_name),
            "oversized": Kind(0.5, self.oversized),
            "absurd-limits": Kind(1, self.absurd_limits),
            "malformed": Kind(1, self.malformed),
            "wrong-host": Kind(1, self.wrong_host),
            "unknown-job": Kind(0.5, self.unknown_job),
            "info": Kind(0.5, self.info),
        }
        unknown = sorted(set(args.skip + args.only) - set(self.kinds))
        if unknown:
            raise SystemExit(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(self.kinds)}")
        for name in list(self.kinds):
            if name in args.skip or (args.only and name not in args.only):
                del self.kinds[name]
        if not self.kinds:
            raise SystemExit("no kind of traffic is left to send")

    # ---- one request ------------------------------------------------------------------------------
    async def call(
        self,
        kind: str,
        method: str,
        path: str,
        expected: tuple[int, ...],
        endpoint: str | None = None,
        **kwargs: Any,
    ) -> httpx.Response | None:
        """Send one request, time it and file its status; ``None`` on a connection error."""
        if self.args.max_requests is not None and self.requests >= self.args.max_requests:
            self.stopping = True
            raise Stop
        self.requests += 1
        endpoint = endpoint or f"{method} {path.split('?')[0]}"
        t0 = time.monotonic()
        try:
            r = await (_CLIENT.get() or self.client).request(method, path, **kwargs)
        except httpx.TransportError as exc:
            self.by_endpoint[endpoint]["error"] += 1
            key = f"{kind} {type(exc).__name__}"
            self.conn_errors[key] += 1
            if len(self.conn_samples) < 20:
                self.conn_samples.append({"kind": kind, "endpoint": endpoint, "error": repr(exc)[:300]})
            return None
        self.latency[kind].append(time.monotonic() - t0)
        self.by_endpoint[endpoint][status_class(r.status_code)] += 1
        self.by_status[endpoint][r.status_code] += 1
        if r.status_code == 500:
            self.errors_500 += 1
        if r.status_code not in expected:
            self.flag(kind, f"{endpoint} -> {r.status_code}", r.text)
        if r.status_code == 429:  # a polite client waits a little before its next try
            try:
                retry = float(r.headers.get("retry-after", "1"))
            except ValueError:
                retry = 1.0
            await asyncio.sleep(min(retry, 2.0) * self.rng.random())
        return r

    def flag(self, kind: str, what: str, body: str = "") -> None:
        """Count an unexpected answer, keeping the first bodies."""
        self.unexpected[f"{kind}: {what}"] += 1
        if len(self.unexpected_samples) < 20:
            self.unexpected_samples.append({"kind": kind, "what": what, "body": body[:300]})

    @staticmethod
    def body_of(r: httpx.Response) -> Any:
        try:
            return r.json()
        except ValueError:
            return None

    async def scramble(self, puzzle: str, depth: int | None = None) -> str | None:
        depth = depth if depth is not None else self.rng.choice(self.args.depths)
        r = await self.call(
            "scramble", "GET", f"/api/scramble?puzzle={puzzle}&depth={depth}", (200,), "GET /api/scramble"
        )
        body = self.body_of(r) if r is not None else None
        return (
            body.get("state") if isinstance(body, dict) and r is not None and r.status_code == 200 else None
        )

    async def check_solution(self, puzzle: str, state: str, answer: Any) -> None:
        """Replay a solved answer's moves with ``/api/move``: it must reach the goal."""
        if not isinstance(answer, dict) or "solved" not in answer:
            self.flag(f"solve-{puzzle}", "a 200 without a solve answer", json.dumps(answer)[:300])
            return
        self.solved["solved" if answer["solved"] else "unsolved"] += 1
        if not answer["solved"] or self.rng.random() > self.args.verify_share:
            return
        moves = answer.get("solution") or []
        r = await self.call(
            "move-check", "POST", "/api/move", (200,), json={"puzzle": puzzle, "state": state, "moves": moves}
        )
        body = self.body_of(r) if r is not None else None
        if r is not None and r.status_code == 200 and not (isinstance(body, dict) and body.get("solved")):
            self.flag("move-check", f"the {puzzle} solution does not solve the state", r.text)

    # ---- valid traffic ------------------------------------------------------------------------------
    async def solve(self, puzzle: str, limits: tuple[float, float]) -> None:
        state = await self.scramble(puzzle)
        if state is None:
            return
        body = {"puzzle": puzzle, "state": state, "time_limit": round(self.rng.uniform(*limits), 2)}
        r = await self.call(f"solve-{puzzle}", "POST", "/api/solve", (200, 429), json=body)
        if r is not None and r.status_code == 200:
            await self.check_solution(puzzle, state, self.body_of(r))

    async def solve_cube3(self) -> None:
        await self.solve("cube3", (0.3, 3.0))

    async def solve_puzzle15(self) -> None:
        await self.solve("puzzle15", (0.3, 3.0))

    async def job(self) -> None:
        state = await self.scramble("cube3")
        if state is None:
            return
        time_limit = round(self.rng.uniform(0.3, 3.0), 2)
        body = {"puzzle": "cube3", "state": state, "time_limit": time_limit}
        r = await self.call("job-create", "POST", "/api/jobs", (202, 429), json=body)
        view = self.body_of(r) if r is not None and r.status_code == 202 else None
        if not isinstance(view, dict) or "id" not in view:
            return
        path = f"/api/jobs/{view['id']}"
        if self.rng.random() < 0.3:  # changes its mind
            await asyncio.sleep(self.rng.uniform(0.0, 1.0))
            await self.call("job-cancel", "DELETE", path, (200, 409), "DELETE /api/jobs/{id}")
        give_up = time.monotonic() + time_limit + self.args.timeout
        while True:
            if self.stopping or time.monotonic() > give_up:
                await self.call("job-cancel", "DELETE", path, (200, 409), "DELETE /api/jobs/{id}")
                self.jobs["left when the soak ended" if self.stopping else "gave up polling"] += 1
                return
            await asyncio.sleep(1.0)
            r = await self.call("job-poll", "GET", path, (200,), "GET /api/jobs/{id}")
            view = self.body_of(r) if r is not None and r.status_code == 200 else None
            if not isinstance(view, dict):
                return
            status = view.get("status")
            if status in TERMINAL:
                break
        self.jobs[str(status)] += 1
        if status == "done":
            await self.check_solution("cube3", state, view.get("result"))
        elif status == "failed":
            err = view.get("error") or {}
            code = err.get("status") if isinstance(err, dict) else None
            if code == 500:
                self.errors_500 += 1
            self.flag("job-result", f"a job failed with {code}", json.dumps(err)[:300])

    async def value(self) -> None:
        state = await self.scramble("cube3")
        if state is not None:
            await self.call(
                "value", "POST", "/api/value", (200, 429), json={"puzzle": "cube3", "state": state}
            )

    async def value_optimal(self) -> None:
        """A value that needs a table: 503 (naming the build command) until it is built."""
        if self.rng.random() < 0.5:
            state = await self.scramble("cube2")
            body: dict[str, Any] = {"puzzle": "cube2", "state": state, "optimal": True}
        else:
            state = await self.scramble("puzzle15")
            body = {"puzzle": "puzzle15", "state": state, "heuristic": "pdb"}
        if state is not None:
            await self.call("value-optimal", "POST", "/api/value", (200, 429, 503), json=body)

    async def validate(self) -> None:
        puzzle = self.rng.choice(("cube3", "puzzle15"))
        if self.rng.random() < 0.5:
            state, valid = await self.scramble(puzzle), True
        else:
            short = [s for s in BAD_STATES[puzzle] if len(s) <= 20_000]  # a longer one is a 422
            state, valid = self.rng.choice(short), False
        if state is None:
            return
        r = await self.call(
            "validate", "POST", "/api/validate", (200,), json={"puzzle": puzzle, "state": state}
        )
        body = self.body_of(r) if r is not None and r.status_code == 200 else None
        if isinstance(body, dict) and body.get("valid") is not valid:
            self.flag(
                "validate",
                f"valid={body.get('valid')} for a {'' if valid else 'in'}valid {puzzle} state",
                r.text if r else "",
            )

    async def render(self) -> None:
        puzzle = self.rng.choice(("cube3", "puzzle15", "lightsout7"))
        state = await self.scramble(puzzle, 10)
        if state is None:
            return
        if self.rng.random() < 0.5:
            r = await self.call(
                "render", "GET", "/api/render", (200,), params={"puzzle": puzzle, "state": state}
            )
        else:
            size = self.rng.choice((50, 300, 2000))
            r = await self.call(
                "render", "POST", "/api/render", (200,), json={"puzzle": puzzle, "state": state, "size": size}
            )
        if r is not None and r.status_code == 200 and "<svg" not in r.text[:500]:
            self.flag("render", "a 200 without an SVG", r.text)

    async def info(self) -> None:
        path = self.rng.choice(("/api/info", "/api/puzzles", "/healthz"))
        await self.call("info", "GET", path, (200,))

    # ---- invalid traffic ----------------------------------------------------------------------------
    def heavy_endpoint(self) -> str:
        return self.rng.choice(("/api/solve", "/api/jobs", "/api/value"))

    async def bad_state(self) -> None:
        puzzle = self.rng.choice(("cube3", "puzzle15"))
        body = {"puzzle": puzzle, "state": self.rng.choice(BAD_STATES[puzzle])}
        await self.call("bad-state", "POST", self.heavy_endpoint(), (400, 422, 429), json=body)

    async def unknown_puzzle(self) -> None:
        name = self.rng.choice(("cube99", "nope", "../../etc/passwd", "x" * 64, "CUBE3 "))
        if self.rng.random() < 0.3:
            await self.call(
                "unknown-puzzle",
                "GET",
                "/api/scramble",
                (400, 404, 422),
                "GET /api/scramble",
                params={"puzzle": name},
            )
        else:
            path = self.rng.choice(("/api/solve", "/api/jobs", "/api/value", "/api/validate", "/api/render"))
            await self.call(
                "unknown-puzzle", "POST", path, (400, 404, 422, 429), json={"puzzle": name, "state": "R U"}
            )

    async def code_name(self) -> None:
        """Heuristics and searches naming Python code: refused by name, never run."""
        field = "heuristic" if self.rng.random() < 0.7 else "search"
        path = self.rng.choice(("/api/solve", "/api/jobs", "/api/value"))
        if path == "/api/value":
            field = "heuristic"
        body = {"puzzle": "cube3", "state": "R U", field: self.rng.choice(CODE_NAMES), "time_limit": 1}
        if path == "/api/value":
            del body["time_limit"]
        await self.call("code-name", "POST", path, (400, 422), json=body)

    async def oversized(self) -> None:
        if self.rng.random() < 0.5:  # past the body cap: refused before it is parsed
            body = {"puzzle": "cube3", "state": "R " * 40_000}
            await self.call("oversized", "POST", self.heavy_endpoint(), (413,), json=body)
        else:  # under the byte cap, over the state length
            body = {"puzzle": "cube3", "state": "R " * 12_000}
            await self.call("oversized", "POST", self.heavy_endpoint(), (413, 422, 429), json=body)

    async def absurd_limits(self) -> None:
        absurd = self.rng.choice(
            (
                {"search": "beam", "beam_width": 10_000_000},
                {"batch": 10**9},
                {"search": "beam", "batch": 10**7},
                {"max_nodes": 10**12},
                {"time_limit": 1e9},
                {"time_limit": -1},
                {"weight": 1e6},
            )
        )
        path = self.rng.choice(("/api/solve", "/api/jobs"))
        await self.call(
            "absurd-limits", "POST", path, (400, 422, 429), json={"puzzle": "cube3", "state": "R U", **absurd}
        )

    async def malformed(self) -> None:
        content, ctype = self.rng.choice(
            (
                (b"{not json", "application/json"),
                (b"[1, 2, 3]", "application/json"),
                (b'{"puzzle": "cube3", "state": 123}', "application/json"),
                (b'{"puzzle": "cube3", "state": "R U", "model": "/etc/passwd"}', "application/json"),
                (b'{"puzzle": "cube3", "state": "R U \xff\xfe"}', "application/json"),
                (b"puzzle=cube3&state=R", "application/x-www-form-urlencoded"),
                (b"", "application/json"),
            )
        )
        path = self.rng.choice(("/api/solve", "/api/jobs", "/api/value", "/api/validate", "/api/move"))
        await self.call(
            "malformed", "POST", path, (400, 415, 422, 429), content=content, headers={"content-type": ctype}
        )

    async def wrong_host(self) -> None:
        """A foreign ``Host`` (DNS rebinding): refused before anything runs."""
        host = self.rng.choice(("evil.example", "attacker.test:8000", "127.0.0.1.nip.io"))
        if self.rng.random() < 0.5:
            await self.call("wrong-host", "GET", "/api/info", (400,), headers={"host": host})
        else:
            body = {"puzzle": "cube3", "state": "R U", "time_limit": 1}
            await self.call("wrong-host", "POST", "/api/solve", (400,), json=body, headers={"host": host})

    async def unknown_job(self) -> None:
        job_id = self.rng.choice(("nope", "x" * 64, "0" * 16, "%2e%2e%2fetc"))
        method = self.rng.choice(("GET", "DELETE"))
        await self.call(
            "unknown-job", method, f"/api/jobs/{job_id}", (404, 422), f"{method} /api/jobs/{{id}}"
        )

    # ---- the run --------------------------------------------------------------------------------------
    def over(self) -> bool:
        if time.monotonic() >= self.deadline:
            self.stopping = True
        return self.stopping

    def _http_client(self, local_address: str | None) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(local_address=local_address) if local_address else None
        return httpx.AsyncClient(
            base_url=self.url,
            timeout=httpx.Timeout(self.args.timeout, connect=10.0),
            limits=httpx.Limits(max_connections=self.args.clients * 2 + 4),
            transport=transport,
        )

    async def simulated_client(self, index: int = 0) -> None:
        if self.own:
            _CLIENT.set(self.own[index])
        names = list(self.kinds)
        weights = [self.kinds[n].weight for n in names]
        while not self.over():
            name = self.rng.choices(names, weights)[0]
            try:
                await self.kinds[name].flow()
            except Stop:
                return
            await asyncio.sleep(self.rng.uniform(0.0, self.args.think))

    async def sampler(self) -> None:
        """RSS of the server tree and ``/healthz`` every ``--sample-seconds`` (and once at the end)."""
        while True:
            await self.sample()
            if self.stopping:
                return
            await asyncio.sleep(min(self.args.sample_seconds, max(0.1, self.deadline - time.monotonic())))

    async def sample(self) -> None:
        entry: dict[str, Any] = {"t": round(time.monotonic() - self.started, 1)}
        if self.args.pid is not None:
            rss = await asyncio.to_thread(process_tree_rss, self.args.pid)
            entry.update(rss if rss is not None else {"gone": True})
        try:
            r = await self.client.get("/healthz", timeout=10.0)
            entry["health_status"] = r.status_code
            entry["health"] = self.body_of(r)
        except httpx.TransportError as exc:
            entry["health_status"] = None
            entry["health"] = repr(exc)[:200]
        self.samples.append(entry)

    async def progress(self) -> None:
        while not self.stopping:
            await asyncio.sleep(self.args.progress_seconds)
            last = self.samples[-1] if self.samples else {}
            rss = f", RSS {last['total_mib']} MiB" if "total_mib" in last else ""
            print(
                f"[{time.monotonic() - self.started:6.0f} s] {self.requests} requests, {self.errors_500} 500s, "
                f"{sum(self.unexpected.values())} unexpected, {sum(self.conn_errors.values())} connection errors{rss}",
                file=sys.stderr,
                flush=True,
            )

    async def run(self) -> dict[str, Any]:
        sampler = asyncio.create_task(self.sampler())
        progress = asyncio.create_task(self.progress())
        clients = [asyncio.create_task(self.simulated_client(i)) for i in range(self.args.clients)]
        while not self.over() and not all(c.done() for c in clients):
            await asyncio.sleep(0.2)
        self.stopping = True
        done, pending = await asyncio.wait(clients, timeout=self.args.drain_seconds)
        for task in pending:  # a request still in flight after the drain: the client hangs up
            task.cancel()
            self.abandoned += 1
        await asyncio.gather(*pending, return_exceptions=True)
        for task in done:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        progress.cancel()
        await asyncio.gather(progress, return_exceptions=True)
        await sampler
        for c in [self.client, *self.own]:
            await c.aclose()
        return self.report()

    def report(self) -> dict[str, Any]:
        seconds = time.monotonic() - self.started
        rss = [s for s in self.samples if "total_mib" in s]
        memory = None
        if rss:
            memory = {
                key: {"start": rss[0][key], "end": rss[-1][key], "max": max(s[key] for s in rss)}
                for key in ("total_mib", "server_mib", "children_mib")
            }
        conn = sum(self.conn_errors.values())
        unexpected = sum(self.unexpected.values())
        ok = self.errors_500 == 0 and conn == 0 and (unexpected == 0 or not self.args.strict)
        return {
            "url": self.url,
            "seconds": round(seconds, 1),
            "clients": self.args.clients,
            "requests": self.requests,
            "requests_per_second": round(self.requests / seconds, 2) if seconds else None,
            "by_endpoint": {ep: dict(sorted(c.items())) for ep, c in sorted(self.by_endpoint.items())},
            "by_status": {
                ep: {str(k): v for k, v in sorted(c.items())} for ep, c in sorted(self.by_status.items())
            },
            "latency_ms": {
                kind: {
                    "n": len(v),
                    "p50": round(percentile(v, 50) * 1000, 1),
                    "p99": round(percentile(v, 99) * 1000, 1),
                    "max": round(max(v) * 1000, 1),
                }
                for kind, v in sorted(self.latency.items())
            },
            "jobs": dict(self.jobs),
            "solves": dict(self.solved),
            "errors_500": self.errors_500,
            "unexpected": dict(self.unexpected),
            "unexpected_samples": self.unexpected_samples,
            "connection_errors": dict(self.conn_errors),
            "connection_error_samples": self.conn_samples,
            "abandoned": self.abandoned,
            "memory_mib": memory,
            "samples": self.samples,
            "ok": ok,
        }


def print_report(rep: dict[str, Any]) -> None:
    print(
        f"soak of {rep['url']}: {rep['seconds']} s, {rep['clients']} clients, {rep['requests']} requests "
        f"({rep['requests_per_second']}/s)"
    )
    classes = ["2xx", "4xx", "429", "5xx", "error"]
    print(f"\n{'endpoint':28}" + "".join(f"{c:>7}" for c in classes))
    for ep, counts in rep["by_endpoint"].items():
        print(f"{ep:28}" + "".join(f"{counts.get(c, 0):>7}" for c in classes))
    print(f"\n{'kind':16}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for kind, lat in rep["latency_ms"].items():
        print(f"{kind:16}{lat['n']:>7}{lat['p50']:>10}{lat['p99']:>10}{lat['max']:>10}")
    print(f"\nsolves: {rep['solves']}; jobs: {rep['jobs']}; abandoned at the end: {rep['abandoned']}")
    print(
        f"500s: {rep['errors_500']}; unexpected: {sum(rep['unexpected'].values())}; "
        f"connection errors: {sum(rep['connection_errors'].values())}"
    )
    for what, n in sorted(rep["unexpected"].items(), key=lambda kv: -kv[1]):
        print(f"  unexpected {n:>5} x {what}")
    for what, n in rep["connection_errors"].items():
        print(f"  connection {n:>5} x {what}")
    mem = rep["memory_mib"]
    if mem:
        procs = rep["samples"][-1].get("processes") if rep["samples"] else None
        t, s, c = mem["total_mib"], mem["server_mib"], mem["children_mib"]
        print(
            f"RSS MiB (server + workers, {procs} processes at the end, {len(rep['samples'])} samples): "
            f"start {t['start']}, end {t['end']}, max {t['max']}; server alone {s['start']} -> {s['end']} "
            f"(max {s['max']}); workers {c['start']} -> {c['end']} (max {c['max']})"
        )
    health = [s.get("health_status") for s in rep["samples"]]
    print(
        f"/healthz samples: {dict(Counter(str(h) for h in health))}; last: {rep['samples'][-1].get('health') if rep['samples'] else None}"
    )
    print("OK" if rep["ok"] else "FAILED")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "url", nargs="?", default="http://127.0.0.1:8000", help="the server (default %(default)s)"
    )
    ap.add_argument("--minutes", type=float, required=True, help="how long to send traffic (the bound)")
    ap.add_argument("--max-requests", type=int, default=None, help="stop after this many requests as well")
    ap.add_argument("--clients", type=int, default=4, help="concurrent simulated clients")
    ap.add_argument(
        "--own-addresses",
        action="store_true",
        help="each client sends from its own loopback address 127.0.0.(2+i) (a loopback server only)",
    )
    ap.add_argument(
        "--pid", type=int, default=None, help="the serve process: sample its and its workers' RSS"
    )
    ap.add_argument("--sample-seconds", type=float, default=5.0, help="memory and /healthz sampling period")
    ap.add_argument(
        "--progress-seconds", type=float, default=30.0, help="a progress line on stderr this often"
    )
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds one request may take")
    ap.add_argument(
        "--drain-seconds", type=float, default=30.0, help="wait this long for requests in flight at the end"
    )
    ap.add_argument(
        "--think", type=float, default=0.2, help="each client pauses up to this many seconds between flows"
    )
    ap.add_argument(
        "--depths",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[4, 8, 12, 20],
        help="scramble depths of the valid states, comma-separated (default 4,8,12,20)",
    )
    ap.add_argument(
        "--verify-share", type=float, default=0.5, help="share of solved answers replayed with /api/move"
    )
    ap.add_argument(
        "--skip", action="append", default=[], metavar="KIND", help="leave a kind of traffic out (repeatable)"
    )
    ap.add_argument(
        "--only", action="append", default=[], metavar="KIND", help="send only these kinds (repeatable)"
    )
    ap.add_argument("--seed", type=int, default=None, help="random seed of the traffic mix")
    ap.add_argument("--strict", action="store_true", help="also fail on unexpected statuses")
    ap.add_argument("--out", type=Path, default=None, help="write the report as JSON here")
    args = ap.parse_args(argv)
    if not args.minutes > 0 or args.clients < 1 or (args.max_requests is not None and args.max_requests < 1):
        ap.error("need --minutes > 0, --clients >= 1 and --max-requests >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rep = asyncio.run(Soak(args).run())
    print_report(rep)
    if args.out is not None:
        args.out.write_text(json.dumps(rep, indent=1) + "\n", encoding="utf-8")
    return 0 if rep["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
