"""The calibrated-qrels stage over files: cross-validate a judged collection, fit a model folder, apply a model
to a collection without judgments (the CLI and the Snakemake scripts call these)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from autograde.calibrated.cv import cross_validate_qrels, passages_table
from autograde.calibrated.features import RelevanceFeatures, features_from_sources, read_sources
from autograde.calibrated.fit import fit_calibrated
from autograde.calibrated.model import CalibratedQrelsModel, load_calibrated_model
from autograde.calibrated.report import apply_markdown, cv_markdown
from autograde.calibrated.thresholds import level_shares
from autograde.config.rubric import CalibratedQrelsConfig
from autograde.core.log import logger
from autograde.io.trec import Qrels, read_qrels, write_qrels

__all__ = ["apply_model", "run_apply", "run_cross_validate", "run_fit"]


def _inputs(paths: list[str]) -> dict[str, str]:
    from autograde.core.ids import file_sha256

    return {str(p): file_sha256(str(p)) for p in paths if p}


def _as_qrels(features: RelevanceFeatures, labels: np.ndarray) -> Qrels:
    qrels: Qrels = {}
    for (q, d), lab in zip(features.keys, labels.tolist(), strict=True):
        qrels.setdefault(q, {})[d] = int(lab)
    return qrels


def _write(out_json: str | Path | None, out_md: str | Path | None, out_table: str | Path | None, report: dict[str, Any],
           markdown: str, table: Any) -> None:
    from autograde.core.tables import write_table
    from autograde.core.text import atomic_write_text
    from autograde.rubric.report import write_json

    if out_json:
        write_json(out_json, report)
    if out_md:
        atomic_write_text(out_md, markdown)
    if out_table:
        write_table(out_table, table, ["query_id", "passage_id"], {"report": "calibrated_qrels"})


def run_cross_validate(cfg: CalibratedQrelsConfig, out_qrels: str | Path, out_json: str | Path,
                       out_md: str | Path | None = None, out_table: str | Path | None = None) -> dict[str, Any]:
    """Cross-validated labels of the training collection: qrels, report (JSON, Markdown), per-passage table."""
    features = features_from_sources(cfg.sources, cfg)
    qrels, report, table = cross_validate_qrels(cfg, features, read_qrels(cfg.judgments))
    report["inputs"] = _inputs([*cfg.sources, cfg.judgments])
    write_qrels(out_qrels, qrels)
    _write(out_json, out_md, out_table, report, cv_markdown(report), table)
    logger.info("wrote %s (%d passages; overall kappa %.4f vs best single %.4f)", out_qrels, len(table),
                report["overall"]["kappa"], report["overall"]["best_single"]["kappa"])
    return report


def run_fit(cfg: CalibratedQrelsConfig, out_model: str | Path, out_qrels: str | Path | None = None
            ) -> CalibratedQrelsModel:
    """Fit on every judged passage of the sources and write the model folder (and, optionally, the labels the
    fitted model gives the training sources: what ``apply`` on them reproduces)."""
    features = features_from_sources(cfg.sources, cfg)
    fitted = fit_calibrated(cfg, features, read_qrels(cfg.judgments))
    model = fitted.model
    model.info["inputs"] = _inputs([*cfg.sources, cfg.judgments])
    model.save(out_model)
    if out_qrels:
        write_qrels(out_qrels, _as_qrels(features, model.labels(model.predict_proba(features.matrix), cfg.output)))
    logger.info("wrote model %s (%s, thresholds %s)", out_model, model.estimator.name,
                ", ".join(f"{t:.3f}" for t in model.thresholds))
    return model


def apply_model(model: CalibratedQrelsModel, sources: list[str], output: str, judgments: Qrels | None = None
                ) -> tuple[Qrels, dict[str, Any], Any]:
    """Label every (query, passage) of ``sources`` with ``model``: qrels, report, per-passage table."""
    data = read_sources(sources, model.info.get("settings", {}).get("count_threshold", 4))
    features = model.features(data)
    probs = model.predict_proba(features.matrix)
    labels = model.labels(probs, output)
    levels = list(model.levels)
    report: dict[str, Any] = {
        "estimator": model.estimator.name, "sources": model.source_names, "output": output,
        "ignored_sources": sorted({s.name for s in data} - set(model.source_names)),
        "passages": len(features.keys), "queries": len({q for q, _ in features.keys}),
        "relevant_level": model.relevant_level, "thresholds": list(model.thresholds),
        "training": model.info.get("training", {}), "kappa": None,
    }
    shares: dict[str, dict[str, float]] = {}
    if output != "probability":
        shares["labels_of_all"] = level_shares(labels, levels)
        training = report["training"].get("label_shares", {})
        if training:
            shares["training_judged"] = training["judged"]
            shares["training_deployed"] = training["deployed"]
    if judgments is not None:
        _check_levels(judgments, features.keys, levels)
        from autograde.core.agreement import binary_kappa, cohen_kappa

        judged = [(i, judgments[q][d]) for i, (q, d) in enumerate(features.keys) if d in judgments.get(q, {})]
        if judged:
            rows = np.array([i for i, _ in judged])
            truth = np.array([v for _, v in judged])
            report["judged"] = len(judged)
            if output != "probability":
                report["kappa"] = binary_kappa(labels[rows] >= model.relevant_level, truth >= model.relevant_level)
                report["graded_kappa_linear"] = cohen_kappa(labels[rows].tolist(), truth.tolist(), weights="linear")
                shares["judged"] = level_shares(truth, levels)
                shares["labels_of_judged"] = level_shares(labels[rows], levels)
    report["label_shares"] = shares or None
    table = passages_table(features, probs, labels, levels, model.relevant_level, judgments)
    return _as_qrels(features, labels), report, table


def _check_levels(judgments: Qrels, keys: list[tuple[str, str]], levels: list[int]) -> None:
    """Judgments of the collection at a level the model was not fitted with: an error, not a silent shift."""
    from collections import Counter

    from autograde.core.errors import Problems

    unknown = Counter(judgments[q][d] for q, d in keys if d in judgments.get(q, {}) and judgments[q][d] not in levels)
    if unknown:
        problems = Problems()
        problems.add("judgments", None, f"{sum(unknown.values())} judged passage(s) at level(s) "
                     f"{', '.join(map(str, sorted(unknown)))}, which the model was not fitted with (levels "
                     f"{', '.join(map(str, levels))})", "refit the model with judgments on the same scale, or give "
                     "judgments on the model's scale")
        problems.raise_if_any()


def run_apply(model_dir: str | Path, sources: list[str], out_qrels: str | Path, out_json: str | Path | None = None,
              out_md: str | Path | None = None, out_table: str | Path | None = None, output: str = "threshold",
              judgments: str | None = None) -> dict[str, Any]:
    """Load a model folder, label the new sources, write the qrels (and the report and table when asked)."""
    model = load_calibrated_model(model_dir)
    qrels, report, table = apply_model(model, list(sources), output, read_qrels(judgments) if judgments else None)
    report["model"] = str(model_dir)
    report["model_training_digest"] = model.info.get("training", {}).get("digest")
    report["inputs"] = _inputs([*sources, judgments or ""])
    write_qrels(out_qrels, qrels)
    _write(out_json, out_md, out_table, report, apply_markdown(report), table)
    logger.info("wrote %s (%d passages labelled by %s)", out_qrels, report["passages"], report["estimator"])
    return report


def run_calibrated_qrels(cfg: CalibratedQrelsConfig, out_qrels: str | Path, out_json: str | Path,
                         out_md: str | Path, out_table: str | Path) -> dict[str, Any]:
    """The workflow's calibrated labels: cross-validated on this experiment's judgments, or, with
    ``calibrated_qrels.model``, applied from a model folder fitted elsewhere."""
    if cfg.model:
        return run_apply(cfg.model, cfg.sources, out_qrels, out_json, out_md, out_table, cfg.output,
                         cfg.judgments or None)
    return run_cross_validate(cfg, out_qrels, out_json, out_md, out_table)
