"""Plugins reach only the processes puzzlezero itself starts: the carrier in $PUZZLEZERO_PLUGINS is
signed with a key that reaches those processes through multiprocessing's start-up pipe, never the
environment, so a value written by hand (even stamped with the right parent pid) is not read."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import puzzlezero as pz
from puzzlezero import plugins
from puzzlezero.plugins import ENV_VAR, load_plugin

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pancake.py"
CODE = "import puzzlezero as pz; print('pancake8' in pz.names())"


@pytest.fixture(autouse=True)
def _plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, os.environ.get(ENV_VAR, ""))


def _child(value: str) -> subprocess.CompletedProcess[str]:
    """A Python process started by this one (its parent pid is this pid) with ``value`` as the carrier."""
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR} | {ENV_VAR: value}
    return subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True)


def test_a_hand_written_carrier_with_the_parents_pid_is_not_read() -> None:
    forged = os.pathsep.join([str(os.getpid()), str(EXAMPLE)])
    done = _child(forged)
    assert done.stdout.split() == ["False"]
    assert "PUZZLEZERO_PLUGINS is not read" in " ".join(done.stderr.split())


def test_a_carrier_with_a_made_up_signature_is_not_read() -> None:
    forged = os.pathsep.join([str(os.getpid()), "0" * 64, str(EXAMPLE)])
    assert _child(forged).stdout.split() == ["False"]


def test_a_genuine_carrier_copied_into_another_process_is_not_read() -> None:
    """The key is this process's and its multiprocessing children's: a process started otherwise
    (by a shell, ``subprocess``) does not have it, whatever the environment it is given."""
    load_plugin(EXAMPLE)
    assert str(EXAMPLE) in os.environ[ENV_VAR].split(os.pathsep)
    assert _child(os.environ[ENV_VAR]).stdout.split() == ["False"]


def test_processes_this_one_spawns_load_its_plugins() -> None:
    load_plugin(EXAMPLE)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        inherited = pool.submit(plugins.env_plugins).result(timeout=120)
        names = pool.submit(pz.names).result(timeout=120)
    assert str(EXAMPLE) in inherited and "pancake8" in names
