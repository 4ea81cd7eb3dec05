"""``cases``: benchmark case files, the format ``bench --cases`` reads. ``cases make``: random
states; ``cases import-deepcubea``: DeepCubeA's published test sets; ``cases import-santa`` (also
``puzzlezero import-santa``): the Santa 2023 competition's puzzles as definitions and case files.

Examples::

    puzzlezero cases make puzzle15 --n 20 --depth 100 200 --seed 1 --out p15.json
    puzzlezero cases make cube2 --n 1000 --seed 2026 --out benchmarks/cube2_random1000.json   # with optimal lengths
    puzzlezero cases make my_puzzle.json --n 50 --out mine.json                              # a definition file
    puzzlezero cases import-deepcubea data_0.pkl --out cube3_deepcubea.json
    puzzlezero cases import-santa --info puzzle_info.csv --puzzles puzzles.csv \
        --submission sample_submission.csv --types cube_2/2/2,wreath_6/6 --out santa/

``make``'s states are the goal scrambled ``k ~ U[LO, HI]`` random moves (deep enough to be
practically uniform on small puzzles). cube2's cases carry the exact optimal length of every state,
from its distance table. ``import-deepcubea`` reads DeepCubeA's pickles as data, never running
anything from them (:mod:`puzzlezero.deepcubea_files`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from typer.core import TyperGroup

try:  # the click a typer group takes: typer's own copy in recent versions, click itself before
    from typer._click import Context
    from typer._click.exceptions import UsageError
except ModuleNotFoundError:  # pragma: no cover
    from click import Context, UsageError  # type: ignore[assignment]

from puzzlezero.cli.main import app
from puzzlezero.cli.puzzle_cmds import PuzzleArg
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make, names
from puzzlezero.storage import atomic_write_json


def make_cases(
    p: Puzzle, n: int, depth: tuple[int, int], seed: int, given: str | None = None
) -> dict[str, Any]:
    """A case file's contents: ``{"puzzle", "source", "cases": [{"id", <the state's JSON>,
    "optimal_length" (cube2 only)}, ...]}`` of ``n`` states scrambled ``LO..HI`` moves from the goal
    with ``seed``; ``given`` is the puzzle as the command named it (a definition file's path), for
    the ``source`` line."""
    lo, hi = depth
    if n < 1:
        raise PuzzleError(f"--n must be at least 1, got {n}")
    if not 0 <= lo <= hi:
        raise PuzzleError(f"--depth LO HI needs 0 <= LO <= HI, got {lo} {hi}")
    states = p.scramble(np.random.default_rng(seed), n, (lo, hi))
    optimal = None
    if p.name == "cube2":  # the 2x2x2's exact distance table (3,674,160 states)
        from puzzlezero.puzzles.cube.table import distance

        optimal = distance(states)
    cases = []
    for i, s in enumerate(states):
        case = {"id": i, **p.to_json(s)}
        if optimal is not None:
            case["optimal_length"] = int(optimal[i])
        cases.append(case)
    source = f"puzzlezero cases make {given or p.name} --n {n} --depth {lo} {hi} --seed {seed}"
    return {"puzzle": p.name, "source": source, "cases": cases}


class _CasesGroup(TyperGroup):
    """``cases``: a name that is not one of its commands (the older ``cases PUZZLE`` form) is a
    usage error that says how it is written now."""

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            raise UsageError(
                f"no command {args[0]!r}: random states of a puzzle are made with `puzzlezero cases make "
                f"{args[0]} ...`; the commands are {', '.join(self.commands)}",
                ctx,
            )
        return super().resolve_command(ctx, args)


cases_app = typer.Typer(
    name="cases",
    cls=_CasesGroup,
    help="Benchmark case files for `puzzlezero bench PUZZLE --cases FILE`: random states of a puzzle "
    "(make), DeepCubeA's published test sets (import-deepcubea), the Santa 2023 competition's puzzles "
    "(import-santa).",
    no_args_is_help=True,
)
app.add_typer(cases_app)


@cases_app.command("make")
def cases_cmd(
    puzzle: PuzzleArg,
    n: Annotated[int, typer.Option("--n", help="How many states.")] = 1000,
    depth: Annotated[
        tuple[int, int],
        typer.Option("--depth", metavar="LO HI", help="Random moves from the goal, drawn from LO..HI."),
    ] = (100, 200),
    seed: Annotated[int, typer.Option("--seed", help="Seed of the scrambles.")] = 0,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the case file here (else print its JSON).", show_default=False),
    ] = None,
) -> None:
    """Make a benchmark case file of random states, for `puzzlezero bench PUZZLE --cases FILE`
    (cube2's cases carry their optimal lengths)."""
    p = make(puzzle)
    data = make_cases(p, n, depth, seed, puzzle)
    if _write(data, out):
        typer.echo(f"wrote {len(data['cases'])} cases to {out}")


def _write(data: dict[str, Any], out: Path | None) -> bool:
    """Write a case file to ``out`` (``True``), or print its JSON where ``out`` is ``None``."""
    if out is None:
        typer.echo(json.dumps(data, indent=1))
        return False
    try:
        atomic_write_json(out, data)
    except OSError as exc:
        raise PuzzleError(f"cannot write {out}: {exc.strerror or exc}") from None
    return True


@cases_app.command(
    "import-deepcubea",
    short_help="Import DeepCubeA's published test states (data/<puzzle>/test/data_0.pkl of its "
    "repository) as a case file, with their optimal lengths; nothing in the file is executed.",
)
def import_deepcubea_cmd(
    file: Annotated[
        Path,
        typer.Argument(
            help="A DeepCubeA data file: data/<puzzle>/test/data_0.pkl of DeepCubeA's repository "
            "(cube3, puzzle15, puzzle24, puzzle35, puzzle48, lightsout7, sokoban), or its "
            "results/<puzzle>/results.pkl. Read as data: nothing in the file is run.",
            show_default=False,
        ),
    ],
    puzzle: Annotated[
        str | None,
        typer.Option(
            "--puzzle",
            metavar="NAME",
            help="The puzzle the file must hold (else the one its states are of).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the case file here (else print its JSON).", show_default=False),
    ] = None,
) -> None:
    """Import DeepCubeA's published test states (Agostinelli et al. 2019; data/<puzzle>/test/data_0.pkl
    of github.com/forestagostinelli/DeepCubeA) as a case file for `puzzlezero bench PUZZLE --cases
    FILE`: case id = the state's index in the set, with the optimal lengths of the sets that have
    them (cube3, puzzle15 and puzzle24: their published optimal solutions, each replayed to the goal;
    lightsout7: computed). The pickle is read as data: only NumPy arrays and DeepCubeA's state
    classes are rebuilt, as plain data, and anything else in it is refused; nothing is executed."""
    from puzzlezero.deepcubea_files import deepcubea_cases, read_deepcubea

    found = read_deepcubea(file, puzzle)
    data = deepcubea_cases(found, file.name)
    if not _write(data, out):
        return
    name = found.puzzle.name
    known = ""
    if found.optimal is not None:
        known = f", with optimal lengths (mean {sum(found.optimal) / len(found.optimal):.2f})"
    elif found.best_known is not None:
        known = ", with DeepCubeA's solution lengths as best known"
    typer.echo(f"wrote {len(found.states)} cases of {name} to {out}{known}")
    typer.echo(f"bench them: puzzlezero bench {name} --cases {out}")


def _existing(path: Path, flag: str) -> Path:
    """``path`` where it is a file; a :class:`PuzzleError` naming ``flag`` and the path otherwise."""
    if not path.is_file():
        what = "a folder, not a file" if path.is_dir() else "no such file"
        raise PuzzleError(f"{flag} {path}: {what}")
    return path


@cases_app.command("import-santa")
def import_santa_cmd(
    folder: Annotated[
        Path | None,
        typer.Argument(
            help="A folder of the competition's files (puzzle_info.csv, puzzles.csv and, where "
            "present, submission.csv or sample_submission.csv); --info, --puzzles and --submission "
            "name them one by one instead.",
            show_default=False,
        ),
    ] = None,
    *,
    info: Annotated[
        Path | None,
        typer.Option(
            "--info",
            help="puzzle_info.csv: puzzle_type,allowed_moves (each type's moves as a dict of "
            "permutations; read as data, never run).",
            show_default=False,
        ),
    ] = None,
    puzzles: Annotated[
        Path | None,
        typer.Option(
            "--puzzles",
            help="puzzles.csv: id,puzzle_type,solution_state,initial_state,num_wildcards.",
            show_default=False,
        ),
    ] = None,
    submission: Annotated[
        Path | None,
        typer.Option(
            "--submission",
            help="A submission (id,moves; moves joined by '.', -m the inverse of m): each solution "
            "that solves its puzzle becomes the case's best_known length, which bench compares with.",
            show_default=False,
        ),
    ] = None,
    types: Annotated[
        str | None,
        typer.Option(
            "--types",
            metavar="TYPE,TYPE",
            help="Only these puzzle types, e.g. cube_2/2/2,wreath_6/6 (or cube_2-2-2).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="The folder to write the definitions and case files into (made if missing; files of "
            "the same names there are replaced).",
            show_default=False,
        ),
    ],
) -> None:
    """Import the Santa 2023 competition's puzzles (puzzle_info.csv, puzzles.csv and a submission)
    as definitions and case files for `puzzlezero bench DEFINITION --cases CASES`: one definition
    per puzzle type and goal, its cases beside it."""
    from puzzlezero.puzzles.permutation.santa import find_santa_files, import_santa

    if folder is not None:
        if not folder.is_dir():
            raise PuzzleError(f"{folder}: not a folder of the competition's files")
        found_info, found_puzzles, found_submission = find_santa_files(folder)
        info = info or found_info
        puzzles = puzzles or found_puzzles
        submission = submission or found_submission
    if info is None or puzzles is None:
        raise PuzzleError(
            "name the competition's files: --info puzzle_info.csv --puzzles puzzles.csv "
            "(or a folder that holds them)"
        )
    chosen = [t.strip() for t in types.split(",") if t.strip()] if types is not None else None
    if chosen is not None and not chosen:
        raise PuzzleError("--types names no puzzle type")
    summary = import_santa(
        _existing(info, "--info"),
        _existing(puzzles, "--puzzles"),
        out,
        submission=None if submission is None else _existing(submission, "--submission"),
        types=chosen,
        registered=names(),
    )
    for imp in summary.puzzles:
        known = f", {imp.best_known} with a best known length" if submission is not None else ""
        own = f", the built-in puzzle {imp.puzzle}" if imp.family and imp.puzzle == imp.name else ""
        if imp.read_as:
            own = f"; its cases read in {imp.read_as}'s colours, which name every piece"
        typer.echo(
            f"wrote {imp.definition} (definition{own}) and {imp.cases_file}: {imp.cases} cases of {imp.puzzle_type}{known}"
        )
    rest = summary.lines()[len(summary.puzzles) :]
    for line in rest:
        typer.echo(line)
    total = sum(imp.cases for imp in summary.puzzles)
    kinds, defs = len(summary.cases_per_type), len(summary.puzzles)
    typer.echo(
        f"{total} cases of {kinds} puzzle type{'s' * (kinds != 1)} in {defs} definition{'s' * (defs != 1)}"
    )
    if summary.puzzles:
        first = summary.puzzles[0]
        from puzzlezero.model_folders import find_model_dir
        from puzzlezero.registry import make
        from puzzlezero.solver import defaults_for

        # a definition with no shipped model is answered by the group solver in a few seconds,
        # where its default (the rollout) takes 60 s a case; a big cube's default answers quickly
        registered = first.bench_puzzle != str(first.definition)  # its own defaults apply
        quick = registered or find_model_dir(first.name) is not None
        search = (
            ""
            if quick or defaults_for(make(str(first.definition))).search != "rollout"
            else " --search group"
        )
        typer.echo(f"bench one: puzzlezero bench {first.bench_puzzle} --cases {first.cases_file}{search}")


# `puzzlezero import-santa`: the same command at the top level (not listed in the help)
app.command("import-santa", hidden=True)(import_santa_cmd)
