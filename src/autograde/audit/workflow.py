"""What ``rules/audit.smk`` reads from the experiment config: the inputs of the meta-evaluation and of each grader's
robustness audit, and the resources of that model job (the targets: :func:`autograde.config.audit.audit_targets`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autograde.core.layout import HUMAN, Layout
from autograde.pipeline.jobs import ModelJobs

if TYPE_CHECKING:
    from autograde.config.model import Config
    from autograde.grading.spec import ModelSpec


class AuditRules:
    """Inputs, params and resources of the audit rules for one workflow context (``ctx``)."""

    def __init__(self, ctx: Any) -> None:
        self.config: Config = ctx.config
        self.lay = Layout.of(ctx.results)
        self.sources = ctx.leaderboard_table()
        """Every leaderboard of the run (the one list), the meta-evaluation's params."""
        self.robustness_jobs = ModelJobs("audit_robustness", self.spec)

    def spec(self, wildcards: Any) -> ModelSpec:
        return self.config.grader(wildcards.grader)

    def params(self) -> dict[str, Any]:
        """The audit section as plain data (a changed setting reruns the audit rules)."""
        return self.config.audit.model_dump(mode="json") if self.config.audit is not None else {}

    def meta_inputs(self, wildcards: Any) -> dict[str, Any]:
        c, lay = self.config, self.lay
        return {"judgments": lay.ingest("judgments"), "human": lay.evaluation(HUMAN),
                "qrels": [lay.qrels(g.name, v) for g in c.graders for v in c.qrels_variants_of(g.name)],
                "per_query": sorted({lb["per_query"] for lb in self.sources})}

    def robustness_inputs(self, wildcards: Any) -> dict[str, Any]:
        lay = self.lay
        return {"pool": lay.pool, "queries": lay.ingest("queries"), "rankings": lay.ingest("rankings"),
                "grades": lay.grades(wildcards.grader)}
