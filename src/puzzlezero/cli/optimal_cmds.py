"""``puzzlezero pdb build``: build the pattern databases and group tables that searches read.

Tables are built here (or by ``serve --build-tables``), never inside a web request: a server that
misses one answers 503 with the command that builds it. Each build runs under the table's lock file,
so two commands (or a command and a solver process) that ask for the same table build it once; the
second waits and loads it. Examples::

    puzzlezero pdb build puzzle15            # the 7-8 additive databases (80 s, 0.5 GB saved, 4.8 GB while built)
    puzzlezero pdb build cube3               # Korf's corner and 2x6 edge databases (minutes)
    puzzlezero pdb build cube2 cube3 --kind group      # the group tables of --search group
    puzzlezero pdb build cube_4-4-4 --kind reduction   # the 4x4x4's centre tables (about 30 s)
    puzzlezero pdb build cube2 --kind all
"""

from __future__ import annotations

from typing import Annotated

import typer

from puzzlezero.cli.main import app
from puzzlezero.cli.solve_flags import MemoryBudgetOpt, use_memory_budget

pdb_app = typer.Typer(
    help="Build the pattern databases and group tables that searches read (never built by a web request).",
    no_args_is_help=True,
)
app.add_typer(pdb_app, name="pdb")


@pdb_app.command("build")
def build_cmd(
    puzzles: Annotated[
        list[str],
        typer.Argument(help="Puzzles whose tables to build (see `puzzlezero list`).", show_default=False),
    ],
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="pdb: the pattern databases of --heuristic pdb and the optimal solver (sliding "
            "puzzles' additive databases, the cube's corner and edge databases, the cube2 distance "
            "table); group: the group table of --search group; reduction: the centre tables of "
            "--search cube-reduction (the 4x4x4, the 5x5x5); two-phase: the tables of --search two-phase (cube3) or "
            "two-phase-slice (cube_3-3-3), 141 MB, seconds; all: every one the puzzle has.",
        ),
    ] = "pdb",
    memory_budget: MemoryBudgetOpt = None,
) -> None:
    """Build the tables of PUZZLES (or load them, where built already), with progress on stderr,
    without a time limit: a solve builds a missing table within its own limit and stops the build
    there, naming this command. A group table's build goes on from the progress a stopped or
    killed one saved (every 30 s). A pattern database whose build would take more memory than the
    budget is not started (the 15-puzzle's takes 4.3 GiB at its peak, the 24-puzzle's 1.3 GiB)."""
    from puzzlezero.classic import TABLE_KINDS, build_tables
    from puzzlezero.registry import make

    use_memory_budget(memory_budget)
    if kind not in TABLE_KINDS:
        from puzzlezero.errors import UnknownNameError

        raise UnknownNameError(f"unknown --kind {kind!r}; the kinds are {', '.join(TABLE_KINDS)}")
    for puzzle in [make(name) for name in puzzles]:  # an unknown name fails before any build
        for line in build_tables(puzzle, kind):
            typer.echo(line)
