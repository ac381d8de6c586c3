"""Agreement and rank-correlation statistics shared by the leaderboards, the reports and the calibration stage.

>>> cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0])
0.5
>>> round(cohen_kappa([0, 1, 2], [0, 2, 2], weights="linear"), 4)
0.6667
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.stats import rankdata

KappaWeights = Literal["linear", "quadratic"] | None


def confusion_matrix(a: Sequence[int], b: Sequence[int], labels: Sequence[int] | None = None) -> tuple[np.ndarray, list[int]]:
    """Counts ``m[i, j]`` of items labelled ``labels[i]`` by ``a`` and ``labels[j]`` by ``b`` (labels sorted)."""
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length: {len(a)} vs {len(b)}")
    lab = sorted(set(a) | set(b)) if labels is None else list(labels)
    index = {v: i for i, v in enumerate(lab)}
    m = np.zeros((len(lab), len(lab)), dtype=np.int64)
    for x, y in zip(a, b, strict=True):
        m[index[x], index[y]] += 1
    return m, lab


def cohen_kappa(a: Sequence[int], b: Sequence[int], weights: KappaWeights = None,
                labels: Sequence[int] | None = None) -> float:
    """Cohen's kappa of two labelings of the same items (unweighted, or linearly / quadratically weighted).

    Same definition as ``sklearn.metrics.cohen_kappa_score``: disagreement weights ``|i - j|`` (linear) or
    ``(i - j)^2`` (quadratic) over the positions of the sorted label set. Returns NaN when agreement by chance
    is total (one label only on both sides), as sklearn does.
    """
    m, lab = confusion_matrix(a, b, labels)
    n = m.sum()
    if n == 0:
        return float("nan")
    k = len(lab)
    idx = np.arange(k)
    if weights is None:
        w = (idx[:, None] != idx[None, :]).astype(float)
    elif weights == "linear":
        w = np.abs(idx[:, None] - idx[None, :]).astype(float)
    elif weights == "quadratic":
        w = ((idx[:, None] - idx[None, :]) ** 2).astype(float)
    else:
        raise ValueError(f"unknown kappa weights {weights!r}; valid: None, 'linear', 'quadratic'")
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    denom = float((w * expected).sum())
    if denom == 0.0:
        return float("nan")
    return float(1.0 - (w * m).sum() / denom)


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, k=1)


def kendall_matrix(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of ``scores`` (B x n) against ``truth`` (n; higher = better)."""
    i, j = _pairs(scores.shape[1])
    sx = np.sign(scores[:, i] - scores[:, j])
    sy = np.sign(truth[i] - truth[j])
    num = (sx * sy).sum(axis=1)
    den = np.sqrt((sx != 0).sum(axis=1) * float((sy != 0).sum()))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def spearman_matrix(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Spearman's rho (Pearson of average ranks) of each row of ``scores`` against ``truth``."""
    rx = rankdata(scores, axis=1, method="average")
    ry = rankdata(truth, method="average")
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean()
    den = np.sqrt((rx**2).sum(axis=1) * (ry**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx @ ry) / np.where(den > 0, den, 1), np.nan)


def tau_ap_matrix(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """tau-ap of each row of ``scores`` (the ranking under test, higher = better) against ``truth``
    (higher = better); ties in a row are broken by column order, ties in ``truth`` are never "better"."""
    b, n = scores.shape
    if n < 2:
        return np.full(b, np.nan)
    tiebreak = np.broadcast_to(np.arange(n), scores.shape)
    order = np.lexsort((tiebreak, -scores), axis=-1)  # best first
    t = truth[order]  # B x n, truth value at each position
    better = t[:, :, None] > t[:, None, :]  # [b, m, k]: item at m officially better than item at k
    above = np.tril(np.ones((n, n), dtype=bool), k=-1).T  # [m, k]: m < k
    c = (better & above[None]).sum(axis=1)[:, 1:]  # for positions k = 1..n-1
    return 2.0 / (n - 1) * (c / np.arange(1, n)).sum(axis=1) - 1.0
