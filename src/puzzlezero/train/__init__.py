"""DAVI training (DeepCubeA, Algorithm 1): typed config, trainer with exact resume, logs and plots.

>>> from puzzlezero.train import TrainConfig, DAVITrainer
>>> cfg = TrainConfig(puzzle="cube3", preset="small", max_iterations=1000)  # doctest: +SKIP
>>> DAVITrainer(cfg, "runs/cube3").run(max_minutes=5)                       # doctest: +SKIP
"""

from puzzlezero.train.config import TrainConfig
from puzzlezero.train.davi import DAVITrainer, bellman_targets

__all__ = ["DAVITrainer", "TrainConfig", "bellman_targets"]
