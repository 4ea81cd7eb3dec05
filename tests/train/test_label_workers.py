"""Label workers under supervision: a real worker process killed (SIGKILL) or frozen (SIGSTOP)
gives a named error with its pid instead of a traceback or a trainer that waits forever."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero.puzzles import inputs
from puzzlezero.train.objectives import LabelJob
from puzzlezero.train.workers import LabelPool, LabelWorkerError
from tests.conftest import tiny_train_config

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="signals and /proc as on Linux")


def _job(chunk: int) -> LabelJob:
    return LabelJob(
        chunk=chunk, objective="scramble_depth", n=50, max_scramble=5, seed=(0, 0, chunk), target_version=0
    )


@pytest.fixture
def pool() -> Iterator[LabelPool]:
    """One spawned worker that has labelled a first chunk (so it is up), then a short timeout."""
    from puzzlezero.nn.config import NetConfig

    config = tiny_train_config(objective="scramble_depth", label_workers=1)
    puzzle = pz.make(config.puzzle)
    p = LabelPool(
        1,
        puzzle,
        config,
        NetConfig.from_preset("tiny", inputs.dim(puzzle, config.encoding)),
        timeout=300.0,  # the first chunk waits for the worker to start (imports: seconds on a busy machine)
        poll=0.2,
    )
    try:
        states, targets = p.submit(_job(0), None).result()
        assert states.shape[0] == targets.shape[0] == 50 and np.all(targets <= 5)
        p.timeout = 3.0  # then a chunk of 50 states takes milliseconds
        yield p
    finally:
        p.close()


def test_a_killed_worker_is_named_with_its_pid_and_signal(pool: LabelPool) -> None:
    (pid,) = pool.pids()
    os.kill(pid, signal.SIGKILL)
    ticket = pool.submit(_job(1), None)
    with pytest.raises(
        LabelWorkerError, match=rf"label worker pid {pid} was killed by SIGKILL while chunk 1"
    ):
        ticket.result()


def test_a_frozen_worker_times_out_named_and_is_killed(pool: LabelPool) -> None:
    (pid,) = pool.pids()
    os.kill(pid, signal.SIGSTOP)
    ticket = pool.submit(_job(1), None)
    with pytest.raises(LabelWorkerError, match=rf"no labels for chunk 1 within 3 s .*pid {pid} \(stopped\)"):
        ticket.result()
    pool.close()  # returns: the stopped worker was killed, not waited for
    assert pool._processes[pid].exitcode == -signal.SIGKILL
