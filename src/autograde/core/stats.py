"""Every statistic of the tool, in one place with :mod:`autograde.core.agreement` (agreement between labellings:
kappa, alpha): rank and value correlations, ranks, bootstrap intervals, paired tests, p-value formatting. Where scipy or scikit-learn has the statistic, the value is theirs (tests check ours against
them where ours is vectorised). scipy is imported inside the functions that need it: importing ``scipy.stats``
costs about a second, and every rule job imports this module.

>>> format_p(0.0078125), format_p(1e-05), format_p(0.5), format_p(float("nan"))
('0.007812', '1e-05', '0.5', '')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

RANK_PRECISION = 12
"""Significant digits of scores compared for ranks: means equal in exact arithmetic but summed in another topic order
differ in the last bit; at 12 digits they tie (a mean of trec_eval values has far fewer meaningful digits)."""


def round_scores(values: Sequence[float] | np.ndarray, precision: int = RANK_PRECISION) -> np.ndarray:
    """``values`` rounded to ``precision`` significant digits (NaN, infinities and zeros kept): what every rank and
    rank statistic of the tool compares, so that summation order never decides a tie.

    >>> a, b = sum([0.1, 0.2, 0.3]), sum([0.3, 0.2, 0.1])
    >>> a == b, bool(round_scores([a])[0] == round_scores([b])[0])
    (False, True)
    """
    x = np.asarray(values, dtype=float)
    out = x.copy()
    finite = np.isfinite(x) & (x != 0)
    if not finite.any():
        return out
    v = x[finite]
    d = np.clip(precision - 1 - np.floor(np.log10(np.abs(v))), -300, 300)  # decimals kept (10**d stays finite)
    p = 10.0 ** np.abs(d)  # dividing by an exact power of ten gives the float nearest the rounded decimal
    with np.errstate(over="ignore", invalid="ignore"):
        out[finite] = np.where(d >= 0, np.round(v * p) / p, np.round(v / p) * p)
    return out


def rank_scores(values: Sequence[float] | np.ndarray, precision: int = RANK_PRECISION) -> np.ndarray:
    """Ranks of scores, 1 for the highest, ties sharing their average rank (``rankdata(-score, "average")``), on the
    scores rounded to ``precision`` significant digits (:func:`round_scores`): the one way the tool ranks systems.
    Along the last axis (a row holding NaN is all NaN).

    >>> rank_scores([0.7, sum([0.1, 0.2, 0.3]), sum([0.3, 0.2, 0.1])]).tolist()  # equal in exact arithmetic: a tie
    [1.0, 2.5, 2.5]
    """
    return average_ranks(-round_scores(values, precision))


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, k=1)


def kendall_matrix(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of ``scores`` (B x n) against ``truth`` (n, or B x n: one truth per row;
    higher = better), both compared at :data:`RANK_PRECISION` (:func:`round_scores`); NaN where a row or the
    truth is constant."""
    scores, truth = round_scores(scores), round_scores(truth)
    i, j = _pairs(scores.shape[1])
    sx = np.sign(scores[:, i] - scores[:, j])
    sy = np.sign(truth[..., i] - truth[..., j])
    num = (sx * sy).sum(axis=1)
    den = np.sqrt((sx != 0).sum(axis=1) * (sy != 0).sum(axis=-1).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks along the last axis, 1 for the lowest value, ties sharing their average rank; a row holding NaN is all
    NaN: scipy's ``rankdata(values, axis=-1, method="average")`` (tests/core check it), without importing
    ``scipy.stats`` (about a second per job: the leaderboards, cover and reports jobs rank).

    >>> average_ranks([3.0, 1.0, 3.0, 2.0]).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return x.copy()
    a = x.reshape(-1, x.shape[-1])
    n = a.shape[1]
    order = np.argsort(a, axis=1, kind="mergesort")
    s = np.take_along_axis(a, order, axis=1)
    idx = np.broadcast_to(np.arange(n), a.shape)
    first = np.ones(a.shape, dtype=bool)
    first[:, 1:] = s[:, 1:] != s[:, :-1]
    last = np.ones(a.shape, dtype=bool)
    last[:, :-1] = s[:, :-1] != s[:, 1:]
    start = np.maximum.accumulate(np.where(first, idx, 0), axis=1)
    end = np.minimum.accumulate(np.where(last, idx, n - 1)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty(a.shape, dtype=float)
    np.put_along_axis(ranks, order, (start + end) / 2.0 + 1.0, axis=1)
    ranks[np.isnan(a).any(axis=1)] = np.nan
    return ranks.reshape(x.shape)


def spearman_matrix(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Spearman's rho (Pearson of average ranks) of each row of ``scores`` against ``truth`` (n, or B x n), both
    ranked at :data:`RANK_PRECISION`; NaN where a row or the truth is constant."""
    rx = average_ranks(round_scores(scores))
    ry = average_ranks(round_scores(truth))
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


def tau_ap_matrix(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """tau-ap of each row of ``scores`` (the ranking under test, higher = better) against ``truth``
    (n, or B x n; higher = better), both compared at :data:`RANK_PRECISION`; ties in a row are broken by column
    order, ties in ``truth`` are never "better". Undefined (NaN) wherever Kendall's tau is: a constant row or a
    constant truth (a constant truth would give -1, a constant row a value set by the column order alone).

    >>> tau_ap_matrix(np.array([[3.0, 2.0, 1.0], [1.0, 1.0, 1.0]]), np.array([3.0, 2.0, 1.0])).tolist()
    [1.0, nan]
    """
    scores, truth = round_scores(scores), round_scores(truth)
    b, n = scores.shape
    if n < 2:
        return np.full(b, np.nan)
    full = np.broadcast_to(truth, scores.shape)
    constant = (scores == scores[:, :1]).all(axis=1) | (full == full[:, :1]).all(axis=1)
    tiebreak = np.broadcast_to(np.arange(n), scores.shape)
    order = np.lexsort((tiebreak, -scores), axis=-1)  # best first
    t = np.take_along_axis(np.broadcast_to(truth, scores.shape), order, axis=1)  # truth value at each position
    better = t[:, :, None] > t[:, None, :]  # [b, m, k]: item at m officially better than item at k
    above = np.tril(np.ones((n, n), dtype=bool), k=-1).T  # [m, k]: m < k
    c = (better & above[None]).sum(axis=1)[:, 1:]  # for positions k = 1..n-1
    return np.where(constant, np.nan, 2.0 / (n - 1) * (c / np.arange(1, n)).sum(axis=1) - 1.0)


def _tau_ap_ties(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tau_AP of ``x`` given ``y`` with ties (pyircore's ``tauap_b_ties`` on the negated values, row-wise): every
    item below ``y``'s first tie group counts the items of higher groups it is concordant with in ``x`` (average
    ranks of ``x``, ``y``'s ties in column order), over the number of those items."""
    b, n = x.shape
    rx = average_ranks(-x)
    order = np.argsort(-y, axis=1, kind="mergesort")
    ry = np.empty_like(rx)
    np.put_along_axis(ry, order, np.broadcast_to(np.arange(1.0, n + 1.0), (b, n)), axis=1)
    p = (y[:, None, :] > y[:, :, None]).sum(axis=2)  # items ranked strictly above by y (min rank - 1)
    above = p[:, None, :] < p[:, :, None]  # [b, i, j]: j in a higher tie group than i
    concordant = np.sign(rx[:, :, None] - rx[:, None, :]) == np.sign(ry[:, :, None] - ry[:, None, :])
    c = (above & concordant).sum(axis=2)
    counted = p > 0
    n_not_top = counted.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.where(counted, c / np.where(counted, p, 1), 0.0).sum(axis=1)
        return np.where(n_not_top > 0, 2.0 / np.maximum(n_not_top, 1) * total - 1.0, 0.0)


def tau_ap_b_matrix(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """tau_AP_b (Urbano and Marrero, 2017), the symmetric tau-ap with ties of TREC AutoJudge's ``meta-evaluate``
    (``tauap_b``, pyircore's): the mean of each ranking's tau-ap with ties against the other, per row of ``scores``
    (B x n) against ``truth`` (n, or B x n); higher = better. 0 where every item ties (as pyircore).

    >>> float(tau_ap_b_matrix(np.array([[3.0, 2.0, 1.0]]), np.array([3.0, 2.0, 1.0]))[0])
    1.0
    """
    y = np.broadcast_to(np.asarray(truth, dtype=float), scores.shape)
    x = np.asarray(scores, dtype=float)
    return (_tau_ap_ties(x, y) + _tau_ap_ties(y, x)) / 2.0


def kendall_top_k_matrix(scores: np.ndarray, truth: np.ndarray, k: int) -> np.ndarray:
    """Kendall's tau-b among the ``k`` systems that ``truth`` ranks highest, per row (TREC AutoJudge's
    ``kendall@k``): each row keeps the top ``k`` columns by its truth (ties: the earlier column first, as a
    stable sort of the truth's system order), and correlates ``scores`` with ``truth`` over them; NaN for
    fewer than 3 systems (AutoJudge refuses them). ``truth`` is n or B x n; all systems when ``k`` >= n.

    >>> ours, humans = np.array([[5.0, 4.0, 3.0, 1.0, 2.0]]), np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    >>> float(kendall_top_k_matrix(ours, humans, 3)[0]), round(float(kendall_top_k_matrix(ours, humans, 5)[0]), 4)
    (1.0, 0.8)
    """
    b, n = scores.shape
    keep = min(k, n)
    if keep < 3:
        return np.full(b, np.nan)
    scores = round_scores(scores)
    full = np.broadcast_to(round_scores(truth), scores.shape)
    tiebreak = np.broadcast_to(np.arange(n), scores.shape)
    top = np.lexsort((tiebreak, -full), axis=-1)[:, :keep]
    return kendall_matrix(np.take_along_axis(scores, top, axis=1), np.take_along_axis(full, top, axis=1))


def bootstrap_weights(n_items: int, samples: int, seed: int) -> np.ndarray:
    """How often each of ``n_items`` items is drawn in each of ``samples`` resamples with replacement
    (samples x n_items counts, ``numpy.random.default_rng(seed)``: the same seed, the same resamples)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_items, size=(samples, n_items))
    weights = np.zeros((samples, n_items))
    np.add.at(weights, (np.arange(samples)[:, None], idx), 1.0)
    return weights


def percentile_interval(dist: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of a bootstrap distribution at ``confidence`` (NaN, NaN when it has no finite
    value)."""
    finite = dist[np.isfinite(dist)]
    if not len(finite):
        return float("nan"), float("nan")
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(finite, [alpha, 1 - alpha])
    return float(lo), float(hi)


def mean_interval(values: Sequence[float] | np.ndarray, samples: int, seed: int,
                  confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` with its seeded bootstrap percentile interval (NaN for no
    values; the mean itself for no resamples).

    >>> mean_interval([0.0, 0.0, 0.0], 100, 0)
    (0.0, 0.0, 0.0)
    """
    x = np.asarray(values, dtype=float)
    if not len(x):
        return float("nan"), float("nan"), float("nan")
    mean = float(x.mean())
    if samples <= 0:
        return mean, mean, mean
    w = bootstrap_weights(len(x), samples, seed)
    lo, hi = percentile_interval(w @ x / len(x), confidence)
    return mean, lo, hi


def format_p(p: float) -> str:
    """A p-value as text with 4 significant digits (never rounded to 0.0000): ``0.007812``, ``1e-05``; NaN -> ``""``."""
    return "" if p != p else f"{float(p):.4g}"


CorrelationKind = Literal["pearson", "spearman", "kendall"]
CONSTANT_TOLERANCE = 1e-12
"""A sequence whose values differ by at most this (relative to their size) is constant: its correlation is NaN."""


def is_constant(x: np.ndarray) -> bool:
    """Whether ``x`` is constant up to floating-point noise (a mean computed in pieces is still a constant)."""
    if len(x) == 0:
        return True
    return float(np.ptp(x)) <= CONSTANT_TOLERANCE * max(1.0, float(np.max(np.abs(x))))


def correlation(kind: CorrelationKind, a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Pearson, Spearman or Kendall's tau-b of two paired sequences (scipy's ``pearsonr``, ``spearmanr``,
    ``kendalltau`` values to rounding, tests/core check it, without importing ``scipy.stats``: about a second per
    job); NaN when undefined: fewer than two pairs, or either side constant (up to :data:`CONSTANT_TOLERANCE`), where
    scipy would return noise.

    >>> correlation("pearson", [1, 2, 3], [2, 4, 7]) > 0.98, correlation("kendall", [1, 1, 1], [1, 2, 3])
    (True, nan)
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2 or is_constant(x) or is_constant(y):
        return float("nan")
    if kind == "kendall":
        return float(kendall_matrix(x[None, :], y)[0])
    if kind == "spearman":
        x, y = average_ranks(round_scores(x)), average_ranks(round_scores(y))
    return _pearson(x, y)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r as scipy computes it (centred, scaled by the largest deviation, then normalised; clipped)."""
    xm, ym = x - x.mean(), y - y.mean()
    xm, ym = xm / np.max(np.abs(xm)), ym / np.max(np.abs(ym))
    r = float(np.dot(xm / np.linalg.norm(xm), ym / np.linalg.norm(ym)))
    return max(min(r, 1.0), -1.0)


def paired_t_pvalues(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Paired t-test p-values per column of two (queries x measures) arrays (scipy ``ttest_rel``); identical
    columns give 1, not NaN; fewer than two rows give NaN."""
    import warnings

    from scipy import stats

    if a.shape[0] < 2:
        return np.full(a.shape[1], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        # scipy warns about precision loss when a column's differences are (nearly) constant; identical
        # columns are set to 1 below; constant non-zero differences give p close to 0, as they should.
        warnings.simplefilter("ignore", RuntimeWarning)
        p = np.asarray(stats.ttest_rel(a, b, axis=0).pvalue, dtype=np.float64)
    p[np.all(a == b, axis=0)] = 1.0
    return p


def scipy_paired_permutation_pvalues(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Two-sided p-values of the mean paired difference per column, by scipy's ``permutation_test`` (sign flips of
    the pairs; exact when there are few enough arrangements): the reference the tool's own permutation test
    (:mod:`autograde.metrics.significance`) is checked against."""
    from scipy import stats

    res = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
                                 permutation_type="samples", alternative="two-sided", n_resamples=n_resamples,
                                 axis=0, rng=np.random.default_rng(seed))
    return np.asarray(res.pvalue, dtype=float)


def normal_quantile(confidence: float) -> float:
    """The two-sided standard-normal critical value of a ``confidence`` interval (scipy's ``norm.ppf``): 1.96 for
    0.95.

    >>> round(normal_quantile(0.95), 4)
    1.96
    """
    from scipy.stats import norm

    return float(norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def t_quantile(confidence: float, df: np.ndarray | float) -> np.ndarray:
    """The two-sided Student-t critical values of a ``confidence`` interval for ``df`` degrees of freedom (scipy's
    ``t.ppf``); an infinite or NaN ``df`` gives the normal value.

    >>> t_quantile(0.95, np.array([1.0, np.inf])).round(3).tolist()
    [12.706, 1.96]
    """
    from scipy.stats import t

    d = np.asarray(df, dtype=np.float64)
    z = normal_quantile(confidence)
    finite = np.isfinite(d) & (d > 0)
    return np.asarray(np.where(finite, t.ppf(1.0 - (1.0 - confidence) / 2.0, np.where(finite, d, 1.0)), z),
                      dtype=np.float64)


def t_two_sided_p(statistic: np.ndarray | float, df: np.ndarray | float) -> np.ndarray:
    """Two-sided p-values of Student-t statistics (normal where ``df`` is infinite or NaN)."""
    from scipy.stats import norm, t

    x = np.abs(np.asarray(statistic, dtype=np.float64))
    d = np.asarray(df, dtype=np.float64)
    finite = np.isfinite(d) & (d > 0)
    return np.asarray(np.where(finite, 2.0 * t.sf(x, np.where(finite, d, 1.0)), 2.0 * norm.sf(x)), dtype=np.float64)
