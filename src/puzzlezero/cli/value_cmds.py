"""``value``: the cost-to-go a heuristic (by default the shipped network) gives a state, each move's
cost through it, and the optimum beside them.

Examples::

    puzzlezero value cube3 "R U R' F2"
    puzzlezero value puzzle15 "1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15" --json
    puzzlezero value cube3 "R U" --heuristic pdb --no-optimal
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from puzzlezero.cli.main import app
from puzzlezero.cli.puzzle_cmds import PuzzleArg, StateArg, read_state_text
from puzzlezero.cli.solve_flags import HeuristicOpt, ModelOpt, PrecisionOpt, precision_options
from puzzlezero.cost_to_go import OPTIMAL_TIME_LIMIT
from puzzlezero.registry import make

#: moves listed in the text output, cheapest first
SHOW_MOVES = 5


@app.command("value")
def value_cmd(
    puzzle: PuzzleArg,
    state: StateArg,
    model: ModelOpt = None,
    heuristic: HeuristicOpt = "learned",
    optimal: Annotated[
        bool,
        typer.Option(
            "--optimal/--no-optimal",
            help="Also find the optimal cost where the puzzle has an optimal solver (its first use "
            "builds the pattern databases, once).",
        ),
    ] = True,
    optimal_time_limit: Annotated[
        float, typer.Option("--optimal-time-limit", help="Seconds the optimal solver may take.")
    ] = OPTIMAL_TIME_LIMIT,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    precision: PrecisionOpt = None,
) -> None:
    """Print the estimated cost-to-go of STATE, the best moves by Q(s, a) = cost + value after the
    move, and the optimal cost beside them."""
    from puzzlezero.cost_to_go import value
    from puzzlezero.solver import in_family_colours, read_state

    given = p = make(puzzle)
    text = read_state_text(state)
    start = read_state(p, text)  # read and checked here, once
    if model is None and heuristic == "learned":  # a goal of distinct labels: its family's model
        read = in_family_colours(p, start[None])
        if read is not None:
            p, start = read[0], read[1].array[0]
    v = value(
        p,
        start,
        heuristic=heuristic,
        model=model,
        optimal=optimal,
        optimal_time_limit=optimal_time_limit,
        options=precision_options(precision),
    )
    read_as = {} if p is given else {"puzzle": given.name, "state": text, "read_as": p.name}
    if as_json:
        typer.echo(json.dumps(v.to_json() | read_as))
        return
    source = heuristic + (f", model {v.model}" if v.model else "")
    typer.echo(f"value:    {v.value:.2f} ({source})")
    if read_as:
        typer.echo(f"read as:  {p.name}, each label in the colour of its home (the same goal)")
    if v.optimal is not None:
        typer.echo(f"optimal:  {v.optimal:g} (found in {v.optimal_seconds:.2f} s; error {v.error:+.2f})")
    elif v.optimal_status != "not asked":
        typer.echo(f"optimal:  unknown ({v.optimal_status})")
    if v.is_goal:
        typer.echo("state:    solved")
        return
    ranked = sorted(zip(v.action_values, v.moves, strict=True))[:SHOW_MOVES]
    typer.echo("moves:    " + ", ".join(f"{m} {q:.2f}" for q, m in ranked) + "  (Q: cost + value after)")
