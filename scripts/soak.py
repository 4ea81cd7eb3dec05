"""Soak test of a running web server: students' traffic and faults for a bounded time, then a verdict.

Drives ``puzzlezero serve`` at URL (default http://127.0.0.1:8000) from ``--clients`` simulated
students for ``--minutes`` minutes (or until ``--max-requests`` requests), reports what happened
and judges it: the exit status is 1 when the server fell short of a bound.

Students. Each student is a browser of its own: its own connections and cookie jar. It loads the
page first (``GET /``), which hands it a signed client key (the ``pz_client`` cookie; ``--no-keys``:
no page load, so the server knows the students by their address only). By default every student
comes from this machine's one address, as a class behind one NAT does; ``--forwarded-addresses N``
spreads them over N addresses named in ``X-Forwarded-For`` (honoured only by a server started with
``--forwarded-allow-ips`` naming this machine), ``--own-addresses`` gives each its own loopback
source address 127.0.0.(2+i) (a loopback server only).

Traffic, each student picking at random, weighted (``--skip KIND`` leaves a kind out, ``--only KIND``
keeps only the kinds named; a wrong name lists them all):

- valid: cube3 solves of fresh scrambles (``GET /api/scramble``) with short time limits, puzzle15
  solves, optimal solves of puzzle8 and lightsout7 (no model needed), queued jobs (``POST
  /api/jobs``, polled every second, some cancelled), ``/api/value`` (and with ``optimal`` or the
  ``pdb`` heuristic, 503 while its table is not built), ``/api/validate``, ``/api/render``; every
  solved answer is replayed with ``/api/move`` now and then;
- invalid: bad states, unknown puzzles, heuristics and searches naming code (``sys:exit``,
  ``os:system``), oversized bodies, absurd limits (beam width, batch, nodes, time), malformed JSON,
  a foreign ``Host`` header, unknown job ids.

Every kind has its expected statuses; anything else is counted as unexpected, with the first
bodies kept.

Faults, mixed in when asked: ``--kill-every S`` SIGKILLs one of the server's worker processes
(children of ``--pid`` running multiprocessing's ``spawn_main``) every S seconds; ``--flood-every S``
sends a burst of ``--flood-size`` concurrent requests from one client of its own; ``--slow-clients
N`` keeps N raw connections that send half a request head and wait for the server to drop them.

The verdict (each bound a flag with a default):

- served share: of the valid requests, the share answered 2xx (``--min-served``), beside the shares
  refused (429, 503: admission, a killed worker, a missing table) and failed (any other 5xx, a
  connection error); any failed valid request, any 500 and any connection error fail the soak;
- latency of served valid requests, p50 and p99: of those the server answers itself (everything
  but ``POST /api/solve`` and ``POST /api/value``), p99 at most ``--max-p99`` seconds; of solves, their
  time beyond the line (the answer's ``waited_seconds``: waiting is admission, bounded by the
  queue), p99 at most ``--max-solve-p99``; the time with the line is reported, not judged;
- memory, with ``--pid`` (the ``serve`` process): the resident memory of the server and of all its
  descendants (the workers), from ``/proc``, at the start, after the warm-up (``--warmup-seconds``)
  and at the end. The server process's growth from the warm-up to the end is at most
  ``--max-rss-growth-mib``: it lives as long as the service. The workers' is reported: it follows
  their warm-up (each loads its networks at its first solves), kills and recycling, and each is
  bounded by its memory limit;
- ``/healthz`` answers 200 at the end (the workers were replaced);
- ``--strict``: no unexpected status either.

    puzzlezero serve --port 8702 & python scripts/soak.py http://127.0.0.1:8702 --minutes 1 --pid $!
    python scripts/soak.py --minutes 5 --pid 12345 --clients 30 --kill-every 60 --out soak.json
    python scripts/soak.py http://127.0.0.1:8702 --minutes 0.2 --only solve-optimal --only validate
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import math
import os
import random
import signal
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

#: the simulated student sending from this task (its connections and cookie jar)
_CLIENT: contextvars.ContextVar[httpx.AsyncClient | None] = contextvars.ContextVar("client", default=None)

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MIB = 1024 * 1024
COOKIE = "pz_client"
TERMINAL = ("done", "failed", "cancelled")
CODE_NAMES = ("sys:exit", "os:system", "this:s", "builtins:exec", "puzzlezero.solver:solve", "os:_exit")
BAD_STATES = {
    "cube3": ["R U X9", "UUUUUUUUU", "U" * 54, "R" * 20_001, "", "R U (", "R4 U"],
    "puzzle15": ["1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", "0 1 2", "a b c", "99 " * 16, "-1 " * 16],
}
#: the kinds of request a student sends in earnest: the served share counts these
VALID = frozenset(
    {
        "page",
        "scramble",
        "solve-cube3",
        "solve-puzzle15",
        "solve-optimal",
        "job-create",
        "job-poll",
        "job-cancel",
        "value",
        "value-optimal",
        "validate",
        "render",
        "move-check",
        "info",
    }
)
#: what a flood asks to solve: the 8-puzzle's deepest position (31 moves; milliseconds of optimal search)
FLOOD = {"puzzle": "puzzle8", "state": "8 6 7 2 5 4 3 0 1", "search": "optimal", "time_limit": 1}
#: endpoints whose answer waits for a worker (in line first); the rest the server answers itself
WORKER_ENDPOINTS = frozenset({"POST /api/solve", "POST /api/value"})


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


def outcome(status: int | None) -> str:
    """What an answer to a valid request is: served (2xx), refused (429, 503), failed (any other
    5xx; ``None``, a connection error), or other (a 4xx, e.g. cancelling an ended job)."""
    if status is None:
        return "failed"
    if 200 <= status < 300:
        return "served"
    if status in (429, 503):
        return "refused"
    return "failed" if status >= 500 else "other"


# ---- the server's processes: memory, workers ----------------------------------------------------
def _children() -> dict[int, list[int]]:
    """Parent pid -> its children's pids, from ``/proc`` (empty where there is none)."""
    out: dict[int, list[int]] = defaultdict(list)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            out[int(stat.rsplit(")", 1)[1].split()[1])].append(int(entry))
    return out


def _rss(pid: int) -> int | None:
    """Resident bytes of ``pid`` (``/proc/<pid>/statm``: VmRSS); ``None`` when it is gone."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return None


def process_tree_rss(pid: int) -> dict[str, Any] | None:
    """Resident MiB of ``pid`` and of all its descendants; ``None`` when ``pid`` is gone (or no
    ``/proc``)."""
    server = _rss(pid)
    if server is None:
        return None
    children = _children()
    todo, kids, count = list(children[pid]), 0, 0
    while todo:
        p = todo.pop()
        rss = _rss(p)
        if rss is not None:
            kids += rss
            count += 1
        todo.extend(children[p])
    return {
        "server_mib": round(server / MIB, 1),
        "children_mib": round(kids / MIB, 1),
        "total_mib": round((server + kids) / MIB, 1),
        "processes": 1 + count,
    }


def worker_pids(pid: int) -> list[int]:
    """The solver workers of the server ``pid``: its children started by multiprocessing's spawn
    (not its resource tracker)."""
    out = []
    for child in _children()[pid]:
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            out.append(child)
    return out


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
        self.outcomes: Counter[str] = Counter()  # of valid requests: served, refused, failed, other
        self.refused: Counter[int] = Counter()
        self.served_direct: list[float] = []  # latency of served valid requests the server answers itself
        self.served_worker: list[float] = []  # of served solves and values, time in line included
        self.solve_beyond_line: list[float] = []  # of served solves, less their time in line
        self.errors_500 = 0
        self.unexpected: Counter[str] = Counter()
        self.unexpected_samples: list[dict[str, Any]] = []
        self.conn_errors: Counter[str] = Counter()
        self.conn_samples: list[dict[str, Any]] = []
        self.jobs: Counter[str] = Counter()
        self.failed_jobs = 0  # jobs that ended failed with a 5xx other than 503
        self.solved: Counter[str] = Counter()
        self.samples: list[dict[str, Any]] = []
        self.abandoned = 0
        self.keyed = 0
        self.kills: list[dict[str, Any]] = []
        self.floods = 0
        self.slow: list[dict[str, Any]] = []
        self.client = self._http_client(None, None, 4)  # the monitor: /healthz, no key
        self.students = [self._student(i) for i in range(args.clients)]
        self.flooder = self._student(args.clients, connections=args.flood_size + 2)
        self.kinds: dict[str, Kind] = {
            "solve-cube3": Kind(4, self.solve_cube3),
            "solve-puzzle15": Kind(2, self.solve_puzzle15),
            "solve-optimal": Kind(2, self.solve_optimal),
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

    def _http_client(
        self, local_address: str | None, forwarded: str | None, connections: int
    ) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(local_address=local_address) if local_address else None
        return httpx.AsyncClient(
            base_url=self.url,
            timeout=httpx.Timeout(self.args.timeout, connect=10.0),
            limits=httpx.Limits(max_connections=connections),
            transport=transport,
            headers={"x-forwarded-for": forwarded} if forwarded else None,
        )

    def _student(self, index: int, connections: int = 4) -> httpx.AsyncClient:
        """Student ``index``'s browser: its own connections and cookie jar, from its address."""
        own = f"127.0.0.{2 + index % 250}" if self.args.own_addresses else None
        n = self.args.forwarded_addresses
        forwarded = f"198.51.{100 + index % n // 250}.{1 + index % n % 250}" if n else None
        return self._http_client(own, forwarded, connections)

    # ---- one request ------------------------------------------------------------------------------
    async def call(
        self,
        kind: str,
        method: str,
        path: str,
        expected: tuple[int, ...],
        endpoint: str | None = None,
        client: httpx.AsyncClient | None = None,
        **kwargs: Any,
    ) -> httpx.Response | None:
        """Send one request, time it and file its status; ``None`` on a connection error."""
        if self.args.max_requests is not None and self.requests >= self.args.max_requests:
            self.stopping = True
            raise Stop
        self.requests += 1
        endpoint = endpoint or f"{method} {path.split('?')[0]}"
        valid = kind in VALID
        t0 = time.monotonic()
        try:
            r = await (client or _CLIENT.get() or self.client).request(method, path, **kwargs)
        except httpx.TransportError as exc:
            self.by_endpoint[endpoint]["error"] += 1
            self.conn_errors[f"{kind} {type(exc).__name__}"] += 1
            if len(self.conn_samples) < 20:
                self.conn_samples.append({"kind": kind, "endpoint": endpoint, "error": repr(exc)[:300]})
            if valid:
                self.outcomes["failed"] += 1
            return None
        seconds = time.monotonic() - t0
        self.latency[kind].append(seconds)
        self.by_endpoint[endpoint][status_class(r.status_code)] += 1
        self.by_status[endpoint][r.status_code] += 1
        if valid:
            what = outcome(r.status_code)
            self.outcomes[what] += 1
            if what == "refused":
                self.refused[r.status_code] += 1
            elif what == "served":
                (self.served_worker if endpoint in WORKER_ENDPOINTS else self.served_direct).append(seconds)
        if r.status_code == 500:
            self.errors_500 += 1
        if r.status_code not in expected:
            self.flag(kind, f"{endpoint} -> {r.status_code}", r.text)
        if r.status_code == 429 and kind != "flood":  # a polite client waits a little before its next try
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
    def body_of(r: httpx.Response | None) -> Any:
        if r is None:
            return None
        try:
            return r.json()
        except ValueError:
            return None

    async def scramble(self, puzzle: str, depth: int | None = None) -> str | None:
        depth = depth if depth is not None else self.rng.choice(self.args.depths)
        r = await self.call(
            "scramble", "GET", f"/api/scramble?puzzle={puzzle}&depth={depth}", (200, 429), "GET /api/scramble"
        )
        body = self.body_of(r)
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
            "move-check",
            "POST",
            "/api/move",
            (200, 429),
            json={"puzzle": puzzle, "state": state, "moves": moves},
        )
        body = self.body_of(r)
        if r is not None and r.status_code == 200 and not (isinstance(body, dict) and body.get("solved")):
            self.flag("move-check", f"the {puzzle} solution does not solve the state", r.text)

    # ---- valid traffic ------------------------------------------------------------------------------
    async def solve(self, kind: str, puzzle: str, limits: tuple[float, float], **options: Any) -> None:
        state = await self.scramble(puzzle)
        if state is None:
            return
        body = {
            "puzzle": puzzle,
            "state": state,
            "time_limit": round(self.rng.uniform(*limits), 2),
            **options,
        }
        r = await self.call(kind, "POST", "/api/solve", (200, 429, 503), json=body)
        if r is not None and r.status_code == 200:
            answer = self.body_of(r)
            waited = answer.get("waited_seconds") if isinstance(answer, dict) else None
            self.solve_beyond_line.append(r.elapsed.total_seconds() - float(waited or 0.0))
            await self.check_solution(puzzle, state, answer)

    async def solve_cube3(self) -> None:
        await self.solve("solve-cube3", "cube3", (0.3, 3.0))

    async def solve_puzzle15(self) -> None:
        await self.solve("solve-puzzle15", "puzzle15", (0.3, 3.0))

    async def solve_optimal(self) -> None:
        """An optimal solve of a small puzzle: no model, milliseconds of search."""
        puzzle = self.rng.choice(("puzzle8", "lightsout7"))
        await self.solve("solve-optimal", puzzle, (1.0, 3.0), search="optimal")

    async def job(self) -> None:
        state = await self.scramble("cube3")
        if state is None:
            return
        time_limit = round(self.rng.uniform(0.3, 3.0), 2)
        body = {"puzzle": "cube3", "state": state, "time_limit": time_limit}
        r = await self.call("job-create", "POST", "/api/jobs", (202, 429, 503), json=body)
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
        if status == "done":
            self.jobs["done"] += 1
            await self.check_solution("cube3", state, view.get("result"))
        elif status == "failed":
            err = view.get("error") or {}
            code = err.get("status") if isinstance(err, dict) else None
            self.jobs[f"failed {code}"] += 1
            if code == 500:
                self.errors_500 += 1
            if code != 503:  # 503: its worker was killed, or no worker could run it
                self.flag("job-result", f"a job failed with {code}", json.dumps(err)[:300])
                if isinstance(code, int) and code >= 500:
                    self.failed_jobs += 1
        else:
            self.jobs[str(status)] += 1

    async def value(self) -> None:
        state = await self.scramble("cube3")
        if state is not None:
            await self.call(
                "value", "POST", "/api/value", (200, 429, 503), json={"puzzle": "cube3", "state": state}
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
            "validate", "POST", "/api/validate", (200, 429), json={"puzzle": puzzle, "state": state}
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
                "render", "GET", "/api/render", (200, 429), params={"puzzle": puzzle, "state": state}
            )
        else:
            size = self.rng.choice((50, 300, 2000))
            body = {"puzzle": puzzle, "state": state, "size": size}
            r = await self.call("render", "POST", "/api/render", (200, 429), json=body)
        if r is not None and r.status_code == 200 and "<svg" not in r.text[:500]:
            self.flag("render", "a 200 without an SVG", r.text)

    async def info(self) -> None:
        path = self.rng.choice(("/api/info", "/api/puzzles", "/healthz"))
        await self.call("info", "GET", path, (200, 429))

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
                (400, 404, 422, 429),
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

    # ---- faults -------------------------------------------------------------------------------------
    async def pause(self, seconds: float) -> bool:
        """Sleep ``seconds`` or until the soak ends; True while it goes on."""
        end = min(time.monotonic() + seconds, self.deadline)
        while not self.over() and time.monotonic() < end:
            await asyncio.sleep(min(0.5, end - time.monotonic()))
        return not self.over()

    async def killer(self) -> None:
        """SIGKILL one of the server's worker processes every ``--kill-every`` seconds."""
        while await self.pause(self.args.kill_every):
            pids = await asyncio.to_thread(worker_pids, self.args.pid)
            entry: dict[str, Any] = {"t": round(time.monotonic() - self.started, 1), "pid": None}
            if pids:
                entry["pid"] = self.rng.choice(pids)
                try:
                    os.kill(entry["pid"], signal.SIGKILL)
                except ProcessLookupError:
                    entry["pid"] = None
            self.kills.append(entry)

    async def flood(self) -> None:
        """Every ``--flood-every`` seconds, ``--flood-size`` requests at once from one client of its own
        (solves and scrambles): it gets its share, the rest 429 (or 503 past the connection cap)."""
        while await self.pause(self.args.flood_every):
            self.floods += 1
            sends = []
            for i in range(self.args.flood_size):
                if i % 2:
                    path = "/api/scramble?puzzle=puzzle8&depth=20"
                    sends.append(self.call("flood", "GET", path, (200, 429, 503), "flood", self.flooder))
                else:
                    sends.append(
                        self.call(
                            "flood", "POST", "/api/solve", (200, 429, 503), "flood", self.flooder, json=FLOOD
                        )
                    )
            results = await asyncio.gather(*sends, return_exceptions=True)
            if any(isinstance(r, Stop) for r in results):
                return

    async def slow_client(self) -> None:
        """Open a connection, send half a request head, and time how long the server holds it; again."""
        url = httpx.URL(self.url)
        port = url.port or (443 if url.scheme == "https" else 80)
        half = f"GET /api/info HTTP/1.1\r\nHost: {url.host}\r\nUser-Agent: soak-slow\r\n".encode()
        while not self.over():
            t0 = time.monotonic()
            try:
                reader, writer = await asyncio.open_connection(url.host, port)
            except OSError as exc:
                self.slow.append({"error": repr(exc)[:200]})
                await self.pause(1.0)
                continue
            closed = None
            try:
                writer.write(half)
                await writer.drain()
                hold = min(self.args.slow_hold, self.deadline - time.monotonic())
                await asyncio.wait_for(reader.read(4096), timeout=max(0.1, hold))
                closed = True
            except TimeoutError:  # still open: past --slow-hold, or the soak ended first (not counted)
                closed = False if time.monotonic() - t0 >= self.args.slow_hold else None
            except OSError:
                closed = True  # reset by the server
            finally:
                writer.close()
            held = time.monotonic() - t0
            if closed is not None:
                self.slow.append({"held": round(held, 2), "closed_by_server": closed})
            if closed is False:
                self.flag("slow-client", f"a half-sent request head held {held:.0f} s and not dropped")

    # ---- the run --------------------------------------------------------------------------------------
    def over(self) -> bool:
        if time.monotonic() >= self.deadline:
            self.stopping = True
        return self.stopping

    async def join(self, index: int) -> None:
        """Student ``index`` loads the page, as a browser does: the server hands it a client key."""
        client = self.students[index] if index < len(self.students) else self.flooder
        if self.args.no_keys:
            return
        try:
            await self.call("page", "GET", "/", (200, 429), client=client)
        except Stop:
            return
        if index < len(self.students) and client.cookies.get(COOKIE):
            self.keyed += 1

    async def simulated_client(self, index: int) -> None:
        _CLIENT.set(self.students[index])
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
        """RSS of the server tree and ``/healthz`` every ``--sample-seconds``."""
        while await self.pause(self.args.sample_seconds):
            await self.sample()

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
        while await self.pause(self.args.progress_seconds):
            last = self.samples[-1] if self.samples else {}
            rss = f", RSS {last['total_mib']} MiB" if "total_mib" in last else ""
            valid = sum(self.outcomes.values())
            served = f"{self.outcomes['served'] / valid:.1%}" if valid else "-"
            print(
                f"[{time.monotonic() - self.started:6.0f} s] {self.requests} requests, {served} of valid ones "
                f"served, {self.errors_500} 500s, {sum(self.unexpected.values())} unexpected, "
                f"{sum(self.conn_errors.values())} connection errors, {len(self.kills)} kills{rss}",
                file=sys.stderr,
                flush=True,
            )

    async def run(self) -> dict[str, Any]:
        await self.sample()  # the start: before any traffic
        await asyncio.gather(*(self.join(i) for i in range(self.args.clients)))
        if self.args.flood_every and self.args.flood_size:
            await self.join(self.args.clients)  # the flooder's page load: a key of its own, if any is left
        background = [asyncio.create_task(self.sampler()), asyncio.create_task(self.progress())]
        if self.args.kill_every and self.args.pid is not None:
            background.append(asyncio.create_task(self.killer()))
        if self.args.flood_every and self.args.flood_size:
            background.append(asyncio.create_task(self.flood()))
        background += [asyncio.create_task(self.slow_client()) for _ in range(self.args.slow_clients)]
        clients = [asyncio.create_task(self.simulated_client(i)) for i in range(self.args.clients)]
        while not self.over() and not all(c.done() for c in clients):
            await asyncio.sleep(0.2)
        self.stopping = True
        done, pending = await asyncio.wait([*clients, *background], timeout=self.args.drain_seconds)
        for task in pending:  # a request still in flight after the drain: the client hangs up
            task.cancel()
            self.abandoned += task in clients
        await asyncio.gather(*pending, return_exceptions=True)
        for task in done:
            exc = task.exception()
            if exc is not None and not isinstance(exc, Stop):
                raise exc
        await self.sample()  # the end: after the drain
        for c in [self.client, self.flooder, *self.students]:
            await c.aclose()
        return self.report()

    # ---- the verdict ------------------------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        seconds = time.monotonic() - self.started
        rss = [s for s in self.samples if "total_mib" in s]
        memory = None
        if rss:
            memory = {
                key: {"start": rss[0][key], "end": rss[-1][key], "max": max(s[key] for s in rss)}
                for key in ("total_mib", "server_mib", "children_mib")
            }
            warmup = self.args.warmup_seconds
            if warmup is None:
                warmup = min(60.0, self.args.minutes * 60 / 5)
            base = next((x for x in rss if x["t"] >= warmup), rss[-1])
            memory["growth_mib"] = round(rss[-1]["total_mib"] - rss[0]["total_mib"], 1)
            memory["warmup"] = {
                "t": base["t"],
                "server_mib": base["server_mib"],
                "total_mib": base["total_mib"],
            }
            memory["server_growth_mib"] = round(rss[-1]["server_mib"] - base["server_mib"], 1)
        valid = sum(self.outcomes.values())
        shares = {
            k: round(self.outcomes[k] / valid, 4) if valid else None
            for k in ("served", "refused", "failed", "other")
        }

        def lat(values: list[float]) -> dict[str, Any]:
            p50, p99 = percentile(values, 50), percentile(values, 99)
            return {
                "n": len(values),
                "p50": None if math.isnan(p50) else round(p50, 3),
                "p99": None if math.isnan(p99) else round(p99, 3),
            }

        latency = {
            "direct": lat(self.served_direct),
            "solve_beyond_line": lat(self.solve_beyond_line),
            "worker_with_line": lat(self.served_worker),
            "all": lat(self.served_direct + self.served_worker),
        }
        last = self.samples[-1] if self.samples else {}
        slow_held = [s["held"] for s in self.slow if "held" in s]
        rep: dict[str, Any] = {
            "url": self.url,
            "seconds": round(seconds, 1),
            "clients": self.args.clients,
            "keyed": self.keyed,
            "requests": self.requests,
            "requests_per_second": round(self.requests / seconds, 2) if seconds else None,
            "valid": {"requests": valid, **dict(self.outcomes), "refused_by_status": dict(self.refused)},
            "shares": shares,
            "latency_s": latency,
            "by_endpoint": {ep: dict(sorted(c.items())) for ep, c in sorted(self.by_endpoint.items())},
            "by_status": {
                ep: {str(k): v for k, v in sorted(c.items())} for ep, c in sorted(self.by_status.items())
            },
            "latency_ms_by_kind": {
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
            "faults": {
                "kills": self.kills,
                "floods": self.floods,
                "flood_status": {str(k): v for k, v in sorted(self.by_status.get("flood", {}).items())},
                "slow_connections": len(slow_held),
                "slow_closed_by_server": sum(1 for s in self.slow if s.get("closed_by_server")),
                "slow_held_s": {"p50": percentile(slow_held, 50), "max": max(slow_held)}
                if slow_held
                else None,
                "slow_errors": sum(1 for s in self.slow if "error" in s),
            },
            "memory_mib": memory,
            "health_at_end": {"status": last.get("health_status"), "body": last.get("health")},
            "samples": self.samples,
        }
        rep["failures"] = self.judge(rep)
        rep["ok"] = not rep["failures"]
        return rep

    def judge(self, rep: dict[str, Any]) -> list[str]:
        """What fell short of a bound, one line each (empty: the soak passed)."""
        a, out = self.args, []
        valid, shares, lat = rep["valid"], rep["shares"], rep["latency_s"]
        if not valid["requests"]:
            out.append("no valid request was answered or sent")
        elif shares["served"] < a.min_served:
            out.append(
                f"served share {shares['served']:.1%} of {valid['requests']} valid requests is below "
                f"--min-served {a.min_served:.0%} (refused {shares['refused']:.1%}, failed {shares['failed']:.1%})"
            )
        if valid.get("failed"):
            out.append(
                f"{valid['failed']} valid requests failed (a 5xx other than 503, or a connection error)"
            )
        if self.failed_jobs:
            out.append(f"{self.failed_jobs} jobs failed with a 5xx other than 503")
        if self.errors_500:
            out.append(f"{self.errors_500} answers 500 (jobs included)")
        conn = sum(self.conn_errors.values())
        if conn:
            out.append(f"{conn} connection errors")
        p99 = lat["direct"]["p99"]
        if p99 is not None and p99 > a.max_p99:
            out.append(f"p99 latency of served requests {p99:.2f} s is above --max-p99 {a.max_p99:g} s")
        p99 = lat["solve_beyond_line"]["p99"]
        if p99 is not None and p99 > a.max_solve_p99:
            out.append(
                f"p99 of served solves beyond their time in line {p99:.2f} s is above --max-solve-p99 {a.max_solve_p99:g} s"
            )
        mem = rep["memory_mib"]
        if mem is not None and mem["server_growth_mib"] > a.max_rss_growth_mib:
            out.append(
                f"RSS of the server process grew {mem['server_growth_mib']:.0f} MiB after the warm-up "
                f"({mem['warmup']['server_mib']:.0f} -> {mem['server_mib']['end']:.0f}), above "
                f"--max-rss-growth-mib {a.max_rss_growth_mib:g}"
            )
        elif a.pid is not None and mem is None:
            out.append(f"no memory figure for --pid {a.pid} (is it the server, on this machine?)")
        if rep["health_at_end"]["status"] != 200:
            out.append(
                f"/healthz at the end answered {rep['health_at_end']['status']}: {rep['health_at_end']['body']}"
            )
        if a.strict and self.unexpected:
            out.append(f"{sum(self.unexpected.values())} unexpected statuses (--strict)")
        return out


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_report(rep: dict[str, Any]) -> None:
    print(
        f"soak of {rep['url']}: {rep['seconds']} s, {rep['clients']} students ({rep['keyed']} with a client key), "
        f"{rep['requests']} requests ({rep['requests_per_second']}/s)"
    )
    classes = ["2xx", "4xx", "429", "5xx", "error"]
    print(f"\n{'endpoint':28}" + "".join(f"{c:>7}" for c in classes))
    for ep, counts in rep["by_endpoint"].items():
        print(f"{ep:28}" + "".join(f"{counts.get(c, 0):>7}" for c in classes))
    print(f"\n{'kind':16}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for kind, lat in rep["latency_ms_by_kind"].items():
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
    f = rep["faults"]
    print(
        f"faults: {len(f['kills'])} worker kills ({sum(1 for k in f['kills'] if k['pid'])} hit a worker), "
        f"{f['floods']} floods {f['flood_status']}, {f['slow_connections']} slow connections "
        f"({f['slow_closed_by_server']} dropped by the server, held {f['slow_held_s']})"
    )
    v, s, lat = rep["valid"], rep["shares"], rep["latency_s"]
    print(f"\nvalid requests: {v['requests']}")
    if v["requests"]:
        print(
            f"  served {s['served']:.1%}, refused {s['refused']:.1%} {v['refused_by_status']}, "
            f"failed {s['failed']:.1%}, other 4xx {s['other']:.1%}"
        )
    print(f"  {'latency of served requests, s':46}{'n':>7}{'p50':>9}{'p99':>9}")
    for name, what in (
        ("all", "all"),
        ("direct", "answered by the server itself (judged)"),
        ("solve_beyond_line", "solves, less their time in line (judged)"),
        ("worker_with_line", "solves and values, line included"),
    ):
        g = lat[name]
        print(f"    {what:44}{g['n']:>7}{_s(g['p50']):>9}{_s(g['p99']):>9}")
    mem = rep["memory_mib"]
    if mem:
        t, sv, c = mem["total_mib"], mem["server_mib"], mem["children_mib"]
        procs = next((x.get("processes") for x in reversed(rep["samples"]) if "processes" in x), None)
        w = mem["warmup"]
        print(
            f"  RSS MiB, server + workers ({procs} processes at the end): start {t['start']}, end {t['end']}, "
            f"growth {mem['growth_mib']:+}, max {t['max']}; workers {c['start']} -> {c['end']} (max {c['max']})"
        )
        print(
            f"  RSS MiB, server process: start {sv['start']}, after the warm-up ({w['t']} s) {w['server_mib']}, "
            f"end {sv['end']}: growth {mem['server_growth_mib']:+} after the warm-up (judged)"
        )
    else:
        print("  RSS: not measured (give --pid)")
    health = [str(x.get("health_status")) for x in rep["samples"]]
    print(f"  /healthz: {dict(Counter(health))}; at the end {rep['health_at_end']['status']}")
    if rep["ok"]:
        print("OK")
    else:
        print("FAILED: " + "; ".join(rep["failures"]))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    class Help(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
        """The whole docstring as it is written, and each option's default."""

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=Help)
    ap.add_argument("url", nargs="?", default="http://127.0.0.1:8000", help="the server")
    ap.add_argument("--minutes", type=float, required=True, help="how long to send traffic (the bound)")
    ap.add_argument("--max-requests", type=int, default=None, help="stop after this many requests as well")
    g = ap.add_argument_group("students")
    g.add_argument("--clients", type=int, default=4, help="simulated students, each a browser of its own")
    g.add_argument(
        "--no-keys", action="store_true", help="load no page: the students get no client key (one client)"
    )
    g.add_argument(
        "--forwarded-addresses",
        type=int,
        default=0,
        metavar="N",
        help="spread the students over N addresses in X-Forwarded-For (the server must trust this machine: "
        "serve --forwarded-allow-ips); 0: this machine's address",
    )
    g.add_argument(
        "--own-addresses",
        action="store_true",
        help="each student sends from its own loopback address 127.0.0.(2+i) (a loopback server only)",
    )
    g.add_argument(
        "--think", type=float, default=0.2, help="each student pauses up to this many seconds between flows"
    )
    g.add_argument(
        "--depths",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[4, 8, 12, 20],
        help="scramble depths of the valid states, comma-separated",
    )
    g.add_argument(
        "--verify-share", type=float, default=0.5, help="share of solved answers replayed with /api/move"
    )
    g.add_argument(
        "--skip", action="append", default=[], metavar="KIND", help="leave a kind of traffic out (repeatable)"
    )
    g.add_argument(
        "--only", action="append", default=[], metavar="KIND", help="send only these kinds (repeatable)"
    )
    g.add_argument("--seed", type=int, default=None, help="random seed of the traffic mix")
    g = ap.add_argument_group("faults")
    g.add_argument(
        "--kill-every",
        type=float,
        default=0.0,
        metavar="S",
        help="SIGKILL a worker of --pid every S seconds (0: never)",
    )
    g.add_argument(
        "--flood-every",
        type=float,
        default=0.0,
        metavar="S",
        help="a burst from one client every S seconds (0: never)",
    )
    g.add_argument("--flood-size", type=int, default=40, help="requests at once in a burst")
    g.add_argument(
        "--slow-clients", type=int, default=0, help="connections that send half a request head and wait"
    )
    g.add_argument(
        "--slow-hold",
        type=float,
        default=60.0,
        help="seconds a half-sent head may be held before it counts as unexpected",
    )
    g = ap.add_argument_group("the verdict")
    g.add_argument("--min-served", type=float, default=0.9, help="least share of valid requests answered 2xx")
    g.add_argument(
        "--max-p99", type=float, default=5.0, help="p99 seconds of served requests the server answers itself"
    )
    g.add_argument(
        "--max-solve-p99",
        type=float,
        default=20.0,
        help="p99 seconds of served solves, less their time in line",
    )
    g.add_argument(
        "--max-rss-growth-mib",
        type=float,
        default=128.0,
        help="growth of the server process's RSS from the warm-up to the end (with --pid)",
    )
    g.add_argument(
        "--warmup-seconds",
        type=float,
        default=None,
        help="when the memory baseline is taken (default: a fifth of the soak, at most 60 s)",
    )
    g.add_argument("--strict", action="store_true", help="also fail on unexpected statuses")
    g = ap.add_argument_group("measuring and output")
    g.add_argument(
        "--pid",
        type=int,
        default=None,
        help="the serve process: its and its workers' RSS; whose workers to kill",
    )
    g.add_argument("--sample-seconds", type=float, default=5.0, help="memory and /healthz sampling period")
    g.add_argument(
        "--progress-seconds", type=float, default=30.0, help="a progress line on stderr this often"
    )
    g.add_argument("--timeout", type=float, default=90.0, help="seconds one request may take")
    g.add_argument(
        "--drain-seconds", type=float, default=30.0, help="wait this long for requests in flight at the end"
    )
    g.add_argument("--out", type=Path, default=None, help="write the report as JSON here")
    args = ap.parse_args(argv)
    if not args.minutes > 0 or args.clients < 1 or (args.max_requests is not None and args.max_requests < 1):
        ap.error("need --minutes > 0, --clients >= 1 and --max-requests >= 1")
    if not 0 <= args.min_served <= 1:
        ap.error("--min-served is a share, 0 to 1")
    if args.kill_every and args.pid is None:
        ap.error("--kill-every needs --pid (the serve process whose workers to kill)")
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
