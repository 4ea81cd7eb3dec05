"""Exact, atomic training checkpoints.

A checkpoint (``checkpoint.pt`` in the run folder) holds everything the next iteration depends on:
trained and target weights, the Adam state, the NumPy generator state, the torch RNG state, the
counters and the byte length of ``log.jsonl`` at that moment (a resumed run cuts the log back to it,
so the log never holds lines from iterations that are then repeated). It is a plain dict of tensors
and JSON text, written with :func:`puzzlezero.storage.atomic_write` and read with
``torch.load(..., weights_only=True)``; ``config.json`` beside it is the run's :class:`TrainConfig`.
The checkpoint also keeps that configuration, its hash and the package version: a resume with
another configuration or version is refused by name (:func:`check_resumable`).

torch's zip reader does not check the CRCs of what it reads, so a checkpoint also carries the
SHA-256 of its bytes, in the zip archive's comment (``puzzlezero-sha256:<hex>``, the digest of every
byte before the comment; written with the file, in one atomic write, so a reader never sees a
checkpoint with another's digest). :func:`load_checkpoint` checks it before torch reads anything
and refuses a damaged file by name; a checkpoint without one (written by an older version) is read
with a warning.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from puzzlezero.errors import CheckpointMismatchError, ModelFileError
from puzzlezero.storage import atomic_write

__all__ = [
    "Counters",
    "Checkpoint",
    "save_checkpoint",
    "load_checkpoint",
    "config_hash",
    "check_resumable",
    "CHECKPOINT_FORMAT",
    "DIGEST_PREFIX",
]

CHECKPOINT_FORMAT = "puzzlezero-davi-checkpoint/1"
#: how a checkpoint's zip comment begins: then the hex SHA-256 of every byte before the comment
DIGEST_PREFIX = b"puzzlezero-sha256:"
_EOCD = b"PK\x05\x06"  # the signature of a zip archive's end record (22 bytes, then the comment)
_EOCD_SIZE = 22
_DIGEST_COMMENT = len(DIGEST_PREFIX) + 64
_CHUNK = 1 << 20


@dataclass
class Counters:
    """Progress of a run (all but ``wall_seconds`` are exact)."""

    iteration: int = 0
    samples: int = 0
    target_updates: int = 0
    wall_seconds: float = 0.0
    log_bytes: int = 0
    last_loss: float = float("nan")
    finished: bool = False
    target_update_iterations: list[int] = field(default_factory=list)
    labels: int = 0
    """fresh labelled states made (``samples / target_reuse`` for most objectives)"""
    max_scramble_now: int = 0
    """the depth bound in force (below K only under a curriculum; 0 in old checkpoints = K)"""
    pending: list[dict[str, Any]] = field(default_factory=list)
    """label jobs in flight at the checkpoint (``LabelJob`` as dicts), re-submitted on resume"""
    commands: list[dict[str, Any]] = field(default_factory=list)
    """command lines that ran this run, with the iteration each started at"""


@dataclass
class Checkpoint:
    """The restorable state of a :class:`~puzzlezero.train.trainer.Trainer`."""

    model: dict[str, torch.Tensor]
    target: dict[str, torch.Tensor]
    optimizer: dict[str, Any]
    numpy_rng: dict[str, Any]
    torch_rng: torch.Tensor
    counters: Counters
    label_targets: dict[str, dict[str, torch.Tensor]] = field(default_factory=dict)
    """target weights (by version) that label jobs in flight were given, where not the current one"""
    config: dict[str, Any] = field(default_factory=dict)
    """the run's :class:`~puzzlezero.train.config.TrainConfig` as a dict (empty in old checkpoints)"""
    config_hash: str = ""
    """:func:`config_hash` of ``config``: the fields a resumed run may not change"""
    package_version: str = ""
    """the puzzlezero version that wrote the checkpoint (empty in old checkpoints)"""


def save_checkpoint(path: str | os.PathLike[str], ckpt: Checkpoint) -> Path:
    """Write ``ckpt`` atomically (a kill during the write leaves the previous checkpoint intact)."""
    payload = {
        "format": CHECKPOINT_FORMAT,
        "model": ckpt.model,
        "target": ckpt.target,
        "optimizer": ckpt.optimizer,
        "numpy_rng": json.dumps(ckpt.numpy_rng),
        "torch_rng": ckpt.torch_rng,
        "counters": json.dumps(asdict(ckpt.counters)),
        "label_targets": ckpt.label_targets,
        "config": json.dumps(ckpt.config, sort_keys=True),
        "config_hash": ckpt.config_hash,
        "package_version": ckpt.package_version,
    }
    buf = io.BytesIO()
    torch.save(payload, buf)
    _add_digest(buf)
    return atomic_write(path, lambda f: f.write(buf.getbuffer()))


def _add_digest(buf: io.BytesIO) -> None:
    """Set the comment of the zip archive in ``buf`` (as ``torch.save`` wrote it) to
    :data:`DIGEST_PREFIX` and the SHA-256 of every byte before the comment."""
    view = buf.getbuffer()
    try:
        eocd = _end_record(view)
        view[eocd + _EOCD_SIZE - 2 : eocd + _EOCD_SIZE] = struct.pack("<H", _DIGEST_COMMENT)
        digest = hashlib.sha256(view[: eocd + _EOCD_SIZE]).hexdigest().encode("ascii")
    finally:
        view.release()
    buf.truncate(eocd + _EOCD_SIZE)
    buf.seek(0, io.SEEK_END)
    buf.write(DIGEST_PREFIX + digest)


def _end_record(data: memoryview | bytes) -> int:
    """Where the end record of the zip archive ``data`` starts: the last one whose comment ends
    the data."""
    n = len(data)
    for start in range(n - _EOCD_SIZE, max(-1, n - _EOCD_SIZE - 0xFFFF - 1), -1):
        if bytes(data[start : start + 4]) == _EOCD:
            (comment,) = struct.unpack("<H", data[start + _EOCD_SIZE - 2 : start + _EOCD_SIZE])
            if start + _EOCD_SIZE + comment == n:
                return start
    raise ValueError("not a zip archive (no end record)")


def verify_digest(f: io.BufferedIOBase | io.RawIOBase | Any, path: Path) -> bool:
    """Check the checkpoint open as ``f`` (binary, seekable) against the digest in its zip comment:
    ``True`` when it matches, ``False`` when it has none (an older version's checkpoint; or only
    its comment is damaged, which leaves the data as written). A digest that does not match, or
    one that is there but cannot be read, raises :class:`ModelFileError`; ``f`` is left at 0."""
    size = f.seek(0, io.SEEK_END)
    tail_start = max(0, size - _EOCD_SIZE - _DIGEST_COMMENT - 64)
    f.seek(tail_start)
    tail = f.read()
    f.seek(0)
    if DIGEST_PREFIX not in tail:
        return False
    damaged = ModelFileError(
        f"{path} does not match its digest: the file is damaged; resume from an earlier copy or start again"
    )
    eocd = size - _DIGEST_COMMENT - _EOCD_SIZE
    at = eocd - tail_start
    record = tail[at : at + _EOCD_SIZE] if at >= 0 else b""
    comment = tail[at + _EOCD_SIZE :] if at >= 0 else b""
    if (
        len(record) != _EOCD_SIZE
        or record[:4] != _EOCD
        or struct.unpack("<H", record[-2:])[0] != _DIGEST_COMMENT
        or not comment.startswith(DIGEST_PREFIX)
    ):
        raise damaged
    h = hashlib.sha256()
    left = eocd + _EOCD_SIZE
    while left > 0:
        chunk = f.read(min(_CHUNK, left))
        if not chunk:
            raise damaged
        h.update(chunk)
        left -= len(chunk)
    f.seek(0)
    if h.hexdigest().encode("ascii") != comment[len(DIGEST_PREFIX) :]:
        raise damaged
    return True


def load_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a checkpoint, its digest checked first (:func:`verify_digest`); a missing, damaged,
    corrupt or foreign file raises :class:`ModelFileError`. A checkpoint without a digest (written
    by an older version) is read, with a warning that it could not be checked."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such checkpoint")
    try:
        with open(path, "rb") as f:
            checked = verify_digest(f, path)
            data = torch.load(f, map_location="cpu", weights_only=True)
        if not checked:
            warnings.warn(
                f"{path} has no digest (written by an older puzzlezero): it is read unchecked; the "
                "next checkpoint written carries one",
                stacklevel=2,
            )
        if data.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"format is {data.get('format')!r}, expected {CHECKPOINT_FORMAT!r}")
        return Checkpoint(
            model=data["model"],
            target=data["target"],
            optimizer=data["optimizer"],
            numpy_rng=json.loads(data["numpy_rng"]),
            torch_rng=data["torch_rng"],
            counters=Counters(**json.loads(data["counters"])),
            label_targets=data.get("label_targets", {}),
            config=json.loads(data.get("config", "{}")),
            config_hash=str(data.get("config_hash", "")),
            package_version=str(data.get("package_version", "")),
        )
    except ModelFileError:
        raise
    except Exception as exc:
        raise ModelFileError(
            f"{path}: unreadable or corrupt checkpoint ({type(exc).__name__}: {exc})"
        ) from None


def config_hash(config: dict[str, Any], free: Iterable[str] = ()) -> str:
    """A short digest of ``config`` without the ``free`` fields (those a resumed run may change)."""
    kept = {k: v for k, v in sorted(config.items()) if k not in set(free)}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


def check_resumable(
    path: str | os.PathLike[str],
    ckpt: Checkpoint,
    config: dict[str, Any],
    free: Iterable[str] = (),
    *,
    version: str | None = None,
) -> None:
    """Raise :class:`CheckpointMismatchError` naming what differs when ``ckpt`` was written for
    another configuration (any field but the ``free`` ones) or, when ``version`` is given, by
    another puzzlezero version: a run resumed across either would not repeat the iterations of an
    uninterrupted one. Fields that one side does not know (added in a later version) are not
    compared, and old checkpoints (without these records) pass."""
    free = set(free)
    config = json.loads(json.dumps(config))  # tuples as lists, as the checkpoint keeps them
    if ckpt.config:
        changed = sorted(
            k for k in ckpt.config if k in config and k not in free and ckpt.config[k] != config[k]
        )
        detail = ", ".join(f"{k}: {ckpt.config[k]!r} -> {config[k]!r}" for k in changed)
    else:
        detail = "its hash" if ckpt.config_hash and ckpt.config_hash != config_hash(config, free) else ""
    if detail:
        raise CheckpointMismatchError(
            f"{path} was written for another configuration ({detail}); resume it with its own "
            f"config.json, or start a new run"
        )
    if version is not None and ckpt.package_version and ckpt.package_version != version:
        raise CheckpointMismatchError(
            f"{path} was written by puzzlezero {ckpt.package_version}, and this is {version}: a run "
            f"resumed across versions would not repeat the same iterations; finish it with "
            f"puzzlezero {ckpt.package_version}, or export it and start a new run with --init-from"
        )


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """JSON-able state of a NumPy generator (restore with :func:`restore_rng`)."""
    # numpy's stubs say Mapping; the property returns a new dict
    return rng.bit_generator.state  # type: ignore[return-value]


def restore_rng(state: dict[str, Any]) -> np.random.Generator:
    bitgen = getattr(np.random, state["bit_generator"])()
    bitgen.state = state
    return np.random.Generator(bitgen)
