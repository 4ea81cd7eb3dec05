"""Puzzle commands: ``list``, ``defaults``, ``goals``, ``scramble``, ``validate``, ``show``.

STATE arguments are the puzzle's human text (a cube scramble or facelet string, tile numbers, 0/1
lights, Sokoban level rows); ``-`` reads the text from standard input and ``@FILE`` from a file,
which is handy for multi-line Sokoban levels.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from puzzlezero.cli.main import app
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make, names, spec
from puzzlezero.storage import atomic_write_text

PuzzleArg = Annotated[
    str,
    typer.Argument(
        help="Puzzle name (see `puzzlezero list`), or a permutation puzzle's definition file (.json, .g).",
        show_default=False,
    ),
]
StateArg = Annotated[
    str,
    typer.Argument(
        help="State text: cube scramble or 54-letter facelets, tile numbers, 0/1 lights, Sokoban rows, "
        "labels joined by ';' (permutation puzzles); "
        "'-' reads stdin, '@FILE' reads a file.",
        show_default=False,
    ),
]


#: the most bytes a ``-`` or ``@FILE`` state argument may hold (the longest real state, a Sokoban
#: level or a long scramble, is a few kilobytes)
MAX_STATE_BYTES = 1 << 20


def read_state_text(text: str) -> str:
    """Resolve ``-`` (stdin) and ``@FILE`` state arguments to the text itself: UTF-8 text of at
    most :data:`MAX_STATE_BYTES` (1 MiB). A missing file, a directory, undecodable bytes or a
    larger input raise :class:`PuzzleError` naming the file."""
    if text == "-":
        stdin = getattr(sys.stdin, "buffer", None)  # a text-only stream (a test's) is read as text
        data = stdin.read(MAX_STATE_BYTES + 1) if stdin is not None else sys.stdin.read(MAX_STATE_BYTES + 1)
        return _decoded(data, "standard input")
    if text.startswith("@") and len(text) > 1:
        path = Path(text[1:])
        try:
            if path.is_dir():
                raise PuzzleError(f"cannot read state file {path}: it is a directory")
            with path.open("rb") as f:
                data = f.read(MAX_STATE_BYTES + 1)
        except OSError as exc:
            raise PuzzleError(f"cannot read state file {path}: {exc.strerror or exc}") from None
        return _decoded(data, f"state file {path}")
    return text


def _decoded(data: bytes | str, what: str) -> str:
    if len(data) > MAX_STATE_BYTES:
        raise PuzzleError(f"{what} is over {MAX_STATE_BYTES >> 20} MiB, more than any state needs")
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PuzzleError(f"{what} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})") from None


def load_state(puzzle: Puzzle, text: str) -> np.ndarray:
    """Parse and validate a state argument (``-``: standard input, ``@FILE``: a file's text) with
    the solver's reader (:func:`puzzlezero.solver.read_state`)."""
    from puzzlezero.solver import read_state

    return read_state(puzzle, read_state_text(text))


def state_json(puzzle: Puzzle, state: np.ndarray) -> dict[str, Any]:
    """``{"puzzle", "solved", <json_key>, "state"}`` for a state."""
    out: dict[str, Any] = {"puzzle": puzzle.name, "solved": bool(puzzle.is_goal(state[None])[0])}
    out.update(puzzle.to_json(state))
    out["state"] = puzzle.format(state)
    return out


def random_moves(puzzle: Puzzle, rng: np.random.Generator, depth: int) -> list[int]:
    """A random move sequence that never undoes its previous move (nicer scrambles for people)."""
    moves: list[int] = []
    inv = puzzle.inverse_action
    for _ in range(depth):
        while True:
            a = int(rng.integers(puzzle.num_actions))
            if not moves or inv[moves[-1]] != a:
                break
        moves.append(a)
    return moves


@app.command("list")
def list_cmd(
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print a JSON list with descriptions and each puzzle's default search."),
    ] = False,
) -> None:
    """Print every registered puzzle name, one per line."""
    if as_json:
        from puzzlezero.solver import defaults_for, runs_anytime

        rows = []
        for n in names():
            d = defaults_for(n)
            rows.append(
                {
                    "name": n,
                    "description": spec(n).description,
                    "search": d.search,
                    "anytime": runs_anytime(d),
                }
            )
        typer.echo(json.dumps(rows, indent=1))
        return
    for n in names():
        typer.echo(n)


def puzzle_defaults(name: str) -> dict[str, Any]:
    """The settings ``solve`` and ``bench`` use for puzzle ``name`` where none is given: its
    :class:`~puzzlezero.defaults.Defaults` (``stages`` as ``[[weight, batch], ...]``), whether its
    own search runs anytime, and the value of every :data:`~puzzlezero.solver.OPTIONS` entry, the
    puzzle's own where it sets one."""
    import dataclasses

    from puzzlezero.solver import OPTIONS, defaults_for, runs_anytime

    make(name)  # an unknown name lists the valid ones
    d = defaults_for(name)
    out: dict[str, Any] = {"puzzle": name}
    for f in dataclasses.fields(d):
        if f.name != "options":
            value = getattr(d, f.name)
            out[f.name] = [list(v) for v in value] if f.name == "stages" else value
    out["anytime"] = runs_anytime(d)
    own = dict(d.options)
    out["options"] = {key: own.get(key, spec.default) for key, spec in OPTIONS.items()}
    return out


@app.command("defaults")
def defaults_cmd(
    puzzle_name: PuzzleArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Print the search settings solve and bench use for PUZZLE where an option is not given
    (what their help calls "the puzzle's default"), each named as its option."""
    out = puzzle_defaults(puzzle_name)
    if as_json:
        typer.echo(json.dumps(out, indent=1))
        return
    flat = {k: v for k, v in out.items() if k not in ("puzzle", "options")} | out["options"]
    for key, value in flat.items():
        shown = "none" if value is None else value
        if key == "stages":
            shown = ",".join(f"{w:g}:{b}" for w, b in value) or "none (one search)"
        elif key == "models":
            shown = ",".join(value) or "none (one model)"
        elif isinstance(value, tuple):
            shown = ",".join(map(str, value))
        elif isinstance(value, bool):
            shown = "on" if value else "off"
        typer.echo(f"{key.replace('_', '-'):<20} {shown}")


@app.command()
def scramble(
    puzzle_name: PuzzleArg,
    depth: Annotated[
        int | None,
        typer.Option(
            "--depth", "-d", min=0, help="Number of random moves (default: the paper's K for the puzzle)."
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", "-s", help="Random seed (default: fresh entropy).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Scramble the goal with DEPTH random moves and print the moves and the state.

    Puzzles with reversible moves print the move sequence that produces the state (applied to the
    goal); Sokoban prints a generated level (boxes pulled away from their targets).
    """
    puzzle = make(puzzle_name)
    k = puzzle.default_scramble_depth if depth is None else depth
    rng = np.random.default_rng(seed)
    moves: list[int] | None
    if np.all(puzzle.inverse_action >= 0):
        moves = random_moves(puzzle, rng, k)
        state = puzzle.apply_moves(puzzle.goal(), moves)
    else:
        moves = None
        state = puzzle.scramble(rng, 1, k)[0]
    if as_json:
        out = {"puzzle": puzzle.name, "depth": k, "seed": seed}
        if moves is not None:
            out["moves"] = puzzle.format_moves(moves)
        out.update(state_json(puzzle, state))
        typer.echo(json.dumps(out))
        return
    if moves is not None:
        typer.echo(" ".join(puzzle.format_moves(moves)))
    typer.echo(puzzle.render_text(state))


@app.command()
def goals(
    puzzle_name: PuzzleArg,
    state: Annotated[
        str | None,
        typer.Argument(
            help="Also say which goals this state meets ('-': stdin, '@FILE').", show_default=False
        ),
    ] = None,
) -> None:
    """List the puzzle's goals in solving order (sub-goals, then solved), and with a STATE which it
    meets: the names that --goal, --search layered and training's goal=... take."""
    puzzle = make(puzzle_name)
    s = load_state(puzzle, state) if state is not None else None
    for name, goal in puzzle.goal_predicates().items():
        met = "" if s is None else ("  [met]" if bool(goal(s[None])[0]) else "  [not met]")
        typer.echo(f"{name:<8} {goal.description}{met}")


@app.command()
def validate(puzzle_name: PuzzleArg, state: StateArg) -> None:
    """Exit 0 and print 'valid' for a legal state; otherwise print a one-line reason and exit 2."""
    puzzle = make(puzzle_name)
    load_state(puzzle, state)
    typer.echo("valid")


@app.command()
def show(
    puzzle_name: PuzzleArg,
    state: StateArg,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write an SVG drawing to this file.", show_default=False)
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print JSON: puzzle, solved and the state (facelets/tiles/lights/grid)."),
    ] = False,
) -> None:
    """Draw a state in the terminal (or print it as JSON) and optionally write an SVG file."""
    puzzle = make(puzzle_name)
    s = load_state(puzzle, state)
    if out is not None:
        try:
            atomic_write_text(out, puzzle.to_svg(s))
        except OSError as exc:
            raise PuzzleError(f"cannot write {out}: {exc.strerror or exc}") from None
    if as_json:
        typer.echo(json.dumps(state_json(puzzle, s)))
        return
    typer.echo(puzzle.render_text(s))
    typer.echo("solved" if puzzle.is_goal(s[None])[0] else "not solved")
