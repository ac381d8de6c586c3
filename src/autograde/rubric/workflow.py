"""What rules/rubric.smk and ``rule all`` read from the experiment config: sections, output paths, input files.

Kept apart from :mod:`autograde.rubric.stages` because the Snakefile imports it when it is parsed (every
``snakemake`` call, dry runs included): it must not load torch, scipy or the training code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.errors import Problems
from autograde.core.layout import Layout

if TYPE_CHECKING:
    from autograde.config.model import Config
    from autograde.config.rubric import RubricConfig


def rubric_section(config: Config) -> RubricConfig | None:
    """The experiment's ``rubric:`` section when present and enabled, else None."""
    from autograde.core.schema import enabled

    return enabled(config.rubric)


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
    r = Layout.of(results).rubric
    files = {"model": r("model.pt"), "fit": r("fit.json"), "evaluation": r("evaluation.json"),
             "evaluation_md": r("evaluation.md"), "evaluation_tex": r("evaluation.tex"),
             "cv_predictions": r("cv_predictions.parquet"), "reliability": r("reliability.svg"),
             **{f"predict:{name}": r(f"predictions/{name}.parquet") for name in rubric_predict_sources(cfg)}}
    if cfg.test is not None:
        files.update({"transfer": r("transfer.json"), "transfer_md": r("transfer.md"), "transfer_tex": r("transfer.tex")})
    return files


def rubric_targets(config: Config) -> list[str]:
    """Every file the LLM-RUBRIC rules make for ``rule all`` (``[]`` when the section is off)."""
    rubric = rubric_section(config)
    return [] if rubric is None else list(rubric_files(config.results_dir, rubric).values())


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


class RubricRules:
    """Inputs, outputs and params of the LLM-RUBRIC rules for one workflow context (defined whether or not the
    section is on: without it they are never asked for)."""

    def __init__(self, config: Config) -> None:
        self.section = rubric_section(config)
        self.sources = rubric_predict_sources(self.section)
        r = Layout.of(config.results_dir).rubric
        self.files = {"model": r("model.pt"), "fit": r("fit.json"), "evaluation": r("evaluation.json"),
                      "evaluation_md": r("evaluation.md"), "evaluation_tex": r("evaluation.tex"),
                      "cv_predictions": r("cv_predictions.parquet"), "reliability": r("reliability.svg"),
                      "transfer": r("transfer.json"), "transfer_md": r("transfer.md"), "transfer_tex": r("transfer.tex"),
                      "predictions": r("predictions/{name}.parquet")}

    def inputs(self, wildcards: Any) -> dict[str, str]:
        return rubric_inputs(self.section) if self.section is not None else {}

    def transfer_inputs(self, wildcards: Any) -> dict[str, str]:
        return rubric_inputs(self.section, with_test=True) if self.section is not None else {}

    def predict_inputs(self, wildcards: Any) -> dict[str, str]:
        """The model, the rubric and the LLM table named by the ``{name}`` wildcard."""
        if self.section is None:
            return {}
        from autograde.rubric.definition import rubric_file

        return {"model": self.files["model"], "rubric": str(rubric_file(self.section.rubric)),
                "llm": self.sources[wildcards.name]}

    def params(self, wildcards: Any) -> dict[str, Any]:
        """The section as plain data (an edit reruns exactly the rules that read it)."""
        return self.section.model_dump() if self.section is not None else {}

    def llm_format(self, wildcards: Any) -> str:
        return self.section.llm_format if self.section is not None else ""

    def name_constraint(self) -> str:
        return "|".join(sorted(self.sources)) or "NO_PREDICT"
