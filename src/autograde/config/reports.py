"""The ``reports:`` config section (verification reports, agreement, correlation, review site).

>>> ReportsConfig().spurious_judgments
[0]
>>> ReportsConfig(bootstrap_samples=200).bootstrap_seed
0
"""

from __future__ import annotations

from pydantic import Field

from autograde.core.schema import Strict

DEFAULT_RELEVANCE_LEVEL = 2
"""The relevance level of a section used outside an experiment (DL practice), where ``evaluation.relevance_level``
cannot fill it."""


class ReportsConfig(Strict):
    """Phase 3 reports per grader and the static review site (``results/reports``, ``results/site``)."""

    enabled: bool = Field(default=True, description="build the verification reports, agreement and correlation tables")
    thresholds: list[int] | None = Field(
        default=None, description="grade thresholds tau for missing-in-bank and spurious entries (null: qrels.thresholds)")
    relevance_level: int | None = Field(
        default=None, description="human judgment level counted as relevant in missing-in-bank, agreement and the "
        "judge audit (null: evaluation.relevance_level)")
    spurious_judgments: list[int] = Field(
        default_factory=lambda: [0], min_length=1,
        description="human judgments of the passages counted for spurious entries (Dietz, SIGIR 2024, section 6 counts "
        "passages judged exactly 0)")
    spurious_min_count: int = Field(
        default=1, ge=1, description="list an item as spurious when at least this many such passages grade >= tau")
    impact: bool = Field(default=True, description="bank impact: Kendall tau of each leaderboard with one item removed")
    bootstrap_samples: int = Field(default=1000, ge=0, description="bootstrap resamples of the queries (0: no intervals)")
    bootstrap_seed: int = Field(default=0, description="seed of the bootstrap (numpy default_rng): same seed, same intervals")
    confidence: float = Field(default=0.95, gt=0, lt=1, description="coverage of the bootstrap percentile intervals")
    tau_ap: bool = Field(default=True, description="also report tau-ap (AP rank correlation, top-weighted)")
    site: bool = Field(default=True, description="build the static review site under results/site")
    site_max_passages: int = Field(
        default=1000, ge=1, description="passages shown per query page (highest labels first); the rest are counted")
    site_text_chars: int = Field(
        default=2000, ge=50, description="passage text and raw responses longer than this are cut in the site")

    def thresholds_or(self, default: list[int]) -> list[int]:
        """The report thresholds, or ``default`` (the qrels thresholds) when not set; sorted, unique."""
        return sorted(set(self.thresholds if self.thresholds is not None else default))

    @property
    def level(self) -> int:
        """The relevant judgment level (``relevance_level``; within an experiment ``evaluation.relevance_level``
        fills it when null; alone, trec_eval DL practice: 2)."""
        return self.relevance_level if self.relevance_level is not None else DEFAULT_RELEVANCE_LEVEL


GRADER_REPORT_FILES = {
    "bank_items": "items.parquet", "passages": "passages.parquet", "verify": "verify.parquet", "missing": "missing.tsv",
    "spurious": "spurious.tsv", "impact": "impact.tsv", "agreement": "agreement.tsv",
    "agreement_graded": "agreement-graded.tsv", "agreement_per_query": "agreement-per-query.tsv",
    "agreement_md": "agreement.md", "agreement_tex": "agreement.tex", "summary": "summary.json",
}
"""Output key -> file name of the per-grader reports."""
