"""The generated-bank run several workflow tests read: built once per session (tests/conftest.py explains how)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from support.canned_banks import CannedChat, queries_tsv
from support.helpers import built_once, output, run_workflow
from support.loopback_server import LoopbackServer
from support.mini import write_mini_dataset

from autograde.cli import main

GENERATED = {"backend": "openai", "model": "canned", "prompt_class": "QuestionGenerationDL", "items_per_query": 4,
             "min_items": 3, "allow_failures": 0.6, "options": {"max_retries": 0, "timeout_s": 30}}
"""The generated bank of :func:`bank_run` (the canned server's address is added to its options)."""


@pytest.fixture(scope="session")
def bank_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny dataset (q1-q3 have passages; q4-q9 only get a bank) with its question bank drafted by an LLM
    (a canned OpenAI-compatible server on loopback: q1-q4 answer well, q5-q9 badly), then the human loop: an edited
    copy (``bank init-edit``) that grading reads (``grade_with: edited``). ``observations.json`` in the folder records
    what happened on the way (model calls, stats, which jobs ran) for the tests to check."""
    with built_once("bank-run", tmp_path_factory) as (wd, done):
        if done:
            return wd
        cfg = write_mini_dataset(wd)
        (wd / "data/queries.tsv").write_text(queries_tsv())
        chat = CannedChat()
        obs: dict[str, object] = {}
        with LoopbackServer(chat) as srv:  # type: ignore[arg-type] - any object with complete() serves
            raw = yaml.safe_load(cfg.read_text())
            del raw["banks"]
            raw["bank_generation"] = {"questions": {**GENERATED, "options": {**GENERATED["options"],
                                                                              "base_url": srv.base_url}}}
            cfg.write_text(yaml.safe_dump(raw))
            run_workflow(wd, check=True)
            obs["calls_first"] = chat.total
            obs["first_stats"] = json.loads((wd / "results/banks/questions.stats.json").read_text())
            obs["nothing_to_do_after_first"] = "Nothing to be done" in output(run_workflow(wd, "-n"))
            # regenerate the bank alone (its target): the next run grades and analyses from it anyway
            run_workflow(wd, "results/banks/questions.jsonl.gz", "-R", "generate_bank", check=True)
            obs["calls_after_regenerate"] = chat.total
            obs["regenerate_stats"] = json.loads((wd / "results/banks/questions.stats.json").read_text())
            with contextlib.chdir(wd):  # the config's paths are relative to the working directory
                assert main(["bank", "init-edit", "--config", str(cfg), "--bank", "questions"]) == 0
            raw["bank_generation"]["questions"]["grade_with"] = "edited"
            cfg.write_text(yaml.safe_dump(raw))
            switched = run_workflow(wd, check=True)
            obs["switched_ran_generate_bank"] = "rule generate_bank" in output(switched)
            obs["switched_shard_stats"] = [json.loads((wd / f"results/grades/sim/shards/{s}.stats.json").read_text())
                                           for s in ("1-of-2", "2-of-2")]
            obs["nothing_to_do_after_switch"] = "Nothing to be done" in output(run_workflow(wd, "-n"))
            obs["calls_last"] = chat.total
        (wd / "observations.json").write_text(json.dumps(obs, indent=1))
    return wd
