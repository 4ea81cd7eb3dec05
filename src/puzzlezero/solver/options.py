"""The options of a solve: the frozen :class:`SolveOptions` everything below the entry points takes
as it is, and :class:`SolveSettings`, what a caller may set by keyword. Resolving the one from the
other against the puzzle's defaults and the tables of searches and heuristics is
:mod:`puzzlezero.solver.resolve`'s job (:func:`~puzzlezero.solver.resolve.resolve_options`); this
module is plain data, reading only the :data:`OPTIONS` table for an option's default."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from puzzlezero.solver.search_options import OPTIONS

#: the states the breadth-first pass before the search may generate for one state: enough to
#: meet in the middle of six quarter turns of the cube (12^3 states a side) or four moves of the
#: 7x7x7 (42^2), about 0.05 s; a state farther from the goal goes to the search at once
BREADTH_FIRST_NODES = 50_000
#: the most seconds of the time limit that pass may take (at most a twentieth of the limit)
BREADTH_FIRST_SECONDS = 1.0


@dataclass(frozen=True)
class SolveOptions:
    """Fully resolved options of a solve call (names checked, defaults filled in)."""

    search: str
    heuristic: str | None
    model: str | None
    weight: float
    batch: int
    max_nodes: int | None
    time_limit: float
    max_steps: int
    #: one width, or the widths of an anytime schedule of beams (:attr:`Defaults.beam_width`)
    beam_width: int | tuple[int, ...] = 1000
    #: anytime: the ``(weight, batch)`` stages, run instead of ``weight``/``batch``; empty: off
    stages: tuple[tuple[float, int], ...] = ()
    #: the search run on states left unsolved (``Defaults.fallback``); ``None``: none
    fallback: str | None = None
    #: the goal searched for (a name of ``puzzle.goal_predicates()``); ``"solved"``: the puzzle's own
    goal: str = "solved"
    #: the :data:`OPTIONS` of the search and heuristic in use, ``(name, value)`` sorted by name,
    #: every one they take (defaults filled in)
    options: tuple[tuple[str, Any], ...] = ()
    #: macros (macro-actions): move sequences the search may take as one action
    #: (:mod:`puzzlezero.puzzles.macros`); empty: the puzzle's moves only
    macros: tuple[tuple[int, ...], ...] = ()
    #: the shortcut pass's bound on states a round (:attr:`Defaults.shortcut`); 0: off
    shortcut: int = 0
    #: the window re-solving pass's window, in moves (:attr:`Defaults.windows`); 0: off
    windows: int = 0
    #: an ensemble: two or more members, each a model name or folder, ``heuristic:NAME`` (a
    #: registered heuristic without a network) or ``search:NAME`` (a registered search that needs
    #: no heuristic, :mod:`puzzlezero.solver.members`), searched side by
    #: side, each state's cheapest solution kept (:mod:`puzzlezero.search.ensemble`); empty: the
    #: one ``model``
    models: tuple[str, ...] = ()
    #: the breadth-first pass run before the search: its bound on states generated, per state
    #: (:data:`BREADTH_FIRST_NODES` under the puzzle's own settings where its moves allow it,
    #: :func:`~puzzlezero.classic.optimal.bidirectional_bfs.can_bfs`); 0: off
    breadth_first: int = 0

    def option(self, name: str) -> Any:
        """The value of option ``name`` (:data:`OPTIONS`), its default where not in :attr:`options`."""
        return dict(self.options).get(name, OPTIONS[name].default)


class SolveSettings(TypedDict, total=False):
    """What a caller may set for a solve, by keyword (``solve``, ``solve_many``, ``resolve_options``,
    ``run_bench``, ``solve_on_ray``); each left out or ``None`` takes the puzzle's default
    (:func:`~puzzlezero.solver.resolve.defaults_for`).
    :func:`~puzzlezero.solver.resolve.resolve_options` turns them into one :class:`SolveOptions`."""

    #: a :data:`SEARCHES` name (default: the puzzle's own, ``Defaults.search``)
    search: str | None
    #: a :data:`HEURISTICS` name or ``"module:factory"`` (default ``"learned"``)
    heuristic: str | None
    #: a shipped model name or a model folder (default: the puzzle's name), or an ensemble folder
    model: str | None
    #: an ensemble of two or more model names or folders, or ``heuristic:NAME`` members, or their
    #: names joined by commas (:func:`~puzzlezero.solver.members.read_models`; default:
    #: the puzzle's ``Defaults.models`` for its own search, where it has them)
    models: Sequence[str] | str | None
    #: BWAS/Q*: lambda in f = lambda * g + h
    weight: float | None
    #: BWAS/Q*: N, nodes expanded per iteration
    batch: int | None
    #: cap on nodes generated per instance
    max_nodes: int | None
    #: seconds per search call
    time_limit: float | None
    #: greedy and beam search: cap on moves
    max_steps: int | None
    #: beam search: W, or several widths (an anytime schedule of beams)
    beam_width: int | Sequence[int] | None
    #: run the puzzle's anytime schedule (``None``: where it has one)
    anytime: bool | None
    #: an anytime schedule of one's own, ``(weight, batch)`` stages (BWAS, Q*)
    stages: Sequence[tuple[float, int]] | None
    #: run the puzzle's fallback search on states left unsolved (``None``: under its own settings)
    fallback: bool | None
    #: a goal name of the puzzle to solve to (default its own, ``"solved"``)
    goal: str | None
    #: values of :data:`OPTIONS` taken by the search or the heuristic
    options: Mapping[str, Any] | None
    #: macros (macro-actions): move sequences, as action ids, the search may take as one action
    macros: Sequence[Sequence[int]] | None
    #: the shortcut pass's bound on states a round (0: off; ``None``: the puzzle's own)
    shortcut: int | None
    #: the window re-solving pass's window in moves (0: off; ``None``: the puzzle's own)
    windows: int | None


#: the names of :class:`SolveSettings`
SETTINGS: tuple[str, ...] = tuple(SolveSettings.__annotations__)
