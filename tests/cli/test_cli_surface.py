"""The command line as a whole: -h and --version, one meaning per flag name on every command,
help panels on the commands with many options, defaults that depend on the puzzle stated as
such and shown by `puzzlezero defaults`, and the `cases` command."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer

import puzzlezero
from puzzlezero import make, solver
from puzzlezero.cli.main import _load_commands, app, main
from puzzlezero.cli.solve_flags import Precision, SolveFlags
from puzzlezero.errors import PuzzleError

PANELS = {"Search", "Budget", "Anytime", "Output", "Expert"}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def commands() -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command of the tree (typer's click commands), with the words that name it."""
    _load_commands()

    def walk(path: tuple[str, ...], cmd: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
        if hasattr(cmd, "commands"):  # a group
            for name, sub in cmd.commands.items():
                yield from walk((*path, name), sub)
        else:
            yield path, cmd

    yield from walk((), typer.main.get_command(app))


def options(cmd: Any) -> dict[str, Any]:
    """A command's options by each of their names."""
    return {name: p for p in cmd.params if not p.opts[0].isidentifier() for name in p.opts}


def kind(option: Any) -> Any:
    """The Python type an option was declared with."""
    return option.type_descriptor.annotation


def test_version_and_dash_h_on_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and out == f"puzzlezero {puzzlezero.__version__}\n"
    rc, out, _ = run(capsys, "-h")
    assert rc == 0 and "Usage:" in out and "COMMAND" in out
    named = list(commands())
    assert {"solve", "bench", "cases", "defaults", "value"} <= {path[0] for path, _ in named}
    for path, _ in named:
        rc, out, _ = run(capsys, *path, "-h")
        assert rc == 0 and "Usage:" in out and f" {' '.join(path)} [OPTIONS]" in out, path


def test_help_paragraphs_fill_a_narrow_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A docstring wrapped at 100 columns reads as paragraphs in an 80-column terminal: no line
    of a command's help ends where the source's line did (long before the terminal's edge)."""
    for _, cmd in commands():
        assert all("\n" not in p for p in (cmd.help or "").split("\n\n")), cmd.name
    monkeypatch.setenv("COLUMNS", "80")
    for path in (("serve",), ("scramble",), ()):
        rc, out, _ = run(capsys, *path, "-h")
        lines = [line.strip() for line in out.splitlines() if "│" not in line]  # the text, not the tables
        for line, after in itertools.pairwise(lines):  # a line ends short only where its paragraph does
            if after[:1].isalpha() and after[:1].islower() and " " in line:
                assert len(line) > 52 or line.endswith((".", ":", ")")), (path, line, after)


def test_one_meaning_per_flag_name_on_every_command() -> None:
    """--json is a flag that prints JSON, --out takes a file (or folder) to write, --cases is a
    case file, never a count; --n is a count."""
    seen = 0
    for path, cmd in commands():
        opts = options(cmd)
        if "--json" in opts:
            assert opts["--json"].is_flag, path
            seen += 1
        if "--out" in opts:
            assert not opts["--out"].is_flag and kind(opts["--out"]) is Path, path
        if "--cases" in opts:
            assert kind(opts["--cases"]) in (Path, list[Path]), path  # a case file, or several
        if "--n" in opts:
            assert kind(opts["--n"]) is int, path
    assert seen >= 8
    assert ("analyze",) not in dict(commands())  # one command for it: report analysis


@pytest.mark.parametrize("name", ["solve", "bench"])
def test_the_solving_commands_group_their_options_in_panels(name: str) -> None:
    cmd = dict(commands())[(name,)]
    panels = {getattr(p, "rich_help_panel", None) for p in cmd.params}
    assert PANELS <= panels
    opts = options(cmd)
    assert (opts["--time-limit"].rich_help_panel, opts["--images"].rich_help_panel) == ("Budget", "Anytime")
    assert opts["--precision"].rich_help_panel == "Expert" and opts["--json"].rich_help_panel == "Output"


def test_a_default_that_depends_on_the_puzzle_is_called_the_puzzles(
    capsys: pytest.CaptureFixture[str],
) -> None:
    opts = options(dict(commands())[("solve",)])
    for flag in ("--search", "--weight", "--batch", "--max-nodes", "--time-limit", "--images", "--shortcut"):
        assert "the puzzle's, `puzzlezero defaults PUZZLE`" in (opts[flag].help or ""), flag
    # cube3 searches 3 images by default, the table's default is 0: the help says both
    assert "else 0" in (opts["--images"].help or "")
    rc, out, _ = run(capsys, "defaults", "cube3", "--json")
    shown = json.loads(out)
    d = solver.defaults_for("cube3")
    assert rc == 0 and shown["options"]["images"] == 3 and shown["search"] == d.search
    assert shown["time_limit"] == d.time_limit and shown["stages"] == [list(s) for s in d.stages]
    assert shown["anytime"] is True and shown["fallback"] == "group"
    rc, out, _ = run(capsys, "defaults", "puzzle15")
    assert rc == 0 and "stages               none (one search)" in out and "images               0" in out
    rc, _, err = run(capsys, "defaults", "cube4")
    assert rc == 2 and "cube3" in err  # an unknown name lists the valid ones


def test_precision_is_passed_as_the_heuristic_option() -> None:
    p = make("cube3")
    flags = SolveFlags(precision=Precision.float32)
    if "precision" in solver.OPTIONS:
        assert flags.options(p).option("precision") == "float32"
        assert SolveFlags().options(p) == solver.resolve_options(p)
    else:
        with pytest.raises(PuzzleError, match="--precision"):
            flags.options(p)


def test_cases_writes_a_case_file_that_bench_reads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_path = tmp_path / "p8.json"
    rc, out, _ = run(
        capsys, "cases", "make", "puzzle8", "--n", "3", "--depth", "10", "20", "--seed", "1",
        "--out", str(out_path),
    )  # fmt: skip
    data = json.loads(out_path.read_text())
    assert rc == 0 and out == f"wrote 3 cases to {out_path}\n"
    assert data["puzzle"] == "puzzle8" and [c["id"] for c in data["cases"]] == [0, 1, 2]
    assert data["source"] == "puzzlezero cases make puzzle8 --n 3 --depth 10 20 --seed 1"
    rc, out, _ = run(capsys, "cases", "make", "puzzle8", "--n", "3", "--depth", "10", "20", "--seed", "1")
    assert rc == 0 and json.loads(out) == data  # the same seed, the same states; JSON on stdout
    rc, out, _ = run(
        capsys, "bench", "puzzle8", "--cases", str(out_path), "--heuristic", "misplaced", "--json"
    )
    report = json.loads(out)
    assert rc == 0 and report["summary"]["cases"] == 3 and report["summary"]["solved_pct"] == 100.0


def test_cube2_cases_carry_their_optimal_lengths(capsys: pytest.CaptureFixture[str]) -> None:
    table = pytest.importorskip("puzzlezero.puzzles.cube.table")
    rc, out, _ = run(capsys, "cases", "make", "cube2", "--n", "4", "--seed", "3")
    data = json.loads(out)
    p = make("cube2")
    lengths = table.distance(np.stack([p.parse(c["facelets"]) for c in data["cases"]]))
    assert rc == 0 and [c["optimal_length"] for c in data["cases"]] == [int(x) for x in lengths]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--depth", "20", "10"], "--depth LO HI needs 0 <= LO <= HI, got 20 10"),
        (["--n", "0"], "--n must be at least 1, got 0"),
    ],
)
def test_cases_refuses_bad_counts_and_depths(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    rc, out, err = run(capsys, "cases", "make", "puzzle8", *args)
    assert rc == 2 and out == "" and f"error: {message}" in err


def test_the_older_cases_form_says_how_it_is_written_now(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "puzzle15", "--n", "3"]) == 2
    err = capsys.readouterr().err
    assert "puzzlezero cases make puzzle15" in err and "Traceback" not in err
