"""Training cost-to-go networks: DAVI (DeepCubeA, Algorithm 1) and the objectives beside it
(random-walk warm start, LHBL), a typed config, a trainer with exact resume, logs and plots.

Training needs the ``train`` extra (PyTorch, matplotlib): ``pip install "puzzlezero[train]"``.
Without it, importing this package or any module in it raises
:class:`~puzzlezero.errors.MissingExtraError` saying so.

>>> from puzzlezero.train import TrainConfig, Trainer
>>> cfg = TrainConfig(puzzle="cube3", preset="small", max_iterations=1000)  # doctest: +SKIP
>>> Trainer(cfg, "runs/cube3").run(max_minutes=5)                           # doctest: +SKIP
"""

from puzzlezero.errors import MissingExtraError

#: the top-level modules of the train extra that the training code imports
TRAIN_EXTRA_MODULES = ("torch", "matplotlib")

try:
    # importing the objectives (davi below) registers them, and their registry plugs itself into
    # TrainConfig's checks (config.OBJECTIVE_LOOKUP)
    from puzzlezero.train.config import TrainConfig
    from puzzlezero.train.objectives.davi import bellman_targets, one_step_targets
    from puzzlezero.train.trainer import DAVITrainer, Trainer
except ModuleNotFoundError as exc:
    if (exc.name or "").partition(".")[0] not in TRAIN_EXTRA_MODULES:
        raise
    raise MissingExtraError(
        f'training needs the train extra ({exc.name} is not installed): pip install "puzzlezero[train]"',
        "train",
    ) from exc

__all__ = [
    "Trainer",
    "DAVITrainer",
    "TrainConfig",
    "TRAIN_EXTRA_MODULES",
    "bellman_targets",
    "one_step_targets",
]
