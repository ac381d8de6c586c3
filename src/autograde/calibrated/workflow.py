"""What the calibrated-qrels rules (``rules/calibrated.smk``) and ``rule all`` read from the experiment config: the
section, the qrels variant, output paths and input files.

Kept apart from :mod:`autograde.calibrated.stages` because the Snakefile imports it when it is parsed: it must not
load torch, scipy or the training code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.layout import CALIBRATED, Layout

if TYPE_CHECKING:
    from autograde.config.model import Config
    from autograde.config.rubric import CalibratedQrelsConfig


def calibrated_section(config: Config) -> CalibratedQrelsConfig | None:
    """The experiment's ``calibrated_qrels:`` section when present and enabled, else None."""
    from autograde.core.schema import enabled

    return enabled(config.calibrated_qrels)


def calibrated_qrels_variant(cfg: CalibratedQrelsConfig) -> str:
    """The qrels variant name of the calibrated labels: ``<output>-<trec_eval relevance level>``."""
    return f"{cfg.output}-{calibrated_qrels_level(cfg)}"


def _model_relevant_level(model: str) -> int:
    """The relevant level a model folder was fitted with (read from its header, version checked)."""
    from autograde.calibrated.model import read_header

    return int(read_header(Path(model))["relevant_level"])


def calibrated_qrels_level(cfg: CalibratedQrelsConfig) -> int:
    """trec_eval relevance level (-l) of the calibrated labels: the relevant level (the model's when applying a
    model), 50 for probabilities."""
    if cfg.output == "probability":
        return 50
    return _model_relevant_level(cfg.model) if cfg.model else int(cfg.level)


def calibrated_qrels_files(results: str | Path, cfg: CalibratedQrelsConfig | None) -> dict[str, str]:
    """Output paths of the calibrated-qrels rules: the qrels sit beside the other qrels variants; a training spec
    also fits a model folder on all judgments (for other collections: ``calibrated_qrels.model``). Without the
    section (``cfg`` None) the paths of rules that never run."""
    lay = Layout.of(results)
    variant = calibrated_qrels_variant(cfg) if cfg is not None else "off"
    files = {"qrels": lay.qrels(CALIBRATED, variant), "report": lay.calibrated("report.json"),
             "report_md": lay.calibrated("report.md"), "table": lay.calibrated("passages.parquet")}
    if cfg is None or not cfg.model:
        files["model"] = lay.calibrated_model
    return files


def calibrated_inputs(cfg: CalibratedQrelsConfig | None) -> dict[str, Any]:
    """The input files of the calibrated-qrels rules: the graders' outputs, the judgments (when given) and, when
    applying, the model folder."""
    if cfg is None:
        return {}
    inputs: dict[str, Any] = {"sources": list(cfg.sources)}
    if cfg.judgments:
        inputs["judgments"] = cfg.judgments
    if cfg.model:
        inputs["model"] = cfg.model
    return inputs


def calibrated_targets(config: Config) -> list[str]:
    """Every file the calibrated-qrels rules make for ``rule all`` (``[]`` when the section is off)."""
    cfg = calibrated_section(config)
    return [] if cfg is None else list(calibrated_qrels_files(config.results_dir, cfg).values())


class CalibratedRules:
    """Inputs, outputs and params of the calibrated-qrels rules for one workflow context (defined whether or not the
    section is on: without it they are never asked for)."""

    def __init__(self, config: Config) -> None:
        self.section = calibrated_section(config)
        self.files = calibrated_qrels_files(config.results_dir, self.section)
        if "model" not in self.files:
            self.files["model"] = Layout.of(config.results_dir).calibrated_model

    def inputs(self, wildcards: Any) -> dict[str, Any]:
        return calibrated_inputs(self.section)

    def params(self, wildcards: Any) -> dict[str, Any]:
        """The section as plain data (an edit reruns exactly these rules)."""
        return self.section.model_dump() if self.section is not None else {}
