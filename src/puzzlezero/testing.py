"""The conformance checks every puzzle passes, public for authors of puzzles of their own
(Gymnasium's ``check_env`` idea): call :func:`check_puzzle` from your own tests.

>>> import puzzlezero as pz
>>> from puzzlezero.testing import check_puzzle
>>> check_puzzle(pz.make("puzzle15"))["inverse_moves"]
'passed'

Each check raises :class:`PuzzleCheckError` (an :class:`AssertionError`, so test runners report it
as a failure) naming the puzzle, the property that does not hold and why. This module needs only
NumPy: neither pytest nor torch is imported.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from puzzlezero.errors import InvalidMoveError, UnknownNameError
from puzzlezero.puzzles import inputs
from puzzlezero.puzzles.base import Puzzle

__all__ = ["CHECKS", "PuzzleCheckError", "check_puzzle"]


class PuzzleCheckError(AssertionError):
    """A conformance check that failed: ``puzzle`` (its name), ``check`` (the property) and
    ``detail`` (what was found) are attributes; the message holds all three."""

    def __init__(self, puzzle: str, check: str, detail: str) -> None:
        super().__init__(f"puzzle {puzzle!r} fails the {check!r} check: {detail}")
        self.puzzle, self.check, self.detail = puzzle, check, detail


class _Skip(Exception):
    """A check that does not apply to the puzzle (irreversible moves have no inverse to check)."""


def _require(condition: Any, what: str) -> None:
    """An assertion that ``python -O`` keeps."""
    if not condition:
        raise AssertionError(what)


def _equal(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    np.testing.assert_array_equal(actual, expected, err_msg=what)


def _raises(error: type[BaseException], call: Callable[[], Any], what: str) -> None:
    try:
        call()
    except error:
        return
    except Exception as e:  # noqa: BLE001 (named in the message: the wrong type is the finding)
        raise AssertionError(f"{what}: raised {type(e).__name__} ({e}), not {error.__name__}") from e
    raise AssertionError(f"{what}: raised nothing, expected {error.__name__}")


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(2**32))


# ---- the checks: each takes the puzzle, a generator and a batch size ----------------------------
def _constants(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    from puzzlezero.registry import names

    _require(p.name in names(), f"name {p.name!r} is not registered (registered: {', '.join(names())})")
    _require(
        p.num_actions == len(p.action_names) == len(set(p.action_names)) > 0,
        f"num_actions {p.num_actions} and action_names {p.action_names!r}: "
        "one distinct name per action, at least one action",
    )
    inv = p.inverse_action
    _require(inv.shape == (p.num_actions,), f"inverse_action has shape {inv.shape}, not ({p.num_actions},)")
    _require(p.default_scramble_depth >= 1, f"default_scramble_depth {p.default_scramble_depth} < 1")
    goal = p.goal()
    _require(goal.shape == p.state_shape, f"goal() has shape {goal.shape}, state_shape is {p.state_shape}")
    _require(goal.dtype == p.dtype, f"goal() has dtype {goal.dtype}, the puzzle's dtype is {p.dtype}")


def _goal_and_expand(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    g = p.goals(3)
    _require(p.is_goal(g).all(), "is_goal(goals(3)) is not all true")
    empty = p.is_goal(g[:0]).shape
    _require(empty == (0,), f"is_goal of an empty batch has shape {empty}, not (0,)")
    states = p.scramble(rng, n, (1, 20))
    _require(
        states.shape == (n, *p.state_shape) and states.dtype == p.dtype,
        f"scramble(rng, {n}, (1, 20)) gives {states.shape} {states.dtype}, not {(n, *p.state_shape)} {p.dtype}",
    )
    children = p.expand(states)
    want = (n, p.num_actions, *p.state_shape)
    _require(children.shape == want, f"expand gives shape {children.shape}, not {want}")
    for a in range(p.num_actions):
        _equal(p.apply(states, np.full(n, a)), children[:, a], f"apply disagrees with expand for action {a}")
    mask = p.legal_mask(states)
    same = np.all(children.reshape(n, p.num_actions, -1) == states.reshape(n, 1, -1), axis=2)
    _equal(mask, ~same, "legal_mask: legal moves must change the state and illegal ones return it")
    _require(mask.any(axis=1).all(), "legal_mask: a scrambled state has no legal move")


def _inverse_moves(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    inv = p.inverse_action
    if np.any(inv < 0):
        raise _Skip(f"{p.name} has irreversible moves")
    m = max(1, n // 2)
    states = p.scramble(rng, m, (0, 30))
    children = p.expand(states)
    mask = p.legal_mask(states)
    for a in range(p.num_actions):
        back = p.apply(children[:, a], np.full(m, inv[a]))
        ok = mask[:, a]
        _equal(back[ok], states[ok], f"inverse action {inv[a]} does not undo action {a}")


def _scramble(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    _require(p.is_goal(p.scramble(rng, 5, 0)).all(), "scramble to depth 0 does not give goal states")
    one = p.scramble(rng, 200, 1)
    left = float((~p.is_goal(one)).mean())
    _require(left > 0.5, f"a single scramble move left the goal in {left:.0%} of 200 states (at most half)")
    seed = _seed(rng)
    a = p.scramble(np.random.default_rng(seed), 10, (1, 30))
    b = p.scramble(np.random.default_rng(seed), 10, (1, 30))
    _equal(a, b, "scrambles from equally seeded generators differ")


def _encoding(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    m = max(1, n // 8)
    states = p.scramble(rng, m, (1, 10))
    x = p.encode(states)
    want = (m, inputs.dim(p))
    _require(
        x.dtype == np.float32 and x.shape == want,
        f"encode gives {x.shape} {x.dtype}, not {want} float32 (input_dim {want[1]})",
    )
    _require(np.isin(x, [0.0, 1.0]).all(), "the one-hot encoding holds values other than 0 and 1")
    _raises(UnknownNameError, lambda: p.encode(states, "nope"), "encode with an unknown encoding name")


def _hashing(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    m = max(10, n)  # and the first ten of them again: duplicates
    states = p.scramble(rng, m, (1, 40))
    batch = np.concatenate([states, states[:10]])
    uniq, first = p.unique(batch)
    n_distinct = len({s.tobytes() for s in states})
    _require(len(uniq) == n_distinct, f"unique kept {len(uniq)} of {n_distinct} distinct states")
    _equal(uniq, batch[first], "unique's indices do not point at the states it returns")
    h = p.hash64(batch)
    _require(h.dtype == np.uint64, f"hash64 gives dtype {h.dtype}, not uint64")
    _equal(h[:10], h[m:], "hash64 gives equal states different hashes")
    n_hashes = len(set(h[:m].tolist()))
    _require(n_hashes == n_distinct, f"hash64 gives {n_distinct} distinct states {n_hashes} distinct hashes")


def _text_round_trip(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    for s in p.scramble(rng, max(1, n // 6), (1, 40)):
        text = p.format(s)
        _equal(p.parse(text), s, f"parse(format(state)) is not the state (format gave {text!r})")
        j = p.to_json(s)
        _require(p.json_key in j, f"to_json has no key {p.json_key!r} (json_key): {sorted(j)}")
        board = p.render_text(s)
        _require(isinstance(board, str) and board, f"render_text gives {board!r}, not a non-empty string")
        svg = p.to_svg(s)
        _require(
            svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>"),
            f"to_svg is not one <svg> element: {svg[:60]!r}...{svg[-60:]!r}",
        )


def _moves_text(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    names = p.action_names
    got = p.parse_moves(" ".join(names))
    _require(got == list(range(len(names))), f"parse_moves of every action name gives {got}")
    back = p.format_moves(range(len(names)))
    _require(back == list(names), f"format_moves of every action gives {back}, not {list(names)}")
    _raises(
        InvalidMoveError, lambda: p.parse_moves("definitely-not-a-move"), "parse_moves of an unknown move"
    )


def _pickling(p: Puzzle, rng: np.random.Generator, n: int) -> None:
    from puzzlezero.registry import is_registered

    back = pickle.loads(pickle.dumps(p))
    if is_registered(p):  # worker processes rebuild the registry's instance by its name
        _require(back is p, "the registered instance does not unpickle as itself (make(name))")
    _require(
        type(back) is type(p) and back.name == p.name and back.action_names == p.action_names,
        f"unpickles as {back!r} with actions {back.action_names!r}",
    )
    states = p.scramble(rng, max(1, n // 8), (1, 20))
    _equal(back.expand(states), p.expand(states), "the unpickled puzzle expands states differently")


#: the checks by name, in the order :func:`check_puzzle` runs them
CHECKS: dict[str, Callable[[Puzzle, np.random.Generator, int], None]] = {
    "constants": _constants,
    "goal_and_expand": _goal_and_expand,
    "inverse_moves": _inverse_moves,
    "scramble": _scramble,
    "encoding": _encoding,
    "hashing": _hashing,
    "text_round_trip": _text_round_trip,
    "moves_text": _moves_text,
    "pickling": _pickling,
}


def check_puzzle(
    puzzle: Puzzle | str,
    *,
    rng: np.random.Generator | int | None = None,
    n: int = 64,
    checks: Iterable[str] | None = None,
) -> dict[str, str]:
    """Check that ``puzzle`` (an instance or a registered name) keeps the rules every puzzle keeps:
    constants, shapes and dtypes, the goal, ``apply`` agreeing with ``expand``, ``legal_mask``,
    inverse moves undoing moves, seeded scrambles, the encoding, hashing and deduplication, the
    text, JSON and SVG forms, move names, and pickling (worker processes rebuild a registered
    puzzle by its name). Register the puzzle first (``puzzlezero.register``).

    ``rng``: a generator or a seed for the random states (``None``: seed 0, the same states each
    run); ``n``: states per batch (the checks use ``n`` and fractions of it); ``checks``: names
    from :data:`CHECKS` (default all). Returns ``{check: "passed" or "skipped: reason"}``; raises
    :class:`PuzzleCheckError` at the first check that fails, naming the puzzle and the property.
    """
    if isinstance(puzzle, str):
        from puzzlezero.registry import make

        puzzle = make(puzzle)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(0 if rng is None else rng)
    wanted = list(CHECKS) if checks is None else list(checks)
    unknown = [c for c in wanted if c not in CHECKS]
    if unknown:
        raise UnknownNameError(f"unknown checks {unknown}; the checks: {', '.join(CHECKS)}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    report: dict[str, str] = {}
    for name in wanted:
        try:
            CHECKS[name](puzzle, gen, n)
        except _Skip as skip:
            report[name] = f"skipped: {skip}"
            continue
        except AssertionError as e:
            raise PuzzleCheckError(puzzle.name, name, str(e).strip()) from e
        except Exception as e:  # noqa: BLE001 (a puzzle's own error is a failed check too)
            raise PuzzleCheckError(puzzle.name, name, f"raised {type(e).__name__}: {e}") from e
        report[name] = "passed"
    return report
