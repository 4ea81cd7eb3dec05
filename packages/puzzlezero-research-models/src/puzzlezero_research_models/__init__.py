"""The research models of puzzlezero, one folder each, found by name once installed.

- ``cube3-adi``: autodidactic iteration, a policy and value network (McAleer, Agostinelli,
  Shmakov and Baldi, "Solving the Rubik's Cube Without Human Knowledge"), for MCTS;
- ``cube3-selfplay``: AlphaZero-style self-play with symmetry augmentation;
- ``cube3-layered``: the layer-by-layer solver's multi-headed networks (Dong, Hao and Nakayama,
  "Solving the Rubik's Cube with Deep Reinforcement Learning Using Multi-Headed Models").

puzzlezero finds them through the entry point group ``puzzlezero.models``; nothing here is imported
to use them.
"""
