"""The human-sample estimates in the workflow, on a copy of the bundled example's finished run: ``autograde sample
draw`` and ``answer`` make a judged round, the workflow adds the estimates rule, the judging page's data and the
site's pages; a rerun has nothing to do; a new round of the design reruns the estimates (and nothing of the
grading); an edit of a judgment reruns them too."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.helpers import copy_run, job_stats, output, run_workflow

from autograde.cli import main

SECTION = {"qrels": "results/human_sample/draw/sample.qrels", "design": "results/human_sample/draw/design.tsv",
           "predictions": [{"name": "minilm", "grader": "minilm-questions", "variant": "max-4"}],
           "measures": ["P_10", "dcg_cut_10", "ndcg_cut_10", "recip_rank"]}


@pytest.mark.workflow
def test_the_workflow_estimates_and_reruns_only_when_the_sample_changes(example_run: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    wd = copy_run(example_run, tmp_path / "run")
    cfg = wd / "config.yaml"
    raw = yaml.safe_load(cfg.read_text())
    raw["human_sample"] = SECTION
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    monkeypatch.chdir(wd)  # the config names the experiment's own draw (what `sample draw` and `answer` write)
    assert main(["sample", "draw", "--config", "config.yaml", "--budget", "40", "--seed", "1"]) == 0
    assert main(["sample", "answer", "--config", "config.yaml", "--from", "data/qrels.txt"]) == 0
    run = run_workflow(wd, check=True)
    jobs = job_stats(run)
    assert jobs.get("human_sample_estimates") == 1 and jobs.get("human_sample_judging") == 1
    assert jobs.get("site") == 1 and not {r for r in jobs if r.startswith("grade")}
    r = wd / "results"
    est = pd.read_csv(r / "human_sample" / "minilm" / "estimates.tsv", sep="\t")
    summary = json.loads((r / "human_sample" / "summary.json").read_text())
    n_sys = summary["systems"]
    assert len(est) == n_sys * len(SECTION["measures"]) and summary["sample"]["rounds"] == 1
    assert (est["low"] <= est["estimate"]).all() and (est["estimate"] <= est["high"]).all()
    assert (r / "site" / "human_sample" / "index.html").is_file() and (r / "site" / "judging" / "index.html").is_file()
    assert "Nothing to be done" in output(run_workflow(wd, "-n"))
    # a second round of the design (not judged yet): the estimates and the judging page's data rerun
    assert main(["sample", "draw", "--config", "config.yaml", "--budget", "20", "--design", "active", "--seed", "2"]) == 0
    plan = job_stats(run_workflow(wd, "-n"))
    assert plan.get("human_sample_estimates") == 1 and plan.get("human_sample_judging") == 1
    assert not {k for k in plan if k.startswith(("grade", "qrels", "leaderboard"))}, plan
    run_workflow(wd, check=True)
    data = json.loads((r / "human_sample" / "judging.json").read_text())
    assert data["rounds"] == 2 and len(data["items"]) > 0
    assert json.loads((r / "human_sample" / "summary.json").read_text())["sample"]["pending"] == [2]
