"""The puzzle commands of the CLI: list, scramble, validate, show (run in-process through main())."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from puzzlezero.cli.main import main

SOLVED = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "list")
    assert rc == 0
    names = out.split()
    for n in ["cube3", "cube2", "puzzle15", "puzzle24", "puzzle35", "puzzle48", "lightsout7", "sokoban"]:
        assert n in names
    rc, out, _ = run(capsys, "list", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rc == 0 and set(rows) == set(names)
    assert (rows["cube3"]["search"], rows["cube3"]["anytime"]) == ("qstar", True)
    assert (rows["puzzle15"]["search"], rows["puzzle15"]["anytime"]) == ("bwas", False)
    assert (rows["puzzle35"]["search"], rows["puzzle35"]["anytime"]) == ("beam", True)  # beams of 500, 20000


def test_solve_help_names_every_registered_search_and_heuristic(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from puzzlezero.solver import HEURISTICS, SEARCHES

    monkeypatch.setenv("COLUMNS", "400")
    rc, out, _ = run(capsys, "solve", "--help")
    assert rc == 0
    missing = (set(SEARCHES) | set(HEURISTICS)) - set(out.replace("|", " ").split())
    assert not missing, missing


def test_scramble_json_is_reproducible_and_valid(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "scramble", "cube3", "--depth", "12", "--seed", "3", "--json")
    assert rc == 0
    first = json.loads(out)
    assert first["puzzle"] == "cube3" and len(first["moves"]) == 12 and len(first["facelets"]) == 54
    rc, out, _ = run(capsys, "scramble", "cube3", "--depth", "12", "--seed", "3", "--json")
    assert json.loads(out) == first
    # the printed moves produce the printed facelets
    rc, out, _ = run(capsys, "show", "cube3", " ".join(first["moves"]), "--json")
    assert json.loads(out)["facelets"] == first["facelets"]


@pytest.mark.parametrize(
    "puzzle,key",
    [("puzzle15", "tiles"), ("lightsout7", "lights"), ("sokoban", "grid"), ("cube2", "facelets")],
)
def test_scramble_then_validate_and_show(capsys: pytest.CaptureFixture[str], puzzle: str, key: str) -> None:
    rc, out, _ = run(capsys, "scramble", puzzle, "--depth", "30", "--seed", "1", "--json")
    assert rc == 0
    data = json.loads(out)
    assert key in data
    rc, out, err = run(capsys, "validate", puzzle, data["state"])
    assert rc == 0, err
    rc, out, _ = run(capsys, "show", puzzle, data["state"], "--json")
    shown = json.loads(out)
    assert shown["puzzle"] == puzzle and shown[key] == data[key] and shown["solved"] is False


def test_show_solved_cube_and_svg(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    svg = tmp_path / "cube.svg"
    rc, out, _ = run(capsys, "show", "cube3", SOLVED, "--json", "--out", str(svg))
    assert rc == 0 and json.loads(out) == {
        "puzzle": "cube3",
        "solved": True,
        "facelets": SOLVED,
        "state": SOLVED,
    }
    assert svg.read_text().startswith("<svg")
    rc, out, _ = run(capsys, "show", "cube3", "R U R' U'")
    assert rc == 0 and "not solved" in out


def test_state_from_file(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    f = tmp_path / "state.txt"
    f.write_text("R U R' U'\n")
    rc, out, _ = run(capsys, "validate", "cube3", f"@{f}")
    assert rc == 0 and out.strip() == "valid"
    rc, _, err = run(capsys, "validate", "cube3", f"@{tmp_path / 'missing.txt'}")
    assert rc == 2 and "cannot read state file" in err


@pytest.mark.parametrize(
    "puzzle,state,needle",
    [
        ("cube3", "UUUU", "54"),
        ("cube3", "R U X", "X"),
        ("puzzle15", "1 2 3", "16"),
        ("puzzle15", "2 1 3 4 5 6 7 8 9 10 11 12 13 14 15 0", "unsolvable"),
        ("lightsout7", "012", "49"),
        ("nosuchpuzzle", "x", "registered puzzles"),
    ],
)
def test_validate_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], puzzle: str, state: str, needle: str
) -> None:
    rc, out, err = run(capsys, "validate", puzzle, state)
    assert rc == 2
    assert err.startswith("error: ") and needle in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_help_for_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    for cmd in ["list", "scramble", "validate", "show"]:
        rc, out, _ = run(capsys, cmd, "--help")
        assert rc == 0 and "Usage" in out


def test_usage_errors_exit_2_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "scramble", "cube3", "--no-such-option")
    assert rc == 2 and "no-such-option" in (out + err) and "Traceback" not in (out + err)
    rc, out, err = run(capsys, "validate", "cube3")  # missing STATE
    assert rc == 2 and "Traceback" not in (out + err)


def test_state_files_that_cannot_be_states_are_refused_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``@FILE``: undecodable bytes, a directory and a file over 1 MiB get one-line errors naming
    the file (the first was a traceback; the last was read whole, whatever its size)."""
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("R U \xe9".encode("latin-1"))
    rc, _, err = run(capsys, "validate", "cube3", f"@{latin}")
    assert rc == 2 and err == f"error: state file {latin} is not UTF-8 text (byte 4 is 0xe9)\n"
    rc, _, err = run(capsys, "validate", "cube3", f"@{tmp_path}")
    assert rc == 2 and err == f"error: cannot read state file {tmp_path}: it is a directory\n"
    huge = tmp_path / "huge.txt"
    huge.write_text("R " * (1 << 20))
    rc, _, err = run(capsys, "validate", "cube3", f"@{huge}")
    assert rc == 2 and err == f"error: state file {huge} is over 1 MiB, more than any state needs\n"
