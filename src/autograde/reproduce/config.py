"""The reproduction plan (``config/reproduce/reproduce.yaml``): which tables to rebuild, from which files, how.

>>> plan = ReproduceConfig.model_validate({"papers": []})
>>> plan.table_names()[:3], plan.results_dir
(['workbench_spurious', 'workbench_agreement', 'llm_rubric_synthetic'], 'results')

Every table's settings name its input files; :meth:`TableSettings.inputs` lists them with where each comes
from publicly, so a table whose file is absent says so ("input missing: ...") instead of failing the others.
Paper values are not here: they are data in the paper YAML files listed under ``papers``
(:mod:`autograde.reproduce.papers`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field, ValidationError, model_validator

from autograde.config.rubric import CalibratedQrelsConfig, RubricConfig
from autograde.core.errors import ConfigError
from autograde.core.layout import MissingQueries
from autograde.core.schema import Strict

__all__ = ["DEFAULT_PLAN", "PLAN_ENV", "InputFile", "ReproduceConfig", "load_plan", "plan_path"]

DEFAULT_PLAN = "config/reproduce/reproduce.yaml"
"""The reproduction plan ``make reproduce`` uses unless ``$AUTOGRADE_REPRODUCE`` names another."""
PLAN_ENV = "AUTOGRADE_REPRODUCE"
"""Environment variable naming the reproduction plan (the workflow's ``--config`` belongs to the experiment)."""
DL20 = "../shared/data/dl20"
SYNTH = "../shared/data/llm-rubric/synthetic"
REAL = "../shared/data/llm-rubric/real"
TREC_EVAL = "../shared/data/trec_eval"
ULTRARAG = "../shared/data/ultrarag"


@dataclass(frozen=True)
class InputFile:
    """One input file of a table: what it is, where it is expected, and where it comes from publicly."""

    what: str
    path: str
    origin: str

    def missing_message(self) -> str:
        return (f"input missing: {self.what} ({self.path}), from {self.origin} (make data downloads the reference "
                "data; docs/data.md)")


def _section_problems(build: Any, key: str) -> str:
    """Run ``build`` (which validates a rubric-stage section); its problems as one line ('' when valid)."""
    try:
        build()
    except ValidationError as exc:
        return "; ".join(f"{key}.{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())
    return ""




class TableSettings(Strict):
    """Base of every table's settings: the input files it reads."""

    ORIGINS: ClassVar[dict[str, tuple[str, str]]] = {}
    """field name -> (what the file is, where it comes from publicly)."""

    def inputs(self) -> list[InputFile]:
        """Every input file of the table (optional ones only when configured)."""
        out = []
        for name, (what, origin) in self.ORIGINS.items():
            value = getattr(self, name)
            paths = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else [value]
            out += [InputFile(what, str(p), origin) for p in paths if p]
        return out


class SpuriousSettings(TableSettings):
    """The Rubric-Grading Workbench paper (Dietz, SIGIR 2024), section 6: spurious test bank entries and missing-in-bank passages of query 940547."""

    ORIGINS: ClassVar[dict[str, tuple[str, str]]] = {"grid": (
        "FLAN-T5-large grading grid of DL20 query 940547", "TREMA-UNH/rubric-evaluation dl20-manual-verification/"
        "DL20-display-selection-rocknroll.gnumeric (sheet full-data) with the DL20 qrels; no public file of its "
        "own (docs/data.md)")}
    grid: str = Field(default="../shared/data/dl20-rocknroll-grid/grid-full.jsonl",
                      description="the grading grid: one JSON object per passage x question with the FLAN-T5-large "
                      "rating, the extracted answer and the TREC judgment")
    threshold: int = Field(default=4, description="grade tau: an item covers a passage when its grade >= tau")
    nonrelevant: list[int] = Field(default_factory=lambda: [0], description="judgments counted as non-relevant "
                                   "(the paper counts judgment 0 only)")
    relevance_level: int = Field(default=2, description="judgment >= this is relevant (missing-in-bank passages)")
    top: int = Field(default=3, ge=1, description="how many of the most spurious items are reported")


class AgreementSettings(TableSettings):
    """The Rubric-Grading Workbench paper (Dietz, SIGIR 2024), Table 5: released prompt-class qrels against the official judgments (Cohen's kappa)."""

    ORIGINS: ClassVar[dict[str, tuple[str, str]]] = {
        "judgments": ("official TREC DL 2020 passage qrels", "the topics-and-qrels resources of pyserini 0.17.0 "
                      "(qrels.dl20-passage.txt)"),
        "sources": ("the original workbench's autograded DL20 qrels", "TREMA-UNH/rubric-evaluation phase3-qrels/dl20/")}
    judgments: str = Field(default=f"{DL20}/qrels.dl20-passage.txt", description="human qrels (0-3)")
    sources: dict[str, str] = Field(default_factory=lambda: {
        "Question": f"{DL20}/autograded-qrels/QuestionSelfRatedUnanswerablePromptWithChoices.qrel",
        "Nugget": f"{DL20}/autograded-qrels/NuggetSelfRatedPrompt.qrel"},
        description="row label -> qrels file of that prompt class (label = max self-rating 0-5)")
    threshold: int = Field(default=4, description="label >= this counts as relevant (the paper's grade 4-5)")
    relevance_level: int = Field(default=2, description="judgment >= this is relevant (DL practice: 2-3)")


class RubricSyntheticSettings(TableSettings):
    """LLM-RUBRIC Table 1, left: cross-validated evaluation on the synthetic dialogues."""

    ORIGINS: ClassVar[dict[str, tuple[str, str]]] = {
        "llm": ("gpt-3.5-turbo-16k answer distributions of the synthetic dialogues",
                "microsoft/LLM-Rubric data/synth_data/gpt-3.5-turbo-16k_synth_evaluations_FIXED.tsv (MIT)"),
        "human": ("human judges' answers on the synthetic dialogues",
                  "microsoft/LLM-Rubric data/synth_data/human_judges_synth_all_FIXED_ANON.tsv (MIT)"),
        "texts": ("synthetic dialogue ids", "microsoft/LLM-Rubric data/synth_data/synth_dialogue_ids.tsv (MIT)")}
    rubric: str = Field(default="config/rubric/dialogue.yaml", description="rubric YAML (Q0..Q8)")
    llm: str = Field(default=f"{SYNTH}/gpt-3.5-turbo-16k_synth_evaluations_FIXED.tsv",
                     description="LLM answer distributions (LLM-RUBRIC TSV)")
    human: str = Field(default=f"{SYNTH}/human_judges_synth_all_FIXED_ANON.tsv", description="human answers")
    texts: str | None = Field(default=f"{SYNTH}/synth_dialogue_ids.tsv", description="only these dialogues")
    settings: dict[str, Any] = Field(default_factory=dict, description="further keys of the 'rubric:' config "
                                     "section (network, selection, evaluation: folds and seeds); see docs/rubric.md")

    def rubric_config(self) -> RubricConfig:
        """The ``rubric:`` section these settings stand for (validated by the rubric stage's own model)."""
        return RubricConfig.model_validate({**self.settings, "rubric": self.rubric, "llm": self.llm,
                                            "human": self.human, "texts": self.texts})

    @model_validator(mode="after")
    def _settings_valid(self) -> RubricSyntheticSettings:
        problems = _section_problems(self.rubric_config, "settings")
        if problems:
            raise ValueError(problems)
        return self


class RubricRealSettings(TableSettings):
    """LLM-RUBRIC Table 1, right: train on all synthetic dialogues, predict the real dialogues' judges."""

    ORIGINS: ClassVar[dict[str, tuple[str, str]]] = {
        "llm": ("gpt-3.5-turbo-16k answer distributions of the real dialogues",
                "microsoft/LLM-Rubric data/real_data/gpt-3.5-turbo-16k_real_evaluations_FIXED.tsv (MIT); copy it to "
                "the path given here"),
        "human": ("the real dialogues' judges' answers", "microsoft/LLM-Rubric data/real_data/"
                  "human_judges_real_convs_FIXED_ANON.tsv (MIT); copy it to the path given here"),
        "texts": ("real dialogue ids", "microsoft/LLM-Rubric data/real_data/real_dialogue_ids.tsv (MIT)")}
    rubric: str = Field(default="config/rubric/dialogue.yaml", description="rubric YAML of the real judges' answers")
    llm: str = Field(default=f"{REAL}/gpt-3.5-turbo-16k_real_evaluations_FIXED.tsv",
                     description="LLM answer distributions of the real dialogues")
    human: str = Field(default=f"{REAL}/human_judges_real_convs_FIXED_ANON.tsv",
                       description="the real dialogues' human answers (one judge each)")
    texts: str | None = Field(default=None, description="optional: only these real dialogues")
    seeds: list[int] = Field(default_factory=lambda: list(range(10)), min_length=1,
                             description="one fit on all synthetic dialogues per seed (mean and sd over seeds)")


class CalibratedSettings(TableSettings):
    """Calibrated relevance labels on DL20 against the best single prompt (beyond the papers)."""

    ORIGINS: ClassVar[dict[str, tuple[str, str]]] = {
        "judgments": AgreementSettings.ORIGINS["judgments"], "sources": AgreementSettings.ORIGINS["sources"]}
    sources: list[str] = Field(default_factory=lambda: [f"{DL20}/autograded-qrels/{p}.qrel" for p in (
        "FagB", "FagB_few", "HELM", "NuggetSelfRatedPrompt", "QuestionSelfRatedUnanswerablePromptWithChoices",
        "Sun", "Sun_few", "Thomas")], description="the graders' qrels the network combines")
    judgments: str = Field(default=f"{DL20}/qrels.dl20-passage.txt", description="the assessors' qrels (main task)")
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1,
                             description="fold assignment and network seeds (mean and sd over seeds)")
    settings: dict[str, Any] = Field(default_factory=dict, description="further keys of the 'calibrated_qrels:' "
                                     "section (levels, features, folds, network); see docs/rubric.md")

    def calibrated_config(self, seed: int) -> CalibratedQrelsConfig:
        """The ``calibrated_qrels:`` section of one seed."""
        return CalibratedQrelsConfig.model_validate({**self.settings, "sources": self.sources,
                                                     "judgments": self.judgments, "seed": seed})

    @model_validator(mode="after")
    def _settings_valid(self) -> CalibratedSettings:
        problems = _section_problems(lambda: self.calibrated_config(self.seeds[0]), "settings")
        if problems:
            raise ValueError(problems)
        return self


class TrecEvalCase(Strict):
    """One golden output of trec_eval's own test folder and the options it was made with."""

    name: str = Field(description="row label (the trec_eval command line it stands for)")
    qrels: str = Field(description="qrels file name in the trec_eval folder")
    run: str = Field(description="run file name in the trec_eval folder")
    golden: str = Field(description="trec_eval's output for these files and options (-q: per query and 'all')")
    missing_queries: MissingQueries = Field(default="skip", description="zero = trec_eval -c")
    relevance_level: int = Field(default=1, description="trec_eval -l")


class TrecEvalSettings(TableSettings):
    """Retrieval-metric parity with trec_eval's golden outputs (usnistgov/trec_eval test/)."""

    ORIGINS: ClassVar[dict[str, tuple[str, str]]] = {"folder": (
        "trec_eval's test files and golden outputs", "usnistgov/trec_eval test/ (qrels.test, results.test, "
        "results.trunc, qrels.rel_level, out.test*)")}
    folder: str = Field(default=TREC_EVAL, description="folder holding the test files and golden outputs")
    cases: list[TrecEvalCase] = Field(default_factory=lambda: [
        TrecEvalCase(name="trec_eval -q", qrels="qrels.test", run="results.test", golden="out.test.aq"),
        TrecEvalCase(name="trec_eval -q -c (topic 302 missing)", qrels="qrels.test", run="results.trunc",
                     golden="out.test.aqc", missing_queries="zero"),
        TrecEvalCase(name="trec_eval -q -l 2", qrels="qrels.rel_level", run="results.test", golden="out.test.aql",
                     relevance_level=2)], description="the golden outputs compared")
    measures: list[str] = Field(default_factory=lambda: ["map", "Rprec", "recip_rank"] + [
        f"{m}_{k}" for m in ("P", "recall", "ndcg_cut") for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)],
        description="every measure compared per query and in the summary")
    shown: list[str] = Field(default_factory=lambda: ["map", "recip_rank", "P_10", "ndcg_cut_10", "recall_1000"],
                             description="measures whose summary ('all') value gets its own row in the index")

    def inputs(self) -> list[InputFile]:
        what, origin = self.ORIGINS["folder"]
        files = sorted({f for c in self.cases for f in (c.qrels, c.run, c.golden)})
        return [InputFile(f"{what}: {f}", f"{self.folder}/{f}", origin) for f in files]


class GenerationCase(Strict):
    """One prediction scored against gold answers (values derived by hand from the reference server's code)."""

    name: str = Field(description="row label")
    golds: list[str] = Field(min_length=1, description="gold answers")
    prediction: str = Field(description="the predicted answer")


class ServerSettings(TableSettings):
    """Evaluation-server parity (UltraRAG): retrieval measures, significance test, generation metrics."""

    ORIGINS: ClassVar[dict[str, tuple[str, str]]] = {
        "qrels": ("the evaluation server's synthetic 100-query qrels", "OpenBMB/UltraRAG history (c2c7eec)"),
        "runs": ("the evaluation server's A/B example runs", "OpenBMB/UltraRAG history (c2c7eec)")}
    qrels: str = Field(default=f"{ULTRARAG}/qrels.txt", description="qrels of the A/B example")
    runs: list[str] = Field(default_factory=lambda: [f"{ULTRARAG}/run_a.txt", f"{ULTRARAG}/run_b.txt"],
                            min_length=1, description="runs (the first two also go through the significance test)")
    cutoff: int = Field(default=10, ge=1, description="cutoff of ndcg@k, P@k, recall@k")
    permutation_resamples: int = Field(default=10000, ge=100, description="sign flips of the paired test")
    permutation_seed: int = Field(default=0, description="seed of the paired test (scipy uses seed + 1)")
    cases: list[GenerationCase] = Field(default_factory=list, description="generation-metric cases (the expected "
                                        "values are in the paper YAML)")


class Tables(Strict):
    """One entry per reproducible table; null leaves the table out."""

    workbench_spurious: SpuriousSettings | None = Field(default_factory=SpuriousSettings,
                                                        description="workbench paper, section 6 (spurious entries)")
    workbench_agreement: AgreementSettings | None = Field(default_factory=AgreementSettings,
                                                          description="workbench paper, Table 5 (agreement)")
    llm_rubric_synthetic: RubricSyntheticSettings | None = Field(default_factory=RubricSyntheticSettings,
                                                                 description="LLM-RUBRIC Table 1, left side")
    llm_rubric_real: RubricRealSettings | None = Field(default_factory=RubricRealSettings,
                                                       description="LLM-RUBRIC Table 1, right side (real dialogues)")
    calibrated_qrels_dl20: CalibratedSettings | None = Field(default_factory=CalibratedSettings,
                                                             description="calibrated qrels vs single prompts")
    trec_eval_parity: TrecEvalSettings | None = Field(default_factory=TrecEvalSettings,
                                                      description="trec_eval golden outputs")
    evaluation_server_parity: ServerSettings | None = Field(default_factory=ServerSettings,
                                                            description="the evaluation server (UltraRAG)")


class ReproduceConfig(Strict):
    """The reproduction plan: where outputs go, the paper YAML files, and each table's settings."""

    results_dir: str = Field(default="results", description="outputs go to <results_dir>/reproduction/")
    papers: list[str] = Field(description="paper YAML files: each paper's published values (value, table, row, "
                              "column) and why ours may differ")
    tables: Tables = Field(default_factory=Tables, description="the tables to rebuild and their inputs")

    def table_names(self) -> list[str]:
        """The enabled tables, in the plan's order."""
        return [n for n in Tables.model_fields if getattr(self.tables, n) is not None]

    def table(self, name: str) -> TableSettings:
        """One enabled table's settings (an :class:`~autograde.core.errors.UnknownNameError` otherwise)."""
        from autograde.core.errors import UnknownNameError

        value = getattr(self.tables, name, None) if name in Tables.model_fields else None
        if value is None:
            raise UnknownNameError(f"unknown or disabled table {name!r} (fix: one of {', '.join(self.table_names())})")
        return value


def plan_path(given: str | None = None) -> str:
    """The plan file: ``given``, else ``$AUTOGRADE_REPRODUCE``, else :data:`DEFAULT_PLAN`."""
    return str(given or os.environ.get(PLAN_ENV) or DEFAULT_PLAN)


def validated(model: type[Strict] | type[BaseModel], raw: Any, source: str | Path, what: str) -> Any:
    """``raw`` validated by ``model``; a :class:`ConfigError` naming every problem with its line otherwise."""
    from autograde.config.model import error_lines
    from autograde.core.yamlfile import yaml_key_lines

    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a YAML mapping (a {what}), got {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        key_lines = yaml_key_lines(source) if Path(source).is_file() else {}
        lines = error_lines(exc, model, key_lines=key_lines)
        located = [f"{source}:{x[5:]}" if x.startswith("line ") else f"{source}: {x}" for x in lines]
        raise ConfigError("\n".join([f"{source}: {len(lines)} problem(s) in the {what}:",
                                     *(f"  - {x}" for x in located),
                                     f"  (fix: see the comments in {DEFAULT_PLAN} and docs/reproduce.md)"])) from None


def load_plan(path: str | Path | None = None) -> ReproduceConfig:
    """Read and validate the reproduction plan (strict YAML; every problem with its line)."""
    from autograde.core.yamlfile import read_yaml

    p = plan_path(str(path) if path else None)
    return validated(ReproduceConfig, read_yaml(p, "reproduction plan") or {}, p,
                     "reproduction plan")
