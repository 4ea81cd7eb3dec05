"""The search settings of a puzzle (:class:`Defaults`): plain data, declared where a puzzle is
registered (:func:`puzzlezero.registry.register`) and read by the solver when it resolves a solve's
options (:func:`puzzlezero.solver.defaults_for`). Imports nothing of the solver, so that the registry
can check a puzzle's defaults without it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "Defaults", "FALLBACK_DEFAULTS", "HEURISTIC_MEMBER", "MODEL_FREE_DEFAULTS", "ROLLOUT_SHORTCUT", "ROLLOUT_WIDTHS", "SEARCH_MEMBER", "check_defaults", "member_heuristic",
    "member_search",
]  # fmt: skip

#: how an ensemble member names a registered network-free heuristic instead of a model:
#: ``"heuristic:manhattan"`` (in ``--models`` and :attr:`Defaults.models`)
HEURISTIC_MEMBER = "heuristic:"
#: how an ensemble member names a registered search that needs no heuristic, run beside the
#: others in the same time limit: ``"search:two-phase"``
SEARCH_MEMBER = "search:"
_HEURISTIC_NAME = re.compile(r"[A-Za-z0-9_-]+")


def member_heuristic(member: str) -> str | None:
    """The heuristic an ensemble member names (``"heuristic:NAME"`` -> ``"NAME"``), ``None`` for a
    model (a name or a folder). ``ValueError`` where the part after the prefix is not a heuristic's
    name (letters, digits, - and _: a registered name, never ``module:factory``); whether it is
    registered is the solver's to check."""
    return _named(member, HEURISTIC_MEMBER, "a registered heuristic")


def member_search(member: str) -> str | None:
    """The search an ensemble member names (``"search:NAME"`` -> ``"NAME"``), ``None`` for any other
    member. ``ValueError`` where the part after the prefix is not a search's name; whether it is
    registered, and needs no heuristic, is the solver's to check."""
    return _named(member, SEARCH_MEMBER, "a registered search that needs no heuristic")


def _named(member: str, prefix: str, what: str) -> str | None:
    """The name after ``prefix`` in ``member`` (``None`` without the prefix), checked to be a
    registered thing's name: letters, digits, - and _, never ``module:factory``."""
    if not member.startswith(prefix):
        return None
    name = member[len(prefix) :]
    if not _HEURISTIC_NAME.fullmatch(name):
        raise ValueError(f"ensemble member {member!r}: {prefix}NAME names {what} (letters, digits, - and _)")
    return name


@dataclass(frozen=True)
class Defaults:
    """Search settings of one puzzle (paper's weights; batch sizes scaled down for a CPU)."""

    weight: float  #: lambda in f = lambda * g + h
    batch: int  #: N, nodes expanded per iteration
    max_nodes: int  #: cap on nodes generated per instance
    time_limit: float  #: seconds per search call
    max_steps: int  #: greedy and beam search: cap on moves
    #: beam search: states kept per instance and step; several (``(500, 5000)``): an anytime
    #: schedule of widths, each beam looking only for shorter solutions (:func:`~.anytime.anytime_beam`)
    beam_width: int | tuple[int, ...] = 1000
    search: str = "bwas"  #: the search ``solve`` runs when none is named
    #: the heuristic of a search guided by one when none is named, or ``"learned"`` without a
    #: model: ``"learned"`` is the puzzle's own network; another registered name serves a puzzle
    #: whose network is another puzzle's (``cube_3-3-3``: ``"cube3-view"``)
    heuristic: str = "learned"
    #: anytime schedule of ``search``: ``(weight, batch)`` stages run in turn within the time limit,
    #: the shortest solution kept (:mod:`puzzlezero.search.anytime`); empty: one search
    stages: tuple[tuple[float, int], ...] = ()
    #: a search that needs no heuristic and always answers (cubes: ``"group"``, sliding puzzles:
    #: ``"reduction"``), run on the states the puzzle's own search left unsolved, in the last
    #: :data:`puzzlezero.solver.run.FALLBACK_RESERVE` seconds
    fallback: str | None = None
    #: this puzzle's defaults of :data:`puzzlezero.solver.OPTIONS` (``(name, value)`` pairs; the table's elsewhere)
    options: tuple[tuple[str, Any], ...] = ()
    #: shortcuts (:mod:`puzzlezero.search.shortcut`): each solved path's detours replaced by
    #: shorter ways found by meeting in the middle, the balls around the path bounded by this many
    #: states a round; 0: off
    shortcut: int = 0
    #: window re-solving (:mod:`puzzlezero.search.windows`): each solved path re-solved a window
    #: of this many moves at a time by the puzzle's exact solver between two states
    #: (:data:`puzzlezero.classic.optimal.WINDOW_SOLVERS`); 0: off
    windows: int = 0
    #: an ensemble the puzzle's own search runs by default (:mod:`puzzlezero.search.ensemble`):
    #: two or more members, each a shipped model name, a network-free heuristic
    #: (``"heuristic:manhattan"``, :data:`HEURISTIC_MEMBER`) or a search that needs no heuristic
    #: (``"search:two-phase"``, :data:`SEARCH_MEMBER`), searched side by side, the shortest
    #: solution kept; empty: the puzzle's one model
    models: tuple[str, ...] = ()


#: the settings of a puzzle registered without defaults; a puzzle registered with some
#: (``register(name, Class, defaults={...})``) gets these with its own in place
FALLBACK_DEFAULTS = Defaults(0.6, 1000, 1_000_000, 300.0, 1000)

#: the time limit of the 4x4x4's and 5x5x5's reduction to the 3x3x3, seconds: the edges are paired
#: from as many centre solutions as leave cube3's solve its 30 s; the web server cuts it to its cap
REDUCTION_SECONDS = 120.0
#: the rollout over the group solver's answer: a beam of 1,000, then of 10,000 from the best
#: answer so far, then the shortcut pass with this bound of a round
ROLLOUT_WIDTHS, ROLLOUT_SHORTCUT = (1000, 10_000), 2_000_000
#: the settings of a permutation puzzle registered without defaults (a definition file's) when
#: no model is named and none is installed under its name: the group solver answers every state,
#: rollouts make the answer shorter, as for the registered puzzles without a shipped model
MODEL_FREE_DEFAULTS = Defaults(
    0.6, 1000, 4_000_000, 60.0, 1000, beam_width=ROLLOUT_WIDTHS, search="rollout", shortcut=ROLLOUT_SHORTCUT
)

#: the settings of a definition file's NxNxN cube (the competition's moves, any goal,
#: :data:`COMMUTATOR_CUBES` and up) when no model is named and none is installed under its name:
#: the commutator solver, orbit by orbit (the 6x6x6 to the 10x10x10: 11-40% shorter answers than
#: the rollout's in 1-3 s; the bigger cubes have no group table for the rollout)
COMMUTATOR_CUBES = 6
COMMUTATOR_DEFAULTS = Defaults(0.6, 1000, 4_000_000, 60.0, 1000, search="cube-commutators")


def check_defaults(name: str, fields: Mapping[str, Any]) -> Defaults:
    """The fallback settings with ``fields`` in place (``register(..., defaults=fields)``);
    ``ValueError`` names an unknown field or a value of the wrong kind."""
    known = {f.name: f.type for f in dataclasses.fields(Defaults)}
    unknown = sorted(set(fields) - set(known))
    if unknown:
        raise ValueError(f"puzzle {name!r}: unknown defaults {unknown}; the fields are {', '.join(known)}")
    out = dict(fields)
    widths = out.get("beam_width")
    if isinstance(widths, list | tuple):  # an anytime schedule of beams
        if not widths or any(isinstance(w, bool) or not isinstance(w, int) for w in widths):
            raise ValueError(
                f"puzzle {name!r}: defaults beam_width must be int or a list of int, got {widths!r}"
            )
        out["beam_width"] = tuple(widths)
    for key in ("weight", "time_limit", "batch", "max_nodes", "max_steps", "beam_width"):
        kind = float if key in ("weight", "time_limit") else int
        value = out.get(key, 0)
        if isinstance(value, tuple):  # beam widths, checked above
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or kind(value) != value:
            raise ValueError(f"puzzle {name!r}: defaults {key} must be {kind.__name__}, got {value!r}")
        if key in out:
            out[key] = kind(value)
    if "stages" in out:
        out["stages"] = tuple((float(w), int(n)) for w, n in out["stages"])
    if "models" in out:
        models = out["models"]
        if not isinstance(models, list | tuple) or not all(isinstance(m, str) and m for m in models):
            raise ValueError(
                f"puzzle {name!r}: defaults models must be a list of model names, got {models!r}"
            )
        for m in models:
            try:
                member_heuristic(m)
                member_search(m)
            except ValueError as exc:
                raise ValueError(f"puzzle {name!r}: defaults models: {exc}") from None
        out["models"] = tuple(models)
    if "options" in out:
        out["options"] = tuple(sorted(dict(out["options"]).items()))
    heuristic = out.get("heuristic", "learned")
    if not isinstance(heuristic, str) or not _HEURISTIC_NAME.fullmatch(heuristic):
        raise ValueError(
            f"puzzle {name!r}: defaults heuristic must be a registered heuristic's name, got {heuristic!r}"
        )
    return replace(FALLBACK_DEFAULTS, **out)
