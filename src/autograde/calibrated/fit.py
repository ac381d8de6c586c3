"""Fitting a calibrated-qrels model: candidate estimators, selection by cross-validation grouped by query on the
training collection only, per-level thresholds tuned on the same held-out predictions, and the final refit.

Every candidate (the network, its seed ensemble, logistic and ordinal logistic regression for every C of the
grid) predicts each training passage from a model that never saw its query (``selection_folds`` folds grouped
by query, seeded). Per candidate, the per-level thresholds are tuned on those held-out predictions
(:mod:`autograde.calibrated.thresholds`) and the candidate is scored by the binary kappa (level >=
``relevant_level``) of the labels they give; the best candidate (the first in the configured order on a tie)
is refitted on every training passage and keeps those thresholds. Used inside each outer fold of
:mod:`autograde.calibrated.cv`, this is nested cross-validation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograde.calibrated.estimators import LogisticEstimator, NetworkEstimator, RelevanceEstimator
from autograde.calibrated.features import RelevanceFeatures
from autograde.calibrated.model import CalibratedQrelsModel, output_labels
from autograde.calibrated.thresholds import tune_thresholds
from autograde.config.rubric import CalibratedQrelsConfig
from autograde.core.errors import Problems
from autograde.core.log import logger, progress
from autograde.core.stats import binary_kappa
from autograde.io.trec import Qrels
from autograde.rubric.train import group_folds

__all__ = ["Candidate", "FitResult", "TrainingRows", "candidates", "fit_calibrated", "training_rows"]


@dataclass
class TrainingRows:
    """The judged passages among the features' keys (in key order) and their level indices."""

    rows: np.ndarray
    answers: np.ndarray
    groups: np.ndarray


def training_rows(features: RelevanceFeatures, judgments: Qrels, levels: list[int], where: str) -> TrainingRows:
    """Rows of ``features`` with a judgment; a judged level outside ``levels`` is an input error."""
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
    problems.raise_if_any()
    r = np.array(rows, dtype=np.int64)
    return TrainingRows(r, np.array(answers, dtype=np.int64), np.array([features.keys[i][0] for i in r], dtype=object))


@dataclass
class Candidate:
    """A named way to make an estimator (``make()`` returns an unfitted one)."""

    name: str
    kind: str
    make: Callable[[], RelevanceEstimator]
    seeds: tuple[int, ...] = ()


def candidates(cfg: CalibratedQrelsConfig, n_levels: int) -> list[Candidate]:
    """The estimators ``cfg.estimators`` names, in that order (regressions once per C of ``logistic_c``)."""
    out: list[Candidate] = []
    seed = cfg.seed
    def network(seeds: tuple[int, ...]) -> Callable[[], RelevanceEstimator]:
        return lambda: NetworkEstimator(n_levels, cfg.network, seeds)

    def regression(c: float, ordinal: bool) -> Callable[[], RelevanceEstimator]:
        return lambda: LogisticEstimator(n_levels, c, ordinal)

    for kind in cfg.estimators:
        if kind == "network":
            out.append(Candidate("network", kind, network((seed,)), (seed,)))
        elif kind == "ensemble":
            seeds = tuple(range(seed, seed + cfg.ensemble_size))
            out.append(Candidate(f"ensemble of {cfg.ensemble_size}", kind, network(seeds), seeds))
        else:
            out += [Candidate(f"{kind} C={c:g}", kind, regression(c, kind == "ordinal_logistic")) for c in cfg.logistic_c]
    return out


class _Networks:
    """Per-seed networks fitted once and shared by ``network`` and ``ensemble`` (the ensemble's first seed is the
    network): held-out predictions per (folds, seed) and final fits per seed."""

    def __init__(self, cfg: CalibratedQrelsConfig, n_levels: int) -> None:
        self.cfg, self.n_levels = cfg, n_levels
        self.fits: dict[tuple[str, int], NetworkEstimator] = {}

    def get(self, tag: str, seed: int, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> NetworkEstimator:
        key = (tag, seed)
        if key not in self.fits:
            self.fits[key] = NetworkEstimator(self.n_levels, self.cfg.network, (seed,)).fit(x, y, groups)
        return self.fits[key]

    def combined(self, tag: str, seeds: tuple[int, ...], x: np.ndarray, y: np.ndarray, groups: np.ndarray
                 ) -> NetworkEstimator:
        """The seeds' networks as one estimator (all members averaged)."""
        parts = [self.get(tag, s, x, y, groups) for s in seeds]
        if len(parts) == 1:
            return parts[0]
        import copy

        model = copy.copy(parts[0].model)
        model.members = [m for p in parts for m in p.model.members]
        model.reports = [r for p in parts for r in p.model.reports]
        return NetworkEstimator(self.n_levels, self.cfg.network, seeds, model)


def _fit(cand: Candidate, nets: _Networks, tag: str, x: np.ndarray, y: np.ndarray, g: np.ndarray
         ) -> RelevanceEstimator:
    if cand.kind in ("network", "ensemble"):
        return nets.combined(tag, cand.seeds, x, y, g)
    return cand.make().fit(x, y, g)


def _held_out(cand: Candidate, nets: _Networks, x: np.ndarray, y: np.ndarray, g: np.ndarray, folds: np.ndarray
              ) -> np.ndarray:
    probs = np.zeros((len(y), nets.n_levels))
    for f in sorted(set(folds.tolist())):
        tr, te = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        probs[te] = _fit(cand, nets, f"inner{f}", x[tr], y[tr], g[tr]).predict_proba(x[te])
    return probs


def _log_loss(probs: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(np.log(np.clip(probs[np.arange(len(y)), y], 1e-12, None))))


@dataclass
class FitResult:
    """The selected model, the selection table, and (on request) every candidate refitted with its thresholds."""

    model: CalibratedQrelsModel
    selection: list[dict[str, Any]]
    refitted: dict[str, tuple[RelevanceEstimator, tuple[float, ...]]] = field(default_factory=dict)
    training_labels: np.ndarray | None = None


def fit_calibrated(cfg: CalibratedQrelsConfig, features: RelevanceFeatures, judgments: Qrels,
                   refit_all: bool = False) -> FitResult:
    """Select, tune and fit on every judged passage of ``features`` (module doc); deterministic for a seed."""
    levels = list(cfg.levels)
    data = training_rows(features, judgments, levels, cfg.judgments or "judgments")
    x, y, g = features.matrix[data.rows], data.answers, data.groups
    rel_index = levels.index(cfg.relevant_level) if cfg.relevant_level in levels else len(levels)
    folds = group_folds(g, cfg.selection_folds, [cfg.seed, 2])
    nets = _Networks(cfg, len(levels))
    table: list[dict[str, Any]] = []
    tuned: dict[str, tuple[float, ...]] = {}
    cands = candidates(cfg, len(levels))
    for cand in progress(cands, desc="selecting the calibrated estimator", unit="candidates"):
        probs = _held_out(cand, nets, x, y, g, folds)
        taus = tune_thresholds(probs, y)
        labels = output_labels(probs, tuple(range(len(levels))), rel_index, taus, "threshold")
        kappa = binary_kappa(labels >= rel_index, y >= rel_index)
        tuned[cand.name] = taus
        table.append({"estimator": cand.name, "kappa": kappa, "log_loss": _log_loss(probs, y),
                      "thresholds": list(taus)})
        logger.info("selection: %s held-out kappa %.4f log-loss %.4f", cand.name, kappa, table[-1]["log_loss"])
    scores = [-math.inf if math.isnan(float(r["kappa"])) else float(r["kappa"]) for r in table]
    best = int(np.argmax(scores))
    table[best]["selected"] = True
    best_name = str(table[best]["estimator"])
    chosen = {c.name: c for c in candidates(cfg, len(levels))}
    refit_names = list(chosen) if refit_all else [best_name]
    refitted = {n: (_fit(chosen[n], nets, "all", x, y, g), tuned[n]) for n in refit_names}
    estimator, taus = refitted[best_name]
    info = _provenance(cfg, features, data)
    model = CalibratedQrelsModel(list(features.encodings), features.mode, tuple(levels), cfg.relevant_level,
                                 estimator, taus, {**info, "selection": table})
    return FitResult(model, table, refitted if refit_all else {})


def _provenance(cfg: CalibratedQrelsConfig, features: RelevanceFeatures, data: TrainingRows) -> dict[str, Any]:
    """Seeds, settings, and the training data's digest and counts (what the model learned from)."""
    import hashlib

    from autograde.core.ids import content_hash

    h = hashlib.sha256()
    h.update(np.ascontiguousarray(features.matrix[data.rows]).tobytes())
    h.update(data.answers.tobytes())
    h.update("\n".join(f"{features.keys[i][0]}\t{features.keys[i][1]}" for i in data.rows).encode())
    counts = np.bincount(data.answers, minlength=len(cfg.levels))
    return {"seed": cfg.seed, "settings_hash": content_hash(cfg.model_dump(exclude={"enabled", "sources",
                                                                                      "judgments", "model"})),
            "settings": cfg.model_dump(exclude={"enabled", "model"}),
            "training": {"digest": h.hexdigest(), "judged": len(data.rows), "passages": len(features.keys),
                         "queries": len(set(data.groups.tolist())),
                         "level_counts": {str(lv): int(c) for lv, c in zip(cfg.levels, counts, strict=True)},
                         "feature_names": list(features.names)}}
