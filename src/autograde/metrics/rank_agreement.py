"""How a leaderboard agrees with a reference: the official leaderboard (ranks) or another leaderboard's per-query
values (the human qrels'), with seeded bootstrap intervals over queries. The ONE implementation the correlation
report and the judge audit share.

Systems are ranked by their mean over queries, formed as the leaderboard the user sees forms it: with
``missing_queries`` ``zero`` a query a system has no value for counts 0 (trec_eval ``-c``), with ``skip`` it is left
out of that system's mean. Against a per-query reference both sides are restricted to the queries both have and
recomputed on the same resampled queries; against official ranks (``{run: rank}``, rank 1 best, ties as average
ranks) only the leaderboard is resampled. Statistics (:mod:`autograde.core.stats`): Spearman's rho, Kendall's tau-b,
tau-ap (Yilmaz, Aslam & Robertson 2008; the ranking under test against the reference) and TREC AutoJudge's top-k
Kendall (``kendall@k``, among the k systems the reference ranks highest). Against a per-query reference, also
Kendall's tau per topic (each topic's systems ranked by their value on it alone).

>>> import pandas as pd
>>> rows = [(r, q, float(v)) for q, vals in (("q1", (3, 2, 1, 0)), ("q2", (4, 3, 1, 0))) for r, v in zip("abcd", vals)]
>>> table = pd.DataFrame(rows, columns=["run", "query_id", "value"])
>>> res = leaderboard_agreement(table, {"a": 2, "b": 1, "c": 3, "d": 4}, samples=0)
>>> round(res.point["kendall"], 4), res.n_systems, res.n_queries
(0.6667, 4, 2)
>>> leaderboard_agreement(table, table, samples=0).point["tau_ap"]
1.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from autograde.core.errors import InvalidValueError
from autograde.core.layout import MissingQueries
from autograde.core.stats import (
    bootstrap_weights,
    kendall_matrix,
    kendall_top_k_matrix,
    percentile_interval,
    rank_scores,
    spearman_matrix,
    tau_ap_b_matrix,
    tau_ap_matrix,
)

RANK_STATISTICS = ("spearman", "kendall", "tau_ap")
"""The rank statistics besides top-k Kendall (``kendall@<k>``)."""
_FUNCS = {"spearman": spearman_matrix, "kendall": kendall_matrix, "tau_ap": tau_ap_matrix, "tau_ap_b": tau_ap_b_matrix}
"""Every rank statistic by name: RANK_STATISTICS, and ``tau_ap_b`` (TREC AutoJudge's symmetric tau-ap with ties) on
request."""

__all__ = ["RANK_STATISTICS", "RankAgreement", "leaderboard_agreement", "system_means", "system_query_matrix"]


def system_query_matrix(per_query: pd.DataFrame, value: str = "value") -> tuple[list[str], list[str], np.ndarray]:
    """(systems, queries, values[system, query] with NaN where a system has no value) from long rows (run,
    query_id, ``value``); trec_eval's summary rows (query ``all``) are left out."""
    rows = per_query[per_query["query_id"] != "all"]
    t = rows.pivot_table(index="run", columns="query_id", values=value, aggfunc="first")
    t = t.sort_index().sort_index(axis=1)
    return [str(r) for r in t.index], [str(q) for q in t.columns], t.to_numpy(dtype=float)


def system_means(values: np.ndarray, weights: np.ndarray, missing_queries: MissingQueries) -> np.ndarray:
    """Each system's mean (B x S) over queries weighted by ``weights`` (B x Q: a resample's query counts; ones for
    the point estimate): a missing value (NaN) counts 0 with ``zero`` and is left out with ``skip`` (a system with
    no value at all is NaN there)."""
    present = ~np.isnan(values)
    filled = np.where(present, values, 0.0)
    num = weights @ filled.T
    den = weights @ (present if missing_queries == "skip" else np.ones_like(present)).T.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


@dataclass(frozen=True)
class RankAgreement:
    """Point estimates and bootstrap intervals of one leaderboard against its reference."""

    n_systems: int
    n_queries: int
    point: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    scores: dict[str, float]
    """Each system's mean (the leaderboard), over the common systems and queries."""
    topic_tau: np.ndarray = field(default_factory=lambda: np.array([]))
    """Kendall's tau-b of the systems' values per topic (per-query reference only; NaN where a side is constant)."""
    queries: list[str] = field(default_factory=list)

    def row(self, statistics: Sequence[str] | None = None) -> dict[str, float | int]:
        out: dict[str, float | int] = {"n_systems": self.n_systems, "n_queries": self.n_queries}
        for name in statistics if statistics is not None else self.point:
            out[name] = self.point[name]
            out[f"{name}_low"] = self.low[name]
            out[f"{name}_high"] = self.high[name]
        return out


def _statistics(ours: np.ndarray, truth: np.ndarray, methods: Sequence[str], top_k: Sequence[int]
                ) -> dict[str, np.ndarray]:
    ours = np.nan_to_num(ours, nan=-np.inf)  # a system without any value in a resample ranks last
    out = {m: _FUNCS[m](ours, truth) for m in methods}
    out.update({f"kendall@{k}": kendall_top_k_matrix(ours, truth, k) for k in top_k})
    return out


def leaderboard_agreement(per_query: pd.DataFrame, reference: pd.DataFrame | Mapping[str, float],
                          methods: Sequence[str] = RANK_STATISTICS, top_k: Sequence[int] = (), samples: int = 1000,
                          seed: int = 0, confidence: float = 0.95, missing_queries: MissingQueries = "zero",
                          value: str = "value", reference_value: str = "value") -> RankAgreement:
    """Agreement of a leaderboard's per-query values (rows run, query_id, ``value``) with ``reference``: official
    ranks ``{run: rank}`` or another per-query table (the module doc says how each is compared).

    Raises an :class:`InvalidValueError` for an unknown statistic, and against a per-query reference when the two
    share no query or fewer than two systems (against official ranks those give NaN: a report row says so).
    """
    for m in methods:
        if m not in _FUNCS:
            raise InvalidValueError(f"unknown rank statistic {m!r}; valid: {', '.join(_FUNCS)}")
    systems, queries, values = system_query_matrix(per_query, value)
    names = [*methods, *(f"kendall@{k}" for k in top_k)]
    nan = {m: float("nan") for m in names}
    if isinstance(reference, pd.DataFrame):
        ref_systems, ref_queries, ref_values = system_query_matrix(reference, reference_value)
        keep_s = sorted(set(systems) & set(ref_systems))
        keep_q = sorted(set(queries) & set(ref_queries))
        if not keep_q:
            raise InvalidValueError("the leaderboard and its reference share no query (fix: compare leaderboards of "
                                    "the same queries, e.g. a grader on the queries the human qrels judge)")
        if len(keep_s) < 2:
            raise InvalidValueError(f"the leaderboard and its reference share {len(keep_s)} system(s); a rank "
                                    "correlation needs at least two")
        ours = _select(values, systems, queries, keep_s, keep_q)
        theirs = _select(ref_values, ref_systems, ref_queries, keep_s, keep_q)
    else:
        keep_s = [s for s in systems if s in reference]
        keep_q = queries
        ours = _select(values, systems, queries, keep_s, keep_q)
        theirs = None
    full = system_means(ours, np.ones((1, len(keep_q))), missing_queries)[0] if keep_s else np.array([])
    scores = dict(zip(keep_s, full.tolist(), strict=True))
    if len(keep_s) < 2 or not keep_q:
        return RankAgreement(len(keep_s), len(keep_q), dict(nan), dict(nan), dict(nan), scores, queries=keep_q)
    if theirs is None:
        assert not isinstance(reference, pd.DataFrame)
        truth: np.ndarray = -rank_scores([-float(reference[s]) for s in keep_s])  # rank 1 is best; higher = better
        truth_full = truth
    else:
        truth_full = system_means(theirs, np.ones((1, len(keep_q))), missing_queries)[0]
    point = {k: float(v[0]) for k, v in _statistics(full[None, :], truth_full, methods, top_k).items()}
    low, high = dict(nan), dict(nan)
    if samples > 0:
        w = bootstrap_weights(len(keep_q), samples, seed)
        truths = system_means(theirs, w, missing_queries) if theirs is not None else truth
        for k, dist in _statistics(system_means(ours, w, missing_queries), truths, methods, top_k).items():
            low[k], high[k] = percentile_interval(dist, confidence)
    topic = np.array([])
    if theirs is not None:
        fill = np.nan if missing_queries == "skip" else 0.0
        topic = kendall_matrix(np.where(np.isnan(ours), fill, ours).T, np.where(np.isnan(theirs), fill, theirs).T)
    return RankAgreement(len(keep_s), len(keep_q), point, low, high, scores, topic, keep_q)


def _select(values: np.ndarray, systems: list[str], queries: list[str], keep_s: list[str], keep_q: list[str]
            ) -> np.ndarray:
    si = {s: i for i, s in enumerate(systems)}
    qi = {q: i for i, q in enumerate(queries)}
    return values[np.ix_([si[s] for s in keep_s], [qi[q] for q in keep_q])]
