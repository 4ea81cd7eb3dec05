"""Limited-horizon Bellman labels (puzzlezero.train.objectives.lhbl): exact values on hand-made and exactly
solved cases, merging of duplicate states, batching, and agreement with a plain per-root reference."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.puzzles.cube.table import distance as cube2_distance
from puzzlezero.puzzles.npuzzle import NPuzzle
from puzzlezero.train.objectives.lhbl import lhbl_labels

P8 = make("puzzle8")
CUBE2 = make("cube2")
CUBE3 = make("cube3")


def _bfs_distances(puzzle: Puzzle, max_depth: int) -> dict[bytes, int]:
    """Exact distances of every state within ``max_depth`` moves of the goal (moves are reversible)."""
    dist = {puzzle.goal().tobytes(): 0}
    frontier = puzzle.goals(1)
    for depth in range(1, max_depth + 1):
        children, _ = puzzle.unique(puzzle.expand(frontier).reshape(-1, *puzzle.state_shape))
        fresh = np.array([c.tobytes() not in dist for c in children])
        frontier = children[fresh]
        dist.update((c.tobytes(), depth) for c in frontier)
    return dist


P8_DIST = _bfs_distances(P8, 16)


def _exact_p8(states: np.ndarray) -> np.ndarray:
    """True distances; a ``KeyError`` if the search strays beyond the table (a test bug)."""
    return np.array([P8_DIST[s.tobytes()] for s in states], dtype=np.float32)


def _p8_at(depth: int, n: int) -> np.ndarray:
    """``n`` puzzle8 states at exactly ``depth`` moves from the goal, in a fixed order."""
    keys = sorted(k for k, d in P8_DIST.items() if d == depth)[:n]
    return np.stack([np.frombuffer(k, dtype=np.uint8) for k in keys])


def _p8_roots(seed: int, n: int, lo: int, hi: int) -> np.ndarray:
    """``n`` puzzle8 states drawn from the table at distances ``lo..hi`` (no numba scramble)."""
    keys = sorted(k for k, d in P8_DIST.items() if lo <= d <= hi)
    pick = np.random.default_rng(seed).choice(len(keys), n, replace=False)
    return np.stack([np.frombuffer(keys[i], dtype=np.uint8) for i in pick])


def _noisy(puzzle: Puzzle):
    """A deterministic, inconsistent value function with negative outputs (to test clipping)."""
    return lambda s: (puzzle.hash64(s) % np.uint64(1000)).astype(np.float32) / 100.0 - 2.0


def _one_step(puzzle: Puzzle, state: np.ndarray, value_fn) -> float:
    """DAVI's target by hand: min over real moves of 1 + (0 at a goal child, else max(0, h))."""
    if puzzle.is_goal(state[None])[0]:
        return 0.0
    best = np.inf
    for a in range(puzzle.num_actions):
        child = puzzle.apply(state[None], np.array([a]))
        if np.array_equal(child[0], state):
            continue
        h = 0.0 if puzzle.is_goal(child)[0] else max(0.0, float(value_fn(child)[0]))
        best = min(best, puzzle.move_cost + h)
    return best


def _reference(puzzle: Puzzle, root: np.ndarray, value_fn, expansions: int, weight: float = 1.0):
    """LHBL for one root written plainly with dicts (ties broken by insertion order, as in the
    vectorised version); returns (expanded states in order, their labels)."""
    key = root.tobytes()
    state = {key: root}
    order = [key]  # insertion order = node index
    g = {key: 0.0}
    goal = {key: bool(puzzle.is_goal(root[None])[0])}
    h = {key: 0.0}
    open_ = set() if goal[key] else {key}
    closed: list[bytes] = []
    children: dict[bytes, list[bytes]] = {}
    for _ in range(expansions):
        if not open_:
            break
        k = min(open_, key=lambda k: (weight * g[k] + h[k], order.index(k)))
        open_.discard(k)
        closed.append(k)
        children[k] = []
        for c in puzzle.expand(state[k][None])[0]:
            ck = c.tobytes()
            if ck == k or ck in children[k]:
                continue
            children[k].append(ck)
            if ck in state:
                g[ck] = min(g[ck], g[k] + 1)
                continue
            state[ck], g[ck] = c, g[k] + 1
            order.append(ck)
            goal[ck] = bool(puzzle.is_goal(c[None])[0])
            h[ck] = 0.0 if goal[ck] else max(0.0, float(value_fn(c[None])[0]))
            if not goal[ck]:
                open_.add(ck)
    # Dijkstra backwards from the leaves over the explored graph
    label = {k: (np.inf if k in children else h[k]) for k in state}
    parents: dict[bytes, list[bytes]] = {}
    for p, cs in children.items():
        for c in cs:
            parents.setdefault(c, []).append(p)
    heap = [(v, k) for k, v in label.items() if np.isfinite(v)]
    heapq.heapify(heap)
    while heap:
        v, k = heapq.heappop(heap)
        if v > label[k]:
            continue
        for p in parents.get(k, []):
            if v + 1 < label[p]:
                label[p] = v + 1
                heapq.heappush(heap, (v + 1, p))
    return np.stack([state[k] for k in closed] or [root]), np.array([label[k] for k in closed] or [0.0])


# ---- 1. one expansion is DAVI's one-step target -------------------------------------------------
@pytest.mark.parametrize("puzzle", [P8, CUBE2], ids=lambda p: p.name)
def test_one_expansion_is_the_one_step_bellman_target(puzzle: Puzzle) -> None:
    more = _p8_roots(1, 7, 1, 12) if puzzle is P8 else puzzle.scramble(np.random.default_rng(1), 7, (1, 12))
    roots = np.concatenate([puzzle.goals(1), more])
    value_fn = _noisy(puzzle)
    states, targets = lhbl_labels(puzzle, roots, value_fn, 1)
    assert states.shape == roots.shape  # one expansion: only the roots come back
    expected = [_one_step(puzzle, s, value_fn) for s in roots]
    np.testing.assert_allclose(targets, expected, rtol=0, atol=1e-6)
    assert targets[0] == 0.0


def test_one_expansion_next_to_the_goal_uses_zero_at_the_goal() -> None:
    """A state one move from the goal gets 1 even when h(goal) would be large."""
    root = P8.apply(P8.goals(1), np.array([P8.action_names.index("D")]))
    _, targets = lhbl_labels(P8, root, lambda s: np.full(len(s), 50.0, np.float32), 1)
    assert targets.tolist() == [1.0]


# ---- 2. hand-computed labels on the 8-puzzle ----------------------------------------------------
def test_tree_finds_the_goal_two_moves_away() -> None:
    """h = 100 everywhere except the goal: best-first is breadth-first, and five expansions (the root
    and its at most four children, then states two moves away if there are fewer) generate every
    state two moves away, the goal among them."""
    roots = _p8_at(2, 6)
    big = lambda s: np.full(len(s), 100.0, np.float32)  # noqa: E731
    _, one = lhbl_labels(P8, roots, big, 1)
    assert (one == 101.0).all()  # no child of a depth-2 state is the goal
    states, targets = lhbl_labels(P8, roots, big, 5)
    assert (targets[: len(roots)] == 2.0).all()
    # every expanded node is the root or one of its children. A child not next to the goal has only
    # leaves worth 100 below it, except the root: merged, and expanded, the root gives 1 + 2 = 3, the
    # child's true distance (a cycle in the explored graph that a single backward pass in expansion
    # order, or a tree without merging, would miss: they would give 101)
    np.testing.assert_array_equal(targets, _exact_p8(states))
    assert {1.0, 3.0} <= set(targets[len(roots) :].tolist())


@pytest.mark.parametrize("expansions", [1, 3, 10])
def test_exact_values_are_a_fixed_point_puzzle8(expansions: int) -> None:
    roots = np.concatenate([_p8_at(d, n) for d, n in ((0, 1), (1, 2), (2, 3), (5, 3), (8, 3))])
    states, targets = lhbl_labels(P8, roots, _exact_p8, expansions)
    np.testing.assert_array_equal(targets, _exact_p8(states))
    np.testing.assert_array_equal(targets[: len(roots)], [0, 1, 1, 2, 2, 2, 5, 5, 5, 8, 8, 8])


# ---- 3. cube2 with the exact distance table -----------------------------------------------------
def test_exact_values_are_a_fixed_point_cube2() -> None:
    roots = CUBE2.scramble(np.random.default_rng(2), 40, (0, 14))
    exact = lambda s: cube2_distance(s).astype(np.float32)  # noqa: E731
    states, targets = lhbl_labels(CUBE2, roots, exact, 8)
    assert len(states) > 8 * 30  # most trees ran all their expansions
    np.testing.assert_array_equal(targets, cube2_distance(states))


# ---- 4. duplicates are one node: labels are shortest paths in the explored graph ----------------
def test_duplicate_found_first_by_a_longer_path_cube3() -> None:
    """U and D commute, so X = root U D is also root U' U' D U'. h steers the search down the long
    path first (root, U', U'U', U'U'D: X generated at g = 4), then expands root U, which reaches X
    again at g = 2. Leaves have h = 10 except X (h = 1) and root U (h = 2.5)."""
    root = CUBE3.apply_moves(CUBE3.goal(), CUBE3.parse_moves("F R B L F' R' B' L'"))
    mv = lambda s, text: CUBE3.apply_moves(s, CUBE3.parse_moves(text))  # noqa: E731
    u, up, u2, u2d, x = (mv(root, t) for t in ("U", "U'", "U' U'", "U' U' D", "U D"))
    assert np.array_equal(mv(u2d, "U'"), x)
    h = {u.tobytes(): 2.5, up.tobytes(): 0.0, u2.tobytes(): 0.0, u2d.tobytes(): 0.0, x.tobytes(): 1.0}
    value_fn = lambda s: np.array([h.get(r.tobytes(), 10.0) for r in s], np.float32)  # noqa: E731
    states, targets = lhbl_labels(CUBE3, root[None], value_fn, 5)
    np.testing.assert_array_equal(states, np.stack([root, up, u2, u2d, u]))
    # X is a leaf worth 1; root U and U'U'D are next to it (2); U'U' is next to both (3); the root is
    # next to root U (3); root U' is next to U'U' and the root (4)
    assert targets.tolist() == [3.0, 4.0, 3.0, 2.0, 2.0]


# ---- 5. layout, dtypes, goals, batching ---------------------------------------------------------
def test_roots_first_shapes_dtypes_and_goal_root() -> None:
    roots = np.concatenate([P8.goals(1), _p8_at(6, 2), P8.goals(1)])
    calls: list[int] = []

    def value_fn(s: np.ndarray) -> np.ndarray:
        calls.append(len(s))
        return P8.manhattan(s).astype(np.float32)

    states, targets = lhbl_labels(P8, roots, value_fn, 4)
    assert states.dtype == P8.dtype and states.shape == (4 + 2 * 3, 9)
    assert targets.dtype == np.float32 and targets.shape == (len(states),)
    np.testing.assert_array_equal(states[:4], roots)
    assert targets[0] == 0.0 and targets[3] == 0.0  # goal roots are not expanded
    assert (targets >= 0).all() and np.isfinite(targets).all()
    assert len(calls) == 4  # one value call per expansion step, for all trees together


def test_a_batch_gives_the_same_labels_as_one_root_at_a_time() -> None:
    roots = _p8_roots(3, 3, 3, 16)
    value_fn = _noisy(P8)
    states, targets = lhbl_labels(P8, roots, value_fn, 6)
    singles = [lhbl_labels(P8, r[None], value_fn, 6) for r in roots]
    rows = [roots] + [s[1:] for s, _ in singles]
    labels = [np.array([t[0] for _, t in singles])] + [t[1:] for _, t in singles]
    np.testing.assert_array_equal(states, np.concatenate(rows))
    np.testing.assert_array_equal(targets, np.concatenate(labels))


@pytest.mark.parametrize(
    ("puzzle", "weight"), [(P8, 1.0), (P8, 0.6), (CUBE2, 1.0)], ids=["puzzle8", "puzzle8-w0.6", "cube2"]
)
def test_agrees_with_a_plain_reference(puzzle: Puzzle, weight: float) -> None:
    roots = _p8_roots(4, 6, 2, 14) if puzzle is P8 else puzzle.scramble(np.random.default_rng(4), 6, (2, 14))
    value_fn = _noisy(puzzle)
    states, targets = lhbl_labels(puzzle, roots, value_fn, 12, weight=weight)
    ref = [_reference(puzzle, r, value_fn, 12, weight) for r in roots]
    np.testing.assert_array_equal(states[: len(roots)], roots)
    np.testing.assert_array_equal(states[len(roots) :], np.concatenate([s[1:] for s, _ in ref]))
    want = np.concatenate([[t[0] for _, t in ref]] + [t[1:] for _, t in ref])
    np.testing.assert_allclose(targets, want, rtol=0, atol=1e-5)


class _Frozen(NPuzzle):
    """The 8-puzzle, except that a state with tile 2 in the top-left cell has no move at all."""

    def expand(self, states: np.ndarray) -> np.ndarray:
        children = super().expand(states)
        frozen = states[:, 0] == 2
        children[frozen] = states[frozen][:, None]
        return children


def test_a_state_without_moves_gets_davis_fallback() -> None:
    """DAVI's fallback, move_cost + h(state), for a root and for an inner node with no real move."""
    p = _Frozen(3)
    seven = lambda s: np.where(s[:, 0] == 2, 0.5, 7.0).astype(np.float32)  # noqa: E731
    frozen_root = np.array([[2, 1, 3, 4, 5, 6, 7, 8, 0]], np.uint8)
    assert lhbl_labels(p, frozen_root, seven, 5)[1].tolist() == [1.5]
    root = np.array([[0, 2, 3, 1, 5, 6, 4, 7, 8]], np.uint8)  # L slides tile 2 into the corner
    states, targets = lhbl_labels(p, root, seven, 2)
    np.testing.assert_array_equal(states[1], [2, 0, 3, 1, 5, 6, 4, 7, 8])
    assert targets.tolist() == [2.5, 1.5]


def test_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="expansions must be at least 1, got 0"):
        lhbl_labels(P8, P8.goals(1), _noisy(P8), 0)
    with pytest.raises(ValueError, match="roots must have shape"):
        lhbl_labels(P8, np.zeros((2, 16), np.uint8), _noisy(P8), 1)
