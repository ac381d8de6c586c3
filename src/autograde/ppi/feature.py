"""Estimates with intervals from a human sample (``human_sample:``). Its record of hooks.

>>> from autograde.config.model import Config
>>> FEATURE.targets_of(Config.model_validate({"data": {"queries": "q.tsv"}}))
[]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.feature import CheckContext, Feature, SiteContext, SiteSection
from autograde.core.layout import Layout
from autograde.ppi.workflow import (
    draw_paths,
    estimate_outputs,
    human_sample_targets,
    judging_output,
    predictions_of,
    site_inputs,
)

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


def _check_inputs(ctx: CheckContext) -> None:
    from autograde.ppi.checks import check_human_sample

    assert ctx.inputs is not None
    check_human_sample(ctx.config, ctx.inputs, ctx.src, ctx.problems)  # its files, judgments and design


def _input_files(config: Config) -> list[str]:
    from autograde.ppi.checks import human_sample_files

    return human_sample_files(config)


def _outputs(config: Config) -> list[tuple[str, str]]:
    """The human-sample outputs a person opens next (the hub lists those that exist): the estimates per prediction,
    the summary, the pages, the experiment's own draw (``autograde sample draw``)."""
    if config.human_sample is None:
        return []
    lay = Layout.of(config.results_dir)
    outs, draw = estimate_outputs(config), draw_paths(config)
    return [*((f"human-sample estimates ({p.name})", outs[f"{p.name}.estimates"]) for p in predictions_of(config)),
            ("human-sample summary", outs["summary"]),
            ("judging page (open in a browser)", f"{lay.site}/judging/index.html"),
            ("human-sample forest plots", f"{lay.site}/human_sample/index.html"),
            ("own draw: design (autograde sample draw)", draw["design"]),
            ("own draw: judgments", draw["sample"])]


FEATURE = Feature("ppi", section="human_sample", rules=("ppi.smk",), cli="autograde.cli.sample", targets=_targets,
                  site_inputs=site_inputs, site=_site, outputs=_outputs, check_inputs=_check_inputs,
                  input_files=_input_files)
"""Intervals from human judgments of a sample of the pool (docs/human_sample.md)."""
