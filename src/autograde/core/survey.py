"""Estimates from a human sample with known inclusion probabilities: the difference (model-assisted) estimator of a
finite-pool total, its variance under Poisson sampling, normal intervals, the probabilities of a sampling design
for a budget, and the i.i.d. prediction-powered mean of Angelopoulos et al. (with the PPI++ power tuning).

A pool of N units (query-passage pairs) has an unknown human value ``y_i`` (a gain) and a prediction ``f_i``. A
Poisson design includes unit i independently with a known probability ``pi_i > 0``. The pseudo-label
``f_i + 1[i sampled] (y_i - f_i) / pi_i`` has expectation ``y_i`` over the design, whatever ``f`` is, and the
pseudo-labels of different units are independent; so any total ``sum_i w_i y_i`` is estimated without bias by
``sum_i w_i * pseudo_i`` (the difference estimator; Sarndal, Swensson and Wretman 1992, section 6.3), and its
variance ``sum_i (1 - pi_i) / pi_i * w_i^2 (y_i - f_i)^2`` is estimated without bias by
``sum over sampled i of (1 - pi_i) / pi_i^2 * w_i^2 (y_i - f_i)^2``. The same holds for any polynomial in which no
unit's pseudo-label appears twice in one product (independence).

>>> pseudo_labels(np.array([0.5, 0.5]), np.array([1.0, np.nan]), np.array([0.25, 0.25]), np.array([True, False]))
array([2.5, 0.5])
>>> capped_probabilities(np.array([1.0, 1.0, 8.0]), 2.0).tolist()
[0.5, 0.5, 1.0]
"""

from __future__ import annotations

import numpy as np

from autograde.core.stats import normal_quantile


def pseudo_labels(predicted: np.ndarray, observed: np.ndarray, pi: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """``predicted + 1[sampled] (observed - predicted) / pi`` (arrays broadcast; ``observed`` and ``pi`` are not
    read where a unit is not sampled, so they may hold NaN or 0 there)."""
    f = np.asarray(predicted, dtype=np.float64)
    y = np.where(sampled, observed, 0.0)
    p = np.where(sampled, pi, 1.0)
    return np.asarray(f + np.where(sampled, (y - f) / p, 0.0), dtype=np.float64)


def poisson_factor(pi: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """``1[sampled] (1 - pi) / pi^2``: the variance of a total under Poisson sampling is estimated by the sum of
    this factor times the squared linearized residual of each unit (0 for a unit taken with certainty)."""
    p = np.where(sampled, pi, 1.0)
    return np.asarray(np.where(sampled, (1.0 - p) / (p * p), 0.0), dtype=np.float64)


def normal_interval(estimate: np.ndarray, variance: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """``estimate -/+ z * sqrt(variance)`` with the two-sided normal critical value of ``confidence``."""
    half = normal_quantile(confidence) * np.sqrt(np.maximum(np.asarray(variance, dtype=np.float64), 0.0))
    est = np.asarray(estimate, dtype=np.float64)
    return est - half, est + half


def capped_probabilities(scores: np.ndarray, budget: float | np.ndarray) -> np.ndarray:
    """Inclusion probabilities proportional to ``scores`` (>= 0) along the last axis, summing to ``budget``, none
    above 1 (units that would exceed 1 are taken with certainty and the rest rescaled, until none exceeds 1).

    A unit with score 0 gets probability 0; the caller mixes in a uniform share when every unit must be
    sampleable. ``budget`` may differ per row (an array broadcasting against ``scores[..., 0]``).
    """
    s = np.asarray(scores, dtype=np.float64)
    b = np.broadcast_to(np.asarray(budget, dtype=np.float64), s.shape[:-1]).copy()
    certain = np.zeros(s.shape, dtype=bool)
    pi = np.zeros_like(s)
    for _ in range(s.shape[-1] + 1):
        free = np.where(certain, 0.0, s)
        total = free.sum(axis=-1)
        left = b - certain.sum(axis=-1)
        scale = np.divide(left, total, out=np.zeros_like(total), where=total > 0)
        pi = np.where(certain, 1.0, free * scale[..., None])
        over = (pi > 1.0) & ~certain
        if not over.any():
            break
        certain |= over
    return np.asarray(np.minimum(pi, 1.0), dtype=np.float64)


def mix_uniform(pi: np.ndarray, share: float) -> np.ndarray:
    """``(1 - share) * pi + share * mean(pi)`` along the last axis: the same expected size, every unit sampleable
    when ``share > 0`` (a floor that bounds the variance when the scores behind ``pi`` are wrong: the variance is
    at most ``1 / share`` times that of the uniform design's)."""
    p = np.asarray(pi, dtype=np.float64)
    return np.asarray((1.0 - share) * p + share * p.mean(axis=-1, keepdims=True), dtype=np.float64)


def ppi_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> float:
    """The PPI++ power-tuning weight of a mean (Angelopoulos, Duchi and Zrnic 2023), clipped to [0, 1]: the
    covariance of labels and predictions on the labeled set over ``(1 + n/N)`` times the variance of every
    prediction (labeled and unlabeled together), computed as the reference implementation ``ppi_py`` does."""
    y, f, fu = (np.asarray(a, dtype=np.float64).ravel() for a in (y, yhat, yhat_unlabeled))
    n, big_n = len(y), len(fu)
    est = fu.mean() + (y - f).mean()
    g, gh, ghu = y - est, f - est, fu - est
    cov = 2.0 * float(((g - g.mean()) * (gh - gh.mean())).sum()) / n
    var = float(np.var(np.concatenate([gh, ghu]), ddof=1))
    lam = cov / (2.0 * (1.0 + n / big_n) * var) if var > 0 else 0.0
    return float(np.clip(lam, 0.0, 1.0))


def ppi_mean(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, lam: float | None = 1.0,
             confidence: float = 0.9) -> tuple[float, float, float, float]:
    """The prediction-powered mean of i.i.d. data (Angelopoulos et al., Science 2023) and its normal interval:
    ``(estimate, low, high, lam)``. ``lam`` 1 is plain PPI, 0 the classical mean of the labels, None the PPI++
    power-tuned weight (:func:`ppi_lambda`).

    The estimate is ``lam * mean(yhat_unlabeled) + mean(y - lam * yhat)``; its variance adds the variance of the
    two means (population variances, as ``ppi_py`` computes them).

    >>> est, lo, hi, lam = ppi_mean(np.array([1.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.0]))
    >>> round(est, 4), lam
    (0.8333, 1.0)
    """
    y, f, fu = (np.asarray(a, dtype=np.float64).ravel() for a in (y, yhat, yhat_unlabeled))
    lam_used = ppi_lambda(y, f, fu) if lam is None else float(lam)
    est = float((lam_used * fu).mean() + (y - lam_used * f).mean())
    variance = float(np.var(lam_used * fu) / len(fu) + np.var(y - lam_used * f) / len(y))
    lo, hi = normal_interval(np.array(est), np.array(variance), confidence)
    return est, float(lo), float(hi), lam_used
