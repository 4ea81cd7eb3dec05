"""Every model card, shipped or freshly trained, has the one shape of ``models/card.schema.json``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from puzzlezero.cards import network_section, schema, validate

ROOT = Path(__file__).resolve().parents[1]
#: the core package's models and the research models' companion distribution, as in the repository
MODEL_ROOTS = (
    ROOT / "src" / "puzzlezero" / "models",
    ROOT / "packages" / "puzzlezero-research-models" / "src" / "puzzlezero_research_models",
)
CARDS = sorted(c for root in MODEL_ROOTS for c in root.rglob("card.json"))
#: numbered rounds of work, issues or source texts: a card speaks of the model, not of how it was made
HISTORY = re.compile(
    r"\b(sessions?|rounds?|issues?) #?\d+|\bseeds? 0\d\d\b|seeds/0|_s\d+_|\bs\d\d\b", re.IGNORECASE
)


def _strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema())


def test_every_model_folder_has_a_card() -> None:
    folders = {
        p.parent
        for root in MODEL_ROOTS
        for pattern in ("config.json", "stages.json")
        for p in root.rglob(pattern)
    }
    assert folders and folders <= {p.parent for p in CARDS}


def test_every_model_folder_stores_its_weights_once_as_half_precision_npz() -> None:
    folders = sorted({p.parent for root in MODEL_ROOTS for p in root.rglob("config.json")})
    assert len(folders) >= 13
    assert [p for root in MODEL_ROOTS for p in root.rglob("*.pt")] == []
    for folder in folders:
        assert json.loads((folder / "config.json").read_text(encoding="utf-8"))["weights"] == "float16"
        with np.load(folder / "model.npz", allow_pickle=False) as weights:
            kinds = {weights[k].dtype.kind for k in weights.files}
            assert {weights[k].dtype for k in weights.files if weights[k].dtype.kind == "f"} == {
                np.dtype(np.float16)
            }, folder
        assert kinds <= {"f", "i"}, folder


def _name(card: Path) -> str:
    """A card's model name: its folder below the models' root (``cube3-layered/layer1``)."""
    root = next(r for r in MODEL_ROOTS if r in card.parents)
    return str(card.parent.relative_to(root))


@pytest.mark.parametrize("path", CARDS, ids=_name)
def test_a_shipped_card_validates(path: Path) -> None:
    card = json.loads(path.read_text(encoding="utf-8"))
    assert validate(card) == []
    assert card["name"] == _name(path)
    assert (card["network"] is None) == ("stages" in card)
    for evaluation in card["evaluations"]:
        m = evaluation["metrics"]
        if m.get("mean_excess") is not None:
            assert m["mean_excess"] == pytest.approx(m["mean_length"] - m["mean_optimal_length"], abs=1e-3)
    if card["runs"] and card.get("samples_seen_total") is not None:
        assert card["samples_seen_total"] == sum(r["samples"] for r in card["runs"])
    found = sorted({m.group(0) for s in _strings(card) for m in [HISTORY.search(s)] if m})
    assert found == [], f"{path}: names rounds of work: {found}"


def test_validate_names_what_is_wrong() -> None:
    card = json.loads((MODEL_ROOTS[0] / "cube2" / "card.json").read_text(encoding="utf-8"))
    del card["intended_use"]
    card["bench_60_100"] = {}
    card["runs"][0]["samples"] = "many"
    errors = "\n".join(validate(card))
    assert "intended_use" in errors and "bench_60_100" in errors
    assert "runs/0/samples" in errors or "jsonschema" not in errors


def test_network_section_describes_the_network() -> None:
    config = {
        "input_dim": 324,
        "h1": 1000,
        "h2": 500,
        "num_res_blocks": 2,
        "encoding": "onehot",
        "q_head": True,
    }
    section = network_section(config, 1841013)
    assert section["parameters"] == 1841013 and section["config"] == config
    assert "1000 and 500 units" in section["architecture"] and "Q" in section["architecture"]
    assert "width 324" in section["inputs"]


def test_a_freshly_trained_models_card_validates(tmp_path: Path) -> None:
    from puzzlezero.nn import load_model
    from puzzlezero.train import TrainConfig, Trainer

    config = TrainConfig(
        puzzle="cube2", preset="tiny", batch_size=50, max_iterations=4, threads=1, progress=False
    )
    trainer = Trainer(config, tmp_path / "run", command="puzzlezero train cube2")
    trainer.run()
    trainer.export(tmp_path / "my-cube2")
    card = load_model(tmp_path / "my-cube2").card
    assert validate(card) == []
    first = card["runs"][-1]["samples"]
    assert card["name"] == "run" and first > 0 and card["evaluations"] == []
    # a run started from it carries its runs on, and validates too
    more = Trainer(
        TrainConfig(
            puzzle="cube2",
            batch_size=50,
            max_iterations=2,
            threads=1,
            progress=False,
            init_from=str(tmp_path / "my-cube2"),
        ),
        tmp_path / "run2",
    )
    more.run()
    card = more.card()
    assert validate(card) == [] and len(card["runs"]) == 2 and card["runs"][0]["samples"] == first


#: "(R rings of P positions, F half-globe flips, M moves)" in a globe model's description
GLOBE_SHAPE = re.compile(r"\((\d+) rings of (\d+) positions, (\d+) half-globe flips, (\d+) moves\)")


@pytest.mark.parametrize("card_path", [c for c in CARDS if (c.parent / "definition.json").is_file()], ids=str)
def test_a_permutation_models_description_counts_its_puzzles_moves(card_path: Path) -> None:
    """What a card says of its puzzle (rings, positions, flips, moves) is what its definition has."""
    card = json.loads(card_path.read_text())
    definition = json.loads((card_path.parent / "definition.json").read_text())
    names = list(definition["moves"])
    assert card["network"]["config"]["num_actions"] == len(names)
    shape = GLOBE_SHAPE.search(card["description"])
    if definition.get("drawing", {}).get("kind") != "globe":
        assert shape is None
        return
    assert shape is not None, card["description"]
    rings, positions, flips, moves = map(int, shape.groups())
    turns = [n for n in names if n.startswith("r") and not n.endswith("'")]
    assert (rings, flips, moves) == (len(turns), sum(n.startswith("f") for n in names), len(names))
    assert rings * positions == definition["positions"]
