"""Intervals inside a measure's range: the unified approach of Feldman and Cousins (1998) for a normal estimate of
a bounded quantity.

An estimate ``x`` of a value ``mu`` known to lie in ``[low, high]`` (every measure's range) is approximately normal
with standard error ``se``. Clipping its interval ``x -/+ t se`` to the range keeps its coverage but can leave
nothing (an estimate beyond the range by more than ``t se``) or a point, and switching to a one-sided bound near the
range's edge only when the estimate is near it ("flip-flopping") loses coverage. Feldman and Cousins build, for
every value ``mu`` in the range, the set of estimates that ``mu`` accepts, ordered by the likelihood ratio
``R(x) = phi((x - mu) / se) / phi((x - mu_best(x)) / se)`` against the best value in the range,
``mu_best(x) = clip(x, low, high)``, until they hold the confidence level; the interval of an estimate is every
``mu`` that accepts it. It has the coverage of its construction for every ``mu`` in the range, is never empty, lies
in the range, and away from the edges (more than two half-widths inside) it is the usual interval.

The standard error is scaled by ``t / z`` (Student's t critical value for the estimate's degrees of freedom over
the normal one), so that away from the edges the interval is the Student-t one the estimates use everywhere else.
Near an edge both endpoints are found numerically (bisection); the acceptance sets of the normal ordering have
closed forms.

>>> lo, hi = bounded_interval(np.array([0.5, 1.05, -0.2]), np.array([0.05, 0.05, 0.05]), np.inf, 0.0, 1.0, 0.95)
>>> [round(float(v), 3) for v in lo], [round(float(v), 3) for v in hi]
([0.402, 0.945, 0.0], [0.598, 1.0, 0.016])
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import ndtr

from autograde.core.stats import normal_quantile, t_quantile

INTERVAL_BISECTIONS = 36
"""Halvings of each bracket: below 1e-9 of a half-width."""


def _acceptance(theta: np.ndarray, top: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The estimates ``[z1, z2]`` that ``theta`` accepts, in units of the standard error with the range at
    ``[0, top]``: the likelihood-ratio ordering's region holding ``1 - alpha``."""
    # the level at the region's ends: -(z - theta)^2 / 2 at an end inside the range, within the two-sided
    # critical value of theta (the region holds at least the central interval's probability)
    k_lo = np.full(theta.shape, -0.5 * (float(normal_quantile(1.0 - alpha / 2.0)) + 1.0) ** 2)
    k_hi = np.zeros(theta.shape)

    def region(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``{z: log R(z) >= k}``: log R is -(z - theta)^2 / 2 inside the range, theta z - theta^2 / 2 below it and
        (theta - top) z + (top^2 - theta^2) / 2 above it (linear, the tails of the ordering)."""
        r = np.sqrt(-2.0 * k)
        with np.errstate(divide="ignore", invalid="ignore"):
            below = np.where(theta > 0, (k + 0.5 * theta**2) / np.where(theta > 0, theta, 1.0), -np.inf)
            above = np.where(theta < top, (k - 0.5 * (top**2 - theta**2)) / np.where(theta < top, theta - top, -1.0),
                             np.inf)
        z1 = np.where(k >= -0.5 * theta**2, theta - r, below)
        z2 = np.where(k >= -0.5 * (top - theta) ** 2, theta + r, above)
        return z1, z2

    for _ in range(INTERVAL_BISECTIONS):
        mid = (k_lo + k_hi) / 2.0
        z1, z2 = region(mid)
        enough = ndtr(z2 - theta) - ndtr(z1 - theta) >= 1.0 - alpha
        k_lo, k_hi = np.where(enough, mid, k_lo), np.where(enough, k_hi, mid)
    return region(k_lo)


def _standard(z: np.ndarray, top: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval ``[theta_lo, theta_hi]`` of standardized estimates ``z`` (range ``[0, top]``), by bisection."""
    z1_top = _acceptance(np.asarray(top, dtype=np.float64), top, alpha)[0]
    z2_0 = _acceptance(np.zeros(z.shape), top, alpha)[1]
    lo, hi = np.zeros(z.shape), np.array(top, dtype=np.float64)
    a, b = np.zeros(z.shape), np.array(top, dtype=np.float64)
    for _ in range(INTERVAL_BISECTIONS):  # theta_lo: the least theta whose region reaches up to z
        mid = (lo + hi) / 2.0
        reaches = _acceptance(mid, top, alpha)[1] >= z
        lo, hi = np.where(reaches, lo, mid), np.where(reaches, mid, hi)
        mid = (a + b) / 2.0  # theta_hi: the greatest theta whose region reaches down to z
        below = _acceptance(mid, top, alpha)[0] <= z
        a, b = np.where(below, mid, a), np.where(below, b, mid)
    return np.where(z2_0 >= z, 0.0, hi), np.where(z1_top <= z, top, a)


TABLE_POINTS = 4001
"""Values of theta in the table of the acceptance sets near one edge."""
ONE_EDGE = 5.0
"""A range wider than this many half-widths: near one edge the other does not bind (the acceptance sets of the
values within three half-widths of an edge end within four of it), and the table applies."""


@lru_cache(maxsize=8)
def _edge_table(confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``theta`` from 0 to three half-widths and its acceptance set ``[z1, z2]`` with one edge at 0 (the other far)."""
    zq = float(normal_quantile(confidence))
    theta = np.linspace(0.0, 3.0 * zq, TABLE_POINTS)
    z1, z2 = _acceptance(theta, np.full(theta.shape, 1e6), 1.0 - confidence)
    return theta, np.maximum.accumulate(z1), np.maximum.accumulate(z2)


def _near_lower_edge(z: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The standardized interval of estimates within two half-widths of the lower edge (or below it), from the
    table: the acceptance bounds are nondecreasing in theta, so each end is an interpolation."""
    theta, z1, z2 = _edge_table(confidence)
    zq = float(normal_quantile(confidence))
    lo = np.where(z <= z2[0], 0.0, np.interp(z, z2, theta))
    hi = np.where(z + zq >= theta[-1], z + zq, np.interp(z, z1, theta))
    return lo, hi


def bounded_interval(estimate: np.ndarray, se: np.ndarray, df: np.ndarray | float, low: float, high: float,
                     confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Feldman and Cousins' intervals (see the module) of estimates with standard errors ``se`` and Student-t degrees
    of freedom ``df`` (arrays broadcast) for values in ``[low, high]`` (``high`` may be infinite): ``(low, high)``
    arrays. A zero standard error gives the projected estimate; an infinite or undefined one the whole range."""
    x = np.asarray(estimate, dtype=np.float64)
    s = np.broadcast_to(np.asarray(se, dtype=np.float64), x.shape)
    d = np.broadcast_to(np.asarray(df, dtype=np.float64), x.shape)
    zq = float(normal_quantile(confidence))
    scale = s * t_quantile(confidence, d) / zq
    point = np.clip(x, low, high)
    out_lo, out_hi = point.copy(), point.copy()
    whole = ~np.isfinite(scale) | ~np.isfinite(x)
    out_lo[whole], out_hi[whole] = low, high
    ok = (scale > 0) & ~whole
    if not ok.any():
        return out_lo, out_hi
    sc = scale[ok]
    z = (x[ok] - low) / sc
    top = (high - low) / sc if np.isfinite(high) else np.full(z.shape, np.inf)
    lo, hi = z - zq, z + zq  # the usual interval where both ends are more than two half-widths inside
    narrow = top <= ONE_EDGE * zq
    near_low = ~narrow & (z < 2.0 * zq)
    near_high = ~narrow & (z > top - 2.0 * zq)
    if near_low.any():
        lo[near_low], hi[near_low] = _near_lower_edge(z[near_low], confidence)
    if near_high.any():  # the mirror image
        a, b = _near_lower_edge(top[near_high] - z[near_high], confidence)
        lo[near_high], hi[near_high] = top[near_high] - b, top[near_high] - a
    if narrow.any():
        lo[narrow], hi[narrow] = _standard(z[narrow], top[narrow], 1.0 - confidence)
    out_lo[ok] = low + np.clip(lo, 0.0, top) * sc
    out_hi[ok] = low + np.clip(hi, 0.0, top) * sc
    # the interval holds the best value in the range (it accepts the estimate with the largest ratio, 1); rounding
    # of the standardized ends must not move an end past it or out of the range
    return np.clip(np.minimum(out_lo, point), low, high), np.clip(np.maximum(out_hi, point), low, high)
