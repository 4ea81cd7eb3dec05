#!/usr/bin/env python
"""Rewrite the shipped model cards (src/puzzlezero/models/**/card.json) in the one shape of
src/puzzlezero/models/card.schema.json. Run once; kept to show how each old field was mapped.

    python scripts/convert_model_cards.py [--check]

Every figure is kept. Benchmark entries (``bench``, ``bench_20_40``, ...) become ``evaluations``
with the data set, the ids, the machine, the settings and the metrics apart; their date is the one
the entry gives, else the date of the commit that first recorded the figures as they are now (said
so in ``date_note``), and ``commit`` is that commit. Free-text fields become ``notes``, rewritten
here by hand (``NOTES`` and ``EVAL_NOTES``). ``--check`` converts in memory and validates only.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from puzzlezero.cards import SCHEMA_VERSION, network_section, validate
from puzzlezero.train.objectives import get_objective

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "src" / "puzzlezero" / "models"

DEEPCUBEA = (
    "DeepCubeA test set ({}, the development half: Agostinelli et al., Nature Machine Intelligence 2019)"
)
DATASETS = {
    "cube3.json": DEEPCUBEA.format("cube3"),
    "puzzle15.json": DEEPCUBEA.format("15-puzzle"),
    "puzzle24.json": DEEPCUBEA.format("24-puzzle"),
    "puzzle35.json": DEEPCUBEA.format("35-puzzle"),
    "puzzle48.json": DEEPCUBEA.format("48-puzzle"),
    "lightsout7.json": DEEPCUBEA.format("Lights Out 7x7"),
    "sokoban.json": DEEPCUBEA.format("Sokoban; the Boxoban unfiltered test levels"),
    "cube2_random1000.json": "1,000 random cube2 states with their optimal lengths (scripts/make_cases.py --seed 2026)",
    "cube3_hard.json": "two hard cube3 positions: the superflip and the superflip composed with four-spot",
}
METRICS = {
    "cases",
    "solved_pct",
    "mean_length",
    "mean_optimal_length",
    "optimal_pct",
    "median_seconds",
    "mean_seconds",
    "mean_nodes",
    "max_nodes_generated",
    "nodes_per_second",
    "mean_half_turn_length",
    "median_first_solution_seconds",
    "by_seconds",
    "peak_rss_mib",
    "stage_mean_lengths",
    "reduced_pct",
    "mean_search_length",
    "fallback_pct",
}
SETTINGS = {
    "search",
    "heuristic",
    "model",
    "weight",
    "batch",
    "stages",
    "beam_width",
    "options",
    "fallback",
    "shortcut",
    "max_nodes",
    "time_limit",
    "timing",
    "ray",
    "goal",
    "macros",
}
#: run folders named after the round that made them, as they appear in recorded commands
FOLDERS = {
    "p15s21b": "p15f",
    "p15s21": "p15e",
    "p24s21": "p24d",
    "p48s24": "p48a",
    "p48d25": "p48b",
    "c3g_s23": "c3g",
}
#: phrases of recorded text that name rounds of work, and what they say without them
PHRASES = [
    (r"the model of the run before \([Ss]ession \d+, ", "the model of the run before ("),
    (r"puzzle15 \(shipped model of 2026-11 [Ss]ession \d+\)", "puzzle15 (the shipped model of the time)"),
    (r"the session's training run", "the training run"),
    (r"/work/main/", ""),  # the checkout the figures were measured in
    (r"/work/runs/", "runs/"),
]

PAPERS = {
    "deepcubea": 'Agostinelli, McAleer, Shmakov and Baldi, "Solving the Rubik\'s cube with deep reinforcement learning and search"',
    "multihead": 'Dong, Hao and Nakayama, "Solving the Rubik\'s Cube with Deep Reinforcement Learning Using Multi-Headed Models"',
    "adi": 'Agarwal, "Solving Rubik\'s cube using Reinforcement Learning"',
    "rute": 'Rute, "Solving the puzzle cube with deep reinforcement learning and tree search"',
    "efficientcube": 'Takano, "Self-supervision is all you need for solving Rubik\'s cube" (EfficientCube)',
}

IDENTITY: dict[str, tuple[str, str]] = {
    "cube2": (
        "A 2x2x2 cube cost-to-go network trained by DAVI, the value iteration of "
        + PAPERS["deepcubea"]
        + ", with no warm start.",
        "The learned heuristic of batch weighted A* (BWAS) on 2x2x2 cube states.",
    ),
    "cube3": (
        "The 3x3x3 cube network: a value head and a Q head (cost-to-go after each of the 12 quarter turns), trained by a "
        "supervised warm start and DAVI, then Q-learning targets on one GPU.",
        "The learned heuristic of the cube3 searches: Q* (the default, an anytime schedule with three images of the cube "
        "and a group-theoretic fallback), BWAS and beam search; the last stage of cube3-layered.",
    ),
    "cube3-adi": (
        "A 3x3x3 cube network with value and policy heads trained by autodidactic iteration (ADI) as in "
        + PAPERS["adi"]
        + ".",
        "Comparison with the shipped cube3 model; its value head serves BWAS and its policy the policy beam.",
    ),
    "cube3-selfplay": (
        "A 3x3x3 cube network with value and policy heads trained by self-play with discounted Monte Carlo tree search, as in "
        + PAPERS["rute"]
        + ".",
        "Comparison with the shipped cube3 model (MCTS and the policy beam search).",
    ),
    "cube3-layered": (
        "The layer-by-layer cube3 solver of "
        + PAPERS["multihead"]
        + " with one network per goal (their SingleH): BWAS to "
        "the first layer, then the second, then the solved cube.",
        "The layered search (--search layered), which gives longer but human-readable solutions in three stages.",
    ),
    "cube3-layered/layer1": (
        "The cost-to-go to the first layer of the cube (goal layer1), trained by DAVI from the shipped cube3 model.",
        "The first stage of cube3-layered.",
    ),
    "cube3-layered/layer2": (
        "The cost-to-go to the first two layers of the cube (goal layer2), trained by DAVI from the layer1 model.",
        "The second stage of cube3-layered.",
    ),
    "cube3htm": (
        "A 3x3x3 cube network for the half-turn metric (18 moves): value and Q heads, trained by Q-learning targets from "
        "the quarter-turn cube3 model of the time.",
        "The learned heuristic of Q* and BWAS on cube3htm (lengths in half turns).",
    ),
    "lightsout7": (
        "A Lights Out 7x7 policy network trained as in "
        + PAPERS["efficientcube"]
        + ", with the whole press set as the "
        "target; it has no trained value head.",
        "The policy beam search on Lights Out 7x7 (searches over values refuse this model).",
    ),
    "puzzle15": (
        "A 15-puzzle cost-to-go network trained by DAVI, then by limited-horizon Bellman-based learning (LHBL, 10 expansions).",
        "The learned heuristic of BWAS on the 15-puzzle (the default search).",
    ),
    "puzzle24": (
        "A 24-puzzle cost-to-go network trained by LHBL (10 expansions).",
        "The learned heuristic of BWAS on the 24-puzzle (the default search, over the board and its transpose).",
    ),
    "puzzle35": (
        "A 35-puzzle cost-to-go network trained by LHBL (10 expansions); its weights are the mean of three checkpoints.",
        "The learned heuristic of beam search and BWAS on the 35-puzzle.",
    ),
    "puzzle48": (
        "A 48-puzzle cost-to-go network trained by LHBL (10 expansions) with training states from greedy descents and "
        "frozen batch normalisation.",
        "The learned heuristic of beam search on the 48-puzzle (the default: a beam of 500, then one of 5,000).",
    ),
    "sokoban": (
        "A Sokoban (10x10, 4 boxes) cost-to-go network trained by LHBL (10 expansions) on generated rooms.",
        "The learned heuristic of BWAS on Sokoban levels (the Boxoban format).",
    ),
}

#: the old free-text fields, rewritten as notes (None: dropped, its content is elsewhere)
NOTES: dict[str, dict[str, str | None]] = {
    "cube2": {"command": None, "history": None, "wall_time_note": None},
    "cube3": {
        "recipe": (
            "Training in all: a value head by supervised warm start and DAVI, then Q-learning targets for the Q head "
            "(value head on their minimum) on a 2-core CPU, 6.37M samples; then on one NVIDIA H200: 3 minutes alone "
            "(130M Q-learning samples at 714,023 samples/s, 13 label workers), 8.3 minutes beside two other runs "
            "(167.6M at 336,300 samples/s, 4 label workers, lr 2e-4 decaying 0.99997 per iteration), then 8.3 and 3.0 "
            "minutes beside one other run (268.1M at 535,484 samples/s, lr 1.5e-4 decaying 0.99997, then 96.8M at "
            "532,745 samples/s, lr 8e-5 decaying 0.99999; 7 label workers), 669M samples by then; then 8.2 minutes "
            "beside one other run (293.3M at 592,889 samples/s, lr 8e-5 decaying 0.9999475 per iteration to 1.7e-5, "
            '7 label workers): 962M samples in all (docs/training.md, "GPUs").'
        ),
        "wall_time_note": "",
        "note_session4": (
            "The second and third runs continued the first run's model on one nice'd core while other work shared the "
            "machine; the third run's wall_seconds (5,509 s) includes about 15 minutes with the run paused (SIGSTOP) "
            "for timing measurements."
        ),
        "bench_previous_model": (
            "Earlier versions, the same default search on the same kind of idle machine: the version of 669M samples "
            "gave +1.50, +1.30 and +1.70 moves over optimal on ids 0-19, 20-39 and 40-59 (+1.50 on the 60 cubes, 24 "
            "optimal), 44 and 38 quarter turns on the superflip and the superflip with four-spot; this model gives "
            "+1.50, +1.50 and +1.40 (+1.47 on the 60 cubes, 25 optimal; 5 cubes shorter, 5 longer), 40 and 36. The "
            "version of 304M samples gave +2.10, +2.00 and +2.10 (+2.07, 17 optimal), 34 and 38; the version of 136M "
            "samples +3.10 on ids 0-19 and on ids 20-39 without images."
        ),
    },
    "cube3-layered": {"see": "docs/layered.md describes the layered search and how the stages were trained."},
    "lightsout7": {
        "recipe": "",
        "previous_model": (
            "The model this one replaced, a DAVI value network (1.51M samples on the CPU), solved none of 5 benchmark "
            "boards within 30 s: its values saturated near 7 presses where boards need about 24."
        ),
        "continued_run": (
            "Continuing this run alone on the GPU for 2.8 more minutes (127.6M samples, lr 1.5e-4, a fresh optimizer) "
            "gave 96.8% optimal as searched on the 250 boards (against 99.6%): not shipped."
        ),
    },
    "puzzle35": {
        "recipe": "",
        "weights": None,
        "wall_time_note": (
            "The wall time of the last run includes other work on the same 2 cores; the runs list gives every run."
        ),
    },
    "puzzle48": {
        "recipe": (
            "LHBL (10 expansions), period target update every 20 iterations, K 6000, the 2-core CPU with a label "
            "worker: 125 min from scratch at lr 1e-3 decaying to 5.4e-5 (32.4M samples), then 80 min at lr 1e-4 "
            "decaying 0.99993 with a quarter of the training states from greedy descents under the target network "
            "(descent_share 0.25, 1,000 steps, stride 100; 13.0M samples; docs/training.md, 'Training states from "
            "greedy descents'); then 95 min at lr 1e-4 decaying 0.99997 with frozen batch normalisation "
            "(batch_norm=frozen) and the same descents (12.3M samples; docs/training.md, 'Frozen batch "
            "normalisation'); then 62 min at lr 7e-5 decaying 0.99997, the same recipe (12.4M samples)."
        ),
        "wall_time_note": (
            "The runs shared the 2 cores with another training run or measurements for part of their time; the runs "
            "list gives every run."
        ),
    },
    "sokoban": {"recipe": "", "wall_time_note": ""},
}

#: per card and old key: (label, which weights, ids where the entry does not say, note replacing the old one)
EVAL_NOTES: dict[str, dict[str, tuple[str, str, str | None, str | None]]] = {
    "cube2": {"bench": ("BWAS, weight 0.9, batch 300", "this model", None, "")},
    "cube3": {
        "bench": ("the default search", "this model", "0-19", "idle machine"),
        "bench_20_40": ("the default search", "this model", "20-39", "idle machine"),
        "bench_40_60": ("the default search", "this model", "40-59", "idle machine"),
        "bench_60_100": (
            "the default search",
            "this model",
            "60-99",
            "idle AMD EPYC (2 vCPUs); with ids 0-59 (measured on an Intel Xeon): +1.72 moves over optimal on ids 0-99",
        ),
        "bench_hard": (
            "the default search",
            "this model",
            None,
            "idle machine; superflip 40 and superflip with four-spot 36 quarter turns",
        ),
    },
    "cube3-layered": {"bench": ("the layered search", "this model", None, "")},
    "cube3htm": {
        "bench": (
            "the default search",
            "this model",
            None,
            "default search settings (Q* anytime schedule, 30 s); idle machine; lengths are half turns; the cube3 cases "
            "carry quarter-turn optima only",
        ),
    },
    "lightsout7": {
        "bench": (
            "the default search (policy beam, width 1000)",
            "this model",
            None,
            "idle machine; 1 of the 250 search paths pressed a cell twice (26 presses for 24), returned without the "
            "pair (Puzzle.reduce_moves): 99.6% optimal as searched",
        ),
    },
    "puzzle15": {
        "bench": ("the default search", "this model", None, ""),
        "bench_after_first": (
            "the default search",
            "the version after the first of the two LHBL runs (14.51M samples)",
            None,
            "",
        ),
        "bench_previous_model.ids_0_40": (
            "the default search",
            "the version before the two LHBL runs (10.25M samples of DAVI)",
            None,
            "the same settings on the same idle machine the same day; on ids 0-199: 188 of 200 optimal (94.0%), "
            "mean length 51.795",
        ),
        "bench_previous_model.ids_40_200": (
            "the default search",
            "the version before the two LHBL runs (10.25M samples of DAVI)",
            None,
            "the same settings on the same idle machine the same day",
        ),
        "bench_previous_model.earlier_bench": (
            "the default search of the time (BWAS 0.8/1000)",
            "the version before the two LHBL runs (10.25M samples of DAVI)",
            "0-39",
            "default search settings; idle machine (no other job)",
        ),
    },
    "puzzle24": {
        "bench": ("BWAS 0.8/2000 on the board alone", "this model", None, ""),
        "bench_40_80": ("BWAS 0.8/2000 on the board alone", "this model", None, ""),
        "bench_previous_model.ids_0_40": (
            "BWAS 0.8/2000 on the board alone",
            "the version before the last run (7.45M samples)",
            None,
            "the same commands on the same idle machine the same day",
        ),
        "bench_previous_model.ids_40_80": (
            "BWAS 0.8/2000 on the board alone",
            "the version before the last run (7.45M samples)",
            None,
            "the same commands on the same idle machine the same day",
        ),
        "bench_previous_model.earlier_bench": (
            "BWAS 0.8/2000 on the board alone",
            "the version after the second run (7.45M samples)",
            None,
            "default search settings of the time; another job used the second core during the run, so times are "
            "about twice an idle run (10.9k nodes/s against 23k idle)",
        ),
        "bench_default_s22": (
            "BWAS 0.8/2000 over the board and its transpose (images 1), the shorter kept",
            "this model",
            None,
            "on ids 0-79: +0.575 over optimal and 73.75% optimal, against +0.80 and 63.75% for the board alone",
        ),
        "bench_default_s22.ids_40_80": (
            "BWAS 0.8/2000 over the board and its transpose (images 1), the shorter kept",
            "this model",
            "40-79",
            "a training run shared the cores: lengths and nodes only",
        ),
    },
    "puzzle35": {
        "bench": (
            "BWAS 0.6/6000",
            "this model",
            None,
            "idle machine; lengths 132, 127, 164, 117, 138, 106, 133, 123, 130, 124. The run's last checkpoint alone "
            "gave 130.6 at a median of 25.4 s in the same conditions.",
        ),
        "bench_20_40": (
            "BWAS 0.6/6000",
            "this model",
            None,
            "a training run and another search shared the two cores, so the seconds (median 37.7 s) are not "
            "comparable; the lengths are (a node-bounded BWAS returns the same paths under load). Ids 0-39 together: "
            "131.45; ids 0-59: 131.92",
        ),
        "bench_40_60": (
            "BWAS 0.6/6000",
            "this model",
            None,
            "a nice'd training run shared the cores (paused for the last 5 minutes), so the seconds (median 35.9 s) "
            "are not comparable; the lengths are. Ids 0-59 together: 131.92",
        ),
        "bench_default_s20": (
            "beam search, width 5000, over the board and its transpose",
            "this model",
            None,
            "one batched call, the shorter path kept; idle machine; ids 0-9 128.2, 10-29 133.0, 30-59 130.97; BWAS "
            "0.6/6000 on the same 60: 131.92",
        ),
        "bench_default_s21": (
            "a beam of 500, then one of 5000 bounded below its solution, over the board and its transpose",
            "this model",
            None,
            "idle machine; the same lengths as the width-5000 beam alone on ids 0-9; on ids 10-59 the width-500 beam "
            "was shorter on none, so the 60 states give 131.18 as with the width-5000 beam",
        ),
    },
    "puzzle48": {
        "bench": ("the default search (beam, width 500, then 5000)", "this model", None, "idle machine"),
        "bench_previous_model": (
            "the default search (beam, width 500, then 5000)",
            "the version before the last run (57.73M samples)",
            None,
            "idle machine; the reduction fallback was not needed",
        ),
    },
    "sokoban": {
        "bench": (
            "the default search",
            "this model",
            None,
            "default search settings; a nice'd puzzle35 training run held the other core",
        ),
        "bench_pruned": (
            "the default search with dead-square pruning",
            "this model",
            None,
            "default search settings; a nice'd puzzle35 training run held the other core",
        ),
    },
}

#: evaluations given in words only (no benchmark entry): per card and old key
WORD_EVALS: dict[str, dict[str, dict[str, Any]]] = {
    "lightsout7": {
        "bench_beam_100": {
            "label": "the policy beam, width 100",
            "ids": "0-19",
            "settings": {"search": "pbeam", "heuristic": "learned-policy", "beam_width": 100},
            "metrics": {"cases": 20, "solved_pct": 100.0, "optimal_pct": 90.0, "median_seconds": 0.18},
            "machine": "idle machine",
            "note": "90% optimal as searched: two boards 2 presses over",
        },
    },
}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def history(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(commit, date, card) of every commit that changed ``path``, oldest first."""
    rel = path.relative_to(ROOT).as_posix()
    out = []
    for line in git("log", "--reverse", "--format=%H %ad", "--date=short", "--", rel).split("\n"):
        if line.strip():
            commit, date = line.split()
            try:
                out.append((commit, date, json.loads(git("show", f"{commit}:{rel}"))))
            except (subprocess.CalledProcessError, json.JSONDecodeError):
                continue
    return out


def recorded(
    hist: list[tuple[str, str, dict[str, Any]]], key: str, value: Any
) -> tuple[str | None, str | None]:
    """The commit (and its date) since which the card has held ``value`` at ``key`` (a dotted path)."""
    found: tuple[str | None, str | None] = (None, None)
    for commit, date, card in hist:
        here: Any = card
        for part in key.split("."):
            here = here.get(part) if isinstance(here, dict) else None
        if here == value:
            if found == (None, None):
                found = (commit[:12], date)
        else:
            found = (None, None)
    return found


def scrub(value: Any) -> Any:
    """``value`` with run folders and phrases that name rounds of work rewritten."""
    if isinstance(value, str):
        for old, new in FOLDERS.items():
            value = value.replace(old, new)
        for pattern, new in PHRASES:
            value = re.sub(pattern, new, value)
        return value
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def ids_of(entry: dict[str, Any], default: str | None) -> str | None:
    ids = entry.get("ids")
    if ids is None:
        m = re.search(r"--ids (\d+):(\d+)", entry.get("command") or "")
        ids = f"{m.group(1)}:{m.group(2)}" if m else None
    if ids is None:
        return default
    if ":" in ids:
        lo, hi = (int(v) for v in ids.split(":"))
        return f"{lo}-{hi - 1}"
    return str(ids)


def dataset_of(cases_file: str | None, puzzle: str) -> str:
    cases_file = cases_file or None
    name = Path(cases_file).name if cases_file else f"{puzzle}.json"
    return DATASETS[name]


def evaluation(
    card: dict[str, Any], name: str, key: str, entry: dict[str, Any], hist: list[Any], spec: tuple[Any, ...]
) -> dict[str, Any]:
    label, model, default_ids, note = spec
    entry = scrub(entry)
    metrics = {k: v for k, v in entry.items() if k in METRICS}
    settings = {k: v for k, v in entry.items() if k in SETTINGS}
    rest = (
        set(entry)
        - METRICS
        - SETTINGS
        - {"puzzle", "cases_file", "command", "hardware", "ids", "note", "date"}
    )
    rest -= {k for k, v in entry.items() if isinstance(v, dict) and "solved_pct" in v}  # sub-entries, apart
    assert not rest, (name, key, rest)
    assert entry.get("puzzle", card["puzzle"]) == card["puzzle"]
    ids = ids_of(entry, default_ids)
    if "cases" not in metrics and ids and "-" in ids:
        lo, hi = (int(v) for v in ids.split("-"))
        metrics["cases"] = hi - lo + 1
    metrics.setdefault("solved_pct", None)
    if metrics.get("solved_pct") == 100.0 and metrics.get("mean_optimal_length") is not None:
        metrics["mean_excess"] = round(metrics["mean_length"] - metrics["mean_optimal_length"], 4)
    old_note = entry.get("note") or ""
    dated = re.search(r"\d{4}-\d\d-\d\d", old_note)
    commit, commit_date = recorded(hist, key, _old_value(hist, key))
    date = entry.get("date") or (dated.group(0) if dated else None)
    out: dict[str, Any] = {
        "label": label,
        "model": model,
        "dataset": dataset_of(entry.get("cases_file") or _cases_in(entry.get("command")), card["puzzle"]),
        "cases_file": entry.get("cases_file") or _cases_in(entry.get("command")),
        "ids": ids,
        "date": date or commit_date,
    }
    if not date:
        out["date_note"] = (
            "the date of the commit that first recorded these figures" if commit_date else "not recorded"
        )
    out |= {
        "commit": commit,
        "machine": entry.get("hardware"),
        "command": entry.get("command"),
        "settings": settings,
        "metrics": metrics,
    }
    if not note:  # the old note names no round of work
        note = old_note
    if note:
        out["note"] = note
    return out


def _cases_in(command: str | None) -> str | None:
    m = re.search(r"--cases (\S+)", command or "")
    return m.group(1) if m else None


def _old_value(hist: list[Any], key: str) -> Any:
    here: Any = hist[-1][2]
    for part in key.split("."):
        here = here.get(part) if isinstance(here, dict) else None
    return here


def run_date(run: dict[str, Any]) -> str | None:
    dates = [c.get("date") for c in run.get("commands") or [] if c.get("date")]
    return run.get("date") or (dates[0] if dates else None)


def convert(path: Path) -> dict[str, Any]:
    name = path.parent.relative_to(MODELS).as_posix()
    old = json.loads(path.read_text(encoding="utf-8"))
    if old.get("schema_version") == SCHEMA_VERSION:
        return old
    hist = history(path)
    first_date = hist[0][1] if hist else None
    config_path = path.parent / "config.json"
    description, intended_use = IDENTITY[name]
    notes_spec = NOTES.get(name, {})
    evals_spec = EVAL_NOTES.get(name, {})
    card: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "puzzle": old["puzzle"], "name": name}
    handled = {"puzzle", "parameters", "network", "runs", "policy_only"}

    # runs
    if "runs" in old:
        runs = scrub(old["runs"])
    elif name == "cube3-layered":
        layer2 = json.loads((path.parent / "layer2" / "card.json").read_text(encoding="utf-8"))
        commands = old["commands"]
        runs = [r for r in layer2["runs"] if r["commands"][0]["command"] in commands]
        assert len(runs) == len(commands) == 2
        handled.add("commands")
    else:  # one run described by top-level fields (an early card)
        runs = [
            {
                "commands": [{"command": old["command"]}],
                "recipe": old["history"],
                "iterations": old["iterations"],
                "samples": old["samples_seen"],
                "target_updates": old["target_updates"],
                "wall_seconds": old["wall_seconds"],
                "hardware": old["hardware"],
                "train_config": old["train_config"],
                "note": old["wall_time_note"],
            }
        ]
    converted_runs = []
    for run in runs:
        date = run_date(run)
        entry = {"commands": run["commands"], "date": date}
        if date is None:
            entry["date_note"] = f"not recorded; the model was first committed on {first_date}"
        entry |= {k: v for k, v in run.items() if k not in ("commands", "date", "date_note")}
        entry.setdefault("hardware", None)
        converted_runs.append(entry)
    card["date"] = converted_runs[-1]["date"] if converted_runs else None
    if card["date"] is None:
        card["date_note"] = f"not recorded; the model was first committed on {first_date}"
    card["description"], card["intended_use"] = description, intended_use

    # network
    if config_path.exists():
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config = config.get("net", config)  # config.json: {"format", "puzzle", "net"}
        card["network"] = network_section(config, old["parameters"])
    else:
        stages = json.loads((path.parent / "stages.json").read_text(encoding="utf-8"))
        words = old["stages"]
        card["network"] = None
        card["stages"] = [
            {
                "goal": goal,
                "model": folder,
                "description": re.sub(r"^\S+/ \(its own card\): ", "", words[goal]),
            }
            for goal, folder in stages.items()
        ]
        handled.add("stages")
    objective = (old.get("train_config") or {}).get("objective") or "davi"
    card["policy_only"] = bool(old.get("policy_only", get_objective(objective).policy_only))

    # the last run's summary
    if name == "cube3-layered":
        card["algorithm"] = (
            "layer by layer: one DAVI cost-to-go network per goal (SingleH of "
            + PAPERS["multihead"]
            + "); BWAS to "
            "layer1, then layer2, then solved"
        )
        handled.add("algorithm")
    for key in (
        "algorithm",
        "max_scramble",
        "iterations",
        "samples_seen",
        "samples_seen_total",
        "wall_seconds",
        "wall_seconds_total",
        "target_updates",
        "final_loss",
        "hardware",
        "train_config",
        "last_eval",
    ):
        if key in old and key not in card:
            card[key] = scrub(old[key])
            handled.add(key)
    if "samples_seen" in card and "samples_seen_total" not in card:
        card["samples_seen_total"] = sum(r["samples"] for r in converted_runs)
        card["wall_seconds_total"] = round(sum(r["wall_seconds"] for r in converted_runs), 1)
    if "weights" in old:
        card["weights"] = old["weights"]
        handled.add("weights")
    card["runs"] = converted_runs

    # evaluations
    evaluations = []
    for key, value in old.items():
        if not key.startswith("bench") or isinstance(value, str):
            continue
        handled.add(key)
        if not value:
            continue
        spec_key = "bench_after_first" if key.startswith("bench_after_first") else key
        if spec_key in evals_spec:
            evaluations.append(evaluation(old, name, key, value, hist, evals_spec[spec_key]))
        for sub, sub_value in value.items():
            if isinstance(sub_value, dict) and "solved_pct" in sub_value:
                sub_value = {"command": value.get("command"), "hardware": value.get("hardware"), **sub_value}
                spec = evals_spec[f"{key}.{sub}"]
                evaluations.append(evaluation(old, name, f"{key}.{sub}", sub_value, hist, spec))
        if spec_key not in evals_spec:  # only a note beside its entries, which the specs' notes replace
            assert any(isinstance(v, dict) for v in value.values()), (name, key)
    for key, spec in WORD_EVALS.get(name, {}).items():
        handled.add(key)
        commit, date = recorded(hist, key, old[key])
        evaluations.append(
            {
                "label": spec["label"],
                "model": "this model",
                "dataset": dataset_of(None, old["puzzle"]),
                "cases_file": None,
                "ids": spec["ids"],
                "date": date,
                "date_note": "the date of the commit that first recorded these figures",
                "commit": commit,
                "machine": spec["machine"],
                "command": None,
                "settings": spec["settings"],
                "metrics": spec["metrics"],
                "note": spec["note"],
            }
        )
    card["evaluations"] = evaluations

    # notes
    notes = []
    for key, value in old.items():
        if key in handled:
            continue
        handled.add(key)
        assert key in notes_spec, (name, key, value)
        text = notes_spec[key]
        if text == "":
            text = value  # kept as it was: it names no round of work
        if text:
            notes.append(text)
    card["notes"] = notes
    return card


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="convert in memory and validate; write nothing")
    args = parser.parse_args()
    bad = 0
    for path in sorted(MODELS.rglob("card.json")):
        card = convert(path)
        errors = validate(card)
        for error in errors:
            print(f"{path.relative_to(ROOT)}: {error}", file=sys.stderr)
        bad += bool(errors)
        if not args.check and not errors:
            path.write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
