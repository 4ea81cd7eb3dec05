"""Warm starting: a new run's network starts from a trained model's weights (``--init-from``).

:func:`open_init` reads the model and checks that it fits the puzzle: the same input size (and grid
shape for a convolutional network). A model of another puzzle with the same states (cube3 for
cube3htm) carries its trunk and value head over; heads over actions are rebuilt for this puzzle's
moves. A fully connected network may grow deeper (its extra residual blocks start as identities)
but not shallower. :meth:`WarmStart.network` is the new run's network (other goals than the
model's: the trunk carries over, its policy and Q heads are dropped), and :func:`warm_start` loads
the weights that carry over into the freshly built network; the model card's runs say where they
came from. The optimizer starts fresh.

Example:
    >>> start = open_init("cube2", make("cube2"), TrainConfig(puzzle="cube2"))  # doctest: +SKIP
    >>> warm_start(model, start, puzzle)                                        # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import torch

from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn.config import NetConfig
from puzzlezero.nn.io import load_model
from puzzlezero.nn.models import CostToGoNet, grown_weights
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.base import Puzzle

if TYPE_CHECKING:
    from puzzlezero.train.config import TrainConfig

__all__ = ["WarmStart", "open_init", "warm_start"]


@dataclass(frozen=True)
class WarmStart:
    """The model a run starts from: ``source`` (a shipped model's name or a model folder), the
    loaded ``model``, and ``net_config``, its network adapted to this puzzle's moves and to the
    run's ``num_res_blocks``."""

    source: str
    model: CostToGoNet
    net_config: NetConfig

    @property
    def card(self) -> dict[str, Any]:
        return self.model.card

    @property
    def adapted(self) -> bool:
        """Whether the network differs from the model's in its moves or depth (then the model's
        heads over actions do not carry over)."""
        own = self.model.config
        return (self.net_config.num_actions, self.net_config.num_res_blocks) != (
            own.num_actions,
            own.num_res_blocks,
        )

    def other_goals(self, goals: tuple[str, ...], head_layers: int) -> bool:
        """Whether a network for ``goals`` and ``head_layers`` has other heads than the model's."""
        return (goals, head_layers) != (self.net_config.goals, self.net_config.head_layers)

    def network(self, goals: tuple[str, ...], head_layers: int) -> NetConfig:
        """The new run's network: the model's, or for other goals than the model's (a solved model
        may start a layer1 model: the trunk carries over) the same with those goals' value heads and
        without the policy and Q heads, which were for the model's own goal."""
        if not self.other_goals(goals, head_layers):
            return self.net_config
        return replace(self.net_config, goals=goals, head_layers=head_layers, q_head=False, policy_head=False)


def _check_batch_size(config: TrainConfig, init: CostToGoNet) -> None:
    """Warn when ``--init-from`` a batch-norm network trained on batches 4x larger or smaller.

    In training mode batch norm normalizes by the batch's own statistics, which other batch sizes
    make different: a puzzle48 model trained on batches of 10,000 read a training loss of 8.5-9.6 on
    batches of 1,000 with no learning at all (lr 1e-7), against 2.0 on batches of 10,000 and an
    evaluation-mode error of 1.7 (docs/training.md, "GPUs")."""
    trained = (init.card.get("train_config") or {}).get("batch_size")
    has_batch_norm = any(isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)) for m in init.modules())
    if has_batch_norm and trained and max(trained, config.batch_size) >= 4 * min(trained, config.batch_size):
        warnings.warn(
            f"--init-from {config.init_from}: it was trained on batches of {trained:,} and this run "
            f"uses {config.batch_size:,}; its batch norm layers will see other statistics and the "
            f"training loss starts higher (keep them alike: --set batch_size={trained})",
            stacklevel=4,
        )


def open_init(source: str, puzzle: Puzzle, config: TrainConfig, *, resumed: bool = False) -> WarmStart:
    """The model ``source`` read and checked against ``puzzle`` and ``config`` (a model that does
    not fit raises :class:`PuzzleError`); a new run (not ``resumed``) warns when the model's batch
    norm was trained on batches of quite another size."""
    model = load_model(source)
    if model.config.input_dim != inputs.dim(puzzle, model.config.encoding):
        other = f" (it is a {model.puzzle} model)" if model.puzzle != puzzle.name else ""
        raise PuzzleError(f"--init-from {source}: its input size does not fit {puzzle.name}{other}")
    if model.config.arch == "conv" and model.config.input_shape != inputs.shape(
        puzzle, model.config.encoding
    ):
        raise PuzzleError(f"--init-from {source}: its grid shape does not fit {puzzle.name}")
    if not resumed:
        _check_batch_size(config, model)
    net_config = model.config
    if net_config.num_actions not in (0, puzzle.num_actions):
        # a model of another puzzle with the same states (cube3 -> cube3htm): the trunk and value
        # head carry over; heads over actions are rebuilt for this puzzle's moves
        net_config = replace(net_config, num_actions=puzzle.num_actions)
    if config.num_res_blocks not in (None, net_config.num_res_blocks):
        # a deeper network than the model it starts from: its extra blocks start as identities
        if net_config.arch != "mlp" or config.num_res_blocks < net_config.num_res_blocks:
            raise PuzzleError(
                f"--init-from {source}: it has {net_config.num_res_blocks} residual blocks; "
                f"a fully connected network may grow from it (num_res_blocks >= "
                f"{net_config.num_res_blocks}) but not shrink"
            )
        net_config = replace(net_config, num_res_blocks=config.num_res_blocks)
    return WarmStart(source, model, net_config)


def warm_start(model: CostToGoNet, start: WarmStart, puzzle: Puzzle) -> None:
    """Load into ``model`` (built from :meth:`WarmStart.network`, perhaps with a Q or policy head
    added) the weights of ``start`` that carry over; weights that do not fit raise
    :class:`ModelFileError`. A Q head the model lacked starts from the value head."""
    init = start.model
    goals_changed = start.other_goals(model.config.goals, model.config.head_layers)
    weights = init.state_dict()
    if start.adapted or goals_changed:
        # other moves or other goals: the old action heads do not apply
        weights = {k: v for k, v in weights.items() if not k.startswith(("q.", "policy."))}
    weights = grown_weights(model, weights)
    own = model.state_dict()
    if model.config.multi_head or init.config.multi_head:
        # other value heads (a solved model starting a multi-head one): the trunk carries over,
        # the goal heads start fresh where their shapes differ
        weights = {
            k: v
            for k, v in weights.items()
            if not k.startswith(("value.", "goal_heads.")) or (k in own and own[k].shape == v.shape)
        }
    missing, unexpected = model.load_state_dict(weights, strict=False)
    missing = [k for k in missing if not k.startswith(("value.", "goal_heads."))]
    if model.policy is not None and (start.adapted or goals_changed or not init.config.policy_head):
        missing = [k for k in missing if not k.startswith("policy.")]  # fresh policy head
    if unexpected or any(not k.startswith("q.") for k in missing):
        raise ModelFileError(f"--init-from {start.source}: weights do not fit ({missing + unexpected})")
    if missing:  # a value network gets a Q head: start it from the value head
        model.init_q_from_value(puzzle.action_costs)
