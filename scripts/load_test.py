"""Load test of the web API: N concurrent solves on loopback (not run in CI).

Starts ``puzzlezero serve`` on a free port at its default settings (or uses ``--url``), takes N
states (scrambles by seed, or the cases of a benchmark file), fires all solves at once and prints
latency percentiles (the time each client waited for its answer, line included), how long the
solves waited in line and ran, status counts (200, 429 refusals, other errors) and solution
statistics. ``--via jobs`` queues each solve with ``POST /api/jobs`` and polls it every second, as
the web page does; the default is the blocking ``POST /api/solve``.

    python scripts/load_test.py                      # 50 cube3 solves, depth 8, own server
    python scripts/load_test.py --cases cube3_deepcubea.json --ids 0:50   # held-out-like cubes
    python scripts/load_test.py --queue 8            # a short line: watch the server refuse with 429
    python scripts/load_test.py --via jobs --puzzle puzzle8 --depth 20 --search optimal
    python scripts/load_test.py --url http://127.0.0.1:8000 --puzzle puzzle15 --depth 40
    python scripts/load_test.py --model cube3=runs/cube3/model --depth 4
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: the console script, run by this interpreter (``python -m puzzlezero.cli.main`` would register no commands)
PUZZLEZERO = [
    sys.executable,
    "-c",
    "import sys; from puzzlezero.cli.main import main; sys.exit(main(sys.argv[1:]))",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(args: argparse.Namespace) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [*PUZZLEZERO, "serve", "--port", str(port), "--log-level", "warning"]
    if args.queue is not None:
        cmd += ["--queue", str(args.queue)]
    if args.workers:
        cmd += ["--workers", str(args.workers)]
    for item in args.model:
        cmd += ["--model", item]
    proc = subprocess.Popen(cmd, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited with {proc.returncode}")
        try:
            httpx.get(url + "/healthz", timeout=1.0)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.25)
    proc.terminate()
    sys.exit("server did not start")


async def one(client: httpx.AsyncClient, body: dict[str, Any], via: str) -> tuple[float, int, dict[str, Any]]:
    """One client: ``(seconds until its answer, HTTP status, body)``; a job's status is the one
    ``POST /api/solve`` would have given."""
    t0 = time.perf_counter()
    try:
        if via == "solve":
            r = await client.post("/api/solve", json=body)
            status, data = r.status_code, r.json()
        else:
            r = await client.post("/api/jobs", json=body)
            status, data = r.status_code, r.json()
            while status == 202 and data["status"] in ("queued", "running"):
                await asyncio.sleep(1.0)
                data = (await client.get(f"/api/jobs/{data['id']}")).json()
            if status == 202:
                status, data = (
                    (200, data["result"])
                    if data["status"] == "done"
                    else (
                        data["error"]["status"] if data["error"] else 499,
                        data["error"] or {"detail": "cancelled"},
                    )
                )
    except httpx.HTTPError as exc:
        status, data = -1, {"detail": repr(exc)}
    return time.perf_counter() - t0, status, data


def states(args: argparse.Namespace) -> list[str] | None:
    """The states of ``--cases`` (in the puzzle's text), repeated to ``--requests``; else ``None``."""
    if not args.cases:
        return None
    import puzzlezero as pz
    from puzzlezero.case_files import load_cases, parse_ids

    p = pz.make(args.puzzle)
    cases = load_cases(p, args.cases, parse_ids(args.ids) if args.ids else None)
    return [p.format(cases[i % len(cases)].state) for i in range(args.requests)]


def pct(values: list[float] | np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


async def run(url: str, args: argparse.Namespace) -> None:
    timeout = httpx.Timeout(args.time_limit * args.requests + 120)
    limits = httpx.Limits(max_connections=args.requests)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:
        info = (await client.get("/api/info")).json()
        texts = states(args)
        bodies = []
        for i in range(args.requests):
            if texts is None:
                r = await client.get(
                    "/api/scramble", params={"puzzle": args.puzzle, "depth": args.depth, "seed": i}
                )
                r.raise_for_status()
                state = r.json()["state"]
            else:
                state = texts[i]
            body = {"puzzle": args.puzzle, "state": state, "time_limit": args.time_limit}
            if args.search:
                body["search"] = args.search
            bodies.append(body)
        await one(client, {**bodies[0], "time_limit": min(args.time_limit, 5.0)}, "solve")  # warm-up
        t0 = time.perf_counter()
        results = await asyncio.gather(*(one(client, b, args.via) for b in bodies))
        wall = time.perf_counter() - t0
    lat = np.array([r[0] for r in results])
    statuses = Counter(r[1] for r in results)
    ok = [r[2] for r in results if r[1] == 200]
    solved = [d for d in ok if d["solved"]]
    errors = [f"{s}: {d.get('detail')}" for _, s, d in results if s not in (200, 429)]
    pool = info["pool"]
    source = f"cases of {args.cases}" if args.cases else f"scramble depth {args.depth}"
    print(
        f"server {url}: {pool['workers']} workers, queue {pool['queue']}; {args.requests} concurrent "
        f"{args.puzzle} solves via {args.via}, {source}, time_limit {args.time_limit:g} s"
    )
    print(
        f"latency  p50 {pct(lat, 50):.2f} s   p90 {pct(lat, 90):.2f} s   p99 {pct(lat, 99):.2f} s   "
        f"max {lat.max():.2f} s   wall {wall:.2f} s ({len(ok) / wall:.2f} solves/s)"
    )
    waited = [d["waited_seconds"] for d in ok if d.get("waited_seconds") is not None]
    ran = [d["seconds"] for d in ok]
    print(
        f"in line  p50 {pct(waited, 50):.2f} s   p99 {pct(waited, 99):.2f} s   max {max(waited, default=0):.2f} s;"
        f"   solving p50 {pct(ran, 50):.2f} s   p99 {pct(ran, 99):.2f} s"
    )
    print("status   " + "   ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    if ok:
        lengths = [d["length"] for d in solved]
        nodes = sum(d["nodes_generated"] for d in ok)
        secs = sum(d["seconds"] for d in ok)
        print(
            f"solved   {len(solved)}/{len(ok)}   mean length {np.mean(lengths) if lengths else float('nan'):.2f}   "
            f"mean solver time {secs / len(ok):.2f} s   {nodes / max(secs, 1e-9):,.0f} nodes/s per worker"
        )
    print(f"refused  {statuses.get(429, 0)} (HTTP 429)")
    print(f"errors   {len(errors)}" + "".join(f"\n  {e}" for e in errors[:10]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="use a running server instead of starting one")
    ap.add_argument("--puzzle", default="cube3")
    ap.add_argument("--depth", type=int, default=8, help="scramble depth")
    ap.add_argument("--cases", help="benchmark file whose states to solve (instead of scrambles)")
    ap.add_argument("--ids", help="with --cases: ids A:B only")
    ap.add_argument(
        "--via",
        choices=("solve", "jobs"),
        default="solve",
        help="blocking POST /api/solve, or POST /api/jobs polled every second (as the page does)",
    )
    ap.add_argument("--requests", type=int, default=50, help="concurrent solves")
    ap.add_argument("--time-limit", type=float, default=20.0, help="time_limit of each solve")
    ap.add_argument("--search", help="search name (solver default when omitted)")
    ap.add_argument("--workers", type=int, default=0, help="server workers (own server; 0 = its default)")
    ap.add_argument("--queue", type=int, help="server queue (own server; default: the server's, 64)")
    ap.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="PUZZLE=DIR",
        help="serve this model folder (own server; e.g. a fresh `puzzlezero export`)",
    )
    args = ap.parse_args()
    proc = None
    url = args.url
    if url is None:
        proc, url = start_server(args)
    try:
        asyncio.run(run(url, args))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(20)


if __name__ == "__main__":
    main()
