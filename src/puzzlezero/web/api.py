"""The JSON API under ``/api``: puzzles, scramble, validate, move, render, solve, info.

Every handler turns bad input into the project's :class:`~puzzlezero.errors.PuzzleError` (answered
400 with its message by ``app.py``) or an :class:`ApiError` with a status; solving is the only slow
call and goes to the :class:`~puzzlezero.web.pool.SolvePool`.
"""

from __future__ import annotations

import secrets
from functools import cache
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

import puzzlezero
from puzzlezero.errors import InvalidMoveError, PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make, names, spec
from puzzlezero.web.config import ServerConfig, has_shipped_model
from puzzlezero.web.pool import SolveJob, SolvePool
from puzzlezero.web.schemas import (
    InfoResponse,
    MoveRequest,
    MoveResponse,
    PuzzleInfo,
    RenderRequest,
    ScrambleResponse,
    SolveRequest,
    SolveResponse,
    ValidateRequest,
    ValidateResponse,
)

__all__ = ["router", "ApiError", "puzzle_kind", "random_walk"]

router = APIRouter(prefix="/api")

#: ``to_json`` key -> the page that shows such a puzzle
KINDS = {"facelets": "cube", "tiles": "sliding", "lights": "lightsout", "grid": "sokoban"}


class ApiError(Exception):
    """A request the API refuses, with its HTTP status and a message for people."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ---- helpers ---------------------------------------------------------------------------------
def _config(request: Request) -> ServerConfig:
    return request.app.state.config


def puzzle_kind(p: Puzzle) -> str:
    """Which page shows the puzzle: ``cube``, ``sliding``, ``lightsout``, ``sokoban`` or ``other``."""
    return KINDS.get(p.json_key, "other")


def _reversible(p: Puzzle) -> bool:
    return bool(np.all(np.asarray(p.inverse_action) >= 0))


def read_state(p: Puzzle, text: str | None) -> np.ndarray:
    """Parse and validate a state text (``None`` = the goal); raises ``InvalidStateError``."""
    if text is None:
        return p.goal()
    state = p.parse(text)
    p.validate(state)
    return state


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


@cache
def _infos_of(registered: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    out = []
    for name in registered:
        p = make(name)
        out.append(
            {
                "name": name,
                "description": spec(name).description,
                "kind": puzzle_kind(p),
                "json_key": p.json_key,
                "action_names": list(p.action_names),
                "default_scramble_depth": int(p.default_scramble_depth),
                "reversible": _reversible(p),
                "model": has_shipped_model(name),
            }
        )
    return tuple(out)


# ---- endpoints -------------------------------------------------------------------------------
@router.get("/puzzles", response_model=list[PuzzleInfo], summary="Registered puzzles")
def list_puzzles(request: Request) -> list[dict[str, Any]]:
    served = _config(request).models
    return [{**info, "model": info["model"] or info["name"] in served} for info in _puzzle_infos()]


@cache
def _solver_tables() -> tuple[dict[str, str], dict[str, str]]:
    try:
        from puzzlezero import solver
    except ImportError:  # pragma: no cover - the solver is part of the package
        return {}, {}
    return (
        {name: spec.description for name, spec in solver.SEARCHES.items()},
        {name: spec.description for name, spec in solver.HEURISTICS.items()},
    )


@router.get("/info", response_model=InfoResponse, summary="Server limits, pool load, cubing.js presence")
def info(request: Request) -> dict[str, Any]:
    pool: SolvePool = request.app.state.pool
    searches, heuristics = _solver_tables()
    return {
        "version": puzzlezero.__version__,
        "cubing": request.app.state.node_modules is not None,
        "pool": pool.stats(),
        "limits": _config(request).public(),
        "searches": searches,
        "heuristics": heuristics,
    }


@router.get("/scramble", response_model=ScrambleResponse, summary="A random state, reproducible by seed")
def scramble(
    request: Request,
    puzzle: Annotated[str, Query(max_length=64)],
    depth: Annotated[int | None, Query(ge=0, description="random moves (default: the paper's K)")] = None,
    seed: Annotated[int | None, Query(ge=0, lt=2**63)] = None,
    svg: Annotated[bool | None, Query(description="include an SVG (default: all but cubes)")] = None,
) -> dict[str, Any]:
    p = make(puzzle)
    depth = int(_capped(depth, p.default_scramble_depth, _config(request).max_scramble_depth, "depth"))
    seed = secrets.randbits(63) if seed is None else seed
    rng = np.random.default_rng(seed)
    if _reversible(p):
        state, actions = random_walk(p, rng, depth)
        moves: list[str] | None = p.format_moves(actions)
    else:  # Sokoban: levels come from the puzzle's own generator
        state, moves = p.scramble(rng, 1, depth)[0], None
    want_svg = puzzle_kind(p) != "cube" if svg is None else svg
    return {"puzzle": p.name, "depth": depth, "seed": seed, "moves": moves, **frame(p, state, want_svg)}


@router.post("/validate", response_model=ValidateResponse, summary="Is this a legal state?")
def validate(req: ValidateRequest) -> dict[str, Any]:
    p = make(req.puzzle)
    try:
        state = read_state(p, req.state)
    except PuzzleError as exc:
        return {"valid": False, "message": str(exc)}
    return {"valid": True, "message": "a legal state", "state": p.format(state), "view": p.to_json(state)}


@router.post("/move", response_model=MoveResponse, response_model_exclude_none=True, summary="Apply moves")
def move(request: Request, req: MoveRequest) -> dict[str, Any]:
    p = make(req.puzzle)
    state = read_state(p, req.state)
    actions = p.parse_moves(req.moves)
    cfg = _config(request)
    if len(actions) > cfg.max_moves:
        raise ApiError(422, f"{len(actions)} moves exceed this server's limit of {cfg.max_moves}")
    if req.trajectory and req.svg and len(actions) > cfg.max_svg_frames:
        raise ApiError(
            422,
            f"{len(actions)} SVG frames exceed this server's limit of {cfg.max_svg_frames}; "
            "ask for the trajectory without svg",
        )
    frames = [frame(p, state, req.svg)] if req.trajectory else None
    batch = state[None]
    for a in actions:
        batch = p.apply(batch, np.array([a]))
        if frames is not None:
            frames.append(frame(p, batch[0], req.svg))
    return {"puzzle": p.name, **frame(p, batch[0], req.svg), "frames": frames}


def _svg_response(p: Puzzle, state_text: str | None, size: int) -> Response:
    svg = p.to_svg(read_state(p, state_text), size=size)
    return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})


@router.get("/render", response_class=Response, summary="SVG drawing of a state (GET)")
def render_get(
    puzzle: Annotated[str, Query(max_length=64)],
    state: Annotated[str | None, Query(max_length=4000)] = None,
    size: Annotated[int, Query(ge=50, le=2000)] = 300,
) -> Response:
    return _svg_response(make(puzzle), state, size)


@router.post("/render", response_class=Response, summary="SVG drawing of a state (POST)")
def render_post(req: RenderRequest) -> Response:
    return _svg_response(make(req.puzzle), req.state, req.size)


@router.post("/solve", response_model=SolveResponse, summary="Solve a state with a worker")
async def solve(request: Request, req: SolveRequest) -> dict[str, Any]:
    cfg = _config(request)
    p = make(req.puzzle)
    state = read_state(p, req.state)
    time_limit = float(
        _capped(req.time_limit, cfg.default_time_limit, cfg.max_time_limit, "time_limit", " s")
    )
    max_nodes = int(_capped(req.max_nodes, cfg.default_max_nodes, cfg.max_max_nodes, "max_nodes"))
    options: dict[str, Any] = {"time_limit": time_limit, "max_nodes": max_nodes}
    if req.batch is not None:
        options["batch"] = int(_capped(req.batch, req.batch, cfg.max_batch, "batch"))
    for key in ("search", "heuristic", "weight"):
        if getattr(req, key) is not None:
            options[key] = getattr(req, key)
    from puzzlezero.solver import SEARCHES, defaults_for

    search = options.get("search", defaults_for(p).search)
    if search in SEARCHES and SEARCHES[search].weighted:
        for key, value in cfg.quick_search.get(p.name, {}).items():
            options.setdefault(key, value)
    if p.name in cfg.models:  # the operator's model for this puzzle (requests never name files)
        options["model"] = cfg.models[p.name]
    pool: SolvePool = request.app.state.pool
    out = await pool.solve(SolveJob(p.name, state, options), time_limit + cfg.grace_seconds)
    if "error" in out:
        raise ApiError(503 if out["kind"] == "ModelFileError" else 400, out["error"])
    result = dict(out["ok"])
    solution = result.get("solution") or []  # the solver gives "U R' ..." (None when unsolved)
    result["solution"] = solution.split() if isinstance(solution, str) else list(solution)
    if result["solved"]:  # never show a wrong solution: replay it on the request's own state
        try:
            end = p.apply_moves(state, p.parse_moves(result["solution"]))
        except InvalidMoveError as exc:
            raise RuntimeError(f"solver returned unreadable moves: {exc}") from None
        if not p.is_goal(end[None])[0]:
            raise RuntimeError(f"solver returned a solution that does not solve the {p.name} state")
    return {**result, "time_limit": time_limit, "max_nodes": max_nodes}
