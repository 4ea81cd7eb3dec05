"""Training cost-to-go networks: DAVI (DeepCubeA, Algorithm 1) and the objectives beside it
(random-walk warm start, LHBL), a typed config, a trainer with exact resume, logs and plots.

>>> from puzzlezero.train import TrainConfig, Trainer
>>> cfg = TrainConfig(puzzle="cube3", preset="small", max_iterations=1000)  # doctest: +SKIP
>>> Trainer(cfg, "runs/cube3").run(max_minutes=5)                           # doctest: +SKIP
"""

# importing the objectives (davi below) registers them, and their registry plugs itself into
# TrainConfig's checks (config.OBJECTIVE_LOOKUP)
from puzzlezero.train.config import TrainConfig
from puzzlezero.train.objectives.davi import bellman_targets, one_step_targets
from puzzlezero.train.trainer import DAVITrainer, Trainer

__all__ = ["Trainer", "DAVITrainer", "TrainConfig", "bellman_targets", "one_step_targets"]
