"""Networks per goal (Dong, Hao and Nakayama, §4.2): single-head nets for a sub-goal, multi-head nets over a
shared trunk (Baseline, 4+1, 3+2, 4+2), their joint training with each head's own Bellman targets,
exact resume, saving and loading, and old models still loading."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from puzzlezero import make
from puzzlezero.errors import ModelFileError, PuzzleError
from puzzlezero.nn import load_model, make_heuristic
from puzzlezero.nn.config import MULTIHEAD_VARIANTS, NetConfig
from puzzlezero.nn.io import save_model
from puzzlezero.nn.models import ResidualBlock, build_model, count_parameters
from puzzlezero.puzzles import inputs
from puzzlezero.train.config import TrainConfig
from puzzlezero.train.objectives import target_value_fn
from puzzlezero.train.objectives.davi import one_step_targets
from puzzlezero.train.objectives.multigoal import multigoal_targets
from puzzlezero.train.trainer import Trainer
from tests.conftest import tiny_train_config

GOALS = ("layer1", "layer2", "solved")
P8_GOALS = ("row1", "solved")


def multi_config(variant: str, goals=GOALS, **kw) -> NetConfig:
    blocks, head_layers = MULTIHEAD_VARIANTS[variant]
    return NetConfig(
        input_dim=324, h1=40, h2=20, num_res_blocks=blocks, goals=goals, head_layers=head_layers, **kw
    )


# ---- architecture ------------------------------------------------------------------------------------
def test_seed_variants_share_the_trunk_and_give_each_goal_its_own_layers():
    single = NetConfig(input_dim=324, h1=40, h2=20, num_res_blocks=4)
    base = build_model(multi_config("baseline"))
    # Baseline: only the output layer differs from the single-head network (3 outputs, not 1)
    assert count_parameters(base) - count_parameters(build_model(single)) == 2 * (20 + 1)
    assert base.goal_heads is None and base.value.out_features == 3
    for variant, (blocks, fc, res) in {"4+1": (4, 1, 0), "3+2": (3, 0, 1), "4+2": (4, 0, 1)}.items():
        net = build_model(multi_config(variant))
        trunk_blocks = sum(isinstance(m, ResidualBlock) for m in net.trunk)
        assert trunk_blocks == blocks, variant
        assert net.value is None and len(net.goal_heads) == 3
        for head in net.goal_heads:
            own_fc = sum(isinstance(m, torch.nn.Linear) for m in head.hidden)
            own_res = sum(isinstance(m, ResidualBlock) for m in head.hidden)
            assert (own_fc, own_res) == (fc, res), variant
        assert net.eval()(torch.zeros(5, 324)).shape == (5, 3)
    # the heads are separate parameters: changing one goal's layers leaves the others' outputs
    net = build_model(multi_config("4+1"), seed=0).eval()
    x = torch.rand(4, 324)
    before = net(x).detach().clone()
    with torch.no_grad():
        net.goal_heads[0].out.bias += 1.0
    after = net(x).detach()
    assert torch.allclose(after[:, 0], before[:, 0] + 1.0) and torch.equal(after[:, 1:], before[:, 1:])


def test_net_config_checks_goals_and_keeps_old_config_files_as_they_were():
    with pytest.raises(PuzzleError, match="goals must differ"):
        NetConfig(input_dim=10, goals=("a", "a"))
    with pytest.raises(PuzzleError, match="no policy or Q head"):
        NetConfig(input_dim=10, goals=("a", "b"), q_head=True, num_actions=4)
    old = NetConfig(input_dim=10).to_dict()
    assert "goals" not in old and "head_layers" not in old  # single-head files unchanged
    assert NetConfig.from_dict(multi_config("3+2").to_dict()) == multi_config("3+2")


def test_shipped_models_still_load_as_single_head_networks():
    net = load_model("cube2")
    assert net.config.goals == () and not net.config.multi_head and net.config.goal_names == ("solved",)
    cube2 = make("cube2")
    assert make_heuristic(cube2, net)(cube2.goals(2)).tolist() == [0.0, 0.0]


# ---- heuristics of a multi-head network ----------------------------------------------------------------
def test_multi_head_save_load_and_one_heuristic_per_goal(tmp_path):
    cube = make("cube3")
    net = build_model(multi_config("4+1", num_actions=12), seed=1).eval()
    save_model(tmp_path / "m", net, puzzle="cube3")
    loaded = load_model(tmp_path / "m")
    assert loaded.config == net.config
    x = torch.from_numpy(cube.encode(cube.scramble(np.random.default_rng(0), 6, 10)))
    assert torch.equal(loaded(x), net(x))
    states = np.stack([cube.parse("D"), cube.parse("R U"), cube.goal()])
    raw = np.maximum(loaded(torch.from_numpy(cube.encode(states))).detach().numpy(), 0.0)
    for k, goal in enumerate(GOALS):
        h = make_heuristic(cube, loaded, goal=goal)(states)
        test = cube.goal_named(goal)(states)
        assert np.all(h[test] == 0.0)  # 0 exactly where the goal holds ("D": layer1 and layer2)
        assert np.allclose(h[~test], raw[~test, k], atol=1e-4)  # else this goal's column
    two = build_model(multi_config("baseline", goals=("layer1", "solved")), seed=2)
    with pytest.raises(ModelFileError, match="estimates the cost to reach layer1, solved, not 'layer2'"):
        make_heuristic(cube, two, goal="layer2")
    single = load_model("cube3")
    with pytest.raises(ModelFileError, match="not 'layer1'"):
        make_heuristic(cube, single, goal="layer1")


# ---- each head's targets -------------------------------------------------------------------------------
def test_each_heads_targets_are_zero_at_its_goal_and_one_step_bellman_elsewhere():
    """Hand-checked on the 8-puzzle with goals row1 and solved, and a target network answering 5
    (row1) and 7 (solved) for every state: the goal's column is 0 where it holds, else the
    cheapest move plus 0 where the child meets that goal, plus the head's 5 or 7 otherwise."""
    p = make("puzzle8")
    s1 = np.array([1, 2, 3, 4, 5, 6, 7, 0, 8], np.uint8)  # row1 met; L solves it
    s2 = np.array([1, 2, 0, 4, 5, 3, 7, 8, 6], np.uint8)  # row1 broken; U restores row1 only
    states = np.stack([p.goal(), s1, s2])

    def constant(children: np.ndarray) -> np.ndarray:
        return np.tile(np.array([[5.0, 7.0]], np.float32), (len(children), 1))

    y = multigoal_targets(p, constant, states, P8_GOALS)
    assert y.tolist() == [[0.0, 0.0], [0.0, 1.0], [1.0, 8.0]]


def test_multigoal_targets_equal_one_single_goal_davi_per_head():
    p = make("puzzle8")
    net = build_model(
        NetConfig(input_dim=inputs.dim(p), h1=32, h2=16, num_res_blocks=1, goals=P8_GOALS), seed=3
    ).eval()
    cfg = tiny_train_config(puzzle="puzzle8", goals=P8_GOALS, objective="multigoal")
    values = target_value_fn(p, net, cfg)
    states = p.scramble(np.random.default_rng(4), 64, (1, 20))
    y = multigoal_targets(p, values, states, P8_GOALS)
    for k, goal in enumerate(P8_GOALS):
        head = make_heuristic(p, net, goal=goal)
        assert np.allclose(y[:, k], one_step_targets(p, head, states, is_goal=goal), atol=1e-5), goal


# ---- training --------------------------------------------------------------------------------------------
def _weights_equal(a, b) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_multi_head_training_runs_resumes_exactly_and_exports(tmp_path):
    cfg = tiny_train_config(
        puzzle="puzzle8",
        goals=P8_GOALS,
        objective="multigoal",
        head_layers=1,
        max_scramble=12,
        target_update="period",
    )
    full = Trainer(replace(cfg, max_iterations=40), tmp_path / "full")
    full.run()
    cut = Trainer(replace(cfg, max_iterations=20), tmp_path / "cut")
    cut.run()
    del cut
    resumed = Trainer(replace(cfg, max_iterations=40), tmp_path / "cut", resume=True)
    resumed.run()
    assert _weights_equal(full.model.state_dict(), resumed.model.state_dict())
    assert full.counters.target_updates == resumed.counters.target_updates == 2
    with pytest.raises(PuzzleError, match=r"changed settings \['goals'\]"):
        Trainer(replace(cfg, goals=("solved", "row1"), max_iterations=60), tmp_path / "cut", resume=True)
    model = load_model(full.export(tmp_path / "model"))
    assert model.config.goals == P8_GOALS and model.config.head_layers == 1
    card = json.loads((tmp_path / "model" / "card.json").read_text())
    assert "multi-head DAVI (row1, solved" in card["algorithm"]
    p = make("puzzle8")
    assert make_heuristic(p, model, goal="row1")(p.goals(1)).tolist() == [0.0]


def test_single_head_training_to_a_sub_goal_learns_its_goal(tmp_path):
    cfg = tiny_train_config(puzzle="puzzle8", goal="row1", max_iterations=20, eval_every=20, eval_states=5)
    trainer = Trainer(cfg, tmp_path / "run")
    trainer.run()
    model = load_model(trainer.export(tmp_path / "m"))
    assert model.config.goals == ("row1",) and model.card["train_config"]["goal"] == "row1"
    evals = [json.loads(x) for x in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [e["goal"] for e in evals if e["type"] == "eval"] == ["row1"]
    p = make("puzzle8")
    s = np.array([[1, 2, 3, 4, 5, 6, 7, 0, 8]], np.uint8)  # meets row1
    assert make_heuristic(p, model)(s).tolist() == [0.0]  # its own goal by default


def test_training_config_refuses_goals_the_objectives_cannot_label(tmp_path):
    with pytest.raises(PuzzleError, match="needs both goals"):
        TrainConfig(puzzle="cube3", goals=GOALS)
    with pytest.raises(PuzzleError, match="labels the cost to the solved state only"):
        TrainConfig(puzzle="cube3", goal="layer1", objective="lhbl")
    with pytest.raises(PuzzleError, match="not both"):
        TrainConfig(puzzle="cube3", goal="layer1", goals=GOALS, objective="multigoal")
    cfg = TrainConfig(puzzle="cube3").with_overrides(["goals=layer1,layer2,solved", "objective=multigoal"])
    assert cfg.goals == GOALS and TrainConfig.from_dict(json.loads(cfg.to_json())) == cfg
    from puzzlezero.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="unknown goal 'layer3'"):
        Trainer(tiny_train_config(puzzle="cube3", goal="layer3"), tmp_path / "r")


def test_the_curriculum_grows_by_the_goal_being_learned(tmp_path):
    from puzzlezero.train.curriculum import grow_depth

    p = make("puzzle8")
    cfg = tiny_train_config(puzzle="puzzle8", goal="row1", curriculum="plus1", curriculum_threshold=0.25)

    def zero(states: np.ndarray) -> np.ndarray:
        return np.zeros(len(states), np.float32)

    # one move from the goal only tiles 6 or 8 move: the top row is always in place, so every
    # state meets row1 (100%) and the bound grows by one; to "solved" it must actually solve them
    assert grow_depth(p, zero, np.random.default_rng(0), 1, 10, cfg, "row1") == (2, 100.0)
    trainer = Trainer(replace(cfg, max_iterations=40, max_scramble=10), tmp_path / "run")
    trainer.run()
    lines = [json.loads(x) for x in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    grown = [ln["curriculum_solved_pct"] for ln in lines if "curriculum_solved_pct" in ln]
    assert len(grown) == 2 and trainer.counters.max_scramble_now >= 2


@pytest.mark.parametrize("goals", [{"goal": "row1"}, {"goals": P8_GOALS, "objective": "multigoal"}])
def test_a_solved_model_starts_a_sub_goal_model_without_its_old_action_heads(tmp_path, goals):
    p = make("puzzle8")
    cfg = NetConfig(input_dim=inputs.dim(p), h1=32, h2=16, num_res_blocks=1, num_actions=4, q_head=True)
    save_model(tmp_path / "solved", build_model(cfg, seed=5), puzzle="puzzle8")
    trainer = Trainer(
        tiny_train_config(puzzle="puzzle8", init_from=str(tmp_path / "solved"), max_iterations=10, **goals),
        tmp_path / "run",
    )
    assert trainer.model.q is None and trainer.net_config.goals == goals.get("goals", ("row1",))
    old = load_model(tmp_path / "solved").state_dict()
    new = trainer.model.state_dict()
    assert all(torch.equal(new[k], old[k]) for k in old if k.startswith("trunk."))  # the trunk carries over


@pytest.mark.parametrize("variant", ["baseline", "3+2", "4+2"])
def test_a_shallower_solved_model_grows_into_each_seed_variant_computing_what_it_did(tmp_path, variant):
    p = make("puzzle8")
    cfg = NetConfig(input_dim=inputs.dim(p), h1=32, h2=16, num_res_blocks=1, num_actions=4)
    source = build_model(cfg, seed=5)
    with torch.no_grad():  # trained-looking batch-norm statistics, so eval mode is not the identity
        for m in source.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    save_model(tmp_path / "solved", source, puzzle="puzzle8")
    blocks, head_layers = MULTIHEAD_VARIANTS[variant]
    trainer = Trainer(
        tiny_train_config(
            puzzle="puzzle8",
            init_from=str(tmp_path / "solved"),
            max_iterations=10,
            goals=P8_GOALS,
            objective="multigoal",
            num_res_blocks=blocks,
            head_layers=head_layers,
        ),
        tmp_path / "run",
    )
    assert trainer.net_config.num_res_blocks == blocks
    states = p.scramble(np.random.default_rng(1), 64, 20)
    x = torch.as_tensor(p.encode(states))
    with torch.no_grad():
        before = load_model(tmp_path / "solved").eval()(x)
        after = trainer.model.eval()(x)
    assert after.shape == (64, len(P8_GOALS))
    for g in range(len(P8_GOALS)):  # every head starts as the solved network
        torch.testing.assert_close(after[:, g], before, rtol=1e-5, atol=1e-5)


def test_a_model_cannot_start_a_shallower_network(tmp_path):
    p = make("puzzle8")
    cfg = NetConfig(input_dim=inputs.dim(p), h1=32, h2=16, num_res_blocks=2, num_actions=4)
    save_model(tmp_path / "solved", build_model(cfg, seed=5), puzzle="puzzle8")
    with pytest.raises(PuzzleError, match="may grow from it .* but not shrink"):
        Trainer(
            tiny_train_config(puzzle="puzzle8", init_from=str(tmp_path / "solved"), num_res_blocks=1),
            tmp_path / "run",
        )
