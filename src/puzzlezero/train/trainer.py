"""The trainer: Algorithm 1's loop around any registered objective, with exact resume.

One chunk of ``chunk_iterations`` iterations: the objective (:mod:`puzzlezero.train.objectives`)
labels ``chunk_iterations * batch_size / target_reuse`` fresh states, using the target network as a
plain value function where it needs one; the trainer takes ``chunk_iterations`` Adam steps of
batch ``B`` on the squared error against those labels (``target_reuse`` passes, shuffled); every
``C`` iterations the target network takes the trained weights (if the loss is below ``epsilon``,
or always with ``target_update="period"``). With ``warmup_iterations`` the first iterations use
``warmup_objective`` (random-walk lengths) and hand their weights to the target at the end.

Exactness: the states of chunk ``j`` come from a generator seeded with ``(seed, rank, j)`` and are
labelled with the target network of a known version, so a run resumed from a checkpoint repeats
the same iterations bit for bit (same thread counts). With ``label_workers`` > 0 worker processes
label chunk ``j + W`` while the trainer steps on chunk ``j`` (:mod:`puzzlezero.train.workers`); the
checkpoint then also keeps the target weights the jobs in flight were given.

Run folder: ``config.json`` (the :class:`TrainConfig`), ``checkpoint.pt``
(:mod:`puzzlezero.train.checkpoint`), ``log.jsonl`` (``"type": "train"`` lines with loss, lr,
samples, target updates, wall time; ``"type": "eval"`` lines by scramble depth),
``training.png`` and ``.lock``: a training process holds it (:func:`puzzlezero.storage.lock_folder`)
from the start of the :class:`Trainer` to the end of :meth:`Trainer.run`, so a second one in the
same folder fails at once with :class:`~puzzlezero.errors.FileBusyError` naming the holder's pid.

Why one file: the loop, its exact resume and its checkpoints share the trainer's state; kept
together, what a resume restores can be checked against what a chunk changes.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import os
from collections import deque
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from puzzlezero import __version__
from puzzlezero.cards import SCHEMA_VERSION, network_section
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn.config import NetConfig
from puzzlezero.nn.heuristic import encode_on, make_heuristic, make_policy
from puzzlezero.nn.io import save_model
from puzzlezero.nn.models import build_model, count_parameters
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.permutation.definition import DEFINITION_FILE
from puzzlezero.storage import (
    atomic_write_json,
    atomic_write_text,
    clean_stale_temps,
    lock_folder,
    naming_full_disk,
)
from puzzlezero.train.amp import autocast, check_amp
from puzzlezero.train.checkpoint import (
    Checkpoint,
    Counters,
    check_resumable,
    config_hash,
    load_checkpoint,
    rng_state,
    save_checkpoint,
)
from puzzlezero.train.config import RESUMABLE_FIELDS, TrainConfig
from puzzlezero.train.evaluate import (
    EvalSet,
    default_eval_depths,
    eval_set_for,
    evaluate,
    evaluate_policy,
    make_eval_set,
)
from puzzlezero.train.objectives import (
    LabelJob,
    ValueFn,
    get_objective,
    make_labels,
    target_function,
)
from puzzlezero.train.warm_start import open_init, warm_start

__all__ = ["Trainer", "DAVITrainer", "CONFIG_FILE", "CHECKPOINT_FILE", "LOG_FILE"]

CONFIG_FILE, CHECKPOINT_FILE, LOG_FILE, PLOT_FILE = (
    "config.json",
    "checkpoint.pt",
    "log.jsonl",
    "training.png",
)


def _device(name: str) -> torch.device:
    """``torch.device(name)``, checked: a bad name or an absent GPU raises :class:`PuzzleError`."""
    try:
        dev = torch.device(name)
    except RuntimeError:
        raise PuzzleError(f"config: unknown torch device {name!r} (use cpu, cuda, cuda:1, ...)") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise PuzzleError(f"config: device {name!r} asked for, but this torch build sees no CUDA GPU")
    return dev


def _soft_cross_entropy(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Per row, the cross-entropy of the policy ``logits`` against the distribution ``p``."""
    return -(p * torch.log_softmax(logits.float(), dim=1)).sum(dim=1)


class Trainer:
    """Trains a :class:`~puzzlezero.nn.models.CostToGoNet` in ``run_dir``; ``resume=True`` continues a run from its
    checkpoint bit for bit (same thread count assumed). ``command`` (the command line, for the model
    card) is recorded with each call of :meth:`run`.

    Example:
        >>> t = Trainer(TrainConfig(puzzle="cube2", max_iterations=100), "runs/cube2")  # doctest: +SKIP
        >>> t.run(max_minutes=1.0)                                                     # doctest: +SKIP
        >>> t.export("models/cube2")                                                   # doctest: +SKIP
    """

    #: data-parallel rank and world size (set by :mod:`puzzlezero.train.ddp`; 0 and 1 otherwise)
    rank: int = 0
    world_size: int = 1
    #: the model as gradient steps call it: ``model`` wrapped in DistributedDataParallel by
    #: :mod:`puzzlezero.train.ddp`; ``None`` = ``model`` itself
    train_net: torch.nn.Module | None = None

    def __init__(
        self,
        config: TrainConfig,
        run_dir: str | os.PathLike[str],
        *,
        puzzle: Puzzle | None = None,
        resume: bool = False,
        read_only: bool = False,
        command: str | None = None,
    ) -> None:
        self.run_dir = Path(run_dir)
        self.read_only = read_only
        self._lock: Any = None
        created = not self.run_dir.exists()
        if not read_only:  # one writer per run folder: another process gets FileBusyError at once
            self._lock = lock_folder(self.run_dir)
            clean_stale_temps(self.run_dir)
        try:
            self._setup(config, puzzle=puzzle, resume=resume, read_only=read_only, command=command)
        except BaseException:
            self._release_lock()
            if created and not read_only:  # leave no empty folder behind a refused start
                (self.run_dir / ".lock").unlink(missing_ok=True)
                try:
                    self.run_dir.rmdir()
                except OSError:
                    pass
            raise

    def _setup(
        self,
        config: TrainConfig,
        *,
        puzzle: Puzzle | None,
        resume: bool,
        read_only: bool,
        command: str | None,
    ) -> None:
        from puzzlezero.registry import make, register_definition

        own = self.run_dir / DEFINITION_FILE  # a permutation puzzle defined by a file: kept with the run
        if puzzle is None and own.is_file():
            from puzzlezero.puzzles.permutation.files import load_definition

            register_definition(load_definition(own))
        self.puzzle = puzzle if puzzle is not None else make(config.puzzle)
        if not read_only and getattr(self.puzzle, "from_file", False):
            atomic_write_json(own, self.puzzle.definition.to_dict())  # type: ignore[attr-defined]
        if config.rooms is not None:
            self.puzzle = _with_rooms(self.puzzle, config.rooms, config.seed)
        if resume and not read_only:
            config = self._resumed_config(config)
        self.config = config
        self.command = command
        self.max_scramble = config.max_scramble or self.puzzle.default_scramble_depth
        torch.set_num_threads(config.threads)
        self.device = _device(config.device)
        check_amp(config.amp, self.device)
        start = open_init(config.init_from, self.puzzle, config, resumed=resume) if config.init_from else None
        self.init_card: dict[str, Any] = start.card if start is not None else {}
        self.net_config = (
            start.net_config
            if start is not None
            else NetConfig.from_preset(
                config.preset,
                inputs.dim(self.puzzle, config.encoding),
                input_shape=inputs.shape(self.puzzle, config.encoding),
                h1=config.h1,
                h2=config.h2,
                num_res_blocks=config.num_res_blocks,
                encoding=config.encoding,
                num_actions=self.puzzle.num_actions,
            )
        )
        for name in (config.goal, *config.goals):
            self.puzzle.goal_named(name)  # an unknown goal: UnknownNameError listing the puzzle's
        heads = config.goals or (() if config.goal == "solved" else (config.goal,))
        if start is None:
            self.net_config = replace(self.net_config, goals=heads, head_layers=config.head_layers)
        else:  # other goals than the model started from: see WarmStart.network
            self.net_config = start.network(heads, config.head_layers)
        objective_heads = {get_objective(n).head for n in (config.objective, config.warmup_objective)}
        q_head = "q" in objective_heads
        if q_head and not self.net_config.q_head:
            self.net_config = replace(self.net_config, q_head=True, num_actions=self.puzzle.num_actions)
        if objective_heads & {"policy", "alphazero"} and not self.net_config.policy_head:
            self.net_config = replace(self.net_config, policy_head=True, num_actions=self.puzzle.num_actions)
        self.model = build_model(self.net_config, seed=config.seed).to(self.device)
        if q_head:
            self.model.init_q_from_value(self.puzzle.action_costs)
        if "alphazero" in objective_heads and start is None:
            from puzzlezero.train.objectives.selfplay import init_value_head

            init_value_head(self.model, config.selfplay_gamma)
        if start is not None:
            warm_start(self.model, start, self.puzzle)
        self.target = copy.deepcopy(self.model).eval()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.counters = Counters()
        self._value_fns: dict[int, ValueFn] = {}  # target version -> value function (serial labels)
        self._versions: dict[int, dict[str, torch.Tensor]] = {}  # weights of targets jobs in flight use
        self._in_flight: deque[tuple[LabelJob, Any]] = deque()
        self._pool: Any = None
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
            with naming_full_disk(self.run_dir / LOG_FILE, "nothing was written"):
                (self.run_dir / LOG_FILE).write_bytes(b"")
            if get_objective(config.objective).head == "alphazero":  # self-play adapts its depth
                self.counters.max_scramble_now = min(config.selfplay_start_depth, self.max_scramble)
            else:
                self.counters.max_scramble_now = (
                    self.max_scramble
                    if config.curriculum == "off"
                    else min(config.curriculum_start, self.max_scramble)
                )
        atomic_write_text(self.run_dir / CONFIG_FILE, config.to_json())
        if not resume:
            self.checkpoint()  # iteration 0: a run killed at once can still be resumed

    # ---- set-up and resume -------------------------------------------------------------------------
    def _resumed_config(self, config: TrainConfig) -> TrainConfig:
        saved = TrainConfig.from_json(self.run_dir / CONFIG_FILE)
        old, new = saved.to_dict(), config.to_dict()
        changed = sorted(k for k in old if old[k] != new.get(k) and k not in RESUMABLE_FIELDS)
        if changed:
            raise PuzzleError(
                f"cannot resume {self.run_dir} with changed settings {changed}; only "
                f"{', '.join(sorted(RESUMABLE_FIELDS))} may change"
            )
        return config

    @classmethod
    def from_run(cls, run_dir: str | os.PathLike[str]) -> Trainer:
        """The state of a run folder's last checkpoint, read only (safe while the run goes on):
        for :meth:`export`, :meth:`evaluate` and :meth:`card`; do not :meth:`run` it."""
        run_dir = Path(run_dir)
        config = TrainConfig.from_json(run_dir / CONFIG_FILE)
        return cls(config, run_dir, read_only=True)

    def _restore(self, truncate_log: bool = True) -> None:
        path = self.run_dir / CHECKPOINT_FILE
        ckpt = load_checkpoint(path)
        # another configuration or (when training goes on) another package version: refused by name
        version = None if self.read_only else __version__
        check_resumable(path, ckpt, self.config.to_dict(), RESUMABLE_FIELDS, version=version)
        try:
            self.model.load_state_dict(ckpt.model)
            self.target.load_state_dict(ckpt.target)
            self.optimizer.load_state_dict(ckpt.optimizer)
        except (RuntimeError, ValueError, KeyError) as exc:
            raise ModelFileError(
                f"{self.run_dir / CHECKPOINT_FILE}: does not match config.json ({exc})"
            ) from None
        torch.set_rng_state(ckpt.torch_rng)
        self.counters = ckpt.counters
        self._versions = {int(v): w for v, w in ckpt.label_targets.items()}
        if not truncate_log:
            return
        with open(self.run_dir / LOG_FILE, "ab") as f:  # drop lines after the checkpoint (redone)
            f.truncate(self.counters.log_bytes)

    def checkpoint(self) -> Path:
        """Write the resumable state atomically; returns its path. The log is flushed to the disk
        (``fsync``) first, so that no checkpoint on the disk is newer than the log it cuts back to."""
        c = self.counters
        with (
            naming_full_disk(
                self.run_dir / LOG_FILE, "its lines so far and the previous checkpoint are kept"
            ),
            open(self.run_dir / LOG_FILE, "ab") as log,
        ):
            log.flush()
            os.fsync(log.fileno())
            c.log_bytes = os.fstat(log.fileno()).st_size
        c.pending = [asdict(job) for job, _ in self._in_flight]
        needed = {job["target_version"] for job in c.pending} - {c.target_updates}
        ckpt = Checkpoint(
            model=self.model.state_dict(),
            target=self.target.state_dict(),
            optimizer=self.optimizer.state_dict(),
            numpy_rng=rng_state(np.random.default_rng(self.config.seed)),  # chunks seed their own
            torch_rng=torch.get_rng_state(),
            counters=c,
            label_targets={str(v): self._versions[v] for v in sorted(needed)},
            config=self.config.to_dict(),
            config_hash=config_hash(self.config.to_dict(), RESUMABLE_FIELDS),
            package_version=__version__,
        )
        return save_checkpoint(self.run_dir / CHECKPOINT_FILE, ckpt)

    # ---- labels ------------------------------------------------------------------------------------
    def _job(self, chunk: int) -> LabelJob:
        cfg = self.config
        warm = chunk * cfg.chunk_iterations < cfg.warmup_iterations
        return LabelJob(
            chunk=chunk,
            objective=cfg.warmup_objective if warm else cfg.objective,
            n=cfg.chunk_iterations * cfg.batch_size // cfg.target_reuse,
            max_scramble=self.counters.max_scramble_now or self.max_scramble,
            seed=(cfg.seed, self.rank, chunk),
            target_version=self.counters.target_updates,
        )

    def _value_fn(self, version: int) -> ValueFn:
        """The target network (of ``version``, the current one) as a heuristic (int8 where configured)."""
        if version not in self._value_fns:
            self._value_fns = {version: target_function(self.puzzle, self.target, self.config, self.device)}
        return self._value_fns[version]

    def _target_weights(self, version: int) -> dict[str, torch.Tensor]:
        if version == self.counters.target_updates:
            return {k: v.detach().cpu().clone() for k, v in self.target.state_dict().items()}
        return self._versions[version]

    def _submit(self, job: LabelJob) -> None:
        if self._pool is None:
            from puzzlezero.train.workers import LabelPool

            self._pool = LabelPool(self.config.label_workers, self.puzzle, self.config, self.net_config)
        weights = self._target_weights(job.target_version)
        self._versions[job.target_version] = weights
        needs = get_objective(job.objective).needs_target
        self._in_flight.append((job, self._pool.submit(job, weights if needs else None)))

    def _labels(self, chunk: int) -> tuple[np.ndarray, np.ndarray]:
        """The labels of ``chunk``: made here, or collected from the workers (topping them up)."""
        cfg = self.config
        if cfg.label_workers == 0:
            job = self._job(chunk)
            needs = get_objective(job.objective).needs_target
            return make_labels(self.puzzle, job, self._value_fn(job.target_version) if needs else None, cfg)
        if not self._in_flight and self.counters.pending:  # resumed: re-submit what was in flight
            for d in self.counters.pending:
                self._submit(LabelJob.from_dict(d))
        queued = {job.chunk for job, _ in self._in_flight}
        for j in range(chunk, chunk + cfg.label_workers + 1):
            if j not in queued:
                self._submit(self._job(j))
        job, future = self._in_flight.popleft()
        assert job.chunk == chunk, (job.chunk, chunk)
        states, targets = future.result()
        in_use = {j.target_version for j, _ in self._in_flight}
        self._versions = {v: w for v, w in self._versions.items() if v in in_use}
        return states, targets

    def close(self) -> None:
        """Stop the label workers (a later :meth:`run` starts them again)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
            self._in_flight.clear()

    # ---- one chunk -----------------------------------------------------------------------------------
    def train_chunk(self) -> dict[str, Any]:
        """Run ``chunk_iterations`` iterations; returns the log record of the chunk."""
        cfg, c = self.config, self.counters
        it0, n_iter, bsz = c.iteration, cfg.chunk_iterations, cfg.batch_size
        chunk = it0 // n_iter
        warm = it0 < cfg.warmup_iterations
        head = get_objective(cfg.warmup_objective if warm else cfg.objective).head
        states, targets = self._labels(chunk)
        selfplay = None
        if head == "alphazero":  # the scramble depth follows the share of episodes solved
            from puzzlezero.train.objectives.selfplay import adapt_depth, solved_fraction

            solved, episodes = solved_fraction(targets)
            selfplay = {"selfplay_solved": solved, "selfplay_episodes": episodes}
            selfplay["selfplay_depth"] = c.max_scramble_now
            c.max_scramble_now = adapt_depth(
                c.max_scramble_now,
                solved,
                episodes,
                target=cfg.selfplay_target_solved,
                max_depth=self.max_scramble,
            )
        order = _passes(np.random.default_rng([cfg.seed, self.rank, chunk, 1]), len(states), n_iter * bsz)
        self.model.train()
        if cfg.batch_norm == "frozen":  # running statistics, as the target network and searches use
            for module in self.model.modules():
                if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                    module.eval()
        losses = np.empty(n_iter)
        lr = cfg.lr
        for j in range(n_iter):
            lr = cfg.lr * cfg.lr_decay ** (it0 + j)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            rows = order[j * bsz : (j + 1) * bsz]
            x = encode_on(self.puzzle, states[rows], self.net_config.encoding, self.device)
            y = torch.from_numpy(targets[rows]).to(self.device)
            loss = self._step(x, y, head)
            losses[j] = loss
        c.iteration += n_iter
        c.samples += n_iter * bsz * self.world_size
        c.last_loss, labels = self._over_ranks(float(losses.mean()), len(states))
        c.labels += labels
        updated = False
        if warm:
            updated = c.iteration >= cfg.warmup_iterations  # the warm start ends: targets from theta
        elif c.iteration % cfg.check_every == 0:
            updated = cfg.target_update == "period" or c.last_loss < cfg.epsilon
        if warm and updated and self.model.q is not None and get_objective(cfg.warmup_objective).head != "q":
            self.model.init_q_from_value(self.puzzle.action_costs)  # the Q head starts from the warm value
        if updated:
            self.target.load_state_dict(self.model.state_dict())
            c.target_updates += 1
            c.target_update_iterations.append(c.iteration)
        grown = None
        if not warm and cfg.curriculum != "off" and c.iteration % cfg.check_every == 0:
            grown = self._curriculum_step()
        record = {
            "type": "train",
            "phase": "warmup" if warm else cfg.objective,
            "iteration": c.iteration,
            "samples": c.samples,
            "labels": c.labels,
            "loss": round(c.last_loss, 6),
            "lr": lr,
            "target_updates": c.target_updates,
            "target_updated": updated,
            "max_scramble": c.max_scramble_now,
        }
        if grown is not None:
            record["curriculum_solved_pct"] = grown
        if selfplay is not None:
            record.update(selfplay)
        return record

    def _step(self, x: torch.Tensor, y: torch.Tensor, head: str = "value") -> float:
        """One Adam step (the forward pass under ``amp`` autocast, through :attr:`train_net` when
        set) on the loss of the objective's ``head``; returns the loss:

        * ``"value"``: the mean squared error of the value head against ``y[B]``;
        * ``"q"``: Q targets ``y[B, A]`` (NaN: no target) for the Q head, and the value head fits
          ``min_a y(s, a)``;
        * ``"policy"``: rows ``(value, action, weight)`` (ADI): the weighted squared error of the
          value plus the weighted cross-entropy of the policy logits, over the batch's total weight
          (a NaN value: the policy term only, as EfficientCube's rows; rows ``(value, -1, weight,
          p[A])``: the cross-entropy against the distribution ``p``);
        * ``"alphazero"``: rows ``(v, weight, first, p[A])`` (self-play): the squared error of
          ``gamma^J`` (``J`` the value head's cost-to-go) against ``v`` plus the cross-entropy of the
          policy against the distribution ``p``, weighted as above;
        * a multi-head network (``"goals"``): the mean squared error of its ``[B, G]`` goal heads.
        """
        net = self.model if self.train_net is None else self.train_net
        multi = self.net_config.multi_head
        with autocast(self.config.amp, self.device):
            pred = net(x, all_heads=head in ("q", "policy", "alphazero") and not multi)
        mse = torch.nn.functional.mse_loss
        if multi:  # one column of targets per goal head, fitted jointly
            loss = mse(pred.float(), y)
        elif head == "q":
            known = ~torch.isnan(y)
            q_loss = mse(pred["q"].float()[known], y[known])
            v_target = torch.where(known, y, torch.inf).min(dim=1).values
            loss = q_loss + mse(pred["value"].float(), v_target)
        elif head == "policy":
            v_target, action, weight = y[:, 0], y[:, 1].long(), y[:, 2]
            if y.shape[1] > 3:  # a distribution over the moves (EfficientCube's "set" target)
                ce = _soft_cross_entropy(pred["policy"], y[:, 3:])
            else:
                ce = torch.nn.functional.cross_entropy(pred["policy"].float(), action, reduction="none")
            has_value = ~torch.isnan(v_target)  # NaN: a policy-only row (EfficientCube)
            sq = (pred["value"].float() - torch.nan_to_num(v_target)) ** 2
            per_sample = torch.where(has_value, sq, torch.zeros_like(sq)) + ce
            loss = (weight * per_sample).sum() / weight.sum().clamp_min(1e-12)
        elif head == "alphazero":
            v_target, weight, p_target = y[:, 0], y[:, 1], y[:, 3:]
            v_pred = torch.pow(self.config.selfplay_gamma, pred["value"].float())
            ce = _soft_cross_entropy(pred["policy"], p_target)
            per_sample = (v_pred - v_target) ** 2 + ce
            loss = (weight * per_sample).sum() / weight.sum().clamp_min(1e-12)
        else:
            loss = mse(pred.float(), y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return float(loss.item())

    def _over_ranks(self, loss: float, labels: int) -> tuple[float, int]:
        """The chunk's loss (mean) and fresh labels (sum) over all data-parallel ranks, which also
        take rank 0's batch-norm statistics (:mod:`puzzlezero.train.collectives`); alone: unchanged."""
        if self.world_size == 1:
            return loss, labels
        from puzzlezero.train.collectives import sync_chunk

        return sync_chunk(self, loss, labels)

    def _curriculum_step(self) -> float:
        from puzzlezero.train.curriculum import grow_depth

        c = self.counters
        goal = self.eval_goal
        h = make_heuristic(
            self.puzzle, self.model, batch_size=self.config.inference_batch, device=self.device, goal=goal
        )
        rng = np.random.default_rng([self.config.seed, self.rank, c.iteration, 2])
        c.max_scramble_now, solved = grow_depth(
            self.puzzle, h, rng, c.max_scramble_now, self.max_scramble, self.config, goal
        )
        return solved

    # ---- evaluation --------------------------------------------------------------------------------
    @property
    def eval_goal(self) -> str:
        """The goal the evaluation (and the curriculum) solves to: ``goal`` (one head), else
        ``"solved"`` where a head learns it, else the last of ``goals``."""
        goals = self.config.goals
        if not goals:
            return self.config.goal
        return "solved" if "solved" in goals else goals[-1]

    def eval_set(self) -> EvalSet:
        if self._eval_set is None:
            cfg = self.config
            depths = cfg.eval_depths or default_eval_depths(self.max_scramble)
            if self.eval_goal == "solved":
                self._eval_set = eval_set_for(self.puzzle, depths, cfg.eval_states, cfg.seed)
            else:  # a sub-goal: walks from the solved state (their costs to solved do not apply)
                self._eval_set = make_eval_set(self.puzzle, depths, cfg.eval_states, cfg.seed)
        return self._eval_set

    def evaluate(self) -> dict[str, Any]:
        """Validation figures by scramble depth (on a frozen copy of the net; see :mod:`.evaluate`)."""
        es = self.eval_set()
        steps = self.config.eval_max_steps or int(es.depths.max())
        goal = self.eval_goal
        if get_objective(self.config.objective).policy_only:  # no value to follow: the policy
            policy = make_policy(
                self.puzzle, self.model, self.config.inference_batch, self.device, source="policy"
            )
            result = evaluate_policy(self.puzzle, policy, es, steps, is_goal=goal)
        else:
            h = make_heuristic(
                self.puzzle, self.model, batch_size=self.config.inference_batch, device=self.device, goal=goal
            )
            result = evaluate(self.puzzle, h, es, steps, is_goal=goal)
        return {
            "type": "eval",
            **({} if goal == "solved" else {"goal": goal}),
            "iteration": self.counters.iteration,
            "samples": self.counters.samples,
            "wall_seconds": round(self.counters.wall_seconds, 1),
            "max_steps": steps,
            **result,
        }

    # ---- running ----------------------------------------------------------------------------------
    def run(self, max_minutes: float | None = None) -> dict[str, Any]:
        """Train until ``max_iterations`` / ``max_samples`` / ``max_minutes`` (of this call) or a
        SIGINT/SIGTERM, always ending on a chunk boundary with a checkpoint. Returns a summary."""
        from puzzlezero.train.loop import run_loop

        if self._lock is None and not self.read_only:  # released by an earlier run: take it again
            self._lock = lock_folder(self.run_dir)
        if self.command:
            entry = {"command": self.command, "at_iteration": self.counters.iteration, "date": _today()}
            if self.world_size > 1:
                entry["processes"] = self.world_size  # data-parallel ranks (torchrun)
            self.counters.commands.append(entry)
        try:
            return run_loop(self, max_minutes)
        finally:
            self.close()
            self._release_lock()

    def _release_lock(self) -> None:
        """Let another process train in the run folder (a later :meth:`run` takes the lock again)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def recipe(self) -> str:
        """One line naming the objective and schedule of this run."""
        cfg = self.config
        parts = []
        if cfg.warmup_iterations:
            parts.append(f"{cfg.warmup_iterations} iterations of {cfg.warmup_objective} warm start, then")
        parts.append(get_objective(cfg.objective).describe(cfg))
        if cfg.goal != "solved":
            parts.append(f"goal {cfg.goal}")
        if get_objective(cfg.objective).needs_target:
            parts.append(
                f"target update every {cfg.check_every} iterations"
                + (f" if loss < {cfg.epsilon}" if cfg.target_update == "loss" else "")
            )
        if cfg.target_reuse > 1:
            parts.append(f"{cfg.target_reuse} passes per label")
        if cfg.curriculum != "off":
            parts.append(f"curriculum {cfg.curriculum} from K={cfg.curriculum_start}")
        return ", ".join(parts)

    def card(self, name: str | None = None) -> dict[str, Any]:
        """The model card (:mod:`puzzlezero.cards`): how this model was trained, including the runs
        it was initialised from. ``name`` names the model (default: the run folder's name, whichever
        folder the model is exported to); benchmarks add to its ``evaluations``."""
        from puzzlezero.train.loop import hardware_info
        from puzzlezero.train.report import last_eval

        c = self.counters
        hardware = hardware_info(self.config.threads, self.device)
        this_run = {
            "commands": list(c.commands),
            "recipe": self.recipe(),
            "init_from": self.config.init_from,
            "iterations": c.iteration,
            "samples": c.samples,
            "labels": c.labels,
            "target_updates": c.target_updates,
            "wall_seconds": round(c.wall_seconds, 1),
            "label_workers": self.config.label_workers,
            "hardware": hardware,
            "train_config": self.config.to_dict(),
        }
        this_run = {"date": _run_date(this_run) or _today(), **this_run}
        runs = _previous_runs(self.init_card) + [this_run]
        policy_only = get_objective(self.config.objective).policy_only
        return {
            "schema_version": SCHEMA_VERSION,
            "puzzle": self.config.puzzle,
            "name": name or self.run_dir.name,
            "date": this_run["date"],
            "description": f"A {self.config.puzzle} network trained by {self.recipe()}.",
            "intended_use": (
                f"the policy beam search on {self.config.puzzle} (its value head is untrained)"
                if policy_only
                else f"a learned heuristic for the searches on {self.config.puzzle}"
            ),
            "network": network_section(self.net_config.to_dict(), count_parameters(self.model)),
            "algorithm": self.recipe(),
            "max_scramble": self.max_scramble,
            "iterations": c.iteration,
            "samples_seen": c.samples,
            "samples_seen_total": sum(int(r.get("samples", 0)) for r in runs),
            "wall_seconds": round(c.wall_seconds, 1),
            "wall_seconds_total": round(sum(float(r.get("wall_seconds", 0.0)) for r in runs), 1),
            "target_updates": c.target_updates,
            "final_loss": None if math.isnan(c.last_loss) else c.last_loss,
            "hardware": hardware,
            "train_config": self.config.to_dict(),
            # the last run taught the policy head only (its value head is untrained): searches over
            # values refuse such a model (solver) and name the policy beam
            "policy_only": policy_only,
            "last_eval": last_eval(self.run_dir / LOG_FILE),
            "runs": runs,
            "evaluations": [],
            "notes": [],
        }

    def export(self, folder: str | os.PathLike[str], weights: str = "float32") -> Path:
        """Write the trained network as a model folder (``model.npz``, ``config.json``, ``card.json``;
        ``weights="float16"`` halves ``model.npz``, :func:`~puzzlezero.nn.io.save_model`)."""
        out = save_model(folder, self.model, puzzle=self.config.puzzle, card=self.card(), weights=weights)
        definition = getattr(self.puzzle, "definition", None)
        if definition is not None:  # a permutation puzzle: the folder carries the puzzle it was trained on
            atomic_write_json(Path(out) / DEFINITION_FILE, definition.to_dict())
        return out

    def append_log(self, record: dict[str, Any]) -> None:
        path = self.run_dir / LOG_FILE
        with naming_full_disk(
            path, "the lines before are kept, and a resume cuts the log back to the checkpoint"
        ):
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")


#: the name this class had when it only knew DAVI
DAVITrainer = Trainer


def _passes(rng: np.random.Generator, n_rows: int, total: int) -> np.ndarray:
    """Row indices for ``total`` samples: shuffled passes over ``n_rows`` rows, cut at ``total``."""
    reps = -(-total // n_rows)
    return np.concatenate([rng.permutation(n_rows) for _ in range(reps)])[:total]


def _today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


def _run_date(run: dict[str, Any]) -> str | None:
    """The date a run started: its own, else its first command's (None when neither is known)."""
    dates = [c.get("date") for c in run.get("commands") or [] if isinstance(c, dict) and c.get("date")]
    return run.get("date") or (dates[0] if dates else None)


def _previous_runs(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The training history of the model a run started from: its card's ``runs``, or one entry
    made from an older card's top-level fields."""
    if not card:
        return []
    if isinstance(card.get("runs"), list):
        return [{"date": _run_date(r), **r} if "date" not in r else dict(r) for r in card["runs"]]
    entry = {
        "date": None,
        "commands": [{"command": card["command"]}] if card.get("command") else [],
        "recipe": card.get("history") or card.get("algorithm"),
        "iterations": card.get("iterations"),
        "samples": card.get("samples_seen", 0),
        "target_updates": card.get("target_updates"),
        "wall_seconds": card.get("wall_seconds", 0.0),
        "hardware": card.get("hardware"),
        "train_config": card.get("train_config"),
    }
    if card.get("wall_time_note"):
        entry["note"] = card["wall_time_note"]
    return [entry]


def _with_rooms(puzzle: Puzzle, rooms: str, seed: int) -> Puzzle:
    """``puzzle`` (Sokoban) scrambling from the goal configurations of the levels in ``rooms`` (level
    files or directories of them, separated by commas)."""
    from puzzlezero.puzzles.sokoban import Sokoban
    from puzzlezero.puzzles.sokoban.generator import goal_configurations
    from puzzlezero.puzzles.sokoban.levels import read_level_states

    if not isinstance(puzzle, Sokoban):
        raise PuzzleError(f"config: rooms (Sokoban level files) are for sokoban, not {puzzle.name}")
    paths = [part.strip() for part in rooms.split(",")]
    if not all(paths):
        raise PuzzleError(
            f"config: rooms {rooms!r}: an empty path in the list (paths are separated by commas)"
        )
    levels = np.concatenate([read_level_states(puzzle, path) for path in paths])
    goals = goal_configurations(levels, np.random.default_rng([seed, 7]), puzzle.height, puzzle.width)
    return puzzle.with_rooms(goals)
