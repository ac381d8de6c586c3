"""The named input and params functions of ``rules/reports.smk`` (the .smk file holds rules only)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from autograde.core.layout import Layout
from autograde.reports.stages import (
    correlation_plot_paths,
    grader_report_files,
    grader_report_spec,
)


class ReportRules:
    """Inputs and params of the rules ``reports``, ``report_correlation`` and ``site`` for one workflow context.

    Its methods take Snakemake's ``wildcards`` and are passed to the rules by name (bound methods).
    """

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.config = ctx.config
        self.results = ctx.results
        self.reports = ctx.config.reports
        self.sources = ctx.leaderboard_table() if ctx.config.data.official_leaderboard else []
        """Every leaderboard correlated with the official one (the ``report_correlation`` rule's params)."""

    def reports_params(self) -> dict[str, Any]:
        return self.reports.model_dump()

    def relevant_level(self) -> int:
        return self.reports.level

    def plot_outputs(self) -> list[str]:
        return correlation_plot_paths(self.results, self.sources)

    def spec(self, wildcards: Any) -> dict[str, Any]:
        """The grader's :class:`~autograde.reports.stages.GraderReportSpec` as a dict (rule params)."""
        return asdict(grader_report_spec(self.config, wildcards.grader))

    def grader_inputs(self, wildcards: Any) -> dict[str, Any]:
        """Inputs of one grader's reports: merged grades, ingest tables, the bank, per-variant evaluations."""
        g, lay = wildcards.grader, Layout.of(self.results)
        spec = grader_report_spec(self.config, g)
        inputs: dict[str, Any] = {
            "grades": lay.grades(g),
            "judgments": lay.ingest("judgments"),
            "rankings": lay.ingest("rankings"),
            "queries": lay.ingest("queries"),
            "evaluations": [lay.evaluation(g, v) for v in spec.variants] if self.reports.impact else [],
        }
        if spec.bank:
            inputs["bank"] = spec.bank
        return inputs

    def correlation_inputs(self, wildcards: Any) -> list[str]:
        """The per-query tables of every correlated leaderboard."""
        return sorted({s["per_query"] for s in self.sources})

    def site_inputs(self, wildcards: Any) -> dict[str, Any]:
        """Everything the site shows: every grader's reports and grades, leaderboards, pool, ingest tables."""
        r, names = self.results, self.ctx.grader_names()
        lay = Layout.of(r)
        inputs: dict[str, Any] = {
            "reports": [f for g in names for f in grader_report_files(r, g).values()],
            "grades": [lay.grades(g) for g in names],
            "leaderboards": self.ctx.leaderboard_files(),
            "pool": lay.pool,
            "queries": lay.ingest("queries"),
            "judgments": lay.ingest("judgments"),
        }
        inputs["features"] = self.ctx.site_inputs()  # what the features' site pages read (judge cards, ...)
        if self.config.data.official_leaderboard:
            inputs["correlation"] = lay.reports("correlation.tsv")
            inputs["official"] = self.config.data.official_leaderboard
        return inputs
