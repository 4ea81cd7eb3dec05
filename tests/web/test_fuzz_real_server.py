"""Every endpoint of a real server, set up as ``puzzlezero serve`` sets it up (uvicorn, a worker
process, the real solver and the shipped models), answers each request with the status its input
calls for, not merely a status other than 500.

Hypothesis draws requests of known kinds: valid ones on puzzles that solve in milliseconds
(Lights Out and the 8-puzzle by the optimal search, the 2x2x2 cube by its model, from short
scrambles), and invalid ones with one fault each. An oracle written here, from what the API
promises rather than from its code, gives each kind its status:

* 200 for a good request; 202 for a queued job, whose outcome is then what ``POST /api/solve``
  would have answered;
* 400 for what the puzzle refuses (an unknown puzzle, a state it cannot read, a move it does not
  have, a registered search or heuristic it has no use for), for a ``Host`` the server does not answer to (``/healthz`` answers any), and for a body
  that is not even UTF-8 text;
* 404 for an unknown job or route, 405 for a method a route does not take, 413 for a body over the
  server's limit;
* 422 for a body or query off the schema: an unknown field, a wrong type, a missing field, text
  that is not JSON, a search or heuristic the server does not register (the ``module:function``
  form included), a number out of its range or over the server's caps;
* 503 for what the server lacks: a model for the search or estimate asked for, a table its
  operator builds (the cube's optimal search reads one).

The rate limits and per-client shares are off, so no request is answered 429 (their own tests
drive them). An answer of 200 is checked against the puzzle's own rules: a solution is replayed on
its state (an optimal one is no longer than the scramble that made the state), a move's end state,
a scramble's moves, a validated state and an estimate are recomputed here.
"""

from __future__ import annotations

import json
import string
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

import httpx  # noqa: E402

import puzzlezero as pz  # noqa: E402
from puzzlezero.puzzles.base import Puzzle  # noqa: E402
from puzzlezero.solver import verify  # noqa: E402
from puzzlezero.web import ServerConfig, create_app  # noqa: E402
from tests.clock import until  # noqa: E402
from tests.web.live_server import served  # noqa: E402

#: requests drawn (each is one request, a queued job's polls aside)
EXAMPLES = 300

#: the server's caps, as this test configures them (small, so that just over one is cheap)
CAPS: dict[str, Any] = {
    "max_time_limit": 30.0,
    "max_max_nodes": 1_000_000,
    "max_batch": 2_000,
    "max_moves": 200,
    "max_svg_frames": 40,
    "max_scramble_depth": 100,
    "max_body_bytes": 64 * 1024,
}
#: the lengths the request schema allows: a puzzle name, a state in a body and in a query, a
#: search or heuristic name, a job id
MAX_NAME, MAX_STATE, MAX_QUERY_STATE, MAX_SOLVER_NAME, MAX_JOB_ID = 64, 20_000, 4_000, 32, 64
#: the range of a drawing's size and of a scramble's seed
SIZES, SEED_END = (50, 2000), 2**63

CONFIG = ServerConfig(
    executor="process",
    workers=1,
    torch_threads=1,
    default_time_limit=10.0,
    default_max_nodes=500_000,
    rate_limit=0,  # no rate limit on the quick endpoints
    client_waiting=0,  # no per-client share of the line
    client_running=0,
    address_limit=0,
    client_keys_per_minute=0,
    **CAPS,
)

PUZZLES: dict[str, Puzzle] = {name: pz.make(name) for name in ("lightsout7", "puzzle8", "cube2")}
JOB_ENDED = ("done", "failed", "cancelled")
ASKED: Counter[str] = Counter()  # "kind -> status" over the run (printed with -s)
JOBS: dict[str, str] = {}  # id -> status of the jobs this run queued and saw end


# ---- states --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Walk:
    """A state reached from the goal by ``actions`` (each one legal where it is made): an optimal
    solution of it is at most ``len(actions)`` moves long."""

    name: str
    actions: tuple[int, ...]

    @property
    def puzzle(self) -> Puzzle:
        return PUZZLES[self.name]

    @property
    def state(self) -> np.ndarray:
        return self.puzzle.apply_moves(self.puzzle.goal(), list(self.actions))

    @property
    def is_goal(self) -> bool:
        return bool(self.puzzle.is_goal(self.state[None])[0])

    def text(self, form: int) -> str:
        """The state as a request may write it: the puzzle's own text, or another form its reader
        takes (a cube's scramble, tiles between commas, lights between spaces)."""
        p, canonical = self.puzzle, self.puzzle.format(self.state)
        forms = [canonical]
        if self.name == "cube2" and self.actions:
            forms.append(" ".join(p.format_moves(list(self.actions))))
        elif self.name == "puzzle8":
            forms.append(canonical.replace(" ", ","))
        elif self.name == "lightsout7":
            forms.append(" ".join(canonical))
        return forms[form % len(forms)]


def legal_actions(p: Puzzle, start: np.ndarray, picks: list[int]) -> tuple[int, ...]:
    """Each pick chooses among the moves legal where the walk stands (a slide the blank can make)."""
    state, actions = start, []
    for pick in picks:
        legal = np.flatnonzero(p.legal_mask(state[None])[0])
        a = int(legal[pick % legal.size])
        state = p.apply_moves(state, [a])
        actions.append(a)
    return tuple(actions)


def walks(name: str, most: int = 6, moved: bool = False) -> st.SearchStrategy[Walk]:
    """Walks of at most ``most`` moves on ``name``; ``moved``: never back at the goal."""
    p = PUZZLES[name]
    out = st.lists(st.integers(0, 63), min_size=int(moved), max_size=most).map(
        lambda picks: Walk(name, legal_actions(p, p.goal(), picks))
    )
    return out.filter(lambda w: not w.is_goal) if moved else out


#: states each puzzle's reader refuses: a wrong count, a letter or number it does not have, a
#: repeated tile, an arrangement no move sequence reaches, a move it does not have, nothing
BAD_STATES: dict[str, list[str]] = {
    "lightsout7": ["0" * 48, "0" * 50, "2" * 49, "x" * 49, ""],
    "puzzle8": [
        "1 2 3 4 5 6 7 8",
        "1 2 3 4 5 6 7 8 8",
        "1 2 3 4 5 6 7 8 9",
        "2 1 3 4 5 6 7 8 0",
        "a b c d e f g h i",
        "",
    ],
    "cube2": ["U" * 23, "X" * 24, "UUUURRRRFFFFDDDDLLLLBBBU", "R Q", ""],
}


def bad_states(name: str) -> st.SearchStrategy[str]:
    return st.sampled_from(BAD_STATES[name])


#: any text a JSON body can carry (no lone surrogates), control characters included
names_text = st.text(st.characters(codec="utf-8"), max_size=MAX_NAME)
unknown_puzzles = st.one_of(
    st.sampled_from(["cube4", "CUBE2", "cube2 ", "nope", "../cube2", "cube2.json", "/etc/passwd", ""]),
    names_text,
).filter(lambda n: n not in pz.names() and len(n) <= MAX_NAME)
long_names = st.integers(MAX_NAME + 1, 3 * MAX_NAME).map(lambda n: ("cube2" * n)[:n])
unknown_searches = st.sampled_from(["astar", "BWAS", "bwas ", "dijkstra", "", "idastar"])
code_names = st.sampled_from(["os:system", "puzzlezero.search.bwas:BWAS", "tests.web:evil", "builtins:eval"])
unknown_heuristics = st.sampled_from(["gasser", "Learned", "learned ", "", "hamming"])
extra_fields = st.sampled_from(["model", "timelimit", "file", "__proto__", "heuristic_file", "goal"])


# ---- what a request is, and what it must get --------------------------------------------------------
Check = Callable[[httpx.Client, httpx.Response], None]


@dataclass
class Case:
    """One request, the kind of input it is, and the status the oracle expects for that kind;
    ``check`` looks into a successful answer."""

    kind: str
    method: str
    path: str
    expected: int
    body: Any = None  # a JSON body (None: no body)
    raw: bytes | None = None  # a body sent as these bytes
    chunked: bool = False  # sent in chunks, without a Content-Length
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] | None = None
    known_job: int | None = None  # the path's id: which of the jobs this run queued (by their order)
    check: Check | None = field(default=None, repr=False)


def _mutated(body: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = dict(body)
    for key, value in changes.items():
        if value is _DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


_DROP = object()


def _with_raw_number(body: dict[str, Any], key: str, literal: str) -> bytes:
    """``body`` as JSON text with ``key`` set to a literal JSON does not have (NaN, Infinity)."""
    text = json.dumps({k: v for k, v in body.items() if k != key})
    return f'{text[:-1]}, "{key}": {literal}}}'.encode()


# ---- solves (and queued jobs) -------------------------------------------------------------------
@dataclass(frozen=True)
class Solve:
    """A solve request's body and what ``POST /api/solve`` must answer: ``status``, and for a 200
    whether it must be solved and whether it is optimal (no longer than the walk)."""

    kind: str
    body: dict[str, Any]
    status: int
    walk: Walk | None = None
    must_solve: bool = False
    optimal: bool = False
    at_run: bool = False  # an error the search meets when it starts (a queued job fails with it)


def cube2_table_built() -> bool:
    """Whether the cube2 distance table, which the cube's optimal search reads, is in the cache the
    server's workers read (a worker never builds one: without it the search is a 503)."""
    from puzzlezero.puzzles.cube.table import table_path

    return table_path().exists()


def _generous(draw: st.DrawFn) -> dict[str, Any]:
    """Limits a short scramble's solve never reaches (at most the caps), or none."""
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["time_limit"] = draw(st.floats(5.0, CAPS["max_time_limit"]))
    if draw(st.booleans()):
        out["max_nodes"] = draw(st.integers(100_000, CAPS["max_max_nodes"]))
    return out


@st.composite
def good_solves(draw: st.DrawFn) -> Solve:
    recipe = draw(
        st.sampled_from(
            [
                "lightsout7 optimal",
                "puzzle8 optimal",
                "cube2 optimal",
                "cube2 by its model",
                "puzzle8 bwas by a formula",
                "tight limits",
                "puzzle8 search without a model",
            ]
        )
    )
    body: dict[str, Any]
    if recipe == "puzzle8 search without a model":  # no puzzle8 model is shipped
        walk = draw(walks("puzzle8", moved=True))
        body = {"puzzle": "puzzle8", "state": walk.text(draw(st.integers(0, 1)))}
        body["search"] = draw(st.sampled_from(["bwas", "gbfs"]))
        return Solve("solve: a search whose model the server lacks", body, 503, walk, at_run=True)
    if recipe == "tight limits":  # valid, and may end unsolved: answered 200 either way
        name = draw(st.sampled_from(sorted(PUZZLES)))
        walk = draw(walks(name))
        body = {"puzzle": name, "state": walk.text(draw(st.integers(0, 2)))}
        if name != "cube2":  # the cube by its model: its optimal search needs a table
            body["search"] = "optimal"
        limit = draw(st.sampled_from(["time_limit", "max_nodes"]))
        body[limit] = draw(st.floats(0.001, 0.05)) if limit == "time_limit" else draw(st.integers(1, 30))
        return Solve("solve: tight limits", body, 200, walk)
    name = recipe.split()[0]
    walk = draw(walks(name))
    body = {"puzzle": name, "state": walk.text(draw(st.integers(0, 2)))} | _generous(draw)
    if recipe == "cube2 optimal" and not cube2_table_built():  # workers never build a table
        body |= {"search": "optimal"}
        return Solve("solve: cube2 optimal, its table not built", body, 503, walk, at_run=True)
    if recipe.endswith("optimal"):
        body["search"] = "optimal"
    elif recipe == "puzzle8 bwas by a formula":
        body |= {"search": "bwas", "heuristic": draw(st.sampled_from(["manhattan", "misplaced"]))}
    else:  # the cube's own search, by its shipped model, with or without a setting
        if draw(st.booleans()):
            body["weight"] = draw(st.floats(0.2, 1.0))
        if draw(st.booleans()):
            body["batch"] = draw(st.integers(1, CAPS["max_batch"]))
    return Solve(f"solve: {recipe}", body, 200, walk, must_solve=True, optimal="optimal" in recipe)


#: registered searches and heuristics these puzzles have no use for: the sliding puzzles'
#: reduction on a cube or Lights Out, the group solver on puzzles whose moves are no permutation
#: of the state, a sliding-puzzle formula on a cube or Lights Out, a policy as a search's heuristic
MISFITS: list[tuple[str, dict[str, str]]] = [
    ("cube2", {"search": "reduction"}),
    ("lightsout7", {"search": "reduction"}),
    ("puzzle8", {"search": "group"}),
    ("lightsout7", {"search": "group"}),
    ("cube2", {"search": "bwas", "heuristic": "manhattan"}),
    ("lightsout7", {"search": "bwas", "heuristic": "manhattan"}),
    ("cube2", {"search": "bwas", "heuristic": "learned-policy"}),
]


@st.composite
def misfit_solves(draw: st.DrawFn) -> Solve:
    """A registered search or heuristic the puzzle has no use for: the puzzle refuses it (400)
    when the search starts, so a queued job is accepted and fails with it."""
    name, settings = draw(st.sampled_from(MISFITS))
    walk = draw(walks(name, moved=True))
    body = {"puzzle": name, "state": walk.text(draw(st.integers(0, 2))), **settings}
    return Solve("solve: a search or heuristic the puzzle has no use for", body, 400, walk, at_run=True)


#: a value of the wrong JSON type for each field of the request bodies (never one pydantic's lax
#: mode turns into the right type, such as "5" for a number)
WRONG_TYPES: dict[str, list[Any]] = {
    "puzzle": [5, None, ["cube2"], {"name": "cube2"}, True],
    "state": [49, ["R"], {"s": 1}, 1.5, False],
    "search": [1, ["bwas"], {}, True],
    "heuristic": [2, ["learned"], {}],
    "time_limit": ["fast", [5], {"s": 5}],
    "max_nodes": ["many", 1.5, [10]],
    "batch": ["big", 2.5, [10]],
    "weight": ["heavy", [0.5]],
    "moves": [5, None, {"m": "R"}, [1, 2], [["R"]]],
    "trajectory": ["maybe", [True], {}, 2],
    "svg": ["maybe", [True], 2],
    "size": ["big", 300.5, [300]],
    "optimal": ["maybe", [True], 2],
}


def wrong_type(draw: st.DrawFn, fields: list[str]) -> tuple[str, Any]:
    key = draw(st.sampled_from(fields))
    return key, draw(st.sampled_from(WRONG_TYPES[key]))


SOLVE_FIELDS = ["puzzle", "state", "search", "heuristic", "time_limit", "max_nodes", "batch", "weight"]


@st.composite
def bad_solves(draw: st.DrawFn) -> Solve:
    """A good solve's body with one fault."""
    base = draw(good_solves()).body
    fault = draw(
        st.sampled_from(
            [
                "unknown puzzle",
                "puzzle name too long",
                "unreadable state",
                "state too long",
                "unknown search",
                "search names code",
                "unknown heuristic",
                "heuristic names code",
                "search name too long",
                "time_limit not positive",
                "time_limit over the cap",
                "max_nodes not positive",
                "max_nodes over the cap",
                "batch not positive",
                "batch over the cap",
                "weight out of range",
                "unknown field",
                "wrong type",
                "missing field",
            ]
        )
    )
    status = 422
    if fault == "unknown puzzle":
        body, status = _mutated(base, puzzle=draw(unknown_puzzles)), 400
    elif fault == "puzzle name too long":
        body = _mutated(base, puzzle=draw(long_names))
    elif fault == "unreadable state":
        body, status = _mutated(base, state=draw(bad_states(base["puzzle"]))), 400
    elif fault == "state too long":
        body = _mutated(base, state="R " * (MAX_STATE // 2 + draw(st.integers(1, 4000))))
    elif fault in ("unknown search", "search names code", "search name too long"):
        name = {"unknown search": unknown_searches, "search names code": code_names}.get(
            fault, st.just("bwas" * (MAX_SOLVER_NAME // 4 + 1))
        )
        body = _mutated(base, search=draw(name))
    elif fault in ("unknown heuristic", "heuristic names code"):
        body = _mutated(
            base, heuristic=draw(unknown_heuristics if fault == "unknown heuristic" else code_names)
        )
    elif fault == "time_limit not positive":
        body = _mutated(base, time_limit=draw(st.floats(-1e9, 0.0)))
    elif fault == "time_limit over the cap":
        over = st.floats(CAPS["max_time_limit"], 1e12, exclude_min=True)
        body = _mutated(base, time_limit=draw(st.one_of(over, st.just(CAPS["max_time_limit"] * 1.001))))
    elif fault == "max_nodes not positive":
        body = _mutated(base, max_nodes=draw(st.integers(-(2**70), 0)))
    elif fault == "max_nodes over the cap":
        body = _mutated(base, max_nodes=draw(st.integers(CAPS["max_max_nodes"] + 1, 2**70)))
    elif fault == "batch not positive":
        body = _mutated(base, batch=draw(st.integers(-(2**40), 0)))
    elif fault == "batch over the cap":
        body = _mutated(base, batch=draw(st.integers(CAPS["max_batch"] + 1, 2**40)))
    elif fault == "weight out of range":
        body = _mutated(
            base, weight=draw(st.one_of(st.floats(-1e9, -1e-6), st.floats(100.0, 1e9, exclude_min=True)))
        )
    elif fault == "unknown field":
        body = _mutated(base, **{draw(extra_fields): draw(st.sampled_from([1, "x", None, ["cube2"]]))})
    elif fault == "wrong type":
        key, value = wrong_type(draw, SOLVE_FIELDS)
        body = _mutated(base, **{key: value})
    else:
        body = _mutated(base, **{draw(st.sampled_from(["puzzle", "state"])): _DROP})
    return Solve(f"solve: {fault}", body, status)


def _replayed(walk: Walk, answer: dict[str, Any], must_solve: bool, optimal: bool) -> None:
    """A solve's answer against the puzzle's rules: a solved one's moves reach the goal from the
    walk's state (an optimal one in at most the walk's moves)."""
    p = walk.puzzle
    assert answer["puzzle"] == walk.name
    if must_solve:
        assert answer["solved"], answer
    if not answer["solved"]:
        assert answer["solution"] == [] and answer["length"] is None, answer
        return
    actions = p.parse_moves(answer["solution"])
    assert answer["length"] == len(actions)
    assert verify(p, walk.state[None], [actions])[0], f"the solution {answer['solution']} does not solve it"
    if optimal:
        assert len(actions) <= len(walk.actions), (answer["solution"], walk)
    if walk.is_goal:
        assert actions == [] or not optimal


def solve_check(solve: Solve) -> Check | None:
    walk = solve.walk
    if walk is None or solve.status != 200:
        return None
    return lambda _c, r: _replayed(walk, r.json(), solve.must_solve, solve.optimal)


def job_check(solve: Solve) -> Check:
    """A queued job runs to the outcome ``POST /api/solve`` would have answered."""

    def check(client: httpx.Client, r: httpx.Response) -> None:
        view = r.json()
        assert r.headers["location"] == f"/api/jobs/{view['id']}"
        view = poll(client, view["id"])
        if solve.status == 200:
            assert view["status"] == "done", json.dumps(view)
            assert solve.walk is not None
            _replayed(solve.walk, view["result"], solve.must_solve, solve.optimal)
        else:
            assert view["status"] == "failed" and view["error"]["status"] == solve.status, json.dumps(view)

    return check


def poll(client: httpx.Client, job_id: str, most: float = 60.0) -> dict[str, Any]:
    """The job's view once it has ended (polled as a page polls it); remembered for the job cases."""
    end = time.monotonic() + most
    while True:
        r = client.get(f"/api/jobs/{job_id}")
        assert r.status_code == 200, r.text
        view = r.json()
        if view["status"] in JOB_ENDED:
            JOBS[job_id] = view["status"]
            return view
        assert time.monotonic() < end, f"job {job_id} did not end: {view}"
        time.sleep(0.05)


def solve_cases(solves: st.SearchStrategy[Solve]) -> st.SearchStrategy[Case]:
    """``POST /api/solve`` with each body, and ``POST /api/jobs`` with it: accepted (202) when the
    body is good, whatever its search meets when it starts (a model or table the server lacks, a
    puzzle it does not apply to: the job fails with the status the solve gets)."""

    def as_case(pair: tuple[Solve, bool]) -> Case:
        solve, queued = pair
        if not queued:
            return Case(solve.kind, "POST", "/api/solve", solve.status, solve.body, check=solve_check(solve))
        accepted = solve.status == 200 or solve.at_run
        return Case(
            solve.kind.replace("solve:", "job:"),
            "POST",
            "/api/jobs",
            202 if accepted else solve.status,
            solve.body,
            check=job_check(solve) if accepted else None,
        )

    return st.tuples(solves, st.booleans()).map(as_case)


@st.composite
def job_refs(draw: st.DrawFn) -> Case:
    """Polling and cancelling: a job this run queued (its ended status stays), one queued and
    cancelled at once, an unknown id (404), an id longer than any (422)."""
    kind = draw(st.sampled_from(["known", "known", "cancel at once", "unknown", "too long"]))
    method = draw(st.sampled_from(["GET", "DELETE"]))
    if kind == "known":
        pick = draw(st.integers(0, 1000))
        return Case(f"job: {method} a job that ended", method, "/api/jobs/{id}", 200, known_job=pick)
    if kind == "cancel at once":
        solve = draw(good_solves().filter(lambda s: s.status == 200))
        return Case(
            "job: queued, then cancelled at once", "POST", "/api/jobs", 202, solve.body, check=cancel_at_once
        )
    alphabet = string.ascii_letters + string.digits + "-_"
    if kind == "unknown":
        ref = draw(st.text(alphabet, min_size=1, max_size=MAX_JOB_ID))
        return Case(f"job: {method} an unknown id", method, f"/api/jobs/{ref}", 404)
    ref = draw(st.text(alphabet, min_size=MAX_JOB_ID + 1, max_size=200))
    return Case(f"job: {method} an id too long", method, f"/api/jobs/{ref}", 422)


def cancel_at_once(client: httpx.Client, r: httpx.Response) -> None:
    job_id = r.json()["id"]
    cancelled = client.delete(f"/api/jobs/{job_id}")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] in ("cancelled", "done"), cancelled.json()  # it may have ended
    assert poll(client, job_id)["status"] == cancelled.json()["status"]


# ---- the quick endpoints ------------------------------------------------------------------------
def _some_walk(draw: st.DrawFn) -> Walk:
    return draw(st.sampled_from(sorted(PUZZLES)).flatmap(walks))


@st.composite
def validate_cases(draw: st.DrawFn) -> Case:
    walk = _some_walk(draw)
    body = {"puzzle": walk.name, "state": walk.text(draw(st.integers(0, 2)))}
    fault = draw(
        st.sampled_from(
            ["none", "none", "unreadable state", "unknown puzzle", "puzzle name too long", "state too long"]
            + ["unknown field", "wrong type", "missing field"]
        )
    )
    if fault == "none":

        def check(_c: httpx.Client, r: httpx.Response) -> None:
            answer = r.json()
            assert answer["valid"] is True and answer["state"] == walk.puzzle.format(walk.state), answer

        return Case("validate: a legal state", "POST", "/api/validate", 200, body, check=check)
    if fault == "unreadable state":  # answered, as not valid

        def refused(_c: httpx.Client, r: httpx.Response) -> None:
            assert r.json()["valid"] is False and r.json()["message"], r.json()

        body["state"] = draw(bad_states(walk.name))
        return Case("validate: an unreadable state", "POST", "/api/validate", 200, body, check=refused)
    body, status = _quick_fault(draw, fault, body, ["puzzle", "state"], ["puzzle", "state"])
    return Case(f"validate: {fault}", "POST", "/api/validate", status, body)


def _quick_fault(
    draw: st.DrawFn, fault: str, body: dict[str, Any], fields: list[str], required: list[str]
) -> tuple[dict[str, Any], int]:
    """The faults every body may have: its puzzle, its state's length, its fields."""
    if fault == "unknown puzzle":
        return _mutated(body, puzzle=draw(unknown_puzzles)), 400
    if fault == "puzzle name too long":
        return _mutated(body, puzzle=draw(long_names)), 422
    if fault == "state too long":
        return _mutated(body, state="0" * (MAX_STATE + draw(st.integers(1, 4000)))), 422
    if fault == "unknown field":
        return _mutated(body, **{draw(extra_fields): draw(st.sampled_from([1, "x", None]))}), 422
    if fault == "wrong type":
        key, value = wrong_type(draw, fields)
        return _mutated(body, **{key: value}), 422
    assert fault == "missing field"
    return _mutated(body, **{draw(st.sampled_from(required)): _DROP}), 422


#: moves no puzzle here has (cube2: a wide turn, letters it does not use; Lights Out: 0..48 only)
BAD_MOVES: dict[str, list[str]] = {
    "lightsout7": ["49", "-1", "R", "3.5"],
    "puzzle8": ["X", "N", "UU", "3"],
    "cube2": ["Q", "r", "W'", "K2"],
}


def _written(walk: Walk, actions: tuple[int, ...], halves: list[bool]) -> list[tuple[str, list[int]]]:
    """``actions`` as a request writes them, one step each: a cube's two equal quarter turns in a
    row may be written as one half turn (``R2``, one step)."""
    p, steps, i = walk.puzzle, [], 0
    while i < len(actions):
        a = actions[i]
        name = p.format_moves([a])[0]
        pair = i + 1 < len(actions) and actions[i + 1] == a and not name.endswith("'")
        if walk.name == "cube2" and pair and halves[i % len(halves)]:
            steps.append((name + "2", [a, a]))
            i += 2
        else:
            steps.append((name, [a]))
            i += 1
    return steps


@st.composite
def move_cases(draw: st.DrawFn) -> Case:
    walk = _some_walk(draw)
    p = walk.puzzle
    start = walk if draw(st.booleans()) else Walk(walk.name, ())
    picks = draw(st.lists(st.integers(0, 63), max_size=20))
    more = legal_actions(p, start.state, picks)
    steps = _written(walk, more, draw(st.lists(st.booleans(), min_size=1, max_size=4)))
    body: dict[str, Any] = {"puzzle": walk.name}
    named = draw(st.booleans())  # the goal may be named, or left out
    if start.actions or named:
        body["state"] = start.text(draw(st.integers(0, 2)))
    if not steps or draw(st.booleans()):
        body["moves"] = [name for name, _ in steps]
    else:  # one string: each quarter turn a step
        body["moves"] = " ".join(name for name, _ in steps)
        steps = [(n, [a]) for _, acts in steps for a in acts for n in p.format_moves([a])]
    trajectory, svg = draw(st.booleans()), draw(st.booleans())
    body |= {"trajectory": trajectory} if trajectory or draw(st.booleans()) else {}
    body |= {"svg": svg} if svg or draw(st.booleans()) else {}
    fault = draw(
        st.sampled_from(
            ["none", "none", "none", "unknown move", "unreadable state", "too many moves", "too many frames"]
            + ["unknown puzzle", "puzzle name too long", "unknown field", "wrong type", "missing field"]
        )
    )
    if fault == "none":
        end = Walk(walk.name, start.actions + more)
        return Case(
            "move: legal moves", "POST", "/api/move", 200, body, check=moved(end, len(steps), trajectory, svg)
        )
    if fault == "unknown move":
        moves = [name for name, _ in steps]
        moves.insert(draw(st.integers(0, len(moves))), draw(st.sampled_from(BAD_MOVES[walk.name])))
        as_text = draw(st.booleans())
        return Case(
            "move: a move the puzzle lacks",
            "POST",
            "/api/move",
            400,
            body | {"moves": " ".join(moves) if as_text else moves},
        )
    if fault == "unreadable state":
        return Case(
            "move: an unreadable start",
            "POST",
            "/api/move",
            400,
            body | {"state": draw(bad_states(walk.name))},
        )
    if fault in ("too many moves", "too many frames"):
        lo, hi = (
            (CAPS["max_moves"] + 1, 2 * CAPS["max_moves"])
            if fault == "too many moves"
            else (CAPS["max_svg_frames"] + 1, CAPS["max_moves"])
        )
        count = draw(st.integers(lo, hi))
        long = legal_actions(p, p.goal(), draw(st.lists(st.integers(0, 63), min_size=count, max_size=count)))
        names = p.format_moves(list(long))
        body = {"puzzle": walk.name, "moves": names if draw(st.booleans()) else " ".join(names)}
        if fault == "too many moves":
            return Case(
                "move: over the server's move cap",
                "POST",
                "/api/move",
                422,
                body | {"trajectory": trajectory, "svg": svg},
            )
        drawn = draw(st.booleans())  # frames drawn as SVG are capped; frames without drawings are not
        case = Case(
            "move: a trajectory drawn over the frame cap" if drawn else "move: a long trajectory, not drawn",
            "POST",
            "/api/move",
            422 if drawn else 200,
            body | {"trajectory": True, "svg": drawn},
        )
        if not drawn:
            case.check = moved(Walk(walk.name, long), count, True, False)
        return case
    body, status = _quick_fault(
        draw, fault, body, ["puzzle", "state", "moves", "trajectory", "svg"], ["puzzle", "moves"]
    )
    return Case(f"move: {fault}", "POST", "/api/move", status, body)


def moved(end: Walk, steps: int, trajectory: bool, svg: bool) -> Check:
    def check(_c: httpx.Client, r: httpx.Response) -> None:
        answer, p = r.json(), end.puzzle
        assert answer["state"] == p.format(end.state) and answer["solved"] == end.is_goal, answer["state"]
        assert (answer.get("svg") is not None) == svg
        if trajectory:
            frames = answer["frames"]
            assert len(frames) == steps + 1 and frames[-1]["state"] == answer["state"]
        else:
            assert answer.get("frames") is None

    return check


def _is_svg(_c: httpx.Client, r: httpx.Response) -> None:
    assert r.headers["content-type"].startswith("image/svg+xml") and "<svg" in r.text[:500]


@st.composite
def render_cases(draw: st.DrawFn) -> Case:
    walk = _some_walk(draw)
    as_query = draw(st.booleans())
    fields: dict[str, Any] = {"puzzle": walk.name}
    if draw(st.booleans()):
        fields["state"] = walk.text(draw(st.integers(0, 2)))
    if draw(st.booleans()):
        fields["size"] = draw(st.integers(*SIZES))
    fault = draw(
        st.sampled_from(
            [
                "none",
                "none",
                "size out of range",
                "unreadable state",
                "unknown puzzle",
                "puzzle name too long",
            ]
            + ["state too long", "wrong type", "missing field"]
            + ([] if as_query else ["unknown field"])
        )
    )
    status = 200
    if fault == "size out of range":
        fields["size"], status = (
            draw(st.one_of(st.integers(-(2**40), SIZES[0] - 1), st.integers(SIZES[1] + 1, 2**40))),
            422,
        )
    elif fault == "unreadable state":
        fields["state"], status = draw(bad_states(walk.name)), 400
    elif fault == "state too long" and as_query:
        fields["state"], status = "0" * (MAX_QUERY_STATE + draw(st.integers(1, 2000))), 422
    elif fault != "none":
        fields, status = _quick_fault(draw, fault, fields, ["puzzle", "state", "size"], ["puzzle"])
        if as_query and fault == "wrong type":  # a query is text: only a number can be of a wrong type
            fields = {"puzzle": walk.name, "size": draw(st.sampled_from(["big", "300.5", "", "3e2"]))}
    kind = f"render ({'GET' if as_query else 'POST'}): {fault if fault != 'none' else 'a state drawn'}"
    check = _is_svg if status == 200 else None
    if as_query:
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}
        return Case(kind, "GET", "/api/render", status, params=params, check=check)
    return Case(kind, "POST", "/api/render", status, fields, check=check)


SCRAMBLES: dict[tuple[str, int, int], str] = {}  # (puzzle, depth, seed) -> state, over the run


@st.composite
def scramble_cases(draw: st.DrawFn) -> Case:
    name = draw(st.sampled_from(sorted(PUZZLES)))
    params: dict[str, str] = {"puzzle": name}
    depth = draw(st.none() | st.integers(0, CAPS["max_scramble_depth"]))
    seed = draw(st.none() | st.integers(0, 3) | st.integers(0, SEED_END - 1))
    svg = draw(st.none() | st.booleans())
    if depth is not None:
        params["depth"] = str(depth)
    if seed is not None:
        params["seed"] = str(seed)
    if svg is not None:
        params["svg"] = str(svg).lower()
    fault = draw(
        st.sampled_from(
            [
                "none",
                "none",
                "depth over the cap",
                "depth negative",
                "depth not a number",
                "seed out of range",
            ]
            + ["svg not a flag", "unknown puzzle", "puzzle name too long", "missing puzzle"]
        )
    )
    if fault == "none":
        return Case(
            "scramble: a scramble",
            "GET",
            "/api/scramble",
            200,
            params=params,
            check=scrambled(name, depth, seed, svg),
        )
    status = 422
    if fault == "depth over the cap":
        params["depth"] = str(draw(st.integers(CAPS["max_scramble_depth"] + 1, 2**70)))
    elif fault == "depth negative":
        params["depth"] = str(draw(st.integers(-(2**70), -1)))
    elif fault == "depth not a number":
        params["depth"] = draw(st.sampled_from(["deep", "1.5", "", "1e2", "0x10"]))
    elif fault == "seed out of range":
        params["seed"] = str(draw(st.one_of(st.integers(-(2**70), -1), st.integers(SEED_END, 2**70))))
    elif fault == "svg not a flag":
        params["svg"] = draw(st.sampled_from(["maybe", "2", "yess"]))
    elif fault == "unknown puzzle":
        params["puzzle"], status = draw(unknown_puzzles), 400
    elif fault == "puzzle name too long":
        params["puzzle"] = draw(long_names)
    else:
        del params["puzzle"]
    return Case(f"scramble: {fault}", "GET", "/api/scramble", status, params=params)


def scrambled(name: str, depth: int | None, seed: int | None, svg: bool | None) -> Check:
    """A scramble is its moves from the goal, as deep as asked (by default the puzzle's own depth,
    never past the server's cap), the same again for the same seed."""

    def check(_c: httpx.Client, r: httpx.Response) -> None:
        answer, p = r.json(), PUZZLES[name]
        assert answer["puzzle"] == name
        want = depth if depth is not None else min(p.default_scramble_depth, CAPS["max_scramble_depth"])
        assert answer["depth"] == want and len(answer["moves"]) == want, (answer["depth"], want)
        if seed is not None:
            assert answer["seed"] == seed
        end = p.apply_moves(p.goal(), p.parse_moves(answer["moves"]))
        assert answer["state"] == p.format(end) and answer["solved"] == bool(p.is_goal(end[None])[0])
        if svg is not None:
            assert (answer["svg"] is not None) == svg
        key = (name, answer["depth"], answer["seed"])
        assert SCRAMBLES.setdefault(key, answer["state"]) == answer["state"], (
            "the same seed, another scramble"
        )

    return check


@st.composite
def value_cases(draw: st.DrawFn) -> Case:
    recipe = draw(
        st.sampled_from(
            [
                "cube2 by its model",
                "puzzle8 by a formula",
                "puzzle8 without a model",
                "lightsout7 without a value model",
                "cube2 by a heuristic it has no use for",
            ]
        )
    )
    name = recipe.split()[0]
    walk = draw(walks(name, moved="without" in recipe or "no use" in recipe))
    body: dict[str, Any] = {"puzzle": name, "state": walk.text(draw(st.integers(0, 2)))}
    if recipe == "puzzle8 by a formula":
        body["heuristic"] = draw(st.sampled_from(["manhattan", "misplaced"]))
    elif recipe == "cube2 by its model" and draw(st.booleans()):
        body["heuristic"] = "learned"
    elif recipe == "cube2 by a heuristic it has no use for":  # a sliding-puzzle formula, a policy
        body["heuristic"] = draw(st.sampled_from(["manhattan", "learned-policy"]))
    if draw(st.booleans()):
        body["optimal"] = draw(st.booleans())
    fault = draw(
        st.sampled_from(
            ["none", "none", "none", "unreadable state", "unknown heuristic", "heuristic names code"]
            + [
                "unknown puzzle",
                "puzzle name too long",
                "state too long",
                "unknown field",
                "wrong type",
                "missing field",
            ]
        )
    )
    if fault == "none":
        if "without" in recipe:  # no puzzle8 model is shipped; Lights Out's has a policy and no value
            return Case(f"value: {recipe}", "POST", "/api/value", 503, body)
        if "no use" in recipe:
            return Case(f"value: {recipe}", "POST", "/api/value", 400, body)
        if name == "cube2" and body.get("optimal") and not cube2_table_built():
            return Case("value: the cube2 optimum, its table not built", "POST", "/api/value", 503, body)
        return Case(f"value: {recipe}", "POST", "/api/value", 200, body, check=estimated(walk, body))
    if fault == "unreadable state":
        return Case(
            "value: an unreadable state", "POST", "/api/value", 400, body | {"state": draw(bad_states(name))}
        )
    if fault in ("unknown heuristic", "heuristic names code"):
        heuristic = draw(unknown_heuristics if fault == "unknown heuristic" else code_names)
        return Case(f"value: {fault}", "POST", "/api/value", 422, body | {"heuristic": heuristic})
    if fault == "unknown field":  # a solve's fields too: a value request runs no search
        body |= {
            draw(st.sampled_from(["search", "time_limit", "model", "max_nodes"])): draw(
                st.sampled_from([1, "bwas"])
            )
        }
        return Case("value: unknown field", "POST", "/api/value", 422, body)
    body, status = _quick_fault(
        draw, fault, body, ["puzzle", "state", "heuristic", "optimal"], ["puzzle", "state"]
    )
    return Case(f"value: {fault}", "POST", "/api/value", status, body)


def estimated(walk: Walk, body: dict[str, Any]) -> Check:
    """An estimate of the walk's state: 0 at the goal; ``misplaced`` counts the cells not as in the
    goal (the blank too); ``manhattan`` (the tiles' distances from home plus linear conflicts, two
    moves each) is at least their distances and, admissible, at most the walk; the optimum, when
    asked for and found, at most the walk."""

    def check(_c: httpx.Client, r: httpx.Response) -> None:
        answer, p = r.json(), walk.puzzle
        assert answer["puzzle"] == walk.name and answer["is_goal"] == walk.is_goal
        assert answer["state"] == p.format(walk.state)
        assert answer["value"] >= 0 and (answer["value"] == 0 or not walk.is_goal), answer
        assert set(answer["action_values"]) <= set(p.action_names)
        heuristic = body.get("heuristic", "learned")
        if heuristic == "misplaced":
            assert answer["value"] == int(np.sum(walk.state != p.goal())), answer["value"]
        elif heuristic == "manhattan":
            cells = walk.state.reshape(3, 3).astype(int)
            far = sum(
                abs((tile - 1) // 3 - row) + abs((tile - 1) % 3 - col)
                for (row, col), tile in np.ndenumerate(cells)
                if tile
            )
            assert far <= answer["value"] <= len(walk.actions), (answer["value"], far)
            assert (answer["value"] - far) % 2 == 0, (answer["value"], far)
        if body.get("optimal") and answer["optimal_status"] == "solved":
            assert answer["optimal"] <= len(walk.actions)
        elif not body.get("optimal"):
            assert answer["optimal"] is None

    return check


def _listed(_c: httpx.Client, r: httpx.Response) -> None:
    # the registry as it stands now: a plugin registered by another test is listed too
    assert [p["name"] for p in r.json()] == pz.names()


def _healthy(_c: httpx.Client, r: httpx.Response) -> None:
    assert r.json()["ok"] is True and "pids" not in r.json()


reads = st.sampled_from(
    [
        Case("puzzles: the list", "GET", "/api/puzzles", 200, check=_listed),
        Case("info: limits and load", "GET", "/api/info", 200),
        Case("healthz: the workers", "GET", "/healthz", 200, check=_healthy),
    ]
)


# ---- requests of any route: bodies, hosts, methods ----------------------------------------------
POSTS = ["/api/solve", "/api/jobs", "/api/validate", "/api/move", "/api/render", "/api/value"]


@st.composite
def raw_cases(draw: st.DrawFn) -> Case:
    """Bodies that are no request: over the size limit (413, by its length or as it streams), text
    that is not JSON or not a JSON object, a content type other than JSON (422), bytes that are no
    UTF-8 text (400)."""
    path = draw(st.sampled_from(POSTS))
    good = json.dumps({"puzzle": "cube2", "state": "R U"})
    kind = draw(
        st.sampled_from(
            [
                "oversized",
                "oversized, chunked",
                "not JSON",
                "not an object",
                "not JSON content",
                "not UTF-8",
                "non-finite number",
            ]
        )
    )
    if kind.startswith("oversized"):
        extra = draw(st.integers(1, 64 * 1024))
        data = json.dumps(
            {"puzzle": "cube2", "state": "R " * ((CAPS["max_body_bytes"] + extra) // 2)}
        ).encode()
        return Case(
            f"body: {kind}",
            "POST",
            path,
            413,
            raw=data,
            chunked=kind.endswith("chunked"),
            headers={"Content-Type": "application/json"},
        )
    if kind == "not JSON":
        text = draw(
            st.sampled_from([good[:-1], good + " x", "{'puzzle': 'cube2'}", "{", "puzzle=cube2", "\t"])
        )
        return Case(
            "body: text that is not JSON",
            "POST",
            path,
            422,
            raw=text.encode(),
            headers={"Content-Type": "application/json"},
        )
    if kind == "not an object":
        text = draw(st.sampled_from(["null", "[]", '"cube2"', "42", "[{}]", ""]))
        return Case(
            "body: JSON that is not an object",
            "POST",
            path,
            422,
            raw=text.encode(),
            headers={"Content-Type": "application/json"},
        )
    if kind == "not JSON content":
        content_type = draw(
            st.sampled_from(
                ["text/plain", "application/x-www-form-urlencoded", "", "multipart/form-data; boundary=x"]
            )
        )
        return Case(
            "body: not sent as JSON",
            "POST",
            path,
            422,
            raw=good.encode(),
            headers={"Content-Type": content_type} if content_type else {},
        )
    if kind == "not UTF-8":
        data = draw(st.sampled_from([b'{"puzzle": "cube2", "state": "R\xff"}', b"\xc3\x28", b"\x80{}"]))
        return Case(
            "body: bytes that are no UTF-8 text",
            "POST",
            path,
            400,
            raw=data,
            headers={"Content-Type": "application/json"},
        )
    solve = draw(good_solves().filter(lambda s: s.status == 200))
    key = draw(st.sampled_from(["time_limit", "weight", "max_nodes"]))
    literal = draw(st.sampled_from(["NaN", "Infinity", "-Infinity"]))
    path = draw(st.sampled_from(["/api/solve", "/api/jobs"]))
    return Case(
        f"body: {key} {literal}",
        "POST",
        path,
        422,
        raw=_with_raw_number(solve.body, key, literal),
        headers={"Content-Type": "application/json"},
    )


@st.composite
def route_cases(draw: st.DrawFn) -> Case:
    """A route with a method it does not take (405), a route that does not exist (404)."""
    if draw(st.booleans()):
        method, path = draw(
            st.sampled_from(
                [
                    ("GET", "/api/solve"),
                    ("PUT", "/api/solve"),
                    ("GET", "/api/jobs"),
                    ("DELETE", "/api/validate"),
                    ("POST", "/api/puzzles"),
                    ("POST", "/api/scramble"),
                    ("PATCH", "/api/jobs/abc"),
                    ("POST", "/healthz"),
                    ("GET", "/api/value"),
                ]
            )
        )
        return Case(f"route: {method} on a route without it", method, path, 405)
    path = draw(st.sampled_from(["/api/nope", "/api/solve/now", "/api/jobs/a/b", "/api", "/api/puzzle"]))
    return Case("route: unknown", draw(st.sampled_from(["GET", "POST"])), path, 404)


#: ``Host`` headers the server answers to (a loopback name, any port, any case) and others: a name
#: of its own for a loopback server (DNS rebinding), a malformed one
GOOD_HOSTS = ["localhost", "LOCALHOST:1", "127.0.0.1:8000", "[::1]:80", "[::1]"]
BAD_HOSTS = ["evil.example", "localhost.evil.example", "127.0.0.1.nip.io", "localhost:abc", "[::1", "::1]"]

cases_of_routes = st.one_of(
    solve_cases(good_solves()),
    solve_cases(good_solves()),
    solve_cases(bad_solves()),
    solve_cases(bad_solves()),
    solve_cases(misfit_solves()),
    job_refs(),
    validate_cases(),
    move_cases(),
    render_cases(),
    scramble_cases(),
    value_cases(),
    reads,
    raw_cases(),
    raw_cases(),
    route_cases(),
)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A request of any kind above; now and then with another ``Host``: a bad one makes it a 400
    (``/healthz`` answers any), a good one changes nothing."""
    case = draw(cases_of_routes)
    host = draw(st.sampled_from(["as is"] * 8 + ["good", "bad"]))
    if host == "good":
        return replace(case, headers={**case.headers, "Host": draw(st.sampled_from(GOOD_HOSTS))})
    if host == "bad" and case.known_job is None:
        status = case.expected if case.path == "/healthz" else 400
        return replace(
            case,
            kind=f"{case.kind}, bad Host",
            expected=status,
            headers={**case.headers, "Host": draw(st.sampled_from(BAD_HOSTS))},
            check=case.check if status == case.expected else None,
        )
    return case


# ---- the server and the property -----------------------------------------------------------------
@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    """The server, its tables built first as ``serve`` builds them (workers never build one): the
    group table the cube's solve falls back to, and the 8-puzzle's pattern database, as
    ``serve --build-tables puzzle8`` builds it (a second each, in the tests' own cache)."""
    from puzzlezero.classic import build_tables

    build_tables(PUZZLES["cube2"], "group")
    build_tables(PUZZLES["puzzle8"], "pdb")
    app = create_app(CONFIG)
    with served(app) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=90) as c:
        until(lambda: c.get("/healthz").json().get("ready", 0) >= 1, 120)
        yield c
    print("\nanswers by kind:", json.dumps(dict(sorted(ASKED.items())), indent=1))


def send(client: httpx.Client, case: Case) -> httpx.Response:
    path = case.path
    if case.known_job is not None:
        if not JOBS:
            queued = client.post(
                "/api/jobs", json={"puzzle": "puzzle8", "state": "1 2 3 4 5 6 7 0 8", "search": "optimal"}
            )
            assert queued.status_code == 202, queued.text
            poll(client, queued.json()["id"])
        path = path.format(id=list(JOBS)[case.known_job % len(JOBS)])
    headers = dict(case.headers)
    if case.raw is not None:
        content: Any = case.raw
        if case.chunked:
            chunks = [case.raw[i : i + 8192] for i in range(0, len(case.raw), 8192)]
            content = iter(chunks)
        headers.setdefault("Connection", "close")  # the server may not read an unwanted body
        return client.request(case.method, path, content=content, headers=headers, params=case.params)
    if case.body is not None:
        return client.request(case.method, path, json=case.body, headers=headers, params=case.params)
    return client.request(case.method, path, headers=headers, params=case.params)


#: a puzzle whose own scramble depth (Lights Out's 500) is over the server's cap: a scramble that
#: names no depth is as deep as the cap allows, no deeper
DEFAULT_DEPTH_OVER_THE_CAP = Case(
    "scramble: a scramble of the default depth",
    "GET",
    "/api/scramble",
    200,
    params={"puzzle": "lightsout7"},
    check=scrambled("lightsout7", None, None, None),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases())
@example(case=DEFAULT_DEPTH_OVER_THE_CAP)
def test_each_request_gets_the_status_its_input_calls_for(client: httpx.Client, case: Case) -> None:
    r = send(client, case)
    ASKED[f"{case.kind} -> {r.status_code}"] += 1
    assert r.status_code == case.expected, (
        f"{case.kind}: expected {case.expected}, got {r.status_code}: {r.text[:600]}"
    )
    if r.status_code >= 400:  # an error names what is wrong, as JSON, and no traceback
        assert "Traceback" not in r.text and isinstance(r.json().get("detail"), str), r.text[:600]
    if case.known_job is not None:
        job_id = r.request.url.path.rsplit("/", 1)[1]
        assert r.json()["id"] == job_id and r.json()["status"] == JOBS[job_id], r.json()
    if case.check is not None:
        case.check(client, r)
