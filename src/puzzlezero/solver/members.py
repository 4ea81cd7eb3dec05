"""The members of an ensemble (:attr:`SolveOptions.models`): each a model, guiding the search with
the solve's heuristic, or a registered heuristic without a network, written ``heuristic:NAME``
(:data:`~puzzlezero.defaults.HEURISTIC_MEMBER`), guiding the same search with that heuristic
instead, or a registered search that needs no heuristic, written ``search:NAME``
(:data:`~puzzlezero.defaults.SEARCH_MEMBER`; a classical solver such as cube3's two-phase), run
as it is beside the others. A heuristic member makes no network calls, so the same time buys it a
wider beam: its beam widths and node cap are its heuristic's ``member_width`` times the solve's
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

from puzzlezero.defaults import HEURISTIC_MEMBER, SEARCH_MEMBER, member_heuristic, member_search
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
    """The heuristic or search a member names (``heuristic:NAME``, ``search:NAME``), checked
    against the registry: a registered heuristic that reads no model (a network's member is its
    model), or a registered search that needs no heuristic (an unknown name is an
    :class:`~puzzlezero.errors.UnknownNameError` listing them); ``None`` for a model."""
    try:
        name = member_heuristic(member)
        search = member_search(member)
    except ValueError as exc:
        raise PuzzleError(str(exc)) from None
    if search is not None:
        if lookup(SEARCHES, search, "search").needs_heuristic:
            raise PuzzleError(
                f"ensemble member {member!r}: search {search} is guided by a heuristic; "
                f"{SEARCH_MEMBER}NAME is for a search that needs none (the others take the ensemble's "
                "heuristics: name models or heuristic:NAME members instead)"
            )
        return search
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
    """The members that are models (not ``heuristic:NAME`` or ``search:NAME``), in order."""
    return [m for m in models if member_heuristic(m) is None and member_search(m) is None]


def member_width(o: SolveOptions, member: str) -> int:
    """How many times the solve's beam widths (and node cap) ``member`` searches with: its
    heuristic's ``member_width`` where it names one and the search has a beam width, else 1."""
    name = member_heuristic(member)
    spec: SearchSpec = SEARCHES[o.search]
    if name is None or not spec.reads("beam_width"):  # a model's, or a search member's
        return 1
    return HEURISTICS[name].member_width


def member_options(o: SolveOptions, member: str) -> SolveOptions:
    """The options ``member``'s search runs with: ``o`` with that model, or, for
    ``heuristic:NAME``, with that heuristic and no model, its beam widths and node cap times
    :func:`member_width`, or, for ``search:NAME``, with that search, no heuristic and no model;
    never an ensemble."""
    search = member_search(member)
    if search is not None:  # its own bounds: a search without a node cap runs to the time limit
        cap = o.max_nodes if SEARCHES[search].node_cap else None
        return replace(o, search=search, heuristic=None, model=None, models=(), max_nodes=cap)
    name = member_heuristic(member)
    if name is None:
        return replace(o, model=member, models=())
    k = member_width(o, member)
    widths = o.beam_width * k if isinstance(o.beam_width, int) else tuple(w * k for w in o.beam_width)
    cap = None if o.max_nodes is None else o.max_nodes * k
    return replace(o, heuristic=name, model=None, models=(), beam_width=widths, max_nodes=cap)
