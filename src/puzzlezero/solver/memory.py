"""Memory before a search runs: each search's peak estimate, the refusal of a solve that does not
fit the budget (:func:`check_memory`), and the lowering of a node cap that came from a puzzle's
defaults until it fits (:func:`cap_within_budget`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from puzzlezero.budget import widest
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.solver.heuristics import HEURISTICS
from puzzlezero.solver.members import member_options
from puzzlezero.solver.names import resolve_entry
from puzzlezero.solver.searches import SEARCHES, SearchSpec

if TYPE_CHECKING:
    from puzzlezero.solver.options import SolveOptions


#: the smallest node cap a default is lowered to for the memory budget (below it the search is
#: refused by :func:`check_memory` instead, naming what to lower)
MIN_BUDGET_NODES = 100_000


def cap_within_budget(puzzle: Puzzle, o: SolveOptions) -> int:
    """A node cap that came from the puzzle's defaults, lowered where needed so that the search's
    memory estimate fits :func:`puzzlezero.budget.memory_budget` (a cap the caller gave is kept as
    given and refused by :func:`check_memory` when it does not fit). The estimates are worst cases
    (every node kept), so on a small machine a default solve runs with a smaller cap rather than
    being refused; the search then says ``node limit`` when it reaches it."""
    from puzzlezero.budget import memory_budget

    cap = o.max_nodes
    assert cap is not None
    room = memory_budget()
    if memory_estimate(puzzle, o.search, o) <= room:
        return cap
    lo, hi = 0, cap  # the largest cap whose estimate fits, by bisection (estimates grow with it)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if memory_estimate(puzzle, o.search, replace(o, max_nodes=mid)) <= room:
            lo = mid
        else:
            hi = mid - 1
    return lo if lo >= MIN_BUDGET_NODES else cap


#: the estimate of a search that has none and no node cap (group, optimal, kociemba: their tables
#: are built ahead, ``puzzlezero pdb build``, and loaded as they are; the cube's group table takes
#: tens of KiB)
FIXED_SEARCH_BYTES = 256 << 20


def memory_estimate(p: Puzzle, search: str, o: SolveOptions, instances: int = 1) -> int:
    """Peak bytes of one call of ``search`` with options ``o`` on ``instances`` states: its
    :attr:`SearchSpec.memory` estimate, plus a network's batch where the heuristic is a network;
    of an ensemble (:attr:`SolveOptions.models`: they search side by side) the sum of its
    members', each with its own options (a network-free member's wider beam,
    :func:`~puzzlezero.solver.members.member_options`) (:func:`puzzlezero.budget.check` compares
    it with the budget)."""
    from puzzlezero import budget

    if o.models:
        members = [member_options(o, m) for m in o.models]  # a search:NAME member runs its own search
        return sum(memory_estimate(p, mo.search, mo, instances) for mo in members)

    spec = SEARCHES[search]
    if spec.memory is not None:
        out = int(resolve_entry(spec.memory, f"memory estimate of search {search!r}")(p, o, instances))
    elif spec.node_cap and o.max_nodes is not None:
        from puzzlezero.search.table import table_bytes

        out = table_bytes(budget.state_bytes(p), max(1, instances) * o.max_nodes)
    else:
        out = FIXED_SEARCH_BYTES
    return out + network_bytes(spec, o)


def network_bytes(spec: SearchSpec, o: SolveOptions) -> int:
    """What the search's heuristic adds at its peak: a network's batch, where it is a network."""
    from puzzlezero.budget import NETWORK_BATCH_BYTES

    h_spec = HEURISTICS.get(o.heuristic or "")
    uses_network = spec.needs_heuristic and o.heuristic and (h_spec is None or h_spec.uses_model)
    return NETWORK_BATCH_BYTES if uses_network else 0


def call_instances(o: SolveOptions, states: int, together: int | None = None) -> int:
    """The states one search call of :func:`~puzzlezero.solver.run.solve_many` takes out of
    ``states``: ``together``, else its search's own (1 for BWAS)."""
    return min(together or SEARCHES[o.search].together, states)


def check_memory(p: Puzzle, o: SolveOptions, instances: int = 1) -> None:
    """Refuse, before anything is allocated, a solve whose search (on ``instances`` states a
    call), fallback search or shortcut pass would need more memory than the budget
    (:func:`puzzlezero.budget.memory_budget`): :class:`~puzzlezero.errors.MemoryBudgetError`
    names the estimate, the budget and the option to lower. They run one after the other, so
    each is checked on its own."""
    from puzzlezero import budget

    spec = SEARCHES[o.search]
    if SEARCHES[o.search].reads("beam_width"):
        what = f"{o.search} search of width {widest(o.beam_width):,}"
    elif o.max_nodes is not None and spec.node_cap:
        what = f"{o.search} search of {o.max_nodes:,} nodes"
    else:
        what = f"{o.search} search"
    n = budget.guises(p, o)
    more = [f"{n} guises a state"] if n > 1 else []
    more += [f"{instances} states a call"] if instances > 1 else []
    more += [f"an ensemble of {len(o.models)} members"] if o.models else []
    what += f" on {p.name}" + (f" ({', '.join(more)})" if more else "")
    sp = p
    if o.macros:  # the search's actions: the moves and the macros
        from puzzlezero.puzzles.macros import MacroPuzzle

        sp = MacroPuzzle(p, o.macros)
    budget.check(memory_estimate(sp, o.search, o, instances), what, spec.memory_lower)
    if o.fallback is not None:
        fb = replace(o, search=o.fallback, heuristic=None, max_nodes=None, options=(), models=())
        budget.check(
            memory_estimate(p, o.fallback, fb), f"fallback search {o.fallback} on {p.name}", "--no-fallback"
        )
    if o.shortcut:
        from puzzlezero.search.shortcut import memory_estimate as shortcut_bytes

        budget.check(
            shortcut_bytes(p, o.shortcut), f"shortcut pass of {o.shortcut:,} states on {p.name}", "--shortcut"
        )
