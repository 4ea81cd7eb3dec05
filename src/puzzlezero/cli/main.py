"""Entry point of the ``puzzlezero`` console script.

Commands are defined in sibling modules that add themselves to :data:`app`; heavy imports (torch,
FastAPI) happen inside the commands so that ``puzzlezero list`` starts fast. ``--plugin FILE``,
given before the command, loads a puzzle of one's own (:mod:`puzzlezero.plugins`); ``--version``
prints the package's version. ``-h`` is ``--help`` on every command. Every
:class:`~puzzlezero.errors.PuzzleError` becomes a one-line ``error: ...`` on stderr and exit code 2,
never a traceback.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import warnings
from typing import Annotated, TextIO

import typer

from puzzlezero.errors import PuzzleError

app = typer.Typer(
    name="puzzlezero",
    help="Learn to solve combinatorial puzzles with no human knowledge (DeepCubeA), and solve them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

#: the help panels that group a command's options (``typer.Option(rich_help_panel=...)``)
SEARCH_PANEL = "Search"
BUDGET_PANEL = "Budget"
ANYTIME_PANEL = "Anytime"
OUTPUT_PANEL = "Output"
EXPERT_PANEL = "Expert"


def version() -> str:
    """The installed package's version (``puzzlezero.__version__``)."""
    import puzzlezero

    return str(puzzlezero.__version__)


def _print_version(given: bool) -> None:
    if given:
        typer.echo(f"puzzlezero {version()}")
        raise typer.Exit(0)


@app.callback()
def global_options(
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            metavar="FILE|MODULE",
            help="Load a puzzle of your own first: a .py file or module that calls "
            "puzzlezero.register (repeatable; docs/adding-a-puzzle.md). Only the plugins named here (and "
            "installed packages' entry points) are loaded, by this command and the workers it starts.",
            show_default=False,
        ),
    ] = None,
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """Options for every command, given before it: puzzlezero --plugin FILE COMMAND ..."""
    if plugin:
        from puzzlezero.plugins import load_plugins

        load_plugins(plugin)  # a PluginError becomes a one-line error below


# Command modules, in the order their commands appear in --help. A module that is missing (an
# optional part not installed) is skipped.
COMMAND_MODULES = (
    "puzzlezero.cli.puzzle_cmds",
    "puzzlezero.cli.definition_cmds",
    "puzzlezero.cli.cases_cmds",
    "puzzlezero.cli.solve_cmds",
    "puzzlezero.cli.value_cmds",
    "puzzlezero.cli.analyze_cmds",
    "puzzlezero.cli.train_cmds",
    "puzzlezero.cli.optimal_cmds",
    "puzzlezero.cli.report_cmds",
    "puzzlezero.cli.serve_cmds",
)


def _load_commands() -> None:
    for mod in COMMAND_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise
    _help_as_paragraphs(app)


def _help_as_paragraphs(group: typer.Typer) -> None:
    """Each command's help (its docstring) as paragraphs the terminal wraps: typer keeps a
    docstring's single line breaks (in every paragraph after the first, and in the command list),
    so that help wrapped at 100 columns in the source came out ragged in a narrower terminal. A
    paragraph that starts with ``\\b`` keeps its lines (click's convention for a list)."""
    for info in group.registered_commands:
        text = info.help or inspect.getdoc(info.callback)
        if text:
            info.help = paragraphs(text)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _help_as_paragraphs(sub.typer_instance)


def paragraphs(text: str) -> str:
    """``text`` with the line breaks inside each paragraph (blank-line separated) made spaces,
    except in a paragraph that starts with ``\\b``; what follows a ``\\f`` line (click: not help) is
    left out.

    >>> paragraphs("One line\\nand its rest.\\n\\nTwo\\nlines.")
    'One line and its rest.\\n\\nTwo lines.'
    """
    text = text.partition("\f")[0].strip()
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in text.split("\n\n"))


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Warnings read like errors, ``warning: message`` on stderr, without Python's source line."""
    typer.echo(f"warning: {message}", err=True)


def leading_plugins(argv: list[str]) -> list[str]:
    """The ``--plugin`` values given before the command (``--plugin X`` or ``--plugin=X``): loaded
    before the commands are built, so that a plugin's searches, heuristics and knobs are among
    their choices and flags."""
    refs: list[str] = []
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg == "--plugin" and i + 1 < len(argv):
            refs.append(argv[i + 1])
            i += 1
        elif arg.startswith("--plugin="):
            refs.append(arg.partition("=")[2])
        i += 1
    return refs


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    refs = leading_plugins(args)
    if refs:
        from puzzlezero.plugins import load_plugins

        try:
            load_plugins(refs)
        except PuzzleError as exc:
            typer.echo(f"error: {exc}", err=True)
            return 2
    _load_commands()
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    try:
        rc = app(args=argv, standalone_mode=False)
    except PuzzleError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        typer.echo("aborted", err=True)
        return 130
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        # usage errors (bad option, missing argument): click's ClickException or, in typer >= 0.2x,
        # its vendored twin; both know how to print themselves
        if hasattr(exc, "show") and isinstance(exit_code := getattr(exc, "exit_code", None), int):
            exc.show()
            return int(exit_code)
        raise
    return rc if isinstance(rc, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
