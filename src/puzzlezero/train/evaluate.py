"""Periodic evaluation during training, as in DeepCubeA's Fig. 3, plus a held-out validation figure.

For a fixed set of states grouped by scramble depth ``d``:

* the percentage solved by greedy best-first search (from each state, repeatedly move to the child
  with the lowest heuristic value, as DeepCubeA's training-time test; :func:`puzzlezero.search.gbfs`);
* the mean predicted cost-to-go beside a reference: the true distance where it is known, else the
  scramble depth itself (an upper bound of the true distance; the plot says which);
* where the true distance is known, errors that need no search luck: ``mae`` (mean
  ``|prediction - optimal|``), ``bias`` (mean ``prediction - optimal``) and ``underestimate_pct``
  (the share of admissible predictions, ``prediction <= optimal``);
* where it is not, batch weighted A* (:func:`puzzlezero.search.bwas`) on a small fixed subset,
  bounded by a node cap: ``bwas_solved_pct`` and ``bwas_mean_length``.

True distances come from the cube2 distance table, or from a fixed validation file shipped in
``train/data`` (``puzzle15``: boards made by random walks, and uniformly random boards, each with
its optimal cost from IDA*; ``lightsout7``: random presses by depth and uniformly random boards,
each with its minimum set of presses over GF(2); ``scripts/make_validation_sets.py`` writes them).
:func:`eval_set_for` picks such a file when the puzzle has one, else scrambles a set with
:func:`make_eval_set`.
:func:`headline` turns an evaluation record into one or two figures for a progress bar.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.puzzles.base import Puzzle

__all__ = [
    "EvalSet",
    "RANDOM_DEPTH",
    "FIXED_SETS",
    "make_eval_set",
    "load_fixed_set",
    "eval_set_for",
    "greedy_rollout",
    "greedy_solved",
    "evaluate",
    "evaluate_policy",
    "headline",
    "default_eval_depths",
]

Heuristic = Callable[[np.ndarray], np.ndarray]

#: depth label of states not made by a random walk (uniformly random boards of a fixed set)
RANDOM_DEPTH = -1

#: fixed validation files (in ``puzzlezero/train/data``) by puzzle name
FIXED_SETS: dict[str, str] = {"puzzle15": "puzzle15_valid.json", "lightsout7": "lightsout7_valid.json"}

#: BWAS on the sets without exact costs: at most this many states, bounded per instance
BWAS_STATES, BWAS_WEIGHT, BWAS_BATCH, BWAS_MAX_NODES, BWAS_TIME_LIMIT = 20, 0.6, 100, 20_000, 10.0
#: the beam of :func:`evaluate_policy` (every state, ``max_steps`` steps of ``W * A`` children)
POLICY_BEAM_WIDTH = 10


@dataclass(frozen=True)
class EvalSet:
    """Fixed evaluation states: ``states[N, *state_shape]``, their scramble ``depths`` (int64[N];
    :data:`RANDOM_DEPTH` for uniformly random states) and, when known, exact cost-to-go
    ``true_cost`` (float32[N]; otherwise ``None``). ``source`` says where the states came from."""

    states: np.ndarray
    depths: np.ndarray
    true_cost: np.ndarray | None
    source: str = "random scrambles"

    @property
    def reference(self) -> str:
        return "true cost-to-go" if self.true_cost is not None else "scramble depth (upper bound)"


def default_eval_depths(max_scramble: int, count: int = 10, cap: int = 30) -> tuple[int, ...]:
    """About ``count`` depths spread evenly over ``[1, min(max_scramble, cap)]``."""
    top = max(1, min(max_scramble, cap))
    return tuple(int(d) for d in np.unique(np.linspace(1, top, num=min(count, top)).round().astype(int)))


def _true_cost(puzzle: Puzzle, states: np.ndarray) -> np.ndarray | None:
    """Exact distances where the project has a table (cube2), else ``None``."""
    if puzzle.name != "cube2":
        return None
    try:
        from puzzlezero.puzzles.cube.table import distance

        return np.asarray(distance(states), dtype=np.float32)
    except Exception as exc:  # no table: evaluation falls back to the scramble depth, training goes on
        warnings.warn(
            f"no exact cube2 distances for the evaluation ({exc}); using scramble depths", stacklevel=2
        )
        return None


def make_eval_set(puzzle: Puzzle, depths: tuple[int, ...], per_depth: int, seed: int) -> EvalSet:
    """``per_depth`` states for each depth, from an RNG of its own (training RNG untouched)."""
    rng = np.random.default_rng([seed, 0xE7A1])
    d = np.repeat(np.asarray(depths, dtype=np.int64), per_depth)
    states = puzzle.scramble(rng, d.size, d)
    return EvalSet(states, d, _true_cost(puzzle, states))


#: where the fixed validation files live (package data, see ``pyproject.toml``)
DATA_DIR = Path(__file__).resolve().parent / "data"


def load_fixed_set(puzzle: Puzzle, per_depth: int | None = None) -> EvalSet | None:
    """The puzzle's fixed validation set (see :data:`FIXED_SETS`) with its exact costs, or ``None``
    when it has none. ``per_depth`` keeps only the first that many states of each depth group.

    Raises :class:`~puzzlezero.errors.ModelFileError` naming the file when it is unreadable or holds
    states that are not legal for ``puzzle``.
    """
    name = FIXED_SETS.get(puzzle.name)
    if name is None:
        return None
    path = DATA_DIR / name
    if not path.is_file():
        warnings.warn(f"fixed validation set {path} is missing; scrambling one instead", stacklevel=2)
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["states"]
        if data["puzzle"] != puzzle.name or not rows:
            raise ValueError(f"it is for {data['puzzle']!r} with {len(rows)} states")
        states = np.array([r[puzzle.json_key] for r in rows], dtype=puzzle.dtype)
        depths = np.array([RANDOM_DEPTH if r["walk_depth"] is None else r["walk_depth"] for r in rows])
        cost = np.array([r["optimal_cost"] for r in rows], dtype=np.float32)
    except (OSError, ValueError, KeyError, TypeError, OverflowError) as exc:
        raise ModelFileError(f"fixed validation set {path} is not usable: {exc}") from exc
    try:
        if states.shape[1:] != puzzle.state_shape:
            raise ValueError(f"states of shape {states.shape[1:]}, not {puzzle.state_shape}")
        for s in states:
            puzzle.validate(s)
        if (cost < 0).any():
            raise ValueError("negative optimal costs")
    except (ValueError, PuzzleError) as exc:
        raise ModelFileError(f"fixed validation set {path} is not usable: {exc}") from exc
    depths = depths.astype(np.int64)
    if per_depth is not None:
        keep = np.zeros(len(rows), dtype=bool)
        for d in np.unique(depths):
            keep[np.flatnonzero(depths == d)[: max(1, per_depth)]] = True
        states, depths, cost = states[keep], depths[keep], cost[keep]
    return EvalSet(states, depths, cost, source=f"{name} ({len(states)} states, optimal costs)")


def eval_set_for(puzzle: Puzzle, depths: tuple[int, ...], per_depth: int, seed: int) -> EvalSet:
    """The evaluation set of a training run: the puzzle's fixed validation file when it has one
    (``depths`` and ``seed`` are then not used: the file's walk depths are fixed; at most
    ``per_depth`` states per depth are kept), else :func:`make_eval_set`."""
    fixed = load_fixed_set(puzzle, per_depth)
    return fixed if fixed is not None else make_eval_set(puzzle, depths, per_depth, seed)


def greedy_rollout(
    puzzle: Puzzle, heuristic: Heuristic, states: np.ndarray, max_steps: int, is_goal: str | None = None
) -> np.ndarray:
    """Greedy best-first rollout of every state at once; returns ``bool[N]`` solved (the goal
    ``is_goal``, default the puzzle's) within ``max_steps`` moves. Each step evaluates the children
    of all unsolved states in one call."""
    goal_test = puzzle.goal_test(is_goal)
    states = states.copy()
    solved = goal_test(states)
    n_act = puzzle.num_actions
    for _ in range(max_steps):
        active = np.flatnonzero(~solved)
        if active.size == 0:
            break
        children = puzzle.expand(states[active])  # [n, A, ...]
        flat = children.reshape(active.size * n_act, *puzzle.state_shape)
        h = heuristic(flat).reshape(active.size, n_act)
        legal = puzzle.legal_mask(states[active])
        h = np.where(legal, h, np.inf)
        best = np.argmin(h, axis=1)
        states[active] = children[np.arange(active.size), best]
        solved[active] = goal_test(states[active])
    return solved


def greedy_solved(
    puzzle: Puzzle, heuristic: Heuristic, states: np.ndarray, max_steps: int, is_goal: str | None = None
) -> np.ndarray:
    """``bool[N]``: solved (the goal ``is_goal``, default the puzzle's) by greedy best-first search
    within ``max_steps`` moves, using :func:`puzzlezero.search.gbfs` (which never revisits a
    state), else :func:`greedy_rollout`."""
    try:
        from puzzlezero.search import gbfs
    except ImportError:
        return greedy_rollout(puzzle, heuristic, states, max_steps, is_goal)
    results = gbfs(puzzle, states, heuristic, max_steps=max_steps, is_goal=is_goal)
    return np.array([r.solved for r in results], dtype=bool)


def bwas_subset(depths: np.ndarray, count: int) -> np.ndarray:
    """Indices of at most ``count`` states spread over the depth groups: the first state of every
    group (shallowest first), then the second of every group, and so on."""
    groups = [np.flatnonzero(depths == d) for d in np.unique(depths)]
    order = [g[i] for i in range(max((len(g) for g in groups), default=0)) for g in groups if i < len(g)]
    return np.array(order[: max(0, count)], dtype=np.int64)


def _errors(pred: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    diff = pred.astype(np.float64) - ref.astype(np.float64)
    return {
        "mae": round(float(np.abs(diff).mean()), 4),
        "bias": round(float(diff.mean()), 4),
        "underestimate_pct": round(100.0 * float((diff <= 1e-6).mean()), 2),
    }


def _summary(
    m: np.ndarray,
    pred: np.ndarray,
    ref: np.ndarray,
    solved: np.ndarray,
    exact: bool,
    bwas_ok: np.ndarray | None,
    bwas_len: np.ndarray | None,
) -> dict[str, Any]:
    """Figures of the states ``m`` (a mask): greedy rate, means, errors or BWAS results."""
    out: dict[str, Any] = {
        "n": int(m.sum()),
        "solved_pct": round(100.0 * float(solved[m].mean()), 2),
        "mean_pred": round(float(pred[m].mean()), 4),
        "mean_ref": round(float(ref[m].mean()), 4),
    }
    if exact:
        out.update(_errors(pred[m], ref[m]))
    if bwas_ok is not None and bwas_len is not None:
        tried = m & (bwas_ok >= 0)
        ok = tried & (bwas_ok == 1)
        out["bwas_solved_pct"] = round(100.0 * float(ok.sum() / tried.sum()), 2) if tried.any() else None
        out["bwas_mean_length"] = round(float(bwas_len[ok].mean()), 2) if ok.any() else None
    return out


def _by_depth(
    eval_set: EvalSet, keys: list[str], summary: Callable[[np.ndarray], dict[str, Any]]
) -> dict[str, Any]:
    """The record's layout: ``summary(mask)``'s ``keys`` as lists aligned with ``"depths"`` (and
    ``"counts"``), then ``"random"`` (the uniformly random states, if any) and ``"overall"``."""
    out: dict[str, Any] = {"depths": [], "counts": [], **{k: [] for k in keys}}
    for d in np.unique(eval_set.depths):
        if d == RANDOM_DEPTH:
            continue
        s = summary(eval_set.depths == d)
        out["depths"].append(int(d))
        out["counts"].append(s["n"])
        for k in keys:
            out[k].append(s[k])
    rand = eval_set.depths == RANDOM_DEPTH
    if rand.any():
        out["random"] = summary(rand)
    out["overall"] = summary(np.ones(len(eval_set.depths), dtype=bool))
    return out


def evaluate(
    puzzle: Puzzle,
    heuristic: Heuristic,
    eval_set: EvalSet,
    max_steps: int,
    *,
    bwas_states: int = BWAS_STATES,
    bwas_weight: float = BWAS_WEIGHT,
    bwas_batch: int = BWAS_BATCH,
    bwas_max_nodes: int = BWAS_MAX_NODES,
    bwas_time_limit: float | None = BWAS_TIME_LIMIT,
    is_goal: str | None = None,
) -> dict[str, Any]:
    """Per-depth results, lists aligned with ``"depths"`` (walk depths; uniformly random states are
    summarised apart under ``"random"``): ``"solved_pct"`` (greedy), ``"mean_pred"``, ``"mean_ref"``,
    ``"counts"``; with exact costs also ``"mae"``, ``"bias"``, ``"underestimate_pct"``; without them
    ``"bwas_solved_pct"`` and ``"bwas_mean_length"`` (``None`` where no state of that depth was in the
    BWAS subset, or none was solved) from BWAS on at most ``bwas_states`` states (0: no BWAS).
    ``"overall"`` holds the same figures over all states, ``"reference"`` and ``"eval_set"`` say what
    the reference cost and the states are. ``is_goal``: the goal name solved to (default the
    puzzle's own; a sub-goal's reference is the walk depth, an upper bound of its cost)."""
    pred = np.asarray(heuristic(eval_set.states), dtype=np.float32)
    solved = greedy_solved(puzzle, heuristic, eval_set.states, max_steps, is_goal)
    exact = eval_set.true_cost is not None
    ref = eval_set.true_cost if eval_set.true_cost is not None else eval_set.depths.astype(np.float32)
    bwas_ok = bwas_len = None
    if not exact and bwas_states > 0:
        from puzzlezero.search import bwas

        pick = bwas_subset(eval_set.depths, bwas_states)
        results = bwas(
            puzzle,
            eval_set.states[pick],
            heuristic,
            weight=bwas_weight,
            batch_size=bwas_batch,
            max_nodes=bwas_max_nodes,
            time_limit=bwas_time_limit,
            is_goal=is_goal,
        )
        bwas_ok = np.full(len(eval_set.depths), -1, dtype=np.int64)  # -1: not tried
        bwas_len = np.zeros(len(eval_set.depths), dtype=np.float64)
        bwas_ok[pick] = [int(r.solved) for r in results]
        bwas_len[pick] = [len(r.actions) for r in results]

    keys = ["solved_pct", "mean_pred", "mean_ref"]
    keys += ["mae", "bias", "underestimate_pct"] if exact else []
    keys += ["bwas_solved_pct", "bwas_mean_length"] if bwas_ok is not None else []
    out = _by_depth(eval_set, keys, lambda m: _summary(m, pred, ref, solved, exact, bwas_ok, bwas_len))
    if bwas_ok is not None:
        out["bwas"] = {
            "states": int((bwas_ok >= 0).sum()),
            "weight": bwas_weight,
            "batch_size": bwas_batch,
            "max_nodes": bwas_max_nodes,
        }
    out["reference"] = eval_set.reference
    out["eval_set"] = eval_set.source
    return out


def evaluate_policy(
    puzzle: Puzzle,
    policy: Heuristic,
    eval_set: EvalSet,
    max_steps: int,
    *,
    beam_width: int = POLICY_BEAM_WIDTH,
    is_goal: str | None = None,
) -> dict[str, Any]:
    """:func:`evaluate` for a network that has a policy and no value (EfficientCube,
    :mod:`puzzlezero.train.objectives.efficientcube`): per depth, ``"solved_pct"`` following the policy
    greedily (:func:`puzzlezero.search.pbeam` of width 1, never revisiting a state, at most
    ``max_steps`` moves) and ``"beam_solved_pct"`` / ``"beam_mean_length"`` with a beam of the
    ``beam_width`` most probable paths (as many steps); with exact costs also ``"optimal_pct"``, the share of the
    states whose greedy solution is a shortest one (not solved counts as not optimal). Same layout
    as :func:`evaluate` (lists aligned with ``"depths"``, ``"random"``, ``"overall"``)."""
    from puzzlezero.search import pbeam

    greedy = pbeam(puzzle, eval_set.states, policy, beam_width=1, max_steps=max_steps, is_goal=is_goal)
    wide = pbeam(
        puzzle,
        eval_set.states,
        policy,
        beam_width=beam_width,
        max_steps=max_steps,
        max_nodes=None,
        is_goal=is_goal,
    )
    solved = np.array([r.solved for r in greedy])
    wide_ok = np.array([r.solved for r in wide])
    wide_len = np.array([len(r.actions) for r in wide], dtype=np.float64)
    cost = eval_set.true_cost
    optimal = None
    if cost is not None:
        lengths = np.array([r.cost if r.solved else np.inf for r in greedy], dtype=np.float64)
        optimal = np.abs(lengths - cost.astype(np.float64)) < 1e-6

    def summary(m: np.ndarray) -> dict[str, Any]:
        ok = m & wide_ok
        out: dict[str, Any] = {
            "n": int(m.sum()),
            "solved_pct": round(100.0 * float(solved[m].mean()), 2),
            "beam_solved_pct": round(100.0 * float(wide_ok[m].mean()), 2),
            "beam_mean_length": round(float(wide_len[ok].mean()), 2) if ok.any() else None,
        }
        if optimal is not None:
            out["optimal_pct"] = round(100.0 * float(optimal[m].mean()), 2)
        return out

    keys = ["solved_pct", "beam_solved_pct", "beam_mean_length"] + (
        ["optimal_pct"] if optimal is not None else []
    )
    out = _by_depth(eval_set, keys, summary)
    out["beam"] = {"width": beam_width}
    out["search"] = "policy"
    out["reference"] = eval_set.reference
    out["eval_set"] = eval_set.source
    return out


def _weighted(values: Sequence[Any], weights: Sequence[Any] | None) -> float | None:
    pairs = [
        (float(v), float(w))
        for v, w in zip(values, weights or [1] * len(values), strict=False)
        if v is not None and not math.isnan(float(v))
    ]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total > 0 else None


def headline(record: dict[str, Any]) -> dict[str, str]:
    """One or two short figures of an evaluation record for a progress bar, over all depths:
    ``{"val MAE": "1.23", "greedy": "85%"}`` with exact costs, else ``{"greedy": "85%",
    "BWAS": "90%"}``. Records written before these figures existed give what they hold (the
    greedy rate averaged over depths); a record with none gives ``{}``."""
    overall = record.get("overall")
    if not isinstance(overall, dict):  # an older record: only per-depth lists
        counts = record.get("counts")
        overall = {
            k: _weighted(record[k], counts)
            for k in ("mae", "solved_pct", "bwas_solved_pct")
            if isinstance(record.get(k), list) and record[k]
        }
    out: dict[str, str] = {}
    if overall.get("mae") is not None:
        out["val MAE"] = f"{overall['mae']:.2f}"
    if overall.get("solved_pct") is not None:
        out["greedy"] = f"{overall['solved_pct']:.0f}%"
    if overall.get("optimal_pct") is not None:
        out["optimal"] = f"{overall['optimal_pct']:.0f}%"
    if "val MAE" not in out and overall.get("bwas_solved_pct") is not None:
        out["BWAS"] = f"{overall['bwas_solved_pct']:.0f}%"
    return out
