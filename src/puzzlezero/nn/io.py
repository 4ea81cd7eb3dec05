"""Model folders: ``model.npz`` (the weights), ``config.json`` (how to rebuild the net) and
``card.json`` (how it was trained and how well it does: :mod:`puzzlezero.cards`).

``model.npz`` is a NumPy archive (``np.savez``) of the network's ``state_dict``: one array per
key, named by it (``trunk.0.weight``, ``value.bias``, ...). It is read as plain arrays (never
pickled objects) and without torch, so that :mod:`puzzlezero.nn.runtime` can run a model on
onnxruntime where torch is not installed.

Nothing is read before it is bounded: ``config.json`` and ``card.json`` by their length
(:data:`MAX_JSON_BYTES`); ``model.npz`` by the uncompressed sizes its zip members declare, each and
together, against what the network of ``config.json`` takes (:func:`weight_bound`; without a
config, :data:`MAX_WEIGHT_BYTES`), and each array by its ``.npy`` header (a number type
``config.json`` allows, a shape no larger than the network, a header that agrees with the member's
size) before its data. A file that fails raises :class:`ModelFileError` naming the member and the
sizes, so a small file that would inflate to gigabytes is refused unread.

Weights are stored in float32 (the default for a newly trained network), or in float16
(``save_model(..., weights="float16")``, ``puzzlezero export --half``; every shipped model): half
the file. They are always computed with in float32, so a half-precision folder is searched and
trained exactly like any other; ``config.json`` says which (``"weights"``; absent means float32).
A folder written before ``model.npz`` holds ``model.pt`` (a torch ``state_dict``), which is still
read, with ``torch.load(..., weights_only=True)``, where torch is installed.

Shipped models live in ``src/puzzlezero/models/<name>/`` (and in the research models' companion
distribution) and are found by bare name::

    >>> from puzzlezero.nn import load_model          # doctest: +SKIP
    >>> net = load_model("cube3")                      # doctest: +SKIP
    >>> net.puzzle, net.config.h1                      # doctest: +SKIP
    ('cube3', 1000)
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from puzzlezero.errors import MissingExtraError, ModelFileError, PuzzleError
from puzzlezero.model_folders import ENSEMBLE_FILE, resolve_model_dir, shipped_models
from puzzlezero.nn.config import NetConfig, config_parameters
from puzzlezero.storage import atomic_folder, atomic_write_json

if TYPE_CHECKING:
    import torch

    from puzzlezero.nn.models import CostToGoNet

__all__ = [
    "MODEL_FORMAT",
    "ModelFiles",
    "save_model",
    "load_model",
    "read_model",
    "resolve_model_dir",
    "shipped_models",
    "read_card",
    "update_card",
]

MODEL_FORMAT = "puzzlezero-model/1"
WEIGHTS, CONFIG, CARD = "model.npz", "config.json", "card.json"
#: the weights file of folders written before ``model.npz``: a torch ``state_dict``
LEGACY_WEIGHTS = "model.pt"
#: how ``model.npz`` may store floating-point arrays (``config.json``'s ``"weights"``)
WEIGHT_DTYPES: dict[str, type[np.floating[Any]]] = {"float32": np.float32, "float16": np.float16}
#: the command that installs torch, for what needs it
TRAIN_EXTRA = 'pip install "puzzlezero[train]"'


#: the most bytes ``config.json`` or ``card.json`` may hold (a longer file is refused unread)
MAX_JSON_BYTES = 8 << 20
#: the most bytes the arrays of ``model.npz`` may take uncompressed where no ``config.json`` bounds them
MAX_WEIGHT_BYTES = 2 << 30


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        if (path.parent / ENSEMBLE_FILE).is_file():
            raise ModelFileError(
                f"{path.parent} is an ensemble of models ({ENSEMBLE_FILE}), which only solve and bench "
                "search with (--models); give one of its members here"
            )
        raise ModelFileError(f"{path}: no such file (a model folder needs {WEIGHTS}, {CONFIG}, {CARD})")
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_JSON_BYTES + 1)
        if len(raw) > MAX_JSON_BYTES:
            raise ModelFileError(
                f"{path}: more than {MAX_JSON_BYTES:,} bytes, which no model's {path.name} is; not read"
            )
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad UTF-8, JSON or numbers
        if isinstance(exc, ModelFileError):
            raise
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
    """Write ``model.npz``, ``config.json`` and ``card.json`` as the folder ``folder``, whole: into a
    temporary folder beside it, renamed into place (:func:`puzzlezero.storage.atomic_folder`; other
    files of an existing folder are kept, except a legacy ``model.pt``, which the new weights
    replace), so a kill leaves the old folder or the new one.

    ``card`` is JSON, written as given (the trainer writes the shape of :mod:`puzzlezero.cards`).
    ``weights="float16"`` stores the floating-point arrays in half precision (integer buffers such
    as batch-norm counters stay as they are); a value beyond float16's range raises
    :class:`ModelFileError` rather than being stored as infinity. Returns the folder.
    """
    if weights not in WEIGHT_DTYPES:
        raise ModelFileError(f"weights={weights!r}: expected one of {', '.join(WEIGHT_DTYPES)}")
    folder = Path(folder)
    state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    config = {"format": MODEL_FORMAT, "puzzle": puzzle, "net": model.config.to_dict()}
    if weights != "float32":
        config["weights"] = weights
    files: dict[str, bytes | memoryview] = {
        WEIGHTS: weights_bytes(state, weights),
        CONFIG: _json_bytes(config),
        CARD: _json_bytes(dict(card or {})),
    }
    written = atomic_folder(folder, files)
    (written / LEGACY_WEIGHTS).unlink(missing_ok=True)  # the weights it held are replaced
    return written


def weights_bytes(state: dict[str, np.ndarray], weights: str = "float32") -> bytes:
    """``model.npz``'s bytes for the arrays ``state`` (a ``state_dict`` as NumPy arrays), floating
    point in ``weights`` (:data:`WEIGHT_DTYPES`), anything else unchanged."""
    dtype = WEIGHT_DTYPES[weights]
    buf = io.BytesIO()
    arrays: dict[str, Any] = {k: _stored(k, np.asarray(v), dtype) for k, v in state.items()}
    np.savez(buf, **arrays)
    return buf.getvalue()


def _json_bytes(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode("utf-8")


def _stored(name: str, array: np.ndarray, dtype: type[np.floating[Any]]) -> np.ndarray:
    """``array`` as ``model.npz`` keeps it: floating point in ``dtype``, anything else unchanged."""
    if not np.issubdtype(array.dtype, np.floating) or array.dtype == dtype:
        return np.ascontiguousarray(array)
    with np.errstate(over="ignore"):
        stored = np.ascontiguousarray(array.astype(dtype))
    if not np.isfinite(stored).all() and np.isfinite(array).all():
        limit = float(np.finfo(dtype).max)
        raise ModelFileError(
            f"cannot store {name} in {np.dtype(dtype).name}: its largest magnitude "
            f"{float(np.abs(array).max()):.4g} is beyond {limit:.4g}; keep this model in float32"
        )
    return stored


#: the largest layer width, input size or action count a ``config.json`` may give (more is no
#: network of this project: a file written by something else, or damaged)
MAX_WIDTH = 1 << 24
#: the most residual blocks, goal-specific layers or history states it may give
MAX_DEPTH = 1 << 12
#: bytes a parameter takes while a model is loaded and made ready to search: the network in float32,
#: the weights read from ``model.npz`` and the inference copy (batch norm folded in; int8 layers)
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


@dataclass(frozen=True)
class ModelFiles:
    """A model folder read without torch (:func:`read_model`): its ``folder``, ``puzzle`` name,
    network ``config``, ``card`` (``{}`` where it has none) and ``weights``, the ``state_dict`` as
    float32 NumPy arrays by key (integer buffers as stored)."""

    folder: Path
    puzzle: str
    config: NetConfig
    card: dict[str, Any]
    weights: dict[str, np.ndarray]


def read_config(folder: Path) -> tuple[dict[str, Any], NetConfig]:
    """A model folder's ``config.json``, checked: the whole object and its network's
    :class:`NetConfig` (sizes in range and within the memory budget, :func:`check_network_size`).
    Anything wrong raises :class:`ModelFileError` naming the file."""
    cfg = _read_json(folder / CONFIG)
    if cfg.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"{folder / CONFIG}: format is {cfg.get('format')!r}, expected {MODEL_FORMAT!r}")
    if not isinstance(cfg.get("net"), dict) or not isinstance(cfg.get("puzzle"), str):
        raise ModelFileError(f"{folder / CONFIG}: needs a 'puzzle' name and a 'net' object")
    try:
        net_config = NetConfig.from_dict(cfg["net"])
    except PuzzleError as exc:
        raise ModelFileError(f"{folder / CONFIG}: {exc}") from None
    check_network_size(net_config, folder / CONFIG)
    if cfg.get("weights", "float32") not in WEIGHT_DTYPES:
        raise ModelFileError(
            f"{folder / CONFIG}: weights is {cfg['weights']!r}, expected one of {', '.join(WEIGHT_DTYPES)}"
        )
    return cfg, net_config


def weight_bound(config: NetConfig | None, weights: str = "float32") -> int:
    """The most bytes the arrays of a ``model.npz`` may take uncompressed: for the network
    ``config`` stored in ``weights``, its numbers (:func:`config_parameters`) at that size with a
    quarter more and a MiB (the ``.npy`` headers, the int64 batch counters); without a config,
    :data:`MAX_WEIGHT_BYTES`."""
    if config is None:
        return MAX_WEIGHT_BYTES
    itemsize = np.dtype(WEIGHT_DTYPES[weights]).itemsize
    return config_parameters(config) * itemsize * 5 // 4 + (1 << 20)


def read_weights(
    folder: Path, config: NetConfig | None = None, weights: str | None = None
) -> dict[str, np.ndarray]:
    """The weights of a model folder as NumPy arrays by ``state_dict`` key, floating point in
    float32: ``model.npz`` (no torch needed), else a legacy ``model.pt`` (needs torch:
    :class:`~puzzlezero.errors.MissingExtraError` without it). ``config`` (the network of
    ``config.json``) and ``weights`` (its ``"weights"``, the stored floating-point type) bound what
    is read (:func:`read_npz`). A missing, corrupt or oversized file raises
    :class:`ModelFileError` naming it."""
    path = folder / WEIGHTS
    if not path.is_file() and (folder / LEGACY_WEIGHTS).is_file():
        _check_legacy_size(folder / LEGACY_WEIGHTS, weight_bound(config, "float32"))
        return _read_legacy(folder / LEGACY_WEIGHTS)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such file")
    return read_npz(path, config, weights)


def read_npz(
    path: Path, config: NetConfig | None = None, weights: str | None = None
) -> dict[str, np.ndarray]:
    """The arrays of ``model.npz`` at ``path`` by key, floating point as float32, each checked
    before its data is read: every member's declared uncompressed size and their sum at most
    :func:`weight_bound`; each ``.npy`` header plain numbers (floating point in ``weights``, where
    given; integers of at most 8 bytes), its data exactly the rest of the member; and with
    ``config``, no array of more numbers than its network has. Anything else raises
    :class:`ModelFileError` naming the member and the sizes (arrays that do not fit the network
    otherwise are found by whoever builds it from them)."""
    expected = WEIGHT_DTYPES.get(weights) if weights is not None else None
    bound = weight_bound(config, weights or "float32")
    most = config_parameters(config) if config is not None else None
    whose = f"the network of {CONFIG}" if config is not None else "a model's weights"

    def corrupt(why: str) -> ModelFileError:
        return ModelFileError(f"{path}: unreadable or corrupt ({why})")

    arrays: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            total = 0
            for info in members:
                total += info.file_size
                if info.file_size > bound:
                    raise ModelFileError(
                        f"{path}: {info.filename} would take {info.file_size:,} bytes uncompressed, "
                        f"more than the {bound:,} {whose} can take; not read"
                    )
            if total > bound:
                raise ModelFileError(
                    f"{path}: its {len(members):,} arrays would take {total:,} bytes uncompressed, more "
                    f"than the {bound:,} {whose} can take; not read"
                )
            for info in members:
                name = info.filename
                if not name.endswith(".npy"):
                    raise corrupt(f"{name}: not an array (.npy)")
                key = name[: -len(".npy")]
                if key in arrays:
                    raise corrupt(f"{name}: named twice")
                with zf.open(info) as f:
                    shape, fortran, dtype = _npy_header(f, name)
                    problem = _dtype_problem(dtype, expected)
                    if problem is not None:
                        text, broken = problem
                        raise (
                            corrupt(f"{name}: {text}") if broken else ModelFileError(f"{path}: {name} {text}")
                        )
                    count = math.prod(shape)
                    if most is not None and count > most:
                        raise ModelFileError(
                            f"{path}: {name}: its header declares {count:,} numbers {tuple(shape)}, more "
                            f"than the network of {CONFIG} has ({most:,}); not read"
                        )
                    size = count * dtype.itemsize
                    held = info.file_size - f.tell()
                    if size != held:
                        raise corrupt(
                            f"{name}: its header declares {size:,} bytes of data, the member holds {held:,}"
                        )
                    data = f.read(size)
                if len(data) != size:
                    raise corrupt(f"{name}: {len(data):,} bytes of data, expected {size:,}")
                flat = np.frombuffer(data, dtype=dtype)
                array = flat.astype(np.float32) if dtype.kind == "f" else flat.copy()
                arrays[key] = array.reshape(shape, order="F" if fortran else "C")
    except ModelFileError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError, NotImplementedError) as exc:
        raise corrupt(f"{type(exc).__name__}: {str(exc)[:200]}") from None
    return arrays


def _npy_header(f: Any, name: str) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    """``(shape, fortran_order, dtype)`` of the ``.npy`` stream ``f``, which is left at its data."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f"{name}: .npy format {version[0]}.{version[1]}, expected 1.0 or 2.0")
    return tuple(int(n) for n in shape), bool(fortran), dtype


def _dtype_problem(dtype: np.dtype[Any], expected: Any) -> tuple[str, bool] | None:
    """What is wrong with an array of ``dtype`` in ``model.npz`` (and whether that makes the file
    corrupt rather than of another type), else ``None``: only plain numbers are read, floating
    point of ``expected`` (float16 or float32 where ``None``), integers or booleans of at most 8
    bytes."""
    if dtype.hasobject:
        return "an array of Python objects (pickled), not numbers", True
    if dtype.fields is not None or dtype.subdtype is not None:
        return f"an array of records ({dtype}), not plain numbers", True
    if dtype.kind == "f":
        allowed = (
            [np.dtype(expected)] if expected is not None else [np.dtype(t) for t in WEIGHT_DTYPES.values()]
        )
        if any(dtype.itemsize == a.itemsize for a in allowed):
            return None
        wanted = " or ".join(a.name for a in allowed)
        return f"holds {dtype.name}, expected {wanted}" + (
            f" ({CONFIG})" if expected is not None else ""
        ), False
    if dtype.kind not in "iub" or dtype.itemsize > 8:
        return f"an array of {dtype}, not plain numbers", True
    return None


def _check_legacy_size(path: Path, bound: int) -> None:
    """Refuse a legacy ``model.pt`` whose contents (its zip members, as declared) take more than
    ``bound`` bytes, before torch reads it."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                size = sum(info.file_size for info in zf.infolist())
        else:
            size = path.stat().st_size
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelFileError(
            f"{path}: unreadable or corrupt ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    if size > bound:
        raise ModelFileError(
            f"{path}: would take {size:,} bytes, more than the {bound:,} a model's weights can take; not read"
        )


def _read_legacy(path: Path) -> dict[str, np.ndarray]:
    try:
        import torch
    except ImportError:
        raise MissingExtraError(
            f"{path}: this model folder stores its weights as model.pt, which only torch reads: "
            f"{TRAIN_EXTRA} (or convert it once where torch is installed: puzzlezero export {path.parent} "
            f"{path.parent})",
            "train",
        ) from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        return {k: (v.float() if v.is_floating_point() else v).numpy() for k, v in state.items()}
    except Exception as exc:  # pickle errors, zip errors, not a state_dict, ...
        raise ModelFileError(
            f"{path}: unreadable or corrupt ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None


def read_model(name_or_path: str | os.PathLike[str]) -> ModelFiles:
    """A model folder (or a shipped model by bare name) read without torch: :class:`ModelFiles`.
    A missing or corrupt file raises :class:`ModelFileError` naming the file; weights that do not
    match ``config.json`` are found by whoever builds the network from them."""
    folder = resolve_model_dir(name_or_path)
    cfg, net_config = read_config(folder)
    weights = read_weights(folder, net_config, cfg.get("weights", "float32"))
    card = _read_json(folder / CARD) if (folder / CARD).exists() else {}
    return ModelFiles(folder, cfg["puzzle"], net_config, card, weights)


def load_model(name_or_path: str | os.PathLike[str], device: str | torch.device = "cpu") -> CostToGoNet:
    """Load a model folder (or a shipped model by bare name) in eval mode, as a torch network
    (needs torch: :class:`~puzzlezero.errors.MissingExtraError` names the extra without it; the
    solver runs models without torch, :mod:`puzzlezero.nn.runtime`).

    Returns a :class:`CostToGoNet` with ``.config``, ``.puzzle`` (the puzzle name it was trained
    for) and ``.card``. A missing or corrupt file raises :class:`ModelFileError` naming the file.
    """
    try:
        import torch
    except ImportError:
        raise MissingExtraError(
            f"a torch network of {name_or_path} needs torch, which is not installed: {TRAIN_EXTRA}", "train"
        ) from None
    from puzzlezero.nn.models import build_model

    files = read_model(name_or_path)
    try:
        model = build_model(files.config)
    except PuzzleError as exc:
        raise ModelFileError(f"{files.folder / CONFIG}: {exc}") from None
    try:  # copies into the float32 parameters
        model.load_state_dict({k: torch.from_numpy(v) for k, v in files.weights.items()})
    except Exception as exc:  # missing or unexpected keys, shape mismatches, ...
        raise ModelFileError(
            f"{weights_path(files.folder)}: not matching {CONFIG} ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    model.puzzle = files.puzzle
    model.card = files.card
    return model.to(device).eval()


def weights_path(folder: Path) -> Path:
    """The weights file of a model folder: ``model.npz``, or a legacy ``model.pt`` where only that is there."""
    if not (folder / WEIGHTS).is_file() and (folder / LEGACY_WEIGHTS).is_file():
        return folder / LEGACY_WEIGHTS
    return folder / WEIGHTS


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
