"""Phase 1 in a real Snakemake run: generate a bank (openai backend, loopback server, canned answers), grade with
it, then the human loop: ``autograde bank init-edit``, ``grade_with: edited``, edit one item, rerun.

Checks: a valid bank for the good queries and recorded failures for the malformed ones; a second run has nothing
to do and a forced regeneration makes zero model calls; switching to the edited copy makes zero model calls; an
edit of one item of one query schedules only that query's grading shard and what is downstream (no generation,
no ingest, no pool) and regrades exactly (passages of that query) x 1 pairs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.canned_banks import BAD, GOOD, CannedChat, queries_tsv
from support.helpers import job_stats, run_workflow
from support.loopback_server import LoopbackServer

from autograde.cli import main
from autograde.io.banks.read import read_bank
from autograde.pipeline.shards import shard_assignment

DOWNSTREAM = {"merge_grades", "rubric_qrels", "evaluate", "leaderboards", "cover", "correlation", "reports",
              "report_correlation", "site", "all"}


@pytest.fixture
def served() -> Iterator[tuple[LoopbackServer, CannedChat]]:
    chat = CannedChat()
    with LoopbackServer(chat) as srv:  # type: ignore[arg-type] - any object with complete() serves
        yield srv, chat


def nothing_to_do(wd: Path) -> bool:
    dry = run_workflow(wd, "-n")
    return "Nothing to be done" in dry.stdout + dry.stderr


@pytest.mark.workflow
@pytest.mark.slow
def test_generate_grade_edit_rerun(mini: Path, served: tuple[LoopbackServer, CannedChat]) -> None:
    srv, chat = served
    wd = mini.parent
    (wd / "data/queries.tsv").write_text(queries_tsv())  # q1-q3 have passages; q4-q9 only get a bank
    raw = yaml.safe_load(mini.read_text())
    del raw["banks"]
    raw["bank_generation"] = {"questions": {
        "backend": "openai", "model": "canned", "prompt_class": "QuestionGenerationDL", "items_per_query": 4,
        "min_items": 3, "allow_failures": 0.6,
        "options": {"base_url": srv.base_url, "max_retries": 0, "timeout_s": 30}}}
    mini.write_text(yaml.safe_dump(raw))

    first = run_workflow(wd)
    assert first.returncode == 0, first.stderr[-3000:]
    r = wd / "results"
    bank = read_bank(r / "banks/questions.jsonl.gz")
    assert list(bank.by_query()) == list(GOOD) and all(len(v) == 4 for v in bank.by_query().values())
    failures = [json.loads(x) for x in (r / "banks/questions.failures.jsonl").read_text().splitlines()]
    assert [f["query_id"] for f in failures] == list(BAD) and all(len(f["attempts"]) == 3 for f in failures)
    stats = json.loads((r / "banks/questions.stats.json").read_text())
    assert stats["model_calls"] == chat.total > 0 and (stats["ok"], stats["failed"]) == (4, 5)
    assert len(stats["shards"]) == 2 and (wd / "logs/generate_bank/questions/1-of-2.log").exists()
    grades = pd.read_parquet(r / "grades/sim.parquet")
    pool = pd.read_parquet(r / "pool/pool.parquet")
    n_per_query = pool.groupby("query_id").size().to_dict()
    assert len(grades) == sum(n * 4 for n in n_per_query.values())  # every pooled passage x its 4 generated items

    assert nothing_to_do(wd)
    calls = chat.total
    forced = run_workflow(wd, "-R", "generate_bank")
    assert forced.returncode == 0, forced.stderr[-3000:]
    assert chat.total == calls  # regenerating makes no model call: every answer comes from the cache
    assert json.loads((r / "banks/questions.stats.json").read_text())["model_calls"] == 0
    assert read_bank(r / "banks/questions.jsonl.gz").items == bank.items

    # the human loop: an editable copy, graded instead of the generated bank
    assert main(["bank", "init-edit", "--config", str(mini), "--bank", "questions"]) == 0
    edited = wd / "banks/questions.edited.jsonl"
    raw["bank_generation"]["questions"]["grade_with"] = "edited"
    mini.write_text(yaml.safe_dump(raw))
    switched = run_workflow(wd)
    assert switched.returncode == 0, switched.stderr[-3000:]
    assert "rule generate_bank" not in switched.stdout + switched.stderr
    for shard in ("1-of-2", "2-of-2"):
        st = json.loads((r / f"grades/sim/shards/{shard}.stats.json").read_text())
        assert st["computed"] == 0 and st["cached"] == st["pairs"]  # same items: every grade from the cache
    assert nothing_to_do(wd)

    edited.write_text(edited.read_text().replace("When do spring tides occur?", "When exactly do spring tides occur?"))
    dry = run_workflow(wd, "-n")
    jobs = job_stats(dry)
    assert jobs.pop("grade") == 1 and set(jobs) <= DOWNSTREAM, dry.stdout
    shard = shard_assignment(["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"], 2)["q2"] + 1
    assert re.findall(r"scatteritem=(\d+-of-2)", dry.stdout) == [f"{shard}-of-2"]
    rerun = run_workflow(wd)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    st = json.loads((r / f"grades/sim/shards/{shard}-of-2.stats.json").read_text())
    assert st["computed"] == n_per_query["q2"] * 1 and st["cached"] == st["pairs"] - n_per_query["q2"]
    assert nothing_to_do(wd)
    assert chat.total == calls  # no generation call since the first run
