"""Cross-validated calibrated labels of a judged collection, and the report comparing every estimator with every
single source, per fold and overall.

The queries are dealt into ``folds`` folds (seeded, :func:`autograde.rubric.dataset.group_folds`); for fold f a
model is fitted with :func:`autograde.calibrated.fit.fit_calibrated` on the judgments of the other folds only
(which cross-fits the candidates on inner folds and selects one: nested) and labels every passage of fold f's queries,
judged or not. Fitting on those judgments with ``autograde rubric calibrate-qrels fit`` gives the same model, and
applying it the same labels. Each fold also scores every candidate estimator alone (its fold models from the
same fit, with its own cross-fitted thresholds) and every single source at the threshold best on the training
folds; and records the level shares the fold's deployed model gives its own training passages.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from autograde.calibrated.features import RelevanceFeatures
from autograde.calibrated.fit import fit_calibrated, training_rows
from autograde.calibrated.model import output_labels
from autograde.calibrated.thresholds import level_shares
from autograde.config.rubric import CalibratedQrelsConfig
from autograde.core.agreement import binary_kappa, cohen_kappa
from autograde.core.ids import PairKey
from autograde.core.log import logger, progress
from autograde.io.trec import Qrels
from autograde.rubric.dataset import group_folds

__all__ = ["SELECTED", "best_single_source", "cross_validate_qrels", "passages_table", "query_folds",
           "share_ratio"]

SELECTED = "calibrated (selected)"


def query_folds(features: RelevanceFeatures, judgments: Qrels, folds: int, seed: int) -> dict[str, int]:
    """Fold of every query of the features: judged queries by the seeded rule, the others round-robin."""
    judged = np.array(sorted({q for q, _ in features.keys if q in judgments}), dtype=object)
    fold_of = dict(zip(judged.tolist(), group_folds(judged, folds, seed).tolist(), strict=True))
    for i, q in enumerate(sorted({q for q, _ in features.keys} - set(fold_of))):
        fold_of[q] = i % folds
    return fold_of


def best_single_source(labels: dict[str, dict[PairKey, int]], keys: list[PairKey], truth: np.ndarray
                       ) -> tuple[str, int, float]:
    """(source, threshold t, kappa) of the best single source labelling relevant when label >= t."""
    best = ("", 0, -math.inf)
    for name, lab in sorted(labels.items()):
        vals = np.array([lab.get(k, 0) for k in keys])
        for t in sorted(set(lab.values()))[1:]:
            k = binary_kappa(vals >= t, truth.astype(bool))
            if not math.isnan(k) and k > best[2]:
                best = (name, int(t), float(k))
    return best


def _source_decisions(labels: dict[PairKey, int], keys: list[PairKey], threshold: int) -> np.ndarray:
    return np.array([labels.get(k, 0) >= threshold for k in keys])


def _fold_single_sources(features: RelevanceFeatures, judged_keys: list[PairKey], te: np.ndarray, truth: np.ndarray,
                         decisions: dict[str, np.ndarray]) -> tuple[dict[str, dict[str, Any]], str, list[PairKey]]:
    """Every source alone, at the threshold best on the training folds, on the held-out fold ``te`` (its decisions
    go into ``decisions``); returns them, the source chosen on the training folds and the held-out keys."""
    train_keys = [k for k, m in zip(judged_keys, te, strict=True) if not m]
    test_keys = [k for k, m in zip(judged_keys, te, strict=True) if m]
    singles: dict[str, dict[str, Any]] = {}
    for name, lab in sorted(features.labels.items()):
        _, t, train_kappa = best_single_source({name: lab}, train_keys, truth[~te])
        d = _source_decisions(lab, test_keys, t)
        decisions.setdefault(f"{name} (single source)", np.zeros(len(truth), dtype=bool))[te] = d
        singles[name] = {"threshold": t, "train_kappa": train_kappa, "kappa": binary_kappa(d, truth[te])}
    chosen = max(singles, key=lambda n: (singles[n]["train_kappa"], n))
    decisions.setdefault("best single source (chosen on training folds)", np.zeros(len(truth), dtype=bool))[te] = \
        _source_decisions(features.labels[chosen], test_keys, int(singles[chosen]["threshold"]))
    return singles, chosen, test_keys


def cross_validate_qrels(cfg: CalibratedQrelsConfig, features: RelevanceFeatures, judgments: Qrels,
                         models_dir: str | None = None) -> tuple[Qrels, dict[str, Any], pd.DataFrame]:
    """Labels of every passage from its query's fold model, the report, and the per-passage table (with
    ``models_dir``, every fold's model is saved there as ``fold-<f>``)."""
    levels = list(cfg.levels)
    lv = np.asarray(levels)
    data = training_rows(features, judgments, levels, cfg.judgments)
    judged_keys = [features.keys[i] for i in data.rows]
    truth = lv[data.answers] >= cfg.level
    fold_of = query_folds(features, judgments, cfg.folds, cfg.seed)
    row_fold = np.array([fold_of[q] for q, _ in features.keys])
    judged_fold = row_fold[data.rows]
    probs_all = np.zeros((len(features.keys), len(levels)))
    labels_all = np.zeros(len(features.keys), dtype=int)
    decisions: dict[str, np.ndarray] = {}
    per_fold = []
    for f in progress(range(cfg.folds), desc="cross-validating calibrated qrels", unit="folds"):
        test_rows = np.flatnonzero(row_fold == f)
        te = judged_fold == f
        if not te.any():
            continue
        train = {q: docs for q, docs in judgments.items() if fold_of.get(q, -1) != f}
        fitted = fit_calibrated(cfg, features, train)
        if models_dir:
            fitted.model.save(f"{models_dir}/fold-{f}")
        probs = fitted.model.predict_proba(features.matrix[test_rows])
        probs_all[test_rows] = probs
        labels_all[test_rows] = fitted.model.labels(probs, cfg.output)
        x_te = features.matrix[data.rows[te]]
        kappas: dict[str, float] = {}
        for name, cand in fitted.candidates.items():
            d = output_labels(cand.estimator.predict_proba(x_te), tuple(levels), cfg.level,
                              cand.thresholds.deployed, "threshold")
            decisions.setdefault(name, np.zeros(len(truth), dtype=bool))[te] = d >= cfg.level
            kappas[name] = binary_kappa(d >= cfg.level, truth[te])
        d = output_labels(probs[np.isin(test_rows, data.rows[te])], tuple(levels), cfg.level,
                          fitted.model.thresholds, "threshold")
        decisions.setdefault(SELECTED, np.zeros(len(truth), dtype=bool))[te] = d >= cfg.level
        kappas[SELECTED] = binary_kappa(d >= cfg.level, truth[te])
        selected = next(r["estimator"] for r in fitted.selection if r.get("selected"))
        singles, chosen, test_keys = _fold_single_sources(features, judged_keys, te, truth, decisions)
        oracle = best_single_source(features.labels, test_keys, truth[te])
        per_fold.append({"fold": f, "queries": len({k[0] for k in test_keys}), "judged": int(te.sum()),
                         "passages": len(test_rows), "selected": selected,
                         "training_shares": fitted.model.info["training"]["label_shares"],
                         "thresholds": list(fitted.model.thresholds), "kappa": kappas[SELECTED],
                         "estimators": kappas, "selection": fitted.selection, "single_sources": singles,
                         "single_source": chosen, "single_threshold": singles[chosen]["threshold"],
                         "single_kappa": singles[chosen]["kappa"],
                         "oracle_single": {"source": oracle[0], "threshold": oracle[1], "kappa": oracle[2]}})
        logger.info("fold %d: %s kappa %.4f; best single source on the training folds %s >= %d: %.4f", f, selected,
                    kappas[SELECTED], chosen, singles[chosen]["threshold"], singles[chosen]["kappa"])
    report = _report(cfg, features, data, judged_keys, truth, labels_all, decisions, per_fold)
    qrels: Qrels = {}
    for (q, doc), lab in zip(features.keys, labels_all.tolist(), strict=True):
        qrels.setdefault(q, {})[doc] = int(lab)
    table = passages_table(features, probs_all, labels_all, levels, cfg.level, judgments)
    table.insert(2, "fold", row_fold)
    return qrels, report, table


def passages_table(features: RelevanceFeatures, probs: np.ndarray, labels: np.ndarray, levels: list[int],
                   relevant_level: int, judgments: Qrels | None) -> pd.DataFrame:
    """Per passage: label, P(level) per level, expected level, P(relevant), judgment (when judged)."""
    lv = np.asarray(levels, dtype=np.float64)
    table = pd.DataFrame({"query_id": [q for q, _ in features.keys], "passage_id": [d for _, d in features.keys],
                          "label": labels, **{f"p_level_{v}": probs[:, i] for i, v in enumerate(levels)}})
    table["expected"] = probs @ lv
    table["p_relevant"] = probs[:, lv >= relevant_level].sum(axis=1)
    judged = judgments or {}
    table["judgment"] = pd.array([judged.get(q, {}).get(d) for q, d in features.keys], dtype="Int64")
    return table


def share_ratio(labelled: dict[str, float], judged: dict[str, float]) -> dict[str, float]:
    """Labelled share / judged share per level (NaN where no passage is judged at the level)."""
    return {lv: labelled[lv] / judged[lv] if judged[lv] > 0 else float("nan") for lv in judged}


def _share_ratios(shares: dict[str, dict[str, float]], per_fold: list[dict[str, Any]]) -> dict[str, Any]:
    """Labelled / judged share per level: of the held-out labels (pooled), and the range over the folds of each
    fold's deployed model on its own training passages."""
    training = [share_ratio(pf["training_shares"]["deployed"], pf["training_shares"]["judged"]) for pf in per_fold]
    return {"held_out": share_ratio(shares["labels_of_judged"], shares["judged"]),
            "training_min": {lv: min(r[lv] for r in training) for lv in shares["judged"]},
            "training_max": {lv: max(r[lv] for r in training) for lv in shares["judged"]}}


def _report(cfg: CalibratedQrelsConfig, features: RelevanceFeatures, data: Any, judged_keys: list[PairKey],
            truth: np.ndarray, labels_all: np.ndarray, decisions: dict[str, np.ndarray], per_fold: list[dict[str, Any]]
            ) -> dict[str, Any]:
    levels = list(cfg.levels)
    graded = labels_all[data.rows]
    best = best_single_source(features.labels, judged_keys, truth)
    overall = {name: binary_kappa(d, truth) for name, d in decisions.items()}
    judged_levels = np.asarray(levels)[data.answers]
    shares = {"judged": level_shares(judged_levels, levels), "labels_of_judged": level_shares(graded, levels),
              "labels_of_all": level_shares(labels_all, levels)} if cfg.output != "probability" else None
    return {
        "sources": sorted(features.labels), "features": len(features.names), "passages": len(features.keys),
        "judged": len(data.rows), "queries": len({q for q, _ in features.keys}), "relevant_level": cfg.level,
        "levels": levels, "folds": cfg.folds, "seed": cfg.seed, "output": cfg.output,
        "estimators": list(cfg.estimators), "network": cfg.network.model_dump(),
        "overall": {
            "kappa": overall[SELECTED], "per_estimator": overall,
            "single_cv_kappa": overall["best single source (chosen on training folds)"],
            "best_single": {"source": best[0], "threshold": best[1], "kappa": best[2]},
            "graded_kappa_linear": cohen_kappa(graded.tolist(), judged_levels.tolist(), weights="linear")
            if cfg.output != "probability" else None,
        },
        "label_shares": shares,
        "share_ratios": _share_ratios(shares, per_fold) if shares else None,
        "per_fold": per_fold,
    }
