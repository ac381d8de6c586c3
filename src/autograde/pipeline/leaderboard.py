"""Leaderboards (trec_eval measures per system) and their rank correlation with an official leaderboard.

Predicted ranks are ``rankdata(-score, method="average")``; official ranks come from ``{run: rank}``
(ties as average ranks); Spearman and Kendall tau-b from scipy, over the systems in both.
"""

from __future__ import annotations

import pandas as pd

from autograde.core.errors import UnknownNameError
from autograde.core.stats import ranks_desc
from autograde.io.trec import Qrels, RunDict
from autograde.metrics.trec import evaluate_run, mean_over_queries


def runs_from_rankings(rankings: pd.DataFrame) -> dict[str, RunDict]:
    """run -> query -> passage -> score."""
    out: dict[str, RunDict] = {}
    for run, q, p, s in rankings[["run", "query_id", "passage_id", "score"]].itertuples(index=False):
        out.setdefault(run, {}).setdefault(q, {})[p] = float(s)
    return out


def evaluate_systems(qrels: Qrels, runs: dict[str, RunDict], measures: list[str], relevance_level: int,
                     missing_queries: str = "zero") -> pd.DataFrame:
    """Per-query values of every system: columns run, query_id, measure, value (plus query 'all')."""
    rows: list[tuple[str, str, str, float]] = []
    for run in sorted(runs):
        per_q = evaluate_run(qrels, runs[run], measures, relevance_level, missing_queries)  # type: ignore[arg-type]
        keys = sorted({m for v in per_q.values() for m in v})
        for q, vals in per_q.items():
            rows.extend((run, q, m, float(vals[m])) for m in keys)
        for m, v in mean_over_queries(per_q, keys).items():
            rows.append((run, "all", m, float(v)))
    return pd.DataFrame(rows, columns=["run", "query_id", "measure", "value"])


def leaderboard(evaluation: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One measure's mean per system, best first: columns rank, run, score, n_queries."""
    allrows = evaluation[(evaluation["query_id"] == "all") & (evaluation["measure"] == measure)]
    if allrows.empty:
        known = sorted(evaluation["measure"].unique())
        raise UnknownNameError(f"measure {measure!r} not in the evaluation; have: {', '.join(known)}")
    nq = evaluation[(evaluation["query_id"] != "all") & (evaluation["measure"] == measure)].groupby("run").size()
    lb = allrows[["run", "value"]].rename(columns={"value": "score"}).copy()
    lb["n_queries"] = lb["run"].map(nq).fillna(0).astype(int)
    lb["rank"] = ranks_desc(lb["score"].to_numpy())
    lb = lb.sort_values(["rank", "run"], kind="mergesort")
    return lb[["rank", "run", "score", "n_queries"]].reset_index(drop=True)


def rank_correlation(lb: pd.DataFrame, official: dict[str, float]) -> dict[str, float | int]:
    """Spearman and Kendall tau-b between a leaderboard and official ranks, over common systems.

    The statistics are :mod:`autograde.core.stats`' (the correlation report's bootstrap uses the same functions).
    """
    import numpy as np

    from autograde.core.stats import kendall_matrix, spearman_matrix

    common = [r for r in lb["run"] if r in official]
    if len(common) < 2:
        return {"n_systems": len(common), "spearman": float("nan"), "kendall": float("nan")}
    sub = lb.set_index("run").loc[common]
    ours = sub["score"].to_numpy(dtype=float)[None, :]
    truth = -ranks_desc([-official[r] for r in common])  # official rank 1 is best; higher = better
    return {"n_systems": len(common), "spearman": float(spearman_matrix(ours, truth)[0]),
            "kendall": float(np.asarray(kendall_matrix(ours, truth))[0])}
