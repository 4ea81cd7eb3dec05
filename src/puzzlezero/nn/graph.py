"""The ONNX graph of a fully connected cost-to-go network, built from its weights without torch.

:func:`build_graph` turns a model folder's ``config.json`` network (:class:`NetConfig`,
``arch="mlp"``: the DeepCubeA network of :mod:`puzzlezero.nn.models`) and its ``state_dict``
arrays (``model.npz``, :func:`puzzlezero.nn.io.read_model`) into an ONNX model that onnxruntime
runs (:mod:`puzzlezero.nn.runtime`). Every batch norm is folded into the linear layer before it, in
NumPy (``W' = W s``, ``b' = (b - mean) s + beta`` with ``s = gamma / sqrt(var + eps)``), so the
graph is linear layers, ReLUs and the residual additions::

    x[batch, input_dim] -> Gemm -> Relu -> Gemm -> Relu -> R x (Gemm -> Relu -> Gemm, + skip, Relu)
        -> "value" float32[batch]  (or float32[batch, G], one column per goal of a multi-head net)
           "policy", "q"           float32[batch, A]  (where the network has those heads)

A multi-head network's goal heads (``goals``, with ``head_layers`` layers of their own) are each
their own layers on the shared trunk's output, concatenated into the value's columns. The input,
outputs and metadata are those of :func:`puzzlezero.onnx.export_onnx`'s files (opset 18), so
:func:`puzzlezero.onnx.load_onnx` reads a built graph as it reads an export.

``linear="matmul"`` writes each linear layer as ``MatMul`` then ``Add`` instead of ``Gemm`` (the
same numbers; onnxruntime fuses them back): the form onnxruntime's dynamic int8 quantization
rewrites (:func:`puzzlezero.nn.runtime.quantized`). Needs only NumPy and onnx.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from puzzlezero.errors import ModelFileError
from puzzlezero.nn.config import NetConfig

__all__ = ["BN_EPS", "GRAPH_ARCHS", "INPUT", "ONNX_FORMAT", "OPSET", "build_graph", "covers", "network_heads"]

#: the architectures :func:`build_graph` covers (``conv`` and ``cubeconv`` run on torch)
GRAPH_ARCHS = ("mlp",)
#: ONNX operator set of the graphs, as :mod:`puzzlezero.onnx`'s exports
OPSET = 18
ONNX_FORMAT = "puzzlezero-onnx/1"
INPUT = "x"
#: the batch norms' epsilon (``torch.nn.BatchNorm1d``'s default, which the networks use)
BN_EPS = 1e-5
_HEADS = ("value", "policy", "q")


def covers(config: NetConfig) -> bool:
    """Whether :func:`build_graph` builds ``config``'s network (its architecture is in :data:`GRAPH_ARCHS`)."""
    return config.arch in GRAPH_ARCHS


def network_heads(config: NetConfig) -> tuple[str, ...]:
    """The outputs of ``config``'s network, in order: ``"value"``, then ``"policy"`` and ``"q"``
    where it has them."""
    return ("value",) + tuple(h for h, on in (("policy", config.policy_head), ("q", config.q_head)) if on)


def folded_layer(
    weights: Mapping[str, np.ndarray], fc: str, bn: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The weight ``float64[out, in]`` and bias ``float64[out]`` of the ``state_dict`` linear layer
    ``fc`` with the batch norm ``bn`` after it folded in. A missing array or shapes that are not one
    layer's raise :class:`ModelFileError`."""

    def array(key: str) -> np.ndarray:
        if key not in weights:
            raise ModelFileError(f"the weights have no {key!r}")
        return np.asarray(weights[key], dtype=np.float64)

    w, b = array(f"{fc}.weight"), array(f"{fc}.bias")
    if bn is not None:
        scale = array(f"{bn}.weight") / np.sqrt(array(f"{bn}.running_var") + BN_EPS)
        w = w * scale[:, None]
        b = (b - array(f"{bn}.running_mean")) * scale + array(f"{bn}.bias")
    if w.ndim != 2 or b.shape != (w.shape[0],):
        raise ModelFileError(f"{fc}: weight {w.shape} and bias {b.shape} are not one linear layer's")
    return w, b


class _Builder:
    """Nodes and initializers of one graph, named in order (``fc0``, ``fc1``, ...)."""

    def __init__(self, weights: Mapping[str, np.ndarray], linear: str) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.weights, self.linear = weights, linear
        self.nodes: list = []
        self.initializers: list = []
        self.count = 0

    def _name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, stem: str, value: np.ndarray) -> str:
        name = self._name(stem)
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], layer: str = "", **attrs: Any) -> str:
        """Add a node; ``layer``: the ``state_dict`` layer it computes, kept as its ``doc_string``."""
        out = self._name(op.lower())
        self.nodes.append(self.helper.make_node(op, inputs, [out], name=out, doc_string=layer, **attrs))
        return out

    def linear_layer(self, x: str, fc: str, bn: str | None = None) -> str:
        """``x @ W.T + b`` of the ``state_dict`` layer ``fc``, the batch norm ``bn`` folded in."""
        w, b = folded_layer(self.weights, fc, bn)
        if self.linear == "gemm":
            weight, bias = self.const("w", w.astype(np.float32)), self.const("b", b.astype(np.float32))
            return self.node("Gemm", [x, weight, bias], layer=fc, transB=1)
        y = self.node("MatMul", [x, self.const("w", w.T.astype(np.float32))], layer=fc)
        return self.node("Add", [y, self.const("b", b.astype(np.float32))], layer=fc)

    def relu(self, x: str) -> str:
        return self.node("Relu", [x])

    def residual(self, x: str, block: str) -> str:
        y = self.relu(self.linear_layer(x, f"{block}.fc1", f"{block}.bn1"))
        y = self.linear_layer(y, f"{block}.fc2", f"{block}.bn2")
        return self.relu(self.node("Add", [x, y]))


def build_graph(
    config: NetConfig,
    weights: Mapping[str, np.ndarray],
    *,
    puzzle: str,
    num_actions: int,
    weights_sha256: str = "",
    linear: str = "gemm",
    first_layer: bool = True,
):  # -> onnx.ModelProto (onnx is imported here only)
    """The ONNX model of the ``arch="mlp"`` network ``config`` with ``weights`` (``state_dict``
    arrays by key, any float dtype): input ``"x"`` ``float32[batch, input_dim]``, the outputs of
    :func:`network_heads` (see the module docstring), and the metadata of
    :func:`puzzlezero.onnx.export_onnx` (``puzzle``, ``num_actions``: the puzzle's action count
    where the network has no action heads). ``linear``: ``"gemm"`` or ``"matmul"``.
    ``first_layer=False``: the graph starts after the first linear layer (and its batch norm),
    whose output ``float32[batch, h1]`` is its input ``"x"``, computed outside it
    (:mod:`puzzlezero.nn.onehot_rows`). Weights that do not fit ``config`` raise
    :class:`ModelFileError` naming the layer."""
    import onnx
    from onnx import TensorProto, helper

    if not covers(config):
        raise ModelFileError(
            f"the ONNX graph builder covers the {', '.join(GRAPH_ARCHS)} architecture, not {config.arch!r}"
        )
    if linear not in ("gemm", "matmul"):
        raise ValueError(f"linear={linear!r}: expected gemm or matmul")
    g = _Builder(weights, linear)
    h = g.relu(g.linear_layer(INPUT, "trunk.0", "trunk.1") if first_layer else INPUT)
    h = g.relu(g.linear_layer(h, "trunk.3", "trunk.4"))
    for i in range(config.num_res_blocks):
        h = g.residual(h, f"trunk.{6 + i}")
    heads = network_heads(config)
    outputs: dict[str, str] = {}
    goals = len(config.goal_names)
    if config.head_layers == 0:
        value = g.linear_layer(h, "value")
    else:
        columns = []
        for i in range(goals):
            y = h
            for j in range(config.head_layers // 2):
                y = g.residual(y, f"goal_heads.{i}.hidden.{j}")
            if config.head_layers % 2:
                k = config.head_layers // 2
                y = g.relu(g.linear_layer(y, f"goal_heads.{i}.hidden.{k}", f"goal_heads.{i}.hidden.{k + 1}"))
            columns.append(g.linear_layer(y, f"goal_heads.{i}.out"))
        value = columns[0] if len(columns) == 1 else g.node("Concat", columns, axis=1)
    if not config.multi_head:
        value = g.node("Squeeze", [value, g.const("axes", np.array([1], np.int64))])
    outputs["value"] = value
    for head in heads[1:]:
        outputs[head] = g.linear_layer(h, head)
    renamed = [helper.make_node("Identity", [outputs[name]], [name], name=f"out_{name}") for name in heads]
    batch = "batch"
    width = config.input_dim if first_layer else config.h1
    value_shape: list[str | int | None] = [batch, goals] if config.multi_head else [batch]
    shapes: dict[str, list[str | int | None]] = {
        "value": value_shape,
        "policy": [batch, num_actions],
        "q": [batch, num_actions],
    }
    graph = helper.make_graph(
        g.nodes + renamed,
        "puzzlezero",
        [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, [batch, width])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shapes[name]) for name in heads],
        g.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="puzzlezero"
    )
    model.ir_version = min(model.ir_version, 10)  # what onnxruntime 1.17 and later read
    meta = {
        "puzzlezero_format": ONNX_FORMAT,
        "puzzle": puzzle,
        "encoding": config.encoding,
        "heads": ",".join(heads),
        "input_dim": str(width),
        "num_actions": str(config.num_actions or num_actions),
        "net": json.dumps(config.to_dict(), sort_keys=True),
        "weights_sha256": weights_sha256,
    }
    helper.set_model_props(model, meta)
    onnx.checker.check_model(model)
    return model
