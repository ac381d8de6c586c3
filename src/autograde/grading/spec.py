"""The model spec: what every config section that runs a model says about it, in one place.

>>> spec = GradingSpec.model_validate({"backend": "hf", "model": "m.gguf", "prompt_class": "Thomas"})
>>> spec.scoring, spec.prompt_order, spec.spec_fields()["backend"]
('logits', 'question_first', 'hf')

:class:`ModelSpec` (backend, model, prompt class, backend options) is embedded, as a base class, by bank
generation; :class:`GradingSpec` adds how a prompt is scored and ordered and is embedded by graders, nugget
assessors and the nugget importance model. Sections narrow a field where they must (an assessor's ``backend`` may be
absent; bank generation's must be a language model) and add their own. One validator checks every spec, wherever it
sits in the config (:func:`autograde.config.checks.check_model_spec`); one scaffolding runs every job of one
(:mod:`autograde.pipeline.jobs`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from autograde.core.schema import Strict
from autograde.grading.registry import BackendName

Scoring = Literal["logits", "generate"]
PromptOrder = Literal["question_first", "passage_first"]


class ModelSpec(Strict):
    """A model and how to reach it: backend, model, prompt class and the backend's ``options:``."""

    backend: BackendName | None = Field(default="embedded", description="embedded | hf | vllm | openai")
    model: str | None = Field(default=None, description="model id, local directory or GGUF file (backend-specific)")
    prompt_class: str | None = Field(default=None, description="registered prompt class name (see 'autograde prompts')")
    options: dict[str, Any] = Field(default_factory=dict, description="backend-specific options, validated by the backend")

    SPEC_KEYS: ClassVar[tuple[str, ...]] = ("backend", "model", "prompt_class", "options")
    """The keys of the spec (what identifies the model and its prompt; a section's own keys are not part of it)."""

    def spec_fields(self) -> dict[str, Any]:
        """The spec's keys and values (for identities and digests)."""
        return {k: getattr(self, k) for k in self.SPEC_KEYS}


class GradingSpec(ModelSpec):
    """A model spec that grades: the scoring mode and the prompt order."""

    scoring: Scoring = Field(default="logits", description="logits: label-token probabilities; generate: greedy text + parse")
    prompt_order: PromptOrder = Field(default="question_first", description="question_first (as published) or passage_first (prefix caching)")

    SPEC_KEYS: ClassVar[tuple[str, ...]] = ("backend", "model", "prompt_class", "scoring", "prompt_order", "options")


class GraderSpec(GradingSpec):
    """A grading spec with a name: what a grader is built from (:func:`autograde.grading.registry.make_grader`).
    The name names the grader in messages, cache provenance and output files."""

    name: str = Field(description="unique name, used in output paths")
