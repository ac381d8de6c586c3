"""Phase 1 in a real Snakemake run: generate a bank (openai backend, loopback server, canned answers), grade with
it, then the human loop: ``autograde bank init-edit``, ``grade_with: edited``, edit one item, rerun.

Checks: a valid bank for the good queries and recorded failures for the malformed ones; a second run has nothing
to do and a forced regeneration makes zero model calls; switching to the edited copy makes zero model calls. (An
edit of the copy reruns one shard: tests/workflow/test_edit_reruns.py, on the same run.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from support.canned_banks import BAD, GOOD

from autograde.io.banks.read import read_bank


@pytest.mark.workflow
@pytest.mark.slow
def test_generate_grade_and_switch_to_the_edited_copy(bank_run: Path) -> None:
    """Generation through the workflow, a regeneration from the cache, and the human loop (an edited copy graded
    instead of the generated bank); editing that copy reruns one shard (tests/workflow/test_edit_reruns.py)."""
    r = bank_run / "results"
    obs = json.loads((bank_run / "observations.json").read_text())
    bank = read_bank(r / "banks/questions.jsonl.gz")
    assert list(bank.by_query()) == list(GOOD) and all(len(v) == 4 for v in bank.by_query().values())
    failures = [json.loads(x) for x in (r / "banks/questions.failures.jsonl").read_text().splitlines()]
    assert [f["query_id"] for f in failures] == list(BAD) and all(len(f["attempts"]) == 3 for f in failures)
    first, stats = obs["first_stats"], obs["regenerate_stats"]
    assert first["model_calls"] == obs["calls_first"] > 0 and (first["ok"], first["failed"]) == (4, 5)
    assert stats["model_calls"] == 0 and (stats["ok"], stats["failed"]) == (4, 5)  # regenerated from the cache
    assert obs["calls_first"] > 0 and obs["calls_after_regenerate"] == obs["calls_first"] == obs["calls_last"]
    assert len(stats["shards"]) == 2 and (bank_run / "logs/generate_bank/questions/1-of-2.log").exists()
    assert obs["nothing_to_do_after_first"] and obs["nothing_to_do_after_switch"]
    grades = pd.read_parquet(r / "grades/sim.parquet")
    pool = pd.read_parquet(r / "pool/pool.parquet")
    n_per_query = pool.groupby("query_id").size().to_dict()
    assert len(grades) == sum(n * 4 for n in n_per_query.values())  # every pooled passage x its 4 generated items
    assert not obs["switched_ran_generate_bank"]
    for st in obs["switched_shard_stats"]:
        assert st["computed"] == 0 and st["cached"] == st["pairs"]  # same items: every grade from the cache
    assert read_bank(bank_run / "banks/questions.edited.jsonl").items == bank.items
