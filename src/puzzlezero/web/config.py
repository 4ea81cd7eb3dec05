"""Settings of the web server: pool size, queue bound and the server-side caps every request obeys.

How a burst of solves is served (``workers`` and ``queue``): at most ``workers`` solves run at
once; up to ``queue`` more (64 by default) wait in one first-come-first-served line, and only a
solve beyond that is refused, HTTP 429 with a ``Retry-After`` of the expected seconds until a place
frees. A waiting solve loses nothing: its time limit and the server's grace period start when a
worker takes it. Clients either wait on ``POST /api/solve`` (it answers when the solve ends, as
before) or queue a job, ``POST /api/jobs`` (202 at once with its id, place in line and expected
wait) and poll ``GET /api/jobs/{id}`` for the place, the estimate and at last the result, which is
kept ``result_ttl`` seconds (``max_results`` ended jobs at most). The web pages use jobs and show
"queued: 7th in line, about 40 s". The expected wait comes from the measured durations of the
last 20 solves of the same puzzle (:mod:`puzzlezero.web.wait_estimate`). On two workers a default
cube solve takes its whole 20 s, so the 64th in line waits about ten minutes.
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

__all__ = ["LOOPBACK_HOSTS", "ServerConfig", "find_node_modules", "has_shipped_model", "policy_only"]


#: the names of this machine seen from itself: the hosts a server bound to loopback answers to
LOOPBACK_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "::1", "[::1]")

#: the three folders of ``node_modules`` the cube page needs; nothing else under it is served
VENDOR_DIRS: dict[str, str] = {
    "cubing": "cubing/dist/lib/cubing",
    "three/src": "three/src",
    "random-uint-below": "random-uint-below/dist",
}


def _default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def _default_worker_memory(workers: int) -> int:
    """Half of the memory shared among ``workers``, at least 4 GiB, in MiB (0: unknown). The memory
    is the machine's, or its cgroup's limit where lower (a container's):
    :func:`puzzlezero.budget.total_memory`."""
    from puzzlezero import budget

    total = budget.total_memory()
    if total is None:
        return 0
    return max(4096, int(total / 2 / max(1, workers)) >> 20)


@dataclass(frozen=True)
class ServerConfig:
    """Everything ``create_app`` needs; every field has a safe default for a laptop."""

    workers: int = field(default_factory=_default_workers)
    """Solver worker processes (or threads with ``executor="thread"``); solves beyond this wait."""
    queue: int = 64
    """Solves allowed to wait for a worker, first come first served (a classroom of 50 fits); one
    more, while every worker is busy and the line is full, gets HTTP 429. Time in line does not
    count against a solve's time limit."""
    result_ttl: float = 300.0
    """Seconds an ended job's answer stays readable at ``GET /api/jobs/{id}`` (then 404)."""
    max_results: int = 256
    """Ended jobs kept at most (the oldest are forgotten first): bounds their memory."""
    executor: Literal["process", "thread"] = "process"
    """``process``: supervised spawn-context worker processes (the search loop holds the GIL, so
    threads would serialise; each process loads the network once; a stuck or dead one is replaced).
    ``thread``: for tests and fakes (a thread cannot be stopped: an overrun keeps its worker)."""
    torch_threads: int = 0
    """Intra-op threads of the networks in each worker process (onnxruntime's; torch's for a model
    that runs on torch); 0 = ``max(1, cpu_count // workers)``."""
    default_time_limit: float = 20.0
    """Seconds of search a request gets when it names no ``time_limit``."""
    max_time_limit: float = 60.0
    """Largest ``time_limit`` a request may ask for (422 above it)."""
    default_max_nodes: int = 2_000_000
    """Generated-node limit a request gets when it names no ``max_nodes``."""
    max_max_nodes: int = 10_000_000
    """Largest ``max_nodes`` a request may ask for (422 above it)."""
    max_batch: int = 20_000
    """Largest search ``batch`` a request may ask for."""
    grace_seconds: float = 15.0
    """Extra wall time after a running solve's ``time_limit`` (model loading) before it is answered
    504; counted from when a worker takes the solve, never while it waits in line."""
    overrun_margin: float = 5.0
    """Seconds a solve answered 504 (past its wall limit) may still hold its worker process before the
    worker is killed (SIGKILL) and replaced; a frozen or runaway search costs at most this much
    beyond its limit."""
    shutdown_timeout: float = 10.0
    """Seconds a stopping server gives running solves to end (``SolvePool.aclose``); then their
    workers are killed."""
    worker_memory_mib: int | None = None
    """Address-space limit of each worker process in MiB (``RLIMIT_AS``; 0 = none): a search that
    needs more fails with a named error instead of the machine swapping or the OS killing a
    worker. ``None``: half of the machine's memory (of its cgroup's limit where lower: a
    container's) shared among the workers, at least 4 GiB (a cube3 worker with the shipped model
    maps 0.7 GiB when idle, at most 1.8 GiB during a default 2M-node solve and 3.3 GiB at the
    10M-node cap); see :attr:`worker_memory_limit`."""
    client_waiting: int = 4
    """Solves one client (its browser's client key, else its address: ``client_keys_per_minute``)
    may have waiting in line; one more gets HTTP 429 (0 = no limit beyond ``queue``). A client
    holds at most ``client_waiting + client_running`` requests being read, waiting and running."""
    client_running: int = 1
    """Solves one client may have running while other clients' solves wait: a free worker takes the
    first waiting solve whose client runs fewer, so those pass its others in line; when every
    waiting solve's client runs this many, the first of them starts anyway, so no worker idles
    while solves wait (0 = no limit beyond ``workers``)."""
    start_timeout: float = 120.0
    """Seconds a worker process may take to start up (imports, the served networks, the tables
    they read); one that is not ready by then (hung or frozen) is stopped and counted as a failed
    start, so the backoff and ``/healthz`` see it."""
    respawn_backoff: float = 1.0
    """Seconds before a worker that failed to start is tried again; doubled after each further
    failure (at most 5 minutes), so a broken install is retried, not respawned in a loop."""
    cancel_grace: float = 2.0
    """Seconds a cancelled solve's search has to stop at its next look at the clock (its worker
    then takes the next job); a worker still in it after that is killed and replaced."""
    recycle_after: int = 500
    """Jobs after which a worker process is replaced by a fresh one, between jobs (0 = never); a
    worker whose job ran out of memory is replaced after that job whatever this says."""
    value_optimal_time_limit: float = 5.0
    """Seconds ``/api/value`` lets the optimal solver run when a request asks for the optimum."""
    max_body_bytes: int = 64 * 1024
    """Largest request body; larger ones get HTTP 413 before they are parsed."""
    max_moves: int = 5_000
    """Longest move list ``/api/move`` applies."""
    max_svg_frames: int = 1_000
    """Longest trajectory ``/api/move`` draws as SVG frames (each is a few kB)."""
    max_scramble_depth: int = 1_000
    """Deepest scramble ``/api/scramble`` makes."""
    quick_search: dict[str, dict[str, float]] = field(default_factory=dict)
    """Puzzle -> ``weight``/``batch`` for requests that name none (one search of that setting). Empty
    by default: such requests get the solver's anytime schedule for the puzzle within the request's
    time limit (:mod:`puzzlezero.search.anytime`), which answers with a quick setting first and
    improves on it while the time lasts. (A fixed quick setting, cube3 lambda 0.4 and N 1000, left
    one of 20 simultaneous held-out cubes unsolved at 20 s and 2M nodes.)"""
    models: dict[str, str] = field(default_factory=dict)
    """Puzzle name -> model folder served instead of the shipped model (``--model cube3=DIR``)."""
    node_modules: Path | None = None
    """Where ``npm ci`` put ``node_modules``; ``None`` = look beside the repository and in the cwd; a
    folder without cubing.js turns the 3-D view off (the page draws SVG)."""
    allowed_hosts: tuple[str, ...] = field(default_factory=lambda: LOOPBACK_HOSTS)
    """Host names (or addresses) requests may be addressed to, without the port; a request with
    another ``Host`` header gets HTTP 400 (a web page elsewhere cannot reach a loopback server
    through a DNS name of its own: DNS rebinding). ``"*.example.org"`` allows the subdomains,
    ``"*"`` any host. Default: the loopback names; ``puzzlezero serve`` adds the names it is served
    under (``--allowed-host``)."""
    forwarded_allow_ips: tuple[str, ...] = ()
    """Addresses or networks (``10.0.0.0/8``) of the reverse proxies whose ``X-Forwarded-For`` and
    ``X-Forwarded-Proto`` headers name the client; a peer not named here gets its headers
    ignored, loopback included. Empty (the default): no peer is trusted, and the client is the
    address the connection comes from."""
    address_limit: int = 32
    """Solves (and ``/api/value`` requests) one network address may have being read, waiting and
    running together, whatever client keys its browsers hold (0 = no limit); a class behind one
    NAT or proxy address shares it, so a classroom deployment sets it to about the class's size.
    An IPv6 address counts by its /64."""
    client_keys_per_minute: int = 30
    """Client keys issued per minute to one address (as many at once). A key is a signed cookie
    (``pz_client``) that a browser gets with a page, or with a same-origin call that lacks one; it
    makes the browser a client of its own for the per-client limits, so the students of a class
    behind one address are distinct clients. Beyond the rate, and for a request with no valid
    key, the address is the client. 0 = no keys: clients by address only."""
    client_secret: str = ""
    """The secret that signs client keys (HMAC-SHA256). Empty: a random one per process, so keys
    end with the process (the pages get new ones as they call); set the same secret in every
    process that serves one site, or to keep keys across restarts. Never shown by the API."""
    rate_limit: float = 10.0
    """Requests a second one client may make on average to the quick endpoints (``/api/validate``,
    ``/api/move``, ``/api/render``, ``/api/scramble``, ``/api/puzzles``); more get HTTP 429 with
    ``Retry-After`` (0 = no limit). A ``/api/move`` trajectory drawn as SVG counts one request more
    per 50 frames."""
    rate_burst: int = 50
    """Requests one client may make to the quick endpoints at once before ``rate_limit`` applies."""
    limit_concurrency: int = 200
    """Connections (and requests in progress) the server holds before it answers new requests 503
    until some close (0 = no limit); reaching it is logged once."""
    keep_alive_timeout: int = 5
    """Seconds an idle keep-alive connection stays open between requests."""
    header_timeout: float = 10.0
    """Seconds a connection has to send a complete request head, from when it opens or its previous
    response ended (else it is closed), and then the request's body (else HTTP 408): a client
    that sends a request a byte at a time cannot hold a connection."""
    job_idle_timeout: float = 120.0
    """Seconds a waiting job (``POST /api/jobs``) keeps its place in line without its client
    polling ``GET /api/jobs/{id}``; then it leaves the line (status ``cancelled``). The pages poll
    every second."""
    puzzle_definitions: tuple[dict[str, Any], ...] = ()
    """Permutation puzzles served beside the registered ones, as data: native definitions (JSON
    objects, :mod:`puzzlezero.puzzles.permutation.definition`; ``puzzlezero serve --puzzle-file``
    reads them from the files its operator names). They are checked and registered in the server
    when the app is made, and handed to every worker process with its start-up arguments, which
    registers them before it serves; requests name them by their ``name``, never by a file."""

    def __post_init__(self) -> None:
        from puzzlezero.errors import PuzzleError

        if self.workers < 1:
            raise PuzzleError(f"workers must be at least 1, got {self.workers}")
        if not self.value_optimal_time_limit > 0:
            raise PuzzleError(
                f"value_optimal_time_limit must be positive, got {self.value_optimal_time_limit}"
            )
        if self.queue < 0:
            raise PuzzleError(f"queue must be 0 or more, got {self.queue}")
        for name in ("client_waiting", "client_running", "worker_memory_limit", "recycle_after"):
            if getattr(self, name) < 0:
                raise PuzzleError(f"{name} must be 0 (no limit) or more, got {getattr(self, name)}")
        if not self.start_timeout > 0:
            raise PuzzleError(f"start_timeout must be positive seconds, got {self.start_timeout}")
        for name in ("overrun_margin", "shutdown_timeout", "respawn_backoff", "cancel_grace"):
            if not getattr(self, name) >= 0:
                raise PuzzleError(f"{name} must be 0 or more seconds, got {getattr(self, name)}")
        if not self.result_ttl > 0 or self.max_results < 1:
            raise PuzzleError(
                f"need result_ttl > 0 and max_results >= 1, got {self.result_ttl} and {self.max_results}"
            )
        if self.executor not in ("process", "thread"):
            raise PuzzleError(f"executor must be 'process' or 'thread', got {self.executor!r}")
        if not 0 < self.default_time_limit <= self.max_time_limit:
            raise PuzzleError(
                f"need 0 < default_time_limit ({self.default_time_limit}) <= max_time_limit ({self.max_time_limit})"
            )
        if not 0 < self.default_max_nodes <= self.max_max_nodes:
            raise PuzzleError(
                f"need 0 < default_max_nodes ({self.default_max_nodes}) <= max_max_nodes ({self.max_max_nodes})"
            )
        for name, quick in self.quick_search.items():
            if not set(quick) <= {"weight", "batch"}:
                raise PuzzleError(
                    f"quick_search of {name} sets weight and batch, not {sorted(set(quick) - {'weight', 'batch'})}"
                )
        if not self.job_idle_timeout > 0:
            raise PuzzleError(f"job_idle_timeout must be positive, got {self.job_idle_timeout}")
        for host in self.allowed_hosts:
            if (
                not host
                or "*" in host[1:]
                or (host.startswith("*") and host != "*" and not host.startswith("*."))
            ):
                raise PuzzleError(
                    f"allowed host {host!r}: give a name or address, '*.domain' for its subdomains or '*' for any"
                )
        for name in ("address_limit", "client_keys_per_minute", "limit_concurrency", "rate_limit"):
            if not getattr(self, name) >= 0:
                raise PuzzleError(f"{name} must be 0 (no limit) or more, got {getattr(self, name)}")
        if self.rate_burst < 1 or self.keep_alive_timeout < 1 or not self.header_timeout > 0:
            raise PuzzleError(
                f"need rate_burst >= 1, keep_alive_timeout >= 1 and header_timeout > 0, got {self.rate_burst}, "
                f"{self.keep_alive_timeout} and {self.header_timeout}"
            )
        for ip in self.forwarded_allow_ips:
            try:
                ipaddress.ip_network(ip, strict=False)
            except ValueError:
                raise PuzzleError(
                    f"forwarded_allow_ips {ip!r}: give the address (or network) of a proxy, e.g. 127.0.0.1"
                ) from None

    @property
    def worker_memory_limit(self) -> int:
        """Each worker's address-space limit in MiB (0 = none): ``worker_memory_mib`` resolved."""
        if self.worker_memory_mib is not None:
            return self.worker_memory_mib
        return _default_worker_memory(self.workers)

    @property
    def threads_per_worker(self) -> int:
        return self.torch_threads or max(1, (os.cpu_count() or 1) // self.workers)

    def served_models(self, names: list[str]) -> list[tuple[str, str | None]]:
        """``(puzzle, model folder or None = shipped)`` for each puzzle in ``names`` with a model."""
        return [(n, self.models.get(n)) for n in names if n in self.models or has_shipped_model(n)]

    def public(self) -> dict[str, Any]:
        """The limits a client may want to know (no paths)."""
        out = asdict(replace(self, puzzle_definitions=()))  # not every move of every definition
        out.pop("node_modules")
        out.pop("client_secret")  # signs the client keys
        out.pop("forwarded_allow_ips")  # where the proxies are
        out["models"] = sorted(self.models)  # which puzzles have one, not where it lies
        out["puzzle_definitions"] = [str(d.get("name", "")) for d in self.puzzle_definitions]
        return out


def has_shipped_model(name: str) -> bool:
    """Is a trained model for puzzle ``name`` installed (the package's or a companion's)?"""
    from puzzlezero.model_folders import find_model_dir

    return find_model_dir(name) is not None


def policy_only(folder: str | Path) -> bool:
    """Does the model in ``folder`` have a policy and no trained value (its card's ``policy_only``,
    written by the trainer: EfficientCube's recipe)? Then only the policy beam searches it. The
    card (tens of kB, asked for by every ``GET /api/puzzles``) is read again only when its
    modification time or size changes."""
    path = Path(folder) / "card.json"
    try:
        stat = path.stat()
    except OSError:
        return False
    return _card_says_policy_only(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _card_says_policy_only(path: str, mtime_ns: int, size: int) -> bool:
    """:func:`policy_only` of one version of a card (``mtime_ns`` and ``size`` key the cache)."""
    try:
        card = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(card, dict) and bool(card.get("policy_only"))


def find_node_modules(explicit: Path | None = None) -> Path | None:
    """The ``node_modules`` folder holding cubing.js, or ``None`` when it is not installed.

    Only ``explicit`` when given; else ``$PUZZLEZERO_NODE_MODULES``, the repository root (for an
    editable install) and the working directory, in that order.
    """
    candidates: list[Path] = []
    if explicit is not None:
        return Path(explicit) if _has_vendor(Path(explicit)) else None
    env = os.environ.get("PUZZLEZERO_NODE_MODULES")
    if env:
        candidates.append(Path(env))
    candidates.append(Path(__file__).resolve().parents[3] / "node_modules")
    candidates.append(Path.cwd() / "node_modules")
    return next((path for path in candidates if _has_vendor(path)), None)


def _has_vendor(path: Path) -> bool:
    return all((path / sub).is_dir() for sub in VENDOR_DIRS.values())
