"""Leaderboard correlation with the official leaderboard, with bootstrap intervals over queries.

Point estimates: systems are ranked by their mean over queries (``rankdata(-score, "average")``) and
compared with the official ranks (``{run: rank}``, ties as average ranks) by Spearman's rho, Kendall's
tau-b and tau-ap (Yilmaz, Aslam & Robertson 2008), over the systems in both.

tau-ap walks down the autograded ranking (ties broken by system name) and, at each position i > 1, takes
the fraction of the systems above it that are also officially better (strictly); tau-ap = 2/(n-1) * sum
of these fractions - 1. It is asymmetric and weights errors near the top more.

Bootstrap: queries are resampled with replacement ``samples`` times (``numpy.random.default_rng(seed)``,
so the same seed gives the same intervals), each system's mean is recomputed over the resampled queries
(a query a system has no value for is left out of its mean, as in the point estimate), the correlations
are recomputed, and the percentile interval at ``confidence`` is reported.

Four systems ranked A, B, C, D; officially B, A, C, D (a swap at the top) or A, B, D, C (at the bottom):

>>> import numpy as np
>>> ours = np.array([[4.0, 3.0, 2.0, 1.0]])
>>> [round(float(tau_ap_matrix(ours, np.array(t))[0]), 4) for t in ([3.0, 4.0, 2.0, 1.0], [4.0, 3.0, 1.0, 2.0])]
[0.3333, 0.7778]
>>> [round(float(kendall_matrix(ours, np.array(t))[0]), 4) for t in ([3.0, 4.0, 2.0, 1.0], [4.0, 3.0, 1.0, 2.0])]
[0.6667, 0.6667]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autograde.core.errors import InvalidValueError
from autograde.core.stats import kendall_matrix, ranks_desc, spearman_matrix, tau_ap_matrix

METHODS = ("spearman", "kendall", "tau_ap")
__all__ = ["METHODS", "CorrelationResult", "correlate", "kendall_matrix", "spearman_matrix", "system_query_matrix",
           "tau_ap_matrix"]


_FUNCS = {"spearman": spearman_matrix, "kendall": kendall_matrix, "tau_ap": tau_ap_matrix}


def system_query_matrix(per_query: pd.DataFrame, value: str = "value") -> tuple[list[str], list[str], np.ndarray]:
    """(systems, queries, values[system, query] with NaN where a system has no value) from long rows."""
    t = per_query.pivot_table(index="run", columns="query_id", values=value, aggfunc="first")
    t = t.sort_index().sort_index(axis=1)
    return [str(r) for r in t.index], [str(q) for q in t.columns], t.to_numpy(dtype=float)


def _weighted_means(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Means per (sample, system) over queries with ``weights`` (B x Q), NaN values left out."""
    present = ~np.isnan(values)  # S x Q
    filled = np.where(present, values, 0.0)
    num = weights @ filled.T  # B x S
    den = weights @ present.T.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


@dataclass(frozen=True)
class CorrelationResult:
    """Point estimates and bootstrap intervals of one leaderboard against the official one."""

    n_systems: int
    n_queries: int
    point: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    scores: dict[str, float]
    """Mean per system (the leaderboard) over the common systems."""

    def row(self, methods: Sequence[str]) -> dict[str, float | int]:
        out: dict[str, float | int] = {"n_systems": self.n_systems, "n_queries": self.n_queries}
        for m in methods:
            out[m] = self.point[m]
            out[f"{m}_low"] = self.low[m]
            out[f"{m}_high"] = self.high[m]
        return out


def _stat(method: str, means: np.ndarray, truth: np.ndarray) -> np.ndarray:
    # a system without any value in a sample ranks last
    return _FUNCS[method](np.nan_to_num(means, nan=-np.inf), truth)


def correlate(per_query: pd.DataFrame, official: Mapping[str, float], methods: Sequence[str] = METHODS,
              samples: int = 1000, seed: int = 0, confidence: float = 0.95, value: str = "value") -> CorrelationResult:
    """Correlations of the per-query leaderboard (rows run, query_id, ``value``) with official ranks."""
    for m in methods:
        if m not in _FUNCS:
            raise InvalidValueError(f"unknown correlation {m!r}; valid: {', '.join(METHODS)}")
    systems, queries, values = system_query_matrix(per_query[per_query["query_id"] != "all"], value)
    keep = [i for i, s in enumerate(systems) if s in official]
    systems = [systems[i] for i in keep]
    values = values[keep]
    nan = {m: float("nan") for m in methods}
    full = _weighted_means(values, np.ones((1, len(queries))))[0] if len(systems) else np.array([])
    scores = dict(zip(systems, full.tolist(), strict=True))
    if len(systems) < 2 or not queries:
        return CorrelationResult(len(systems), len(queries), dict(nan), dict(nan), dict(nan), scores)
    truth = -ranks_desc([-official[s] for s in systems])  # official rank 1 is best; higher = better
    point = {m: float(_stat(m, full[None, :], truth)[0]) for m in methods}
    low, high = dict(nan), dict(nan)
    if samples > 0:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(queries), size=(samples, len(queries)))
        weights = np.zeros((samples, len(queries)))
        np.add.at(weights, (np.arange(samples)[:, None], idx), 1.0)
        means = _weighted_means(values, weights)
        alpha = (1.0 - confidence) / 2
        for m in methods:
            dist = _stat(m, means, truth)
            if np.isfinite(dist).any():
                low[m], high[m] = (float(x) for x in np.nanquantile(dist, [alpha, 1 - alpha]))
    return CorrelationResult(len(systems), len(queries), point, low, high, scores)
