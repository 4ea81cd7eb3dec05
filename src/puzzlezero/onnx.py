"""ONNX export of cost-to-go networks, and heuristics that run them on onnxruntime.

:func:`export_onnx` writes a network (a shipped model's name, a model folder, a training run
folder, or a :class:`~puzzlezero.nn.CostToGoNet`) as one ONNX file: batch norms folded, input
``"x"`` ``float32[batch, input_dim]`` (the puzzle's encoding), one output per head the network has,
``"value"`` ``float32[batch]`` and, where present, ``"policy"`` and ``"q"`` ``float32[batch, A]``,
the batch axis dynamic. The file's metadata (``puzzlezero_format``, ``puzzle``, ``encoding``,
``heads``, ``input_dim``, ``num_actions``, ``net``, ``weights_sha256``) lets a loader check that it
belongs to the puzzle it is asked to solve. The export goes through ``torch.onnx.export(...,
dynamo=True)`` (the legacy TorchScript exporter is deprecated since torch 2.9) and is checked against
PyTorch on scrambled states before the file is written, atomically.

:func:`onnx_heuristic` and :func:`onnx_q_function` are the solver's ``"learned-onnx"`` and
``"learned-onnx-q"``: the same contracts as :func:`puzzlezero.nn.make_heuristic` (float32, clipped
at 0, exactly 0 at goals) and :func:`puzzlezero.nn.make_q_function` (clipped at each action's cost), but
evaluated by onnxruntime, without importing torch (a one-shot solve starts seconds sooner). What
they run (:func:`find_onnx`): ``model`` naming a file (a path, or a name ending in ``.onnx``) runs
that file; a model folder (or a shipped model name, never a file or folder of the working directory
of that name; or none: the puzzle's shipped model) runs its ``model.onnx`` when it has one, else the
graph of its network built from its weights (:mod:`puzzlezero.nn.graph`, float32; nothing is
exported or written). onnxruntime gets as many intra-op threads as torch is set to use
(``torch.set_num_threads``, as training does) when torch is loaded, else the network runtime's
default (:func:`puzzlezero.nn.runtime.default_threads`). The solver's ``learned`` heuristics run
the same graphs through :mod:`puzzlezero.nn.runtime`, int8 where the CPU suits it.

Running needs only onnx and onnxruntime, which every install has. The export needs torch >= 2.5
and onnxscript, the ``onnx`` extra (``pip install "puzzlezero[onnx]"``).

Example:
    >>> from puzzlezero.onnx import export_onnx, load_onnx               # doctest: +SKIP
    >>> export_onnx("cube3", "cube3.onnx")                              # doctest: +SKIP
    >>> net = load_onnx("cube3.onnx")                                   # doctest: +SKIP
    >>> net.puzzle, net.heads                                           # doctest: +SKIP
    ('cube3', ('value', 'q'))
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import logging
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.storage import atomic_write

__all__ = [
    "ONNX_FORMAT",
    "ONNX_FILE",
    "OnnxModel",
    "export_onnx",
    "find_onnx",
    "load_onnx",
    "onnx_heuristic",
    "onnx_q_function",
]

ONNX_FORMAT = "puzzlezero-onnx/1"
#: the file name of an export kept in a model folder, beside ``model.npz``
ONNX_FILE = "model.onnx"
INPUT = "x"
#: ONNX operator set of the exports (Gemm, Relu, Add, Squeeze; onnxruntime >= 1.14 runs it)
OPSET = 18
#: largest difference from PyTorch an export may show on its check (outputs are moves, ~0-30)
CHECK_TOLERANCE = 1e-3
_HEADS = ("value", "policy", "q")
_EXTRA = 'the onnx extra: pip install "puzzlezero[onnx]"'
_WEIGHTS, _LEGACY_WEIGHTS, _CHECKPOINT = "model.npz", "model.pt", "checkpoint.pt"


def _need(module: str, purpose: str) -> Any:
    """Import an optional dependency, or explain which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise PuzzleError(f"{purpose} needs {module}, which is not installed; install {_EXTRA}") from None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- export ------------------------------------------------------------------------------------
def _network(source: Any) -> tuple[Any, str, str]:
    """``(network, puzzle name, sha256 of model.npz or "")`` of a network, a training run folder
    (its last checkpoint), a model folder or a shipped model name."""
    from puzzlezero.nn import CostToGoNet, load_model, resolve_model_dir

    if isinstance(source, CostToGoNet):
        if not source.puzzle:
            raise PuzzleError("the network has no puzzle name (set net.puzzle, or load it with load_model)")
        return source, source.puzzle, ""
    path = Path(source)
    if (path / _CHECKPOINT).is_file():
        from puzzlezero.train import Trainer

        trainer = Trainer.from_run(path)
        trainer.model.puzzle = trainer.config.puzzle
        return trainer.model, trainer.config.puzzle, ""
    from puzzlezero.nn.io import weights_path

    folder = resolve_model_dir(source)
    net = load_model(folder)
    return net, net.puzzle, _sha256(weights_path(folder))


def export_onnx(source: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``source`` (a shipped model name, a model folder, a training run folder or a
    :class:`~puzzlezero.nn.CostToGoNet` with ``.puzzle`` set) as an ONNX file at ``path`` (an
    existing folder gets ``model.onnx`` inside) and return the file's path.

    Every head is exported (``value``; ``policy`` and ``q`` where the network has them) with a
    dynamic batch axis, and the puzzle, encoding and heads are written into the file's metadata.
    Before the atomic write, onnxruntime's outputs are compared with PyTorch's on 64 scrambled
    states; a difference above :data:`CHECK_TOLERANCE` raises :class:`PuzzleError`.
    """
    for module in ("onnx", "onnxscript", "onnxruntime"):
        _need(module, "ONNX export")
    import onnx
    import torch

    from puzzlezero.nn import fuse_batch_norms
    from puzzlezero.registry import make

    if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
        raise PuzzleError(
            f"ONNX export needs torch >= 2.5 (its dynamo exporter); this is torch {torch.__version__}"
        )
    net, puzzle_name, sha = _network(source)
    puzzle = make(puzzle_name)
    cfg = net.config
    if cfg.goals:
        raise PuzzleError(
            f"ONNX export covers networks of the puzzle's own goal; this one estimates the cost to "
            f"{', '.join(cfg.goals)} (solve with it through PyTorch: --heuristic learned)"
        )
    heads = tuple(h for h in _HEADS if getattr(net, h, None) is not None)
    fused = fuse_batch_norms(net).to("cpu")

    class Heads(torch.nn.Module):
        """The network with its heads as a tuple of outputs (ONNX outputs are positional)."""

        def __init__(self) -> None:
            super().__init__()
            self.net = fused

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            out = self.net(x, all_heads=True)
            return tuple(out[h] for h in heads)

    # a batch of 2: a batch of 1 would be specialised; a conv net reads the grid [B, C, H, W]
    example = torch.zeros(2, *(cfg.input_shape if cfg.arch == "conv" else (cfg.input_dim,)))
    registration = logging.getLogger("torch.onnx._internal.exporter._registration")
    level = registration.level
    registration.setLevel(logging.ERROR)  # "torchvision is not installed. Skipping torchvision::nms"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch's own pytree deprecations
            warnings.simplefilter("ignore", DeprecationWarning)
            program = torch.onnx.export(
                Heads().eval(),
                (example,),
                dynamo=True,
                verbose=False,
                input_names=[INPUT],
                output_names=list(heads),
                dynamic_shapes={"x": {0: torch.export.Dim("batch")}},
                opset_version=OPSET,
                external_data=False,
                optimize=True,
            )
    finally:
        registration.setLevel(level)
    assert program is not None  # dynamo=True without a file: export returns the ONNXProgram
    proto = program.model_proto
    meta = {
        "puzzlezero_format": ONNX_FORMAT,
        "puzzle": puzzle_name,
        "encoding": cfg.encoding,
        "heads": ",".join(heads),
        "input_dim": str(cfg.input_dim),
        "num_actions": str(cfg.num_actions or puzzle.num_actions),
        "net": json.dumps(cfg.to_dict(), sort_keys=True),
        "weights_sha256": sha,
    }
    onnx.helper.set_model_props(proto, meta)  # replaces the metadata the exporter wrote
    data = proto.SerializeToString()
    _check_export(data, net, puzzle, heads)
    target = Path(path)
    if target.is_dir():
        target = target / ONNX_FILE
    return atomic_write(target, lambda f: f.write(data))


def _check_export(data: bytes, net: Any, puzzle: Puzzle, heads: tuple[str, ...]) -> None:
    """Raise :class:`PuzzleError` unless onnxruntime on ``data`` gives PyTorch's outputs."""
    import torch

    states = puzzle.scramble(np.random.default_rng(0), 64, (0, puzzle.default_scramble_depth))
    x = puzzle.encode(states, net.config.encoding)
    session = _session(data, threads=None)
    got = session.run(list(heads), {INPUT: x})
    training = net.training
    try:
        with torch.inference_mode():
            device = next(net.parameters()).device
            out = net.eval()(torch.from_numpy(x).to(device), all_heads=True)
    finally:
        net.train(training)
    for head, y in zip(heads, got, strict=True):
        diff = float(np.max(np.abs(y - out[head].float().cpu().numpy())))
        if not diff <= CHECK_TOLERANCE:
            raise PuzzleError(
                f"ONNX export check failed: the {head} head differs from PyTorch by {diff:.3g} "
                f"(tolerance {CHECK_TOLERANCE}); the file was not written"
            )


# ---- loading -----------------------------------------------------------------------------------
def _threads(threads: int | None) -> int:
    """onnxruntime intra-op threads: ``threads``, else torch's setting when torch is loaded
    (training sets it), else the network runtime's default (the web workers set it)."""
    from puzzlezero.nn.runtime import default_threads

    if threads is not None:
        return int(threads)
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else default_threads()


def _session(model: str | bytes, threads: int | None) -> Any:
    ort = _need("onnxruntime", "the ONNX heuristic (learned-onnx)")
    options = ort.SessionOptions()
    options.intra_op_num_threads = _threads(threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


@dataclass(frozen=True)
class OnnxModel:
    """An exported network loaded into onnxruntime (:func:`load_onnx`)."""

    path: Path
    puzzle: str  #: the registry name of the puzzle it was trained for
    encoding: str  #: ``puzzle.encode(states, encoding)`` makes its input
    heads: tuple[str, ...]  #: its outputs, ``"value"`` first
    input_dim: int
    num_actions: int
    session: Any  #: the ``onnxruntime.InferenceSession``

    def check(self, puzzle: Puzzle) -> None:
        """Raise :class:`ModelFileError` unless this export belongs to ``puzzle``."""
        if puzzle.name and self.puzzle != puzzle.name:
            raise ModelFileError(f"{self.path}: exported for {self.puzzle!r}, not {puzzle.name!r}")
        want = inputs.dim(puzzle, self.encoding)
        if self.input_dim != want:
            raise ModelFileError(
                f"{self.path}: expects {self.input_dim} inputs but {puzzle.name} with encoding "
                f"{self.encoding!r} gives {want}"
            )

    def predict(
        self, puzzle: Puzzle, states: np.ndarray, head: str = "value", batch_size: int = 2048
    ) -> np.ndarray:
        """Raw outputs of ``head`` for ``states[B, *state_shape]`` (no clipping, no goal test), in
        chunks of ``batch_size``: ``float32[B]`` (value) or ``float32[B, A]`` (policy, q)."""
        if head not in self.heads:
            raise ModelFileError(f"{self.path}: has no {head} head (heads: {', '.join(self.heads)})")
        n = states.shape[0]
        out = np.empty((n, self.num_actions) if head != "value" else n, dtype=np.float32)
        for lo in range(0, n, batch_size):
            x = puzzle.encode(states[lo : lo + batch_size], self.encoding)
            out[lo : lo + batch_size] = self.session.run([head], {INPUT: x})[0]
        return out


def load_onnx(path: str | os.PathLike[str], *, threads: int | None = None) -> OnnxModel:
    """Load an ONNX file written by :func:`export_onnx`, or the graph of a model folder's network
    built from its weights (:func:`puzzlezero.nn.graph.build_graph`, float32, without torch), into
    an onnxruntime session with ``threads`` intra-op threads (``None``: torch's setting when torch
    is loaded, else the network runtime's default). A missing, unreadable or foreign file raises
    :class:`ModelFileError` naming it; a missing onnxruntime raises :class:`PuzzleError` naming the
    ``onnx`` extra."""
    path = Path(path)
    if not path.is_file() and not path.is_dir():
        raise ModelFileError(f"{path}: no such ONNX file")
    _need("onnxruntime", "the ONNX heuristic (learned-onnx)")
    model: str | bytes = str(path) if path.is_file() else _folder_graph(path)
    try:
        session = _session(model, threads)
    except Exception as exc:  # onnxruntime's InvalidProtobuf, Fail, ...
        raise ModelFileError(
            f"{path}: not a readable ONNX model ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    meta = session.get_modelmeta().custom_metadata_map
    if meta.get("puzzlezero_format") != ONNX_FORMAT:
        found = meta.get("puzzlezero_format")
        raise ModelFileError(
            f"{path}: not a puzzlezero ONNX export (format {found!r}, expected {ONNX_FORMAT!r}); "
            f"write one with `puzzlezero export MODEL --onnx FILE`"
        )
    heads = tuple(h for h in meta.get("heads", "").split(",") if h)
    input_names = [i.name for i in session.get_inputs()]
    outputs = tuple(o.name for o in session.get_outputs())
    if input_names != [INPUT] or outputs != heads or "value" not in heads:
        raise ModelFileError(
            f"{path}: inputs {input_names} and outputs {list(outputs)} do not match its metadata "
            f"(input {INPUT!r}, heads {list(heads)}, value among them)"
        )
    try:
        input_dim, num_actions = int(meta["input_dim"]), int(meta["num_actions"])
        puzzle, encoding = meta["puzzle"], meta["encoding"]
    except (KeyError, ValueError) as exc:
        raise ModelFileError(f"{path}: incomplete puzzlezero metadata ({exc})") from None
    weights = path.parent / _WEIGHTS
    if (
        path.is_file()
        and path.name == ONNX_FILE
        and weights.is_file()
        and meta.get("weights_sha256", "") not in ("", _sha256(weights))
    ):
        raise ModelFileError(
            f"{path} was exported from other weights than {weights} beside it; export it again: "
            f"puzzlezero export {path.parent} --onnx {path}"
        )
    return OnnxModel(path, puzzle, encoding, heads, input_dim, num_actions, session)


def _folder_graph(folder: Path) -> bytes:
    """The float32 ONNX graph of a model folder's network, built from its weights without torch."""
    from puzzlezero.nn.graph import build_graph, covers
    from puzzlezero.nn.io import read_model
    from puzzlezero.registry import make

    files = read_model(folder)
    if not covers(files.config):
        raise PuzzleError(
            f"{folder}: an ONNX graph is built from the weights of a fully connected network only; "
            f"export this {files.config.arch!r} one with `puzzlezero export {folder} --onnx FILE`"
        )
    if files.config.goals:
        raise PuzzleError(
            f"the ONNX heuristic covers networks of the puzzle's own goal; this one estimates the cost "
            f"to {', '.join(files.config.goals)} (solve with it through --heuristic learned)"
        )
    num_actions = files.config.num_actions or make(files.puzzle).num_actions
    sha = _sha256(folder / _WEIGHTS) if (folder / _WEIGHTS).is_file() else ""  # a legacy folder: none
    graph = build_graph(
        files.config, files.weights, puzzle=files.puzzle, num_actions=num_actions, weights_sha256=sha
    )
    return bytes(graph.SerializeToString())


# ---- which file --------------------------------------------------------------------------------
def _model_folder(name_or_path: str | os.PathLike[str]) -> Path:
    """A model folder (:func:`puzzlezero.model_folders.resolve_model_dir`), without importing torch."""
    from puzzlezero.model_folders import is_bare_name, resolve_model_dir

    bare = isinstance(name_or_path, str) and is_bare_name(name_or_path)
    if not bare and not Path(name_or_path).is_dir():
        raise ModelFileError(f"{os.fspath(name_or_path)}: no such ONNX file or model folder")
    return resolve_model_dir(name_or_path)


def find_onnx(puzzle: Puzzle, model: str | os.PathLike[str] | None = None) -> Path:
    """What ``learned-onnx`` runs for ``model`` (see the module docstring): ``model`` itself when
    it is a file written as a path or ending in ``.onnx``; else the model folder (``model``, a shipped name, or ``None``: the puzzle's
    shipped model): its ``model.onnx`` when it has one, else the folder itself, whose graph
    :func:`load_onnx` builds from its weights (no torch, nothing written)."""
    from puzzlezero.model_folders import is_bare_name

    given = puzzle.name if model is None else model
    text = os.fspath(given)
    # a bare name is an installed model, never a file of the working directory; *.onnx is a file
    as_path = not isinstance(given, str) or not is_bare_name(text) or text.endswith(".onnx")
    if as_path and Path(text).is_file():
        return Path(text)
    folder = _model_folder(given)
    beside = folder / ONNX_FILE
    if beside.is_file():
        return beside  # load_onnx checks it against the weights beside it
    if not (folder / _WEIGHTS).is_file() and not (folder / _LEGACY_WEIGHTS).is_file():
        raise ModelFileError(f"{folder}: no {ONNX_FILE} and no {_WEIGHTS} to build one from")
    return folder


# ---- heuristics --------------------------------------------------------------------------------
def onnx_heuristic(
    puzzle: Puzzle, model: str | None = None, *, threads: int | None = None, batch_size: int = 2048
) -> Callable[[np.ndarray], np.ndarray]:
    """The ``learned-onnx`` heuristic ``states[B, *state_shape] -> float32[B]``: the value head on
    onnxruntime, clipped at ``>= 0`` and exactly 0 at goals (:func:`puzzlezero.nn.make_heuristic`'s
    contract, float32). ``model``: an ONNX file, a model folder or a shipped name (:func:`find_onnx`)."""
    net = load_onnx(find_onnx(puzzle, model), threads=threads)
    net.check(puzzle)

    def heuristic(states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        if states.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        values = net.predict(puzzle, states, "value", batch_size)
        np.maximum(values, 0.0, out=values)
        values[puzzle.is_goal(states)] = 0.0
        return values

    return heuristic


def onnx_q_function(
    puzzle: Puzzle, model: str | None = None, *, threads: int | None = None, batch_size: int = 2048
) -> Callable[[np.ndarray], np.ndarray]:
    """The ``learned-onnx-q`` Q function ``states[B, *state_shape] -> float32[B, A]`` for Q*: the Q
    head on onnxruntime, clipped at ``>=`` each action's cost (``puzzle.action_costs``;
    :func:`puzzlezero.nn.make_q_function`'s contract). An export without a Q head raises :class:`ModelFileError`."""
    net = load_onnx(find_onnx(puzzle, model), threads=threads)
    net.check(puzzle)
    if "q" not in net.heads:
        raise ModelFileError(
            f"{net.path}: this {puzzle.name} network has no Q head; Q* search needs one (train with "
            f"--set objective=qlearning), or use --search bwas"
        )
    cost = puzzle.action_costs.astype(np.float32)[None, :]

    def q_function(states: np.ndarray) -> np.ndarray:
        q = net.predict(puzzle, np.asarray(states), "q", batch_size)
        np.maximum(q, cost, out=q)
        return q

    return q_function
