"""``cases``: a benchmark case file of random states, the format ``bench --cases`` reads.

Examples::

    puzzlezero cases puzzle15 --n 20 --depth 100 200 --seed 1 --out p15.json
    puzzlezero cases cube2 --n 1000 --seed 2026 --out benchmarks/cube2_random1000.json   # with optimal lengths

States are the goal scrambled ``k ~ U[LO, HI]`` random moves (deep enough to be practically uniform
on small puzzles). cube2's cases carry the exact optimal length of every state, from its distance
table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from puzzlezero.cli.main import app
from puzzlezero.cli.puzzle_cmds import PuzzleArg
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.registry import make
from puzzlezero.storage import atomic_write_json


def make_cases(p: Puzzle, n: int, depth: tuple[int, int], seed: int) -> dict[str, Any]:
    """A case file's contents: ``{"puzzle", "source", "cases": [{"id", <the state's JSON>,
    "optimal_length" (cube2 only)}, ...]}`` of ``n`` states scrambled ``LO..HI`` moves from the goal
    with ``seed``."""
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
    source = f"puzzlezero cases {p.name} --n {n} --depth {lo} {hi} --seed {seed}"
    return {"puzzle": p.name, "source": source, "cases": cases}


@app.command("cases")
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
    data = make_cases(p, n, depth, seed)
    if out is None:
        typer.echo(json.dumps(data, indent=1))
        return
    try:
        atomic_write_json(out, data)
    except OSError as exc:
        raise PuzzleError(f"cannot write {out}: {exc.strerror or exc}") from None
    typer.echo(f"wrote {len(data['cases'])} cases to {out}")
