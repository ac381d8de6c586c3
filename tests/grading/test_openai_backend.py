"""The ``openai`` backend against a real OpenAI-compatible server on loopback serving SmolLM2.

The server (tests/loopback_server.py) answers from the same model object the ``hf`` backend loaded, so the two
backends can be compared on the same prompts. Faults (500, 429, hanging requests, always-failing requests)
are injected by the server, not by patching the client.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import secrets
from collections.abc import Iterator

import pytest
import torch
from support.helpers import TEST_DATA
from support.loopback_server import Faults, LoopbackServer, SmolLM2Chat
from support.models import smollm2_model_dir

from autograde.config.model import GraderConfig
from autograde.grading.base import GradeRequest
from autograde.grading.hf import HFBackend
from autograde.grading.llm_grader import LLMGrader
from autograde.grading.openai_backend import OpenAIBackend
from autograde.grading.registry import make_grader

torch.set_num_threads(1)

GRID = TEST_DATA / "grid.jsonl"  # self-made (tests/data/README.md)
KEY_ENV = "AUTOGRADE_TEST_LOOPBACK_KEY"
SECRET = "sk-loopback-" + secrets.token_hex(16)


def _requests() -> list[GradeRequest]:
    rows = [json.loads(line) for line in GRID.read_text(encoding="utf-8").splitlines()]
    picked = [rows[i * 4 + i % 4] for i in range(12)]  # 12 passages, questions rotating
    return [GradeRequest(r["query_id"], r["query_text"], r["passage_id"], r["passage_text"], r["question_id"],
                         "question", r["question_text"]) for r in picked]


REQS = _requests()


@pytest.fixture(scope="module")
def hf_fagb() -> Iterator[LLMGrader]:
    g = make_grader(GraderConfig(name="hf-fagb", backend="hf", bank="direct", prompt_class="FagB",
                                 model=str(smollm2_model_dir()),
                                 scoring="logits", options={"torch_threads": 1, "max_input_tokens": None}))
    assert isinstance(g, LLMGrader) and isinstance(g.llm, HFBackend)
    yield g
    g.close()


@pytest.fixture(scope="module")
def server(hf_fagb: LLMGrader) -> Iterator[LoopbackServer]:
    os.environ[KEY_ENV] = SECRET
    with LoopbackServer(SmolLM2Chat(hf_fagb.llm.model, hf_fagb.llm.tokenizer), api_key=SECRET) as srv:
        yield srv
    os.environ.pop(KEY_ENV, None)


def oai(server: LoopbackServer, prompt: str = "FagB", scoring: str = "logits", **options: object) -> LLMGrader:
    opts = {"base_url": server.base_url, "api_key_env": KEY_ENV, "concurrency": 4, "timeout_s": 30.0, **options}
    g = make_grader(GraderConfig(name=f"oai-{prompt}-{scoring}", backend="openai", bank="direct", prompt_class=prompt,
                                 model=server.model_name, scoring=scoring, options=opts))
    assert isinstance(g, LLMGrader) and isinstance(g.llm, OpenAIBackend)
    return g


@pytest.fixture(scope="module")
def clean_logits(server: LoopbackServer) -> list:
    return oai(server).grade_batch(REQS)


@pytest.mark.model
def test_logits_mode_via_top_logprobs(server: LoopbackServer, hf_fagb: LLMGrader, clean_logits: list) -> None:
    reference = hf_fagb.grade_batch(REQS)  # the same model in-process, all label tokens
    for r, ref in zip(clean_logits, reference, strict=True):
        assert r.parse_status == "ok" and set(r.grade_probs) == {"yes", "no"}
        assert math.isclose(sum(r.grade_probs.values()), 1.0, abs_tol=1e-9) and 0.0 < r.label_mass <= 1.0
        assert r.grade == ref.grade
        # top-20 holds the main surface forms of yes/no, so the distributions agree closely
        assert abs(r.grade_probs["yes"] - ref.grade_probs["yes"]) < 0.02
        assert r.label_mass <= ref.label_mass + 1e-4
    assert server.stats.outcomes["ok"] >= len(REQS)


@pytest.mark.model
def test_generate_mode_parses_text(server: LoopbackServer, hf_fagb: LLMGrader) -> None:
    g = oai(server, scoring="generate", max_new_tokens=2)
    results = g.grade_batch(REQS[:6])
    hf_gen = make_grader(hf_fagb.config.model_copy(update={"scoring": "generate",
                                                           "options": {**hf_fagb.config.options, "max_new_tokens": 2}}))
    try:
        reference = hf_gen.grade_batch(REQS[:6])
    finally:
        hf_gen.close()
    for r, ref in zip(results, reference, strict=True):
        assert r.raw == ref.raw  # same greedy text as the in-process model
        assert (r.grade, r.parse_status, r.answer) == (ref.grade, ref.parse_status, ref.answer)
    assert g.identity()["scoring"] == "generate" and g.identity()["top_logprobs"] is None


@pytest.mark.model
def test_server_without_logprobs_falls_back_to_text(hf_fagb: LLMGrader) -> None:
    with LoopbackServer(SmolLM2Chat(hf_fagb.llm.model, hf_fagb.llm.tokenizer), offer_logprobs=False) as plain:
        os.environ.pop("AUTOGRADE_TEST_UNSET_KEY", None)
        g = oai(plain, api_key_env="AUTOGRADE_TEST_UNSET_KEY", logits_max_tokens=2)
        results = g.grade_batch(REQS[:3])
        assert plain.stats.auth_headers and set(plain.stats.auth_headers) == {"Bearer EMPTY"}  # local-server dummy
    for r in results:
        assert r.parse_status == "ok" and r.grade in (0, 1) and r.grade_probs is None
        assert r.extra["scored_by"].startswith("text")


@pytest.mark.model
def test_faults_are_retried_and_persistent_failures_reported(
    server: LoopbackServer, clean_logits: list, caplog: pytest.LogCaptureFixture
) -> None:
    always = (REQS[2].passage_text[:60], REQS[7].passage_text[:60])
    server.faults = Faults(share_500=0.15, share_429=0.15, share_hang=0.15, seed=1, always_fail=always, hang_s=2.5)
    server.stats.outcomes.clear()
    g = oai(server, timeout_s=1.0, max_retries=8, backoff_base_s=0.02, backoff_max_s=0.2)
    try:
        with caplog.at_level(logging.DEBUG, logger="autograde"):
            results = g.grade_batch(REQS)
    finally:
        server.faults = Faults()
    outcomes = server.stats.outcomes
    assert outcomes["500"] and outcomes["429"] and outcomes["hang"], outcomes  # every fault kind happened
    assert sum(outcomes[k] for k in ("500", "429", "hang")) / sum(outcomes.values()) > 0.15
    for i, (r, clean) in enumerate(zip(results, clean_logits, strict=True)):
        if i in (2, 7):
            assert (r.grade, r.parse_status, r.deterministic, r.grade_probs) == (None, "failed", False, None)
            assert "gave up after 9 attempts" in r.error and "HTTP 500" in r.error
        else:
            assert (r.grade, r.parse_status) == (clean.grade, "ok")
            assert r.grade_probs == pytest.approx(clean.grade_probs, abs=1e-12)
    assert g.llm.stats["failed"] == 2 and g.llm.stats["retries"] >= outcomes["500"] + outcomes["429"] + outcomes["hang"] - 2
    _assert_no_secret(g, results, caplog)


def _assert_no_secret(g: LLMGrader, results: list, caplog: pytest.LogCaptureFixture) -> None:
    assert SECRET not in json.dumps(g.identity())
    assert SECRET not in repr(vars(g)) and SECRET not in repr(g.options)
    for r in results:
        assert SECRET not in json.dumps(dataclasses.asdict(r), default=str)
    assert SECRET not in caplog.text
    assert all(SECRET not in g.render(req) for req in REQS)


@pytest.mark.model
def test_api_key_is_used_but_never_kept(server: LoopbackServer, clean_logits: list, caplog: pytest.LogCaptureFixture) -> None:
    assert f"Bearer {SECRET}" in server.stats.auth_headers  # the key reached the server ...
    g = oai(server)
    ident = g.identity()
    assert ident["model"] == server.model_name and "base_url" not in ident
    _assert_no_secret(g, clean_logits, caplog)  # ... and nowhere else
    os.environ["AUTOGRADE_TEST_WRONG_KEY"] = "sk-wrong-" + secrets.token_hex(8)
    try:
        bad = oai(server, api_key_env="AUTOGRADE_TEST_WRONG_KEY", max_retries=3)
        (r,) = bad.grade_batch(REQS[:1])
        assert r.parse_status == "failed" and r.error.startswith("HTTP 401") and bad.llm.stats["retries"] == 0
        assert os.environ["AUTOGRADE_TEST_WRONG_KEY"] not in r.error
    finally:
        os.environ.pop("AUTOGRADE_TEST_WRONG_KEY")
    os.environ.pop("AUTOGRADE_TEST_UNSET_KEY", None)
    with pytest.raises(Exception, match="AUTOGRADE_TEST_UNSET_KEY is not set"):
        make_grader(GraderConfig(name="x", backend="openai", bank="direct", prompt_class="FagB", model="m",
                                 options={"api_key_env": "AUTOGRADE_TEST_UNSET_KEY"}))


@pytest.mark.model
def test_a_reply_that_is_not_json_fails_only_its_request(server: LoopbackServer, clean_logits: list) -> None:
    bad = REQS[4].passage_text[:60]
    server.faults = Faults(garbage=(bad,))
    try:
        results = oai(server, max_retries=0).grade_batch(REQS)
    finally:
        server.faults = Faults()
    for i, (r, clean) in enumerate(zip(results, clean_logits, strict=True)):
        if i == 4:
            assert r.parse_status == "failed" and not r.deterministic and "unusable reply" in r.error, r
        else:
            assert (r.parse_status, r.grade) == ("ok", clean.grade)


@pytest.mark.model
def test_a_reply_without_choices_fails_only_its_request(server: LoopbackServer, clean_logits: list) -> None:
    bad = REQS[2].passage_text[:60]
    server.faults = Faults(empty_choices=(bad,))
    try:
        g = oai(server, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.02)
        results = g.grade_batch(REQS)
    finally:
        server.faults = Faults()
    for i, (r, clean) in enumerate(zip(results, clean_logits, strict=True)):
        if i == 2:
            assert r.parse_status == "failed" and not r.deterministic, r
            assert "the completion has no choices" in r.error and "gave up after 2 attempts" in r.error
        else:
            assert (r.parse_status, r.grade) == ("ok", clean.grade)
