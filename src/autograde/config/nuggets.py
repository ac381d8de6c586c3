"""The ``nuggets:`` config section: nugget scores of RAG answers (TREC RAG 2024 style).

>>> cfg = NuggetsConfig.model_validate({"bank": "nuggets", "assessors": [
...     {"name": "minilm-mapped", "grader": "minilm-nuggets", "thresholds": [3, 4]},
...     {"name": "llm", "backend": "openai", "model": "gpt-4o-mini"}]})
>>> [a.mode for a in cfg.assessors], cfg.assessors[1].prompt_class, cfg.assessors[1].label_thresholds
(['mapped', 'whole_answer'], 'NuggetAssignment', (1, 2))

Two kinds of assessor give each (answer, nugget) one of support / partial_support / not_support:

- ``whole_answer`` (``backend:`` given): a grader of its own, graded against each run's WHOLE answer to the
  query (not its passages), cached and sharded like every grade. With the ``NuggetAssignment`` prompt the label is
  the prompt's; any 0-5 prompt (``NuggetSelfRatedPrompt``, the embedded grader) is mapped by ``thresholds``.
- ``mapped`` (``grader:`` given): an existing grader of ``graders:`` whose grades of the answers' passages are
  reused: an answer's grade for a nugget is the max over its passages, mapped by ``thresholds``. No model call.

This module holds models only and imports no backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from autograde.core.ids import NAME_RE
from autograde.core.schema import Strict
from autograde.grading.nugget_labels import ASSIGNMENT_THRESHOLDS, threshold_pair_problem
from autograde.grading.registry import BackendName, LLMBackendName
from autograde.grading.spec import GradingSpec

if TYPE_CHECKING:
    from autograde.config.model import Config

NUGGET_VARIANT = "nuggets"
"""The variant name of nugget-score leaderboards (``results/leaderboards/<assessor>/nuggets/<measure>.tsv``)."""




class ImportanceConfig(GradingSpec):
    """The model that labels nuggets without an importance in the bank (hand-set importance always wins)."""

    backend: LLMBackendName = Field(description="hf | vllm | openai (the grader backends, same options: blocks)")
    model: str = Field(description="model id, local directory or GGUF file (hf, vllm), or the server's model name (openai)")
    prompt_class: str = Field(default="NuggetImportance", description="an importance prompt class (labels vital/okay; autograde prompts --kind importance)")


class AssessorConfig(GradingSpec):
    """One way to assign nuggets to answers; its name names its outputs (like a grader's).

    A whole-answer assessor is a model spec (backend, model, prompt class, scoring, prompt order, options); a mapped
    one names a grader instead and uses none of them."""

    name: str = Field(pattern=NAME_RE, description="unique name, used in output paths (results/nuggets/<name>/, leaderboards/<name>/nuggets/)")
    grader: str | None = Field(default=None, description="mapped mode: a grader of 'graders:' whose grades of the answers' passages are reused (an answer's grade for a nugget = max over its passages), mapped to labels by thresholds; no model call")
    backend: BackendName | None = Field(default=None, description="whole-answer mode: the backend that grades each (whole answer, nugget) pair")
    prompt_class: str = Field(default="NuggetAssignment", description="whole-answer mode: the prompt class (NuggetAssignment: support / partial_support / not_support; a 0-5 prompt needs thresholds)")
    thresholds: tuple[int, int] | None = Field(default=None, description="[partial_support, support]: a grade >= support is support, >= partial_support is partial_support, lower is not_support; required for 0-5 graders, null for the NuggetAssignment prompt")

    @field_validator("thresholds")
    @classmethod
    def _thresholds(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        problem = None if v is None else threshold_pair_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _one_mode(self) -> AssessorConfig:
        if (self.grader is None) == (self.backend is None):
            raise ValueError(f"assessor {self.name!r}: give either grader: (reuse a grader's passage grades) or "
                             "backend: (grade whole answers), not both and not neither")
        if self.grader is not None and self.thresholds is None:
            raise ValueError(f"assessor {self.name!r}: a mapped grader needs thresholds: [partial_support, support] "
                             "(e.g. [3, 4] for a 0-5 grader)")
        return self

    @property
    def mode(self) -> Literal["mapped", "whole_answer"]:
        return "mapped" if self.grader is not None else "whole_answer"

    @property
    def label_thresholds(self) -> tuple[int, int]:
        """The thresholds that turn this assessor's grades into labels (the assignment prompt's own by default)."""
        return tuple(self.thresholds) if self.thresholds is not None else ASSIGNMENT_THRESHOLDS  # type: ignore[return-value]

    def grader_fields(self, bank: str) -> dict[str, Any]:
        """The ``GraderConfig`` fields of a whole-answer assessor (its cache identity is a grader's)."""
        return {"name": self.name, "backend": self.backend, "bank": bank, "prompt_class": self.prompt_class,
                "model": self.model, "scoring": self.scoring, "prompt_order": self.prompt_order,
                "options": dict(self.options)}


class NuggetsConfig(Strict):
    """Nugget scores of the RAG answers: importance per nugget, assignment per (answer, nugget), All / Vital /
    Weighted scores per (run, query), leaderboards and correlation (docs/nuggets.md)."""

    bank: str = Field(description="the nugget bank (a name under banks:); importance comes from its items' info.importance")
    importance: ImportanceConfig | None = Field(default=None, description="a model that labels the nuggets the bank gives no importance (vital/okay); hand-set importance wins; null: none")
    missing_importance: Literal["error", "okay", "vital"] = Field(default="error", description="a nugget without importance and no importance model: error (before any job), or count it as okay / vital")
    assessors: list[AssessorConfig] = Field(min_length=1, description="how nuggets are assigned to answers (support / partial_support / not_support); one score table and leaderboard set each")
    measures: list[str] = Field(default_factory=lambda: ["all_score", "strict_all_score", "vital_score", "strict_vital_score", "weighted_score", "strict_weighted_score"], min_length=1, description="nugget scores of the leaderboards (the reference scorer's names; AllScore(strict=True) style also accepted)")
    baseline: str | None = Field(default=None, description="a RAG run every other run is compared with by the paired permutation test (settings: metrics.significance); null: no p-values")
    shards: int | None = Field(default=None, ge=1, description="assignment jobs per whole-answer assessor (null: grading.shards; override: --set-scatter assign_nuggets=N)")

    @field_validator("measures")
    @classmethod
    def _measures(cls, v: list[str]) -> list[str]:
        from autograde.metrics.measures import parse_measure

        names = [parse_measure(m, "nugget").name for m in v]
        if len(set(names)) != len(names):
            raise ValueError(f"measures must not repeat, got {v}")
        return names

    @model_validator(mode="after")
    def _unique(self) -> NuggetsConfig:
        names = [a.name for a in self.assessors]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"assessor names must be unique; repeated: {', '.join(dupes)}")
        return self

    def cross_problems(self, config: Config) -> list[tuple[tuple[Any, ...], str]]:
        """Problems of this section against the rest of the experiment (:func:`check_nuggets_config`)."""
        return check_nuggets_config(self, config)


def check_nuggets_config(n: NuggetsConfig, config: Config) -> list[tuple[tuple[Any, ...], str]]:
    """Cross-section problems of ``nuggets:`` (the bank and mapped graders exist, names do not clash), each with
    its key path (so the message names its line in the config file)."""
    out: list[tuple[tuple[Any, ...], str]] = []
    if n.bank not in config.banks:
        out.append((("nuggets", "bank"), f"nuggets.bank {n.bank!r} is not under banks: (defined: "
                    f"{', '.join(sorted(config.banks)) or 'none'})"))
    graders = {g.name: g for g in config.graders}
    for k, a in enumerate(n.assessors):
        if a.grader is not None and a.grader not in graders:
            out.append((("nuggets", "assessors", k, "grader"), f"assessor {a.name!r} maps grader {a.grader!r}, which "
                        f"is not under graders: (defined: {', '.join(graders) or 'none'})"))
        elif a.grader is not None and graders[a.grader].bank != n.bank:
            out.append((("nuggets", "assessors", k, "grader"), f"assessor {a.name!r} maps grader {a.grader!r}, which "
                        f"grades bank {graders[a.grader].bank!r}, not the nugget bank {n.bank!r}"))
        if a.name in graders or a.name in ("human", "calibrated"):
            out.append((("nuggets", "assessors", k, "name"), f"the name {a.name!r} is taken by a grader; give the "
                        "assessor another name"))
    if not config.data.answers:
        out.append((("nuggets",), "nuggets: needs RAG answers (data.answers) to score"))
    return out
