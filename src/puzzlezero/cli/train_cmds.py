"""Training commands: ``train`` (DAVI and the other objectives, resumable), ``export`` (a run
folder -> a model folder; any model -> an ONNX file), ``average`` (the mean of several model
folders' weights) and ``solution-paths`` (the states of the solutions in ``bench`` reports, as a
training file for ``--set solution_paths=FILE``).

Examples::

    puzzlezero train cube3 --preset small --out runs/cube3 --max-minutes 60 --export models/cube3
    puzzlezero train cube3 --out runs/cube3 --resume --max-minutes 60      # continue exactly
    puzzlezero train puzzle15 --init-from puzzle15 --max-minutes 30 --set objective=lhbl
    puzzlezero train puzzle15 --max-minutes 30 --set label_workers=1 --set threads=1  # both cores
    torchrun --standalone --nproc_per_node 4 -m puzzlezero train cube3 --max-minutes 30 \
        --set device=cuda --set amp=bf16 --set batch_size=10000                         # 4 GPUs
    puzzlezero export runs/cube3 src/puzzlezero/models/cube3
    puzzlezero export cube3 --onnx cube3.onnx        # an ONNX file, e.g. for --heuristic learned-onnx
    puzzlezero average models/p35 runs/p35_60min runs/p35_80min runs/p35_final   # Polyak averaging
    puzzlezero solution-paths sokoban --cases boxoban-levels/hard/000.txt --report hard.json \
        --out runs/paths.npz                           # then: train ... --set solution_paths=runs/paths.npz
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from puzzlezero.cli.main import app
from puzzlezero.errors import ModelFileError, PuzzleError

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
    puzzle: Annotated[
        str,
        typer.Argument(
            help="Puzzle name (see `puzzlezero list`), or a permutation puzzle's definition file (.json, .g).",
            show_default=False,
        ),
    ],
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
        str | None,
        typer.Option(
            "--preset",
            help="Network preset: tiny, small, medium, paper (fully connected); conv-tiny, conv, "
            "conv-large (residual convolutional, grid puzzles: Lights Out, Sokoban); cubeconv, "
            "cubeconv-small (Rute's cube network, cubes).",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config field, key=value (repeatable).")
    ] = None,
    export: Annotated[
        Path | None, typer.Option("--export", help="Write the model folder here when training stops.")
    ] = None,
    init_from: Annotated[
        str | None,
        typer.Option(
            "--init-from",
            help="Start from this model's weights (a shipped model name, or a model folder written as a "
            "path: ./model, runs/x/model); "
            "optimizer fresh, its card's history carried on.",
        ),
    ] = None,
    ddp: Annotated[
        bool,
        typer.Option(
            "--ddp",
            help="Data-parallel training under torchrun (automatic when WORLD_SIZE > 1); "
            "see puzzlezero.train.ddp.",
        ),
    ] = False,
) -> None:
    """Train a cost-to-go network: DAVI (DeepCubeA, Algorithm 1), LHBL or a random-walk warm start
    (objective, warmup_objective and the rest via --set; see puzzlezero.train.config)."""
    import shlex
    import sys
    from dataclasses import replace

    from puzzlezero.registry import make
    from puzzlezero.train import Trainer
    from puzzlezero.train import ddp as data_parallel

    # an unknown name fails here, listing the valid ones; a definition file is read and registered,
    # and the run (its config, its model) names the puzzle by its own name
    puzzle = make(puzzle).name
    if max_minutes is not None and max_minutes <= 0:
        raise PuzzleError(f"--max-minutes must be > 0, got {max_minutes}")
    if init_from is not None and resume:
        raise PuzzleError("--init-from starts a new run; --resume continues one: give only one of them")
    provisional = out or Path("runs") / f"{puzzle}-{preset or 'small'}"
    cfg = _load_config(puzzle, config, provisional, resume)
    if preset is not None:
        cfg = replace(cfg, preset=preset)
    cfg = cfg.with_overrides(set_ or [])
    if init_from is not None:
        cfg = replace(cfg, init_from=init_from)
    run_dir = out or Path("runs") / f"{puzzle}-{cfg.preset}"
    if max_minutes is None and cfg.max_iterations is None and cfg.max_samples is None:
        raise PuzzleError("no stopping rule: give --max-minutes, or --set max_iterations=N / max_samples=N")
    command = shlex.join(["puzzlezero", *sys.argv[1:]]) if sys.argv[1:2] == ["train"] else None
    if ddp or data_parallel.launched():
        trainer, summary = data_parallel.train(
            cfg, run_dir, resume=resume, command=command, max_minutes=max_minutes
        )
        if trainer.rank > 0:
            return  # rank 0 reports and exports
    else:
        trainer = Trainer(cfg, run_dir, resume=resume, command=command)
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
    source: Annotated[
        str,
        typer.Argument(
            help="A training run folder (from `puzzlezero train`), or a model folder or shipped "
            "model name (written again, e.g. in half precision with --half).",
            show_default=False,
        ),
    ],
    model_dir: Annotated[
        Path | None,
        typer.Argument(help="Model folder to write.", show_default=False),
    ] = None,
    half: Annotated[
        bool,
        typer.Option(
            "--half",
            help="Store the weights in float16: half the file, loaded back into float32 "
            "(for shipping a larger network under the size limit).",
        ),
    ] = False,
    onnx: Annotated[
        Path | None,
        typer.Option(
            "--onnx",
            help="Write the network as an ONNX file (every head, dynamic batch) for --heuristic "
            "learned-onnx, which runs a model folder without one too; a folder gets model.onnx "
            'inside. Needs torch >= 2.5 and onnxscript: pip install "puzzlezero[onnx]".',
            show_default=False,
        ),
    ] = None,
) -> None:
    """Write a training run's current network, or a model, as a model folder (model.npz,
    config.json, card.json; --half: float16 weights), and/or any network as an ONNX file (--onnx)."""
    if model_dir is None and onnx is None:
        raise PuzzleError("nothing to write: give a model folder to write, --onnx FILE, or both")
    if model_dir is None and half:
        raise PuzzleError("--half stores a model folder's weights: give the model folder to write")
    weights = "float16" if half else "float32"
    if model_dir is not None:
        if (Path(source) / "checkpoint.pt").is_file():
            from puzzlezero.train import Trainer

            written = Trainer.from_run(source).export(model_dir, weights=weights)
        else:
            from puzzlezero.nn import load_model, save_model

            try:
                net = load_model(source)
            except ModelFileError as exc:
                raise PuzzleError(
                    f"{source} is neither a training run folder (no checkpoint.pt) nor a model folder: {exc}"
                ) from None
            written = save_model(model_dir, net, puzzle=net.puzzle, card=net.card, weights=weights)
            _carry_definition(source, written)
        typer.echo(f"model written to {written} (weights in {weights})")
    if onnx is not None:
        from puzzlezero.onnx import export_onnx, load_onnx

        path = export_onnx(model_dir if model_dir is not None else source, onnx)
        onnx_net = load_onnx(path, threads=1)
        typer.echo(f"ONNX model written to {path} ({onnx_net.puzzle}; heads {', '.join(onnx_net.heads)})")


@app.command("average")
def average(
    model_dir: Annotated[Path, typer.Argument(help="Model folder to write.", show_default=False)],
    sources: Annotated[
        list[str],
        typer.Argument(
            help="Two or more model folders (or shipped names) of one puzzle and network, e.g. "
            "exports of one run at several points of its end.",
            show_default=False,
        ),
    ],
    half: Annotated[bool, typer.Option("--half", help="Store the weights in float16.")] = False,
) -> None:
    """Write the mean of several models' weights as one model folder (checkpoint or Polyak
    averaging); its card is the last model's, with what was averaged."""
    from puzzlezero.nn import save_model
    from puzzlezero.nn.averaging import average_models

    net = average_models(sources)
    weights = "float16" if half else "float32"
    written = save_model(model_dir, net, puzzle=net.puzzle, card=net.card, weights=weights)
    _carry_definition(sources[-1], written)
    typer.echo(f"model written to {written}: the mean of {len(sources)} models (weights in {weights})")


@app.command("solution-paths")
def solution_paths(
    puzzle: Annotated[
        str,
        typer.Argument(
            help="Puzzle name (see `puzzlezero list`), or a permutation puzzle's definition file (.json, .g).",
            show_default=False,
        ),
    ],
    cases: Annotated[
        list[Path],
        typer.Option(
            "--cases",
            help="A case file or level file (repeatable); each goes with the --report in its position.",
            show_default=False,
        ),
    ],
    reports: Annotated[
        list[Path],
        typer.Option(
            "--report",
            help="The bench report (`puzzlezero bench ... --out FILE`) of the --cases in its position.",
            show_default=False,
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="The .npz file to write.", show_default=False)],
) -> None:
    """Write the states of the solutions in bench reports, each with the cost of the rest of its
    solution, as a training file (train --set solution_paths=FILE --set path_share=S). Every solution
    is replayed to the goal; the cases a report did not solve are left out and counted."""
    if len(cases) != len(reports):
        raise PuzzleError(f"give one --report per --cases ({len(cases)} cases, {len(reports)} reports)")
    from puzzlezero.registry import make
    from puzzlezero.train.solution_paths import paths_from_reports, write_solution_paths

    p = make(puzzle)
    states, costs, counts = paths_from_reports(p, list(zip(cases, reports, strict=True)))
    written = write_solution_paths(out, p, states, costs)
    for c in counts:
        typer.echo(
            f"{c.cases}: {c.solutions} solutions from {c.report} ({c.unsolved} not solved there), {c.states} states"
        )
    typer.echo(
        f"{written}: {len(states)} states, path costs {costs.min():g}-{costs.max():g} (mean {costs.mean():.2f})"
    )


def _carry_definition(source: str, written: Path) -> None:
    """Copy a permutation puzzle's ``definition.json`` from the model folder ``source`` (a path or
    a shipped name) into the folder written from it, so that the new folder names its puzzle too."""
    from puzzlezero.model_folders import resolve_model_dir
    from puzzlezero.puzzles.permutation.definition import DEFINITION_FILE
    from puzzlezero.storage import atomic_write_text

    try:
        origin = resolve_model_dir(source) / DEFINITION_FILE
    except ModelFileError:
        return
    if origin.is_file():
        atomic_write_text(Path(written) / DEFINITION_FILE, origin.read_text(encoding="utf-8"))
