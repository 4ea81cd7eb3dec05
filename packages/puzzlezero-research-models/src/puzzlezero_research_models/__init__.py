"""The research models of puzzlezero, one folder each, found by name once installed.

- ``cube3-adi``: autodidactic iteration, a policy and value network (McAleer, Agostinelli,
  Shmakov and Baldi, "Solving the Rubik's Cube Without Human Knowledge"), for MCTS;
- ``cube3-selfplay``: AlphaZero-style self-play with symmetry augmentation;
- ``cube3-layered``: the layer-by-layer solver's multi-headed networks (Dong, Hao and Nakayama,
  "Solving the Rubik's Cube with Deep Reinforcement Learning Using Multi-Headed Models");
- ``cube_4-4-4``: a first 4x4x4 network in the competition's slice metric (random-walk labels),
  the weights to continue training from (``--init-from cube_4-4-4``); it solves states about a dozen
  moves from the goal, not yet deep ones.

puzzlezero finds them through the entry point group ``puzzlezero.models``; nothing here is imported
to use them.
"""
