"""Running a model folder's network without torch: onnxruntime on the graph built from its weights.

:func:`load_network` reads a model folder (``model.npz``, ``config.json``, ``card.json``;
:func:`puzzlezero.nn.io.read_model`), builds its ONNX graph (:func:`puzzlezero.nn.graph.build_graph`)
and loads it into an onnxruntime session, once per process (cached by folder, precision and
threads). The :class:`Network` it returns evaluates encoded states::

    >>> from puzzlezero.nn.runtime import load_network          # doctest: +SKIP
    >>> net = load_network("cube3")                              # doctest: +SKIP
    >>> net.heads, net.describe()                                # doctest: +SKIP
    (('value', 'q'), 'onnxruntime int8 (CPU with AVX-512 VNNI)')

Precision (``precision``): ``"float32"``; ``"int8"``: the linear layers quantized by onnxruntime's
dynamic quantization (signed int8 weights, one scale per output unit; activations quantized per
batch), which is fast where the CPU multiplies int8 in vector instructions (VNNI: ``avx512_vnni``,
``avx_vnni``; AMX; and AVX2's 8-bit multiply-adds, 1.7 to 2 times float32's states a second on an
AMD EPYC without AVX-512); ``"auto"``: int8 on such a CPU (:func:`cpu_int8_support`), float32
elsewhere (a CPU without AVX2, or one not measured: another architecture, or not Linux). The
output layers stay in float32 in the int8 network (:data:`OUTPUT_LAYERS`); a first layer summed as
rows outside the graph (:attr:`Network.first`) is summed in int16 there
(:meth:`~puzzlezero.nn.onehot_rows.OneHotRows.quantized`).

An architecture the graph builder does not cover (``conv``, ``cubeconv``) runs on torch instead,
the same :class:`Network` with ``backend="torch"``; without torch that raises
:class:`~puzzlezero.errors.MissingExtraError` naming the ``train`` extra.

Threads: a network runs on :func:`default_threads` intra-op threads (set once per process with
:func:`set_default_threads`, as the web workers do; else the CPUs this process may use), or on
``threads`` given to :func:`load_network`. Searches run side by side in Python threads each use
one thread inside :func:`call_threads` (a session per thread count, made on first use).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from puzzlezero.errors import MissingExtraError, ModelFileError, PuzzleError
from puzzlezero.nn.config import NetConfig
from puzzlezero.nn.graph import INPUT, build_graph, covers, folded_layer, network_heads
from puzzlezero.nn.onehot_rows import OneHotRows, sums_rows
from puzzlezero.puzzles import inputs

__all__ = [
    "PRECISIONS",
    "Network",
    "call_threads",
    "check_precision",
    "cpu_int8_support",
    "default_threads",
    "int8_support",
    "load_network",
    "network_from_weights",
    "quantized",
    "resolve_precision",
    "set_default_threads",
]

#: what ``precision`` may be
PRECISIONS = ("auto", "float32", "int8")
#: CPU flags (Linux ``/proc/cpuinfo``) of int8 dot products, under which int8 is the faster, and
#: their names in words
INT8_FLAGS = {"amx_int8": "AMX", "avx512_vnni": "AVX-512 VNNI", "avx_vnni": "AVX-VNNI"}
#: a CPU without them where int8 is still the faster: AVX2's 8-bit multiply-adds (onnxruntime's
#: int8 kernels; cube3's network 42,700 states a second against float32's 23,000, one thread of an
#: AMD EPYC without AVX-512, with the same outputs as on a VNNI CPU: mean |diff| 0.018 moves)
INT8_FALLBACK_FLAGS = {"avx2": "AVX2"}
#: layers of an int8 network kept in float32 (``state_dict`` names, or their last part: ``"out"``
#: is every goal head's output): the outputs, a few thousand weights, whose int8 error no later
#: layer averages out. The first layer is quantized too: kept in float32 it takes a quarter of the
#: int8 error away on cube3 (mean 0.019 -> 0.014 moves on 10,000 scrambles) and puzzle15 (0.031 ->
#: 0.022), and makes the network a quarter to a third slower (one thread, 2-core Xeon with AMX)
OUTPUT_LAYERS = ("value", "policy", "q", "out")
_EXTRA = 'pip install "puzzlezero[train]"'
_default_threads: int | None = None
_local = threading.local()
#: threads inside :func:`call_threads` that changed torch's process-wide thread count, and its count before
_torch_lock = threading.Lock()
_torch_users = 0
_torch_before: int | None = None


def check_precision(precision: str) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else :class:`PuzzleError` naming them."""
    if precision not in PRECISIONS:
        raise PuzzleError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return precision


@lru_cache(maxsize=1)
def cpu_int8_support() -> str | None:
    """The CPU's int8 vector instructions in words (``"AMX, AVX-512 VNNI"``, ``"AVX2"``), from the
    flags of Linux's ``/proc/cpuinfo`` (:func:`int8_support`), else ``None`` (none, or not Linux:
    int8 is then not chosen by ``"auto"``)."""
    try:
        return int8_support(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def int8_support(cpuinfo: str) -> str | None:
    """The int8 dot-product instructions (:data:`INT8_FLAGS`) among the first ``flags`` line of
    ``cpuinfo`` (the text of Linux's ``/proc/cpuinfo``), in words; without any, AVX2
    (:data:`INT8_FALLBACK_FLAGS`) where it is there; else ``None``."""
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
            break
    found = [words for flag, words in INT8_FLAGS.items() if flag in flags] or [
        words for flag, words in INT8_FALLBACK_FLAGS.items() if flag in flags
    ]
    return ", ".join(found) or None


def resolve_precision(precision: str) -> str:
    """``"float32"`` or ``"int8"``: ``precision`` itself, or for ``"auto"`` int8 where the CPU has
    int8 vector instructions (:func:`cpu_int8_support`), else float32."""
    if check_precision(precision) != "auto":
        return precision
    return "int8" if cpu_int8_support() else "float32"


def set_default_threads(threads: int | None) -> None:
    """The intra-op threads of networks loaded from now on in this process without ``threads``
    (``None``: :func:`default_threads`'s own choice)."""
    global _default_threads
    _default_threads = None if threads is None else max(1, int(threads))


def default_threads() -> int:
    """Intra-op threads a network gets by default: :func:`set_default_threads`'s, else the CPUs this
    process may run on."""
    if _default_threads is not None:
        return _default_threads
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def call_threads(n: int) -> Iterator[None]:
    """In the body, networks called from this Python thread run on ``n`` intra-op threads, so that
    searches side by side in threads do not each take every core: each such thread enters it
    itself (the count is the thread's own). A torch network's count is process-wide: it is set by
    the first thread to enter and restored when the last one leaves."""
    global _torch_users, _torch_before
    before = getattr(_local, "threads", None)
    _local.threads = int(n)
    torch = sys.modules.get("torch")
    if torch is not None:
        with _torch_lock:
            if _torch_users == 0:
                _torch_before = torch.get_num_threads()
                torch.set_num_threads(int(n))
            _torch_users += 1
    try:
        yield
    finally:
        _local.threads = before
        if torch is not None:
            with _torch_lock:
                _torch_users -= 1
                if _torch_users == 0 and _torch_before is not None:
                    torch.set_num_threads(_torch_before)


def _session(model: bytes, threads: int, spin: bool = True) -> Any:
    """An onnxruntime session of ``model`` on ``threads`` intra-op threads. ``spin``: its threads
    spin between two runs (onnxruntime's default: the next run starts sooner); without, they sleep
    and leave the cores to the caller's own threads. Measured on a 2-vCPU Xeon: the 48-puzzle's
    network, whose first layer is summed in threads of its own, evaluates 1.34x as many states a
    second sleeping; cube3's and globe_6-4's beams, whose networks are all in the session, are
    1.15-1.2x slower so (:attr:`Network.first` decides)."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise PuzzleError(
            "running a network needs onnxruntime, one of puzzlezero's own dependencies, which is not "
            "installed: pip install onnxruntime"
        ) from None
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def quantized(model: Any, keep: tuple[str, ...] = OUTPUT_LAYERS) -> bytes:
    """The int8 form of a graph built with ``linear="matmul"``: onnxruntime's dynamic quantization
    of its ``MatMul`` layers (signed int8 weights, per output unit), those of the layers ``keep``
    (``state_dict`` names, or their last part: ``"out"`` is every goal head's output) excepted.
    Returns the serialised model."""
    import logging
    import tempfile

    from onnxruntime.quantization import QuantType, quantize_dynamic

    kept = _float_nodes(model, keep)
    with tempfile.TemporaryDirectory(prefix="puzzlezero-int8-") as tmp:
        source, target = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
        source.write_bytes(model.SerializeToString())
        level = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice to pre-process first
        try:
            quantize_dynamic(
                source,
                target,
                per_channel=True,
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["MatMul"],
                nodes_to_exclude=kept,
            )
        finally:
            logging.getLogger().setLevel(level)
        return target.read_bytes()


def _float_nodes(model: Any, keep: tuple[str, ...]) -> list[str]:
    """The ``MatMul`` nodes of the layers ``keep`` (a node's ``doc_string`` names its layer)."""
    return [
        node.name
        for node in model.graph.node
        if node.op_type == "MatMul" and (node.doc_string in keep or node.doc_string.split(".")[-1] in keep)
    ]


@dataclass(eq=False)
class Network:
    """A model's network, ready to evaluate encoded states (:func:`load_network`).

    ``puzzle``: the registry name it was trained for; ``config``: its :class:`NetConfig`; ``card``:
    its model card; ``heads``: its outputs (``"value"`` first, then ``"policy"``, ``"q"``);
    ``backend``: ``"onnxruntime"`` (or ``"torch"``, for an architecture the graph builder does not
    cover); ``precision``: ``"float32"`` or ``"int8"``; ``threads``: its intra-op threads."""

    puzzle: str
    config: NetConfig
    card: dict[str, Any]
    heads: tuple[str, ...]
    backend: str
    precision: str
    threads: int
    #: the serialised ONNX model (onnxruntime), or the torch inference copy
    program: Any = field(repr=False)
    folder: Path | None = None
    #: the first layer, where it is a sum of rows outside the graph (a plain one-hot input of
    #: :data:`~puzzlezero.nn.onehot_rows.MIN_VALUES` values or more): the network then reads
    #: :func:`~puzzlezero.nn.onehot_rows.positions` (or the one-hot itself)
    first: OneHotRows | None = field(default=None, repr=False)
    _sessions: dict[int, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def describe(self) -> str:
        """What runs it, in words: ``"onnxruntime int8 (CPU with AVX-512 VNNI)"``,
        ``"onnxruntime float32"``, ``"torch float32"``."""
        if self.precision == "int8" and self.backend == "onnxruntime":
            support = cpu_int8_support()
            return f"onnxruntime int8 (CPU {'with ' + support if support else 'without AVX2 or VNNI'})"
        return f"{self.backend} {self.precision}"

    def _session_for(self, threads: int) -> Any:
        session = self._sessions.get(threads)
        if session is None:
            with self._lock:
                session = self._sessions.get(threads)
                if session is None:
                    # a first layer summed outside the session runs on threads of its own
                    spin = self.first is None
                    session = self._sessions[threads] = _session(self.program, threads, spin)
        return session

    def run(self, x: np.ndarray, heads: tuple[str, ...] | list[str]) -> list[np.ndarray]:
        """Raw outputs of ``heads`` (no clipping) for encoded states ``x`` (``float32[B,
        input_dim]``, or any shape with ``B`` rows of that many numbers), in one pass; a network
        with a :attr:`first` layer also reads the one-hot's positions (integers ``[B, E]``)."""
        for head in heads:
            if head not in self.heads:
                raise ModelFileError(
                    f"this {self.puzzle} network has no {head} head (heads: {', '.join(self.heads)})"
                )
        threads = getattr(_local, "threads", None) or self.threads
        if self.first is not None:
            x = np.asarray(x)
            x = self.first(x.reshape(x.shape[0], int(np.prod(x.shape[1:]))), threads)
        x = np.ascontiguousarray(x, dtype=np.float32)
        if self.backend == "torch":
            return _torch_run(self.program, x, heads)
        if x.ndim != 2:
            x = x.reshape(x.shape[0], -1)
        if x.shape[0] == 0:
            return [np.zeros((0, *self._width(h)), np.float32) for h in heads]
        return list(self._session_for(threads).run(list(heads), {INPUT: x}))

    def _width(self, head: str) -> tuple[int, ...]:
        if head != "value":
            return (self.config.num_actions,)
        return (len(self.config.goal_names),) if self.config.multi_head else ()

    def predict(self, x: np.ndarray, head: str = "value") -> np.ndarray:
        """Raw outputs of ``head`` for encoded states ``x[B, input_dim]`` (float32): ``float32[B]``
        from the value head (``[B, G]``, one column per goal, from a multi-head network),
        ``float32[B, A]`` from the policy head's logits or the Q head."""
        return self.run(x, (head,))[0]


def _torch_run(model: Any, x: np.ndarray, heads: tuple[str, ...] | list[str]) -> list[np.ndarray]:
    import torch

    from puzzlezero.nn.models import CPU_CHUNK

    chunk = CPU_CHUNK if model.config.arch == "conv" else max(1, x.shape[0])
    outs: list[list[np.ndarray]] = [[] for _ in heads]
    with torch.inference_mode():
        for lo in range(0, x.shape[0], chunk):
            y = model(torch.from_numpy(x[lo : lo + chunk]), all_heads=True)
            for i, head in enumerate(heads):
                outs[i].append(y[head].float().numpy())
    if not x.shape[0]:
        return [np.zeros((0,), np.float32) for _ in heads]
    return [np.concatenate(o) for o in outs]


def network_from_weights(
    config: NetConfig,
    weights: dict[str, np.ndarray],
    *,
    puzzle: str,
    num_actions: int,
    card: dict[str, Any] | None = None,
    precision: str = "auto",
    threads: int | None = None,
    folder: Path | None = None,
    onehot_values: int | None = None,
) -> Network:
    """A :class:`Network` of ``config`` with ``weights`` (``state_dict`` arrays by key) on
    onnxruntime, in ``precision`` (:func:`resolve_precision`) on ``threads`` intra-op threads
    (``None``: :func:`default_threads`). ``onehot_values``: the puzzle's ``onehot_values``; from
    :data:`~puzzlezero.nn.onehot_rows.MIN_VALUES` up, a network reading that plain one-hot
    computes its first layer as a sum of rows (:attr:`Network.first`;
    :func:`~puzzlezero.nn.onehot_rows.sums_rows`), of float32 rows, or of int16 rows in an int8
    network (:meth:`~puzzlezero.nn.onehot_rows.OneHotRows.quantized`). Weights that
    do not fit ``config`` raise :class:`ModelFileError`."""
    chosen = resolve_precision(precision)
    where = f"{folder}: " if folder is not None else ""
    try:
        first = None
        if onehot_values is not None and sums_rows(config, onehot_values):
            w, b = folded_layer(weights, "trunk.0", "trunk.1")
            first = OneHotRows(np.ascontiguousarray(w.T, np.float32), b.astype(np.float32), onehot_values)
            if chosen == "int8":
                first = first.quantized()
        graph = build_graph(
            config,
            weights,
            puzzle=puzzle,
            num_actions=num_actions,
            linear="matmul" if chosen == "int8" else "gemm",
            first_layer=first is None,
        )
        program = quantized(graph) if chosen == "int8" else graph.SerializeToString()
    except ModelFileError as exc:
        raise ModelFileError(f"{where}the weights do not match the network of config.json ({exc})") from None
    except ImportError as exc:
        raise PuzzleError(
            f"running a network needs onnx and onnxruntime, puzzlezero's own dependencies ({exc}): "
            "pip install onnx onnxruntime"
        ) from None
    except Exception as exc:  # onnx's checker: a shape that does not fit
        raise ModelFileError(
            f"{where}the weights do not match the network of config.json ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    n = default_threads() if threads is None else max(1, int(threads))
    net = Network(
        puzzle,
        config,
        dict(card or {}),
        network_heads(config),
        "onnxruntime",
        chosen,
        n,
        program,
        folder,
        first,
    )
    try:
        net._session_for(n)  # made now: a graph onnxruntime refuses is found at load time
    except MissingExtraError:
        raise
    except Exception as exc:  # onnxruntime's Fail, InvalidGraph, ...
        raise ModelFileError(
            f"{where}onnxruntime cannot run this network ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    return net


def _torch_network(files: Any, precision: str, threads: int | None) -> Network:
    """A :class:`Network` on torch for an architecture :func:`build_graph` does not cover."""
    try:
        import torch
    except ImportError:
        raise MissingExtraError(
            f"{files.folder}: this {files.config.arch!r} network runs on torch, which is not installed: {_EXTRA}",
            "train",
        ) from None
    from puzzlezero.nn.fast import inference_copy
    from puzzlezero.nn.io import load_model

    model = load_model(files.folder)
    chosen = resolve_precision(precision)
    copy = inference_copy(model, int8=chosen == "int8")
    copy.config, copy.puzzle, copy.card = model.config, model.puzzle, model.card
    if threads is None and _default_threads is not None:
        torch.set_num_threads(_default_threads)  # a web worker's share of the cores
    n = torch.get_num_threads() if threads is None else int(threads)
    heads = network_heads(files.config)
    return Network(files.puzzle, files.config, files.card, heads, "torch", chosen, n, copy, files.folder)


def load_network(
    name_or_path: str | os.PathLike[str], *, precision: str = "auto", threads: int | None = None
) -> Network:
    """The network of a model folder (or a shipped model by bare name), ready to run, made once
    per process for each ``(folder, precision, threads)``: on onnxruntime (see the module
    docstring; an architecture it does not cover, on torch). A missing or corrupt file raises
    :class:`ModelFileError` naming it; a bad ``precision`` :class:`PuzzleError`."""
    from puzzlezero.model_folders import resolve_model_dir

    check_precision(precision)
    folder = resolve_model_dir(name_or_path).resolve()
    return _load(folder, precision, threads, _stamp(folder))


def _stamp(folder: Path) -> tuple[float, ...]:
    """The modification times of a folder's files: a folder written again is loaded again."""
    return tuple(
        (folder / name).stat().st_mtime if (folder / name).exists() else 0.0
        for name in ("config.json", "model.npz", "model.pt")
    )


@lru_cache(maxsize=16)
def _load(folder: Path, precision: str, threads: int | None, stamp: tuple[float, ...]) -> Network:
    from puzzlezero.nn.io import read_model
    from puzzlezero.registry import make

    files = read_model(folder)
    if not covers(files.config):
        return _torch_network(files, precision, threads)
    p = make(files.puzzle)
    return network_from_weights(
        files.config,
        files.weights,
        puzzle=files.puzzle,
        num_actions=files.config.num_actions or p.num_actions,
        card=files.card,
        precision=precision,
        threads=threads,
        folder=folder,
        onehot_values=inputs.onehot_values(p),
    )
