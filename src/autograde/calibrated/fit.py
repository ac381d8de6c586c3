"""Fitting a calibrated-qrels model: every candidate estimator cross-fitted on folds grouped by query, the deployed
model the equal-weight mean of them, thresholds cross-fitted.

The candidates are the kinds ``cfg.estimators`` names, each built by its registered class
(:data:`autograde.calibrated.registry.ESTIMATORS`, ``from_config``). The rule, and why:

1. Every candidate is fitted on ``selection_folds`` folds of the training passages grouped by query (seeded) and
   predicts each passage from the fold model that never saw its query (:class:`autograde.calibrated.registry.
   CrossFitted`); its per-level thresholds are tuned on those out-of-fold predictions, and its binary kappa
   (level >= ``relevant_level``) is measured on every fold (the selection table: every candidate alone).
2. The deployed model is the mean of the candidates' probabilities with fixed weights, equal per kind (a kind
   with several C values shares its weight among them): :func:`kind_weights`,
   :meth:`~autograde.calibrated.registry.CrossFitted.mean_of`; nothing is selected and no weight is fitted.
   Why: on DL20 the candidates' held-out kappas differ by less than their fold-to-fold standard error (about
   0.01 against 0.02-0.03), so the training data cannot tell which one is best, and every rule that picks one
   picks by noise: the best inner mean picked a different kind for every seed; the simplest within one standard
   error deployed logistic regression in 22 of 25 folds and lost up to 0.020 kappa to the network where the
   network was better. A mean of probability forecasts with fixed weights is never worse than its members on
   average in log-loss (the loss is convex), and better than each when their errors differ (a linear model and
   a network do); fitted weights (stacking) add the variance of the fit the mean avoids (with near-equal members
   the equal weights are what a fit would estimate, up to noise). The same sources give the same kind of model
   whatever the seed. A single candidate is deployed alone.
3. The thresholds are tuned on the mean's out-of-fold predictions (the mean of the candidates'), checked on the
   deployed model's own predictions of the training passages, and moved where a level's share leaves the band
   there (:func:`autograde.calibrated.thresholds.cross_fitted_thresholds`). The deployed model is the mean of the
   fold models (no refit: the models whose held-out predictions were scored are the ones deployed).

Used inside each outer fold of :mod:`autograde.calibrated.cv`, this is nested cross-validation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograde.calibrated.estimators import Estimator
from autograde.calibrated.features import RelevanceFeatures
from autograde.calibrated.model import CalibratedQrelsModel
from autograde.calibrated.registry import ESTIMATORS, CrossFitted, GroupSplit
from autograde.calibrated.thresholds import Thresholds, cross_fitted_thresholds, level_shares
from autograde.config.rubric import CalibratedQrelsConfig
from autograde.core.agreement import binary_kappa
from autograde.core.errors import Problems
from autograde.core.log import logger, progress
from autograde.io.trec import Qrels

__all__ = ["Candidate", "FitResult", "TrainingRows", "candidates", "fit_calibrated", "kind_weights", "training_rows"]


@dataclass
class TrainingRows:
    """The judged passages among the features' keys (in key order) and their level indices."""

    rows: np.ndarray
    answers: np.ndarray
    groups: np.ndarray


def training_rows(features: RelevanceFeatures, judgments: Qrels, levels: list[int], where: str,
                  every_level: bool = False) -> TrainingRows:
    """Rows of ``features`` with a judgment; a judged level outside ``levels`` is an input error, and so is (with
    ``every_level``) a level of ``levels`` no passage is judged at: a model could not learn it."""
    problems = Problems()
    rows, answers = [], []
    for i, (q, d) in enumerate(features.keys):
        rel = judgments.get(q, {}).get(d)
        if rel is None:
            continue
        if rel not in levels:
            problems.add(where, None, f"query {q} passage {d}: level {rel} is not one of the levels {levels}",
                         "set calibrated_qrels.levels to the levels the judgments use")
            continue
        rows.append(i)
        answers.append(levels.index(rel))
    if not rows and not problems:
        problems.add(where, None, "no judged passage appears in the sources",
                     "give judgments for the same query and passage ids as the sources")
    missing = [lv for i, lv in enumerate(levels) if i not in set(answers)]
    if every_level and rows and missing:
        problems.add(where, None, f"no judged passage of the sources is at level(s) {', '.join(map(str, missing))} "
                     f"(levels {levels}): the model could not label them",
                     "give judgments at every level, or set calibrated_qrels.levels to the levels judged")
    problems.raise_if_any()
    r = np.array(rows, dtype=np.int64)
    return TrainingRows(r, np.array(answers, dtype=np.int64), np.array([features.keys[i][0] for i in r], dtype=object))


def candidates(cfg: CalibratedQrelsConfig, n_levels: int) -> list[Estimator]:
    """The unfitted candidates ``cfg.estimators`` names, in that order (the regressions once per C)."""
    return [est for kind in cfg.estimators for est in ESTIMATORS[kind].from_config(cfg, n_levels)]


@dataclass
class Candidate:
    """One candidate alone, deployable: its fold models and its own cross-fitted thresholds."""

    estimator: CrossFitted
    thresholds: Thresholds


@dataclass
class FitResult:
    """The deployed model, the selection table (one row per candidate, then the deployed mean, marked
    ``selected``), every candidate alone."""

    model: CalibratedQrelsModel
    selection: list[dict[str, Any]]
    candidates: dict[str, Candidate] = field(default_factory=dict)


def _log_loss(probs: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(np.log(np.clip(probs[np.arange(len(y)), y], 1e-12, None))))


def kind_weights(estimators: list[Estimator]) -> tuple[float, ...]:
    """Equal weight per kind, shared equally among the candidates of a kind.

    >>> from autograde.calibrated.estimators import LogisticEstimator, OrdinalLogisticEstimator
    >>> kind_weights([LogisticEstimator(4, 0.1), LogisticEstimator(4, 1.0), OrdinalLogisticEstimator(4)])
    (0.25, 0.25, 0.5)
    """
    kinds = [e.kind for e in estimators]
    return tuple(1.0 / (len(set(kinds)) * kinds.count(k)) for k in kinds)


def _scores(est: CrossFitted, th: Thresholds, y: np.ndarray, rel_index: int, split: GroupSplit) -> dict[str, Any]:
    """Kappa of the out-of-fold labels per fold, their mean and standard error, pooled kappa, log-loss."""
    assert est.oof_proba_ is not None
    per_fold = [binary_kappa(th.oof_labels[te] >= rel_index, y[te] >= rel_index) for _, te in split.split()]
    defined = np.array([k for k in per_fold if not np.isnan(k)])
    se = float(defined.std(ddof=1) / np.sqrt(len(defined))) if len(defined) > 1 else float("nan")
    return {"estimator": est.name, "kind": est.estimator.kind, "fold_kappas": per_fold,
            "mean_kappa": float(defined.mean()) if len(defined) else float("nan"), "kappa_se": se,
            "kappa": binary_kappa(th.oof_labels >= rel_index, y >= rel_index),
            "log_loss": _log_loss(est.oof_proba_, y), "thresholds": list(th.tuned),
            "deployed_thresholds": list(th.deployed)}


def fit_calibrated(cfg: CalibratedQrelsConfig, features: RelevanceFeatures, judgments: Qrels) -> FitResult:
    """Cross-fit every candidate, deploy their mean, set its thresholds, on every judged passage of ``features``
    (module doc); deterministic for a seed."""
    levels = list(cfg.levels)
    data = training_rows(features, judgments, levels, cfg.judgments or "judgments", every_level=True)
    x, y = features.matrix[data.rows], data.answers
    rel_index = levels.index(cfg.level)
    split = GroupSplit.of(data.groups, cfg.selection_folds, [cfg.seed, 2])
    table: list[dict[str, Any]] = []
    alone: dict[str, Candidate] = {}
    for est in progress(candidates(cfg, len(levels)), desc="cross-fitting the candidate estimators", unit="candidates"):
        fitted = CrossFitted(est, split).fit(x, y)
        assert fitted.oof_proba_ is not None
        th = cross_fitted_thresholds(fitted.oof_proba_, fitted.predict_proba(x), y)
        alone[fitted.name] = Candidate(fitted, th)
        table.append(_scores(fitted, th, y, rel_index, split))
        logger.info("candidate %s: held-out kappa %.4f +- %.4f over %d folds (log-loss %.4f)", fitted.name,
                    table[-1]["mean_kappa"], table[-1]["kappa_se"], len(table[-1]["fold_kappas"]),
                    table[-1]["log_loss"])
    if len(alone) == 1:
        picked = next(iter(alone.values()))
    else:
        members = [c.estimator for c in alone.values()]
        weights = kind_weights([m.estimator for m in members])
        mean = CrossFitted.mean_of(members, weights)
        assert mean.oof_proba_ is not None
        picked = Candidate(mean, cross_fitted_thresholds(mean.oof_proba_, mean.predict_proba(x), y))
        table.append(_scores(mean, picked.thresholds, y, rel_index, split))
        table[-1]["weights"] = dict(zip(alone, weights, strict=True))
    table[-1]["selected"] = True
    logger.info("deployed %s: held-out kappa %.4f +- %.4f", picked.estimator.name, table[-1]["mean_kappa"],
                table[-1]["kappa_se"])
    info = _provenance(cfg, features, data, picked.thresholds)
    model = CalibratedQrelsModel(list(features.encodings), features.mode, tuple(levels), cfg.level,
                                 picked.estimator, picked.thresholds.deployed, {**info, "selection": table})
    return FitResult(model, table, alone)


def _provenance(cfg: CalibratedQrelsConfig, features: RelevanceFeatures, data: TrainingRows, th: Thresholds
                ) -> dict[str, Any]:
    """Seeds, settings, the training data's digest and counts, and the level shares of the training passages:
    judged, labelled out of fold, labelled by the deployed model."""
    import hashlib

    from autograde.core.ids import content_hash

    h = hashlib.sha256()
    h.update(np.ascontiguousarray(features.matrix[data.rows]).tobytes())
    h.update(data.answers.tobytes())
    h.update("\n".join(f"{features.keys[i][0]}\t{features.keys[i][1]}" for i in data.rows).encode())
    levels = list(cfg.levels)
    lv = np.asarray(levels)
    counts = np.bincount(data.answers, minlength=len(levels))
    return {"seed": cfg.seed, "settings_hash": content_hash(cfg.model_dump(exclude={"enabled", "sources",
                                                                                      "judgments", "model"})),
            "settings": cfg.model_dump(exclude={"enabled", "model"}),
            "training": {"digest": h.hexdigest(), "judged": len(data.rows), "passages": len(features.keys),
                         "queries": len(set(data.groups.tolist())),
                         "level_counts": {str(lv): int(c) for lv, c in zip(levels, counts, strict=True)},
                         "label_shares": {"judged": level_shares(lv[data.answers], levels),
                                          "out_of_fold": level_shares(lv[th.oof_labels], levels),
                                          "deployed": level_shares(lv[th.deployed_labels], levels)},
                         "feature_names": list(features.names)}}

