"""The JSON API under ``/api``: puzzles, scramble, validate, move, render, solve, jobs, value, info.

Every handler turns bad input into the project's :class:`~puzzlezero.errors.PuzzleError` (answered
400 with its message by ``app.py``) or an :class:`ApiError` with a status. The heavy calls, solving
and ``/api/value``, go to the :class:`~puzzlezero.web.pool.SolvePool`, through its waiting line:
``POST /api/solve`` and ``POST /api/value`` answer when their work ends, ``POST /api/jobs`` answers
202 at once and is polled at ``GET /api/jobs/{id}`` (place in line, expected wait, then the answer).

Admission comes first: each of the three asks the pool whether this client may add work
(:meth:`SolvePool.admit <puzzlezero.web.pool.SolvePool.admit>`: the line, and this client's share
of it) and takes its place (:meth:`Holdings.reserve <puzzlezero.web.clients.Holdings.reserve>`:
this client's and its address's share, and the pool's room) in one synchronous step, before its
state is parsed: a client over its share costs the server no parsing, and concurrent requests
cannot all pass the check before any of them is in line. The parse then runs off the event loop,
and the place becomes the ticket's. A client is its browser's client key (a signed cookie), else
its address (:func:`client_key`, :mod:`puzzlezero.web.clients`). A client that closes the connection while its
``POST /api/solve`` or ``/api/value`` waits gives up its place (the handler watches for the
disconnect), and a queued job that nobody polls leaves the line after ``job_idle_timeout``.
These endpoints are ``async``: the pool and the job store live on the event loop. The quick
endpoints (validate, move, render, scramble, puzzles) take a token of the client's rate limit
first (:func:`quick`; 429 with ``Retry-After`` when it has none).

No answer names a file of the server: error messages lose the folders of any absolute path they
carry (:func:`without_paths`), keeping the model's or table's name.

Every request names its puzzle by a registered name (:func:`served_puzzle`); a definition file's
path, which the Python API and the CLI read where a puzzle name goes, is refused, so no request
makes the server read a file (``puzzlezero serve --puzzle-file`` serves definitions).

Why one file: every route with its admission, its bounds and its status codes, so that what a
request can cost the server is read in one place.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import secrets
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

import puzzlezero
from puzzlezero.errors import (
    InvalidMoveError,
    MissingTableError,
    ModelFileError,
    PuzzleError,
    UnknownNameError,
)
from puzzlezero.model_folders import find_model_dir
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make, names, spec
from puzzlezero.solver import SolveOptions, SolveSettings
from puzzlezero.web.clients import COOKIE, ClientKeys, Holdings, RateLimitError, Reservation, address_key
from puzzlezero.web.config import ServerConfig, has_shipped_model, policy_only
from puzzlezero.web.errors import ApiError, http_error, worker_error
from puzzlezero.web.jobs import Job, JobStore
from puzzlezero.web.line import Ticket
from puzzlezero.web.pool import SolvePool
from puzzlezero.web.schemas import (
    HEURISTIC_NAMES,
    SEARCH_NAMES,
    InfoResponse,
    JobResponse,
    MoveRequest,
    MoveResponse,
    PuzzleInfo,
    RenderRequest,
    ScrambleResponse,
    SolveRequest,
    SolveResponse,
    ValidateRequest,
    ValidateResponse,
    ValueRequest,
    ValueResponse,
)
from puzzlezero.web.worker import SolveJob

__all__ = [
    "router",
    "ApiError",
    "client_address",
    "client_key",
    "puzzle_kind",
    "random_walk",
    "served_puzzle",
    "without_paths",
]

router = APIRouter(prefix="/api")

#: ``to_json`` key -> the page that shows such a puzzle
KINDS = {"facelets": "cube", "tiles": "sliding", "lights": "lightsout", "grid": "sokoban"}

#: seconds between two looks at whether the client of a waiting request is still connected
DISCONNECT_POLL = 0.5

#: SVG frames of a ``/api/move`` trajectory that count as one more quick request
FRAMES_PER_REQUEST = 50

#: an absolute path in a message (POSIX or Windows), not one of the API's own routes
_ABSOLUTE_PATH = re.compile(
    r"""(?<![\w.~/\\-])(?!/(?:api|static|vendor|docs)/)(?:/|[A-Za-z]:[\\/])"""
    r"""(?:[^\s'"`,;:()<>\[\]{}|\\/]+[\\/])+[^\s'"`,;:()<>\[\]{}|\\/]*"""
)

log = logging.getLogger("puzzlezero.web")


# ---- helpers ---------------------------------------------------------------------------------
def _config(request: Request) -> ServerConfig:
    return request.app.state.config


def _pool(request: Request) -> SolvePool:
    return request.app.state.pool


def client_address(request: Request) -> str:
    """The address a request comes from, as a client (:func:`~puzzlezero.web.clients.address_key`:
    an IPv6 address by its /64); behind a trusted proxy (``forwarded_allow_ips``) the address it
    names. ``""`` when the server does not know it."""
    return address_key(request.client.host) if request.client is not None else ""


def client_key(request: Request) -> str:
    """Whose work a request adds, for the pool's per-client limits and the quick endpoints' rate:
    the browser's client key (``key:<id>``) when its cookie is one this server signed and it has
    not expired, else its address (:func:`client_address`)."""
    keys: ClientKeys = request.app.state.client_keys
    key = keys.verify(request.cookies.get(COOKIE))
    return f"key:{key}" if key is not None else client_address(request)


def _admit(request: Request) -> Reservation:
    """Let abandoned jobs go, then, in one synchronous step, ask the pool whether this client may
    add work and take its place (429 if not: :class:`~puzzlezero.web.line.QueueFullError` or its
    ``ClientLimitError``); returns the place, which the request binds to its ticket
    (:meth:`Reservation.bind <puzzlezero.web.clients.Reservation.bind>`) or gives back when it
    leaves its ``with`` block without one. Called before anything is parsed."""
    _jobs(request).sweep()
    client = client_key(request)
    pool = _pool(request)
    pool.admit(client)
    stats = pool.stats()
    room = max(0, stats["workers"] - stats["running"]) + max(0, stats["queue"] - stats["waiting"])
    holdings: Holdings = request.app.state.holdings
    return holdings.reserve(client, client_address(request), room)


async def quick(request: Request) -> None:
    """The rate limit of the quick endpoints: a token of this client's bucket (``rate_limit`` a
    second, ``rate_burst`` at once), else 429 with the seconds until it has one."""
    if not _config(request).rate_limit:
        return
    wait = request.app.state.rates.take(client_key(request))
    if wait > 0:
        retry = max(1, math.ceil(wait))
        raise RateLimitError(
            f"too many requests: this client may make {_config(request).rate_limit:g} a second "
            f"(rate_limit, serve --rate-limit); try again in {retry} s",
            retry,
        )


def without_paths(message: str) -> str:
    """``message`` with each absolute path cut to its last two parts (``/srv/pz/models/cube3`` ->
    ``models/cube3``): what an error names, never where the server keeps it."""

    def cut(match: re.Match[str]) -> str:
        parts = [p for p in re.split(r"[\\/]", match.group(0)) if p and not p.endswith(":")]
        return "/".join(parts[-2:])

    return _ABSOLUTE_PATH.sub(cut, message)


async def _outcome(request: Request, ticket: Ticket) -> dict[str, Any]:
    """Wait for ``ticket``'s outcome while watching the connection: a client that goes away
    takes the ticket out of the line, or off its worker.

    The handler is cancelled only when a stopping server's ``shutdown_timeout`` runs out (uvicorn
    does not cancel it when the client goes away): the ticket is cancelled too and the client is
    answered 503. A worker's ``SystemExit`` or other ``BaseException`` is never re-raised here (it
    would stop the event loop): it is answered as a server error."""
    pool = _pool(request)
    outcome = ticket.outcome
    try:
        while not outcome.done():
            await asyncio.wait((outcome,), timeout=DISCONNECT_POLL)
            if not outcome.done() and await request.is_disconnected():
                pool.cancel(ticket)
                raise ApiError(499, "the client closed the connection; its request left the line")
    except asyncio.CancelledError:
        pool.cancel(ticket)
        raise ApiError(
            503, "the server is shutting down and stopped this request; try again shortly"
        ) from None
    if outcome.cancelled():
        raise ApiError(503, "the request was cancelled: the server is shutting down")
    exc = outcome.exception()
    if exc is None:
        return outcome.result()
    if isinstance(exc, Exception):
        raise exc
    raise ApiError(*http_error(exc))  # logged; a 500 with a short message


def puzzle_kind(p: Puzzle) -> str:
    """Which page shows the puzzle and how: ``cube`` (the cube page), ``sliding``, ``lightsout``,
    ``sokoban``, ``permutation`` (a puzzle defined as data: a button per move) or ``other``."""
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle

    if isinstance(p, PermutationPuzzle):
        return "permutation"
    return KINDS.get(p.json_key, "other")


def served_puzzle(name: str) -> Puzzle:
    """The registered puzzle a request names. Requests name puzzles only by their registered names
    (``GET /api/puzzles``): anything else, a definition file's path or name included, is refused
    (400, listing the registered ones) before the registry is asked, so no request makes the server
    read a file."""
    registered = names()
    if not isinstance(name, str) or name not in registered:
        raise UnknownNameError(
            f"unknown puzzle {str(name)[:64]!r}: a request names a registered puzzle, never a file "
            f"(puzzlezero serve --puzzle-file FILE serves a definition); registered puzzles: {', '.join(registered)}"
        )
    return make(name)


def _reversible(p: Puzzle) -> bool:
    return bool(np.all(np.asarray(p.inverse_action) >= 0))


def read_state(p: Puzzle, text: str | None) -> np.ndarray:
    """Parse and validate a state text (``None`` = the goal) with the solver's reader
    (:func:`puzzlezero.solver.read_state`); raises ``InvalidStateError``."""
    from puzzlezero.solver import read_state as read

    return p.goal() if text is None else read(p, text)


def frame(p: Puzzle, state: np.ndarray, svg: bool = False) -> dict[str, Any]:
    """``{"state", "view", "solved", "svg"}`` of one state."""
    return {
        "state": p.format(state),
        "view": p.to_json(state),
        "solved": bool(p.is_goal(state[None])[0]),
        "svg": p.to_svg(state) if svg else None,
    }


def random_walk(p: Puzzle, rng: np.random.Generator, depth: int) -> tuple[np.ndarray, list[int]]:
    """``depth`` random moves from the goal that really move and never undo the previous one.

    The page needs the moves (cubing.js shows a cube as a move sequence from solved), which
    ``Puzzle.scramble`` does not return; a scramble shown to a person should also not waste moves.
    Where every move is its own inverse (Lights Out presses), no move repeats while unused ones
    remain. Returns ``(state[*state_shape], actions)``.
    """
    state = p.goal()[None]
    inverse = np.asarray(p.inverse_action)
    involutions = bool(np.array_equal(inverse, np.arange(inverse.size)))
    used = np.zeros(inverse.size, dtype=bool)
    actions: list[int] = []
    for _ in range(depth):
        legal = p.legal_mask(state)[0].copy()
        if involutions and not used.all():
            legal &= ~used
        if actions and inverse[actions[-1]] >= 0:
            legal[inverse[actions[-1]]] = False
        choices = np.flatnonzero(legal)
        if choices.size == 0:
            break
        a = int(rng.choice(choices))
        state = p.apply(state, np.array([a]))
        actions.append(a)
        used[a] = True
    return state[0], actions


def _capped(
    value: float | int | None, default: float | int, cap: float | int, what: str, unit: str = ""
) -> Any:
    if value is None:
        return default
    if value > cap:
        raise ApiError(422, f"{what} {value}{unit} exceeds this server's limit of {cap}{unit}")
    return value


def _puzzle_infos() -> tuple[dict[str, Any], ...]:
    return _infos_of(tuple(names()))  # a plugin may register puzzles after the first request


def _policy_only(served: str | None, name: str) -> bool:
    """:func:`policy_only` of the model served for puzzle ``name``: ``--model``'s folder, else the
    installed model of that name (none: ``False``)."""
    folder = served or _installed_model(name)
    return folder is not None and policy_only(folder)


@lru_cache(maxsize=256)
def _installed_model(name: str) -> str | None:
    """The installed model folder called ``name`` (:func:`~puzzlezero.model_folders.find_model_dir`,
    which looks through the installed distributions: milliseconds a name), looked up once."""
    folder = find_model_dir(name)
    return None if folder is None else str(folder)


def _has_layered_model(p: Puzzle) -> bool:
    """Are models for layered solving shipped (``<name>-layered``: one multi-head model, one model
    per goal, or a ``stages.json`` naming them), for a puzzle with sub-goals?"""
    from puzzlezero.solver import LAYERED_MODEL, stage_models

    goals = tuple(p.goal_predicates())
    folder = find_model_dir(LAYERED_MODEL.format(puzzle=p.name))
    if len(goals) < 2 or folder is None:
        return False
    try:
        stage_models(p, str(folder), goals)
    except PuzzleError:
        return False
    return True


def _drawing_of(p: Puzzle) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """A permutation puzzle's drawing hint and how cubing.js shows it in 3-D (``None`` where it
    does not: :func:`~puzzlezero.puzzles.permutation.viewer.cubing_view`); ``(None, None)`` for the
    other puzzles."""
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle
    from puzzlezero.puzzles.permutation.viewer import cubing_view

    if not isinstance(p, PermutationPuzzle):
        return None, None
    drawing = p.definition.drawing
    return (dict(drawing) if drawing is not None else None), cubing_view(p)


@cache
def _infos_of(registered: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    out = []
    for name in registered:
        p = make(name)
        drawing, cubing = _drawing_of(p)
        out.append(
            {
                "name": name,
                "description": spec(name).description,
                "kind": puzzle_kind(p),
                "json_key": p.json_key,
                "action_names": list(p.action_names),
                "inverses": [int(a) for a in np.asarray(p.inverse_action)],
                "default_scramble_depth": int(p.default_scramble_depth),
                "reversible": _reversible(p),
                "model": has_shipped_model(name),
                "goals": list(p.goal_predicates()),
                "layered_model": _has_layered_model(p),
                "drawing": drawing,
                "cubing": cubing,
            }
        )
    return tuple(out)


# ---- endpoints -------------------------------------------------------------------------------
@router.get(
    "/puzzles", response_model=list[PuzzleInfo], summary="Registered puzzles", dependencies=[Depends(quick)]
)
def list_puzzles(request: Request) -> list[dict[str, Any]]:
    served = _config(request).models
    return [
        {
            **info,
            "model": info["model"] or info["name"] in served,
            "policy_only": _policy_only(served.get(info["name"]), info["name"]),
        }
        for info in _puzzle_infos()
    ]


@cache
def _solver_tables() -> tuple[dict[str, str], dict[str, str]]:
    """The searches and heuristics a request may name (:mod:`~puzzlezero.web.schemas`), described."""
    from puzzlezero.solver import HEURISTICS, SEARCHES

    return (  # a name the solver has since dropped (a plugin's, a test's) is not listed
        {name: SEARCHES[name].description for name in SEARCH_NAMES if name in SEARCHES},
        {name: HEURISTICS[name].description for name in HEURISTIC_NAMES if name in HEURISTICS},
    )


@router.get("/info", response_model=InfoResponse, summary="Server limits, pool load, cubing.js presence")
def info(request: Request) -> dict[str, Any]:
    pool = _pool(request)
    searches, heuristics = _solver_tables()
    return {
        "version": puzzlezero.__version__,
        "cubing": request.app.state.node_modules is not None,
        "pool": pool.stats(),
        "limits": _config(request).public(),
        "searches": searches,
        "heuristics": heuristics,
    }


@router.get(
    "/scramble",
    response_model=ScrambleResponse,
    summary="A random state, reproducible by seed",
    dependencies=[Depends(quick)],
)
def scramble(
    request: Request,
    puzzle: Annotated[str, Query(max_length=64)],
    depth: Annotated[int | None, Query(ge=0, description="random moves (default: the paper's K)")] = None,
    seed: Annotated[int | None, Query(ge=0, lt=2**63)] = None,
    svg: Annotated[bool | None, Query(description="include an SVG (default: all but cubes)")] = None,
) -> dict[str, Any]:
    p = served_puzzle(puzzle)
    cap = _config(request).max_scramble_depth  # the puzzle's own depth too stays within it
    depth = int(_capped(depth, min(p.default_scramble_depth, cap), cap, "depth"))
    seed = secrets.randbits(63) if seed is None else seed
    rng = np.random.default_rng(seed)
    if _reversible(p):
        state, actions = random_walk(p, rng, depth)
        moves: list[str] | None = p.format_moves(actions)
    else:  # Sokoban: levels come from the puzzle's own generator
        state, moves = p.scramble(rng, 1, depth)[0], None
    want_svg = puzzle_kind(p) != "cube" if svg is None else svg
    return {"puzzle": p.name, "depth": depth, "seed": seed, "moves": moves, **frame(p, state, want_svg)}


@router.post(
    "/validate",
    response_model=ValidateResponse,
    summary="Is this a legal state?",
    dependencies=[Depends(quick)],
)
def validate(req: ValidateRequest) -> dict[str, Any]:
    p = served_puzzle(req.puzzle)
    try:
        state = read_state(p, req.state)
    except PuzzleError as exc:
        return {"valid": False, "message": str(exc)}
    return {"valid": True, "message": "a legal state", "state": p.format(state), "view": p.to_json(state)}


@router.post("/value", response_model=ValueResponse, summary="The estimated cost-to-go of a state")
async def value(request: Request, req: ValueRequest) -> dict[str, Any]:
    """What the network (or ``heuristic``) estimates the state costs, each move's Q(s, a), and with
    ``optimal`` the optimum within the server's limit. One network call, made by a worker like a
    solve (same admission and line, 429 alike); a worker never builds a table, so a heuristic or
    optimal solver whose table is not built is a 503 naming the command that builds it."""
    cfg = _config(request)
    with _admit(request) as place:
        job, shown = await run_in_threadpool(_prepare_value, cfg, req)
        wall_limit = cfg.grace_seconds + (cfg.value_optimal_time_limit if req.optimal else 0.0)
        ticket = _pool(request).submit(job, wall_limit, client=place.key)
        place.bind(ticket)
    out = await _outcome(request, ticket)
    if "error" in out:
        raise worker_error(out["error"], out["kind"])
    after = after_move(served_puzzle(req.puzzle), out["ok"]["action_values"])
    return {**out["ok"], **shown, "after_move": after}


def after_move(p: Puzzle, action_values: dict[str, float]) -> dict[str, float]:
    """Each move's estimated cost-to-go of the state it leads to: ``Q(s, a)`` less the move's own
    cost (what the page's hint view shows: after ``R``, about 12 moves remain)."""
    costs = np.asarray(p.action_costs, dtype=np.float64)
    return {
        m: round(max(0.0, action_values[m] - float(costs[i])), 4)
        for i, m in enumerate(p.action_names)
        if m in action_values
    }


@router.post(
    "/move",
    response_model=MoveResponse,
    response_model_exclude_none=True,
    summary="Apply moves",
    dependencies=[Depends(quick)],
)
def move(request: Request, req: MoveRequest) -> dict[str, Any]:
    p = served_puzzle(req.puzzle)
    state = read_state(p, req.state)
    cfg = _config(request)
    if not isinstance(req.moves, str) and len(req.moves) > cfg.max_moves:
        raise ApiError(422, f"{len(req.moves)} moves exceed this server's limit of {cfg.max_moves}")
    steps = written_steps(p, req.moves)
    actions = [a for step in steps for a in step]
    if len(actions) > cfg.max_moves:
        raise ApiError(422, f"{len(actions)} moves exceed this server's limit of {cfg.max_moves}")
    if req.trajectory and req.svg and len(steps) > cfg.max_svg_frames:
        raise ApiError(
            422,
            f"{len(steps)} SVG frames exceed this server's limit of {cfg.max_svg_frames}; "
            "ask for the trajectory without svg",
        )
    if req.trajectory and req.svg and cfg.rate_limit:  # drawing frames costs more than a request
        request.app.state.rates.charge(client_key(request), len(steps) / FRAMES_PER_REQUEST)
    frames = [frame(p, state, req.svg)] if req.trajectory else None
    batch = state[None]
    for step in steps:
        for a in step:
            batch = p.apply(batch, np.array([a]))
        if frames is not None:
            frames.append(frame(p, batch[0], req.svg))
    return {"puzzle": p.name, **frame(p, batch[0], req.svg), "frames": frames}


def written_steps(p: Puzzle, moves: str | list[str]) -> list[list[int]]:
    """The action ids of each move as the request writes it: one list per entry of a list of moves
    (a cube's ``R2`` is one step of two quarter turns, one frame of a trajectory), one per action of
    a space-separated string. Raises ``InvalidMoveError`` naming an unreadable move."""
    if isinstance(moves, str):
        return [[a] for a in p.parse_moves(moves)]
    steps = [p.parse_moves([m]) for m in moves]
    if any(not step for step in steps):
        raise InvalidMoveError(f"an empty move in the list {moves!r}: each entry names one move")
    return steps


def _svg_response(p: Puzzle, state_text: str | None, size: int) -> Response:
    svg = p.to_svg(read_state(p, state_text), size=size)
    return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})


@router.get(
    "/render", response_class=Response, summary="SVG drawing of a state (GET)", dependencies=[Depends(quick)]
)
def render_get(
    puzzle: Annotated[str, Query(max_length=64)],
    state: Annotated[str | None, Query(max_length=4000)] = None,
    size: Annotated[int, Query(ge=50, le=2000)] = 300,
) -> Response:
    return _svg_response(served_puzzle(puzzle), state, size)


@router.post(
    "/render", response_class=Response, summary="SVG drawing of a state (POST)", dependencies=[Depends(quick)]
)
def render_post(req: RenderRequest) -> Response:
    return _svg_response(served_puzzle(req.puzzle), req.state, req.size)


@dataclass(frozen=True)
class _Solve:
    """A checked solve request: the puzzle, its state, the pool job (with the one resolved
    :class:`~puzzlezero.solver.SolveOptions` it runs under) and its wall limit on a worker."""

    puzzle: Puzzle
    state: np.ndarray
    job: SolveJob
    wall_limit: float
    #: the registered puzzle whose colours the job's state was read in (a goal of distinct labels
    #: on the 2x2x2's or 3x3x3's moves: :func:`~puzzlezero.solver.in_family_colours`), else ``None``
    read_as: str | None = None

    @property
    def opts(self) -> SolveOptions:
        assert isinstance(self.job.options, SolveOptions)
        return self.job.options


def solve_options(cfg: ServerConfig, p: Puzzle, req: SolveRequest) -> SolveOptions:
    """The one :class:`~puzzlezero.solver.SolveOptions` of a solve request, resolved by the solver
    (:func:`~puzzlezero.solver.resolve_options`) from the request's settings within the server's
    caps (``time_limit``, ``max_nodes``, ``batch``: 422 naming the one over its cap), its defaults
    (a search with limits of its own, layered's 120 s and 5M nodes a stage, keeps them within the
    caps; the others get the server's), the operator's ``quick_search`` setting for a weighted
    search and its model (``cfg.models``; requests never name files). Settings the solver refuses
    are a 422 with its message; a missing model or table is the worker's to find."""
    from puzzlezero.solver import SEARCHES, defaults_for, resolve_options

    search = req.search if req.search is not None else defaults_for(p).search
    spec = SEARCHES.get(search)  # an unknown one: resolve_options names the valid ones
    own = dict(spec.defaults) if spec is not None else {}
    default_time = min(float(own.get("time_limit", cfg.default_time_limit)), cfg.max_time_limit)
    default_nodes = min(int(own.get("max_nodes", cfg.default_max_nodes)), cfg.max_max_nodes)
    settings: SolveSettings = {
        "search": req.search,
        "heuristic": req.heuristic,
        "weight": req.weight,
        "batch": None if req.batch is None else int(_capped(req.batch, req.batch, cfg.max_batch, "batch")),
        "time_limit": float(_capped(req.time_limit, default_time, cfg.max_time_limit, "time_limit", " s")),
        "max_nodes": int(_capped(req.max_nodes, default_nodes, cfg.max_max_nodes, "max_nodes")),
    }
    if spec is not None and spec.weighted:  # the operator's quick setting, where the request names none
        quick = cfg.quick_search.get(p.name, {})
        if settings["weight"] is None:
            settings["weight"] = quick.get("weight")
        if settings["batch"] is None and "batch" in quick:
            settings["batch"] = int(quick["batch"])
    if p.name in cfg.models and not (spec is not None and spec.per_goal):  # layered: models per goal
        settings["model"] = cfg.models[p.name]
    try:
        return resolve_options(p, **settings)
    except (ModelFileError, MissingTableError):
        raise  # the server lacks something (503), not a bad request
    except PuzzleError as exc:
        raise ApiError(422, str(exc)) from None


def _prepare(cfg: ServerConfig, req: SolveRequest) -> _Solve:
    """Parse the state and resolve the request's :class:`~puzzlezero.solver.SolveOptions`
    (:func:`solve_options`) once: bad input raises here, before the request takes a place in line
    (after admission, off the event loop), and the worker runs the job's options as they are. Its
    time limit starts when a worker takes it; the wall limit adds the server's grace to it. A
    state of a definition whose goal's labels all differ, on the 2x2x2's or the 3x3x3's moves and
    without a model of its own served, is read in the family's colours and solved as the family
    (:func:`~puzzlezero.solver.in_family_colours`); the answer is replayed on the state as given."""
    from puzzlezero.solver import in_family_colours

    p = served_puzzle(req.puzzle)
    state = read_state(p, req.state)
    read = None if p.name in cfg.models else in_family_colours(p, state[None])
    if read is None:
        opts = solve_options(cfg, p, req)
        return _Solve(p, state, SolveJob(p.name, state, opts), opts.time_limit + cfg.grace_seconds)
    family, states = read  # solved as the family, its answer replayed on the state as given
    opts = solve_options(cfg, family, req)
    job = SolveJob(family.name, states.array[0], opts)
    return _Solve(p, state, job, opts.time_limit + cfg.grace_seconds, read_as=family.name)


def _prepare_value(cfg: ServerConfig, req: ValueRequest) -> tuple[SolveJob, dict[str, Any]]:
    """Parse the state of a value request and make its job (the keywords of
    :func:`puzzlezero.cost_to_go.value`, with the operator's model and the server's limit on the
    optimal solver); after admission, off the event loop. A state of a definition whose goal's
    labels all differ, on the 2x2x2's or the 3x3x3's moves, without a model of its own served, is
    valued by the family's model in the family's colours
    (:func:`~puzzlezero.solver.in_family_colours`): the fields of the answer that say so (the
    puzzle and state as given, ``read_as``), else none."""
    from puzzlezero.solver import in_family_colours

    p = served_puzzle(req.puzzle)
    state = read_state(p, req.state)
    heuristic = req.heuristic or "learned"
    own = p.name in cfg.models or heuristic != "learned"
    read = None if own else in_family_colours(p, state[None])
    q, shown = (p, {}) if read is None else (read[0], {"puzzle": p.name, "state": p.format(state)})
    options = {
        "heuristic": heuristic,
        "model": cfg.models.get(q.name),
        "optimal": req.optimal,
        "optimal_time_limit": cfg.value_optimal_time_limit,
    }
    job = SolveJob(q.name, state if read is None else read[1].array[0], options, kind="value")
    return job, shown | ({"read_as": q.name} if read is not None else {})


def _answer(solve: _Solve, ticket: Ticket, out: dict[str, Any]) -> dict[str, Any]:
    """The response body of a solve from the worker's output, its solution checked by replay."""
    if "error" in out:
        raise worker_error(out["error"], out["kind"])
    p = solve.puzzle
    result = dict(out["ok"]) | {"puzzle": p.name, "read_as": solve.read_as}
    try:  # move names (None when unsolved), read by the puzzle's own reader
        actions = p.parse_moves(result.get("solution") or [])
    except InvalidMoveError as exc:
        raise RuntimeError(f"solver returned unreadable moves: {exc}") from None
    result["solution"] = p.format_moves(actions)
    result["notation"] = p.format_compact(actions)  # as people write it (and the CLI prints): R R -> R2
    if result.get("stages"):  # layered solving: each stage's moves written alike
        result["stages"] = [
            {
                **st,
                "notation": None
                if st["solution"] is None
                else p.format_compact(p.parse_moves(st["solution"])),
            }
            for st in result["stages"]
        ]
    if result["solved"]:  # never show a wrong solution: replay it on the request's own state
        end = p.apply_moves(solve.state, actions)
        if not p.is_goal(end[None])[0]:
            raise RuntimeError(f"solver returned a solution that does not solve the {p.name} state")
    return {
        **result,
        "time_limit": solve.opts.time_limit,
        "max_nodes": solve.opts.max_nodes,
        "waited_seconds": round(ticket.waited(), 3),
    }


def _improvement(solve: _Solve, data: dict[str, Any]) -> dict[str, Any] | None:
    """What a client sees of a solution the worker reported before its answer: the moves (and as
    people write them), replayed on the request's own state like the answer (``None``, left out,
    when they do not solve it)."""
    p = solve.puzzle
    try:
        actions = p.parse_moves(list(data["solution"]))
        solves = bool(p.is_goal(p.apply_moves(solve.state, actions)[None])[0])
    except (InvalidMoveError, KeyError, TypeError) as exc:
        log.warning("a worker reported an unreadable solution: %s", exc)
        return None
    if not solves:
        log.warning("a worker reported a solution that does not solve the %s state", p.name)
        return None
    return {
        "solution": p.format_moves(actions),
        "notation": p.format_compact(actions),
        "length": len(actions),
        "cost": float(data.get("cost", len(actions))),
        "seconds": float(data.get("seconds", 0.0)),
        "nodes_generated": int(data.get("nodes_generated", 0)),
        "stage": str(data.get("stage", "")),
    }


@router.post("/solve", response_model=SolveResponse, summary="Solve a state (waits in line for a worker)")
async def solve(request: Request, req: SolveRequest) -> dict[str, Any]:
    """Answers when the solve ends; while every worker is busy it waits its turn in the line
    (its time limit starts when a worker takes it). 429 when the line is full or this client
    already has its share of it waiting or running. Closing the connection gives up the place."""
    with _admit(request) as place:
        prepared = await run_in_threadpool(_prepare, _config(request), req)
        ticket = _pool(request).submit(prepared.job, prepared.wall_limit, client=place.key)
        place.bind(ticket)
    return _answer(prepared, ticket, await _outcome(request, ticket))


def _jobs(request: Request) -> JobStore:
    return request.app.state.jobs


def _find_job(request: Request, job_id: str) -> Job:
    job = _jobs(request).get(job_id)
    if job is None:
        ttl = _config(request).result_ttl
        raise ApiError(
            404, f"no job {job_id!r}: the id is unknown or its answer has expired (kept {ttl:.0f} s)"
        )
    return job


JobId = Annotated[str, Path(max_length=64, description="the id POST /api/jobs gave")]


@router.post("/jobs", status_code=202, response_model=JobResponse, summary="Queue a solve, then poll it")
async def create_job(request: Request, req: SolveRequest, response: Response) -> dict[str, Any]:
    """Takes the same body as ``POST /api/solve`` and answers 202 at once with the job's id, its
    place in line and the expected wait; poll ``GET /api/jobs/{id}`` (every second or two) until
    its status is ``done``, ``failed`` or ``cancelled``. 429 when the line is full or this client
    already has its share of it waiting or running. A job not polled for ``job_idle_timeout``
    seconds while it waits leaves the line (``cancelled``)."""
    with _admit(request) as place:
        prepared = await run_in_threadpool(_prepare, _config(request), req)
        ticket = _pool(request).submit(prepared.job, prepared.wall_limit, client=place.key)
        place.bind(ticket)
    job = _jobs(request).add(
        ticket, lambda out: _answer(prepared, ticket, out), lambda data: _improvement(prepared, data)
    )
    response.headers["Location"] = f"/api/jobs/{ticket.id}"
    return _view(request, job)


def _view(request: Request, job: Job) -> dict[str, Any]:
    """A job as ``GET /api/jobs/{id}`` shows it, its error's message without paths."""
    view = _jobs(request).view(job)
    error = view.get("error")
    if isinstance(error, dict) and isinstance(error.get("detail"), str):
        view["error"] = {**error, "detail": without_paths(error["detail"])}
    return view


@router.get("/jobs/{job_id}", response_model=JobResponse, summary="A queued solve: place, wait, answer")
async def get_job(request: Request, job_id: JobId) -> dict[str, Any]:
    """Polling a waiting job keeps its place (see ``job_idle_timeout`` in ``GET /api/info``)."""
    job = _find_job(request, job_id)
    _jobs(request).touch(job)
    return _view(request, job)


@router.delete("/jobs/{job_id}", response_model=JobResponse, summary="Take a queued solve out of the line")
async def cancel_job(request: Request, job_id: JobId) -> dict[str, Any]:
    """A waiting job leaves the line and a running one's search is stopped (its worker stays); either
    way its status becomes ``cancelled``; an ended one is left as it is. 409 for a job running on
    a worker thread (``executor="thread"``), which cannot be stopped: it ends within its limit."""
    job = _find_job(request, job_id)
    if not _jobs(request).cancel(job) and job.status == "running":
        raise ApiError(409, f"job {job_id!r} is running on a worker thread; it ends within its time limit")
    return _view(request, job)
