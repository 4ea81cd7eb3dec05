"""Running the command line and the API as the core install runs them (see the package docstring)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

#: the modules of the train extra
TRAIN_EXTRA = ("torch", "matplotlib")
#: whether this environment has the train extra (the development one); else it is the core install
HAS_TRAIN_EXTRA = any(importlib.util.find_spec(m) is not None for m in TRAIN_EXTRA)
#: with the train extra installed, a subprocess starts with its modules blocked (an import raises
#: ModuleNotFoundError, as where they are not installed)
_BLOCK = f"import sys\nfor _name in {TRAIN_EXTRA!r}:\n    sys.modules[_name] = None\n"
_CLI = _BLOCK + "from puzzlezero.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
#: seconds a command may take (numba compiles the search kernels on first use)
TIMEOUT = 240


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``puzzlezero ARGS...`` in ``cwd``: the installed console script in the core install, else
    the command line's entry point with the train extra blocked."""
    if HAS_TRAIN_EXTRA:
        cmd = [sys.executable, "-c", _CLI, *args]
    else:
        cmd = [str(Path(sys.executable).parent / "puzzlezero"), *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def cli_json(*args: str, cwd: Path) -> Any:
    """The JSON that ``puzzlezero ARGS... --json`` prints; the command must succeed."""
    done = cli(*args, "--json", cwd=cwd)
    assert done.returncode == 0, f"puzzlezero {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return json.loads(done.stdout)


def python(code: str, *, cwd: Path) -> Any:
    """Run ``code`` in a fresh interpreter (the train extra blocked where installed) and return the
    JSON it prints last; the code must leave ``torch`` unimported."""
    check = "\nassert sys.modules.get('torch') is None, 'torch was imported'\n"
    done = subprocess.run(
        [sys.executable, "-c", _BLOCK + code + check],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"exited {done.returncode}:\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])
