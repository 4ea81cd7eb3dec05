"""The whole solve path runs without torch: in a process where ``import torch`` fails, every core
shipped model's puzzle is solved with its default search, a state is valued, two cases are benched
(through the CLI) and a web worker is prepared, and torch is never imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from puzzlezero.model_folders import model_roots
from tests.conftest import ROOT

#: the core package's shipped models, which name their puzzles
CORE = sorted(p.name for p in model_roots()[0].iterdir() if (p / "config.json").is_file())

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["torch"] = None  # import torch -> ImportError, from here on
    import builtins
    tried = []
    _import = builtins.__import__

    def watched(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            tried.append(name)
        return _import(name, *args, **kwargs)

    builtins.__import__ = watched

    import json
    import numpy as np
    import puzzlezero
    from puzzlezero.bench import run_bench
    from puzzlezero.case_files import Case
    from puzzlezero.cli.main import main
    from puzzlezero.solver import options_for
    from puzzlezero.solver.result import verify
    from puzzlezero.web.worker import _init_worker

    out = {"solved": {}}
    for name in sys.argv[1].split(","):
        p = puzzlezero.make(name)
        start = p.scramble(np.random.default_rng(1), 1, 6)[0]
        r = puzzlezero.solve(name, start, time_limit=30.0)  # ends when solved; the limit only bounds a loaded machine
        assert r.solved and verify(p, start[None], [r.actions]).tolist() == [True], (name, r.status)
        out["solved"][name] = r.length
    out["value"] = float(puzzlezero.value("cube3", "R U R' F2", optimal=False).value)
    cube = puzzlezero.make("cube3")
    report = run_bench(
        cube, [Case(0, cube.parse("R U F")), Case(1, cube.parse("L D' B2"))], time_limit=3.0
    )
    out["network"] = report.summary["network"]
    out["bench_cli"] = main(["bench", "puzzle15", "--cases", sys.argv[2], "--time-limit", "3", "--out", sys.argv[3]])
    _init_worker(1, (("puzzle15", options_for(puzzlezero.make("puzzle15"), None, {})),))
    out["tried"] = tried
    out["torch_loaded"] = sys.modules.get("torch") is not None
    print(json.dumps(out))
    """
)


def test_solving_valuing_benching_and_serving_never_import_torch(tmp_path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(
        json.dumps({"puzzle": "puzzle15", "cases": [{"id": 0, "tiles": list(range(1, 15)) + [0, 15]}]})
    )
    report = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, ",".join(CORE), str(cases), str(report)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert sorted(out["solved"]) == CORE and len(CORE) >= 9
    assert out["value"] > 0
    assert out["network"].startswith("onnxruntime ")
    assert out["bench_cli"] == 0
    summary = json.loads(report.read_text())["summary"]
    assert summary["solved_pct"] == 100.0 and summary["network"].startswith("onnxruntime ")
    assert out["tried"] == [] and out["torch_loaded"] is False
