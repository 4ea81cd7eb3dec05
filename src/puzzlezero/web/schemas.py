"""Request and response bodies of the JSON API (they are also its OpenAPI documentation at ``/docs``).

Requests forbid unknown fields, so a typo (``"timelimit"``) or an attempt to name a model file is a
422 with the field named, not silently ignored. A ``search`` or ``heuristic`` is one of the solver's
registered names (:data:`SEARCH_NAMES`, :data:`HEURISTIC_NAMES`, listed by ``GET /api/info``);
anything else, the ``"module:factory"`` form that the Python API and the CLI accept for one's own
code included, is a 422 naming the valid ones, so no request chooses code to import. States travel
as the puzzle's human text (what ``puzzle.parse`` reads and ``puzzle.format`` writes); ``view`` is
``puzzle.to_json(state)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from puzzlezero.solver import HEURISTICS, SEARCHES

__all__ = [
    "HEURISTIC_NAMES",
    "SEARCH_NAMES",
    "Frame",
    "InfoResponse",
    "JobError",
    "JobImprovement",
    "JobResponse",
    "MoveRequest",
    "MoveResponse",
    "PuzzleInfo",
    "RenderRequest",
    "ScrambleResponse",
    "SolveRequest",
    "SolveResponse",
    "ValidateRequest",
    "ValidateResponse",
    "ValueRequest",
    "ValueResponse",
]

PuzzleName = Field(
    max_length=64, description="registered puzzle name, see GET /api/puzzles", examples=["cube3"]
)
StateText = Field(
    max_length=20_000,
    description="state text: cube scramble or 54-letter facelets, tile numbers, 0/1 lights, Sokoban rows",
    examples=["R U R' U'"],
)


#: the names a request may give as ``search`` / ``heuristic``: the solver's registries, fixed at import
SEARCH_NAMES: tuple[str, ...] = tuple(name for name in SEARCHES if ":" not in name)
HEURISTIC_NAMES: tuple[str, ...] = tuple(name for name in HEURISTICS if ":" not in name)


def _registered(what: str, plural: str, valid: tuple[str, ...]) -> Callable[[str], str]:
    """A validator that lets through only the names in ``valid`` (422 listing them otherwise)."""

    def check(name: str) -> str:
        if name in valid:
            return name
        if ":" in name:
            message = (
                f"{what} {name!r} names Python code: this server runs only its registered {plural}, "
                f"not module:factory (that form is for one's own code, in the Python API and the CLI); "
                f"choose one of: {', '.join(valid)}"
            )
        else:
            message = f"unknown {what} {name!r}; choose one of: {', '.join(valid)}"
        raise PydanticCustomError("unknown_name", "{message}", {"message": message})

    return check


SearchName = Annotated[
    str,
    Field(max_length=32, json_schema_extra={"enum": list(SEARCH_NAMES)}),
    AfterValidator(_registered("search", "searches", SEARCH_NAMES)),
]
HeuristicName = Annotated[
    str,
    Field(max_length=32, json_schema_extra={"enum": list(HEURISTIC_NAMES)}),
    AfterValidator(_registered("heuristic", "heuristics", HEURISTIC_NAMES)),
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SolveRequest(_Request):
    puzzle: str = PuzzleName
    state: str = StateText
    search: SearchName | None = Field(
        None, description="a registered search, see GET /api/info (default: the puzzle's own)"
    )
    heuristic: HeuristicName | None = Field(
        None, description="a registered heuristic, see GET /api/info (default: learned)"
    )
    weight: float | None = Field(None, ge=0.0, le=100.0, description="weight of the path cost in A*")
    batch: int | None = Field(None, ge=1, description="nodes expanded per iteration (capped by the server)")
    max_nodes: int | None = Field(None, ge=1, description="generated-node limit (capped by the server)")
    time_limit: float | None = Field(None, gt=0.0, description="seconds of search (capped by the server)")


class StageInfo(BaseModel):
    goal: str = Field(description="the goal of this stage (cube3: layer1, layer2, solved)")
    solution: list[str] | None = Field(description="the stage's moves, None when it failed")
    notation: list[str] | None = Field(None, description="the stage's moves as people write them (R2)")
    length: int | None
    nodes_generated: int
    seconds: float
    status: str


class SolveResponse(BaseModel):
    puzzle: str
    solved: bool
    solution: list[str] = Field(
        description="move names, applied in order to the given state ([] if unsolved)"
    )
    notation: list[str] | None = Field(
        None,
        description="the solution as people write it, as the CLI prints it: cubes join two equal quarter "
        "turns into a half turn (R R -> R2); other puzzles' move names as they are",
    )
    length: int | None = Field(description="number of moves, None when not solved")
    cost: float | None = Field(
        None,
        description="the solution's cost, the sum of its moves' costs (the length where every move costs 1)",
    )
    half_turn_length: int | None = Field(
        None, description="cubes: moves in the half-turn metric (R R counts as one R2); None otherwise"
    )
    nodes_generated: int
    seconds: float
    status: str | None = Field(
        None, description='"solved", "node limit", "time limit", "memory limit", "exhausted"'
    )
    search: str | None = Field(None, description="the search that ran")
    read_as: str | None = Field(
        None,
        description="a goal whose labels all differ, on the 2x2x2's or 3x3x3's moves: the registered puzzle "
        "whose colours the state was read in and solved as (cube_3-3-3), the answer replayed on the state as given",
    )
    first_solution_seconds: float | None = Field(
        None, description="anytime solving: when the first solution was found (None: one search ran)"
    )
    fallback: str | None = Field(
        None,
        description='the search that found the solution when the puzzle\'s own left the state unsolved ("group" on cubes, "reduction" on sliding puzzles)',
    )
    improvements: list[dict[str, float]] | None = Field(
        None, description='anytime solving: [{"seconds", "length"}, ...] of each shorter solution found'
    )
    stages: list[StageInfo] | None = Field(
        None,
        description="layered solving: each goal's stage in order; their solutions concatenate to solution, "
        "and each stage's end state meets its goal",
    )
    time_limit: float = Field(description="the time limit the search ran under")
    max_nodes: int = Field(description="the node limit the search ran under")
    waited_seconds: float | None = Field(
        None, description="seconds the solve waited in line for a worker (not counted in its time limit)"
    )


class JobError(BaseModel):
    status: int = Field(description="the HTTP status POST /api/solve would have answered with")
    detail: str


class JobImprovement(BaseModel):
    """A solution a running solve has found before its answer (the first, then each shorter one)."""

    solution: list[str] = Field(description="move names, applied in order to the job's state")
    notation: list[str] = Field(description="the same moves as people write them (cubes: R R as R2)")
    length: int
    cost: float = Field(description="the sum of its moves' costs")
    seconds: float = Field(description="seconds into the solve when it was found")
    nodes_generated: int = Field(description="nodes the search had generated by then")
    stage: str = Field(
        description='what found it: "stage K" of an anytime schedule, "search", "fallback", "shortcut"'
    )


class JobResponse(BaseModel):
    """A queued solve (``POST /api/jobs``, ``GET /api/jobs/{id}``): poll until ``status`` is
    ``done`` (see ``result``), ``failed`` (see ``error``) or ``cancelled``."""

    id: str = Field(description="GET /api/jobs/{id} reports the job, DELETE takes it out of the line")
    status: str = Field(description='"queued", "running", "done", "failed" or "cancelled"')
    puzzle: str
    position: int | None = Field(description="place in the line, 1 = next to start (None unless queued)")
    waiting: int = Field(description="solves waiting in line now, this one included when queued")
    estimated_start_seconds: float | None = Field(
        description="expected seconds until a worker takes it (0 once running; None once ended)"
    )
    estimated_seconds: float | None = Field(description="expected seconds until its answer (None once ended)")
    recent_solves: int = Field(
        description="recent solves of this puzzle the estimates average (0: its time limit stands in for them)"
    )
    waited_seconds: float = Field(description="seconds it has waited (or waited) in line")
    expires_in: float | None = Field(description="seconds its answer stays readable (None until it ends)")
    improvements: list[JobImprovement] = Field(
        default_factory=list,
        description="the solutions found so far while it runs, in order: the first as soon as a search has "
        "it, then each shorter one (at most 32: the newest replaces the last kept); the answer's "
        "solution is the last",
    )
    result: SolveResponse | None = Field(description="the answer, once status is done")
    error: JobError | None = Field(description="what went wrong, once status is failed")


class ScrambleResponse(BaseModel):
    puzzle: str
    depth: int
    seed: int = Field(description="pass it back to get the same scramble")
    moves: list[str] | None = Field(description="moves from the goal to the state (None for Sokoban levels)")
    state: str
    view: dict[str, Any]
    solved: bool
    svg: str | None = None


class ValidateRequest(_Request):
    puzzle: str = PuzzleName
    state: str = StateText


class ValidateResponse(BaseModel):
    valid: bool
    message: str
    state: str | None = Field(None, description="the state in canonical text, when valid")
    view: dict[str, Any] | None = None


class MoveRequest(_Request):
    puzzle: str = PuzzleName
    state: str | None = Field(None, max_length=20_000, description="start state text; omitted = the goal")
    moves: list[str] | str = Field(
        description="move names (a list or one space-separated string); each entry of a list is one step "
        "of the trajectory, so a cube's R2 gives one frame",
        examples=[["U", "R2", "F'"]],
    )
    trajectory: bool = Field(False, description="also return every intermediate state as frames")
    svg: bool = Field(False, description="include SVG drawings")


class Frame(BaseModel):
    state: str
    view: dict[str, Any]
    solved: bool
    svg: str | None = None


class MoveResponse(Frame):
    puzzle: str
    frames: list[Frame] | None = Field(
        None, description="start state then one frame per move as the request writes it (R2: one)"
    )


class RenderRequest(_Request):
    puzzle: str = PuzzleName
    state: str | None = Field(None, max_length=20_000, description="state text; omitted = the goal")
    size: int = Field(300, ge=50, le=2000, description="width of the drawing in pixels")


class PuzzleInfo(BaseModel):
    name: str
    description: str
    kind: str = Field(
        description="cube | sliding | lightsout | sokoban | permutation | other: which page shows it and how "
        "(permutation: a puzzle defined as data, a button per move)"
    )
    json_key: str
    action_names: list[str]
    inverses: list[int] = Field(
        default_factory=list, description="each move's inverse, as an index into action_names (-1: none)"
    )
    default_scramble_depth: int
    reversible: bool = Field(description="every move has an inverse (scrambles are move sequences)")
    model: bool = Field(description="a trained model is shipped for it")
    goals: list[str] = Field(
        default_factory=list,
        description="its goals in solving order, sub-goals first (cube3: layer1, layer2, solved)",
    )
    layered_model: bool = Field(False, description="models for layered solving are shipped (<name>-layered)")
    policy_only: bool = Field(
        False, description="its model has a policy and no value: searched by its policy beam (pbeam) only"
    )
    drawing: dict[str, Any] | None = Field(
        None,
        description='a permutation puzzle\'s drawing hint, as its definition gives it ({"kind": "cube", "size": 4}, '
        '"globe", "wreath", "grid"); None for other puzzles',
    )
    cubing: dict[str, Any] | None = Field(
        None,
        description='how cubing.js shows the puzzle in 3-D: {"puzzle": "4x4x4", "moves": {"f0": "F", ...}}, each '
        "move's cubing.js move (a move sequence from the goal shows the same picture there); None where it cannot",
    )


class InfoResponse(BaseModel):
    version: str
    cubing: bool = Field(description="cubing.js is installed (3-D cube); else the page draws SVG")
    pool: dict[str, int]
    limits: dict[str, Any]
    searches: dict[str, str] = Field(description="search names the solver knows, with descriptions")
    heuristics: dict[str, str] = Field(description="heuristic names the solver knows, with descriptions")


class ValueRequest(_Request):
    puzzle: str = PuzzleName
    state: str = StateText
    heuristic: HeuristicName | None = Field(
        None, description="a registered heuristic, see GET /api/info (default: learned)"
    )
    optimal: bool = Field(
        False, description="also find the optimal cost (within the server's limit; where a solver exists)"
    )


class ValueResponse(BaseModel):
    puzzle: str
    state: str = Field(description="the state as the puzzle writes it")
    is_goal: bool
    value: float = Field(description="estimated cost-to-go (0 at a goal)")
    heuristic: str
    model: str | None = Field(description="the model the estimate came from (learned heuristics)")
    best_move: str | None = Field(description="the move with the smallest Q(s, a); None at a goal")
    action_values: dict[str, float] = Field(
        description="Q(s, a) of every move: its cost plus the cost-to-go after it (the Q head where the model has one)"
    )
    after_move: dict[str, float] = Field(
        default_factory=dict,
        description="each move's estimated cost-to-go of the state it leads to: Q(s, a) less the move's cost",
    )
    optimal: float | None = Field(description="the optimal cost, when asked for and found")
    optimal_status: str = Field(description='"solved", "time limit", "not asked" or "no optimal solver"')
    optimal_seconds: float | None
    error: float | None = Field(description="value - optimal, when the optimum is known")
    seconds: float = Field(description="seconds the estimate took")
    read_as: str | None = Field(
        None,
        description="a goal whose labels all differ, on the 2x2x2's or 3x3x3's moves: the registered puzzle "
        "whose colours the state was read in and valued as (cube_3-3-3)",
    )
