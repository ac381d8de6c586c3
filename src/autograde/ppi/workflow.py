"""What ``rules/ppi.smk`` and ``rule all`` read from the experiment config at parse time: the predictions (named),
the measures, the rule's inputs, outputs and params. Imports nothing heavy (the Snakefile imports it when parsed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autograde.config.human_sample import PredictionConfig
from autograde.core.layout import CALIBRATED, Layout, QrelsVariant

if TYPE_CHECKING:
    from autograde.config.model import Config


def predictions_of(config: Config) -> list[PredictionConfig]:
    """The configured predictions, or every grader's first qrels variant (named after the grader)."""
    h = config.human_sample
    if h is None:
        return []
    if h.predictions:
        return list(h.predictions)
    return [PredictionConfig(name=g.name, grader=g.name) for g in config.graders]


def measures_of(config: Config) -> list[str]:
    """The measures to estimate: ``human_sample.measures``, or those of ``evaluation.measures`` a sample can
    estimate."""
    from autograde.metrics.estimable import estimable

    h = config.human_sample
    if h is not None and h.measures is not None:
        return list(h.measures)
    return [m for m in config.evaluation.measures if estimable(m) is not None]


def relevance_level_of(config: Config) -> int:
    """The estimates' relevance level: ``human_sample.relevance_level`` (``evaluation.relevance_level`` unless the
    section sets its own)."""
    h = config.human_sample
    return int(h.relevance_level if h is not None and h.relevance_level is not None
               else config.evaluation.relevance_level)


def prediction_source(cfg: PredictionConfig, config: Config) -> tuple[str, str, float | None]:
    """(kind, path, default threshold) of a prediction: ``qrels``, ``table`` or ``grades``."""
    lay = Layout.of(config.results_dir)
    if cfg.grader == CALIBRATED:
        return "table", lay.calibrated("passages.parquet"), None
    if cfg.grader is not None:
        variant = cfg.variant or config.qrels_variants_of(cfg.grader)[0]
        return "qrels", lay.qrels(cfg.grader, variant), float(QrelsVariant.parse(variant).level)
    if cfg.qrels is not None:
        return "qrels", cfg.qrels, None
    if cfg.table is not None:
        return "table", cfg.table, None
    assert cfg.grades is not None
    return "grades", cfg.grades, None


def prediction_files(cfg: PredictionConfig, config: Config) -> list[str]:
    """The file a prediction reads (a workflow input)."""
    return [prediction_source(cfg, config)[1]]


def estimate_outputs(config: Config) -> dict[str, str]:
    """Output files of the estimates rule: ``summary`` and, per prediction, ``<name>.estimates`` and
    ``<name>.differences``."""
    lay = Layout.of(config.results_dir)
    out = {"summary": lay.human_sample("summary.json")}
    for p in predictions_of(config):
        out[f"{p.name}.estimates"] = lay.human_sample(f"{p.name}/estimates.tsv")
        out[f"{p.name}.differences"] = lay.human_sample(f"{p.name}/differences.tsv")
    return out


def estimate_inputs(config: Config) -> dict[str, Any]:
    """Input files of the estimates rule: the pool, the rankings, the sample, the design, every prediction's file
    (a change of any of them reruns it; nothing else does)."""
    h = config.human_sample
    lay = Layout.of(config.results_dir)
    inputs: dict[str, Any] = {"pool": lay.pool, "rankings": lay.ingest("rankings")}
    if h is not None and h.qrels:
        inputs["sample"] = h.qrels
    if h is not None and h.design:
        inputs["design"] = h.design
    inputs["predictions"] = sorted({f for p in predictions_of(config) for f in prediction_files(p, config)})
    return inputs


def estimate_params(config: Config) -> dict[str, Any]:
    """Every setting the estimates depend on (a changed one reruns the rule)."""
    h = config.human_sample
    return {"section": h.model_dump() if h is not None else None, "measures": measures_of(config),
            "relevance_level": relevance_level_of(config), "missing_queries": config.evaluation.missing_queries,
            "predictions": [p.model_dump() for p in predictions_of(config)]}


def human_sample_targets(config: Config) -> list[str]:
    """The estimates ``rule all`` builds for ``human_sample:`` (nothing without judgments yet)."""
    h = config.human_sample
    if h is None or not h.qrels:
        return []
    return list(estimate_outputs(config).values())


def judging_output(config: Config) -> str | None:
    """The judging page's data (``results/human_sample/judging.json``) when a design file exists and the page is on."""
    from pathlib import Path

    h = config.human_sample
    if h is None or not h.design or not h.judging_page or not Path(h.design).is_file():
        return None
    return Layout.of(config.results_dir).human_sample("judging.json")


def judging_inputs(config: Config) -> dict[str, Any]:
    """Inputs of the judging page's data: the design, the pool, the queries and the judgments so far (none without
    a design: the rule is then never asked for)."""
    from pathlib import Path

    h = config.human_sample
    if h is None or not h.design:
        return {}
    lay = Layout.of(config.results_dir)
    inputs: dict[str, Any] = {"design": h.design, "pool": lay.pool, "queries": lay.ingest("queries")}
    if h.qrels and Path(h.qrels).is_file():
        inputs["sample"] = h.qrels
    return inputs


def site_inputs(config: Config) -> list[str]:
    """What the review site's human-sample pages read: the estimates and the judging page's data."""
    judge = judging_output(config)
    return human_sample_targets(config) + ([judge] if judge else [])


def draw_paths(config: Config) -> dict[str, str]:
    """Where ``autograde sample`` keeps the experiment's own draws (under the results folder, never an input file):
    ``design``, ``sample`` (the judgments of its passages), ``dir`` (worklists and estimates beside them)."""
    lay = Layout.of(config.results_dir)
    return {"dir": lay.human_sample("draw"), "design": lay.human_sample("draw/design.tsv"),
            "sample": lay.human_sample("draw/sample.qrels")}
