"""Cost-to-go networks (DeepCubeA): model folders, the torch-free runtime that solves with them
(:func:`load_network`: onnxruntime on the graph built from a folder's weights), the PyTorch
networks that training uses, and the heuristic wrappers.

Names are imported on first use, so that ``puzzlezero.nn.runtime`` and everything the solver needs
load without torch; the torch networks (:class:`CostToGoNet`, :func:`load_model`, ...) import it
when asked for.

>>> from puzzlezero.nn import NetConfig, CostToGoNet, count_parameters
>>> count_parameters(CostToGoNet(NetConfig.from_preset("paper", input_dim=324)))
14663001
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from puzzlezero.nn.config import CONV_PRESETS, PRESETS, NetConfig
    from puzzlezero.nn.fast import fuse_batch_norms, inference_copy, intra_op_threads, torch_threads
    from puzzlezero.nn.heuristic import (
        make_heuristic,
        make_policy,
        make_policy_value,
        make_policy_value_function,
        make_q_function,
        predict,
    )
    from puzzlezero.nn.io import (
        load_model,
        read_card,
        read_model,
        resolve_model_dir,
        save_model,
        shipped_models,
        update_card,
    )
    from puzzlezero.nn.models import CostToGoNet, build_model, count_parameters
    from puzzlezero.nn.runtime import Network, load_network

#: each public name and the module it lives in
_WHERE = {
    "CONV_PRESETS": "config",
    "PRESETS": "config",
    "NetConfig": "config",
    "fuse_batch_norms": "fast",
    "inference_copy": "fast",
    "intra_op_threads": "fast",
    "torch_threads": "fast",
    "make_heuristic": "heuristic",
    "make_policy": "heuristic",
    "make_policy_value": "heuristic",
    "make_policy_value_function": "heuristic",
    "make_q_function": "heuristic",
    "predict": "heuristic",
    "load_model": "io",
    "read_card": "io",
    "read_model": "io",
    "resolve_model_dir": "io",
    "save_model": "io",
    "shipped_models": "io",
    "update_card": "io",
    "CostToGoNet": "models",
    "build_model": "models",
    "count_parameters": "models",
    "Network": "runtime",
    "load_network": "runtime",
}

__all__ = [
    "CONV_PRESETS",
    "CostToGoNet",
    "NetConfig",
    "Network",
    "PRESETS",
    "build_model",
    "count_parameters",
    "fuse_batch_norms",
    "inference_copy",
    "intra_op_threads",
    "load_model",
    "load_network",
    "make_heuristic",
    "make_policy",
    "make_policy_value",
    "make_policy_value_function",
    "make_q_function",
    "predict",
    "read_card",
    "read_model",
    "resolve_model_dir",
    "save_model",
    "shipped_models",
    "torch_threads",
    "update_card",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'puzzlezero.nn' has no attribute {name!r}")
    value = getattr(import_module(f"puzzlezero.nn.{module}"), name)
    globals()[name] = value
    return value
