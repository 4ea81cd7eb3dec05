"""``puzzlezero pdb``: build or check pattern databases."""

from __future__ import annotations

from typing import Annotated

import typer

from puzzlezero.cli.main import app


@app.command("pdb")
def pdb_cmd(
    puzzles: Annotated[list[str], typer.Argument(help="Puzzles whose pattern databases to build or check.")],
) -> None:
    """Build (once) or load the pattern databases of PUZZLES and print their sizes."""
    from puzzlezero.optimal import pdb_heuristic
    from puzzlezero.registry import make

    for name in puzzles:
        h = pdb_heuristic(make(name))
        typer.echo(f"{name}: {getattr(h, 'name', 'pdb')}, {getattr(h, 'nbytes', 0) / 1e6:,.1f} MB")
