"""Heuristic search over puzzles: batch weighted A* (:func:`bwas`), greedy best-first
(:func:`gbfs`), beam search (:func:`beam`; :func:`qbeam` on a Q function, :func:`pbeam` on a policy) and Monte Carlo
tree search (:func:`mcts`, over a policy-value function, :mod:`.policy`); :func:`wcd` turns a
heuristic and a policy into the weighted convolutional distance heuristic. All take plain functions
(``states[B] -> float32[B]``) and never import torch; all search many instances in one batched
loop. See :mod:`.bwas` for the exact semantics (goal test on selection, the paper's reopening rule,
node counting) and :mod:`.beam` for the beam's.

>>> import numpy as np
>>> from puzzlezero import make
>>> from puzzlezero.search import bwas
>>> p = make("puzzle8")
>>> start = p.apply_moves(p.goal(), p.parse_moves("D R D"))
>>> (r,) = bwas(p, start, lambda s: np.zeros(len(s), np.float32), weight=1.0, batch_size=10)
>>> r.status, p.format_moves(r.actions)
('solved', ['U', 'L', 'U'])
"""

from puzzlezero.search.beam import beam, pbeam, qbeam
from puzzlezero.search.bwas import bwas
from puzzlezero.search.gbfs import gbfs
from puzzlezero.search.mcts import mcts
from puzzlezero.search.result import SearchResult, SearchStats, Status
from puzzlezero.search.wcd import wcd

__all__ = ["SearchResult", "SearchStats", "Status", "beam", "bwas", "gbfs", "mcts", "pbeam", "qbeam", "wcd"]
