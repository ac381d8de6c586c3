"""A real Snakemake run of the workflow on the tiny inline dataset.

Checks: every output exists; a second run has nothing to do; editing one question of one query
schedules only that query's grading shard and what is downstream, and the rerun grades exactly
(passages of that query) x 1 new pairs; bad input fails before any grading.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from support.helpers import copy_run, job_stats, output, run_workflow
from support.models import smollm2_model_dir

from autograde.pipeline.shards import shard_assignment


@pytest.mark.workflow
@pytest.mark.slow
def test_workflow_end_to_end_and_a_stale_shard(mini_run: Path, tmp_path: Path) -> None:
    wd = copy_run(mini_run, tmp_path / "run")
    r = wd / "results"
    for rel in ["pool/pool.parquet", "grades/sim.parquet", "qrels/sim/max-3.qrels", "qrels/sim/count-3.qrels",
                "leaderboards/sim/max-3/ndcg_cut_10.tsv", "leaderboards/human/recip_rank.tsv", "correlation.tsv"]:
        assert (r / rel).exists(), rel
    pool = pd.read_parquet(r / "pool/pool.parquet")
    assert not pool.duplicated(["query_id", "passage_id"]).any()
    corr = pd.read_csv(r / "correlation.tsv", sep="\t")
    assert set(corr.columns) >= {"grader", "qrels", "measure", "spearman", "kendall"} and len(corr) == 8  # 2 qrels variants x 2 measures, human x 2, cover + ncover
    assert (wd / "logs/grade/sim/1-of-2.log").exists() and (wd / "logs/benchmarks/grade/sim/1-of-2.tsv").exists()
    assert "Nothing to be done" in output(run_workflow(wd, "-n"))
    shard = shard_assignment(["q1", "q2", "q3"], 2)["q2"] + 1
    bank = wd / "data/questions.jsonl"
    # A shard whose job failed after an edit keeps its old output but loses its Snakemake metadata, so
    # Snakemake would not regrade it: merge_grades (rerun by its digest params) must refuse the stale shard.
    bank.write_text(bank.read_text().replace("When do spring tides occur?", "When exactly do spring tides occur?"))
    shard_out = f"results/grades/sim/shards/{shard}-of-2.parquet"
    run_workflow(wd, "--cleanup-metadata", shard_out, check=True)
    assert "grade" not in job_stats(run_workflow(wd, "-n"))  # Snakemake itself would not regrade the shard
    stale = run_workflow(wd)
    assert stale.returncode != 0
    assert "made for an older test bank or grader config" in stale.stdout + stale.stderr
    assert "snakemake -R grade" in stale.stdout + stale.stderr
    fixed = run_workflow(wd, "-R", "grade")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    # only the edited question's pairs are sent to the model; the rest of the shard comes from the cache
    regraded = json.loads((r / f"grades/sim/shards/{shard}-of-2.stats.json").read_text())
    n_q2 = int((pool["query_id"] == "q2").sum())
    assert regraded["computed"] == n_q2 and regraded["cached"] == regraded["pairs"] - n_q2


@pytest.mark.workflow
def test_bad_bank_fails_before_any_job(mini: Path) -> None:
    wd = mini.parent
    bank = wd / "data/questions.jsonl"
    bank.write_text(bank.read_text() + '{"query_id": "q4", "items": [\n')
    run = run_workflow(wd)
    assert run.returncode != 0
    assert "data/questions.jsonl:4: not valid JSON" in run.stderr + run.stdout
    assert not (wd / "results").exists()


@pytest.mark.workflow
@pytest.mark.slow
def test_workflow_grades_with_an_llm_backend(mini: Path) -> None:
    """The sharded grading rule with a real LLM (SmolLM2-135M-Instruct GGUF through the hf backend, logits)."""

    import yaml

    wd = mini.parent
    cfg = yaml.safe_load(mini.read_text())
    cfg["graders"] = [{
        "name": "smollm", "backend": "hf", "bank": "questions",
        "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices",
        "model": str(smollm2_model_dir()),  # the GGUF converted once (tests/grading/test_hf_backend.py loads the GGUF)
        "options": {"device": "cpu", "assistant_prefill": "Rating: ", "torch_threads": 1},
    }]
    mini.write_text(yaml.safe_dump(cfg))
    run = run_workflow(wd, "results/qrels/smollm/max-3.qrels", "--set-scatter", "grade=1")
    assert run.returncode == 0, run.stderr[-3000:]
    grades = pd.read_parquet(wd / "results/grades/smollm.parquet")
    pool = pd.read_parquet(wd / "results/pool/pool.parquet")
    assert len(grades) == len(pool) * 2 and (grades["parse_status"] == "ok").all()
    probs = grades["grade_probs"].map(json.loads)
    assert all(abs(sum(p.values()) - 1) < 1e-6 and set(p) == {"0", "1", "2", "3", "4", "5"} for p in probs)
    assert grades["label_mass"].between(0, 1).all() and (grades["prompt_class"] != "").all()
    stats = json.loads((wd / "results/grades/smollm.stats.json").read_text())
    assert stats["computed"] == len(grades) and stats["failed"] == 0
