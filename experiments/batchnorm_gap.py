"""How far a network's inference output lies from its training-mode output on training states.

A training step normalises each batch-norm layer by its batch's statistics; the target network, the
label worker and the searches run the network on its running statistics. On states like those it
was trained on the two agree; on a new mix of states (greedy descents beside scrambles) they may
not, and the gap is added to the labels at every target update (docs/training-research.md, "Frozen batch
normalisation"). This draws ``--batches`` batches of training states as the trainer would (plain
scrambles, a ``--share`` of them from greedy descents under the network), shuffled, and prints the
mean of inference minus training-mode output, over all states and over each kind.

Example::

    python experiments/batchnorm_gap.py puzzle48 --max-scramble 6000 --share 0.25 --steps 1000 --stride 100
"""

from __future__ import annotations

import argparse
import copy
import sys

import numpy as np
import torch

from puzzlezero import make
from puzzlezero.errors import PuzzleError
from puzzlezero.nn import load_model
from puzzlezero.nn.heuristic import encode_rows, make_heuristic
from puzzlezero.train.config import TrainConfig
from puzzlezero.train.descents import training_states


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("puzzle")
    ap.add_argument("--model", default=None, help="a model folder (default: the shipped one)")
    ap.add_argument(
        "--max-scramble", type=int, default=None, help="K of the scrambles (default: the puzzle's)"
    )
    ap.add_argument("--share", type=float, default=0.0, help="share of states from descents (default 0)")
    ap.add_argument("--steps", type=int, default=64, help="steps of each descent (default 64)")
    ap.add_argument("--stride", type=int, default=1, help="every stride-th descent state kept (default 1)")
    ap.add_argument("--batch", type=int, default=1000, help="states per training batch (default 1000)")
    ap.add_argument("--batches", type=int, default=10, help="batches (default 10)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if min(args.batch, args.batches) < 1:
        ap.error("--batch and --batches must be at least 1")
    try:
        puzzle = make(args.puzzle)
        net = load_model(args.model or puzzle.name)
        k = args.max_scramble or puzzle.default_scramble_depth
        config = TrainConfig(
            puzzle=args.puzzle,
            max_scramble=k,
            objective="lhbl",
            descent_share=args.share,
            descent_steps=args.steps,
            descent_stride=args.stride,
        )
    except (PuzzleError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    n = args.batch * args.batches
    n_desc = round(n * args.share)
    h = make_heuristic(puzzle, net, int8=False)
    states = training_states(puzzle, rng, n, k, h, config)  # the last n_desc from descents
    kind = np.repeat([0, 1], [n - n_desc, n_desc])
    order = rng.permutation(n)
    states, kind = states[order], kind[order]
    x = torch.from_numpy(encode_rows(puzzle, states, net.config.encoding))
    training = copy.deepcopy(net).train()  # batch statistics; the copy's running ones may move
    net.eval()
    with torch.no_grad():
        inference = net(x).reshape(n, -1)[:, 0].numpy().astype(np.float64)
        stepped = torch.cat([training(x[i : i + args.batch]) for i in range(0, n, args.batch)])
        stepped = stepped.reshape(n, -1)[:, 0].numpy().astype(np.float64)
    gap = inference - stepped
    print(
        f"{args.puzzle}, {args.model or 'shipped model'}: {args.batches} batches of {args.batch}, "
        f"{args.share:.0%} from descents ({args.steps} steps, stride {args.stride}), scrambles of 1-{k} moves"
    )
    print(f"inference output, mean: {inference.mean():.2f}")
    print(f"inference minus training mode: {gap.mean():+.3f} (scrambles {gap[kind == 0].mean():+.3f}", end="")
    print(f", descents {gap[kind == 1].mean():+.3f})" if n_desc else ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
