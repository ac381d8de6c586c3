"""What the calibrated-qrels rules (``rules/calibrated.smk``) and ``rule all`` read from the experiment config: the
section, the qrels variant, output paths and input files.

Kept apart from :mod:`autograde.calibrated.stages` because the Snakefile imports it when it is parsed: it must not
load torch, scipy or the training code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def calibrated_section(config: Any) -> Any:
    """The experiment's ``calibrated_qrels:`` section when present and enabled, else None."""
    from autograde.config.rubric import CalibratedQrelsConfig

    section = (getattr(config, "calibrated_qrels", None) if not isinstance(config, dict)
               else config.get("calibrated_qrels"))
    if section is None:
        return None
    cfg = section if isinstance(section, CalibratedQrelsConfig) else CalibratedQrelsConfig.model_validate(section)
    return cfg if cfg.enabled else None


def calibrated_qrels_variant(cfg: Any) -> str:
    """The qrels variant name of the calibrated labels: ``<output>-<trec_eval relevance level>``."""
    return f"{cfg.output}-{calibrated_qrels_level(cfg)}"


def _model_relevant_level(model: str) -> int:
    """The relevant level a model folder was fitted with (read from its header, version checked)."""
    from autograde.calibrated.model import read_header

    return int(read_header(Path(model))["relevant_level"])


def calibrated_qrels_level(cfg: Any) -> int:
    """trec_eval relevance level (-l) of the calibrated labels: the relevant level (the model's when applying a
    model), 50 for probabilities."""
    if cfg.output == "probability":
        return 50
    return _model_relevant_level(cfg.model) if cfg.model else int(cfg.relevant_level)


def calibrated_qrels_files(results: str | Path, cfg: Any) -> dict[str, str]:
    """Output paths of the calibrated-qrels rules: the qrels sit beside the other qrels variants; a training spec
    also fits a model folder on all judgments (for other collections: ``calibrated_qrels.model``)."""
    from autograde.core.layout import Layout

    lay = Layout.of(results)
    files = {"qrels": lay.qrels("calibrated", calibrated_qrels_variant(cfg)), "report": lay.calibrated("report.json"),
             "report_md": lay.calibrated("report.md"), "table": lay.calibrated("passages.parquet")}
    if not cfg.model:
        files["model"] = lay.calibrated_model
    return files


def calibrated_inputs(cfg: Any) -> dict[str, Any]:
    """The input files of the calibrated-qrels rules: the graders' outputs, the judgments (when given) and, when
    applying, the model folder."""
    inputs: dict[str, Any] = {"sources": list(cfg.sources)}
    if cfg.judgments:
        inputs["judgments"] = cfg.judgments
    if cfg.model:
        inputs["model"] = cfg.model
    return inputs


def calibrated_targets(config: Any) -> list[str]:
    """Every file the calibrated-qrels rules make for ``rule all`` (``[]`` when the section is off)."""
    results = config.results_dir if not isinstance(config, dict) else config.get("results_dir", "results")
    cfg = calibrated_section(config)
    return [] if cfg is None else list(calibrated_qrels_files(results, cfg).values())
