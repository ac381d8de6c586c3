"""Calibration of a prediction to each query's human sample: the reference the ratio measures (nDCG, AP, recall) are
linearized around (:mod:`autograde.ppi.estimators`), the g-weights of its counts and the degrees of freedom its fitted
shifts take from the residuals; before that, the prediction's post-stratified recalibration within strata of how the
systems rank a unit (:func:`recalibrated`, :func:`rank_strata`), and the one reference of every round
(:func:`common_reference`).

Per query, the prediction is shifted on the logit scale until the query's design-weighted judged passages are
reproduced (calibration with a logit link: Deville and Sarndal 1992; Lehtonen and Veijanen 1998). The query's
estimated count is then the sum of the calibrated values: never negative, and near zero only where every unit's value
of the query is, numerators included, so no numerator is divided by a count that crosses zero.

>>> import numpy as np
>>> round(float(_expit(np.array([0.0]))[0]), 3)
0.5
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from autograde.ppi.measures import Gains, RankedPool

if TYPE_CHECKING:
    from autograde.ppi.estimators import Round

PROBABILITY_CLIP = 1e-12
"""Predicted probabilities are kept in [this, 1 - this] on the logit scale (a probability of exactly 0 or 1 has no
logit)."""
SHIFT_BOUND = 80.0
"""The calibration's shift is searched in [-this, this]: with probabilities clipped to 1e-12 and design weights
below 1e12, the solution lies inside."""
SHIFT_BISECTIONS = 48
"""Halvings of the shift's bracket: below 1e-12."""
ONE_SIDED = 0.5
"""Where a query's judged passages all lie on one side of a grade, the shift leaves this many of them (design-
weighted) expected on the other side: the Jeffreys prior's half observation (a count seen zero times is estimated
at 1/2, not 0), and never more than the prediction itself expects."""


def _expit(x: np.ndarray) -> np.ndarray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * x)), dtype=np.float64)


def _shift(eta: np.ndarray, w: np.ndarray, target: np.ndarray, ranked: RankedPool) -> np.ndarray:
    """Per query (``(B, Q)``) the shift ``u`` with ``sum over the query's units of w_i expit(eta_i + u) = target``
    (bisection; increasing in ``u``); only the units with a weight (the judged ones) are evaluated."""
    b_idx, i_idx = np.nonzero(w)
    nq = len(ranked.queries)
    cell = ranked.query_of[i_idx] + nq * b_idx  # (batch, query) of each judged unit
    e, ww = eta[b_idx, i_idx], w[b_idx, i_idx]
    lo = np.full(target.size, -SHIFT_BOUND)
    hi = np.full(target.size, SHIFT_BOUND)
    flat = target.ravel()
    for _ in range(SHIFT_BISECTIONS):
        mid = (lo + hi) / 2.0
        up = np.bincount(cell, weights=ww * _expit(e + mid[cell]), minlength=target.size) < flat
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    return ((lo + hi) / 2.0).reshape(target.shape)


def design_weights(pi: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """``1 / pi`` of the sampled units, 0 elsewhere."""
    return np.asarray(np.where(sampled, 1.0 / np.where(sampled, pi, 1.0), 0.0), dtype=np.float64)


def query_calibrated(predicted: np.ndarray, observed: np.ndarray, w: np.ndarray, ranked: RankedPool) -> np.ndarray:
    """The predicted probabilities ``(B, N)`` shifted on the logit scale, query by query, until each query's
    design-weighted judged passages are reproduced: ``sum over the query's judged i of w_i (y_i - m_i) = 0`` (``w``:
    the design weights ``1 / pi`` of the judged units, 0 elsewhere; over rounds, their fixed-weight average)
    (calibration to the query's sample with a logit link: Deville and Sarndal 1992; Lehtonen and Veijanen 1998).

    The query's estimated count is then ``sum_i m_i`` (its pseudo-labels' residuals cancel): never negative, and
    small only where the model's values of the query's units are too, numerators included (no numerator divided by
    a count that crosses zero). Where the query's judged passages all lie on one side of the grade, exact
    calibration would shift to infinity (every unit certain); the shift then stops where :data:`ONE_SIDED`
    (design-weighted) judged passages are still expected on the other side, and not beyond the prediction (a
    prediction that already expects fewer is kept: a prediction equal to the truth stays the truth). A query
    without a judged passage keeps the prediction."""
    f = np.clip(np.broadcast_to(np.asarray(predicted, dtype=np.float64), w.shape), PROBABILITY_CLIP,
                1.0 - PROBABILITY_CLIP)
    eta = np.log(f) - np.log1p(-f)
    y = np.where(w > 0, np.nan_to_num(np.broadcast_to(observed, w.shape)), 0.0)
    seg, of = ranked.per_query_sum, ranked.query_of
    seen, total = seg(w * y), seg(w)
    none, every = seen <= 0.0, seen >= total
    target = np.where(none, np.minimum(ONE_SIDED, seg(w * f)),
                      np.where(every, np.maximum(total - ONE_SIDED, seg(w * f)), seen))
    u = np.where(total > 0.0, _shift(eta, w, target, ranked), 0.0)
    return _expit(eta + u[:, of])


def count_scale(reference: np.ndarray, w: np.ndarray, ranked: RankedPool) -> np.ndarray:
    """Per query ``(B, Q)`` the g-weight of the calibration of :func:`query_calibrated`: a judged unit's residual
    ``y_i - m_i`` moves the shift by its share of ``sum over the judged i of m_i (1 - m_i) / pi_i`` and the query's
    count ``sum_i m_i`` by ``sum over all its units of m_i (1 - m_i)`` times that: the count's linearized residual is
    the residual times ``g = sum_all m (1 - m) / sum_judged w m (1 - m)`` (Deville and Sarndal 1992; the ratio
    estimator's ``X / X_hat`` where the probabilities are small). 1 where the query has no judged unit."""
    v = reference * (1.0 - reference)
    judged = ranked.per_query_sum(w * v)
    return np.asarray(np.divide(ranked.per_query_sum(v), judged, out=np.ones_like(judged), where=judged > 0),
                      dtype=np.float64)


LEVERAGE_CAP = 0.5
"""A judged unit's leverage in its query's calibration counts as at most this (its residual at most doubled): a query
with one effective judged unit has leverage 1, where the left-out residual is not defined; 0.5 keeps the factor of
the two-unit query."""


def leverage(reference: np.ndarray, w: np.ndarray, ranked: RankedPool) -> np.ndarray:
    """Per unit ``(B, N)`` its leverage in its query's calibration (:func:`query_calibrated`):
    ``h_i = w_i m_i (1 - m_i) / sum over the query's judged j of w_j m_j (1 - m_j)``, the share by which its own
    residual moves its own calibrated value (the shift's derivative in ``y_i`` times the value's in the shift). 0
    where not judged; the judged units of a query sum to 1 (at most :data:`LEVERAGE_CAP` each)."""
    v = w * reference * (1.0 - reference)
    total = ranked.per_query_sum(v)[:, ranked.query_of]
    h = np.divide(v, total, out=np.zeros_like(v), where=total > 0)
    return np.asarray(np.minimum(h, LEVERAGE_CAP), dtype=np.float64)


def residual_correction(reference: np.ndarray, w: np.ndarray, ranked: RankedPool) -> np.ndarray:
    """Per unit ``(B, N)`` the factor ``1 / (1 - h_i)`` (:func:`leverage`) of its residual ``y_i - m_i``: the residual
    it would have if its query's calibration were fitted without it (the first-order left-out residual, PRESS). The
    calibration fits one shift per query to the query's own judged units, so a judged unit pulls its calibrated value
    towards its label and its fitted residual understates its error, the more so the fewer units the query has
    judged; the variance from the left-out residuals is the jackknife's linearized form for a calibration estimator
    (Yung and Rao 1996; Valliant 2002, who finds it the one that keeps its coverage in small samples). It replaces
    the degrees-of-freedom factor ``sqrt(n / (n - 1))``, which is the same on every unit of a query: on DL20 with
    the calibrated prediction at 5% (10-20 judged passages a query) that factor left the top systems' nDCG@10
    intervals covering 0.80-0.87; this one 0.87-0.92, at 12-31% more width at 5% and about 11% at 20%
    (docs/human_sample.md)."""
    return np.asarray(1.0 / (1.0 - leverage(reference, w, ranked)), dtype=np.float64)


CALIBRATION_BINS = 10
"""Post-strata of a predicted probability: ten bins of width 0.1 (a point prediction falls into two)."""


FOLDS = 5
"""Cross-fitting folds: the pool's units are split into this many fixed folds (seed :data:`FOLD_SEED`, independent of
every sample); a fold's units get what is fitted on the other folds' sampled units (the recalibration of
:func:`recalibrated`; in :mod:`autograde.ppi.estimators`, the power-tuning weight of a linear measure)."""
FOLD_SEED = 29


def fold_of(n_units: int, folds: int = FOLDS) -> np.ndarray:
    """The fixed cross-fitting fold of every pool unit (balanced, shuffled with :data:`FOLD_SEED`)."""
    return np.asarray(np.random.default_rng(FOLD_SEED).permutation(n_units) % folds, dtype=np.int64)


def _cell_shares(f: np.ndarray, observed: np.ndarray, pi: np.ndarray, sampled: np.ndarray,
                 strata: np.ndarray | None) -> np.ndarray:
    """Every unit's cell share of :func:`recalibrated` from the ``sampled`` units (the prediction where its cell has
    none)."""
    bins = np.minimum((np.clip(f, 0.0, 1.0) * CALIBRATION_BINS).astype(np.int64), CALIBRATION_BINS - 1)
    cells = CALIBRATION_BINS
    if strata is not None and len(strata):
        bins = bins + CALIBRATION_BINS * np.asarray(strata, dtype=np.int64)[None, :]
        cells = CALIBRATION_BINS * (int(np.max(strata)) + 1)
    w = np.where(sampled, 1.0 / np.where(sampled, pi, 1.0), 0.0)
    y = np.where(sampled, np.nan_to_num(np.broadcast_to(observed, sampled.shape)), 0.0)
    flat = (bins + cells * np.arange(f.shape[0])[:, None]).ravel()
    size = f.shape[0] * cells
    den = np.bincount(flat, weights=w.ravel(), minlength=size).reshape(f.shape[0], cells)
    num = np.bincount(flat, weights=(w * y).ravel(), minlength=size).reshape(f.shape[0], cells)
    share = np.divide(num, den, out=np.full(den.shape, np.nan), where=den > 0)
    mapped = np.take_along_axis(share, bins, axis=1)
    return np.asarray(np.where(np.isnan(mapped), f, mapped), dtype=np.float64)


def recalibrated(predicted: np.ndarray, observed: np.ndarray, pi: np.ndarray, sampled: np.ndarray,
                 strata: np.ndarray | None = None, folds: np.ndarray | None = None) -> np.ndarray:
    """The predicted probability of every unit replaced by the design-weighted share of sampled units of its cell
    that are at or above the grade (a cell without a sampled unit keeps the prediction): ``(B, N)``. A cell is a bin
    of the prediction (:data:`CALIBRATION_BINS`) within a stratum of ``strata`` (``(N,)`` small integers, e.g.
    :func:`rank_strata`; None: one stratum).

    ``folds`` (``(N,)``, :func:`fold_of`): cross-fitted, each fold's units get the shares of the other folds' sampled
    units, so no unit's recalibrated value depends on its own label. Fitted on the whole sample, a judged unit of a
    sparse cell sets much of its own value (its residual shrinks towards zero where it is large), and the residual
    corrections then miss part of the error: on DL20 with the calibrated prediction (ten bins of a graded
    probability, three rank strata) this biased nDCG@10 down by about one standard error at a 5% budget, intervals
    covering 0.76 instead of 0.95; cross-fitted, 0.94 (docs/human_sample.md)."""
    f = np.broadcast_to(np.asarray(predicted, dtype=np.float64), sampled.shape)
    if folds is None:
        return _cell_shares(f, observed, pi, sampled, strata)
    out = np.empty(f.shape, dtype=np.float64)
    for k in range(int(folds.max()) + 1 if len(folds) else 0):
        mine = folds == k
        out[:, mine] = _cell_shares(f, observed, pi, sampled & ~mine[None, :], strata)[:, mine]
    return out


RANK_DEPTH = 10
"""The top ranks that define :func:`rank_strata`."""


def rank_strata(ranked: RankedPool, depth: int = RANK_DEPTH) -> np.ndarray:
    """Post-strata of the pool's units by how the systems rank them, known for every unit before any sample: 0 where
    no system ranks the unit in its top ``depth``, 1 where fewer than half of the systems do, 2 where at least half
    do. Relevance depends on rank beyond the prediction (systems put relevant passages first), so a prediction
    calibrated over the whole pool is off where the measures read it; calibrating within these strata is not."""
    inside = (ranked.pos >= 0) & (ranked.rank > 0) & (ranked.rank <= depth)
    hits = np.zeros(ranked.n_units + 1)
    np.add.at(hits, np.where(inside, ranked.pos, ranked.n_units).ravel(), 1.0)
    share = hits[:-1] / max(len(ranked.systems), 1)
    return np.asarray(np.where(share <= 0, 0, np.where(share < 0.5, 1, 2)), dtype=np.int64)


@dataclass(frozen=True)
class Reference:
    """The ratio measures' reference, common to every round: the calibrated prediction of the grade counts (``ge``,
    ``(B, J, N)``) and of the relevant count (``counted``, ``(B, N)``), the counts' g-weights (``(B, J, Q)``,
    ``(B, Q)``) and each unit's residual factor of each (:func:`residual_correction`; ``(B, J, N)``, ``(B, N)``)."""

    ge: np.ndarray
    counted: np.ndarray
    scale: dict[str, np.ndarray]
    ge_factor: np.ndarray
    counted_factor: np.ndarray


def common_reference(predicted: Gains, observed: Gains, rounds: list[Round], recalibrate: bool, needs: set[str],
                     ranked: RankedPool, strata: np.ndarray | None, folds: np.ndarray | None = None) -> Reference:
    """The reference of the ratio measures, one for all rounds: the prediction recalibrated (:func:`recalibrated`
    within ``strata``, cross-fitted over ``folds``, when ``recalibrate``) and calibrated to each query's judged units
    (:func:`~autograde.ppi.calibration.query_calibrated`) with the weights of the rounds' fixed-weight average,
    ``sum_k weight_k 1[i in round k] / pi_ik`` (an earlier round's unit is in every later one with probability 1):
    the counts of the combined estimate are then the reference's, and a round of few, heavily weighted draws (a
    targeted round's uniform share) does not set a query's reference alone."""
    total = sum(r.weight for r in rounds) or 1.0
    w = sum(r.weight / total * design_weights(r.pi, r.sampled) for r in rounds)
    w = np.asarray(np.broadcast_to(w, rounds[-1].sampled.shape), dtype=np.float64)
    judged = w > 0
    pi_eff = np.where(judged, 1.0 / np.where(judged, w, 1.0), 1.0)

    def calibrated(f: np.ndarray, y: np.ndarray) -> np.ndarray:
        return query_calibrated(recalibrated(f, y, pi_eff, judged, strata, folds) if recalibrate else f, y, w,
                                ranked)

    ge = np.zeros((w.shape[0], 0, w.shape[1]))
    if "ge" in needs and predicted.ge.shape[1]:
        ge = np.stack([calibrated(predicted.ge[:, j], observed.ge[:, j]) for j in range(predicted.ge.shape[1])], axis=1)
    counted = calibrated(predicted.counted, observed.rel) if "counted" in needs else np.zeros((w.shape[0], 0))
    scale = {"ge": np.stack([count_scale(ge[:, j], w, ranked) for j in range(ge.shape[1])], axis=1)
             if ge.shape[1] else np.ones((w.shape[0], 0, len(ranked.queries)))}
    ge_factor = np.stack([residual_correction(ge[:, j], w, ranked) for j in range(ge.shape[1])], axis=1) \
        if ge.shape[1] else ge
    counted_factor = np.zeros_like(counted)
    if "counted" in needs:
        scale["counted"] = count_scale(counted, w, ranked)
        counted_factor = residual_correction(counted, w, ranked)
    return Reference(ge, counted, scale, ge_factor, counted_factor)
