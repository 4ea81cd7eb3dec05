"""Options of searches and heuristics by name (``solve(..., options={name: value})``, on the
command line ``--name-with-dashes``): their defaults, kinds and ranges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzlezero.errors import PuzzleError


@dataclass(frozen=True)
class OptionSpec:
    """An option of some searches or heuristics: ``solve(..., options={name: value})``, on the
    command line ``--name-with-dashes``. ``kind`` is ``float``, ``int``, ``bool`` or ``str``; numbers
    must lie in ``[low, high]`` (``low`` excluded where ``above_low``), a ``str`` must be one of
    ``choices``."""

    default: Any
    kind: type
    help: str
    low: float | None = None
    high: float | None = None
    above_low: bool = False
    choices: tuple[str, ...] = ()
    #: a bool knob's "off" flag on the command line (default ``--no-NAME``)
    off_flag: str | None = None

    def check(self, name: str, value: Any) -> Any:
        """``value`` as this option's kind; :class:`PuzzleError` names the option and the range."""
        flag = "--" + name.replace("_", "-")
        if self.kind is str:
            if not isinstance(value, str) or value not in self.choices:
                raise PuzzleError(f"{flag} must be one of {', '.join(self.choices)}, got {value!r}")
            return value
        if self.kind is bool:
            if not isinstance(value, bool | np.bool_):
                raise PuzzleError(f"{flag} must be true or false, got {value!r}")
            return bool(value)
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise PuzzleError(f"{flag} must be a number, got {value!r}")
        if self.kind is int and int(value) != value:
            raise PuzzleError(f"{flag} must be an integer, got {value!r}")
        value = self.kind(value)
        low_bad = self.low is not None and (value < self.low or (self.above_low and value == self.low))
        if not np.isfinite(value) or low_bad or (self.high is not None and value > self.high):
            lo = "" if self.low is None else f"{'>' if self.above_low else '>='} {self.low:g}"
            hi = "" if self.high is None else f"<= {self.high:g}"
            raise PuzzleError(f"{flag} must be {' and '.join(x for x in (lo, hi) if x)}, got {value!r}")
        return value


def _option_table() -> dict[str, OptionSpec]:
    # NumPy only (the network runtime's names without onnxruntime): the defaults live with the algorithms
    from puzzlezero.nn.runtime import PRECISIONS
    from puzzlezero.search.goal_ball import MAX_STATES
    from puzzlezero.search.mcts import LEAVES, MAX_VALUE, VIRTUAL_LOSS, C
    from puzzlezero.search.wcd import DEPTH, MAX_DEPTH, MU

    return {
        "mcts_c": OptionSpec(C, float, "MCTS: PUCT exploration constant c, in moves", low=0.0),
        "mcts_leaves": OptionSpec(
            LEAVES, int, "MCTS: paths selected (leaves evaluated together) per iteration", low=1
        ),
        "mcts_virtual_loss": OptionSpec(
            VIRTUAL_LOSS, float, "MCTS: moves added to an edge per path in flight through it", low=0.0
        ),
        "mcts_max_value": OptionSpec(
            MAX_VALUE,
            bool,
            "MCTS: back up the least cost seen through an edge (max action value), not the mean",
            off_flag="--mcts-mean-value",
        ),
        "policy_temperature": OptionSpec(
            1.0,
            float,
            "temperature T of the policy (MCTS prior, WCD weights): softmax(logits / T), "
            "softmax(-Q / T) or softmax(-(cost + h(child)) / T), in moves",
            low=0.0,
            above_low=True,
        ),
        "images": OptionSpec(
            0,
            int,
            "search the state's first N images too, the same problem in other guises (cube3: "
            "inverse, mirror, inverse-mirror; the competition's cubes: mirror, turned; globes: "
            "upside down, turned, mirrored; sliding puzzles: transpose), and keep the shortest "
            "solution: in an anytime schedule's stages after the first (BWAS, Q*), or as more "
            "instances of one search (beam search, one BWAS or Q* setting; images made from the "
            "state alone); 0: the state alone",
            low=0,
        ),
        "goal_ball": OptionSpec(
            0,
            int,
            "beam searches: the states within as many moves of the goal as this many states hold, "
            "found breadth first once (kept for the next solve of the puzzle); a beam that generates "
            "one of them ends there, down the ball's shortest way (puzzles whose moves all have an "
            "inverse and cost the same); 0: no ball",
            low=0,
            high=MAX_STATES,
        ),
        "precision": OptionSpec(
            "auto",
            str,
            "learned heuristics: the network's arithmetic, auto (int8 on a CPU with VNNI or AMX, "
            "float32 elsewhere), float32 or int8",
            choices=PRECISIONS,
        ),
        "rollout_patience": OptionSpec(
            30, int, "rollout: steps in a row without a shorter answer before a rollout stops", low=1
        ),
        "wcd_depth": OptionSpec(DEPTH, int, "WCD: convolution levels K", low=0, high=MAX_DEPTH),
        "wcd_mu": OptionSpec(MU, float, "WCD: weight mu of a state's own value", low=0.0, high=1.0),
    }


#: options of searches and heuristics by name (see :class:`OptionSpec`); each search or heuristic
#: lists the ones it reads (``SearchSpec.options``, ``HeuristicSpec.options``); the CLI makes each
#: a flag of ``solve`` and ``bench``
OPTIONS: dict[str, OptionSpec] = _option_table()


def register_option(name: str, spec: OptionSpec, *, replace: bool = False) -> OptionSpec:
    """Declare the knob ``name`` (a plugin's search or heuristic reads it by naming it in its
    spec's ``options``); a name already registered is an error unless ``replace``."""
    if not name.isidentifier() or name != name.lower():
        raise PuzzleError(f"an option's name is a lower-case identifier (flag --a-b for a_b), got {name!r}")
    if name in OPTIONS and not replace:
        raise PuzzleError(f"an option named {name!r} is already registered (replace=True to take its place)")
    if spec.kind not in (float, int, bool, str):
        raise PuzzleError(f"an option's kind is float, int, bool or str, got {spec.kind!r}")
    if spec.kind is str and spec.default not in spec.choices:
        raise PuzzleError(f"option {name!r}: its default {spec.default!r} is not one of its choices")
    OPTIONS[name] = spec
    return spec
