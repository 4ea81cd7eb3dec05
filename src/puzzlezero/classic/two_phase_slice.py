"""Kociemba's two-phase algorithm in the slice quarter-turn metric of the Santa 2023 competition's
3x3x3 (``cube_3-3-3``: every quarter turn of any of the nine slices one move, no centre fixed).

The cube is searched as cube3 reads it (:class:`~puzzlezero.puzzles.cube.frames.Cube3View`): its
pieces in the frame of its centres, and that frame, one of the 24 turns of the whole cube. In the
reading an outer slice's quarter turn is a face turn, and a middle slice's the two faces of its
axis turned the same way about it (``R L'``) with the frame turned a quarter about that axis; so
the search turns eighteen moves at one each: the twelve face turns and the six pairs. The two
phases are those of :mod:`puzzlezero.classic.two_phase` (its kernel, run with these moves):

1. **Phase 1** into ``G1``: corners untwisted, edges unflipped, the E-slice edges in the E slice
   (of the reading), over all eighteen moves; its table is the exact phase-1 distance in this
   metric (the same 64,430 flip-slice classes x 2,187 twists, built again over the eighteen
   moves), and the frame must come to keep its U-D axis upright (one move at most, the larger
   bound where it is).
2. **Phase 2** within G1 by the moves that keep it, found from the coordinates: ``U``, ``D`` and
   the E slice (``U D'``) a quarter turn (one move), the others a half turn (two); its tables count
   corners or U/D edges with the slice edges and the frame, which must end home.

An answer's parity is fixed by the cube (a face turn changes the corners' permutation parity, a
middle slice the frame's), so each improvement is two moves shorter. Every phase-1 length is
tried in turn; each answer is replayed on the puzzle. Phase 1's table (141 MB) is built once, in
about fifteen seconds, and cached like cube3's (``puzzlezero pdb build cube_3-3-3 --kind
two-phase``).

>>> from puzzlezero import make
>>> cube = make("cube_3-3-3")
>>> state = cube.apply_moves(cube.goal(), cube.parse_moves("r1 f0 d2 r1'"))
>>> r = solve_two_phase_slice(cube, state, time_limit=30)
>>> len(r.actions), bool(cube.is_goal(cube.apply_moves(state, r.actions)[None])[0])
(4, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from puzzlezero.classic.optimal.cube_model import CORNER_MOVE, EDGE_MOVE, MOVE_NAMES, facelets_to_pieces
from puzzlezero.classic.two_phase import (
    Answers,
    Guise,
    Metric,
    TwoPhaseTables,
    build_tables,
    memory_estimate,
    merge_axis_runs,
    search_guises,
)
from puzzlezero.errors import PuzzleError
from puzzlezero.puzzles.base import Puzzle
from puzzlezero.search import clock
from puzzlezero.search.result import SearchResult, check_positive

if TYPE_CHECKING:
    from puzzlezero.puzzles.cube.frames import Cube3View

__all__ = [
    "SliceCube",
    "slice_cube",
    "solve_two_phase_slice",
    "prepare_tables",
    "memory_estimate",
    "TABLE_NAME",
]

#: the table file's name in the tables' cache, and what it must say of itself
TABLE_NAME = "cube_3-3-3-two-phase"
TABLE_META = {
    "kind": "cube_3-3-3-two-phase",
    "metric": "slice quarter-turn, read in the centres' frame",
    "phase1": "flip-slice classes x twist",
}
#: the search's moves axis by axis, in the order of their layers (kernel move ``2 * i`` turns
#: ``READING[i]``, ``2 * i + 1`` its inverse), each as cube3's quarter turns: a face, or a pair
READING = (("U",), ("U", "D'"), ("D",), ("R",), ("R", "L'"), ("L",), ("F",), ("F", "B'"), ("B",))
#: the competition's slices in the same order, for merging runs of its moves about one axis
LAYERS = ("d0", "d1", "d2", "r0", "r1", "r2", "f0", "f1", "f2")


@dataclass(frozen=True)
class SliceCube:
    """The competition's 3x3x3 as the two-phase kernel sees it (:func:`slice_cube`): its metric
    (the frame as its ``ce``), the competition move that makes each kernel move in each frame
    (``actions[frame, move]``) and the reading of its states."""

    metric: Metric
    actions: np.ndarray
    view: Cube3View
    #: ``int64[3, A]``: each of the puzzle's moves seen after turning the whole cube about its
    #: URF-DBL diagonal 0, 1 and 2 times (each axis upright once)
    renamings: np.ndarray

    def pieces(self, state: np.ndarray) -> tuple[np.ndarray, int]:
        """Piece values ``int64[20]`` of the reading of a competition state and its frame; an
        :class:`~puzzlezero.errors.InvalidStateError` for one that is not a 3x3x3 position."""
        read, frame = self.view.cube3(np.asarray(state).reshape(1, -1))
        return facelets_to_pieces(read)[0], int(frame[0])

    def moves(self, frame: int, kernel: list[int]) -> list[int]:
        """The competition's moves that turn kernel moves ``kernel`` from ``frame``."""
        out = []
        for m in kernel:
            out.append(int(self.actions[frame, m]))
            frame = int(self.metric.ce_move[frame, m])
        if frame != 0:  # pragma: no cover - an answer ends with the frame home
            raise PuzzleError("a two-phase answer that leaves the cube turned")
        return out


def _turns(names: tuple[str, ...]) -> list[int]:
    return [MOVE_NAMES.index(n) for n in names]


@lru_cache(maxsize=2)
def slice_cube(puzzle: Puzzle) -> SliceCube:
    """The kernel's view of ``puzzle`` (the competition's 3x3x3, refused by name otherwise): the
    piece tables of the eighteen moves (cube3's face turns and the pairs), and how each move
    turns the frame and which of the puzzle's moves makes it in each frame, found by turning
    states of every frame with each of the puzzle's moves."""
    from puzzlezero.classic.optimal.cube_model import apply_moves
    from puzzlezero.puzzles.cube.frames import Cube3View

    view = Cube3View(puzzle)  # checks the moves and the goal
    words = [w for base in READING for w in (_turns(base), [t ^ 1 for t in _turns(base)])]
    nm = len(words)
    cmove = np.arange(24)[:, None].repeat(nm, axis=1)
    emove = np.arange(24)[:, None].repeat(nm, axis=1)
    for m, word in enumerate(words):
        for t in word:
            cmove[:, m], emove[:, m] = CORNER_MOVE[cmove[:, m], t], EDGE_MOVE[emove[:, m], t]
    ce_move = np.full((24, nm), -1, dtype=np.int64)
    actions = np.full((24, nm), -1, dtype=np.int64)
    rng = np.random.default_rng(0)
    goal = np.asarray(puzzle.goal()).reshape(-1)
    perms = view.moves
    for _ in range(200):  # states of every frame, each turned by every move
        state = puzzle.apply_moves(goal, [int(a) for a in rng.integers(0, len(perms), 30)])
        read, frame = view.cube3(state[None])
        v = facelets_to_pieces(read)[0]
        kids = np.asarray(state)[perms]
        kid_read, kid_frame = view.cube3(kids)
        kid_v = facelets_to_pieces(kid_read)
        for a in range(len(perms)):
            m = next(m for m, word in enumerate(words) if (apply_moves(v, word) == kid_v[a]).all())
            k = int(frame[0])
            if actions[k, m] >= 0 and (
                actions[k, m] != a or ce_move[k, m] != kid_frame[a]
            ):  # pragma: no cover
                raise PuzzleError(f"{puzzle.name}: a move that is not a function of the frame")
            actions[k, m], ce_move[k, m] = a, kid_frame[a]
    if (actions < 0).any():  # pragma: no cover - 200 scrambles reach every frame
        raise PuzzleError(f"{puzzle.name}: some frame was not reached")
    metric = Metric(
        name="slice quarter-turn (read in the centres' frame)",
        cmove=cmove,
        emove=emove,
        axis=np.arange(nm) // 6,
        layer=(np.arange(nm) // 2) % 3,
        ce_move=ce_move,
        ce_parity=(view.rotation_moves.astype(np.int64) // 3) % 2,
    )
    return SliceCube(metric, actions, view, _diagonal_renamings(puzzle, view.moves))


def _diagonal_renamings(puzzle: Puzzle, perms: np.ndarray) -> np.ndarray:
    """``int64[3, A]``: the puzzle's moves conjugated by the turns of the whole cube about a
    diagonal (0, 1 and 2 times), which take its ``f`` slices to its ``r`` slices, those to ``d``
    and those to ``f``."""
    names = list(puzzle.action_names)
    index = {tuple(p): a for a, p in enumerate(perms.tolist())}
    whole = []
    for axis in "frd":
        p = np.arange(perms.shape[1])
        for layer in range(3):
            p = p[perms[names.index(f"{axis}{layer}")]]
        whole.append(p)
    for r in (whole[0][whole[1]], whole[1][whole[0]], whole[0][whole[2]], whole[2][whole[0]]):
        rinv = np.argsort(r)
        conj = [index.get(tuple(rinv[perms[a][r]].tolist()), -1) for a in range(len(perms))]
        if min(conj) >= 0 and all(
            names[conj[a]][0] == "rdf"["frd".index(names[a][0])] for a in range(len(perms))
        ):
            once = np.asarray(conj, dtype=np.int64)
            return np.stack([np.arange(len(perms)), once, once[once]])
    raise PuzzleError(
        f"{puzzle.name}: no turn of the whole cube takes its f slices to r, r to d and d to f"
    )  # pragma: no cover


@lru_cache(maxsize=2)
def slice_tables(puzzle: Puzzle) -> TwoPhaseTables:
    """The two-phase tables of the competition's 3x3x3 (phase 1's built once and cached)."""
    return build_tables(
        slice_cube(puzzle).metric,
        TABLE_NAME,
        TABLE_META,
        command=f"puzzlezero pdb build {puzzle.name} --kind two-phase",
    )


def prepare_tables(puzzle: Puzzle) -> str:
    """Build (or load) the tables ahead of a solve; a line for people."""
    t0 = clock.now()
    tables = slice_tables(puzzle)
    return (
        f"{puzzle.name}: two-phase tables (slice quarter-turn metric), {tables.nbytes / 1e6:,.1f} MB, "
        f"ready in {clock.now() - t0:,.1f} s"
    )


def solve_two_phase_slice(
    puzzle: Puzzle,
    state: np.ndarray,
    *,
    time_limit: float | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    guises: int = 6,
    on_solution: Callable[[SearchResult], None] | None = None,
) -> SearchResult:
    """The shortest answer in the competition's moves that the two-phase search finds for one
    state of its 3x3x3 by ``deadline`` or ``time_limit`` seconds, whichever comes first, or within
    ``max_nodes`` generated nodes; status "solved" when it ends with an answer (optimal where the
    search finished before its limits), else the limit that stopped it. ``guises``: how many of
    the six guises to search (1: the cube as it is; then its inverse, and each again with the
    R-L and then the F-B axis upright), all but the first made from its first answer.
    ``on_solution(result)``: each shorter answer as it comes.
    Another puzzle is refused by name."""
    check_positive("time_limit", time_limit)
    check_positive("max_nodes", max_nodes, integer=True)
    if not 1 <= guises <= 6:
        raise PuzzleError(f"guises is 1 to 6 (the three axes upright, each inverted or not); got {guises}")
    t0 = clock.now()
    stop = clock.deadline_after(time_limit, deadline, start=t0)
    cube = slice_cube(puzzle)
    start = np.asarray(state).reshape(-1)
    v, frame = cube.pieces(start)
    if bool(puzzle.is_goal(start[None])[0]):
        return SearchResult(True, (), 1, 0, clock.now() - t0, "solved", cost=0.0)
    tables = slice_tables(puzzle)
    names = list(puzzle.action_names)
    inverse = np.asarray(puzzle.inverse_action, dtype=np.int64)
    merge_ids = [names.index(n) for layer in LAYERS for n in (layer, names[inverse[names.index(layer)]])]

    def invert(moves: list[int]) -> list[int]:
        return [int(inverse[a]) for a in reversed(moves)]

    def to_actions(g: Guise) -> list[int]:
        turns, inverted = g.tag
        moves = cube.moves(g.ce0, g.answer())
        moves = [int(cube.renamings[(3 - turns) % 3, a]) for a in (invert(moves) if inverted else moves)]
        merged = merge_axis_runs([merge_ids.index(a) for a in moves], np.arange(18) // 6)
        return [merge_ids[m] for m in merged]

    answers = Answers(puzzle, start, t0, to_actions, on_solution)

    # the cube as it is, until its first answer: the other guises are made from it
    def first(g: Guise, nodes: int) -> int:
        answers.take(g, nodes)
        return 0  # the search stops here

    first_nodes = 0
    if guises > 1:
        _, first_nodes = search_guises(
            [Guise(v, frame, (0, False), False, tables)], tables, first, stop, max_nodes
        )
    ladder = [Guise(v, frame, (0, False), False, tables)]
    answer = answers.best
    if answer is not None:
        goal = np.asarray(puzzle.goal()).reshape(-1)
        for turns in range(3):
            for inverted in (False, True):
                if (turns, inverted) == (0, False) or len(ladder) >= guises:
                    continue
                # the guise's state: the goal turned by the answer's inverse (or by the answer),
                # its moves seen from the turned cube; solved by that answer seen likewise
                word = list(answer) if inverted else invert(list(answer))
                image = puzzle.apply_moves(goal, [int(cube.renamings[turns, a]) for a in word])
                gv, gframe = cube.pieces(np.asarray(image))
                ladder.append(Guise(gv, gframe, (turns, inverted), False, tables))
    if max_nodes is not None:
        max_nodes = max(max_nodes - first_nodes, 1)
    status, nodes = search_guises(ladder, tables, answers.take, stop, max_nodes)
    return answers.result(status, nodes + first_nodes)
