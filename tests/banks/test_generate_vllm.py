"""The ``generate_bank`` rule with a ``vllm`` bank: the job hands its shard to ``autograde bank generate --shard``
in the vLLM environment (vLLM's CPU build, SmolLM2 as a float32 model folder), like grading jobs do.

Skips where the vLLM environment is absent (``make vllm-env`` builds it); CI must run it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support.helpers import run_workflow
from support.models import CPU_OPTIONS, smollm2_model_dir, vllm_python

from autograde.io.banks.read import read_bank


@pytest.mark.model
@pytest.mark.workflow
@pytest.mark.slow
def test_vllm_bank_through_the_workflow(mini: Path) -> None:
    vllm_python()  # skip (or fail on CI) without the vLLM environment
    wd = mini.parent
    raw = yaml.safe_load(mini.read_text())
    del raw["banks"]
    raw["bank_generation"] = {"questions": {
        "backend": "vllm", "model": str(smollm2_model_dir()), "prompt_class": "QuestionGenerationDL",
        "items_per_query": 3, "min_items": 2, "repair_attempts": 1, "allow_failures": 0.9,
        "decoding": {"max_new_tokens": 96}, "options": CPU_OPTIONS}}
    raw["graders"] = [{"name": "sim", "backend": "embedded", "bank": "questions"}]
    mini.write_text(yaml.safe_dump(raw))
    run = run_workflow(wd, "results/banks/questions.jsonl.gz", "--set-scatter", "generate_bank=1")
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    stats = json.loads((wd / "results/banks/questions.stats.json").read_text())
    bank = read_bank(wd / "results/banks/questions.jsonl.gz")
    assert stats["queries"] == 3 and stats["ok"] >= 1 and stats["items"] == len(bank.items)
    assert all(h["info"]["backend"] == "vllm" for h in bank.headers.values())
    log = (wd / "logs/generate_bank/questions/1-of-1.log").read_text()
    assert "running in the vLLM environment" in log
