"""``puzzlezero definition``: permutation puzzles given as data, checked, converted and generated.

A definition file is this project's JSON (``puzzlezero-permutation/1``), a CayleyPy generator file,
GAP generators in cycle notation or a cubing.js KPuzzle definition; the format is recognised from
the content. Any command that takes a puzzle name takes such a file too (``puzzlezero solve
my.json STATE``). Examples::

    puzzlezero definition check wreath.g                           # the summary, or the first error
    puzzlezero definition convert p004.json --to native --goal-labels "A;A;B;B" --out cube.json
    puzzlezero definition convert cube.json --to gap --out cube.g
    puzzlezero definition family cube_4/4/4 --out cube4.json      # the Santa 2023 competition's 4x4x4
    puzzlezero definition family                                   # the types it generates
    puzzlezero definition show cube4.json "f0 r1"                  # a state drawn as text
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from puzzlezero.cli.main import app
from puzzlezero.errors import DefinitionError, PuzzleError
from puzzlezero.storage import atomic_write_text

#: the formats ``convert`` and ``family`` write, with what each is
FORMATS: dict[str, str] = {
    "native": "this project's JSON (puzzlezero-permutation/1): moves, goal, wildcards, costs, pieces, drawing",
    "cayleypy": "CayleyPy's generator files: JSON {actions, names}, every move and its inverse, no goal",
    "gap": "GAP generators in cycle notation (U:=(1,3,8,6)...; Gen:=[...]), identical pieces as ip:=[...]",
    "kpuzzle": "cubing.js KPuzzle JSON: one orbit of the positions, the goal as its default pattern",
}

definition_app = typer.Typer(
    name="definition",
    help="Permutation puzzles as data: check a definition file, convert it between formats (this "
    "project's JSON, CayleyPy generators, GAP cycle notation, cubing.js KPuzzle), write a "
    "generated cube, globe or wreath, or draw a state.",
    no_args_is_help=True,
)
app.add_typer(definition_app)

FileArg = Annotated[
    Path,
    typer.Argument(
        help="A definition file: this project's JSON, a CayleyPy generator file ({actions, names}), "
        "GAP generators in cycle notation (.g, .gap) or cubing.js KPuzzle JSON.",
        show_default=False,
    ),
]
ToOpt = Annotated[
    str | None,
    typer.Option(
        "--to",
        metavar="FORMAT",
        help="native (this project's JSON, every field), cayleypy (CayleyPy's generator file: every "
        "move and its inverse, no goal), gap (GAP cycle notation, identical pieces as ip) or kpuzzle "
        "(cubing.js KPuzzle JSON); default: gap for an --out ending in .g or .gap, else native.",
        show_default=False,
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Write the definition here (else print it).", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]


# ---- reading -------------------------------------------------------------------------------------
def file_format(path: Path) -> str:
    """The format of the definition file ``path``: ``native``, ``cayleypy``, ``gap`` or ``kpuzzle``
    (:func:`~puzzlezero.puzzles.permutation.definition.definition_format`)."""
    from puzzlezero.puzzles.permutation.files import definition_format

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return "unknown"  # read_definition names the problem
    data: Any = None
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except ValueError:
            return "unknown"
    try:
        return definition_format(data, text)
    except DefinitionError:
        return "unknown"


def load(
    path: Path, name: str | None = None, goal_labels: str | None = None, wildcards: int | None = None
) -> Any:
    """Read and check the definition file ``path`` (any format), its name, goal or wildcards
    replaced where given; a :class:`~puzzlezero.puzzles.permutation.Definition`."""
    from puzzlezero.puzzles.permutation.definition import Definition
    from puzzlezero.puzzles.permutation.files import read_definition

    data = read_definition(path, name)
    if goal_labels is not None:
        data["goal"] = goal_labels
    if wildcards is not None:
        data["wildcards"] = wildcards
    return Definition.from_dict(data, where=path.name)


# ---- the summary ---------------------------------------------------------------------------------
def _counts(values: list[Any], limit: int = 12) -> str:
    """``"A x4, B x4, C x2"``: the distinct values with how often each appears, the first ``limit``."""
    counted = Counter(values)
    shown = ", ".join(f"{v} x{k}" if k > 1 else str(v) for v, k in list(counted.items())[:limit])
    return shown + (f", ... ({len(counted) - limit} more)" if len(counted) > limit else "")


def _sizes(sizes: list[int]) -> str:
    """``"sizes 24 x2, 6"``: the sizes of groups of positions, the largest first, with how many
    groups have each."""
    counted = sorted(Counter(sizes).items(), reverse=True)
    return "sizes " + ", ".join(f"{size} x{k}" if k > 1 else str(size) for size, k in counted)


def summary(defn: Any, fmt: str = "native") -> dict[str, Any]:
    """What ``definition check`` reports of a checked definition, as JSON-able values."""
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle

    puzzle = PermutationPuzzle(defn)
    given = defn.given_moves
    names = list(defn.move_names)
    costs = sorted(set(defn.costs))
    involutions = sum(1 for a in range(given) if defn.inverse[a] == a)
    return {
        "name": defn.name,
        "format": fmt,
        "description": defn.description or None,
        "positions": defn.positions,
        "moves": len(names),
        "given_moves": given,
        "added_inverses": len(names) - given,
        "own_inverses": involutions,
        "move_names": names,
        "costs": costs,
        "labels": len(puzzle.labels),
        "label_counts": dict(Counter(defn.goal)),
        "wildcards": defn.wildcards,
        "orbits": [int(o.size) for o in puzzle.orbits],
        "pieces": [len(p) for p in defn.pieces],
        "scramble_depth": defn.scramble_depth,
        "drawing": dict(defn.drawing) if defn.drawing is not None else None,
        "digest": defn.digest,
    }


def _summary_text(s: dict[str, Any]) -> list[str]:
    names = s["move_names"]
    shown = " ".join(names[:30]) + (f" ... ({len(names) - 30} more)" if len(names) > 30 else "")
    own = f", {s['own_inverses']} their own inverse" if s["own_inverses"] else ""
    costs = "all 1" if s["costs"] == [1.0] else ", ".join(f"{c:g}" for c in s["costs"])
    counts = list(s["label_counts"].items())
    labels = _counts([lab for lab, k in counts for _ in range(k)])
    pieces = f"{len(s['pieces'])} ({_sizes(s['pieces'])})" if s["pieces"] else "not given"
    lines = [
        f"name:        {s['name']} ({s['format']} format)",
        *([f"description: {s['description']}"] if s["description"] else []),
        f"positions:   {s['positions']}",
        f"moves:       {s['moves']} ({s['given_moves']} given, {s['added_inverses']} inverses added{own}): {shown}",
        f"costs:       {costs}",
        f"labels:      {s['labels']} in the goal: {labels}",
        f"wildcards:   {s['wildcards']}",
        f"orbits:      {len(s['orbits'])} ({_sizes(s['orbits'])})",
        f"pieces:      {pieces}",
        f"scramble:    {s['scramble_depth']} moves deep at most (training)",
    ]
    if s["drawing"]:
        lines.append("drawing:     " + ", ".join(f"{k} {v}" for k, v in s["drawing"].items()))
    lines.append(f"digest:      {s['digest']}")
    return lines


@definition_app.command("check")
def check_cmd(
    file: FileArg,
    name: Annotated[
        str | None, typer.Option("--name", help="Read it under this puzzle name.", show_default=False)
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check a definition file of any format and summarise it: positions, moves (given and inverses
    added), goal labels, wildcards, orbits, pieces and digest. A bad file exits 2 with what is
    wrong and where."""
    defn = load(file, name)
    s = summary(defn, file_format(file))
    if as_json:
        typer.echo(json.dumps(s))
        return
    for line in _summary_text(s):
        typer.echo(line)


# ---- writing -------------------------------------------------------------------------------------
def dump_json(data: Mapping[str, Any]) -> str:
    """JSON that a person can scan: one top-level field a line, and one move (or one list item) a
    line inside ``moves``, ``costs``, ``actions`` and the like."""

    def field(value: Any) -> str:
        if (
            isinstance(value, Mapping)
            and len(value) > 1
            and any(isinstance(v, list | Mapping) for v in value.values())
        ):
            inner = ",\n".join(f"  {json.dumps(str(k))}: {json.dumps(v)}" for k, v in value.items())
            return "{\n" + inner + "\n }"
        if isinstance(value, list) and len(value) > 1 and all(isinstance(v, list) for v in value):
            return "[\n" + ",\n".join(f"  {json.dumps(v)}" for v in value) + "\n ]"
        return json.dumps(value)

    return "{\n" + ",\n".join(f" {json.dumps(str(k))}: {field(v)}" for k, v in data.items()) + "\n}\n"


def given_moves(defn: Any) -> dict[str, Any]:
    """The native JSON object of ``defn`` with the moves its source gave (the inverses the checker
    added are left to be added again on reading)."""
    data: dict[str, Any] = defn.to_dict()
    keep = defn.move_names[: defn.given_moves]
    data["moves"] = {m: data["moves"][m] for m in keep}
    if "costs" in data:
        data["costs"] = {m: data["costs"][m] for m in keep if data["costs"][m] != 1.0}
        if not data["costs"]:
            del data["costs"]
    return data


def write_format(defn: Any, fmt: str) -> str:
    """The text of ``defn`` in format ``fmt`` (:data:`FORMATS`)."""
    from puzzlezero.puzzles.permutation import cayleypy

    if fmt == "native":
        return dump_json(given_moves(defn))
    if fmt == "cayleypy":  # its files list every move and its inverse
        return dump_json(cayleypy.write(defn.to_dict()))
    if fmt == "gap":
        from puzzlezero.puzzles.permutation import gap

        text = gap.write(given_moves(defn))
        return text if text.endswith("\n") else text + "\n"
    from puzzlezero.puzzles.permutation import kpuzzle

    return dump_json(kpuzzle.write(given_moves(defn)))


def read_format(text: str, fmt: str, name: str, where: str) -> Any:
    """Read back text that :func:`write_format` wrote (checked: a Definition)."""
    from puzzlezero.puzzles.permutation.definition import Definition

    if fmt == "native":
        return Definition.from_dict(json.loads(text), where=where)
    if fmt == "cayleypy":
        from puzzlezero.puzzles.permutation import cayleypy

        return Definition.from_dict(cayleypy.read(json.loads(text), name=name, source=where), where=where)
    if fmt == "gap":
        from puzzlezero.puzzles.permutation import gap

        return Definition.from_dict(gap.read(text, name=name, source=where), where=where)
    from puzzlezero.puzzles.permutation import kpuzzle

    return Definition.from_dict(kpuzzle.read(json.loads(text), name=name, source=where), where=where)


def _pattern(labels: tuple[str, ...]) -> list[int]:
    """A goal up to the names of its labels: each label replaced by where it first appears."""
    first: dict[str, int] = {}
    return [first.setdefault(lab, i) for i, lab in enumerate(labels)]


def lost_fields(defn: Any, back: Any, fmt: str) -> list[str]:
    """What of ``defn`` the format ``fmt`` does not hold, found by reading the written text back
    (``back``); a :class:`DefinitionError` where the moves themselves did not survive."""
    if back.move_names != defn.move_names or not (back.perms == defn.perms).all():
        raise DefinitionError(
            f"{defn.name}: the {fmt} text does not read back to the same moves; not written"
        )
    lost = []
    if back.goal != defn.goal:
        lost.append("the goal" if _pattern(back.goal) != _pattern(defn.goal) else "the goal's label names")
    for attr, words in (
        ("wildcards", "wildcards"),
        ("costs", "costs"),
        ("pieces", "pieces"),
        ("scramble_depth", "scramble_depth"),
        ("description", "description"),
    ):
        if getattr(back, attr) != getattr(defn, attr):
            lost.append(words)
    if (None if back.drawing is None else dict(back.drawing)) != (
        None if defn.drawing is None else dict(defn.drawing)
    ):
        lost.append("drawing")
    return lost


def _choose_format(to: str | None, out: Path | None) -> str:
    if to is None:
        return "gap" if out is not None and out.suffix.lower() in (".g", ".gap") else "native"
    if to not in FORMATS:
        raise PuzzleError(f"--to must be one of {', '.join(FORMATS)}, got {to!r}")
    return to


def emit(defn: Any, fmt: str, out: Path | None) -> list[str]:
    """Write ``defn`` in ``fmt`` to ``out`` (else standard output), checked by reading it back;
    the fields the format left out."""
    text = write_format(defn, fmt)
    where = out.name if out is not None else f"the {fmt} text"
    lost = lost_fields(defn, read_format(text, fmt, defn.name, where), fmt)
    if out is None:
        typer.echo(text, nl=False)
    else:
        try:
            atomic_write_text(out, text)
        except OSError as exc:
            raise PuzzleError(f"cannot write {out}: {exc.strerror or exc}") from None
    if lost:
        typer.echo(f"note: the {fmt} format does not hold {', '.join(lost)}: left out", err=True)
    return lost


@definition_app.command("convert")
def convert_cmd(
    file: FileArg,
    to: ToOpt = None,
    out: OutOpt = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="The puzzle's name in the written file (default: the file's own).",
            show_default=False,
        ),
    ] = None,
    goal_labels: Annotated[
        str | None,
        typer.Option(
            "--goal-labels",
            metavar="LABELS",
            help="The goal: one label per position, joined by ';' (CayleyPy files have none: every "
            "position is its own label by default).",
            show_default=False,
        ),
    ] = None,
    wildcards: Annotated[
        int | None,
        typer.Option(
            "--wildcards",
            min=0,
            help="Solved when at most this many positions differ from the goal.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Convert a definition file to another format (this project's JSON, CayleyPy generators, GAP
    cycle notation, cubing.js KPuzzle). The written text is read back and must give the same moves;
    what the format cannot hold (a CayleyPy file's goal, costs) is named on stderr."""
    _write(load(file, name, goal_labels, wildcards), to, out)


def _write(defn: Any, to: str | None, out: Path | None) -> None:
    """Write ``defn`` in the format ``--to`` asks for (or ``--out``'s ending tells), to ``--out``
    or standard output, and say what was written."""
    fmt = _choose_format(to, out)
    emit(defn, fmt, out)
    if out is not None:
        typer.echo(
            f"wrote {defn.name} ({defn.positions} positions, {defn.given_moves} moves) as {fmt} to {out}"
        )


@definition_app.command("family")
def family_cmd(
    puzzle_type: Annotated[
        str | None,
        typer.Argument(
            metavar="TYPE",
            help="A Santa 2023 competition puzzle type: cube_N/N/N, wreath_A/A, globe_A/B (or "
            "written with '-': cube_4-4-4); none lists them.",
            show_default=False,
        ),
    ] = None,
    goal: Annotated[
        str,
        typer.Option(
            "--goal",
            metavar="standard|distinct|alternating",
            help="standard: the competition's usual solved state (a colour per cube face); distinct: "
            "every position its own label; alternating (cubes): each face's stickers alternate with "
            "the next face's colour. Other goals than standard add their kind to the name.",
        ),
    ] = "standard",
    outer: Annotated[
        bool,
        typer.Option(
            "--outer",
            help="Cubes: cubers' outer block turns (U F R B L D, Uw ..., 3Uw ... and inverses) on the "
            "same stickers, a second metric, instead of the competition's slice turns.",
        ),
    ] = False,
    to: ToOpt = None,
    out: OutOpt = None,
) -> None:
    """Write the generated definition of a Santa 2023 competition puzzle type: an NxNxN cube,
    globe or wreath, with the competition's moves and sticker order (its solutions apply as they are)."""
    from puzzlezero.puzzles.permutation.definition import Definition
    from puzzlezero.puzzles.permutation.families import FAMILIES, cubers_cube, family_definition

    if puzzle_type is None:
        for kind, (_, args) in FAMILIES.items():
            typer.echo(f"{kind:<16} {'x'.join(map(str, args))}")
        return
    chosen = puzzle_type
    if chosen not in FAMILIES and chosen.replace("-", "/") in FAMILIES:
        chosen = chosen.replace("-", "/")
    try:
        if outer:
            if not chosen.startswith("cube_") or chosen not in FAMILIES:
                raise PuzzleError(f"--outer is for the cubes (cube_N/N/N), not {puzzle_type!r}")
            data: Any = cubers_cube(FAMILIES[chosen][1][0], goal)
        else:
            data = family_definition(chosen, goal)
    except PuzzleError:
        raise
    except ValueError as exc:  # an unknown type or goal; the message lists the known ones
        raise PuzzleError(str(exc)) from None
    _write(data if isinstance(data, Definition) else Definition.from_dict(data, where=chosen), to, out)


@definition_app.command("show")
def show_cmd(
    puzzle: Annotated[
        str,
        typer.Argument(
            metavar="FILE_OR_NAME",
            help="A definition file, or a registered permutation puzzle's name (cube_4-4-4).",
            show_default=False,
        ),
    ],
    state: Annotated[
        str | None,
        typer.Argument(
            help="Labels joined by ';', or moves from the goal (f0 r1'); '-' reads stdin, '@FILE' a "
            "file (default: the goal).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Draw a permutation puzzle's state (its goal by default) in the terminal, as its definition's
    drawing lays the positions out."""
    from puzzlezero.cli.puzzle_cmds import load_state
    from puzzlezero.puzzles.permutation.rules import PermutationPuzzle
    from puzzlezero.registry import make

    p = make(puzzle)
    if not isinstance(p, PermutationPuzzle):
        raise PuzzleError(f"{puzzle} is not a permutation puzzle; `puzzlezero show {puzzle} STATE` draws it")
    s = p.goal() if state is None else load_state(p, state)
    typer.echo(p.render_text(s))
    typer.echo("solved" if p.is_goal(s[None])[0] else "not solved")
