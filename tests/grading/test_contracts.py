"""Contract tests over every registered implementation (scikit-learn's ``check_estimator`` idea): every prompt class
and every backend of the registries meets the same checks the day it is registered.

- A prompt class renders for a request of its item kind in each prompt order it has (every field filled), parses each of
  its own labels back to that label's grade (also with its answer prefix when it has one), and its grades lie on
  its scale (integers from 0 to its top grade); a generation prompt renders for a query.
- A backend's module has the protocol the registry loads (``Options``, ``make_grader``; ``make_backend`` for a
  language model), its options model is strict (an unknown key is an error) and has defaults, and its declared
  capabilities agree (a GPU backend sizes a GPU job; a backend of another environment says which).
"""

from __future__ import annotations

import importlib

import pytest
from pydantic import ValidationError

from autograde.grading.base import GradeRequest
from autograde.grading.parse import parse_response
from autograde.grading.prompts import (
    FIELD_RE,
    FIELDS,
    GENERATION_FIELDS,
    list_prompts,
    render,
    render_generation,
)
from autograde.grading.registry import BACKENDS, backend
from autograde.pipeline.jobs import job_resources

PROMPTS = list_prompts()
RATED = [p for p in PROMPTS if p.kind not in ("generation", "extraction")]


def _request(item_kind: str) -> GradeRequest:
    return GradeRequest("q1", "how do vaccines train the immune system", "p1",
                        "Vaccines expose the immune system to a harmless antigen.", "q1/abc", item_kind,
                        "What does a vaccine expose the immune system to?", ("a harmless antigen",))


@pytest.mark.parametrize("prompt", [p for p in PROMPTS if p.kind != "generation"], ids=lambda p: p.config_name)
def test_every_prompt_class_renders_in_its_orders(prompt) -> None:
    req = _request(prompt.item_kind)
    for order in ("question_first", "passage_first") if prompt.passage_first_template else ("question_first",):
        text = render(prompt, req, order, context=req.passage_text, answer="a harmless antigen",
                      gold="a harmless antigen")
        assert text.strip() and not set(FIELD_RE.findall(text)) & set(FIELDS), order  # every field filled
        template = prompt.template_for(order)
        for name, value in (("context", req.passage_text), ("query", req.query_text), ("question", req.item_text),
                            ("nugget", req.item_text)):
            if "{" + name + "}" in template:
                assert value in text, (order, name)


@pytest.mark.parametrize("prompt", RATED, ids=lambda p: p.config_name)
def test_every_prompt_class_parses_its_own_labels_on_its_scale(prompt) -> None:
    grades = list(prompt.labels.values())
    assert grades and all(isinstance(g, int) for g in grades)
    assert min(grades) >= 0 and max(grades) == prompt.max_grade
    for label, grade in prompt.labels.items():
        answers = [label] + ([f"{prompt.answer_prefix}{label}"] if prompt.answer_prefix else [])
        for answer in answers:
            parsed = parse_response(prompt, answer)
            assert parsed.grade == grade, (answer, parsed)


@pytest.mark.parametrize("prompt", [p for p in PROMPTS if p.kind == "generation"], ids=lambda p: p.config_name)
def test_every_generation_prompt_renders_for_a_query(prompt) -> None:
    text = render_generation(prompt, query_text="how do vaccines train the immune system", n_items=5)
    assert "how do vaccines train the immune system" in text
    assert not set(FIELD_RE.findall(text)) & set(GENERATION_FIELDS)  # every field filled


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_module_has_the_protocol_and_a_strict_options_model(name: str) -> None:
    b = backend(name)
    module = importlib.import_module(b.module)  # imports nothing heavy: backends load torch, vllm, openai lazily
    assert hasattr(module, "Options") and callable(getattr(module, "make_grader", None))
    assert callable(getattr(module, "make_backend", None)) == b.language_model or not b.language_model
    module.Options.model_validate({})  # every option has a default
    with pytest.raises(ValidationError):
        module.Options.model_validate({"surely_not_an_option": 1})
    assert b.install_hint and b.cpu_job[0] > 0 and b.cpu_job[1] > 0


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_sizes_its_jobs_by_what_it_declares(name: str) -> None:
    from autograde.config.model import GraderConfig

    b = backend(name)
    spec = GraderConfig(name="g", backend=name, model=None if not b.local_model else "m")
    res = job_resources(spec)
    assert res["gpu"] == (1 if b.gpu else 0)
    cpu = job_resources(GraderConfig(name="g", backend=name, model=None if not b.local_model else "m",
                                     options={"device": "cpu"} if b.gpu else {}))
    assert cpu["gpu"] == 0 and (cpu["mem_mb"], cpu["runtime"]) == b.cpu_job
    assert res["conda_env"] is None or res["conda_env"].endswith(b.conda_env)
