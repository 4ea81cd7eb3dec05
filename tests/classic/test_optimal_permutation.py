"""The optimal solver of permutation puzzles (bidirectional breadth-first search): lengths equal to
a brute-force breadth-first search's on small puzzles, solutions that replay to the goal with
exactly that many moves, wildcards, the bounds by name, and the optimal solver's dispatch."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from puzzlezero.classic.optimal import optimal_length, solve_optimal
from puzzlezero.classic.optimal.bidirectional_bfs import solve_permutation
from puzzlezero.cli.main import main
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.permutation import Definition, PermutationPuzzle, family_puzzle
from puzzlezero.search import clock

FORMAT = "puzzlezero-permutation/1"


def puzzle(name: str, moves: dict[str, list[int]], goal: str, **extra: object) -> PermutationPuzzle:
    n = len(next(iter(moves.values())))
    data = {"format": FORMAT, "name": name, "positions": n, "moves": moves, "goal": goal, **extra}
    return PermutationPuzzle(Definition.from_dict(data))


def toy(**extra: object) -> PermutationPuzzle:
    """Three moves on 7 positions, with identical pieces: a 3-cycle, a 4-cycle and a swap."""
    moves = {"a": [1, 2, 0, 3, 4, 5, 6], "b": [0, 1, 3, 4, 5, 2, 6], "c": [0, 1, 2, 3, 4, 6, 5]}
    return puzzle("toy", moves, "A;A;B;B;C;C;D", **extra)


def distances(p: PermutationPuzzle) -> dict[bytes, int]:
    """Brute force: breadth-first search from the goal over every state, one state at a time."""
    start = p.goal()
    seen = {start.tobytes(): 0}
    layer = [start]
    d = 0
    while layer:
        d += 1
        nxt = []
        for s in layer:
            for child in s[p.perms]:
                key = child.tobytes()
                if key not in seen:
                    seen[key] = d
                    nxt.append(child)
        layer = nxt
    return seen


def layers(p: PermutationPuzzle, depth: int) -> list[np.ndarray]:
    """Brute force, batched: the states at each exact distance ``0..depth`` from the goal, found
    by forward breadth-first search with exact keys (the states' bytes)."""
    out = [p.goal()[None]]
    seen = {p.goal().tobytes()}
    for _ in range(depth):
        kids = out[-1][:, p.perms].reshape(-1, p.perms.shape[1])
        keys = np.unique(p.keys(kids), return_index=True)[1]
        fresh = [kids[i] for i in keys if kids[i].tobytes() not in seen]
        seen.update(s.tobytes() for s in fresh)
        out.append(np.stack(fresh))
    return out


def replays_in(p: PermutationPuzzle, state: np.ndarray, actions: Sequence[int]) -> bool:
    return bool(p.is_goal(p.apply_moves(state, list(actions))[None])[0])


def test_every_state_of_a_toy_puzzle_matches_brute_force() -> None:
    p = toy()
    dist = distances(p)
    assert len(dist) == 5040 // 8  # the moves generate S7: 7! / (2! 2! 2!) arrangements of the labels
    for key, d in dist.items():
        s = np.frombuffer(key, dtype=p.dtype)
        r = solve_permutation(p, s)
        assert r.solved and r.length == d and len(r.actions) == d and replays_in(p, s, r.actions)


def test_the_wreath_matches_brute_force() -> None:
    """The 6/6 wreath with its standard goal: all 3,150 states (10! / (4! 4! 2!))."""
    p = family_puzzle("wreath_6/6")
    dist = distances(p)
    assert len(dist) == 3150
    keys = sorted(dist)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(keys), 200, replace=False):
        s = np.frombuffer(keys[i], dtype=p.dtype)
        r = solve_optimal(p, s)
        assert r.status == "solved" and len(r.actions) == dist[keys[i]] and replays_in(p, s, r.actions)
    hardest = max(dist.values())
    far = next(np.frombuffer(k, dtype=p.dtype) for k, d in dist.items() if d == hardest)
    assert optimal_length(p, far) == hardest


@pytest.mark.parametrize("depth", [6, pytest.param(8, marks=pytest.mark.slow)])
def test_the_2x2x2_matches_brute_force(depth: int) -> None:
    """The 2x2x2 competition cube (12 slice turns, six colours): states of every distance up to
    ``depth``, their optimal lengths equal to the distance brute force finds them at."""
    p = family_puzzle("cube_2/2/2")
    rng = np.random.default_rng(depth)
    for d, states in enumerate(layers(p, depth)):
        for i in rng.choice(len(states), min(4, len(states)), replace=False):
            r = solve_permutation(p, states[i])
            assert r.solved and len(r.actions) == d and replays_in(p, states[i], r.actions)


def test_wildcards_search_forward_to_the_nearest_state_within_them() -> None:
    """With 2 wildcards a state is solved when at most 2 positions differ from the goal: the
    optimal length is the distance from the start to the nearest such state (brute force:
    breadth-first search from the start, one state at a time, to the first layer holding one)."""
    exact, loose = toy(), toy(wildcards=2)
    dist = distances(exact)
    states = {k: np.frombuffer(k, dtype=exact.dtype) for k in dist}
    for key, s in list(states.items())[::7]:
        # brute force: BFS from s until a state within 2 of the goal
        seen, layer, d = {key}, [s], 0
        while not any(int((t != exact.goal()).sum()) <= 2 for t in layer):
            nxt = []
            for t in layer:
                for child in t[exact.perms]:
                    if child.tobytes() not in seen:
                        seen.add(child.tobytes())
                        nxt.append(child)
            layer, d = nxt, d + 1
        r = solve_permutation(loose, s)
        assert r.solved and len(r.actions) == d <= dist[key] and replays_in(loose, s, r.actions)


def test_bounds_stop_the_search_by_name() -> None:
    p = family_puzzle("cube_2/2/2")
    s = p.apply_moves(p.goal(), p.parse_moves("f0 r0 d0 f1 r1 d0 f0 r0"))
    r = solve_permutation(p, s, max_nodes=1000)
    assert (r.solved, r.status, r.actions) == (False, "node limit", ()) and r.nodes_generated <= 1000
    r = solve_permutation(p, s, max_memory=4096)
    assert (r.solved, r.status) == (False, "memory limit")
    r = solve_permutation(p, s, deadline=clock.now() - 1.0)
    assert (r.solved, r.status) == (False, "time limit")
    assert solve_optimal(p, s, max_nodes=1000).status == "node limit"


def test_a_state_the_moves_cannot_reach_exhausts_the_search() -> None:
    """Flips that come in pairs: one domino flipped alone passes the label counts but is out of
    reach; the search runs out of states (twelve of them) and says so."""
    p = puzzle("dominoes", {"c": [4, 5, 0, 1, 2, 3], "f": [1, 0, 3, 2, 4, 5]}, "A;B;A;B;C;D")
    r = solve_permutation(p, p.parse("B;A;A;B;C;D"))
    assert (r.solved, r.status) == (False, "exhausted")
    assert solve_permutation(p, p.parse("B;A;B;A;C;D")).length == 1


def test_moves_of_other_costs_are_refused_by_name() -> None:
    p = toy(costs={"a": 2})
    s = p.apply_moves(p.goal(), [0])
    with pytest.raises(PuzzleError, match="counts moves"):
        solve_permutation(p, s)
    with pytest.raises(PuzzleError, match="no optimal solver"):
        solve_optimal(p, s)


def test_cli_solves_a_definition_file_optimally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "toy-cli.json"
    defn = toy().definition.to_dict()
    defn["name"] = "toy-cli"
    path.write_text(json.dumps(defn))
    rc = main(["solve", str(path), "a b' c a", "--search", "optimal", "--json"])
    out = json.loads(capsys.readouterr().out)
    p = toy()
    start = p.apply_moves(p.goal(), p.parse_moves("a b' c a"))
    assert rc == 0 and out["solved"] and out["length"] == distances(p)[start.tobytes()]
