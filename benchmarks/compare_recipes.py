"""Train several recipes for the same CPU time and print their validation figures side by side.

Each recipe is a set of TrainConfig overrides on a common base. Recipes run one after another in
this process, each from the same starting point (a fresh network, or ``--init-from``), and each is
charged the CPU time of this process (``time.process_time``: label making and gradient steps, not
the evaluations) so a busy machine does not favour one recipe. Every ``--every`` CPU-seconds the
recipe's network is evaluated on the run's fixed validation set (train/evaluate.py: error against
exact costs where the puzzle has them, greedy and BWAS solve rates otherwise).

Example (the comparison that chose the defaults, see docs/recipes.md)::

    python benchmarks/compare_recipes.py cube2 --cpu-minutes 6 --every 60 \\
        --base preset=small batch_size=1000 max_scramble=14 \\
        --recipe "davi-loss:objective=davi,target_update=loss" \\
        --recipe "davi-period:objective=davi,target_update=period,check_every=20" \\
        --recipe "rw+davi:warmup_iterations=200,target_update=period,check_every=20" \\
        --recipe "lhbl:objective=lhbl,target_update=period,check_every=20" \\
        --out docs/recipes/cube2
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError
from puzzlezero.train import TrainConfig, Trainer
from puzzlezero.train.loop import hardware_info


def figures(record: dict[str, Any]) -> dict[str, float]:
    """Overall figures of an evaluation record (means over its depth groups)."""
    out: dict[str, float] = {"greedy_solved_pct": float(np.mean(record["solved_pct"]))}
    if record.get("mae"):
        out["mae"] = float(np.mean(record["mae"]))
        out["bias"] = float(np.mean(record["bias"]))
    if record.get("bwas_solved_pct") is not None:
        v = record["bwas_solved_pct"]
        out["bwas_solved_pct"] = float(np.mean(v)) if isinstance(v, list) else float(v)
    return out


def parse_recipe(text: str) -> tuple[str, list[str]]:
    name, sep, body = text.partition(":")
    if not sep or not name:
        raise PuzzleError(f"--recipe expects NAME:key=value,key=value, got {text!r}")
    return name, [kv for kv in body.split(",") if kv]


def run_recipe(
    base: TrainConfig, name: str, overrides: list[str], cpu_seconds: float, every: float, root: Path
) -> dict[str, Any]:
    cfg = base.with_overrides(overrides)
    trainer = Trainer(cfg, root / name)
    points = []

    def evaluate(cpu: float) -> None:
        rec = trainer.evaluate()
        trainer.append_log(rec)
        points.append(
            {"cpu_seconds": round(cpu, 1), "samples": trainer.counters.samples, **figures(rec), "eval": rec}
        )
        shown = ", ".join(f"{k} {v:.3f}" for k, v in figures(rec).items())
        print(f"  {name:>14}  cpu {cpu:7.1f} s  samples {trainer.counters.samples:>10,}  {shown}", flush=True)

    evaluate(0.0)
    cpu = 0.0
    next_eval = every
    while cpu < cpu_seconds:
        t0 = time.process_time()
        trainer.append_log(trainer.train_chunk())
        cpu += time.process_time() - t0
        if cpu >= next_eval or cpu >= cpu_seconds:
            evaluate(cpu)
            next_eval += every
    trainer.close()
    return {"name": name, "overrides": overrides, "recipe": trainer.recipe(), "points": points}


def table(results: list[dict[str, Any]], key: str) -> str:
    """Markdown: one row per evaluation point (by CPU time), one column per recipe."""
    head = "| CPU s | " + " | ".join(r["name"] for r in results) + " |"
    rows = [head, "|---" * (len(results) + 1) + "|"]
    n = max(len(r["points"]) for r in results)
    for i in range(n):
        cells = []
        cpu = None
        for r in results:
            if i < len(r["points"]) and key in r["points"][i]:
                p = r["points"][i]
                cpu = cpu if cpu is not None else p["cpu_seconds"]
                cells.append(f"{p[key]:.3f}")
            else:
                cells.append("")
        rows.append(f"| {cpu if cpu is not None else ''} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def plot(results: list[dict[str, Any]], keys: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(keys), figsize=(5.5 * len(keys), 4), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=True):
        for r in results:
            pts = [p for p in r["points"] if key in p]
            ax.plot([p["cpu_seconds"] for p in pts], [p[key] for p in pts], marker="o", label=r["name"])
        ax.set_xlabel("training CPU seconds")
        ax.set_ylabel(key)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("puzzle")
    ap.add_argument("--cpu-minutes", type=float, required=True, help="CPU time per recipe")
    ap.add_argument("--every", type=float, default=60.0, help="evaluate every this many CPU-seconds")
    ap.add_argument("--base", nargs="*", default=[], help="key=value overrides common to all recipes")
    ap.add_argument("--recipe", action="append", required=True, help="NAME:key=value,key=value")
    ap.add_argument("--out", type=Path, help="write OUT.md, OUT.json and OUT.png")
    ap.add_argument("--keep-runs", type=Path, help="keep the run folders here (default: a temp folder)")
    args = ap.parse_args(argv)
    try:
        base = TrainConfig(
            puzzle=args.puzzle, threads=1, progress=False, eval_every=0, checkpoint_seconds=1e9
        ).with_overrides(args.base)
        base = replace(base, label_workers=0)
        recipes = [parse_recipe(r) for r in args.recipe]
        root = args.keep_runs or Path(tempfile.mkdtemp(prefix="recipes-"))
        if args.keep_runs and root.exists():
            shutil.rmtree(root)
        results = []
        for name, overrides in recipes:
            print(f"recipe {name}: {', '.join(overrides) or 'base'}", flush=True)
            results.append(run_recipe(base, name, overrides, 60.0 * args.cpu_minutes, args.every, root))
    except PuzzleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    keys = [
        k
        for k in ("mae", "greedy_solved_pct", "bwas_solved_pct")
        if any(k in p for r in results for p in r["points"])
    ]
    print()
    for key in keys:
        print(f"{key} by CPU seconds:\n{table(results, key)}\n")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "puzzle": args.puzzle,
            "cpu_minutes_per_recipe": args.cpu_minutes,
            "base": args.base,
            "hardware": hardware_info(base.threads),
            "command": " ".join(["python", "benchmarks/compare_recipes.py", *(argv or sys.argv[1:])]),
            "results": [
                {**r, "points": [{k: v for k, v in p.items() if k != "eval"} for p in r["points"]]}
                for r in results
            ],
        }
        args.out.with_suffix(".json").write_text(json.dumps(payload, indent=1) + "\n")
        md = [f"# Recipe comparison: {args.puzzle}, {args.cpu_minutes:g} CPU-minutes per recipe", ""]
        md += [f"`{payload['command']}`", "", f"Hardware: {payload['hardware']['cpu']}, 1 torch thread.", ""]
        md += [f"- **{r['name']}**: {r['recipe']}" for r in results] + [""]
        for key in keys:
            md += [f"## {key}", "", table(results, key), ""]
        args.out.with_suffix(".md").write_text("\n".join(md))
        plot(results, keys, args.out.with_suffix(".png"))
        print(f"wrote {args.out}.md, .json, .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
