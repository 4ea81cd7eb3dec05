"""Property tests over every parser of outside input: arbitrary text, bytes and JSON values give a
value or a :class:`~puzzlezero.errors.PuzzleError` (a named, one-line error), never another
exception.

Covered: every registered puzzle's state text (``parse`` and ``solver.read_state``, which also
takes JSON arrays), its move text (``parse_moves``, as a string and as a list), Sokoban level
text and level files, bench case files, ``-``/``@FILE`` state arguments, move-option files
(``--macros``), model folders' ``config.json``, training ``--set`` assignments, ``--ids`` ranges
and memory sizes. Each property runs a quick profile in the default run (:data:`QUICK` examples)
and :data:`SLOW` examples behind ``-m slow``.
"""

from __future__ import annotations

import json
import string
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import puzzlezero as pz
from puzzlezero import solver
from puzzlezero.errors import PuzzleError

#: examples per property in the default run, and behind ``-m slow``
QUICK, SLOW = 150, 10_000

NAMES = pz.names()
SCRATCH = Path(tempfile.mkdtemp(prefix="pz-fuzz-"))  # files written by the properties (one per kind)


def profiles(strategy: st.SearchStrategy[Any]) -> Callable[[Callable[..., None]], tuple[Any, Any]]:
    """A property as two tests: ``QUICK`` examples, and ``SLOW`` examples marked ``slow``."""

    def make(fn: Callable[..., None]) -> tuple[Any, Any]:
        common = {"deadline": None, "suppress_health_check": list(HealthCheck), "derandomize": False}
        quick = settings(max_examples=QUICK, **common)(given(strategy)(fn))
        slow = pytest.mark.timeout(3600)(
            pytest.mark.slow(settings(max_examples=SLOW, **common)(given(strategy)(fn)))
        )
        return quick, slow

    return make


def named_or_value(fn: Callable[[], Any]) -> Any:
    """``fn()``'s value, or ``None`` when it raised a :class:`PuzzleError` with a message; any other
    exception fails the property."""
    try:
        return fn()
    except PuzzleError as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        return None


# ---- building blocks ------------------------------------------------------------------------------
#: characters the parsers care about, plus the odd ones (control characters, non-ASCII, NUL)
SPECIAL = "URFDLBurfdlbXxyzMES2'’′ ,;:\n\t\r0123456789#$.*@+_-[](){}\"\\/=\x00\x1b\u00e9\u2028\ufeff"
texts = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=SPECIAL, max_size=200),
    st.text(alphabet=string.printable, max_size=400),
    st.builds(lambda s, n: s * n, st.text(alphabet=SPECIAL, min_size=1, max_size=8), st.integers(1, 5_000)),
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=SPECIAL, max_size=30),
    lambda children: (
        st.lists(children, max_size=12) | st.dictionaries(st.text(max_size=8), children, max_size=6)
    ),
    max_leaves=60,
)
puzzles = st.sampled_from(NAMES)


def _valid_text(name: str) -> st.SearchStrategy[str]:
    """Near-valid state text for ``name``: the formatted goal or a scramble, mutated a little."""
    p = pz.make(name)
    base = p.format(p.goals(1)[0])
    return st.tuples(
        st.just(base), st.integers(0, max(len(base) - 1, 0)), st.text(alphabet=SPECIAL, max_size=3)
    ).map(lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + 1 :])


state_texts = puzzles.flatmap(lambda n: st.tuples(st.just(n), st.one_of(texts, _valid_text(n))))


# ---- states and moves ------------------------------------------------------------------------------
@profiles(state_texts)
def _state_text(case: tuple[str, str]) -> None:
    name, text = case
    p = pz.make(name)
    state = named_or_value(lambda: p.parse(text))
    if state is not None:  # what parses is a legal state that formats and parses back
        p.validate(np.asarray(state))
        np.testing.assert_array_equal(p.parse(p.format(state)), state)
    named_or_value(lambda: solver.read_state(p, text))


test_state_text, test_state_text_slow = _state_text


@profiles(st.tuples(puzzles, json_values))
def _state_json(case: tuple[str, Any]) -> None:
    """``read_state`` takes what a JSON body holds: text, arrays of numbers, anything."""
    name, value = case
    p = pz.make(name)
    state = named_or_value(lambda: solver.read_state(p, value))
    if state is not None:
        assert state.shape == tuple(p.state_shape)


test_state_json, test_state_json_slow = _state_json


@profiles(st.tuples(puzzles, st.one_of(texts, st.lists(st.text(alphabet=SPECIAL, max_size=6), max_size=30))))
def _moves(case: tuple[str, Any]) -> None:
    name, text = case
    p = pz.make(name)
    moves = named_or_value(lambda: p.parse_moves(text))
    if moves is not None:
        assert all(0 <= a < p.num_actions for a in moves)
        p.apply_moves(p.goal(), moves)


test_moves, test_moves_slow = _moves


# ---- files -----------------------------------------------------------------------------------------
LEVEL = "\n".join(pz.make("sokoban").format(pz.make("sokoban").goals(1)[0]).splitlines())
level_lines = st.lists(
    st.one_of(
        st.sampled_from(["; 0", "; 1", ";", "; x", "", "; 99999999999999999999"]),
        st.sampled_from(LEVEL.splitlines()),
        st.text(alphabet="#$.*@+ ;0x\t\u00e9", max_size=14),
    ),
    max_size=40,
)
#: numbers of more digits than Python converts (4,300): json.loads raises ValueError, not JSONDecodeError
huge_numbers = st.integers(4_290, 4_400).map(lambda n: "1" * n)
raw_bytes = st.one_of(
    st.binary(max_size=300),
    huge_numbers.map(str.encode),
    huge_numbers.map(lambda n: f'{{"cases": [{{"id": {n}, "optimal_length": {n}}}], "net": {n}}}'.encode()),
    texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
    level_lines.map(lambda lines: "\n".join(lines).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
)


@profiles(level_lines)
def _level_text(lines: list[str]) -> None:
    from puzzlezero.puzzles.sokoban.levels import read_levels

    p = pz.make("sokoban")
    for _, state in named_or_value(lambda: read_levels(p, "\n".join(lines), "fuzz.txt")) or []:
        p.validate(state)


test_level_text, test_level_text_slow = _level_text


def _cases_json(name: str) -> st.SearchStrategy[Any]:
    key = pz.make(name).json_key
    case = st.fixed_dictionaries(
        {},
        optional={
            "id": json_values,
            key: st.one_of(json_values, _valid_text(name)),
            "scramble": st.one_of(texts, st.just("R U")),
            "optimal_length": json_values,
        },
    )
    return st.one_of(
        json_values,
        st.lists(case, max_size=5),
        st.fixed_dictionaries({"cases": st.lists(case, max_size=5)}, optional={"puzzle": json_values}),
    )


cases_files = puzzles.flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.one_of(_cases_json(n).map(lambda v: json.dumps(v).encode()), raw_bytes),
        st.sampled_from(["cases.json", "levels.txt", "cases"]),
        st.one_of(st.none(), st.tuples(st.none() | st.integers(-5, 5), st.none() | st.integers(-5, 5))),
    )
)


@profiles(cases_files)
def _bench_cases(case: tuple[str, bytes, str, Any]) -> None:
    """A bench ``--cases`` file of any content (JSON cases, level files by suffix or by header)."""
    from puzzlezero.case_files import load_cases

    name, data, filename, ids = case
    path = SCRATCH / filename
    path.write_bytes(data)
    p = pz.make(name)
    for c in named_or_value(lambda: load_cases(p, path, ids)) or []:
        p.validate(c.state)
        assert c.optimal_length is None or isinstance(c.optimal_length, int)


test_bench_cases, test_bench_cases_slow = _bench_cases


@profiles(st.tuples(raw_bytes, st.sampled_from(["-", "@"])))
def _state_argument(case: tuple[bytes, str]) -> None:
    """``@FILE`` and ``-`` (stdin) state arguments of the CLI, then the cube's parser."""
    import io
    import sys

    from puzzlezero.cli.puzzle_cmds import read_state_text

    data, how = case
    path = SCRATCH / "state.txt"
    path.write_bytes(data)
    stdin = sys.stdin
    try:
        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        text = named_or_value(lambda: read_state_text("-" if how == "-" else f"@{path}"))
    finally:
        sys.stdin = stdin
    if text is not None:
        named_or_value(lambda: pz.make("cube3").parse(text))


test_state_argument, test_state_argument_slow = _state_argument


@profiles(st.tuples(puzzles, raw_bytes))
def _macros_file(case: tuple[str, bytes]) -> None:
    from puzzlezero.puzzles.macros import read_macros

    name, data = case
    path = SCRATCH / "macros.txt"
    path.write_bytes(data)
    named_or_value(lambda: read_macros(pz.make(name), path))


test_macros_file, test_macros_file_slow = _macros_file


NET_KEYS = [
    "input_dim",
    "h1",
    "h2",
    "num_res_blocks",
    "encoding",
    "num_actions",
    "policy_head",
    "q_head",
    "goals",
    "head_layers",
    "arch",
    "channels",
    "input_shape",
    "history",
]
small_json = st.one_of(
    st.integers(-3, 40),
    st.sampled_from(["mlp", "conv", "onehot", "x", "", None, True, [], [2, 3, 3]]),
    json_values,
)
model_configs = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"format": st.sampled_from([1, 2, 3, "1", None]), "puzzle": st.sampled_from([*NAMES, "nope", 3])},
        optional={"net": st.dictionaries(st.sampled_from(NET_KEYS + ["bogus"]), small_json, max_size=8)},
    ),
)


@profiles(st.one_of(model_configs.map(lambda v: json.dumps(v).encode()), raw_bytes))
def _model_config(data: bytes) -> None:
    """A model folder's ``config.json`` (no weights beside it): named errors before any allocation
    beyond a small budget."""
    from puzzlezero.budget import use_memory_budget
    from puzzlezero.nn.io import load_model

    folder = SCRATCH / "model"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_bytes(data)
    with use_memory_budget("64MiB"):
        named_or_value(lambda: load_model(folder))


test_model_config, test_model_config_slow = _model_config


# ---- options ----------------------------------------------------------------------------------------
def _config_keys() -> list[str]:
    from dataclasses import fields

    from puzzlezero.train import TrainConfig

    return [f.name for f in fields(TrainConfig)]


assignments = st.tuples(
    st.sampled_from(_config_keys() + ["nope", ""]),
    st.one_of(
        texts,
        json_values.map(json.dumps),
        huge_numbers,
        st.sampled_from(["none", "null", "true", "1e400", "-1", "nan", "[" * 5000]),
    ),
).map(lambda kv: f"{kv[0]}={kv[1]}")


@profiles(st.lists(st.one_of(assignments, texts), min_size=1, max_size=3))
def _train_overrides(items: list[str]) -> None:
    """``puzzlezero train --set key=value``."""
    from puzzlezero.train import TrainConfig

    named_or_value(lambda: TrainConfig(puzzle="cube2").with_overrides(items))


test_train_overrides, test_train_overrides_slow = _train_overrides


@profiles(st.one_of(texts, st.integers(), st.from_regex(r"\s*-?[0-9.e+]{0,12}\s*[KMGTPkmgtp]?i?[Bb]?\s*")))
def _sizes_and_ids(text: Any) -> None:
    """``--memory-budget`` / ``$PUZZLEZERO_MEMORY_BUDGET`` sizes and ``--ids A:B`` ranges."""
    from puzzlezero.budget import parse_size
    from puzzlezero.case_files import parse_ids

    size = named_or_value(lambda: parse_size(text))
    assert size is None or size >= 1
    if isinstance(text, str):
        named_or_value(lambda: parse_ids(text))


test_sizes_and_ids, test_sizes_and_ids_slow = _sizes_and_ids


# ---- what the properties found, kept as plain tests -----------------------------------------------
def test_inputs_the_properties_found_are_named_errors(tmp_path: Path) -> None:
    """Numbers of thousands of digits (``int()`` and ``json.loads`` raise a bare ``ValueError``
    past 4,300 digits) in tile text, case files, a model's config.json and ``--set``."""
    from puzzlezero.case_files import load_cases
    from puzzlezero.nn.io import load_model
    from puzzlezero.train import TrainConfig

    digits = "1" * 4_400
    for name, text in [("puzzle8", "0" * 4_301), ("puzzle15", digits)]:
        with pytest.raises(PuzzleError):
            pz.make(name).parse(text)
    cases = tmp_path / "cases.json"
    cases.write_text(f'{{"cases": [{{"scramble": "R", "optimal_length": {digits}}}]}}')
    with pytest.raises(PuzzleError, match="unreadable cases file"):
        load_cases(pz.make("cube3"), cases)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text(digits)
    with pytest.raises(PuzzleError, match="unreadable or corrupt JSON"):
        load_model(tmp_path / "model")
    for item in (f"batch_size={digits}", "batch_size=" + "[" * 5_000):
        with pytest.raises(PuzzleError, match="batch_size"):
            TrainConfig(puzzle="cube2").with_overrides([item])
