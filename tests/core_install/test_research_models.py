"""The research models' companion distribution (``puzzlezero-research-models``): once installed,
its models are found by name and run without the train extra; without it, asking for one says
what to install."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from puzzlezero.errors import ModelFileError
from puzzlezero.model_folders import COMPANION, resolve_model_dir, shipped_models
from tests.core_install.helpers import cli_json

DISTRIBUTION, MODELS = COMPANION
INSTALLED = importlib.util.find_spec("puzzlezero_research_models") is not None
needs_companion = pytest.mark.skipif(not INSTALLED, reason=f"{DISTRIBUTION} is not installed")


@needs_companion
def test_every_research_model_is_found_by_name() -> None:
    import puzzlezero_research_models

    root = Path(puzzlezero_research_models.__file__).resolve().parent
    assert set(MODELS) <= set(shipped_models())
    for name in MODELS:
        folder = resolve_model_dir(name)
        assert folder.resolve() == root / name
    for folder in (root / "cube3-adi", root / "cube3-selfplay", root / "cube3-layered" / "layer1"):
        assert {"config.json", "card.json", "model.npz"} <= {p.name for p in folder.iterdir()}


@needs_companion
def test_a_research_model_values_a_state(tmp_path: Path) -> None:
    out = cli_json("value", "cube3", "R U R' F2", "--no-optimal", "--model", "cube3-adi", cwd=tmp_path)
    assert out["value"] > 0


@pytest.mark.skipif(INSTALLED, reason=f"{DISTRIBUTION} is installed")
def test_without_the_companion_a_research_model_names_it() -> None:
    with pytest.raises(ModelFileError, match=f"pip install {DISTRIBUTION}"):
        resolve_model_dir("cube3-adi")
