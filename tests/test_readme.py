"""The README's set-up commands and CI's entry point agree."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT


def block(name: str) -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"<!-- {name} -->\s*```bash\n(.*?)\n```\s*<!-- /{name} -->", text, re.S)
    assert m, f"README has no {name} block"
    return m.group(1).strip()


def test_ci_runs_the_readme_test_command() -> None:
    cmd = block("test-command")
    assert "pytest" in cmd and "constraints.txt" in cmd
    # .ci/run runs what .ci/readme_cmd extracts: the same command
    assert "readme_cmd test-command" in (ROOT / ".ci" / "run").read_text()
    extracted = subprocess.run(
        ["bash", str(ROOT / ".ci" / "readme_cmd"), "test-command"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert extracted == cmd


def test_main_command_solves_a_cube() -> None:
    cmd = block("main-command")
    assert "constraints.txt" in cmd and "puzzlezero solve cube3" in cmd
