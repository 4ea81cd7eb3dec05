#!/usr/bin/env python
"""Solve rates by scramble depth of a self-play model (Rute's plot), beside the same network
untrained (a benchmark, not a test).

Usage: python benchmarks/selfplay_eval.py MODEL [--states 50] [--depths 1,2,3,4,5,6,8,10]
       [--simulations 16] [--seed 0]

For each depth, ``--states`` fresh scrambles (seeded; goals left out) are solved two ways, each
allowed ``2 * depth + 2`` moves: **policy** = always play the policy head's favourite move (no
search); **MCTS** = the self-play episode (:func:`puzzlezero.train.objectives.selfplay.play_episodes`, the
discounted PUCT search with ``--simulations`` per move, no symmetry). On cube2 it also gives the
share of states whose favourite move is optimal and the value head's mean cost-to-go beside the
mean exact distance. Prints a Markdown table; the "before" columns are the network as training
started it (same config and seed, value head at ``gamma^J = 0.5``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import puzzlezero as pz
from puzzlezero.nn import build_model, load_model, make_heuristic, make_policy
from puzzlezero.nn.heuristic import make_policy_value_function
from puzzlezero.train.objectives.selfplay import init_value_head, play_episodes


def policy_greedy(puzzle: pz.Puzzle, policy, starts: np.ndarray, moves: int) -> float:
    cur = starts.copy()
    for _ in range(moves):
        live = ~puzzle.is_goal(cur)
        if not live.any():
            break
        cur[live] = puzzle.apply(cur[live], policy(cur[live]).argmax(axis=1))
    return float(puzzle.is_goal(cur).mean())


def row(puzzle: pz.Puzzle, model, starts: np.ndarray, depth: int, sims: int, gamma: float) -> dict:
    out: dict = {}
    policy = make_policy(puzzle, model, source="policy")
    out["policy"] = policy_greedy(puzzle, policy, starts, 2 * depth + 2)
    t = time.perf_counter()
    ep = play_episodes(
        puzzle,
        starts,
        make_policy_value_function(puzzle, model),
        simulations=sims,
        max_moves=2 * depth + 2,
        gamma=gamma,
        history=model.config.history,
    )
    out["mcts"] = float(ep.solved.mean())
    out["mcts_s"] = (time.perf_counter() - t) / len(starts)
    if puzzle.name == "cube2":
        from puzzlezero.puzzles.cube.table import distance

        d = distance(starts)
        best = policy(starts).argmax(axis=1)
        out["optimal"] = float((distance(puzzle.apply(starts, best)) == d - 1).mean())
        out["J"] = float(make_heuristic(puzzle, model)(starts).mean())
        out["d"] = float(d.mean())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--states", type=int, default=50)
    ap.add_argument("--depths", default="1,2,3,4,5,6,8,10")
    ap.add_argument("--simulations", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    trained = load_model(args.model)
    puzzle = pz.make(trained.puzzle)
    cfg = trained.card.get("train_config", {})
    gamma = float(cfg.get("selfplay_gamma", 0.95))
    fresh = build_model(trained.config, seed=int(cfg.get("seed", 0)))
    init_value_head(fresh, gamma)
    fresh.eval()
    rng = np.random.default_rng(args.seed)
    cube2 = puzzle.name == "cube2"
    head = (
        "| depth | policy before | policy after | MCTS before | MCTS after | s per cube (MCTS, in lockstep) |"
    )
    head += " optimal move before | after | mean J after | mean distance |" if cube2 else ""
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for depth in (int(x) for x in args.depths.split(",")):
        starts = puzzle.scramble(rng, args.states * 2, depth)
        starts = starts[~puzzle.is_goal(starts)][: args.states]
        b = row(puzzle, fresh, starts, depth, args.simulations, gamma)
        a = row(puzzle, trained, starts, depth, args.simulations, gamma)
        line = (
            f"| {depth} | {b['policy']:.0%} | {a['policy']:.0%} | {b['mcts']:.0%} | {a['mcts']:.0%} "
            f"| {a['mcts_s']:.2f} |"
        )
        if cube2:
            line += f" {b['optimal']:.0%} | {a['optimal']:.0%} | {a['J']:.1f} | {a['d']:.1f} |"
        print(line, flush=True)


if __name__ == "__main__":
    main()
