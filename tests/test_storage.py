"""puzzlezero.storage: atomic files and folders, what killed writers leave behind, a full disk, the
streamed NPZ save, folder locks. Faults are real: writers die by SIGKILL, disks fill through
RLIMIT_FSIZE, locks are held by other processes."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import storage
from puzzlezero.errors import FileBusyError, StorageFullError
from puzzlezero.storage import (
    STALE_SECONDS,
    atomic_folder,
    atomic_write_text,
    clean_stale_temps,
    load_npz,
    lock_folder,
    save_npz,
)


def _python(code: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, **kwargs
    )


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".pz-" in p.name)


def test_a_writer_killed_mid_write_leaves_the_old_file_and_its_temp_is_cleaned_next_time(tmp_path):
    target = tmp_path / "table.npz"
    target.write_bytes(b"old contents")
    died = _python(
        f"""
        import os, signal
        from puzzlezero.storage import atomic_write
        def write(f):
            f.write(b"new " * 1000)
            f.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        atomic_write({str(target)!r}, write)
        """
    )
    assert died.returncode == -signal.SIGKILL
    left = _temps(tmp_path)
    assert len(left) == 1 and left[0].startswith(".table.npz.pz-") and left[0].endswith(".tmp")
    assert target.read_bytes() == b"old contents"
    # the next write into the folder (a new process, or this one's first) removes it
    atomic_write_text(tmp_path / "other.txt", "x")
    assert _temps(tmp_path) == [] and target.read_bytes() == b"old contents"


def test_only_temps_of_dead_writers_or_untouched_for_an_hour_are_cleaned(tmp_path):
    host = storage._host_id()
    dead, alive = _dead_pid(), os.getppid()
    names = {
        "dead": f".a.pz-{host}-{dead}-0a1b.tmp",
        "alive": f".b.pz-{host}-{alive}-0a1b.tmp",
        "other_host_new": f".c.pz-ffffff-{alive}-0a1b.tmp",
        "other_host_old": f".d.pz-ffffff-{alive}-0a1b.tmp",
        "dead_dir": f".e.pz-{host}-{dead}-0a1b.tmpdir",
        "not_ours": ".f.tmp",
    }
    for key, name in names.items():
        if key.endswith("dir"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "model.pt").write_bytes(b"x")
        else:
            (tmp_path / name).write_bytes(b"x")
    old = time.time() - STALE_SECONDS - 60
    os.utime(tmp_path / names["other_host_old"], (old, old))
    removed = {p.name for p in clean_stale_temps(tmp_path)}
    assert removed == {names["dead"], names["other_host_old"], names["dead_dir"]}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [names["alive"], names["other_host_new"], names["not_ours"]]
    )


def test_a_full_disk_raises_storage_full_naming_the_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "checkpoint.pt"
    target.write_bytes(b"the last good checkpoint")

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    out = _python(
        f"""
        from puzzlezero.errors import StorageFullError
        from puzzlezero.storage import atomic_write
        try:
            atomic_write({str(target)!r}, lambda f: f.write(bytes(200_000)))
        except StorageFullError as exc:
            print(type(exc).__name__, exc)
        """,
        preexec_fn=small_disk,
    )
    assert out.returncode == 0, out.stderr  # SIGXFSZ did not kill it
    assert out.stdout.startswith(f"StorageFullError {target}: cannot write it: File too large")
    assert "the previous checkpoint.pt is intact" in out.stdout
    assert target.read_bytes() == b"the last good checkpoint" and _temps(tmp_path) == []


def test_save_npz_streams_into_the_file_without_a_copy_of_the_arrays(tmp_path):
    table = np.arange(64 * 2**20, dtype=np.uint8)  # 64 MiB; numpy writes it in 16 MiB pieces
    tracemalloc.start()
    try:
        save_npz(tmp_path / "t.npz", {"kind": "test"}, table=table)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < table.nbytes // 3, peak  # the old BytesIO save held two copies
    assert np.array_equal(load_npz(tmp_path / "t.npz", {"kind": "test"})["table"], table)


def test_atomic_write_fsyncs_the_folder_after_the_rename(tmp_path, monkeypatch):
    synced: list[str] = []
    monkeypatch.setattr(storage, "_fsync_dir", lambda folder: synced.append(os.fspath(folder)))
    atomic_write_text(tmp_path / "a.txt", "x")
    assert synced == [os.fspath(tmp_path)]


def test_a_model_folder_is_replaced_whole_keeping_other_entries(tmp_path):
    folder = tmp_path / "model"
    atomic_folder(folder, {"model.pt": b"v1", "config.json": b"{}"})
    (folder / "layer1").mkdir()
    (folder / "layer1" / "model.pt").write_bytes(b"inner")
    (folder / "stages.json").write_text("[]")
    atomic_folder(folder, {"model.pt": b"v2", "config.json": b"{}"})
    assert (folder / "model.pt").read_bytes() == b"v2"
    assert (folder / "layer1" / "model.pt").read_bytes() == b"inner" and (folder / "stages.json").exists()
    assert _temps(tmp_path) == []


def test_a_kill_between_the_two_renames_gives_the_old_folder_back(tmp_path):
    folder = tmp_path / "model"
    atomic_folder(folder, {"model.pt": b"old"})
    died = _python(
        f"""
        import os, signal
        from puzzlezero import storage
        real = os.rename
        def rename(src, dst):
            real(src, dst)
            os.kill(os.getpid(), signal.SIGKILL)  # the old folder is aside, the new one not yet in
        os.rename = rename
        storage.atomic_folder({str(folder)!r}, {{"model.pt": b"new"}})
        """
    )
    assert died.returncode == -signal.SIGKILL
    assert not folder.exists() and len(_temps(tmp_path)) == 2  # aside, and the new one unmoved
    clean_stale_temps(tmp_path)  # what the next write into the parent does first
    assert (folder / "model.pt").read_bytes() == b"old" and _temps(tmp_path) == []


def test_save_model_writes_a_folder_whole(tmp_path):
    from puzzlezero.nn import load_model, save_model
    from puzzlezero.nn.config import NetConfig
    from puzzlezero.nn.models import build_model

    net = build_model(NetConfig.from_preset("tiny", 24 * 6), seed=0)
    save_model(tmp_path / "m", net, puzzle="cube2", card={"n": 1})
    save_model(tmp_path / "m", net, puzzle="cube2", card={"n": 2})
    assert load_model(tmp_path / "m").card == {"n": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_a_folder_lock_held_by_another_process_is_busy_naming_its_pid(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from puzzlezero.storage import lock_folder\nlock = lock_folder({str(tmp_path)!r})\n"
            "print('held', flush=True)\ninput()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"  # type: ignore[union-attr]
        with pytest.raises(FileBusyError, match=rf"{tmp_path} is in use: pid {holder.pid} holds its lock"):
            lock_folder(tmp_path)
    finally:
        holder.communicate("\n", timeout=60)
    lock = lock_folder(tmp_path)  # free once the holder is gone
    assert lock_folder(tmp_path) is lock  # and re-entrant within one process
    lock.release()
    lock.release()


def test_storage_full_error_is_a_puzzle_error():
    from puzzlezero.errors import PuzzleError

    assert issubclass(StorageFullError, PuzzleError) and issubclass(FileBusyError, PuzzleError)
