"""Per-level thresholds of calibrated relevance labels: tuned on out-of-fold predictions, kept by the deployed model.

A passage's label is the highest level L with P(level >= L) >= tau_L (the lowest level when none passes).
The thresholds are tuned from the top level down on held-out predictions of the training collection: tau_L
maximises Cohen's kappa of the decision "label >= L" against "judged level >= L", where the passages already
labelled above L count as positive; so every tau_L is tuned for the labels exactly as they are exported.
Among the candidates, only those that keep the share of passages labelled L (and, tuning tau_1, labelled 0) within
a factor :data:`SHARE_FACTOR` of its judged share are considered (the one closest to that when none does): kappa
alone favours balanced decisions and would label a rare top level (5.7% of DL20's judged passages are 3) several
times too often, which distorts the graded gains nDCG reads.

The deployed model is not the models whose out-of-fold predictions tuned the thresholds (it averages them, or
was refitted on every passage), and its probabilities need not be on their scale: a network refitted on all
passages, with thresholds tuned on its fold models' predictions, labelled 15.2% of DL20's judged passages 3
(5.7% are judged 3). So the thresholds are cross-fitted (:func:`cross_fitted_thresholds`): tuned on the
out-of-fold predictions, then checked on the deployed model's own predictions of the training passages; a level
whose labelled share falls outside the band there gets the threshold that labels the tuned share of passages
(as near as ties allow) within the band (:func:`deployed_thresholds`). On the training collection the deployed
model's labels then keep every level in the band, and where the deployed model is on the fold models' scale (the
regressions: their fold models barely differ) the thresholds are the tuned ones.

Every cut lies halfway between distinct predicted values, never on one (:func:`tie_groups`): a cut on a value
labelled that tie group differently in a fresh process whose probabilities differed in the last bits.

>>> probs = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7], [0.8, 0.2, 0.0]])
>>> taus = tune_thresholds(probs, np.array([0, 1, 2, 0]))
>>> threshold_labels(probs, taus).tolist()
[0, 1, 2, 0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograde.core.agreement import binary_kappa, binary_kappa_counts

__all__ = ["SHARE_FACTOR", "TIE", "Thresholds", "best_threshold", "cross_fitted_thresholds", "label_shares",
           "level_shares", "deployed_thresholds", "threshold_labels", "tie_groups", "tune_thresholds"]

SHARE_FACTOR = 1.5
"""A level's labelled share may differ from its judged share (on the training passages) by this factor."""


TIE = 1e-9
"""Scores closer than this (consecutive in sorted order) are one tie group: a cut never separates them."""


def tie_groups(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ascending ``scores``: the first index of every tie group (:data:`TIE`), and the cuts: ``cuts[j]`` labels
    exactly the rows from group j's first index on (``cuts[-1]`` labels none). A cut lies halfway into the gap
    below its group, never on a score, so a model saved and applied in another process, whose probabilities may
    differ in the last bits, labels every tie group the same way; below the lowest and above the highest score it
    lies halfway to 0 and to 1 (at least half a tie step away).

    >>> starts, cuts = tie_groups(np.array([0.2, 0.4, 0.4 + 1e-15, 0.9]))
    >>> starts.tolist(), [round(float(c), 6) for c in cuts]
    ([0, 1, 3], [0.1, 0.3, 0.65, 0.95])
    """
    starts = np.concatenate([[0], np.flatnonzero(np.diff(scores) >= TIE) + 1])
    first, last = float(scores[0]), float(scores[-1])
    low = first - max(first / 2, TIE / 2)
    high = last + max((1.0 - last) / 2, TIE / 2)
    return starts, np.concatenate([[low], (scores[starts[1:] - 1] + scores[starts[1:]]) / 2, [high]])


def best_threshold(score: np.ndarray, truth: np.ndarray, forced: np.ndarray | None = None,
                   candidates: int = 201, share_bounds: tuple[float, float] | None = None) -> tuple[float, float]:
    """(tau, kappa) maximising kappa of ``forced | (score >= tau)`` against ``truth`` (0/1 arrays).

    Candidates: ``candidates`` quantiles of the scores of the rows not forced (rounded to 9 decimals), each
    labelling the rows scoring at least it, and no row; each candidate's cut is then moved off the scores into the
    gap below the lowest tie group it labels (:func:`tie_groups`; a tie group it splits is labelled whole), so the
    rows it labels stay those of the quantile. Ties keep the lowest tau. With ``share_bounds`` (lo, hi), only
    candidates whose share of positive rows lies in [lo, hi] count (when none does, the one closest to the
    interval on a log scale).
    """
    truth = truth.astype(bool)
    forced = np.zeros(len(score), dtype=bool) if forced is None else forced.astype(bool)
    free = ~forced
    s, t = score[free], truth[free]
    if len(s) == 0:
        return 1.0, binary_kappa(forced, truth)
    order = np.argsort(s, kind="stable")
    s_sorted, t_sorted = s[order], t[order]
    starts, cuts = tie_groups(s_sorted)
    quantiles = np.unique(np.round(np.quantile(s, np.linspace(0.0, 1.0, candidates)), 9))
    first = np.searchsorted(s_sorted, quantiles, side="left")  # the quantile labels rows first..end
    group = np.where(first < len(s), np.searchsorted(starts, first, side="right") - 1, len(starts))
    group = np.unique(np.append(group, len(starts)))  # and: no free row positive
    taus = cuts[group]
    start = np.append(starts, len(s))[group]  # rows >= tau are start..end
    tp_after = np.concatenate([np.cumsum(t_sorted[::-1])[::-1], [0]])
    pos = (len(s) - start) + int(forced.sum())
    tp = tp_after[start] + int((forced & truth).sum())
    kappas = binary_kappa_counts(tp, pos, int(truth.sum()), len(truth))
    if share_bounds is not None:
        share = np.maximum(pos / len(truth), 1e-12)
        lo, hi = max(share_bounds[0], 1e-12), max(share_bounds[1], 1e-12)
        outside = np.maximum(np.maximum(np.log(lo / share), np.log(share / hi)), 0.0)
        if not (outside == 0).any():
            best = int(np.argmin(outside))
            return float(taus[best]), float(kappas[best])
        kappas = np.where(outside == 0, kappas, np.nan)
    if np.all(np.isnan(kappas)):
        return float(taus[0]), float("nan")
    best = int(np.nanargmax(kappas))
    return float(taus[best]), float(kappas[best])


def _level_bounds(judged: np.ndarray, level: int, higher: float) -> tuple[float, float]:
    """Bounds on the share labelled >= ``level`` that keep level ``level``'s own share (and, at level 1, level
    0's) within :data:`SHARE_FACTOR` of the judged shares ``judged``, given the share ``higher`` labelled above."""
    lo, hi = higher + judged[level] / SHARE_FACTOR, higher + judged[level] * SHARE_FACTOR
    if level == 1:
        lo, hi = max(lo, 1.0 - judged[0] * SHARE_FACTOR), min(hi, 1.0 - judged[0] / SHARE_FACTOR)
    return lo, max(lo, hi)


def tune_thresholds(probs: np.ndarray, answers: np.ndarray) -> tuple[float, ...]:
    """tau_L for every level index L >= 1 of ``probs`` (rows x levels), tuned top-down (module doc)."""
    n_levels = probs.shape[1]
    tail = np.cumsum(probs[:, ::-1], axis=1)[:, ::-1]  # P(level >= L)
    judged = np.bincount(answers, minlength=n_levels)[:n_levels] / max(len(answers), 1)
    labels = np.zeros(len(probs), dtype=int)
    taus = [1.0] * (n_levels - 1)
    for level in range(n_levels - 1, 0, -1):
        forced = labels >= level
        bounds = _level_bounds(judged, level, float(forced.mean()))
        tau, _ = best_threshold(tail[:, level], answers >= level, forced, share_bounds=bounds)
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


def level_shares(values: np.ndarray, levels: list[int]) -> dict[str, float]:
    """Share of each level among ``values`` (levels, not indices)."""
    n = max(len(values), 1)
    return {str(lv): float(np.sum(values == lv)) / n for lv in levels}


def label_shares(labels: np.ndarray, n_levels: int) -> np.ndarray:
    """Share of ``labels`` (level indices) at each level >= L, for L = 1 .. n_levels - 1."""
    n = max(len(labels), 1)
    return np.array([float(np.sum(labels >= level)) / n for level in range(1, n_levels)])


def deployed_thresholds(probs: np.ndarray, tuned: tuple[float, ...], shares: np.ndarray, judged: np.ndarray
                        ) -> tuple[float, ...]:
    """The thresholds of the deployed model, whose P(level) of the training passages are ``probs`` (top level
    first): tau_L = ``tuned[L - 1]`` when the share it labels L (and, at L = 1, 0) lies within the band of the
    judged shares ``judged``; otherwise the threshold whose share labelled >= L is nearest to ``shares[L - 1]``
    (the share the tuned thresholds label >= L out of fold) among those within the band (nearest to the band
    when ties in P(level >= L) leave none inside)."""
    n, n_levels = probs.shape
    tail = np.cumsum(probs[:, ::-1], axis=1)[:, ::-1]
    labels = np.zeros(n, dtype=int)
    taus = [1.0] * (n_levels - 1)
    for level in range(n_levels - 1, 0, -1):
        forced = labels >= level
        lo, hi = _level_bounds(judged, level, float(forced.mean()))
        tau = float(tuned[level - 1])
        kept = float(np.mean(forced | (tail[:, level] >= tau)))
        values = np.sort(tail[~forced, level])
        if not lo - 1e-12 <= kept <= hi + 1e-12 and len(values):
            starts, cuts = tie_groups(values)
            options = cuts[::-1]  # option k labels the k highest tie groups: cum[k] rows
            counts = np.diff(np.append(starts, len(values)))[::-1]
            share = np.maximum((forced.sum() + np.concatenate([[0], np.cumsum(counts)])) / n, 1e-12)
            outside = np.maximum(np.maximum(np.log(max(lo, 1e-12) / share), np.log(share / max(hi, 1e-12))), 0.0)
            miss = np.where(outside > 0, 10.0 + outside, np.abs(share - float(shares[level - 1])))
            tau = float(options[int(np.argmin(miss))])  # any share inside the band before any outside
        taus[level - 1] = tau
        labels = np.where(~forced & (tail[:, level] >= tau), level, labels)
    return tuple(taus)


@dataclass(frozen=True)
class Thresholds:
    """Cross-fitted thresholds: tuned on the out-of-fold predictions (``tuned``), set for the deployed model
    (``deployed``), and the level shares each gives the training passages (levels >= L, L = 1..)."""

    tuned: tuple[float, ...]
    deployed: tuple[float, ...]
    oof_labels: np.ndarray
    deployed_labels: np.ndarray


def cross_fitted_thresholds(oof: np.ndarray, deployed: np.ndarray, answers: np.ndarray) -> Thresholds:
    """Thresholds tuned on ``oof`` (out-of-fold P(level) of the training passages, against ``answers``) and
    matched to ``deployed`` (the deployed model's P(level) of the same passages): module doc."""
    tuned = tune_thresholds(oof, answers)
    oof_labels = threshold_labels(oof, tuned)
    judged = np.bincount(answers, minlength=oof.shape[1])[:oof.shape[1]] / max(len(answers), 1)
    taus = deployed_thresholds(deployed, tuned, label_shares(oof_labels, oof.shape[1]), judged)
    return Thresholds(tuned, taus, oof_labels, threshold_labels(deployed, taus))
