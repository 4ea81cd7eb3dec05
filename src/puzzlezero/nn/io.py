"""Model folders: ``model.pt`` (a ``state_dict``), ``config.json`` (how to rebuild the net) and
``card.json`` (how it was trained and how well it does: :mod:`puzzlezero.cards`).

Weights are stored in float32, or in float16 (``save_model(..., weights="float16")``, ``puzzlezero
export --half``): half the file, for shipping a larger network under the repository's size limit.
They are always loaded into float32, so a half-precision folder is searched and trained exactly like
any other; ``config.json`` says which (``"weights"``; absent means float32).

A folder is self-describing and safe to load: weights are read with ``torch.load(...,
weights_only=True)``, never as pickled classes. Shipped models live in
``src/puzzlezero/models/<name>/`` and are found by bare name::

    >>> from puzzlezero.nn import load_model          # doctest: +SKIP
    >>> net = load_model("cube3")                      # doctest: +SKIP
    >>> net.puzzle, net.config.h1                      # doctest: +SKIP
    ('cube3', 1000)
"""

from __future__ import annotations

import io
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import torch

from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.model_folders import resolve_model_dir, shipped_models
from puzzlezero.nn.config import NetConfig
from puzzlezero.nn.models import CostToGoNet, build_model
from puzzlezero.storage import atomic_folder, atomic_write_json

__all__ = [
    "MODEL_FORMAT",
    "save_model",
    "load_model",
    "resolve_model_dir",
    "shipped_models",
    "read_card",
    "update_card",
]

MODEL_FORMAT = "puzzlezero-model/1"
WEIGHTS, CONFIG, CARD = "model.pt", "config.json", "card.json"
#: how ``model.pt`` may store floating-point tensors (``config.json``'s ``"weights"``)
WEIGHT_DTYPES = {"float32": torch.float32, "float16": torch.float16}


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ModelFileError(f"{path}: no such file (a model folder needs {WEIGHTS}, {CONFIG}, {CARD})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad UTF-8, JSON or numbers
        raise ModelFileError(f"{path}: unreadable or corrupt JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def save_model(
    folder: str | os.PathLike[str],
    model: CostToGoNet,
    *,
    puzzle: str,
    card: dict[str, Any] | None = None,
    weights: str = "float32",
) -> Path:
    """Write ``model.pt``, ``config.json`` and ``card.json`` as the folder ``folder``, whole: into a
    temporary folder beside it, renamed into place (:func:`puzzlezero.storage.atomic_folder`; other
    files of an existing folder are kept), so a kill leaves the old folder or the new one.

    ``card`` is JSON, written as given (the trainer writes the shape of :mod:`puzzlezero.cards`).
    ``weights="float16"`` stores the floating-point tensors in half precision (integer buffers such
    as batch-norm counters stay as they are); a value beyond float16's range raises
    :class:`ModelFileError` rather than being stored as infinity. Returns the folder.
    """
    if weights not in WEIGHT_DTYPES:
        raise ModelFileError(f"weights={weights!r}: expected one of {', '.join(WEIGHT_DTYPES)}")
    folder = Path(folder)
    state = {k: _stored(k, v.detach().cpu(), WEIGHT_DTYPES[weights]) for k, v in model.state_dict().items()}
    buf = io.BytesIO()
    torch.save(state, buf)
    config = {"format": MODEL_FORMAT, "puzzle": puzzle, "net": model.config.to_dict()}
    if weights != "float32":
        config["weights"] = weights
    return atomic_folder(
        folder, {WEIGHTS: buf.getbuffer(), CONFIG: _json_bytes(config), CARD: _json_bytes(dict(card or {}))}
    )


def _json_bytes(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode("utf-8")


def _stored(name: str, tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``tensor`` as ``model.pt`` keeps it: floating point in ``dtype``, anything else unchanged."""
    if not tensor.is_floating_point() or tensor.dtype == dtype:
        return tensor.contiguous()
    stored = tensor.to(dtype).contiguous()
    if not torch.isfinite(stored).all() and torch.isfinite(tensor).all():
        limit = torch.finfo(dtype).max
        raise ModelFileError(
            f"cannot store {name} in {dtype}: its largest magnitude {tensor.abs().max().item():.4g} "
            f"is beyond {limit:.4g}; keep this model in float32"
        )
    return stored


#: the largest layer width, input size or action count a ``config.json`` may give (more is no
#: network of this project: a file written by something else, or damaged)
MAX_WIDTH = 1 << 24
#: the most residual blocks, goal-specific layers or history states it may give
MAX_DEPTH = 1 << 12
#: bytes a parameter takes while a model is loaded and made ready to search: the network in float32,
#: the weights read from ``model.pt`` and the inference copy (batch norm folded in; int8 layers)
LOAD_BYTES_PER_PARAMETER = 16


def check_network_size(config: NetConfig, path: Path) -> None:
    """Refuse, before anything is allocated, a network ``config`` (read from ``path``) whose sizes
    are not whole numbers in range (:class:`ModelFileError`) or whose parameters would take more
    memory than the budget while it loads (:class:`~puzzlezero.errors.MemoryBudgetError`, from
    :func:`puzzlezero.budget.check`; :data:`LOAD_BYTES_PER_PARAMETER` each). Calibrated with the
    peak RSS of a process that loads an MLP of 33.4M parameters (h1 4000, h2 2000, 3 blocks, a Q
    head), makes its int8 heuristic and evaluates 2,048 cubes: 416 MiB more, 13.0 bytes a
    parameter, where the estimate says 510 MiB."""
    from puzzlezero.budget import check
    from puzzlezero.nn.models import config_parameters

    limits = {name: MAX_WIDTH for name in ("input_dim", "h1", "h2", "channels", "num_actions")}
    limits |= {name: MAX_DEPTH for name in ("num_res_blocks", "head_layers", "history")}
    for name, most in limits.items():
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
            raise ModelFileError(f"{path}: net.{name} is {value!r}, not a whole number from 0 to {most:,}")
    if any(isinstance(v, bool) or not 1 <= v <= MAX_WIDTH for v in config.input_shape):
        raise ModelFileError(
            f"{path}: net.input_shape is {list(config.input_shape)}, not sizes from 1 to {MAX_WIDTH:,}"
        )
    n = config_parameters(config)
    check(
        n * LOAD_BYTES_PER_PARAMETER,
        f"the network of {path} ({n:,} parameters)",
        "its layer sizes (net.h1, net.h2, net.num_res_blocks)",
    )


def load_model(name_or_path: str | os.PathLike[str], device: str | torch.device = "cpu") -> CostToGoNet:
    """Load a model folder (or a shipped model by bare name) in eval mode.

    Returns a :class:`CostToGoNet` with ``.config``, ``.puzzle`` (the puzzle name it was trained
    for) and ``.card``. A missing or corrupt file raises :class:`ModelFileError` naming the file.
    """
    folder = resolve_model_dir(name_or_path)
    cfg = _read_json(folder / CONFIG)
    if cfg.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"{folder / CONFIG}: format is {cfg.get('format')!r}, expected {MODEL_FORMAT!r}")
    if not isinstance(cfg.get("net"), dict) or not isinstance(cfg.get("puzzle"), str):
        raise ModelFileError(f"{folder / CONFIG}: needs a 'puzzle' name and a 'net' object")
    try:
        net_config = NetConfig.from_dict(cfg["net"])
    except ModelFileError as exc:
        raise ModelFileError(f"{folder / CONFIG}: {exc}") from None
    check_network_size(net_config, folder / CONFIG)
    try:
        model = build_model(net_config)
    except PuzzleError as exc:
        raise ModelFileError(f"{folder / CONFIG}: {exc}") from None
    if cfg.get("weights", "float32") not in WEIGHT_DTYPES:
        raise ModelFileError(
            f"{folder / CONFIG}: weights is {cfg['weights']!r}, expected one of {', '.join(WEIGHT_DTYPES)}"
        )
    weights = folder / WEIGHTS
    if not weights.is_file():
        raise ModelFileError(f"{weights}: no such file")
    try:
        state = torch.load(weights, map_location="cpu", weights_only=True)
        model.load_state_dict(state)  # copies into the float32 parameters, whatever they were stored as
    except Exception as exc:  # pickle errors, zip errors, shape mismatches, ...
        raise ModelFileError(
            f"{weights}: unreadable, corrupt or not matching {CONFIG} ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    model.puzzle = cfg["puzzle"]
    model.card = _read_json(folder / CARD) if (folder / CARD).exists() else {}
    return model.to(device).eval()


def read_card(name_or_path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``card.json`` of a model folder."""
    return _read_json(resolve_model_dir(name_or_path) / CARD)


def update_card(folder: str | os.PathLike[str], **fields: Any) -> dict[str, Any]:
    """Merge ``fields`` into a folder's ``card.json`` (e.g. ``evaluations=[...]``); returns the new card."""
    path = Path(folder) / CARD
    card = _read_json(path) if path.exists() else {}
    card.update(fields)
    atomic_write_json(path, card)
    return card
