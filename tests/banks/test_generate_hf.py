"""A bank generated end to end with the ``hf`` backend and a real small model (SmolLM2-135M-Instruct, GGUF).

SmolLM2 writes poor exam questions (it repeats itself; see NOTES.md): their quality is irrelevant here. The path is
real: the model's chat template, greedy generation, the parser (SmolLM2 answers in ``Question: ...`` lines),
validation, repair prompts, the cache, the workbench-format bank with provenance, and failures recorded.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch
import yaml
from support.models import smollm2_model_dir

from autograde.banks.parse import GeneratedItems, ItemLimits
from autograde.cli import main
from autograde.core.ids import item_id
from autograde.io.banks.read import read_bank

torch.set_num_threads(1)

@pytest.mark.model
@pytest.mark.slow
def test_smollm2_generates_a_bank_end_to_end(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = yaml.safe_load(mini.read_text())
    del raw["banks"]
    raw["bank_generation"] = {"questions": {
        "backend": "hf", "model": str(smollm2_model_dir()), "prompt_class": "QuestionGenerationDL",
        "items_per_query": 3, "min_items": 2, "repair_attempts": 1, "allow_failures": 0.9,
        "decoding": {"max_new_tokens": 96},
        "options": {"device": "cpu", "torch_threads": 1, "max_input_tokens": None},
    }}
    mini.write_text(yaml.safe_dump(raw))
    t0 = time.perf_counter()
    assert main(["bank", "generate", "--config", str(mini), "--bank", "questions"]) == 0
    seconds = time.perf_counter() - t0
    stats = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    out = mini.parent / "results/banks"
    bank = read_bank(out / "questions.jsonl.gz")
    failures = [json.loads(x) for x in (out / "questions.failures.jsonl").read_text().splitlines()]
    print(f"SmolLM2 generation: {seconds:.1f} s (model load included), {stats}")
    assert stats["queries"] == 3 and stats["ok"] >= 1 and stats["ok"] + stats["failed"] == 3
    assert stats["model_calls"] >= 3 and stats["items"] == len(bank.items)
    by_q = bank.by_query()
    assert len(by_q) == stats["ok"] and len(failures) == stats["failed"]
    for qid, items in by_q.items():  # what was kept is valid: distinct, short, ids from the text
        texts = [i.text for i in items]
        assert GeneratedItems.from_raw(texts, ItemLimits(min_items=2)).items == texts
        assert all(i.item_id == item_id(qid, i.text) and i.kind == "question" for i in items)
        info = bank.headers[qid]["info"]
        assert info["backend"] == "hf" and info["prompt_class"] == "QuestionGenerationDL" and info["attempts"] >= 1
        assert info["decoding"] == {"max_new_tokens": 96, "temperature": None, "top_p": 1.0, "seed": 0}
    for f in failures:
        assert f["error"].startswith("no valid answer in 2 attempt(s)") and len(f["attempts"]) == 2
    cached = list((mini.parent / "cache/generations/grades").glob("*/seg-*.jsonl"))
    assert cached and sum(len(p.read_text().splitlines()) for p in cached) == stats["model_calls"]
