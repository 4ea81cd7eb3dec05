"""The memory budget: sizes read and written, the budget's sources, searches and model folders
refused before they allocate (in-process, through the CLI, under a real address-space limit), the
estimates against tracemalloc's peaks on small settings, and every shipped puzzle's defaults under
the default budget of a 24 GiB machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puzzlezero import budget, solver
from puzzlezero.budget import format_size, memory_budget, parse_size, set_memory_budget, use_memory_budget
from puzzlezero.errors import MemoryBudgetError, ModelFileError, PuzzleError
from puzzlezero.registry import make

GiB = 1 << 30
MiB = 1 << 20
#: the default budget of a machine of 24 GiB (23.5 GiB as the kernel reports it)
BUDGET_24GIB = int(budget.SHARE * 23.5 * GiB)


@pytest.fixture(autouse=True)
def _no_budget_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without a budget set in the process or the environment."""
    monkeypatch.delenv(budget.ENV, raising=False)
    set_memory_budget(None)
    yield
    set_memory_budget(None)


def _cli(
    *args: str, env: dict[str, str] | None = None, rlimit_as: int | None = None
) -> subprocess.CompletedProcess:
    """``python -m puzzlezero ARGS`` in a subprocess (optionally under ``RLIMIT_AS``)."""
    pre = None
    if rlimit_as is not None:

        def pre() -> None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (rlimit_as, resource.RLIM_INFINITY))

    full = {**os.environ, **(env or {})}
    full.pop(budget.ENV, None) if env is None or budget.ENV not in env else None
    return subprocess.run(
        [sys.executable, "-m", "puzzlezero", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
        preexec_fn=pre,
    )


# ---- sizes and the budget's sources ------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        ("4GiB", 4 * GiB),
        ("512MiB", 512 * MiB),
        ("512 mib", 512 * MiB),
        ("1.5G", int(1.5 * GiB)),
        ("2GB", 2 * 10**9),
        ("100kB", 100_000),
        ("64K", 64 * 1024),
        ("1000", 1000),
        (" 7 ", 7),
        ("1T", 1 << 40),
        ("off", budget.UNLIMITED),
        (12345, 12345),
    ],
)
def test_parse_size_reads_units(text: str | int, nbytes: int) -> None:
    assert parse_size(text) == nbytes


@pytest.mark.parametrize("text", ["", "lots", "4XB", "-1", "0", "0.2", "1e9", "GiB", "4 GiB extra", "nan"])
def test_parse_size_refuses_bad_text_by_name(text: str) -> None:
    with pytest.raises(PuzzleError, match="--memory-budget"):
        parse_size(text, "--memory-budget")


def _never_raises_other_than_puzzle_error(text: str) -> None:
    try:
        out = parse_size(text, "--memory-budget")
    except PuzzleError as exc:
        assert "--memory-budget" in str(exc)
    else:
        assert isinstance(out, int) and 1 <= out <= budget.UNLIMITED


_SIZE_TEXT = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"\s*[-+]?[0-9.e]{0,12}\s*[kKmMgGtTpPbBiI]{0,4}\s*", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(_SIZE_TEXT)
def test_parse_size_answers_any_text_with_a_size_or_a_named_error(text: str) -> None:
    _never_raises_other_than_puzzle_error(text)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None)
@given(_SIZE_TEXT)
def test_parse_size_answers_any_text_with_a_size_or_a_named_error_at_length(text: str) -> None:
    _never_raises_other_than_puzzle_error(text)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**6), st.sampled_from(["", "K", "KiB", "kB", "M", "MiB", "MB", "G", "GiB", "GB"]))
def test_parse_size_reads_whole_numbers_in_every_unit(n: int, unit: str) -> None:
    factor = {"": 1, "K": 1024, "KiB": 1024, "kB": 1000, "M": MiB, "MiB": MiB, "MB": 10**6}
    factor |= {"G": GiB, "GiB": GiB, "GB": 10**9}
    assert parse_size(f"{n}{unit}") == parse_size(f" {n} {unit.lower()} ") == n * factor[unit]


def test_parse_size_refuses_non_positive_ints() -> None:
    with pytest.raises(PuzzleError, match="positive"):
        parse_size(0)


def test_format_size_is_human_readable() -> None:
    assert format_size(300) == "300 bytes"
    assert format_size(1536) == "1.5 KiB"
    assert format_size(11.5 * GiB) == "11.5 GiB"
    assert format_size(1.2 * (1 << 40)) == "1.2 TiB"


def test_budget_set_in_process_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budget.ENV, "3GiB")
    assert memory_budget() == 3 * GiB
    with use_memory_budget("1GiB") as inside:
        assert inside == memory_budget() == GiB
        with use_memory_budget(512 * MiB):
            assert memory_budget() == 512 * MiB
        assert memory_budget() == GiB
    assert memory_budget() == 3 * GiB
    set_memory_budget("2GiB")
    assert memory_budget() == 2 * GiB
    set_memory_budget(None)
    assert memory_budget() == 3 * GiB


def test_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(budget.ENV, "lots")
    with pytest.raises(PuzzleError, match=r"\$PUZZLEZERO_MEMORY_BUDGET: cannot read 'lots'"):
        memory_budget()


def test_default_budget_is_a_share_of_the_machine_within_what_is_available() -> None:
    total, avail = budget.machine_memory()
    assert 0 < avail <= total
    assert 0 < memory_budget() <= min(budget.SHARE * total, avail)


def test_default_budget_stays_within_the_address_space_limit() -> None:
    code = textwrap.dedent(
        """
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))
        from puzzlezero.budget import memory_budget
        print(memory_budget())
        """
    )
    env = {k: v for k, v in os.environ.items() if k != budget.ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert 0 < int(out.stdout) < 3 * GiB


def test_check_names_estimate_budget_and_what_to_lower() -> None:
    with use_memory_budget("11.5GiB"):
        budget.check(11 * GiB, "anything", "--x")  # under: nothing
        with pytest.raises(MemoryBudgetError) as err:
            budget.check(int(1.2 * (1 << 40)), "beam search of width 10,000,000 on cube3", "--beam-width")
    assert str(err.value) == (
        "beam search of width 10,000,000 on cube3 needs about 1.2 TiB (estimated), above the memory "
        "budget of 11.5 GiB; lower --beam-width (or raise --memory-budget)"
    )


# ---- searches refused before they allocate -----------------------------------------------------
def test_absurd_beam_width_is_refused_in_process() -> None:
    with use_memory_budget(BUDGET_24GIB), pytest.raises(MemoryBudgetError) as err:
        solver.solve("cube3", "R U", search="beam", beam_width=10_000_000)
    text = str(err.value)
    assert text.startswith("beam search of width 10,000,000 on cube3 needs about ")
    assert "above the memory budget of 11.8 GiB; lower --beam-width (or raise --memory-budget)" in text


def test_absurd_beam_width_is_refused_by_the_cli_without_a_traceback() -> None:
    out = _cli(
        "solve", "cube3", "R U", "--search", "beam", "--beam-width", "10000000", env={budget.ENV: "8GiB"}
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("error: beam search of width 10,000,000 on cube3 needs about ")
    assert "above the memory budget of 8.0 GiB; lower --beam-width" in out.stderr


def test_memory_budget_option_of_solve_and_bench() -> None:
    out = _cli(
        "solve", "cube3", "R U", "--search", "beam", "--beam-width", "100000", "--memory-budget", "100MiB"
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "beam search of width 100,000 on cube3" in out.stderr and "budget of 100.0 MiB" in out.stderr
    out = _cli(
        "bench",
        "cube3",
        "--cases",
        "hard",
        "--search",
        "beam",
        "--beam-width",
        "100000",
        "--memory-budget",
        "100MiB",
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "beam search of width 100,000 on cube3" in out.stderr
    out = _cli("solve", "cube3", "R U", "--memory-budget", "4XB")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith("error: --memory-budget: cannot read '4XB'")


def test_node_cap_scaled_with_the_beam_width_stays_within_the_budget() -> None:
    cube = make("cube3")
    small = solver.resolve_options(cube, search="beam", beam_width=5000)
    assert small.max_nodes == 50_000_000  # scaled as before: 5x the default width, 5x the cap
    with use_memory_budget("2GiB"):
        # scaled, 3e9 nodes: 833 steps of 3.6M children; the budget holds the step and 101 beams
        wide = solver.resolve_options(cube, search="beam", beam_width=300_000, max_steps=1000)
        assert 10**8 < wide.max_nodes < 3 * 10**9
        assert solver.memory_estimate(cube, "beam", wide) <= 2 * GiB
        solver.check_memory(cube, wide)  # fits: a shorter search, not a refusal
        given = solver.resolve_options(
            cube, search="beam", beam_width=300_000, max_steps=1000, max_nodes=3 * 10**9
        )
        with pytest.raises(MemoryBudgetError, match="lower --beam-width"):
            solver.check_memory(cube, given)  # a cap given is kept as given, and checked
        # a width whose one step does not fit: the cap is one step's nodes, the width is refused
        wider = solver.resolve_options(cube, search="beam", beam_width=1_000_000)
        assert wider.max_nodes == 1 + 12 * 1_000_000
        with pytest.raises(MemoryBudgetError, match="^beam search of width 1,000,000 on cube3"):
            solver.check_memory(cube, wider)


def test_node_cap_and_shortcut_and_images_are_checked() -> None:
    cube, p48 = make("cube3"), make("puzzle48")
    with use_memory_budget("1GiB"):
        with pytest.raises(
            MemoryBudgetError, match=r"^bwas search of 20,000,000 nodes on cube3 needs .*lower --max-nodes"
        ):
            solver.check_memory(cube, solver.resolve_options(cube, search="bwas", max_nodes=20_000_000))
        with pytest.raises(MemoryBudgetError, match=r"^mcts search of 20,000,000 nodes on cube3 "):
            solver.check_memory(cube, solver.resolve_options(cube, search="mcts", max_nodes=20_000_000))
        with pytest.raises(MemoryBudgetError, match=r"\(4 guises a state, an ensemble of 2 members\)"):
            solver.check_memory(cube, solver.resolve_options(cube, max_nodes=3_000_000))
        with pytest.raises(MemoryBudgetError, match=r"\(16 states a call\)"):
            solver.check_memory(cube, solver.resolve_options(cube, search="gbfs", max_steps=100_000), 16)
        o = solver.resolve_options(p48, shortcut=10_000_000)
        with pytest.raises(
            MemoryBudgetError, match=r"^shortcut pass of 10,000,000 states on puzzle48 .*lower --shortcut"
        ):
            solver.check_memory(p48, o)
        solver.check_memory(p48, solver.resolve_options(p48, shortcut=2_000_000))


def test_macros_count_as_actions_of_the_search() -> None:
    cube = make("cube3")
    plain = solver.resolve_options(cube, search="beam", beam_width=20_000)
    macros = solver.resolve_options(cube, search="beam", beam_width=20_000, macros=[[0, 2], [2, 4], [4, 6]])
    with use_memory_budget(solver.memory_estimate(cube, "beam", plain)):
        solver.check_memory(cube, plain)
        with pytest.raises(MemoryBudgetError, match="^beam search of width 20,000 on cube3"):
            solver.check_memory(cube, macros)


def test_every_shipped_puzzle_default_fits_the_default_budget_of_a_24gib_machine() -> None:
    """Solve's and bench's defaults (bench: the search's own instances a call) and every search
    at the puzzle's default settings: nothing that works today is refused."""
    with use_memory_budget(BUDGET_24GIB):
        for name in solver.DEFAULTS:
            p = make(name)
            o = solver.resolve_options(p)
            solver.check_memory(p, o, solver.SEARCHES[o.search].together)
            for search, spec in solver.SEARCHES.items():
                try:
                    o = solver.resolve_options(p, search=search)
                except PuzzleError:
                    continue  # not a search of this puzzle
                solver.check_memory(p, o, spec.together)


# ---- model folders refused before they allocate ------------------------------------------------
def _model_folder(tmp_path: Path, **net: object) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    cfg = json.loads((Path(solver.__file__).parent.parent / "models" / "cube3" / "config.json").read_text())
    cfg["net"].update(net)
    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "model.npz").write_bytes(b"not read: the sizes are refused first")
    return folder


def test_huge_network_is_refused_before_it_is_built_under_an_address_space_limit(tmp_path: Path) -> None:
    """h1 200,000 and h2 100,000: 60 billion parameters. Built, it would fail on allocation under
    the 2 GiB limit (a RuntimeError, not a named error); its config refuses it first."""
    folder = _model_folder(tmp_path, h1=200_000, h2=100_000)
    code = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, resource.RLIM_INFINITY))
        from puzzlezero.errors import MemoryBudgetError
        from puzzlezero.nn import load_model
        try:
            load_model({str(folder)!r})
        except MemoryBudgetError as exc:
            print("refused:", exc)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != budget.ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"refused: the network of {folder / 'config.json'} (60,")
    assert "lower its layer sizes" in out.stdout
    cli = _cli(
        "solve",
        "cube3",
        "R U",
        "--model",
        str(folder),
        "--search",
        "bwas",
        "--max-nodes",
        "100000",
        rlimit_as=2 * GiB,
    )
    assert cli.returncode == 2 and "Traceback" not in cli.stderr
    assert cli.stderr.startswith(f"error: the network of {folder / 'config.json'}")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("h1", -5, "h1 must be >= 1"),
        ("h1", 10**30, "net.h1 is 10000"),
        ("h2", "500", "net.h2 is '500'"),
        ("h1", 1000.0, "net.h1 is 1000.0"),
        ("num_res_blocks", 10**9, "net.num_res_blocks is 1000000000"),
        ("input_dim", True, "net.input_dim is True"),
    ],
)
def test_absurd_or_negative_sizes_are_model_file_errors(
    tmp_path: Path, field: str, value: object, match: str
) -> None:
    from puzzlezero.nn import load_model

    folder = _model_folder(tmp_path, **{field: value})
    with pytest.raises(ModelFileError, match=match) as err:
        load_model(folder)
    assert "config.json" in str(err.value)


def test_parameter_count_from_the_config_matches_the_built_network() -> None:
    from puzzlezero.nn.config import NetConfig
    from puzzlezero.nn.io import resolve_model_dir, shipped_models
    from puzzlezero.nn.models import build_model, config_parameters

    configs = [
        NetConfig.from_dict(json.loads((resolve_model_dir(m) / "config.json").read_text())["net"])
        for m in shipped_models()
        if (resolve_model_dir(m) / "config.json").is_file()  # not a layered model's table of models
    ]
    configs += [
        NetConfig.from_preset("cubeconv-small", 324, num_actions=12, policy_head=True),
        NetConfig.from_preset("conv-tiny", 400, input_shape=(4, 10, 10), num_actions=4, q_head=True),
        NetConfig(input_dim=100, h1=50, h2=40, goals=("layer1", "layer2", "solved"), head_layers=3),
    ]
    for cfg in configs:
        built = sum(v.numel() for v in build_model(cfg).state_dict().values())
        assert config_parameters(cfg) == built, cfg


# ---- estimates against measured peaks ----------------------------------------------------------
def _peak(puzzle: str, search: str, n: int, **settings: object) -> tuple[int, int]:
    """(estimate, tracemalloc's peak) of one search call on ``n`` scrambles with the misplaced
    heuristic (NumPy: all its memory is traced), after a warm-up call (numba kernels loaded)."""
    p = make(puzzle)
    o = solver.resolve_options(
        p, search=search, heuristic="misplaced", fallback=False, shortcut=0, **settings
    )
    spec = solver.SEARCHES[search]
    fn = solver.resolve_entry(spec.entry, search)
    h = solver.get_heuristic(p, "misplaced", None, spec.heuristic_kind, "solved", o.options)
    starts = p.scramble(np.random.default_rng(0), n, 300)
    spec.run(fn, p, starts[:1], h, replace(o, max_nodes=200, max_steps=2))
    estimate = solver.memory_estimate(p, search, o, n)
    tracemalloc.start()
    try:
        spec.run(fn, p, starts, h, o)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return estimate, peak


@pytest.mark.parametrize(
    ("puzzle", "search", "n", "settings"),
    [
        ("cube3", "beam", 1, {"beam_width": 3000, "max_steps": 15}),
        ("puzzle15", "qbeam", 2, {"beam_width": 2000, "max_steps": 40}),
        ("cube3", "bwas", 1, {"max_nodes": 300_000, "batch": 1000, "weight": 0.6, "anytime": False}),
        ("cube3", "qstar", 4, {"max_nodes": 60_000, "batch": 200, "weight": 0.6, "anytime": False}),
        ("puzzle48", "gbfs", 16, {"max_steps": 1000}),
        ("cube3", "mcts", 1, {"max_nodes": 100_000}),
    ],
)
def test_estimates_are_within_a_small_factor_of_measured_peaks(
    puzzle: str, search: str, n: int, settings: dict[str, object]
) -> None:
    estimate, peak = _peak(puzzle, search, n, time_limit=60.0, **settings)
    assert 0.8 * peak <= estimate <= 3 * peak, (format_size(estimate), format_size(peak))


def test_shortcut_and_reduction_estimates_against_measured_peaks() -> None:
    from puzzlezero.classic.reduction import memory_estimate as reduction_bytes
    from puzzlezero.classic.reduction import solve_reduction
    from puzzlezero.search.shortcut import memory_estimate as shortcut_bytes
    from puzzlezero.search.shortcut import shortcut

    p = make("puzzle24")
    start = p.scramble(np.random.default_rng(1), 1, 500)[0]
    solve_reduction(p, start)
    tracemalloc.start()
    try:
        path = solve_reduction(p, start).actions
        _, reduction_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        shortcut(p, start, path, max_states=300_000)
        _, shortcut_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reduction_peak <= reduction_bytes(p)
    estimate = shortcut_bytes(p, 300_000)
    assert 0.8 * shortcut_peak <= estimate <= 3 * shortcut_peak, (
        format_size(estimate),
        format_size(shortcut_peak),
    )


def test_a_default_node_cap_is_lowered_to_fit_a_small_budget_but_a_given_one_is_refused() -> None:
    p = make("cube3")
    full = solver.resolve_options(p)
    with use_memory_budget(2 << 30):
        lowered = solver.resolve_options(p)
        assert full.max_nodes is not None and lowered.max_nodes is not None
        assert solver.MIN_BUDGET_NODES <= lowered.max_nodes < full.max_nodes
        solver.check_memory(p, lowered)  # the lowered default fits
        assert solver.memory_estimate(p, lowered.search, lowered) <= 2 << 30
        bigger = replace(lowered, max_nodes=lowered.max_nodes + 1_000_000)
        assert solver.memory_estimate(p, bigger.search, bigger) > 2 << 30  # the largest that fits
        given = solver.resolve_options(p, max_nodes=full.max_nodes)
        with pytest.raises(MemoryBudgetError, match="lower --max-nodes"):
            solver.check_memory(p, given)
    assert solver.resolve_options(p).max_nodes == full.max_nodes  # a roomy budget keeps the default
