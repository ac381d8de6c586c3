"""The estimates of one measure for every system from one human sample (prediction-powered, or human-only with
zero predictions), their variance and degrees of freedom, over one or several sampling rounds.

A round is a Poisson sample with known inclusion probabilities over the whole pool, drawn after the rounds before
it (which may have chosen its probabilities); a unit judged in an earlier round enters a later one with
probability 1 (its label is known). Each round's estimate is unbiased given the rounds before it, so a fixed-weight
average of the rounds' estimates is unbiased, and its variance is the weighted sum of the rounds' variances (the
rounds' errors are martingale differences: uncorrelated).

The ratio measures (nDCG, AP, recall) use the predictions recalibrated on the round's sample (post-stratification
by the predicted value within strata of how the systems rank a unit, Sarndal, Swensson and Wretman 1992, section
7.6), in their normalizers (the ideal DCG's grade counts, the number of relevant passages) and, coherently, in their
numerators: a prediction that is off on average would otherwise add a large variance to every query's count, which
the ratio turns into bias, and a numerator on the raw prediction over a normalizer on the recalibrated one is a
ratio of two estimates of different label vectors, whose per-query values are heavy-tailed. The linear measures keep
the predictions as they are (exactly unbiased).

Intervals use Student's t with Satterthwaite's degrees of freedom of the variance estimate (a sum of one squared
term per sampled unit): a variance resting on a few sampled residuals gets a wider interval.

>>> import numpy as np
>>> Round(np.array([[0.5, 0.5]]), np.array([[True, False]]), 1.0).size
1
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from autograde.core.errors import InvalidValueError
from autograde.core.stats import t_quantile
from autograde.core.survey import poisson_factor, pseudo_labels
from autograde.metrics.estimable import EstimableMeasure
from autograde.ppi.calibration import Reference, common_reference, fold_of, rank_strata
from autograde.ppi.intervals import bounded_interval
from autograde.ppi.measures import Gains, Linearized, RankedPool, measure_range, sample_bounds
from autograde.ppi.tuning_terms import combined_terms, one_error_variance, system_mean

FLOOR_DF = 3.0
"""Degrees of freedom of a variance raised to the one-error floor: with no error seen where the measure reads,
Poisson sampling still allows about ``-ln(0.05) / pi = 3 / pi`` erroneous units at 95% ("rule of three"), an error
of about ``3 / sqrt(1 - pi)`` one-error standard deviations; Student's t with 3 degrees of freedom (3.18 at 95%)
gives that width."""


@dataclass(frozen=True)
class Round:
    """One sampling round: the inclusion probability of every unit (``(B, N)``), which units it holds (drawn now
    or judged before, with probability 1), and its weight in the combined estimate."""

    pi: np.ndarray
    sampled: np.ndarray
    weight: float

    @property
    def size(self) -> int:
        return int(self.sampled[0].sum())


@dataclass(frozen=True)
class MeasureEstimate:
    """Estimates ``(B, S)``, their variances and Satterthwaite degrees of freedom, per-query estimates
    ``(B, S, Q)``, and each round's weighted linearized residuals ``(B, S, N)`` with their variance factors
    ``(B, N)`` (for the differences between systems)."""

    estimate: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    per_query: np.ndarray
    residuals: list[np.ndarray]
    factors: list[np.ndarray]
    lam: np.ndarray | None = None
    floor: np.ndarray | None = None
    floored: np.ndarray | None = None
    raw_variance: np.ndarray | None = None
    raw_df: np.ndarray | None = None
    bounds: tuple[float, float] | None = None
    """The measure's range (None: unbounded)."""

    @property
    def reported(self) -> np.ndarray:
        """The estimate projected into the measure's range (never further from the truth, which lies in it)."""
        if self.bounds is None:
            return self.estimate
        return np.asarray(np.clip(self.estimate, *self.bounds), dtype=np.float64)

    def interval(self, confidence: float, floor: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """The intervals: inside the measure's range (:func:`~autograde.ppi.intervals.bounded_interval`), else
        Student's t; ``floor`` False: without the variance floor (the raw variance and degrees of freedom)."""
        v, df = (self.variance, self.df)
        if not floor and self.raw_variance is not None and self.raw_df is not None:
            v, df = self.raw_variance, self.raw_df
        if self.bounds is None:
            half = t_quantile(confidence, df) * np.sqrt(np.maximum(v, 0.0))
            return self.estimate - half, self.estimate + half
        return bounded_interval(self.estimate, np.sqrt(np.maximum(v, 0.0)), df, *self.bounds, confidence)

    def differences(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(B, S, S)`` estimates, variances and degrees of freedom of every difference ``system s - system t``."""
        diff = self.estimate[:, :, None] - self.estimate[:, None, :]
        var = sq = 0.0
        for u, c in zip(self.residuals, self.factors, strict=True):
            u2, u3 = u * u, u * u * u
            cov = np.einsum("bsn,bn,btn->bst", u, c, u)
            d = np.diagonal(cov, axis1=1, axis2=2)
            var = var + d[:, :, None] + d[:, None, :] - 2.0 * cov
            c2 = c * c
            p4 = np.einsum("bsn,bn->bs", u2 * u2, c2)
            p31 = np.einsum("bsn,bn,btn->bst", u3, c2, u)
            p22 = np.einsum("bsn,bn,btn->bst", u2, c2, u2)
            sq = sq + p4[:, :, None] + p4[:, None, :] - 4.0 * p31 - 4.0 * np.swapaxes(p31, 1, 2) + 6.0 * p22
        v = np.asarray(var, dtype=np.float64)
        df = _satterthwaite(v, np.asarray(sq, dtype=np.float64))
        if self.floor is not None:  # a difference is at least as uncertain as the floor of either system
            f = np.maximum(self.floor[:, :, None], self.floor[:, None, :])
            low = (v < f) & (f > 0)
            v, df = np.where(low, f, v), np.where(low, np.minimum(df, FLOOR_DF), df)
        return diff, v, df


def _satterthwaite(total: np.ndarray, squares: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(squares > 0, total * total / squares, np.inf), dtype=np.float64)


def needed_gains(measures: list[EstimableMeasure]) -> set[str]:
    """The gain types the measures read: ``rel``, ``gain``, ``ge`` (ideal DCG counts), ``counted`` (relevant counts)."""
    out: set[str] = set()
    for m in measures:
        out |= {"dcg": {"gain"}, "ndcg": {"gain", "ge"}, "recall": {"rel", "counted"},
                "ap": {"rel", "counted"}}.get(m.kind, {"rel"})
    return out


def _round_gains(predicted: Gains, observed: Gains, r: Round, recalibrate: bool, needs: set[str],
                 ranked: RankedPool, strata: np.ndarray | None = None, common: Reference | None = None,
                 folds: np.ndarray | None = None) -> tuple[Gains, Gains, Gains, dict[str, np.ndarray]]:
    """(pseudo-labels, residuals, reference, the counts' g-weights) of one round (residuals are 0 where a unit is not
    in the round); only the gain types in ``needs`` are computed (the others are empty). The counts of the ratio
    measures (``ge``, ``counted``) read the reference (``common``, else :func:`common_reference` of this round
    alone): the prediction recalibrated and calibrated to each query's sample, which the ratio measures are
    linearized around."""
    s, pi = r.sampled, r.pi
    empty = np.zeros((s.shape[0], 0))

    def ps(f: np.ndarray, y: np.ndarray, j: bool = False) -> np.ndarray:
        return pseudo_labels(f, y, pi[:, None, :] if j else pi, s[:, None, :] if j else s)

    def res(f: np.ndarray, y: np.ndarray, j: bool = False) -> np.ndarray:
        mask = s[:, None, :] if j else s
        return np.asarray(np.where(mask, np.nan_to_num(y) - f, 0.0), dtype=np.float64)

    pseudo: dict[str, np.ndarray] = {}
    resid: dict[str, np.ndarray] = {}
    for kind in ("rel", "gain"):
        if kind in needs:
            f, y = getattr(predicted, kind), getattr(observed, kind)
            pseudo[kind], resid[kind] = ps(f, y), res(f, y)
    reference: dict[str, np.ndarray] = {}
    if needs & {"ge", "counted"}:
        ref = common or common_reference(predicted, observed, [replace(r, weight=1.0)], recalibrate, needs, ranked,
                                         strata, folds)
        if "ge" in needs:
            reference["ge"] = ref.ge
            pseudo["ge"] = ps(ref.ge, observed.ge, True)
            resid["ge"] = res(ref.ge, observed.ge, True) * ref.ge_factor
        if "counted" in needs:
            reference["counted"] = ref.counted
            pseudo["counted"] = ps(ref.counted, observed.rel)
            resid["counted"] = res(ref.counted, observed.rel) * ref.counted_factor
        scale = ref.scale
    else:
        scale = {}

    def gains(d: dict[str, np.ndarray]) -> Gains:
        return replace(predicted, rel=d.get("rel", empty), gain=d.get("gain", empty),
                       ge=d.get("ge", empty[:, None, :]), rel_count=d.get("counted", empty))

    return gains(pseudo), gains(resid), gains(reference), scale


def zero_gains(g: Gains) -> Gains:
    """Gains of zero everywhere (the human-only estimate's prediction)."""
    return Gains(np.zeros_like(g.rel), np.zeros_like(g.gain), np.zeros_like(g.ge), g.thresholds, g.steps,
                 None if g.rel_count is None else np.zeros_like(g.rel_count))


def _clipped_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` clipped to [0, 1]; 1 (plain prediction-powered) where ``den`` is 0 (the weight changes nothing
    the sample can see)."""
    ok = den > 1e-300
    return np.asarray(np.clip(np.divide(num, den, out=np.ones_like(num), where=ok), 0.0, 1.0), dtype=np.float64)


@dataclass(frozen=True)
class _Part:
    """One round's estimate of one measure: estimate, variance and its squares, per-query values, power-tuning
    weight (``(B, S)``), dense residuals when kept."""

    est: np.ndarray
    var: np.ndarray
    sq: np.ndarray
    values: np.ndarray
    lam: np.ndarray
    u: np.ndarray | None


def _fixed(lin: Linearized, resid: Gains, c: np.ndarray, keep: bool) -> _Part:
    v, q = lin.variance_terms(resid, c)
    return _Part(lin.estimate, v, q, lin.values, np.ones_like(lin.estimate),
                 lin.residuals(resid) if keep else None)


def _cross_fitted(human: tuple[Linearized, Gains], ppi: tuple[Linearized, Gains], c: np.ndarray, fold: np.ndarray,
                  keep: bool, shared: bool) -> _Part:
    """A linear measure with the power-tuning weight of each fold fitted on the other folds (exactly unbiased: a
    fold's weight depends only on other units' inclusions, independent of its own under Poisson sampling).

    The estimate with weight lam is ``human + lam * (ppi - human)`` unit by unit, and a unit's linearized residual
    ``a_h - lam * a_f`` (``a_h``: the human-only residual, ``a_f = a_h - a_ppi``: the prediction's part); the
    variance ``sum c (a_h - lam a_f)^2`` is least at ``lam = sum c a_h a_f / sum c a_f^2`` (clipped to [0, 1])."""
    lin_h, res_h = human
    lin_p, res_p = ppi
    assert lin_h.gathered is not None and lin_p.gathered is not None
    ranked = lin_p.ranked
    ev = ranked.evaluated[None, :, :, None]
    coef = lin_p.coef * ev
    a_h, _, _ = lin_h.pieces(res_h)
    a_p, _, _ = lin_p.pieces(res_p)
    a_f = a_h - a_p
    d = (lin_p.gathered - lin_h.gathered) * coef  # each position's share of ppi - human
    c_pos = lin_p.gather(c)
    k = int(fold.max()) + 1 if len(fold) else 1
    f_pos = np.concatenate([fold, [0]])[lin_p.pos]  # (S, Q, L)
    sums = np.stack([np.stack([(x * (f_pos == j)).sum(axis=(-1, -2)) for j in range(k)], axis=-1)
                     for x in (c_pos * a_h * a_f, c_pos * a_f * a_f)])  # (2, B, S, K)
    if shared:  # one weight for the leaderboard: the summed variance of the differences between systems
        n_sys = a_h.shape[1]
        m_h = system_mean(lin_h, res_h)
        m_f = m_h - system_mean(lin_p, res_p)
        cf = np.broadcast_to(c, m_h.shape)
        per_fold = np.stack([np.stack([(x * (fold == j)).sum(axis=-1) for j in range(k)], axis=-1)
                             for x in (cf * m_h * m_f, cf * m_f * m_f)])  # (2, B, K)
        sums = sums.sum(axis=2, keepdims=True) - n_sys * per_fold[:, :, None, :]
    out = sums.sum(axis=-1, keepdims=True) - sums  # the other folds'
    out = np.broadcast_to(out, (2, a_h.shape[0], a_h.shape[1], k))
    lam = _clipped_ratio(out[0], out[1])  # (B, S, K)
    s_, q_, l_ = f_pos.shape
    lam_pos = np.take_along_axis(lam, np.broadcast_to(f_pos.reshape(1, s_, q_ * l_), (lam.shape[0], s_, q_ * l_)),
                                 axis=2).reshape(lam.shape[0], s_, q_, l_)
    n = np.maximum(lin_p.n, 1.0)[None, :]
    values = lin_h.values + (lam_pos * d).sum(axis=-1)
    est = (values * ranked.evaluated[None]).sum(axis=-1) / n
    u = (a_h - lam_pos * a_f) / n[..., None, None]
    w = c_pos * u * u
    dense = None
    if keep:
        uh, up = lin_h.residuals(res_h), lin_p.residuals(res_p)
        dense = uh + lam[:, :, fold] * (up - uh)
    return _Part(est, w.sum(axis=(-1, -2)), (w * w).sum(axis=(-1, -2)), values, lam.mean(axis=-1), dense)


def _tuned(human: tuple[Linearized, Gains], ppi: tuple[Linearized, Gains], c: np.ndarray, keep: bool,
           shared: bool) -> _Part:
    """A nonlinear measure: ``(1 - lam) * human + lam * ppi`` with one weight per system fitted on the whole
    sample, the one that minimizes the linearized variance (first-order equivalent to PPI++'s weight on the
    predictions; approximately unbiased, as the ratio estimators themselves)."""
    lin_h, lin_p = human[0], ppi[0]
    one, nil = np.ones_like(lin_p.estimate), np.zeros_like(lin_p.estimate)
    v_hh, _ = combined_terms(human, ppi, one, nil, c)
    v_pp, _ = combined_terms(human, ppi, nil, one, c)
    v_dd, _ = combined_terms(human, ppi, one, -one, c)  # sum c (u_h - u_p)^2
    if shared:  # one weight for the leaderboard: the summed variance of the differences between systems
        n_sys = v_hh.shape[1]
        m_h, m_p = system_mean(lin_h, human[1]), system_mean(lin_p, ppi[1])
        cf = np.broadcast_to(c, m_h.shape)
        centred = [x.sum(axis=1, keepdims=True) - n_sys * (cf * m * m).sum(axis=-1, keepdims=True)
                   for x, m in ((v_hh, m_h), (v_pp, m_p), (v_dd, m_h - m_p))]
        v_hh, v_pp, v_dd = (np.broadcast_to(x, v_hh.shape) for x in centred)
    lam = _clipped_ratio((v_hh - v_pp + v_dd) / 2.0, v_dd)  # (v_hh - v_hp) / (v_hh - 2 v_hp + v_pp)
    v, q = combined_terms(human, ppi, 1.0 - lam, lam, c)
    est = (1.0 - lam) * lin_h.estimate + lam * lin_p.estimate
    values = (1.0 - lam)[..., None] * lin_h.values + lam[..., None] * lin_p.values
    dense = None
    if keep:
        dense = (1.0 - lam)[..., None] * lin_h.residuals(human[1]) + lam[..., None] * lin_p.residuals(ppi[1])
    return _Part(est, v, q, values, lam, dense)


def estimate_measures(measures: list[EstimableMeasure], ranked: RankedPool, predicted: Gains, observed: Gains,
                      rounds: list[Round], recalibrate: bool = True, keep_residuals: bool = True,
                      power_tuning: str = "none", variance_floor: bool = False, tune_nonlinear: bool = False
                      ) -> dict[str, MeasureEstimate]:
    """The combined estimate of every measure for every system: ``predicted`` gains of every unit (zeros for the
    human-only estimate), ``observed`` gains (NaN where not judged), one or more :class:`Round`.

    ``power_tuning``: ``none`` (plain prediction-powered, lam = 1), or each round weighs the predictions by the PPI++
    weight lam in [0, 1] (0: human-only) that minimizes an estimated variance: ``leaderboard``: one weight per
    measure for all systems, minimizing the summed variance of the differences between every two systems (PPI++
    scalarizes a vector estimand this way; the same estimator for every system, so errors the systems share, such
    as a query's ideal DCG, still cancel in their differences); ``system``: one weight per system, minimizing its
    own variance (the narrowest interval of each system on its own). Cross-fitted over :data:`~autograde.ppi.calibration.FOLDS` folds for the linear measures (they stay exactly
    unbiased), fitted on the whole round for the others. ``variance_floor``: a
    variance below :func:`~autograde.ppi.tuning_terms.one_error_variance` (the sample shows fewer errors than one
    maximal one) is raised to it, with :data:`FLOOR_DF` degrees of freedom. nDCG, AP and recall read their
    numerators from the same pseudo-labels as their normalizers, on the prediction recalibrated within the
    :func:`rank_strata` (``recalibrate``) and calibrated to each query's sample, around which they are linearized
    (:func:`~autograde.ppi.calibration.query_calibrated`). Each estimate carries its measure's range (:func:`~autograde.ppi.measures.measure_range`):
    :meth:`MeasureEstimate.interval` gives bounded intervals and the estimate projected into the range."""
    needs = needed_gains(measures)
    parts: dict[str, dict[str, Any]] = {m.name: {"est": 0.0, "var": 0.0, "sq": 0.0, "pq": 0.0, "lam": 0.0,
                                                 "floor": 0.0, "u": [], "c": []} for m in measures}
    if power_tuning not in ("none", "leaderboard", "system"):
        raise InvalidValueError(f"power_tuning must be none, leaderboard or system, got {power_tuning!r}")
    tuning, shared = power_tuning != "none", power_tuning == "leaderboard"
    tuning = tuning and any(m.linear or tune_nonlinear for m in measures)
    fold = fold_of(ranked.n_units)
    zero = zero_gains(predicted)
    strata = rank_strata(ranked)
    ratio = bool(needs & {"ge", "counted"})
    common = common_reference(predicted, observed, rounds, recalibrate, needs, ranked, strata, fold) if ratio \
        else None
    h_common = common_reference(zero, observed, rounds, recalibrate, needs, ranked, strata, fold) \
        if ratio and tuning else None
    for r in rounds:
        pseudo, resid, ref, scale = _round_gains(predicted, observed, r, recalibrate, needs, ranked, strata, common)
        h_pseudo, h_resid, h_ref, h_scale = _round_gains(zero, observed, r, recalibrate, needs, ranked, strata,
                                                         h_common) if tuning else (pseudo, resid, ref, scale)
        bounds = sample_bounds(ranked, observed, r.sampled, needs)
        c = poisson_factor(r.pi, r.sampled)
        for m in measures:
            p = parts[m.name]
            lin = Linearized(m, ranked, pseudo, bounds, True, ref, scale)
            if not tuning or not (m.linear or tune_nonlinear):
                part = _fixed(lin, resid, c, keep_residuals)
            else:
                human = (Linearized(m, ranked, h_pseudo, bounds, True, h_ref, h_scale), h_resid)
                part = _cross_fitted(human, (lin, resid), c, fold, keep_residuals, shared) if m.linear \
                    else _tuned(human, (lin, resid), c, keep_residuals, shared)
            p["est"] = p["est"] + r.weight * part.est
            p["var"] = p["var"] + r.weight**2 * part.var
            p["sq"] = p["sq"] + r.weight**4 * part.sq
            p["pq"] = p["pq"] + r.weight * part.values
            p["lam"] = p["lam"] + r.weight * part.lam / sum(x.weight for x in rounds)
            if variance_floor:
                p["floor"] = p["floor"] + r.weight**2 * one_error_variance(lin, r.pi)
            if keep_residuals and part.u is not None:
                p["u"].append(r.weight * part.u)
                p["c"].append(c)
    out = {}
    for m in measures:
        p = parts[m.name]
        v = np.asarray(p["var"], dtype=np.float64)
        df = _satterthwaite(v, np.asarray(p["sq"]))
        floor = floored = None
        raw_v, raw_df = v, df
        if variance_floor:
            floor = np.broadcast_to(np.asarray(p["floor"], dtype=np.float64), v.shape)
            floored = (v < floor) & (floor > 0)
            v, df = np.where(floored, floor, v), np.where(floored, np.minimum(df, FLOOR_DF), df)
        out[m.name] = MeasureEstimate(np.asarray(p["est"], dtype=np.float64), v, df,
                                      np.asarray(p["pq"], dtype=np.float64), p["u"], p["c"],
                                      np.asarray(p["lam"], dtype=np.float64), floor, floored, raw_v, raw_df,
                                      measure_range(m, float(sum(predicted.steps))))
    return out
