"""PyTorch cost-to-go networks (DeepCubeA), model folders and the heuristic wrapper.

>>> from puzzlezero.nn import NetConfig, CostToGoNet, count_parameters
>>> count_parameters(CostToGoNet(NetConfig.from_preset("paper", input_dim=324)))
14663001
"""

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
from puzzlezero.nn.io import load_model, read_card, resolve_model_dir, save_model, shipped_models, update_card
from puzzlezero.nn.models import CostToGoNet, build_model, count_parameters

__all__ = [
    "CONV_PRESETS",
    "PRESETS",
    "CostToGoNet",
    "NetConfig",
    "build_model",
    "count_parameters",
    "fuse_batch_norms",
    "inference_copy",
    "intra_op_threads",
    "load_model",
    "make_heuristic",
    "make_policy",
    "make_policy_value",
    "make_policy_value_function",
    "make_q_function",
    "predict",
    "read_card",
    "resolve_model_dir",
    "save_model",
    "shipped_models",
    "torch_threads",
    "update_card",
]
