"""Deep approximate value iteration (DeepCubeA, Algorithm 1), with exact resume.

One iteration: draw ``B`` states, each the goal scrambled ``k ~ U[1, K]`` times; compute the targets
``y = min_a (cost(s, a) + J_target(A(s, a)))`` with ``J_target(goal) = 0`` (and ``y = 0`` when ``s``
itself is the goal); take one Adam step on the mean squared error of ``J_theta(s)`` against ``y``.
Every ``C`` iterations, if the loss is below ``epsilon``, the target network takes the trained
weights. Moves that leave a state unchanged (a tile against the border, a Sokoban wall) are not
moves and are left out of the minimum; the target net's outputs are clipped at 0 (a cost-to-go is
never negative).

CPU efficiency: targets are generated for ``chunk_iterations`` batches at a time with the target net
in inference mode (it only changes at check points, which fall on chunk boundaries, so the targets
are exactly Algorithm 1's), then trained on batch by batch. Runs go in whole chunks.

Run folder layout: ``config.json`` (the :class:`TrainConfig`), ``checkpoint.pt`` (see
:mod:`puzzlezero.train.checkpoint`), ``log.jsonl`` (one JSON object per line: ``"type": "train"``
lines with loss, lr, samples, target updates, wall time; ``"type": "eval"`` lines by scramble depth),
and ``training.png`` (loss, target updates and evaluations, like the paper's Fig. 3).
"""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn.fast import inference_copy
from puzzlezero.nn.heuristic import make_heuristic
from puzzlezero.nn.io import save_model
from puzzlezero.nn.models import CostToGoNet, NetConfig, build_model, count_parameters
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.storage import atomic_write_text
from puzzlezero.train.checkpoint import (
    Checkpoint,
    Counters,
    load_checkpoint,
    restore_rng,
    rng_state,
    save_checkpoint,
)
from puzzlezero.train.config import RESUMABLE_FIELDS, TrainConfig
from puzzlezero.train.evaluate import EvalSet, default_eval_depths, evaluate, make_eval_set

__all__ = ["bellman_targets", "DAVITrainer", "CONFIG_FILE", "CHECKPOINT_FILE", "LOG_FILE", "PLOT_FILE"]

CONFIG_FILE, CHECKPOINT_FILE, LOG_FILE, PLOT_FILE = (
    "config.json",
    "checkpoint.pt",
    "log.jsonl",
    "training.png",
)


def bellman_targets(
    puzzle: Puzzle,
    target_net: CostToGoNet,
    states: np.ndarray,
    *,
    inference_batch: int = 2048,
    device: str | torch.device = "cpu",
) -> np.ndarray:
    """DAVI targets ``float32[N]`` for ``states[N, *state_shape]``: ``min_a (move_cost +
    max(0, J_target(child_a)))`` over the moves that change the state, with ``J_target(goal) = 0``
    and ``0`` for goal states. Evaluates about ``inference_batch`` children per network call (goal
    children and no-op children are not evaluated). The caller puts ``target_net`` in eval mode."""
    n, n_act = states.shape[0], puzzle.num_actions
    enc = target_net.config.encoding
    per = max(1, inference_batch // n_act)
    out = np.empty(n, dtype=np.float32)
    with torch.inference_mode():
        for lo in range(0, n, per):
            parents = states[lo : lo + per]
            m = parents.shape[0]
            children = puzzle.expand(parents).reshape(m * n_act, *puzzle.state_shape)
            moved = np.any(children.reshape(m, n_act, -1) != parents.reshape(m, 1, -1), axis=2)  # [m, A]
            stuck = ~moved.any(axis=1)  # no real move: fall back to the no-op children
            moved[stuck] = True
            moved = moved.ravel()
            need = moved & ~puzzle.is_goal(children)
            values = np.zeros(m * n_act, dtype=np.float32)
            if need.any():
                x = torch.from_numpy(puzzle.encode(children[need], enc)).to(device)
                values[need] = np.maximum(target_net(x).float().cpu().numpy(), 0.0)
            cost = np.where(moved, puzzle.move_cost + values, np.inf).reshape(m, n_act)
            out[lo : lo + m] = cost.min(axis=1)
    out[puzzle.is_goal(states)] = 0.0
    return out


def _device(name: str) -> torch.device:
    """``torch.device(name)``, checked: a bad name or an absent GPU raises :class:`PuzzleError`."""
    try:
        dev = torch.device(name)
    except RuntimeError:
        raise PuzzleError(f"config: unknown torch device {name!r} (use cpu, cuda, cuda:1, ...)") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise PuzzleError(f"config: device {name!r} asked for, but this torch build sees no CUDA GPU")
    return dev


class DAVITrainer:
    """Trains a :class:`CostToGoNet` by DAVI in ``run_dir``; ``resume=True`` continues a run from
    its checkpoint bit for bit (same thread count assumed).

    Example:
        >>> t = DAVITrainer(TrainConfig(puzzle="cube2", max_iterations=100), "runs/cube2")  # doctest: +SKIP
        >>> t.run(max_minutes=1.0)                                                        # doctest: +SKIP
        >>> t.export("models/cube2")                                                      # doctest: +SKIP
    """

    def __init__(
        self,
        config: TrainConfig,
        run_dir: str | os.PathLike[str],
        *,
        puzzle: Puzzle | None = None,
        resume: bool = False,
        read_only: bool = False,
    ) -> None:
        from puzzlezero.registry import make

        self.run_dir = Path(run_dir)
        self.puzzle = puzzle if puzzle is not None else make(config.puzzle)
        if resume and not read_only:
            config = self._resumed_config(config)
        self.config = config
        self.max_scramble = config.max_scramble or self.puzzle.default_scramble_depth
        torch.set_num_threads(config.threads)
        self.net_config = NetConfig.from_preset(
            config.preset,
            self.puzzle.input_dim(config.encoding),
            h1=config.h1,
            h2=config.h2,
            num_res_blocks=config.num_res_blocks,
            encoding=config.encoding,
            num_actions=self.puzzle.num_actions,
        )
        self.device = _device(config.device)
        self.model = build_model(self.net_config, seed=config.seed).to(self.device)
        self.target = copy.deepcopy(self.model).eval()
        self._target_fast: CostToGoNet | None = None  # inference copy of self.target, rebuilt lazily
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.rng = np.random.default_rng(config.seed)
        self.counters = Counters()
        self._eval_set: EvalSet | None = None
        if resume or read_only:
            self._restore(truncate_log=not read_only)
            if read_only:
                return
        else:
            if (self.run_dir / CHECKPOINT_FILE).exists():
                raise PuzzleError(
                    f"{self.run_dir} already holds a training run; resume it (--resume) or choose another --out"
                )
            self.run_dir.mkdir(parents=True, exist_ok=True)
            (self.run_dir / LOG_FILE).write_bytes(b"")
        atomic_write_text(self.run_dir / CONFIG_FILE, config.to_json())
        if not resume:
            self.checkpoint()  # iteration 0: a run killed at once can still be resumed

    # ---- resume ----------------------------------------------------------------------------------
    def _resumed_config(self, config: TrainConfig) -> TrainConfig:
        saved = TrainConfig.from_json(self.run_dir / CONFIG_FILE)
        old, new = saved.to_dict(), config.to_dict()
        changed = sorted(k for k in old if old[k] != new[k] and k not in RESUMABLE_FIELDS)
        if changed:
            raise PuzzleError(
                f"cannot resume {self.run_dir} with changed settings {changed}; only "
                f"{', '.join(sorted(RESUMABLE_FIELDS))} may change"
            )
        return config

    @classmethod
    def from_run(cls, run_dir: str | os.PathLike[str]) -> DAVITrainer:
        """The state of a run folder's last checkpoint, read only (safe while the run goes on):
        for :meth:`export`, :meth:`evaluate` and :meth:`card`; do not :meth:`run` it."""
        run_dir = Path(run_dir)
        config = TrainConfig.from_json(run_dir / CONFIG_FILE)
        return cls(config, run_dir, read_only=True)

    def _restore(self, truncate_log: bool = True) -> None:
        ckpt = load_checkpoint(self.run_dir / CHECKPOINT_FILE)
        try:
            self.model.load_state_dict(ckpt.model)
            self.target.load_state_dict(ckpt.target)
            self.optimizer.load_state_dict(ckpt.optimizer)
        except (RuntimeError, ValueError, KeyError) as exc:
            raise ModelFileError(
                f"{self.run_dir / CHECKPOINT_FILE}: does not match config.json ({exc})"
            ) from None
        self.rng = restore_rng(ckpt.numpy_rng)
        torch.set_rng_state(ckpt.torch_rng)
        self.counters = ckpt.counters
        if not truncate_log:
            return
        with open(
            self.run_dir / LOG_FILE, "ab"
        ) as f:  # drop lines written after the checkpoint (they will be redone)
            f.truncate(self.counters.log_bytes)

    def checkpoint(self) -> Path:
        """Write the resumable state atomically; returns its path."""
        self.counters.log_bytes = (self.run_dir / LOG_FILE).stat().st_size
        ckpt = Checkpoint(
            model=self.model.state_dict(),
            target=self.target.state_dict(),
            optimizer=self.optimizer.state_dict(),
            numpy_rng=rng_state(self.rng),
            torch_rng=torch.get_rng_state(),
            counters=self.counters,
        )
        return save_checkpoint(self.run_dir / CHECKPOINT_FILE, ckpt)

    # ---- one chunk of Algorithm 1 ------------------------------------------------------------------
    def train_chunk(self) -> dict[str, Any]:
        """Run ``chunk_iterations`` iterations; returns the log record of the chunk."""
        cfg, c = self.config, self.counters
        it0, n_iter, bsz = c.iteration, cfg.chunk_iterations, cfg.batch_size
        warm = it0 < cfg.warmup_iterations
        depths = self.puzzle.draw_depths(self.rng, n_iter * bsz, (1, self.max_scramble))
        states = self.puzzle.scramble(self.rng, depths.size, depths)
        if warm:  # supervised warm start: regression on the scramble depth
            targets = depths.astype(np.float32)
            targets[self.puzzle.is_goal(states)] = 0.0
        else:
            if self._target_fast is None:
                self._target_fast = inference_copy(self.target, int8=cfg.int8_targets, device=self.device)
            targets = bellman_targets(
                self.puzzle,
                self._target_fast,
                states,
                inference_batch=cfg.inference_batch,
                device=self.device,
            )
        self.model.train()
        losses = np.empty(n_iter)
        lr = cfg.lr
        for j in range(n_iter):
            lr = cfg.lr * cfg.lr_decay ** (it0 + j)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            sl = slice(j * bsz, (j + 1) * bsz)
            x = torch.from_numpy(self.puzzle.encode(states[sl], cfg.encoding)).to(self.device)
            y = torch.from_numpy(targets[sl]).to(self.device)
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            losses[j] = loss.item()
        c.iteration += n_iter
        c.samples += depths.size
        c.last_loss = float(losses.mean())
        updated = False
        if warm:
            updated = c.iteration >= cfg.warmup_iterations  # the warm start ends: targets from theta
        elif c.iteration % cfg.check_every == 0:
            updated = c.last_loss < cfg.epsilon  # the loss of the check is the chunk's mean loss
        if updated:
            self.target.load_state_dict(self.model.state_dict())
            self._target_fast = None
            c.target_updates += 1
            c.target_update_iterations.append(c.iteration)
        return {
            "type": "train",
            "phase": "warmup" if warm else "davi",
            "iteration": c.iteration,
            "samples": c.samples,
            "loss": round(c.last_loss, 6),
            "lr": lr,
            "target_updates": c.target_updates,
            "target_updated": updated,
        }

    # ---- evaluation --------------------------------------------------------------------------------
    def eval_set(self) -> EvalSet:
        if self._eval_set is None:
            cfg = self.config
            depths = cfg.eval_depths or default_eval_depths(self.max_scramble)
            self._eval_set = make_eval_set(self.puzzle, depths, cfg.eval_states, cfg.seed)
        return self._eval_set

    def evaluate(self) -> dict[str, Any]:
        """Greedy solve rate and mean predicted cost-to-go by scramble depth (on a frozen copy of the net)."""
        es = self.eval_set()
        steps = self.config.eval_max_steps or int(es.depths.max())
        h = make_heuristic(
            self.puzzle, self.model, batch_size=self.config.inference_batch, device=self.device
        )
        result = evaluate(self.puzzle, h, es, steps)
        return {
            "type": "eval",
            "iteration": self.counters.iteration,
            "samples": self.counters.samples,
            "max_steps": steps,
            **result,
        }

    # ---- running ----------------------------------------------------------------------------------
    def run(self, max_minutes: float | None = None) -> dict[str, Any]:
        """Train until ``max_iterations`` / ``max_samples`` / ``max_minutes`` (of this call) or a
        SIGINT/SIGTERM, always ending on a chunk boundary with a checkpoint. Returns a summary."""
        from puzzlezero.train.loop import run_loop

        return run_loop(self, max_minutes)

    def card(self) -> dict[str, Any]:
        """The model card: how this model was trained (``bench`` is filled in by benchmarks)."""
        from puzzlezero.train.loop import hardware_info, last_eval

        c = self.counters
        return {
            "puzzle": self.config.puzzle,
            "algorithm": "DAVI (DeepCubeA, Algorithm 1)"
            + (
                f" after {self.config.warmup_iterations} supervised warm-start iterations"
                if self.config.warmup_iterations
                else ""
            ),
            "parameters": count_parameters(self.model),
            "max_scramble": self.max_scramble,
            "iterations": c.iteration,
            "samples_seen": c.samples,
            "target_updates": c.target_updates,
            "final_loss": None if math.isnan(c.last_loss) else c.last_loss,
            "wall_seconds": round(c.wall_seconds, 1),
            "hardware": hardware_info(self.config.threads),
            "train_config": self.config.to_dict(),
            "last_eval": last_eval(self.run_dir / LOG_FILE),
            "bench": {},
        }

    def export(self, folder: str | os.PathLike[str]) -> Path:
        """Write the trained network as a model folder (``model.pt``, ``config.json``, ``card.json``)."""
        return save_model(folder, self.model, puzzle=self.config.puzzle, card=self.card())

    def append_log(self, record: dict[str, Any]) -> None:
        with open(self.run_dir / LOG_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
