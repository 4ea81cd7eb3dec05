"""Property tests over every endpoint of the web app: arbitrary JSON bodies, raw bytes, query
strings, job ids and paths never give a 500 or a traceback, only answers and named errors (4xx,
and 503/504 where the server says why).

The app is the real one (``create_app``) with the worker pool on threads and a solver test double
that answers at once (the real searches have their own tests); ``/api/value`` runs the real
estimate (shipped models, no table builds: the process forbids them as a web worker does). Each
property runs a quick profile in the default run and :data:`SLOW` examples behind ``-m slow``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

import puzzlezero as pz  # noqa: E402
from puzzlezero.puzzles.base import Puzzle  # noqa: E402
from puzzlezero.web import ServerConfig, create_app  # noqa: E402

#: examples per property in the default run, and behind ``-m slow``
QUICK, SLOW = 150, 10_000

NAMES = pz.names()
JOB_IDS: list[str] = []  # ids that POST /api/jobs gave, for the job endpoints to poll and cancel
STATUSES: dict[str, int] = {}  # "METHOD path status" -> count over the run (printed with -s)


@dataclass
class Instant:
    """What ``solver.solve`` returns, at once: solved when the state is a goal."""

    puzzle: str
    solved: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "puzzle": self.puzzle,
            "solved": self.solved,
            "solution": [],
            "length": 0 if self.solved else None,
            "nodes_generated": 1,
            "seconds": 0.0,
        }


def instant_solve(puzzle: Puzzle, state: np.ndarray, opts: Any, on_solution: Any = None) -> Instant:
    return Instant(puzzle.name, bool(puzzle.is_goal(np.asarray(state)[None])[0]))


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    from puzzlezero import storage

    config = ServerConfig(executor="thread", workers=1, value_optimal_time_limit=0.2, client_waiting=0)
    before = storage.table_builds_forbidden()
    storage.forbid_table_builds()  # as in a web worker: a missing table is a 503, never a build
    try:
        app = create_app(config, solve_fn=instant_solve)
        with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as c:
            yield c
    finally:
        storage.forbid_table_builds(before)
        if STATUSES:
            print("\nanswers:", json.dumps(dict(sorted(STATUSES.items())), indent=1))


def profiles(strategy: st.SearchStrategy[Any]) -> Callable[[Callable[..., None]], tuple[Any, Any]]:
    """A property as two tests: ``QUICK`` examples, and ``SLOW`` examples marked ``slow``."""

    def make(fn: Callable[..., None]) -> tuple[Any, Any]:
        common = {"deadline": None, "suppress_health_check": list(HealthCheck)}
        quick = settings(max_examples=QUICK, **common)(given(case=strategy)(fn))
        slow = pytest.mark.timeout(3600)(
            pytest.mark.slow(settings(max_examples=SLOW, **common)(given(case=strategy)(fn)))
        )
        return quick, slow

    return make


def check(response: Any) -> None:
    """Never a 500, never a traceback; an error answer is JSON with a ``detail``."""
    path = response.request.url.path
    key = f"{response.request.method} {path if path in KNOWN_PATHS else '/api/jobs/ID' if path.startswith('/api/jobs/') else 'other'} {response.status_code}"
    STATUSES[key] = STATUSES.get(key, 0) + 1
    text = response.text
    assert response.status_code != 500, text[:2000]
    assert "Traceback" not in text, text[:2000]
    json_type = response.headers.get("content-type", "").startswith("application/json")
    if response.status_code >= 400 and json_type and response.request.method != "HEAD":
        body = response.json()
        assert isinstance(body, dict) and "detail" in body, text[:500]


# ---- building blocks ------------------------------------------------------------------------------
SPECIAL = "URFDLBurfdlb2' ,;:\n\t0123456789#$.*@+_-[](){}\"\\/=%&?\x00\x1b\u00e9\u2028\ufeff"
texts = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=SPECIAL, max_size=120),
    st.builds(lambda s, n: s * n, st.text(alphabet=SPECIAL, min_size=1, max_size=6), st.integers(1, 4_000)),
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=8) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)


def _near_states(name: str) -> st.SearchStrategy[str]:
    p = pz.make(name)
    rng = np.random.default_rng(0)
    shown = [p.format(s) for s in (p.goals(1)[0], *p.scramble(rng, 4, 3))]
    return st.one_of(st.sampled_from(shown), st.sampled_from(shown), texts)


puzzle_names = st.one_of(st.sampled_from(NAMES), st.sampled_from(["", "nope", "cube3:x", "CUBE3"]), texts)


#: values of the right type for each request field (edges and out-of-range numbers included)
TYPED = {
    "search": st.sampled_from(["bwas", "gbfs", "optimal", "beam", "qstar", "mcts", "kociemba", "this:s"]),
    "heuristic": st.sampled_from(
        ["learned", "pdb", "misplaced", "wcd", "learned-q", "learned-onnx", "this:s", "os:system"]
    ),
    "weight": st.one_of(st.floats(0, 1), st.floats(-1, 200)),
    "batch": st.one_of(st.integers(1, 100), st.integers(-5, 10**9)),
    "max_nodes": st.one_of(st.integers(1, 10_000), st.integers(-5, 10**12)),
    "time_limit": st.one_of(st.floats(0.01, 5), st.floats(-1, 1e9)),
    "optimal": st.booleans(),
    "moves": st.one_of(
        texts, st.lists(st.sampled_from(["U", "R'", "F2", "L", "D", "r", "x", "F3"]), max_size=10)
    ),
    "trajectory": st.booleans(),
    "svg": st.booleans(),
    "size": st.integers(-10, 5000),
}
#: anything JSON in any field
JUNK = dict.fromkeys(TYPED, json_values)
#: the fields each POST endpoint reads (others are a 422 by design: requests forbid unknown fields)
POST_FIELDS = {
    "/api/solve": ["search", "heuristic", "weight", "batch", "max_nodes", "time_limit"],
    "/api/jobs": ["search", "heuristic", "weight", "batch", "max_nodes", "time_limit"],
    "/api/value": ["heuristic", "optimal"],
    "/api/validate": [],
    "/api/move": ["moves", "trajectory", "svg"],
    "/api/render": ["size"],
}
POSTS = list(POST_FIELDS)
KNOWN_PATHS = {
    *POSTS,
    "/api/scramble",
    "/api/render",
    "/api/puzzles",
    "/api/info",
    "/healthz",
    "/",
    "/board",
    "/docs",
}


def _typed(path: str, name: str) -> st.SearchStrategy[dict[str, Any]]:
    """A body for ``path`` with fields of the right types (a registered puzzle, a state near a valid
    one): it gets past the schema to the parsing and the work behind it."""
    required = {"puzzle": st.just(name), "state": _near_states(name)}
    if path == "/api/move":
        required["moves"] = TYPED["moves"]
    optional = {k: TYPED[k] for k in POST_FIELDS[path] if k not in required}
    return st.fixed_dictionaries(required, optional=optional)


def _any(path: str, name: str) -> st.SearchStrategy[Any]:
    """A body for ``path`` of any JSON: in the right fields, with the wrong fields, or none."""
    junk = st.fixed_dictionaries(
        {"puzzle": st.one_of(st.just(name), puzzle_names), "state": json_values},
        optional={k: JUNK[k] for k in POST_FIELDS[path]},
    )
    extra = st.fixed_dictionaries({"puzzle": puzzle_names}, optional={"state": json_values, **JUNK})
    return st.one_of(junk, extra, json_values)


def _posts(body: Callable[[str, str], st.SearchStrategy[Any]]) -> st.SearchStrategy[tuple[str, Any]]:
    return st.tuples(st.sampled_from(POSTS), st.sampled_from(NAMES)).flatmap(
        lambda pn: st.tuples(st.just(pn[0]), body(*pn))
    )


typed_posts, any_posts = _posts(_typed), _posts(_any)


GETS = ["/api/scramble", "/api/render", "/api/puzzles", "/api/info", "/healthz", "/", "/board", "/docs"]
query_keys = st.sampled_from(["puzzle", "state", "depth", "seed", "svg", "size", "bogus", ""])
query_values = st.one_of(  # URLs stay under the client's 64 KiB
    st.text(max_size=80),
    st.builds(lambda s, n: s * n, st.text(alphabet=SPECIAL, min_size=1, max_size=6), st.integers(1, 400)),
    st.integers().map(str),
    st.sampled_from(NAMES),
)
queries = st.one_of(
    st.dictionaries(query_keys, query_values, max_size=5),
    st.sampled_from(NAMES).map(lambda n: {"puzzle": n}),
)


# ---- properties -----------------------------------------------------------------------------------
@profiles(typed_posts)
def _post_typed(client: TestClient, case: tuple[str, Any]) -> None:
    path, body = case
    response = client.post(path, json=body)
    check(response)
    if path == "/api/jobs" and response.status_code == 202:
        JOB_IDS.append(response.json()["id"])


test_post_typed, test_post_typed_slow = _post_typed


@profiles(any_posts)
def _post_json(client: TestClient, case: tuple[str, Any]) -> None:
    path, body = case
    check(client.post(path, json=body))


test_post_json, test_post_json_slow = _post_json


raw_bodies = st.one_of(
    st.binary(max_size=300),
    texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
    typed_posts.map(
        lambda pb: json.dumps(pb[1]).encode()[: max(1, len(json.dumps(pb[1])) // 2)]
    ),  # cut short
    st.tuples(
        st.sampled_from(["weight", "time_limit", "batch", "max_nodes", "size", "state", "depth"]),
        st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-0", "1" * 5000, "[]", "{}", "null"]),
        st.sampled_from(NAMES),
    ).map(lambda t: f'{{"puzzle": "{t[2]}", "state": "R", "{t[0]}": {t[1]}}}'.encode()),
)


@profiles(
    st.tuples(st.sampled_from(POSTS), raw_bodies, st.sampled_from(["application/json", "text/plain", ""]))
)
def _post_raw(client: TestClient, case: tuple[str, bytes, str]) -> None:
    path, data, content_type = case
    check(client.post(path, content=data, headers={"Content-Type": content_type} if content_type else {}))


test_post_raw, test_post_raw_slow = _post_raw


@profiles(st.tuples(st.sampled_from(GETS), queries))
def _get_query(client: TestClient, case: tuple[str, dict[str, str]]) -> None:
    path, query = case
    check(client.get(f"{path}?{urlencode(query)}" if query else path))


test_get_query, test_get_query_slow = _get_query


job_refs = st.one_of(
    st.integers(0, 50), st.text(alphabet=string.ascii_letters + string.digits + "-_.%", max_size=80)
)


@profiles(st.tuples(st.sampled_from(["GET", "DELETE", "POST", "PUT"]), job_refs))
def _jobs(client: TestClient, case: tuple[str, Any]) -> None:
    """Polling and cancelling jobs, real ids (made by a solve queued here) and made-up ones."""
    method, ref = case
    if isinstance(ref, int):
        if not JOB_IDS or ref == 0:
            response = client.post("/api/jobs", json={"puzzle": "cube2", "state": "R U"})
            check(response)
            if response.status_code == 202:
                JOB_IDS.append(response.json()["id"])
        ref = JOB_IDS[ref % len(JOB_IDS)] if JOB_IDS else "none"
    check(client.request(method, f"/api/jobs/{ref}"))


test_jobs, test_jobs_slow = _jobs


@profiles(
    st.tuples(
        st.sampled_from(["GET", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
        st.lists(
            st.sampled_from(["api", "jobs", "static", "docs", "..", "%2e%2e", "solve", "x", "vendor"]),
            max_size=4,
        ),
        query_values,  # bounded: quoted, the URL stays under the client's 64 KiB
    )
)
def _any_path(client: TestClient, case: tuple[str, list[str], str]) -> None:
    """Unknown routes, wrong methods and odd path segments: 404/405, never a 500."""
    method, parts, tail = case
    path = "/" + "/".join([*parts, quote(tail, safe="%")])
    check(client.request(method, path))


test_any_path, test_any_path_slow = _any_path
