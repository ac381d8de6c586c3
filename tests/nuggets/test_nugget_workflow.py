"""Nugget scores in a real workflow run: assignment by an LLM through the OpenAI-compatible loopback server
(SmolLM2), then one nugget edited and one importance changed by hand.

- The first run grades every (whole answer, nugget) pair once, writes the assignment JSONL, the evaluation with each
  run's mean, the six leaderboards and the site's answer pages.
- (Editing one nugget reruns only its shard, exactly its pairs: tests/workflow/test_edit_reruns.py.)
- Changing one nugget's importance by hand reruns only its shard's score job: no assignment job, no model call.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.helpers import job_stats, run_workflow
from support.loopback_server import LoopbackServer, SmolLM2Chat
from support.mini import write_mini_dataset
from support.models import smollm2_model_dir
from support.nugget_data import MORE_ANSWERS, NUGGETS, write_nugget_bank

from autograde.core.ids import item_id
from autograde.core.tables import read_table

KEY_ENV = "AUTOGRADE_TEST_NUGGETS_KEY"
@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    llm = SmolLM2Chat.load(smollm2_model_dir())  # the GGUF converted once (loading it directly is 3x slower)
    with LoopbackServer(llm) as srv:
        yield srv


@pytest.mark.workflow
@pytest.mark.slow
def test_assign_by_an_llm_then_change_one_importance(tmp_path: Path, server: LoopbackServer) -> None:
    cfg = write_mini_dataset(tmp_path, shards=2, reports=True)  # shards: 1-of-2 = {q1, q3}, 2-of-2 = {q2}
    (tmp_path / "data" / "answers2.jsonl").write_text("".join(json.dumps(a) + "\n" for a in MORE_ANSWERS))
    write_nugget_bank(tmp_path / "data" / "nuggets.jsonl", NUGGETS)
    raw = yaml.safe_load(cfg.read_text())
    raw["data"]["answers"] = ["data/answers.jsonl", "data/answers2.jsonl"]
    raw["banks"]["nuggets"] = "data/nuggets.jsonl"
    raw["graders"] = []
    raw["nuggets"] = {"bank": "nuggets", "baseline": "gen", "assessors": [
        {"name": "llm-assign", "backend": "openai", "model": server.model_name,
         "options": {"base_url": server.base_url, "api_key_env": KEY_ENV, "concurrency": 2}}]}
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    res = tmp_path / "results"

    nugget_run(tmp_path)
    stats = json.loads((res / "nuggets/llm-assign/stats.json").read_text())
    # q1: 2 answers x 2 nuggets, q2: 2 x 2, q3: 1 x 2 = 10 distinct pairs, each graded once
    assert stats["grades"]["pairs"] == stats["grades"]["computed"] == 10 and stats["grades"]["ok"] == 10
    assert stats["labels"]["pairs"] == 10 and stats["labels"]["without_grade"] == 0 and stats["runs"] == 2
    calls = server.llm.calls
    lines = [json.loads(x) for x in (res / "nuggets/llm-assign/assignments.jsonl").read_text().splitlines()]
    assert {(r["run_id"], r["qid"]) for r in lines} == {("gen", "q1"), ("gen", "q2"), ("gen2", "q1"), ("gen2", "q2"),
                                                        ("gen2", "q3")}
    assert all(n["assignment"] in ("support", "partial_support", "not_support") for r in lines for n in r["nuggets"])
    ev = read_table(res / "eval/llm-assign/nuggets.parquet")
    assert set(ev["measure"]) == {"all_score", "strict_all_score", "vital_score", "strict_vital_score",
                                  "weighted_score", "strict_weighted_score"}
    assert (ev[(ev["query_id"] == "q2") & ev["measure"].isin(["vital_score", "strict_vital_score"])]["value"] == 0).all()
    lb = (res / "leaderboards/llm-assign/nuggets/all_score.tsv").read_text().splitlines()
    assert lb[0].split("\t")[:4] == ["rank", "run", "score", "n_queries"] and "p_value" in lb[0] and len(lb) == 3
    page = (res / "site/llm-assign/q/q1.html").read_text()
    assert "nugget-grid" in page and "Bees collect nectar from flowers" in page
    # a nugget's column header: its number, and its importance as a word under it (not "1V" / "2O")
    assert not re.search(r"<th[^>]*>\d+[VO]</th>", page) and re.search(r'>1<br><small class="muted">(vital|okay)<', page)
    assert "llm-assign/index.html" in (res / "site/index.html").read_text()

    # -- change one importance by hand (q2): no assignment job and no model call, one score job
    calls = server.llm.calls
    edited = {**NUGGETS, "q2": [(NUGGETS["q2"][0][0], "vital"), NUGGETS["q2"][1]]}
    write_nugget_bank(tmp_path / "data" / "nuggets.jsonl", edited)
    jobs = job_stats(nugget_run(tmp_path, "-n").stdout)
    assert "assign_nuggets" not in jobs and jobs.get("score_nuggets") == 1 and jobs.get("nugget_importance") == 1, jobs
    nugget_run(tmp_path)
    assert server.llm.calls == calls
    ev = read_table(res / "eval/llm-assign/nuggets.parquet")
    q2 = ev[(ev["query_id"] == "q2") & (ev["measure"] == "vital_score")]
    labels = {(r["run_id"], n["text"]): n["assignment"] for r in map(json.loads, (
        res / "nuggets/llm-assign/assignments.jsonl").read_text().splitlines()) for n in r["nuggets"]}
    credit = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
    for run, value in q2[["run", "value"]].itertuples(index=False):  # Vital of q2 is now its one vital nugget
        assert value == credit[labels[(run, NUGGETS["q2"][0][0])]]
    assert "Traceback" not in (tmp_path / "logs/score_nuggets/llm-assign/2-of-2.log").read_text()


def nugget_run(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The workflow on a nugget experiment (its openai assessors get a key from the environment)."""
    return run_workflow(workdir, *args, env={KEY_ENV: "sk-nuggets"}, check=True)


@pytest.mark.workflow
@pytest.mark.model
def test_importance_model_labels_only_open_nuggets_and_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-set importance wins; the model (NuggetImportance, hf SmolLM2) labels the rest, once (then the cache)."""

    from autograde.config.experiment import load_config
    from autograde.nuggets.stages import run_importance

    cfg = write_mini_dataset(tmp_path)
    open_nuggets = {q: [(t, "") for t, _ in items] for q, items in NUGGETS.items()}
    open_nuggets["q1"][0] = (NUGGETS["q1"][0][0], "okay")  # set by hand (the model may say otherwise)
    bank = tmp_path / "data" / "nuggets.jsonl"
    write_nugget_bank(bank, open_nuggets)
    bank.write_text(bank.read_text().replace(', "info": {"importance": ""}', ""))
    raw = yaml.safe_load(cfg.read_text())
    raw["banks"]["nuggets"] = "data/nuggets.jsonl"
    raw["nuggets"] = {"bank": "nuggets", "importance": {"backend": "hf", "model": str(smollm2_model_dir()),
                                                        "options": {"torch_threads": 1}},
                      "assessors": [{"name": "a", "backend": "embedded", "thresholds": [3, 4]}]}
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    monkeypatch.chdir(tmp_path)
    config = load_config(cfg)
    first = run_importance(config, "data/queries.tsv", tmp_path / "imp.parquet", tmp_path / "imp.stats.json")
    assert first["from_bank"] == 1 and first["from_model"] == 5 and first["model"]["computed"] == 5
    table = read_table(tmp_path / "imp.parquet")
    row = table[table["item_id"] == item_id("q1", NUGGETS["q1"][0][0])].iloc[0]
    assert row["importance"] == "okay" and row["source"] == "bank"
    model_rows = table[table["source"] == "model"]
    assert set(model_rows["importance"]) <= {"vital", "okay"} and model_rows["p_vital"].between(0, 1).all()
    again = run_importance(config, "data/queries.tsv", tmp_path / "imp.parquet", tmp_path / "imp.stats.json")
    assert again["model"]["computed"] == 0 and again["model"]["cached"] == 5  # from the grade cache
