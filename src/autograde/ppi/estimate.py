"""The tables of the human-sample estimates: per prediction, measure and system the LLM-only value, the
human-only estimate and the prediction-powered estimate with their intervals; every pair of systems compared
(Holm-corrected); a leaderboard with the groups the data cannot separate, ordered by the composite of the estimate and
the LLM-only value (:mod:`autograde.ppi.composite`; ``order: composite-fitted``, the default: its regression form with
a fitted slope; ``order: composite``: the slope fixed at one;
``order: estimate``: by the estimate itself).

Groups: walking down the leaderboard, a system joins the current group while no Holm-corrected comparison
separates it from the group's first (best) system; the first system it is separated from starts the next group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autograde.core.stats import round_scores, t_quantile, t_two_sided_p
from autograde.metrics.estimable import EstimableMeasure
from autograde.metrics.significance import holm
from autograde.ppi.composite import fay_herriot
from autograde.ppi.estimators import MeasureEstimate, Round, estimate_measures, zero_gains
from autograde.ppi.intervals import bounded_interval
from autograde.ppi.measures import Gains, Linearized, RankedPool, gains_from_distribution, gains_from_grades

ESTIMATE_COLUMNS = ["measure", "rank", "group", "system", "estimate", "low", "high", "se", "df", "llm_only",
                    "human_only", "human_low", "human_high", "composite", "gamma", "lambda", "floored", "estimator"]
DIFFERENCE_COLUMNS = ["measure", "system", "other", "difference", "low", "high", "p_value", "p_holm", "separated"]


@dataclass(frozen=True)
class Settings:
    """What the tables depend on: the config's choices (levels, relevance level, confidence, alpha, variance,
    order) and the estimator's own (``recalibrate``, ``power_tuning``, ``variance_floor``, ``tune_nonlinear``: the
    defaults are the workflow's; the simulation varies them, see :func:`~autograde.ppi.estimators.estimate_measures`)."""

    levels: list[int]
    relevance_level: int
    confidence: float = 0.95
    alpha: float = 0.05
    variance: str = "labels"
    recalibrate: bool = True
    power_tuning: str = "leaderboard"
    variance_floor: bool = True
    tune_nonlinear: bool = False
    order: str = "composite-fitted"


def _query_stats(per_query: np.ndarray, evaluated: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, variance of the mean and degrees of freedom over each system's queries (``per_query``: S x Q)."""
    n = evaluated.sum(axis=1).astype(np.float64)
    mean = (per_query * evaluated).sum(axis=1) / np.maximum(n, 1.0)
    dev = (per_query - mean[:, None]) * evaluated
    var = (dev**2).sum(axis=1) / np.maximum(n - 1.0, 1.0) / np.maximum(n, 1.0)
    return mean, var, np.maximum(n - 1.0, 1.0)


def _bounded(mean: np.ndarray, se: np.ndarray, df: np.ndarray, bounds: tuple[float, float] | None,
             confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the estimate projected into the range, low, high): Feldman and Cousins' interval inside ``bounds``
    (:mod:`autograde.ppi.intervals`), Student's t without bounds."""
    if bounds is None:
        half = t_quantile(confidence, df) * se
        return mean, mean - half, mean + half
    lo, hi = bounded_interval(mean, se, df, bounds[0], bounds[1], confidence)
    return np.clip(mean, *bounds), lo, hi


def _intervals(est: MeasureEstimate, ranked: RankedPool, s: Settings) -> tuple[np.ndarray, ...]:
    """(unprojected estimate, reported estimate, low, high, se, df) per system, under the chosen variance."""
    if s.variance == "queries":
        mean, var, df = _query_stats(est.per_query[0], ranked.evaluated)
    else:
        mean, var, df = est.estimate[0], est.variance[0], est.df[0]
    se = np.sqrt(np.maximum(var, 0.0))
    reported, lo, hi = _bounded(mean, se, df, est.bounds, s.confidence)
    return mean, reported, lo, hi, se, df


def _differences(est: MeasureEstimate, ranked: RankedPool, s: Settings) -> tuple[np.ndarray, ...]:
    """(difference, variance, df) of every pair of systems (S x S)."""
    if s.variance == "queries":
        pq = est.per_query[0]
        ev = ranked.evaluated[:, None, :] & ranked.evaluated[None, :, :]
        d = (pq[:, None, :] - pq[None, :, :]) * ev
        n = ev.sum(axis=-1).astype(np.float64)
        mean = d.sum(axis=-1) / np.maximum(n, 1.0)
        var = (((d - mean[..., None]) * ev) ** 2).sum(axis=-1) / np.maximum(n - 1.0, 1.0) / np.maximum(n, 1.0)
        return mean, var, np.maximum(n - 1.0, 1.0)
    diff, var, df = est.differences()
    return diff[0], var[0], df[0]


def groups_from(order: Sequence[int], separated: np.ndarray) -> list[int]:
    """Group number (1 = best) of each position of ``order``: a system joins the current group while it is not
    separated from the group's first system.

    >>> groups_from([0, 1, 2], np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool))
    [1, 1, 2]
    """
    out, group, head = [], 0, None
    for i in order:
        if head is None or separated[head, i]:
            group, head = group + 1, i
        out.append(group)
    return out


def estimate_tables(measures: list[EstimableMeasure], ranked: RankedPool, probs: np.ndarray, grades: np.ndarray,
                    rounds: list[Round], s: Settings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(estimates, differences) of the measures under one prediction (``probs``: N x levels) and one sample."""
    pred = gains_from_distribution(probs, s.levels, s.relevance_level)
    obs = gains_from_grades(grades, s.levels, s.relevance_level)
    ppi = estimate_measures(measures, ranked, pred, obs, rounds, s.recalibrate, power_tuning=s.power_tuning,
                            variance_floor=s.variance_floor, tune_nonlinear=s.tune_nonlinear)
    human = estimate_measures(measures, ranked, zero_gains(pred), obs, rounds, s.recalibrate, keep_residuals=False,
                              variance_floor=s.variance_floor)
    parts = [_tables(m, ranked, pred, ppi[m.name], human[m.name], s) for m in measures]
    return (pd.concat([p[0] for p in parts], ignore_index=True), pd.concat([p[1] for p in parts], ignore_index=True))


def _composite(est: np.ndarray, se: np.ndarray, llm: np.ndarray, order: str) -> tuple[np.ndarray, np.ndarray]:
    """The composite and its weight per system (NaN for a system whose estimate, variance or LLM-only value is not
    finite: the model is fitted on the others)."""
    ok = np.isfinite(est) & np.isfinite(se) & np.isfinite(llm)
    composite, gamma = np.full(len(est), np.nan), np.full(len(est), np.nan)
    if ok.any():
        fit = fay_herriot(est[ok], se[ok] ** 2, llm[ok], "fitted" if order == "composite-fitted" else "one")
        composite[ok], gamma[ok] = fit.estimate, fit.gamma
    return composite, gamma


def _tables(measure: EstimableMeasure, ranked: RankedPool, pred: Gains, ppi: MeasureEstimate,
            human: MeasureEstimate, s: Settings) -> tuple[pd.DataFrame, pd.DataFrame]:
    llm = Linearized(measure, ranked, pred, None).estimate[0]
    raw, est, lo, hi, se, df = _intervals(ppi, ranked, s)
    _, hest, hlo, hhi, _, _ = _intervals(human, ranked, s)
    diff, dvar, ddf = _differences(ppi, ranked, s)
    lam = ppi.lam[0] if ppi.lam is not None else np.ones(len(est))
    floored = ppi.floored[0] if ppi.floored is not None and s.variance == "labels" else np.zeros(len(est), bool)
    n = len(ranked.systems)
    iu, ju = np.triu_indices(n, k=1)
    dse = np.sqrt(np.maximum(dvar[iu, ju], 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(dse > 0, diff[iu, ju] / np.where(dse > 0, dse, 1.0), np.where(diff[iu, ju] != 0, np.inf, 0.0))
    p = t_two_sided_p(stat, ddf[iu, ju])
    p_holm = holm(p)
    sep = np.zeros((n, n), dtype=bool)
    sep[iu, ju] = sep[ju, iu] = p_holm < s.alpha
    composite, gamma = _composite(raw, se, llm, s.order)
    # unprojected (ties at a range edge keep their order), ranked at the package's precision (core.stats.round_scores)
    key = round_scores(raw if s.order == "estimate" else composite)
    order = sorted(range(n), key=lambda i: (not np.isfinite(key[i]), -key[i] if np.isfinite(key[i]) else 0.0,
                                            ranked.systems[i]))
    groups = groups_from(order, sep)
    rank_of = {i: r + 1 for r, i in enumerate(order)}
    group_of = dict(zip(order, groups, strict=True))
    rows = [{"measure": measure.name, "rank": rank_of[i], "group": group_of[i], "system": ranked.systems[i],
             "estimate": est[i], "low": lo[i], "high": hi[i], "se": se[i], "df": df[i], "llm_only": llm[i],
             "human_only": hest[i], "human_low": hlo[i], "human_high": hhi[i], "composite": composite[i],
             "gamma": gamma[i], "lambda": lam[i],
             "floored": bool(floored[i]), "estimator": measure.estimator}
            for i in order]
    width = None if ppi.bounds is None else (ppi.bounds[1] - ppi.bounds[0])
    dest, dlo, dhi = _bounded(diff[iu, ju], dse, ddf[iu, ju], None if width is None else (-width, width),
                              s.confidence)
    drows = pd.DataFrame({"measure": measure.name, "system": [ranked.systems[i] for i in iu],
                          "other": [ranked.systems[j] for j in ju], "difference": dest,
                          "low": dlo, "high": dhi, "p_value": p, "p_holm": p_holm,
                          "separated": p_holm < s.alpha})
    return pd.DataFrame(rows, columns=ESTIMATE_COLUMNS), drows[DIFFERENCE_COLUMNS]
