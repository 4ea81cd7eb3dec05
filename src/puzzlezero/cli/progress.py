"""What ``solve`` shows while it searches: each solution as the solver reports it
(:class:`~puzzlezero.solver.Improvement`, the ``on_solution`` hook), the first one as soon as a
search stage has it.

On a terminal a live status line (rich) says what runs and the best length so far, and each
solution is printed above it; when standard output is not a terminal (a pipe, a file), each
solution is one plain line, flushed at once, so that a reader sees it as it comes::

    found 32 moves after 0.41 s (stage 1): B U' F R' B' F U B U L ...
    found 24 moves after 3.05 s (stage 2): B R B' U R' B U' F L' ...
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

import typer

from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver.result import Improvement


def compact(p: Puzzle, solution: tuple[str, ...] | list[str]) -> str:
    """Moves as people write them (cubes: ``R R`` -> ``R2``), ``(already solved)`` for none."""
    return " ".join(p.format_compact(p.parse_moves(" ".join(solution)))) or "(already solved)"


class SolutionFeed:
    """The ``on_solution`` of a ``solve`` command: prints each solution found and keeps the last
    (:attr:`best`, the answer to show if the search is interrupted). ``live``: a rich status line
    on a terminal (default: whether standard output is one); ``what``: the status line's text
    while nothing is found yet; ``show``: print anything at all (``--quiet`` and ``--json`` do
    not; the feed then only keeps the best)."""

    def __init__(self, p: Puzzle, what: str, *, live: bool | None = None, show: bool = True) -> None:
        self.p, self.what, self.show = p, what, show
        self.live = show and (sys.stdout.isatty() if live is None else live)
        self.best: Improvement | None = None
        self._status: Any = None
        self._console: Any = None

    def __enter__(self) -> SolutionFeed:
        if self.live:
            from rich.console import Console

            self._console = Console(highlight=False)
            self._status = self._console.status(f"searching: {self.what}")
            self._status.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, found: Improvement) -> None:
        self.best = found
        if not self.show:
            return
        cost = "" if self.p.unit_costs else f", cost {found.cost:g}"
        line = (
            f"found {found.length} moves{cost} after {found.seconds:.2f} s ({found.stage}): "
            f"{compact(self.p, found.solution)}"
        )
        if self._console is None:
            typer.echo(line)  # click flushes each line: a pipe sees it at once
            return
        from rich.markup import escape

        self._console.print(escape(line), soft_wrap=True)
        self._status.update(f"best {found.length} moves, searching for shorter; Ctrl-C keeps it")
