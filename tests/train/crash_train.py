"""Run ``puzzlezero`` with a fault injected, for the crash tests (tests/train/test_train_crash.py).

    python tests/train/crash_train.py [--die-in-checkpoint N] -- train cube2 --out RUN ...

``--die-in-checkpoint N``: the N-th checkpoint write of this process (1 = the first) writes half of
its bytes into the temporary file, flushes them, and the process kills itself with SIGKILL: a real
death in the middle of a checkpoint write. Everything else is the real command line
(:func:`puzzlezero.cli.main.main`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys


def _die_in_checkpoint(n: int) -> None:
    import puzzlezero.train.checkpoint as checkpoint

    real = checkpoint.atomic_write
    calls = {"n": 0}

    def atomic_write(path, write):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] < n:
            return real(path, write)

        def half_then_die(f):  # type: ignore[no-untyped-def]
            class Half:
                def write(self, data):  # type: ignore[no-untyped-def]
                    view = memoryview(data)
                    f.write(view[: len(view) // 2])
                    f.flush()
                    os.fsync(f.fileno())
                    os.kill(os.getpid(), signal.SIGKILL)

            write(Half())

        return real(path, half_then_die)

    checkpoint.atomic_write = atomic_write


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--die-in-checkpoint", type=int, default=0)
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if args.die_in_checkpoint:
        _die_in_checkpoint(args.die_in_checkpoint)
    from puzzlezero.cli.main import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
