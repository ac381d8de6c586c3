"""Meta-evaluation of a grader against the human judgments: how its labels agree (per passage, per topic) and how
its leaderboards agree (overall, per topic, at the top).

Label level (the judged passages that have a label): Cohen's kappa of the binary decision (label >= t vs judgment
>= r) and linearly weighted over the judgment levels (the label put on the judgment scale by aligning t with r,
:func:`autograde.reports.agreement.aligned_labels`), Krippendorff's alpha (ordinal) of the same aligned labels and
the judgments, the full confusion matrix, and the distribution of the binary kappa per topic.

System level (a measure's per-query values under the grader's qrels and under the human qrels, over the systems and
queries both have): Kendall's tau-b, tau-ap (the grader's ranking against the human one), Spearman's rho and the
top-k Kendall tau of TREC AutoJudge's ``meta-evaluate`` (``kendall@k``: tau-b among the k systems the human
qrels rank highest, :func:`autograde.core.stats.kendall_top_k_matrix`), each with a seeded bootstrap percentile
interval over queries (both leaderboards recomputed on the same resampled queries), and the distribution of
Kendall's tau per topic (each topic's systems ranked by their value on that topic alone, as AutoJudge's
``evaluate_per_topic``).

>>> import pandas as pd
>>> rows = [(r, q, float(v)) for q, vals in (("q1", (3, 2, 1, 0)), ("q2", (4, 3, 1, 0))) for r, v in zip("abcd", vals)]
>>> human = pd.DataFrame(rows, columns=["run", "query_id", "value"])
>>> res = system_agreement(human, human, samples=0)
>>> res.point["kendall"], res.point["tau_ap"], res.topic_tau.tolist()
(1.0, 1.0, [1.0, 1.0])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from autograde.core.errors import InvalidValueError
from autograde.core.ids import PairKey
from autograde.core.stats import (
    bootstrap_weights,
    kendall_matrix,
    kendall_top_k_matrix,
    krippendorff_alpha,
    percentile_interval,
    spearman_matrix,
    tau_ap_matrix,
)
from autograde.reports.agreement import aligned_labels, compute_agreement

SYSTEM_STATS = ("kendall", "tau_ap", "spearman")
"""The system-level statistics besides top-k Kendall (``kendall@<k>``)."""


def quantiles(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    """``mean``, ``median``, ``q10``, ``q90``, ``min``, ``max`` and ``n`` of the finite values (NaN when none)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if not len(x):
        return {k: float("nan") for k in ("mean", "median", "q10", "q90", "min", "max")} | {"n": 0}
    q10, med, q90 = np.quantile(x, [0.1, 0.5, 0.9])
    return {"mean": float(x.mean()), "median": float(med), "q10": float(q10), "q90": float(q90),
            "min": float(x.min()), "max": float(x.max()), "n": len(x)}


@dataclass(frozen=True)
class LabelAgreement:
    """One label source against the judgments at one threshold."""

    threshold: int
    relevant_level: int
    kappa: float
    kappa_linear: float
    alpha_ordinal: float
    n_judged: int
    n_covered: int
    confusion: pd.DataFrame
    """Counts: index = label values, columns = judgment values."""
    per_topic: pd.DataFrame
    """query_id, n, kappa, kappa_linear."""

    def row(self) -> dict[str, float | int]:
        topic = quantiles(self.per_topic["kappa"]) if len(self.per_topic) else quantiles([])
        return {"threshold": self.threshold, "relevant_level": self.relevant_level, "n_judged": self.n_judged,
                "n_covered": self.n_covered, "kappa": self.kappa, "kappa_linear": self.kappa_linear,
                "alpha_ordinal": self.alpha_ordinal, **{f"topic_kappa_{k}": v for k, v in topic.items()}}


def label_agreement(labels: Mapping[PairKey, int], judgments: Mapping[PairKey, int], threshold: int,
                    relevant_level: int) -> LabelAgreement:
    """Kappas, Krippendorff's alpha (ordinal), the confusion matrix and per-topic kappa of ``labels`` against
    ``judgments`` over the judged pairs with a label; an :class:`InvalidValueError` when they share no query."""
    shared = {k[0] for k in judgments} & {k[0] for k in labels}
    if not shared:
        raise InvalidValueError("the labels and the human judgments share no query (fix: meta-evaluate a grader on the "
                         "collection its human qrels judge)")
    ag = compute_agreement(labels, judgments, threshold, relevant_level)
    keys = sorted(k for k in judgments if k in labels)
    lab = np.array([labels[k] for k in keys], dtype=np.int64)
    jud = np.array([judgments[k] for k in keys], dtype=np.int64)
    lo = min(min(judgments.values()), relevant_level - 1)
    hi = max(max(judgments.values()), relevant_level)
    alpha = krippendorff_alpha(aligned_labels(lab, threshold, relevant_level, lo, hi).tolist(), jud.tolist(),
                               "ordinal")
    return LabelAgreement(threshold, relevant_level, ag.kappa, ag.kappa_linear, alpha, ag.n_judged, ag.n_covered,
                          ag.graded, ag.per_query[["query_id", "n", "kappa", "kappa_linear"]].copy())


def _matrix(per_query: pd.DataFrame) -> pd.DataFrame:
    """systems x queries of ``value`` (query 'all' left out)."""
    rows = per_query[per_query["query_id"] != "all"]
    return rows.pivot_table(index="run", columns="query_id", values="value", aggfunc="first").sort_index().sort_index(
        axis=1)


@dataclass(frozen=True)
class SystemAgreement:
    """One leaderboard of a grader against the human leaderboard of the same measure."""

    n_systems: int
    n_queries: int
    point: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    topic_tau: np.ndarray
    """Kendall's tau-b of the systems' values per topic (in query order; NaN where a side is constant)."""
    queries: list[str] = field(default_factory=list)

    def row(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"n_systems": self.n_systems, "n_queries": self.n_queries}
        for name in self.point:
            out[name] = self.point[name]
            out[f"{name}_low"] = self.low[name]
            out[f"{name}_high"] = self.high[name]
        out.update({f"topic_tau_{k}": v for k, v in quantiles(self.topic_tau).items()})
        return out


def _stats(ours: np.ndarray, truth: np.ndarray, top_k: Sequence[int]) -> dict[str, np.ndarray]:
    out = {"kendall": kendall_matrix(ours, truth), "tau_ap": tau_ap_matrix(ours, truth),
           "spearman": spearman_matrix(ours, truth)}
    out.update({f"kendall@{k}": kendall_top_k_matrix(ours, truth, k) for k in top_k})
    return out


def system_agreement(grader: pd.DataFrame, human: pd.DataFrame, top_k: Sequence[int] = (5, 10), samples: int = 1000,
                     seed: int = 0, confidence: float = 0.95) -> SystemAgreement:
    """Agreement of two per-query tables (columns run, query_id, value) over their common systems and queries.

    A system without a value for a query counts 0 there (trec_eval ``-c``, as the leaderboards). Raises an
    :class:`InvalidValueError` when the two share no query or fewer than two systems.
    """
    g, h = _matrix(grader), _matrix(human)
    systems = sorted(set(g.index) & set(h.index))
    queries = sorted(set(g.columns) & set(h.columns))
    if not queries:
        raise InvalidValueError("the grader's and the human evaluation share no query (fix: meta-evaluate a grader on "
                         "the queries the human qrels judge)")
    if len(systems) < 2:
        raise InvalidValueError(f"the grader's and the human evaluation share {len(systems)} system(s); a leaderboard "
                         "correlation needs at least two")
    gv = g.loc[systems, queries].to_numpy(dtype=float)
    hv = h.loc[systems, queries].to_numpy(dtype=float)
    gv, hv = np.nan_to_num(gv), np.nan_to_num(hv)
    point = {k: float(v[0]) for k, v in _stats(gv.mean(axis=1)[None, :], hv.mean(axis=1), top_k).items()}
    low = {k: float("nan") for k in point}
    high = dict(low)
    if samples > 0:
        w = bootstrap_weights(len(queries), samples, seed) / len(queries)
        for k, dist in _stats(w @ gv.T, w @ hv.T, top_k).items():
            low[k], high[k] = percentile_interval(dist, confidence)
    topic = kendall_matrix(gv.T, hv.T)
    return SystemAgreement(len(systems), len(queries), point, low, high, topic, queries)
