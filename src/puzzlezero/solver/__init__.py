"""The one high-level entry point: ``solve(puzzle, state) -> SolveResult``.

Searches and heuristics are looked up by name in :data:`SEARCHES` and :data:`HEURISTICS`, whose
entries name their implementation lazily as ``"module:function"`` (nothing heavy, torch included,
is imported until a name is used). A puzzle's search settings are declared where it is registered
(:data:`DEFAULTS`, :func:`defaults_for`). Every reported solution has been verified by replaying
it on the start state.

The package, a file per job:

* :mod:`.options`: :class:`SolveOptions`, a solve's options as plain frozen data, and
  :class:`SolveSettings`, what a caller may set by keyword;
* :mod:`.resolve`: :func:`resolve_options`, the options resolved once from the puzzle's defaults
  (:func:`defaults_for`) and the caller's settings;
* :mod:`.searches` and :mod:`.heuristics`: the name tables and their specs;
  :mod:`.search_options`: the options some of them take (:data:`OPTIONS`);
* :mod:`.learned`: the network heuristics and the models of a layered solve;
* :mod:`.memory`: memory estimates and the budget checks;
* :mod:`.states`: states read by the puzzle's own reader;
* :mod:`.result`: :class:`SolveResult` and verification by replay, :class:`Improvement` (a
  solution reported while a solve runs, ``on_solution``);
* :mod:`.run`: :func:`solve` and :func:`solve_many`, the driver with fallback and shortening;
* :mod:`.tables`: the cached tables a solve reads, built before a measurement or a server starts.

Example:
    >>> from puzzlezero.solver import solve                       # doctest: +SKIP
    >>> r = solve("cube3", "R U R' U'")                           # doctest: +SKIP
    >>> r.to_json()["solution"], r.length                         # doctest: +SKIP
    ("U R U' R'", 4)
"""

from __future__ import annotations

from puzzlezero.defaults import FALLBACK_DEFAULTS, Defaults, check_defaults
from puzzlezero.registry import DEFAULTS
from puzzlezero.solver.heuristics import (
    BY_KIND,
    HEURISTICS,
    KINDS,
    LEARNED_BY_KIND,
    HeuristicSpec,
    get_heuristic,
    misplaced_heuristic,
    register_heuristic,
    stage_heuristics,
)
from puzzlezero.solver.learned import (
    LAYERED_MODEL,
    STAGES_FILE,
    learned_heuristic,
    learned_heuristic_fp32,
    learned_policy,
    learned_policy_value,
    learned_q_function,
    learned_wcd,
    stage_models,
)
from puzzlezero.solver.memory import (
    FIXED_SEARCH_BYTES,
    MIN_BUDGET_NODES,
    check_memory,
    memory_estimate,
)
from puzzlezero.solver.names import Heuristic, Results, resolve_entry
from puzzlezero.solver.options import SETTINGS, SolveOptions, SolveSettings
from puzzlezero.solver.resolve import defaults_for, options_for, resolve_options, runs_anytime
from puzzlezero.solver.result import Improvement, SolveResult, verify
from puzzlezero.solver.run import FALLBACK_RESERVE, solve, solve_many
from puzzlezero.solver.search_options import OPTIONS, OptionSpec, register_option
from puzzlezero.solver.searches import (
    SEARCHES,
    Adapter,
    SearchSpec,
    declare_search,
    register_search,
)
from puzzlezero.solver.searches import (
    SETTINGS as SEARCH_SETTINGS,
)
from puzzlezero.solver.states import States, in_family_colours, read_state, read_states

__all__ = [
    "BY_KIND",
    "DEFAULTS",
    "FALLBACK_DEFAULTS",
    "FALLBACK_RESERVE",
    "FIXED_SEARCH_BYTES",
    "HEURISTICS",
    "LAYERED_MODEL",
    "LEARNED_BY_KIND",
    "MIN_BUDGET_NODES",
    "OPTIONS",
    "SEARCHES",
    "SETTINGS",
    "STAGES_FILE",
    "Defaults",
    "Heuristic",
    "HeuristicSpec",
    "Improvement",
    "OptionSpec",
    "Results",
    "SearchSpec",
    "SolveOptions",
    "SolveResult",
    "SolveSettings",
    "check_defaults",
    "check_memory",
    "defaults_for",
    "get_heuristic",
    "in_family_colours",
    "learned_heuristic",
    "learned_heuristic_fp32",
    "learned_policy",
    "learned_policy_value",
    "learned_q_function",
    "learned_wcd",
    "memory_estimate",
    "misplaced_heuristic",
    "options_for",
    "read_state",
    "read_states",
    "States",
    "register_search",
    "declare_search",
    "Adapter",
    "KINDS",
    "register_heuristic",
    "register_option",
    "SEARCH_SETTINGS",
    "resolve_entry",
    "resolve_options",
    "runs_anytime",
    "solve",
    "solve_many",
    "stage_heuristics",
    "stage_models",
    "verify",
]
