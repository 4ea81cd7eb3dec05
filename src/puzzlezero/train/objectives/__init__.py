"""Training objectives, registered by name: how a chunk of (state, target cost-to-go) pairs is made.

One module per objective, named after it; each registers its label maker with
:func:`register_objective` (:mod:`.registry`), and importing this package imports them all, so
:func:`get_objective` and :data:`OBJECTIVES` know every name. :mod:`.labels` turns a chunk's
:class:`LabelJob` into labels, in the trainer or in a worker process.

==================  =====================================================================  =================
name                labels                                                                 file
==================  =====================================================================  =================
``davi``            one-step Bellman: ``min_a (cost + J_target(A(s, a)))`` (DeepCubeA)    davi.py
``lhbl``            shortest path through a small search tree, ``J_target`` at its leaves lhbl.py
``random_walk``     the length of a non-backtracking random walk from the goal (CayleyPy)  random_walk.py
``scramble_depth``  the scramble depth ``k`` (the earlier warm start, kept for old runs)   scramble_depth.py
``qlearning``       ``cost + J_target(A(s, a))`` for every action (a Q head, for Q*)      qlearning.py
``adi``             DAVI's target, its argmin for a policy head, weight 1/depth (ADI)      adi.py
``efficientcube``   the move undoing a random walk's last step, a policy (EfficientCube)   efficientcube.py
``multigoal``       one-step Bellman targets of every goal's head (Dong et al.'s networks) multigoal.py
``selfplay``        discounted-MCTS visit counts and ``gamma^distance`` of episodes        selfplay.py
==================  =====================================================================  =================

>>> objective_names()  # doctest: +NORMALIZE_WHITESPACE
['adi', 'davi', 'efficientcube', 'lhbl', 'multigoal', 'qlearning', 'random_walk', 'scramble_depth',
 'selfplay']
"""

from puzzlezero.train.objectives import (  # noqa: F401  (each registers its objective)
    adi,
    davi,
    efficientcube,
    lhbl,
    multigoal,
    qlearning,
    random_walk,
    scramble_depth,
    selfplay,
)
from puzzlezero.train.objectives.labels import (
    LabelJob,
    make_labels,
    target_function,
    target_head,
    target_value_fn,
)
from puzzlezero.train.objectives.registry import (
    HEADS,
    OBJECTIVES,
    MakeLabels,
    Objective,
    ValueFn,
    capping_objectives,
    descent_objectives,
    get_objective,
    objective_names,
    register_objective,
)

__all__ = [
    "HEADS",
    "Objective",
    "OBJECTIVES",
    "register_objective",
    "get_objective",
    "objective_names",
    "descent_objectives",
    "capping_objectives",
    "target_head",
    "target_value_fn",
    "target_function",
    "LabelJob",
    "make_labels",
    "ValueFn",
    "MakeLabels",
]
