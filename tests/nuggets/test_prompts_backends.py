"""The nugget prompts (NuggetImportance, NuggetAssignment) through the real backends, logits scoring.

SmolLM2-135M-Instruct labels at chance (NOTES.md); these tests check the mechanics: one distribution over the labels
per (answer, nugget) from hf, the same through an OpenAI-compatible server on loopback (top_logprobs, the first
word of ``partial_support`` / ``not_support`` counted), and vLLM's CPU build agreeing with hf on every argmax in
float32. Pairs: the bundled example's RAG answers (whole answers, not their passages) x its nuggets.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator

import pytest
import torch
from support.helpers import REPO
from support.loopback_server import LoopbackServer, SmolLM2Chat
from support.models import BUDGET, answer_requests, smollm2_model_dir

from autograde.config.model import GraderConfig
from autograde.grading.base import GradeRequest
from autograde.grading.llm_grader import LLMGrader
from autograde.grading.nugget_labels import ASSIGNMENT_LABELS, IMPORTANCE_LABELS
from autograde.grading.prompts import get_prompt, render
from autograde.grading.registry import make_grader

torch.set_num_threads(1)

EXAMPLE = REPO / "config" / "example"


REQS = answer_requests()


def _cfg(prompt: str, backend: str = "hf", **options: object) -> GraderConfig:
    model = str(smollm2_model_dir()) if backend == "hf" else str(options.pop("model"))
    base = {"torch_threads": 1, "dtype": "float32", "max_input_tokens": BUDGET} if backend == "hf" else {}
    return GraderConfig(name=f"t-{prompt}-{backend}", backend=backend, bank="nuggets", prompt_class=prompt,
                        model=model, scoring="logits", options={**base, **options})


@pytest.fixture(scope="module")
def hf_assign() -> Iterator[LLMGrader]:
    g = make_grader(_cfg("NuggetAssignment"))
    assert isinstance(g, LLMGrader)
    yield g
    g.close()


@pytest.fixture(scope="module")
def hf_assign_results(hf_assign: LLMGrader) -> list:
    return hf_assign.grade_batch(REQS)


@pytest.mark.model
def test_the_prompt_sees_the_whole_answer() -> None:
    text = render(get_prompt("NuggetAssignment"), REQS[0])
    assert REQS[0].passage_text in text and "\n\n" in REQS[0].passage_text  # every paragraph, not one passage
    assert text.splitlines()[-1] == "Reply with one label: support, partial_support or not_support."


@pytest.mark.model
def test_hf_gives_a_three_way_distribution_per_pair(hf_assign: LLMGrader, hf_assign_results: list) -> None:
    tokens = hf_assign.identity()["label_tokens"]
    assert set(tokens) == set(ASSIGNMENT_LABELS)
    assert not set(tokens["support"]) & set(tokens["partial_support"]) & set(tokens["not_support"])
    for r in hf_assign_results:
        assert r.parse_status == "ok" and list(r.grade_probs) == list(ASSIGNMENT_LABELS)
        assert math.isclose(sum(r.grade_probs.values()), 1.0, abs_tol=1e-9)
        assert all(p > 0 for p in r.grade_probs.values()) and 0.0 < r.label_mass <= 1.0
        assert r.answer == max(r.grade_probs, key=r.grade_probs.get)
        assert r.grade == {"support": 2, "partial_support": 1, "not_support": 0}[r.answer]
        assert math.isclose(r.expected_grade, 2 * r.grade_probs["support"] + r.grade_probs["partial_support"])


@pytest.mark.model
def test_hf_importance_gives_a_two_way_distribution() -> None:
    g = make_grader(_cfg("NuggetImportance"))
    try:
        reqs = [GradeRequest(r.query_id, r.query_text, "", "", r.item_id, "nugget", r.item_text) for r in REQS[:3]]
        assert "Answer text" not in g.render(reqs[0]) and reqs[0].item_text in g.render(reqs[0])
        for r in g.grade_batch(reqs):
            assert r.parse_status == "ok" and list(r.grade_probs) == list(IMPORTANCE_LABELS)
            assert math.isclose(sum(r.grade_probs.values()), 1.0, abs_tol=1e-9) and r.grade in (0, 1)
    finally:
        g.close()


@pytest.mark.model
def test_openai_loopback_logits(hf_assign: LLMGrader, hf_assign_results: list) -> None:
    os.environ["AUTOGRADE_TEST_NUGGET_KEY"] = "sk-loopback"
    with LoopbackServer(SmolLM2Chat(hf_assign.llm.model, hf_assign.llm.tokenizer)) as srv:
        g = make_grader(_cfg("NuggetAssignment", "openai", model=srv.model_name, base_url=srv.base_url,
                             api_key_env="AUTOGRADE_TEST_NUGGET_KEY", concurrency=2, timeout_s=60.0))
        try:
            results = g.grade_batch(REQS)
        finally:
            g.close()
    for r, ref in zip(results, hf_assign_results, strict=True):
        assert r.parse_status == "ok" and list(r.grade_probs) == list(ASSIGNMENT_LABELS)
        assert math.isclose(sum(r.grade_probs.values()), 1.0, abs_tol=1e-9) and r.label_mass > 0
        assert r.grade == ref.grade  # the top-20 holds the labels' first tokens: the same argmax as in-process


@pytest.mark.model
def test_vllm_agrees_with_hf_on_every_argmax(vllm_runs: dict, hf_assign: LLMGrader, hf_assign_results: list) -> None:
    run = vllm_runs["runs"]["assign"]  # the session's one process in the vLLM environment (tests/conftest.py)
    assert run["rendered"] == [hf_assign.render(r) for r in REQS]
    diffs = []
    for v, h in zip(run["results"], hf_assign_results, strict=True):
        assert v["parse_status"] == "ok" and list(v["grade_probs"]) == list(ASSIGNMENT_LABELS)
        assert v["answer"] == h.answer, (v["grade_probs"], h.grade_probs)
        diffs.append(max(abs(v["grade_probs"][k] - h.grade_probs[k]) for k in ASSIGNMENT_LABELS))
    print(f"vllm vs hf on {len(diffs)} (answer, nugget) pairs: argmax 100% equal, max |prob diff| {max(diffs):.2e}")
