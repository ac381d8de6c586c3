"""The estimates of one measure for every system from one human sample (prediction-powered, or human-only with
zero predictions), their variance and degrees of freedom, over one or several sampling rounds.

A round is a Poisson sample with known inclusion probabilities over the whole pool, drawn after the rounds before
it (which may have chosen its probabilities); a unit judged in an earlier round enters a later one with
probability 1 (its label is known). Each round's estimate is unbiased given the rounds before it, so a fixed-weight
average of the rounds' estimates is unbiased, and its variance is the weighted sum of the rounds' variances (the
rounds' errors are martingale differences: uncorrelated).

The counts that normalize the ratio measures (the ideal DCG's grade counts, the number of relevant passages) use
the predictions recalibrated on the round's sample (post-stratification by the predicted value, Sarndal,
Swensson and Wretman 1992, section 7.6): a prediction that is off on average would otherwise add a large variance
to every query's count, which the ratio turns into bias. The linear measures keep the predictions as they are
(exactly unbiased).

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

from autograde.core.stats import t_quantile
from autograde.core.survey import poisson_factor, pseudo_labels
from autograde.metrics.estimable import EstimableMeasure
from autograde.ppi.measures import Gains, Linearized, RankedPool, sample_bounds

CALIBRATION_BINS = 10
"""Post-strata of a predicted probability: ten bins of width 0.1 (a point prediction falls into two)."""


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

    def interval(self, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        half = t_quantile(confidence, self.df) * np.sqrt(np.maximum(self.variance, 0.0))
        return self.estimate - half, self.estimate + half

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
        return diff, v, _satterthwaite(v, np.asarray(sq, dtype=np.float64))


def _satterthwaite(total: np.ndarray, squares: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(squares > 0, total * total / squares, np.inf), dtype=np.float64)


def recalibrated(predicted: np.ndarray, observed: np.ndarray, pi: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """The predicted probability of every unit replaced by the design-weighted share of sampled units of its bin
    (:data:`CALIBRATION_BINS`) that are at or above the grade (a bin without a sampled unit keeps the prediction):
    ``(B, N)``."""
    f = np.broadcast_to(np.asarray(predicted, dtype=np.float64), sampled.shape)
    bins = np.minimum((np.clip(f, 0.0, 1.0) * CALIBRATION_BINS).astype(np.int64), CALIBRATION_BINS - 1)
    w = np.where(sampled, 1.0 / np.where(sampled, pi, 1.0), 0.0)
    y = np.where(sampled, np.nan_to_num(np.broadcast_to(observed, sampled.shape)), 0.0)
    flat = (bins + CALIBRATION_BINS * np.arange(f.shape[0])[:, None]).ravel()
    size = f.shape[0] * CALIBRATION_BINS
    den = np.bincount(flat, weights=w.ravel(), minlength=size).reshape(f.shape[0], CALIBRATION_BINS)
    num = np.bincount(flat, weights=(w * y).ravel(), minlength=size).reshape(f.shape[0], CALIBRATION_BINS)
    share = np.divide(num, den, out=np.full(den.shape, np.nan), where=den > 0)
    mapped = np.take_along_axis(share, bins, axis=1)
    return np.asarray(np.where(np.isnan(mapped), f, mapped), dtype=np.float64)


def needed_gains(measures: list[EstimableMeasure]) -> set[str]:
    """The gain types the measures read: ``rel``, ``gain``, ``ge`` (ideal DCG counts), ``counted`` (relevant counts)."""
    out: set[str] = set()
    for m in measures:
        out |= {"dcg": {"gain"}, "ndcg": {"gain", "ge"}, "recall": {"rel", "counted"},
                "ap": {"rel", "counted"}}.get(m.kind, {"rel"})
    return out


def _round_gains(predicted: Gains, observed: Gains, r: Round, recalibrate: bool, needs: set[str]
                 ) -> tuple[Gains, Gains]:
    """(pseudo-labels, residuals) of one round (residuals are 0 where a unit is not in the round); only the gain
    types in ``needs`` are computed (the others are empty)."""
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
    if "ge" in needs:
        ge_pred = predicted.ge
        if recalibrate and ge_pred.shape[1]:
            ge_pred = np.stack([recalibrated(predicted.ge[:, j], observed.ge[:, j], pi, s)
                                for j in range(predicted.ge.shape[1])], axis=1)
        pseudo["ge"], resid["ge"] = ps(ge_pred, observed.ge, True), res(ge_pred, observed.ge, True)
    if "counted" in needs:
        count_pred = recalibrated(predicted.counted, observed.rel, pi, s) if recalibrate else predicted.counted
        pseudo["counted"], resid["counted"] = ps(count_pred, observed.rel), res(count_pred, observed.rel)

    def gains(d: dict[str, np.ndarray]) -> Gains:
        return replace(predicted, rel=d.get("rel", empty), gain=d.get("gain", empty),
                       ge=d.get("ge", empty[:, None, :]), rel_count=d.get("counted", empty))

    return gains(pseudo), gains(resid)


def estimate_measures(measures: list[EstimableMeasure], ranked: RankedPool, predicted: Gains, observed: Gains,
                      rounds: list[Round], recalibrate: bool = True, keep_residuals: bool = True
                      ) -> dict[str, MeasureEstimate]:
    """The combined estimate of every measure for every system: ``predicted`` gains of every unit (zeros for the
    human-only estimate), ``observed`` gains (NaN where not judged), one or more :class:`Round`."""
    needs = needed_gains(measures)
    parts: dict[str, dict[str, Any]] = {m.name: {"est": 0.0, "var": 0.0, "sq": 0.0, "pq": 0.0, "u": [], "c": []}
                                        for m in measures}
    for r in rounds:
        pseudo, resid = _round_gains(predicted, observed, r, recalibrate, needs)
        bounds = sample_bounds(ranked, observed, r.sampled, needs)
        c = poisson_factor(r.pi, r.sampled)
        for m in measures:
            p = parts[m.name]
            lin = Linearized(m, ranked, pseudo, bounds)
            v, q = lin.variance_terms(resid, c)
            p["est"] = p["est"] + r.weight * lin.estimate
            p["var"] = p["var"] + r.weight**2 * v
            p["sq"] = p["sq"] + r.weight**4 * q
            p["pq"] = p["pq"] + r.weight * lin.values
            if keep_residuals:
                p["u"].append(r.weight * lin.residuals(resid))
                p["c"].append(c)
    out = {}
    for m in measures:
        p = parts[m.name]
        v = np.asarray(p["var"], dtype=np.float64)
        out[m.name] = MeasureEstimate(np.asarray(p["est"], dtype=np.float64), v,
                                      _satterthwaite(v, np.asarray(p["sq"])), np.asarray(p["pq"], dtype=np.float64),
                                      p["u"], p["c"])
    return out
