"""The outer training loop: stop rules, checkpoints, logs, evaluation, progress bar, signals.

Under data-parallel training (:mod:`puzzlezero.train.ddp`) every rank runs this loop; rank 0 alone
writes the log, checkpoints, plot and evaluations, and decides when to stop (each chunk it tells
the other ranks, so all stop after the same chunk).
"""

from __future__ import annotations

import os
import platform
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm import tqdm

from puzzlezero.machine import cpu_model
from puzzlezero.train.report import plot_run

if TYPE_CHECKING:
    from puzzlezero.train.protocols import LoopTrainer

__all__ = ["run_loop", "hardware_info"]


def _crossed(before: int, after: int, every: int) -> bool:
    """Whether a multiple of ``every`` lies in ``(before, after]``."""
    return every > 0 and after // every > before // every


@contextmanager
def _stop_on_signals(flag: dict[str, bool]) -> Iterator[None]:
    """First SIGINT/SIGTERM: finish the chunk, checkpoint, stop. A second one: stop at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if flag["stop"]:
            raise KeyboardInterrupt
        flag["stop"] = True

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _limit_iterations(t: LoopTrainer) -> int | None:
    """The iteration count at which the run ends (whole chunks), or ``None`` if only time limits it."""
    cfg, chunk = t.config, t.config.chunk_iterations
    limits = []
    if cfg.max_iterations is not None:
        limits.append(cfg.max_iterations)
    if cfg.max_samples is not None:  # samples count over all data-parallel ranks
        limits.append(-(-cfg.max_samples // (cfg.batch_size * t.world_size)))
    if not limits:
        return None
    return -(-min(limits) // chunk) * chunk


def run_loop(t: LoopTrainer, max_minutes: float | None) -> dict[str, Any]:
    """See :meth:`~puzzlezero.train.trainer.Trainer.run`."""
    cfg, c = t.config, t.counters
    lead = t.rank == 0  # the one process that writes (data-parallel rank 0, or the only one)
    end_iteration = _limit_iterations(t)
    start = last_tick = last_ckpt = time.monotonic()
    start_samples = c.samples
    deadline = None if max_minutes is None else start + 60.0 * max_minutes
    flag = {"stop": False}
    reason = "finished" if end_iteration is not None and c.iteration >= end_iteration else ""
    bar = tqdm(
        total=end_iteration,
        initial=c.iteration,
        unit="it",
        disable=not (cfg.progress and lead),
        dynamic_ncols=True,
        desc=f"{cfg.objective} {cfg.puzzle}",
    )
    validation: dict[str, str] = {}
    with bar, _stop_on_signals(flag):
        while not reason:
            before = c.iteration
            record = t.train_chunk()
            now = time.monotonic()
            c.wall_seconds += now - last_tick
            last_tick = now
            rate = (c.samples - start_samples) / max(now - start, 1e-9)
            record.update(wall_seconds=round(c.wall_seconds, 2), samples_per_s=round(rate, 1))
            if lead and (record["target_updated"] or _crossed(before, c.iteration, cfg.log_every)):
                t.append_log(record)
            if end_iteration is not None and c.iteration >= end_iteration:
                reason = "finished"
            elif flag["stop"]:
                reason = "interrupted"
            elif deadline is not None and now >= deadline:
                reason = "time limit"
            if t.world_size > 1:
                from puzzlezero.train.collectives import agree

                reason = agree(t, reason)  # rank 0's stop decision (and curriculum depth) for all
            if not lead:
                continue
            if _crossed(before, c.iteration, cfg.eval_every) or (reason == "finished" and cfg.eval_every):
                validation = _evaluate(t)
            bar.update(c.iteration - before)
            post = {"loss": f"{c.last_loss:.4f}", "updates": c.target_updates, "samples/s": f"{rate:,.0f}"}
            if cfg.curriculum != "off":
                post["K"] = c.max_scramble_now
            post.update(validation)
            if deadline is not None and end_iteration is None:
                post["left"] = f"{max(0.0, deadline - now) / 60:.1f} min"
            bar.set_postfix(post, refresh=False)
            if (
                reason
                or _crossed(before, c.iteration, cfg.checkpoint_every)
                or now - last_ckpt >= cfg.checkpoint_seconds
            ):
                c.finished = reason == "finished"
                t.checkpoint()
                last_ckpt = time.monotonic()
    if lead:
        _plot(t)
    return {
        "stop_reason": reason,
        "iteration": c.iteration,
        "samples": c.samples,
        "target_updates": c.target_updates,
        "loss": c.last_loss,
        "wall_seconds": round(c.wall_seconds, 1),
        "samples_per_s_this_call": round(
            (c.samples - start_samples) / max(time.monotonic() - start, 1e-9), 1
        ),
        "run_dir": str(t.run_dir),
    }


def _evaluate(t: LoopTrainer) -> dict[str, str]:
    """Evaluate, log, redraw the plot; returns the headline figures for the progress bar."""
    from puzzlezero.train.evaluate import headline

    tick = time.monotonic()
    record = t.evaluate()
    record["eval_seconds"] = round(time.monotonic() - tick, 2)
    t.append_log(record)
    _plot(t)
    return headline(record)


def _plot(t: LoopTrainer) -> None:
    try:
        plot_run(t.run_dir)
    except Exception as exc:  # a plot must never stop training
        tqdm.write(f"warning: could not draw {t.run_dir / 'training.png'}: {exc}")


def hardware_info(threads: int, device: torch.device | str = "cpu") -> dict[str, Any]:
    """Where a model was trained (for the model card)."""
    info: dict[str, Any] = {}
    if torch.device(device).type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
        info["gpu_count"] = torch.cuda.device_count()
    return {
        **info,
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": threads,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
