"""experiments/value_by_length.py: networks' mean values by optimal length."""

from __future__ import annotations

import json

import numpy as np

from puzzlezero import cost_to_go, make
from tests.conftest import load_script

LEVELS = """; 0
##########
#        #
#  @$.   #
##########
#        #
#        #
#        #
#        #
#        #
##########

; 1
##########
#        #
#@ $  .  #
##########
#        #
#        #
#        #
#        #
#        #
##########
"""


def test_the_table_groups_states_by_optimal_length(tmp_path, capsys):
    script = load_script("experiments/value_by_length.py")
    (tmp_path / "000.txt").write_text(LEVELS)
    report = {"results": [{"id": "000:0", "optimal_length": 1}, {"id": "000:1", "optimal_length": 4}]}
    (tmp_path / "r.json").write_text(json.dumps(report))
    args = ["sokoban", "--cases", str(tmp_path / "000.txt"), "--report", str(tmp_path / "r.json")]
    assert script.main([*args, "--models", "sokoban", "--bins", "0,3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    p = make("sokoban")
    values = cost_to_go.values(
        p, np.stack([p.parse(t.strip()) for t in LEVELS.split("; ")[1:] for t in [t[2:]]])
    )
    assert lines[0] == "| optimal length | states | mean optimal | `sokoban` |"
    assert lines[2] == f"| 0-2 | 1 | 1.0 | {values[0]:.1f} |"
    assert lines[3] == f"| 3+ | 1 | 4.0 | {values[1]:.1f} |"
    assert script.main([*args, "--models", "sokoban", "--bins", "0,x"]) == 2
    assert "--bins must be numbers" in capsys.readouterr().out
    (tmp_path / "none.json").write_text(json.dumps({"results": []}))
    assert script.main([*args[:3], "--report", str(tmp_path / "none.json"), "--models", "sokoban"]) == 2
    assert "no optimal lengths in the file or the report" in capsys.readouterr().out
