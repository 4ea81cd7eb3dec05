"""The training plot (``training.png``), like DeepCubeA's Fig. 3: loss with target-update marks,
percentage solved by greedy best-first search by scramble depth, and mean predicted cost-to-go by
scramble depth beside the true cost-to-go (or the scramble depth where no exact table exists)."""

from __future__ import annotations

import os
from pathlib import Path

from puzzlezero.train.loop import read_log

__all__ = ["plot_run"]


def plot_run(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Draw the run's ``log.jsonl`` into ``training.png`` (or ``out``); returns the image path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from puzzlezero.storage import atomic_write

    run_dir = Path(run_dir)
    records = read_log(run_dir / "log.jsonl")
    train = [r for r in records if r.get("type") == "train"]
    evals = [r for r in records if r.get("type") == "eval"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    ax = axes[0]
    if train:
        ax.plot(
            [r["samples"] for r in train], [max(r["loss"], 1e-6) for r in train], lw=0.8, label="MSE loss"
        )
        for r in train:
            if r.get("target_updated"):
                ax.axvline(r["samples"], color="tab:red", alpha=0.4, lw=0.7)
        ax.set_yscale("log")
    ax.plot([], [], color="tab:red", alpha=0.5, label="target network update")
    ax.set_xlabel("training samples")
    ax.set_title("DAVI loss")
    ax.legend(loc="upper right", fontsize=8)

    cmap = plt.get_cmap("viridis")
    shown = evals[-6:]
    for i, r in enumerate(shown):
        color = cmap(i / max(1, len(shown) - 1))
        label = f"{r['samples']:,} samples"
        axes[1].plot(r["depths"], r["solved_pct"], "o-", ms=3, color=color, label=label)
        axes[2].plot(r["depths"], r["mean_pred"], "o-", ms=3, color=color, label=label)
    if evals:
        last = evals[-1]
        axes[2].plot(last["depths"], last["mean_ref"], "k--", lw=1.2, label=last["reference"])
        axes[1].set_title(f"% solved by greedy best-first search ({last['max_steps']} steps)")
    else:
        axes[1].set_title("% solved by greedy best-first search")
    axes[1].set_ylim(-2, 102)
    axes[2].set_title("mean cost-to-go by scramble depth")
    for ax in axes[1:]:
        ax.set_xlabel("scramble depth")
        if evals:
            ax.legend(fontsize=7)
    fig.suptitle(f"DAVI training run {run_dir.name}", fontsize=10)
    fig.tight_layout()
    path = Path(out) if out is not None else run_dir / "training.png"
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=90))
    plt.close(fig)
    return path
