"""A run's log (``log.jsonl``) read back (:func:`read_log`, :func:`last_eval`), and the training
plot drawn from it (``training.png``), like DeepCubeA's Fig. 3: loss with target-update marks,
percentage solved by greedy best-first search by scramble depth, mean predicted cost-to-go by
scramble depth beside the true cost-to-go (or the scramble depth where no exact table exists), and
the held-out validation figure against training samples: the mean absolute error against the
optimal cost by depth group where exact costs exist, else the greedy (and BWAS) solve rate.

Records written before the validation figures existed (no ``mae``, ``overall``, ``counts``...) are
drawn with what they hold."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["read_log", "last_eval", "plot_run", "validation_series"]

#: number of depth groups drawn in the validation panel (plus random boards and all states)
DEPTH_GROUPS = 3


def read_log(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """All records of a ``log.jsonl`` (a torn last line is skipped)."""
    out = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            out.append(json.loads(line))
        except (ValueError, RecursionError):  # a line cut short by a kill, or damaged
            continue
    return out


def last_eval(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The last evaluation record of a log, or ``None``."""
    evals = [r for r in read_log(path) if r.get("type") == "eval"]
    return evals[-1] if evals else None


def _mean(values: list[Any], weights: list[Any] | None = None) -> float | None:
    pairs = [
        (float(v), float(w))
        for v, w in zip(values, weights or [1] * len(values), strict=False)
        if v is not None
    ]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total > 0 else None


def _in_range(r: dict[str, Any], key: str, lo: int, hi: int) -> float | None:
    """Mean of the per-depth ``key`` over depths in ``[lo, hi]`` (weighted by ``counts`` if any)."""
    depths, values = r.get("depths") or [], r.get(key) or []
    counts = r.get("counts") or [1] * len(depths)
    sel = [i for i, d in enumerate(depths) if lo <= d <= hi and i < len(values)]
    return _mean([values[i] for i in sel], [counts[i] for i in sel])


def _overall(r: dict[str, Any], key: str) -> float | None:
    o = r.get("overall")
    if isinstance(o, dict) and key in o:
        return None if o[key] is None else float(o[key])
    if isinstance(r.get(key), list):
        return _mean(r[key], r.get("counts"))
    return None


def validation_series(
    evals: list[dict[str, Any]],
) -> tuple[str, str, dict[str, tuple[list[int], list[float]]]]:
    """``(title, y label, {label: (samples, values)})`` of the validation panel: MAE against the
    optimal cost by depth group when the records have ``mae``, else greedy / BWAS solve rates."""
    exact = [r for r in evals if isinstance(r.get("mae"), list) and r["mae"]]
    series: dict[str, tuple[list[int], list[float]]] = {}

    def add(label: str, r: dict[str, Any], value: float | None) -> None:
        if value is not None:
            xs, ys = series.setdefault(label, ([], []))
            xs.append(int(r["samples"]))
            ys.append(value)

    if exact:
        depths = sorted(exact[-1]["depths"])
        bins = [b for b in np.array_split(np.asarray(depths), min(DEPTH_GROUPS, len(depths))) if b.size]
        for r in exact:
            for b in bins:
                lo, hi = int(b[0]), int(b[-1])
                add(f"depth {lo}" if lo == hi else f"depth {lo}-{hi}", r, _in_range(r, "mae", lo, hi))
            rand = r.get("random")
            add("random boards", r, rand.get("mae") if isinstance(rand, dict) else None)
            add("all states", r, _overall(r, "mae"))
        where = exact[-1].get("eval_set") or "evaluation set"
        return f"validation: mean |predicted - optimal cost|\n{where}", "mean absolute error (moves)", series
    for r in evals:
        add("greedy, all depths", r, _overall(r, "solved_pct"))
        if r.get("depths") and r.get("solved_pct"):
            add(f"greedy, depth {max(r['depths'])}", r, float(r["solved_pct"][int(np.argmax(r["depths"]))]))
        add("BWAS (fixed subset)", r, _overall(r, "bwas_solved_pct"))
        add("policy beam, all depths", r, _overall(r, "beam_solved_pct"))
        add("greedy optimal, all depths", r, _overall(r, "optimal_pct"))
    return "validation: % solved on the evaluation set", "% solved", series


def plot_run(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Draw the run's ``log.jsonl`` into ``training.png`` (or ``out``, ``.png`` or ``.svg``, saved
    like bench plots by :func:`puzzlezero.plots.save_figure`); returns the image path."""
    from puzzlezero.plots import figure_format, pyplot, save_figure

    plt = pyplot()
    if out is not None:
        figure_format(out)
    run_dir = Path(run_dir)
    records = read_log(run_dir / "log.jsonl")
    train = [r for r in records if r.get("type") == "train"]
    evals = [r for r in records if r.get("type") == "eval"]
    phases = list(dict.fromkeys(str(r.get("phase", "davi")) for r in train)) or ["davi"]
    name = " then ".join({"davi": "DAVI", "lhbl": "LHBL", "warmup": "warm start"}.get(p, p) for p in phases)
    fig, grid = plt.subplots(2, 2, figsize=(14, 9))
    axes = [grid[0, 0], grid[0, 1], grid[1, 0], grid[1, 1]]
    ax = axes[0]
    if train:
        ax.plot(
            [r["samples"] for r in train],
            [max(r["loss"], 1e-6) for r in train],
            lw=0.8,
            label="training loss",
        )
        for r in train:
            if r.get("target_updated"):
                ax.axvline(r["samples"], color="tab:red", alpha=0.4, lw=0.7)
        ax.set_yscale("log")
    ax.plot([], [], color="tab:red", alpha=0.5, label="target network update")
    ax.set_xlabel("training samples")
    ax.set_title(f"{name} loss")
    ax.legend(loc="upper right", fontsize=8)

    cmap = plt.get_cmap("viridis")
    policy = bool(evals) and evals[-1].get("search") == "policy"  # a policy-only net (EfficientCube)
    shown = evals[-6:]
    for i, r in enumerate(shown):
        color = cmap(i / max(1, len(shown) - 1))
        label = f"{r['samples']:,} samples"
        axes[1].plot(r["depths"], r["solved_pct"], "o-", ms=3, color=color, label=label)
        second = r.get("optimal_pct") or r.get("beam_solved_pct") if policy else r["mean_pred"]
        axes[2].plot(r["depths"], second, "o-", ms=3, color=color, label=label)
    greedy = "following the policy greedily" if policy else "by greedy best-first search"
    if evals:
        last = evals[-1]
        if not policy:
            axes[2].plot(last["depths"], last["mean_ref"], "k--", lw=1.2, label=last["reference"])
        axes[1].set_title(f"% solved {greedy} ({last.get('max_steps', '?')} steps)")
    else:
        axes[1].set_title(f"% solved {greedy}")
    axes[1].set_ylim(-2, 102)
    if not policy:
        axes[2].set_title("mean cost-to-go by scramble depth")
    elif evals and evals[-1].get("optimal_pct") is not None:
        axes[2].set_title("% of states solved optimally following the policy greedily")
        axes[2].set_ylim(-2, 102)
    else:
        width = (evals[-1].get("beam") or {}).get("width", "?") if evals else "?"
        axes[2].set_title(f"% solved by a beam of the {width} most probable paths")
        axes[2].set_ylim(-2, 102)
    for ax in axes[1:3]:
        ax.set_xlabel("scramble depth")
        if evals:
            ax.legend(fontsize=7)

    ax = axes[3]
    title, ylabel, series = validation_series(evals)
    for label, (xs, ys) in series.items():
        bold = label in ("all states", "greedy, all depths")
        ax.plot(xs, ys, "o-", ms=3, lw=2.0 if bold else 1.0, color="k" if bold else None, label=label)
    if "%" in ylabel:
        ax.set_ylim(-2, 102)
    else:
        ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("training samples")
    ax.set_ylabel(ylabel)
    if series:
        ax.legend(fontsize=7)
    fig.suptitle(f"{name} training run {run_dir.name}", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, Path(out) if out is not None else run_dir / "training.png")
