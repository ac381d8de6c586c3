"""Calibrated qrels in a real workflow run: learned from two graders' grades and the human judgments, then
evaluated, ranked and correlated like any grader's qrels (as the pseudo-grader ``calibrated``); and another
experiment, without judgments for training, labelling its own graders' outputs with the first one's model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.helpers import run_workflow
from support.mini import write_mini_dataset


@pytest.mark.workflow
@pytest.mark.slow
def test_calibrated_qrels_flow_into_leaderboards_and_correlation(mini: Path) -> None:
    wd = mini.parent
    raw = yaml.safe_load(mini.read_text())
    raw["graders"] = [{"name": "sim", "backend": "embedded", "bank": "questions"},
                      {"name": "strict", "backend": "embedded", "bank": "questions",
                       "options": {"thresholds": [0.3, 0.4, 0.5, 0.6, 0.7]}}]
    raw["cover"] = {"enabled": False}
    raw["reports"] = {"enabled": False}
    raw["calibrated_qrels"] = {"sources": ["results/grades/sim.parquet", "results/grades/strict.parquet"],
                               "judgments": "data/qrels.txt", "levels": [0, 1, 2], "relevance_level": 2,
                               "folds": 3, "output": "threshold", "estimators": ["logistic"],
                               "logistic_c": [1.0], "selection_folds": 3}
    mini.write_text(yaml.safe_dump(raw, sort_keys=False))
    run_workflow(wd, config=mini, check=True)
    r = wd / "results"
    qrels = (r / "qrels/calibrated/threshold-2.qrels").read_text().splitlines()
    assert qrels and all(line.split()[3] in ("0", "1", "2") for line in qrels)  # calibrated relevance levels
    lb = pd.read_csv(r / "leaderboards/calibrated/threshold-2/ndcg_cut_10.tsv", sep="\t")
    assert set(lb["run"]) == {"good", "bad", "gen"}
    corr = pd.read_csv(r / "correlation.tsv", sep="\t")
    assert ((corr["grader"] == "calibrated") & (corr["qrels"] == "threshold-2")).sum() == 2  # two measures
    # the correlation report (made by hand here: reports are off) has every leaderboard of the workflow, calibrated
    # included, in the same order: both read the one list of leaderboards
    done = subprocess.run([sys.executable, "-m", "autograde.cli", "report", "--config", str(mini)], cwd=wd,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    report = pd.read_csv(r / "reports" / "correlation.tsv", sep="\t", dtype=str)
    ours = pd.read_csv(r / "correlation.tsv", sep="\t", dtype=str)
    assert list(zip(report["grader"], report["qrels"], report["measure"], strict=True)) == list(
        zip(ours["grader"], ours["qrels"], ours["measure"], strict=True))
    again = run_workflow(wd, "-n", config=mini, timeout=300)
    assert "Nothing to be done" in again.stdout + again.stderr
    model = r / "calibrated_qrels" / "model"
    assert json.loads((model / "model.json").read_text())["training"]["judged"] > 0

    # another experiment: its own graders' outputs, labelled by the first experiment's model (no training here); it
    # shares the first one's grade cache (as experiments on one cluster share a cache folder): the same passages and
    # questions are not graded twice
    other = write_mini_dataset(wd / "other")
    raw_b = {**raw, "grading": {**raw["grading"], "cache_dir": str(wd / "cache")},
             "calibrated_qrels": {"model": str(model), "output": "threshold",
                                  "sources": ["results/grades/sim.parquet", "results/grades/strict.parquet"]}}
    other.write_text(yaml.safe_dump(raw_b, sort_keys=False))
    run_workflow(other.parent, config=other, check=True)
    rb = other.parent / "results"
    for grader in ("sim", "strict"):
        stats = json.loads((rb / "grades" / f"{grader}.stats.json").read_text())
        assert stats["computed"] == 0 and stats["cached"] == stats["pairs"] > 0, stats  # every grade from the cache
    assert not (rb / "calibrated_qrels" / "model").exists()  # applied, not trained
    applied = json.loads((rb / "calibrated_qrels" / "report.json").read_text())
    assert applied["model"] == str(model) and applied["sources"] == ["sim", "strict"]
    labels = (rb / "qrels/calibrated/threshold-2.qrels").read_text().splitlines()
    assert labels and all(line.split()[3] in ("0", "1", "2") for line in labels)
    lb_b = pd.read_csv(rb / "leaderboards/calibrated/threshold-2/ndcg_cut_10.tsv", sep="\t")
    assert set(lb_b["run"]) == {"good", "bad", "gen"}  # ranked with the calibrated qrels
