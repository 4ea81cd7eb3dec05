"""Model cards: the ``card.json`` beside a model's weights, in one shape for every model.

The shape is the JSON Schema ``models/card.schema.json`` (shipped with the package): identity
(puzzle, name, date, description, intended use), the network, a summary of the last training run
(the keys the trainer has always written: ``algorithm``, ``samples_seen_total``, ``train_config``,
``policy_only``, ...), every run that made the weights (``runs``), every measurement on a test set
(``evaluations``) and ``notes``. Standard library only; :func:`validate` uses the ``jsonschema``
package where it is installed and checks required keys and top-level types otherwise.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["SCHEMA_VERSION", "network_section", "schema", "validate"]

#: the ``schema_version`` of cards written now
SCHEMA_VERSION = 1

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


@cache
def schema() -> dict[str, Any]:
    """The model-card JSON Schema (``puzzlezero/models/card.schema.json``)."""
    text = resources.files("puzzlezero").joinpath("models", "card.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def network_section(config: dict[str, Any], parameters: int) -> dict[str, Any]:
    """A card's ``network``: the architecture and inputs in words, the parameter count and the
    network configuration ``config`` (``NetConfig.to_dict()``, as in ``config.json``)."""
    arch = config.get("arch", "mlp")
    heads = ["value" if not config.get("goals") else f"value per goal ({', '.join(config['goals'])})"]
    heads += [name for name, key in (("policy", "policy_head"), ("Q", "q_head")) if config.get(key)]
    if arch == "conv":
        body = f"residual convolutional network, {config.get('num_res_blocks')} blocks of {config.get('channels')} channels"
    elif arch == "cubeconv":
        body = f"cube convolutional network over {config.get('history', 1)} states"
    else:
        body = (
            f"fully connected network: {config.get('h1')} and {config.get('h2')} units, "
            f"{config.get('num_res_blocks')} residual blocks"
        )
    shape = config.get("input_shape") or []
    width = "x".join(str(v) for v in shape) if arch == "conv" and shape else str(config.get("input_dim"))
    return {
        "architecture": f"{body}; heads: {', '.join(heads)}",
        "parameters": int(parameters),
        "inputs": f"{config.get('encoding', 'onehot')} encoding of the state, width {width}",
        "config": dict(config),
    }


def validate(card: Any) -> list[str]:
    """What is wrong with ``card`` against the schema, one line each (``[]``: it is valid)."""
    try:
        import jsonschema
    except ImportError:
        return _validate_top_level(card)
    validator = jsonschema.Draft202012Validator(schema())
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(card)'}: {error.message}"
        for error in sorted(validator.iter_errors(card), key=lambda e: list(map(str, e.absolute_path)))
    ]


def _validate_top_level(card: Any) -> list[str]:
    """Without ``jsonschema``: required keys, no unknown keys, and the top-level types."""
    if not isinstance(card, dict):
        return ["(card): is not a JSON object"]
    s = schema()
    errors = [f"(card): {key!r} is a required property" for key in s["required"] if key not in card]
    for key, value in card.items():
        spec = s["properties"].get(key)
        if spec is None:
            errors.append(f"(card): unknown key {key!r}")
            continue
        names = spec.get("type")
        if names is None:
            continue
        allowed = tuple(t for name in ([names] if isinstance(names, str) else names) for t in _TYPES[name])
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            errors.append(f"{key}: {value!r} is not of type {names}")
    return errors
