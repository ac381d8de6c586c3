"""UMBRELA as a prompt class: its text byte for byte (recorded digests; the PyPI package's prompt file and its own
rendering in its own environment), the ``##final score: N`` answer form and its variants, the answer prefix of
logits scoring (SmolLM2 through hf gives a distribution over 0-3), and backends that cannot continue an answer."""

from __future__ import annotations

import hashlib

import pytest
from support.reference_envs import UMBRELA_SCRIPT, UMBRELA_VENV, run_reference

from autograde.core.errors import GraderSetupError
from autograde.grading.base import GradeRequest
from autograde.grading.parse import parse_response
from autograde.grading.prompts import (
    UMBRELA_DIGESTS,
    UMBRELA_FINAL_SCORE,
    UMBRELA_PACKAGE,
    get_prompt,
    render,
    umbrela_upstream_text,
)

REQ = GradeRequest("q1", "anthropological definition of environment", "p1",
                   "Environmental anthropology examines the relationships between humans and their environment.",
                   "q1/query", "query", "anthropological definition of environment")


@pytest.mark.parametrize("name", sorted(UMBRELA_DIGESTS))
def test_text_is_the_upstream_file_byte_for_byte(name: str) -> None:
    p = get_prompt(name)
    assert hashlib.sha256(umbrela_upstream_text(p).encode("utf-8")).hexdigest() == UMBRELA_DIGESTS[name][1]
    assert p.kind == "direct" and p.item_kind == "query" and dict(p.labels) == {"0": 0, "1": 1, "2": 2, "3": 3}
    assert get_prompt("UMBRELA").config_name == "UMBRELA@v1"


def test_pypi_package_ships_the_same_text_and_renders_the_same_prompt() -> None:
    answers = ['{"M": 2, "T": 1, "O": 3}', '{"overall": 1}', '"final score": 2', '{"o": 0, "m": 1}']
    ref = run_reference(UMBRELA_VENV, "umbrela-env", UMBRELA_SCRIPT,
                        {"query": REQ.query_text, "passage": REQ.passage_text, "answers": answers})
    assert ref["version"] == UMBRELA_PACKAGE[1]
    p = get_prompt("UMBRELA@pypi-0.0.7")
    assert ref["file"].strip() == umbrela_upstream_text(p)
    assert render(p, REQ) == ref["prompt"]
    for text, (grade, valid) in zip(answers, ref["parsed"], strict=True):
        assert valid == 1 and parse_response(p, text).grade == grade, text


@pytest.mark.parametrize(("text", "grade"), [
    ("##final score: 2", 2), ("##Final Score: 3", 3), ("## final score: 1", 1), ("##final score:0", 0),
    ("final score = 2", 2), ("Final score is 3", 3), ("final_score: 1", 1), ("##final score: **2**", 2),
    ("M: 3\nT: 1\n##final score: 1", 1), ("##final score: 2\n##final score: 3", 3), ('{"O": 2}', 2), ("3", 3),
])
def test_final_score_answers_parse(text: str, grade: int) -> None:
    parsed = parse_response(get_prompt("UMBRELA"), text)
    assert parsed.status == "ok" and parsed.grade == grade


@pytest.mark.parametrize("text", ["##final score: 4", "the passage is relevant", "", "##final score: 23"])
def test_other_answers_are_never_a_grade(text: str) -> None:
    p = get_prompt("UMBRELA")
    assert parse_response(p, text).status == "unparseable"
    assert parse_response(p, text, legacy=True).grade is not None  # umbrela's own fallback (to 0) when asked


def test_a_chat_api_cannot_continue_the_answer_prefix() -> None:
    from autograde.config.model import GraderConfig
    from autograde.grading.registry import make_grader

    cfg = GraderConfig(name="u", backend="openai", bank="direct", prompt_class="UMBRELA", model="m",
                       scoring="logits", options={"base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(GraderSetupError, match="set scoring: generate"):
        make_grader(cfg)
    generate = cfg.model_copy(update={"scoring": "generate"})
    make_grader(generate).close()  # generate mode parses the answer form: fine


def test_the_registry_says_what_the_backend_does_about_the_answer_prefix() -> None:
    """validate refuses logits scoring of an answer-prefix prompt from the registry's capability
    (``Backend.continues_prompt``), the grade job from the backend's own ``continues_text()``: they agree."""
    from autograde.grading.registry import BACKENDS, make_backend

    endpoint = make_backend("openai", "m", {"base_url": "http://127.0.0.1:9/v1"}, "test")
    try:
        assert endpoint.continues_text() is BACKENDS["openai"].continues_prompt is False
    finally:
        endpoint.close()
    assert BACKENDS["vllm"].continues_prompt is True  # a causal model's prompt
    assert BACKENDS["hf"].continues_prompt is None  # causal models do, seq2seq models (FLAN-T5) do not


@pytest.mark.model
def test_smollm2_logits_reads_the_label_after_the_answer_prefix() -> None:
    from support.models import smollm2_model_dir

    from autograde.config.model import GraderConfig
    from autograde.grading.registry import make_grader

    cfg = GraderConfig(name="umbrela-smol", backend="hf", bank="direct", prompt_class="UMBRELA",
                       model=str(smollm2_model_dir()), scoring="logits", options={"torch_threads": 1})
    g = make_grader(cfg)
    try:
        assert g.render(REQ).endswith(UMBRELA_FINAL_SCORE)
        res = g.grade_batch([REQ])[0]
    finally:
        g.close()
    assert res.parse_status == "ok" and set(res.grade_probs or {}) == {"0", "1", "2", "3"}
    assert sum((res.grade_probs or {}).values()) == pytest.approx(1.0)
    assert res.label_mass is not None and res.label_mass > 0.5  # the next token after the prefix is a digit
    assert 0 <= (res.expected_grade or 0) <= 3
