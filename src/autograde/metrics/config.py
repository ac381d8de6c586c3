"""The ``metrics:`` section of the experiment config (retrieval, generation, significance).

>>> cfg = MetricsConfig.model_validate({"retrieval": {"cutoffs": [10, 100]}, "significance": {"seed": 7}})
>>> cfg.retrieval.cutoffs, cfg.retrieval.missing_queries, cfg.significance.n_resamples
([10, 100], 'zero', 10000)

Defaults reproduce the reference evaluation server where it is sound (its measures, cutoffs, text
normalization, permutation test) and pick the careful choice where it is not (trec_eval ``-c`` query set,
seeded resampling, Holm correction across many systems); every such choice is an option here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from autograde.core.layout import MissingQueries
from autograde.core.schema import Strict

RetrievalFamily = Literal["mrr", "map", "ndcg", "precision", "recall"]
GenerationMetric = Literal["acc", "em", "stringem", "coverem", "f1", "rouge-1", "rouge-2", "rouge-l"]

RETRIEVAL_FAMILIES: tuple[RetrievalFamily, ...] = ("mrr", "map", "ndcg", "precision", "recall")
GENERATION_METRICS: tuple[GenerationMetric, ...] = ("acc", "em", "stringem", "coverem", "f1", "rouge-1", "rouge-2", "rouge-l")




class RetrievalMetricsConfig(Strict):
    """trec_eval measures reported per run (JSON names ``mrr``, ``map``, ``ndcg@k``, ``P@k``, ``recall@k``)."""

    metrics: list[RetrievalFamily] = Field(
        default_factory=lambda: list(RETRIEVAL_FAMILIES),
        description="measure families as in the reference server: mrr (recip_rank, no cutoff), map, "
                    "ndcg (ndcg_cut at every cutoff), precision (P at every cutoff), recall (recall at every cutoff)")
    cutoffs: list[int] = Field(default_factory=lambda: [1, 5, 10, 20, 50, 100],
                               description="rank cutoffs k for ndcg@k, P@k and recall@k")
    extra_measures: list[str] = Field(
        default_factory=list,
        description="further trec_eval measures by their trec_eval names (Rprec, bpref, ndcg, P_7, success_1, "
                    "...); reported under the names trec_eval prints")
    relevance_level: int | None = Field(default=None, description="minimum grade counted as relevant by binary "
                                        "measures (trec_eval -l; null: evaluation.relevance_level in an experiment, "
                                        "1 in the standalone command as in trec_eval and the reference server); nDCG "
                                        "always uses the raw grades")
    missing_queries: MissingQueries = Field(
        default="zero",
        description="zero: a qrels query missing from a run scores 0 and counts in the mean (trec_eval -c); "
                    "skip: mean over queries in both run and qrels (the reference server's behaviour)")
    mrr_cutoff: int | None = Field(default=None, ge=1, description="also report mrr@k: recip_rank after "
                                   "truncating each ranking to its top k in trec_eval order; null = off")
    per_query: bool = Field(default=True, description="keep per-query values in the JSON output")

    @property
    def level(self) -> int:
        """The relevance level in force: ``relevance_level``, else trec_eval's and the reference server's 1."""
        return self.relevance_level if self.relevance_level is not None else 1

    @field_validator("cutoffs")
    @classmethod
    def _cutoffs_valid(cls, v: list[int]) -> list[int]:
        if any(k < 1 for k in v):
            raise ValueError(f"cutoffs must be >= 1, got {v}")
        if len(set(v)) != len(v):
            raise ValueError(f"cutoffs must not repeat, got {v}")
        return v

    @field_validator("extra_measures")
    @classmethod
    def _known_measures(cls, v: list[str]) -> list[str]:
        from autograde.metrics.measures import parse_measure

        for name in v:
            parse_measure(name, "trec_eval")  # raises a ValueError naming the valid measures
        return v


class GenerationMetricsConfig(Strict):
    """Answer metrics against lists of gold answers, read from JSONL."""

    gold_key: str = Field(default="golden_answers", description="JSONL key holding the list of gold answers")
    pred_key: str = Field(default="pred_answer", description="JSONL key holding the predicted answer")
    metrics: list[GenerationMetric] = Field(default_factory=lambda: list(GENERATION_METRICS),
                                            description="metrics to compute, reference server names")
    rouge_tokenizer: Literal["reference", "unicode"] = Field(
        default="reference",
        description="reference: rouge-score's tokenizer, which keeps only [a-z0-9] so non-ASCII answers score 0; "
                    "unicode: keep every letter and digit (CJK characters as single tokens), same tokens for ASCII")
    empty_reference: Literal["keep", "drop", "error"] = Field(
        default="keep",
        description="gold answers that normalize to nothing (e.g. 'the'): keep (reference: they match every "
                    "prediction in acc and coverem; counted and warned), drop (ignore them) or error")


class SignificanceConfig(Strict):
    """Paired randomization tests between systems, per measure."""

    baseline: str | None = Field(default=None, description="run name every other system is compared with; "
                                 "null = all pairs")
    n_resamples: int = Field(default=10000, ge=1, description="random sign flips of the permutation test")
    seed: int = Field(default=0, ge=0, description="seed of the numpy Generator (same seed, same p-values)")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="significance level: significant = p < alpha "
                         "(after correction when one is chosen)")
    correction: Literal["none", "holm", "bh"] = Field(
        default="holm", description="multiple-comparison correction across the comparisons of one measure: "
                                    "none, holm (family-wise error) or bh (Benjamini-Hochberg false discovery rate)")
    p_value_variant: Literal["reference", "plus_one"] = Field(
        default="reference", description="reference: count(|perm| >= |obs|) / n as the reference server; "
                                         "plus_one: (count + 1) / (n + 1), never 0 (exact Monte-Carlo p-value)")
    t_test: bool = Field(default=False, description="also report a paired t-test p-value (scipy ttest_rel)")
    bootstrap: bool = Field(default=False, description="also report a seeded bootstrap confidence interval of "
                            "the mean difference (percentile method, queries resampled with replacement)")
    confidence: float = Field(default=0.95, gt=0, lt=1, description="confidence level of the bootstrap interval")


class MetricsConfig(Strict):
    """Evaluation metrics: retrieval (trec_eval), generation (answer matching), significance tests."""

    retrieval: RetrievalMetricsConfig = Field(default_factory=RetrievalMetricsConfig,
                                              description="retrieval measures from qrels and runs")
    generation: GenerationMetricsConfig = Field(default_factory=GenerationMetricsConfig,
                                                description="generation metrics from predictions and gold answers")
    significance: SignificanceConfig = Field(default_factory=SignificanceConfig,
                                             description="paired significance tests between systems")
