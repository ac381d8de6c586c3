"""The experiment config: ONE pydantic model, validated once, every problem reported with its path.

>>> cfg = Config.model_validate({"data": {"queries": "q.tsv", "runs": ["a.run"]}})
>>> cfg.pool.depth
20

This module holds the models only; backend names come from the registry (:mod:`autograde.grading.registry`), which
imports no backend module.
Reading a config file and validating each grader's backend ``options:`` (through the backend registry) is
:mod:`autograde.config.experiment`'s job.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from autograde.config.audit import AuditConfig
from autograde.config.banks import BankGenerationConfig, add_generated_banks
from autograde.config.human_sample import HumanSampleConfig
from autograde.config.nuggets import NuggetsConfig
from autograde.config.reports import ReportsConfig
from autograde.config.rubric import CalibratedQrelsConfig, RubricConfig
from autograde.core.errors import ConfigError, InvalidValueError
from autograde.core.ids import NAME_RE
from autograde.core.layout import MissingQueries
from autograde.core.schema import Strict
from autograde.grading.registry import BACKEND_NAMES, LLM_BACKEND_NAMES, BackendName
from autograde.grading.spec import GraderSpec
from autograde.metrics.config import MetricsConfig


class DataConfig(Strict):
    """Where the inputs are. Paths are relative to the working directory (the repository root)."""

    queries: str | None = Field(default=None, description="queries: JSON {query_id: text} or TSV 'query_id<TAB>text' (required unless data.dataset supplies them)")
    corpus: list[str] = Field(default_factory=list, description="passage text: JSONL(.gz) {doc_id|docid|id, text|contents|segment, optional title} or TSV 'doc_id<TAB>text'; looked up by id through an index built once per file under grading.cache_dir (globs allowed; default: the documents of data.dataset)")
    runs: list[str] = Field(default_factory=list, description="TREC run files (globs allowed)")
    answers: list[str] = Field(default_factory=list, description="generated answers: TREC RAG 24 JSONL or {query_id, run, text} JSONL (globs allowed)")
    answers_track: str | None = Field(default=None, description="the TREC track whose report format data.answers follow (rag25, rag26, ragtime25, ...: the specs of autojudge-base; docs/autojudge.md): every report is checked against it before any job, as the track's verifier checks it (null: no track checks)")
    qrels: str | None = Field(default=None, description="optional human judgments (TREC qrels)")
    official_leaderboard: str | None = Field(default=None, description="optional official leaderboard JSON {run: rank}")
    generation: str | None = Field(default=None, description="optional JSONL of predictions with reference answers for the generation metrics")
    dataset: str | None = Field(default=None, description="an ir_datasets id (e.g. msmarco-passage/trec-dl-2020/judged) that supplies queries, qrels and passage texts; data.queries, data.qrels and data.corpus override each")
    dataset_query_field: str = Field(default="text", description="which field of the dataset's queries is the query text (text, title, description, ...)")
    dataset_qrels: Literal["if_any", "required", "none"] = Field(default="if_any", description="the dataset's qrels: if_any (use them when it has some), required (an error when it has none), none (ignore them)")
    dataset_modules: list[str] = Field(default_factory=list, description="Python modules or .py files imported before data.dataset is looked up (they register your own datasets with ir_datasets.registry.register)")

    @field_validator("answers_track")
    @classmethod
    def _known_track(cls, v: str | None) -> str | None:
        if v is None:
            return v
        from autograde.io.track_specs import load_specs

        specs = sorted(load_specs())
        if v not in specs:
            close = difflib.get_close_matches(v, specs, n=1)
            raise ValueError(f"unknown track {v!r}; {'did you mean ' + repr(close[0]) + '? ' if close else ''}"
                             f"valid: {', '.join(specs)}")
        return v

    @field_validator("corpus", "runs", "answers", "dataset_modules", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @property
    def queries_file(self) -> str:
        """The queries file: ``data.queries``, or the file written for ``data.dataset`` once the experiment is
        resolved (:func:`autograde.io.irds.resolve_dataset`, which every command and the workflow run first)."""
        if not self.queries:
            raise ConfigError(f"the queries of data.dataset {self.dataset!r} are not written yet (fix: load the "
                              "experiment through autograde.cli or the workflow, which resolve the dataset first)")
        return self.queries

    @model_validator(mode="after")
    def _queries_from_somewhere(self) -> DataConfig:
        if not self.queries and not self.dataset:
            raise ValueError("give data.queries (a queries file) or data.dataset (an ir_datasets id)")
        return self


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
    allow_failures: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="share of a shard's pairs that may fail (no answer from the model or endpoint) and still give a "
                    "result; above it the grading job fails after caching every good grade, and a rerun retries "
                    "only the failed pairs")


def _check_thresholds(v: list[int]) -> list[int]:
    if any(t < 1 for t in v):
        raise InvalidValueError(f"grade thresholds must be >= 1 (a threshold of 0 or less counts every graded passage), got {v}")
    if len(set(v)) != len(v):
        raise InvalidValueError(f"grade thresholds must not repeat, got {v}")
    return v


class GraderConfig(GraderSpec):
    """One grader = a model spec (backend, model, prompt class, scoring, prompt order, options) + the bank it
    grades; its name is used in file names."""

    name: str = Field(pattern=NAME_RE, description="unique name, used in output paths")
    backend: BackendName = Field(default="embedded", description="embedded | hf | vllm | openai")
    bank: str = Field(default="questions", description="which entry of 'banks:' to grade with ('direct' prompts use the query itself)")
    thresholds: list[int] | None = Field(default=None, description="grade thresholds tau of this grader's qrels (and cover); default: qrels.thresholds (use it when graders have different grade ranges, e.g. yes/no prompts)")

    @field_validator("thresholds")
    @classmethod
    def _positive(cls, v: list[int] | None) -> list[int] | None:
        return None if v is None else _check_thresholds(v)


def _max_mode() -> list[Literal["max", "count"]]:
    return ["max"]


class QrelsConfig(Strict):
    modes: list[Literal["max", "count"]] = Field(default_factory=_max_mode, description="max: label = max grade over items; count: label = number of items with grade >= threshold")
    thresholds: list[int] = Field(default_factory=lambda: [4], min_length=1, description="grade thresholds tau (max mode: trec_eval relevance level; count mode: minimum grade of a counted item); each must lie within the grade range of the graders that use it")

    @field_validator("thresholds")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        return _check_thresholds(v)


class EvaluationConfig(Strict):
    measures: list[str] = Field(default_factory=lambda: ["ndcg_cut_10", "recip_rank", "map", "P_10"], min_length=1, description="trec_eval measures (pytrec_eval names)")
    missing_queries: MissingQueries = Field(default="zero", description="zero: queries of the qrels a run lacks score 0 (trec_eval -c); skip: average over the run's queries")
    relevance_level: int = Field(default=2, description="THE relevance level of the human judgments: a judgment >= this is relevant for binary measures (trec_eval -l) in the leaderboards under the human qrels, the reports' agreement, the judge audit, the human-sample estimates and the calibrated qrels (a section's own relevance_level overrides it there; DL practice: 2)")


    @field_validator("measures")
    @classmethod
    def _known_measures(cls, v: list[str]) -> list[str]:
        from autograde.metrics.measures import parse_measure

        for name in v:
            parse_measure(name, "trec_eval")  # raises a ValueError naming the valid measures
        if len(set(v)) != len(v):
            raise ValueError(f"measures must not repeat, got {v}")
        return v


class CoverConfig(Strict):
    enabled: bool = Field(default=True, description="compute Rubric-Cover / EXAM-Cover leaderboards")
    depth: int = Field(default=20, ge=1, description="k: the top-k passages of a system that may cover items")
    thresholds: list[int] | None = Field(default=None, description="grade thresholds tau of a covered item (default: qrels.thresholds)")
    missing_queries: MissingQueries = Field(default="skip", description="a query where the system has no graded passage in its top-k: skip it (the workbench's choice) or score 0")


def _both_correlations() -> list[Literal["spearman", "kendall"]]:
    return ["spearman", "kendall"]


class CorrelationConfig(Strict):
    methods: list[Literal["spearman", "kendall"]] = Field(default_factory=_both_correlations, description="rank correlations computed (Spearman rho, Kendall tau-b)")


class Config(Strict):
    """The whole experiment, as in ``config/experiments/example.yaml``."""

    data: DataConfig = Field(description="the inputs: queries, runs, answers, corpus, human qrels, official leaderboard")
    banks: dict[str, str] = Field(default_factory=dict, description="test banks by name (workbench JSONL or JSONL.gz)")
    pool: PoolConfig = Field(default_factory=PoolConfig, description="which passages are graded")
    answers: AnswersConfig = Field(default_factory=AnswersConfig, description="how generated answers become passages")
    grading: GradingConfig = Field(default_factory=GradingConfig, description="sharding, cache and batching of the grading jobs")
    graders: list[GraderConfig] = Field(default_factory=list, description="the graders: each a backend + prompt class + model (+ options)")
    qrels: QrelsConfig = Field(default_factory=QrelsConfig, description="Rubric-Qrels / EXAM-Qrels variants")
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig, description="trec_eval measures of the leaderboards")
    cover: CoverConfig = Field(default_factory=CoverConfig, description="Rubric-Cover / EXAM-Cover leaderboards")
    correlation: CorrelationConfig = Field(default_factory=CorrelationConfig, description="rank correlation of every leaderboard with the official one")
    metrics: MetricsConfig = Field(default_factory=MetricsConfig, description="evaluation-server metrics and the significance test")
    reports: ReportsConfig = Field(default_factory=ReportsConfig, description="Phase 3 verification reports, agreement, correlation with bootstrap intervals and the review site (results/reports, results/site)")
    results_dir: str = Field(default="results", description="where outputs go")
    bank_generation: dict[str, BankGenerationConfig] = Field(default_factory=dict, description="Phase 1: test banks an LLM drafts, by bank name (graders use them with bank: <name>); see docs/banks.md")
    rubric: RubricConfig | None = Field(default=None, description="LLM-RUBRIC calibration network (Hashemi et al., ACL 2024) on rubric answers and human judges; null = off; see docs/rubric.md")
    calibrated_qrels: CalibratedQrelsConfig | None = Field(default=None, description="calibrated relevance labels from several graders' qrels or grades, trained on the judged passages (cross-validated by query); evaluated like another grader named 'calibrated'; null = off")
    nuggets: NuggetsConfig | None = Field(default=None, description="nugget scores of the RAG answers (TREC RAG 2024: importance, assignment, All / Vital / Weighted scores, leaderboards); null = off; see docs/nuggets.md")
    audit: AuditConfig | None = Field(default=None, description="judge audit: each grader's agreement with the human qrels per topic and at the top (meta-evaluation) and a robustness audit with perturbed passages; null = off; see docs/audit.md")
    human_sample: HumanSampleConfig | None = Field(default=None, description="estimates with intervals from human judgments of a sample of the pool (prediction-powered, human-only and LLM-only per system and measure; Holm-corrected comparisons; the judging page); null = off; see docs/human_sample.md")

    @model_validator(mode="before")
    @classmethod
    def _generated_banks(cls, data: Any) -> Any:
        data = fill_relevance_levels(data)  # one relevance level: a section's null level is evaluation's
        return add_generated_banks(data)  # a generated bank is a bank: enter the file its graders read

    def cross_problems(self) -> list[tuple[tuple[Any, ...], str]]:
        """Problems between sections, each with the key path it belongs to (``graders[1].bank``): run by
        :func:`autograde.config.experiment.validate_config` after the model validated, so each names its file line."""
        out: list[tuple[tuple[Any, ...], str]] = []
        names = [g.name for g in self.graders]
        for i, g in enumerate(self.graders):
            if names.index(g.name) != i:
                out.append((("graders", i, "name"), f"grader name {g.name!r} is used twice (graders[{names.index(g.name)}] "
                            "has it already); names must be unique (they name output files)"))
            if g.bank != "direct" and g.bank not in self.banks:
                close = difflib.get_close_matches(g.bank, list(self.banks), n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                out.append((("graders", i, "bank"), f"grader {g.name!r} uses bank {g.bank!r}, which is not under "
                            f"'banks:' ({hint}defined: {', '.join(sorted(self.banks)) or 'none'}; or use 'direct')"))
        for name in type(self).model_fields:  # each section's problems against the rest (nuggets:, audit:, ...)
            check = getattr(getattr(self, name), "cross_problems", None)
            if check is not None:
                out += check(self)
        return out

    def grader(self, name: str) -> GraderConfig:
        for g in self.graders:
            if g.name == name:
                return g
        raise ConfigError(f"no grader named {name!r}; configured: {', '.join(g.name for g in self.graders)}")

    def thresholds_of(self, grader: str) -> list[int]:
        """The qrels thresholds of one grader (its own, or ``qrels.thresholds``)."""
        g = self.grader(grader)
        return list(g.thresholds if g.thresholds is not None else self.qrels.thresholds)

    def qrels_variants_of(self, grader: str) -> list[str]:
        """The qrels variant names (``max-4``, ``count-3``) of one grader."""
        from autograde.core.layout import QrelsVariant

        return [str(QrelsVariant(m, t)) for m in self.qrels.modes for t in self.thresholds_of(grader)]

    def cover_thresholds_of(self, grader: str) -> list[int]:
        """The cover thresholds of one grader (none when cover is off)."""
        if not self.cover.enabled:
            return []
        return list(self.cover.thresholds) if self.cover.thresholds is not None else self.thresholds_of(grader)


LEVEL_KEY = "relevance_level"
"""The one spelling of a relevance level in every section."""
RENAMED_KEYS = {"human_relevance_level": LEVEL_KEY, "relevant_level": LEVEL_KEY}
"""Keys an earlier version of the config had, and their name now (a config with one gets a clear error)."""


def _section_class(annotation: Any) -> type[BaseModel] | None:
    """The section model of a field typed ``Model`` or ``Model | None`` (not a list or mapping of models)."""
    import types
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return None
    return next((a for a in typing.get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)), None)


def fill_relevance_levels(raw: Any) -> Any:
    """``raw`` with every section's null ``relevance_level`` set to ``evaluation.relevance_level``: the ONE relevance
    level of the human judgments that the leaderboards, reports, judge audit, human-sample estimates, calibrated qrels
    and retrieval metrics read, unless a section sets its own.

    >>> fill_relevance_levels({"evaluation": {"relevance_level": 3}, "reports": {}})["reports"]
    {'relevance_level': 3}
    """
    if not isinstance(raw, dict):
        return raw
    evaluation = raw.get("evaluation")
    level = evaluation.get(LEVEL_KEY) if isinstance(evaluation, dict) else None
    if level is None:
        level = EvaluationConfig.model_fields[LEVEL_KEY].default
    return _fill_levels(raw, Config, level)


def _has_level(model: type[BaseModel]) -> bool:
    """Whether a section (or a section inside it) has a relevance level."""
    return LEVEL_KEY in model.model_fields or any(
        (sub := _section_class(f.annotation)) is not None and _has_level(sub) for f in model.model_fields.values())


def _fill_levels(raw: dict[str, Any], model: type[BaseModel], level: Any) -> dict[str, Any]:
    out = dict(raw)
    for name, field in model.model_fields.items():
        section = _section_class(field.annotation)
        if section is None or section is EvaluationConfig or not _has_level(section):
            continue
        if name not in out and field.default is None:
            continue  # an optional section that is off
        value = out.get(name, {})
        if not isinstance(value, dict):
            continue  # a type error the validation reports
        if LEVEL_KEY in section.model_fields and value.get(LEVEL_KEY) is None:
            value = {**value, LEVEL_KEY: level}
        out[name] = _fill_levels(value, section, level)
    return out


def _model_for_path(loc: tuple[Any, ...], root: type[BaseModel] = Config) -> type[BaseModel] | None:
    """The config section model at ``loc`` under ``root`` (to list valid keys for an unknown one)."""
    model: Any = root
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if hasattr(model, "model_fields") else None
        if field is None:
            continue  # a mapping key (e.g. a bank name under bank_generation:), not a field
        ann = field.annotation
        args = getattr(ann, "__args__", ())
        inner = next((a for a in (ann, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if inner is None:
            return None
        model = inner
    return model


def error_lines(exc: ValidationError | list[Any], root: type[BaseModel] = Config, prefix: tuple[Any, ...] = (),
                key_lines: dict[tuple[Any, ...], int] | None = None) -> list[str]:
    """One ``[line N: ]key.path: problem`` line per error; unknown keys list the valid keys and a close match.

    ``exc`` is a validation error or a subset of its ``errors()``. ``key_lines`` maps key paths to their line in
    the YAML file (the line of the nearest enclosing key is used).
    """
    lines = []
    for err in (exc.errors() if isinstance(exc, ValidationError) else exc):
        loc = tuple(err["loc"])
        full = (*prefix, *loc)
        path = ".".join(str(p) for p in full) or "(top level)"
        msg = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if err["type"] == "extra_forbidden" and str(loc[-1]) in RENAMED_KEYS:
            msg = (f"this key is now named {RENAMED_KEYS[str(loc[-1])]!r} (one spelling in every section; rename it "
                   "here)")
        elif err["type"] == "extra_forbidden":
            model = _model_for_path(loc, root)
            valid = sorted(model.model_fields) if model is not None else []
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            msg = f"unknown key{hint} valid keys here: {', '.join(valid)}"
        elif err["type"] == "literal_error" and loc and loc[-1] == "backend":
            backends = LLM_BACKEND_NAMES if loc[0] == "bank_generation" else BACKEND_NAMES  # text only
            close = difflib.get_close_matches(str(err.get("input")), list(backends), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            msg = f"unknown backend {err.get('input')!r}; {hint}valid backends: {', '.join(sorted(backends))}"
        elif err["type"] == "literal_error":
            expected = str(err.get("ctx", {}).get("expected", ""))
            options = [o.strip().strip("'") for o in expected.replace(" or ", ", ").split(",") if o.strip()]
            close = difflib.get_close_matches(str(err.get("input")), options, n=1)
            if close:
                msg = f"{msg} (did you mean {close[0]!r}?)"
        line = None
        if key_lines:
            for n in range(len(full), 0, -1):
                line = key_lines.get(tuple(full[:n]))
                if line is not None:
                    break
        lines.append(f"{'line ' + str(line) + ': ' if line else ''}{path}: {msg}")
    return lines


def format_problems(lines: list[str], source: str) -> str:
    """The message of a :class:`ConfigError`: the file, the count, one indented line per problem, and the fix."""
    located = [re.sub(r"^line (\d+): ", lambda m: f"{source}:{m.group(1)}: ", x) for x in lines]
    return "\n".join([f"{source}: {len(lines)} problem(s) in the config:", *(f"  - {x}" for x in located),
                      "  (fix: correct the keys and values above; every key, its type, its valid values and default "
                      "are listed in docs/config.md and commented in config/experiments/example.yaml)"])


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Recursively merge ``over`` into a copy of ``base``."""
    out = dict(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out
