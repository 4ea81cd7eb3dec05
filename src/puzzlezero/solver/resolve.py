"""The options of a solve, resolved once: :func:`resolve_options` checks names and numbers against
the tables and fills in the puzzle's defaults (:func:`defaults_for`) into a frozen
:class:`~puzzlezero.solver.options.SolveOptions`, which everything below the entry points takes as
it is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Unpack

from puzzlezero.budget import widest
from puzzlezero.defaults import (
    COMMUTATOR_CUBES,
    COMMUTATOR_DEFAULTS,
    FALLBACK_DEFAULTS,
    MODEL_FREE_DEFAULTS,
    SEARCH_MEMBER,
    Defaults,
    member_search,
)
from puzzlezero.errors import PuzzleError, UnknownNameError
from puzzlezero.puzzles.base import SOLVED, Puzzle
from puzzlezero.registry import DEFAULTS, spec
from puzzlezero.search.anytime import check_stages
from puzzlezero.search.result import check_positive
from puzzlezero.search.shortcut import can_shortcut
from puzzlezero.solver.heuristics import BY_KIND, HEURISTICS
from puzzlezero.solver.members import check_member, member_options, member_width, model_members, read_models
from puzzlezero.solver.memory import cap_within_budget, network_bytes
from puzzlezero.solver.names import lookup
from puzzlezero.solver.options import BREADTH_FIRST_NODES, SETTINGS, SolveOptions, SolveSettings
from puzzlezero.solver.search_options import OPTIONS
from puzzlezero.solver.searches import SEARCHES, SearchSpec


def defaults_for(puzzle: Puzzle | str) -> Defaults:
    """The search settings of a puzzle: those it was registered with (the shipped puzzles':
    :data:`~puzzlezero.registry.DEFAULTS`; a plugin's ``register(name, Class, defaults={...})``,
    the fallback with its fields in place), else :data:`~puzzlezero.defaults.FALLBACK_DEFAULTS`;
    a definition file's puzzle with no model installed under its name
    :data:`~puzzlezero.defaults.MODEL_FREE_DEFAULTS` (the rollout over the group solver, which
    needs no model; a model named in a solve brings back the learned search), or where it is an
    NxNxN cube of the competition's moves from :data:`~puzzlezero.defaults.COMMUTATOR_CUBES` up
    :data:`~puzzlezero.defaults.COMMUTATOR_DEFAULTS` (the commutator solver)."""
    name = puzzle if isinstance(puzzle, str) else puzzle.name
    if name in DEFAULTS:
        return DEFAULTS[name]
    try:
        registered = spec(name)
    except UnknownNameError:  # a puzzle built directly, under a name nobody registered
        return FALLBACK_DEFAULTS
    if registered.defaults is not None:
        return registered.defaults
    if "definition" in registered.kwargs:  # a definition file's: no model installed, no network
        from puzzlezero.model_folders import find_model_dir

        if find_model_dir(name) is None:
            return (
                COMMUTATOR_DEFAULTS
                if _commutator_cube(registered.kwargs["definition"])
                else MODEL_FREE_DEFAULTS
            )
    return FALLBACK_DEFAULTS


def _commutator_cube(definition: Any) -> bool:
    """Whether a definition is an NxNxN cube the commutator solver answers by default: the
    competition's moves (:func:`puzzlezero.classic.cube_commutators.cube_size`), ``n`` from
    :data:`~puzzlezero.defaults.COMMUTATOR_CUBES`."""
    from puzzlezero.classic.cube_commutators import cube_size

    n = cube_size(definition)
    return n is not None and n >= COMMUTATOR_CUBES


def runs_anytime(d: Defaults) -> bool:
    """Does a puzzle's own search (its :class:`Defaults`) run an anytime schedule: ``stages``, or
    several beam widths for a search that reads them?"""
    return bool(d.stages) or (not isinstance(d.beam_width, int) and SEARCHES[d.search].reads("beam_width"))


def own_heuristic(puzzle: Puzzle, heuristic: str | None, model: object = None) -> str:
    """The heuristic that ``heuristic`` names on ``puzzle``: ``None``, or ``"learned"`` with no
    model named, is the puzzle's ``Defaults.heuristic`` (``"learned"``, its own network, unless its
    network is another puzzle's: ``cube_3-3-3``'s ``"cube3-view"``)."""
    if heuristic is None or (heuristic == "learned" and not model):
        return defaults_for(puzzle).heuristic
    return heuristic


def resolve_options(puzzle: Puzzle, **given: Unpack[SolveSettings]) -> SolveOptions:
    """Check names and numbers and fill in the puzzle's :func:`defaults_for`. ``search=None`` is the
    puzzle's own (``Defaults.search``). ``anytime`` (``None``: on where the puzzle has a schedule)
    runs the puzzle's ``Defaults.stages`` for its own search, unless ``weight`` or ``batch`` names
    one setting; ``stages`` gives a schedule of one's own (for BWAS or Q*). ``fallback`` (``None``:
    on under the puzzle's own settings, where it has a ``Defaults.fallback``) runs that search on
    the states left unsolved, in the last seconds of the time limit. ``options``: values of
    :data:`OPTIONS` taken by the search or the heuristic (another is an error). ``goal`` (default
    ``"solved"``): a name of ``puzzle.goal_predicates()`` to search for instead of the puzzle's own
    goal (searches that take a goal: ``bwas``, ``qstar``, ``gbfs``, ``beam``, ``qbeam``).
    ``heuristic=None`` (or ``"learned"`` without a model) is the puzzle's ``Defaults.heuristic``,
    ``"learned"`` unless its network is another puzzle's. ``shortcut`` (``None``: the puzzle's
    own, under its own settings as for ``fallback``; 0: off) bounds the shortcut pass's rounds."""
    unknown = sorted(set(given) - set(SETTINGS))
    if unknown:
        raise TypeError(f"unknown solve settings {unknown}; the settings are {', '.join(SETTINGS)}")
    search = given.get("search")
    heuristic = given.get("heuristic")
    model = given.get("model")
    weight = given.get("weight")
    batch = given.get("batch")
    max_nodes = given.get("max_nodes")
    time_limit = given.get("time_limit")
    max_steps = given.get("max_steps")
    beam_width = given.get("beam_width")
    anytime = given.get("anytime")
    stages = given.get("stages")
    fallback = given.get("fallback")
    goal = given.get("goal")
    options = given.get("options")
    macros = given.get("macros")
    shortcut = given.get("shortcut")
    windows = given.get("windows")
    models = given.get("models")
    named_heuristic = heuristic not in (None, "learned")  # the CLI's default names "learned"
    d = defaults_for(puzzle)
    if (
        d in (MODEL_FREE_DEFAULTS, COMMUTATOR_DEFAULTS)
        and search is None
        and (model or models or named_heuristic)
    ):
        d = FALLBACK_DEFAULTS  # a definition file's puzzle with a model named: its network's search
    heuristic = own_heuristic(puzzle, heuristic, model if model is not None else models)
    search = d.search if search is None else search
    spec = lookup(SEARCHES, search, "search")
    if spec.defaults and search != d.search:
        d = replace(d, **dict(spec.defaults))
    goal = SOLVED if goal is None else goal
    puzzle.goal_named(goal)  # an unknown goal: UnknownNameError listing the puzzle's
    if goal != SOLVED and not spec.goals:
        takes = ", ".join(name for name, sp in SEARCHES.items() if sp.goals)
        raise PuzzleError(
            f"search {search} solves to the puzzle's own goal only; searches for {goal!r}: {takes}"
        )
    if (
        spec.needs_heuristic
        and heuristic is not None
        and heuristic not in HEURISTICS
        and ":" not in heuristic
    ):
        lookup(HEURISTICS, heuristic, "heuristic")
    check_positive("weight", weight, allow_zero=True)
    check_positive("batch", batch, integer=True)
    check_positive("max_nodes", max_nodes, integer=True)
    check_positive("time_limit", time_limit)
    check_positive("max_steps", max_steps, integer=True)
    beam_width = None if beam_width is None else _widths(beam_width)
    if heuristic in BY_KIND:
        heuristic = BY_KIND[heuristic].get(spec.heuristic_kind, heuristic)
    chosen = _check_options(
        search, spec, heuristic if spec.needs_heuristic else None, options or {}, dict(d.options)
    )
    if stages is not None:
        if anytime is False or weight is not None or batch is not None or not spec.weighted:
            weighted = ", ".join(name for name, sp in SEARCHES.items() if sp.weighted)
            raise PuzzleError(f"stages are an anytime schedule of {weighted}, without --weight/--batch")
        stages = check_stages(stages)
    elif anytime is not False and weight is None and batch is None and search == d.search:
        stages = check_stages(d.stages) if d.stages else ()
    else:
        stages = ()
    if anytime and not stages:
        raise PuzzleError(
            f"no anytime schedule for {search} on {puzzle.name}: anytime solving runs the puzzle's "
            f"own search ({d.search}) without --weight/--batch"
            + ("" if d.stages else f", and {puzzle.name} has no schedule")
        )
    if fallback and (d.fallback is None or d.fallback == search):
        raise PuzzleError(
            f"no fallback search for {search} on {puzzle.name}"
            + (f" (its fallback is {d.fallback} itself)" if d.fallback else "")
        )
    # by default only under the puzzle's own settings: a named setting is measured as it is
    own = search == d.search and weight is None and batch is None and stages == d.stages and goal == SOLVED
    if fallback and goal != SOLVED:
        raise PuzzleError(f"the fallback search solves to the puzzle's own goal, not {goal!r}")
    use_fallback = fallback or (fallback is None and own)
    chosen = _check_images(
        puzzle,
        search,
        chosen,
        given=options or {},
        stages=stages,
        goal=goal,
        macros=bool(macros),
        own=search == d.search,
    )
    from puzzlezero.classic.optimal import has_window_solver
    from puzzlezero.classic.optimal.bidirectional_bfs import can_bfs

    # under the puzzle's own settings (no search, heuristic or model named: a named one is measured
    # as it is), a state a few moves from the goal gets its shortest answer
    alone = (
        own
        and given.get("search") is None
        and given.get("heuristic") in (None, "learned")
        and model is None
        and not models
        and not macros
    )
    breadth_first = BREADTH_FIRST_NODES if alone and can_bfs(puzzle) else 0
    shortcut = _pass_setting(
        "shortcut", shortcut, d.shortcut if own else 0, can_shortcut(puzzle),
        f"shortcuts need moves that all have an inverse and cost the same; {puzzle.name}'s do not",
    )  # fmt: skip
    windows = _pass_setting(
        "windows", windows, d.windows if own else 0, has_window_solver(puzzle),
        f"window re-solving needs an exact solver between two states; {puzzle.name} has none "
        f"(there is one for the sliding puzzles and cube3)",
    )  # fmt: skip
    cap = (d.max_nodes if spec.node_cap else None) if max_nodes is None else max_nodes
    if max_nodes is None and cap is not None and spec.reads("beam_width") and beam_width is not None:
        # a wider beam than the default's keeps the default's number of steps: the default node
        # cap grows with the width (the time limit still bounds it); a cap given is kept as given
        cap = max(cap, -(-cap * widest(beam_width) // widest(d.beam_width)))
        scaled = cap > d.max_nodes
    else:
        scaled = False
    opts = SolveOptions(
        search=search,
        heuristic=heuristic if spec.needs_heuristic else None,
        model=model,
        weight=d.weight if weight is None else float(weight),
        batch=d.batch if batch is None else batch,
        max_nodes=cap,
        time_limit=d.time_limit if time_limit is None else float(time_limit),
        max_steps=d.max_steps if max_steps is None else max_steps,
        beam_width=d.beam_width if beam_width is None else beam_width,
        stages=stages,  # type: ignore[arg-type]
        fallback=d.fallback if use_fallback else None,
        goal=goal,
        options=chosen,
        macros=_check_macros(puzzle, search, spec, macros),
        shortcut=shortcut,
        windows=windows,
        breadth_first=breadth_first,
    )
    opts = _check_ensemble(
        opts,
        spec,
        model=model,
        models=models,
        default=d.models if search == d.search and not named_heuristic and goal == SOLVED else (),
    )
    if scaled and cap is not None:  # the scaled cap, within the memory budget (not below the puzzle's)
        from puzzlezero.budget import memory_budget
        from puzzlezero.search.beam import max_nodes_within

        # a member's share: a network-free member's wider beam takes as many shares as it is wider
        shares = sum(member_width(opts, m) for m in opts.models) or 1
        room = memory_budget() // shares - network_bytes(spec, opts)
        cap = max(d.max_nodes, min(cap, max_nodes_within(puzzle, opts, room)))
        opts = replace(opts, max_nodes=cap)
    if max_nodes is None and opts.max_nodes is not None and spec.node_cap:
        opts = replace(opts, max_nodes=cap_within_budget(puzzle, opts))
    return opts


def _check_ensemble(
    opts: SolveOptions,
    spec: SearchSpec,
    *,
    model: str | None,
    models: Sequence[str] | None,
    default: Sequence[str],
) -> SolveOptions:
    """``opts`` with its ensemble (:attr:`SolveOptions.models`): the ``models`` given (a str:
    names joined by commas), else the members of an ensemble folder given as ``model``
    (:func:`~puzzlezero.model_folders.ensemble_members`), else the puzzle's ``default`` where no
    model is named; one model left is that model alone, one ``heuristic:NAME`` that member's
    options (:func:`~puzzlezero.solver.members.member_options`). A member ``heuristic:NAME`` is a
    registered heuristic without a model (:func:`~puzzlezero.solver.members.check_member`). An
    ensemble needs a search guided by a heuristic, and not the layered search (which takes a model
    per goal); its model members need a heuristic that reads a model."""
    if isinstance(models, str):
        models = read_models(models)
    if models is not None and model is not None:
        raise PuzzleError("give --model or --models, not both (--models A,B: an ensemble of models A and B)")
    if models is None and model is not None and spec.needs_heuristic and not spec.per_goal:
        members = _ensemble_folder(model)
        models = None if members is None else [str(m) for m in members]
    named = models is not None
    if models is None:
        models = list(default) if model is None else []
    expanded: list[str] = []
    for name in models:
        free = check_member(name)  # heuristic:NAME, checked against the registry; None: a model
        members = _ensemble_folder(name) if named and free is None else None
        if members:
            expanded.extend(str(m) for m in members)
        else:
            expanded.append(name)
    if len(dict.fromkeys(expanded)) != len(expanded):
        raise PuzzleError(f"--models names a member twice: {', '.join(expanded)}")
    if opts.macros and any(member_search(m) for m in expanded):
        if named:
            raise PuzzleError(
                f"--macros: a {SEARCH_MEMBER}NAME member searches the puzzle's own moves; leave it out of "
                "--models or drop --macros"
            )
        expanded = [m for m in expanded if member_search(m) is None]  # the default's, without it
    nets = model_members(expanded)
    if len(expanded) <= 1 and (nets or not expanded):
        return replace(opts, model=expanded[0] if expanded else opts.model, models=())
    h_spec = HEURISTICS.get(opts.heuristic or "")
    if (
        not spec.needs_heuristic
        or spec.per_goal
        or opts.heuristic is None
        or (nets and h_spec and not h_spec.uses_model)
    ):
        if not named:
            return opts  # a puzzle's default ensemble, where it does not apply
        why = (
            f"search {opts.search} takes a model per goal (--model GOAL=DIR,...)"
            if spec.per_goal
            else f"search {opts.search} uses no heuristic"
            if not spec.needs_heuristic or opts.heuristic is None
            else f"heuristic {opts.heuristic} reads no model"
        )
        raise PuzzleError(f"--models runs an ensemble of heuristics; {why}")
    if len(expanded) == 1:  # one network-free member: that heuristic alone, as a member searches
        return member_options(opts, expanded[0])
    return replace(opts, model=nets[0] if nets else opts.model, models=tuple(expanded))


def _ensemble_folder(model: str) -> tuple[Path, ...] | None:
    """The members of ``model`` where it is an ensemble folder (a folder, or an installed model's
    name, holding ``ensemble.json``), else ``None``: a model folder, a file a heuristic reads (an
    ``.onnx``), a layered search's ``GOAL=DIR,...``, or a name no folder has (the heuristic that
    loads it says so). A bare name is an installed model's, never a folder of the working directory
    (:func:`puzzlezero.model_folders.resolve_model_dir`)."""
    from puzzlezero.model_folders import ensemble_members, find_model_dir, is_bare_name

    path = Path(model)
    folder = find_model_dir(model) if is_bare_name(model) else path if path.is_dir() else None
    return None if folder is None else ensemble_members(folder)


def options_for(puzzle: Puzzle, opts: SolveOptions | None, given: Mapping[str, Any]) -> SolveOptions:
    """``opts`` as they are (resolved by the caller), else the settings ``given`` resolved
    (:func:`resolve_options`); both at once is a ``TypeError``."""
    if opts is None:
        return resolve_options(puzzle, **given)
    if given:
        raise TypeError(f"resolved options and settings {sorted(given)} both given: give one of them")
    return opts


def _widths(beam_width: int | Sequence[int]) -> int | tuple[int, ...]:
    """A beam width, or the widths of an anytime schedule of beams (two or more), checked."""
    from puzzlezero.search.anytime import check_widths

    widths = check_widths(beam_width)
    return widths[0] if len(widths) == 1 else widths


def _check_images(
    puzzle: Puzzle,
    search: str,
    chosen: tuple[tuple[str, Any], ...],
    *,
    given: Mapping[str, Any],
    stages: Sequence[tuple[float, int]],
    goal: str,
    macros: bool = False,
    own: bool = True,
) -> tuple[tuple[str, Any], ...]:
    """The ``images`` option checked against the puzzle and the schedule. Images join an anytime
    schedule's later stages (their inverse is made from the first stage's solution), or without a
    schedule the one search as more instances where none of them needs a solution (the sliding
    puzzles' transpose, not the cube's inverse), and solve to the puzzle's own goal in its own
    moves: a puzzle's default is dropped where that does not hold, a value given is an error. A
    puzzle's default is for its own search (``own``), as measured (puzzle35: the beam search)."""
    n = dict(chosen).get("images", 0)
    if not n:
        return chosen
    why = None
    need_solution = [name for name in puzzle.image_names[:n] if name in puzzle.solution_images]
    if not own and "images" not in given:
        why = "the puzzle's own search"  # (never raised: only a default is dropped here)
    elif len(stages) == 1 or (not stages and need_solution):
        why = "an anytime schedule of two or more stages (the images join the stages after the first)" + (
            f"; the {need_solution[0]} image is made from its solution" if need_solution else ""
        )
    elif goal != SOLVED:
        why = f"the puzzle's own goal, not {goal!r}"
    elif macros:
        why = "the puzzle's own moves (no --macros: an image of a macro is not one of them)"
    elif n > len(puzzle.image_names):
        have = ", ".join(puzzle.image_names) or "none"
        why = f"at most {len(puzzle.image_names)} on {puzzle.name} (its images: {have})"
    if why is None:
        return chosen
    if "images" in given:
        raise PuzzleError(f"--images {n} with {search} needs {why}")
    return tuple((k, 0 if k == "images" else v) for k, v in chosen)


def _check_macros(
    puzzle: Puzzle, search: str, spec: SearchSpec, macros: Sequence[Sequence[int]] | None
) -> tuple[tuple[int, ...], ...]:
    """The macros (macro-actions) as action-id tuples, checked; ``()`` for none."""
    if not macros:
        return ()
    if not spec.macros:
        takes = ", ".join(name for name, sp in SEARCHES.items() if sp.macros)
        raise PuzzleError(f"search {search} does not take macros (macro-actions); searches that do: {takes}")
    from puzzlezero.puzzles.macros import MacroPuzzle

    return MacroPuzzle(puzzle, macros).macros  # checks lengths, move ids and repeats


def _check_options(
    search: str,
    spec: SearchSpec,
    heuristic: str | None,
    given: Mapping[str, Any],
    puzzle_defaults: Mapping[str, Any],
) -> tuple[tuple[str, Any], ...]:
    """Every option the search and heuristic take, checked, with defaults filled in (the puzzle's
    ``Defaults.options``, else the :data:`OPTIONS` table's)."""
    h_spec = HEURISTICS.get(heuristic) if heuristic else None
    takes = set(spec.options) | set(h_spec.options if h_spec else ())
    for name in given:
        if name not in OPTIONS:
            raise UnknownNameError(f"unknown option {name!r}; choose one of {', '.join(OPTIONS)}")
        if name not in takes:
            users = [f"search {n}" for n, sp in SEARCHES.items() if name in sp.options] + [
                f"heuristic {n}" for n, hs in HEURISTICS.items() if name in hs.options
            ]
            raise PuzzleError(
                f"--{name.replace('_', '-')} is an option of {' and '.join(users)}, not of search "
                f"{search}" + (f" with heuristic {heuristic}" if heuristic else "")
            )
    values = {n: OPTIONS[n].default for n in takes}
    values.update({n: v for n, v in puzzle_defaults.items() if n in takes})
    values.update(given)
    return tuple(sorted((n, OPTIONS[n].check(n, v)) for n, v in values.items()))


def _pass_setting(name: str, value: int | None, default: int, supported: bool, refusal: str) -> int:
    """A setting of a pass after the search (``shortcut``, ``windows``: 0 is off): ``default`` where
    none is given; a value that turns it on for a puzzle it does not support is refused with
    ``refusal``."""
    check_positive(name, value, integer=True, allow_zero=True)
    if value is None:
        return default
    if value and not supported:
        raise PuzzleError(refusal)
    return int(value)
