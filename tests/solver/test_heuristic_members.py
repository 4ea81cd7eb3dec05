"""Network-free members of an ensemble: ``heuristic:NAME`` beside the models in ``models=`` /
``--models`` and a puzzle's defaults, checked against the registry, searching the same search
with that heuristic and a wider beam (its ``member_width``), the shortest verified answer kept."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.bench import run_bench
from puzzlezero.case_files import Case
from puzzlezero.cli.main import main
from puzzlezero.defaults import check_defaults, member_heuristic, member_search
from puzzlezero.errors import PuzzleError, UnknownNameError
from puzzlezero.registry import DEFAULTS
from puzzlezero.solver import HeuristicSpec, memory_estimate, register_heuristic, resolve_options, solve_many
from puzzlezero.solver.heuristics import HEURISTICS
from puzzlezero.solver.members import check_member, member_options, member_width
from puzzlezero.solver.result import verify
from puzzlezero.solver.searches import SEARCHES
from tests.conftest import ROOT

P15 = make("puzzle15")
FREE = "heuristic:manhattan"
#: a narrow beam, so that the network and the Manhattan beam take different paths
BEAM = {"search": "beam", "beam_width": 4, "time_limit": 60.0, "fallback": False}


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    return P15.scramble(np.random.default_rng(11), 6, depth=200)


def test_the_member_searches_the_same_search_with_its_heuristic_and_a_wider_beam() -> None:
    o = resolve_options(P15, models=f"puzzle15,{FREE}", search="beam", beam_width=[10, 100])
    assert o.models == ("puzzle15", FREE) and o.model == "puzzle15" and o.heuristic == "learned"
    k = HEURISTICS["manhattan"].member_width
    assert member_width(o, FREE) == k > 1 and member_width(o, "puzzle15") == 1
    m = member_options(o, FREE)
    assert (m.heuristic, m.model, m.models) == ("manhattan", None, ())
    assert m.beam_width == (10 * k, 100 * k) and m.max_nodes == o.max_nodes * k
    net = member_options(o, "puzzle15")
    assert (net.heuristic, net.model, net.beam_width, net.max_nodes) == (
        "learned",
        "puzzle15",
        (10, 100),
        o.max_nodes,
    )
    # a search without a beam width searches with the solve's settings
    bwas = resolve_options(P15, models=f"puzzle15,{FREE}", search="bwas")
    assert member_options(bwas, FREE).max_nodes == bwas.max_nodes


def test_the_answer_is_the_shorter_of_the_network_and_the_wide_manhattan_beam(boards: np.ndarray) -> None:
    k = HEURISTICS["manhattan"].member_width
    net = solve_many(P15, boards, **BEAM)
    free = solve_many(P15, boards, **(BEAM | {"heuristic": "manhattan", "beam_width": 4 * k}))
    both = solve_many(P15, boards, models=["puzzle15", FREE], **BEAM)
    lengths = [(a.length, b.length) for a, b in zip(net, free, strict=True)]
    assert any(a != b for a, b in lengths), "the two heuristics should answer differently somewhere"
    for (a, b), r, board in zip(lengths, both, boards, strict=True):
        assert r.solved and r.length == min(a, b)
        assert r.model == ("puzzle15" if a <= b else FREE)
        assert verify(P15, board[None], [r.actions])[0]
    for r, a, b in zip(both, net, free, strict=True):  # both searches' work counts
        assert r.nodes_generated == a.nodes_generated + b.nodes_generated


def test_members_are_checked_against_the_registry() -> None:
    with pytest.raises(UnknownNameError, match="unknown heuristic 'nosuch'"):
        resolve_options(P15, models=["puzzle15", "heuristic:nosuch"])
    with pytest.raises(PuzzleError, match="reads a model"):
        resolve_options(P15, models=["puzzle15", "heuristic:learned"])
    with pytest.raises(PuzzleError, match="names a registered heuristic"):
        resolve_options(P15, models=["puzzle15", "heuristic:os:system"])  # never module:factory
    with pytest.raises(PuzzleError, match="twice"):
        resolve_options(P15, models=[FREE, FREE])
    with pytest.raises(PuzzleError, match="reads no model"):  # the models need a network heuristic
        resolve_options(P15, models=["puzzle15", FREE], heuristic="misplaced")
    with pytest.raises(PuzzleError, match="uses no heuristic"):
        resolve_options(P15, models=["puzzle15", FREE], search="reduction")
    assert check_member("puzzle15") is None and check_member(FREE) == "manhattan"
    assert member_heuristic("runs/heuristic-model") is None  # a folder's name is a model


def test_network_free_members_alone() -> None:
    both = resolve_options(P15, models=[FREE, "heuristic:misplaced"], search="beam", beam_width=3)
    assert both.models == (FREE, "heuristic:misplaced") and both.model is None
    one = resolve_options(P15, models=[FREE], search="beam", beam_width=3)  # that heuristic alone
    assert one.models == () and one.heuristic == "manhattan"
    assert one.beam_width == 3 * HEURISTICS["manhattan"].member_width


def test_a_puzzles_default_members_are_data_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    d = check_defaults("p", {"models": ["puzzle15", FREE]})
    assert d.models == ("puzzle15", FREE)
    with pytest.raises(ValueError, match="names a registered heuristic"):
        check_defaults("p", {"models": ["puzzle15", "heuristic:pkg.mod:factory"]})
    monkeypatch.setitem(DEFAULTS, "puzzle15", replace(DEFAULTS["puzzle15"], models=("puzzle15", FREE)))
    assert resolve_options(P15).models == ("puzzle15", FREE)
    assert resolve_options(P15, model="puzzle15").models == ()  # a model named: that one alone
    assert resolve_options(P15, heuristic="manhattan").models == ()  # a heuristic named: that one
    monkeypatch.setitem(
        DEFAULTS, "puzzle15", replace(DEFAULTS["puzzle15"], models=("puzzle15", "heuristic:nosuch"))
    )
    with pytest.raises(UnknownNameError, match="nosuch"):
        resolve_options(P15)


def test_every_shipped_default_member_is_a_registered_network_free_heuristic_or_search() -> None:
    for name, d in DEFAULTS.items():
        for m in d.models:
            free = check_member(m)
            if member_search(m) is not None:
                assert not SEARCHES[free].needs_heuristic, (name, m)
            else:
                assert free is None or not HEURISTICS[free].uses_model, (name, m)


def test_member_width_is_declared_data() -> None:
    for bad in (0, -2, True, 1.5):
        with pytest.raises(PuzzleError, match="member_width"):
            register_heuristic("bad-width", HeuristicSpec("m:f", member_width=bad))  # type: ignore[arg-type]
    with pytest.raises(PuzzleError, match="without a model"):
        register_heuristic("bad-width", HeuristicSpec("m:f", uses_model=True, member_width=4))
    assert "bad-width" not in HEURISTICS


def test_the_wider_member_adds_its_own_memory() -> None:
    o = resolve_options(P15, models=["puzzle15", FREE], search="beam", beam_width=1000)
    net = memory_estimate(P15, "beam", member_options(o, "puzzle15"))
    free = memory_estimate(P15, "beam", member_options(o, FREE))
    assert free > net  # a wider beam, no network batch
    assert memory_estimate(P15, "beam", o) == net + free


def test_bench_reports_the_member_its_wins_and_its_widths(boards: np.ndarray) -> None:
    report = run_bench(P15, [Case(i, b) for i, b in enumerate(boards[:3])], models=["puzzle15", FREE], **BEAM)
    s = report.summary
    k = HEURISTICS["manhattan"].member_width
    assert s["models"] == ["puzzle15", FREE] and sum(s["model_wins"].values()) == 3
    assert s["member_beam_widths"] == {FREE: 4 * k} and s["beam_width"] == 4
    assert s["network"]  # the network member's runtime, described
    assert all(r["model"] in s["models"] for r in report.results)


def test_the_cli_takes_a_member_and_names_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15"
    rc = main(["solve", "puzzle15", board, "--models", f"puzzle15,{FREE}", "--search", "beam", "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert json.loads(out)["length"] == 1
    rc = main(["solve", "puzzle15", board, "--models", "puzzle15,heuristic:nosuch", "--search", "beam"])
    _, err = capsys.readouterr()
    assert rc != 0 and "nosuch" in err and "Traceback" not in err


def test_an_ensemble_with_a_network_free_member_never_imports_torch() -> None:
    script = textwrap.dedent(
        """
        import builtins
        import sys
        sys.modules["torch"] = None
        tried = []
        _import = builtins.__import__

        def watched(name, *args, **kwargs):
            if name == "torch" or name.startswith("torch."):
                tried.append(name)
            return _import(name, *args, **kwargs)

        builtins.__import__ = watched
        import numpy as np
        import puzzlezero
        from puzzlezero.solver import solve_many
        p = puzzlezero.make("puzzle15")
        boards = p.scramble(np.random.default_rng(3), 2, depth=80)
        rs = solve_many(p, boards, models=["puzzle15", "heuristic:manhattan"],
                                   search="beam", beam_width=4, time_limit=30.0)
        assert all(r.solved for r in rs)
        print(tried)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip() == "[]", out.stderr
