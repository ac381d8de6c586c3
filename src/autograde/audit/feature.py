"""The judge audit (``audit:``): each grader's agreement with the human judgments (meta-evaluation) and its
robustness audit. Its record of hooks, and the plan of its model jobs.

>>> from autograde.config.model import Config
>>> FEATURE.targets_of(Config.model_validate({"data": {"queries": "q.tsv"}}))
[]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.config.audit import audit_targets
from autograde.core.errors import AutogradeError
from autograde.core.feature import Feature, ModelStage, SiteContext, SiteSection
from autograde.core.layout import Layout

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config.model import Config
    from autograde.pipeline.planning import GraderPlan, PlanOptions


def plan_audit(config: Config, pool: pd.DataFrame, queries: dict[str, str], options: PlanOptions
               ) -> list[GraderPlan]:
    """The robustness audit of each grader the workflow audits (one job each): its perturbed copies' prompts (the
    sampled pairs themselves are the grading jobs' prompts); the copies of the target system's top passages only
    once the grader's grades exist (they choose the system)."""
    from autograde.audit.robustness import audit_requests
    from autograde.audit.stages import robustness_inputs
    from autograde.pipeline.planning import GraderPlan, plan_requests

    if config.audit is None:
        return []
    rc = config.audit.robustness
    texts = {(q, p): t for q, p, t in pool[["query_id", "passage_id", "text"]].itertuples(index=False)}
    out = []
    for name in rc.graders:
        if options.graders and name not in options.graders:
            continue
        inputs, _threshold, keywords = robustness_inputs(config, name, queries, texts, rc, warn=False)
        try:
            requests = audit_requests(name, inputs, rc, **keywords).perturbed
        except AutogradeError as exc:
            out.append(GraderPlan("audit robustness", name, config.grader(name).backend, 0, None, 0,
                                  note=f"not planned: {exc}"))
            continue
        plan = plan_requests(config, "audit robustness", config.grader(name), name, requests, queries, 1, options)
        if inputs.rankings is None and rc.system_perturbations:
            plan.note = "; ".join(filter(None, [plan.note, "the target system's perturbed passages are counted once "
                                                "the grader's grades exist (they choose the system)"]))
        out.append(plan)
    return out


def _site(ctx: SiteContext) -> SiteSection | None:
    from autograde.reports.judge_card import build_judge_cards
    from autograde.reports.render import render_page

    if ctx.config.audit is None:
        return None
    cards = build_judge_cards(ctx.results, ctx.out, ctx.common, ctx.graders, ctx.write, ctx.stats)
    if not cards:
        return None
    return SiteSection("judges", "Judge cards", render_page("section_judges.html", **ctx.common, root="",
                                                            judges=cards))


def _outputs(config: Config) -> list[tuple[str, str]]:
    if config.audit is None:
        return []
    lay = Layout.of(config.results_dir)
    return [("judge audit: meta-evaluation", lay.audit("meta/meta-evaluation.md")),
            ("judge cards (review site)", f"{lay.site}/judges/index.html")]


FEATURE = Feature(
    "audit", section="audit", rules=("audit.smk",), cli="autograde.cli.audit", targets=audit_targets,
    model_stages=(ModelStage("audit_robustness", "audit robustness", plan_audit),), site_inputs=audit_targets,
    site=_site, outputs=_outputs)
"""The judge audit (docs/audit.md)."""
