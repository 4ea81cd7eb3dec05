"""Training commands: ``train`` (DAVI, resumable) and ``export`` (a run folder -> a model folder).

Examples::

    puzzlezero train cube3 --preset small --out runs/cube3 --max-minutes 60 --export models/cube3
    puzzlezero train cube3 --out runs/cube3 --resume --max-minutes 60      # continue exactly
    puzzlezero train puzzle15 --max-minutes 30 --set int8_targets=true --set threads=1
    puzzlezero export runs/cube3 src/puzzlezero/models/cube3
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from puzzlezero.cli.main import app
from puzzlezero.errors import PuzzleError

if TYPE_CHECKING:
    from puzzlezero.train import TrainConfig


def _load_config(puzzle: str, config: Path | None, out: Path, resume: bool) -> TrainConfig:
    from puzzlezero.train import TrainConfig

    if resume and not (out / "config.json").is_file():
        raise PuzzleError(f"nothing to resume in {out}: it has no config.json (start without --resume)")
    if resume:
        if config is not None:
            raise PuzzleError(
                "--resume reads the run's own config.json; drop --config (use --set to change limits)"
            )
        cfg = TrainConfig.from_json(out / "config.json")
    elif config is not None:
        cfg = TrainConfig.from_json(config)
    else:
        return TrainConfig(puzzle=puzzle)
    if cfg.puzzle != puzzle:
        raise PuzzleError(f"the config is for puzzle {cfg.puzzle!r}, not {puzzle!r}")
    return cfg


@app.command()
def train(
    puzzle: Annotated[str, typer.Argument(help="Puzzle name (see `puzzlezero list`).", show_default=False)],
    config: Annotated[
        Path | None, typer.Option("--config", help="TrainConfig JSON file (see puzzlezero.train.config).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Run folder (checkpoint, log, plot); default runs/PUZZLE-PRESET."),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the run in --out exactly where it stopped.")
    ] = False,
    max_minutes: Annotated[
        float | None, typer.Option("--max-minutes", help="Stop cleanly (with a checkpoint) after M minutes.")
    ] = None,
    preset: Annotated[
        str | None, typer.Option("--preset", help="Network preset: tiny, small, medium, paper.")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config field, key=value (repeatable).")
    ] = None,
    export: Annotated[
        Path | None, typer.Option("--export", help="Write the model folder here when training stops.")
    ] = None,
) -> None:
    """Train a cost-to-go network by deep approximate value iteration (DeepCubeA, Algorithm 1)."""
    from dataclasses import replace

    from puzzlezero.registry import make
    from puzzlezero.train import DAVITrainer

    make(puzzle)  # an unknown name fails here, listing the valid ones
    if max_minutes is not None and max_minutes <= 0:
        raise PuzzleError(f"--max-minutes must be > 0, got {max_minutes}")
    provisional = out or Path("runs") / f"{puzzle}-{preset or 'small'}"
    cfg = _load_config(puzzle, config, provisional, resume)
    if preset is not None:
        cfg = replace(cfg, preset=preset)
    cfg = cfg.with_overrides(set_ or [])
    run_dir = out or Path("runs") / f"{puzzle}-{cfg.preset}"
    if max_minutes is None and cfg.max_iterations is None and cfg.max_samples is None:
        raise PuzzleError("no stopping rule: give --max-minutes, or --set max_iterations=N / max_samples=N")
    trainer = DAVITrainer(cfg, run_dir, resume=resume)
    summary = trainer.run(max_minutes=max_minutes)
    typer.echo(
        f"{summary['stop_reason']}: {summary['iteration']:,} iterations, {summary['samples']:,} samples, "
        f"{summary['target_updates']} target updates, loss {summary['loss']:.4f}, "
        f"{summary['samples_per_s_this_call']:,.0f} samples/s; run folder {run_dir}"
    )
    if export is not None:
        typer.echo(f"model written to {trainer.export(export)}")


@app.command("export")
def export_model(
    run: Annotated[
        Path, typer.Argument(help="A training run folder (from `puzzlezero train`).", show_default=False)
    ],
    model_dir: Annotated[Path, typer.Argument(help="Model folder to write.", show_default=False)],
) -> None:
    """Write a training run's current network as a model folder (model.pt, config.json, card.json)."""
    from puzzlezero.train import DAVITrainer

    trainer = DAVITrainer.from_run(run)
    typer.echo(f"model written to {trainer.export(model_dir)}")
