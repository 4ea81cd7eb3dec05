"""docs/adding-a-puzzle.md: the pancake puzzle, one file outside the package (examples/pancake.py),
registered as a plugin, then trained, solved, benchmarked and served unchanged; plus the plugin
machinery itself (files, modules, entry points, errors, pickling by name, registered defaults) and
the board every puzzle gets without a viewer of its own. The example passes the public conformance
checks (puzzlezero.testing.check_puzzle), as the docs tell plugin authors to check theirs."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import puzzlezero as pz
from puzzlezero import plugins, solver
from puzzlezero.cli.main import main
from puzzlezero.errors import InvalidStateError, PluginError, UnknownNameError
from puzzlezero.plugins import ENV_VAR, load_plugin
from puzzlezero.registry import DEFAULTS
from tests.clock import until

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pancake.py"
CASES = ROOT / "examples" / "pancake8.json"
#: stacks of 8 pancakes by optimal number of flips (OEIS A058496, row 8): 40320 in all, at most 9
PANCAKE8_LEVELS = [1, 7, 42, 251, 1191, 4281, 10561, 15011, 8520, 455]


@pytest.fixture(autouse=True)
def _plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """load_plugin writes $PUZZLEZERO_PLUGINS for worker processes: undo that after each test."""
    monkeypatch.setenv(ENV_VAR, os.environ.get(ENV_VAR, ""))


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Puzzles a test registers (and plugins it loads) are forgotten after it."""
    from puzzlezero import registry

    for module, attr in [(registry, "_REGISTRY"), (registry, "_INSTANCES"), (plugins, "_LOADED")]:
        monkeypatch.setattr(module, attr, dict(getattr(module, attr)))


@pytest.fixture
def pancake() -> pz.Puzzle:
    load_plugin(EXAMPLE)
    return pz.make("pancake8")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def bfs_levels(p: Any) -> tuple[list[int], dict[int, int]]:
    """Breadth-first search over every stack: the count per distance and each stack's distance
    (by its base-(n+1) code)."""
    weights = np.uint64(p.n + 1) ** np.arange(p.n, dtype=np.uint64)

    def code(states: np.ndarray) -> np.ndarray:
        return (states.astype(np.uint64) * weights).sum(axis=1)

    frontier, visited, levels = p.goals(1), code(p.goals(1)), [1]
    dist = {int(visited[0]): 0}
    while True:
        children = p.expand(frontier).reshape(-1, p.n)
        codes, first = np.unique(code(children), return_index=True)
        new = ~np.isin(codes, visited)
        if not new.any():
            return levels, dist
        frontier, visited = children[first[new]], np.concatenate([visited, codes[new]])
        dist.update(dict.fromkeys(codes[new].tolist(), len(levels)))
        levels.append(int(new.sum()))


# ---- registering from outside the package ----------------------------------------------------
def test_the_example_registers_only_when_loaded_in_a_fresh_process() -> None:
    """No environment variable chooses code: a hand-set $PUZZLEZERO_PLUGINS (read by every process
    before) is not read, with a warning, nor one stamped with the parent's pid (anyone knows it):
    the carrier a puzzlezero process writes is signed, and read only by the processes it starts
    with multiprocessing (tests/puzzles/test_plugin_carrier.py)."""
    code = "import puzzlezero as pz; print('pancake8' in pz.names(), pz.make('cube2').name)"
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}

    def run(value: str | None) -> subprocess.CompletedProcess[str]:
        extra = {} if value is None else {ENV_VAR: value}
        cmd = [sys.executable, "-c", code]
        return subprocess.run(cmd, env=env | extra, capture_output=True, text=True, check=True)

    plain, by_hand = run(None), run(str(EXAMPLE))
    parent_pid = run(os.pathsep.join([str(os.getpid()), str(EXAMPLE)]))  # the parent's pid, unsigned
    from_other = run(os.pathsep.join(["1", str(EXAMPLE)]))  # stamped by a process that is not the parent
    assert plain.stdout.split() == ["False", "cube2"] and "PUZZLEZERO" not in plain.stderr
    assert by_hand.stdout.split() == ["False", "cube2"]
    assert (
        f"$PUZZLEZERO_PLUGINS is not read (no environment variable chooses the code puzzlezero runs); load {EXAMPLE} with --plugin"
        in " ".join(by_hand.stderr.split())
    )
    assert parent_pid.stdout.split() == ["False", "cube2"] and "not read" in parent_pid.stderr
    assert from_other.stdout.split() == ["False", "cube2"]


def test_load_plugin_writes_the_carrier_under_this_pid() -> None:
    load_plugin(EXAMPLE)
    pid, signature, *refs = os.environ[ENV_VAR].split(os.pathsep)
    assert pid == str(os.getpid()) and len(signature) == 64 and str(EXAMPLE) in refs
    assert str(EXAMPLE) in plugins.loaded_plugins() and plugins.env_plugins() == []  # not a child of itself


def _serve(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """A real ``puzzlezero serve`` on a free loopback port, and its base URL once it answers."""
    import socket
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "puzzlezero", *args, "serve", "--port", str(port), "--workers", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if proc.poll() is not None:
            raise AssertionError("puzzlezero serve ended")
        try:
            with urllib.request.urlopen(url + "/api/puzzles", timeout=5):
                return True
        except OSError:
            return False

    try:  # generous: imports and a worker start on a busy machine
        until(answers, 120, "puzzlezero serve answering", every=0.2)
    except AssertionError:
        proc.kill()
        raise AssertionError(f"puzzlezero serve did not start: {proc.communicate()[1][-2000:]}") from None
    return proc, url


def _call(url: str, body: dict[str, Any] | None = None) -> Any:
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def test_serve_loads_only_the_plugins_its_operator_named() -> None:
    """``puzzlezero serve`` in a process of its own: a plugin in the environment is not loaded (nor
    by its worker processes); one named with --plugin is listed and solved in a worker process."""
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR} | {ENV_VAR: str(EXAMPLE)}
    proc, url = _serve([], env)
    try:
        names = [p["name"] for p in _call(url + "/api/puzzles")]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert "cube3" in names and "pancake8" not in names
    proc, url = _serve(["--plugin", str(EXAMPLE)], env)
    try:
        names = [p["name"] for p in _call(url + "/api/puzzles")]
        body = {"puzzle": "pancake8", "state": "2 1 3 4 5 6 7 8", "search": "optimal"}
        solved = _call(url + "/api/solve", body)  # the optimal solver the plugin registers, in a worker
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert "pancake8" in names and solved["solved"] and solved["solution"] == ["F2"]


def test_cli_plugin_option_lists_shows_and_refuses_with_the_puzzles_own_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, out, _ = run_cli(capsys, "--plugin", EXAMPLE, "list")
    listed = out.split()  # the plugin's puzzle after every puzzle of the package (other tests of
    # this process may have registered puzzles of their own after it)
    assert rc == 0 and all(listed.index("pancake8") > listed.index(name) for name in DEFAULTS)
    rc, out, _ = run_cli(capsys, "--plugin", EXAMPLE, "show", "pancake8", "3 2 1 4 5 6 7 8", "--json")
    assert rc == 0 and json.loads(out) == {
        "puzzle": "pancake8",
        "solved": False,
        "pancakes": "3 2 1 4 5 6 7 8",
        "state": "3 2 1 4 5 6 7 8",
    }
    rc, _, err = run_cli(capsys, "--plugin", EXAMPLE, "validate", "pancake8", "3 2 1 4 5 6 7 7")
    assert rc == 2 and err == "error: not a stack of the pancakes 1..8: [7] more than once, [8] missing\n"
    rc, out, _ = run_cli(
        capsys, "--plugin", EXAMPLE, "solve", "pancake8", "2 3 1 4 5 6 7 8", "--search", "optimal"
    )
    found, *answer = out.splitlines()  # the solution as the search found it, then the answer
    assert rc == 0 and found.startswith("found 2 moves after ") and found.endswith(" (search): F2 F3")
    assert answer[:2] == ["solution: F2 F3", "length:   2 moves"]  # 3 2 1, 1 2 3


def test_plugin_errors_name_the_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run_cli(capsys, "--plugin", tmp_path / "nope.py", "list")
    assert rc == 2 and err == f"error: plugin {tmp_path / 'nope.py'}: no such file\n"
    with pytest.raises(PluginError, match="plugin no_such_puzzles: no module named no_such_puzzles"):
        load_plugin("no_such_puzzles")
    broken = tmp_path / "broken.py"
    broken.write_text("import puzzlezero\n\nx = 1 +\n")
    with pytest.raises(PluginError, match=r"broken.py failed at line 3: SyntaxError"):
        load_plugin(broken)
    clash = tmp_path / "clash.py"
    clash.write_text(
        "import puzzlezero as pz\n\npz.register('puzzle15', 'puzzlezero.puzzles.npuzzle:NPuzzle', size=5)\n"
    )
    with pytest.raises(
        PluginError, match=r"clash.py failed at line 3: ValueError: puzzle 'puzzle15' is already"
    ):
        load_plugin(clash)
    assert pz.make("puzzle15").state_shape == (16,)  # the built-in stays as it was


def test_a_module_and_an_entry_point_register_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scratch_registry: None
) -> None:
    """An importable module by name, and an installed distribution's ``puzzlezero.puzzles`` entry
    point (a function, called once); a broken entry point only warns."""
    (tmp_path / "my_puzzles.py").write_text(
        "import puzzlezero as pz\n\n"
        "def register():\n"
        "    pz.register('ep-puzzle8', 'puzzlezero.puzzles.npuzzle:NPuzzle', 'via an entry point', size=3)\n\n"
        "def broken():\n"
        "    raise RuntimeError('boom')\n\n"
        "pz.register('mod-puzzle8', 'puzzlezero.puzzles.npuzzle:NPuzzle', 'via a module', size=3)\n"
    )
    dist = tmp_path / "my_puzzles-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-puzzles\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[puzzlezero.puzzles]\nfine = my_puzzles:register\nbad = my_puzzles:broken\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_ENTRY_POINTS_DONE", False)
    with pytest.warns(
        UserWarning, match="entry point bad = my_puzzles:broken failed to load .RuntimeError: boom"
    ):
        registered = pz.names()
    assert "ep-puzzle8" in registered and "mod-puzzle8" in registered  # the module imported once
    assert load_plugin("my_puzzles") is sys.modules["my_puzzles"]
    assert pz.make("ep-puzzle8").name == "ep-puzzle8" and pz.make("ep-puzzle8").state_shape == (9,)


def test_unknown_puzzle_says_how_to_load_ones_own() -> None:
    with pytest.raises(UnknownNameError, match=r"load its file with --plugin FILE, docs/adding-a-puzzle.md"):
        pz.make("pancake9")


# ---- the example's rules, with known answers ---------------------------------------------------
def test_pancake_moves_gaps_and_text(pancake: Any) -> None:
    p = pancake
    flip3 = p.apply(p.goals(1), np.array([p.action_names.index("F3")]))[0]
    assert p.format(flip3) == "3 2 1 4 5 6 7 8" and int(p.gaps(flip3[None])[0]) == 1
    assert p.format(p.parse("[8, 7, 6, 5, 4, 3, 2, 1]")) == "8 7 6 5 4 3 2 1"
    assert int(p.gaps(p.parse("8 7 6 5 4 3 2 1")[None])[0]) == 1  # only the bottom one is off its plate
    assert p.action_names == ("F2", "F3", "F4", "F5", "F6", "F7", "F8")
    for bad, reason in [
        ("1 2 3", "expected 8 pancakes"),
        ("1 2 3 4 5 6 7 9", "sizes are 1..8, got 9"),
        ("1 2 3 4 5 6 7 x", "cannot read 'x'"),
    ]:
        with pytest.raises(InvalidStateError, match=reason):
            p.parse(bad)
    svg = ET.fromstring(p.to_svg(p.parse("2 1 3 4 5 6 7 8")))
    moves = [g.get("data-move") for g in svg.iter("{http://www.w3.org/2000/svg}g")]
    assert moves == [None, "F2", "F3", "F4", "F5", "F6", "F7", "F8"]  # a click on the k-th flips the top k


def test_optimal_solver_agrees_with_breadth_first_search(pancake: Any) -> None:
    from puzzlezero.classic.optimal import optimal_length

    levels, dist = bfs_levels(pancake)
    assert levels == PANCAKE8_LEVELS
    weights = np.uint64(9) ** np.arange(8, dtype=np.uint64)
    for case in json.loads(CASES.read_text())["cases"]:
        state = pancake.parse(case["pancakes"])
        exact = dist[int((state.astype(np.uint64) * weights).sum())]
        assert case["optimal_length"] == exact == optimal_length(pancake, state)
    assert np.all(pancake.gaps(pancake.scramble(np.random.default_rng(0), 500, (1, 16))) >= 0)


def test_the_example_passes_the_conformance_checks(pancake: Any) -> None:
    """What the docs tell a plugin author to write (tests/puzzles/test_conformance.py runs it per check)."""
    from puzzlezero.testing import CHECKS, check_puzzle

    assert check_puzzle(pancake) == dict.fromkeys(CHECKS, "passed")


def test_registered_puzzles_pickle_as_their_name(pancake: Any) -> None:
    assert pickle.loads(pickle.dumps(pancake)) is pancake
    other = type(pancake)(5)  # not the registry's instance: pickled as usual, a copy
    back = pickle.loads(pickle.dumps(other))
    assert back is not other and back.n == 5 and back.action_names == other.action_names


def test_registered_defaults_reach_the_solver(pancake: Any) -> None:
    d = solver.defaults_for(pancake)
    assert (d.weight, d.batch, d.time_limit, d.max_steps, d.search) == (0.8, 10, 30.0, 100, "bwas")
    assert d.max_nodes == solver.FALLBACK_DEFAULTS.max_nodes
    with pytest.raises(ValueError, match=r"unknown defaults \['wieght'\]"):
        pz.register("bad-defaults", type(pancake), defaults={"wieght": 0.5}, n=4)
    with pytest.raises(ValueError, match="defaults batch must be int"):
        pz.register("bad-defaults", type(pancake), defaults={"batch": 10.5}, n=4)
    with pytest.raises(
        ValueError, match=r"defaults beam_width must be int or a list of int, got \[10, 2.5\]"
    ):
        pz.register("bad-defaults", type(pancake), defaults={"beam_width": [10, 2.5]}, n=4)
    assert "bad-defaults" not in pz.names()
    assert solver.check_defaults("widths", {"beam_width": [10, 100]}).beam_width == (10, 100)


# ---- a puzzle with no viewer of its own still gets a board -------------------------------------
class Rotor(pz.Puzzle):
    """Four numbers in a ring: rotate left (L) or right (R), or swap the first two (S). The bare
    minimum a puzzle writes; drawing, JSON and the rest come from the base class."""

    action_names = ("L", "R", "S")
    num_values = 4
    _perms = np.array([[1, 2, 3, 0], [3, 0, 1, 2], [1, 0, 2, 3]])

    @property
    def state_shape(self) -> tuple[int, ...]:
        return (4,)

    @property
    def inverse_action(self) -> np.ndarray:
        return np.array([1, 0, 2])

    def goal(self) -> np.ndarray:
        return np.arange(4, dtype=np.uint8)

    def expand(self, states: np.ndarray) -> np.ndarray:
        return states[:, self._perms]

    def parse(self, text: str) -> np.ndarray:
        values = sorted(int(t) for t in text.split())
        if values != [0, 1, 2, 3]:
            raise InvalidStateError("write 0 1 2 3 in some order")
        return np.array([int(t) for t in text.split()], dtype=np.uint8)

    def format(self, state: np.ndarray) -> str:
        return " ".join(str(int(v)) for v in state)

    def render_text(self, state: np.ndarray) -> str:
        return f"[{self.format(state)}]\n<&>"


def test_a_puzzle_without_a_viewer_gets_a_text_board_and_json(scratch_registry: None) -> None:
    pz.register("rotor-test", Rotor, "a ring of four")  # a class object, not "module:Class"
    p = pz.make("rotor-test")
    s = p.apply(p.goals(1), np.array([0]))[0]
    assert p.to_json(s) == {"state": "1 2 3 0"}
    svg = ET.fromstring(p.to_svg(s))  # well-formed: the text is escaped
    assert [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")] == ["[1 2 3 0]", "<&>"]
    assert svg.get("aria-label") == "rotor-test"


# ---- train -> solve -> bench -> web, unchanged ---------------------------------------------------
@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A few seconds of DAVI on pancake8 with the tiny net, one label worker process (the puzzle
    reaches it pickled by name and the worker loads the plugin its parent carried in
    $PUZZLEZERO_PLUGINS)."""
    out = tmp_path_factory.mktemp("pancake8-run")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_VAR, os.environ.get(ENV_VAR, ""))
        settings = "max_iterations=60 eval_every=0 progress=false threads=1 label_workers=1".split()
        rc = main(
            ["--plugin", str(EXAMPLE), "train", "pancake8", "--preset", "tiny", "--out", str(out)]
            + [arg for s in settings for arg in ("--set", s)]
            + ["--export", str(out / "model")]
        )
    assert rc == 0
    yield out / "model"


def test_train_then_solve_with_the_learned_heuristic(
    trained: Path, capsys: pytest.CaptureFixture[str], pancake: Any
) -> None:
    card = json.loads((trained / "card.json").read_text())
    assert json.loads((trained / "config.json").read_text())["puzzle"] == "pancake8"
    assert card["samples_seen"] == 60 * 1000
    start = "4 8 1 6 7 2 3 5"  # case 0 of examples/pancake8.json: 7 flips at best
    rc, out, _ = run_cli(
        capsys, "--plugin", EXAMPLE, "solve", "pancake8", start, "--model", trained, "--json"
    )
    result = json.loads(out)
    assert rc == 0 and result["solved"] and result["search"] == "bwas" and result["length"] >= 7
    end = pancake.apply_moves(pancake.parse(start), pancake.parse_moves(result["solution"]))
    assert pancake.is_goal(end[None])[0]


def test_bench_on_a_tiny_cases_file(
    trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = json.loads(CASES.read_text())["cases"][:3]
    small = tmp_path / "cases.json"
    rows = [{"id": c["id"], "pancakes": c["pancakes"]} for c in cases]  # no optimal lengths: --reference
    small.write_text(json.dumps({"puzzle": "pancake8", "cases": rows}))
    report = tmp_path / "report.json"
    args = ["--cases", small, "--model", trained, "--reference", "optimal", "--out", report]
    rc, out, _ = run_cli(capsys, "--plugin", EXAMPLE, "bench", "pancake8", *args)
    data = json.loads(report.read_text())
    assert rc == 0 and "report written to" in out
    assert [r["optimal_length"] for r in data["results"]] == [c["optimal_length"] for c in cases]
    assert data["summary"]["solved_pct"] == 100.0 and data["summary"]["weight"] == 0.8
    p = pz.make("pancake8")
    for case, r in zip(cases, data["results"], strict=True):
        end = p.apply_moves(p.parse(case["pancakes"]), p.parse_moves(r["solution"]))
        assert p.is_goal(end[None])[0] and r["length"] >= r["optimal_length"]


def test_web_api_serves_and_solves_the_plugin_puzzle_in_worker_processes(trained: Path, pancake: Any) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from puzzlezero.web import ServerConfig, create_app

    config = ServerConfig(
        executor="process", workers=1, models={"pancake8": str(trained)}, allowed_hosts=("testserver",)
    )
    with TestClient(create_app(config), raise_server_exceptions=False) as c:
        info = next(p for p in c.get("/api/puzzles").json() if p["name"] == "pancake8")
        board = c.post("/api/move", json={"puzzle": "pancake8", "moves": ["F5"], "svg": True}).json()
        solved = c.post("/api/solve", json={"puzzle": "pancake8", "state": "5 4 3 2 1 6 7 8"})
    assert info["kind"] == "other" and info["model"] and info["action_names"][0] == "F2"
    assert board["state"] == "5 4 3 2 1 6 7 8" and 'data-move="F8"' in board["svg"]
    data = solved.json()
    assert solved.status_code == 200 and data["solved"] and data["solution"] == ["F5"]


@pytest.mark.browser
def test_web_board_flips_by_click_and_button_then_solves_and_plays(trained: Path, pancake: Any) -> None:
    """The board page in headless Chromium: a click on the fifth pancake plays F5 (its drawing's
    data-move), the F8 button under the board plays F8, Solve and Play reach the sorted stack."""
    from tests.web.browser_support import require_browser

    require_browser()  # skipped, as the other browser tests, without Playwright or Chromium
    from playwright.sync_api import sync_playwright

    from puzzlezero.web import ServerConfig, create_app
    from tests.web.browser_support import (
        CHROMIUM,
        CHROMIUM_ARGS,
        ThreadServer,
        open_page,
        snapshot,
        solve_and_play,
    )

    app = create_app(ServerConfig(executor="thread", workers=1, models={"pancake8": str(trained)}))
    with ThreadServer(app) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1200, "height": 820})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        open_page(page, url + "/board?puzzle=pancake8")
        page.click("#board [data-move='F5']")
        page.wait_for_function("() => window.pz.snapshot().state === '5 4 3 2 1 6 7 8'", timeout=10_000)
        page.click("#moves button:text-is('F8')")
        page.wait_for_function("() => window.pz.snapshot().state === '8 7 6 1 2 3 4 5'", timeout=10_000)
        assert not snapshot(page)["solved"]
        end = solve_and_play(page)
        browser.close()
    assert end["solution"] == ["F8", "F5"] and end["solved"] and errors == []
