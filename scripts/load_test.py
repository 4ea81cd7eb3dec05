"""Load test of the web API: N concurrent ``POST /api/solve`` on loopback (not run in CI).

Starts ``puzzlezero serve`` on a free port (or uses ``--url``), fetches N scrambles by seed, fires
all solves at once and prints latency percentiles, status counts and solution statistics.

    python scripts/load_test.py                      # 50 cube3 solves, depth 8, own server
    python scripts/load_test.py --queue 8            # watch the server refuse with 429
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
PUZZLEZERO = [sys.executable, "-c", "import sys; from puzzlezero.cli.main import main; sys.exit(main(sys.argv[1:]))"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(args: argparse.Namespace) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [*PUZZLEZERO, "serve", "--port", str(port), "--queue", str(args.queue),
           "--log-level", "warning"]
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


async def one(client: httpx.AsyncClient, body: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    t0 = time.perf_counter()
    try:
        r = await client.post("/api/solve", json=body)
        status, data = r.status_code, r.json()
    except httpx.HTTPError as exc:
        status, data = -1, {"detail": repr(exc)}
    return time.perf_counter() - t0, status, data


async def run(url: str, args: argparse.Namespace) -> None:
    timeout = httpx.Timeout(args.time_limit * args.requests + 60)
    limits = httpx.Limits(max_connections=args.requests)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:
        info = (await client.get("/api/info")).json()
        bodies = []
        for i in range(args.requests):
            r = await client.get("/api/scramble", params={"puzzle": args.puzzle, "depth": args.depth, "seed": i})
            r.raise_for_status()
            body = {"puzzle": args.puzzle, "state": r.json()["state"], "time_limit": args.time_limit}
            if args.search:
                body["search"] = args.search
            bodies.append(body)
        await one(client, bodies[0])  # warm-up: the worker loads its model
        t0 = time.perf_counter()
        results = await asyncio.gather(*(one(client, b) for b in bodies))
        wall = time.perf_counter() - t0
    lat = np.array([r[0] for r in results])
    statuses = Counter(r[1] for r in results)
    ok = [r[2] for r in results if r[1] == 200]
    solved = [d for d in ok if d["solved"]]
    errors = [f"{s}: {d.get('detail')}" for _, s, d in results if s not in (200, 429)]
    pool = info["pool"]
    print(f"server {url}: {pool['workers']} workers, queue {pool['queue']}; "
          f"{args.requests} concurrent {args.puzzle} solves, scramble depth {args.depth}")
    print(f"latency  p50 {np.percentile(lat, 50):.2f} s   p90 {np.percentile(lat, 90):.2f} s   "
          f"p99 {np.percentile(lat, 99):.2f} s   max {lat.max():.2f} s   wall {wall:.2f} s "
          f"({len(ok) / wall:.2f} solves/s)")
    print("status   " + "   ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    if ok:
        lengths = [d["length"] for d in solved]
        nodes = sum(d["nodes_generated"] for d in ok)
        secs = sum(d["seconds"] for d in ok)
        print(f"solved   {len(solved)}/{len(ok)}   mean length {np.mean(lengths) if lengths else float('nan'):.2f}   "
              f"mean solver time {secs / len(ok):.2f} s   {nodes / max(secs, 1e-9):,.0f} nodes/s per worker")
    print(f"errors   {len(errors)}" + "".join(f"\n  {e}" for e in errors[:10]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="use a running server instead of starting one")
    ap.add_argument("--puzzle", default="cube3")
    ap.add_argument("--depth", type=int, default=8, help="scramble depth")
    ap.add_argument("--requests", type=int, default=50, help="concurrent solves")
    ap.add_argument("--time-limit", type=float, default=20.0, help="time_limit of each solve")
    ap.add_argument("--search", help="search name (solver default when omitted)")
    ap.add_argument("--workers", type=int, default=0, help="server workers (own server; 0 = its default)")
    ap.add_argument("--queue", type=int, default=64, help="server queue (own server)")
    ap.add_argument("--model", action="append", default=[], metavar="PUZZLE=DIR",
                    help="serve this model folder (own server; e.g. a fresh `puzzlezero export`)")
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
