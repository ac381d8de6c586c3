"""The rubric stage over files: fit, predict, evaluate (the CLI and the Snakemake scripts call these).

Every input problem (rubric, LLM table, human table, text list) is collected and raised together as one
:class:`autograde.core.errors.InputError` before any training starts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, Self

import numpy as np
import pandas as pd

from autograde.config.rubric import Hyperparameters, RubricConfig
from autograde.core.errors import Problems
from autograde.core.log import logger
from autograde.core.tables import write_table
from autograde.core.text import atomic_write_text, iter_lines
from autograde.rubric.cv import select_hyperparameters
from autograde.rubric.dataset import CalibrationData, build_dataset, expected_values, prediction_rows
from autograde.rubric.definition import Rubric, load_rubric, rubric_file
from autograde.rubric.evaluate import evaluate, markdown_report
from autograde.rubric.human_answers import read_human
from autograde.rubric.llm_answers import read_llm
from autograde.rubric.report import write_json
from autograde.rubric.tables import HumanAnswers, LlmAnswers
from autograde.rubric.train import FittedModel, load_network

__all__ = [
    "load_training_data",
    "predictions_frame",
    "provenance",
    "run_evaluate",
    "run_fit",
    "run_predict",
    "run_transfer",
]


def read_text_ids(path: str | Path, problems: Problems) -> set[str]:
    """The ``text_id`` column of a TSV (LLM-RUBRIC's ``synth_dialogue_ids.tsv``)."""
    ids: set[str] = set()
    col: int | None = None
    for n, line in iter_lines(path, problems):
        cells = line.split("\t")
        if col is None:
            if "text_id" not in cells:
                problems.add(path, n, "no text_id column in the header", "give a TSV with a 'text_id' column")
                return ids
            col = cells.index("text_id")
            continue
        if len(cells) > col and cells[col].strip():
            ids.add(cells[col].strip())
    return ids


def _restrict(llm: LlmAnswers, human: HumanAnswers, keep: set[str], source: str | Path) -> str:
    """Keep only the texts in ``keep`` (both tables, in place); returns the note saying what was left out."""
    drop = [t for t in llm.probs if t not in keep]
    for t in drop:
        del llm.probs[t]
    before = len(human.annotations)
    human.annotations = [a for a in human.annotations if a.text_id in keep]
    return (f"text list {source}: left out {len(drop)} text(s) of the LLM table and "
            f"{before - len(human.annotations)} annotation(s) not in the list")


def provenance(cfg: RubricConfig) -> dict[str, Any]:
    """sha256 of every input file and a hash of the settings: which exact LLM outputs a result came from."""
    from autograde.core.ids import content_hash, file_sha256

    files = {"rubric": str(rubric_file(cfg.rubric)), "llm": cfg.llm, "human": cfg.human, "texts": cfg.texts}
    return {"inputs": {k: {"path": str(v), "sha256": file_sha256(str(v))} for k, v in files.items() if v},
            "settings_hash": content_hash(cfg.model_dump(exclude={"enabled", "predict"}))}


def load_training_data(cfg: RubricConfig) -> tuple[Rubric, CalibrationData]:
    """Rubric + LLM table + human table (+ optional text list) -> the training rows; all problems at once."""
    rubric = load_rubric(cfg.rubric)
    problems = Problems()
    llm = read_llm(cfg.llm, rubric, cfg.llm_format, problems)
    human = read_human(cfg.human, rubric, cfg.human_format, problems)
    keep = read_text_ids(cfg.texts, problems) if cfg.texts else None
    problems.raise_if_any()
    notes: tuple[str, ...] = ()
    if keep is not None:
        notes = (_restrict(llm, human, keep, cfg.texts or ""),)
        logger.info("%s", notes[0])
    data = build_dataset(rubric, llm, human, notes)
    if len(data) == 0:
        problems.add(cfg.human, None, "no annotation has LLM distributions for its text",
                     "check that the text ids of the LLM and human tables match")
        problems.raise_if_any()
    logger.info("%d annotations of %d texts by %d judges", len(data), len(set(data.text_ids.tolist())),
                len(set(data.judges.tolist())))
    return rubric, data


class NetworkKind(Protocol):
    """What :func:`run_fit` needs of the estimator registry's ``network`` kind
    (:func:`autograde.calibrated.registry.network_kind`, passed in by the caller: the registry's package sits above
    this one): built from (options, hyperparameters, seeds), fitted on the rubric's rows, saved as its state."""

    network_: FittedModel | None

    def fit_rows(self, data: CalibrationData) -> Self: ...

    def describe(self) -> dict[str, Any]: ...

    def state(self, folder: Path, name: str) -> dict[str, Any]: ...


def run_fit(cfg: RubricConfig, out_model: str | Path, out_report: str | Path,
            network: Callable[[int, Hyperparameters, tuple[int, ...]], NetworkKind]) -> dict[str, Any]:
    """Select hyperparameters (if enabled), fit ``network`` (the registry's kind, :class:`NetworkKind`) on all
    annotations with the seed, save the model (``out_model``, a .pt file) and a JSON report (``estimator``: the
    registry document, which :func:`autograde.calibrated.registry.load_estimator` reads from the model's folder)."""
    out = Path(out_model)
    if out.suffix != ".pt":
        problems = Problems()
        problems.add(out, None, "the model file of LLM-RUBRIC's network is a .pt file",
                     f"give the model path a .pt suffix ({out.with_suffix('.pt')})")
        problems.raise_if_any()
    rubric, data = load_training_data(cfg)
    hp = cfg.network
    table: list[dict[str, float]] = []
    if cfg.selection.enabled:
        hp, table = select_hyperparameters(data, cfg.network, cfg.selection, cfg.seed)
    est = network(max(len(v) for v in data.option_values), hp, (cfg.seed,)).fit_rows(data)
    model = est.network_
    assert model is not None, "fit_rows sets network_"
    out.parent.mkdir(parents=True, exist_ok=True)
    estimator = {**est.describe(), "state": est.state(out.parent, out.stem)}
    report = {
        "rubric": rubric.name, "main": rubric.main, "rows": len(data), "texts": len(set(data.text_ids.tolist())),
        "judges": list(model.judges), "seed": cfg.seed, "hyperparameters": hp.model_dump(), "selection": table,
        "members": [r.__dict__ for r in model.reports], "notes": list(data.notes), "estimator": estimator,
        **provenance(cfg),
    }
    write_json(out_report, report)
    logger.info("wrote %s and %s", out_model, out_report)
    return report


def predictions_frame(data: CalibrationData, probs: np.ndarray, known: set[str]) -> pd.DataFrame:
    """One row per (text, judge, question): distribution (JSON), expected answer, judge-independent flag."""
    import json

    exp = expected_values(probs, data.option_values)
    frames = []
    for q, qid in enumerate(data.questions):
        vals = data.option_values[q]
        frames.append(pd.DataFrame({
            "text_id": data.text_ids, "judge": data.judges, "question": qid,
            "expected": exp[:, q],
            "probs": [json.dumps({f"{v:g}": round(float(p), 6) for v, p in zip(vals, row[:len(vals)], strict=True)})
                      for row in probs[:, q, :]],
            "judge_independent": [j not in known for j in data.judges],
        }))
    return pd.concat(frames, ignore_index=True)


def run_predict(model_path: str | Path, rubric_path: str | Path | None, llm_path: str | Path, out: str | Path,
                judges: list[str] | None = None, llm_format: str = "auto") -> pd.DataFrame:
    """Predict every (text, judge, question) of a new LLM table; unknown judges use judge-independent weights.

    ``judges`` defaults to every judge the model knows. A judge the model never saw is predicted from the
    judge-independent weights alone and flagged ``judge_independent`` (also in the log).
    """
    model = load_network(model_path)
    rubric = load_rubric(rubric_path)
    llm = read_llm(llm_path, rubric, llm_format)
    wanted = list(judges) if judges else list(model.judges)
    unknown = [j for j in wanted if j not in model.judges]
    if unknown:
        logger.warning("judge(s) %s not seen in training: predicted with judge-independent weights only",
                       ", ".join(unknown))
    data = prediction_rows(rubric, llm, wanted)
    df = predictions_frame(data, model.predict_proba(data), set(model.judges))
    notes = list(data.notes) + ([f"judge-independent predictions for unseen judge(s): {', '.join(unknown)}"]
                                if unknown else [])
    from autograde.core.ids import file_sha256

    write_table(out, df, ["text_id", "judge", "question"],
                {"model": str(model_path), "model_sha256": file_sha256(str(model_path)),
                 "llm": {"path": str(llm_path), "sha256": file_sha256(str(llm_path))}, "notes": notes})
    logger.info("wrote %s (%d rows)", out, len(df))
    return df


def run_evaluate(cfg: RubricConfig, out_json: str | Path, out_md: str | Path | None = None,
                 out_predictions: str | Path | None = None, out_svg: str | Path | None = None,
                 out_tex: str | Path | None = None) -> dict[str, Any]:
    """Cross-validated evaluation over the configured seeds; writes the report, tables, predictions, diagram."""
    from autograde.rubric.protocols import cv_table1
    from autograde.rubric.table1 import latex_table, table1_markdown

    _rubric, data = load_training_data(cfg)
    result = evaluate(data, cfg.network, cfg.evaluation, cfg.selection if cfg.selection.enabled else None)
    result.report.update(provenance(cfg))
    result.report["table1"] = cv_table1(result, data, cfg.evaluation)
    title = f"Table 1, {data.main}: {cfg.evaluation.folds}-fold cross-validation grouped by text"
    write_json(out_json, result.report)
    if out_md:
        atomic_write_text(out_md, markdown_report(result.report) + "\n" + table1_markdown(result.report["table1"], title))
    if out_tex:
        atomic_write_text(out_tex, latex_table(result.report["table1"], title))
    if out_predictions:
        write_table(out_predictions, result.table, ["seed", "system", "question", "row"],
                    {"notes": list(data.notes)})
    if out_svg:
        atomic_write_text(out_svg, result.svg)
    logger.info("wrote %s", out_json)
    return result.report


def run_transfer(cfg: RubricConfig, out_json: str | Path, out_md: str | Path | None = None,
                 out_tex: str | Path | None = None) -> dict[str, Any]:
    """Train on every annotation of ``cfg``, evaluate on ``cfg.test`` (Table 1 of the paper's real-data side)."""
    from autograde.core.ids import file_sha256
    from autograde.rubric.protocols import evaluate_transfer, transfer_markdown
    from autograde.rubric.table1 import latex_table

    test = cfg.test
    if test is None:
        from autograde.core.errors import ConfigError

        raise ConfigError("no test set (fix: give 'rubric.test' in the config, or --test CONFIG)")
    _rubric, train = load_training_data(cfg)
    _rubric, held_out = load_training_data(cfg.model_copy(update=test.model_dump()))
    report = evaluate_transfer(train, held_out, cfg.network, cfg.evaluation,
                               cfg.selection if cfg.selection.enabled else None, test.human)
    report.update(provenance(cfg))
    report["test_inputs"] = {k: {"path": str(v), "sha256": file_sha256(str(v))}
                             for k, v in (("llm", test.llm), ("human", test.human), ("texts", test.texts)) if v}
    write_json(out_json, report)
    if out_md:
        atomic_write_text(out_md, transfer_markdown(report))
    if out_tex:
        atomic_write_text(out_tex, latex_table(report["table1"], f"{report['main']}: trained on one set, evaluated "
                                               "on another"))
    logger.info("wrote %s", out_json)
    return report
