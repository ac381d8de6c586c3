"""Estimates with intervals from a human sample (``human_sample:``). Its record of hooks.

>>> from autograde.config.model import Config
>>> FEATURE.targets_of(Config.model_validate({"data": {"queries": "q.tsv"}}))
[]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.feature import Feature, SiteContext, SiteSection
from autograde.core.layout import Layout
from autograde.ppi.workflow import human_sample_targets, judging_output, site_inputs

if TYPE_CHECKING:
    from autograde.config.model import Config


def _targets(config: Config) -> list[str]:
    judge = judging_output(config)
    return human_sample_targets(config) + ([judge] if judge else [])


def _site(ctx: SiteContext) -> SiteSection | None:
    from autograde.reports.human_sample_pages import build_human_sample_pages
    from autograde.reports.render import render_page

    if ctx.config.human_sample is None:
        return None
    links = build_human_sample_pages(ctx.results, ctx.out, ctx.common, ctx.write, ctx.stats)
    if not (links.get("estimates") or links.get("judging")):
        return None
    return SiteSection("human-sample", "Intervals from a human sample",
                       render_page("section_human_sample.html", **ctx.common, root="", human_sample=links))


def _outputs(config: Config) -> list[tuple[str, str]]:
    if config.human_sample is None:
        return []
    lay = Layout.of(config.results_dir)
    return [("estimates with intervals from the human sample", lay.human_sample("summary.json")),
            ("estimates and intervals (review site)", f"{lay.site}/human_sample/index.html"),
            ("judging page (review site)", f"{lay.site}/judging/index.html")]


FEATURE = Feature("ppi", section="human_sample", rules=("ppi.smk",), cli="autograde.cli.sample", targets=_targets,
                  site_inputs=site_inputs, site=_site, outputs=_outputs)
"""Intervals from human judgments of a sample of the pool (docs/human_sample.md)."""
