"""What ``rules/audit.smk`` and ``rule all`` read from the experiment config: the audit's targets, the inputs of the
meta-evaluation and of each grader's robustness audit, and the resources of that model job."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autograde.audit.stages import META_FILES, ROBUSTNESS_FILES
from autograde.core.layout import HUMAN, Layout
from autograde.pipeline.jobs import ModelJobs

if TYPE_CHECKING:
    from autograde.config.model import Config
    from autograde.grading.spec import ModelSpec


def meta_enabled(config: Config) -> bool:
    """Whether the workflow meta-evaluates: an ``audit:`` section with meta_evaluation on, human qrels, graders."""
    return config.audit is not None and config.audit.meta_evaluation and bool(config.data.qrels) and bool(config.graders)


def audit_targets(config: Config) -> list[str]:
    """Every file the audit rules make (``[]`` without ``audit:``)."""
    if config.audit is None:
        return []
    lay = Layout.of(config.results_dir)
    out = [lay.audit(f) for f in META_FILES.values()] if meta_enabled(config) else []
    for g in config.audit.robustness.graders:
        out += [lay.audit_grader(g, f) for f in ROBUSTNESS_FILES.values()]
    return out


class AuditRules:
    """Inputs, params and resources of the audit rules for one workflow context (``ctx``)."""

    def __init__(self, ctx: Any) -> None:
        self.config: Config = ctx.config
        self.lay = Layout.of(ctx.results)
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
                "evaluations": [lay.evaluation(g.name, v) for g in c.graders for v in c.qrels_variants_of(g.name)]}

    def robustness_inputs(self, wildcards: Any) -> dict[str, Any]:
        lay = self.lay
        return {"pool": lay.pool, "queries": lay.ingest("queries"), "rankings": lay.ingest("rankings"),
                "grades": lay.grades(wildcards.grader)}
