"""The members of an ensemble (:attr:`SolveOptions.models`): each a model, guiding the search with
the solve's heuristic, or a registered heuristic without a network, written ``heuristic:NAME``
(:data:`~puzzlezero.defaults.HEURISTIC_MEMBER`), guiding the same search with that heuristic
instead. Such a member makes no network calls, so the same time buys it a wider beam: its beam
widths and node cap are its heuristic's ``member_width`` times the solve's
(:attr:`~puzzlezero.solver.heuristics.HeuristicSpec.member_width`).

>>> from puzzlezero import make
>>> from puzzlezero.solver import resolve_options
>>> o = resolve_options(make("puzzle48"), models="puzzle48,heuristic:manhattan")
>>> m = member_options(o, "heuristic:manhattan")
>>> m.heuristic, m.model, m.beam_width == tuple(w * member_width(o, "heuristic:manhattan") for w in o.beam_width)
('manhattan', None, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from puzzlezero.defaults import HEURISTIC_MEMBER, member_heuristic
from puzzlezero.errors import PuzzleError
from puzzlezero.solver.heuristics import HEURISTICS
from puzzlezero.solver.names import lookup
from puzzlezero.solver.options import SolveOptions
from puzzlezero.solver.searches import SEARCHES, SearchSpec

__all__ = ["check_member", "member_options", "member_width", "model_members", "read_models"]


def read_models(text: str) -> tuple[str, ...]:
    """``"A,B,C"`` (``--models``, the web's and the API's ``models``): the ensemble's members in
    order, each a model name or folder or ``heuristic:NAME``; an empty member is an error."""
    parts = tuple(part.strip() for part in text.split(","))
    if not all(parts):
        raise PuzzleError(
            f"--models: {text!r} is not a list of models (e.g. puzzle48,path/to/other,heuristic:manhattan)"
        )
    return parts


def check_member(member: str) -> str | None:
    """The heuristic a member names (``heuristic:NAME``), checked against the registry: a
    registered heuristic (an unknown name is an :class:`~puzzlezero.errors.UnknownNameError`
    listing them) that reads no model (a network's member is its model); ``None`` for a model."""
    try:
        name = member_heuristic(member)
    except ValueError as exc:
        raise PuzzleError(str(exc)) from None
    if name is None:
        return None
    spec = lookup(HEURISTICS, name, "heuristic")
    if spec.uses_model:
        raise PuzzleError(
            f"ensemble member {member!r}: heuristic {name} reads a model; name the model as the "
            f"member instead ({HEURISTIC_MEMBER}NAME is for a heuristic without a network)"
        )
    return name


def model_members(models: Sequence[str]) -> list[str]:
    """The members that are models (not ``heuristic:NAME``), in order."""
    return [m for m in models if member_heuristic(m) is None]


def member_width(o: SolveOptions, member: str) -> int:
    """How many times the solve's beam widths (and node cap) ``member`` searches with: its
    heuristic's ``member_width`` where it names one and the search has a beam width, else 1."""
    name = member_heuristic(member)
    spec: SearchSpec = SEARCHES[o.search]
    if name is None or not spec.reads("beam_width"):
        return 1
    return HEURISTICS[name].member_width


def member_options(o: SolveOptions, member: str) -> SolveOptions:
    """The options ``member``'s search runs with: ``o`` with that model, or, for
    ``heuristic:NAME``, with that heuristic and no model, its beam widths and node cap times
    :func:`member_width`; never an ensemble."""
    name = member_heuristic(member)
    if name is None:
        return replace(o, model=member, models=())
    k = member_width(o, member)
    widths = o.beam_width * k if isinstance(o.beam_width, int) else tuple(w * k for w in o.beam_width)
    cap = None if o.max_nodes is None else o.max_nodes * k
    return replace(o, heuristic=name, model=None, models=(), beam_width=widths, max_nodes=cap)
