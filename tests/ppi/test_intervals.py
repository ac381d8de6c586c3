"""Bounded intervals and estimates that stay in their measure's range: Feldman and Cousins' unified intervals against
their published table and by their exact coverage; the ratio measures calibrated per query never explode where a
query's sample shows no relevant passage; every estimate and interval of every measure lies in its range."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from autograde.metrics.estimable import estimable_measure
from autograde.ppi.calibration import (
    LEVERAGE_CAP,
    count_scale,
    design_weights,
    leverage,
    query_calibrated,
    residual_correction,
)
from autograde.ppi.estimators import Round, estimate_measures, zero_gains
from autograde.ppi.intervals import bounded_interval
from autograde.ppi.measures import gains_from_distribution, gains_from_grades, measure_range
from autograde.ppi.pool import pool_order, ranked_pool

LEVELS = [0, 1, 2, 3]


def test_feldman_cousins_table() -> None:
    """Feldman and Cousins (1998), Table X (a Gaussian mean known to be >= 0, unit standard deviation, 95%): the
    intervals of x0 = -2, -1, 0, 1, 2, 3 are [0, 0.62], [0, 1.10], [0, 1.96], [0, 2.96], [0.35, 3.96],
    [1.14, 4.96]."""
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    lo, hi = bounded_interval(x, np.ones(6), np.inf, 0.0, np.inf, 0.95)
    assert np.abs(lo - [0.0, 0.0, 0.0, 0.0, 0.35, 1.14]).max() < 0.006
    assert np.abs(hi - [0.62, 1.10, 1.96, 2.96, 3.96, 4.96]).max() < 0.006
    far = bounded_interval(np.array([0.5]), np.array([0.01]), np.inf, 0.0, 1.0, 0.95)  # far from both edges
    assert abs(far[0][0] - (0.5 - 1.959964 * 0.01)) < 1e-6 and abs(far[1][0] - (0.5 + 1.959964 * 0.01)) < 1e-6


def _intervals_of(mu: float, se: float, z: np.ndarray) -> np.ndarray:
    """Whether the interval of each estimate ``mu + se z`` holds ``mu``; checks on the way that every interval is
    nonempty and inside [0, 1], and that both ends are nondecreasing in the estimate (so the estimates whose interval
    holds ``mu`` form one span)."""
    lo, hi = bounded_interval(mu + se * z, np.full(z.shape, se), np.inf, 0.0, 1.0, 0.95)
    assert np.all(lo <= hi) and lo.min() >= 0.0 and hi.max() <= 1.0
    assert np.all(np.diff(lo) >= -1e-12) and np.all(np.diff(hi) >= -1e-12)
    return (lo <= mu) & (mu <= hi)


def _exact_coverage(mu: float, se: float) -> float:
    """The probability that the interval of a normal estimate ``N(mu, se^2)`` holds ``mu``: the span of standardized
    estimates whose interval holds it, found on a grid of 801 estimates over 8 standard errors either side (beyond
    them lies under 1e-15 of the probability), each end refined on a grid 1,000 times finer (to 2e-5 standard
    errors), then the normal probability of the span."""
    from scipy.special import ndtr

    z = np.linspace(-8.0, 8.0, 801)
    inside = _intervals_of(mu, se, z)
    held = np.flatnonzero(inside)
    assert held.size and np.all(np.diff(held) == 1)  # one span
    brackets = [(z[held[0] - 1], z[held[0]]) if held[0] > 0 else None,
                (z[held[-1]], z[held[-1] + 1]) if held[-1] < len(z) - 1 else None]
    grids = [np.linspace(a, b, 1001) for a, b in (pair for pair in brackets if pair is not None)]
    found = []
    for grid, flags in zip(grids, np.split(_intervals_of(mu, se, np.concatenate(grids)), len(grids)) if grids else [],
                           strict=True):
        switch = np.flatnonzero(np.diff(flags.astype(int)))
        assert switch.size == 1, (mu, se, grid[0], grid[-1])  # one end of the span in the bracket
        found.append((grid[switch[0]] + grid[switch[0] + 1]) / 2.0)
    ends = iter(found)
    low = next(ends) if brackets[0] is not None else -np.inf
    high = next(ends) if brackets[1] is not None else np.inf
    return float(ndtr(high) - ndtr(low))


@pytest.mark.parametrize("mu", [0.0, 0.01, 0.05, 0.5, 0.97, 1.0])
@pytest.mark.parametrize("se", [0.03, 0.2, 0.6])
def test_bounded_intervals_cover_as_stated_and_stay_in_the_range(mu: float, se: float) -> None:
    """For normal estimates of any value in [0, 1], near an edge or not, narrow or wide: the exact coverage (the
    normal probability of the estimates whose interval holds the value) is 0.95 within 1e-4, and every interval of
    an estimate within 8 standard errors is nonempty and inside [0, 1]."""
    assert abs(_exact_coverage(mu, se) - 0.95) < 1e-4


def test_student_t_away_from_the_edges_and_special_cases() -> None:
    from autograde.core.stats import t_quantile

    lo, hi = bounded_interval(np.array([0.5]), np.array([0.02]), np.array([4.0]), 0.0, 1.0, 0.95)
    assert abs(hi[0] - 0.5 - float(t_quantile(0.95, 4.0)) * 0.02) < 1e-9 and abs(0.5 - lo[0] - (hi[0] - 0.5)) < 1e-12
    lo, hi = bounded_interval(np.array([1.2, 0.3, 0.4]), np.array([0.0, np.inf, np.nan]), 3.0, 0.0, 1.0, 0.95)
    assert lo.tolist() == [1.0, 0.0, 0.0] and hi.tolist() == [1.0, 1.0, 1.0]


def _rare_case() -> tuple:
    """Two queries: one with 40 passages of which 2 are relevant, one with 40 of which 20 are; 4 systems; a
    prediction that calls a quarter of every query relevant."""
    rng = np.random.default_rng(3)
    truth = {}
    for q, share in (("q1", 2), ("q2", 20)):
        for i in range(40):
            truth[(q, f"{q}-{i}")] = 3 if i < share else 0
    keys = pool_order(list(truth))
    grades = np.array([truth[k] for k in keys], dtype=np.float64)
    rows = [(f"s{s}", q, d, float(g * (3 - s) + rng.random() * 4)) for s in range(4) for (q, d), g in truth.items()]
    ranked = ranked_pool(pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "score"]), keys)
    probs = np.tile([0.75, 0.0, 0.0, 0.25], (len(keys), 1))
    return keys, ranked, grades, probs


def test_a_query_whose_sample_shows_no_relevant_passage_does_not_explode() -> None:
    """Whatever the sample, the ratio measures stay near their range: no division of a numerator by a count that
    crosses zero (the count of the rare query is the calibrated prediction's, never negative)."""
    keys, ranked, grades, probs = _rare_case()
    rng = np.random.default_rng(5)
    pi = np.full((400, len(keys)), 0.1)
    rounds = [Round(pi, rng.random(pi.shape) < pi, 1.0)]
    pred, obs = gains_from_distribution(probs, LEVELS, 2), gains_from_grades(grades, LEVELS, 2)
    for name in ("ndcg_cut_10", "map", "recall_10"):
        m = estimable_measure(name)
        est = estimate_measures([m], ranked, pred, obs, rounds, variance_floor=True)[name]
        assert np.abs(est.per_query).max() < 1.0 / 0.1 + 1.0, name  # at most one judged unit's weight per query
        lo, hi = est.interval(0.95)
        assert est.reported.min() >= 0.0 and est.reported.max() <= 1.0 and lo.min() >= 0.0 and hi.max() <= 1.0


def test_the_calibration_reproduces_each_querys_sample() -> None:
    """Per query the design-weighted judged units are reproduced (the count's residuals cancel); a query whose
    judged units are all below the grade keeps half a unit expected among them, never more than the prediction; the
    g-weight is the pool's Bernoulli mass over the judged units'."""
    keys, ranked, grades, probs = _rare_case()
    rng = np.random.default_rng(2)
    pi = np.full((50, len(keys)), 0.25)
    s = rng.random(pi.shape) < pi
    y = (grades >= 2).astype(float)
    f = np.full(pi.shape, 0.25)
    w = design_weights(pi, s)
    m = query_calibrated(f, y, w, ranked)
    seg = ranked.per_query_sum
    seen = seg(s * y / pi)
    target = np.where(seen > 0, seen, np.minimum(0.5, seg(s * f / pi)))
    assert np.abs(seg(s * m / pi) - target).max() < 1e-9
    assert np.all((m > 0) & (m < 1))
    g = count_scale(m, w, ranked)
    v = m * (1 - m)
    assert np.allclose(g, seg(v) / seg(s * v / pi))
    exact = query_calibrated(np.where(y > 0, 1.0, 0.0)[None].repeat(50, 0), y, w, ranked)
    assert np.abs(exact - y).max() < 1e-9  # a prediction equal to the truth is kept


def test_the_residual_factor_is_the_residual_of_the_calibration_refitted_without_the_unit() -> None:
    """A judged unit's leverage is its share of its query's calibration (the judged units of a query sum to 1), and
    its residual scaled by ``1 / (1 - h)`` is, to first order, its residual under the calibration refitted without it
    (exactly: the unit's weight set to 0), on the two-sided queries of 50 samples (within 5%; 2.2% measured)."""
    keys, ranked, grades, probs = _rare_case()
    rng = np.random.default_rng(4)
    pi = np.full((50, len(keys)), 0.5)
    s = rng.random(pi.shape) < pi
    y = (grades >= 2).astype(float)
    f = np.clip(0.25 + 0.5 * rng.random(pi.shape), 0.0, 1.0)
    w = design_weights(pi, s)
    m = query_calibrated(f, y, w, ranked)
    h = leverage(m, w, ranked)
    seg = ranked.per_query_sum
    uncapped = seg(h) > 1.0 - 1e-9
    assert np.allclose(seg(h)[uncapped], 1.0) and h.max() <= LEVERAGE_CAP and np.all(h[~s] == 0.0)
    factor = residual_correction(m, w, ranked)
    assert np.allclose(factor, 1.0 / (1.0 - h))
    two_sided = (seg(s * y) > 0) & (seg(s * (1 - y)) > 0)  # the calibration is exact there (no half-unit target)
    checked = 0
    for b in range(0, 50, 5):
        for i in np.flatnonzero(s[b]):
            q = ranked.query_of[i]
            if not two_sided[b, q]:
                continue
            w_out = w[b:b + 1].copy()
            w_out[0, i] = 0.0
            refit = query_calibrated(f[b:b + 1], y, w_out, ranked)[0, i]
            left_out, fitted = y[i] - refit, (y[i] - m[b, i]) * factor[b, i]
            assert abs(left_out - fitted) <= 0.05 * abs(left_out), (b, i, left_out, fitted, h[b, i])
            assert abs(left_out) > abs(y[i] - m[b, i])  # the fitted residual understates it
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("name", ["P_10", "dcg_cut_5", "rbp_0.8", "ndcg_cut_10", "ndcg", "map", "recip_rank",
                                  "recall_10"])
def test_every_measure_reports_estimates_and_intervals_inside_its_range(name: str) -> None:
    keys, ranked, grades, probs = _rare_case()
    rng = np.random.default_rng(9)
    pi = np.full((200, len(keys)), 0.05)
    rounds = [Round(pi, rng.random(pi.shape) < pi, 1.0)]
    pred, obs = gains_from_distribution(probs, LEVELS, 2), gains_from_grades(grades, LEVELS, 2)
    m = estimable_measure(name)
    low, high = measure_range(m, 3.0)
    for g in (pred, zero_gains(pred)):
        est = estimate_measures([m], ranked, g, obs, rounds, variance_floor=True)[name]
        lo, hi = est.interval(0.95)
        assert est.bounds == (low, high)
        assert est.reported.min() >= low and est.reported.max() <= high
        assert lo.min() >= low and hi.max() <= high and np.all(lo <= est.reported) and np.all(est.reported <= hi)
