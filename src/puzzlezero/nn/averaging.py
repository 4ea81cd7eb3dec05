"""Checkpoint averaging (Polyak averaging; Izmailov et al., "Averaging weights leads to wider optima
and better generalization", 2018): the mean of the weights of several models of one network, taken
along the noisy end of a training run.

Stochastic gradient steps leave the weights wandering around a minimum; their mean lies nearer its
centre than any one of them. The runs of this project export a model now and then while they train
(``puzzlezero export RUN DIR`` is safe while a run goes on), and ``puzzlezero average OUT DIR DIR ...``
writes the mean of those folders as one model folder.

Every floating-point tensor of the ``state_dict`` is averaged, batch-norm running statistics
included (they track the same layers' inputs); integer buffers (batch-norm's step counters) are
taken from the last model. The card is the last model's, with ``weights`` saying what was averaged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from puzzlezero.errors import MissingExtraError, PuzzleError

try:
    import torch
except ImportError:  # the core install: averaging rebuilds the networks, which needs torch
    raise MissingExtraError(
        'averaging models needs the train extra (torch is not installed): pip install "puzzlezero[train]"',
        "train",
    ) from None

from puzzlezero.nn.io import load_model, resolve_model_dir
from puzzlezero.nn.models import CostToGoNet

__all__ = ["average_models"]


def average_models(sources: Sequence[str | os.PathLike[str]]) -> CostToGoNet:
    """The mean of the weights of ``sources`` (model folders or shipped names, at least two, of one
    puzzle and one network configuration), as a network in eval mode whose ``card`` is the last
    source's with ``weights`` and ``averaged_from`` added."""
    if len(sources) < 2:
        raise PuzzleError(f"averaging needs at least two models, got {len(sources)}")
    nets = [load_model(s) for s in sources]
    first = nets[0]
    for source, net in zip(sources[1:], nets[1:], strict=True):
        if net.puzzle != first.puzzle:
            raise PuzzleError(
                f"{source} is a {net.puzzle} model and {sources[0]} a {first.puzzle} one: "
                "only models of one puzzle can be averaged"
            )
        if net.config != first.config:
            raise PuzzleError(
                f"{source} and {sources[0]} are different networks ({_difference(net, first)}): "
                "only models of one network configuration can be averaged"
            )
    last = nets[-1]
    states = [net.state_dict() for net in nets]
    mean: dict[str, torch.Tensor] = {}
    for name, tensor in states[-1].items():
        if tensor.is_floating_point():
            mean[name] = torch.stack([s[name] for s in states]).mean(dim=0)
        else:
            mean[name] = tensor.clone()
    last.load_state_dict(mean)
    folders = [resolve_model_dir(s) for s in sources]
    last.card = dict(last.card)
    last.card["averaged_from"] = [_provenance(folder, net) for folder, net in zip(folders, nets, strict=True)]
    last.card["weights"] = (
        f"the mean of the weights of {len(nets)} models (batch-norm statistics too): "
        + ", ".join(_describe(entry) for entry in last.card["averaged_from"])
    )
    return last.eval()


def _difference(a: CostToGoNet, b: CostToGoNet) -> str:
    da, db = a.config.to_dict(), b.config.to_dict()
    keys = [k for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)]
    return "; ".join(f"{k} {da.get(k)!r} against {db.get(k)!r}" for k in keys[:3])


def _provenance(folder: Path, net: CostToGoNet) -> dict[str, Any]:
    card = net.card or {}
    return {
        "model": str(folder),
        "samples_seen_total": card.get("samples_seen_total", card.get("samples_seen")),
        "wall_seconds": card.get("wall_seconds"),
    }


def _describe(entry: dict[str, Any]) -> str:
    samples = entry.get("samples_seen_total")
    return entry["model"] + (f" ({samples / 1e6:.2f}M samples)" if isinstance(samples, int | float) else "")
