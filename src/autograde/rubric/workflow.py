"""What rules/rubric.smk and ``rule all`` read from the experiment config: sections, output paths, input files.

Kept apart from :mod:`autograde.rubric.stages` because the Snakefile imports it when it is parsed (every
``snakemake`` call, dry runs included): it must not load torch, scipy or the training code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autograde.errors import Problems
from autograde.rubric.config import RubricConfig


def rubric_section(config: Any) -> RubricConfig | None:
    """The experiment's ``rubric:`` section when present and enabled (a model or a plain mapping), else None."""
    section = getattr(config, "rubric", None) if not isinstance(config, dict) else config.get("rubric")
    if section is None:
        return None
    cfg = section if isinstance(section, RubricConfig) else RubricConfig.model_validate(section)
    return cfg if cfg.enabled else None


def calibrated_section(config: Any) -> Any:
    """The experiment's ``calibrated_qrels:`` section when present and enabled, else None."""
    from autograde.rubric.config import CalibratedQrelsConfig

    section = (getattr(config, "calibrated_qrels", None) if not isinstance(config, dict)
               else config.get("calibrated_qrels"))
    if section is None:
        return None
    cfg = section if isinstance(section, CalibratedQrelsConfig) else CalibratedQrelsConfig.model_validate(section)
    return cfg if cfg.enabled else None


def rubric_predict_sources(cfg: RubricConfig | None) -> dict[str, str]:
    """name -> LLM table for every ``rubric.predict`` entry (name: the file name without its extension)."""
    if cfg is None:
        return {}
    out: dict[str, str] = {}
    problems = Problems()
    for path in cfg.predict:
        name = Path(path).name.split(".")[0]
        if name in out:
            problems.add("rubric.predict", None, f"two entries are named {name!r} ({out[name]}, {path})",
                         "give the LLM tables to predict distinct file names")
        out[name] = path
    problems.raise_if_any()
    return out


def rubric_files(results: str | Path, cfg: RubricConfig) -> dict[str, str]:
    """Output paths of the rubric rules under ``results``."""
    from autograde.layout import Layout

    r = Layout.of(results).rubric
    files = {"model": r("model.pt"), "fit": r("fit.json"), "evaluation": r("evaluation.json"),
             "evaluation_md": r("evaluation.md"), "evaluation_tex": r("evaluation.tex"),
             "cv_predictions": r("cv_predictions.parquet"), "reliability": r("reliability.svg"),
             **{f"predict:{name}": r(f"predictions/{name}.parquet") for name in rubric_predict_sources(cfg)}}
    if cfg.test is not None:
        files.update({"transfer": r("transfer.json"), "transfer_md": r("transfer.md"), "transfer_tex": r("transfer.tex")})
    return files


def calibrated_qrels_variant(cfg: Any) -> str:
    """The qrels variant name of the calibrated labels: ``<output>-<trec_eval relevance level>``."""
    return f"{cfg.output}-{calibrated_qrels_level(cfg)}"


def _model_relevant_level(model: str) -> int:
    """The relevant level a model folder was fitted with (read from its header, version checked)."""
    from autograde.rubric.qrels_model import read_header

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
    from autograde.layout import Layout

    lay = Layout.of(results)
    files = {"qrels": lay.qrels("calibrated", calibrated_qrels_variant(cfg)), "report": lay.calibrated("report.json"),
             "report_md": lay.calibrated("report.md"), "table": lay.calibrated("passages.parquet")}
    if not cfg.model:
        files["model"] = lay.calibrated_model
    return files


def rubric_targets(config: Any) -> list[str]:
    """Every file the rubric rules make for ``rule all`` (``[]`` when neither section is enabled)."""
    results = config.results_dir if not isinstance(config, dict) else config.get("results_dir", "results")
    out: list[str] = []
    rubric = rubric_section(config)
    if rubric is not None:
        out += list(rubric_files(results, rubric).values())
    calibrated = calibrated_section(config)
    if calibrated is not None:
        out += list(calibrated_qrels_files(results, calibrated).values())
    return out


def rubric_inputs(cfg: RubricConfig, with_test: bool = False) -> dict[str, str]:
    """The input files of rubric_fit / rubric_evaluate: rubric, LLM table, human table (+ the text list); with
    ``with_test`` also the test set's (rubric_transfer)."""
    inputs = {"rubric": cfg.rubric, "llm": cfg.llm, "human": cfg.human}
    if cfg.texts:
        inputs["texts"] = cfg.texts
    if with_test and cfg.test is not None:
        inputs.update({"test_llm": cfg.test.llm, "test_human": cfg.test.human})
        if cfg.test.texts:
            inputs["test_texts"] = cfg.test.texts
    return inputs


def rubric_predict_input(cfg: RubricConfig) -> Any:
    """Input function of rubric_predict: the LLM table named by the ``{name}`` wildcard."""
    sources = rubric_predict_sources(cfg)

    def llm_table(wildcards: Any) -> str:
        return sources[wildcards.name]

    return llm_table


def calibrated_inputs(cfg: Any) -> dict[str, Any]:
    """The input files of the calibrated-qrels rules: the graders' outputs, the judgments (when given) and, when
    applying, the model folder."""
    inputs: dict[str, Any] = {"sources": list(cfg.sources)}
    if cfg.judgments:
        inputs["judgments"] = cfg.judgments
    if cfg.model:
        inputs["model"] = cfg.model
    return inputs
