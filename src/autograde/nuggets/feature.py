"""The nugget-score feature (``nuggets:``): its record of hooks, and the plan of its model jobs.

>>> from autograde.config.model import Config
>>> from autograde.core.layout import Layout
>>> FEATURE.leaderboards_of(Config.model_validate({"data": {"queries": "q.tsv"}}), Layout())
[]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.config.nuggets import NUGGET_VARIANT
from autograde.core.feature import CheckContext, Feature, ModelStage, SiteContext, SiteSection
from autograde.core.layout import Layout, Leaderboard

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config.model import Config
    from autograde.pipeline.planning import GraderPlan, PlanOptions


def plan_importance(config: Config, pool: pd.DataFrame, queries: dict[str, str], options: PlanOptions
                    ) -> list[GraderPlan]:
    """The importance of the nuggets the bank leaves open (one job per shard)."""
    from autograde.nuggets.importance import importance_grader_config, importance_requests
    from autograde.nuggets.stages import read_nugget_bank
    from autograde.pipeline.planning import plan_requests

    n = config.nuggets
    if n is None or n.importance is None or options.graders:
        return []
    bank = read_nugget_bank(config, queries)
    open_items = [it for it in bank.items if (it.info or {}).get("importance") is None]
    spec = importance_grader_config(n)
    return [plan_requests(config, "nugget importance", spec, spec.name, importance_requests(open_items, queries),
                          queries, n.shards or config.grading.shards, options)]


def plan_assignment(config: Config, pool: pd.DataFrame, queries: dict[str, str], options: PlanOptions
                    ) -> list[GraderPlan]:
    """Each whole-answer assessor's (answer, nugget) pairs (a mapped assessor runs no model)."""
    from autograde.core.errors import Problems
    from autograde.core.paths import expand_globs
    from autograde.nuggets.assign import answers_table, assignment_requests, whole_answer_grader
    from autograde.nuggets.stages import read_nugget_bank
    from autograde.pipeline.planning import plan_requests

    n = config.nuggets
    assessors = [a for a in n.assessors if a.backend is not None] if n is not None else []
    if n is None or not assessors or options.graders:
        return []
    bank = read_nugget_bank(config, queries)
    problems = Problems()
    answers = answers_table(expand_globs(config.data.answers), problems)
    problems.raise_if_any()
    requests = assignment_requests(answers, queries, bank.by_query())
    out = []
    for a in assessors:
        spec = whole_answer_grader(a, n.bank)
        out.append(plan_requests(config, "nugget assignment", spec, a.name, requests, queries,
                                 n.shards or config.grading.shards, options))
    return out


def nugget_targets(config: Config) -> list[str]:
    """Every file the nugget stages make (``[]`` without ``nuggets:``); the review site's nugget pages read them."""
    n = config.nuggets
    if n is None:
        return []
    lay = Layout.of(config.results_dir)
    out = [lay.nugget_table("importance.parquet")]
    for a in n.assessors:
        out += [lay.nuggets(a.name, f) for f in ("assignments.parquet", "assignments.jsonl", "stats.json")]
        out += [lay.leaderboard(a.name, NUGGET_VARIANT, m) for m in n.measures]
    return out


def nugget_leaderboards(config: Config, lay: Layout) -> list[Leaderboard]:
    """The nugget scores of every assessor, one leaderboard per measure."""
    n = config.nuggets
    if n is None:
        return []
    # a run's score is the mean over the queries it answered (the evaluation holds a row for each)
    return [Leaderboard(a.name, NUGGET_VARIANT, m, lay.leaderboard(a.name, NUGGET_VARIANT, m),
                        lay.evaluation(a.name, NUGGET_VARIANT), missing_queries="skip")
            for a in n.assessors for m in n.measures]


def _check_config(ctx: CheckContext) -> None:
    from autograde.nuggets.checks import check_nuggets

    check_nuggets(ctx.config, ctx.banks, ctx.src, ctx.problems)


def _check_inputs(ctx: CheckContext) -> None:
    from autograde.nuggets.checks import check_nugget_baseline

    check_nugget_baseline(ctx)


def _site(ctx: SiteContext) -> SiteSection | None:
    from autograde.reports.nugget_pages import build_nugget_pages
    from autograde.reports.render import render_page

    n = ctx.config.nuggets
    if n is None:
        return None
    cards = build_nugget_pages(ctx.results, ctx.out, ctx.common, ctx.queries, ctx.write, ctx.stats, ctx.slug,
                               [a.name for a in n.assessors])
    if not cards:
        return None
    return SiteSection("nuggets", "Nugget scores of the RAG answers",
                       render_page("section_nuggets.html", **ctx.common, root="", nuggets=cards))


def _outputs(config: Config) -> list[tuple[str, str]]:
    n = config.nuggets
    if n is None:
        return []
    lay = Layout.of(config.results_dir)
    return [(f"nugget assignments of {a.name}", lay.nuggets(a.name, "assignments.jsonl")) for a in n.assessors]


FEATURE = Feature(
    "nuggets", section="nuggets", rules=("nuggets.smk",), cli="autograde.cli.nuggets", targets=nugget_targets,
    leaderboards=nugget_leaderboards,
    model_stages=(ModelStage("nugget_importance", "nugget importance", plan_importance),
                  ModelStage("assign_nuggets", "nugget assignment", plan_assignment)),
    check_config=_check_config, check_inputs=_check_inputs, site_inputs=nugget_targets, site=_site,
    outputs=_outputs)
"""Nugget scores of the RAG answers (docs/nuggets.md)."""
