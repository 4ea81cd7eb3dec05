"""A checkpoint carries the SHA-256 of its bytes, checked when it is read: torch's zip reader skips
the CRCs, so without it a flipped bit in the weights would resume silently. And the training log
reaches the disk before each checkpoint, so a resumed run never has a checkpoint newer than its log."""

from __future__ import annotations

import os
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from puzzlezero.errors import ModelFileError
from puzzlezero.train import DAVITrainer
from puzzlezero.train.checkpoint import DIGEST_PREFIX, load_checkpoint
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = tiny_train_config(max_iterations=10)  # one chunk


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, DAVITrainer]:
    trainer = DAVITrainer(TINY, tmp_path / "run")
    trainer.run()
    return tmp_path / "run", trainer


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_checkpoint_ends_with_its_digest(run: tuple[Path, DAVITrainer]) -> None:
    data = (run[0] / "checkpoint.pt").read_bytes()
    tail = data[-(len(DIGEST_PREFIX) + 64) :]
    assert tail.startswith(DIGEST_PREFIX) and all(
        c in b"0123456789abcdef" for c in tail[len(DIGEST_PREFIX) :]
    )


def test_an_intact_checkpoint_resumes_exactly(run: tuple[Path, DAVITrainer]) -> None:
    folder, first = run
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for a checkpoint with its digest
        second = DAVITrainer(replace(TINY, max_iterations=20), folder, resume=True)
    assert second.counters.iteration == first.counters.iteration == 10
    assert _same(second.model.state_dict(), first.model.state_dict())
    assert _same(second.target.state_dict(), first.target.state_dict())
    second.run()
    assert second.counters.iteration == 20


def test_a_flipped_byte_is_refused_by_name(run: tuple[Path, DAVITrainer]) -> None:
    folder, _ = run
    path = folder / "checkpoint.pt"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    torch.load(path, map_location="cpu", weights_only=True)  # torch itself does not notice
    with pytest.raises(
        ModelFileError,
        match=r"checkpoint\.pt does not match its digest: the file is damaged; resume from an earlier "
        r"copy or start again",
    ):
        DAVITrainer(replace(TINY, max_iterations=20), folder, resume=True)
    with pytest.raises(ModelFileError, match="does not match its digest"):
        DAVITrainer.from_run(folder)


def test_a_damaged_digest_is_refused_too(run: tuple[Path, DAVITrainer]) -> None:
    path = run[0] / "checkpoint.pt"
    data = bytearray(path.read_bytes())
    data[-1] = ord("0") if data[-1] != ord("0") else ord("1")
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="does not match its digest"):
        load_checkpoint(path)


def test_a_checkpoint_without_a_digest_is_read_with_a_warning(run: tuple[Path, DAVITrainer]) -> None:
    folder, first = run
    path = folder / "checkpoint.pt"
    data = path.read_bytes()
    eocd = len(data) - len(DIGEST_PREFIX) - 64 - 22  # the zip's end record, then the comment
    assert data[eocd : eocd + 4] == b"PK\x05\x06"
    path.write_bytes(data[: eocd + 20] + b"\0\0")  # as an older version wrote it: no comment
    with pytest.warns(UserWarning, match=r"checkpoint\.pt has no digest \(written by an older puzzlezero\)"):
        second = DAVITrainer(replace(TINY, max_iterations=20), folder, resume=True)
    assert _same(second.model.state_dict(), first.model.state_dict())


def test_the_log_is_fsynced_before_each_checkpoint(
    run: tuple[Path, DAVITrainer], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, trainer = run
    synced: list[str] = []
    real = os.fsync

    def record(fd: int) -> None:
        synced.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", record)
    trainer.append_log({"type": "test"})
    trainer.checkpoint()
    assert "log.jsonl" in synced, synced
    checkpoint_writes = [
        i for i, name in enumerate(synced) if name.startswith(".checkpoint.pt") or "checkpoint" in name
    ]
    assert checkpoint_writes and synced.index("log.jsonl") < checkpoint_writes[0], synced
    assert (
        load_checkpoint(folder / "checkpoint.pt").counters.log_bytes == (folder / "log.jsonl").stat().st_size
    )
