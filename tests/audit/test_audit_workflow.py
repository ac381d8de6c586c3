"""The judge audit in the workflow and as commands, on the bundled example's finished run: the audit: section adds the
meta-evaluation and one grader's robustness audit (a model job graded through the cache) and the judge cards of the
site; a rerun has nothing to do; the commands give the same files; bad input is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.helpers import copy_run, job_stats, output, run_workflow

from autograde.cli import main

AUDIT = {"bootstrap_samples": 100, "robustness": {"graders": ["minilm-questions"], "sample": 15,
                                                   "system_perturbations": ["stuffing"], "bootstrap_samples": 100}}


@pytest.fixture(scope="module")
def audited(example_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    wd = copy_run(example_run, tmp_path_factory.mktemp("audit") / "run")
    cfg = wd / "config.yaml"
    raw = yaml.safe_load(cfg.read_text())
    raw["audit"] = AUDIT
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    run = run_workflow(wd, check=True)
    return wd, output(run)


@pytest.mark.workflow
def test_the_workflow_audits_and_shows_judge_cards(audited: tuple[Path, str]) -> None:
    wd, log = audited
    jobs = job_stats(log)
    assert jobs.get("meta_evaluate") == 1 and jobs.get("audit_robustness") == 1 and jobs.get("site") == 1
    r = wd / "results"
    labels = pd.read_csv(r / "audit" / "meta" / "labels.tsv", sep="\t")
    systems = pd.read_csv(r / "audit" / "meta" / "systems.tsv", sep="\t")
    assert set(labels["variant"]) == {"max-4", "count-4"} and labels["alpha_ordinal"].notna().all()
    assert {"kendall@5", "kendall@10", "tau_ap_low"} <= set(systems.columns)
    assert set(systems["variant"]) == {"max-4", "count-4"}  # grader leaderboards with a human one (not cover)
    stats = json.loads((r / "audit" / "robustness" / "minilm-questions" / "stats.json").read_text())
    assert stats["sampled_pairs"] == 15 and stats["computed"] > 0
    card = (r / "site" / "judges" / "minilm-questions.html").read_text()
    assert card.count("<svg") >= 5 and "judges/index.html" in (r / "site" / "index.html").read_text()
    assert "Nothing to be done" in output(run_workflow(wd, "-n"))


@pytest.mark.workflow
def test_the_commands_give_the_workflows_files_and_clear_errors(audited: tuple[Path, str], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    wd, _ = audited
    monkeypatch.chdir(wd)
    r = wd / "results" / "audit"
    before = {p: p.read_bytes() for p in (r / "meta").iterdir()}
    assert main(["audit", "meta", "--config", "config.yaml", "--quiet"]) == 0
    assert {p: p.read_bytes() for p in (r / "meta").iterdir()} == before
    out = {k: str(tmp_path / f"{k}.out") for k in ("pairs", "summary", "leaderboard", "stats", "report")}
    args = [x for k, v in out.items() for x in (f"--{k}-out", v)]
    assert main(["audit", "robustness", "--config", "config.yaml", "--grader", "minilm-questions", "--quiet", *args]) == 0
    assert json.loads(Path(out["stats"]).read_text())["computed"] == 0  # every perturbed grade from the cache
    assert Path(out["summary"]).read_bytes() == (r / "robustness" / "minilm-questions" / "summary.tsv").read_bytes()
    assert main(["audit", "judges", "a=config.yaml", "b=config.yaml", "--out", str(tmp_path / "j.md"), "--quiet"]) == 0
    assert "| minilm-questions max-4 |" in (tmp_path / "j.md").read_text()
    capsys.readouterr()
    assert main(["audit", "robustness", "--config", "config.yaml", "--grader", "nobody"]) == 2
    assert main(["audit", "robustness", "--config", "config.yaml", "--grader", "minilm-questions",
                 "--perturbation", "shouting"]) == 2
    other = tmp_path / "other.qrels"
    other.write_text("elsewhere 0 d1 1\n")
    assert main(["audit", "labels", "--judgments", "data/qrels.txt", "--labels", str(other),
                 "--out-dir", str(tmp_path / "l")]) == 2
    err = capsys.readouterr().err
    assert "'nobody' is not in the experiment" in err and "unknown perturbation(s) 'shouting'" in err
    assert "share no query" in err
