"""Per-level thresholds of calibrated relevance labels, and the binary Cohen's kappa they are tuned for.

A passage's label is the highest level L with P(level >= L) >= tau_L (the lowest level when none passes).
The thresholds are tuned from the top level down on held-out predictions of the training collection: tau_L
maximises Cohen's kappa of the decision "label >= L" against "judged level >= L", where the passages already
labelled above L count as positive; so every tau_L is tuned for the labels exactly as they are exported.
Among the candidates, only those whose share of passages labelled >= L lies within a factor
:data:`SHARE_FACTOR` of the judged share are considered (the one closest to it when none is): kappa alone
favours balanced decisions and would label a rare top level (5.7% of DL20's judged passages are 3) several times
too often, which distorts the graded gains nDCG reads.

>>> probs = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7], [0.8, 0.2, 0.0]])
>>> taus = tune_thresholds(probs, np.array([0, 1, 2, 0]))
>>> threshold_labels(probs, taus).tolist()
[0, 1, 2, 0]
"""

from __future__ import annotations

import numpy as np

from autograde.core.stats import binary_kappa, binary_kappa_counts

__all__ = ["SHARE_FACTOR", "best_threshold", "threshold_labels", "tune_thresholds"]

SHARE_FACTOR = 1.5
"""A level's labelled share may differ from its judged share (on the training predictions) by this factor."""


def best_threshold(score: np.ndarray, truth: np.ndarray, forced: np.ndarray | None = None,
                   candidates: int = 201, share_factor: float | None = None) -> tuple[float, float]:
    """(tau, kappa) maximising kappa of ``forced | (score >= tau)`` against ``truth`` (0/1 arrays).

    Candidates: ``candidates`` quantiles of the scores of the rows not forced; ties keep the lowest tau. With
    ``share_factor``, only candidates whose positive share is within that factor of ``truth``'s share count (the
    closest one when none is).
    """
    truth = truth.astype(bool)
    forced = np.zeros(len(score), dtype=bool) if forced is None else forced.astype(bool)
    free = ~forced
    s, t = score[free], truth[free]
    if len(s) == 0:
        return 1.0, binary_kappa(forced, truth)
    taus = np.unique(np.round(np.quantile(s, np.linspace(0.0, 1.0, candidates)), 9))
    order = np.argsort(s, kind="stable")
    s_sorted, t_sorted = s[order], t[order]
    start = np.searchsorted(s_sorted, taus, side="left")  # rows >= tau are start..end
    tp_after = np.concatenate([np.cumsum(t_sorted[::-1])[::-1], [0]])
    pos = (len(s) - start) + int(forced.sum())
    tp = tp_after[start] + int((forced & truth).sum())
    kappas = binary_kappa_counts(tp, pos, int(truth.sum()), len(truth))
    if share_factor is not None and truth.any():
        ratio = (pos / len(truth)) / truth.mean()
        inside = (ratio >= 1.0 / share_factor) & (ratio <= share_factor)
        if not inside.any():
            best = int(np.argmin(np.abs(np.log(np.maximum(ratio, 1e-12)))))
            return float(taus[best]), float(kappas[best])
        kappas = np.where(inside, kappas, np.nan)
    if np.all(np.isnan(kappas)):
        return float(taus[0]), float("nan")
    best = int(np.nanargmax(kappas))
    return float(taus[best]), float(kappas[best])


def tune_thresholds(probs: np.ndarray, answers: np.ndarray) -> tuple[float, ...]:
    """tau_L for every level index L >= 1 of ``probs`` (rows x levels), tuned top-down (module doc)."""
    n_levels = probs.shape[1]
    tail = np.cumsum(probs[:, ::-1], axis=1)[:, ::-1]  # P(level >= L)
    labels = np.zeros(len(probs), dtype=int)
    taus = [1.0] * (n_levels - 1)
    for level in range(n_levels - 1, 0, -1):
        forced = labels >= level
        tau, _ = best_threshold(tail[:, level], answers >= level, forced, share_factor=SHARE_FACTOR)
        taus[level - 1] = tau
        labels = np.where(~forced & (tail[:, level] >= tau), level, labels)
    return tuple(taus)


def threshold_labels(probs: np.ndarray, thresholds: tuple[float, ...] | list[float]) -> np.ndarray:
    """Level index per row: the highest L with P(level >= L) >= thresholds[L - 1] (0 when none)."""
    tail = np.cumsum(probs[:, ::-1], axis=1)[:, ::-1]
    labels = np.zeros(len(probs), dtype=int)
    for level in range(1, probs.shape[1]):
        labels = np.where(tail[:, level] >= thresholds[level - 1], level, labels)
    return labels
