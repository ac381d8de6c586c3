"""The measures a human sample can estimate (:func:`estimable`): their kind, cutoff or persistence, and how the
estimate is made (the estimators are in :mod:`autograde.ppi.measures`).

>>> estimable("ndcg_cut_10"), estimable("rbp_0.8").p, estimable("bpref")
(EstimableMeasure(name='ndcg_cut_10', kind='ndcg', k=10, p=None), 0.8, None)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from autograde.core.errors import InvalidValueError
from autograde.metrics.measures import parse_measure

Kind = Literal["precision", "dcg", "rbp", "recall", "ndcg", "ap", "rr"]
LINEAR_KINDS: frozenset[str] = frozenset({"precision", "dcg", "rbp"})
"""Measures linear in the gains: their estimate is exactly unbiased and their variance estimate too."""


@dataclass(frozen=True)
class EstimableMeasure:
    """A measure the human sample can estimate: its name (trec_eval's, or ``dcg_cut_k`` / ``rbp_p``), its kind and
    parameter (the cutoff k, or RBP's persistence p; None: the whole ranking)."""

    name: str
    kind: Kind
    k: int | None = None
    p: float | None = None

    @property
    def linear(self) -> bool:
        return self.kind in LINEAR_KINDS

    @property
    def estimator(self) -> str:
        """How the estimate is made and what is approximate (for the tables and the docs)."""
        return {"precision": "linear: exactly unbiased", "dcg": "linear: exactly unbiased",
                "rbp": "linear: exactly unbiased",
                "rr": "polynomial plug-in: exactly unbiased; normal interval approximate (heavy tails)",
                "ap": "ratio: plug-in numerator (unbiased) over the estimated number of relevant passages",
                "recall": "ratio of estimated totals",
                "ndcg": "ratio: DCG over the ideal DCG of the estimated grade counts"}[self.kind]

    @property
    def caution(self) -> str | None:
        """What the estimate cannot be trusted for, where the benchmark showed it (None: nothing)."""
        if self.kind == "rr":
            return ("RR's estimate multiplies the sampled pseudo-labels of every rank above the first relevant "
                    "passage, so one sampled passage can move it far: on DL20 its intervals covered, but ordered by "
                    "the estimate the leaderboard was no better than chance at 10-20% budgets, and the composite "
                    "order did not rescue it (Kendall tau 0.05-0.41 against full human, the LLM-only order's "
                    "0.45-0.63; docs/human_sample.md): read RR from the LLM-only leaderboard, or judge every "
                    "system's top-ranked passages")
        if self.kind == "ap":
            return ("AP's estimate is biased low where a query's sample holds few relevant passages (its numerator "
                    "is quadratic in the query's calibrated values, its denominator linear): on DL20 at 10-20% "
                    "MAP's intervals covered 0.74-0.92 on average and 0.47-0.83 for the worst system, and at 10% "
                    "MAP was 0.046 too low on average (docs/human_sample.md); read MAP's estimate as a point "
                    "estimate biased low, not its interval, or judge more per query")
        return None


_TREC = {"P": "precision", "recall": "recall", "ndcg_cut": "ndcg"}


def estimable(name: str) -> EstimableMeasure | None:
    """The estimable measure named ``name`` (a trec_eval or gain-family name), or None when the sample cannot
    estimate it this way (an unknown name is the measure parser's error).

    """
    m = parse_measure(name)
    if m.family == "gain":
        if name.startswith("rbp_"):
            return EstimableMeasure(name, "rbp", p=float(name.removeprefix("rbp_")))
        return EstimableMeasure(name, "dcg", k=m.cutoff)
    if m.family != "trec_eval":
        return None
    if name == "map":
        return EstimableMeasure(name, "ap")
    if name == "recip_rank":
        return EstimableMeasure(name, "rr")
    if name == "ndcg":
        return EstimableMeasure(name, "ndcg")
    hit = re.fullmatch(r"(P|recall|ndcg_cut)_([1-9][0-9]*)", name)
    if hit:
        return EstimableMeasure(name, _TREC[hit.group(1)], k=int(hit.group(2)))  # type: ignore[arg-type]
    return None


def estimable_measure(name: str) -> EstimableMeasure:
    """Like :func:`estimable`, but a measure the sample cannot estimate is an error naming the ones it can."""
    m = estimable(name)
    if m is None:
        raise InvalidValueError(f"measure {name!r} cannot be estimated from a human sample (fix: use P_k, recall_k, "
                                "ndcg_cut_k, ndcg, map, recip_rank, dcg_cut_k or rbp_p)")
    return m
