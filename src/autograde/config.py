"""The experiment config: ONE pydantic model, validated once, every problem reported with its path.

>>> cfg = Config.model_validate({"data": {"queries": "q.tsv", "runs": ["a.run"]}})
>>> cfg.pool.depth
20
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from autograde.metrics.config import MetricsConfig

NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class Strict(BaseModel):
    """Base for config sections: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DataConfig(Strict):
    """Where the inputs are. Paths are relative to the working directory (the repository root)."""

    queries: str = Field(description="queries: JSON {query_id: text} or TSV 'query_id<TAB>text'")
    corpus: list[str] = Field(default_factory=list, description="passage text: JSONL {doc_id|docid|id, text|contents} or TSV 'doc_id<TAB>text'")
    runs: list[str] = Field(default_factory=list, description="TREC run files (globs allowed)")
    answers: list[str] = Field(default_factory=list, description="generated answers: TREC RAG 24 JSONL or {query_id, run, text} JSONL (globs allowed)")
    qrels: str | None = Field(default=None, description="optional human judgments (TREC qrels)")
    official_leaderboard: str | None = Field(default=None, description="optional official leaderboard JSON {run: rank}")
    generation: str | None = Field(default=None, description="optional JSONL of predictions with reference answers for the generation metrics")

    @field_validator("corpus", "runs", "answers", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class PoolConfig(Strict):
    depth: int = Field(default=20, ge=1, description="top-k passages of every run that enter the pool")
    include_judged: bool = Field(default=True, description="add every passage of the human qrels to the pool")
    missing_text: Literal["error", "skip"] = Field(default="error", description="a pooled doc id with no text in the corpus: error or skip (with a warning count)")


class AnswersConfig(Strict):
    max_words: int = Field(default=400, ge=20, description="split generated answers into passages of at most this many words")


class GradingConfig(Strict):
    shards: int = Field(default=4, ge=1, description="default number of grading shards per grader (override: --set-scatter grade=N)")
    cache_dir: str = Field(default="cache", description="content-addressed grade cache (never deleted by the workflow)")
    batch_size: int = Field(default=64, ge=1, description="pairs per model batch; the cache is written after every batch")


class GraderConfig(Strict):
    """One grader = prompt class + model + scoring; its name is used in file names."""

    name: str = Field(pattern=NAME_RE, description="unique name, used in output paths")
    backend: str = Field(default="embedded", description="embedded | hf | vllm | openai")
    bank: str = Field(default="questions", description="which entry of 'banks:' to grade with ('direct' prompts use the query itself)")
    prompt_class: str | None = Field(default=None, description="registered prompt class name (see 'autograde prompts')")
    model: str | None = Field(default=None, description="model id, local directory or GGUF file (backend-specific)")
    scoring: Literal["logits", "generate"] = Field(default="logits", description="logits: label-token probabilities; generate: greedy text + parse")
    prompt_order: Literal["question_first", "passage_first"] = Field(default="question_first")
    options: dict[str, Any] = Field(default_factory=dict, description="backend-specific options, validated by the backend")

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, v: str) -> str:
        from autograde.grading.registry import BACKENDS

        if v not in BACKENDS:
            raise ValueError(f"unknown backend {v!r}; valid backends: {', '.join(sorted(BACKENDS))}")
        return v

    @model_validator(mode="after")
    def _check_options(self) -> GraderConfig:
        from autograde.grading.registry import validate_options

        validate_options(self.backend, self.options)
        return self


class QrelsConfig(Strict):
    modes: list[Literal["max", "count"]] = Field(default_factory=lambda: ["max"], description="max: label = max grade over items; count: label = number of items with grade >= threshold")
    thresholds: list[int] = Field(default_factory=lambda: [4], description="grade thresholds tau (max mode: trec_eval relevance level; count mode: minimum grade of a counted item)")


class EvaluationConfig(Strict):
    measures: list[str] = Field(default_factory=lambda: ["ndcg_cut_10", "recip_rank", "map", "P_10"], description="trec_eval measures (pytrec_eval names)")
    missing_queries: Literal["zero", "skip"] = Field(default="zero", description="zero: queries of the qrels a run lacks score 0 (trec_eval -c); skip: average over the run's queries")
    human_relevance_level: int = Field(default=2, description="relevance level for the leaderboard under human qrels (DL practice: 2)")


class CoverConfig(Strict):
    enabled: bool = Field(default=True, description="compute Rubric-Cover / EXAM-Cover leaderboards")
    depth: int = Field(default=20, ge=1, description="k: the top-k passages of a system that may cover items")
    thresholds: list[int] | None = Field(default=None, description="grade thresholds tau of a covered item (default: qrels.thresholds)")
    missing_queries: Literal["skip", "zero"] = Field(default="skip", description="a query the system has no passages for: skip it (the workbench's choice) or score 0")


class CorrelationConfig(Strict):
    methods: list[Literal["spearman", "kendall"]] = Field(default_factory=lambda: ["spearman", "kendall"])


class Config(Strict):
    """The whole experiment, as in ``config/config.yaml``."""

    data: DataConfig
    banks: dict[str, str] = Field(default_factory=dict, description="test banks by name (workbench JSONL or JSONL.gz)")
    pool: PoolConfig = PoolConfig()
    answers: AnswersConfig = AnswersConfig()
    grading: GradingConfig = GradingConfig()
    graders: list[GraderConfig] = Field(default_factory=list)
    qrels: QrelsConfig = QrelsConfig()
    evaluation: EvaluationConfig = EvaluationConfig()
    cover: CoverConfig = CoverConfig()
    correlation: CorrelationConfig = CorrelationConfig()
    metrics: MetricsConfig = MetricsConfig()
    results_dir: str = Field(default="results", description="where outputs go")

    @model_validator(mode="after")
    def _cross_checks(self) -> Config:
        names = [g.name for g in self.graders]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"grader names must be unique; repeated: {', '.join(dupes)}")
        for g in self.graders:
            if g.bank != "direct" and g.bank not in self.banks:
                raise ValueError(
                    f"grader {g.name!r} uses bank {g.bank!r}, which is not under 'banks:' "
                    f"(defined: {', '.join(sorted(self.banks)) or 'none'}; or use 'direct')"
                )
        return self

    def grader(self, name: str) -> GraderConfig:
        for g in self.graders:
            if g.name == name:
                return g
        raise KeyError(f"no grader named {name!r}; configured: {', '.join(g.name for g in self.graders)}")


def _model_for_path(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The config section model at ``loc`` (to list valid keys for an unknown one)."""
    model: Any = Config
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if hasattr(model, "model_fields") else None
        if field is None:
            return None
        ann = field.annotation
        args = getattr(ann, "__args__", ())
        inner = next((a for a in (ann, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if inner is None:
            return None
        model = inner
    return model


def format_validation_error(exc: ValidationError, source: str) -> str:
    """Every problem, one line each, with its key path; unknown keys list the valid keys."""
    lines = [f"{source}: {exc.error_count()} problem(s) in the config:"]
    for err in exc.errors():
        loc = err["loc"]
        path = ".".join(str(p) for p in loc) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            model = _model_for_path(loc)
            valid = sorted(model.model_fields) if model is not None else []
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            msg = f"unknown key{hint} valid keys here: {', '.join(valid)}"
        lines.append(f"  - {path}: {msg}")
    return "\n".join(lines)


class ConfigError(ValueError):
    """The config file is invalid; the message lists every problem."""


def validate_config(raw: dict[str, Any], source: str = "config") -> Config:
    """Validate a config mapping, raising :class:`ConfigError` with all problems."""
    try:
        return Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source)) from None


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> Config:
    """Read YAML at ``path``, apply ``overrides`` (deep merge), validate."""
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML: {exc}") from None
    if overrides:
        raw = deep_merge(raw, overrides)
    return validate_config(raw, str(p))


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Recursively merge ``over`` into a copy of ``base``."""
    out = dict(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def expand_globs(patterns: list[str]) -> list[str]:
    """Expand glob patterns (sorted); a literal path is kept even if missing (reported later)."""
    out: list[str] = []
    for pat in patterns:
        if re.search(r"[*?\[]", pat):
            out.extend(sorted(str(p) for p in Path().glob(pat)))
        else:
            out.append(pat)
    return out
