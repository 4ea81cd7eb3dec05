"""A group table's build keeps its progress: interrupted after a round, or its process killed, the
next build goes on from the last save and makes the table an unbroken build makes; a damaged or
foreign save is set aside by name and the build starts over."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from puzzlezero.classic import group
from puzzlezero.errors import TableTimeoutError
from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle
from puzzlezero.puzzles.permutation.families import family_definition
from puzzlezero.puzzles.words import MoveWords
from tests.clock import until


def _wreath(name: str) -> PermutationPuzzle:
    """The 21/21 wreath with its moves listed backwards: a puzzle no shipped table has (a table is
    found by its moves, in their order), whose build takes 11 rounds of Minkwitz's algorithm
    (about 3 s), the close pass of the empty slots and two raises of the length limit among them."""
    data = dict(family_definition("wreath_21/21"))
    data["moves"] = dict(reversed(list(data["moves"].items())))
    return PermutationPuzzle(Definition.from_dict({**data, "name": name}))


def _job(p: PermutationPuzzle) -> tuple[np.ndarray, tuple[int, ...], MoveWords, tuple[int, ...]]:
    perms = group.move_permutations(p)
    images, actions = group._images(perms), group._group_actions(p)
    reducer = MoveWords(images, actions, np.asarray(p.action_costs, dtype=np.float64))
    return images, tuple(actions), reducer, group.piece_base(images, actions)


def _entries(b: group._Builder) -> list[list[tuple[int, tuple[int, ...], tuple[int, ...]]]]:
    """Each level's entries in their order: point, word, inverse word."""
    return [[(d, e[0], e[1]) for d, e in slot.items()] for slot in b.levels]


@pytest.fixture(scope="module")
def unbroken() -> list:
    p = _wreath("wreath-unbroken")
    return _entries(group._build(p.name, *_job(p)))


def test_a_build_interrupted_after_a_round_goes_on_to_the_same_table(
    unbroken: list, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _wreath("wreath-interrupted")
    progress = tmp_path / "wreath.npz.progress"
    log = group._log

    def stop_at_round_5(message: str) -> None:
        log(message)
        if "round 5:" in message:  # logged before round 5's save: the last save is round 4's
            raise KeyboardInterrupt

    monkeypatch.setattr(group, "_log", stop_at_round_5)
    with pytest.raises(KeyboardInterrupt):
        group._build(p.name, *_job(p), progress, 0.0)
    assert progress.is_file()
    monkeypatch.setattr(group, "_log", log)
    capsys.readouterr()
    resumed = group._build(p.name, *_job(p), progress, 0.0)
    err = capsys.readouterr().err
    assert "going on after round 4" in err and "  round 4:" not in err and "  round 5:" in err
    assert _entries(resumed) == unbroken


def test_a_killed_build_goes_on_from_its_last_save(
    unbroken: list, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """For real: the build's process killed after its first saves; the next build (here, in this
    process) goes on from there, and its progress file goes once the table is saved."""
    p = _wreath("wreath-killed")
    jobs = []

    def capture(target: Callable[..., object], job: tuple, **kwargs: object) -> None:
        jobs.append((target, job))
        raise TableTimeoutError("captured")

    monkeypatch.setattr(group, "IN_PLACE_POSITIONS", 0)
    monkeypatch.setattr(group, "build_in_process", capture)
    monkeypatch.setattr(group, "PROGRESS_SECONDS", 0.0)
    with pytest.raises(TableTimeoutError):
        group.group_table(p, deadline=group.clock.now() + 60.0)
    ((target, job),) = jobs
    table = Path(job[5])
    progress = group.progress_path(table)
    proc = multiprocessing.get_context("spawn").Process(target=target, args=job, daemon=True)
    proc.start()
    try:
        until(lambda: progress.is_file() and _saved_rounds(progress) >= 2, 120, "a second save of progress")
    finally:
        proc.kill()
        proc.join()
    assert not table.exists(), "the build ended before it was killed"
    monkeypatch.undo()
    capsys.readouterr()
    built = group.group_table(p)
    assert "going on after round" in capsys.readouterr().err
    assert [[(d, w) for d, w, _ in level] for level in unbroken] == [
        [(d, built.words[i][d]) for d, _, _ in level] for i, level in enumerate(unbroken)
    ]
    assert table.is_file() and not progress.exists()


def _saved_rounds(progress: Path) -> int:
    try:
        return int(group.load_npz(progress, {"kind": "group table build"})["counts"][2])
    except Exception:  # being replaced at this moment
        return 0


@pytest.mark.parametrize("damage", ["garbage", "another base"])
def test_an_unusable_save_is_set_aside_by_name(
    damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images, _, reducer, _ = _job(_wreath("wreath-damaged"))
    progress = tmp_path / "wreath.npz.progress"
    if damage == "garbage":
        progress.write_bytes(b"not a saved build")
    else:  # a save of a build over another base
        group._save_progress(
            progress, group._Builder(images, reducer, (0, 1), 48), np.random.default_rng(0), 0, 1
        )
    b = group._Builder(images, reducer, (2, 3), 48)
    rng = np.random.default_rng(7)
    assert group._resume(progress, b, rng) is None
    assert "is not usable, so the build starts over" in capsys.readouterr().err
    assert (
        b.filled() == 2
        and b.limit == 48
        and rng.integers(1 << 30) == np.random.default_rng(7).integers(1 << 30)
    )
