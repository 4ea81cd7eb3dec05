"""The solve settings of ``solve`` and ``bench`` as flags, declared once: one ``Annotated``
option per setting, :class:`SolveFlags` gathering them, and :func:`with_solve_flags`, which makes
each field, and each knob of :data:`puzzlezero.solver.OPTIONS` (from its declaration), an option
of a command. ``value`` and ``report`` reuse some of the options."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer

from puzzlezero.cli.main import ANYTIME_PANEL, BUDGET_PANEL, EXPERT_PANEL, SEARCH_PANEL
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle

if TYPE_CHECKING:
    from puzzlezero.solver import SolveOptions

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Model name (shipped) or model folder, written as a path (./model, runs/x/model); "
        "default: the puzzle's shipped model.",
        show_default=False,
        rich_help_panel=SEARCH_PANEL,
    ),
]

ModelsOpt = Annotated[
    str | None,
    typer.Option(
        "--models",
        help="An ensemble: two or more model names or folders, A,B,C (or an ensemble folder, whose "
        "ensemble.json names its members), or heuristic:NAME, a registered heuristic without a "
        "network (heuristic:manhattan), which searches a wider beam, or search:NAME, a registered "
        "search that needs no heuristic (search:two-phase, cube3's classical solver); each runs its "
        "own search, side by side within the one time limit, and each state's shortest solution is "
        "kept (default: the puzzle's, `puzzlezero defaults PUZZLE`, for its own search).",
        show_default=False,
        rich_help_panel=SEARCH_PANEL,
    ),
]

#: how the help names a default that depends on the puzzle
PUZZLES_DEFAULT = "the puzzle's, `puzzlezero defaults PUZZLE`"


def _registered(table: str) -> str:
    """The names of :mod:`puzzlezero.solver`'s ``table`` (``SEARCHES``, ``HEURISTICS``) for a help
    text, so that the help lists every registered one (a name registered later, a plugin's
    included, is still accepted: the solver checks names, not this text)."""
    from puzzlezero import solver

    return " | ".join(getattr(solver, table))


SearchOpt = Annotated[
    str | None,
    typer.Option(
        "--search",
        help=f"{_registered('SEARCHES')} (default: {PUZZLES_DEFAULT}). "
        "layered: BWAS to each goal in turn (cube3: layer1, layer2, solved), --model "
        "layer1=DIR,layer2=DIR,solved=DIR or one multi-head model. pbeam: a beam over the policy "
        "(models trained with objective=efficientcube).",
        show_default=False,
        rich_help_panel=SEARCH_PANEL,
    ),
]
StagesOpt = Annotated[
    str | None,
    typer.Option(
        "--stages",
        help="Anytime schedule of one's own: weight:batch stages, e.g. 0.2:100,0.4:1000 (bwas, qstar; "
        f"default: {PUZZLES_DEFAULT}).",
        show_default=False,
        rich_help_panel=ANYTIME_PANEL,
    ),
]
AnytimeOpt = Annotated[
    bool | None,
    typer.Option(
        "--anytime/--no-anytime",
        help="Keep searching with stronger settings after the first solution while the time limit "
        "allows, and return the shortest (default: on for the puzzle's own search without "
        "--weight/--batch, where it has a schedule).",
        show_default=False,
        rich_help_panel=ANYTIME_PANEL,
    ),
]
FallbackOpt = Annotated[
    bool | None,
    typer.Option(
        "--fallback/--no-fallback",
        help="Solve what the search leaves unsolved with the puzzle's fallback search in the last "
        "seconds of the time limit (cubes: group; default: on under the puzzle's own settings).",
        show_default=False,
        rich_help_panel=ANYTIME_PANEL,
    ),
]
ShortcutOpt = Annotated[
    int | None,
    typer.Option(
        "--shortcut",
        help="Shorten the solution's detours by meeting in the middle around its path, with at most "
        f"this many states a round (0: off; default: {PUZZLES_DEFAULT}, under its own settings).",
        show_default=False,
        rich_help_panel=ANYTIME_PANEL,
    ),
]
WindowsOpt = Annotated[
    int | None,
    typer.Option(
        "--windows",
        help="Re-solve the solution a window of this many moves at a time with an exact solver, "
        f"keeping shorter ways (sliding puzzles, cube3; 0: off; default: {PUZZLES_DEFAULT}, under its "
        "own settings).",
        show_default=False,
        rich_help_panel=ANYTIME_PANEL,
    ),
]
GoalOpt = Annotated[
    str | None,
    typer.Option(
        "--goal",
        help="Solve to this goal of the puzzle instead of its own (cube3: layer1, layer2; sliding "
        "puzzles: row1, rows2; `puzzlezero goals PUZZLE`).",
        show_default=False,
        rich_help_panel=SEARCH_PANEL,
    ),
]
MacrosOpt = Annotated[
    Path | None,
    typer.Option(
        "--macros",
        help="Macros (the macro-actions Dong, Hao and Nakayama call options): a text file of move sequences, one per line, the "
        "search may take as one action (bwas, gbfs, beam, layered; `puzzlezero macros` mines them).",
        show_default=False,
        rich_help_panel=EXPERT_PANEL,
    ),
]
HeuristicOpt = Annotated[
    str,
    typer.Option(
        "--heuristic",
        help=f"{_registered('HEURISTICS')} (or module:factory). learned: int8; with qstar and "
        "qbeam the Q head, with pbeam the policy, with mcts the value head and a policy. "
        "learned-onnx: onnxruntime. wcd: weighted convolutional distance of the network. "
        "misplaced: cells of the goal not yet right.",
        rich_help_panel=SEARCH_PANEL,
    ),
]
WeightOpt = Annotated[
    float | None,
    typer.Option(
        "--weight",
        help=f"BWAS/Q* path-cost weight lambda (f = lambda*g + h; default: {PUZZLES_DEFAULT}).",
        show_default=False,
        rich_help_panel=SEARCH_PANEL,
    ),
]
BatchOpt = Annotated[
    int | None,
    typer.Option(
        "--batch",
        help=f"BWAS/Q* batch size N (nodes expanded per iteration; default: {PUZZLES_DEFAULT}).",
        show_default=False,
        rich_help_panel=SEARCH_PANEL,
    ),
]
BeamWidthOpt = Annotated[
    str | None,
    typer.Option(
        "--beam-width",
        help="Beam search width W (states kept per step), or several, e.g. 500,5000: an anytime "
        f"schedule of beams, each looking only for shorter solutions within the time limit; "
        f"default: {PUZZLES_DEFAULT}. A wider beam raises the default --max-nodes in proportion, so it "
        "runs as many steps (as far as the memory budget allows).",
        show_default=False,
        rich_help_panel=SEARCH_PANEL,
    ),
]
MaxNodesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-nodes",
        help=f"Stop after this many generated nodes (default: {PUZZLES_DEFAULT}).",
        show_default=False,
        rich_help_panel=BUDGET_PANEL,
    ),
]
TimeLimitOpt = Annotated[
    float | None,
    typer.Option(
        "--time-limit",
        help=f"Seconds per search call (default: {PUZZLES_DEFAULT}).",
        show_default=False,
        rich_help_panel=BUDGET_PANEL,
    ),
]
MemoryBudgetOpt = Annotated[
    str | None,
    typer.Option(
        "--memory-budget",
        help="Refuse a search, a model or a table build whose estimated peak memory is above this: 4GiB, 512MiB, "
        "bytes, or off (default: $PUZZLEZERO_MEMORY_BUDGET, else half the machine's memory, at "
        "most what is available).",
        show_default=False,
        rich_help_panel=BUDGET_PANEL,
    ),
]


def use_memory_budget(text: str | None) -> None:
    """Set the memory budget of ``--memory-budget`` (a bad size is a PuzzleError naming it), in
    this process and for the processes it starts (Ray tasks)."""
    if text is None:
        return
    import os

    from puzzlezero.budget import ENV, parse_size, set_memory_budget

    set_memory_budget(parse_size(text, "--memory-budget"))
    os.environ[ENV] = text


#: the knobs of :data:`puzzlezero.solver.OPTIONS` the ``--precision`` flag stands for (typed
#: as a choice, and shared with ``value``); every other knob is a flag made from its declaration
OWN_FLAGS = ("precision",)


def _knob_option(name: str) -> Any:
    """The typer option of :data:`puzzlezero.solver.OPTIONS` entry ``name``, made from its
    declaration: its help and default stated from the table (where a shipped puzzle sets its own
    value, the default is the puzzle's); a bool knob is an on/off pair. The images knob is in the
    anytime panel, the others in the expert panel."""
    from puzzlezero.registry import DEFAULTS
    from puzzlezero.solver import OPTIONS

    spec = OPTIONS[name]
    flag = "--" + name.replace("_", "-")
    if spec.kind is bool:
        table = "on" if spec.default else "off"
        off = spec.off_flag or f"--no-{name.replace('_', '-')}"
        flags: tuple[str, ...] = (f"{flag}/{off}",)
    else:
        table = f"{spec.default:g}" if spec.kind is not str else str(spec.default)
        flags = (flag,)
    own = any(name in dict(d.options) for d in DEFAULTS.values())
    default = f"default: {PUZZLES_DEFAULT}, else {table}" if own else f"default: {table}"
    choices = f" ({' | '.join(spec.choices)})" if spec.choices else ""
    panel = ANYTIME_PANEL if name == "images" else EXPERT_PANEL
    return typer.Option(
        *flags, help=f"{spec.help}{choices} ({default}).", show_default=False, rich_help_panel=panel
    )


def _knob_params() -> list[inspect.Parameter]:
    """One keyword parameter per knob of :data:`puzzlezero.solver.OPTIONS` (but
    :data:`OWN_FLAGS`), typed from its declaration, default ``None`` (not given)."""
    from puzzlezero.solver import OPTIONS

    return [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[spec.kind | None, _knob_option(name)],  # type: ignore[name-defined]
        )
        for name, spec in OPTIONS.items()
        if name not in OWN_FLAGS
    ]


def _precision_help() -> str:
    """The help of ``--precision``: the heuristic option's own where the table has it."""
    from puzzlezero.solver import OPTIONS

    spec = OPTIONS.get("precision")
    return "the network heuristic's arithmetic: auto, float32 or int8" if spec is None else spec.help


class Precision(StrEnum):
    """``--precision``: the arithmetic of a learned heuristic's network."""

    auto = "auto"
    float32 = "float32"
    int8 = "int8"


PrecisionOpt = Annotated[
    Precision | None,
    typer.Option(
        "--precision",
        help=f"{_precision_help()} (default: auto).",
        show_default=False,
        case_sensitive=False,
        rich_help_panel=EXPERT_PANEL,
    ),
]


def precision_options(precision: Precision | None) -> dict[str, str]:
    """``{"precision": value}`` for the heuristic options (the learned heuristics' ``precision``),
    ``{}`` when not given."""
    return {} if precision is None else {"precision": precision.value}


def parse_stages(text: str | None) -> list[tuple[float, int]] | None:
    """``"0.2:100,0.4:1000"`` -> ``[(0.2, 100), (0.4, 1000)]``; a malformed stage is a PuzzleError."""
    if text is None:
        return None
    out = []
    for part in text.split(","):
        weight, _, batch = part.strip().partition(":")
        try:
            out.append((float(weight), int(batch)))
        except ValueError:
            raise PuzzleError(f"--stages: {part!r} is not weight:batch (e.g. 0.4:1000)") from None
    return out


def parse_widths(text: str | None) -> tuple[int, ...] | None:
    """``"500,5000"`` -> ``(500, 5000)``, ``"1000"`` -> ``(1000,)``; a width that is not a whole
    number is a PuzzleError (the solver checks that each is positive)."""
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise PuzzleError(
            f"--beam-width: {text!r} is not a width or widths (e.g. 1000 or 500,5000)"
        ) from None


def read_macros_file(puzzle: Any, path: Path | None) -> tuple[tuple[int, ...], ...] | None:
    """The macros of ``--macros FILE`` (:func:`puzzlezero.puzzles.macros.read_macros`)."""
    if path is None:
        return None
    from puzzlezero.puzzles.macros import read_macros

    return read_macros(puzzle, path)


@dataclass(frozen=True)
class SolveFlags:
    """The solve settings of ``solve`` and ``bench`` as typed on the command line (``None``: not
    given), declared once: :func:`with_solve_flags` makes each field an option of a command, and
    :meth:`options` resolves them into the one :class:`~puzzlezero.solver.SolveOptions` the
    command passes down."""

    model: ModelOpt = None
    models: ModelsOpt = None
    search: SearchOpt = None
    heuristic: HeuristicOpt = "learned"
    weight: WeightOpt = None
    batch: BatchOpt = None
    beam_width: BeamWidthOpt = None
    max_nodes: MaxNodesOpt = None
    time_limit: TimeLimitOpt = None
    anytime: AnytimeOpt = None
    stages: StagesOpt = None
    fallback: FallbackOpt = None
    shortcut: ShortcutOpt = None
    windows: WindowsOpt = None
    goal: GoalOpt = None
    macros: MacrosOpt = None
    precision: PrecisionOpt = None
    #: the knobs of :data:`puzzlezero.solver.OPTIONS` given (``(name, value)`` pairs), each a flag
    #: made from its declaration (``--mcts-c``, ``--images``, ...)
    knobs: tuple[tuple[str, Any], ...] = ()

    def options(self, p: Puzzle) -> SolveOptions:
        """The one :class:`~puzzlezero.solver.SolveOptions` of these flags for puzzle ``p``
        (:func:`~puzzlezero.solver.resolve_options`; widths, stages and the macros file read here,
        the knobs passed as ``options``)."""
        from puzzlezero.solver import resolve_options

        return resolve_options(
            p,
            model=self.model,
            models=self.models,  # read by the solver (one reader of --models)
            search=self.search,
            heuristic=self.heuristic,
            weight=self.weight,
            batch=self.batch,
            max_nodes=self.max_nodes,
            time_limit=self.time_limit,
            beam_width=parse_widths(self.beam_width),
            anytime=self.anytime,
            stages=parse_stages(self.stages),
            fallback=self.fallback,
            shortcut=self.shortcut,
            windows=self.windows,
            goal=self.goal,
            macros=read_macros_file(p, self.macros),
            options=dict(self.knobs) | precision_options(self.precision),
        )


def _panel(annotation: Any) -> str | None:
    """The help panel of an ``Annotated[..., typer.Option(...)]`` parameter (``None``: none)."""
    return next((getattr(m, "rich_help_panel", None) for m in getattr(annotation, "__metadata__", ())), None)


def with_solve_flags(command: Callable[..., None]) -> Callable[..., None]:
    """A command taking ``flags: SolveFlags`` as one with every :class:`SolveFlags` field (but
    ``knobs``) and every knob of :data:`puzzlezero.solver.OPTIONS` as an option in its place (the
    signature typer reads), called with them gathered into one :class:`SolveFlags`. The flags of
    the expert panel come last, after the command's own options, so that the help lists that
    panel last."""
    hints = get_type_hints(SolveFlags, include_extras=True)
    flag_params = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name])
        for f in fields(SolveFlags)
        if f.name != "knobs"
    ]
    knob_params = _knob_params()
    flag_params += knob_params
    names = [param.name for param in flag_params]
    knobs = {param.name for param in knob_params}
    expert = [param for param in flag_params if _panel(param.annotation) == EXPERT_PANEL]
    params: list[inspect.Parameter] = []
    for param in inspect.signature(command, eval_str=True).parameters.values():
        if param.name == "flags":
            params += [param for param in flag_params if param not in expert]
        else:
            params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    params += expert

    @functools.wraps(command)
    def run(**given: Any) -> None:
        typed = {name: given.pop(name) for name in names}
        knob_values = tuple((n, v) for n in sorted(knobs) if (v := typed.pop(n)) is not None)
        command(**given, flags=SolveFlags(**typed, knobs=knob_values))

    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {param.name: param.annotation for param in params}
    return run
