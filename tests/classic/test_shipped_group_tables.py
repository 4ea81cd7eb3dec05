"""The group tables shipped with the package: one for every registered puzzle whose default solve is
the group solver or the rollout over it, or falls back to the group solver, current for its moves (the key in the file's name), loaded with
no cache and no build (as a web worker, which never builds, loads them); no file left over; a
damaged one is passed over, named, for the cache or a build."""

from __future__ import annotations

from pathlib import Path

import pytest

from puzzlezero import make, storage
from puzzlezero.classic import group
from puzzlezero.errors import MissingTableError
from puzzlezero.puzzles.permutation import family_puzzle
from puzzlezero.registry import DEFAULTS

#: the puzzles whose default solve uses the group solver, as search, as the base of the rollout,
#: or as fallback
GROUP_SOLVED = sorted(name for name, d in DEFAULTS.items() if {"group", "rollout"} & {d.search, d.fallback})
#: orders of the groups, by hand: the cube's 8! 3^7 12! 2^11 / 2 (cube3, fixed centres), the 2x2x2
#: with one corner fixed (7! 3^6), and the competition's, whose centres turn too (x 24 orientations)
ORDERS = {
    "cube3": 43_252_003_274_489_856_000,
    "cube2": 3_674_160,
    "cube_2-2-2": 3_674_160 * 24,
    "cube_3-3-3": 43_252_003_274_489_856_000 * 24,
}
#: the competition's big cubes, from ``puzzlezero definition family``: not registered, minutes to
#: build, so shipped (their orders, by their pieces: tests/classic/test_schreier_sims.py)
FAMILIES_SHIPPED = ("cube_8/8/8", "cube_9/9/9", "cube_10/10/10", "wreath_100/100")
REBUILD = (
    "rebuild it: PUZZLEZERO_CACHE=DIR puzzlezero pdb build NAME --kind group, then copy "
    "DIR/group/NAME-KEY.npz into src/puzzlezero/data/group/ (and delete the old one)"
)


def test_every_default_group_solve_loads_a_shipped_table_with_no_cache_and_no_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert {"cube3", "cube_4-4-4", "globe_1-16", "globe_3-33", "globe_8-25"} <= set(GROUP_SOLVED)
    monkeypatch.setenv("PUZZLEZERO_CACHE", str(tmp_path))
    monkeypatch.setattr(group, "_TABLES", {})
    storage.forbid_table_builds()
    used = set()
    try:
        for name in GROUP_SOLVED:
            try:
                table = group.group_table(make(name))
            except MissingTableError as exc:
                pytest.fail(f"{name}: no current shipped group table ({exc}); {REBUILD}")
            if name in ORDERS:
                assert table.order == ORDERS[name], name
            used |= {p.name for p in group.SHIPPED_TABLES.glob(f"{name}-*.npz")}
        for ptype in FAMILIES_SHIPPED:
            for goal in ("standard", "distinct"):  # another goal, another name: the moves find it
                p = family_puzzle(ptype, goal)
                try:
                    table = group.group_table(p)
                except MissingTableError as exc:
                    pytest.fail(f"{ptype}: no current shipped group table ({exc}); {REBUILD}")
                assert table.puzzle == p.name
            used |= {q.name for q in group.SHIPPED_TABLES.glob(f"{ptype.replace('/', '-')}-*.npz")}
    finally:
        storage.forbid_table_builds(False)
    assert not list(tmp_path.rglob("*.npz"))  # nothing built, nothing cached
    shipped = {p.name for p in group.SHIPPED_TABLES.glob("*.npz")}
    assert shipped == used, f"left over, no default solve reads them: {sorted(shipped - used)}"


def test_a_damaged_shipped_table_is_named_and_passed_over_for_a_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    [original] = group.SHIPPED_TABLES.glob("wreath_6-6-*.npz")
    damaged = tmp_path / "shipped"
    damaged.mkdir()
    (damaged / original.name).write_bytes(original.read_bytes()[:-100])  # cut short
    monkeypatch.setattr(group, "SHIPPED_TABLES", damaged)
    monkeypatch.setattr(group, "_TABLES", {})
    monkeypatch.setenv("PUZZLEZERO_CACHE", str(tmp_path / "cache"))
    table = group.group_table(make("wreath_6-6"))
    err = capsys.readouterr().err
    assert "the shipped group table of wreath_6-6 is not usable" in err and "unreadable or corrupt" in err
    assert "building the group table of wreath_6-6" in err
    assert table.order == 3_628_800  # 10!: the two rings' ten pieces, all arrangements
    assert (tmp_path / "cache" / "group" / original.name).is_file()


def test_the_shipped_tables_keep_a_move_to_a_byte() -> None:
    """Words are saved a move to a byte (their puzzles have fewer than 256 moves) and the
    positions and offsets in the smallest types that hold them: the 100/100 wreath's 2.2 million
    moves take 2.2 MB, not the 18 MB of eight bytes a move."""
    import numpy as np

    for path in group.SHIPPED_TABLES.glob("*.npz"):
        with np.load(path, allow_pickle=False) as z:
            assert z["moves"].dtype == np.uint8, path.name
            assert z["offsets"].dtype == np.min_scalar_type(int(z["offsets"][-1])), path.name
