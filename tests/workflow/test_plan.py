"""``autograde plan``: its prompt and token counts equal what the grading jobs really computed and read, and its
time estimate is within 2x of the jobs' measured time; endpoints are counted by approximation and priced.

Real components: the bundled example's finished run (``example_run``: its grading jobs' stats record the tokens
the encoder really read and their time), the embedded grader, an OpenAI-compatible server on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support.helpers import copy_run
from support.loopback_server import FixedChat, LoopbackServer

from autograde.cli import main
from autograde.config.experiment import load_config
from autograde.grading.registry import make_grader
from autograde.grading.shard import build_requests, grade_requests
from autograde.pipeline.stages import items_for_grader, run_grade
from autograde.workflow.plan import format_plan, plan_run


@pytest.mark.workflow
def test_the_plan_counts_what_the_example_run_computed_and_estimates_its_time_within_2x(
        example_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Planned on the example as it was before its run (an empty grade cache), the plan names the prompts the
    grading jobs computed and the tokens their encoder read, shard by shard, and a 64-prompt measurement on this
    node extrapolates to within a factor 2 of the time the jobs take one after another on this node (run right
    after it: the example run's own jobs ran two at a time, on a machine whose load differs from now). Planned on
    the finished run, nothing is left."""
    wd = copy_run(example_run, tmp_path / "run")
    monkeypatch.chdir(wd)
    stats = json.loads((wd / "results/grades/minilm-questions.stats.json").read_text())
    assert stats["cached"] == 0 and stats["input_tokens"] > 0  # the run started from an empty cache

    raw = yaml.safe_load((wd / "config.yaml").read_text())
    raw["grading"]["cache_dir"] = "cache-before-the-run"
    (wd / "before.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.setenv("AUTOGRADE_THREADS", "1")  # the measurement and the jobs below: one thread each
    (plan,), source = plan_run(load_config(wd / "before.yaml"), wd / "before.yaml", measure=64)
    assert plan.pairs == stats["pairs"] and plan.cached == 0
    assert plan.to_compute == stats["computed"]
    assert plan.input_tokens == stats["input_tokens"] and plan.output_tokens == stats["output_tokens"] == 0
    by_shard = {s["shard"]: s for s in stats["shards"]}
    assert {s.shard: (s.to_compute, s.input_tokens) for s in plan.shards} == {
        k: (v["computed"], v["input_tokens"]) for k, v in by_shard.items()}
    raw["grading"]["cache_dir"] = "cache-timing"
    (wd / "timing.yaml").write_text(yaml.safe_dump(raw))
    timing = load_config(wd / "timing.yaml")
    jobs = [run_grade(timing, "minilm-questions", f"results/pool/shards/{s}.parquet", "results/ingest/queries.parquet",
                      tmp_path / f"{s}.parquet", tmp_path / f"{s}.stats.json", tmp_path / f"{s}.failures.jsonl",
                      threads=1, shard=s) for s in sorted(by_shard)]  # the workflow's grading jobs, in turn
    assert [j["computed"] for j in jobs] == [by_shard[s]["computed"] for s in sorted(by_shard)]
    measured = sum(j["model_seconds"] for j in jobs)
    assert plan.seconds is not None and measured / 2 <= plan.seconds <= measured * 2, (plan.seconds, measured)
    text = format_plan([plan], source)
    assert f"| grading | minilm-questions | embedded | {stats['pairs']:,} | 0 | {stats['computed']:,} | " in text
    assert f"- model jobs: {len(by_shard)} (one per shard" in text  # the cluster jobs of the model stage
    assert "of it 0.00 hours in jobs of a GPU backend (hf, vllm" in text  # the embedded grader holds no GPU

    (done,), _ = plan_run(load_config(wd / "config.yaml"), wd / "config.yaml")
    assert done.cached == done.pairs == stats["pairs"] and done.to_compute == 0 and done.input_tokens == 0

    assert main(["plan", "--config", "before.yaml", "--json"]) == 0  # the command: the same counts, as JSON
    (doc,) = json.loads(capsys.readouterr().out)["graders"]
    assert (doc["to_compute"], doc["input_tokens"], doc["measurement"]) == (stats["computed"], stats["input_tokens"],
                                                                           None)


def test_an_endpoint_is_counted_by_approximation_priced_and_its_usage_recorded(
        mini: Path) -> None:
    """An openai grader: input tokens approximated (its tokenizer is the endpoint's), one output token per prompt
    in logits mode, the cost from the configured prices; a measurement through the endpoint; the grading job
    records the tokens the endpoint reports."""
    chat = FixedChat("4")
    with LoopbackServer(chat) as srv:  # type: ignore[arg-type]
        raw = yaml.safe_load(mini.read_text())
        raw["graders"] = [{"name": "remote", "backend": "openai", "bank": "questions", "model": srv.model_name,
                           "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices", "scoring": "logits",
                           "options": {"base_url": srv.base_url, "input_price_per_million": 2.0,
                                       "output_price_per_million": 8.0, "price_currency": "EUR"}}]
        mini.write_text(yaml.safe_dump(raw))
        config = load_config(mini)
        (plan,), source = plan_run(config, mini)
        assert plan.counted_by == "approximation" and plan.cached == 0 and plan.to_compute == plan.pairs > 0
        assert plan.output_tokens == plan.to_compute and not plan.output_at_most
        assert plan.cost == round(plan.input_tokens / 1e6 * 2.0 + plan.output_tokens / 1e6 * 8.0, 4)
        assert plan.currency == "EUR" and chat.calls == 0  # counting sends nothing
        (timed,), source = plan_run(config, mini, measure=4)
        out = format_plan([timed], source)
        assert "(approx.)" in out and " EUR |" in out and "measured here: 4 prompt(s)" in out
        assert "1 token per 4 characters" in out

        from autograde.pipeline.ingest import ingest
        from autograde.pipeline.pool import build_pool

        inputs = ingest(config)
        pool = build_pool(config, inputs.rankings, inputs.judgments, inputs.answer_passages)
        queries = dict(inputs.queries[["query_id", "query_text"]].itertuples(index=False))
        requests = build_requests(pool, queries, items_for_grader(config, "remote", queries))
        grader = make_grader(config.grader("remote"))
        try:
            outcome = grade_requests(requests, grader, config.grader("remote"), config.grading.cache_dir)
        finally:
            grader.close()
        # FixedChat reports one prompt token and one completion token per request
        assert outcome.stats["input_tokens"] == outcome.stats["computed"] == plan.to_compute
        assert outcome.stats["output_tokens"] == plan.to_compute


@pytest.mark.workflow
def test_the_plan_counts_the_nugget_assignments_the_run_graded(nuggets_run: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole-answer assessor's jobs are planned like a grader's: planned before the run (an empty cache), its
    (answer, nugget) prompts per assignment shard are what the shards computed; planned on the finished run,
    nothing is left."""
    wd = copy_run(nuggets_run, tmp_path / "run")
    monkeypatch.chdir(wd)
    stats = json.loads((wd / "results/nuggets/sim-assign/stats.json").read_text())
    raw = yaml.safe_load((wd / "config.yaml").read_text())
    raw["grading"]["cache_dir"] = "cache-before-the-run"
    (wd / "before.yaml").write_text(yaml.safe_dump(raw))
    plans, _ = plan_run(load_config(wd / "before.yaml"), wd / "before.yaml")
    (plan,) = [p for p in plans if p.stage == "nugget assignment"]
    assert (plan.name, plan.backend, plan.cached) == ("sim-assign", "embedded", 0)
    assert plan.to_compute == stats["grades"]["computed"] > 0
    assert {s.shard: (s.to_compute, s.input_tokens) for s in plan.shards} == {
        s["shard"]: (s["computed"], s["input_tokens"]) for s in stats["shards"]}
    (done,) = [p for p in plan_run(load_config(wd / "config.yaml"), wd / "config.yaml")[0]
               if p.stage == "nugget assignment"]
    assert done.to_compute == 0 and done.cached == done.pairs == plan.pairs


@pytest.mark.workflow
def test_the_plan_counts_the_prompts_of_the_robustness_audit(example_run: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A grader the workflow audits: the plan counts the prompts of its perturbed copies (the sampled pairs are
    the grading jobs' prompts; the target system's copies too, its grades existing), and the audit job computes
    exactly those."""
    from autograde.audit.stages import run_robustness

    wd = copy_run(example_run, tmp_path / "run")
    monkeypatch.chdir(wd)
    raw = yaml.safe_load((wd / "config.yaml").read_text())
    raw["audit"] = {"robustness": {"graders": ["minilm-questions"], "sample": 10,
                                   "system_perturbations": ["stuffing"], "bootstrap_samples": 50}}
    (wd / "config.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    config = load_config(wd / "config.yaml")
    (plan,) = [p for p in plan_run(config, wd / "config.yaml")[0] if p.stage == "audit robustness"]
    assert plan.name == "minilm-questions" and plan.cached is not None and plan.to_compute > 0 and not plan.note
    result = run_robustness(config, "minilm-questions", out={k: str(tmp_path / k) for k in
                                                             ("pairs", "summary", "leaderboard", "stats", "report")})
    assert result.stats["computed"] == plan.to_compute
    (again,) = [p for p in plan_run(config, wd / "config.yaml")[0] if p.stage == "audit robustness"]
    assert again.to_compute == 0


def test_measure_refuses_a_negative_count_and_reports_failed_requests_as_failures(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--measure -3`` is refused by the argument parser (it timed 36 of 39 prompts: a negative slice); requests to a
    server that is not there are failures, not a timing (the plan used to print a time per prompt of the refused
    connections)."""
    import socket

    from autograde.core.errors import EndpointError

    with pytest.raises(SystemExit) as stop:
        main(["plan", "--config", str(mini), "--measure", "-3"])
    assert stop.value.code == 2 and "argument --measure: -3 is not a count: give an integer >= 0" in capsys.readouterr().err
    with socket.socket() as s:  # a port nobody listens on: the connection is refused
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    raw = yaml.safe_load(mini.read_text())
    raw["graders"] = [{"name": "remote", "backend": "openai", "bank": "questions", "model": "m",
                       "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices", "scoring": "logits",
                       "options": {"base_url": dead, "max_retries": 0, "timeout_s": 5}}]
    mini.write_text(yaml.safe_dump(raw))
    config = load_config(mini)
    (counted,), _ = plan_run(config, mini)  # counting alone sends nothing: it works without a server
    assert counted.to_compute > 0 and counted.measurement is None
    with pytest.raises(EndpointError, match=r"plan --measure: 1 of 1 warm-up prompt got no answer from the grader's "
                                            r"model \(.+\); a time measured on failures would not be the model's"):
        plan_run(config, mini, measure=4)
    assert main(["plan", "--config", str(mini), "--measure", "4"]) == 2
