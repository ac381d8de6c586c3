"""The ``human_sample:`` config section: human judgments of a sample of the pool, the design that drew it, and the
predictions (graders' labels, expected grades or calibrated qrels) that the prediction-powered estimates lean on.

>>> cfg = HumanSampleConfig.model_validate({"qrels": "judged.qrels", "design": "design.tsv",
...     "predictions": [{"name": "minilm", "grader": "minilm-questions", "variant": "max-4"}]})
>>> cfg.predictions[0].source, cfg.variance, cfg.confidence
('grader', 'labels', 0.95)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from autograde.core.ids import NAME_RE
from autograde.core.schema import Strict

if TYPE_CHECKING:
    from autograde.config.model import Config

PREDICTION_SOURCES = ("grader", "qrels", "table", "grades")
"""Where a prediction comes from: a grader's qrels variant, a qrels file, a calibrated-qrels passage table (a
predicted distribution over the grades), a grades table (the expected grade, max over a passage's items)."""


DesignKind = Literal["simple_random", "stratified", "active"]
"""How ``autograde sample draw`` picks passages (docs/human_sample.md)."""
DESIGN_KINDS: tuple[str, ...] = get_args(DesignKind)

class PredictionConfig(Strict):
    """One prediction of the human grade of every pooled passage; each gets its own estimates."""

    name: str = Field(pattern=NAME_RE, description="unique name, used in output paths (results/human_sample/<name>/)")
    grader: str | None = Field(default=None, description="a grader of 'graders:' (or 'calibrated' when calibrated_qrels: is on): the labels of its qrels variant")
    variant: str | None = Field(default=None, description="with grader: its qrels variant (max-4, count-3, threshold-2, ...; default: its first)")
    qrels: str | None = Field(default=None, description="a TREC qrels file of any grader's labels")
    table: str | None = Field(default=None, description="a calibrated-qrels passage table (passages.parquet with p_level_<grade> columns): the predicted distribution over the human grades")
    grades: str | None = Field(default=None, description="a grades table (.parquet with expected_grade, e.g. results/grades/<grader>.parquet): a passage's expected grade (max over its items)")
    level: float | None = Field(default=None, description="a label (or expected grade) >= level is predicted relevant, at the human relevance level; lower: grade 0 (default: the variant's trec_eval level with grader:, else the human relevance level)")
    scale: dict[int, float] | None = Field(default=None, description="label -> predicted human grade (e.g. {3: 1, 4: 2, 5: 3}; labels below the smallest key map to 0, expected grades in between are interpolated); replaces level")

    @model_validator(mode="after")
    def _one_source(self) -> PredictionConfig:
        given = [s for s in PREDICTION_SOURCES if getattr(self, s) is not None]
        if len(given) != 1:
            raise ValueError(f"prediction {self.name!r}: give exactly one of {', '.join(PREDICTION_SOURCES)} (got "
                             f"{', '.join(given) or 'none'})")
        if self.variant is not None and self.grader is None:
            raise ValueError(f"prediction {self.name!r}: variant needs grader")
        if self.table is not None and (self.level is not None or self.scale is not None):
            raise ValueError(f"prediction {self.name!r}: a table predicts a distribution over the human grades; "
                             "level and scale do not apply")
        if self.level is not None and self.scale is not None:
            raise ValueError(f"prediction {self.name!r}: give level or scale, not both")
        return self

    @property
    def source(self) -> str:
        return next(s for s in PREDICTION_SOURCES if getattr(self, s) is not None)


class HumanSampleConfig(Strict):
    """Estimates with intervals from human judgments of a sample of the pool (docs/human_sample.md). Only what a user
    chooses is a key; the estimator's own choices (power tuning, the variance floor, the recalibration) are
    arguments of :func:`autograde.ppi.estimators.estimate_measures` that the simulation varies."""

    qrels: str | None = Field(default=None, description="human judgments of the sampled passages (TREC qrels; the judging page exports this file); null: none yet (the judging page only)")
    design: str | None = Field(default=None, description="the design file 'autograde sample draw' wrote (every pooled passage's inclusion probability, per round); null: the sample is a simple random sample of the pool")
    rate: float | None = Field(default=None, gt=0, le=1, description="without design: the simple random sample's rate (null: judged passages / pooled passages)")
    predictions: list[PredictionConfig] = Field(default_factory=list, description="the predictions the estimates lean on, one set of estimates each (empty: every grader's first qrels variant)")
    measures: list[str] | None = Field(default=None, description="measures to estimate (null: those of evaluation.measures a sample can estimate); trec_eval names P_k, recall_k, ndcg_cut_k, ndcg, map, recip_rank, and dcg_cut_k, rbp_p")
    levels: list[int] = Field(default_factory=lambda: [0, 1, 2, 3], min_length=2, description="the human grades (TREC DL: 0-3); a judgment outside them is an error")
    relevance_level: int | None = Field(default=None, description="a human grade >= this is relevant for the binary measures (null: evaluation.relevance_level)")
    confidence: float = Field(default=0.95, gt=0, lt=1, description="coverage of the intervals")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="family-wise error rate of the Holm-corrected comparisons of every pair of systems (per measure)")
    variance: Literal["labels", "queries"] = Field(default="labels", description="labels: the queries are fixed, only the sample of judgments varies; queries: the queries are a sample too (variance between per-query estimates)")
    order: Literal["composite", "composite-fitted", "estimate"] = Field(default="composite-fitted", description="the leaderboard's order: composite-fitted: by the Fay-Herriot composite of the prediction-powered estimate and a regression on the LLM-only value (intercept and slope fitted), weighted by how much the LLM's error varies between systems against the estimate's variance; composite: the same model with the slope fixed at one (the LLM-only value less its mean bias: only for a judge on the human scale; docs/human_sample.md); estimate: by the prediction-powered estimate. Intervals, differences and groups are the estimate's either way")
    judging_page: bool = Field(default=True, description="the review site gets a judging page for the design's passages not judged yet (site/judging/index.html)")

    @field_validator("levels")
    @classmethod
    def _levels(cls, v: list[int]) -> list[int]:
        if sorted(set(v)) != v or v[0] < 0:
            raise ValueError(f"levels must be increasing, distinct and >= 0, got {v}")
        return v

    @field_validator("measures")
    @classmethod
    def _measures(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return v
        from autograde.metrics.estimable import estimable_measure

        for name in v:
            estimable_measure(name)
        if len(set(v)) != len(v):
            raise ValueError(f"measures must not repeat, got {v}")
        return v

    @model_validator(mode="after")
    def _design_or_rate(self) -> HumanSampleConfig:
        if self.design is not None and self.rate is not None:
            raise ValueError("give design (a design file) or rate (a simple random sample), not both")
        names = [p.name for p in self.predictions]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"prediction names must be unique; repeated: {', '.join(dupes)}")
        return self

    def cross_problems(self, config: Config) -> list[tuple[tuple[Any, ...], str]]:
        """Problems of this section against the rest of the experiment (:func:`check_human_sample_config`)."""
        return check_human_sample_config(self, config)


def check_human_sample_config(h: HumanSampleConfig, config: Config) -> list[tuple[tuple[Any, ...], str]]:
    """Cross-section problems of ``human_sample:`` (graders and variants exist), each with its key path."""
    out: list[tuple[tuple[Any, ...], str]] = []
    graders = [g.name for g in config.graders]
    calibrated = config.calibrated_qrels is not None
    for k, p in enumerate(h.predictions):
        if p.grader is None:
            continue
        if p.grader == "calibrated" and calibrated:
            continue
        if p.grader not in graders:
            out.append((("human_sample", "predictions", k, "grader"), f"prediction {p.name!r} names grader "
                        f"{p.grader!r}, which is not under graders: (defined: {', '.join(graders) or 'none'}"
                        f"{'; calibrated' if calibrated else ''})"))
        elif p.variant is not None and p.variant not in config.qrels_variants_of(p.grader):
            out.append((("human_sample", "predictions", k, "variant"), f"prediction {p.name!r}: grader {p.grader!r} "
                        f"has no qrels variant {p.variant!r} (configured: "
                        f"{', '.join(config.qrels_variants_of(p.grader))})"))
    return out
