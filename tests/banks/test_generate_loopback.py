"""Generation through the ``openai`` backend against the real loopback HTTP server, with canned answers.

The server (tests/loopback_server.py) answers from :class:`CannedChat`: good answers in every accepted shape and
malformed ones (no JSON, truncated JSON, an empty list, duplicates, a 2,000-word item). Checks: a valid bank for
the good queries, repairs then recorded failures for the bad ones, a second run without any call, endpoint
failures not cached and asked again on the rerun (only those), and the merged bank's failure policy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.canned_banks import BAD, CANNED, GOOD, CannedChat, queries_tsv
from support.loopback_server import Faults, LoopbackServer

from autograde.banks.generate import make_generator, query_prompts
from autograde.banks.stages import BankGenerationError, run_generate_shard, run_merge_bank
from autograde.config.experiment import validate_config
from autograde.core.errors import EndpointError
from autograde.io.banks.read import read_bank


@pytest.fixture
def served() -> Iterator[tuple[LoopbackServer, CannedChat]]:
    chat = CannedChat()
    with LoopbackServer(chat) as srv:  # type: ignore[arg-type] - any object with complete() serves
        yield srv, chat


def bank_settings(srv: LoopbackServer, **over: object) -> dict:
    return {"backend": "openai", "model": "canned", "prompt_class": "QuestionGenerationDL", "items_per_query": 4,
            "min_items": 3, "repair_attempts": 2, "batch_size": 4,
            "options": {"base_url": srv.base_url, "max_retries": 0, "timeout_s": 20, "concurrency": 4}, **over}


def experiment(tmp_path: Path, srv: LoopbackServer, **over: object):
    (tmp_path / "queries.tsv").write_text(queries_tsv(), encoding="utf-8")
    return validate_config({"data": {"queries": str(tmp_path / "queries.tsv")},
                            "grading": {"cache_dir": str(tmp_path / "cache")}, "results_dir": str(tmp_path / "results"),
                            "bank_generation": {"questions": bank_settings(srv, **over)}}, "test")


def run(config, tmp_path: Path):
    gen = make_generator("questions", config.bank_generation["questions"], tmp_path / "cache")
    try:
        return gen.run(query_prompts({q: t for q, (t, _, _) in CANNED.items()}))
    finally:
        gen.close()


def test_good_queries_give_items_bad_ones_are_repaired_then_recorded(tmp_path: Path, served) -> None:
    srv, chat = served
    config = experiment(tmp_path, srv)
    results, stats = run(config, tmp_path)
    by_q = {r.query_id: r for r in results}
    assert all(by_q[q].ok for q in GOOD) and not any(by_q[q].ok for q in BAD)
    assert by_q["q1"].items[0] == "Where do bees store nectar while foraging?" and len(by_q["q1"].items) == 4
    assert by_q["q2"].items == ["Which celestial bodies cause tides?", "When do spring tides occur?",
                                "What is a neap tide?", "Why are there two high tides a day?"]
    assert by_q["q2"].attempts[0].how == "JSON in a code fence"
    assert by_q["q2"].attempts[0].notes == ["1 duplicate item(s) (same text after normalization)"]
    assert by_q["q3"].attempts[0].how == "list lines"
    # q4: no JSON at first; the repair prompt (which shows the answer and the problem) gets a valid answer
    assert [a.problem is None for a in by_q["q4"].attempts] == [False, True] and len(by_q["q4"].items) == 4
    # every bad query: 1 + 2 repairs, then a failure naming the last problem; never an empty list of items
    expected = {"q5": "the answer holds no JSON and no numbered list", "q6": "the JSON is incomplete or invalid",
                "q7": "the list of items is empty", "q8": "only 1 distinct item(s)", "q9": "item 1 has 2000 words"}
    for q, problem in expected.items():
        r = by_q[q]
        assert len(r.attempts) == 3 and r.items == [] and not r.transient
        assert r.failure.startswith("no valid answer in 3 attempt(s) (1 + 2 repair(s)); last problem: " + problem), r.failure
    assert stats["ok"] == 4 and stats["failed"] == 5 and stats["repairs"] == 1 + 2 * 5
    # calls = distinct model inputs; an identical repair prompt (same answer, same problem) comes from the cache
    assert stats["model_calls"] == chat.total and stats["model_calls"] + stats["cached"] == 4 + 1 + 5 * 2 + 5 * 1
    assert chat.calls["q7"] == 2  # q7 answers "[]" twice: its second repair prompt equals its first

    calls = chat.total
    again, stats2 = run(config, tmp_path)
    assert chat.total == calls and stats2["model_calls"] == 0  # a rerun makes no call
    assert [(r.query_id, r.items, r.failure) for r in again] == [(r.query_id, r.items, r.failure) for r in results]


def test_endpoint_failures_are_not_cached_and_only_they_are_asked_again(tmp_path: Path) -> None:
    chat = CannedChat()
    config = None
    with LoopbackServer(chat, faults=Faults(always_fail=("'why is the sky blue'",))) as srv:  # type: ignore[arg-type]
        config = experiment(tmp_path, srv)
        out = [str(tmp_path / f"shard{s}") for s in (".jsonl", ".failures.jsonl", ".stats.json")]
        with pytest.raises(EndpointError, match=r"1 of 9 queries got no answer from the model \(q4\).*rerun"):
            run_generate_shard(config, "questions", "1-of-1", *out)
        assert not Path(out[0]).exists()  # the job fails: Snakemake would rerun it
    first = dict(chat.calls)
    with LoopbackServer(chat) as srv:  # type: ignore[arg-type] - the endpoint is back (on another port)
        config = experiment(tmp_path, srv, options={**bank_settings(srv)["options"]})
        stats = run_generate_shard(config, "questions", "1-of-1", *out)
    asked_again = {q: n - first.get(q, 0) for q, n in chat.calls.items() if n - first.get(q, 0)}
    assert asked_again == {"q4": 2}  # the failed query's first prompt and its repair; everything else cached
    assert stats["ok"] == 4 and stats["model_calls"] == 2
    assert read_bank(out[0]).by_query().keys() == set(GOOD)


def test_merged_bank_failure_policy_and_provenance(tmp_path: Path, served) -> None:
    srv, _ = served
    config = experiment(tmp_path, srv)
    shard = [str(tmp_path / f"s{s}") for s in (".jsonl", ".failures.jsonl", ".stats.json")]
    run_generate_shard(config, "questions", "1-of-1", *shard, digest="d1")
    out = [str(tmp_path / f"bank{s}") for s in (".jsonl.gz", ".failures.jsonl", ".stats.json")]
    with pytest.raises(BankGenerationError) as err:  # allow_failures defaults to 0
        run_merge_bank(config, "questions", [shard[0]], [shard[1]], [shard[2]], *out, expected_digests={"1-of-1": "d1"})
    msg = str(err.value)
    assert "5 of 9 queries have no valid items (more than allow_failures = 0)" in msg
    assert f"{shard[1]}:1: query q5: no valid answer in 3 attempt(s)" in msg and "allow_failures" in msg.split("fix:")[1]
    with pytest.raises(Exception, match="made for an older generation config"):
        run_merge_bank(config, "questions", [shard[0]], [shard[1]], [shard[2]], *out, expected_digests={"1-of-1": "d2"})

    config = experiment(tmp_path, srv, allow_failures=0.6)
    stats = run_merge_bank(config, "questions", [shard[0]], [shard[1]], [shard[2]], *out)
    bank = read_bank(out[0])
    assert list(bank.by_query()) == list(GOOD) and stats["items"] == len(bank.items) == 16
    failures = [json.loads(line) for line in Path(out[1]).read_text().splitlines()]
    assert [f["query_id"] for f in failures] == list(BAD) and all(len(f["attempts"]) == 3 for f in failures)
    info = bank.headers["q1"]["info"]
    assert {k: info[k] for k in ("prompt_target", "backend", "model", "prompt_class", "prompt_version")} == {
        "prompt_target": "questions", "backend": "openai", "model": "canned", "prompt_class": "QuestionGenerationDL",
        "prompt_version": "v1"}
    assert len(info["prompt_digest"]) == 16 and info["decoding"]["max_new_tokens"] == 512
    assert info["items_per_query"] == 4 and bank.headers["q4"]["info"]["attempts"] == 2


def test_the_plan_counts_the_first_round_prompts_and_the_cached_answers(tmp_path: Path, served) -> None:
    """``autograde plan`` before a run: one first-round prompt per query, tokens approximated for an endpoint, at
    most max_new_tokens out each; after the run every first-round answer is cached and nothing is left to ask."""
    import pandas as pd

    from autograde.banks.feature import plan_banks
    from autograde.grading.base import approximate_tokens
    from autograde.pipeline.planning import PlanOptions

    srv, chat = served
    config = experiment(tmp_path, srv)
    queries = {q: t for q, (t, _, _) in CANNED.items()}
    (before,) = plan_banks(config, pd.DataFrame(), queries, PlanOptions())
    assert (before.stage, before.name, before.pairs, before.cached, before.to_compute) == (
        "bank generation", "questions", len(CANNED), 0, len(CANNED))
    gen = make_generator("questions", config.bank_generation["questions"], tmp_path / "cache")
    prompts = [gen.backend.wrap(gen.first_prompt(q)) for q in query_prompts(queries)]
    gen.close()
    assert before.counted_by == "approximation" and before.output_at_most
    assert before.input_tokens == sum(approximate_tokens(p) for p in prompts)
    assert before.output_tokens == len(CANNED) * config.bank_generation["questions"].decoding.max_new_tokens
    assert chat.total == 0  # planning asks the endpoint nothing
    run(config, tmp_path)
    first_round = sum(1 for q in CANNED if chat.calls.get(q))
    assert first_round == before.to_compute
    (after,) = plan_banks(config, pd.DataFrame(), queries, PlanOptions())
    assert (after.cached, after.to_compute, after.input_tokens) == (len(CANNED), 0, 0)
