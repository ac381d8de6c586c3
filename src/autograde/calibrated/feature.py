"""The calibrated-qrels feature (``calibrated_qrels:``): relevance labels from several graders' outputs, fitted on
the judged passages and evaluated like another grader named ``calibrated``. Its record of hooks.

>>> from autograde.config.model import Config
>>> FEATURE.targets_of(Config.model_validate({"data": {"queries": "q.tsv"}}))
[]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograde.core.feature import CheckContext, Feature, QrelsParams
from autograde.core.layout import CALIBRATED, Layout, Leaderboard

if TYPE_CHECKING:
    from autograde.config.model import Config


def _targets(config: Config) -> list[str]:
    from autograde.calibrated.workflow import calibrated_targets

    return calibrated_targets(config)


def calibrated_leaderboards(config: Config, lay: Layout) -> list[Leaderboard]:
    """The calibrated labels' leaderboards, one per measure (none when the section is off)."""
    from autograde.calibrated.workflow import calibrated_qrels_variant, calibrated_section

    cfg = calibrated_section(config)
    if cfg is None:
        return []
    v = calibrated_qrels_variant(cfg)
    return [Leaderboard(CALIBRATED, v, m, lay.leaderboard(CALIBRATED, v, m), lay.evaluation(CALIBRATED, v),
                        missing_queries=config.evaluation.missing_queries) for m in config.evaluation.measures]


def _input_files(config: Config) -> list[str]:
    """Its sources, judgments and model folder when they are not the workflow's own outputs."""
    from autograde.calibrated.workflow import calibrated_section

    cfg = calibrated_section(config)
    if cfg is None:
        return []
    results = Path(config.results_dir).resolve()  # the workflow's own outputs change with every run
    files = [p for p in [*cfg.sources, cfg.judgments] if p and not Path(p).resolve().is_relative_to(results)]
    if cfg.model:
        files += [str(p) for p in sorted(Path(cfg.model).glob("*"))] or [cfg.model]
    return files


def calibrated_qrels(config: Config) -> dict[str, dict[str, QrelsParams]]:
    """The calibrated labels' qrels variant, evaluated like a grader's (none when the section is off)."""
    from autograde.calibrated.workflow import calibrated_qrels_level, calibrated_qrels_variant, calibrated_section
    from autograde.core.layout import QrelsVariant

    cfg = calibrated_section(config)
    if cfg is None:
        return {}
    variant, level = calibrated_qrels_variant(cfg), calibrated_qrels_level(cfg)
    return {CALIBRATED: {variant: {"mode": QrelsVariant.parse(variant).mode, "threshold": level, "level": level}}}


def _check_inputs(ctx: CheckContext) -> None:
    from autograde.calibrated.checks import check_calibrated

    check_calibrated(ctx.config, ctx.src, ctx.problems)  # the model folder, its sources


def _outputs(config: Config) -> list[tuple[str, str]]:
    from autograde.calibrated.workflow import calibrated_section

    if calibrated_section(config) is None:
        return []
    return [("calibrated qrels report", Layout.of(config.results_dir).calibrated("report.md"))]


FEATURE = Feature("calibrated", section="calibrated_qrels", rules=("calibrated.smk",), targets=_targets,
                  leaderboards=calibrated_leaderboards, input_files=_input_files, check_inputs=_check_inputs,
                  outputs=_outputs, qrels=calibrated_qrels)
"""Calibrated qrels (docs/rubric.md)."""
