"""The workflow with a ``vllm`` grader: its grading job runs ``autograde grade`` in the vLLM environment.

One real Snakemake run on the tests' mini dataset (SmolLM2 as a model folder, vLLM's CPU build in
``.venv-vllm``): the grading job is killed (the whole process group, SIGKILL) once some batches are in the
cache; the rerun resumes from the cache (it computes exactly the pairs that were not stored) and the workflow
runs to the end; a third run has nothing to do. A grader that cannot start fails its job with the message and
the fix, without a traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.helpers import run_workflow, workflow_command, workflow_env
from support.models import CPU_OPTIONS, smollm2_model_dir, vllm_python

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"


def stored_grades(cache: Path) -> int:
    """Whole lines in the grade cache's segments (one per stored grade)."""
    return sum(p.read_bytes().count(b"\n") for p in cache.glob("grades/*/seg-*.jsonl"))


def vllm_config(mini: Path, **options: object) -> None:
    cfg = yaml.safe_load(mini.read_text())
    cfg["grading"].update(shards=1, batch_size=2)  # small batches: the cache fills while the job runs
    cfg["graders"] = [{
        "name": "smol-vllm", "backend": "vllm", "bank": "questions", "prompt_class": QSR, "scoring": "logits",
        "model": str(smollm2_model_dir()),
        "options": {**CPU_OPTIONS, "max_model_len": 1024, "assistant_prefill": "Rating: ", **options},
    }]
    mini.write_text(yaml.safe_dump(cfg))


@pytest.mark.model
@pytest.mark.workflow
@pytest.mark.slow
def test_vllm_grader_end_to_end_killed_job_resumes(mini: Path) -> None:
    vllm_python()  # skips (or fails on CI) without the vLLM environment
    wd = mini.parent
    vllm_config(mini)
    cache = wd / "cache"

    # 1. start the workflow; kill it (the whole process group) once some batches are stored
    proc = subprocess.Popen(workflow_command(wd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=workflow_env(),
                            start_new_session=True)
    deadline = time.monotonic() + 600
    try:
        while stored_grades(cache) < 4 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        out = proc.communicate()[0].decode(errors="replace")
    assert proc.returncode == -signal.SIGKILL, f"the run ended before it was killed:\n{out[-3000:]}"
    time.sleep(0.5)
    before = stored_grades(cache)
    assert before >= 4, out[-3000:]
    assert not (wd / "results/grades/smol-vllm.parquet").exists()

    # 2. rerun (what a user does after a kill): the job resumes from the cache and the workflow runs to the end
    assert run_workflow(wd, "--unlock").returncode == 0
    run = run_workflow(wd, "--rerun-incomplete")
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    r = wd / "results"
    for rel in ["grades/smol-vllm.parquet", "qrels/smol-vllm/max-3.qrels", "leaderboards/smol-vllm/max-3/ndcg_cut_10.tsv",
                "correlation.tsv"]:
        assert (r / rel).exists(), rel
    stats = json.loads((r / "grades/smol-vllm.stats.json").read_text())
    grades = pd.read_parquet(r / "grades/smol-vllm.parquet")
    pool = pd.read_parquet(r / "pool/pool.parquet")
    assert stats["pairs"] == len(grades) == len(pool) * 2
    assert stats["cached"] == before and stats["computed"] == stats["pairs"] - before > 0
    assert stats["failed"] == 0 and (grades["parse_status"] == "ok").all()
    assert (grades["backend"] == "vllm").all() and grades["grader"].eq("smol-vllm").all()
    probs = grades["grade_probs"].map(json.loads)
    assert all(abs(sum(p.values()) - 1) < 1e-6 and set(p) == {"0", "1", "2", "3", "4", "5"} for p in probs)
    log = (wd / "logs/grade/smol-vllm/1-of-1.log").read_text()
    assert "running in the vLLM environment" in log and "in this process" in log  # vLLM's messages are in the log

    # 3. nothing left to do
    again = run_workflow(wd, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.model
@pytest.mark.workflow
def test_vllm_grader_that_cannot_start_fails_with_the_fix(mini: Path) -> None:
    """An engine vLLM refuses (a context longer than the model's): the job fails with vLLM's reason and the fix,
    as a message from the vLLM environment, without a traceback."""
    vllm_python()
    wd = mini.parent
    vllm_config(mini, max_model_len=100_000)  # SmolLM2 has 8,192 positions
    run = run_workflow(wd, "results/grades/smol-vllm.parquet")
    assert run.returncode != 0
    log = (wd / "logs/grade/smol-vllm/1-of-1.log").read_text()
    last_error = [line for line in log.splitlines() if " ERROR " in line][-1]  # the job's own message
    assert "'smol-vllm' (backend vllm): the engine" in last_error and "did not start" in last_error, log[-3000:]
    assert "max_model_len (100000) is greater" in last_error and "(fix:" in last_error
    assert "Traceback" not in log, log[-3000:]
    assert not (wd / "results/grades/smol-vllm/shards/1-of-1.parquet").exists()
