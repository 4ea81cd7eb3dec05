"""docs/bench/floor_curves.json and benchmarks/plot_floor_curves.py: the curve of quality against
training, shown where a floor is out of reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
CURVES = ROOT / "docs" / "bench" / "floor_curves.json"


@pytest.fixture(scope="module")
def curves():
    return json.loads(CURVES.read_text())


@pytest.mark.parametrize("puzzle", ["cube3", "puzzle35", "puzzle48"])
def test_the_shipped_point_is_the_shipped_model(curves, puzzle):
    card = json.loads((ROOT / "src" / "puzzlezero" / "models" / puzzle / "card.json").read_text())
    shipped = [p for s in curves["puzzles"][puzzle]["series"].values() for p in s if p.get("shipped")]
    assert shipped, "each lineage marks its shipped model"
    for p in shipped:  # a model shipped after the curve was drawn must be added to it
        assert p["samples_m"] == pytest.approx(card["samples_seen_total"] / 1e6, abs=0.01)


def test_every_point_names_its_model_and_training(curves):
    for spec in curves["puzzles"].values():
        assert spec["floor"] > spec["deepcubea"] > 0
        for points in spec["series"].values():
            for p in points:
                assert p["samples_m"] > 0 and p["mean"] > 0 and p["model"]
                assert p["cpu_minutes"] >= 0 and p["gpu_minutes"] >= 0
                assert p.get("reference", p["mean"]) > 0


def test_the_plot_names_the_points_off_its_scale(tmp_path, capsys):
    plot = load_script("benchmarks/plot_floor_curves.py")
    data = {
        "puzzles": {
            "puzzle35": {
                "floor": 130.0,
                "deepcubea": 124.65,
                "series": {
                    "s": [
                        {
                            "date": "2026-11-01",
                            "model": "a",
                            "samples_m": 10,
                            "cpu_minutes": 1,
                            "gpu_minutes": 0,
                            "mean": 131,
                            "shipped": True,
                        },
                        {
                            "date": "2026-11-02",
                            "model": "b",
                            "samples_m": 20,
                            "cpu_minutes": 2,
                            "gpu_minutes": 1,
                            "mean": 500,
                            "last_run_on_gpu": True,
                        },
                    ]
                },
            }
        }
    }
    src = tmp_path / "c.json"
    src.write_text(json.dumps(data))
    out = tmp_path / "c.png"
    assert plot.main([str(src), str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(out) in capsys.readouterr().out
    title = plot.panel_title("puzzle35", data["puzzles"]["puzzle35"])
    assert "off the scale: 500 (2026-11-02)" in title and "131" not in title
