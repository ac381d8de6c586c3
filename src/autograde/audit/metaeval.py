"""Meta-evaluation of a grader against the human judgments: how its labels agree (per passage, per topic) and how
its leaderboards agree (overall, per topic, at the top).

Label level (the judged passages that have a label): Cohen's kappa of the binary decision (label >= t vs judgment
>= r) and linearly weighted over the judgment levels (the label put on the judgment scale by aligning t with r,
:func:`autograde.reports.agreement.aligned_labels`), Krippendorff's alpha (ordinal) of the same aligned labels and
the judgments, the full confusion matrix, and the distribution of the binary kappa per topic.

System level: :func:`autograde.metrics.rank_agreement.leaderboard_agreement` (the one implementation the
correlation report shares) of each leaderboard against the human qrels' leaderboard of the same measure: Kendall's
tau-b, tau-ap, Spearman's rho and TREC AutoJudge's top-k Kendall (``kendall@k``), with seeded bootstrap intervals over
queries, and Kendall's tau per topic; each leaderboard's means formed as the leaderboard forms them (its
missing-query policy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autograde.core.agreement import krippendorff_alpha
from autograde.core.errors import InvalidValueError
from autograde.core.ids import PairKey
from autograde.reports.agreement import aligned_labels, compute_agreement


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
