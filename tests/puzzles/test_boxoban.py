"""Boxoban level files (``; N`` headers, 10 rows per level) as ``bench --cases`` reads them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puzzlezero import make
from puzzlezero.case_files import load_cases, parse_ids
from puzzlezero.cli.main import main
from puzzlezero.errors import LevelFileError, PuzzleError
from puzzlezero.nn import build_model, save_model
from puzzlezero.nn.config import NetConfig
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.sokoban import BOX, TARGET, WALL
from puzzlezero.puzzles.sokoban.levels import looks_like_level_file, read_level_dir, read_levels
from tests.conftest import load_bench

WALL_TARGET = WALL | TARGET

LEVEL_0 = [
    "##########",
    "#        #",
    "# $  .   #",
    "#   ##   #",
    "# $ .  $ #",
    "#  .     #",
    "#    @ $ #",
    "#  .     #",
    "#        #",
    "##########",
]
LEVEL_1 = [  # with a box on a target and the agent on a target
    "##########",
    "###    ###",
    "#  $ .   #",
    "# #*## # #",
    "#   +  $ #",
    "# .  $   #",
    "#   ##   #",
    "# #    # #",
    "#        #",
    "##########",
]
LEVEL_2 = [  # one push from solved: the agent pushes the last box right onto its target
    "##########",
    "#        #",
    "# **     #",
    "#  *     #",
    "#   @$.  #",
    "#        #",
    "#        #",
    "#        #",
    "#        #",
    "##########",
]


def level_text(*levels: tuple[int, list[str]]) -> str:
    """Levels in the published layout: '; N', the rows, a blank line after each."""
    return "".join(f"; {n}\n" + "\n".join(rows) + "\n\n" for n, rows in levels)


@pytest.fixture(scope="module")
def p():
    return make("sokoban")


def test_the_registered_puzzle_is_boxobans_board(p):
    assert (p.height, p.width, p.num_boxes) == (10, 10, 4)
    assert p.scramble(np.random.default_rng(0), 3, 10).shape == (3, 100)


def test_levels_are_read_in_file_order(p):
    text = level_text((0, LEVEL_0), (1, LEVEL_1), (7, LEVEL_2))
    assert looks_like_level_file(text) and not looks_like_level_file('{"cases": []}')
    levels = read_levels(p, text, "000.txt")
    assert [n for n, _ in levels] == [0, 1, 7]
    assert [p.rows(s) for _, s in levels] == [LEVEL_0, LEVEL_1, LEVEL_2]
    for _, s in levels:
        assert np.count_nonzero(s & BOX) == np.count_nonzero(s & TARGET) == 4
    # Windows line ends and no blank line at the end read the same
    crlf = text.rstrip("\n").replace("\n", "\r\n")
    assert [p.rows(s) for _, s in read_levels(p, crlf, "000.txt")] == [LEVEL_0, LEVEL_1, LEVEL_2]


def _bad(p, text: str) -> str:
    with pytest.raises(LevelFileError) as err:
        read_levels(p, text, "bad.txt")
    assert isinstance(err.value, PuzzleError) and "\n" not in str(err.value)
    return str(err.value)


def test_malformed_files_give_named_errors_with_line_numbers(p):
    short = LEVEL_0[:5] + LEVEL_0[6:]
    assert _bad(p, level_text((0, LEVEL_1), (1, short))) == (
        "bad.txt: line 13: level 1 has 9 rows; a level has 10 rows of 10 characters"
    )
    unknown = LEVEL_0[:4] + ["# $ .x $ #"] + LEVEL_0[5:]
    assert _bad(p, level_text((0, unknown))) == (
        "bad.txt: line 6: unknown character 'x' in column 6 of level 0; use '#' wall, ' ' floor, "
        "'$' box, '.' target, '*' box on target, '@' agent, '+' agent on target"
    )
    two = LEVEL_0[:1] + ["#@       #"] + LEVEL_0[2:]
    assert _bad(p, level_text((0, two))) == (
        "bad.txt: line 1: level 0 has 2 agents (line 3 column 2, line 8 column 6); a level has exactly one '@' or '+'"
    )
    none = LEVEL_0[:6] + ["#      $ #"] + LEVEL_0[7:]
    assert _bad(p, level_text((0, none))) == (
        "bad.txt: line 1: level 0 has 0 agents; a level has exactly one '@' or '+'"
    )
    extra_box = LEVEL_0[:1] + ["#   $    #"] + LEVEL_0[2:]
    assert _bad(p, level_text((3, LEVEL_0), (4, extra_box))) == (
        "bad.txt: line 13: level 4 has 5 boxes but 4 targets; a level has as many of each"
    )
    wide = LEVEL_0[:2] + ["# $  .    #"] + LEVEL_0[3:]
    assert _bad(p, level_text((0, wide))) == "bad.txt: line 4: row 3 of level 0 has 11 characters, not 10"
    open_wall = ["#### #####"] + LEVEL_0[1:]
    assert _bad(p, level_text((0, open_wall))) == (
        "bad.txt: line 1: level 0: row 0 col 4 is floor on the border and the agent can reach it: "
        "the level must be closed by walls"
    )
    assert _bad(p, "\n".join(LEVEL_0)) == (
        "bad.txt: line 1: a row outside a level: each level starts with a '; N' header line"
    )
    assert (
        _bad(p, "; x\n" + "\n".join(LEVEL_0))
        == "bad.txt: line 1: a header is '; N' with the level's number, got '; x'"
    )
    assert _bad(p, "; 3 levels\n" + "\n".join(LEVEL_0)) == (
        "bad.txt: line 1: a header is '; N' with the level's number, got '; 3 levels'"
    )
    assert "got '; ²'" in _bad(p, "; ²\n" + "\n".join(LEVEL_0))
    assert _bad(p, level_text((2, LEVEL_0), (2, LEVEL_1))) == (
        "bad.txt: line 13: level 2 appears twice (first on line 1)"
    )
    assert (
        _bad(p, "\n\n") == "bad.txt: no levels: a level file has '; N' header lines, each followed by 10 rows"
    )


def test_bench_reads_a_level_file_and_a_directory(p, tmp_path):
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "000.txt").write_text(level_text((0, LEVEL_0), (1, LEVEL_1)))
    (tmp_path / "set" / "001.txt").write_text(level_text((0, LEVEL_2), (1, LEVEL_0), (2, LEVEL_1)))
    one = load_cases(p, tmp_path / "set" / "001.txt")
    assert [c.id for c in one] == ["001:0", "001:1", "001:2"] and one[0].optimal_length is None
    assert p.rows(one[0].state) == LEVEL_2
    both = load_cases(p, tmp_path / "set")
    assert [c.id for c in both] == ["000:0", "000:1", "001:0", "001:1", "001:2"]
    assert [c.id for c in load_cases(p, tmp_path / "set", parse_ids("1:2"))] == ["000:1", "001:1"]
    # detected by content whatever the file is called; JSON case files still read as before
    (tmp_path / "levels.dat").write_text(level_text((5, LEVEL_0)))
    assert [c.id for c in load_cases(p, tmp_path / "levels.dat")] == ["levels:5"]
    (tmp_path / "cases.json").write_text(
        json.dumps({"puzzle": "sokoban", "cases": [{"id": 3, "grid": LEVEL_0}]})
    )
    assert [c.id for c in load_cases(p, tmp_path / "cases.json")] == [3]
    with pytest.raises(PuzzleError, match="holds Sokoban levels .* bench them as sokoban, not 'lightsout7'"):
        load_cases(make("lightsout7"), tmp_path / "set" / "000.txt")
    with pytest.raises(PuzzleError, match="no levels with numbers in 5:9"):
        load_cases(p, tmp_path / "set", parse_ids("5:9"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(LevelFileError, match=r"empty: no level files \(\*\.txt\) in this directory"):
        read_level_dir(p, tmp_path / "empty")
    (tmp_path / "set" / "002.txt").write_text(level_text((0, LEVEL_0[:9])))
    with pytest.raises(LevelFileError, match=r"set/002.txt: line 1: level 0 has 9 rows"):
        load_cases(p, tmp_path / "set")


def test_the_shared_benchmark_levels_read_the_same_from_boxoban_text(p, tmp_path):
    """The shared benchmark is Boxoban unfiltered/test/000.txt: written back in that layout, the
    level file gives the same states."""
    cases = load_bench("sokoban")["cases"][:20]
    (tmp_path / "000.txt").write_text(level_text(*[(c["id"], c["grid"]) for c in cases]))
    levels = load_cases(p, tmp_path / "000.txt")
    assert [c.id for c in levels] == [f"000:{c['id']}" for c in cases]
    for case, lev in zip(cases, levels, strict=True):
        np.testing.assert_array_equal(lev.state, p.parse("\n".join(case["grid"])))


def test_cli_bench_on_a_level_file(p, tmp_path, capsys):
    model = tmp_path / "model"
    cfg = NetConfig.from_preset("conv-tiny", inputs.dim(p, "grid"), input_shape=inputs.shape(p, "grid"))
    save_model(model, build_model(cfg, seed=0), puzzle="sokoban")
    levels = tmp_path / "000.txt"
    levels.write_text(level_text((0, LEVEL_2), (1, LEVEL_2)))
    report = tmp_path / "out.json"
    argv = ["bench", "sokoban", "--cases", str(levels), "--model", str(model), "--out", str(report)]
    assert main([*argv, "--weight", "1", "--batch", "10", "--time-limit", "20"]) == 0
    out = json.loads(report.read_text())
    assert [r["id"] for r in out["results"]] == ["000:0", "000:1"]
    assert [r["solution"] for r in out["results"]] == [["R"], ["R"]] and out["summary"]["solved_pct"] == 100.0
    bad = tmp_path / "bad.txt"
    bad.write_text(level_text((0, LEVEL_0[:9])))
    capsys.readouterr()
    assert main(["bench", "sokoban", "--cases", str(bad), "--model", str(model)]) != 0
    err = capsys.readouterr().err
    assert f"{bad}: line 1: level 0 has 9 rows; a level has 10 rows of 10 characters" in err.replace("\n", "")
    assert "Traceback" not in err


def test_training_states_from_the_goal_configurations_of_level_files(p, tmp_path):
    from dataclasses import replace

    from puzzlezero.puzzles.sokoban.generator import goal_configurations
    from puzzlezero.puzzles.sokoban.levels import read_level_states
    from puzzlezero.train import DAVITrainer
    from tests.conftest import tiny_train_config

    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "000.txt").write_text(level_text((0, LEVEL_0), (1, LEVEL_1)))
    levels = read_level_states(p, tmp_path / "train")
    assert levels.shape == (2, 100)
    goals = goal_configurations(levels, np.random.default_rng(0), 10, 10)
    rooms = p.with_rooms(goals)
    assert rooms.name == "sokoban" and p.rooms is None and rooms.rooms.shape == (2, 100)
    states = rooms.scramble(np.random.default_rng(1), 200, (1, 100))
    layouts = {bytes(s & WALL_TARGET) for s in states}
    assert layouts == {bytes(lev & WALL_TARGET) for lev in levels}  # the rooms of the levels, both used
    assert (np.count_nonzero(states & BOX, axis=1) == 4).all()
    with pytest.raises(PuzzleError, match="room 0 is not a goal configuration"):
        p.with_rooms(levels)

    cfg = tiny_train_config(puzzle="sokoban", preset="conv-tiny", max_scramble=20, max_iterations=10)
    run = DAVITrainer(replace(cfg, rooms=str(tmp_path / "train")), tmp_path / "run")
    assert run.puzzle.rooms is not None and run.puzzle.rooms.shape == (2, 100)
    run.run()
    again = DAVITrainer(
        replace(cfg, rooms=str(tmp_path / "train"), max_iterations=20), tmp_path / "run", resume=True
    )
    again.run()
    assert again.counters.iteration == 20
    with pytest.raises(PuzzleError, match=r"changed settings \['rooms'\]"):
        DAVITrainer(replace(cfg, max_iterations=30), tmp_path / "run", resume=True)
    with pytest.raises(PuzzleError, match="rooms \\(Sokoban level files\\) are for sokoban, not cube2"):
        DAVITrainer(tiny_train_config(rooms=str(tmp_path / "train")), tmp_path / "cube")
    with pytest.raises(LevelFileError, match="nosuch: no such level file or directory"):
        DAVITrainer(replace(cfg, rooms=str(tmp_path / "nosuch")), tmp_path / "run2")
    (tmp_path / "more.txt").write_text(level_text((7, LEVEL_1)))
    several = DAVITrainer(
        replace(cfg, rooms=f"{tmp_path / 'train'}, {tmp_path / 'more.txt'}"), tmp_path / "run3"
    )
    assert several.puzzle.rooms is not None
    assert several.puzzle.rooms.shape == (3, 100)  # a directory and a file
    with pytest.raises(LevelFileError, match="nosuch: no such level file or directory"):
        DAVITrainer(replace(cfg, rooms=f"{tmp_path / 'train'},{tmp_path / 'nosuch'}"), tmp_path / "run4")
    with pytest.raises(PuzzleError, match="an empty path in the list"):
        DAVITrainer(replace(cfg, rooms=f"{tmp_path / 'train'},"), tmp_path / "run5")


def test_a_large_level_file_reads_fast_and_as_parsed(p, monkeypatch):
    """The vectorised reader gives what parsing each level gives, at Boxoban's 900,000-level scale
    in seconds rather than minutes: every well-formed level is read by the vectorised path (about
    16 us a level), none by the checked parser of one level (about 400 us), which is counted here
    rather than timed."""
    import sys

    module = sys.modules[read_levels.__module__]
    one_by_one = []

    def checked(*args, **kwargs):
        one_by_one.append(args[3])  # the level's number
        return checked_level(*args, **kwargs)

    checked_level = module._level
    monkeypatch.setattr(module, "_level", checked)
    rng = np.random.default_rng(0)
    states = p.scramble(rng, 3000, (1, 60))
    text = "".join(f"; {i}\n" + p.format(s) + "\n\n" for i, s in enumerate(states))
    levels = read_levels(p, text, "big.txt")
    np.testing.assert_array_equal(np.stack([s for _, s in levels]), states)
    assert one_by_one == []
    bad = text.replace("; 7\n#", "; 7\n%", 1)  # one unknown character: that level alone is checked
    with pytest.raises(LevelFileError, match="big.txt: line"):
        read_levels(p, bad, "big.txt")
    assert one_by_one == [7]


UNSOLVABLE = [  # the box can only slide along the bottom wall, away from its target
    "##########",
    "#.       #",
    "#        #",
    "#        #",
    "#        #",
    "#        #",
    "#        #",
    "#        #",
    "#  $@    #",
    "##########",
]


def test_cli_bench_with_dead_square_pruning(p, tmp_path, capsys):
    model = tmp_path / "model"
    cfg = NetConfig.from_preset("conv-tiny", inputs.dim(p, "grid"), input_shape=inputs.shape(p, "grid"))
    save_model(model, build_model(cfg, seed=0), puzzle="sokoban")
    levels = tmp_path / "000.txt"
    levels.write_text(level_text((0, LEVEL_2), (1, UNSOLVABLE)))
    reports = {}
    for flag in ([], ["--prune-dead-squares"]):
        out = tmp_path / f"out{len(flag)}.json"
        argv = ["bench", "sokoban", "--cases", str(levels), "--model", str(model), "--out", str(out)]
        assert main([*argv, *flag, "--weight", "1", "--batch", "10", "--time-limit", "30"]) == 0
        reports[bool(flag)] = json.loads(out.read_text())
    plain, pruned = reports[False], reports[True]
    assert "prune_dead_squares" not in plain["summary"] and pruned["summary"]["prune_dead_squares"] is True
    for rep in (plain, pruned):
        assert [(r["solved"], r["status"]) for r in rep["results"]] == [
            (True, "solved"),
            (False, "exhausted"),
        ]
        assert rep["results"][0]["solution"] == ["R"]
    # the open room lets the box slide along the wall: many states without pruning, none with it
    assert pruned["results"][1]["nodes_generated"] <= 5 < plain["results"][1]["nodes_generated"]
    capsys.readouterr()
    assert main(["bench", "lightsout7", "--cases", str(levels), "--prune-dead-squares"]) != 0
    assert "--prune-dead-squares is for sokoban, not lightsout7" in capsys.readouterr().err


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["; 0", "; 1", ";", "; x", ""]),
            st.sampled_from(LEVEL_0 + LEVEL_1),
            st.text(alphabet="#$.*@+ ;0x\t", max_size=12),
        ),
        max_size=30,
    )
)
def test_any_text_reads_or_raises_a_level_file_error(lines):
    p = make("sokoban")
    try:
        levels = read_levels(p, "\n".join(lines), "fuzz.txt")
    except LevelFileError as exc:
        assert str(exc).startswith("fuzz.txt: ")
        return
    for _, s in levels:
        p.validate(s)
