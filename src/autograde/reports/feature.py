"""The reports feature (``reports:``): verification reports per grader, the correlation report with bootstrap
intervals, the review site. Its record of hooks.

>>> from autograde.config.model import Config
>>> FEATURE.targets_of(Config.model_validate({"data": {"queries": "q.tsv"}, "reports": {"enabled": False}}))
[]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.feature import CheckContext, Feature
from autograde.core.layout import Layout
from autograde.core.log import logger

if TYPE_CHECKING:
    from autograde.config.model import Config


def _targets(config: Config) -> list[str]:
    from autograde.reports.stages import report_targets

    return report_targets(config)


def check_spurious_levels(ctx: CheckContext) -> None:
    """Every judgment level of ``reports.spurious_judgments`` occurs in the human qrels (a level no judgment has
    counts nothing: the spurious-entries report would be empty for a reason nobody sees). A warning: the reports
    still run."""
    config, inputs = ctx.config, ctx.inputs
    if not config.reports.enabled or inputs is None or inputs.judgments.empty:
        return
    present = sorted({int(r) for r in inputs.judgments["relevance"]})
    absent = [lv for lv in config.reports.spurious_judgments if lv not in present]
    if absent:
        path, line = ctx.src.locate(("reports", "spurious_judgments"))
        logger.warning("%s:%s: reports.spurious_judgments %s: no judgment of %s has level %s, so no passage counts "
                       "for spurious entries at it (judged levels: %s; fix: use judged levels, e.g. [0])", path,
                       line or "?", list(config.reports.spurious_judgments), config.data.qrels,
                       " or ".join(map(str, absent)), ", ".join(map(str, present)))


def _outputs(config: Config) -> list[tuple[str, str]]:
    lay = Layout.of(config.results_dir)
    return [("correlation report with bootstrap intervals", lay.reports("correlation.tsv")),
            ("verification reports per grader", lay.reports("")),
            ("review site (open in a browser)", f"{lay.site}/index.html")]


FEATURE = Feature(
    "reports", section="reports", rules=("reports.smk",), cli="autograde.cli.reports", targets=_targets,
    check_inputs=check_spurious_levels, outputs=_outputs)
"""Phase 3: verification reports, agreement, the correlation report and the review site (docs/reports.md)."""
