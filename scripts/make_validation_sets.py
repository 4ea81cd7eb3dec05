#!/usr/bin/env python
"""Regenerate the fixed validation sets shipped with the package (15-puzzle, 7x7 Lights Out).

    python scripts/make_validation_sets.py            # writes src/puzzlezero/train/data/puzzle15_valid.json
    python scripts/make_validation_sets.py --puzzle lightsout7 --depths 2 5 10 15 20 30 50 100 \
        --per-depth 50 --random 100                   # writes .../lightsout7_valid.json

Lights Out: the boards are the puzzle's own scrambles (``d`` uniformly random presses) and
uniformly random boards (every 7x7 board is solvable); each board's optimal cost is its minimum
set of presses from the GF(2) solver (:func:`puzzlezero.classic.optimal.lightsout.min_presses`, the
evaluation oracle, never part of a learned solver), checked by replay. The rest of this text is
about the 15-puzzle.

The set: ``--per-depth`` boards for each random-walk depth in ``--depths`` (the puzzle's own
``scramble`` from the goal, a generator of its own per depth, seeded by ``--seed``), plus as many
uniformly random solvable boards (walk depth ``null``). Every board is solved once, optimally, by
the project's IDA* (:func:`puzzlezero.classic.optimal.sliding_ida.solve_sliding`) over a small additive
5-5-5 pattern database with its reflection (built in seconds; the default 7-8 database, which
takes much longer to build, is not needed for boards this easy), and every solution is checked by
replay. The output is deterministic: the same arguments write the same file.

A board whose solve runs past ``--time-limit`` seconds is left out (and reported), as are the
remaining random boards once ``--budget`` seconds have been spent, so that the generation stays
within a few minutes on one core.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import puzzlezero as pz
from puzzlezero.classic.optimal.sliding_ida import solve_sliding
from puzzlezero.classic.optimal.sliding_pdb import load_sliding_pdb
from puzzlezero.puzzles.npuzzle import NPuzzle
from puzzlezero.storage import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT / "src" / "puzzlezero" / "train" / "data"
DEFAULT_OUT = DATA_DIR / "puzzle15_valid.json"
PARTITION = ((1, 2, 3, 4, 5), (6, 7, 8, 9, 10), (11, 12, 13, 14, 15))
DEPTHS = (5, 10, 15, 20, 30, 40, 60, 80, 120, 200)
RANDOM_STREAM = 0xBA5E  # generator key of the random boards (walk depths use the depth itself)


def random_solvable(puzzle: NPuzzle, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` boards uniform over the solvable ones: a random permutation, and where its parity is
    wrong the first two tiles (not the blank) swapped, which pairs unsolvable with solvable boards."""
    out = np.stack([rng.permutation(puzzle.num_cells) for _ in range(n)]).astype(puzzle.dtype)
    bad = ~puzzle.solvable(out)
    for i in np.flatnonzero(bad):
        a, b = np.flatnonzero(out[i] != 0)[:2]
        out[i, [a, b]] = out[i, [b, a]]
    assert puzzle.solvable(out).all()
    return out


def lightsout_main(args: argparse.Namespace) -> None:
    """The Lights Out set: scrambles by depth and uniformly random boards, exact costs from GF(2)."""
    from puzzlezero.classic.optimal.lightsout import min_presses

    p = pz.make(args.puzzle)
    groups: list[tuple[int | None, np.ndarray]] = [
        (d, p.scramble(np.random.default_rng([args.seed, d]), args.per_depth, d)) for d in args.depths
    ]
    if args.random:
        rng = np.random.default_rng([args.seed, RANDOM_STREAM])
        groups.append((None, rng.integers(0, 2, size=(args.random, *p.state_shape)).astype(p.dtype)))
    rows: list[str] = []
    for depth, states in groups:
        presses = min_presses(p, states)
        for s, x in zip(states, presses, strict=True):
            actions = np.flatnonzero(x)
            if not p.is_goal(p.apply_moves(s, actions)[None])[0]:
                raise SystemExit(f"the presses of a depth-{depth} board do not switch it off")
            if depth is not None and len(actions) > depth:
                raise SystemExit(f"depth {depth}: optimal {len(actions)} > presses made")
            row = {
                p.json_key: [int(v) for v in s],
                "walk_depth": depth,
                "optimal_cost": len(actions),
                "solution": " ".join(p.format_moves(actions)),
            }
            rows.append(json.dumps(row, separators=(",", ":")))
        costs = presses.sum(axis=1)
        print(
            f"depth {depth}: optimal cost {costs.min()}-{costs.max()} (mean {costs.mean():.1f})",
            file=sys.stderr,
        )
    header = {
        "puzzle": p.name,
        "made_by": f"scripts/make_validation_sets.py --puzzle {p.name} --depths "
        + f"{' '.join(map(str, args.depths))} --per-depth {args.per_depth} --random {args.random} --seed {args.seed}",
        "method": (
            "boards: for each depth d, the puzzle's scramble(np.random.default_rng([seed, d]), per_depth, d) "
            f"(d uniformly random presses); walk_depth null: uniformly random boards (np.random.default_rng"
            f"([seed, {RANDOM_STREAM}])). optimal_cost: the minimum set of presses over GF(2) "
            "(puzzlezero.classic.optimal.lightsout.min_presses), checked by replay"
        ),
        "seed": args.seed,
        "walk_depths": args.depths,
        "per_depth": args.per_depth,
        "random_boards": args.random,
        "dropped": [],
    }
    write_set(args.out or DATA_DIR / f"{p.name}_valid.json", header, rows)


def write_set(out: Path, header: dict, rows: list[str]) -> None:
    """One JSON object, a state per line."""
    body = json.dumps(header, separators=(",", ":"))[:-1]
    text = body + ',"states":[\n' + ",\n".join(rows) + "\n]}\n"
    json.loads(text)  # the file is one JSON object
    atomic_write_text(out, text)
    print(f"wrote {len(rows)} boards to {out}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--puzzle", choices=("puzzle15", "lightsout7"), default="puzzle15")
    ap.add_argument("--depths", type=int, nargs="+", default=list(DEPTHS))
    ap.add_argument("--per-depth", type=int, default=20)
    ap.add_argument("--random", type=int, default=20, help="uniformly random solvable boards")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per board")
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for all solves")
    ap.add_argument("--out", type=Path, default=None, help="default: the package's data folder")
    args = ap.parse_args()
    if args.puzzle == "lightsout7":
        lightsout_main(args)
        return
    args.out = args.out or DEFAULT_OUT

    t_start = time.perf_counter()
    p = pz.make("puzzle15")
    assert isinstance(p, NPuzzle)
    pdb = load_sliding_pdb(4, PARTITION)
    print(f"pattern database ready in {time.perf_counter() - t_start:.1f} s", file=sys.stderr)

    groups: list[tuple[int | None, np.ndarray]] = []
    for d in args.depths:
        groups.append((d, p.scramble(np.random.default_rng([args.seed, d]), args.per_depth, d)))
    if args.random:
        groups.append(
            (None, random_solvable(p, np.random.default_rng([args.seed, RANDOM_STREAM]), args.random))
        )

    rows: list[str] = []
    dropped: list[str] = []
    t_solve = time.perf_counter()
    for depth, states in groups:
        t_group, costs = time.perf_counter(), list[int]()
        for i, s in enumerate(states):
            spent = time.perf_counter() - t_solve
            if spent > args.budget:
                dropped.append(f"depth {depth} board {i}: budget of {args.budget:.0f} s spent")
                continue
            r = solve_sliding(p, s, pdb=pdb, time_limit=min(args.time_limit, args.budget - spent + 1))
            if not r.solved:
                dropped.append(f"depth {depth} board {i}: {r.status}")
                continue
            if not p.is_goal(p.apply_moves(s, r.actions)[None])[0]:
                raise SystemExit(f"solution of depth {depth} board {i} does not replay to the goal")
            cost = len(r.actions)
            if depth is not None and cost > depth:
                raise SystemExit(f"depth {depth} board {i}: optimal {cost} > walk length")
            costs.append(cost)
            row = {
                "tiles": [int(t) for t in s],
                "walk_depth": depth,
                "optimal_cost": cost,
                "solution": " ".join(p.format_moves(r.actions)),
            }
            rows.append(json.dumps(row, separators=(",", ":")))
        print(
            f"walk depth {depth}: {len(costs)} boards, optimal cost {min(costs, default=0)}-"
            f"{max(costs, default=0)} (mean {np.mean(costs) if costs else 0:.1f}), "
            f"{time.perf_counter() - t_group:.1f} s",
            file=sys.stderr,
        )

    header = {
        "puzzle": "puzzle15",
        "made_by": "scripts/make_validation_sets.py "
        + f"--depths {' '.join(map(str, args.depths))} --per-depth {args.per_depth} "
        + f"--random {args.random} --seed {args.seed}",
        "method": (
            "boards: for each walk depth d, the puzzle's scramble(np.random.default_rng([seed, d]), "
            "per_depth, d) (random walks of the blank from the goal, never a blocked move); "
            f"walk_depth null: uniformly random solvable boards (np.random.default_rng([seed, {RANDOM_STREAM}])). "
            "optimal_cost: IDA* (puzzlezero.classic.optimal.sliding_ida.solve_sliding) over the additive "
            "5-5-5 pattern database (tiles 1-5, 6-10, 11-15) with its reflection; solution: the "
            "optimal moves (tile directions), checked by replay"
        ),
        "seed": args.seed,
        "walk_depths": args.depths,
        "per_depth": args.per_depth,
        "random_boards": args.random,
        "dropped": dropped,
    }
    write_set(args.out, header, rows)
    print(f"{len(dropped)} dropped; {time.perf_counter() - t_start:.1f} s", file=sys.stderr)
    for line in dropped:
        print(f"  dropped {line}", file=sys.stderr)


if __name__ == "__main__":
    main()
