"""What rules/rubric.smk and ``rule all`` read from the experiment config: sections, output paths, input files.

Kept apart from :mod:`autograde.rubric.stages` because the Snakefile imports it when it is parsed (every
``snakemake`` call, dry runs included): it must not load torch, scipy or the training code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autograde.config.rubric import RubricConfig
from autograde.core.errors import Problems


def rubric_section(config: Any) -> RubricConfig | None:
    """The experiment's ``rubric:`` section when present and enabled (a model or a plain mapping), else None."""
    section = getattr(config, "rubric", None) if not isinstance(config, dict) else config.get("rubric")
    if section is None:
        return None
    cfg = section if isinstance(section, RubricConfig) else RubricConfig.model_validate(section)
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
    from autograde.core.layout import Layout

    r = Layout.of(results).rubric
    files = {"model": r("model.pt"), "fit": r("fit.json"), "evaluation": r("evaluation.json"),
             "evaluation_md": r("evaluation.md"), "evaluation_tex": r("evaluation.tex"),
             "cv_predictions": r("cv_predictions.parquet"), "reliability": r("reliability.svg"),
             **{f"predict:{name}": r(f"predictions/{name}.parquet") for name in rubric_predict_sources(cfg)}}
    if cfg.test is not None:
        files.update({"transfer": r("transfer.json"), "transfer_md": r("transfer.md"), "transfer_tex": r("transfer.tex")})
    return files


def rubric_targets(config: Any) -> list[str]:
    """Every file the LLM-RUBRIC rules make for ``rule all`` (``[]`` when the section is off)."""
    results = config.results_dir if not isinstance(config, dict) else config.get("results_dir", "results")
    out: list[str] = []
    rubric = rubric_section(config)
    if rubric is not None:
        out += list(rubric_files(results, rubric).values())
    return out


def rubric_inputs(cfg: RubricConfig, with_test: bool = False) -> dict[str, str]:
    """The input files of rubric_fit / rubric_evaluate: rubric, LLM table, human table (+ the text list); with
    ``with_test`` also the test set's (rubric_transfer)."""
    from autograde.rubric.definition import rubric_file

    inputs = {"rubric": str(rubric_file(cfg.rubric)), "llm": cfg.llm, "human": cfg.human}
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
