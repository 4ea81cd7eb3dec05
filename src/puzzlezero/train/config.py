"""The typed training configuration, saved as ``config.json`` beside every checkpoint.

Names follow Algorithm 1 of DeepCubeA: ``B`` = :attr:`TrainConfig.batch_size`, ``K`` =
:attr:`TrainConfig.max_scramble`, ``C`` = :attr:`TrainConfig.check_every`, ``epsilon`` =
:attr:`TrainConfig.epsilon`, ``M`` = :attr:`TrainConfig.max_iterations`.

>>> cfg = TrainConfig(puzzle="cube3").with_overrides(["batch_size=500", "lr=3e-4"])
>>> cfg.batch_size, cfg.lr
(500, 0.0003)
"""

from __future__ import annotations

import json
import os
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Protocol

from puzzlezero.errors import ModelFileError, PuzzleError

__all__ = ["TrainConfig", "RESUMABLE_FIELDS"]

#: fields that may change when a run is resumed (limits and bookkeeping; ``threads``,
#: ``int8_targets``, ``amp`` and ``label_workers`` change floating-point rounding or the label lag from then
#: on, so later iterations differ from an uninterrupted run)
RESUMABLE_FIELDS = frozenset(
    {
        "max_iterations",
        "max_samples",
        "checkpoint_every",
        "checkpoint_seconds",
        "log_every",
        "eval_every",
        "progress",
        "int8_targets",
        "threads",
        "label_workers",
        "amp",
    }
)

TARGET_UPDATES = ("loss", "period")

#: what a config file written before these fields existed meant (so old runs resume unchanged)
LEGACY_DEFAULTS = {"objective": "davi", "target_update": "loss", "warmup_objective": "scramble_depth"}
#: fields added later, with what a config file written before each meant
LATER_FIELDS = {"efficientcube_target": "last"}
CURRICULA = ("off", "double", "plus1")
AMP_MODES = ("off", "bf16")
BATCH_NORMS = ("batch", "frozen")


class ObjectiveFacts(Protocol):
    """What the checks of a :class:`TrainConfig` read of a training objective (a registered
    :class:`~puzzlezero.train.objectives.registry.Objective`)."""

    @property
    def head(self) -> str: ...

    @property
    def goal_aware(self) -> bool: ...


#: the training objectives' registry as the checks of :class:`TrainConfig` read it: its
#: ``get_objective`` (an unknown name raises, listing the known ones), ``descent_objectives`` and
#: ``capping_objectives``.
#: :mod:`puzzlezero.train.objectives.registry` sets it when it is imported, and importing
#: :mod:`puzzlezero.train` imports every objective; the registry sits above this module (every
#: objective takes a TrainConfig), so this module imports no objective
ObjectiveLookup = tuple[Callable[[str], ObjectiveFacts], Callable[[], list[str]], Callable[[], list[str]]]
OBJECTIVE_LOOKUP: ObjectiveLookup | None = None


def _objective_lookup() -> ObjectiveLookup:
    if OBJECTIVE_LOOKUP is None:
        raise RuntimeError(
            "the training objectives are not registered: import puzzlezero.train before making a TrainConfig"
        )
    return OBJECTIVE_LOOKUP


@dataclass(frozen=True)
class TrainConfig:
    """Training settings for one puzzle: DAVI (Algorithm 1) and the later objectives beside it."""

    puzzle: str
    """Registry name of the puzzle (``cube3``, ``puzzle15``, ...)."""

    preset: str = "small"
    """Network preset: the paper's fully connected net (``tiny``, ``small``, ``medium``, ``paper``;
    ``nn.config.PRESETS``), for grid puzzles (Lights Out, Sokoban) the residual convolutional
    net (``conv-tiny``, ``conv``, ``conv-large``; ``nn.config.CONV_PRESETS``), and for the cubes
    Rute's convolutional cube network with 8 states of history (``cubeconv``,
    ``cubeconv-small``)."""
    h1: int | None = None
    """Override of the preset's first hidden width (fully connected presets only)."""
    h2: int | None = None
    """Override of the preset's second hidden / residual width (conv presets: the head's width)."""
    num_res_blocks: int | None = None
    """Override of the preset's number of residual blocks (conv presets: at least enough for the
    receptive field to cover the board)."""
    encoding: str = "onehot"
    """Input encoding, a key of ``puzzle.encoders`` (the paper's is one-hot; ``grid`` gives the
    ``[C, H, W]`` planes of grid puzzles). A conv preset turns the default ``onehot`` into ``grid``."""

    rooms: str | None = None
    """Sokoban only: Boxoban level files or directories of them, separated by commas
    (``unfiltered/train``: DeepCubeA trained on those 900,000 levels), whose goal configurations
    (every box on its target, the agent beside one) start the reverse play of the training and
    evaluation states; ``None``: rooms generated at random (``puzzles.sokoban.generator``)."""

    goal: str = "solved"
    """The goal whose cost-to-go a single-head network learns: a name of
    ``puzzle.goal_predicates()`` (cube3: ``layer1``, ``layer2``, ``solved``). Training states are
    still scrambled from the solved state; the targets are 0 exactly at the states that meet the
    goal (objectives marked goal-aware: ``davi``)."""
    goals: tuple[str, ...] = ()
    """A multi-head network (Dong, Hao and Nakayama, "Solving the Rubik's Cube with Deep
    Reinforcement Learning Using Multi-Headed Models"): one value output per goal, trained jointly
    with ``objective=multigoal`` (each head its own Bellman targets); ``()``: a single head for
    ``goal``. E.g. ``--set goals=layer1,layer2,solved``."""
    head_layers: int = 0
    """Multi-head networks: hidden layers of each goal's own between the shared trunk
    (``num_res_blocks`` residual blocks) and its output; 0 = only the output differs (Dong et al.'s
    MultiH Baseline). Its 4+1, 3+2, 4+2 are ``num_res_blocks``/``head_layers`` 4/1, 3/2, 4/2."""

    batch_size: int = 1000
    """B: training states per gradient step (paper: 10,000 on GPUs; ~1000 is fastest per sample on CPU);
    per process under data-parallel training (``train.ddp``), which steps on ``B * processes``."""
    max_scramble: int | None = None
    """K: states are the goal scrambled k ~ U[1, K] times; ``None`` = ``puzzle.default_scramble_depth``
    (paper: cube 30, 15/24-puzzle and Lights Out 500, 35/48-puzzle and Sokoban 1000)."""
    scramble_power: float = 1.0
    """p: how the scramble depths spread over ``[1, K]``: ``k = ceil(K * u**p)``, ``u ~ U(0, 1)``.
    1 = ``k ~ U[1, K]`` (the paper's, and the same random draws as before this field existed); 2 puts
    half the states within K/4 scrambles where ``U[1, K]`` puts a quarter, so a K large enough to
    reach a benchmark's states (docs/training-research.md, "How far out the training states reach") thins the
    states near the goal less. Not for ``selfplay`` (its own depth schedule)."""
    descent_share: float = 0.0
    """The share of each chunk's training states taken from greedy descents under the target
    network instead of scrambles (``train.descents``: the states a search over the network would
    visit, where its holes are); 0 = scrambles only (DeepCubeA). ``davi`` and ``lhbl`` only.
    puzzle48 used 0.25 with 1,000 steps and a stride of 100 (docs/training.md); many walkers a
    chunk matter: states of a few walkers upset batch normalisation."""
    descent_steps: int = 64
    """Greedy descents: steps per walker."""
    descent_stride: int = 1
    """Greedy descents: record every ``descent_stride``-th state (long walks, many walkers)."""
    descent_epsilon: float = 0.1
    """Greedy descents: the chance of a random step instead of the greedy one."""
    batch_norm: str = "batch"
    """How the network's batch normalisation layers run in training steps: ``"batch"`` (the usual:
    each batch's own statistics, the running ones updated for inference) or ``"frozen"`` (the
    running statistics, never updated; the scale and shift still learn): the function trained is
    then exactly the one the target network and the searches evaluate. For continuing a trained
    model on states unlike those it was trained on (``descent_share``): with batch statistics, the
    network fits its labels in training mode and the target network answers in inference mode, and
    a gap between the two is added to the labels at every target update (docs/training-research.md)."""
    lr: float = 1e-3
    """Adam learning rate."""
    lr_decay: float = 1.0
    """Exponential decay per iteration: the learning rate at iteration m is ``lr * lr_decay**m``."""
    check_every: int = 20
    """C: every C iterations the target network may take the trained weights (``target_update``;
    paper: 5000 iterations of B=10,000; here 20 iterations of B=1000 won the recipe comparison of
    docs/training-research.md). Must be a multiple of ``chunk_iterations``."""
    epsilon: float = 0.05
    """Loss threshold for the target update (paper: 0.05)."""
    chunk_iterations: int = 10
    """Targets are generated for ``chunk_iterations * batch_size`` states at once with the target
    network in inference mode, then trained on in minibatches of B (an efficiency detail: the target
    net only changes at check points, so the targets equal those of Algorithm 1)."""
    inference_batch: int = 2048
    """Children per target-network call (1000-2000 is fastest on CPU)."""
    int8_targets: bool = False
    """Evaluate the target network with int8 linear layers (CPU; ~2.5x faster DAVI targets, errors of
    a few hundredths of a move; see ``nn.fast``). Off = the paper's float targets. May be switched
    on or off when resuming."""
    max_iterations: int | None = None
    """M: stop after this many iterations (``None``: no limit; use ``max_samples`` or time)."""
    max_samples: int | None = None
    """Stop after this many training samples (iterations * B)."""

    objective: str = "davi"
    """How targets are made after the warm start (a name in ``train.objectives.OBJECTIVES``):
    ``davi`` = one-step Bellman targets (the paper; the default: lowest validation error when
    continuing a good model, docs/training-research.md), ``lhbl`` = limited-horizon Bellman labels
    (DeepXube, AAAI 2026; fastest from a weak start, but drifts to over-estimates later); ``random_walk`` alone gives CayleyPy's pure regression (for beam
    search; as an A* heuristic it over-estimates)."""
    target_update: str = "period"
    """``loss``: every C iterations copy the trained weights into the target network if the loss is
    below epsilon (DeepCubeA); ``period``: copy every C iterations regardless (DeepXube's default,
    and ours: with ``loss`` the values hardly moved in docs/training-research.md)."""
    target_reuse: int = 1
    """Passes over each chunk of targets: a chunk labels ``chunk_iterations * batch_size /
    target_reuse`` fresh states and trains on each ``target_reuse`` times (cheaper labels, more
    steps per label). Must divide ``chunk_iterations``."""
    lhbl_expansions: int = 10
    """LHBL: expansions of the search tree grown from each training state."""
    lhbl_weight: float = 1.0
    """LHBL: the tree expands the open node of least ``lhbl_weight * g + h``."""
    efficientcube_target: str = "set"
    """``efficientcube``: the policy's target, ``set`` (every move that could have been the walk's
    last, equally likely: the expectation of the paper's label, from
    :meth:`Puzzle.walks_with_undo_sets`) or ``last`` (the paper's: the move that undoes the walk's
    last step). They differ only where moves commute: on Lights Out ``set`` is the whole press
    set, ``k`` labels a board instead of one, and learned more than twice as fast per sample
    (docs/lightsout.md). A config file without this key means ``last``, as before it existed."""
    q_bootstrap: str = "value"
    """``qlearning``: what values a child in the targets ``cost + J_target(child)``: ``value``
    (the target net's value head, itself fitted on the minimum of these targets, i.e. DAVI; the Q
    head distils one-step look-ahead: stable) or ``qmin`` (``min_a' Q_target(child, a')``, the Q*
    paper's Q-learning; on cube2 it drifted to over-estimates, see :mod:`puzzlezero.train.objectives.qlearning`)."""
    cap_labels: bool = False
    """Cap each target at the cost of a known path to the goal (an upper bound of the cost-to-go):
    its training state's scramble walked back, ``min(min_a [cost(a) + J_target(child_a)], path
    cost)``; for a Q target ``min(y(s, a), cost(a) + cost(inverse(a)) + path cost)``; for a greedy
    descent's state the smaller of the descent's remaining steps to the goal (where it got there)
    and the descent undone then its start's scramble; for an LHBL tree's node its cheapest path
    back to the root in the tree plus the root's. Bootstrap learning's bound (Jabbari Arfaee, Zilles
    and Holte, "Learning heuristic functions for large state spaces", 2011), against Bellman targets
    that inflate above the true distance. ``davi``, ``adi``, ``multigoal``, ``qlearning`` and
    ``lhbl``; the states and the random draws are those of an uncapped run
    (``train.objectives.path_costs``). Off = the papers' targets."""

    solution_paths: str | None = None
    """An ``.npz`` file of states on the paths of solutions already found, each with the cost of the
    rest of its path (``puzzlezero solution-paths`` writes one from ``bench`` reports): bootstrap
    learning (Jabbari Arfaee, Zilles and Holte, 2011). A ``path_share`` of every chunk's training
    rows is drawn from it, labelled with that cost (``train.solution_paths``); objectives of a
    single value head only. ``None``: the objective's states alone."""
    path_share: float = 0.0
    """The share of each chunk's training rows drawn from ``solution_paths`` (0 <= share < 1)."""

    selfplay_simulations: int = 100
    """``selfplay``: tree-search simulations per move of an episode (Rute: 800 in the text, 1600 in the code's config, on a GPU)."""
    selfplay_episodes: int = 64
    """``selfplay``: episodes played in lockstep (their tree searches share network calls); a chunk
    plays batches of them until it has ``chunk_iterations * batch_size / target_reuse`` rows."""
    selfplay_gamma: float = 0.95
    """``selfplay``: the discount: value targets are ``gamma^distance``, backups multiply by it."""
    selfplay_c_puct: float = 1.0
    """``selfplay``: the PUCT exploration constant (scaled by each node's value; Rute: 1.0)."""
    selfplay_max_moves: int | None = None
    """``selfplay``: moves an episode may take before it counts as unsolved (value target 0);
    ``None`` = K (Rute: 100)."""
    selfplay_unvisited: str = "parent"
    """``selfplay``: the Q of untried actions in the tree search: ``parent`` (the node's value) or
    ``zero`` (Rute's code, made for 800-1600 simulations; see ``search.discounted_mcts``)."""
    selfplay_start_depth: int = 1
    """``selfplay``: the scramble depth of the first chunk; later chunks adapt it."""
    selfplay_target_solved: float = 0.5
    """``selfplay``: the scramble depth grows by one after a chunk that solved more than this share
    of its episodes and shrinks by one after one that solved fewer (Rute: 0.5)."""
    selfplay_symmetry: bool = True
    """``selfplay`` on the cubes: move each training row by a random one of the 48 symmetries and
    evaluate each tree node under a random symmetry (as Rute does); other puzzles ignore it."""

    warmup_iterations: int = 0
    """Optional supervised warm start: this many iterations of ``warmup_objective`` before
    ``objective`` (its labels over-estimate the cost-to-go; Bellman targets then pull them down);
    0 = none, as in the paper. Warm-start iterations count toward M."""
    warmup_objective: str = "random_walk"
    """Labels of the warm start: ``random_walk`` (length of a non-backtracking random walk,
    CayleyPy) or ``scramble_depth`` (depth of a plain scramble)."""

    curriculum: str = "off"
    """Scramble-depth curriculum: ``off`` (k ~ U[1, K] throughout), ``double`` or ``plus1``: start
    at ``curriculum_start`` and grow the depth bound (doubling it, or by one: Dong et al.) whenever
    greedy search with the trained net solves at least ``curriculum_threshold`` of fresh states at
    the current bound; checked every C iterations, never above K."""
    curriculum_start: int = 1
    """Depth bound the curriculum starts from."""
    curriculum_threshold: float = 0.5
    """Greedy solve rate at the current bound that lets the curriculum grow it (DeepXube: 0.5;
    Dong et al.: 0.25)."""

    init_from: str | None = None
    """Start from the weights of this model folder or shipped model name (the optimizer starts
    fresh; the network's shape comes from that model, not from ``preset``); its card's training
    history is carried into this run's card."""
    label_workers: int = 0
    """Worker processes that make labels while the trainer takes gradient steps (0 = labels in the
    trainer's process, as the paper). With workers a chunk's labels come from the target network
    as it stood ``label_workers`` chunks earlier; use ``threads=1`` so each core has one job. Workers
    evaluate the target on ``device``: on a GPU machine several of them keep one GPU busier."""

    seed: int = 0
    """Seed of the network initialisation and of every scramble: a run is reproducible bit for bit."""
    threads: int = 2
    """``torch.set_num_threads``: use 1 when another process holds the other core."""
    device: str = "cpu"
    """Torch device of both networks (``"cpu"``, ``"cuda"``); exact resume is guaranteed on CPU."""
    amp: str = "off"
    """Mixed precision: ``"bf16"`` runs the forward pass of each gradient step and the target
    network's label inference under bfloat16 autocast (for GPUs' bf16 tensor cores; the loss,
    gradients and Adam state stay float32); ``"off"`` = float32 throughout. Allowed on a CPU, but
    there it is slower (6-8x on this project's 2-core Xeon); see ``train.amp``."""
    checkpoint_every: int = 500
    """Write a resumable checkpoint every this many iterations (rounded to whole chunks)."""
    checkpoint_seconds: float = 300.0
    """... and at least every this many seconds of wall time."""
    log_every: int = 10
    """Write one JSONL log line every this many iterations (rounded to whole chunks)."""

    eval_every: int = 1000
    """Evaluate (greedy solve rate and predicted cost-to-go by scramble depth) every this many
    iterations; 0 = never (except at the end when > 0)."""
    eval_depths: tuple[int, ...] | None = None
    """Scramble depths of the evaluation states; ``None`` = about 10 depths spread over [1, min(K, 30)]."""
    eval_states: int = 100
    """Evaluation states per depth (a fixed set, drawn from ``seed``)."""
    eval_max_steps: int | None = None
    """Step limit of the greedy best-first search in the evaluation (``None``: the largest eval depth)."""
    progress: bool = True
    """Show a progress bar on stderr."""

    # ---- validation and (de)serialisation ---------------------------------------------------------
    def __post_init__(self) -> None:
        from puzzlezero.nn.config import CONV_PRESETS

        if self.preset in CONV_PRESETS and self.encoding == "onehot":
            object.__setattr__(self, "encoding", "grid")  # a convolutional net reads the grid
        positive = (
            "batch_size",
            "check_every",
            "chunk_iterations",
            "inference_batch",
            "threads",
            "checkpoint_every",
            "log_every",
            "eval_states",
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise PuzzleError(f"config: {name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("max_iterations", "max_samples", "max_scramble", "h1", "h2"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise PuzzleError(f"config: {name} must be >= 1 or null, got {v!r}")
        if self.check_every % self.chunk_iterations:
            raise PuzzleError(
                f"config: check_every ({self.check_every}) must be a multiple of chunk_iterations "
                f"({self.chunk_iterations})"
            )
        if not (self.lr > 0 and 0 < self.lr_decay <= 1 and self.epsilon >= 0):
            raise PuzzleError("config: need lr > 0, 0 < lr_decay <= 1 and epsilon >= 0")
        if self.warmup_iterations < 0 or self.eval_every < 0 or self.label_workers < 0:
            raise PuzzleError("config: warmup_iterations, eval_every and label_workers must be >= 0")
        if self.target_update not in TARGET_UPDATES:
            raise PuzzleError(
                f"config: target_update must be one of {TARGET_UPDATES}, got {self.target_update!r}"
            )
        if self.amp not in AMP_MODES:
            raise PuzzleError(f"config: amp must be one of {AMP_MODES}, got {self.amp!r}")
        if self.batch_norm not in BATCH_NORMS:
            raise PuzzleError(f"config: batch_norm must be one of {BATCH_NORMS}, got {self.batch_norm!r}")
        if self.curriculum not in CURRICULA:
            raise PuzzleError(f"config: curriculum must be one of {CURRICULA}, got {self.curriculum!r}")
        if self.target_reuse < 1 or self.chunk_iterations % self.target_reuse:
            raise PuzzleError(
                f"config: target_reuse ({self.target_reuse}) must be >= 1 and divide chunk_iterations "
                f"({self.chunk_iterations})"
            )
        if self.lhbl_expansions < 1 or self.lhbl_weight < 0 or self.curriculum_start < 1:
            raise PuzzleError("config: need lhbl_expansions >= 1, lhbl_weight >= 0, curriculum_start >= 1")
        if self.efficientcube_target not in ("last", "set"):
            raise PuzzleError(
                f"config: efficientcube_target must be 'last' or 'set', got {self.efficientcube_target!r}"
            )
        if self.q_bootstrap not in ("value", "qmin"):
            raise PuzzleError(f"config: q_bootstrap must be 'value' or 'qmin', got {self.q_bootstrap!r}")
        if not 0 < self.scramble_power < float("inf"):
            raise PuzzleError(f"config: scramble_power must be > 0, got {self.scramble_power!r}")
        if self.scramble_power != 1 and "selfplay" in (self.objective, self.warmup_objective):
            raise PuzzleError(
                "config: scramble_power applies to k ~ U[1, K] scrambles; selfplay has its own depth "
                "schedule (selfplay_start_depth), so leave scramble_power at 1"
            )
        if not (
            0 <= self.descent_share < 1
            and 1 <= self.descent_stride <= self.descent_steps
            and 0 <= self.descent_epsilon <= 1
        ):
            raise PuzzleError(
                "config: need 0 <= descent_share < 1, 1 <= descent_stride <= descent_steps and "
                f"0 <= descent_epsilon <= 1, got {self.descent_share!r}, {self.descent_stride!r}, "
                f"{self.descent_steps!r}, {self.descent_epsilon!r}"
            )
        get_objective, descent_objectives, capping_objectives = _objective_lookup()
        if self.descent_share and self.objective not in descent_objectives():
            raise PuzzleError(
                f"config: descent_share takes training states from greedy descents for the objectives "
                f"{', '.join(descent_objectives())}; {self.objective!r} makes its own states, so leave it at 0"
            )
        if self.descent_share and self.goal != "solved":
            raise PuzzleError(
                "config: greedy descents (descent_share) walk to the solved state; use goal=solved"
            )
        if not 0 <= self.path_share < 1:
            raise PuzzleError(f"config: need 0 <= path_share < 1, got {self.path_share!r}")
        if (self.solution_paths is None) != (self.path_share == 0):
            raise PuzzleError(
                "config: solution_paths (a file of states on known solutions) and path_share (the share "
                "of each chunk drawn from it) go together: set both or neither"
            )
        if self.solution_paths is not None and (
            get_objective(self.objective).head != "value" or self.goals or self.goal != "solved"
        ):
            raise PuzzleError(
                "config: solution_paths labels states with the cost of a path to the solved state, for "
                f"an objective of one value head and goal=solved; {self.objective!r} is not one"
            )
        if self.cap_labels and self.objective not in capping_objectives():
            raise PuzzleError(
                f"config: cap_labels caps the Bellman targets of {', '.join(capping_objectives())} by "
                f"the cost of each state's known path; {self.objective!r} has no such targets, so leave "
                "it false"
            )
        if not 0 < self.curriculum_threshold <= 1:
            raise PuzzleError("config: curriculum_threshold must be in (0, 1]")
        self._check_selfplay()
        for name in (self.objective, self.warmup_objective):
            get_objective(name)  # an unknown name fails here, listing the known ones
        self._check_goals(get_objective)

    def _check_goals(self, get_objective: Callable[[str], ObjectiveFacts]) -> None:
        """Goals and heads fit the objectives: a multi-head network (``goals``) trains with the
        ``goals``-head objective, a sub-goal with goal-aware objectives only."""
        object.__setattr__(self, "goals", tuple(str(g) for g in self.goals))
        if self.head_layers < 0:
            raise PuzzleError(f"config: head_layers must be >= 0, got {self.head_layers!r}")
        if len(set(self.goals)) != len(self.goals):
            raise PuzzleError(f"config: goals must differ, got {list(self.goals)}")
        multi = get_objective(self.objective).head == "goals"
        if multi != bool(self.goals):
            raise PuzzleError(
                "config: a multi-head network needs both goals=... and objective=multigoal"
                if self.goals
                else f"config: objective {self.objective} trains a multi-head network: set goals=..."
            )
        if self.goals and self.goal != "solved":
            raise PuzzleError("config: set goal (one head) or goals (several heads), not both")
        if self.head_layers and not self.goals:
            raise PuzzleError(
                "config: head_layers are the goal-specific layers of a multi-head network (goals=...)"
            )
        used = [self.objective] + ([self.warmup_objective] if self.warmup_iterations else [])
        if self.goal != "solved" or self.goals:
            blind = [name for name in used if not get_objective(name).goal_aware]
            if blind:
                raise PuzzleError(
                    f"config: objective {', '.join(blind)} labels the cost to the solved state only; "
                    f"a goal other than solved trains with davi (one head) or multigoal (several)"
                )

    def _check_selfplay(self) -> None:
        if min(self.selfplay_simulations, self.selfplay_episodes, self.selfplay_start_depth) < 1:
            raise PuzzleError(
                "config: selfplay_simulations, selfplay_episodes and selfplay_start_depth must be >= 1, got "
                f"{self.selfplay_simulations}, {self.selfplay_episodes}, {self.selfplay_start_depth}"
            )
        if self.selfplay_max_moves is not None and self.selfplay_max_moves < 1:
            raise PuzzleError(
                f"config: selfplay_max_moves must be >= 1 or null, got {self.selfplay_max_moves}"
            )
        if not 0 < self.selfplay_gamma <= 1 or self.selfplay_c_puct < 0:
            raise PuzzleError(
                f"config: need 0 < selfplay_gamma <= 1 and selfplay_c_puct >= 0, got "
                f"{self.selfplay_gamma}, {self.selfplay_c_puct}"
            )
        if self.selfplay_unvisited not in ("parent", "zero"):
            raise PuzzleError(
                f"config: selfplay_unvisited must be 'parent' or 'zero', got {self.selfplay_unvisited!r}"
            )
        if not 0 <= self.selfplay_target_solved < 1:
            raise PuzzleError(
                f"config: selfplay_target_solved must be in [0, 1), got {self.selfplay_target_solved}"
            )
        if self.objective == "selfplay" and (self.curriculum != "off" or self.warmup_iterations):
            raise PuzzleError(
                "config: objective=selfplay adapts its own scramble depth; use it with curriculum=off "
                "and warmup_iterations=0 (start from a trained model with --init-from instead)"
            )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["eval_depths"] is not None:
            d["eval_depths"] = list(d["eval_depths"])
        d["goals"] = list(d["goals"])
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise PuzzleError(f"config: unknown keys {unknown}; known keys: {', '.join(sorted(known))}")
        data = {**LEGACY_DEFAULTS, **data} if "objective" not in data else dict(data)
        data = {**LATER_FIELDS, **data}
        if data.get("eval_depths") is not None:
            data["eval_depths"] = tuple(int(x) for x in data["eval_depths"])
        if data.get("goals") is not None:
            data["goals"] = tuple(str(x) for x in data["goals"])
        try:
            return cls(**data)
        except TypeError as exc:
            raise PuzzleError(f"config: {exc}") from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> TrainConfig:
        """Read a config file; a missing or malformed file raises :class:`ModelFileError`."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ModelFileError(f"{path}: no such config file") from None
        except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad UTF-8, JSON or numbers
            raise ModelFileError(f"{path}: unreadable config ({exc})") from None
        if not isinstance(data, dict):
            raise ModelFileError(f"{path}: a config must be a JSON object")
        return cls.from_dict(data)

    def with_overrides(self, assignments: Iterable[str]) -> TrainConfig:
        """Apply ``key=value`` strings (values parsed as JSON, else taken as text)."""
        hints = typing.get_type_hints(type(self))
        changes: dict[str, Any] = {}
        for item in assignments:
            key, sep, raw = item.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in hints:
                raise PuzzleError(
                    f"--set expects key=value with a config key, got {item!r}; keys: {', '.join(hints)}"
                )
            changes[key] = _coerce(key, raw.strip(), hints[key])
        return replace(self, **changes)


def _coerce(key: str, raw: str, hint: Any) -> Any:
    """Parse ``raw`` for a field annotated ``hint`` (int, float, str, bool, tuple, optional)."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON (or a number of 4,300+ digits): the text itself
        value = raw
    is_union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    args = typing.get_args(hint) if is_union else ()
    if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
        if type(None) in args:
            return None
        raise PuzzleError(f"--set {key}: may not be null")
    base = next(a for a in args if a is not type(None)) if is_union else hint
    origin = typing.get_origin(base) or base
    try:
        if origin is bool:
            if isinstance(value, str):
                value = {"true": True, "false": False, "yes": True, "no": False}[value.lower()]
            return bool(value)
        if origin is int:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            return int(value)
        if origin is float:
            return float(value)
        if origin is tuple:
            if isinstance(value, str):  # goals=layer1,layer2,solved
                value = [x.strip() for x in value.split(",") if x.strip()]
            items = value if isinstance(value, list) else [value]
            item_type = (typing.get_args(base) or (int,))[0]
            return tuple(str(x) if item_type is str else int(x) for x in items)
        return str(value)
    except (ValueError, TypeError, KeyError, OverflowError):
        raise PuzzleError(
            f"--set {key}: cannot read {raw[:40]!r} as {getattr(origin, '__name__', origin)}"
        ) from None
